/*
 * bonds_physics.c - fixed-rate bonds priced from a clean price: accrued
 * amount, dirty price and the yield that reproduces it (QuantLib-style,
 * written from the description in REFERENCE.md): everything of
 * workflows/bonds but hml (bonds_physics.h).
 *
 * Every bond has an issue date, a maturity date, a valuation date ("today",
 * drawn uniformly between the two), a coupon rate and the clean price
 * 89.97693786. Coupons are semiannual, rolled back from the maturity, each
 * 100 * rate * (30/360 year fraction); the curve is flat with semiannual
 * compounding. The yield is solved with a bracketed Newton-safe iteration
 * (accuracy 1e-8, at most 100 evaluations).
 *
 * --check verifies every bond against an independent evaluation: at the
 * solved yield the NPV equals the dirty price to 1e-8 relative, the clean
 * price is dirty - accrued and recovers 89.97693786. Exit 1 if any fails.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bonds_physics.h"

#define CLEAN_PRICE 89.97693786
#define FACE 100.0
#define ACCURACY 1e-8
#define MAX_EVALS 100

typedef struct date { int y, m, d; } date;

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

void bonds_price(double rate, const int32_t *dates, double *out)
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

static int parse_args(int argc, char **argv, struct bonds *o)
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

int bonds_setup(struct bonds *b, int argc, char **argv)
{
	int rc;

	memset(b, 0, sizeof(*b));
	if ((rc = parse_args(argc, argv, b)) != 0)
		return rc;
	b->rate = malloc(sizeof(*b->rate) * (size_t)b->bonds);
	b->dates = malloc(sizeof(*b->dates) * (size_t)b->bonds);
	b->out = malloc(sizeof(*b->out) * (size_t)b->bonds);
	b->dirty = malloc(sizeof(*b->dirty) * (size_t)b->bonds);
	if (!b->rate || !b->dates || !b->out || !b->dirty) {
		fprintf(stderr, "bonds: error: out of memory for %ld bonds\n", b->bonds);
		bonds_free(b);
		return 1;
	}
	make_bonds((uint64_t)b->seed, b->bonds, b->rate, b->dates);
	b->t0 = now();
	return 0;
}

void bonds_finish(struct bonds *b)
{
	long i;

	b->t1 = now();
	for (i = 0; i < b->bonds; i++) {
		b->dirty[i] = b->out[i][0];
		b->sum += b->dirty[i];
		if (b->check && check_bond(b->rate[i], b->dates[i], b->out[i])) {
			if (b->failed++ < 3)
				fprintf(stderr, "bonds: check failed for bond %ld: dirty %.12g accrued %.12g "
				        "clean %.12g yield %.12g\n", i, b->out[i][0], b->out[i][1], b->out[i][2],
				        b->out[i][3]);
		}
	}
}

int bonds_report(const struct bonds *b, const char *mode)
{
	if (!b->quiet)
		printf("bonds: bonds %ld, batch %ld, seed %lu, mode %s\n"
		       "bonds: mean dirty price %.6f\n"
		       "bonds: priced in %.3f s\n",
		       b->bonds, b->batch, b->seed, mode, b->sum / (double)b->bonds, b->t1 - b->t0);
	if (!b->check)
		return 0;
	printf("bonds: check %s: %ld of %ld bonds fail\n", b->failed ? "failed" : "passed",
	       b->failed, b->bonds);
	return b->failed ? 1 : 0;
}

void bonds_free(struct bonds *b)
{
	free(b->rate);
	free(b->dates);
	free(b->out);
	free(b->dirty);
	b->rate = NULL;
	b->dates = NULL;
	b->out = NULL;
	b->dirty = NULL;
}
