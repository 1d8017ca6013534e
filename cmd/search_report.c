/*
 * cmd/search_report.c - what hml search prints at its end: the counts, the
 * Pareto front with each model's predicted speedup, the region's cost and
 * the ceiling any model meets (lib/store/cost.h), the QoI check.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "core/json.h"
#include "deploy/latency.h"
#include "deploy/metrics.h"
#include "search/coordinator.h"
#include "search/history.h"
#include "search/iterative.h"
#include "search/plan.h"
#include "store/cost.h"
#include "store/store.h"

double cmd_search_ceiling(const hml__search_plan *p, hml__store *s, double *share)
{
	hml__region_cost c;

	hml__cost_of_datasets(&c, s, p->region, p->ds_ids, p->nds);
	return hml__cost_ceiling(&c, share);
}

/* The region's cost, the speedup column's reference; an empty front said. */
static void print_cost(const hml__search_plan *p, hml__store *s, size_t nfront)
{
	char cost[32], most[32];
	double share, x;

	if (isnan(p->region_cost)) {
		printf("  (no predicted speedup: the data record no cost of the region's original "
		       "code)\n");
		return;
	}
	hml__format_seconds(cost, sizeof(cost), p->region_cost, 2);
	printf("  region's original code: %s per row; speedup: of the region, predicted (moving "
	       "rows and the interleave's original calls counted)\n", cost);
	if (isfinite(x = cmd_search_ceiling(p, s, &share))) {
		hml__format_speedup(most, sizeof(most), x);
		printf("  ceiling: the region took %.3g%% of the collected runs' time: no model makes "
		       "runs like them more than %s faster end to end\n", 100.0 * share, most);
	}
	if (nfront == 0)
		cmd_warn("search %s: no model on the front: none ran faster than the region's "
		         "original code (%s per row) within the constraints; a surrogate does not pay "
		         "here, and hml deploy has nothing of this search to pick", p->id, cost);
}

size_t cmd_search_top_rung_ok(const hml__search_plan *p, hml__coordinator *c)
{
	hml__coordinator_trial t;
	size_t k = 0;

	for (size_t i = 0; hml__coordinator_trial_at(&t, c, i) == 0; i++)
		k += t.rung + 1 == p->rungs &&
		     (t.status == HML__HIST_OK || t.status == HML__HIST_KEPT);
	return k;
}

void cmd_search_report(const hml__search_plan *p, hml__store *s, hml__coordinator *co)
{
	const json_t *rec = hml__store_find(s, "searches", p->id);
	const json_t *front = json_object_get(rec, "front"), *e, *c = json_object_get(rec, "counts");
	hml__coordinator_counts n;
	size_t i;
	int mape = p->base.metric && strcmp(p->base.metric, "mape") == 0;
	const char *key = p->iterative ? "qoi_error" : mape ? "val_mape" : "val_rmse";

	if (g_cmd.json) {
		cmd_json_print(json_pack("{s:O}", "search", rec));
		return;
	}
	hml__coordinator_counts_of(&n, co);
	printf("search %s: region '%s', %lld configurations, %lld trials (%lld failed, %lld re-run) "
	       "in %.1f s\n", p->id, p->region,
	       (long long)json_integer_value(json_object_get(c, "configs")),
	       (long long)json_integer_value(json_object_get(c, "trials")),
	       (long long)json_integer_value(json_object_get(c, "failed")),
	       (long long)json_integer_value(json_object_get(c, "reruns")),
	       hml__json_number(rec, "seconds"));
	if (p->iterative)   /* lib/search/iterative.h */
		printf("Pareto front (%zu): error of QoI '%s' (%s) after the application's run at "
		       "the trial's k and interleave against %s latency at batch %lld\n",
		       json_array_size(front), p->w->qoi[0].dataset, p->w->qoi[0].metric,
		       hml__target_name(p->target), (long long)p->base.infer_batch);
	else
		printf("Pareto front (%zu): validation %s against %s latency at batch %lld\n",
		       json_array_size(front), mape ? "MAPE (per cent)" : "RMSE",
		       hml__target_name(p->target), (long long)p->base.infer_batch);
	/* (stopped at the time limit, or no top-rung trial ended well, an empty
	 * front is no verdict on the region: no warning) */
	print_cost(p, s, (hml__json_string(rec, "status") && strcmp(hml__json_string(rec, "status"),
	              "stopped") == 0) || cmd_search_top_rung_ok(p, co) == 0 ?
	              SIZE_MAX : json_array_size(front));
	printf("  %-12s %-14s %-9s %-8s %-6s %s\n", key, "us/sample", "params", "speedup",
	       "model", "arch");
	json_array_foreach(front, i, e) {
		double lat = hml__json_number(e, "latency_seconds_per_sample");
		const json_t *k = json_object_get(e, "k"), *il = json_object_get(e, "interleave");
		hml__prediction pr;
		char sp[32];

		hml__iterative_predict(&pr, s, p->iterative, p->region, json_is_integer(k) ?
		                       json_integer_value(k) : -1, json_is_integer(il) ?
		                       json_integer_value(il) : -1, lat, p->ds_ids, p->nds);
		hml__format_speedup(sp, sizeof(sp), pr.region);
		printf("  %-12.6g %-14.5g %-9lld %-8s %-6s %s", hml__json_number(e, key),
		       lat * 1e6, (long long)json_integer_value(json_object_get(e, "params")), sp,
		       hml__json_string(e, "model") ? hml__json_string(e, "model") : "-",
		       hml__json_string(e, "arch") ? hml__json_string(e, "arch") : "");
		for (const char *const *q = (const char *const[]){ "k", "interleave", "rollout", NULL };
		     *q; q++)   /* what the configuration chose beside its arch */
			if (json_is_integer(json_object_get(e, *q)))
				printf("  %s %lld", *q, (long long)json_integer_value(json_object_get(e, *q)));
		printf("\n");
	}
	cmd_search_qoi_print(rec);
	if (n.session_trials)
		printf("coordinator: %.3g ms per trial outside its waits (%.3g ms of CPU), of which "
		       "%.3g ms in the optimiser (%.3g ms of CPU)\n",
		       n.busy / (double)n.session_trials * 1e3,
		       n.busy_cpu / (double)n.session_trials * 1e3,
		       n.suggest / (double)n.session_trials * 1e3,
		       n.suggest_cpu / (double)n.session_trials * 1e3);
	printf("history: %s/search/%s/%s\n", hml__store_dir(s), p->id, HML__HISTORY_FILE);
}
