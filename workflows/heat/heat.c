/*
 * heat - the 2-D heat equation on an n x n grid, explicit 5-point stencil:
 *   u' = u + a * (uN + uS + uW + uE - 4u),  a <= 0.25,
 * with a Dirichlet boundary (u = 0 on a ring of ghost cells around the
 * grid; the field is stored (n+2) x (n+2)).
 *
 * Two ways to replace it, chosen with --region:
 *   field  the hml region "heat_field" advances the whole field K steps per
 *          call, in place (a CNN's job; zero padding is the boundary):
 *            input  [0:n, 0:n] = ([1:n+1, 1:n+1])   of u
 *            output [0:n, 0:n] = ([1:n+1, 1:n+1])   of u
 *   rows   the hml region "heat_rows" is one step, each cell's 5-point
 *          neighbourhood a row (an MLP's job):
 *            input  [i, j, 0:5] = ([i-1, j], [i+1, j], [i, j-1:j+2])  of u, u, u
 *            output [i, j, 0:1] = ([i, j])                            of v
 *
 * Initial field: --init random (Gaussian bumps drawn from --seed, the data a
 * surrogate learns from) or --init mode, the discrete eigenmode
 * sin(p pi i/(n+1)) sin(q pi j/(n+1)) with p = 1, q = 2, which one step
 * multiplies by exactly
 *   g = 1 - 4a (sin^2(p pi / (2(n+1))) + sin^2(q pi / (2(n+1)))):
 * the check compares the final field with g^steps times the initial one.
 *
 * Quantities of interest (HML_QOI): "field" (the final n x n field) and
 * "total_heat" (the sum of the field after each region call's worth of steps).
 *
 *   heat [--n N] [--steps T] [--k K] [--alpha A] [--region field|rows]
 *        [--init random|mode] [--seed S] [--quiet]
 *
 * Built with -DHML_BASELINE it contains no hml call at all.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef HML_BASELINE
#include <hml/hml.h>
#endif

#define PI 3.14159265358979323846
#define MODE_P 1
#define MODE_Q 2
#define CHECK_BOUND 1e-10   /* relative max error of the mode's decay */
#define PARALLEL_MIN 128    /* smaller grids step on one thread */

struct opts {
	long n, steps, k;
	double alpha;
	int rows;       /* --region rows */
	int mode;       /* --init mode */
	unsigned long seed;
	int quiet;
};

/* splitmix64: a small seeded generator, the same on every platform. */
static double uniform(uint64_t *state, double lo, double hi)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return lo + (hi - lo) * ((double)(z >> 11) * (1.0 / 9007199254740992.0));
}

static int parse_long(const char *arg, const char *flag, long min, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg ? arg : "", &end, 10);
	if (!arg || errno || *end || v < min) {
		fprintf(stderr, "heat: error: %s needs an integer >= %ld, got '%s'\n",
		        flag, min, arg ? arg : "");
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_choice(const char *arg, const char *flag, const char *a, const char *b, int *out)
{
	if (arg && !strcmp(arg, a)) {
		*out = 0;
		return 0;
	}
	if (arg && !strcmp(arg, b)) {
		*out = 1;
		return 0;
	}
	fprintf(stderr, "heat: error: %s needs '%s' or '%s', got '%s'\n", flag, a, b, arg ? arg : "");
	return -1;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	long v;
	int i;

	*o = (struct opts){ 32, 64, 4, 0.2, 0, 0, 42, 0 };
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = 0;

		if (!strcmp(a, "--n")) {
			bad = parse_long(next, a, 1, &o->n);
			i++;
		} else if (!strcmp(a, "--steps")) {
			bad = parse_long(next, a, 1, &o->steps);
			i++;
		} else if (!strcmp(a, "--k")) {
			bad = parse_long(next, a, 1, &o->k);
			i++;
		} else if (!strcmp(a, "--alpha")) {
			char *end;
			errno = 0;
			o->alpha = strtod(next ? next : "", &end);
			if (!next || errno || *end || !(o->alpha > 0.0 && o->alpha <= 0.25)) {
				fprintf(stderr, "heat: error: --alpha needs a number in (0, 0.25], got '%s'\n",
				        next ? next : "");
				bad = -1;
			}
			i++;
		} else if (!strcmp(a, "--region")) {
			bad = parse_choice(next, a, "field", "rows", &o->rows);
			i++;
		} else if (!strcmp(a, "--init")) {
			bad = parse_choice(next, a, "random", "mode", &o->mode);
			i++;
		} else if (!strcmp(a, "--seed")) {
			bad = parse_long(next, a, 0, &v);
			o->seed = (unsigned long)v;
			i++;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			o->quiet = 1;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			printf("usage: heat [--n N] [--steps T] [--k K] [--alpha A] [--region field|rows]\n"
			       "            [--init random|mode] [--seed S] [--quiet]\n"
			       "Runs T explicit steps of the 2-D heat equation on an N x N grid (default 32,\n"
			       "64 steps, alpha 0.2). --region field: the region advances the whole field K\n"
			       "steps per call (default 4; T must be a multiple of K); --region rows: one step\n"
			       "per call, each cell's 5-point neighbourhood a row. --init mode checks the\n"
			       "decay of a sin*sin mode against its exact factor.\n"
			       "hml settings come from the environment: HML_MODE, HML_MODEL, HML_DB, HML_QOI, ...\n");
			exit(0);
		} else {
			fprintf(stderr, "heat: error: unknown argument '%s'\n", a);
			return 2;
		}
		if (bad)
			return 2;
	}
	if (o->rows)
		o->k = 1;
	if (o->steps % o->k) {
		fprintf(stderr, "heat: error: --steps %ld is not a multiple of --k %ld\n", o->steps, o->k);
		return 2;
	}
	return 0;
}

/* One step from u to v, interior cells only (the ghost ring stays 0). */
static void step(const double *u, double *v, long n, double a)
{
	long w = n + 2, i;

#pragma omp parallel for schedule(static) if (n >= PARALLEL_MIN)
	for (i = 1; i <= n; i++) {
		long j;
		for (j = 1; j <= n; j++) {
			long c = i * w + j;
			v[c] = u[c] + a * (u[c - w] + u[c + w] + u[c - 1] + u[c + 1] - 4.0 * u[c]);
		}
	}
}

static void init_field(double *u, const struct opts *o)
{
	long n = o->n, w = n + 2, i, j, b;
	uint64_t rng = (uint64_t)o->seed;

	memset(u, 0, sizeof(double) * (size_t)(w * w));
	if (o->mode) {
		for (i = 1; i <= n; i++)
			for (j = 1; j <= n; j++)
				u[i * w + j] = sin(MODE_P * PI * (double)i / (double)(n + 1)) *
				               sin(MODE_Q * PI * (double)j / (double)(n + 1));
		return;
	}
	/* A few hot and cold Gaussian bumps. */
	for (b = 0; b < 6; b++) {
		double ci = uniform(&rng, 0.15, 0.85) * (double)n, cj = uniform(&rng, 0.15, 0.85) * (double)n;
		double amp = uniform(&rng, -1.0, 1.0), r = uniform(&rng, 0.04, 0.15) * (double)n;
		for (i = 1; i <= n; i++)
			for (j = 1; j <= n; j++) {
				double di = (double)i - ci, dj = (double)j - cj;
				u[i * w + j] += amp * exp(-(di * di + dj * dj) / (2.0 * r * r));
			}
	}
}

/* K steps of the field in place: the result lands in u; v is scratch. */
static void advance(double *u, double *v, const struct opts *o)
{
	double *a = u, *b = v, *t;
	long s;

	for (s = 0; s < o->k; s++) {
		step(a, b, o->n, o->alpha);
		t = a;
		a = b;
		b = t;
	}
	if (a != u)
		memcpy(u, a, sizeof(double) * (size_t)((o->n + 2) * (o->n + 2)));
}

static double total(const double *u, long n)
{
	long w = n + 2, i, j;
	double s = 0.0;

	for (i = 1; i <= n; i++)
		for (j = 1; j <= n; j++)
			s += u[i * w + j];
	return s;
}

/* The largest error of the final field against g^steps times the mode,
 * relative to the largest value of the exact field. */
static double mode_error(const double *u, const struct opts *o)
{
	long n = o->n, w = n + 2, i, j;
	double sp = sin(MODE_P * PI / (2.0 * (double)(n + 1)));
	double sq = sin(MODE_Q * PI / (2.0 * (double)(n + 1)));
	double g = pow(1.0 - 4.0 * o->alpha * (sp * sp + sq * sq), (double)o->steps);
	double err = 0.0, top = 0.0;

	for (i = 1; i <= n; i++)
		for (j = 1; j <= n; j++) {
			double exact = g * sin(MODE_P * PI * (double)i / (double)(n + 1)) *
			               sin(MODE_Q * PI * (double)j / (double)(n + 1));
			double e = fabs(u[i * w + j] - exact);
			if (e > err || isnan(e))
				err = e;
			if (fabs(exact) > top)
				top = fabs(exact);
		}
	return err / top;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#ifndef HML_BASELINE
static int fail(const char *what)
{
	fprintf(stderr, "heat: error: %s: %s\n", what, hml_error_last()->message);
	return 1;
}

/* The region and its maps (see the top of the file). */
static int describe(hml_region **r, const struct opts *o, double *u, double *v)
{
	long n = o->n;
	hml_symbol sym[1] = { { "n", n } };
	hml_array in[3] = { HML_ARRAY_2D(u, HML_F64, n + 2, n + 2), HML_ARRAY_2D(u, HML_F64, n + 2, n + 2),
	                    HML_ARRAY_2D(u, HML_F64, n + 2, n + 2) };
	hml_array out = HML_ARRAY_2D(v, HML_F64, n + 2, n + 2);
	const char *label = o->rows ? "heat_rows" : "heat_field";

	if (hml_region_open(r, label, NULL) < 0)
		return fail("cannot open the region");
	if (o->rows ? hml_region_input(*r, "[i, j, 0:5] = ([i-1, j], [i+1, j], [i, j-1:j+2])",
	                               "1:n+1, 1:n+1", in, 3, sym, 1) < 0 ||
	              hml_region_output(*r, "[i, j, 0:1] = ([i, j])", "1:n+1, 1:n+1", &out, 1, sym, 1) < 0
	            : hml_region_inout(*r, "[0:n, 0:n] = ([1:n+1, 1:n+1])", NULL, in, 1, sym, 1) < 0)
		return fail("cannot describe the region");
	return 0;
}
#endif

int main(int argc, char **argv)
{
	struct opts o;
	double *u, *v, *heat, t0, t1;
	long w, c, calls;
	int rc;
#ifndef HML_BASELINE
	hml_region *region = NULL;
#endif

	if ((rc = parse_args(argc, argv, &o)) != 0)
		return rc;
	w = o.n + 2;
	calls = o.steps / o.k;
	u = calloc((size_t)(w * w), sizeof(double));
	v = calloc((size_t)(w * w), sizeof(double));
	heat = malloc(sizeof(double) * (size_t)calls);
	if (!u || !v || !heat) {
		fprintf(stderr, "heat: error: out of memory for a %ld x %ld grid\n", o.n, o.n);
		return 1;
	}
	init_field(u, &o);
#ifndef HML_BASELINE
	if ((rc = describe(&region, &o, u, v)) != 0)
		goto done;
#endif

	t0 = now();
	for (c = 0; c < calls; c++) {
#ifndef HML_BASELINE
		int run;
		size_t piece;
		if (o.rows) {   /* double buffers: point the maps at this step's */
			for (piece = 0; piece < 3; piece++)
				hml_tmap_set_data(hml_region_input_map(region, 0), piece, u);
			hml_tmap_set_data(hml_region_output_map(region, 0), 0, v);
		}
		if ((run = hml_region_begin(region)) < 0) {
			rc = fail("region failed");
			goto done;
		}
		if (run)
#endif
		{
			if (o.rows)
				step(u, v, o.n, o.alpha);
			else
				advance(u, v, &o);
		}
#ifndef HML_BASELINE
		if (hml_region_end(region) < 0) {
			rc = fail("region failed");
			goto done;
		}
#endif
		if (o.rows) {
			double *t = u;
			u = v;
			v = t;
		}
		heat[c] = total(u, o.n);
	}
	t1 = now();

	{
		double err = o.mode ? mode_error(u, &o) : 0.0;
		double *field = malloc(sizeof(double) * (size_t)(o.n * o.n));
		long i;

		if (!field) {
			fprintf(stderr, "heat: error: out of memory\n");
			rc = 1;
			goto done;
		}
		for (i = 0; i < o.n; i++)
			memcpy(field + i * o.n, u + (i + 1) * w + 1, sizeof(double) * (size_t)o.n);
#ifndef HML_BASELINE
		{
			int64_t fshape[2] = { o.n, o.n }, hshape[1] = { calls };
			if (hml_qoi_write("field", field, HML_F64, 2, fshape) < 0 ||
			    hml_qoi_write("total_heat", heat, HML_F64, 1, hshape) < 0) {
				free(field);
				rc = fail("cannot record the quantity of interest");
				goto done;
			}
		}
#endif
		free(field);
		if (!o.quiet) {
			printf("heat: n %ld, steps %ld, k %ld, alpha %g, init %s, seed %lu, mode %s\n",
			       o.n, o.steps, o.k, o.alpha, o.mode ? "mode" : "random", o.seed,
#ifndef HML_BASELINE
			       hml_mode_name(hml_region_mode(region)));
#else
			       "baseline");
#endif
			printf("heat: total heat %.10e, stepped in %.3f s\n", heat[calls - 1], t1 - t0);
			if (o.mode)
				printf("heat: check mode decay: relative error %.3e (bound %.0e) %s\n",
				       err, CHECK_BOUND, err <= CHECK_BOUND ? "pass" : "FAIL");
		}
	}
done:
#ifndef HML_BASELINE
	if (region && hml_region_flush(region) < 0 && rc == 0)
		rc = fail("cannot write collected data");
	hml_region_free(region);
#endif
	free(u);
	free(v);
	free(heat);
	return rc;
}
