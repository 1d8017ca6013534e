/*
 * lib/store/store_private.h - the experiment store's object and the
 * pieces its files share (private to lib/store/store*.c; the interface
 * is store.h):
 *
 *   store.c             opening and creating a store, its paths, finding
 *                       records, its lock, a record's provenance
 *   store_manifest.c    manifest.json on disk: its collections, validation,
 *                       reading, atomic writing
 *   store_add.c         registering records and their files, and updates
 *   store_provenance.c  the facts recorded with every record (command,
 *                       user, versions, input hashes)
 */
#ifndef HML_LIB_STORE_PRIVATE_H
#define HML_LIB_STORE_PRIVATE_H

#include <stddef.h>

#include <jansson.h>

#include "store/store.h"

struct hml__store {
	char *dir;
	char *manifest_path;
	char *lock_path;
	json_t *manifest;
	json_t *retired;   /* earlier manifests, kept so borrowed records stay valid */
};

/* The ids of each collection: lib/store/ids.h. */
typedef struct hml__collection_info {
	const char *name;
	const char *subdir;   /* NULL: the collection has no files */
} hml__collection_info;

/* store.c */

/** Make `m` (stolen) the current manifest. The one it replaces is kept
 * until hml__store_free, so what callers borrowed from it stays valid. */
void hml__store_manifest_replace(hml__store *s, json_t *m);

/* store_manifest.c */

/** The collection named `name`, or NULL when there is none. */
const hml__collection_info *hml__store_collection_find(const char *name);

/** Check a manifest read from `path` (for messages). Errors: HML_EINVALID
 * "manifest 'PATH' is corrupt: ...", HML_ENOTSUPPORTED (a newer schema). */
int hml__manifest_validate(const char *path, json_t *m);

/** Read and validate the manifest at `path` (*out: a new reference). */
int hml__manifest_load(const char *path, json_t **out);

/** Write `m` to `path` in `dir` atomically, never through a link. */
int hml__manifest_write(const char *dir, const char *path, const json_t *m);

/** A new, empty manifest (NULL when out of memory). */
json_t *hml__manifest_new(void);

/* store.c */

/** Take the experiment's lock (lock.h), naming our command for whoever waits. */
int hml__store_lock_take(const hml__store *s, int *fd);

/* store_provenance.c (which needs no store: the dependencies go
 * store_add.c -> store.c -> store_manifest.c, store_provenance.c) */

/** The command's name for the lock's holder ("hml train"). */
const char *hml__store_command_name(void);

/** The provenance object of n files `rels` whose SHA-256 hex digests are
 * `hashes` (NULL when out of memory). */
json_t *hml__store_provenance_new(const char *const *rels, char (*hashes)[65], size_t n);

#endif
