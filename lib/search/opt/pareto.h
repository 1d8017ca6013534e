/*
 * lib/search/opt/pareto.h - Pareto fronts and hypervolume of two minimised objectives
 * (internal).
 *
 * Points are n pairs stored row-major: f[2*i] and f[2*i+1]. A pair with a
 * non-finite coordinate never belongs to a front and adds no volume.
 */
#ifndef HML_LIB_PARETO_H
#define HML_LIB_PARETO_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Nonzero when a dominates b: no worse in both objectives, better in one. */
int hml__pareto_dominates(const double a[2], const double b[2]);

/**
 * The non-dominated points of f. Writes their indices into idx (room for n),
 * sorted by the first objective (ties: by index), and returns their count.
 * Of several identical points only the first (lowest index) is kept.
 * Never fails; O(n log n). Allocates nothing when n <= 0.
 * Returns (size_t)-1 only when a temporary cannot be allocated.
 */
size_t hml__pareto_front(size_t *idx, const double *f, size_t n);

/**
 * The area dominated by the points of f and bounded by the reference point
 * ref (both objectives minimised; points not strictly better than ref in both
 * objectives add nothing). Exact; O(n log n). Returns a negative value only
 * when a temporary cannot be allocated.
 */
double hml__pareto_hypervolume(const double *f, size_t n, const double ref[2]);

#ifdef __cplusplus
}
#endif
#endif
