/*
 * runtime/src/region_internal.h - the region's state, shared by the calls
 * over a whole batch (region.c) and the calls over one row of a loop that
 * several threads may make at once (rows.c) (internal).
 *
 * Locking: a batch call (hml_region_begin/end) and the region's set-up,
 * flush and free belong to one thread at a time, as they always did. Row
 * calls keep their own state per thread (hml__row_slot) and take `mu` only
 * for what they share: the first call's set-up, the model, the collector,
 * the failure flags and the list of slots.
 */
#ifndef HML_RUNTIME_REGION_INTERNAL_H
#define HML_RUNTIME_REGION_INTERNAL_H

#include <pthread.h>

#include "collect.h"
#include "config.h"
#include "core/conserve.h"
#include "hml/region.h"
#include "loader/loader.h"
#include "swap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the current call does. */
enum path { PATH_NONE, PATH_ORIGINAL, PATH_COLLECT, PATH_MODEL, PATH_SHADOW,
            PATH_GUARDED /* the model answered, the original code runs the guarded rows */ };

/* The combined tensor of several maps (inputs or outputs): maps are
 * concatenated on the last feature dimension. */
typedef struct side {
	hml_tmap **maps;
	size_t n, cap;
	int64_t rows;
	int ndim;                      /* feature dims */
	int64_t shape[HML_MAX_DIMS];   /* feature shape, last = sum over maps */
	int64_t row_size;              /* elements per row */
	hml_dtype app_dtype;           /* widest application dtype */
	void *buf;                     /* gathered in app dtype (shadow truth) */
	void *mbuf;                    /* gathered in the model dtype (inputs only) */
} side;

typedef struct hml__row_slot hml__row_slot;

struct hml_region {
	char *label;
	hml__config cfg;
	side in, out;
	int started;           /* a call went ahead: no more maps */
	int frozen;            /* shapes fixed, buffers allocated */

	hml__model *model;
	hml_dtype model_dtype;
	int model_checked;     /* shapes verified on the first forward */
	int model_reentrant;   /* row calls may run it without the lock (rows.c) */
	int model_broken;      /* fallback after a model failure */
	hml__collector *col;
	int collect_broken;
	int collect_guarded;   /* HML_COLLECT_GUARDED in a mode a guard checks */
	int gc_rows;           /* this call's guarded rows go to the collector at its end */

	int in_call;
	enum path path;
	hml_agree_fn agree;    /* hml_region_set_agree(); NULL: none */
	void *agree_ctx;
	uint64_t call_no;
	double t_begin, t_original;
	int timed;             /* off mode: time calls (only when profiling) */
	double shadow_acc;     /* deterministic sampling of shadow calls */
	double shadow_sq;      /* sum of squared shadow errors */
	uint64_t shadow_n;     /* number of compared values */

	hml_region_stats stats;
	struct hml__rguard *guard;   /* rowguard.c; NULL: no guard, no subset */

	/* Row calls (rows.c). */
	pthread_mutex_t mu;
	uint64_t id;           /* never reused: tells a freed region's slots apart */
	hml__row_slot *slots;  /* one per thread that made a row call */

	hml__swap swap;        /* hot swap (swap.h) */

	/* HML_CONSERVE (region_conserve.c): the box of the output whose sum
	 * each model call keeps, and the copy of the output it corrects. */
	int conserve_on;
	hml__conserve_box conserve_box;
	void *conserve_buf;
	size_t conserve_cap;
};

/* At a call's start, with the clock read `now`: a look at the deployment
 * file when one is due (swap.h). The hot path is one load and compare. */
static inline void hml__swap_poll(hml_region *r, double now, hml__swap_calls_fn calls)
{
	double next;

	if (!r->swap.on)
		return;
	__atomic_load(&r->swap.next, &next, __ATOMIC_RELAXED);
	if (now >= next)
		hml__swap_check(r, now, calls);
}

/* The region stores rows: collect mode, or guarded collection. */
static inline int hml__region_collects(const hml_region *r)
{
	return r->cfg.mode == HML_MODE_COLLECT || r->collect_guarded;
}

/* HML_CONSERVE (region_conserve.c): _setup on a model's first call (its
 * shapes checked), the box resolved on the output row, HML_EINVALID when
 * the region's output is not shaped as its input or the box does not fit;
 * _apply after each forward: *y (the model's output, ydt) replaced by a
 * corrected copy whose box sums to the input x's (xdt, which must be ydt:
 * float32 or float64). _release frees the copy. */
int hml__region_conserve_setup(hml_region *r);
int hml__region_conserve_apply(hml_region *r, const void *x, hml_dtype xdt, const void **y,
                               hml_dtype ydt);
void hml__region_conserve_release(hml_region *r);

/* "[rows, f1, f2]": a side's shape with its rows, for messages
 * (region_setup.c). */
void hml__side_shape_text(char *buf, size_t size, const side *s);

/* Gather all maps of a side into `dst` (or *result = the application's
 * memory when one map is already the tensor) (region.c). */
int hml__side_gather(const side *s, void *dst, hml_dtype dtype, int threads,
                     const void **result);

/* Guarded collection of a batch call (guardcollect.c). _begin, once the
 * guard listed rows (whole call or subset) and before the original code
 * runs: their inputs placed in the collector; _end, after it: their
 * outputs, and the call committed. Both 0 without guarded collection or
 * with a broken collector; a collection failure goes through the policy
 * (hml__region_degrade, "not collecting"). */
int hml__gcollect_begin(hml_region *r);
int hml__gcollect_end(hml_region *r, double original_s);

/* Freeze the shapes and open the collector on the first call (region.c). */
int hml__region_prepare(hml_region *r);

/* A model or collection failure under the region's policy (region.c):
 * returns rc under the fail policy, else warns once, sets *broken, 0. */
int hml__region_degrade(hml_region *r, int rc, int *broken, const char *consequence);

/* The declared input features of the model against the region's (region.c). */
int hml__region_check_input(hml_region *r);

/* Values of `y` (n elements of dtype) that are NaN or infinite. */
int64_t hml__count_nonfinite(const void *y, hml_dtype dtype, int64_t n);

/* rows.c: a new region's row state; write every thread's buffered rows to
 * the collector (0 or the first failure); add the slots' counters to
 * *stats; free the slots. Called by the region's owner, with no row call
 * running. */
int hml__rows_init(hml_region *r);
int hml__rows_drain(hml_region *r);
void hml__rows_stats(const hml_region *r, hml_region_stats *stats);
void hml__rows_release(hml_region *r);
/* The row calls made so far, over every thread (approximate while they
 * run); called with r->mu held. */
uint64_t hml__rows_calls(hml_region *r);

#ifdef __cplusplus
}
#endif
#endif
