/*
 * runtime/src/sample.h - what a collecting region keeps of its calls
 * (internal): a random fraction of its rows (HML_COLLECT_RATE), no exact
 * duplicate input row twice (HML_COLLECT_DEDUP), and at most N rows per
 * run spread uniformly over the whole run (HML_COLLECT_RESERVOIR).
 *
 * The collector hands each call's rows to hml__sampler_filter() before it
 * records them, under the region's lock (row calls too), so one sampler
 * sees the region's rows one after another and needs no lock of its own.
 * A call whose input and output have as many rows is sampled row by row;
 * any other call is sampled whole (its rows stand or fall together), and
 * cannot go into a reservoir.
 *
 * Order: the rate first (each row kept with probability `rate`), then the
 * duplicates (a set of 128-bit hashes of the input rows kept so far: two
 * different rows are taken for one with probability about n^2 / 2^129),
 * then the reservoir (Li's algorithm L: a random number per row that
 * enters it, not per row seen). The reservoir's rows stay in memory until
 * the collector writes them (hml__sampler_rows()), at a flush or at close.
 */
#ifndef HML_RUNTIME_SAMPLE_H
#define HML_RUNTIME_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/collection_keep.h"

typedef struct hml__sampler hml__sampler;


/** The settings (HML_COLLECT_*). */
typedef struct hml__sample_cfg {
	double rate;          /**< (0, 1]; 0 or 1: every row */
	int64_t reservoir;    /**< > 0: at most this many rows; 0: none */
	int dedup;            /**< drop exact duplicate input rows */
	uint64_t seed;
} hml__sample_cfg;

/** Whether `cfg` samples at all (else the collector needs no sampler). */
int hml__sample_active(const hml__sample_cfg *cfg);

/**
 * A sampler for region `label` whose rows have row_bytes[0] input bytes
 * and row_bytes[1] output bytes. *out is yours: hml__sampler_free().
 * Errors: HML_EINVALID (a rate outside (0, 1], a negative reservoir),
 * HML_ENOMEM.
 */
int hml__sampler_new(hml__sampler **out, const hml__sample_cfg *cfg,
                     const size_t row_bytes[2], const char *label);

void hml__sampler_free(hml__sampler *s);

/**
 * Sample one record of `ncalls` calls: `rows[0]` input rows at in,
 * `rows[1]` output rows at out. The rows kept are moved to the front of
 * in and out and their numbers left in rows[]; rows taken by the
 * reservoir are copied into it and not kept. Errors: HML_ENOTSUPPORTED
 * "region 'L': a reservoir needs as many output rows as input rows per
 * call (this call gives A and B)", HML_ENOMEM; the call's rows are then
 * dropped (rows[] says what was kept before the failure).
 */
int hml__sampler_filter(hml__sampler *s, void *in, void *out, int64_t rows[2],
                        int64_t ncalls);

/** The reservoir: its rows (0 without one) and each side's data. */
int64_t hml__sampler_rows(const hml__sampler *s, const void **in, const void **out);

/** What was seen, kept and dropped so far, with the settings. */
void hml__sampler_stats(const hml__sampler *s, hml__coll_sampling *out);

#endif
