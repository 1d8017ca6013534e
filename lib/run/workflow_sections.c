/*
 * lib/run/workflow_sections.c - the sections of workflow.json (env,
 * collect, evaluate, qoi, success_exit_codes, verify, launcher, ranks) and
 * the validation of the whole document (workflow_keys.h), which calls
 * each section's parser in turn and resolves the program.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/collection_keep.h"
#include "core/error.h"
#include "core/util.h"
#include "run/workflow_keys.h"
#include "sys/fsutil.h"
#include "train/train.h"

#define RUNS_MAX 1000000

static int parse_env(const hml__wf_ctx *v, const json_t *doc, char ***out)
{
	const char *key;
	json_t *env, *val;
	size_t n = 0;
	char **list;
	int rc;

	*out = NULL;
	if ((rc = hml__wf_get_object(v, doc, "", "env", 0, &env)) < 0)
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
				rc = hml__wf_bad_key(v, full, "must be a string");
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
static int parse_keep(const hml__wf_ctx *v, const json_t *c, hml__collect_keep *k)
{
	static const char *const keys[] = { "rate", "reservoir", "dedup", "seed", NULL };
	hml__coll_compression z;
	json_t *s, *j;
	int rc;

	*k = (hml__collect_keep)HML__COLLECT_KEEP_INIT;
	if ((rc = hml__wf_get_object(v, c, "collect", "sample", 0, &s)) < 0)
		return rc;
	if (s && ((rc = hml__wf_check_keys(v, s, "collect.sample", keys)) < 0 ||
	          (rc = hml__wf_get_int(v, s, "collect.sample", "reservoir", 0, 1, 1000000000,
	                                        &k->reservoir)) < 0 ||
	          (rc = hml__wf_get_int(v, s, "collect.sample", "seed", 0, 0, 2147483647,
	                                                &k->seed)) < 0))
		return rc;
	if (s && (j = json_object_get(s, "rate")) != NULL) {
		if (!json_is_number(j) || !(json_number_value(j) > 0 && json_number_value(j) <= 1))
			return hml__wf_bad_key(v, "collect.sample.rate", "must be a number in (0, 1]");
		k->rate = json_number_value(j);
	}
	if (s && (j = json_object_get(s, "dedup")) != NULL) {
		if (!json_is_boolean(j))
			return hml__wf_bad_key(v, "collect.sample.dedup", "must be true or false");
		k->dedup = json_is_true(j);
	}
	if ((j = json_object_get(c, "compression")) != NULL) {
		if (!json_is_string(j))
			return hml__wf_bad_key(v, "collect.compression", "must be a string");
		if (hml__compression_parse(&z, json_string_value(j)) < 0)
			return hml__wf_bad_key(v, "collect.compression", "must be %s, not '%.64s'",
			                       HML__COLL_COMPRESSION_NAMES, json_string_value(j));
		k->compression = json_string_value(j);
	}
	return 0;
}

static int parse_collect(const hml__wf_ctx *v, hml__workflow *w)
{
	static const char *const keys[] = { "args", "runs", "seed", "sample", "compression",
	                                    NULL };
	json_t *c;
	int64_t runs = 1, seed = 1;
	int rc;

	if ((rc = hml__wf_get_object(v, w->json, "", "collect", 1, &c)) < 0 ||
	    (rc = hml__wf_check_keys(v, c, "collect", keys)) < 0 ||
	    (rc = hml__wf_get_strv(v, c, "collect", "args", &w->collect_args)) < 0 ||
	    (rc = hml__wf_get_int(v, c, "collect", "runs", 0, 1, RUNS_MAX, &runs)) < 0 ||
	    (rc = hml__wf_get_int(v, c, "collect", "seed", 0, 0, HML__SEED_MAX, &seed)) < 0)
		return rc;
	w->collect_runs = (int)runs;
	w->collect_seed = seed;
	return parse_keep(v, c, &w->collect_keep);
}

static int parse_evaluate(const hml__wf_ctx *v, hml__workflow *w)
{
	static const char *const keys[] = { "args", "repeat", NULL };
	json_t *e;
	int64_t repeat = 3;
	int rc;

	if ((rc = hml__wf_get_object(v, w->json, "", "evaluate", 1, &e)) < 0 ||
	    (rc = hml__wf_check_keys(v, e, "evaluate", keys)) < 0 ||
	    (rc = hml__wf_get_strv(v, e, "evaluate", "args", &w->evaluate_args)) < 0 ||
	    (rc = hml__wf_get_int(v, e, "evaluate", "repeat", 0, 1, RUNS_MAX, &repeat)) < 0)
		return rc;
	w->evaluate_repeat = (int)repeat;
	return 0;
}

/*
 * Training defaults are hml train's options: the names and types are
 * checked here so that a typo fails when the workflow is loaded, not
 * silently at training time. Ranges are hml train's business.
 */

static int get_bound(const hml__wf_ctx *v, const json_t *obj, const char *key, const char *full,
                     double *out)
{
	json_t *j = json_object_get(obj, key);

	if (!j)
		return 0;
	if (!json_is_number(j) || !(json_number_value(j) >= 0) || !isfinite(json_number_value(j)))
		return hml__wf_bad_key(v, full, "must be a finite number >= 0");
	*out = json_number_value(j);
	return 0;
}

/* One entry of "qoi"; `parent` is "qoi" or "qoi[i]". */
static int parse_qoi_entry(const hml__wf_ctx *v, const json_t *o, const char *parent,
                           hml__workflow_qoi *q)
{
	static const char *const keys[] = { "dataset", "metric", "mape_floor", "max_error", NULL };
	char full[64];
	int rc;

	q->max_error = NAN;
	if (!json_is_object(o))
		return hml__wf_bad_key(v, parent, "must be an object");
	if ((rc = hml__wf_check_keys(v, o, parent, keys)) < 0 ||
	    (rc = hml__wf_get_string(v, o, parent, "dataset", 1, &q->dataset)) < 0 ||
	    (rc = hml__wf_get_string(v, o, parent, "metric", 0, &q->metric)) < 0)
		return rc;
	if (!q->metric && !(q->metric = hml__strdup("rmse")))
		return HML_ENOMEM;
	hml__wf_key_join(full, sizeof(full), parent, "metric");
	if (strcmp(q->metric, "rmse") != 0 && strcmp(q->metric, "mape") != 0 &&
	    strcmp(q->metric, "max_abs") != 0)
		return hml__wf_bad_key(v, full, "must be \"rmse\", \"mape\" or \"max_abs\", not '%s'",
		                       q->metric);
	hml__wf_key_join(full, sizeof(full), parent, "mape_floor");
	if ((rc = get_bound(v, o, "mape_floor", full, &q->mape_floor)) < 0)
		return rc;
	hml__wf_key_join(full, sizeof(full), parent, "max_error");
	return get_bound(v, o, "max_error", full, &q->max_error);
}

/* "qoi": one object, or a non-empty array of them with distinct data sets. */
static int parse_qoi(const hml__wf_ctx *v, hml__workflow *w)
{
	json_t *q, *item;
	char parent[32];
	size_t i, j;
	int rc, one;

	if ((rc = hml__wf_get(v, w->json, "", "qoi", 1, &q)) < 0)
		return rc;
	one = json_is_object(q);
	if (!one && (!json_is_array(q) || json_array_size(q) == 0))
		return hml__wf_bad_key(v, "qoi", "must be an object or a non-empty array of objects");
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
				return hml__wf_bad_key(v, full, "repeats data set '%s' of qoi[%zu]",
				                       w->qoi[i].dataset, j);
			}
	}
	return 0;
}

/* Statuses are those of a normal exit: 0 to 255. */
static int parse_success_codes(const hml__wf_ctx *v, hml__workflow *w)
{
	json_t *a, *item;
	size_t i, n;
	int rc;

	if ((rc = hml__wf_get(v, w->json, "", "success_exit_codes", 0, &a)) < 0)
		return rc;
	n = a ? json_array_size(a) : 1;
	if (a && (!json_is_array(a) || n == 0))
		return hml__wf_bad_key(v, "success_exit_codes",
		                       "must be a non-empty array of exit statuses (integers from 0 to 255)");
	if (!(w->success_codes = calloc(n, sizeof(*w->success_codes))))
		return hml__error_oom();
	w->nsuccess_codes = n;
	json_array_foreach(a, i, item) {
		if (!json_is_integer(item) || json_integer_value(item) < 0 ||
		    json_integer_value(item) > 255)
			return hml__wf_bad_key(v, "success_exit_codes",
			                       "must be an array of exit statuses from 0 to 255 (item %zu is not)", i);
		w->success_codes[i] = (int)json_integer_value(item);
	}
	return 0;
}

/* The pattern is compiled here, so that a bad one fails before anything runs. */
static int parse_verify(const hml__wf_ctx *v, hml__workflow *w)
{
	static const char *const keys[] = { "pattern", NULL };
	json_t *o;
	char why[256];
	int rc;

	if ((rc = hml__wf_get_object(v, w->json, "", "verify", 0, &o)) < 0 || !o ||
	    (rc = hml__wf_check_keys(v, o, "verify", keys)) < 0 ||
	    (rc = hml__wf_get_string(v, o, "verify", "pattern", 1, &w->verify_pattern)) < 0)
		return rc;
	if (!(w->verify_re = calloc(1, sizeof(*w->verify_re))))
		return hml__error_oom();
	if ((rc = regcomp(w->verify_re, w->verify_pattern, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, w->verify_re, why, sizeof(why));
		free(w->verify_re);
		w->verify_re = NULL;
		return hml__wf_bad_key(v, "verify.pattern", "is not a POSIX extended regular expression: %s",
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
static int parse_launcher(const hml__wf_ctx *v, hml__workflow *w)
{
	int64_t ranks = 1;
	json_t *l;
	int rc;

	if ((rc = hml__wf_get(v, w->json, "", "launcher", 0, &l)) < 0 ||
	    (rc = hml__wf_get_int(v, w->json, "", "ranks", 0, 1, HML__RANKS_MAX, &ranks)) < 0)
		return rc;
	w->ranks = (int)ranks;
	if (l) {
		if ((rc = hml__wf_get_strv(v, w->json, "", "launcher", &w->launcher)) < 0)
			return rc;
		if (!w->launcher[0] || !w->launcher[0][0])
			return hml__wf_bad_key(v, "launcher", "must start with the launcher's program");
	} else if (ranks > 1) {
		return hml__wf_bad_key(v, "ranks", "is %lld, but the workflow has no 'launcher' to "
		                       "start ranks with", (long long)ranks);
	}
	return 0;
}

/* The program, relative to the workflow's directory; it must be runnable. */
static int resolve_program(const hml__wf_ctx *v, hml__workflow *w, const char *program)
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

int hml__wf_validate(hml__workflow *w)
{
	static const char *const keys[] = { "schema_version", "name", "description",
		"program", "env", "collect", "evaluate", "regions", "qoi", "success_exit_codes",
		"verify", "launcher", "ranks", "search_args", NULL };
	hml__wf_ctx v = { w->path };
	char *program = NULL;
	int64_t schema;
	int rc;

	if (!json_is_object(w->json))
		return hml__error_set(HML_EINVALID, "workflow '%s': the document must be a JSON object",
		                      w->path);
	if ((rc = hml__wf_check_keys(&v, w->json, "", keys)) < 0 ||
	    (rc = hml__wf_get_int(&v, w->json, "", "schema_version", 1, 1, INT64_MAX, &schema)) < 0)
		goto done;
	if (schema > HML__WORKFLOW_SCHEMA) {
		rc = hml__error_set(HML_ENOTSUPPORTED,
			"workflow '%s': schema_version %lld is newer than this hml understands (%d)",
			w->path, (long long)schema, HML__WORKFLOW_SCHEMA);
		goto done;
	}
	if ((rc = hml__wf_get_string(&v, w->json, "", "name", 1, &w->name)) < 0 ||
	    (rc = hml__wf_get_string(&v, w->json, "", "description", 0, &w->description)) < 0 ||
	    (rc = hml__wf_get_string(&v, w->json, "", "program", 1, &program)) < 0 ||
	    (rc = parse_env(&v, w->json, &w->env)) < 0 ||
	    (rc = parse_collect(&v, w)) < 0 ||
	    (rc = parse_evaluate(&v, w)) < 0 ||
	    (rc = hml__wf_parse_regions(&v, w)) < 0 ||
	    (rc = parse_qoi(&v, w)) < 0 ||
	    (rc = parse_success_codes(&v, w)) < 0 ||
	    (rc = parse_verify(&v, w)) < 0 ||
	    (rc = parse_launcher(&v, w)) < 0 ||
	    (rc = hml__search_args_read(&w->search_args, w->json, w->path)) < 0 ||
	    (rc = set_objectives(w)) < 0)
		goto done;
	if (!hml__wf_name_ok(w->name)) {
		rc = hml__wf_bad_key(&v, "name", "is '%s': a workflow name has at most %d " HML__WF_NAME_CHARS,
		                     w->name, HML__WF_LABEL_MAX);
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
