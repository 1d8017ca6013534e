/*
 * lib/run/search_args.c - workflow.json's "search_args": read, and set on
 * a run's command line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "run/search_args.h"

static int bad(const char *path, const char *key, const char *what)
{
	return hml__error_set(HML_EINVALID, "workflow '%s': key 'search_args.%s' %s", path, key,
	                      what);
}

/* "values" or "range" of entry `name` into a; min: the least value. */
static int read_values(hml__search_arg *a, const json_t *o, const char *path,
                       const char *name, int64_t min)
{
	const json_t *values = json_object_get(o, "values"), *range = json_object_get(o, "range");
	char key[64], what[160];
	size_t i;

	if ((values != NULL) == (range != NULL)) {
		snprintf(what, sizeof(what), "needs 'values' or 'range' (one of them)");
		return bad(path, name, what);
	}
	if (values) {
		snprintf(key, sizeof(key), "%s.values", name);
		snprintf(what, sizeof(what), "must be 1 to %d increasing integers >= %lld",
		         HML__SEARCH_ARG_MAX, (long long)min);
		if (!json_is_array(values) || json_array_size(values) == 0 ||
		    json_array_size(values) > HML__SEARCH_ARG_MAX)
			return bad(path, key, what);
		for (i = 0; i < json_array_size(values); i++) {
			const json_t *v = json_array_get(values, i);

			if (!json_is_integer(v) || json_integer_value(v) < min ||
			    json_integer_value(v) > INT32_MAX ||
			    (i && json_integer_value(v) <= a->values[i - 1]))
				return bad(path, key, what);
			a->values[i] = json_integer_value(v);
		}
		a->n = i;
		return 0;
	}
	snprintf(key, sizeof(key), "%s.range", name);
	snprintf(what, sizeof(what), "must be [lo, hi] with %lld <= lo <= hi and at most %d values",
	         (long long)min, HML__SEARCH_ARG_MAX);
	if (!json_is_array(range) || json_array_size(range) != 2 ||
	    !json_is_integer(json_array_get(range, 0)) || !json_is_integer(json_array_get(range, 1)))
		return bad(path, key, what);
	{
		json_int_t lo = json_integer_value(json_array_get(range, 0));
		json_int_t hi = json_integer_value(json_array_get(range, 1));

		if (lo < min || hi < lo || hi > INT32_MAX || hi - lo >= HML__SEARCH_ARG_MAX)
			return bad(path, key, what);
		for (a->n = 0; lo + (json_int_t)a->n <= hi; a->n++)
			a->values[a->n] = lo + (json_int_t)a->n;
	}
	return 0;
}

static int read_one(hml__search_arg *a, const json_t *doc, const char *path,
                    const char *name, int64_t min, int arg_required)
{
	const json_t *o = json_object_get(doc, name), *arg;
	const char *k;
	char key[64];
	json_t *v;

	if (!o)
		return 0;
	if (!json_is_object(o))
		return bad(path, name, "must be an object");
	json_object_foreach((json_t *)o, k, v)
		if (strcmp(k, "arg") && strcmp(k, "values") && strcmp(k, "range")) {
			char what[128];

			snprintf(what, sizeof(what), "has unknown key '%.64s'", k);
			return bad(path, name, what);
		}
	arg = json_object_get(o, "arg");
	snprintf(key, sizeof(key), "%s.arg", name);
	if ((arg || arg_required) &&
	    (!json_is_string(arg) || json_string_value(arg)[0] != '-' ||
	     strlen(json_string_value(arg)) < 2))
		return bad(path, key, "must be a non-empty string starting with '-'");
	if (arg && !(a->arg = hml__strdup(json_string_value(arg))))
		return hml__error_oom();
	return read_values(a, o, path, name, min);
}

int hml__search_args_read(hml__search_args *out, const json_t *doc, const char *path)
{
	const json_t *sa = json_object_get(doc, "search_args");
	const char *k;
	json_t *v;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!sa)
		return 0;
	if (!json_is_object(sa))
		return hml__error_set(HML_EINVALID, "workflow '%s': key 'search_args' must be an "
		                      "object", path);
	json_object_foreach((json_t *)sa, k, v)
		if (strcmp(k, "k") && strcmp(k, "interleave"))
			return hml__error_set(HML_EINVALID, "workflow '%s': unknown key "
			                      "'search_args.%.64s'", path, k);
	if ((rc = read_one(&out->k, sa, path, "k", 1, 1)) < 0 ||
	    (rc = read_one(&out->interleave, sa, path, "interleave", 0, 0)) < 0)
		hml__search_args_release(out);
	return rc;
}

void hml__search_args_release(hml__search_args *a)
{
	free(a->k.arg);
	free(a->interleave.arg);
	memset(a, 0, sizeof(*a));
}

int hml__search_args_any(const hml__search_args *a)
{
	return a->k.n > 0 || a->interleave.n > 0;
}

static json_t *one_json(const hml__search_arg *a)
{
	json_t *o = json_object(), *values = json_array();

	for (size_t i = 0; values && i < a->n; i++)
		json_array_append_new(values, json_integer(a->values[i]));
	if (!o || !values || json_array_size(values) != a->n ||
	    (a->arg && json_object_set_new(o, "arg", json_string(a->arg)) < 0) ||
	    json_object_set_new(o, "values", values) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *hml__search_args_json(const hml__search_args *a)
{
	json_t *o = json_object();

	if (o && a->k.n && json_object_set_new(o, "k", one_json(&a->k)) < 0)
		goto fail;
	if (o && a->interleave.n &&
	    json_object_set_new(o, "interleave", one_json(&a->interleave)) < 0)
		goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

int hml__search_args_value_in(const char *arg, char *const *argv, int64_t *value)
{
	for (size_t i = 0; argv && argv[i]; i++)
		if (strcmp(argv[i], arg) == 0 && argv[i + 1])
			return hml__parse_i64(argv[i + 1], value) == 0;
	return 0;
}

int hml__search_args_set(char ***out, char *const *argv, const char *arg, int64_t value)
{
	size_t n = 0, i;
	char text[32], **v;
	int found = 0;

	*out = NULL;
	while (argv && argv[n])
		n++;
	if (!(v = calloc(n + 3, sizeof(*v))))
		return hml__error_oom();
	snprintf(text, sizeof(text), "%lld", (long long)value);
	for (i = 0; i < n; i++) {
		int is_value = i > 0 && !found && strcmp(argv[i - 1], arg) == 0;

		found |= is_value;
		if (!(v[i] = hml__strdup(is_value ? text : argv[i])))
			goto oom;
	}
	if (!found && (!(v[n] = hml__strdup(arg)) || !(v[n + 1] = hml__strdup(text))))
		goto oom;
	*out = v;
	return 0;
oom:
	hml__strv_free(v);
	return hml__error_oom();
}
