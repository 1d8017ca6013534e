/*
 * bench/cmodel - inference latency of a model compiled to C (hml deploy
 * --target c) against the same model run by libtorch (the runtime's
 * TorchScript backend), in one process, on rows of the shape the first
 * compiled model declares: binomial's 5 features (the options' ranges), or
 * any other (a CNN's field: values drawn in [0, 1)).
 *
 *   bench_cmodel THREADS SECONDS TITLE MODEL.pt LABEL=C.so [LABEL=C.so ...]
 *
 * For batches of 1, 16, 64, 256, 1024 and 4096 rows (rows of more than
 * 64 values: 1, 2, 4, 8 and 16 rows): the best mean time
 * per call over 5 rounds of SECONDS/5 each, through the runtime's two
 * loaders (the TorchScript shim and runtime/loader/cmodel.c, output fetch
 * included), and the ratio libtorch / C (> 1: C is faster) for each of up
 * to 3 compiled forms (the first is the one deployed, portable: the goals
 * are read on it). bench/cmodel.sh trains the models and compiles them
 * with hml deploy --target c, and once more without OpenBLAS, so that the
 * table shows where the sgemm path starts to win (lib/deploy/cg_mlp.c).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/rng.h"
#include "loader/loader.h"

/* HML_BENCH_CLOCK=cpu: the process's CPU time instead of the wall clock,
 * for a loaded machine (with THREADS 1: the time the call took on its
 * core, whatever else ran beside it). */
static clockid_t clock_id = CLOCK_MONOTONIC;

static double now(void)
{
	struct timespec ts;

	clock_gettime(clock_id, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_cmodel: error: %s: %s\n", what, hml_error_last()->message);
	exit(1);
}

typedef struct runner {
	hml__model *torch;
	hml__cmodel *c;
} runner;

/* One row's dims (the first compiled model's) and their product. */
static int64_t row_shape[HML_MAX_DIMS];
static int row_ndim;
static int64_t row_size = 1;

static void call(const runner *r, const float *x, int64_t rows)
{
	int64_t shape[HML_MAX_DIMS + 1] = { rows }, oshape[HML_MAX_DIMS];
	const void *out;
	hml_dtype dt;
	int nd, rc;

	for (int i = 0; i < row_ndim; i++)
		shape[i + 1] = row_shape[i];
	if (r->torch)
		rc = hml__model_forward(r->torch, x, HML_F32, row_ndim + 1, shape) ||
		     hml__model_output(r->torch, &out, &dt, &nd, oshape);
	else
		rc = hml__cmodel_forward(r->c, x, HML_F32, row_ndim + 1, shape) ||
		     hml__cmodel_output(r->c, &out, &dt, &nd, oshape);
	if (rc)
		die("forward");
}

/* Best mean seconds per call over 5 rounds. */
static double time_calls(const runner *r, const float *x, int64_t rows, double seconds)
{
	double best = INFINITY;

	for (int i = 0; i < 3; i++)
		call(r, x, rows);
	for (int round = 0; round < 5; round++) {
		double t0 = now(), t;
		long n = 0;

		do {
			for (int k = 0; k < 16; k++)
				call(r, x, rows);
			n += 16;
		} while ((t = now() - t0) < seconds / 5);
		if (t / (double)n < best)
			best = t / (double)n;
	}
	return best;
}

/* Row i of the input: the binomial options' ranges (S, K, r, sigma, T). */
static void fill(float *x, int64_t rows)
{
	static const float lo[5] = { 50, 50, 0.01f, 0.1f, 0.25f }, hi[5] = { 150, 150, 0.05f, 0.5f, 2 };
	uint64_t s = 1;

	for (int64_t i = 0; i < rows * row_size; i++) {
		float u;

		u = (float)((double)(hml__rng_lcg(&s) >> 11) / 9007199254740992.0);
		x[i] = row_size == 5 ? lo[i % 5] + (hi[i % 5] - lo[i % 5]) * u : u;
	}
}

/* "1 128": up to 16 batches of 1 to 65536 rows into b; 0, or -1 after a
 * message. NULL or empty: none. */
static int parse_batches(const char *s, int64_t *b, size_t *n)
{
	char *end;

	*n = 0;
	while (s && *s) {
		long long v = strtoll(s, &end, 10);

		if (end == s || v < 1 || v > 65536 || *n == 16) {
			fprintf(stderr, "bench_cmodel: error: HML_BENCH_BATCHES '%s' is not up to 16 "
			        "batches of 1 to 65536 rows\n", s);
			return -1;
		}
		b[(*n)++] = v;
		for (s = end; *s == ' ' || *s == ','; s++)
			;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const int64_t rows_batches[] = { 1, 16, 64, 256, 1024, 4096 };
	static const int64_t field_batches[] = { 1, 2, 4, 8, 16 };
	int64_t own_batches[16];
	const int64_t *batches;
	size_t nb, nb_own = 0;
	int threads = argc > 1 ? atoi(argv[1]) : 0;
	double seconds = argc > 2 ? atof(argv[2]) : 0;
	int nso = argc - 5;
	runner r[4] = { { NULL, NULL }, { NULL, NULL }, { NULL, NULL }, { NULL, NULL } };
	const char *label[4] = { "libtorch", NULL, NULL, NULL };
	float *x;
	int64_t most = 1;
	double goal1 = NAN, goal4096 = NAN;

	if (argc < 6 || nso > 3 || threads < 1 || !(seconds > 0)) {
		fprintf(stderr, "usage: bench_cmodel THREADS SECONDS TITLE MODEL.pt LABEL=C.so "
		        "[LABEL=C.so [LABEL=C.so]]\n");
		return 2;
	}
	if (hml__model_load(&r[0].torch, argv[4], threads) < 0)
		die(argv[4]);
	for (int k = 0; k < nso; k++) {
		char *eq = strchr(argv[5 + k], '=');

		if (!eq) {
			fprintf(stderr, "bench_cmodel: error: '%s' is not LABEL=C.so\n", argv[5 + k]);
			return 2;
		}
		*eq = '\0';
		label[k + 1] = argv[5 + k];
		if (hml__cmodel_load(&r[k + 1].c, eq + 1) < 0)
			die(eq + 1);
	}
	row_ndim = hml__cmodel_declared_input(r[1].c, row_shape);
	for (int i = 0; i < row_ndim; i++)
		row_size *= row_shape[i];
	batches = row_size > 64 ? field_batches : rows_batches;
	nb = row_size > 64 ? 5 : 6;
	if (parse_batches(getenv("HML_BENCH_BATCHES"), own_batches, &nb_own) < 0)
		return 2;
	if (nb_own > 0)
		batches = own_batches, nb = nb_own;
	if (getenv("HML_BENCH_CLOCK") && strcmp(getenv("HML_BENCH_CLOCK"), "cpu") == 0)
		clock_id = CLOCK_PROCESS_CPUTIME_ID;
	for (size_t b = 0; b < nb; b++)
		most = batches[b] > most ? batches[b] : most;
	if (!(x = malloc((size_t)(most * row_size) * sizeof(float)))) {
		fprintf(stderr, "bench_cmodel: error: out of memory\n");
		return 1;
	}
	fill(x, most);
	printf("%s: %d threads, mean time per call in us (best of 5 rounds); ratio = libtorch / C\n",
	       argv[3], threads);
	printf("%6s %12s", "batch", label[0]);
	for (int k = 1; k <= nso; k++)
		printf(" %12.12s %7s", label[k], "ratio");
	printf("\n");
	for (size_t b = 0; b < nb; b++) {
		double t[4];

		for (int k = 0; k <= nso; k++)
			t[k] = time_calls(&r[k], x, batches[b], seconds);
		if (batches[b] == 1)
			goal1 = t[1];
		if (batches[b] == 4096)
			goal4096 = t[0] / t[1];
		printf("%6lld %12.3f", (long long)batches[b], t[0] * 1e6);
		for (int k = 1; k <= nso; k++)
			printf(" %12.3f %6.2fx", t[k] * 1e6, t[0] / t[k]);
		printf("\n");
	}
	/* The goals of issue 13, for the deployed (first, portable) build. */
	if (row_size == 5)
		printf("goals (%s): batch 1 %.3f us per call (goal <= 0.5: %s); "
		       "batch 4096 %.2fx libtorch (goal >= 1.0: %s)\n", label[1], goal1 * 1e6,
		       goal1 <= 0.5e-6 ? "met" : "not met", goal4096,
		       goal4096 >= 1.0 ? "met" : "not met");
	for (int k = 0; k < 4; k++) {
		hml__model_free(r[k].torch);
		hml__cmodel_free(r[k].c);
	}
	free(x);
	return 0;
}
