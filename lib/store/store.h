/*
 * lib/store/store.h - the experiment store: a directory and its manifest.json.
 *
 *   DIR/manifest.json   the index (jansson; "schema_version": 1), see hml-manifest(5)
 *   DIR/data/           collected HDF5 files          (collection "datasets",    ids d1, d2, ...)
 *   DIR/models/         <id>.pt + <id>.json cards     (collection "models",      ids m1, ...)
 *   DIR/eval/           <id>.json reports             (collection "evaluations", ids e1, ...)
 *                                                     (collection "deployments", ids p1, ...)
 *   DIR/search/         <id>/trials.jsonl             (collection "searches",    ids s1, ...;
 *                                                      lib/search/history.h)
 *   DIR/models/         <id>.c, <id>.h, <id>.so       (collection "compiled",    ids c1, ...)
 *   DIR/.lock           flock()ed while the manifest is rewritten
 *
 * Concurrency: artefacts are produced under temporary names
 * (hml__store_tmp_path) without any lock, so a long `hml train` blocks no
 * one. Registering them (hml__store_add / hml__store_update) takes an
 * exclusive flock on DIR/.lock, re-reads the manifest (another process may
 * have committed meanwhile), renames the files to their final names, and
 * writes the manifest atomically (temp + fsync + rename + fsync of DIR).
 * Readers never lock: they always see a whole manifest. A process killed at
 * any point leaves the manifest as it was or as it became, never torn; at
 * worst a stray .tmp-* file remains.
 *
 * Every record gets "id", "files" and "provenance": {"time", "host", "user",
 * "command": [argv], "cwd", "versions": {"hml", "hdf5", "jansson", and what
 * hml__store_set_version added, e.g. "libtorch"}, "sha256": {"<relative
 * path>": "<hex>", ...}}.
 *
 * Every operation reads and validates the manifest before anything is
 * written; a manifest that fails validation is never written over.
 */
#ifndef HML_LIB_STORE_H
#define HML_LIB_STORE_H

#include <stddef.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HML__STORE_SCHEMA 1

typedef struct hml__store hml__store;

/**
 * Open the experiment at `dir`.
 * create == 0: the directory and its manifest must exist, else HML_ENOTFOUND
 *   "no experiment at 'DIR' (run 'hml collect' first)".
 * create != 0: make DIR, data/, models/, eval/ and an empty manifest when
 *   missing; unwritable: HML_EIO "cannot create experiment 'DIR': <strerror>".
 * A manifest that is not valid JSON, is not an object, lacks or has a bad
 * "schema_version", or has a collection that is not an array:
 *   HML_EINVALID "manifest 'PATH' is corrupt: <reason>" (file untouched).
 * A newer schema_version: HML_ENOTSUPPORTED.
 * *out is yours; free with hml__store_free().
 */
int hml__store_open(hml__store **out, const char *dir, int create);

/** NULL-safe. Releases nothing on disk (no lock is held between calls). */
void hml__store_free(hml__store *s);

/** The experiment directory as given to open. */
const char *hml__store_dir(const hml__store *s);

/**
 * The manifest as last read or written by this handle. Borrowed; do not
 * modify. What is borrowed from it (here, through hml__store_find, ...)
 * stays valid until hml__store_free, even after hml__store_add,
 * hml__store_update or hml__store_reload replace it: those keep the
 * earlier manifests (a few KiB each) for the handle's lifetime.
 */
const json_t *hml__store_manifest(const hml__store *s);

/** Re-read the manifest from disk (after another process committed). */
int hml__store_reload(hml__store *s);

/** Absolute path of `rel` ("models/m1.pt") inside the experiment; malloc'ed. */
char *hml__store_path(const hml__store *s, const char *rel);

/**
 * A fresh temporary path "DIR/<subdir>/.tmp-<pid>-<n><ext>" for an artefact
 * being produced (malloc'ed). Nothing is created. Pass it to hml__store_add.
 */
char *hml__store_tmp_path(const hml__store *s, const char *subdir, const char *ext);

/**
 * hml__store_tmp_path, and the file created there empty (O_EXCL), beneath
 * the experiment (core/beneath.h): for a file that another program (the
 * application) then writes by name. NULL with the error set.
 */
char *hml__store_tmp_create(const hml__store *s, const char *subdir, const char *ext);

/**
 * A fresh directory "DIR/<subdir>/.tmp-<pid>-XXXXXX" made beneath the
 * experiment (never through a link; mode 0777 less the umask), for the files of runs
 * (evaluations, QoI checks). Its path (malloc'ed), or NULL with the error set.
 */
char *hml__store_tmp_dir(const hml__store *s, const char *subdir);

/** A file to register with a record. */
typedef struct hml__store_file {
	const char *role;      /**< key in record["files"]: "data", "model", ... */
	const char *tmp_path;  /**< produced file; renamed to its final name */
	const char *ext;       /**< final name is <subdir>/<id><ext>, e.g. ".pt" */
	/** Optional: fill tmp_path once the id is known, under the lock, before
	 *  the file is hashed and renamed (a file that names its siblings by
	 *  their final names: an MPI data set's view). 0 or an hml error,
	 *  which aborts the registration. */
	int (*make)(const char *tmp_path, const char *id, void *payload);
	void *payload;
} hml__store_file;

/**
 * Register a record in `collection` ("datasets", "models", "deployments",
 * "evaluations", "compiled", "searches"): under the lock, re-read the manifest, give the record the
 * next id of the collection (d/m/p/e + one more than the largest number
 * used in the manifest or in the names of the collection's directory, so
 * an id is never reused), rename each file to
 * "<subdir>/<id><ext>" (subdir data/, models/, eval/, models/ by collection), set
 * record["files"][role] to the relative final path, record["id"] and
 * record["provenance"] (with the SHA-256 of every file), append it, and
 * write the manifest. When `card` is nonzero the finished record is also
 * written as "<subdir>/<id>.json" (the model card or evaluation report) and
 * listed as files["card"].
 * `record` is stolen (decref'ed on every path). On success the id is copied
 * to id_out. Lock busy for longer than HML_LOCK_TIMEOUT seconds (default
 * 60): HML_ELOCKED "experiment 'DIR' is locked by another hml process (pid
 * N, 'hml train'); waited 60 s"; a bad HML_LOCK_TIMEOUT: HML_EINVALID. A
 * final name that exists already: HML_EEXISTS (nothing is overwritten).
 * Deployments take no files (HML_EINVALID). Failure leaves the manifest
 * as it was and the files under their temporary names.
 */
int hml__store_add(hml__store *s, const char *collection, json_t *record,
                   const hml__store_file *files, size_t nfiles, int card,
                   char *id_out, size_t id_size);

/**
 * Change the manifest under the lock: fn gets the freshly re-read manifest
 * and may modify it; a negative return aborts without writing (and is
 * returned). Otherwise the manifest is written atomically, unless fn left
 * it invalid (HML_EINVALID "an update of experiment 'DIR' was not written:
 * ..."). Locking as for hml__store_add.
 */
int hml__store_update(hml__store *s, int (*fn)(json_t *manifest, void *payload),
                      void *payload);

/** The record with `id` in `collection`, or NULL. Borrowed (valid until hml__store_free). */
const json_t *hml__store_find(const hml__store *s, const char *collection,
                              const char *id);

/**
 * The record with `id` in `collection` of `manifest` (a manifest being
 * changed: the one hml__store_update() hands its fn), or NULL. Borrowed
 * from it, and modifiable.
 */
json_t *hml__manifest_find(json_t *manifest, const char *collection, const char *id);

/**
 * A provenance object for a record: time, host, command, versions and the
 * SHA-256 of the given experiment-relative files. New reference.
 */
json_t *hml__store_provenance(const hml__store *s, const char *const *rel_files,
                              size_t nfiles);

/**
 * `s` as JSON without loss: a string when it is UTF-8, else {"hex":
 * "<every byte as two hex digits>"} (a command line, a directory or a host
 * name may hold any bytes). NULL gives null. New reference; NULL on OOM.
 */
json_t *hml__json_bytes(const char *s);

/** Set once by main(): the command line recorded in provenance. */
void hml__store_set_command(int argc, char **argv);

/** Add a component version to provenance (e.g. "libtorch", "1.13.1"). */
void hml__store_set_version(const char *name, const char *version);

#ifdef __cplusplus
}
#endif
#endif
