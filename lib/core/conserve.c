/*
 * lib/core/conserve.c - an output that conserves a sum (conserve.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/conserve.h"
#include "core/error.h"

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* An optional integer at *p: 1 and *v when there is one, 0 when the item
 * has none there, HML_EINVALID for a malformed one. */
static int bound(const char **p, int64_t *v, const char *spec)
{
	const char *s = skip_space(*p);
	char *end;
	long long n;

	if (*s == ':' || *s == ',' || *s == '\0') {
		*p = s;
		return 0;
	}
	errno = 0;
	n = strtoll(s, &end, 10);
	if (end == s || errno) {
		int len = (int)strcspn(s, ",:");

		return hml__error_set(HML_EINVALID, "conserve '%s': '%.*s' is not an index", spec,
		                      len, s);
	}
	*v = n;
	*p = skip_space(end);
	return 1;
}

int hml__conserve_parse(hml__conserve *c, const char *spec)
{
	const char *p = spec;
	int rc, d;

	memset(c, 0, sizeof(*c));
	if (!spec || !*skip_space(spec))
		return hml__error_set(HML_EINVALID, "conserve '%s': no dimension", spec ? spec : "");
	for (d = 0;; d++) {
		if (d == HML__CONSERVE_DIMS)
			return hml__error_set(HML_EINVALID, "conserve '%s': more than %d dimensions",
			                      spec, HML__CONSERVE_DIMS);
		if ((rc = bound(&p, &c->lo[d], spec)) < 0)
			return rc;
		c->has_lo[d] = (unsigned char)rc;
		if (*p == ':') {
			p++;
			if ((rc = bound(&p, &c->hi[d], spec)) < 0)
				return rc;
			c->has_hi[d] = (unsigned char)rc;
		} else if (!c->has_lo[d]) {
			return hml__error_set(HML_EINVALID, "conserve '%s': dimension %d is empty (an "
			                      "index, A:B or ':')", spec, d);
		} else {
			c->index[d] = 1;
		}
		if (*p == '\0')
			break;
		if (*p != ',') {
			int len = (int)strcspn(p, ",");

			return hml__error_set(HML_EINVALID, "conserve '%s': '%.*s' is not an index",
			                      spec, len, p);
		}
		p++;
	}
	c->ndim = d + 1;
	return 0;
}

int hml__conserve_format(char *buf, size_t size, const hml__conserve *c)
{
	size_t at = 0;
	int d, n;

	for (d = 0; d < c->ndim; d++) {
		char lo[24] = "", hi[24] = "";

		if (c->has_lo[d])
			snprintf(lo, sizeof(lo), "%" PRId64, c->lo[d]);
		if (c->has_hi[d])
			snprintf(hi, sizeof(hi), "%" PRId64, c->hi[d]);
		n = snprintf(buf + at, at < size ? size - at : 0, "%s%s%s%s", d ? "," : "", lo,
		             c->index[d] ? "" : ":", hi);
		if (n < 0 || (size_t)n >= (at < size ? size - at : 0))
			return hml__error_set(HML_EINVALID, "a conserve spec longer than %zu bytes",
			                      size);
		at += (size_t)n;
	}
	return 0;
}

/* v counted from the end when negative. */
static int64_t from_end(int64_t v, int64_t extent)
{
	return v < 0 ? extent + v : v;
}

static void shape_text(char *buf, size_t size, int ndim, const int64_t *shape)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int d = 0; d < ndim && at < size; d++)
		at += (size_t)snprintf(buf + at, size - at, "%s%" PRId64, d ? ", " : "[", shape[d]);
	if (at < size)
		snprintf(buf + at, size - at, "]");
}

int hml__conserve_resolve(hml__conserve_box *b, const hml__conserve *c, int ndim,
                          const int64_t *shape)
{
	char spec[160], text[160];
	int d;

	memset(b, 0, sizeof(*b));
	if (hml__conserve_format(spec, sizeof(spec), c) < 0)
		snprintf(spec, sizeof(spec), "...");
	if (c->ndim != ndim) {
		shape_text(text, sizeof(text), ndim, shape);
		return hml__error_set(HML_EINVALID, "conserve '%s': %d dimension%s, a row has %d (%s)",
		                      spec, c->ndim, c->ndim == 1 ? "" : "s", ndim, text);
	}
	b->ndim = ndim;
	b->count = b->row_size = 1;
	for (d = 0; d < ndim; d++) {
		int64_t lo = c->has_lo[d] ? from_end(c->lo[d], shape[d]) : 0;
		int64_t hi = c->index[d] ? lo + 1 : c->has_hi[d] ? from_end(c->hi[d], shape[d]) : shape[d];

		if (c->index[d] && (lo < 0 || lo >= shape[d]))
			return hml__error_set(HML_EINVALID, "conserve '%s': index %" PRId64 " is outside "
			                      "dimension %d of extent %" PRId64, spec, c->lo[d], d, shape[d]);
		if (lo < 0 || hi > shape[d] || lo >= hi)
			return hml__error_set(HML_EINVALID, "conserve '%s': range %" PRId64 ":%" PRId64
			                      " of dimension %d (extent %" PRId64 ") is empty or outside",
			                      spec, lo, hi, d, shape[d]);
		b->shape[d] = shape[d];
		b->lo[d] = lo;
		b->hi[d] = hi;
		b->count *= hi - lo;
		b->row_size *= shape[d];
	}
	return 0;
}

/* The box's rows of contiguous elements: the last dimension's [lo, hi)
 * at every index of the others, idx the odometer over those. */
static void box_start(const hml__conserve_box *b, int64_t *idx)
{
	for (int d = 0; d < b->ndim; d++)
		idx[d] = b->lo[d];
}

static int64_t box_offset(const hml__conserve_box *b, const int64_t *idx)
{
	int64_t off = 0;

	for (int d = 0; d < b->ndim; d++)
		off = off * b->shape[d] + idx[d];
	return off;
}

/* idx advanced to the next run; 0 when there is none. */
static int box_next(const hml__conserve_box *b, int64_t *idx)
{
	for (int d = b->ndim - 2; d >= 0; d--) {
		if (++idx[d] < b->hi[d])
			return 1;
		idx[d] = b->lo[d];
	}
	return 0;
}

/* The sum over the box of one row (f64: doubles, else floats), in double. */
static double box_sum(const hml__conserve_box *b, const void *row, int f64)
{
	int64_t idx[HML__CONSERVE_DIMS], len = b->hi[b->ndim - 1] - b->lo[b->ndim - 1], k, off;
	double s = 0;

	box_start(b, idx);
	do {
		off = box_offset(b, idx);
		for (k = 0; k < len; k++)
			s += f64 ? ((const double *)row)[off + k] : (double)((const float *)row)[off + k];
	} while (box_next(b, idx));
	return s;
}

static void box_add(const hml__conserve_box *b, void *row, int f64, double add)
{
	int64_t idx[HML__CONSERVE_DIMS], len = b->hi[b->ndim - 1] - b->lo[b->ndim - 1], k, off;

	box_start(b, idx);
	do {
		off = box_offset(b, idx);
		for (k = 0; k < len; k++) {
			if (f64)
				((double *)row)[off + k] += add;
			else
				((float *)row)[off + k] = (float)((double)((float *)row)[off + k] + add);
		}
	} while (box_next(b, idx));
}

static void apply(const hml__conserve_box *b, const void *in, void *out, int64_t rows,
                  int f64)
{
	size_t bytes = (size_t)b->row_size * (f64 ? sizeof(double) : sizeof(float));

	for (int64_t r = 0; r < rows; r++) {
		const void *x = (const char *)in + (size_t)r * bytes;
		void *y = (char *)out + (size_t)r * bytes;

		box_add(b, y, f64, (box_sum(b, x, f64) - box_sum(b, y, f64)) / (double)b->count);
	}
}

void hml__conserve_apply_f32(const hml__conserve_box *b, const float *in, float *out,
                             int64_t rows)
{
	apply(b, in, out, rows, 0);
}

void hml__conserve_apply_f64(const hml__conserve_box *b, const double *in, double *out,
                             int64_t rows)
{
	apply(b, in, out, rows, 1);
}
