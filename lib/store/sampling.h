/*
 * lib/store/sampling.h - the "sampling" object of a data set's region
 * record (hml-manifest(5) regions.LABEL.sampling; internal, CLI side):
 * what a sampled collection kept, as the data file's sample_* attributes
 * say (lib/core/collection_keep.h's hml__coll_sampling). The writer
 * (hml collect) and the reader are side by side here:
 *
 *   {"rate": 1.0, "reservoir": 20000, "dedup": false, "seed": 0,
 *    "calls_seen": N, "rows_seen": N, "rows_kept": N,
 *    "dropped": {"rate": N, "duplicate": N, "reservoir": N}}
 */
#ifndef HML_LIB_STORE_SAMPLING_H
#define HML_LIB_STORE_SAMPLING_H

#include <jansson.h>

#include "core/collection_keep.h"

/** The object for `s`: a new reference, NULL when out of memory. */
json_t *hml__sampling_json(const hml__coll_sampling *s);

/** Set rec["sampling"] to the object for `s`; nothing when `s` or `rec`
 *  is NULL. 0, or HML_ENOMEM. */
int hml__sampling_put(json_t *rec, const hml__coll_sampling *s);

/**
 * Read region record `region`'s "sampling" into *s: 1 when present and
 * whole, 0 when absent (*s zeroed), HML_EINVALID "the record's sampling is
 * malformed: 'KEY' is not a number" when a field is missing or mistyped.
 */
int hml__sampling_get(const json_t *region, hml__coll_sampling *s);

#endif
