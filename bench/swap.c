/*
 * bench/swap.c - what watching for a hot swap costs a region's calls
 * (the runtime's swap.h): the same compiled model (5-32-1 MLP, generated
 * and built here as `hml deploy --target c` builds it) in two regions,
 * one plain and one watching a deployment file (HML_DEPLOYMENT; the look
 * interval is HML_SWAP_INTERVAL, as set by the caller), timed in
 * alternation in one process: batch calls of ROWS rows, then as many row
 * calls (one thread). Last, the one call that switches to a second model
 * (load, check, switch). Prints
 *   batch PLAIN_NS WATCH_NS     (per call, best of 40 rounds)
 *   row PLAIN_NS WATCH_NS
 *   swap SECONDS
 *
 * usage: bench_swap CALLS ROWS
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/deployfile.h"
#include "deploy/cbuild.h"
#include "deploy/codegen.h"
#include "hml/hml.h"

static char dir[] = "/tmp/hml-bench-swap-XXXXXX";

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_swap: %s: %s\n", what, hml_error_last()->message);
	exit(1);
}

static void build(char *so, size_t size, const char *id, unsigned seed)
{
	int64_t sizes[3] = { 5, 32, 1 };
	hml__cg_options o = { id, NULL, NULL };
	hml__cbuild_info info;
	hml__cg_model m;
	char c[256];

	snprintf(c, sizeof(c), "%s/%s.c", dir, id);
	snprintf(so, size, "%s/%s.so", dir, id);
	if (hml__cg_model_init(&m, HML__CG_MLP, 2, sizes, 0) < 0)
		die("model");
	srand(seed);
	for (int l = 0; l < 2; l++) {
		for (int64_t k = 0; k < m.layers[l].in * m.layers[l].out; k++)
			m.layers[l].weight[k] = (float)(rand() / (double)RAND_MAX - 0.5);
		m.layers[l].act = l == 0 ? HML__ACT_RELU : HML__ACT_IDENTITY;
	}
	for (int k = 0; k < 5; k++)
		m.in_std[k] = 1;
	m.out_std[0] = 1;
	m.in_ndim = m.out_ndim = 1;
	m.in_shape[0] = 5;
	m.out_shape[0] = 1;
	snprintf(m.arch, sizeof(m.arch), "mlp:32:relu");
	if (hml__cbuild_so(&m, &o, NULL, c, NULL, so, &info) < 0)
		die("build");
	hml__cbuild_info_release(&info);
	hml__cg_model_release(&m);
}

static void deploy(const char *id, const char *so, const char *dep)
{
	hml__deployfile d;

	memset(&d, 0, sizeof(d));
	snprintf(d.region, sizeof(d.region), "watch");
	snprintf(d.deployment, sizeof(d.deployment), "%s", dep);
	snprintf(d.model, sizeof(d.model), "%s", id);
	snprintf(d.path, sizeof(d.path), "%s", so);
	if (hml__deployfile_write(dir, &d) < 0)
		die("deployment file");
}

static hml_region *open_region(const char *label, const char *model, double *x, double *y,
                               int64_t n)
{
	hml_array ax = HML_ARRAY_2D(x, HML_F64, n, 5), ay = HML_ARRAY_1D(y, HML_F64, n);
	hml_symbol s = { "N", n };
	hml_region_options o;
	hml_region *r;

	hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION);
	o.mode = HML_MODE_INFER;
	o.model = model;
	o.threads = 1;
	o.on_error = HML_ON_ERROR_FAIL;
	if (hml_region_open(&r, label, &o) < 0 ||
	    hml_region_input(r, "[i, 0:5] = ([i, 0:5])", "0:N", &ax, 1, &s, 1) < 0 ||
	    hml_region_output(r, "[i, 0:1] = ([i])", "0:N", &ay, 1, &s, 1) < 0)
		die(label);
	return r;
}

static double batch_calls(hml_region *r, long calls)
{
	double t = now();

	for (long c = 0; c < calls; c++) {
		if (hml_region_begin(r) != 0)
			die("begin");
		hml_region_end(r);
	}
	return (now() - t) / (double)calls;
}

static double row_calls(hml_region *r, long calls, int64_t rows)
{
	double t = now();

	for (long c = 0; c < calls; c++) {
		if (hml_region_row_begin(r, c % rows) != 0)
			die("row begin");
		hml_region_row_end(r);
	}
	return (now() - t) / (double)calls;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 100000;
	int64_t rows = argc > 2 ? atoll(argv[2]) : 16;
	double *x, *y, bp = INFINITY, bw = INFINITY, rp = INFINITY, rw = INFINITY, t;
	char a[300], b[300], file[300], rel[128];
	hml_region *plain, *watch;

	if (calls < 1 || rows < 1 || !mkdtemp(dir))
		return 1;
	x = malloc((size_t)rows * 5 * sizeof(double));
	y = malloc((size_t)rows * sizeof(double));
	if (!x || !y)
		return 1;
	for (int64_t i = 0; i < rows * 5; i++)
		x[i] = (double)(i % 97) / 97.0;
	build(a, sizeof(a), "b1", 1);
	build(b, sizeof(b), "b2", 2);
	deploy("b1", a, "p1");
	hml__deployfile_rel(rel, sizeof(rel), "watch");
	snprintf(file, sizeof(file), "%s/%s", dir, rel);
	setenv("HML_DEPLOYMENT_WATCH", file, 1);
	plain = open_region("plain", a, x, y, rows);
	watch = open_region("watch", a, x, y, rows);
	batch_calls(plain, calls / 10 + 1);   /* warm-up; the watcher's first look */
	batch_calls(watch, calls / 10 + 1);
	/* Rounds of a tenth of the calls, each region first every other
	 * round: a loaded machine's drift hits both alike. */
	for (int round = 0; round < 40; round++) {
		long n = calls / 10 + 1;

		if (round % 2) {
			bw = fmin(bw, batch_calls(watch, n));
			bp = fmin(bp, batch_calls(plain, n));
			rw = fmin(rw, row_calls(watch, n, rows));
			rp = fmin(rp, row_calls(plain, n, rows));
		} else {
			bp = fmin(bp, batch_calls(plain, n));
			bw = fmin(bw, batch_calls(watch, n));
			rp = fmin(rp, row_calls(plain, n, rows));
			rw = fmin(rw, row_calls(watch, n, rows));
		}
	}
	printf("batch %.1f %.1f\n", 1e9 * bp, 1e9 * bw);
	printf("row %.1f %.1f\n", 1e9 * rp, 1e9 * rw);
	deploy("b2", b, "p2");
	{
		const char *iv = getenv("HML_SWAP_INTERVAL");
		double wait = (iv ? atof(iv) : 500) * 1e-3 + 0.01;
		struct timespec ts = { (time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9) };

		nanosleep(&ts, NULL);
	}
	t = now();
	if (hml_region_begin(watch) != 0)
		die("begin");
	hml_region_end(watch);
	printf("swap %.6f\n", now() - t);
	hml_region_free(plain);
	hml_region_free(watch);
	for (const char *f = "b1.c b1.so b2.c b2.so"; *f;) {
		char p[400];
		int n = (int)strcspn(f, " ");

		snprintf(p, sizeof(p), "%s/%.*s", dir, n, f);
		unlink(p);
		f += n + (f[n] == ' ');
	}
	unlink(file);
	snprintf(file, sizeof(file), "%s/deployed", dir);
	rmdir(file);
	rmdir(dir);
	free(x);
	free(y);
	return 0;
}
