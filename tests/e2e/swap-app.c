/*
 * tests/e2e/swap-app.c - the long-running iterative application of
 * 136-hot-swap.bats: region "step" maps rows (a, b) to
 * y = sin(3a) + b * b, one batch call per step over the same rows (the
 * rows are fixed by --seed). Each step appends "step K mean M" to the log
 * file (flushed), then sleeps 10 ms; the program stops after --steps K
 * steps, or, with --until FILE, once FILE exists (at most 20000 steps).
 * --work W computes each row W times (an original code costly enough for
 * a surrogate to pay, for hml search). --range R draws a and b from
 * [-R, R] (default 1: the training range; 2 is out of distribution).
 * --subset 1 declares hml_region_subset_enable(): a guard sends only its
 * guarded rows to the original code, which computes those alone. Each
 * log line also gives the step's RMSE against the exact function and the
 * rows the guard sent to the original code in that step (140-guard-loop).
 * usage: swap-app [--rows N] [--seed S] [--steps K] [--until FILE] [--log FILE] [--work W]
 *                 [--range R] [--subset 1]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hml/hml.h>

static double next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*s >> 11) / 9007199254740992.0;
}

int main(int argc, char **argv)
{
	long rows = 1024, seed = 1, steps = 1, work = 1, subset = 0;
	double range = 1;
	uint64_t guarded_before = 0;
	const char *until = NULL, *logname = NULL;
	struct timespec pause = { 0, 10000000L };
	hml_region *r = NULL;
	hml_symbol sym[1];
	hml_array in[1], o[1];
	double *x, *y;
	FILE *log = NULL;
	uint64_t s;
	int rc = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--rows"))
			rows = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--seed"))
			seed = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--steps"))
			steps = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--until"))
			until = argv[i + 1], steps = 20000;
		else if (!strcmp(argv[i], "--log"))
			logname = argv[i + 1];
		else if (!strcmp(argv[i], "--work"))
			work = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--range"))
			range = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--subset"))
			subset = atol(argv[i + 1]);
	}
	x = malloc(sizeof(double) * 2 * (size_t)rows);
	y = malloc(sizeof(double) * (size_t)rows);
	if (!x || !y || (logname && !(log = fopen(logname, "w"))))
		return 1;
	s = (uint64_t)seed * 2654435761u + 1;
	for (long i = 0; i < 2 * rows; i++)
		x[i] = range * (2 * next(&s) - 1);
	sym[0] = (hml_symbol){ "n", rows };
	in[0] = HML_ARRAY_2D(x, HML_F64, rows, 2);
	o[0] = HML_ARRAY_1D(y, HML_F64, rows);
	if (hml_region_open(&r, "step", NULL) < 0 ||
	    hml_region_input(r, "[i, 0:2] = ([i, 0:2])", "0:n", in, 1, sym, 1) < 0 ||
	    hml_region_output(r, "[i, 0:1] = ([i])", "0:n", o, 1, sym, 1) < 0 ||
	    (subset && hml_region_subset_enable(r) < 0)) {
		fprintf(stderr, "swap-app: %s\n", hml_error_last()->message);
		return 1;
	}
	for (long k = 0; k < steps; k++) {
		hml_region_stats st = { 0 };
		double sum = 0, sq = 0;

		if (until && access(until, F_OK) == 0)
			break;
		if ((rc = hml_region_begin(r)) > 0) {
			const int64_t *idx;
			int64_t n;

			if (hml_region_rows(r, &idx, &n) < 0) {
				rc = -1;
			} else {
				for (int64_t j = 0; j < n; j++) {
					long i = (long)idx[j];
					double acc = 0;

					for (long w = 0; w < work; w++)
						acc += sin(3 * x[2 * i] + 1e-12 * (double)w);
					y[i] = acc / (double)work + x[2 * i + 1] * x[2 * i + 1];
				}
			}
		}
		if (rc < 0 || hml_region_end(r) < 0 || hml_region_stats_get(r, &st) < 0) {
			fprintf(stderr, "swap-app: %s\n", hml_error_last()->message);
			return 1;
		}
		for (long i = 0; i < rows; i++) {
			double e = y[i] - (sin(3 * x[2 * i]) + x[2 * i + 1] * x[2 * i + 1]);
			sum += y[i];
			sq += e * e;
		}
		if (log) {
			fprintf(log, "step %ld mean %.9g rmse %.9g guarded %llu\n", k, sum / (double)rows,
			        sqrt(sq / (double)rows),
			        (unsigned long long)(st.guarded_rows - guarded_before));
			fflush(log);
		}
		guarded_before = st.guarded_rows;
		if (until)
			nanosleep(&pause, NULL);
	}
	if (hml_region_flush(r) < 0) {
		fprintf(stderr, "swap-app: %s\n", hml_error_last()->message);
		return 1;
	}
	hml_region_free(r);
	if (log && fclose(log) != 0)
		return 1;
	free(x);
	free(y);
	return 0;
}
