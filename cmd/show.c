/*
 * cmd/show.c - hml show / hml ls: what the experiment holds.
 *
 * This file: the listing, one record, the tables; the searches (a table of
 * the listing, hml show sN) are cmd/show_search.c.
 *
 * Read-only: the store is opened without create, no lock is taken (a
 * reader always sees a whole manifest), and nothing is written.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "deploy/latency.h"
#include "deploy/metrics.h"
#include "show.h"
#include "store/cost.h"
#include "store/records.h"
#include "store/select.h"
#include "store/store.h"
#include "sys/fsutil.h"

static const char description[] =
	"Without ID, lists the experiment's data sets, models, deployments,\n"
	"evaluations and searches as tables; a field a record does not have prints\n"
	"as '-', and the latest deployment is the active one. With ID (d1, m2, p1,\n"
	"e3), prints that record as 'key: value' lines, nested keys joined with\n"
	"dots (a compiled model, c1, says with input_stats whether it carries the\n"
	"statistics a guard needs); with a search's ID (s1), its Pareto front and\n"
	"where its plots are.\n"
	"With --json, prints the records as the manifest stores them. Nothing is\n"
	"created or changed, except by --plot, which draws a search's plots again.";

static int plot;

static const cmd_option options[] = {
	{ "plot", 0, CMD_OPT_FLAG, &plot, NULL,
	  "draw the plots of search ID again (gnuplot) and register them" },
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static const struct {
	char prefix;
	const char *collection;
} kinds[] = {
	{ 'd', "datasets" }, { 'm', "models" }, { 'p', "deployments" }, { 'e', "evaluations" },
	{ 's', "searches" },
};

/* ---- fields ------------------------------------------------------------- */

static const json_t *at(const json_t *v, const char *path)
{
	char key[64];

	while (v && *path) {
		size_t n = strcspn(path, ".");

		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		v = json_object_get(v, key);
		path += n + (path[n] == '.');
	}
	return v;
}

static const char *str(const json_t *v, const char *path)
{
	return json_string_value(at(v, path));
}

/* A number as "%.4g" (an integer as itself), or "" (printed '-') when
 * there is none. */
static const char *num(char *buf, size_t size, const json_t *v, const char *path)
{
	const json_t *n = at(v, path);

	buf[0] = '\0';
	if (json_is_integer(n))
		snprintf(buf, size, "%lld", (long long)json_integer_value(n));
	else if (json_is_number(n))
		snprintf(buf, size, "%.4g", json_number_value(n));
	return buf;
}

/* "binomial (16384), other (20)": regions with their rows. */
static void region_list(char *buf, size_t size, const json_t *regions)
{
	const char *label;
	const json_t *r;
	size_t len = 0;

	buf[0] = '\0';
	json_object_foreach((json_t *)regions, label, r) {
		const json_t *rows = json_object_get(r, "rows");
		int n;

		if (json_is_integer(rows))
			n = snprintf(buf + len, size - len, "%s%s (%lld)", len ? ", " : "", label,
			             (long long)json_integer_value(rows));
		else
			n = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", label);
		if (n < 0 || (size_t)n >= size - len)
			break;
		len += (size_t)n;
	}
}

/* "3" runs, or "3 (1 failed)" when some did not succeed (the workflow's
 * success codes; records of older hml: exit 0). */
static void run_count(char *buf, size_t size, const json_t *runs)
{
	size_t i, failed = 0;
	const json_t *r;

	buf[0] = '\0';
	if (!json_is_array(runs))
		return;
	json_array_foreach(runs, i, r) {
		const json_t *code = json_object_get(r, "exit_code");
		const json_t *ok = json_object_get(r, "succeeded");

		if (json_is_boolean(ok) ? !json_is_true(ok)
		                        : !json_is_integer(code) || json_integer_value(code) != 0)
			failed++;
	}
	if (failed)
		snprintf(buf, size, "%zu (%zu failed)", json_array_size(runs), failed);
	else
		snprintf(buf, size, "%zu", json_array_size(runs));
}

/* "K=V K=V" of a deployment's environment. */
static void env_list(char *buf, size_t size, const json_t *env)
{
	const char *k;
	const json_t *v;
	size_t len = 0;

	buf[0] = '\0';
	json_object_foreach((json_t *)env, k, v) {
		int n = snprintf(buf + len, size - len, "%s%s=%s", len ? " " : "", k,
		                 json_is_string(v) ? json_string_value(v) : "?");

		if (n < 0 || (size_t)n >= size - len)
			break;
		len += (size_t)n;
	}
}

static const char *yes_no(const json_t *v)
{
	return json_is_boolean(v) ? (json_is_true(v) ? "yes" : "no") : "";
}

/* ---- the listing -------------------------------------------------------- */

static int list_datasets(const json_t *recs)
{
	show_table t = { 5, { "ID", "WORKFLOW", "COMPLETE", "REGIONS (ROWS)", "RUNS" }, NULL, 0, 0 };
	const json_t *r;
	size_t i;
	int rc = 0;

	json_array_foreach(recs, i, r) {
		char regions[512], runs[64];
		hml__dataset_view d;
		const char *row[5];

		hml__dataset_view_of(&d, r);
		region_list(regions, sizeof(regions), d.regions);
		run_count(runs, sizeof(runs), json_object_get(r, "runs"));
		row[0] = d.id;
		row[1] = d.workflow_name ? d.workflow_name : str(r, "workflow");
		row[2] = yes_no(json_object_get(r, "complete"));
		row[3] = regions;
		row[4] = runs;
		if ((rc = show_table_row(&t, row)) < 0)
			goto done;
	}
	show_table_print(&t, "data sets");
done:
	show_table_release(&t);
	return rc;
}

/* A model's latency per sample in `target` (lib/deploy/latency.h): its card's,
 * else (TorchScript, records of older hml) train's metrics. */
static const char *latency_text(char *buf, size_t size, const json_t *r, int target)
{
	hml__latency l;

	if (hml__latency_of_record(&l, r) == 0)
		return hml__format_seconds(buf, size, l.seconds[target], 3);
	buf[0] = '\0';
	if (target == HML__TARGET_TORCHSCRIPT &&
	    json_is_number(at(r, "metrics.latency_seconds_per_sample")))
		hml__format_seconds(buf, size,
		                    json_number_value(at(r, "metrics.latency_seconds_per_sample")), 3);
	return buf;
}

static int list_models(const json_t *recs)
{
	show_table t = { 9, { "ID", "REGION", "ARCH", "VAL RMSE", "TEST RMSE", "TEST MAPE %",
	                      "TS LATENCY", "C LATENCY", "PARAMS" }, NULL, 0, 0 };
	const json_t *r;
	size_t i;
	int rc = 0;

	json_array_foreach(recs, i, r) {
		char val[32], test[32], mape[32], lat[32], clat[32], params[32];
		hml__model_view m;
		const char *row[9];

		hml__model_view_of(&m, r);
		row[0] = m.id;
		row[1] = m.region;
		row[2] = str(r, "arch");
		row[3] = num(val, sizeof(val), r, "metrics.val_rmse");
		row[4] = num(test, sizeof(test), r, "metrics.test_rmse");
		row[5] = num(mape, sizeof(mape), r, "metrics.test_mape");
		row[6] = latency_text(lat, sizeof(lat), r, HML__TARGET_TORCHSCRIPT);
		row[7] = latency_text(clat, sizeof(clat), r, HML__TARGET_C);
		row[8] = num(params, sizeof(params), r, "metrics.params");
		if ((rc = show_table_row(&t, row)) < 0)
			goto done;
	}
	show_table_print(&t, "models");
done:
	show_table_release(&t);
	return rc;
}

static int list_deployments(const json_t *recs)
{
	show_table t = { 5, { "ID", "MODEL", "SELECTION", "ACTIVE", "ENVIRONMENT" }, NULL, 0, 0 };
	size_t i, n = json_array_size(recs);
	const json_t *r;
	int rc = 0;

	json_array_foreach(recs, i, r) {
		char env[2048], sel[64];
		hml__deployment_view d;
		const char *row[5], *how = str(r, "selection");
		const json_t *bound = json_object_get(r, json_object_get(r, "max_qoi_error") ?
		                                         "max_qoi_error" : "max_error");
		const json_t *lbound = json_object_get(r, "max_latency");

		hml__deployment_view_of(&d, r);
		env_list(env, sizeof(env), d.env);
		/* "max-error 0.05": the bound(s) the model was chosen under. */
		if (how && json_is_number(bound) && json_is_number(lbound))
			snprintf(sel, sizeof(sel), "%s %.4g,%.4g", how, json_number_value(bound),
			         json_number_value(lbound));
		else if (how && (json_is_number(bound) || json_is_number(lbound)))
			snprintf(sel, sizeof(sel), "%s %.4g", how,
			         json_number_value(json_is_number(bound) ? bound : lbound));
		else
			snprintf(sel, sizeof(sel), "%s", how ? how : "");
		row[0] = d.id;
		row[1] = d.model;
		row[2] = sel;
		row[3] = i + 1 == n ? "yes" : "no";
		row[4] = env;
		if ((rc = show_table_row(&t, row)) < 0)
			goto done;
	}
	show_table_print(&t, "deployments");
done:
	show_table_release(&t);
	return rc;
}

static int list_evaluations(const json_t *recs)
{
	show_table t = { 5, { "ID", "MODEL", "QOI", "ERROR", "SPEEDUP" }, NULL, 0, 0 };
	const json_t *r;
	size_t i;
	int rc = 0;

	json_array_foreach(recs, i, r) {
		char qoi[160], err[64], speed[32];
		const char *metric = str(r, "qoi.metric"), *name = str(r, "qoi.dataset");
		const json_t *mean = at(r, "speedup.end_to_end.mean");
		const char *row[5];

		qoi[0] = err[0] = speed[0] = '\0';
		if (name || metric)
			snprintf(qoi, sizeof(qoi), "%s%s%s", name ? name : "-",
			         metric ? " " : "", metric ? metric : "");
		if (metric)
			num(err, sizeof(err), json_object_get(r, "qoi"), metric);
		if (json_is_number(mean))
			hml__format_speedup(speed, sizeof(speed), json_number_value(mean));
		row[0] = str(r, "id");
		row[1] = str(r, "model");
		row[2] = qoi;
		row[3] = err;
		row[4] = speed;
		if ((rc = show_table_row(&t, row)) < 0)
			goto done;
	}
	show_table_print(&t, "evaluations");
done:
	show_table_release(&t);
	return rc;
}

static int list_all(hml__store *s)
{
	const json_t *m = hml__store_manifest(s);
	char *abs = hml__path_abs(hml__store_dir(s));
	int rc = 0;

	if (!abs)
		return hml_error_last()->code;
	if (g_cmd.json) {
		json_t *doc = json_pack("{s:s}", "experiment", abs);

		for (size_t k = 0; doc && k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			json_t *c = json_object_get(m, kinds[k].collection);

			/* a manifest older than a collection lacks it: an empty one */
			json_object_set_new(doc, kinds[k].collection, c ? json_incref(c) : json_array());
		}
		if (doc) {   /* searches with their live status */
			json_t *arr = json_array(), *rec;
			size_t i;

			json_array_foreach(json_object_get(m, "searches"), i, rec)
				json_array_append_new(arr, show_search_record(s, rec));
			json_object_set_new(doc, "searches", arr);
		}
		if (!doc)
			rc = hml__error_oom();
		else
			cmd_json_print(doc);
		goto done;
	}
	printf("experiment '%s'\n\n", abs);
	if ((rc = list_datasets(json_object_get(m, "datasets"))) < 0)
		goto done;
	printf("\n");
	if ((rc = list_models(json_object_get(m, "models"))) < 0)
		goto done;
	printf("\n");
	if ((rc = list_deployments(json_object_get(m, "deployments"))) < 0)
		goto done;
	printf("\n");
	if ((rc = list_evaluations(json_object_get(m, "evaluations"))) < 0)
		goto done;
	printf("\n");
	rc = show_search_list(s);

done:
	free(abs);
	return rc;
}

/* ---- one record --------------------------------------------------------- */

static int has_container(const json_t *a)
{
	const json_t *v;
	size_t i;

	json_array_foreach(a, i, v)
		if (json_is_object(v) || json_is_array(v))
			return 1;
	return 0;
}

/* "key: value" lines, nested objects joined with '.', arrays of objects
 * indexed, arrays of plain values in JSON. */
static void print_flat(const char *prefix, const json_t *v)
{
	char key[512];

	if (json_is_object(v) && json_object_size(v) > 0) {
		const char *k;
		const json_t *x;

		json_object_foreach((json_t *)v, k, x) {
			snprintf(key, sizeof(key), "%s%s%s", prefix, *prefix ? "." : "", k);
			print_flat(key, x);
		}
	} else if (json_is_array(v) && has_container(v)) {
		const json_t *x;
		size_t i;

		json_array_foreach(v, i, x) {
			snprintf(key, sizeof(key), "%s[%zu]", prefix, i);
			print_flat(key, x);
		}
	} else if (json_is_string(v)) {
		char *c = show_table_cell(json_string_value(v));

		printf("%s: %s\n", prefix, c ? c : "");
		free(c);
	} else if (json_is_null(v)) {
		printf("%s: -\n", prefix);
	} else {
		char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(10));

		printf("%s: %s\n", prefix, text ? text : "?");
		free(text);
	}
}

/* A model's predicted speedup per deployment form, as hml deploy predicts
 * it (lib/store/select.h, cost.h): {"c": {"region", "end_to_end", ...}},
 * or NULL when its data record no cost of the region. */
static json_t *model_predictions(const hml__store *s, const char *id)
{
	hml__candidate *c = NULL;
	json_t *o = NULL;
	size_t n = 0;

	if (hml__select_candidates(&c, &n, s, NULL, (1u << HML__NTARGETS) - 1) < 0)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		hml__prediction p;

		if (strcmp(c[i].model, id) != 0)
			continue;
		hml__candidate_predict(&c[i], &p);
		if (isnan(p.cost_per_row))
			break;
		if (!o)
			o = json_object();
		json_object_set_new(o, hml__target_name(c[i].target), hml__prediction_json(&p));
	}
	free(c);
	return o;
}

static void print_predictions(const json_t *pred)
{
	const char *target;
	const json_t *v;
	char buf[32], e2e[32], cost[32], model[64];

	if (!pred) {
		printf("predicted speedup: unknown (the training data record no cost of the "
		       "region's original code)\n");
		return;
	}
	json_object_foreach((json_t *)pred, target, v) {
		hml__prediction p = { 0 };

		p.model_per_row = hml__json_number(v, "model_per_row");
		p.move_per_row = hml__json_number(v, "move_per_row");
		hml__format_speedup(buf, sizeof(buf), hml__json_number(v, "region"));
		hml__format_speedup(e2e, sizeof(e2e), hml__json_number(v, "end_to_end"));
		printf("predicted speedup as %s: region %s, end to end %s for a run as collected "
		       "(original code %s per row, model %s)%s\n", target, buf, e2e,
		       hml__format_seconds(cost, sizeof(cost), hml__json_number(v, "cost_per_row"), 2),
		       hml__prediction_model_text(model, sizeof(model), &p),
		       json_is_true(json_object_get(v, "slower")) ?
		       ": slower than the original code" : "");
	}
}

static int show_one(hml__store *s, const char *id)
{
	const json_t *rec = NULL;

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]) && !rec; k++)
		if (id[0] == kinds[k].prefix)
			rec = hml__store_find(s, kinds[k].collection, id);
	if (id[0] == 'c')   /* a compiled model: shown, not listed (its deployment is) */
		rec = hml__store_find(s, "compiled", id);
	if (!rec)
		return hml__error_set(HML_ENOTFOUND, "no record '%s' in experiment '%s'", id,
		                      hml__store_dir(s));
	if (id[0] == 's')
		return show_search_one(s, id, plot);
	if (plot)
		return hml__error_set(HML_EINVALID, "--plot draws a search's plots; '%s' is no search",
		                      id);
	if (g_cmd.json) {
		json_t *copy = json_deep_copy(rec);

		if (id[0] == 'm')
			json_object_set_new(copy, "predicted", model_predictions(s, id));
		cmd_json_print(copy);
	} else {
		print_flat("", rec);
		if (id[0] == 'm') {   /* a model: its card's latencies, its predicted speedups */
			json_t *pred = model_predictions(s, id);

			cmd_latency_print(rec, "");
			print_predictions(pred);
			json_decref(pred);
		}
	}
	return 0;
}

int cmd_show(int argc, char **argv)
{
	cmd_spec spec = {
		"show", "[options] [ID]",
		"list the experiment's data sets, models, deployments, evaluations and searches",
		description, options, 0, 1, NULL
	};
	hml__store *s = NULL;
	int first, rc;

	/* `hml ls` is the same command under its own name. */
	if (argv[0] && strcmp(argv[0], "ls") == 0)
		spec.name = "ls";
	if ((rc = cmd_parse(&spec, argc, argv, &first)) != 0)
		return rc > 0 ? HML_EXIT_OK : HML_EXIT_USAGE;
	if (plot && first >= argc) {
		cmd_error("show: --plot needs the ID of a search (s1, ...)");
		return HML_EXIT_USAGE;
	}
	if ((rc = hml__store_open(&s, g_cmd.dir, 0)) < 0)
		return cmd_fail(rc);
	rc = first < argc ? show_one(s, argv[first]) : list_all(s);
	hml__store_free(s);
	if (rc < 0)
		return cmd_fail(rc);
	return cmd_finish(HML_EXIT_OK);
}
