/*
 * runtime/src/region_call.c - a region's batch call: hml_region_begin()
 * chooses the call's path (original code, collection, the model, shadow,
 * or the model with guarded rows sent back, rowguard.c), agrees on it with
 * the other processes when asked to (hml_region_set_agree), runs the model
 * and scatters its answers; hml_region_end() finishes what the path needs
 * (collected outputs, shadow comparison, guarded collection) and counts it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "core/error.h"
#include "core/util.h"
#include "rowguard.h"
#include "loader/loader.h"
#include "log.h"
#include "region_internal.h"
#include "tmap_internal.h"

static int side_scatter(const side *s, const void *src, hml_dtype dtype, int threads)
{
	int64_t last = s->shape[s->ndim - 1], col = 0, shape[HML_MAX_DIMS];
	size_t k;
	int rc, nd;

	for (k = 0; k < s->n; k++) {
		if ((rc = hml_tmap_scatter_from(s->maps[k], src, dtype, last, col, threads)) < 0)
			return rc;
		nd = hml_tmap_features(s->maps[k], shape);
		col += shape[nd - 1];
	}
	return 0;
}

/* The model's output must be [rows, *features] of the output side; a model
 * that returns [rows] for one feature, or any shape with the same rows and
 * the same values per row, is accepted. */
static int check_output(hml_region *r, int ndim, const int64_t *shape)
{
	char got[160], want[160];
	int64_t per_row = 1;
	int d;

	for (d = 1; d < ndim; d++)
		per_row *= shape[d];
	if (ndim >= 1 && shape[0] == r->out.rows && per_row == r->out.row_size)
		return 0;
	hml__format_shape(got, sizeof(got), shape, ndim);
	hml__side_shape_text(want, sizeof(want), &r->out);
	return hml__error_set(HML_ESHAPE,
		"model '%s' returns %s but region '%s' needs outputs %s",
		r->cfg.model, got, r->label, want);
}

/* The inputs as the model reads them, in *dt: the application's own array
 * when the side is one contiguous map whose dtype the model reads itself (a
 * compiled model converts float64 and int32 values where it reads them,
 * hml/cmodel.h), else gathered into the model's dtype. A guard checks rows
 * in the model's dtype, and conservation needs the input in the output's
 * dtype (not int32): those calls gather. */
static int model_input(hml_region *r, const void **x, hml_dtype *dt)
{
	const hml_array *a = r->in.n == 1 ? hml_tmap_array(r->in.maps[0], 0) : NULL;
	hml_dtype app = a ? a->dtype : r->model_dtype;
	const void *direct;

	if (!r->guard && app != r->model_dtype &&
	    !(r->cfg.conserve && app == HML_I32) && hml__model_takes(r->model, app) &&
	    (direct = hml_tmap_contiguous(r->in.maps[0], app)) != NULL) {
		*x = direct;
		*dt = app;
		return 0;
	}
	*dt = r->model_dtype;
	return hml__side_gather(&r->in, r->in.mbuf, r->model_dtype, r->cfg.threads, x);
}

/* Gather the inputs and run the model; the output stays in the model.
 * With a guard: 1 when some rows are guarded and the region iterates over
 * hml_region_rows() (the model still runs), 2 when the whole call must
 * run the original code (no forward). */
static int run_model(hml_region *r, const void **out, hml_dtype *out_dtype)
{
	int guarded = 0;
	int64_t shape[HML_MAX_DIMS + 1], oshape[HML_MAX_DIMS + 1];
	const void *x;
	hml_dtype xdt;
	double t0 = hml__now(), t1;
	int rc, ond;

	if ((rc = model_input(r, &x, &xdt)) < 0)
		return rc;
	t1 = hml__now();
	r->stats.gather_s += t1 - t0;
	if (r->guard && (guarded = hml__guard_call(r, x)) < 0)
		return guarded;
	if (guarded == 2)
		return 2;
	t1 = hml__now();
	shape[0] = r->in.rows;
	memcpy(shape + 1, r->in.shape, (size_t)r->in.ndim * sizeof(int64_t));
	if (!r->model_checked && (rc = hml__region_check_input(r)) < 0)
		return rc;
	if ((rc = hml__model_forward(r->model, x, xdt, r->in.ndim + 1, shape)) < 0)
		return rc;
	if ((rc = hml__model_output(r->model, out, out_dtype, &ond, oshape)) < 0)
		return rc;
	if (!r->model_checked) {
		if ((rc = check_output(r, ond, oshape)) < 0 ||
		    (rc = hml__region_conserve_setup(r)) < 0)
			return rc;
		r->model_checked = 1;
	}
	if (r->conserve_on && (rc = hml__region_conserve_apply(r, x, xdt, out, *out_dtype)) < 0)
		return rc;
	r->stats.forward_s += hml__now() - t1;
	return guarded;
}

/*
 * A model output with NaN or Inf never reaches application memory. The call
 * is counted; under the fail policy the error (HML_EMODEL) goes back to the
 * application, under the fallback policy this call runs the original code
 * (the model stays in use: the next input may be fine) and the first such
 * call is reported. Returns 0 when all outputs are finite, 1 when this call
 * falls back, HML_EMODEL under the fail policy.
 */
static int check_finite(hml_region *r, const void *y, hml_dtype ydt)
{
	int64_t bad = hml__count_nonfinite(y, ydt, r->out.rows * r->out.row_size);
	int rc;

	if (bad == 0)
		return 0;
	r->stats.nonfinite_calls++;
	rc = hml__error_set(HML_EMODEL,
		"region '%s': model '%s' returned %lld non-finite output values (NaN or Inf) in call %llu",
		r->label, r->cfg.model, (long long)bad, (unsigned long long)r->call_no + 1);
	if (r->cfg.on_error == HML_ON_ERROR_FAIL)
		return rc;
	if (r->stats.nonfinite_calls == 1)
		hml__log(HML_LOG_WARNING, "%s; running the original code for such calls",
		         hml_error_last()->message);
	r->stats.fallback_calls++;
	return 1;
}

/* Gather one side of a collected call straight into the collector's
 * buffer. *placed tells a failure of the collector (no room) from one of
 * the gather. */
static int collect_side(hml_region *r, side *s, int which, int *placed)
{
	const void *x;
	void *dst;
	double t0 = hml__now(), t1;
	int rc;

	*placed = 0;
	rc = hml__collector_next(r->col, which, s->rows, &dst);
	/* The collector's place for the rows (growing its buffer, a realloc
	 * that may copy all rows so far) is the collector's own cost, not a
	 * deployed model's: gather_seconds (lib/store/cost.h) is the gather
	 * alone, what a model pays too. */
	t1 = hml__now();
	r->stats.write_s += t1 - t0;
	if (rc < 0)
		return rc;
	*placed = 1;
	if ((rc = hml__side_gather(s, dst, s->app_dtype, r->cfg.threads, &x)) == 0 && x != dst)
		memcpy(dst, x, (size_t)(s->rows * s->row_size) * hml_dtype_size(s->app_dtype));
	r->stats.gather_s += hml__now() - t1;
	return rc;
}

/* Which path this call takes, before any work is done. `*wanted` is set
 * when the call wanted the model but cannot have it (a fallback). */
static enum path choose(hml_region *r, int run_original, int *wanted)
{
	hml_mode m = __atomic_load_n(&r->cfg.mode, __ATOMIC_ACQUIRE);   /* a swap may change it */
	int model_ok = r->model && !r->model_broken;

	*wanted = !model_ok;

	if (m == HML_MODE_COLLECT || run_original) {
		*wanted = 0;
		if (m == HML_MODE_COLLECT)
			return r->collect_broken ? PATH_ORIGINAL : PATH_COLLECT;
		return PATH_ORIGINAL;
	}
	switch (m) {
	case HML_MODE_INFER:
		return model_ok ? PATH_MODEL : PATH_ORIGINAL;
	case HML_MODE_INTERLEAVE: {
		/* one read: a swap may change the ratio between two */
		uint64_t n = (uint64_t)__atomic_load_n(&r->cfg.interleave, __ATOMIC_RELAXED);

		if (r->call_no % (n + 1) == n) {
			*wanted = 0;
			return PATH_ORIGINAL;
		}
		return model_ok ? PATH_MODEL : PATH_ORIGINAL;
	}
	case HML_MODE_SHADOW:
		r->shadow_acc += r->cfg.shadow;
		if (r->shadow_acc < 1.0 - 1e-12) {
			*wanted = 0;
			return PATH_ORIGINAL;
		}
		r->shadow_acc -= 1.0;
		return model_ok ? PATH_SHADOW : PATH_ORIGINAL;
	default:
		*wanted = 0;
		return PATH_ORIGINAL;
	}
}

/* The path agreed with the other processes (hml_region_set_agree), once
 * per call: nonzero when this process or another runs the original code.
 * `local`: this one does. */
static int agreed(hml_region *r, int local, int *asked)
{
	if (*asked || !r->agree ||
	    (r->cfg.mode != HML_MODE_INFER && r->cfg.mode != HML_MODE_INTERLEAVE))
		return local;
	*asked = 1;
	return r->agree(local, r->agree_ctx) != 0 || local;
}

/* The calls completed, batch and row, for a swap's record (swap.h). */
static uint64_t calls_made(hml_region *r)
{
	return r->call_no + hml__rows_calls(r);
}

int hml_region_begin_if(hml_region *r, int run_original)
{
	const void *y;
	hml_dtype ydt;
	double t;
	int rc, fell_back, placed, guarded, asked = 0;

	if (!r)
		return hml__error_set(HML_EINVALID, "region is NULL");
	if (r->in_call)
		return hml__error_set(HML_EINVALID,
			"region '%s': hml_region_begin() called again before hml_region_end()",
			r->label);
	r->in_call = 1;
	if (r->cfg.mode == HML_MODE_OFF) {
		r->started = 1;
		r->path = PATH_ORIGINAL;
		if (r->timed)
			r->t_begin = hml__now();
		return 1;
	}
	r->t_begin = hml__now();
	if ((rc = hml__region_prepare(r)) < 0) {
		r->path = PATH_NONE;
		return rc;
	}
	r->started = 1;
	hml__swap_poll(r, r->t_begin, calls_made);
	r->path = choose(r, run_original, &fell_back);
	if (fell_back)
		r->stats.fallback_calls++;

	switch (r->path) {
	case PATH_MODEL:
		if ((rc = run_model(r, &y, &ydt)) == 2) {
			r->path = PATH_ORIGINAL;   /* the guard: this whole call */
			if ((rc = hml__gcollect_begin(r)) < 0) {
				r->path = PATH_NONE;
				return rc;
			}
			break;
		}
		guarded = rc == 1;
		if (guarded)
			rc = 0;
		if (rc == 0 && (rc = check_finite(r, y, ydt)) != 0) {
			hml__guard_call_end(r);
			if (rc < 0) {
				r->path = PATH_NONE;
				return rc;
			}
			r->path = PATH_ORIGINAL;   /* this call only */
			break;
		}
		if (rc == 0 && agreed(r, guarded, &asked) && !guarded) {
			/* Another process runs the original code: so does this one,
			 * before the model's answers overwrite anything. */
			hml__guard_call_end(r);
			r->stats.agreed_calls++;
			r->path = PATH_ORIGINAL;
			break;
		}
		if (rc == 0) {
			t = hml__now();
			rc = side_scatter(&r->out, y, ydt, r->cfg.threads);
			r->stats.scatter_s += hml__now() - t;
			if (rc == 0 && guarded && (rc = hml__gcollect_begin(r)) < 0) {
				hml__guard_call_end(r);
				r->path = PATH_NONE;
				return rc;
			}
			if (rc == 0 && guarded) {
				r->path = PATH_GUARDED;   /* the original code: guarded rows */
				r->t_original = hml__now();
				return 1;
			}
			if (rc == 0)
				return 0;
		}
		hml__guard_call_end(r);
		/* Nothing was scattered unless the scatter itself failed, and a
		 * failed scatter is rewritten by the original code below. */
		if ((rc = hml__region_degrade(r, rc, &r->model_broken, "running the original code")) < 0) {
			r->path = PATH_NONE;
			return rc;
		}
		r->stats.fallback_calls++;
		r->path = PATH_ORIGINAL;
		break;
	case PATH_SHADOW:
		if ((rc = run_model(r, &y, &ydt)) < 0) {
			if ((rc = hml__region_degrade(r, rc, &r->model_broken, "shadowing stopped")) < 0) {
				r->path = PATH_NONE;
				return rc;
			}
			r->stats.fallback_calls++;
			r->path = PATH_ORIGINAL;
		}
		break;
	case PATH_COLLECT:
		/* Inputs are gathered before the original code, which may
		 * overwrite them (in-place time steps). */
		rc = collect_side(r, &r->in, HML__COLLECTOR_INPUT, &placed);
		if (rc < 0 && !placed &&
		    (rc = hml__region_degrade(r, rc, &r->collect_broken, "not collecting")) == 0) {
			r->path = PATH_ORIGINAL;
		} else if (rc < 0) {
			r->path = PATH_NONE;
			return rc;
		}
		break;
	default:
		break;
	}
	agreed(r, 1, &asked);
	r->t_original = hml__now();
	return 1;
}

int hml_region_begin(hml_region *r)
{
	return hml_region_begin_if(r, 0);
}

/* Compare the model's output (kept in the model since begin) with what the
 * original code wrote. */
static int shadow_compare(hml_region *r)
{
	const void *y, *truth;
	hml_dtype ydt;
	int64_t shape[HML_MAX_DIMS + 1], i, n = r->out.rows * r->out.row_size;
	double t = hml__now(), e, sq = 0.0, mx = r->stats.shadow_max_abs;
	int rc, nd;

	if ((rc = hml__side_gather(&r->out, r->out.buf, r->out.app_dtype, r->cfg.threads, &truth)) < 0)
		return rc;
	if ((rc = hml__model_output(r->model, &y, &ydt, &nd, shape)) < 0)
		return rc;
	for (i = 0; i < n; i++) {
		double a = r->out.app_dtype == HML_F64 ? ((const double *)truth)[i]
		                                       : ((const float *)truth)[i];
		double b = ydt == HML_F64 ? ((const double *)y)[i] : ((const float *)y)[i];
		e = fabs(a - b);
		sq += e * e;
		if (e > mx || isnan(e))
			mx = e;
	}
	if (hml__count_nonfinite(y, ydt, n) > 0)
		r->stats.nonfinite_calls++;
	r->shadow_sq += sq;
	r->shadow_n += (uint64_t)n;
	r->stats.shadow_rmse = sqrt(r->shadow_sq / (double)r->shadow_n);
	r->stats.shadow_max_abs = mx;
	r->stats.shadow_calls++;
	r->stats.gather_s += hml__now() - t;
	return 0;
}

int hml_region_end(hml_region *r)
{
	double t, orig;
	int rc = 0, placed;

	if (!r)
		return hml__error_set(HML_EINVALID, "region is NULL");
	if (!r->in_call)
		return hml__error_set(HML_EINVALID,
			"region '%s': hml_region_end() without hml_region_begin()", r->label);
	r->in_call = 0;
	r->stats.calls++;
	r->call_no++;
	if (r->cfg.mode == HML_MODE_OFF) {
		r->stats.original_calls++;
		if (r->timed) {
			double dt = hml__now() - r->t_begin;
			r->stats.original_s += dt;
			r->stats.region_s += dt;
		}
		return 0;
	}
	t = hml__now();
	if (r->path == PATH_MODEL) {
		r->stats.model_calls++;
		goto done;
	}
	if (r->path == PATH_GUARDED) {
		r->stats.model_calls++;
		r->stats.original_s += t - r->t_original;
		rc = hml__gcollect_end(r, t - r->t_original);
		hml__guard_call_end(r);
		goto done;
	}
	if (r->path == PATH_NONE)
		goto done;
	orig = t - r->t_original;
	r->stats.original_s += orig;
	r->stats.original_calls++;
	if (r->path == PATH_COLLECT) {
		rc = collect_side(r, &r->out, HML__COLLECTOR_OUTPUT, &placed);
		if (rc == 0) {
			double t1 = hml__now();
			rc = hml__collector_commit(r->col, orig);
			r->stats.write_s += hml__now() - t1;
		}
		if (rc == 0) {
			r->stats.rows_in += (uint64_t)r->in.rows;
			r->stats.rows_out += (uint64_t)r->out.rows;
		} else {
			rc = hml__region_degrade(r, rc, &r->collect_broken, "not collecting");
		}
	} else if (r->gc_rows) {
		rc = hml__gcollect_end(r, orig);   /* the guard sent the whole call */
	} else if (r->path == PATH_SHADOW) {
		if ((rc = shadow_compare(r)) < 0)
			rc = hml__region_degrade(r, rc, &r->model_broken, "shadowing stopped");
	}
done:
	r->stats.region_s += hml__now() - r->t_begin;
	r->path = PATH_NONE;
	return rc;
}
