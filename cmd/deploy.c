/*
 * hml deploy - choose a model for a region and record the deployment.
 *
 * By id, as the most accurate model (--best: lowest QoI error on a search's
 * check, else lowest validation error in the card's metric), as
 * the fastest within an error bound (--max-error E), or as the most
 * accurate within a latency bound (--max-latency L), in the target asked
 * for (--target torchscript, c, or auto: both compete); the choice is
 * lib/store/select.h's, over the model cards' latencies (lib/deploy/latency.h).
 * --max-qoi-error E bounds the application's output instead, checked by
 * running it (cmd/deploy_qoi.c). Prints the environment that makes the
 * application run the region as inference (`eval "$(hml deploy --best)"`).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "core/envname.h"
#include "core/guard.h"
#include "core/deployfile.h"
#include "core/util.h"
#include "deploy/latency.h"
#include "deploy/metrics.h"
#include "run/workflow.h"
#include "store/checked.h"
#include "store/cost.h"
#include "store/model_run.h"
#include "store/records.h"
#include "store/select.h"
#include "store/store.h"
#include "sys/fsutil.h"

static int best, force;
static double max_error = NAN;
static double max_latency = NAN;
static double max_qoi = NAN;
static double rows_per_run = NAN;
static const char *region;
static const char *target;
static const char *march;
static const char *search;
static const char *guard_text;
static hml__guard_spec guard;

static const cmd_option options[] = {
	{ "best", 0, CMD_OPT_FLAG, &best, NULL,
	  "the model with the lowest QoI error a search recorded (hml search --qoi-check, or an "
	  "iterative application's search), ties the higher predicted speedup; else the lowest "
	  "validation error (RMSE, or MAPE where the workflow's metric is)" },
	{ "max-error", 0, CMD_OPT_DOUBLE, &max_error, "E",
	  "the fastest model whose validation error (in its card's metric) is at most E" },
	{ "max-qoi-error", 0, CMD_OPT_DOUBLE, &max_qoi, "E",
	  "the fastest model whose error of the application's quantity of interest is at most "
	  "E, checked by running the application" },
	{ "max-latency", 0, CMD_OPT_DOUBLE, &max_latency, "L",
	  "the most accurate model that runs within L seconds per sample" },
	{ "region", 'r', CMD_OPT_STRING, &region, "R", "consider only models of region R" },
	{ "search", 0, CMD_OPT_STRING, &search, "ID",
	  "consider only the models on the front of search ID (hml search)" },
	{ "target", 't', CMD_OPT_STRING, &target, "T",
	  "torchscript (default: the trained model), c (compiled to a shared object) or auto "
	  "(the faster of the two, by the model card)" },
	{ "rows-per-run", 0, CMD_OPT_DOUBLE, &rows_per_run, "N",
	  "rows one application run passes through the region, for comparing forms per run "
	  "(default: as when the training data were collected)" },
	{ "force", 0, CMD_OPT_FLAG, &force, NULL,
	  "deploy even a model predicted slower than the region's original code" },
	{ "march", 0, CMD_OPT_STRING, &march, "ARCH",
	  "with --target c or auto: compile for this CPU (-march=ARCH, e.g. native; default "
	  "portable)" },
	{ "guard", 0, CMD_OPT_STRING, &guard_text, "G",
	  "check each row before the model answers it: none (default), bounds[:margin=M] "
	  "(the training inputs' range per feature, widened by M times it), distance[:fa=A] "
	  "(Mahalanobis distance to the training inputs, threshold for a false-alarm rate A, "
	  "default 0.01) or ensemble[:fa=A] (disagreement of the members of a model trained "
	  "with hml train --ensemble); guarded rows run the original code" },
	CMD_RUN_TIMEOUT_OPTION,
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static const cmd_range ranges[] = {
	{ "max-error", 0, INFINITY, 1 }, { "max-qoi-error", 0, INFINITY, 1 },
	{ "max-latency", 0, INFINITY, 1 }, { "rows-per-run", 0, INFINITY, 1 },
	{ "run-timeout", 0, INFINITY, 0 }, { NULL, 0, 0, 0 }
};

static const cmd_spec spec = {
	"deploy", "[options] (MODEL | --best | --max-error E | --max-qoi-error E | --max-latency L)",
	"choose a model and print the environment that runs it",
	"Records a deployment of MODEL (an id such as m3), of the most accurate model\n"
	"(--best), of the fastest model whose validation error is within E\n"
	"(--max-error E), or of the most accurate model whose latency per sample is\n"
	"within L seconds (--max-latency L; both bounds may be given), or of the fastest\n"
	"model whose error of the workflow's quantity of interest is within E\n"
	"(--max-qoi-error E: the application runs once accurately and once per model\n"
	"checked, on a seed neither collect nor evaluate uses), and prints the\n"
	"variables an application needs to run the model's region as inference:\n"
	"eval \"$(hml deploy --best)\". Latencies are the model cards' (hml show MODEL).\n"
	"--target c compiles the model to C with its weights as constants and\n"
	"registers models/<c-id>.{c,h,so}; the environment then names the .so.\n"
	"--target auto lets both forms compete: (model, target) pairs under the bounds,\n"
	"or the faster form of the model named or chosen. --search ID chooses among the\n"
	"models on the front of that search only.\n"
	"A model predicted slower than the region's original code (its latency per\n"
	"row against the original code's, as hml collect measured it) is never chosen\n"
	"and is refused when named, with the two figures; --force deploys it anyway.\n"
	"The predicted speedup, per row and end to end, is printed and recorded.",
	options, 0, 1, ranges
};

/* Models in the experiment (of --region when given). */
static size_t count_models(const hml__store *s)
{
	hml__model_view m;
	size_t i, n = 0;

	for (i = 0; hml__records_model_at(&m, s, i); i++)
		n += !region || (m.region && strcmp(m.region, region) == 0);
	return n;
}

/* The targets --target allows, as a mask of 1 << HML__TARGET_*. */
static unsigned target_mask(void)
{
	if (target && strcmp(target, "auto") == 0)
		return (1u << HML__TARGET_TORCHSCRIPT) | (1u << HML__TARGET_C);
	return 1u << (target ? hml__target_parse(target) : HML__TARGET_TORCHSCRIPT);
}

/* A model named (a chosen one is never slower) predicted slower than the
 * original code: HML_ERANGE with both figures, unless --force. */
static int refuse_slower(const hml__candidate *pick)
{
	hml__prediction p;
	char cost[32], lat[64], speed[48];

	hml__candidate_predict(pick, &p);
	if (force || !p.slower)
		return 0;
	return hml__error_set(HML_ERANGE, "model '%s' as %s is predicted slower than the "
	                      "original code: the region costs %s per row, the model %s, %s "
	                      "(--force deploys it anyway)", pick->model,
	                      hml__target_name(pick->target),
	                      hml__format_seconds(cost, sizeof(cost), p.cost_per_row, 2),
	                      hml__prediction_model_text(lat, sizeof(lat), &p),
	                      hml__prediction_speed_text(speed, sizeof(speed), &p));
}

/* A card whose QoI error is not a finite number >= 0 (edited, or of a
 * hostile history): ignored, the model ranked by its validation error;
 * said once per model. */
static void warn_bad_qoi(const hml__candidate *c, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (c[k].qoi_bad && (k == 0 || strcmp(c[k - 1].model, c[k].model) != 0))
			cmd_warn("model '%s': its recorded QoI error is not a finite number >= 0: "
			         "ignored (ranked by its validation error)", c[k].model);
}

/* The (model, target) to deploy into *pick: the model named (`id`, its
 * faster target with --target auto), the choice of lib/store/select.h under
 * --best / --max-error / --max-latency among the candidates, or under
 * --max-qoi-error the one the check runs choose (*qoi_check: their record). */
static int choose(hml__store *s, const char *id, hml__candidate *pick, json_t **qoi_check)
{
	hml__select_bounds b = { max_error, max_latency, force };
	hml__candidate *c = NULL;
	size_t n = 0, k;
	int rc;

	if ((rc = hml__select_candidates(&c, &n, s, id ? NULL : region, target_mask())) < 0)
		return rc;
	for (k = 0; !isnan(rows_per_run) && k < n; k++)
		c[k].rows_per_run = rows_per_run;
	warn_bad_qoi(c, n);
	if (target && strcmp(target, "auto") == 0) {
		char why[300];

		hml__select_auto(c, &n, why, sizeof(why));
		if (why[0])
			cmd_info("--target auto: torchscript only (%s)", why);
	}
	if (search && !id && (rc = hml__select_in_search(c, &n, s, search)) < 0) {
		free(c);
		return rc;
	}
	if (id) {
		if (target && strcmp(target, "auto") == 0) {
			if ((rc = hml__select_target(c, n, id, &k)) == 0)
				*pick = c[k];
		} else {
			pick->model = id;
			pick->target = target_mask() == 1u << HML__TARGET_C ? HML__TARGET_C
			                                                   : HML__TARGET_TORCHSCRIPT;
			pick->error = pick->latency = pick->startup = pick->rows_per_run = NAN;
			for (k = 0; k < n; k++)
				if (strcmp(c[k].model, id) == 0 && c[k].target == pick->target)
					*pick = c[k];
		}
	} else if (count_models(s) == 0) {
		if (region)
			rc = hml__error_set(HML_ENOTFOUND, "no model of region '%s' in experiment '%s'",
			                    region, hml__store_dir(s));
		else
			rc = hml__error_set(HML_ENOTFOUND, "no model in experiment '%s' (run 'hml "
			                    "train' first)", hml__store_dir(s));
	} else if (n == 0 && search) {
		rc = hml__error_set(HML_ENOTFOUND, "no model on the front of search '%s'%s", search,
		                    region ? " is of that region" : " is a candidate in that target");
	} else if (n == 0) {
		rc = hml__error_set(HML_ENOTFOUND, "no model of experiment '%s' can be compiled to "
		                    "C (each card says why: hml show MODEL)", hml__store_dir(s));
	} else if (!isnan(max_qoi)) {
		if ((rc = cmd_deploy_by_qoi(s, c, n, &b, max_qoi, &k, qoi_check)) == 0)
			*pick = c[k];
	} else if ((rc = hml__select(c, n, &b, &k)) == 0) {
		*pick = c[k];
	}
	free(c);
	return rc == 0 ? refuse_slower(pick) : rc;
}

/* The options' rules that need no experiment: exit status HML_EXIT_USAGE
 * with its message, or 0. */
static int check_usage(int named)
{
	int nsel = named + best + (!isnan(max_error) || !isnan(max_latency) || !isnan(max_qoi));

	if (nsel != 1) {
		cmd_error("deploy: give exactly one of MODEL, --best and --max-error E / "
		          "--max-qoi-error E / --max-latency L");
		return HML_EXIT_USAGE;
	}
	if (!isnan(max_error) && !isnan(max_qoi)) {
		cmd_error("deploy: give one of --max-error (validation error) and --max-qoi-error "
		          "(the application's output)");
		return HML_EXIT_USAGE;
	}
	if (target && strcmp(target, "auto") != 0 && hml__target_parse(target) < 0) {
		cmd_error("deploy: unknown --target '%s' (torchscript, c or auto)", target);
		return HML_EXIT_USAGE;
	}
	if (march && (!target || strcmp(target, "torchscript") == 0)) {
		cmd_error("deploy: --march needs --target c or auto");
		return HML_EXIT_USAGE;
	}
	if (guard_text && hml__guard_spec_parse(&guard, guard_text) < 0) {
		cmd_error("deploy: %s", hml_error_last()->message);
		return HML_EXIT_USAGE;
	}
	if (search && named) {
		cmd_error("deploy: --search chooses among a search's models; give it with --best, "
		          "--max-error or --max-latency, not with MODEL");
		return HML_EXIT_USAGE;
	}
	if (hml__select_check_bound("max-error", max_error) < 0 ||
	    hml__select_check_bound("max-latency", max_latency) < 0 ||
	    hml__select_check_bound("max-qoi-error", max_qoi) < 0 ||
	    hml__select_check_bound("rows-per-run", rows_per_run) < 0) {
		cmd_error("deploy: %s", hml_error_last()->message);
		return HML_EXIT_USAGE;
	}
	return 0;
}

/* The record's "selection": how the model was chosen. */
static const char *selection_name(int named)
{
	if (named)
		return "id";
	if (best)
		return "best";
	if (!isnan(max_qoi))
		return isnan(max_latency) ? "max-qoi-error" : "max-qoi-error,max-latency";
	return isnan(max_latency) ? "max-error" : isnan(max_error) ? "max-latency" :
	       "max-error,max-latency";
}

/* The prediction's record (lib/store/cost.h). */
static json_t *prediction_json(const hml__candidate *pick)
{
	hml__prediction p;

	hml__candidate_predict(pick, &p);
	return hml__prediction_json(&p);
}

/* The deployment record (new reference; NULL on out-of-memory); env and
 * qoi_check (may be NULL) gain a reference each. */
static json_t *deployment_record(const char *id, const char *label, const char *workflow,
                                 const char *selection, const char *cid,
                                 const hml__candidate *pick, json_t *qoi_check, json_t *env,
                                 json_t *guard_rec, json_t *chosen_by)
{
	json_t *rec = json_pack("{s:s, s:s, s:s, s:s, s:s}", "model", id, "region", label,
	                        "workflow", workflow, "selection", selection,
	                        "target", cid[0] ? "c" : "torchscript");

	if (!rec)
		return NULL;
	if (cid[0])
		json_object_set_new(rec, "compiled", json_string(cid));
	if (!isnan(max_error))
		json_object_set_new(rec, "max_error", json_real(max_error));
	if (!isnan(max_latency))
		json_object_set_new(rec, "max_latency", json_real(max_latency));
	if (!isnan(max_qoi)) {
		json_object_set_new(rec, "max_qoi_error", json_real(max_qoi));
		json_object_set(rec, "qoi_check", qoi_check);
	}
	if (target && strcmp(target, "auto") == 0)
		json_object_set_new(rec, "target_requested", json_string("auto"));
	if (search)
		json_object_set_new(rec, "search", json_string(search));
	if (!isnan(pick->latency))
		json_object_set_new(rec, "latency_seconds_per_sample", json_real(pick->latency));
	json_object_set_new(rec, "predicted", prediction_json(pick));
	if (!isnan(pick->qoi_error))   /* a search measured it (records.h) */
		json_object_set_new(rec, "qoi_error", json_real(pick->qoi_error));
	if (chosen_by)
		json_object_set(rec, "chosen_by", chosen_by);
	if (force)
		json_object_set_new(rec, "forced", json_true());
	json_object_set_new(rec, "guard", guard_rec ? json_incref(guard_rec) :
	                    json_pack("{s:s}", "spec", "none"));
	json_object_set(rec, "env", env);
	return rec;
}

/* The predicted speedup, or why there is none. */
static void print_predicted(const char *pid, const hml__candidate *pick)
{
	hml__prediction p;
	char cost[32], lat[64], reg[32], e2e[32], ceil[64];

	hml__candidate_predict(pick, &p);
	if (isnan(p.cost_per_row)) {
		cmd_info("%s: no predicted speedup: the training data record no cost of the "
		         "region's original code (collected before hml measured it; collect again)",
		         pid);
		return;
	}
	hml__format_seconds(cost, sizeof(cost), p.cost_per_row, 2);
	hml__prediction_model_text(lat, sizeof(lat), &p);
	hml__format_speedup(reg, sizeof(reg), p.region);
	hml__format_speedup(e2e, sizeof(e2e), p.end_to_end);
	cmd_info("%s: predicted speedup: region %s (the original code %s per row, the model %s), "
	         "end to end %s for a run as collected%s", pid, reg, cost, lat, e2e,
	         hml__prediction_ceiling_text(ceil, sizeof(ceil), &p));
	if (hml__cost_cpu_waited(&pick->cost))
		cmd_info("%s: the original code's cost was collected while its threads waited for a "
		         "CPU %.0f%% of their time (other work on the machine): it, and so the "
		         "predicted speedups, are too high", pid, 100.0 * p.cpu_wait_share);
	if (p.slower)
		cmd_warn("%s: model '%s' is predicted slower than the original code (deployed "
		         "with --force)", pid, pick->model);
	else if (p.end_to_end < 1)
		cmd_warn("%s: predicted slower end to end for runs as collected: the %s start-up "
		         "of %s outweighs the region's gain; longer runs repay it", pid,
		         hml__target_name(pick->target),
		         hml__format_seconds(lat, sizeof(lat), p.startup, 2));
}

/* A model chosen without --search was chosen among every model of its
 * region: say which kind it is, and warn when the region's newest search
 * left an empty front, so that no older model passes for its (hml-deploy(1)). */
static void print_origin(const char *pid, const hml__store *s, const hml__model_view *m)
{
	hml__search_view v, newest = { 0 };
	char from[64];

	for (size_t i = 0; hml__records_search_at(&v, s, i); i++)
		if (v.region && m->region && strcmp(v.region, m->region) == 0)
			newest = v;
	if (m->search)
		snprintf(from, sizeof(from), "of search '%s'", m->search);
	else
		snprintf(from, sizeof(from), "%s", m->family && strcmp(m->family, "imported") == 0 ?
		         "imported" : "trained by hml train");
	if (newest.id && (!m->search || strcmp(m->search, newest.id) != 0) &&
	    json_array_size(newest.front) == 0)
		cmd_warn("%s: the newest search of region '%s', '%s' (%s), has nothing on its "
		         "front: model '%s' (%s) was chosen among every model of the region",
		         pid, m->region, newest.id, newest.status ? newest.status : "?", m->id, from);
	else
		cmd_info("%s: chose model '%s' (%s) among every model of region '%s' (--search ID: "
		         "among a search's front only)", pid, m->id, from, m->region);
}

/* --best's metric: the QoI error (cost.h's reader, records.h) when the
 * model chosen has one, else its validation error in its card's metric. */
static json_t *chosen_by_json(const hml__model_view *m, const hml__candidate *pick)
{
	if (!isnan(pick->qoi_error))
		return json_pack("{s:s, s:f, s:s}", "metric", "qoi_error", "value", pick->qoi_error,
		                 "source", pick->qoi_source ? pick->qoi_source : "?");
	return json_pack("{s:s, s:o}", "metric", strcmp(m->metric, "mape") == 0 ? "val_mape" :
	                 "val_rmse", "value", hml__json_real(m->val_error));
}

static void print_chosen_by(const char *pid, const hml__model_view *m,
                            const hml__candidate *pick)
{
	if (isnan(pick->qoi_error))
		cmd_info("%s: --best chose model '%s' by its validation %s, %.4g (no candidate has "
		         "a QoI error)", pid, pick->model, strcmp(m->metric, "mape") == 0 ? "MAPE %" :
		         "RMSE", m->val_error);
	else if (pick->qoi_source && strcmp(pick->qoi_source, "iterative") == 0)
		cmd_info("%s: --best chose model '%s' by its QoI error, %.4g (the application's "
		         "primary QoI after its iterative search's run at k %lld, interleave %lld)",
		         pid, pick->model, pick->qoi_error, m->k, m->interleave > 0 ? m->interleave : 0);
	else
		cmd_info("%s: --best chose model '%s' by its QoI error, %.4g (the application's "
		         "primary QoI on a search's QoI check)", pid, pick->model, pick->qoi_error);
}

/* A model whose test error is within 10% of a constant's (the card's
 * test_rmse_const, hml-train(1)) has learned next to nothing from its
 * inputs, however fast and accurate it looks. */
static void print_constant(const char *pid, const char *id, const hml__model_view *m)
{
	double c = hml__json_number(m->metrics, "test_rmse_const");
	double t = hml__json_number(m->metrics, "test_rmse");

	if (c > 0 && t >= 0.9 * c)
		cmd_warn("%s: model '%s' is no better than a constant on its test rows (RMSE %.4g, "
		         "each output's training mean %.4g): it has learned little from its inputs",
		         pid, id, t, c);
}

/* The informational lines: the QoI check's result, then what was deployed
 * with the figures the choice used. */
static void print_deployed(const char *pid, const char *id, const char *label,
                           const char *workflow, const hml__model_view *m,
                           const hml__candidate *pick, const json_t *qoi_check)
{
	const char *metric = m->metric && strcmp(m->metric, "mape") == 0 ? "MAPE %" : "RMSE";

	if (qoi_check)
		cmd_info("%s: model '%s' gives %s %s %.4g on the check run (seed %lld; %zu of the "
		         "front's %lld models checked)", pid, id,
		         hml__json_string(qoi_check, "dataset"), hml__json_string(qoi_check, "metric"),
		         hml__json_number(qoi_check, "error"),
		         (long long)json_integer_value(json_object_get(qoi_check, "seed")),
		         json_array_size(json_object_get(qoi_check, "checks")),
		         (long long)json_integer_value(json_object_get(qoi_check, "front")));
	if (isnan(pick->latency))
		cmd_info("%s: deployed model '%s' for region '%s' of workflow '%s' "
		         "(validation %s %.4g; its card has no latency for this target)", pid, id,
		         label, workflow, metric, m->val_error);
	else if (isnan(hml__candidate_run_cost(pick)))
		cmd_info("%s: deployed model '%s' for region '%s' of workflow '%s' "
		         "(validation %s %.4g, %.3g us per sample)", pid, id, label, workflow,
		         metric, m->val_error, pick->latency * 1e6);
	else
		cmd_info("%s: deployed model '%s' for region '%s' of workflow '%s' "
		         "(validation %s %.4g, %.3g us per sample; per run of %.0f rows, %.3g s: "
		         "%.3g s start-up)", pid, id, label, workflow, metric, m->val_error,
		         pick->latency * 1e6, pick->rows_per_run, hml__candidate_run_cost(pick),
		         pick->startup);
	if (best)
		print_chosen_by(pid, m, pick);
	print_predicted(pid, pick);
	print_constant(pid, id, m);
}

/* stdout: the deployment (and compiled model) as JSON, or the environment
 * as shell export lines. */
static void print_result(const hml__store *s, const char *pid, const char *cid, const json_t *env)
{
	if (g_cmd.json) {
		const json_t *d = hml__store_find(s, "deployments", pid);
		json_t *doc = json_pack("{s:O}", "deployment", d);

		if (cid[0])
			json_object_set(doc, "compiled", (json_t *)hml__store_find(s, "compiled", cid));
		cmd_json_print(doc);
	} else {
		const char *key;
		json_t *v;

		json_object_foreach((json_t *)env, key, v) {
			printf("export %s=", key);
			cmd_print_shell_word(json_string_value(v), 1);
			putchar('\n');
		}
	}
}

/* --guard: the guard file, named in env as HML_GUARD_<LABEL> and in the
 * deployment file (*gpath, absolute, the caller's). */
static int add_guard(hml__store *s, const hml__model_view *m, const char *label,
                     const cmd_deploy_form *form, json_t *env, json_t **guard_rec, char **gpath)
{
	char name[HML__ENVNAME_MAX];
	int rc;

	if ((rc = cmd_deploy_guard(s, m->json, &guard, form, gpath, guard_rec)) < 0)
		return rc;
	if ((rc = hml__envname_region(name, sizeof(name), HML__ENV_GUARD, label)) == 0)
		json_object_set_new(env, name, json_string(*gpath));
	return rc;
}

int cmd_deploy(int argc, char **argv)
{
	hml__store *s = NULL;
	hml__workflow *w = NULL;
	hml__model_view model;
	json_t *rec = NULL, *env = NULL, *qoi_check = NULL, *guard_rec = NULL, *chosen_by = NULL;
	const char *id, *label;
	char *path = NULL, *so_path = NULL, *gpath = NULL, *watch = NULL, *abs_dir = NULL, pid[32], cid[32] = "", rel[128];
	hml__candidate pick = { NULL, HML__TARGET_TORCHSCRIPT, NAN, NAN, NAN, NAN,
	                        { 0, 0, 0, 0, 0, 0, 0, NAN, NAN, 0 }, NAN, NULL, 0, { NAN, 0 } };
	hml__model_run run;
	int first, rc, code = HML_EXIT_OK, interleave = 0;

	if ((rc = cmd_parse(&spec, argc, argv, &first)) != 0)
		return rc > 0 ? cmd_finish(HML_EXIT_OK) : HML_EXIT_USAGE;
	if ((rc = check_usage(first < argc)) != 0)
		return rc;
	if ((rc = hml__store_open(&s, g_cmd.dir, 0)) < 0)
		goto fail;
	if (first < argc && (rc = hml__checked_model(s, argv[first], &model, &path)) < 0)
		goto fail;
	if ((rc = choose(s, first < argc ? argv[first] : NULL, &pick, &qoi_check)) < 0)
		goto fail;
	id = pick.model;
	if ((!path && (rc = hml__checked_model(s, id, &model, &path)) < 0) ||
	    (rc = hml__checked_model_workflow(s, &model, &w)) < 0)
		goto fail;
	label = model.region;
	if (pick.target == HML__TARGET_C) {
		if ((rc = cmd_deploy_compile(s, model.json, path, march, cid, sizeof(cid))) < 0 ||
		    (rc = hml__checked_file(s, hml__store_find(s, "compiled", cid), "compiled model",
		                            "library", "compiled", &so_path)) < 0)
			goto fail;
	}
	if ((rc = hml__deployfile_rel(rel, sizeof(rel), label)) < 0 ||
	    !(abs_dir = hml__path_abs(hml__store_dir(s))) ||
	    !(watch = hml__path_join(abs_dir, rel))) {
		rc = rc < 0 ? rc : hml__error_oom();
		goto fail;
	}
	if ((rc = cmd_deploy_model_run(&run, &interleave, w, &model)) < 0)
		goto fail;
	if (!(env = cmd_deploy_env(w, label, so_path ? so_path : path, interleave, watch))) {
		rc = hml_error_last()->code;
		goto fail;
	}
	{
		cmd_deploy_form form = { so_path ? so_path : path, cid, march };

		if (guard.kind != HML__GUARD_NONE &&
		    (rc = add_guard(s, &model, label, &form, env, &guard_rec, &gpath)) < 0)
			goto fail;
	}
	if (best && !(chosen_by = chosen_by_json(&model, &pick))) {
		rc = hml__error_oom();
		goto fail;
	}
	if (!(rec = deployment_record(id, label, w->name, selection_name(first < argc), cid, &pick,
	                              qoi_check, env, guard_rec, chosen_by)) ||
	    json_object_set_new(rec, "run", hml__model_run_json(&run)) < 0) {
		rc = hml__error_oom();
		goto fail;
	}
	cmd_deploy_warn_swap(s, label, id, &run, w);
	rc = hml__store_add(s, "deployments", rec, NULL, 0, 0, pid, sizeof(pid));
	rec = NULL;   /* the store's now, or released by it */
	if (rc < 0 || (rc = cmd_deploy_write_file(s, pid, label, cid[0] ? cid : id,
	                                          so_path ? so_path : path, gpath, &run, w)) < 0)
		goto fail;
	print_deployed(pid, id, label, w->name, &model, &pick, qoi_check);
	cmd_deploy_print_run(pid, id, w, &run);
	if (first >= argc && !search)
		print_origin(pid, s, &model);
	print_result(s, pid, cid, env);
	goto done;
fail:
	code = cmd_fail(rc);
done:
	json_decref(rec);
	json_decref(env);
	json_decref(qoi_check);
	json_decref(guard_rec);
	json_decref(chosen_by);
	free(path);
	free(so_path);
	free(gpath);
	free(watch);
	free(abs_dir);
	hml__workflow_free(w);
	hml__store_free(s);
	return cmd_finish(code);
}
