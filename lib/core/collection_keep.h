/*
 * lib/core/collection_keep.h - what keeps a collection small, in the
 * collection layout's terms but without HDF5 (internal), so that the CLI
 * and workflow.json's reader can use them without linking it: the names
 * of a collection's compression ("none", "deflate:4", ...), read and
 * written in one place, and the record of what a sampled collection kept.
 * Whether this HDF5 has a filter (hml__coll_compression_parse()) and the
 * attributes that hold the record are collection.h's.
 */
#ifndef HML_LIB_COLLECTION_KEEP_H
#define HML_LIB_COLLECTION_KEEP_H

#include <stddef.h>
#include <stdint.h>

/** How `input` and `output` are compressed, per chunk (HDF5 filters). */
typedef struct hml__coll_compression {
	int shuffle;   /**< byte shuffle before deflate */
	int deflate;   /**< deflate (zlib) level 1-9; 0: none */
	int szip;      /**< szip (libaec), nearest-neighbour coding */
} hml__coll_compression;

/*
 * What the collector kept of what its region gave, when the region sampled
 * (HML_COLLECT_RATE, _RESERVOIR, _DEDUP): group attributes, one scalar
 * each, named as the fields with "sample_" before them ("sample_rate" a
 * float64, the others int64). The counts add up over the runs that
 * appended to the group; the settings are the last run's. A group without
 * "sample_rate" was not sampled: every call was kept.
 *   rows_seen = rows_kept + dropped_rate + dropped_duplicate + dropped_reservoir
 * (input rows; a call whose input and output rows differ in number is
 * sampled whole, and its input rows counted).
 */
typedef struct hml__coll_sampling {
	double rate;               /**< fraction kept at random, (0, 1] */
	int64_t reservoir;         /**< most rows kept per run; 0: no reservoir */
	int64_t dedup;             /**< 1: exact duplicate input rows dropped */
	int64_t seed;              /**< of the random choices */
	int64_t calls_seen;        /**< region calls */
	int64_t rows_seen;
	int64_t rows_kept;         /**< rows written */
	int64_t dropped_rate;
	int64_t dropped_duplicate;
	int64_t dropped_reservoir;
} hml__coll_sampling;

/** The names hml__compression_parse() accepts, for messages and docs. */
#define HML__COLL_COMPRESSION_NAMES \
	"none, deflate:L, shuffle+deflate:L (L from 1 to 9) or szip"

/**
 * Read `text`: "none" (or NULL), "deflate:L", "shuffle+deflate:L" (L 1-9;
 * "deflate" alone is level 4) or "szip". Errors: HML_EINVALID "unknown
 * compression 'x' (expected none, deflate:L, ...)".
 */
int hml__compression_parse(hml__coll_compression *out, const char *text);

/** The canonical text of `z` ("none", "shuffle+deflate:4", ...) into buf. */
void hml__coll_compression_name(char *buf, size_t size, const hml__coll_compression *z);

#endif
