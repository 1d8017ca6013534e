/*
 * lib/core/deployfile.c - the deployment file (deployfile.h): written by
 * `hml deploy`, read by the runtime's hot swap (its swap.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "core/beneath.h"
#include "core/deployfile.h"
#include "core/error.h"
#include "core/read_file.h"

int hml__deployfile_rel(char *buf, size_t size, const char *label)
{
	if ((size_t)snprintf(buf, size, "%s/%s.json", HML__DEPLOYFILE_DIR, label) >= size) {
		if (size)
			buf[0] = '\0';
		return hml__error_set(HML_EINVALID, "deployment file name of region '%.72s' is too long",
		                      label);
	}
	return 0;
}

/* Copy `v` into a field of `size` bytes: 0, or -1 when it does not fit. */
static int field_set(char *dst, size_t size, const char *v)
{
	size_t n = v ? strlen(v) : 0;

	if (!v || !*v || n >= size)
		return -1;
	memcpy(dst, v, n + 1);
	return 0;
}

int hml__deployfile_write(const char *root, const hml__deployfile *d)
{
	char rel[128];
	char *text = NULL;
	json_t *doc;
	int rc;

	if (d->path[0] != '/')
		return hml__error_set(HML_EINVALID,
			"deployment of region '%s': model path '%s' is not absolute", d->region, d->path);
	if (d->guard[0] && d->guard[0] != '/')
		return hml__error_set(HML_EINVALID,
			"deployment of region '%s': guard path '%s' is not absolute", d->region, d->guard);
	if ((rc = hml__deployfile_rel(rel, sizeof(rel), d->region)) < 0)
		return rc;
	doc = json_pack("{s:i, s:s, s:s, s:s, s:s}", "schema_version", HML__DEPLOYFILE_SCHEMA,
	                "region", d->region, "deployment", d->deployment, "model", d->model,
	                "path", d->path);
	if (doc && ((d->guard[0] && json_object_set_new(doc, "guard", json_string(d->guard)) < 0) ||
	            (d->k >= 1 && d->k <= HML__DEPLOYFILE_K_MAX &&
	             json_object_set_new(doc, "k", json_integer(d->k)) < 0) ||
	            (d->interleave >= 0 && d->interleave <= HML__DEPLOYFILE_INTERLEAVE_MAX &&
	             json_object_set_new(doc, "interleave", json_integer(d->interleave)) < 0))) {
		json_decref(doc);
		doc = NULL;
	}
	if (!doc || !(text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER))) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = hml__beneath_mkdir_p(root, HML__DEPLOYFILE_DIR)) < 0)
		goto done;
	rc = hml__beneath_write_atomic(root, rel, text, strlen(text));
done:
	free(text);
	json_decref(doc);
	return rc;
}

/* An optional integer field in [lo, hi] into *out (`none` when absent). */
static int run_field(const json_t *doc, const char *key, long long lo, long long hi,
                     long long none, long long *out, const char *path)
{
	const json_t *v = json_object_get(doc, key);

	*out = none;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return hml__error_set(HML_EIO, "cannot read deployment file '%s': its %s is not an "
		                      "integer from %lld to %lld", path, key, lo, hi);
	*out = (long long)json_integer_value(v);
	return 0;
}

int hml__deployfile_read(const char *path, hml__deployfile *out)
{
	json_error_t err;
	json_t *doc = NULL;
	const json_t *v;
	char *text = NULL;
	size_t len;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = hml__read_file_max(path, HML__DEPLOYFILE_MAX_BYTES, &text, &len)) < 0) {
		hml__error_saved why;

		hml__error_save(&why);
		return hml__error_set(rc == HML_ENOTFOUND ? HML_ENOTFOUND : HML_EIO,
		                      "cannot read deployment file '%s': %s", path,
		                      hml__read_file_reason(why.message, path));
	}
	if (!(doc = json_loadb(text, len, 0, &err))) {
		rc = hml__error_set(HML_EIO, "cannot read deployment file '%s': %s", path, err.text);
		goto done;
	}
	v = json_object_get(doc, "schema_version");
	if (!json_is_integer(v)) {
		rc = hml__error_set(HML_EIO, "cannot read deployment file '%s': not an hml "
		                    "deployment file", path);
		goto done;
	}
	if (json_integer_value(v) > HML__DEPLOYFILE_SCHEMA) {
		rc = hml__error_set(HML_ENOTSUPPORTED,
			"cannot read deployment file '%s': schema_version %lld; this hml reads %d",
			path, (long long)json_integer_value(v), HML__DEPLOYFILE_SCHEMA);
		goto done;
	}
	if (field_set(out->region, sizeof(out->region),
	              json_string_value(json_object_get(doc, "region"))) < 0 ||
	    field_set(out->deployment, sizeof(out->deployment),
	              json_string_value(json_object_get(doc, "deployment"))) < 0 ||
	    field_set(out->model, sizeof(out->model),
	              json_string_value(json_object_get(doc, "model"))) < 0 ||
	    field_set(out->path, sizeof(out->path),
	              json_string_value(json_object_get(doc, "path"))) < 0 ||
	    out->path[0] != '/') {
		rc = hml__error_set(HML_EIO, "cannot read deployment file '%s': its region, "
		                    "deployment, model or absolute path is missing or too long", path);
		goto done;
	}
	v = json_object_get(doc, "guard");
	if (v && (!json_is_string(v) || field_set(out->guard, sizeof(out->guard),
	                                          json_string_value(v)) < 0 || out->guard[0] != '/')) {
		rc = hml__error_set(HML_EIO, "cannot read deployment file '%s': its guard is not "
		                    "an absolute path", path);
		goto done;
	}
	if ((rc = run_field(doc, "k", 1, HML__DEPLOYFILE_K_MAX, 0, &out->k, path)) < 0 ||
	    (rc = run_field(doc, "interleave", 0, HML__DEPLOYFILE_INTERLEAVE_MAX, -1,
	                    &out->interleave, path)) < 0)
		goto done;
	rc = 0;
done:
	if (rc < 0)
		memset(out, 0, sizeof(*out));
	json_decref(doc);
	free(text);
	return rc;
}

void hml__file_identity_get(const char *path, hml__file_identity *out)
{
	struct stat st;

	memset(out, 0, sizeof(*out));
	if (stat(path, &st) != 0)
		return;
	out->exists = 1;
	out->dev = (uint64_t)st.st_dev;
	out->ino = (uint64_t)st.st_ino;
	out->size = (uint64_t)st.st_size;
	out->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

int hml__file_identity_same(const hml__file_identity *a, const hml__file_identity *b)
{
	return a->exists == b->exists && a->dev == b->dev && a->ino == b->ino &&
	       a->size == b->size && a->mtime_ns == b->mtime_ns;
}
