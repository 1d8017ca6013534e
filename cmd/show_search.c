/*
 * cmd/show_search.c - hml show's searches: their table in the listing, and
 * one search (hml show sN): its status, counts, Pareto front and plots
 * (lib/search/results.h reads them from the search's history).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "core/json.h"
#include "deploy/metrics.h"
#include "search/duration.h"
#include "search/history.h"
#include "search/plot.h"
#include "search/results.h"
#include "show.h"
#include "store/records.h"
#include "store/store.h"
#include "sys/fsutil.h"

/* A search's results from its history; a history that cannot be read is
 * a warning, and the row shows what the record has. */
static int search_results(hml__search_results *r, hml__store *s, const hml__search_view *v)
{
	int rc = hml__search_results_load(r, hml__store_dir(s), v);

	if (rc < 0) {
		if (rc == HML_ENOMEM)
			return rc;
		cmd_warn("search '%s': %s", v->id ? v->id : "?", hml_error_last()->message);
		hml__search_results_release(r);
		return 1;
	}
	return 0;
}

/* A search record as readers see it: its status hml__search_status's (a
 * search left "running" by kill -9 is "interrupted"). New reference. */
json_t *show_search_record(const hml__store *s, const json_t *rec)
{
	const char *status = hml__search_status(s, rec);
	json_t *c = json_copy((json_t *)rec);

	if (c && status)
		json_object_set_new(c, "status", json_string(status));
	return c;
}

int show_search_list(hml__store *s)
{
	show_table t = { 9, { "ID", "REGION", "CONFIGS", "TRIALS", "FAILED", "FRONT", "METRIC",
	                      "BEST ERROR", "STATUS" }, NULL, 0, 0 };
	hml__search_view v;
	int rc = 0;

	for (size_t i = 0; hml__records_search_at(&v, s, i); i++) {
		char configs[64] = "", ended[32] = "", failed[32] = "", front[32] = "", best[32] = "";
		const char *row[9];
		hml__search_results r;
		int got = search_results(&r, s, &v);

		if (got < 0) {
			rc = got;
			goto done;
		}
		if (got == 0) {
			/* configurations started of the budget (what --budget counts) */
			if (isfinite(v.budget))
				snprintf(configs, sizeof(configs), "%zu/%.0f", r.configs, v.budget);
			else
				snprintf(configs, sizeof(configs), "%zu", r.configs);
			snprintf(ended, sizeof(ended), "%zu", r.ended);
			snprintf(failed, sizeof(failed), "%zu", r.failed);
			snprintf(front, sizeof(front), "%zu", r.nfront);
			if (r.nfront)
				snprintf(best, sizeof(best), "%.4g", hml__search_results_best(&r));
		}
		hml__search_results_release(&r);
		row[0] = v.id;
		row[1] = v.region;
		row[2] = configs;
		row[3] = ended;
		row[4] = failed;
		row[5] = front;
		row[6] = v.metric;
		row[7] = best;
		row[8] = hml__search_status(s, v.json);
		if ((rc = show_table_row(&t, row)) < 0)
			goto done;
	}
	show_table_print(&t, "searches");
done:
	show_table_release(&t);
	return rc;
}

/* The JSON key of a result's error: val_rmse, or val_mape in per cent. */
static const char *error_key(const hml__search_results *r)
{
	if (strcmp(r->metric, "qoi") == 0)   /* an iterative application's */
		return "qoi_error";
	return strcmp(r->metric, "mape") == 0 ? "val_mape" : "val_rmse";
}

/* The results as JSON: the metric, counts, front, every result, the
 * convergence (best_error in the metric). */
static json_t *results_json(const hml__search_results *r)
{
	json_t *front = json_array(), *all = json_array(), *conv = json_array();

	for (size_t j = 0; j < r->nfront; j++) {
		const hml__sr_trial *t = &r->res[r->front[j]];

		json_array_append_new(front, json_pack("{s:I, s:I, s:o, s:o, s:o, s:o, s:I, s:O}",
			"trial", (json_int_t)t->trial, "config", (json_int_t)t->config,
			"model", t->model[0] ? json_string(t->model) : json_null(),
			"arch", t->arch ? json_string(t->arch) : json_null(),
			error_key(r), hml__json_real(t->error),
			"latency_seconds_per_sample", hml__json_real(t->latency_s),
			"params", (json_int_t)t->params,
			"config_params", t->sample ? t->sample : json_null()));
	}
	for (size_t i = 0; i < r->nres; i++) {
		const hml__sr_trial *t = &r->res[i];

		json_array_append_new(all, json_pack("{s:I, s:I, s:I, s:I, s:o, s:o, s:I, s:b, s:b, s:b}",
			"trial", (json_int_t)t->trial, "config", (json_int_t)t->config,
			"rung", (json_int_t)t->rung, "ended", (json_int_t)t->ended,
			error_key(r), hml__json_real(t->error),
			"latency_seconds_per_sample", hml__json_real(t->latency_s),
			"params", (json_int_t)t->params, "top", t->top, "feasible", t->feasible,
			"front", t->front));
	}
	for (size_t k = 0; k < r->ended; k++)
		json_array_append_new(conv, json_pack("{s:I, s:o, s:o}", "ended", (json_int_t)(k + 1),
			"best_error", hml__json_real(r->best[k]), "hypervolume", hml__json_real(r->hv[k])));
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:[o, o], s:o}",
		"metric", r->metric, "configs", (json_int_t)r->configs, "ended", (json_int_t)r->ended,
		"failed", (json_int_t)r->failed, "top_rung", (json_int_t)r->top_rung,
		"front_size", (json_int_t)r->nfront, "front", front, "trials", all,
		"hypervolume_reference", hml__json_real(r->ref[0]), hml__json_real(r->ref[1]),
		"convergence", conv);
}

/* The plots registered in the record whose file exists: role -> path
 * (absolute when `absolute`, else inside the experiment as given). */
static json_t *plots_json(hml__store *s, const json_t *rec, int absolute)
{
	json_t *o = json_object();

	for (int k = 0; o && k < HML__PLOT_COUNT; k++) {
		const char *rel = hml__record_file(rec, hml__plot_roles[k]);
		char *path = rel ? hml__store_path(s, rel) : NULL;
		char *abs = path && absolute ? hml__path_abs(path) : NULL;

		if (path && access(path, F_OK) == 0)
			json_object_set_new(o, hml__plot_roles[k], json_string(abs ? abs : path));
		free(path);
		free(abs);
	}
	return o;
}

/* The architecture and what else the configuration chose that the arch
 * does not say (an iterative application's k and interleave, the rollout
 * trained with): "cnn:4:tanh  k 10  interleave 2  rollout 4". */
static void arch_and_choices(char *buf, size_t size, const hml__sr_trial *x)
{
	static const char *const keys[] = { "k", "interleave", "rollout" };
	size_t used = (size_t)snprintf(buf, size, "%s", x->arch ? x->arch : "");

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && used < size; i++) {
		const json_t *v = json_object_get(x->sample, keys[i]);

		if (json_is_integer(v))
			used += (size_t)snprintf(buf + used, size - used, "  %s %lld", keys[i],
			                         (long long)json_integer_value(v));
	}
}

static void print_search(hml__store *s, const hml__search_view *v, const hml__search_results *r,
                         const json_t *plots)
{
	show_table t = { 6, { strcmp(r->metric, "qoi") == 0 ? "QOI ERROR" :
	                        strcmp(r->metric, "mape") == 0 ? "VAL MAPE %" : "VAL RMSE",
	                      "LATENCY/SAMPLE", "PARAMS", "MODEL", "TRIAL", "ARCH" },
	                 NULL, 0, 0 };
	char *hist = v->history ? hml__store_path(s, v->history) : NULL;
	const char *role;
	const json_t *p;

	const char *status = hml__search_status(s, v->json);

	printf("search %s: region '%s', status %s\n", v->id, v->region ? v->region : "-",
	       status ? status : "-");
	if (status && strcmp(status, "interrupted") == 0)
		printf("interrupted: no search is running it; continue it with 'hml search --resume "
		       "%s'\n", v->id);
	if (strcmp(r->metric, "qoi") == 0)
		printf("error metric: the primary QoI's error after the application's run at the "
		       "trial's k and interleave\n");
	else
		printf("error metric: validation %s\n", strcmp(r->metric, "mape") == 0 ?
		       "MAPE (per cent)" : "RMSE");
	if (status && strcmp(status, "stopped") == 0) {
		char lim[32];

		hml__search_duration_format(lim, sizeof(lim), hml__json_number(v->json, "time_limit"));
		printf("stopped at the time limit (%s): continue it with 'hml search --resume %s'\n",
		       lim, v->id);
	}
	printf("configurations started: %zu of a budget of %.0f; trials ended: %zu, failed: %zu\n",
	       r->configs, isfinite(v->budget) ? v->budget : 0.0, r->ended, r->failed);
	if (isfinite(v->seed) && isfinite(v->workers))
		printf("seed %.0f, %.0f worker%s%s\n", v->seed, v->workers, v->workers == 1 ? "" : "s",
		       v->deterministic ? ", deterministic (trials chosen in lockstep with their results)" : "");
	printf("constraints:%s", isnan(r->max_error) && isnan(r->max_latency) &&
	       isnan(r->max_params) ? " none" : "");
	if (!isnan(r->max_error))
		printf(" max error %.4g%s", r->max_error, strcmp(r->metric, "mape") == 0 ? "%" : "");
	if (!isnan(r->max_latency))
		printf(" max latency %.4g s", r->max_latency);
	if (!isnan(r->max_params))
		printf(" max params %.0f", r->max_params);
	printf("\n\n");
	for (size_t j = 0; j < r->nfront; j++) {
		const hml__sr_trial *x = &r->res[r->front[j]];
		char e[32], l[32], n[32], tr[32], arch[600];
		const char *row[6];

		snprintf(e, sizeof(e), "%.4g", x->error);
		hml__format_seconds(l, sizeof(l), x->latency_s, 3);
		snprintf(n, sizeof(n), "%lld", (long long)x->params);
		snprintf(tr, sizeof(tr), "%ld", x->trial);
		row[0] = e;
		row[1] = l;
		row[2] = x->params >= 0 ? n : "";
		row[3] = x->model;
		row[4] = tr;
		arch_and_choices(arch, sizeof(arch), x);
		row[5] = arch;
		if (show_table_row(&t, row) < 0)
			break;
	}
	show_table_print(&t, "Pareto front (top rung, feasible; by error)");
	show_table_release(&t);
	printf("\nhistory: %s\n", hist ? hist : "-");
	if (json_object_size(plots) == 0)
		printf("plots: none (draw them with 'hml show %s --plot')\n", v->id);
	json_object_foreach((json_t *)plots, role, p)
		printf("plot %s: %s\n", role, json_string_value(p));
	free(hist);
}

int show_search_one(hml__store *s, const char *id, int plot)
{
	hml__search_view v;
	hml__search_results r;
	json_t *plots = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	if (plot && (rc = hml__search_plot_write(s, id)) < 0)
		return rc;
	if ((rc = hml__records_search(&v, s, id)) < 0 ||
	    (rc = hml__search_results_load(&r, hml__store_dir(s), &v)) < 0)
		goto done;
	if (!(plots = plots_json(s, v.json, g_cmd.json))) {
		rc = hml__error_oom();
		goto done;
	}
	if (g_cmd.json)
		cmd_json_print(json_pack("{s:o, s:o, s:O}", "search", show_search_record(s, v.json),
		                         "results", results_json(&r), "plots", plots));
	else
		print_search(s, &v, &r, plots);
done:
	json_decref(plots);
	hml__search_results_release(&r);
	return rc;
}

int cmd_show_plots(hml__store *s, const char *id)
{
	int rc = hml__search_plot_write(s, id);

	if (rc < 0)
		cmd_warn("search '%s' succeeded, but its plots were not drawn: %s", id,
		         hml_error_last()->message);
	return rc;
}

