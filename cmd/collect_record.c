/*
 * cmd/collect_record.c - what hml collect writes about its runs
 * (collect_record.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "collect_record.h"
#include "core/json.h"
#include "core/util.h"
#include "deploy/metrics.h"
#include "store/cost.h"
#include "store/records.h"
#include "store/sampling.h"

/* ---- the application's output ---------------------------------------------- */

/* Append the run's output (if any) to the data set's log, between marker
 * lines (the footer is optional). */
int collect_log_append(const char *log, const char *run_log, const char *header,
                      const char *footer)
{
	FILE *out = fopen(log, "a"), *in;
	char buf[8192];
	size_t got;
	int rc = 0;

	if (!out)
		return hml__error_set(HML_EIO, "cannot write '%s': %s", log, strerror(errno));
	fprintf(out, "==> %s <==\n", header);
	if (run_log && (in = fopen(run_log, "r")) != NULL) {
		while ((got = fread(buf, 1, sizeof(buf), in)) > 0)
			fwrite(buf, 1, got, out);
		fclose(in);
	}
	if (footer)
		fprintf(out, "==> %s <==\n", footer);
	if (ferror(out) || fclose(out) != 0) {
		rc = hml__error_set(HML_EIO, "cannot write '%s': %s", log, strerror(errno));
	}
	return rc;
}

/* ---- the record -------------------------------------------------------------- */

static const char *dtype_name(hml_dtype t)
{
	return t == HML_F32 ? "float" : t == HML_F64 ? "double" : "unknown";
}

json_t *collect_regions_json(const hml__region_info *infos, size_t n,
                            const hml__cost_times *times, size_t ntimes)
{
	json_t *o = json_object();

	for (size_t i = 0; i < n; i++) {
		const hml__region_info *r = &infos[i];
		json_t *rec;

		rec = json_pack("{s:I, s:I, s:o, s:o, s:s, s:s, s:o, s:o}",
			"rows", (json_int_t)r->rows, "calls", (json_int_t)r->calls,
			"input_shape", cmd_json_shape(r->in_shape, r->in_ndim),
			"output_shape", cmd_json_shape(r->out_shape, r->out_ndim),
			"input_dtype", dtype_name(r->in_dtype),
			"output_dtype", dtype_name(r->out_dtype),
			"input_functor", r->input_functor ? json_string(r->input_functor) : json_null(),
			"output_functor", r->output_functor ? json_string(r->output_functor) : json_null());
		hml__sampling_put(rec, r->sampled ? &r->sampling : NULL);
		for (size_t j = 0; times && rec && j < ntimes; j++)
			if (strcmp(times[j].label, r->label) == 0)
				hml__cost_put(rec, &times[j], r->original_per_row);
		json_object_set_new(o, r->label, rec);
	}
	return o;
}

/* A run's record; "succeeded": it exited with one of the workflow's success codes. */
json_t *collect_run_json(int64_t seed, char *const *argv, const hml__proc_result *res,
                        const char *start_error, int succeeded)
{
	json_t *a = json_array(), *o;

	for (; *argv; argv++)
		json_array_append_new(a, hml__json_bytes(*argv));
	o = json_pack("{s:I, s:o, s:b}", "seed", (json_int_t)seed, "argv", a, "succeeded", succeeded);
	if (start_error) {
		json_object_update_new(o, json_pack("{s:s, s:s, s:n, s:f}", "status", "not started",
		                                    "error", start_error, "exit_code", "wall_seconds", 0.0));
		return o;
	}
	json_object_set_new(o, "status", json_string(hml__proc_describe(res)));
	json_object_set_new(o, "exit_code", res->exited ? json_integer(res->exit_code) : json_null());
	if (!res->exited && res->signal)
		json_object_set_new(o, "signal", json_integer(res->signal));
	json_object_set_new(o, "wall_seconds", json_real(res->wall_s));
	return o;
}

/* "16384 rows of region 'binomial'", joined for every region with rows. */
void collect_rows_text(char *buf, size_t size, const hml__region_info *infos, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld rows of region '%s'",
		                        i ? ", " : "", (long long)infos[i].rows, infos[i].label);
}

/* Region `label`'s share of the runs' time in data set `id` and the most
 * a surrogate can speed such runs up (lib/store/cost.h); NaN: unknown. */
static double ceiling_of(hml__store *s, const char *id, const char *label, double *share)
{
	hml__region_cost c;

	hml__cost_of_datasets(&c, s, label, &id, 1);
	return hml__cost_ceiling(&c, share);
}

/* For each region, the most a surrogate can make runs like these faster
 * (on stderr: stdout's one line is the data set's). */
static void print_ceilings(hml__store *s, const char *id, const hml__region_info *infos,
                           size_t ninfos)
{
	for (size_t i = 0; i < ninfos; i++) {
		double share, x = ceiling_of(s, id, infos[i].label, &share);
		char speed[32];

		if (isnan(x))
			continue;
		if (isinf(x)) {
			cmd_info("%s: region '%s' took all of the runs' time as measured: only a "
			         "surrogate's own cost bounds what it gives", id, infos[i].label);
			continue;
		}
		hml__format_speedup(speed, sizeof(speed), x);
		cmd_info("%s: region '%s' took %.3g%% of the runs' time: a surrogate can make runs "
		         "like these at most %s faster", id, infos[i].label, 100.0 * share, speed);
	}
}

static json_t *ceilings_json(hml__store *s, const char *id, const hml__region_info *infos,
                             size_t ninfos)
{
	json_t *o = json_object();
	double share;

	for (size_t i = 0; o && i < ninfos; i++)
		json_object_set_new(o, infos[i].label,
		                    hml__json_real(ceiling_of(s, id, infos[i].label, &share)));
	return o;
}

void collect_print_result(hml__store *s, const char *id, const json_t *runs,
                          const hml__region_info *infos, size_t ninfos, int64_t calls)
{
	hml__dataset_view d;
	size_t nruns = json_array_size(runs);
	char rows[1024];

	if (hml__records_dataset(&d, s, id) < 0) {
		cmd_warn("%s", hml_error_last()->message);
		return;
	}
	if (g_cmd.json) {
		cmd_json_print(json_pack("{s:O, s:o}", "dataset", d.json, "ceiling",
		                         ceilings_json(s, id, infos, ninfos)));
		return;
	}
	collect_rows_text(rows, sizeof(rows), infos, ninfos);
	printf("%s: %s (%zu run%s, %lld call%s) -> %s%s\n", id, rows, nruns,
	       nruns == 1 ? "" : "s", (long long)calls, calls == 1 ? "" : "s",
	       d.file ? d.file : "?", d.complete ? "" : " (incomplete)");
	print_ceilings(s, id, infos, ninfos);
}
