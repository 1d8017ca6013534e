/*
 * bench/bo.c - suggestion latency of the Bayesian optimiser as the history
 * grows: 100, 500 and 1000 completed trials, two objectives and one outcome
 * constraint, over the MLP family's search space (models/mlp.json, 10
 * unit-cube dimensions), one trial pending at each suggestion (as with two
 * workers). The baseline, measured in the same run, is the same optimiser
 * with the window as large as the history (an exact GP on every trial).
 *
 * For each size it prints the first suggestion after the history was
 * loaded (which refits the GP hyper-parameters), the mean and largest of the
 * following ones (no refit), and the mean with refits amortised over their
 * spacing, max(10, n/8) trials.
 *
 * usage: bench_bo [MODELS_DIR] [ASKS]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "core/error.h"
#include "core/rng.h"
#include "core/util.h"
#include "search/opt/bo.h"
#include "search/opt/space.h"

static void project_cb(double *u, void *payload)
{
	hml__space_project(payload, u);
}

/* Synthetic log error and log latency of a trial, and its constraint (the
 * log latency again, bounded). */
static void objectives(const double *u, size_t d, double f[2])
{
	double e = 0, l = 0;
	for (size_t k = 0; k < d; k++) {
		double t = u[k] - 0.3 - 0.04 * (double)k;
		e += t * t * (1 + (double)(k % 3));
		l += u[k] * (double)((k % 4) + 1) / 4.0;
	}
	f[0] = log(0.01 + e);
	f[1] = log(0.1 + l) - 0.2 * e;
}

typedef struct { double first, mean, max, amortised, cpu_first, cpu_mean, cpu_amortised; } figures;

/* CPU time of the calling thread: on a loaded machine wall time also counts
 * other processes, and the suggestion runs on this thread alone. */
static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int measure(const hml__space *s, size_t n, size_t window, int asks, figures *out)
{
	hml__bo_options o = HML__BO_OPTIONS_INIT;
	hml__bo *bo = NULL;
	const double bound = 0.5;
	size_t d = hml__space_dim(s), id, pend;
	double u[64], f[2];
	int rc;
	uint64_t rng = 12345;
	o.dim = d;
	o.ncons = 1;
	o.bounds = &bound;
	o.seed = 1;
	o.window = window;
	o.project = project_cb;
	o.payload = (void *)s;
	if ((rc = hml__bo_new(&bo, &o)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++) { /* a history of random trials */
		for (size_t k = 0; k < d; k++) {
			u[k] = (double)(hml__rng_lcg(&rng) >> 11) * 0x1.0p-53;
		}
		objectives(u, d, f);
		if ((rc = hml__bo_add(bo, &id, u)) < 0 ||
		    (rc = hml__bo_tell(bo, id, f, &f[1])) < 0)
			goto done;
	}
	if ((rc = hml__bo_ask(bo, &pend, u)) < 0) /* the trial left pending */
		goto done;
	double sum = 0, csum = 0;
	out->max = 0;
	for (int a = 0; a <= asks; a++) {
		double t0 = hml__now(), c0 = cpu_now();
		if ((rc = hml__bo_ask(bo, &id, u)) < 0)
			goto done;
		double t = hml__now() - t0, c = cpu_now() - c0;
		if (a == 0) {
			out->first = t;
			out->cpu_first = c;
		} else {
			sum += t;
			csum += c;
			out->max = t > out->max ? t : out->max;
		}
		const double *pu;
		hml__bo_trial(bo, pend, &pu, NULL, NULL);
		objectives(pu, d, f);
		if ((rc = hml__bo_tell(bo, pend, f, &f[1])) < 0)
			goto done;
		pend = id;
	}
	out->mean = sum / asks;
	double spacing = n / 8 > 10 ? (double)(n / 8) : 10.0;
	out->amortised = out->mean + (out->first - out->mean) / spacing;
	out->cpu_mean = csum / asks;
	out->cpu_amortised = out->cpu_mean + (out->cpu_first - out->cpu_mean) / spacing;
done:
	hml__bo_free(bo);
	return rc;
}

int main(int argc, char **argv)
{
	char path[4096];
	hml__space *s = NULL;
	int asks = argc > 2 ? atoi(argv[2]) : 20;
	snprintf(path, sizeof path, "%s/mlp.json", argc > 1 ? argv[1] : "models");
	double t0 = hml__now();
	if (hml__space_load(&s, path) < 0) {
		fprintf(stderr, "bench_bo: %s\n", hml_error_last()->message);
		return 1;
	}
	printf("search space %s: %zu parameters, %zu dimensions; 2 objectives, 1 constraint,"
	       " 1 pending trial; %d suggestions per size\n", path, hml__space_count(s),
	       hml__space_dim(s), asks);
	printf("wall time (ms) of: the first suggestion (with the refit), the mean and the\n"
	       "largest of the others, the mean with refits amortised; then CPU time (ms)\n");
	printf("%6s  %-7s %8s %8s %8s %8s | %8s %8s %8s\n", "trials", "GP", "refit", "mean",
	       "max", "amort.", "refit", "mean", "amort.");
	static const size_t sizes[] = { 100, 500, 1000 };
	double ratio[3];
	for (int i = 0; i < 3; i++) {
		figures w, e;
		if (measure(s, sizes[i], 0, asks, &w) < 0 ||
		    measure(s, sizes[i], sizes[i] + 8, asks > 5 ? 5 : asks, &e) < 0) {
			fprintf(stderr, "bench_bo: %s\n", hml_error_last()->message);
			return 1;
		}
		const figures *f[2] = { &w, &e };
		for (int k = 0; k < 2; k++)
			printf("%6zu  %-7s %8.1f %8.1f %8.1f %8.1f | %8.1f %8.1f %8.1f\n", sizes[i],
			       k ? "exact" : "window", 1e3 * f[k]->first, 1e3 * f[k]->mean,
			       1e3 * f[k]->max, 1e3 * f[k]->amortised, 1e3 * f[k]->cpu_first,
			       1e3 * f[k]->cpu_mean, 1e3 * f[k]->cpu_amortised);
		ratio[i] = e.cpu_amortised / w.cpu_amortised;
	}
	printf("speed-up of the windowed GP over the exact GP (amortised CPU time): %.1fx at 100, "
	       "%.1fx at 500, %.1fx at 1000\n", ratio[0], ratio[1], ratio[2]);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("total %.1f s, peak resident memory %ld MiB\n", hml__now() - t0,
	       ru.ru_maxrss / 1024);
	hml__space_free(s);
	return 0;
}
