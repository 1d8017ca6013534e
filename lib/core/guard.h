/*
 * lib/core/guard.h - a region's guard: which rows the model must not answer
 * (internal; shared by the runtime, which checks rows, and the CLI, which
 * fits, records and deploys guards). Writer and reader side by side.
 *
 * Three things, each defined once here:
 *
 * 1. The statistics of a model's training inputs, in its card (hml train):
 *      "guard": {"features": F, "rows": N, "min": [F], "max": [F],
 *                "mean": [F] | null, "whiten": [F*F] | null,
 *                "calibration_rows": M, "quantiles": [[p, d], ...] | null}
 *    min/max over every training row; mean and whiten (W = L^-1, L the
 *    Cholesky factor of the covariance, row-major, lower triangular) for
 *    the Mahalanobis distance d(x) = |W (x - mean)|; quantiles: the
 *    distances of the calibration rows (held out of the mean and
 *    covariance) at the levels p of HML__GUARD_LEVELS. Without a usable
 *    covariance (F > HML__GUARD_MAX_DISTANCE_FEATURES, too few rows) the
 *    distance fields are null and only `bounds` can be deployed.
 *
 * 2. The guard specification of hml deploy --guard:
 *      none | bounds[:margin=M] | distance[:fa=A]
 *    margin: a fraction of each feature's range added on both sides
 *    (default 0, >= 0); fa: the false-alarm rate on calibration rows the
 *    distance threshold is set for (default 0.01, in (0, 0.5]).
 *
 * 3. The guard file a deployment names in HML_GUARD_<LABEL> (and
 *    HML_GUARD): one JSON document, the statistics and the resolved
 *    threshold, which the runtime reads when the region opens:
 *      {"schema_version": 1, "spec": "distance:fa=0.01", "kind": "distance",
 *       "margin": 0, "fa": 0.01, "threshold": 3.2, "stats": {...as in 1}}
 */
#ifndef HML_LIB_GUARD_H
#define HML_LIB_GUARD_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HML__GUARD_SCHEMA 1
/** The most features a distance guard is fitted for (W is F x F). */
#define HML__GUARD_MAX_DISTANCE_FEATURES 64   /* W: 4096 numbers in the card at most */
/** Quantile levels of the calibration distances the card keeps. */
#define HML__GUARD_NLEVELS 12
extern const double HML__GUARD_LEVELS[HML__GUARD_NLEVELS];

typedef enum hml__guard_kind {
	HML__GUARD_NONE = 0,
	HML__GUARD_BOUNDS,
	HML__GUARD_DISTANCE
} hml__guard_kind;

/** A parsed --guard. */
typedef struct hml__guard_spec {
	hml__guard_kind kind;
	double margin;   /**< bounds: fraction of each feature's range */
	double fa;       /**< distance: false-alarm rate */
} hml__guard_spec;

/** The statistics of training inputs (see 1 above). Heap arrays. */
typedef struct hml__guard_stats {
	int64_t features, rows, calibration_rows;
	double *min, *max;       /**< [features] */
	double *mean, *whiten;   /**< [features], [features^2]; NULL: no distance */
	double quantile[HML__GUARD_NLEVELS];  /**< distances at HML__GUARD_LEVELS */
} hml__guard_stats;

/** A deployed guard: spec, statistics and resolved threshold. */
typedef struct hml__guard {
	hml__guard_spec spec;
	hml__guard_stats stats;
	double threshold;        /**< distance: the largest distance let through */
	double *lo, *hi;         /**< bounds: min/max widened by the margin */
} hml__guard;

/** "none", "bounds", "distance". */
const char *hml__guard_kind_name(hml__guard_kind k);

/** Parse `text`; HML_EINVALID "malformed guard 'T': <why>" otherwise. */
int hml__guard_spec_parse(hml__guard_spec *out, const char *text);

/** The canonical text of a spec ("bounds:margin=0.05"). */
void hml__guard_spec_format(char *buf, size_t size, const hml__guard_spec *s);

void hml__guard_stats_release(hml__guard_stats *s);

/** The card's "guard" object (new reference; NULL on out-of-memory). */
json_t *hml__guard_stats_json(const hml__guard_stats *s);

/** Read a card's "guard" object; HML_EINVALID naming `what` when malformed. */
int hml__guard_stats_from_json(hml__guard_stats *out, const json_t *j, const char *what);

/**
 * Resolve a spec against statistics into a guard (*out is yours:
 * hml__guard_release). HML_ENOTSUPPORTED "model has no input statistics
 * for guard 'distance'" when the statistics lack what the kind needs.
 * `stats` is copied.
 */
int hml__guard_make(hml__guard *out, const hml__guard_spec *spec, const hml__guard_stats *stats);
void hml__guard_release(hml__guard *g);

/** The guard file's document (new reference; NULL on out-of-memory). */
json_t *hml__guard_file_json(const hml__guard *g);

/** Read a guard file at `path` (HML_EIO "cannot read guard 'P': ..." or
 *  HML_EINVALID "guard 'P': ..."). */
int hml__guard_file_read(hml__guard *out, const char *path);

/** 1 when the row x[0..features) must go to the original code, else 0.
 *  Reads the guard only: any number of threads may check rows at once. */
int hml__guard_row(const hml__guard *g, const double *x);

/** The Mahalanobis distance of x (0 when the guard has no whitening). */
double hml__guard_distance(const hml__guard *g, const double *x);

/**
 * The threshold for false-alarm rate `fa` from the calibration quantiles:
 * linear in the level between the kept levels; NAN without quantiles.
 */
double hml__guard_threshold(const hml__guard_stats *s, double fa);

#ifdef __cplusplus
}
#endif
#endif
