/*
 * lib/store/manifest_ids.c - a manifest record's ids checked against the
 * grammar of lib/store/ids.h (see manifest_ids.h).
 *
 * Commands build file names and messages from these ids and look records
 * up by them: an id such as "../../etc/passwd" in a copied or downloaded
 * experiment must make the manifest corrupt, never a path.
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "store/ids.h"
#include "store/manifest_ids.h"

/* Where a failing check is: the record, for the message. */
typedef struct where {
	const char *path, *collection;
	size_t i;
} where;

static int bad(const where *w, const char *field, const char *why)
{
	return hml__error_set(HML_EINVALID, "manifest '%s' is corrupt: %s[%zu]%s%s %s", w->path,
	                      w->collection, w->i, *field ? "." : "", field, why);
}

/* v, when present (and not null where null_ok), is an id of `kind`. */
static int ref(const where *w, const char *field, const json_t *v, const char *kind,
               int null_ok)
{
	hml__error_saved why;

	if (!v || (null_ok && json_is_null(v)))
		return 0;
	if (!json_is_string(v)) {
		char msg[64];

		snprintf(msg, sizeof(msg), "is not a string (an id of %s)", kind);
		return bad(w, field, msg);
	}
	if (hml__id_check(kind, json_string_value(v)) == 0)
		return 0;
	hml__error_save(&why);
	return bad(w, field, why.message);
}

/* Every element of array `arr` (when present) is an id of `kind`. */
static int ref_array(const where *w, const char *field, const json_t *arr, const char *kind)
{
	const json_t *v;
	char name[64];
	size_t k;
	int rc;

	if (!arr)
		return 0;
	if (!json_is_array(arr))
		return bad(w, field, "is not an array");
	json_array_foreach(arr, k, v) {
		snprintf(name, sizeof(name), "%s[%zu]", field, k);
		if ((rc = ref(w, name, v, kind, 0)) < 0)
			return rc;
	}
	return 0;
}

/* Every key of object `obj` (when it is one) is an id of `kind`. */
static int ref_keys(const where *w, const char *field, const json_t *obj, const char *kind)
{
	const char *key;
	json_t *v;
	int rc;

	json_object_foreach((json_t *)obj, key, v) {
		json_t *k = json_string(key);

		rc = k ? ref(w, field, k, kind, 0) : hml__error_oom();
		json_decref(k);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The ids in the models of a search's front and of its QoI check. */
static int search_refs(const where *w, const json_t *rec)
{
	const json_t *e;
	char name[64];
	size_t k;
	int rc;

	json_array_foreach(json_object_get(rec, "front"), k, e) {
		snprintf(name, sizeof(name), "front[%zu].model", k);
		if ((rc = ref(w, name, json_object_get(e, "model"), "models", 1)) < 0)
			return rc;
	}
	json_array_foreach(json_object_get(json_object_get(rec, "qoi_check"), "checks"), k, e) {
		snprintf(name, sizeof(name), "qoi_check.checks[%zu].model", k);
		if ((rc = ref(w, name, json_object_get(e, "model"), "models", 1)) < 0)
			return rc;
	}
	return 0;
}

int hml__manifest_ids_check(const char *path, const char *collection, size_t i,
                            const json_t *rec)
{
	const json_t *id = json_object_get(rec, "id");
	where w = { path, collection, i };
	int rc;

	if (!id)
		return bad(&w, "", "has no id");
	if ((rc = ref(&w, "id", id, collection, 0)) < 0)
		return rc;
#define REF(field, kind) ref(&w, field, json_object_get(rec, field), kind, 0)
	if (strcmp(collection, "models") == 0)
		rc = ref(&w, "search.id", json_object_get(json_object_get(rec, "search"), "id"),
		         "searches", 0);
	else if (strcmp(collection, "deployments") == 0)
		rc = (rc = REF("model", "models")) < 0 || (rc = REF("compiled", "compiled")) < 0
		     ? rc : REF("search", "searches");
	else if (strcmp(collection, "compiled") == 0)
		rc = REF("model", "models");
	else if (strcmp(collection, "evaluations") == 0)
		rc = (rc = REF("model", "models")) < 0 ? rc : REF("compiled", "compiled");
	else if (strcmp(collection, "searches") == 0)
		rc = search_refs(&w, rec);
#undef REF
	if (rc == 0 && (strcmp(collection, "models") == 0 || strcmp(collection, "searches") == 0) &&
	    (rc = ref_array(&w, "datasets", json_object_get(rec, "datasets"), "datasets")) == 0)
		rc = ref_keys(&w, "data_sha256", json_object_get(rec, "data_sha256"), "datasets");
	return rc;
}
