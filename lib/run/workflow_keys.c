/*
 * lib/run/workflow_keys.c - the typed readers of workflow.json's keys and
 * the grammar of names (workflow_keys.h).
 *
 * Validation is strict on purpose: a misspelt key ("colect") would
 * otherwise be ignored and the application run with defaults nobody asked
 * for. Every message names the key by its path ("regions[0].model.arch").
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "run/workflow_keys.h"

int hml__wf_bad_key(const hml__wf_ctx *v, const char *key, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return hml__error_set(HML_EINVALID, "workflow '%s': key '%s' %s", v->path, key, what);
}

/* "regions[0]" + "label" -> "regions[0].label" */
void hml__wf_key_join(char *buf, size_t size, const char *parent, const char *key)
{
	if (parent && *parent)
		snprintf(buf, size, "%s.%s", parent, key);
	else
		snprintf(buf, size, "%s", key);
}

/* Every key of `obj` must be one of `allowed` (NULL-terminated). */
int hml__wf_check_keys(const hml__wf_ctx *v, const json_t *obj, const char *parent,
                       const char *const *allowed)
{
	const char *key;
	json_t *val;

	json_object_foreach((json_t *)obj, key, val) {
		const char *const *a;
		char full[256];

		for (a = allowed; *a; a++)
			if (strcmp(*a, key) == 0)
				break;
		if (!*a) {
			hml__wf_key_join(full, sizeof(full), parent, key);
			return hml__error_set(HML_EINVALID, "workflow '%s': unknown key '%s'",
			                      v->path, full);
		}
	}
	return 0;
}

int hml__wf_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > HML__WF_LABEL_MAX || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') &&
		    !(c >= '0' && c <= '9') && c != '_' && c != '-' && c != '.')
			return 0;
	}
	return 1;
}

/* Look `key` up in `obj`; missing is an error only when `required`. */
int hml__wf_get(const hml__wf_ctx *v, const json_t *obj, const char *parent, const char *key,
                int required, json_t **out)
{
	char full[256];

	*out = json_object_get(obj, key);
	if (!*out && required) {
		hml__wf_key_join(full, sizeof(full), parent, key);
		return hml__wf_bad_key(v, full, "is missing");
	}
	return 0;
}

/* `key` of `obj` in *j and its path in full[size]: 1 when there, 0 when
 * absent and not required, or the error. */
static int lookup(const hml__wf_ctx *v, const json_t *obj, const char *parent,
                  const char *key, int required, json_t **j, char *full, size_t size)
{
	int rc;

	if ((rc = hml__wf_get(v, obj, parent, key, required, j)) < 0 || !*j)
		return rc;
	hml__wf_key_join(full, size, parent, key);
	return 1;
}

int hml__wf_get_string(const hml__wf_ctx *v, const json_t *obj, const char *parent,
                       const char *key, int required, char **out)
{
	char full[256];
	json_t *j;
	int rc;

	*out = NULL;
	if ((rc = lookup(v, obj, parent, key, required, &j, full, sizeof(full))) <= 0)
		return rc;
	if (!json_is_string(j))
		return hml__wf_bad_key(v, full, "must be a string");
	if (json_string_length(j) == 0)
		return hml__wf_bad_key(v, full, "must not be empty");
	if (strlen(json_string_value(j)) != json_string_length(j))
		return hml__wf_bad_key(v, full, "must not contain a NUL character");
	if (!(*out = hml__strdup(json_string_value(j))))
		return HML_ENOMEM;
	return 0;
}

int hml__wf_get_int(const hml__wf_ctx *v, const json_t *obj, const char *parent,
                    const char *key, int required, int64_t min, int64_t max,
                    int64_t *out)
{
	char full[256];
	json_t *j;
	int rc;

	if ((rc = lookup(v, obj, parent, key, required, &j, full, sizeof(full))) <= 0)
		return rc;
	if (!json_is_integer(j))
		return hml__wf_bad_key(v, full, "must be an integer");
	*out = (int64_t)json_integer_value(j);
	if (*out < min || *out > max)
		return hml__wf_bad_key(v, full, "must be an integer from %lld to %lld, not %lld",
		                       (long long)min, (long long)max, (long long)*out);
	return 0;
}

int hml__wf_get_object(const hml__wf_ctx *v, const json_t *obj, const char *parent,
                       const char *key, int required, json_t **out)
{
	char full[256];
	int rc;

	if ((rc = lookup(v, obj, parent, key, required, out, full, sizeof(full))) <= 0)
		return rc;
	if (!json_is_object(*out))
		return hml__wf_bad_key(v, full, "must be an object");
	return 0;
}

int hml__wf_get_strv(const hml__wf_ctx *v, const json_t *obj, const char *parent,
                     const char *key, char ***out)
{
	char full[256];
	json_t *j, *item;
	size_t i, n;
	char **list;
	int rc;

	*out = NULL;
	if ((rc = lookup(v, obj, parent, key, 1, &j, full, sizeof(full))) <= 0)
		return rc;
	if (!json_is_array(j))
		return hml__wf_bad_key(v, full, "must be an array of strings");
	n = json_array_size(j);
	json_array_foreach(j, i, item)
		if (!json_is_string(item) ||
		    strlen(json_string_value(item)) != json_string_length(item))
			return hml__wf_bad_key(v, full, "must be an array of strings (item %zu is not)", i);
	if (!(list = calloc(n + 1, sizeof(*list))))
		return hml__error_oom();
	json_array_foreach(j, i, item) {
		if (!(list[i] = hml__strdup(json_string_value(item)))) {
			hml__strv_free(list);
			return HML_ENOMEM;
		}
	}
	*out = list;
	return 0;
}
