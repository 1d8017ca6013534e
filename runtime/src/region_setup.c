/*
 * runtime/src/region_setup.c - what batch calls (region.c) and row calls
 * (rows.c) share of a region: its set-up on the first call (shapes frozen,
 * buffers allocated, the collector opened), the failure policy, the
 * checks of a model's input and outputs, a side's gather (batch calls
 * and guarded collection, guardcollect.c), and the agreement function of
 * processes that must take one path (hml_region_set_agree).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "log.h"
#include "region_internal.h"
#include "tmap_internal.h"

static int uses_model(hml_mode m)
{
	return m == HML_MODE_INFER || m == HML_MODE_INTERLEAVE || m == HML_MODE_SHADOW;
}

/* Fix the combined shape of one side: equal rows, equal leading feature
 * extents, last extents summed. */
static int side_freeze(side *s, const char *label, const char *what)
{
	char a[128], b[128];
	int64_t shape[HML_MAX_DIMS];
	size_t k;
	int d, nd;

	if (s->n == 0)
		return hml__error_set(HML_EINVALID,
			"region '%s' has no %s map: add one before hml_region_begin()",
			label, what);
	s->rows = hml_tmap_rows(s->maps[0]);
	s->ndim = hml_tmap_features(s->maps[0], s->shape);
	s->app_dtype = HML_F32;
	for (k = 0; k < s->n; k++) {
		nd = hml_tmap_features(s->maps[k], shape);
		if (hml_tmap_dtype(s->maps[k]) == HML_F64)
			s->app_dtype = HML_F64;
		if (k == 0)
			continue;
		if (hml_tmap_rows(s->maps[k]) != s->rows)
			return hml__error_set(HML_ESHAPE,
				"region '%s': %s map %zu has %lld rows but map 0 has %lld",
				label, what, k, (long long)hml_tmap_rows(s->maps[k]),
				(long long)s->rows);
		for (d = 0; d < nd - 1 && nd == s->ndim; d++)
			if (shape[d] != s->shape[d])
				break;
		if (nd != s->ndim || d < nd - 1) {
			hml__format_shape(a, sizeof(a), shape, nd);
			hml__format_shape(b, sizeof(b), s->shape, s->ndim);
			return hml__error_set(HML_ESHAPE,
				"region '%s': %s map %zu has features %s, which cannot be concatenated with %s",
				label, what, k, a, b);
		}
		s->shape[nd - 1] += shape[nd - 1];
	}
	s->row_size = 1;
	for (d = 0; d < s->ndim; d++)
		s->row_size *= s->shape[d];
	return 0;
}

static int side_alloc(side *s, int app_buf, int model_buf, hml_dtype model_dtype)
{
	size_t n = (size_t)(s->rows * s->row_size);

	/* Idempotent: a freeze retried after running out of memory keeps what
	 * the first attempt allocated. */
	if (app_buf && !s->buf && !(s->buf = malloc(n * hml_dtype_size(s->app_dtype))))
		return hml__error_oom();
	if (model_buf && !s->mbuf && !(s->mbuf = malloc(n * hml_dtype_size(model_dtype))))
		return hml__error_oom();
	return 0;
}

/* "text; text" of the maps' functors (what 0), domains (1) or array names
 * (2), for the attributes of collected data. */
static char *side_describe(const side *s, int what)
{
	char *out = hml__strdup(""), *part, *joined;
	size_t k;

	for (k = 0; out && k < s->n; k++) {
		part = what == 0 ? hml__strdup(hml__tmap_functor_text(s->maps[k]))
		     : what == 1 ? hml__strdup(hml__tmap_domain(s->maps[k]))
		     : hml__tmap_array_names(s->maps[k]);
		joined = part ? malloc(strlen(out) + strlen(part) + 3) : NULL;
		if (joined)
			sprintf(joined, "%s%s%s", out, k ? "; " : "", part);
		free(part);
		free(out);
		out = joined;
	}
	return out;
}

int hml_region_set_agree(hml_region *r, hml_agree_fn agree, void *ctx)
{
	if (!r)
		return hml__error_set(HML_EINVALID, "region is NULL");
	if (r->in_call)
		return hml__error_set(HML_EINVALID, "region '%s': hml_region_set_agree() inside "
		                      "hml_region_begin() and hml_region_end()", r->label);
	r->agree = agree;
	r->agree_ctx = agree ? ctx : NULL;
	return 0;
}

/*
 * A failure of the model or of collection. Under the fallback policy it is
 * reported once, the failing feature is switched off for the rest of the
 * run, and the call goes on with the original code; under the fail policy
 * the error goes back to the application.
 */
int hml__region_degrade(hml_region *r, int rc, int *broken, const char *consequence)
{
	const char *msg = hml_error_last()->message;
	char own[160];

	if (r->cfg.on_error == HML_ON_ERROR_FAIL)
		return rc;
	/* The message names the region once, whether or not it did already. */
	snprintf(own, sizeof(own), "region '%s': ", r->label);
	if (strncmp(msg, own, strlen(own)) == 0)
		msg += strlen(own);
	/* Row calls read the flags without the lock (rows.c). */
	if (!__atomic_exchange_n(broken, 1, __ATOMIC_RELAXED))
		hml__log(HML_LOG_WARNING, "region '%s': %s; %s", r->label, msg, consequence);
	return 0;
}

static int open_collector(hml_region *r)
{
	hml__collector_desc d;
	char *texts[6] = { 0 };
	int rc, i;

	memset(&d, 0, sizeof(d));
	d.path = r->cfg.db;
	d.label = r->label;
	d.in_dtype = r->in.app_dtype;
	d.out_dtype = r->out.app_dtype;
	d.in_ndim = r->in.ndim;
	d.out_ndim = r->out.ndim;
	memcpy(d.in_shape, r->in.shape, sizeof(d.in_shape));
	memcpy(d.out_shape, r->out.shape, sizeof(d.out_shape));
	for (i = 0; i < 3; i++) {
		texts[2 * i] = side_describe(&r->in, i);
		texts[2 * i + 1] = side_describe(&r->out, i);
		if (!texts[2 * i] || !texts[2 * i + 1]) {
			rc = hml__error_oom();
			goto done;
		}
	}
	d.in_functor = texts[0];
	d.out_functor = texts[1];
	d.in_domain = texts[2];
	d.out_domain = texts[3];
	d.in_arrays = texts[4];
	d.out_arrays = texts[5];
	d.flush_bytes = r->cfg.flush_bytes;
	d.flush_seconds = r->cfg.flush_seconds;
	d.sample.rate = r->cfg.collect_rate;
	d.sample.reservoir = r->cfg.collect_reservoir;
	d.sample.dedup = r->cfg.collect_dedup;
	d.sample.seed = (uint64_t)r->cfg.collect_seed;
	d.compression = r->cfg.collect_compression;
	rc = hml__collector_open(&r->col, &d);
done:
	for (i = 0; i < 6; i++)
		free(texts[i]);
	return rc;
}

/* On the first call: fix the shapes and allocate the buffers. */
static int freeze(hml_region *r)
{
	hml_mode m = r->cfg.mode;
	int rc;

	if ((rc = side_freeze(&r->in, r->label, "input")) < 0 ||
	    (rc = side_freeze(&r->out, r->label, "output")) < 0)
		return rc;
	/* Collected rows are gathered straight into the collector's buffer;
	 * only shadow calls gather the outputs here. */
	if ((rc = side_alloc(&r->in, r->collect_guarded, uses_model(m), r->model_dtype)) < 0 ||
	    (rc = side_alloc(&r->out, m == HML_MODE_SHADOW || r->collect_guarded, 0,
	                     r->model_dtype)) < 0)
		return rc;
	r->frozen = 1;
	return 0;
}

/* Everything a call needs before it can choose its path. A failure under
 * the fail policy is not remembered: the next call tries again and fails
 * the same way, with the same message. */
int hml__region_prepare(hml_region *r)
{
	int rc;

	if (!r->frozen && (rc = freeze(r)) < 0)
		return rc;
	if (hml__region_collects(r) && !r->col && !r->collect_broken &&
	    (rc = open_collector(r)) < 0 &&
	    (rc = hml__region_degrade(r, rc, &r->collect_broken, "not collecting")) < 0)
		return rc;
	return 0;
}

void hml__side_shape_text(char *buf, size_t size, const side *s)
{
	int64_t full[HML_MAX_DIMS + 1];

	full[0] = s->rows;
	memcpy(full + 1, s->shape, (size_t)s->ndim * sizeof(int64_t));
	hml__format_shape(buf, size, full, s->ndim + 1);
}

/* A model that declares its input features (hml-trained models do) is
 * checked before its first forward, so a mismatch names both shapes. */
int hml__region_check_input(hml_region *r)
{
	char got[160], want[160];
	int64_t decl[HML_MAX_DIMS];
	int d, nd, same;

	if ((nd = hml__model_declared_input(r->model, decl)) <= 0)
		return 0;
	same = nd == r->in.ndim;
	for (d = 0; same && d < nd; d++)
		same = decl[d] == r->in.shape[d];
	if (same)
		return 0;
	hml__format_shape(got, sizeof(got), decl, nd);
	hml__side_shape_text(want, sizeof(want), &r->in);
	return hml__error_set(HML_ESHAPE,
		"model '%s' expects input rows %s but region '%s' gives %s",
		r->cfg.model, got, r->label, want);
}

/* Values of `y` (n elements of dtype) that are NaN or infinite. */
int64_t hml__count_nonfinite(const void *y, hml_dtype dtype, int64_t n)
{
	int64_t i, bad = 0;

	if (dtype == HML_F64)
		for (i = 0; i < n; i++)
			bad += !isfinite(((const double *)y)[i]);
	else
		for (i = 0; i < n; i++)
			bad += !isfinite(((const float *)y)[i]);
	return bad;
}

/* Gather all maps of a side into `dst`, or return the application memory
 * itself when a single map is already laid out as the tensor. */
int hml__side_gather(const side *s, void *dst, hml_dtype dtype, int threads,
                       const void **result)
{
	int64_t last = s->shape[s->ndim - 1], col = 0, shape[HML_MAX_DIMS];
	void *direct;
	size_t k;
	int rc, nd;

	if (s->n == 1 && (direct = hml_tmap_contiguous(s->maps[0], dtype)) != NULL) {
		*result = direct;
		return 0;
	}
	for (k = 0; k < s->n; k++) {
		if ((rc = hml_tmap_gather_into(s->maps[k], dst, dtype, last, col, threads)) < 0)
			return rc;
		nd = hml_tmap_features(s->maps[k], shape);
		col += shape[nd - 1];
	}
	*result = dst;
	return 0;
}
