/*
 * bonds - fixed-rate bonds priced from a clean price: accrued amount, dirty
 * price and the yield that reproduces it (QuantLib-style, written from the
 * description in REFERENCE.md).
 *
 * Every bond has an issue date, a maturity date, a valuation date ("today",
 * drawn uniformly between the two), a coupon rate and the clean price
 * 89.97693786. Coupons are semiannual, rolled back from the maturity, each
 * 100 * rate * (30/360 year fraction); the curve is flat with semiannual
 * compounding. The yield is solved with a bracketed Newton-safe iteration
 * (accuracy 1e-8, at most 100 evaluations).
 *
 * The whole per-bond computation is the hml region "bonds", one row per bond:
 *   input  [i, 0:10] = (rate[i], dates[i][0:9])    dates: int32 y, m, d of
 *                                                   issue, maturity, today
 *   output [i, 0:3]  = (out[i][0:3])               dirty, accrued, clean
 * The yield, out[i][3], is solved inside the region but is not one of its
 * mapped outputs: with "today" days before maturity it reaches 1e9 (a
 * 10% discount over one day), and a model trained on such a column learns
 * nothing else. Under a surrogate it is NaN. The quantity of interest
 * (HML_QOI) is every dirty price.
 *
 *   bonds [--bonds N] [--batch B] [--seed S] [--check] [--quiet]
 *
 * --check verifies every bond against an independent evaluation: at the
 * solved yield the NPV equals the dirty price to 1e-8 relative, the clean
 * price is dirty - accrued and recovers 89.97693786. Exit 1 if any fails.
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

#define CLEAN_PRICE 89.97693786
#define FACE 100.0
#define ACCURACY 1e-8
#define MAX_EVALS 100
#define NDATES 9                /* issue, maturity, today: y, m, d each */

typedef struct date { int y, m, d; } date;

struct opts {
	long bonds;
	long batch;
	unsigned long seed;
	int check;
	int quiet;
};

/* splitmix64: a small seeded generator, the same on every platform. */
static uint64_t next_u64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double uniform(uint64_t *state, double lo, double hi)
{
	return lo + (hi - lo) * ((double)(next_u64(state) >> 11) * (1.0 / 9007199254740992.0));
}

static int uniform_int(uint64_t *state, int lo, int hi)
{
	return lo + (int)(next_u64(state) % (uint64_t)(hi - lo + 1));
}

/* Days since 1970-01-01 of a proleptic Gregorian date, and back. */
static long serial(date t)
{
	long y = t.y - (t.m <= 2);
	long era = (y >= 0 ? y : y - 399) / 400;
	long yoe = y - era * 400;
	long doy = (153 * (t.m + (t.m > 2 ? -3 : 9)) + 2) / 5 + t.d - 1;

	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

static date from_serial(long z)
{
	long era, doe, yoe, doy, mp;
	date t;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	t.d = (int)(doy - (153 * mp + 2) / 5 + 1);
	t.m = (int)(mp < 10 ? mp + 3 : mp - 9);
	t.y = (int)(yoe + era * 400 + (t.m <= 2));
	return t;
}

static int before(date a, date b)
{
	return a.y != b.y ? a.y < b.y : a.m != b.m ? a.m < b.m : a.d < b.d;
}

/* 30/360 (bond basis) year fraction from a to b. */
static double yf30(date a, date b)
{
	int d1 = a.d == 31 ? 30 : a.d, d2 = b.d;

	if (d2 == 31 && d1 == 30)
		d2 = 30;
	return (360.0 * (b.y - a.y) + 30.0 * (b.m - a.m) + (d2 - d1)) / 360.0;
}

/* The k-th coupon date before maturity (k = 0: maturity), 6 months apart.
 * Issue and maturity days are 1-28, so every rolled date exists. */
static date roll_back(date mat, int k)
{
	int months = mat.y * 12 + (mat.m - 1) - 6 * k;
	date t = { months / 12, months % 12 + 1, mat.d };

	return t;
}

/* One bond's cash flows after `today`: amounts and times (30/360 years
 * from today); the accrued amount at today. Returns the flow count. */
static int cash_flows(date issue, date mat, date today, double rate,
                      double *amount, double *when, double *accrued)
{
	int k, n = 0;

	*accrued = 0.0;
	for (k = 0;; k++) {
		date end = roll_back(mat, k), start = roll_back(mat, k + 1);

		if (!before(issue, end))
			break;
		if (before(start, issue))
			start = issue;
		if (!before(today, end))
			break;          /* paid on or before today: not in the NPV */
		amount[n] = FACE * rate * yf30(start, end) + (k == 0 ? FACE : 0.0);
		when[n] = yf30(today, end);
		n++;
		if (!before(today, start))
			*accrued = FACE * rate * yf30(start, today);
	}
	return n;
}

/* NPV at yield y and its derivative, discounting at (1 + y/2)^(-2t). */
static double npv(const double *amount, const double *when, int n, double y, double *dnpv)
{
	double v = 0.0, dv = 0.0;
	int k;

	for (k = 0; k < n; k++) {
		double df = pow(1.0 + 0.5 * y, -2.0 * when[k]);
		v += amount[k] * df;
		dv -= amount[k] * when[k] * df / (1.0 + 0.5 * y);
	}
	*dnpv = dv;
	return v;
}

/* Newton-safe on NPV(y) = target: Newton steps inside a bracket that
 * bisection shrinks whenever Newton would leave it or converge slowly. */
static double solve_yield(const double *amount, const double *when, int n, double target)
{
	double lo = 0.0, hi = 1.0, y, dx, dxold, f, df;
	int evals = 0;

	/* NPV(0) > target for a bond below par; NPV falls with y. */
	while (npv(amount, when, n, hi, &df) > target && evals < MAX_EVALS) {
		lo = hi;
		hi *= 2.0;
		evals++;
	}
	y = 0.5 * (lo + hi);
	dxold = dx = hi - lo;
	f = npv(amount, when, n, y, &df) - target;
	for (; evals < MAX_EVALS; evals++) {
		if (f > 0)
			lo = y;
		else
			hi = y;
		if (((y - hi) * df - f) * ((y - lo) * df - f) > 0 ||
		    fabs(2.0 * f) > fabs(dxold * df)) {
			dxold = dx;
			dx = 0.5 * (hi - lo);
			y = lo + dx;
		} else {
			dxold = dx;
			dx = f / df;
			y -= dx;
		}
		f = npv(amount, when, n, y, &df) - target;
		if (fabs(dx) < ACCURACY || f == 0.0)
			break;
	}
	return y;
}

static date date_at(const int32_t *d)
{
	date t = { d[0], d[1], d[2] };

	return t;
}

/* The region's original code: one bond in, (dirty, accrued, clean, yield) out. */
static void price_bond(double rate, const int32_t *dates, double *out)
{
	double amount[16], when[16], accrued, dirty, df, y;
	int n = cash_flows(date_at(dates), date_at(dates + 3), date_at(dates + 6), rate,
	                   amount, when, &accrued);

	y = solve_yield(amount, when, n, CLEAN_PRICE + accrued);
	dirty = npv(amount, when, n, y, &df);
	out[0] = dirty;
	out[1] = accrued;
	out[2] = dirty - accrued;
	out[3] = y;
}

/* Independent check of one bond: cash flows listed forward from the issue
 * date over whole days, NPV summed with exp/log1p, accrued from the day
 * count of the current period. Returns 0 when every identity holds. */
static int check_bond(double rate, const int32_t *dates, const double *out)
{
	date issue = date_at(dates), mat = date_at(dates + 3), today = date_at(dates + 6);
	double v = 0.0, accrued = 0.0, y = out[3], dirty;
	int k, periods = 0;

	while (before(issue, roll_back(mat, periods)))
		periods++;
	for (k = periods - 1; k >= 0; k--) {
		date end = roll_back(mat, k), start = k == periods - 1 ? issue : roll_back(mat, k + 1);
		double coupon = FACE * rate * yf30(start, end);

		if (serial(end) <= serial(today))
			continue;
		if (serial(start) <= serial(today))
			accrued = coupon * yf30(start, today) / yf30(start, end);
		v += (coupon + (k == 0 ? FACE : 0.0)) * exp(-2.0 * yf30(today, end) * log1p(0.5 * y));
	}
	dirty = CLEAN_PRICE + accrued;
	return !(fabs(v - dirty) <= 1e-8 * dirty && fabs(out[1] - accrued) <= 1e-10 * FACE &&
	         out[2] == out[0] - out[1] && fabs(out[2] - CLEAN_PRICE) <= 1e-8 * CLEAN_PRICE);
}

static int parse_long(const char *arg, const char *flag, long min, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg ? arg : "", &end, 10);
	if (!arg || errno || *end || v < min) {
		fprintf(stderr, "bonds: error: %s needs an integer >= %ld, got '%s'\n",
		        flag, min, arg ? arg : "");
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	long v;
	int i;

	o->bonds = 16384;
	o->batch = 4096;
	o->seed = 42;
	o->check = 0;
	o->quiet = 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--bonds")) {
			if (parse_long(next, a, 1, &o->bonds) < 0) return 2;
			i++;
		} else if (!strcmp(a, "--batch")) {
			if (parse_long(next, a, 1, &o->batch) < 0) return 2;
			i++;
		} else if (!strcmp(a, "--seed")) {
			if (parse_long(next, a, 0, &v) < 0) return 2;
			o->seed = (unsigned long)v;
			i++;
		} else if (!strcmp(a, "--check")) {
			o->check = 1;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			o->quiet = 1;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			printf("usage: bonds [--bonds N] [--batch B] [--seed S] [--check] [--quiet]\n"
			       "Prices N fixed-rate bonds (accrued, dirty, clean, yield), B per region call.\n"
			       "--check verifies every bond independently; exit 1 if one fails.\n"
			       "hml settings come from the environment: HML_MODE, HML_MODEL, HML_DB, HML_QOI, ...\n");
			exit(0);
		} else {
			fprintf(stderr, "bonds: error: unknown argument '%s'\n", a);
			return 2;
		}
	}
	if (o->batch > o->bonds)
		o->batch = o->bonds;
	return 0;
}

/* Issue 1998-1999, maturity 2000-2001, days 1-28; today strictly between. */
static void make_bonds(uint64_t seed, long n, double *rate, int32_t (*dates)[NDATES])
{
	uint64_t rng = seed;
	long i;

	for (i = 0; i < n; i++) {
		date issue = { uniform_int(&rng, 1998, 1999), uniform_int(&rng, 1, 12),
		               uniform_int(&rng, 1, 28) };
		date mat = { uniform_int(&rng, 2000, 2001), uniform_int(&rng, 1, 12),
		             uniform_int(&rng, 1, 28) };
		long s0 = serial(issue), s1 = serial(mat);
		date today = from_serial(s0 + 1 + (long)(next_u64(&rng) % (uint64_t)(s1 - s0 - 1)));
		int32_t *d = dates[i];

		rate[i] = uniform(&rng, 0.03, 0.13);
		d[0] = issue.y; d[1] = issue.m; d[2] = issue.d;
		d[3] = mat.y;   d[4] = mat.m;   d[5] = mat.d;
		d[6] = today.y; d[7] = today.m; d[8] = today.d;
	}
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
	fprintf(stderr, "bonds: error: %s: %s\n", what, hml_error_last()->message);
	return 1;
}
#endif

int main(int argc, char **argv)
{
	struct opts o;
	double *rate, (*out)[4], *dirty, sum = 0.0, t0, t1;
	int32_t (*dates)[NDATES];
	long i, off, failed = 0;
	int rc = 0;
#ifndef HML_BASELINE
	hml_region *region = NULL;
	hml_symbol sym[1];
	hml_array in[2], res[1];
#endif

	if ((rc = parse_args(argc, argv, &o)) != 0)
		return rc;
	rate = malloc(sizeof(*rate) * (size_t)o.bonds);
	dates = malloc(sizeof(*dates) * (size_t)o.bonds);
	out = malloc(sizeof(*out) * (size_t)o.bonds);
	dirty = malloc(sizeof(*dirty) * (size_t)o.bonds);
	if (!rate || !dates || !out || !dirty) {
		fprintf(stderr, "bonds: error: out of memory for %ld bonds\n", o.bonds);
		return 1;
	}
	make_bonds((uint64_t)o.seed, o.bonds, rate, dates);

#ifndef HML_BASELINE
	if (hml_region_open(&region, "bonds", NULL) < 0)
		return fail("cannot open region 'bonds'");
	sym[0] = (hml_symbol){ "n", o.batch };
	in[0] = HML_ARRAY_1D(rate, HML_F64, o.batch);
	in[1] = HML_ARRAY_2D(dates, HML_I32, o.batch, NDATES);
	res[0] = HML_ARRAY_2D(out, HML_F64, o.batch, 4);
	for (i = 0; i < o.bonds; i++)
		out[i][3] = NAN;        /* the yield, when the original code runs */
	if (hml_region_input(region, "[i, 0:10] = ([i], [i, 0:9])", "0:n", in, 2, sym, 1) < 0 ||
	    hml_region_output(region, "[i, 0:3] = ([i, 0:3])", "0:n", res, 1, sym, 1) < 0) {
		rc = fail("cannot describe region 'bonds'");
		goto done;
	}
#endif

	t0 = now();
	for (off = 0; off < o.bonds; off += o.batch) {
		long n = o.bonds - off < o.batch ? o.bonds - off : o.batch, j;
		int run = 1;
#ifndef HML_BASELINE
		/* A last, shorter batch runs outside the region. */
		if (n == o.batch && (run = hml_region_seek(region, off)) == 0)
			run = hml_region_begin(region);
		if (run < 0) {
			rc = fail("region 'bonds' failed");
			goto done;
		}
#endif
		if (run) {
#pragma omp parallel for schedule(static)
			for (j = off; j < off + n; j++)
				price_bond(rate[j], dates[j], out[j]);
		}
#ifndef HML_BASELINE
		if (n == o.batch && hml_region_end(region) < 0) {
			rc = fail("region 'bonds' failed");
			goto done;
		}
#endif
	}
	t1 = now();

	for (i = 0; i < o.bonds; i++) {
		dirty[i] = out[i][0];
		sum += dirty[i];
		if (o.check && check_bond(rate[i], dates[i], out[i])) {
			if (failed++ < 3)
				fprintf(stderr, "bonds: check failed for bond %ld: dirty %.12g accrued %.12g "
				        "clean %.12g yield %.12g\n", i, out[i][0], out[i][1], out[i][2], out[i][3]);
		}
	}
#ifndef HML_BASELINE
	if (HML_QOI_WRITE_1D("dirty_price", dirty, HML_F64, o.bonds) < 0) {
		rc = fail("cannot record the quantity of interest");
		goto done;
	}
#endif
	if (!o.quiet)
		printf("bonds: bonds %ld, batch %ld, seed %lu, mode %s\n"
		       "bonds: mean dirty price %.6f\n"
		       "bonds: priced in %.3f s\n",
		       o.bonds, o.batch, o.seed,
#ifndef HML_BASELINE
		       hml_mode_name(hml_region_mode(region)),
#else
		       "baseline",
#endif
		       sum / (double)o.bonds, t1 - t0);
	if (o.check) {
		printf("bonds: check %s: %ld of %ld bonds fail\n", failed ? "failed" : "passed",
		       failed, o.bonds);
		if (failed)
			rc = 1;
	}
#ifndef HML_BASELINE
done:
	if (region && hml_region_flush(region) < 0 && rc == 0)
		rc = fail("cannot write collected data");
	hml_region_free(region);
#endif
	free(rate); free(dates); free(out); free(dirty);
	return rc;
}
