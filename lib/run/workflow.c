/*
 * lib/run/workflow.c - loading and validating workflow.json.
 *
 * Validation is strict on purpose: a misspelt key ("colect") would
 * otherwise be ignored and the application run with defaults nobody asked
 * for. Every message names the key by its path ("regions[0].model.arch").
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/collection_keep.h"
#include "core/error.h"
#include "core/util.h"
#include "run/workflow.h"
#include "sys/fsutil.h"
#include "train/arch.h"
#include "train/categorical.h"
#include "train/train.h"

#define LABEL_MAX 64
#define RUNS_MAX 1000000
#define NAME_CHARS "letters, digits, '_', '-' and '.'"

/* What is being validated, for messages. */
typedef struct vctx {
	const char *path;
} vctx;

static int bad_key(const vctx *v, const char *key, const char *fmt, ...)
	HML__PRINTF(3, 4);

static int bad_key(const vctx *v, const char *key, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return hml__error_set(HML_EINVALID, "workflow '%s': key '%s' %s", v->path, key, what);
}

/* "regions[0]" + "label" -> "regions[0].label" */
static void key_join(char *buf, size_t size, const char *parent, const char *key)
{
	if (parent && *parent)
		snprintf(buf, size, "%s.%s", parent, key);
	else
		snprintf(buf, size, "%s", key);
}

/* Every key of `obj` must be one of `allowed` (NULL-terminated). */
static int check_keys(const vctx *v, const json_t *obj, const char *parent,
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
			key_join(full, sizeof(full), parent, key);
			return hml__error_set(HML_EINVALID, "workflow '%s': unknown key '%s'",
			                      v->path, full);
		}
	}
	return 0;
}

static int name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > LABEL_MAX || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
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
static int get(const vctx *v, const json_t *obj, const char *parent, const char *key,
               int required, json_t **out)
{
	char full[256];

	*out = json_object_get(obj, key);
	if (!*out && required) {
		key_join(full, sizeof(full), parent, key);
		return bad_key(v, full, "is missing");
	}
	return 0;
}

static int get_string(const vctx *v, const json_t *obj, const char *parent,
                      const char *key, int required, char **out)
{
	char full[256];
	json_t *j;
	int rc;

	*out = NULL;
	if ((rc = get(v, obj, parent, key, required, &j)) < 0 || !j)
		return rc;
	key_join(full, sizeof(full), parent, key);
	if (!json_is_string(j))
		return bad_key(v, full, "must be a string");
	if (json_string_length(j) == 0)
		return bad_key(v, full, "must not be empty");
	if (strlen(json_string_value(j)) != json_string_length(j))
		return bad_key(v, full, "must not contain a NUL character");
	if (!(*out = hml__strdup(json_string_value(j))))
		return HML_ENOMEM;
	return 0;
}

static int get_int(const vctx *v, const json_t *obj, const char *parent,
                   const char *key, int required, int64_t min, int64_t max,
                   int64_t *out)
{
	char full[256];
	json_t *j;
	int rc;

	if ((rc = get(v, obj, parent, key, required, &j)) < 0 || !j)
		return rc;
	key_join(full, sizeof(full), parent, key);
	if (!json_is_integer(j))
		return bad_key(v, full, "must be an integer");
	*out = (int64_t)json_integer_value(j);
	if (*out < min || *out > max)
		return bad_key(v, full, "must be an integer from %lld to %lld, not %lld",
		               (long long)min, (long long)max, (long long)*out);
	return 0;
}

static int get_object(const vctx *v, const json_t *obj, const char *parent,
                      const char *key, int required, json_t **out)
{
	char full[256];
	int rc;

	if ((rc = get(v, obj, parent, key, required, out)) < 0 || !*out)
		return rc;
	key_join(full, sizeof(full), parent, key);
	if (!json_is_object(*out))
		return bad_key(v, full, "must be an object");
	return 0;
}

static int get_strv(const vctx *v, const json_t *obj, const char *parent,
                    const char *key, char ***out)
{
	char full[256];
	json_t *j, *item;
	size_t i, n;
	char **list;
	int rc;

	*out = NULL;
	if ((rc = get(v, obj, parent, key, 1, &j)) < 0)
		return rc;
	key_join(full, sizeof(full), parent, key);
	if (!json_is_array(j))
		return bad_key(v, full, "must be an array of strings");
	n = json_array_size(j);
	json_array_foreach(j, i, item)
		if (!json_is_string(item) ||
		    strlen(json_string_value(item)) != json_string_length(item))
			return bad_key(v, full, "must be an array of strings (item %zu is not)", i);
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

static int parse_env(const vctx *v, const json_t *doc, char ***out)
{
	const char *key;
	json_t *env, *val;
	size_t n = 0;
	char **list;
	int rc;

	*out = NULL;
	if ((rc = get_object(v, doc, "", "env", 0, &env)) < 0)
		return rc;
	if (!(list = calloc((env ? json_object_size(env) : 0) + 1, sizeof(*list))))
		return hml__error_oom();
	if (env) {
		json_object_foreach(env, key, val) {
			char full[256];
			size_t len;

			snprintf(full, sizeof(full), "env.%s", key);
			if (!*key || strchr(key, '=')) {
				rc = hml__error_set(HML_EINVALID,
					"workflow '%s': key '%s' is not a valid environment variable name",
					v->path, full);
				goto fail;
			}
			if (!json_is_string(val) ||
			    strlen(json_string_value(val)) != json_string_length(val)) {
				rc = bad_key(v, full, "must be a string");
				goto fail;
			}
			len = strlen(key) + 1 + json_string_length(val) + 1;
			if (!(list[n] = malloc(len))) {
				rc = hml__error_oom();
				goto fail;
			}
			snprintf(list[n++], len, "%s=%s", key, json_string_value(val));
		}
	}
	*out = list;
	return 0;
fail:
	hml__strv_free(list);
	return rc;
}

/* "collect.sample" and "collect.compression" (childenv.h's hml__collect_keep). */
static int parse_keep(const vctx *v, const json_t *c, hml__collect_keep *k)
{
	static const char *const keys[] = { "rate", "reservoir", "dedup", "seed", NULL };
	hml__coll_compression z;
	json_t *s, *j;
	int rc;

	*k = (hml__collect_keep)HML__COLLECT_KEEP_INIT;
	if ((rc = get_object(v, c, "collect", "sample", 0, &s)) < 0)
		return rc;
	if (s && ((rc = check_keys(v, s, "collect.sample", keys)) < 0 ||
	          (rc = get_int(v, s, "collect.sample", "reservoir", 0, 1, 1000000000,
	                        &k->reservoir)) < 0 ||
	          (rc = get_int(v, s, "collect.sample", "seed", 0, 0, 2147483647,
	                        &k->seed)) < 0))
		return rc;
	if (s && (j = json_object_get(s, "rate")) != NULL) {
		if (!json_is_number(j) || !(json_number_value(j) > 0 && json_number_value(j) <= 1))
			return bad_key(v, "collect.sample.rate", "must be a number in (0, 1]");
		k->rate = json_number_value(j);
	}
	if (s && (j = json_object_get(s, "dedup")) != NULL) {
		if (!json_is_boolean(j))
			return bad_key(v, "collect.sample.dedup", "must be true or false");
		k->dedup = json_is_true(j);
	}
	if ((j = json_object_get(c, "compression")) != NULL) {
		if (!json_is_string(j))
			return bad_key(v, "collect.compression", "must be a string");
		if (hml__compression_parse(&z, json_string_value(j)) < 0)
			return bad_key(v, "collect.compression", "must be %s, not '%.64s'",
			               HML__COLL_COMPRESSION_NAMES, json_string_value(j));
		k->compression = json_string_value(j);
	}
	return 0;
}

static int parse_collect(const vctx *v, hml__workflow *w)
{
	static const char *const keys[] = { "args", "runs", "seed", "sample", "compression",
	                                    NULL };
	json_t *c;
	int64_t runs = 1, seed = 1;
	int rc;

	if ((rc = get_object(v, w->json, "", "collect", 1, &c)) < 0 ||
	    (rc = check_keys(v, c, "collect", keys)) < 0 ||
	    (rc = get_strv(v, c, "collect", "args", &w->collect_args)) < 0 ||
	    (rc = get_int(v, c, "collect", "runs", 0, 1, RUNS_MAX, &runs)) < 0 ||
	    (rc = get_int(v, c, "collect", "seed", 0, 0, HML__SEED_MAX, &seed)) < 0)
		return rc;
	w->collect_runs = (int)runs;
	w->collect_seed = seed;
	return parse_keep(v, c, &w->collect_keep);
}

static int parse_evaluate(const vctx *v, hml__workflow *w)
{
	static const char *const keys[] = { "args", "repeat", NULL };
	json_t *e;
	int64_t repeat = 3;
	int rc;

	if ((rc = get_object(v, w->json, "", "evaluate", 1, &e)) < 0 ||
	    (rc = check_keys(v, e, "evaluate", keys)) < 0 ||
	    (rc = get_strv(v, e, "evaluate", "args", &w->evaluate_args)) < 0 ||
	    (rc = get_int(v, e, "evaluate", "repeat", 0, 1, RUNS_MAX, &repeat)) < 0)
		return rc;
	w->evaluate_repeat = (int)repeat;
	return 0;
}

/*
 * Training defaults are hml train's options: the names and types are
 * checked here so that a typo fails when the workflow is loaded, not
 * silently at training time. Ranges are hml train's business.
 */
static int check_train(const vctx *v, const json_t *train, const char *parent)
{
	static const struct { const char *key; char type; } known[] = {
		{ "epochs", 'i' }, { "batch", 'i' }, { "lr", 'n' }, { "weight_decay", 'n' },
		{ "optimizer", 's' }, { "schedule", 's' }, { "patience", 'i' },
		{ "clip", 'n' }, { "seed", 'i' }, { "threads", 'i' },
		{ "val_fraction", 'n' }, { "test_fraction", 'n' }, { "nonfinite", 's' },
		{ "max_seconds", 'n' }, { "loss", 's' }, { "rollout", 'i' },
	};
	const char *key;
	json_t *val;

	json_object_foreach((json_t *)train, key, val) {
		char full[256];
		size_t i;

		key_join(full, sizeof(full), parent, key);
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strcmp(known[i].key, key) == 0)
				break;
		if (i == sizeof(known) / sizeof(known[0]))
			return hml__error_set(HML_EINVALID, "workflow '%s': unknown key '%s'",
			                      v->path, full);
		if (known[i].type == 'i' && (!json_is_integer(val) || json_integer_value(val) < 0))
			return bad_key(v, full, "must be a non-negative integer");
		if (known[i].type == 'n' && (!json_is_number(val) || json_number_value(val) < 0))
			return bad_key(v, full, "must be a non-negative number");
		if (known[i].type == 's' && !json_is_string(val))
			return bad_key(v, full, "must be a string");
		if (strcmp(key, "loss") == 0 && hml__train_loss_check(json_string_value(val)) < 0)
			return bad_key(v, full, "names an %s", hml_error_last()->message);
	}
	return 0;
}

/* model.categorical (lib/train/categorical.h): MLP family only; kept in
 * its canonical "F:K,..." form, the training option. */
static int parse_categorical(const vctx *v, const json_t *model, const char *mparent,
                             hml__workflow_region *r)
{
	const json_t *arr = json_object_get(model, "categorical");
	hml__categorical *c = NULL;
	char where[PATH_MAX + 128];
	size_t n;
	int rc;

	if (!arr)
		return 0;
	snprintf(where, sizeof(where), "workflow '%s': %s.categorical", v->path, mparent);
	if ((rc = hml__categorical_from_json(&c, &n, arr, where)) < 0)
		return rc;
	if (n > 0 && strcmp(r->family, "mlp") != 0)
		rc = hml__error_set(HML_EINVALID, "%s: categorical features are for the mlp family, "
		                    "not '%s'", where, r->family);
	else if (n > 0 && !(r->categorical = malloc(n * 48)))
		rc = hml__error_oom();
	else if (n > 0)
		hml__categorical_format(r->categorical, n * 48, c, n);
	free(c);
	return rc;
}

static int parse_region(const vctx *v, const json_t *item, size_t idx,
                        hml__workflow_region *r)
{
	static const char *const keys[] = { "label", "batch", "model", NULL };
	static const char *const model_keys[] = { "family", "arch", "train",
	                                          "search_space", "categorical", NULL };
	char parent[64], mparent[80], full[128];
	json_t *model, *train, *space;
	int rc;

	snprintf(parent, sizeof(parent), "regions[%zu]", idx);
	snprintf(mparent, sizeof(mparent), "%s.model", parent);
	if (!json_is_object(item))
		return bad_key(v, parent, "must be an object");
	if ((rc = check_keys(v, item, parent, keys)) < 0 ||
	    (rc = get_string(v, item, parent, "label", 1, &r->label)) < 0 ||
	    (rc = get_int(v, item, parent, "batch", 0, 0, INT64_MAX, &r->batch)) < 0 ||
	    (rc = get_object(v, item, parent, "model", 1, &model)) < 0 ||
	    (rc = check_keys(v, model, mparent, model_keys)) < 0 ||
	    (rc = get_string(v, model, mparent, "family", 1, &r->family)) < 0 ||
	    (rc = get_string(v, model, mparent, "arch", 0, &r->arch)) < 0 ||
	    (rc = get_object(v, model, mparent, "train", 0, &train)) < 0 ||
	    (rc = get_object(v, model, mparent, "search_space", 0, &space)) < 0)
		return rc;
	snprintf(full, sizeof(full), "%s.label", parent);
	if (!name_ok(r->label))
		return bad_key(v, full, "is '%s': a region label has at most %d " NAME_CHARS,
		               r->label, LABEL_MAX);
	snprintf(full, sizeof(full), "%s.family", mparent);
	if (!hml__arch_family_json(r->family))
		return bad_key(v, full, "must be a model family (%s), not '%s'", hml__arch_families(),
		               r->family);
	if (r->arch) {
		size_t n = strlen(r->family);

		snprintf(full, sizeof(full), "%s.arch", mparent);
		if (strncmp(r->arch, r->family, n) != 0 ||
		    (r->arch[n] != ':' && r->arch[n] != '\0'))
			return bad_key(v, full, "is '%s', which is not of family '%s'",
			               r->arch, r->family);
	}
	snprintf(full, sizeof(full), "%s.train", mparent);
	if ((train && (rc = check_train(v, train, full)) < 0) ||
	    (rc = parse_categorical(v, model, mparent, r)) < 0)
		return rc;
	r->train = train;
	r->search_space = space;
	return 0;
}

static int parse_regions(const vctx *v, hml__workflow *w)
{
	json_t *regions, *item;
	size_t i, j;
	int rc;

	if ((rc = get(v, w->json, "", "regions", 1, &regions)) < 0)
		return rc;
	if (!json_is_array(regions) || json_array_size(regions) == 0)
		return bad_key(v, "regions", "must be a non-empty array of objects");
	w->nregions = json_array_size(regions);
	if (!(w->regions = calloc(w->nregions, sizeof(*w->regions))))
		return hml__error_oom();
	json_array_foreach(regions, i, item) {
		if ((rc = parse_region(v, item, i, &w->regions[i])) < 0)
			return rc;
		for (j = 0; j < i; j++)
			if (strcmp(w->regions[j].label, w->regions[i].label) == 0) {
				char full[64];

				snprintf(full, sizeof(full), "regions[%zu].label", i);
				return bad_key(v, full, "repeats label '%s' of regions[%zu]",
				               w->regions[i].label, j);
			}
	}
	return 0;
}

/* A number >= 0 and finite at key `full` of `obj`, when there. */
static int get_bound(const vctx *v, const json_t *obj, const char *key, const char *full,
                     double *out)
{
	json_t *j = json_object_get(obj, key);

	if (!j)
		return 0;
	if (!json_is_number(j) || !(json_number_value(j) >= 0) || !isfinite(json_number_value(j)))
		return bad_key(v, full, "must be a finite number >= 0");
	*out = json_number_value(j);
	return 0;
}

/* One entry of "qoi"; `parent` is "qoi" or "qoi[i]". */
static int parse_qoi_entry(const vctx *v, const json_t *o, const char *parent,
                           hml__workflow_qoi *q)
{
	static const char *const keys[] = { "dataset", "metric", "mape_floor", "max_error", NULL };
	char full[64];
	int rc;

	q->max_error = NAN;
	if (!json_is_object(o))
		return bad_key(v, parent, "must be an object");
	if ((rc = check_keys(v, o, parent, keys)) < 0 ||
	    (rc = get_string(v, o, parent, "dataset", 1, &q->dataset)) < 0 ||
	    (rc = get_string(v, o, parent, "metric", 0, &q->metric)) < 0)
		return rc;
	if (!q->metric && !(q->metric = hml__strdup("rmse")))
		return HML_ENOMEM;
	key_join(full, sizeof(full), parent, "metric");
	if (strcmp(q->metric, "rmse") != 0 && strcmp(q->metric, "mape") != 0 &&
	    strcmp(q->metric, "max_abs") != 0)
		return bad_key(v, full, "must be \"rmse\", \"mape\" or \"max_abs\", not '%s'",
		               q->metric);
	key_join(full, sizeof(full), parent, "mape_floor");
	if ((rc = get_bound(v, o, "mape_floor", full, &q->mape_floor)) < 0)
		return rc;
	key_join(full, sizeof(full), parent, "max_error");
	return get_bound(v, o, "max_error", full, &q->max_error);
}

/* "qoi": one object, or a non-empty array of them with distinct data sets. */
static int parse_qoi(const vctx *v, hml__workflow *w)
{
	json_t *q, *item;
	char parent[32];
	size_t i, j;
	int rc, one;

	if ((rc = get(v, w->json, "", "qoi", 1, &q)) < 0)
		return rc;
	one = json_is_object(q);
	if (!one && (!json_is_array(q) || json_array_size(q) == 0))
		return bad_key(v, "qoi", "must be an object or a non-empty array of objects");
	w->nqoi = one ? 1 : json_array_size(q);
	if (!(w->qoi = calloc(w->nqoi, sizeof(*w->qoi))))
		return hml__error_oom();
	for (i = 0; i < w->nqoi; i++) {
		item = one ? q : json_array_get(q, i);
		snprintf(parent, sizeof(parent), one ? "qoi" : "qoi[%zu]", i);
		if ((rc = parse_qoi_entry(v, item, parent, &w->qoi[i])) < 0)
			return rc;
		for (j = 0; j < i; j++)
			if (strcmp(w->qoi[j].dataset, w->qoi[i].dataset) == 0) {
				char full[64];

				snprintf(full, sizeof(full), "%s.dataset", parent);
				return bad_key(v, full, "repeats data set '%s' of qoi[%zu]",
				               w->qoi[i].dataset, j);
			}
	}
	return 0;
}

/* Statuses are those of a normal exit: 0 to 255. */
static int parse_success_codes(const vctx *v, hml__workflow *w)
{
	json_t *a, *item;
	size_t i, n;
	int rc;

	if ((rc = get(v, w->json, "", "success_exit_codes", 0, &a)) < 0)
		return rc;
	n = a ? json_array_size(a) : 1;
	if (a && (!json_is_array(a) || n == 0))
		return bad_key(v, "success_exit_codes",
		               "must be a non-empty array of exit statuses (integers from 0 to 255)");
	if (!(w->success_codes = calloc(n, sizeof(*w->success_codes))))
		return hml__error_oom();
	w->nsuccess_codes = n;
	json_array_foreach(a, i, item) {
		if (!json_is_integer(item) || json_integer_value(item) < 0 ||
		    json_integer_value(item) > 255)
			return bad_key(v, "success_exit_codes",
			               "must be an array of exit statuses from 0 to 255 (item %zu is not)", i);
		w->success_codes[i] = (int)json_integer_value(item);
	}
	return 0;
}

/* The pattern is compiled here, so that a bad one fails before anything runs. */
static int parse_verify(const vctx *v, hml__workflow *w)
{
	static const char *const keys[] = { "pattern", NULL };
	json_t *o;
	char why[256];
	int rc;

	if ((rc = get_object(v, w->json, "", "verify", 0, &o)) < 0 || !o ||
	    (rc = check_keys(v, o, "verify", keys)) < 0 ||
	    (rc = get_string(v, o, "verify", "pattern", 1, &w->verify_pattern)) < 0)
		return rc;
	if (!(w->verify_re = calloc(1, sizeof(*w->verify_re))))
		return hml__error_oom();
	if ((rc = regcomp(w->verify_re, w->verify_pattern, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, w->verify_re, why, sizeof(why));
		free(w->verify_re);
		w->verify_re = NULL;
		return bad_key(v, "verify.pattern", "is not a POSIX extended regular expression: %s",
		               why);
	}
	return 0;
}

/* Each region's error metric and loss: the primary QoI's metric's,
 * model.train.loss overriding the loss. */
static int set_objectives(hml__workflow *w)
{
	for (size_t i = 0; i < w->nregions; i++) {
		hml__workflow_region *r = &w->regions[i];
		const json_t *loss = json_object_get(r->train, "loss");

		r->metric = hml__train_metric_for_qoi(w->qoi[0].metric);
		r->loss = loss ? json_string_value(loss) : hml__train_loss_for_qoi(w->qoi[0].metric);
		r->mape_floor = w->qoi[0].mape_floor;
	}
	return 0;
}

/* "launcher" (optional, a non-empty list whose first item names a
 * program) and "ranks" (more than one only with a launcher). */
static int parse_launcher(const vctx *v, hml__workflow *w)
{
	int64_t ranks = 1;
	json_t *l;
	int rc;

	if ((rc = get(v, w->json, "", "launcher", 0, &l)) < 0 ||
	    (rc = get_int(v, w->json, "", "ranks", 0, 1, HML__RANKS_MAX, &ranks)) < 0)
		return rc;
	w->ranks = (int)ranks;
	if (l) {
		if ((rc = get_strv(v, w->json, "", "launcher", &w->launcher)) < 0)
			return rc;
		if (!w->launcher[0] || !w->launcher[0][0])
			return bad_key(v, "launcher", "must start with the launcher's program");
	} else if (ranks > 1) {
		return bad_key(v, "ranks", "is %lld, but the workflow has no 'launcher' to "
		               "start ranks with", (long long)ranks);
	}
	return 0;
}

/* The program, relative to the workflow's directory; it must be runnable. */
static int resolve_program(const vctx *v, hml__workflow *w, const char *program)
{
	struct stat st;

	if (program[0] == '/')
		w->program = hml__strdup(program);
	else
		w->program = hml__path_join(w->dir, program);
	if (!w->program)
		return HML_ENOMEM;
	if (stat(w->program, &st) != 0)
		return hml__error_set(HML_ENOTFOUND, "workflow '%s': program '%s' not found",
		                      v->path, w->program);
	if (!S_ISREG(st.st_mode))
		return hml__error_set(HML_ENOTFOUND, "workflow '%s': program '%s' is not a file",
		                      v->path, w->program);
	if (access(w->program, X_OK) != 0)
		return hml__error_set(HML_ENOTFOUND,
			"workflow '%s': program '%s' is not executable", v->path, w->program);
	return 0;
}

static int validate(hml__workflow *w)
{
	static const char *const keys[] = { "schema_version", "name", "description",
		"program", "env", "collect", "evaluate", "regions", "qoi", "success_exit_codes",
		"verify", "launcher", "ranks", "search_args", NULL };
	vctx v = { w->path };
	char *program = NULL;
	int64_t schema;
	int rc;

	if (!json_is_object(w->json))
		return hml__error_set(HML_EINVALID, "workflow '%s': the document must be a JSON object",
		                      w->path);
	if ((rc = check_keys(&v, w->json, "", keys)) < 0 ||
	    (rc = get_int(&v, w->json, "", "schema_version", 1, 1, INT64_MAX, &schema)) < 0)
		goto done;
	if (schema > HML__WORKFLOW_SCHEMA) {
		rc = hml__error_set(HML_ENOTSUPPORTED,
			"workflow '%s': schema_version %lld is newer than this hml understands (%d)",
			w->path, (long long)schema, HML__WORKFLOW_SCHEMA);
		goto done;
	}
	if ((rc = get_string(&v, w->json, "", "name", 1, &w->name)) < 0 ||
	    (rc = get_string(&v, w->json, "", "description", 0, &w->description)) < 0 ||
	    (rc = get_string(&v, w->json, "", "program", 1, &program)) < 0 ||
	    (rc = parse_env(&v, w->json, &w->env)) < 0 ||
	    (rc = parse_collect(&v, w)) < 0 ||
	    (rc = parse_evaluate(&v, w)) < 0 ||
	    (rc = parse_regions(&v, w)) < 0 ||
	    (rc = parse_qoi(&v, w)) < 0 ||
	    (rc = parse_success_codes(&v, w)) < 0 ||
	    (rc = parse_verify(&v, w)) < 0 ||
	    (rc = parse_launcher(&v, w)) < 0 ||
	    (rc = hml__search_args_read(&w->search_args, w->json, w->path)) < 0 ||
	    (rc = set_objectives(w)) < 0)
		goto done;
	if (!name_ok(w->name)) {
		rc = bad_key(&v, "name", "is '%s': a workflow name has at most %d " NAME_CHARS,
		             w->name, LABEL_MAX);
		goto done;
	}
	if (!w->description && !(w->description = hml__strdup(""))) {
		rc = HML_ENOMEM;
		goto done;
	}
	rc = resolve_program(&v, w, program);
done:
	free(program);
	return rc;
}

char *hml__workflow_search_path(void)
{
	const char *env = getenv("HML_WORKFLOW_PATH");
	char *exe = hml__exe_dir(), *out = NULL, *slash;
	size_t len;

	if (!exe)
		return NULL;
	/* <exe>/.. lexically: /proc/self/exe is already a real path. */
	if ((slash = strrchr(exe, '/')) != NULL && slash != exe)
		*slash = '\0';
	else
		strcpy(exe, "/");
	len = (env ? strlen(env) : 0) + 2 * strlen(exe) + 64;
	if (!(out = malloc(len))) {
		hml__error_oom();
		goto done;
	}
	snprintf(out, len, "%s%s%s/workflows:%s/libexec/hml/workflows",
	         env && *env ? env : "", env && *env ? ":" : "",
	         strcmp(exe, "/") == 0 ? "" : exe, strcmp(exe, "/") == 0 ? "" : exe);
done:
	free(exe);
	return out;
}

/* A name found nowhere; when ./NAME holds a workflow.json, that is most
 * likely what was meant, and a name is never looked up in the working
 * directory: say so. */
static int unknown_name(const char *name, const char *dirs)
{
	char local[LABEL_MAX + 32];
	struct stat st;

	snprintf(local, sizeof(local), "%s/workflow.json", name);
	if (stat(local, &st) == 0 && S_ISREG(st.st_mode))
		return hml__error_set(HML_ENOTFOUND,
			"unknown workflow '%s'; did you mean ./%s? (looked in: %s)", name, name, dirs);
	return hml__error_set(HML_ENOTFOUND, "unknown workflow '%s' (looked in: %s)", name, dirs);
}

/* Find NAME/workflow.json along the search path (*out malloc'ed). */
static int find_bundled(const char *name, char **out)
{
	char *path = NULL, *list = NULL, *dirs = NULL, *tok, *save = NULL;
	size_t dlen = 0;
	int rc = 0;

	*out = NULL;
	if (!name_ok(name)) {
		rc = hml__error_set(HML_EINVALID,
			"invalid workflow name '%s': use " NAME_CHARS ", or give a path to a workflow.json",
			name);
		goto done;
	}
	if (!(path = hml__workflow_search_path()) || !(list = hml__strdup(path))) {
		/* Either call recorded why (no memory, no /proc/self/exe). */
		rc = hml_error_last()->code < 0 ? hml_error_last()->code : HML_ENOMEM;
		goto done;
	}
	if (!(dirs = calloc(1, strlen(path) * 2 + 1))) {
		rc = hml__error_oom();
		goto done;
	}
	for (tok = strtok_r(list, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		size_t len = strlen(tok) + strlen(name) + 32;
		char *cand = malloc(len);
		struct stat st;

		if (!cand) {
			rc = hml__error_oom();
			goto done;
		}
		snprintf(cand, len, "%s/%s/workflow.json", tok, name);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
			*out = cand;
			goto done;
		}
		free(cand);
		dlen += (size_t)sprintf(dirs + dlen, "%s%s", dlen ? ", " : "", tok);
	}
	rc = unknown_name(name, dlen ? dirs : "nothing");
done:
	free(path);
	free(list);
	free(dirs);
	return rc;
}

/* A path names a workflow.json, or a directory holding one. Anything but
 * a regular file is refused before it is opened (a FIFO would block). */
static int locate_path(const char *given, char **out)
{
	struct stat st;
	char *file;
	int rc;

	*out = NULL;
	if (stat(given, &st) != 0)
		return hml__error_set(HML_ENOTFOUND, "cannot read workflow '%s': %s", given,
		                      strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		if (!(file = hml__path_join(given, "workflow.json")))
			return HML_ENOMEM;
		if (stat(file, &st) != 0) {
			rc = hml__error_set(HML_ENOTFOUND, "cannot read workflow '%s': %s",
			                    file, strerror(errno));
			free(file);
			return rc;
		}
	} else if (!(file = hml__strdup(given))) {
		return HML_ENOMEM;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = hml__error_set(HML_EINVALID, "cannot read workflow '%s': not a regular file",
		                    file);
		free(file);
		return rc;
	}
	*out = file;
	return 0;
}

int hml__workflow_load(hml__workflow **out, const char *name_or_path)
{
	hml__workflow *w = NULL;
	char *file = NULL, *text = NULL, *slash;
	json_error_t jerr;
	size_t size, len;
	int rc;

	*out = NULL;
	if (!name_or_path || !*name_or_path)
		return hml__error_set(HML_EINVALID, "a workflow needs a name or a path");
	len = strlen(name_or_path);
	if (strchr(name_or_path, '/') || (len > 5 && strcmp(name_or_path + len - 5, ".json") == 0))
		rc = locate_path(name_or_path, &file);
	else
		rc = find_bundled(name_or_path, &file);
	if (rc < 0)
		goto done;
	if (!(w = calloc(1, sizeof(*w)))) {
		rc = hml__error_oom();
		goto done;
	}
	if (!(w->path = hml__path_abs(file)) || !(w->dir = hml__strdup(w->path))) {
		rc = hml_error_last()->code ? hml_error_last()->code : HML_ENOMEM;
		goto done;
	}
	if ((slash = strrchr(w->dir, '/')) != NULL)
		slash[slash == w->dir ? 1 : 0] = '\0';
	if ((rc = hml__read_file(w->path, &text, &size)) < 0 ||
	    (rc = hml__sha256_file(w->path, w->sha256)) < 0)
		goto done;
	if (!(w->json = json_loadb(text, size, JSON_REJECT_DUPLICATES, &jerr))) {
		rc = hml__error_set(HML_EINVALID, "workflow '%s': invalid JSON: %s (line %d, column %d)",
		                    w->path, jerr.text, jerr.line, jerr.column);
		goto done;
	}
	if ((rc = validate(w)) < 0)
		goto done;
	*out = w;
	w = NULL;
done:
	hml__workflow_free(w);
	free(file);
	free(text);
	return rc;
}

void hml__workflow_free(hml__workflow *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; w->regions && i < w->nregions; i++) {
		free(w->regions[i].label);
		free(w->regions[i].family);
		free(w->regions[i].arch);
		free(w->regions[i].categorical);
	}
	free(w->regions);
	free(w->name);
	free(w->description);
	free(w->path);
	free(w->dir);
	free(w->program);
	hml__strv_free(w->launcher);
	hml__strv_free(w->env);
	hml__strv_free(w->collect_args);
	hml__strv_free(w->evaluate_args);
	for (i = 0; w->qoi && i < w->nqoi; i++) {
		free(w->qoi[i].dataset);
		free(w->qoi[i].metric);
	}
	free(w->qoi);
	free(w->success_codes);
	free(w->verify_pattern);
	if (w->verify_re)
		regfree(w->verify_re);
	free(w->verify_re);
	hml__search_args_release(&w->search_args);
	json_decref(w->json);
	free(w);
}

int hml__workflow_exit_ok(const hml__workflow *w, int code)
{
	for (size_t i = 0; i < w->nsuccess_codes; i++)
		if (w->success_codes[i] == code)
			return 1;
	return w->nsuccess_codes == 0 && code == 0;
}

int hml__workflow_verify(const hml__workflow *w, const char *log, int *passed)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;

	*passed = 1;
	if (!w->verify_re)
		return 0;
	*passed = 0;
	if (!(f = fopen(log, "r")))
		return hml__error_set(errno == ENOENT ? HML_ENOTFOUND : HML_EIO, "cannot read '%s': %s",
		                      log, strerror(errno));
	while (!*passed && (len = getline(&line, &cap, f)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			line[len - 1] = '\0';
		*passed = regexec(w->verify_re, line, 0, NULL, 0) == 0;
	}
	free(line);
	fclose(f);
	return 0;
}

static int has_seed(char *const *args)
{
	for (; *args; args++)
		if (strstr(*args, "{seed}"))
			return 1;
	return 0;
}

int hml__workflow_same_inputs(const hml__workflow *w, char *const *collect_args,
                              char *const *evaluate_args)
{
	char *const *c = collect_args ? collect_args : w->collect_args;
	char *const *e = evaluate_args ? evaluate_args : w->evaluate_args;

	if (!c || !e || has_seed(c))
		return 0;
	for (; *c && *e; c++, e++)
		if (strcmp(*c, *e) != 0)
			return 0;
	return !*c && !*e;
}

const hml__workflow_region *hml__workflow_region_find(const hml__workflow *w,
                                                      const char *label)
{
	size_t i;

	if (!w || w->nregions == 0)
		return NULL;
	if (!label)
		return &w->regions[0];
	for (i = 0; i < w->nregions; i++)
		if (strcmp(w->regions[i].label, label) == 0)
			return &w->regions[i];
	return NULL;
}

void hml__workflow_train_options(const hml__workflow_region *r, hml__train_options *o,
                                 const char **nonfinite)
{
	const json_t *t = r ? r->train : NULL, *v;

	if (r) {
		o->loss = r->loss;
		o->metric = r->metric;
		o->mape_floor = r->mape_floor;
		o->categorical = r->categorical;
	}

#define INT_KEY(key, field) \
	if (json_is_integer(v = json_object_get(t, key))) \
		o->field = (__typeof__(o->field))json_integer_value(v)
#define NUM_KEY(key, field) \
	if (json_is_number(v = json_object_get(t, key))) \
		o->field = json_number_value(v)
#define STR_KEY(key, field) \
	if (json_is_string(v = json_object_get(t, key))) \
		o->field = json_string_value(v)
	INT_KEY("epochs", epochs);
	INT_KEY("batch", batch);
	INT_KEY("patience", patience);
	/* clamped, not wrapped: 2^32 + 2 is refused, not read as 2 */
	if (json_is_integer(v = json_object_get(t, "rollout"))) {
		json_int_t n = json_integer_value(v);

		o->rollout = n > INT_MAX ? INT_MAX : n < INT_MIN ? INT_MIN : (int)n;
	}
	INT_KEY("seed", seed);
	INT_KEY("threads", threads);
	NUM_KEY("lr", lr);
	NUM_KEY("weight_decay", weight_decay);
	NUM_KEY("clip", clip);
	NUM_KEY("val_fraction", val_fraction);
	NUM_KEY("test_fraction", test_fraction);
	NUM_KEY("max_seconds", max_seconds);
	STR_KEY("optimizer", optimizer);
	STR_KEY("schedule", schedule);
#undef INT_KEY
#undef NUM_KEY
#undef STR_KEY
	if (nonfinite && json_is_string(v = json_object_get(t, "nonfinite")))
		*nonfinite = json_string_value(v);
}
