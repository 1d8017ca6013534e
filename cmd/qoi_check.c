/*
 * The QoI check: the application run once accurately and once per model
 * checked, on a seed no data set was collected with, and the error of each
 * of its quantities of interest (the workflow's "qoi", compared in
 * lib/store/qoi_compare.c) in its metric; the primary's is "the QoI error".
 * hml deploy --max-qoi-error walks a front with it (cmd/deploy_qoi.c);
 * hml search --qoi-check K checks its front's most accurate models.
 *
 * The check run uses the workflow's collect arguments with the first seed
 * after every collected one, skipping the one that would give hml
 * evaluate's command line, so that neither the training data nor the
 * later evaluation chooses the model. Each model runs as hml evaluate runs
 * it (lib/store/model_run.h): a model of an iterative application at the
 * k and interleave its card records, against the accurate run at that k
 * (one per k checked); each check records its argv and run. A check runs the model's
 * TorchScript form: its C form was checked against it when compiled
 * (cmd/deploy_c.c) and gives the same outputs to float rounding. An MPI
 * workflow's check runs are started under its launcher with its ranks, as
 * hml evaluate starts them, and its QoI is read from every rank's file
 * (lib/store/qoi_compare.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "collect_mpi.h"
#include "evaluate_mpi.h"
#include "core/json.h"
#include "core/profile_file.h"
#include "core/util.h"
#include "deploy/metrics.h"
#include "run/argv.h"
#include "run/childenv.h"
#include "run/workflow.h"
#include "store/checked.h"
#include "store/model_run.h"
#include "store/qoi_compare.h"
#include "store/records.h"
#include "store/store.h"

/* The accurate run at one k: the reference of the checks at that k. */
typedef struct qoi_ref_run {
	long long k;          /* -1: the command line's own */
	hml__qoi_ref *ref;    /* its QoI */
	double wall;          /* its wall time: the checks' time limit */
} qoi_ref_run;

struct cmd_qoi_check {
	hml__store *s;
	hml__workflow *w;
	const char *region, *metric;
	char *tmp, **argv;    /* argv: the check run's, before a model's k is set */
	int64_t seed;
	int ranks;            /* an MPI workflow's (under its launcher), else 1 */
	qoi_ref_run *refs;    /* the accurate runs, one per k checked */
	int nrefs;
	hml__qoi_result *last;/* [w->nqoi]: the last check's comparison */
	int last_ok;          /* it compared (its run did not fail) */
	json_t *checks;       /* [{model, target, argv, run, calls, error, qois} or
	                         {..., failed}] */
	int nchecks;
};

static int strv_equal(char *const *a, char *const *b)
{
	for (; *a && *b; a++, b++)
		if (strcmp(*a, *b) != 0)
			return 0;
	return !*a && !*b;
}

/* The check run's argv: collect's arguments with the first seed after
 * every collected one (and the workflow's), skipping the one that would
 * give evaluate's command line. */
static int check_argv(cmd_qoi_check *q)
{
	char **eval = NULL;
	int64_t seed = hml__records_max_seed(q->s);
	int rc;

	if (seed < q->w->collect_seed)
		seed = q->w->collect_seed;
	if ((rc = hml__argv_build(&eval, q->w->program, (const char *const *)q->w->evaluate_args,
	                          NULL)) < 0)
		return rc;
	for (int k = 0; k < 2 && rc == 0; k++) {
		q->seed = seed < HML__SEED_MAX ? ++seed : seed;
		hml__strv_free(q->argv);
		q->argv = NULL;
		if ((rc = hml__argv_build(&q->argv, q->w->program,
		                          (const char *const *)q->w->collect_args, &q->seed)) < 0)
			break;
		if (!strv_equal(q->argv, eval))
			break;
	}
	hml__strv_free(eval);
	q->ranks = 1;
	if (rc == 0 && q->w->launcher) {   /* mpirun -n 3 PROGRAM ARGS */
		char **launcher = NULL, **app = q->argv;

		q->argv = NULL;
		if ((rc = collect_mpi_launcher_find(&launcher, q->w)) == 0)
			rc = hml__argv_launch(&q->argv, (const char *const *)launcher, q->w->ranks,
			                      app);
		hml__strv_free(launcher);
		hml__strv_free(app);
		q->ranks = q->w->ranks;
	}
	return rc;
}

/* Paths of check k's files (k < 0: accurate run -1 - k). */
static void run_paths(const cmd_qoi_check *q, int k, char *qoi, char *log, size_t size)
{
	snprintf(qoi, size, "%s/%s%d.h5", q->tmp, k < 0 ? "a" : "s", k < 0 ? -1 - k : k);
	snprintf(log, size, "%s/%s%d.log", q->tmp, k < 0 ? "a" : "s", k < 0 ? -1 - k : k);
}

/* The region's calls in check run `prof`'s profile, into rec's "calls":
 * what the runtime did (model calls and original-code calls), the proof
 * that the model ran at its k and interleave. */
static int record_calls(const cmd_qoi_check *q, const char *prof, json_t *rec)
{
	hml__profile_record p;
	int rc;

	if ((rc = hml__profile_file_find_ranks(prof, q->ranks, q->region, &p)) < 0)
		return rc;
	if (json_object_set_new(rec, "calls", json_pack("{s:I, s:I, s:I}", "calls",
	                        (json_int_t)p.stats.calls, "model", (json_int_t)p.stats.model_calls,
	                        "original", (json_int_t)p.stats.original_calls)) < 0)
		return hml__error_oom();
	return 0;
}

/* The accurate run at k (argv: the check run's at k), recording the
 * reference QoI of the checks at k; run once per k. */
static int reference(cmd_qoi_check *q, long long k, char **argv, const qoi_ref_run **out)
{
	hml__run_config config = { HML__RUN_ACCURATE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL };
	char qoi[4096], log[4096], what[64], at[32] = "";
	qoi_ref_run *r, *grown;
	int rc;

	for (int i = 0; i < q->nrefs; i++)
		if (q->refs[i].k == k) {
			*out = &q->refs[i];
			return 0;
		}
	if (!q->tmp && !(q->tmp = hml__store_tmp_dir(q->s, "eval")))   /* never through a link */
		return hml_error_last()->code;
	if (!(grown = realloc(q->refs, (size_t)(q->nrefs + 1) * sizeof(*grown))))
		return hml__error_oom();
	q->refs = grown;
	r = &q->refs[q->nrefs];
	memset(r, 0, sizeof(*r));
	r->k = k;
	run_paths(q, -1 - q->nrefs, qoi, log, sizeof(qoi));
	q->nrefs++;
	config.qoi = qoi;
	if (k >= 1)
		snprintf(at, sizeof(at), ", k %lld", k);
	cmd_info("QoI check: workflow '%s', seed %lld%s: accurate run", q->w->name,
	         (long long)q->seed, at);
	snprintf(what, sizeof(what), "seed %lld%s", (long long)q->seed, at);
	if ((rc = cmd_app_run(q->w, argv, &config, log,
	                      hml__records_run_wall_max(q->s, q->w->name), &r->wall,
	                      NULL)) < 0 ||
	    (rc = hml__qoi_ref_load(&r->ref, q->w, qoi, q->ranks)) < 0)
		goto fail;
	if ((rc = hml__qoi_ref_check_finite(r->ref, what)) < 0) {
		cmd_log_tail(log, "the accurate run's log");
		goto fail;
	}
	*out = r;
	return 0;
fail:   /* kept for its files' names, never found again */
	r->k = -2;
	return rc;
}

/* Model `m`'s run (lib/store/model_run.h): *argv the check run's command
 * line with its k (and interleave argument) set, c->interleave. */
static int model_argv(const cmd_qoi_check *q, const hml__model_view *m, char ***argv,
                      hml__run_config *c, hml__model_run *r)
{
	hml__model_run_resolve(r, m, NULL, NULL);
	if (hml__argv_copy(argv, (const char *const *)q->argv, -1) < 0)
		return HML_ENOMEM;
	return hml__model_run_apply(argv, c, q->w, r);
}

/* The accurate run at model m's k. */
static int reference_of(cmd_qoi_check *q, const hml__model_view *m, const qoi_ref_run **out)
{
	hml__run_config c = { HML__RUN_ACCURATE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL };
	hml__model_run r;
	char **argv = NULL;
	int rc;

	if ((rc = model_argv(q, m, &argv, &c, &r)) == 0)
		rc = reference(q, r.k, argv, out);
	hml__strv_free(argv);
	return rc;
}

int cmd_qoi_check_open(cmd_qoi_check **out, hml__store *s, const char *model)
{
	cmd_qoi_check *q;
	hml__model_view mv;
	char *path = NULL;
	int rc;

	*out = NULL;
	if (!(q = calloc(1, sizeof(*q))) || !(q->checks = json_array())) {
		free(q);
		return hml__error_oom();
	}
	q->s = s;
	if ((rc = hml__checked_model(s, model, &mv, &path)) < 0 ||
	    (rc = hml__checked_model_workflow(s, &mv, &q->w)) < 0)
		goto fail;
	q->region = mv.region;
	q->metric = q->w->qoi[0].metric;
	if (!(q->last = calloc(q->w->nqoi, sizeof(*q->last)))) {
		rc = hml__error_oom();
		goto fail;
	}
	{
		const qoi_ref_run *ref;

		if ((rc = check_argv(q)) < 0 || (rc = reference_of(q, &mv, &ref)) < 0)
			goto fail;
	}
	free(path);
	*out = q;
	return 0;
fail:
	free(path);
	cmd_qoi_check_free(q);
	return rc;
}

/* Model `model`'s run compared into q->last; its argv and run into rec. */
static int run_model(cmd_qoi_check *q, const char *model, int k, json_t *rec)
{
	hml__run_config config = { HML__RUN_SURROGATE, NULL, q->region, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL };
	char qoi[4096], log[4096], prof[4200], what[128], *path = NULL, **argv = NULL;
	const qoi_ref_run *ref;
	hml__model_view mv;
	hml__model_run r;
	json_t *a;
	int rc;

	run_paths(q, k, qoi, log, sizeof(qoi));
	snprintf(prof, sizeof(prof), "%s/s%d.json", q->tmp, k);
	config.qoi = qoi;
	config.profile = prof;
	if ((rc = hml__checked_model(q->s, model, &mv, &path)) < 0 ||
	    (rc = reference_of(q, &mv, &ref)) < 0 ||
	    (rc = model_argv(q, &mv, &argv, &config, &r)) < 0)
		goto done;
	if (!(a = json_array()) || json_object_set_new(rec, "argv", a) < 0 ||
	    json_object_set_new(rec, "run", hml__model_run_json(&r)) < 0) {
		rc = hml__error_oom();
		goto done;
	}
	for (char **v = argv; *v; v++)
		json_array_append_new(a, hml__json_bytes(*v));
	if (config.interleave > 0)
		json_object_set_new(rec, "interleave", json_integer(config.interleave));
	config.model = path;
	if ((rc = cmd_app_run(q->w, argv, &config, log, ref->wall, NULL, NULL)) < 0 ||
	    (rc = record_calls(q, prof, rec)) < 0)
		goto done;
	snprintf(what, sizeof(what), "model '%s'", model);
	rc = hml__qoi_compare(q->last, ref->ref, qoi, what);
done:
	hml__strv_free(argv);
	free(path);
	return rc;
}

/* Each data set's error after the primary's, with its bound: "; mass
 * rmse 0.3 (over max_error 0.1)". */
static void others_text(const cmd_qoi_check *q, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < q->w->nqoi && len < size; i++) {
		const hml__qoi_result *r = &q->last[i];

		if (i > 0)
			len += (size_t)snprintf(buf + len, size - len, "; %s %s %.4g", r->qoi->dataset,
			                        r->qoi->metric, r->error);
		if (len < size && !isnan(r->qoi->max_error))
			len += (size_t)snprintf(buf + len, size - len, " (%s max_error %g)",
			                        r->passed ? "within" : "over", r->qoi->max_error);
	}
}

/* A bound on the check: --max-qoi-error's, or a data set's max_error. */
static int has_bound(const cmd_qoi_check *q, double max)
{
	for (size_t i = 0; i < q->w->nqoi; i++)
		if (!isnan(q->w->qoi[i].max_error))
			return 1;
	return !isnan(max);
}

int cmd_qoi_check_model(cmd_qoi_check *q, const char *model, const char *target, double max,
                        double *err, int *within)
{
	char bound[64] = "", others[512];
	json_t *rec = json_pack("{s:s, s:s}", "model", model, "target", target);
	int k = q->nchecks++, rc;

	*err = NAN;
	*within = 0;
	if (!rec)
		return hml__error_oom();
	rc = run_model(q, model, k, rec);
	q->last_ok = rc == 0;
	if (rc < 0 && (cmd_interrupted || rc == HML_ENOMEM)) {
		json_decref(rec);
		return rc;
	}
	if (rc < 0) {
		json_object_set_new(rec, "failed", json_string(hml_error_last()->message));
		cmd_warn("QoI check of model '%s': %s", model, hml_error_last()->message);
	} else {
		*err = q->last[0].error;
		*within = (isnan(max) || *err <= max) && !hml__qoi_failed(q->last, q->w->nqoi);
		if (!isnan(max))
			snprintf(bound, sizeof(bound), " (%s %g)", *err <= max ? "within" : "over", max);
		others_text(q, others, sizeof(others));
		cmd_info("QoI check %d: model '%s': %s %s %.4g%s%s", k + 1, model, q->w->qoi[0].dataset,
		         q->metric, *err, bound, others);
		json_object_set_new(rec, "qois", hml__qoi_results_json(q->last, q->w->nqoi));
	}
	json_object_set_new(rec, "error", hml__json_real(*err));
	if (has_bound(q, max))
		json_object_set_new(rec, "within", json_boolean(*within));
	json_array_append_new(q->checks, rec);
	return 0;
}

const hml__qoi_result *cmd_qoi_check_failed(const cmd_qoi_check *q)
{
	return q->last_ok ? hml__qoi_failed(q->last, q->w->nqoi) : NULL;
}

json_t *cmd_qoi_check_report(const cmd_qoi_check *q)
{
	json_t *argv = json_array(), *r;

	for (char **a = q->argv; argv && *a; a++)
		json_array_append_new(argv, hml__json_bytes(*a));
	r = json_pack("{s:s, s:s, s:o, s:I, s:s, s:O}", "dataset", q->w->qoi[0].dataset,
	              "metric", q->metric, "argv", argv, "seed", (json_int_t)q->seed,
	              "form", "torchscript", "checks", q->checks);
	if (!r)
		hml__error_oom();
	return r;
}

const char *cmd_qoi_check_metric(const cmd_qoi_check *q)
{
	return q->metric;
}

const char *cmd_qoi_check_dataset(const cmd_qoi_check *q)
{
	return q->w->qoi[0].dataset;
}

int64_t cmd_qoi_check_seed(const cmd_qoi_check *q)
{
	return q->seed;
}

void cmd_qoi_check_free(cmd_qoi_check *q)
{
	if (!q)
		return;
	if (q->tmp)   /* a0 .. a<refs-1> and s0 .. s<n-1>, each rank's */
		cmd_evaluate_runs_remove(q->tmp, q->nchecks > q->nrefs ? (q->nchecks > 1 ?
		                         q->nchecks : 1) : q->nrefs, q->ranks);
	json_decref(q->checks);
	free(q->tmp);
	for (int i = 0; i < q->nrefs; i++)
		hml__qoi_ref_free(q->refs[i].ref);
	free(q->refs);
	free(q->last);
	hml__strv_free(q->argv);
	hml__workflow_free(q->w);
	free(q);
}
