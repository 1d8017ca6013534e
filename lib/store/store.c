/*
 * lib/store/store.c - the experiment store: a directory, its manifest.json and
 * the lock that serialises the processes that register artefacts.
 *
 * The manifest on disk is the only truth: every change re-reads it under
 * the lock, applies itself to the fresh copy and writes it back
 * atomically, so two hml processes never lose each other's records. A
 * manifest that does not validate is never written over: a failed parse
 * ends the operation before any write path runs.
 */
/* renameat2() and RENAME_NOREPLACE. */
#define _GNU_SOURCE 1

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <jansson.h>

#include "core/beneath.h"
#include "core/error.h"
#include "core/util.h"
#include "hml/version.h"
#include "store/ids.h"
#include "store/lock.h"
#include "store/manifest_ids.h"
#include "store/store.h"
#include "sys/fsutil.h"

#define MANIFEST_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))

struct hml__store {
	char *dir;
	char *manifest_path;
	char *lock_path;
	json_t *manifest;
	json_t *retired;   /* earlier manifests, kept so borrowed records stay valid */
};

/* Make `m` (stolen) the current manifest. The one it replaces is kept
 * until hml__store_free, so what callers borrowed from it stays valid. */
static void manifest_replace(hml__store *s, json_t *m)
{
	if (s->manifest && (s->retired || (s->retired = json_array())))
		json_array_append_new(s->retired, s->manifest);
	else
		json_decref(s->manifest);
	s->manifest = m;
}

/* The ids of each collection: lib/store/ids.h. */
typedef struct collection_info {
	const char *name;
	const char *subdir;   /* NULL: the collection has no files */
} collection_info;

static const collection_info collections[] = {
	{ "datasets", "data" },
	{ "models", "models" },
	{ "deployments", NULL },
	{ "evaluations", "eval" },
	{ "compiled", "models" },   /* hml deploy --target c: c1.c, c1.h, c1.so */
	{ "searches", "search" },   /* hml search: search/s1/trials.jsonl (lib/search/history.h) */
};
#define NCOLLECTIONS (sizeof(collections) / sizeof(collections[0]))

/* Set once by main() before any store is used. */
static json_t *g_command;
static json_t *g_versions;
static char g_command_name[128];

static const collection_info *collection_find(const char *name)
{
	for (size_t i = 0; name && i < NCOLLECTIONS; i++)
		if (strcmp(collections[i].name, name) == 0)
			return &collections[i];
	return NULL;
}

json_t *hml__json_bytes(const char *s)
{
	static const char digits[] = "0123456789abcdef";
	json_t *j;
	char *hex;
	size_t n;

	if (!s)
		return json_null();
	if ((j = json_string(s)) != NULL)
		return j;
	/* Not UTF-8: JSON cannot hold it as a string; keep every byte. */
	n = strlen(s);
	if (!(hex = malloc(2 * n + 1)))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		hex[2 * i] = digits[(unsigned char)s[i] >> 4];
		hex[2 * i + 1] = digits[(unsigned char)s[i] & 15];
	}
	hex[2 * n] = '\0';
	j = json_pack("{s:s}", "hex", hex);
	free(hex);
	return j;
}

/* ---- provenance facts --------------------------------------------------- */

void hml__store_set_command(int argc, char **argv)
{
	const char *base;
	int i;

	json_decref(g_command);
	g_command = json_array();
	for (i = 0; g_command && i < argc; i++)
		json_array_append_new(g_command, hml__json_bytes(argv[i]));
	if (argc < 1)
		return;
	/* "hml train" for the lock file: the program's name and its first
	 * argument that is neither an option nor the value of -C. */
	base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	snprintf(g_command_name, sizeof(g_command_name), "%s", base);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-C") == 0) {
			i++;
			continue;
		}
		if (argv[i][0] == '-')
			continue;
		snprintf(g_command_name, sizeof(g_command_name), "%s %s", base, argv[i]);
		break;
	}
}

void hml__store_set_version(const char *name, const char *version)
{
	if (!name)
		return;
	if (!g_versions && !(g_versions = json_object()))
		return;
	json_object_set_new(g_versions, name, hml__json_bytes(version ? version : "unknown"));
}

/* The command line: as main() set it, else as the kernel has it. */
static json_t *command_json(void)
{
	json_t *a;
	char *buf = NULL;
	size_t len = 0;

	if (g_command)
		return json_deep_copy(g_command);
	if (!(a = json_array()))
		return NULL;
	if (hml__read_file("/proc/self/cmdline", &buf, &len) == 0)
		for (size_t off = 0; off < len; off += strlen(buf + off) + 1)
			json_array_append_new(a, hml__json_bytes(buf + off));
	free(buf);
	return a;
}

static const char *command_name(void)
{
	static _Thread_local char comm[64];
	char *buf = NULL;

	if (g_command_name[0])
		return g_command_name;
	if (hml__read_file("/proc/self/comm", &buf, NULL) == 0) {
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(comm, sizeof(comm), "%s", buf);
	}
	free(buf);
	return comm[0] ? comm : "unknown";
}

static json_t *user_json(void)
{
	struct passwd pw, *res = NULL;
	char buf[1024];
	uid_t uid = geteuid();

	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res && res->pw_name)
		return hml__json_bytes(res->pw_name);
	snprintf(buf, sizeof(buf), "%ld", (long)uid);
	return json_string(buf);
}

static json_t *versions_json(void)
{
	json_t *v = json_pack("{s:s, s:s, s:s}", "hml", HML_VERSION_STRING,
	                      "hdf5", hml__hdf5_version(), "jansson", JANSSON_VERSION);

	if (v && g_versions)
		json_object_update(v, g_versions);
	return v;
}

/* The provenance object, with the given hashes of experiment-relative files. */
static json_t *provenance_new(const char *const *rels, char (*hashes)[65], size_t n)
{
	char when[32], host[256], *cwd;
	json_t *p, *sums;

	hml__time_iso(when, sizeof(when));
	hml__hostname(host, sizeof(host));
	cwd = getcwd(NULL, 0);
	p = json_object();
	sums = json_object();
	if (!p || !sums)
		goto oom;
	if (json_object_set_new(p, "time", json_string(when)) ||
	    json_object_set_new(p, "host", hml__json_bytes(host)) ||
	    json_object_set_new(p, "user", user_json()) ||
	    json_object_set_new(p, "command", command_json()) ||
	    json_object_set_new(p, "cwd", cwd ? hml__json_bytes(cwd) : json_null()) ||
	    json_object_set_new(p, "versions", versions_json()))
		goto oom;
	for (size_t i = 0; i < n; i++)
		if (json_object_set_new(sums, rels[i], json_string(hashes[i])))
			goto oom;
	json_object_set_new(p, "sha256", sums);
	free(cwd);
	return p;

oom:
	free(cwd);
	json_decref(p);
	json_decref(sums);
	hml__error_oom();
	return NULL;
}

json_t *hml__store_provenance(const hml__store *s, const char *const *rel_files,
                              size_t nfiles)
{
	char (*hashes)[65] = NULL;
	json_t *p = NULL;

	if (nfiles && !(hashes = calloc(nfiles, sizeof(*hashes)))) {
		hml__error_oom();
		return NULL;
	}
	for (size_t i = 0; i < nfiles; i++) {
		char *abs = hml__store_path(s, rel_files[i]);
		int rc = abs ? hml__sha256_file(abs, hashes[i]) : HML_ENOMEM;

		free(abs);
		if (rc < 0)
			goto done;
	}
	p = provenance_new(rel_files, hashes, nfiles);

done:
	free(hashes);
	return p;
}

/* ---- the manifest ------------------------------------------------------- */

static int corrupt(const char *path, const char *reason)
{
	return hml__error_set(HML_EINVALID, "manifest '%s' is corrupt: %s", path, reason);
}

/* Does a record before arr[i] have the id `id`? */
static int duplicate_id(const json_t *arr, size_t i, const char *id)
{
	for (size_t k = 0; k < i; k++) {
		const char *other = json_string_value(json_object_get(json_array_get(arr, k), "id"));

		if (other && strcmp(other, id) == 0)
			return 1;
	}
	return 0;
}

/* Is `rel` a path that stays inside the experiment: relative, not empty,
 * no ".." component? */
static int path_inside(const char *rel)
{
	const char *p = rel;

	if (!*rel || *rel == '/')
		return 0;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return 0;
		p += n;
		p += *p == '/';
	}
	return 1;
}

/* A record's files (role -> path relative to the experiment) must all be
 * strings that stay inside it: a manifest that names "../x" or "/etc/x"
 * would have hml read, hash or deploy files that are not the experiment's. */
static int files_check(const char *path, const char *name, size_t i, const json_t *rec)
{
	const json_t *files = json_object_get(rec, "files"), *f;
	const char *role;
	char why[400];

	if (!files)
		return 0;
	if (!json_is_object(files)) {
		snprintf(why, sizeof(why), "%s[%zu].files is not an object", name, i);
		return corrupt(path, why);
	}
	json_object_foreach((json_t *)files, role, f) {
		if (!json_is_string(f)) {
			snprintf(why, sizeof(why), "%s[%zu].files.%.64s is not a string", name, i, role);
			return corrupt(path, why);
		}
		if (!path_inside(json_string_value(f))) {
			snprintf(why, sizeof(why),
			         "%s[%zu].files.%.64s '%.200s' is not a path inside the experiment",
			         name, i, role, json_string_value(f));
			return corrupt(path, why);
		}
	}
	return 0;
}

/* Check the structure every reader relies on. Missing collections are
 * added (empty) to the copy in memory. */
static int manifest_validate(const char *path, json_t *m)
{
	json_t *v = json_object_get(m, "schema_version");
	char why[160];
	json_int_t schema;
	int rc;

	if (!json_is_object(m))
		return corrupt(path, "the top level is not a JSON object");
	if (!v)
		return corrupt(path, "\"schema_version\" is missing");
	if (!json_is_integer(v))
		return corrupt(path, "\"schema_version\" is not an integer");
	schema = json_integer_value(v);
	if (schema > HML__STORE_SCHEMA)
		return hml__error_set(HML_ENOTSUPPORTED,
		                      "manifest '%s' has schema_version %lld; this hml reads %d",
		                      path, (long long)schema, HML__STORE_SCHEMA);
	if (schema < 1) {
		snprintf(why, sizeof(why), "\"schema_version\" %lld is not valid", (long long)schema);
		return corrupt(path, why);
	}
	for (size_t c = 0; c < NCOLLECTIONS; c++) {
		const char *name = collections[c].name;
		json_t *arr = json_object_get(m, name), *rec;
		size_t i;

		if (!arr) {
			if (json_object_set_new(m, name, json_array()))
				return hml__error_oom();
			continue;
		}
		if (!json_is_array(arr)) {
			snprintf(why, sizeof(why), "\"%s\" is not an array", name);
			return corrupt(path, why);
		}
		json_array_foreach(arr, i, rec) {
			json_t *id = json_object_get(rec, "id");

			if (!json_is_object(rec)) {
				snprintf(why, sizeof(why), "%s[%zu] is not an object", name, i);
				return corrupt(path, why);
			}
			if ((rc = hml__manifest_ids_check(path, name, i, rec)) < 0)
				return rc;
			if (duplicate_id(arr, i, json_string_value(id))) {
				snprintf(why, sizeof(why), "%s[%zu].id '%.32s' is used twice", name, i,
				         json_string_value(id));
				return corrupt(path, why);
			}
			if ((rc = files_check(path, name, i, rec)) < 0)
				return rc;
		}
	}
	return 0;
}

/* Read and validate the manifest at `path` into *out (new reference). */
static int manifest_load(const char *path, json_t **out)
{
	json_error_t je;
	json_t *m = NULL;
	char *text = NULL, why[256];
	size_t len = 0;
	int rc;

	*out = NULL;
	if ((rc = hml__read_file(path, &text, &len)) < 0)
		goto done;
	if (len == 0) {
		rc = corrupt(path, "the file is empty");
		goto done;
	}
	if (!(m = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je))) {
		snprintf(why, sizeof(why), "line %d: %s", je.line, je.text);
		rc = corrupt(path, why);
		goto done;
	}
	if ((rc = manifest_validate(path, m)) < 0)
		goto done;
	*out = m;
	m = NULL;

done:
	json_decref(m);
	free(text);
	return rc;
}

/* Inside the experiment `dir`, never through a link. */
static int manifest_write(const char *dir, const char *path, const json_t *m)
{
	char *text = json_dumps(m, MANIFEST_FLAGS);
	size_t len;
	int rc;

	if (!text)
		return hml__error_oom();
	/* json_dumps leaves room for nothing more: add the newline by copy. */
	len = strlen(text);
	{
		char *t = realloc(text, len + 2);

		if (!t) {
			free(text);
			return hml__error_oom();
		}
		text = t;
	}
	text[len++] = '\n';
	text[len] = '\0';
	rc = hml__beneath_write_atomic(dir, path, text, len);
	free(text);
	return rc;
}

static json_t *manifest_new(void)
{
	char when[32];

	hml__time_iso(when, sizeof(when));
	return json_pack("{s:i, s:s, s:s, s:[], s:[], s:[], s:[]}",
	                 "schema_version", HML__STORE_SCHEMA, "hml_version", HML_VERSION_STRING,
	                 "created", when, "datasets", "models", "deployments", "evaluations");
}

/* The experiment's lock (lock.h), naming our command for whoever waits. */
static int lock_take(const hml__store *s, int *fd)
{
	return hml__lock_take(fd, s->lock_path, s->dir, command_name());
}

/* ---- opening ------------------------------------------------------------ */

static int store_new(hml__store **out, const char *dir)
{
	hml__store *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return hml__error_oom();
	s->dir = hml__strdup(dir);
	s->manifest_path = hml__path_join(dir, "manifest.json");
	s->lock_path = hml__path_join(dir, ".lock");
	if (!s->dir || !s->manifest_path || !s->lock_path) {
		hml__store_free(s);
		return hml__error_oom();
	}
	*out = s;
	return 0;
}

/* Make the directories and, under the lock (two processes may create the
 * same experiment at once), an empty manifest when there is none. */
static int store_create(hml__store *s)
{
	static const char *const subdirs[] = { "data", "models", "eval" };
	struct stat st;
	json_t *m = NULL;
	int fd = -1, rc = 0;

	if (hml__mkdir_p(s->dir) < 0) {
		rc = hml__error_set(HML_EIO, "cannot create experiment '%s': %s", s->dir,
		                    strerror(errno));
		goto done;
	}
	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		/* Inside: never through a link (core/beneath.h). */
		if ((rc = hml__beneath_mkdir_p(s->dir, subdirs[i])) == HML_EIO)
			rc = hml__error_set(HML_EIO, "cannot create experiment '%s': %s", s->dir,
			                    strerror(errno));
		if (rc < 0)
			goto done;
	}
	if (stat(s->manifest_path, &st) == 0)
		goto done;
	if ((rc = lock_take(s, &fd)) < 0)
		goto done;
	if (stat(s->manifest_path, &st) == 0)
		goto done;
	if (!(m = manifest_new())) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = manifest_write(s->dir, s->manifest_path, m)) == HML_EIO)
		rc = hml__error_set(HML_EIO, "cannot create experiment '%s': %s", s->dir,
		                    strerror(errno));

done:
	hml__lock_release(fd);
	json_decref(m);
	return rc;
}

int hml__store_open(hml__store **out, const char *dir, int create)
{
	hml__store *s = NULL;
	struct stat st;
	int rc;

	*out = NULL;
	if (!dir || !*dir)
		return hml__error_set(HML_EINVALID, "the experiment directory name is empty");
	if ((rc = store_new(&s, dir)) < 0)
		return rc;
	if (create) {
		if ((rc = store_create(s)) < 0)
			goto done;
	} else if (stat(s->dir, &st) < 0 || !S_ISDIR(st.st_mode) ||
	           (stat(s->manifest_path, &st) < 0 && errno == ENOENT)) {
		rc = hml__error_set(HML_ENOTFOUND, "no experiment at '%s' (run 'hml collect' first)",
		                    s->dir);
		goto done;
	}
	if ((rc = manifest_load(s->manifest_path, &s->manifest)) < 0)
		goto done;
	*out = s;
	s = NULL;

done:
	hml__store_free(s);
	return rc;
}

void hml__store_free(hml__store *s)
{
	if (!s)
		return;
	json_decref(s->manifest);
	json_decref(s->retired);
	free(s->dir);
	free(s->manifest_path);
	free(s->lock_path);
	free(s);
}

const char *hml__store_dir(const hml__store *s)
{
	return s->dir;
}

const json_t *hml__store_manifest(const hml__store *s)
{
	return s->manifest;
}

int hml__store_reload(hml__store *s)
{
	json_t *m;
	int rc;

	if ((rc = manifest_load(s->manifest_path, &m)) < 0)
		return rc;
	manifest_replace(s, m);
	return 0;
}

char *hml__store_path(const hml__store *s, const char *rel)
{
	return hml__path_join(s->dir, rel);
}

char *hml__store_tmp_path(const hml__store *s, const char *subdir, const char *ext)
{
	static _Atomic unsigned counter;
	char name[96];
	char *d, *p;

	snprintf(name, sizeof(name), ".tmp-%ld-%u%s", (long)getpid(), counter++,
	         ext ? ext : "");
	if (!subdir || !*subdir)
		return hml__path_join(s->dir, name);
	if (!(d = hml__path_join(s->dir, subdir)))
		return NULL;
	p = hml__path_join(d, name);
	free(d);
	return p;
}

char *hml__store_tmp_create(const hml__store *s, const char *subdir, const char *ext)
{
	char *p = hml__store_tmp_path(s, subdir, ext);
	int fd = p ? hml__beneath_open(s->dir, p, O_WRONLY | O_CREAT | O_EXCL, 0666) : -1;

	if (fd >= 0)
		close(fd);
	else {
		if (p && fd == HML_EIO)
			hml__error_set(HML_EIO, "cannot create '%s': %s", p, strerror(errno));
		free(p);
		p = NULL;
	}
	return p;
}

char *hml__store_tmp_dir(const hml__store *s, const char *subdir)
{
	char name[128], *p;

	snprintf(name, sizeof(name), "%s/.tmp-%ld-XXXXXX", subdir, (long)getpid());
	if ((p = hml__store_path(s, name)) && hml__beneath_mkdtemp(s->dir, p) < 0) {
		if (hml_error_last()->code == HML_EIO)
			hml__error_set(HML_EIO, "cannot create '%s': %s", p, strerror(errno));
		free(p);
		p = NULL;
	}
	return p;
}

json_t *hml__manifest_find(json_t *manifest, const char *collection, const char *id)
{
	json_t *rec;
	size_t i;

	if (!manifest || !id)
		return NULL;
	json_array_foreach(json_object_get(manifest, collection), i, rec) {
		const char *rid = json_string_value(json_object_get(rec, "id"));

		if (rid && strcmp(rid, id) == 0)
			return rec;
	}
	return NULL;
}

const json_t *hml__store_find(const hml__store *s, const char *collection, const char *id)
{
	return hml__manifest_find(s->manifest, collection, id);
}

/* ---- registering -------------------------------------------------------- */

/* The number in an id "m12" of collection `name`, or 0 when `s` is not
 * one (ids.h). A file name "m12.pt" counts too when `ext_ok`. */
static long id_number(const char *s, const char *name, int ext_ok)
{
	size_t len = s ? (ext_ok ? strcspn(s, ".") : strlen(s)) : 0;
	long v = hml__id_number(name, s, len);

	return v > 0 ? v : 0;
}

/* One more than the largest number the collection ever used: in the
 * manifest and in the names of its files, so that an id is never given
 * twice even when records were removed by hand. */
static long next_id(const hml__store *s, const json_t *m, const collection_info *ci)
{
	json_t *rec;
	long max = 0;
	size_t i;

	json_array_foreach(json_object_get(m, ci->name), i, rec) {
		long v = id_number(json_string_value(json_object_get(rec, "id")), ci->name, 0);

		if (v > max)
			max = v;
	}
	if (ci->subdir) {
		char *d = hml__path_join(s->dir, ci->subdir);
		DIR *dh = d ? opendir(d) : NULL;
		struct dirent *e;

		while (dh && (e = readdir(dh)) != NULL) {
			long v = id_number(e->d_name, ci->name, 1);

			if (v > max)
				max = v;
		}
		if (dh)
			closedir(dh);
		free(d);
	}
	return max + 1;
}

static int exists_error(const hml__store *s, const char *rel)
{
	return hml__error_set(HML_EEXISTS, "'%s' already exists in experiment '%s'; not overwriting it",
	                      rel, s->dir);
}

/* The record as stored: "id" first, the command's fields, then "files"
 * and "provenance". */
static json_t *record_new(const char *id, json_t *record)
{
	json_t *r = json_object(), *files = json_object_get(record, "files"), *v;
	const char *k;

	if (!r || json_object_set_new(r, "id", json_string(id)))
		goto oom;
	json_object_foreach(record, k, v) {
		if (strcmp(k, "id") == 0 || strcmp(k, "files") == 0 || strcmp(k, "provenance") == 0)
			continue;
		if (json_object_set(r, k, v))
			goto oom;
	}
	files = json_is_object(files) ? json_deep_copy(files) : json_object();
	if (!files || json_object_set_new(r, "files", files))
		goto oom;
	return r;

oom:
	json_decref(r);
	return NULL;
}

static int card_write(const hml__store *s, const char *path, const json_t *rec)
{
	return manifest_write(s->dir, path, rec);
}

/* A registration in progress: the files' final names, hashes and how far
 * the moves went, so that a failure can put everything back. */
typedef struct add_plan {
	const collection_info *ci;
	const hml__store_file *files;
	size_t nfiles;
	char id[32];
	char (*hashes)[65];
	char **rels, **finals;   /* "<subdir>/<id><ext>" and its absolute path */
	char *card_rel, *card_abs;
	size_t nrenamed;
	int card_written;
} add_plan;

static void plan_release(add_plan *p)
{
	for (size_t i = 0; p->rels && p->finals && i < p->nfiles; i++) {
		free(p->finals[i]);
		free(p->rels[i]);
	}
	free(p->finals);
	free(p->rels);
	free(p->hashes);
	free(p->card_rel);
	free(p->card_abs);
}

/* The arguments of hml__store_add, checked before anything is touched. */
static int add_check(const collection_info *ci, const char *collection, const json_t *record,
                     const hml__store_file *files, size_t nfiles, int card)
{
	if (!json_is_object(record))
		return hml__error_set(HML_EINVALID, "a record of '%s' must be a JSON object",
		                      collection ? collection : "?");
	if (!ci)
		return hml__error_set(HML_EINVALID, "unknown collection '%s'",
		                      collection ? collection : "(null)");
	if (!ci->subdir && (nfiles || card))
		return hml__error_set(HML_EINVALID, "records of '%s' have no files", ci->name);
	for (size_t i = 0; i < nfiles; i++)
		if (!files[i].role || !files[i].tmp_path || !files[i].ext ||
		    (card && strcmp(files[i].role, "card") == 0))
			return hml__error_set(HML_EINVALID, "file %zu of a '%s' record is not described",
			                      i, ci->name);
	return 0;
}

/* "<subdir>/<id><suffix>" and its absolute path. */
static int plan_name(const hml__store *s, const add_plan *p, const char *suffix,
                     char **rel, char **abs)
{
	size_t len = strlen(p->ci->subdir) + strlen(p->id) + strlen(suffix) + 2;

	if (!(*rel = malloc(len)))
		return hml__error_oom();
	snprintf(*rel, len, "%s/%s%s", p->ci->subdir, p->id, suffix);
	return (*abs = hml__store_path(s, *rel)) ? 0 : HML_ENOMEM;
}

/* The final names of the files and of the card: distinct, and none may
 * exist (an artefact is never overwritten). */
static int plan_names(const hml__store *s, add_plan *p, int card)
{
	struct stat st;
	int rc;

	for (size_t i = 0; i < p->nfiles; i++) {
		if ((rc = plan_name(s, p, p->files[i].ext, &p->rels[i], &p->finals[i])) < 0)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (strcmp(p->rels[j], p->rels[i]) == 0)
				return hml__error_set(HML_EINVALID,
					"two files of record '%s' would both be '%s'", p->id, p->rels[i]);
		if (lstat(p->finals[i], &st) == 0)
			return exists_error(s, p->rels[i]);
	}
	if (!card)
		return 0;
	if ((rc = plan_name(s, p, ".json", &p->card_rel, &p->card_abs)) < 0)
		return rc;
	for (size_t i = 0; i < p->nfiles; i++)
		if (strcmp(p->rels[i], p->card_rel) == 0)
			return hml__error_set(HML_EINVALID,
				"a file of record '%s' would overwrite its card '%s'", p->id, p->card_rel);
	return lstat(p->card_abs, &st) == 0 ? exists_error(s, p->card_rel) : 0;
}

/* Rename the files to their final names and list them in rec["files"]. */
static int plan_move(const hml__store *s, add_plan *p, json_t *rec)
{
	json_t *fobj = json_object_get(rec, "files");

	for (size_t i = 0; i < p->nfiles; i++) {
		int rc = hml__beneath_rename(s->dir, p->files[i].tmp_path, p->finals[i], 1);

		if (rc == HML_EEXISTS)
			return exists_error(s, p->rels[i]);
		if (rc == HML_EIO)
			return hml__error_set(HML_EIO, "cannot move '%s' to '%s': %s",
			                      p->files[i].tmp_path, p->finals[i], strerror(errno));
		if (rc < 0)
			return rc;
		p->nrenamed++;
		if (json_object_set_new(fobj, p->files[i].role, json_string(p->rels[i])))
			return hml__error_oom();
	}
	if (p->card_rel && json_object_set_new(fobj, "card", json_string(p->card_rel)))
		return hml__error_oom();
	return 0;
}

/* Provenance, then the card: the card is the whole record, so its own
 * hash can only be in the manifest's copy. */
static int plan_seal(const hml__store *s, add_plan *p, json_t *rec)
{
	char card_hash[65];
	json_t *prov;
	int rc;

	if (!(prov = provenance_new((const char *const *)p->rels, p->hashes, p->nfiles)))
		return HML_ENOMEM;
	json_object_set_new(rec, "provenance", prov);
	if (!p->card_rel)
		return 0;
	if ((rc = card_write(s, p->card_abs, rec)) < 0)
		return rc;
	p->card_written = 1;
	if ((rc = hml__sha256_file(p->card_abs, card_hash)) < 0)
		return rc;
	json_object_set_new(json_object_get(prov, "sha256"), p->card_rel, json_string(card_hash));
	return 0;
}

/* Put every file back where the caller had it, keeping the error. */
static void plan_undo(const hml__store *s, add_plan *p)
{
	hml__error_saved saved;

	hml__error_save(&saved);
	if (p->card_written)
		hml__beneath_unlink(s->dir, p->card_abs);
	while (p->nrenamed-- > 0)
		hml__beneath_rename(s->dir, p->finals[p->nrenamed], p->files[p->nrenamed].tmp_path, 0);
	hml__error_restore(&saved);
}

int hml__store_add(hml__store *s, const char *collection, json_t *record,
                   const hml__store_file *files, size_t nfiles, int card,
                   char *id_out, size_t id_size)
{
	add_plan p = { collection_find(collection), files, nfiles, "", NULL, NULL, NULL,
	               NULL, NULL, 0, 0 };
	json_t *m = NULL, *rec = NULL;
	int fd = -1, rc;

	if (id_out && id_size)
		id_out[0] = '\0';
	if ((rc = add_check(p.ci, collection, record, files, nfiles, card)) < 0)
		goto done;
	p.hashes = calloc(nfiles + 1, sizeof(*p.hashes));
	p.finals = calloc(nfiles + 1, sizeof(*p.finals));
	p.rels = calloc(nfiles + 2, sizeof(*p.rels));
	if (!p.hashes || !p.finals || !p.rels) {
		rc = hml__error_oom();
		goto done;
	}
	/* Hash before taking the lock: a large data file keeps no one waiting. */
	for (size_t i = 0; i < nfiles; i++)
		if (!files[i].make && (rc = hml__sha256_file(files[i].tmp_path, p.hashes[i])) < 0)
			goto done;

	if ((rc = lock_take(s, &fd)) < 0 || (rc = manifest_load(s->manifest_path, &m)) < 0)
		goto done;
	/* Made by the grammar the readers check (ids.h): one contract. */
	if ((rc = hml__id_format(p.id, sizeof(p.id), p.ci->name, next_id(s, m, p.ci))) < 0)
		goto done;
	for (size_t i = 0; i < nfiles; i++)
		if (files[i].make &&
		    ((rc = files[i].make(files[i].tmp_path, p.id, files[i].payload)) < 0 ||
		     (rc = hml__sha256_file(files[i].tmp_path, p.hashes[i])) < 0))
			goto done;
	if (!(rec = record_new(p.id, record))) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = plan_names(s, &p, card)) < 0 || (rc = plan_move(s, &p, rec)) < 0 ||
	    (rc = plan_seal(s, &p, rec)) < 0)
		goto done;
	if (json_array_append(json_object_get(m, p.ci->name), rec)) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = manifest_write(s->dir, s->manifest_path, m)) < 0)
		goto done;
	manifest_replace(s, m);
	m = NULL;
	if (id_out && id_size)
		snprintf(id_out, id_size, "%s", p.id);

done:
	if (rc < 0)
		plan_undo(s, &p);
	hml__lock_release(fd);
	plan_release(&p);
	json_decref(rec);
	json_decref(m);
	json_decref(record);
	return rc;
}

int hml__store_update(hml__store *s, int (*fn)(json_t *manifest, void *payload),
                      void *payload)
{
	json_t *m = NULL;
	int fd = -1, rc;

	if ((rc = lock_take(s, &fd)) < 0)
		goto done;
	if ((rc = manifest_load(s->manifest_path, &m)) < 0)
		goto done;
	if ((rc = fn(m, payload)) < 0)
		goto done;
	/* Whatever fn did, the manifest written must read back. */
	if ((rc = manifest_validate(s->manifest_path, m)) < 0) {
		hml__error_saved why;

		hml__error_save(&why);
		rc = hml__error_set(HML_EINVALID, "an update of experiment '%s' was not written: %s",
		                    s->dir, why.message);
		goto done;
	}
	if ((rc = manifest_write(s->dir, s->manifest_path, m)) < 0)
		goto done;
	manifest_replace(s, m);
	m = NULL;
	rc = 0;

done:
	hml__lock_release(fd);
	json_decref(m);
	return rc;
}
