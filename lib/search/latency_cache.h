/*
 * lib/search/latency_cache.h - the C latencies hml search has measured
 * (internal): with --target c each trial's model is compiled and timed,
 * unless a model of the same architecture was timed already.
 */
#ifndef HML_SEARCH_LATENCY_CACHE_H
#define HML_SEARCH_LATENCY_CACHE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A cache of measured C latencies keyed by (arch, batch, threads): the
 * compiled kernel's speed depends on the architecture, the rows per call
 * and the threads, not on the weights, so a model of an architecture
 * already measured need not be compiled again (hml search --target c).
 * The arch part of the key is the spec's canonical form (lib/train/arch.h)
 * without its dropout, which does nothing at inference ("mlp:64:relu" and
 * "mlp:64:relu:dropout=0.1" share a figure); a spec that does not parse is
 * its own key. Caller's storage; zero it, or hml__latency_cache_init.
 */
typedef struct hml__latency_cache {
	struct hml__latency_entry *e;
	size_t n, cap;
} hml__latency_cache;

void hml__latency_cache_init(hml__latency_cache *c);
void hml__latency_cache_release(hml__latency_cache *c);

/** Seconds per sample cached for the key, or NaN. */
double hml__latency_cache_get(const hml__latency_cache *c, const char *arch, int64_t batch,
                              int threads);

/**
 * Remember `seconds` (positive, finite; others are ignored) for the key;
 * an existing entry keeps its first figure. Errors: HML_ENOMEM.
 */
int hml__latency_cache_put(hml__latency_cache *c, const char *arch, int64_t batch, int threads,
                           double seconds);

#ifdef __cplusplus
}
#endif
#endif
