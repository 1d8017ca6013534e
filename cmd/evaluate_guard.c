/*
 * hml evaluate's guard report (cmd/evaluate_guard.c): the rows the
 * deployment's guard checked and sent to the original code over the
 * measured surrogate runs, and what checking them cost, as recorded in
 * the evaluation ("guard", hml-manifest(5)) and printed from that record.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "core/json.h"
#include "store/store.h"
#include "sys/fsutil.h"

int cmd_evaluate_guard_plan(const hml__store *s, const json_t *deployment, char **path,
                            const char **spec)
{
	const json_t *g = json_object_get(deployment, "guard");
	const char *file = hml__json_string(g, "file");
	char *rel;

	*path = NULL;
	*spec = NULL;
	if (!file)
		return 0;
	*spec = hml__json_string(g, "spec");
	if (!(rel = hml__path_join(hml__store_dir(s), file)))
		return hml__error_oom();
	*path = hml__path_abs(rel);   /* the application runs in a scratch directory */
	free(rel);
	return *path ? 0 : hml__error_set(HML_ENOTFOUND, "the deployment's guard file '%s' is "
	                                  "missing", file);
}

json_t *cmd_evaluate_guard_json(const char *spec, const cmd_guard_counts *c, int nrep,
                                double region_s)
{
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:o, s:o, s:o}",
		"spec", spec ? spec : "none",
		"checked_rows", (json_int_t)c->checked_rows, "guarded_rows", (json_int_t)c->guarded_rows,
		"guarded_calls", (json_int_t)c->guarded_calls, "whole_calls", (json_int_t)c->whole_calls,
		"guarded_fraction", hml__json_real(c->checked_rows ?
			(double)c->guarded_rows / (double)c->checked_rows : NAN),
		"seconds", hml__json_real(nrep > 0 ? c->seconds / nrep : NAN),
		"region_fraction", hml__json_real(region_s > 0 ? c->seconds / region_s : NAN));
}

void cmd_evaluate_guard_print(const json_t *evaluation)
{
	const json_t *g = json_object_get(evaluation, "guard");
	const char *spec = hml__json_string(g, "spec");
	double frac = hml__json_number(g, "guarded_fraction");

	if (!spec || strcmp(spec, "none") == 0)
		return;
	printf("guard:           %s, %lld of %lld rows guarded (%.2f%%) in %lld calls (%lld whole "
	       "calls), %.3g s per run (%.2f%% of the surrogate's region time)\n", spec,
	       (long long)json_integer_value(json_object_get(g, "guarded_rows")),
	       (long long)json_integer_value(json_object_get(g, "checked_rows")),
	       isnan(frac) ? 0.0 : 100.0 * frac,
	       (long long)json_integer_value(json_object_get(g, "guarded_calls")),
	       (long long)json_integer_value(json_object_get(g, "whole_calls")),
	       hml__json_number(g, "seconds"), 100.0 * hml__json_number(g, "region_fraction"));
}
