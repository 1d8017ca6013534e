/*
 * runtime/src/rowguard.h - a region's guard at run time (internal): the guard
 * file (lib/core/guard.h) loaded when the region opens in infer or
 * interleave mode, the rows it sends to the original code in each call,
 * and the rows list hml_region_rows() hands the application.
 */
#ifndef HML_RUNTIME_ROWGUARD_H
#define HML_RUNTIME_ROWGUARD_H

#include "hml/region.h"
#include "loader/loader.h"

typedef struct hml__rguard hml__rguard;

/**
 * Load the guard r->cfg.guard names (when set and the mode infers): a
 * guard file, checked to be r->model's when that model embeds input
 * statistics, or a spec resolved against them (core/guard.h, part 4).
 * Under the fallback policy an unusable file warns once and the region
 * runs the original code (model_broken): a guard that cannot be checked
 * must not let the model answer everything. Under the fail policy its
 * error (HML_EIO, HML_EINVALID: a file made for another model,
 * HML_ENOTSUPPORTED: a spec the model has no statistics for) is returned.
 */
int hml__guard_open(hml_region *r);
void hml__guard_free(hml_region *r);

/**
 * Check the call's gathered inputs `x` (model dtype, r->in.rows rows).
 * Returns 0 when no row is guarded, 1 when some are and the region
 * iterates over hml_region_rows() (the model answers the others; the
 * guarded rows' list is the call's rows), 2 when some are and the region
 * cannot (the whole call runs the original code), or a negative code (a
 * guard whose features differ from the region's: HML_ESHAPE).
 */
int hml__guard_call(hml_region *r, const void *x);

/** The rows the last hml__guard_call() guarded (valid until the next one). */
int64_t hml__guard_listed(const hml_region *r, const int64_t **idx);

/** One row (row calls): 1 when guarded (counted in *st), else 0. */
int hml__guard_one(hml_region *r, const void *x, hml_region_stats *st);

/** Whether the call in progress answered some rows by the model and left
 *  the guarded ones to the original code (hml__guard_call returned 1). */
void hml__guard_call_end(hml_region *r);

/**
 * A hot swap's guard (swap.c) for the next model `m` (loaded from
 * `model_path`): the guard file at
 * `path` (checked to be m's, as at open), or, when the deployment names
 * none ("" or NULL), the region's own spec when r->cfg.guard is one,
 * resolved against m's statistics; neither: *out = NULL. Checked to fit
 * the region's rows, before the switch. *out is the caller's until handed
 * to hml__guard_switch (hml__guard_discard frees it). HML_EIO (a missing
 * or corrupt file), HML_EINVALID (a file made for another model),
 * HML_ENOTSUPPORTED (a spec m has no statistics for), HML_ESHAPE (rows of
 * other features), HML_ENOMEM.
 */
typedef struct hml__guard_next hml__guard_next;
int hml__guard_prepare(hml__guard_next **out, hml_region *r, const char *path,
                       const hml__model *m, const char *model_path);
void hml__guard_discard(hml__guard_next *g);

/**
 * The switch (with the region's lock held, in the same critical section
 * as the model's): the region's guard becomes `g` (taken; NULL: none),
 * the old one is freed. Batch calls switch before their path is chosen
 * and row calls check their row under the lock when the region watches a
 * deployment, so a call sees one (model, guard) pair. Never fails.
 */
void hml__guard_switch(hml_region *r, hml__guard_next *g);

/** The guard's canonical spec ("bounds:margin=0"), or NULL: none. */
const char *hml__guard_spec_text(const hml_region *r);

#endif
