/*
 * runtime/src/sample.c - rate, duplicates and reservoir of a collecting
 * region (sample.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collection.h"
#include "core/error.h"
#include "core/rng.h"
#include "sample.h"

/* Skips past this are "never": a run has fewer rows. */
#define SKIP_MAX ((double)(INT64_MAX / 4))

typedef struct {
	uint64_t a, b;
} key;

struct hml__sampler {
	hml__sample_cfg cfg;
	char label[72];
	size_t row_bytes[2];
	uint64_t rng;
	int64_t calls_seen, rows_seen, rows_kept, dropped_rate, dropped_dup;
	/* Duplicates: open addressing, {0, 0} the empty key. */
	key *set;
	size_t set_cap, set_n;
	/* Reservoir: `held` rows of each side; `offered` rows reached it; the
	 * 0-based number of the next one to take once it is full, and Li's W. */
	unsigned char *res[2];
	int64_t res_cap, held, offered, next;
	double w;
};

int hml__sample_active(const hml__sample_cfg *cfg)
{
	return (cfg->rate > 0.0 && cfg->rate < 1.0) || cfg->reservoir > 0 || cfg->dedup;
}

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t hash_bytes(const unsigned char *p, size_t n, uint64_t seed)
{
	uint64_t h = mix(seed ^ n), w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = mix(h ^ w) + HML__RNG_GOLDEN;
	}
	if (i < n) {
		w = 0;
		memcpy(&w, p + i, n - i);
		h = mix(h ^ w) + HML__RNG_GOLDEN;
	}
	return mix(h);
}

static key row_key(const void *row, size_t n)
{
	key k = { hash_bytes(row, n, 0x6a09e667f3bcc908ULL),
	          hash_bytes(row, n, 0xbb67ae8584caa73bULL) };

	if (k.a == 0 && k.b == 0)
		k.b = 1;
	return k;
}

static int set_grow(hml__sampler *s)
{
	size_t cap = s->set_cap ? 2 * s->set_cap : 1024, i, j;
	key *t = calloc(cap, sizeof(*t));

	if (!t)
		return hml__error_oom();
	for (i = 0; i < s->set_cap; i++) {
		key k = s->set[i];

		if (k.a == 0 && k.b == 0)
			continue;
		for (j = k.a & (cap - 1); t[j].a || t[j].b; j = (j + 1) & (cap - 1))
			;
		t[j] = k;
	}
	free(s->set);
	s->set = t;
	s->set_cap = cap;
	return 0;
}

/* 1 when `k` was new (and is now in the set), 0 when it was there. */
static int set_add(hml__sampler *s, key k)
{
	size_t j;
	int rc;

	if (2 * (s->set_n + 1) > s->set_cap && (rc = set_grow(s)) < 0)
		return rc;
	for (j = k.a & (s->set_cap - 1); s->set[j].a || s->set[j].b;
	     j = (j + 1) & (s->set_cap - 1))
		if (s->set[j].a == k.a && s->set[j].b == k.b)
			return 0;
	s->set[j] = k;
	s->set_n++;
	return 1;
}

/* A uniform number in (0, 1): logs of it are finite. */
static double open_uniform(hml__sampler *s)
{
	double u;

	while ((u = hml__rng_uniform(&s->rng)) == 0.0)
		;
	return u;
}

/* Algorithm L's gap: rows passed over before the next one taken. */
static int64_t skip(hml__sampler *s)
{
	double g = floor(log(open_uniform(s)) / log1p(-s->w));

	return !(g < SKIP_MAX) ? (int64_t)SKIP_MAX : (int64_t)g;
}

static int res_reserve(hml__sampler *s)
{
	int64_t cap;
	int i;

	if (s->held < s->res_cap)
		return 0;
	cap = s->res_cap ? 2 * s->res_cap : 1024;
	if (cap > s->cfg.reservoir)
		cap = s->cfg.reservoir;
	for (i = 0; i < 2; i++) {
		unsigned char *p = realloc(s->res[i], (size_t)cap * s->row_bytes[i] + 1);

		if (!p)
			return hml__error_oom();
		s->res[i] = p;
	}
	s->res_cap = cap;
	return 0;
}

/* Offer row `in`/`out` to the reservoir. */
static int res_offer(hml__sampler *s, const unsigned char *in, const unsigned char *out)
{
	int64_t n = s->cfg.reservoir, slot;
	int rc;

	if (s->held < n) {
		if ((rc = res_reserve(s)) < 0)
			return rc;
		slot = s->held++;
		if (s->held == n) {
			s->w = exp(log(open_uniform(s)) / (double)n);
			s->next = s->offered + 1 + skip(s);
		}
	} else if (s->offered == s->next) {
		slot = (int64_t)(hml__rng_uniform(&s->rng) * (double)n);
		s->w *= exp(log(open_uniform(s)) / (double)n);
		s->next += 1 + skip(s);
	} else {
		s->offered++;
		return 0;
	}
	s->offered++;
	memcpy(s->res[0] + (size_t)slot * s->row_bytes[0], in, s->row_bytes[0]);
	memcpy(s->res[1] + (size_t)slot * s->row_bytes[1], out, s->row_bytes[1]);
	return 0;
}

int hml__sampler_new(hml__sampler **out, const hml__sample_cfg *cfg,
                     const size_t row_bytes[2], const char *label)
{
	hml__sampler *s;

	*out = NULL;
	if (!(cfg->rate >= 0.0 && cfg->rate <= 1.0) || cfg->reservoir < 0)
		return hml__error_set(HML_EINVALID,
			"region '%s': sampling rate %g or reservoir %lld is out of range",
			label, cfg->rate, (long long)cfg->reservoir);
	if (!(s = calloc(1, sizeof(*s))))
		return hml__error_oom();
	s->cfg = *cfg;
	if (s->cfg.rate == 0.0)
		s->cfg.rate = 1.0;
	snprintf(s->label, sizeof(s->label), "%s", label);
	s->row_bytes[0] = row_bytes[0];
	s->row_bytes[1] = row_bytes[1];
	/* Each region its own stream, the same for a seed and a label. */
	s->rng = cfg->seed ^ hash_bytes((const unsigned char *)label, strlen(label), 0);
	*out = s;
	return 0;
}

void hml__sampler_free(hml__sampler *s)
{
	if (!s)
		return;
	free(s->set);
	free(s->res[0]);
	free(s->res[1]);
	free(s);
}

/* 1: keep row (or call) `in` of `n` bytes past the rate and the
 * duplicates, 0: drop it (counted as `rows`), negative: failure. */
static int passes(hml__sampler *s, const void *in, size_t n, int64_t rows)
{
	int rc;

	if (s->cfg.rate < 1.0 && hml__rng_uniform(&s->rng) >= s->cfg.rate) {
		s->dropped_rate += rows;
		return 0;
	}
	if (s->cfg.dedup) {
		if ((rc = set_add(s, row_key(in, n))) < 0)
			return rc;
		if (rc == 0) {
			s->dropped_dup += rows;
			return 0;
		}
	}
	return 1;
}

/* A call whose sides have different rows: kept or dropped whole. */
static int filter_call(hml__sampler *s, const void *in, int64_t rows[2])
{
	int rc;

	if (s->cfg.reservoir > 0)
		return hml__error_set(HML_ENOTSUPPORTED,
			"region '%s': a reservoir needs as many output rows as input rows per "
			"call (this call gives %lld and %lld)", s->label,
			(long long)rows[0], (long long)rows[1]);
	if ((rc = passes(s, in, (size_t)rows[0] * s->row_bytes[0], rows[0])) < 0)
		return rc;
	if (rc == 0)
		rows[0] = rows[1] = 0;
	return 0;
}

int hml__sampler_filter(hml__sampler *s, void *in, void *out, int64_t rows[2],
                        int64_t ncalls)
{
	unsigned char *pi = in, *po = out;
	size_t bi = s->row_bytes[0], bo = s->row_bytes[1];
	int64_t r, kept = 0, seen = rows[0];
	int rc = 0;

	s->calls_seen += ncalls;
	s->rows_seen += seen;
	if (rows[0] != rows[1]) {
		if ((rc = filter_call(s, in, rows)) == 0)
			s->rows_kept += rows[0];
		return rc;
	}
	for (r = 0; r < seen; r++) {
		const unsigned char *ri = pi + (size_t)r * bi, *ro = po + (size_t)r * bo;

		if ((rc = passes(s, ri, bi, 1)) < 0)
			break;
		if (rc == 0)
			continue;
		if (s->cfg.reservoir > 0) {
			if ((rc = res_offer(s, ri, ro)) < 0)
				break;
			continue;
		}
		if (kept != r) {
			memmove(pi + (size_t)kept * bi, ri, bi);
			memmove(po + (size_t)kept * bo, ro, bo);
		}
		kept++;
	}
	rows[0] = rows[1] = kept;
	s->rows_kept += kept;
	return rc < 0 ? rc : 0;
}

int64_t hml__sampler_rows(const hml__sampler *s, const void **in, const void **out)
{
	*in = s->res[0];
	*out = s->res[1];
	return s->held;
}

void hml__sampler_stats(const hml__sampler *s, hml__coll_sampling *o)
{
	memset(o, 0, sizeof(*o));
	o->rate = s->cfg.rate;
	o->reservoir = s->cfg.reservoir;
	o->dedup = s->cfg.dedup;
	o->seed = (int64_t)s->cfg.seed;
	o->calls_seen = s->calls_seen;
	o->rows_seen = s->rows_seen;
	o->rows_kept = s->rows_kept + s->held;
	o->dropped_rate = s->dropped_rate;
	o->dropped_duplicate = s->dropped_dup;
	o->dropped_reservoir = s->offered - s->held;
}
