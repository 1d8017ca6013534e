/*
 * runtime/src/config.h - a region's settings, resolved once at open from the
 * options struct, the environment and the defaults (internal).
 *
 * Precedence, highest first: a field set in hml_region_options, the
 * per-region variable HML_<KEY>_<LABEL>, the global HML_<KEY>, the default
 * (config.c holds the settings, their variables and defaults in one table).
 */
#ifndef HML_RUNTIME_CONFIG_H
#define HML_RUNTIME_CONFIG_H

#include "hml/region.h"

#define HML__INTERLEAVE_MAX 1000000000
#define HML__RESERVOIR_MAX 1000000000

typedef struct hml__config {
	hml_mode mode;
	char *model;          /* NULL when no model is configured */
	char *db;
	int interleave;
	double shadow;
	int threads;          /* 0: library default */
	hml_on_error on_error;
	char *profile;        /* NULL: none; "1": stderr table; else a JSON path */
	double flush_seconds;
	size_t flush_bytes;
	char *guard;          /* the guard file (lib/core/guard.h), NULL: none */
	int collect_guarded;  /* HML_COLLECT_GUARDED: store guarded rows in db */
	char *deployment;     /* HML_DEPLOYMENT: the deployment file to watch, or NULL */
	int swap_interval;    /* HML_SWAP_INTERVAL: milliseconds between two looks */
	/* HML_COLLECT_*: environment only (no option field). */
	double collect_rate;        /* (0, 1] */
	int collect_reservoir;      /* 0: none */
	int collect_dedup;          /* 0 or 1 */
	int collect_seed;
	char *collect_compression;  /* NULL: none */
	/* HML_CONSERVE: environment only; a spec (lib/core/conserve.h), NULL: none */
	char *conserve;
} hml__config;

/** Check a label: 1-64 characters from [A-Za-z0-9_.-]. */
int hml__label_check(const char *label);

/**
 * Resolve the settings of region `label`. On success `out` holds malloc'ed
 * strings: release with hml__config_release(). Fails with HML_EINVALID,
 * naming the variable and the value, for unknown modes and malformed
 * numbers, and for a mode that needs a model when none is configured.
 */
int hml__config_resolve(hml__config *out, const char *label,
                        const hml_region_options *opts);

void hml__config_release(hml__config *c);

#endif
