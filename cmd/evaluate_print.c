/*
 * hml evaluate's report on stdout: the QoI errors, the error over time,
 * the measured and predicted speedups (cmd/evaluate.c runs and records).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "core/json.h"
#include "core/util.h"
#include "deploy/metrics.h"
#include "evaluate.h"
#include "evaluate_mpi.h"
#include "store/records.h"

/* Predicted against measured. */
static void print_predicted(const evaluation *e, double region, double e2e)
{
	char cost[32], lat[64], a[32], b[32], c[32], d[32];

	if (isnan(e->pred.region)) {
		printf("predicted:       unknown (%s)\n", isnan(e->pred.cost_per_row) ?
		       "the training data record no cost of the region's original code" :
		       "no latency of the model in this form");
		return;
	}
	hml__format_speedup(a, sizeof(a), e->pred.region);
	hml__format_speedup(b, sizeof(b), e->pred_run);
	hml__format_speedup(c, sizeof(c), region);
	hml__format_speedup(d, sizeof(d), e2e);
	printf("predicted:       region %s, end to end %s (original code %s per row, model %s); "
	       "measured %s and %s\n", a, b,
	       hml__format_seconds(cost, sizeof(cost), e->pred.cost_per_row, 2),
	       hml__prediction_model_text(lat, sizeof(lat), &e->pred), c, d);
}

/* Amdahl's bound on these runs (lib/store/cost.h hml__speedup_ceiling). */
static void print_ceiling(const evaluation *e, const hml__summary *aw, const hml__summary *ar)
{
	hml__summary c;
	char speed[128];

	hml__summary_compute(&c, e->ceiling, (size_t)e->nrep);
	if (isnan(c.mean) || !(aw->mean > 0))
		return;
	if (isinf(c.mean))
		snprintf(speed, sizeof(speed), "unbounded");
	else
		hml__format_speedup_range(speed, sizeof(speed), &c);
	printf("ceiling:         %s end to end, for a model that cost nothing: the calls it "
	       "answers took %.3g%% of the accurate runs' time\n", speed,
	       100.0 * e->pred.model_share * ar->mean / e->ranks / aw->mean);
}

void cmd_evaluate_print(const evaluation *e)
{
	hml__summary e2e, reg, aw, sw, ar, sr;
	char speed[128];
	const size_t n = (size_t)e->nrep;

	if (g_cmd.json) {
		cmd_json_print(json_pack("{s:O}", "evaluation",
		                         hml__store_find(e->s, "evaluations", e->eid)));
		return;
	}
	hml__summary_compute(&e2e, e->speed_e2e, n);
	hml__summary_compute(&reg, e->speed_region, n);
	hml__summary_compute(&aw, e->acc.wall, n);
	hml__summary_compute(&sw, e->sur.wall, n);
	hml__summary_compute(&ar, e->acc.region, n);
	hml__summary_compute(&sr, e->sur.region, n);
	printf("%s: model %s (%s) on workflow %s, %d measured runs each", e->eid, e->id,
	       e->target, e->w->name, e->nrep);
	printf(e->launcher ? ", %d MPI ranks (QoI over all ranks)\n" : "\n", e->ranks);
	cmd_evaluate_qoi_print(hml__store_find(e->s, "evaluations", e->eid));
	cmd_evaluate_over_time_print(hml__store_find(e->s, "evaluations", e->eid));
	hml__format_speedup_range(speed, sizeof(speed), &e2e);
	printf("end to end:      accurate %.3f s (sd %.3f), surrogate %.3f s (sd %.3f), speedup %s\n",
	       aw.mean, aw.stdev, sw.mean, sw.stdev, speed);
	hml__format_speedup_range(speed, sizeof(speed), &reg);
	printf("region %-8s accurate %.3f s (sd %.3f), surrogate %.4f s (sd %.4f), speedup %s\n",
	       e->label, ar.mean, ar.stdev, sr.mean, sr.stdev, speed);
	print_ceiling(e, &aw, &ar);
	{
		const json_t *c = json_object_get(hml__store_find(e->s, "evaluations", e->eid),
		                                  "card_latency");
		double v = hml__json_number(c, "seconds_per_sample");

		if (isfinite(v))
			printf("%-16s %s %.4g us per sample at batch %lld\n",
			       e->lat_source && strcmp(e->lat_source, "measured") == 0 ? "latency:" :
			       "model card:", e->target, v * 1e6,
			       (long long)json_integer_value(json_object_get(c, "batch")));
	}
	cmd_evaluate_mpi_print(hml__store_find(e->s, "evaluations", e->eid));
	cmd_evaluate_guard_print(hml__store_find(e->s, "evaluations", e->eid));
	print_predicted(e, reg.mean, e2e.mean);
	cmd_app_verification_print(hml__store_find(e->s, "evaluations", e->eid));
	printf("report: eval/%s.json\n", e->eid);
}
