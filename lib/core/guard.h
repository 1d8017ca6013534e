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
 *                "calibration_rows": M, "quantiles": [[p, d], ...] | null,
 *                "component_quantiles": [[p, [d_0, ..., d_F-1]], ...] | null}
 *    min/max over every training row; mean and whiten (W = L^-1, L the
 *    Cholesky factor of the covariance, row-major, lower triangular) for
 *    the whitened deviation z(x) = W (x - mean): |z|_2 is the Mahalanobis
 *    distance, and z_i is feature i's deviation from what the features
 *    before it predict, in standard deviations (z_0: feature 0's z-score).
 *    quantiles: |z|_2 of the calibration rows (held out of the mean and
 *    covariance) at the levels p of HML__GUARD_LEVELS; component_quantiles:
 *    each |z_i| of those rows at the same levels. Without a usable
 *    covariance (F > HML__GUARD_MAX_DISTANCE_FEATURES, too few rows) the
 *    distance fields are null and only `bounds` can be deployed. Cards
 *    written before component_quantiles existed read, but cannot deploy
 *    `distance` (HML_ENOTSUPPORTED: retrain the model).
 *    A model trained with hml train --ensemble N adds
 *      "ensemble": {"members": N, "outputs": O, "scale": [O],
 *                   "calibration_rows": M, "quantiles": [[p, s], ...]}
 *    (null or absent otherwise): s the members' disagreement
 *    (hml__guard_spread) on M rows held out of every member's training,
 *    scale the training outputs' standard deviations (the normalised
 *    output space the disagreement is measured in).
 *
 * 2. The guard specification of hml deploy --guard:
 *      none | bounds[:margin=M] | distance[:fa=A] | ensemble[:fa=A]
 *    margin: a fraction of each feature's range added on both sides
 *    (default 0, >= 0), and 1e-14 of each bound's magnitude (the card
 *    keeps 15 significant digits: a row at a training extreme passes); fa:
 *    the false-alarm rate on calibration rows the thresholds are set for
 *    (default 0.01, in (0, 0.5]). distance: a row is guarded when |z|_2
 *    exceeds its calibration quantile at level 1 - fa/2, or any |z_i| its
 *    own at level 1 - fa/(2F) (so that at most fa of the calibration rows
 *    are guarded, by the union bound). The Mahalanobis distance alone, a
 *    sum over all features, lets through rows just past one feature's
 *    range whose other features are typical; each component's own
 *    threshold catches those. Each component has its own because their
 *    tails differ: a feature that is nearly a function of the ones before
 *    it has a heavy-tailed residual, which would set one threshold common
 *    to all far beyond a uniform feature's edge. ensemble: a row is guarded
 *    when the members' disagreement exceeds its calibration quantile at
 *    level 1 - fa.
 *
 * 3. The guard file a deployment names in HML_GUARD_<LABEL> (and
 *    HML_GUARD): one JSON document, the statistics and the resolved
 *    threshold, which the runtime reads when the region opens:
 *      {"schema_version": 2, "spec": "distance:fa=0.01", "kind": "distance",
 *       "margin": 0, "fa": 0.01, "threshold": 3.2,
 *       "component_thresholds": [F] | null, "stats": {...as in 1}}
 *    and, for an ensemble guard, "members": ["/abs/m3.pt", ...]: the
 *    members' files (TorchScript or compiled), N of them, member 0 first.
 *    The reader takes schema 1 and 2; a schema 1 `distance` file (its
 *    statistics lack component_quantiles) is refused with a one-line error
 *    that says to redeploy; `none` and `bounds` files of schema 1 read as
 *    before.
 *
 * 4. What HML_GUARD_<LABEL> (and HML_GUARD) names: a value that contains
 *    a '/' is the path of a guard file (3 above; hml deploy writes
 *    absolute paths, and a file in the working directory is named ./F);
 *    any other value is a spec (2 above), resolved when the region opens
 *    against the statistics its compiled model embeds (hml/cmodel.h,
 *    ABI version 2's input_stats: the card's "guard" object, 1 above).
 *    The text alone decides, never what happens to exist on disk: a spec
 *    has no '/' (letters, digits, ':', '=', '.'), and so a file named
 *    "bounds" beside the application cannot turn a spec into a file, nor
 *    a missing file into a spec. A spec needs statistics: a TorchScript
 *    model, a compiled model of ABI version 1 or one compiled from a card
 *    without them cannot serve one, nor can `ensemble` (its members'
 *    files are named by a guard file only). A guard file used with a
 *    compiled model that embeds statistics must be that model's: the
 *    same features, min and max (and mean when present), each within
 *    HML__GUARD_SAME_REL relative (hml__guard_stats_same).
 */
#ifndef HML_LIB_GUARD_H
#define HML_LIB_GUARD_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HML__GUARD_SCHEMA 2
/** The most features a distance guard is fitted for (W is F x F). */
#define HML__GUARD_MAX_DISTANCE_FEATURES 64   /* W: 4096 numbers in the card at most */
/** Quantile levels of the calibration distances the card keeps. */
#define HML__GUARD_NLEVELS 12
extern const double HML__GUARD_LEVELS[HML__GUARD_NLEVELS];

typedef enum hml__guard_kind {
	HML__GUARD_NONE = 0,
	HML__GUARD_BOUNDS,
	HML__GUARD_DISTANCE,
	HML__GUARD_ENSEMBLE
} hml__guard_kind;

/** Members of an ensemble (hml train --ensemble N). */
#define HML__GUARD_ENSEMBLE_MIN 2
#define HML__GUARD_ENSEMBLE_MAX 16

/** A parsed --guard. */
typedef struct hml__guard_spec {
	hml__guard_kind kind;
	double margin;   /**< bounds: fraction of each feature's range */
	double fa;       /**< distance, ensemble: false-alarm rate */
} hml__guard_spec;

/** An ensemble's calibration (see 1 above); members 0: none. */
typedef struct hml__guard_ensemble {
	int64_t members, outputs, calibration_rows;
	double *scale;                        /**< [outputs], each > 0 */
	double quantile[HML__GUARD_NLEVELS];  /**< disagreements at HML__GUARD_LEVELS */
} hml__guard_ensemble;

/** The statistics of training inputs (see 1 above). Heap arrays. */
typedef struct hml__guard_stats {
	int64_t features, rows, calibration_rows;
	double *min, *max;       /**< [features] */
	double *mean, *whiten;   /**< [features], [features^2]; NULL: no distance */
	double quantile[HML__GUARD_NLEVELS];  /**< |z|_2 at HML__GUARD_LEVELS */
	/** |z_i| at HML__GUARD_LEVELS[k] in component[k * features + i];
	 *  NULL without distance statistics or in an older card */
	double *component;
	hml__guard_ensemble ens;
} hml__guard_stats;

/** A deployed guard: spec, statistics and resolved threshold. */
typedef struct hml__guard {
	hml__guard_spec spec;
	hml__guard_stats stats;
	double threshold;        /**< distance: the largest |z|_2 let through;
	                              ensemble: the largest disagreement */
	double *component_threshold;  /**< distance: [features], the largest |z_i| */
	double *lo, *hi;         /**< bounds: min/max widened by the margin */
	char **member;           /**< ensemble: stats.ens.members paths, or NULL */
} hml__guard;

/** "none", "bounds", "distance", "ensemble". */
const char *hml__guard_kind_name(hml__guard_kind k);

/** Parse `text`; HML_EINVALID "malformed guard 'T': <why>" otherwise. */
int hml__guard_spec_parse(hml__guard_spec *out, const char *text);

/** The canonical text of a spec ("bounds:margin=0.05"). */
void hml__guard_spec_format(char *buf, size_t size, const hml__guard_spec *s);

void hml__guard_stats_release(hml__guard_stats *s);

/** The ensemble part's JSON ("ensemble" in 1 above; null when members is
 *  0) and its reader (a missing or null object: members 0). Defined in
 *  guard_ensemble.c. */
json_t *hml__guard_ensemble_json(const hml__guard_ensemble *e);
int hml__guard_ensemble_from_json(hml__guard_ensemble *out, const json_t *j, const char *what);
void hml__guard_ensemble_release(hml__guard_ensemble *e);

/**
 * The members' disagreement on one row: y holds the `members` members'
 * outputs, member after member (y[m * outputs + o]); the largest over the
 * outputs of the members' standard deviation (population, divided by
 * members) divided by scale[o]. 0 for fewer than 2 members.
 */
double hml__guard_spread(const double *y, int64_t members, int64_t outputs,
                         const double *scale);

/**
 * The quantiles of v[0..n) at HML__GUARD_LEVELS into q[k * stride] for
 * level k (v is sorted in place; linear between order statistics). n >= 1.
 */
void hml__guard_quantiles(double *q, size_t stride, double *v, int64_t n);

/**
 * The ensemble guard's paths of its members (copied): n must be
 * g->stats.ens.members (HML_EINVALID otherwise).
 */
int hml__guard_set_members(hml__guard *g, const char *const *paths, int64_t n);

/** The card's "guard" object (new reference; NULL on out-of-memory). */
json_t *hml__guard_stats_json(const hml__guard_stats *s);

/** Read a card's "guard" object; HML_EINVALID naming `what` when malformed. */
int hml__guard_stats_from_json(hml__guard_stats *out, const json_t *j, const char *what);

/**
 * Resolve a spec against statistics into a guard (*out is yours:
 * hml__guard_release). HML_ENOTSUPPORTED "model has no input statistics
 * for guard 'distance'" when the statistics lack what the kind needs
 * ("the model was trained without --ensemble" for 'ensemble'). `stats`
 * is copied. An ensemble guard's members are set after
 * (hml__guard_set_members; the guard file reader does).
 */
int hml__guard_make(hml__guard *out, const hml__guard_spec *spec, const hml__guard_stats *stats);
void hml__guard_release(hml__guard *g);

/** The guard file's document (new reference; NULL on out-of-memory). */
json_t *hml__guard_file_json(const hml__guard *g);

/** Read a guard file at `path` (HML_EIO "cannot read guard 'P': ..." or
 *  HML_EINVALID "guard 'P': ..."). */
int hml__guard_file_read(hml__guard *out, const char *path);

/** How close two statistics' numbers must be to be one model's (4 above). */
#define HML__GUARD_SAME_REL 1e-12

/** 1 when HML_GUARD_<LABEL>'s `value` is a spec, 0 when it names a guard
 *  file (it contains a '/'; 4 above). NULL: 0. */
int hml__guard_value_is_spec(const char *value);

/**
 * The guard of spec `spec_text` resolved against statistics given as JSON
 * text (a compiled model's input_stats; the card's "guard" object), as
 * hml__guard_make does for hml deploy --guard. *out is yours
 * (hml__guard_release); a `none` spec needs no statistics and gives a
 * guard of kind none. Errors name `what` ("compiled model 'c1'"):
 * HML_EINVALID (a malformed spec, statistics that are not JSON or not
 * statistics), HML_ENOTSUPPORTED (`ensemble`; no statistics, NULL or "";
 * what hml__guard_make refuses).
 */
int hml__guard_from_stats_text(hml__guard *out, const char *spec_text, const char *stats_json,
                               const char *what);

/** 1 when a and b are one model's statistics (4 above), else 0. */
int hml__guard_stats_same(const hml__guard_stats *a, const hml__guard_stats *b);

/** 0 when `s` are the statistics in JSON text `stats_json` (a compiled
 *  model's), HML_EINVALID "WHAT: the statistics differ" when not, or when
 *  the text is not statistics (the reader's error, naming `what`). */
int hml__guard_stats_match_text(const hml__guard_stats *s, const char *stats_json,
                                const char *what);

/** 1 when the row x[0..features) must go to the original code, else 0.
 *  Reads the guard only: any number of threads may check rows at once.
 *  An ensemble guard needs its members' outputs: hml__guard_ensemble_row
 *  (this returns 0 for it). */
int hml__guard_row(const hml__guard *g, const double *x);

/** Ensemble: 1 when the members' outputs y for one row (as
 *  hml__guard_spread) disagree beyond the threshold, else 0. */
int hml__guard_ensemble_row(const hml__guard *g, const double *y);

/** The Mahalanobis distance |z|_2 of x (0 when the guard has no whitening);
 *  z (when not NULL, [features]) gets the whitened deviation. */
double hml__guard_distance(const hml__guard *g, const double *x, double *z);

/**
 * The quantile at level p of calibration distances kept at the levels
 * HML__GUARD_LEVELS, q[k * stride] for level k (a stats' quantile with
 * stride 1, or component + i with stride features): linear in the level
 * between the kept levels.
 */
double hml__guard_quantile(const double *q, size_t stride, double p);

/** The threshold for false-alarm rate `fa` from quantiles q kept at
 *  HML__GUARD_LEVELS: hml__guard_quantile(q, 1, 1 - fa). */
double hml__guard_threshold_of(const double q[HML__GUARD_NLEVELS], double fa);

#ifdef __cplusplus
}
#endif
#endif
