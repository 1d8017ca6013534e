/*
 * lib/train/categorical.c - categorical input features: the declaration's
 * two spellings, read into one sorted array and checked by one function
 * (see categorical.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "train/categorical.h"

static int by_feature(const void *a, const void *b)
{
	const hml__categorical *x = a, *y = b;

	return x->feature < y->feature ? -1 : x->feature > y->feature;
}

/* Sort c[0..n) and check every entry; `what` prefixes the messages. */
static int check_entries(hml__categorical *c, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		if (c[i].feature < 0)
			return hml__error_set(HML_EINVALID, "%s: feature %lld is negative", what,
			                      (long long)c[i].feature);
		if (c[i].classes < 2 || c[i].classes > HML__CATEGORICAL_MAX_CLASSES)
			return hml__error_set(HML_EINVALID,
				"%s: classes %lld of feature %lld is outside 2 to %d", what,
				(long long)c[i].classes, (long long)c[i].feature,
				HML__CATEGORICAL_MAX_CLASSES);
	}
	qsort(c, n, sizeof(*c), by_feature);
	for (size_t i = 1; i < n; i++)
		if (c[i].feature == c[i - 1].feature)
			return hml__error_set(HML_EINVALID, "%s: feature %lld is declared twice", what,
			                      (long long)c[i].feature);
	return 0;
}

/* One "F:K" entry of `len` bytes at s; 0 or -1. */
static int parse_entry(const char *s, size_t len, hml__categorical *e)
{
	char part[64], *colon;

	if (len == 0 || len >= sizeof(part))
		return -1;
	memcpy(part, s, len);
	part[len] = '\0';
	if (!(colon = strchr(part, ':')))
		return -1;
	*colon = '\0';
	return hml__parse_i64(part, &e->feature) < 0 || hml__parse_i64(colon + 1, &e->classes) < 0
	       ? -1 : 0;
}

int hml__categorical_parse(hml__categorical **out, size_t *n, const char *spec)
{
	hml__categorical *c = NULL;
	size_t count = 1, k = 0;
	char what[160];
	const char *p;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!spec || !*spec || strcmp(spec, "none") == 0)
		return 0;
	for (p = spec; *p; p++)
		count += *p == ',';
	snprintf(what, sizeof(what), "bad categorical declaration '%s'", spec);
	if (!(c = calloc(count, sizeof(*c))))
		return hml__error_oom();
	for (p = spec; k < count; k++) {
		size_t len = strcspn(p, ",");

		if (parse_entry(p, len, &c[k]) < 0) {
			rc = hml__error_set(HML_EINVALID, "%s: entry '%.*s' is not FEATURE:CLASSES "
			                    "(e.g. 1:12)", what, (int)len, p);
			goto done;
		}
		p += len + (p[len] == ',');
	}
	rc = check_entries(c, count, what);
done:
	if (rc < 0) {
		free(c);
		return rc;
	}
	*out = c;
	*n = count;
	return 0;
}

/* Entry i of the JSON array into e; 0 or an error naming it. */
static int json_entry(const json_t *v, size_t i, const char *where, hml__categorical *e)
{
	const char *key;
	json_t *x;

	if (!json_is_object(v))
		return hml__error_set(HML_EINVALID, "%s[%zu] must be an object "
		                      "{\"feature\": F, \"classes\": K}", where, i);
	json_object_foreach((json_t *)v, key, x)
		if (strcmp(key, "feature") != 0 && strcmp(key, "classes") != 0)
			return hml__error_set(HML_EINVALID, "%s[%zu]: unknown key '%s' (known: feature, "
			                      "classes)", where, i, key);
	if (!json_is_integer(json_object_get(v, "feature")) ||
	    !json_is_integer(json_object_get(v, "classes")))
		return hml__error_set(HML_EINVALID, "%s[%zu] needs integers 'feature' and 'classes'",
		                      where, i);
	e->feature = json_integer_value(json_object_get(v, "feature"));
	e->classes = json_integer_value(json_object_get(v, "classes"));
	return 0;
}

int hml__categorical_from_json(hml__categorical **out, size_t *n, const json_t *arr,
                               const char *where)
{
	hml__categorical *c = NULL;
	size_t count, i;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!json_is_array(arr))
		return hml__error_set(HML_EINVALID, "%s must be an array of {\"feature\": F, "
		                      "\"classes\": K}", where);
	if ((count = json_array_size(arr)) == 0)
		return 0;
	if (!(c = calloc(count, sizeof(*c))))
		return hml__error_oom();
	for (i = 0; i < count && rc == 0; i++)
		rc = json_entry(json_array_get(arr, i), i, where, &c[i]);
	if (rc == 0)
		rc = check_entries(c, count, where);
	if (rc < 0) {
		free(c);
		return rc;
	}
	*out = c;
	*n = count;
	return 0;
}

void hml__categorical_format(char *buf, size_t size, const hml__categorical *c, size_t n)
{
	size_t len = 0;

	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld:%lld", i ? "," : "",
		                        (long long)c[i].feature, (long long)c[i].classes);
}

json_t *hml__categorical_json(const hml__categorical *c, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++)
		if (json_array_append_new(arr, json_pack("{s:I, s:I}", "feature",
		                          (json_int_t)c[i].feature, "classes",
		                          (json_int_t)c[i].classes)) < 0) {
			json_decref(arr);
			arr = NULL;
		}
	if (!arr)
		hml__error_oom();
	return arr;
}

int hml__categorical_check(const hml__categorical *c, size_t n, int64_t in_features)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].feature >= in_features)
			return hml__error_set(HML_EINVALID,
				"categorical feature %lld is not an input feature: the rows have %lld "
				"(0 to %lld)", (long long)c[i].feature, (long long)in_features,
				(long long)in_features - 1);
	return 0;
}

int64_t hml__categorical_width(const hml__categorical *c, size_t n, int64_t in_features)
{
	int64_t w = in_features - (int64_t)n;

	for (size_t i = 0; i < n; i++)
		w += c[i].classes;
	return w;
}
