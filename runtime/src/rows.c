/*
 * runtime/src/rows.c - row calls: the region inside a loop body, one call
 * per iteration, from any number of threads at once (hml/region.h).
 *
 * Each thread gets a slot per region, found through a small thread-local
 * cache keyed by the region's id (never reused, so a freed region's entry
 * never matches again). Everything a call changes lives in the slot; the
 * region's lock is taken only for what the threads share: the first call's
 * set-up, the model, the collector and the list of slots. Collected rows
 * stay in the slot until it holds a chunk (about CHUNK_BYTES), which goes
 * to the collector as one record standing for its calls.
 *
 * hml_region_row_begin_at() is the same call for maps of one row whose
 * arrays move every call (locals of the loop body, a directive's
 * sections): the addresses stay in the slot for the call and replace the
 * bound ones in its transfers, so the shared maps are never written.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "rowguard.h"
#include "log.h"
#include "region_internal.h"
#include "tmap_internal.h"

#define CHUNK_BYTES ((size_t)64 << 10)
#define CHUNK_ROWS_MAX 4096
#define CACHE_WAYS 4

struct hml__row_slot {
	hml__row_slot *next;
	pthread_t owner;
	int ready;                 /* this thread saw the region set up */
	int in_call;
	enum path path;
	int64_t row;
	const void *const *data;   /* this call's array addresses (`at`), or NULL */
	const void **at;           /* room for them: ndata */
	size_t nin, ndata;         /* arrays of the input maps, of all maps */
	double t_begin, t_original;
	uint64_t call_no;          /* interleave counts per thread */
	double shadow_acc, shadow_sq;
	uint64_t shadow_n;
	void *x;                   /* one input row, model dtype */
	void *y;                   /* one output row from the model */
	hml_dtype ydt;
	void *truth;               /* one output row, app dtype (shadow) */
	unsigned char *cin, *cout; /* collected rows, app dtypes */
	int64_t cap, n;            /* rows they hold, rows buffered */
	double seconds;            /* original code of the buffered rows */
	hml_region_stats st;
};

static uint64_t next_id = 1;

static _Thread_local struct { uint64_t id; hml__row_slot *slot; } cache[CACHE_WAYS];
static _Thread_local unsigned cache_next;

int hml__rows_init(hml_region *r)
{
	if (pthread_mutex_init(&r->mu, NULL) != 0)
		return hml__error_set(HML_ERROR, "region '%s': cannot create its lock", r->label);
	r->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
	return 0;
}

static size_t row_bytes(const side *s, hml_dtype dtype)
{
	return (size_t)s->row_size * hml_dtype_size(dtype);
}

static size_t side_arrays(const side *sd)
{
	size_t k, n = 0;

	for (k = 0; k < sd->n; k++)
		n += hml__tmap_narrays(sd->maps[k]);
	return n;
}

/* This thread's slot of `r`, made on its first row call. */
static hml__row_slot *slot_get(hml_region *r)
{
	pthread_t self = pthread_self();
	hml__row_slot *s;
	unsigned k;

	for (k = 0; k < CACHE_WAYS; k++)
		if (cache[k].id == r->id)
			return cache[k].slot;
	pthread_mutex_lock(&r->mu);
	for (s = r->slots; s && !pthread_equal(s->owner, self); s = s->next)
		;
	if (!s && (s = calloc(1, sizeof(*s))) != NULL) {
		s->owner = self;
		s->next = r->slots;
		r->slots = s;
	}
	pthread_mutex_unlock(&r->mu);
	if (s) {
		k = cache_next++ % CACHE_WAYS;
		cache[k].id = r->id;
		cache[k].slot = s;
	}
	return s;
}

/* The shared set-up, once per thread: shapes frozen, collector opened,
 * then the slot's buffers. */
static int slot_ready(hml_region *r, hml__row_slot *s)
{
	size_t inb, outb;
	int rc;

	pthread_mutex_lock(&r->mu);
	rc = hml__region_prepare(r);
	if (rc == 0)
		r->started = 1;
	pthread_mutex_unlock(&r->mu);
	if (rc < 0)
		return rc;
	if (r->in.rows != r->out.rows)
		return hml__error_set(HML_ESHAPE,
			"region '%s': row calls need as many input rows as output rows, "
			"not %lld and %lld", r->label, (long long)r->in.rows,
			(long long)r->out.rows);
	inb = row_bytes(&r->in, r->in.app_dtype);
	outb = row_bytes(&r->out, r->out.app_dtype);
	s->cap = (int64_t)(CHUNK_BYTES / (inb + outb));
	s->cap = s->cap < 1 ? 1 : s->cap > CHUNK_ROWS_MAX ? CHUNK_ROWS_MAX : s->cap;
	s->nin = side_arrays(&r->in);
	s->ndata = s->nin + side_arrays(&r->out);
	if (!s->at && !(s->at = calloc(s->ndata ? s->ndata : 1, sizeof(*s->at))))
		return hml__error_oom();
	/* A retry after running out of memory keeps what was allocated. */
	if (hml__region_collects(r) &&
	    ((!s->cin && !(s->cin = malloc((size_t)s->cap * inb))) ||
	     (!s->cout && !(s->cout = malloc((size_t)s->cap * outb)))))
		return hml__error_oom();
	if (r->model && ((!s->x && !(s->x = malloc(row_bytes(&r->in, r->model_dtype)))) ||
	                 (!s->y && !(s->y = malloc(row_bytes(&r->out, HML_F64)))) ||
	                 (!s->truth && !(s->truth = malloc(outb)))))
		return hml__error_oom();
	s->ready = 1;
	return 0;
}

/* Row s->row of every map of a side to (scatter 0) or from `buf`, at the
 * call's own addresses when it has them (inputs' first, then outputs'). */
static int side_row(const hml__row_slot *s, const hml_region *r, int out, void *buf,
                    hml_dtype dtype, int scatter)
{
	const side *sd = out ? &r->out : &r->in;
	int64_t last = sd->shape[sd->ndim - 1], col = 0, shape[HML_MAX_DIMS];
	const void *const *data = s->data;
	size_t k;
	int rc, nd;

	if (data && out)
		data += s->nin;
	for (k = 0; k < sd->n; k++) {
		rc = hml__tmap_rows_transfer(sd->maps[k], buf, dtype, last, col, s->row, 1, data,
		                             scatter);
		if (rc < 0)
			return rc;
		if (data)
			data += hml__tmap_narrays(sd->maps[k]);
		nd = hml_tmap_features(sd->maps[k], shape);
		col += shape[nd - 1];
	}
	return 0;
}

/* The model on one row, its output in s->y. A compiled model, once its
 * shapes were checked, runs on the calling thread with the slot's
 * buffers and no lock (hml__model_reentrant()); any other model, and the
 * first call, run under the lock, the output copied from the model. */
static int model_row(hml_region *r, hml__row_slot *s)
{
	int64_t shape[HML_MAX_DIMS + 1], oshape[HML_MAX_DIMS + 1], per_row = 1;
	const void *y;
	double t0 = hml__now(), t1;
	int rc, ond, d;

	if ((rc = side_row(s, r, 0, s->x, r->model_dtype, 0)) < 0)
		return rc;
	t1 = hml__now();
	s->st.gather_s += t1 - t0;
	/* A region watching a deployment checks the row and runs the model in
	 * one hold of the lock: a hot swap changes both together (swap.h). */
	if (r->swap.on)
		pthread_mutex_lock(&r->mu);
	if (r->guard && (rc = hml__guard_one(r, s->x, &s->st)) != 0) {
		if (r->swap.on)
			pthread_mutex_unlock(&r->mu);
		return rc;   /* 1: the guard sends this row to the original code */
	}
	if (!r->swap.on && r->model_reentrant &&
	    __atomic_load_n(&r->model_checked, __ATOMIC_ACQUIRE)) {
		rc = hml__model_forward_into(r->model, s->x, r->model_dtype, 1, s->y);
		s->ydt = r->model_dtype;
		s->st.forward_s += hml__now() - t1;
		return rc;
	}
	shape[0] = 1;
	memcpy(shape + 1, r->in.shape, (size_t)r->in.ndim * sizeof(int64_t));
	if (!r->swap.on)
		pthread_mutex_lock(&r->mu);
	if (!r->model_checked && (rc = hml__region_check_input(r)) < 0)
		goto done;
	if ((rc = hml__model_forward(r->model, s->x, r->model_dtype, r->in.ndim + 1, shape)) < 0 ||
	    (rc = hml__model_output(r->model, &y, &s->ydt, &ond, oshape)) < 0)
		goto done;
	for (d = 1; d < ond; d++)
		per_row *= oshape[d];
	if (ond < 1 || oshape[0] != 1 || per_row != r->out.row_size) {
		rc = hml__error_set(HML_ESHAPE,
			"model '%s' returns %lld values per row but region '%s' needs %lld",
			r->cfg.model, (long long)(ond >= 1 ? per_row : 0), r->label,
			(long long)r->out.row_size);
		goto done;
	}
	memcpy(s->y, y, (size_t)per_row * hml_dtype_size(s->ydt));
	__atomic_store_n(&r->model_checked, 1, __ATOMIC_RELEASE);
done:
	pthread_mutex_unlock(&r->mu);
	s->st.forward_s += hml__now() - t1;
	return rc;
}

/* A failure of the model or collection, under the policy (and the lock). */
static int degrade(hml_region *r, int rc, int *broken, const char *consequence)
{
	pthread_mutex_lock(&r->mu);
	rc = hml__region_degrade(r, rc, broken, consequence);
	pthread_mutex_unlock(&r->mu);
	return rc;
}

/* Model path: 0 when the row's outputs were written, 1 to run the
 * original code (2: because the guard sent the row), negative under the
 * fail policy. */
static int infer_row(hml_region *r, hml__row_slot *s)
{
	int64_t bad;
	double t;
	int rc;

	if ((rc = model_row(r, s)) == 1)
		return 2;
	if (rc == 0) {
		if ((bad = hml__count_nonfinite(s->y, s->ydt, r->out.row_size)) > 0) {
			s->st.nonfinite_calls++;
			rc = hml__error_set(HML_EMODEL,
				"region '%s': model '%s' returned %lld non-finite output values "
				"(NaN or Inf) in row %lld", r->label, r->cfg.model, (long long)bad,
				(long long)s->row);
			if (r->cfg.on_error == HML_ON_ERROR_FAIL)
				return rc;
			s->st.fallback_calls++;
			return 1;
		}
		t = hml__now();
		rc = side_row(s, r, 1, s->y, s->ydt, 1);
		s->st.scatter_s += hml__now() - t;
		if (rc == 0)
			return 0;
	}
	if ((rc = degrade(r, rc, &r->model_broken, "running the original code")) < 0)
		return rc;
	s->st.fallback_calls++;
	return 1;
}

/* Which path this row takes (as region.c's choose(), per thread). */
static enum path choose(hml_region *r, hml__row_slot *s, int run_original)
{
	hml_mode m = __atomic_load_n(&r->cfg.mode, __ATOMIC_ACQUIRE);   /* a swap may change it */
	int model_ok = __atomic_load_n(&r->model, __ATOMIC_RELAXED) &&
	               !__atomic_load_n(&r->model_broken, __ATOMIC_RELAXED);

	if (m == HML_MODE_COLLECT)
		return __atomic_load_n(&r->collect_broken, __ATOMIC_RELAXED) ? PATH_ORIGINAL
		                                                            : PATH_COLLECT;
	if (run_original)
		return PATH_ORIGINAL;
	if (m == HML_MODE_INTERLEAVE) {
		uint64_t n = (uint64_t)__atomic_load_n(&r->cfg.interleave, __ATOMIC_RELAXED);

		if (s->call_no % (n + 1) == n)
			return PATH_ORIGINAL;
	}
	if (m == HML_MODE_SHADOW) {
		s->shadow_acc += r->cfg.shadow;
		if (s->shadow_acc < 1.0 - 1e-12)
			return PATH_ORIGINAL;
		s->shadow_acc -= 1.0;
	}
	if (!model_ok)
		s->st.fallback_calls++;
	return !model_ok ? PATH_ORIGINAL : m == HML_MODE_SHADOW ? PATH_SHADOW : PATH_MODEL;
}

static int begin_path(hml_region *r, hml__row_slot *s, int run_original)
{
	size_t inb = row_bytes(&r->in, r->in.app_dtype);
	double t;
	int rc;

	s->path = choose(r, s, run_original);
	switch (s->path) {
	case PATH_MODEL:
		if ((rc = infer_row(r, s)) <= 0)
			return rc;
		s->path = PATH_ORIGINAL;
		/* Guarded collection: the guarded row is collected as in collect mode. */
		if (rc == 2 && r->collect_guarded &&
		    !__atomic_load_n(&r->collect_broken, __ATOMIC_RELAXED)) {
			s->path = PATH_COLLECT;
			goto collect;
		}
		break;
	case PATH_SHADOW:
		if ((rc = model_row(r, s)) < 0) {
			if ((rc = degrade(r, rc, &r->model_broken, "shadowing stopped")) < 0)
				return rc;
			s->st.fallback_calls++;
			s->path = PATH_ORIGINAL;
		}
		break;
	case PATH_COLLECT:
	collect:
		/* One clock read ends the gather and starts the original code:
		 * where a read costs tens of ns it is much of a row's cost. */
		rc = side_row(s, r, 0, s->cin + (size_t)s->n * inb, r->in.app_dtype, 0);
		t = hml__now();
		s->st.gather_s += t - s->t_begin;
		s->t_original = t;
		if (rc < 0)
			return rc;
		return 1;
	default:
		break;
	}
	return 1;
}

/* The calls completed, batch and row, for a swap's record (swap.h). */
static uint64_t calls_made(hml_region *r)
{
	return r->call_no + hml__rows_calls(r);
}

/* Addresses given per call: one for every array of every map, none NULL,
 * and one row to a map (they replace what the maps were bound with). */
static int check_data(const hml_region *r, const hml__row_slot *s, const void *const *data,
                      size_t ndata)
{
	size_t k;

	if (r->in.rows != 1)
		return hml__error_set(HML_ESHAPE,
			"region '%s': row calls with their own addresses need maps of one row, "
			"not %lld", r->label, (long long)r->in.rows);
	if (ndata != s->ndata)
		return hml__error_set(HML_EINVALID,
			"region '%s': %zu addresses given but its maps have %zu arrays", r->label,
			ndata, s->ndata);
	for (k = 0; k < ndata; k++)
		if (!data[k])
			return hml__error_set(HML_EINVALID, "region '%s': address %zu is NULL",
			                      r->label, k);
	return 0;
}

static int row_begin(hml_region *r, int64_t row, const void *const *data, size_t ndata,
                     int run_original)
{
	hml__row_slot *s;
	int rc;

	if (!r)
		return hml__error_set(HML_EINVALID, "region is NULL");
	if (!(s = slot_get(r)))
		return hml__error_oom();
	if (s->in_call)
		return hml__error_set(HML_EINVALID,
			"region '%s': hml_region_row_begin() called again before hml_region_row_end()",
			r->label);
	s->in_call = 1;
	/* Off mode reads no clock unless profiling: on some machines a clock
	 * read costs more than the rest of the call. */
	if (r->cfg.mode == HML_MODE_OFF) {
		s->path = PATH_ORIGINAL;
		if (r->timed)
			s->t_begin = hml__now();
		return 1;
	}
	s->path = PATH_NONE;
	s->t_begin = hml__now();
	if (!s->ready && (rc = slot_ready(r, s)) < 0)
		return rc;
	if (data && (rc = check_data(r, s, data, ndata)) < 0)
		return rc;
	if (row < 0 || row >= r->in.rows)
		return hml__error_set(HML_EINVALID,
			"region '%s': row %lld is outside its %lld rows", r->label,
			(long long)row, (long long)r->in.rows);
	s->row = row;
	if (data)
		memcpy(s->at, data, ndata * sizeof(*data));
	s->data = data ? s->at : NULL;
	hml__swap_poll(r, s->t_begin, calls_made);
	if ((rc = begin_path(r, s, run_original)) < 0) {
		s->path = PATH_NONE;
		return rc;
	}
	if (s->path != PATH_COLLECT)
		s->t_original = hml__now();
	return rc;
}

int hml_region_row_begin_if(hml_region *r, int64_t row, int run_original)
{
	return row_begin(r, row, NULL, 0, run_original);
}

int hml_region_row_begin(hml_region *r, int64_t row)
{
	return row_begin(r, row, NULL, 0, 0);
}

int hml_region_row_begin_at(hml_region *r, const void *const *data, size_t ndata,
                            int run_original)
{
	if (!data)
		return hml__error_set(HML_EINVALID, "%s%s%sno addresses", r ? "region '" : "",
		                      r ? r->label : "", r ? "': " : "");
	return row_begin(r, 0, data, ndata, run_original);
}

/* Hand the slot's buffered rows to the collector, under the lock. */
static int slot_flush(hml_region *r, hml__row_slot *s)
{
	int rc = 0;
	double t;

	if (s->n == 0)
		return 0;
	t = hml__now();
	pthread_mutex_lock(&r->mu);
	if (r->col && !r->collect_broken) {
		rc = hml__collector_append_calls(r->col, s->cin, s->n, s->cout, s->n, s->n,
		                                 s->seconds);
		if (rc < 0)
			rc = hml__region_degrade(r, rc, &r->collect_broken, "not collecting");
	}
	pthread_mutex_unlock(&r->mu);
	if (rc == 0) {
		s->st.rows_in += (uint64_t)s->n;
		s->st.rows_out += (uint64_t)s->n;
	}
	s->n = 0;
	s->seconds = 0;
	s->st.write_s += hml__now() - t;
	return rc;
}

/* Compare the model's row (kept in the slot) with what the original code
 * wrote. */
static int shadow_row(hml_region *r, hml__row_slot *s)
{
	int64_t i, n = r->out.row_size;
	double e, mx = s->st.shadow_max_abs, a, b;
	int rc;

	if ((rc = side_row(s, r, 1, s->truth, r->out.app_dtype, 0)) < 0)
		return rc;
	for (i = 0; i < n; i++) {
		a = r->out.app_dtype == HML_F64 ? ((double *)s->truth)[i] : ((float *)s->truth)[i];
		b = s->ydt == HML_F64 ? ((double *)s->y)[i] : ((float *)s->y)[i];
		e = fabs(a - b);
		s->shadow_sq += e * e;
		if (e > mx || isnan(e))
			mx = e;
	}
	s->shadow_n += (uint64_t)n;
	s->st.shadow_max_abs = mx;
	s->st.shadow_calls++;
	return 0;
}

static int end_path(hml_region *r, hml__row_slot *s, double t)
{
	size_t outb = row_bytes(&r->out, r->out.app_dtype);
	int rc = 0;

	s->st.original_calls++;
	s->st.original_s += t - s->t_original;
	if (s->path == PATH_COLLECT) {
		rc = side_row(s, r, 1, s->cout + (size_t)s->n * outb, r->out.app_dtype, 0);
		if (rc < 0)
			return degrade(r, rc, &r->collect_broken, "not collecting");
		s->seconds += t - s->t_original;
		if (++s->n == s->cap)
			rc = slot_flush(r, s);
	} else if (s->path == PATH_SHADOW && (rc = shadow_row(r, s)) < 0) {
		rc = degrade(r, rc, &r->model_broken, "shadowing stopped");
	}
	return rc;
}

int hml_region_row_end(hml_region *r)
{
	hml__row_slot *s;
	double t;
	int rc = 0;

	if (!r)
		return hml__error_set(HML_EINVALID, "region is NULL");
	if (!(s = slot_get(r)) || !s->in_call)
		return hml__error_set(HML_EINVALID,
			"region '%s': hml_region_row_end() without hml_region_row_begin()", r->label);
	s->in_call = 0;
	s->st.calls++;
	s->call_no++;
	if (r->cfg.mode == HML_MODE_OFF) {
		s->st.original_calls++;
		if (r->timed) {
			t = hml__now() - s->t_begin;
			s->st.original_s += t;
			s->st.region_s += t;
		}
		return 0;
	}
	t = hml__now();
	if (s->path == PATH_MODEL)
		s->st.model_calls++;
	else if (s->path != PATH_NONE)
		rc = end_path(r, s, t);
	s->st.region_s += hml__now() - s->t_begin;
	s->path = PATH_NONE;
	s->data = NULL;
	return rc;
}

int hml__rows_drain(hml_region *r)
{
	hml__row_slot *s;
	int rc = 0, one;

	for (s = r->slots; s; s = s->next)
		if ((one = slot_flush(r, s)) < 0 && rc == 0)
			rc = one;
	return rc;
}

uint64_t hml__rows_calls(hml_region *r)
{
	const hml__row_slot *s;
	uint64_t n = 0;

	for (s = r->slots; s; s = s->next)
		n += s->st.calls;
	return n;
}

void hml__rows_stats(const hml_region *r, hml_region_stats *st)
{
	const hml__row_slot *s;
	double sq = 0;
	uint64_t n = 0;

	for (s = r->slots; s; s = s->next) {
		st->calls += s->st.calls;
		st->original_calls += s->st.original_calls;
		st->model_calls += s->st.model_calls;
		st->shadow_calls += s->st.shadow_calls;
		st->fallback_calls += s->st.fallback_calls;
		st->nonfinite_calls += s->st.nonfinite_calls;
		st->rows_in += s->st.rows_in;
		st->rows_out += s->st.rows_out;
		st->region_s += s->st.region_s;
		st->gather_s += s->st.gather_s;
		st->forward_s += s->st.forward_s;
		st->scatter_s += s->st.scatter_s;
		st->original_s += s->st.original_s;
		st->write_s += s->st.write_s;
		st->checked_rows += s->st.checked_rows;
		st->guarded_rows += s->st.guarded_rows;
		st->guarded_calls += s->st.guarded_calls;
		st->guard_s += s->st.guard_s;
		if (s->st.shadow_max_abs > st->shadow_max_abs || isnan(s->st.shadow_max_abs))
			st->shadow_max_abs = s->st.shadow_max_abs;
		sq += s->shadow_sq;
		n += s->shadow_n;
	}
	if (n > 0) {
		sq += r->shadow_sq;
		n += r->shadow_n;
		st->shadow_rmse = sqrt(sq / (double)n);
	}
}

void hml__rows_release(hml_region *r)
{
	hml__row_slot *s, *next;

	if (!r->id)
		return;
	for (s = r->slots; s; s = next) {
		next = s->next;
		free(s->x);
		free(s->y);
		free(s->truth);
		free(s->cin);
		free(s->cout);
		free(s->at);
		free(s);
	}
	r->slots = NULL;
	pthread_mutex_destroy(&r->mu);
	r->id = 0;
}
