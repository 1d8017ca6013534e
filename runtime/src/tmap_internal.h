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

#ifdef __cplusplus
}
#endif
#endif
