/*
 * lib/store/store_manifest.c - manifest.json on disk (store_private.h):
 * the collections it holds, its validation (a manifest that does not
 * validate is never written over), reading it, writing it atomically.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "core/beneath.h"
#include "core/error.h"
#include "core/util.h"
#include "hml/version.h"
#include "store/lock.h"
#include "store/manifest_ids.h"
#include "store/store_private.h"
#include "sys/fsutil.h"

#define MANIFEST_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))

static const hml__collection_info collections[] = {
	{ "datasets", "data" },
	{ "models", "models" },
	{ "deployments", NULL },
	{ "evaluations", "eval" },
	{ "compiled", "models" },   /* hml deploy --target c: c1.c, c1.h, c1.so */
	{ "searches", "search" },   /* hml search: search/s1/trials.jsonl (lib/search/history.h) */
};
#define NCOLLECTIONS (sizeof(collections) / sizeof(collections[0]))

const hml__collection_info *hml__store_collection_find(const char *name)
{
	for (size_t i = 0; name && i < NCOLLECTIONS; i++)
		if (strcmp(collections[i].name, name) == 0)
			return &collections[i];
	return NULL;
}

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
int hml__manifest_validate(const char *path, json_t *m)
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
int hml__manifest_load(const char *path, json_t **out)
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
	if ((rc = hml__manifest_validate(path, m)) < 0)
		goto done;
	*out = m;
	m = NULL;

done:
	json_decref(m);
	free(text);
	return rc;
}

/* Inside the experiment `dir`, never through a link. */
int hml__manifest_write(const char *dir, const char *path, const json_t *m)
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

json_t *hml__manifest_new(void)
{
	char when[32];

	hml__time_iso(when, sizeof(when));
	return json_pack("{s:i, s:s, s:s, s:[], s:[], s:[], s:[]}",
	                 "schema_version", HML__STORE_SCHEMA, "hml_version", HML_VERSION_STRING,
	                 "created", when, "datasets", "models", "deployments", "evaluations");
}
