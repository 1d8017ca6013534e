/*
 * runtime/src/tmap_internal.h - what the runtime's other modules may ask
 * of a bound tensor map beyond the public API (internal). The region
 * (region.c) reaches maps and functors only through hml/tensor.h and this
 * header, never through the parser's structures (functor_internal.h).
 */
#ifndef HML_TMAP_INTERNAL_H
#define HML_TMAP_INTERNAL_H

#include "hml/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the collector records about a map. The strings are owned by the map
 * ("" for a NULL map); hml__tmap_array_names() returns "S, X, T" in
 * malloc'ed memory, yours to free (NULL and HML_ENOMEM when out of
 * memory). */
const char *hml__tmap_functor_text(const hml_tmap *map);
const char *hml__tmap_domain(const hml_tmap *map);
char *hml__tmap_array_names(const hml_tmap *map);

/*
 * Gather (scatter 0) or scatter rows [row0, row0 + nrows) of the map's
 * domain into (from) rows [0, nrows) of `tensor`, whose last dimension is
 * `tensor_last` with this map at column `col` (as hml_tmap_gather_into()),
 * on the calling thread. Reads only the map's bound state: several threads
 * may transfer different rows of one map at once (hml_tmap_seek() and
 * hml_tmap_set_data() may not run meanwhile). `data`, when not NULL, holds
 * one address per array of the map (in the order bound) that this call
 * reads and writes instead of the bound ones: the map itself is never
 * written, so each thread may pass its own (row calls with per-call
 * addresses, rows.c). HML_EINVALID for rows outside the domain.
 */
int hml__tmap_rows_transfer(const hml_tmap *map, void *tensor, hml_dtype dtype,
                            int64_t tensor_last, int64_t col, int64_t row0,
                            int64_t nrows, const void *const *data, int scatter);

/* The number of arrays the map was bound with (0 for NULL). */
size_t hml__tmap_narrays(const hml_tmap *map);

#ifdef __cplusplus
}
#endif
#endif
