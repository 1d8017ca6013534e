/*
 * lib/deploy/latency.h - the latency of a model in each of its deployment forms
 * ("targets"), measured and recorded in its model card (internal, CLI
 * side).
 *
 * Targets: "torchscript" (the model file run by the libtorch plugin) and
 * "c" (the model compiled to C by `hml deploy --target c`). The card
 * contract (hml-manifest(5)), written by hml__latency_to_json and read by
 * hml__latency_from_json, is the member "latency" of a model record:
 *
 *   "latency": {"torchscript": 1.2e-07, "c": 3.1e-08,
 *               "batch": 4096, "threads": 2,
 *               "machine": "x86_64, Intel(R) Xeon(R) ..., 2 cores",
 *               "startup": {"torchscript": 0.41, "c": 0.0021},
 *               "unavailable": {"c": "no C compiler: ..."}}
 *
 * Each target's figure is seconds per sample at `batch` rows per call,
 * or null when it was not measured; "unavailable" (optional) says why,
 * per target. "startup" (optional, per target; absent in cards of older
 * hml or where hml-probe was not found) is the seconds the form adds to
 * an application's start-up: loading it (libtorch and its plugin, or the
 * compiled model and its libraries) and its first call on one row,
 * measured as the wall time of the hml-probe process (cmd/probe.c) with
 * the model, less the same process without one (best of 3 each).
 *
 * Measuring: the TorchScript form through the runtime's backend loader
 * (runtime/loader/model.c); the C form generated from the model's torch-free
 * description (lib/deploy/export.h), compiled with the system cc into a fresh
 * temporary directory, $TMPDIR/hml-latency-PID-XXXXXX (lib/deploy/cbuild.h),
 * loaded through the runtime's compiled-model loader (the same ABI checks
 * as an application), timed, and removed; such directories left by
 * processes that no longer exist (killed with -9) are removed first. Each form is called repeatedly for about `seconds`, in 3
 * rounds; the best round's mean time per call / batch is kept.
 */
#ifndef HML_LIB_LATENCY_H
#define HML_LIB_LATENCY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hml__target {
	HML__TARGET_TORCHSCRIPT = 0,
	HML__TARGET_C = 1
} hml__target;
#define HML__NTARGETS 2

/** "torchscript" or "c"; NULL for a bad value. */
const char *hml__target_name(int t);

/** The target named `name`, or -1. */
int hml__target_parse(const char *name);

/**
 * Whether models of family `family` ("mlp", ...) compile to C: 1 for the
 * families lib/deploy/export.h reads (mlp, cnn, cnnvec), else 0.
 */
int hml__target_family_compiles(const char *family);

/**
 * The deployment target "auto" stands for, for models of `family`:
 * HML__TARGET_C when a C compiler is found (hml__cbuild_find_cc) and the
 * family compiles to C, else HML__TARGET_TORCHSCRIPT with the reason in
 * why (may be NULL). Never fails.
 */
int hml__target_auto(const char *family, char *why, size_t size);

/**
 * The half of "auto" that is not the model's: 1 when models can be
 * compiled to C here (a C compiler is found, hml__cbuild_find_cc, in a
 * build with libtorch), else 0 with the reason in why (may be NULL; ""
 * when 1). hml__target_auto() is it and the family's half; hml deploy
 * --target auto takes the model's half from its card (a model that does
 * not compile has C unavailable there: lib/store/select.h).
 */
int hml__target_c_found(char *why, size_t size);

/** A model's latencies (caller's storage). */
typedef struct hml__latency {
	double seconds[HML__NTARGETS];   /**< per sample; NaN: not measured */
	double startup[HML__NTARGETS];   /**< added to a process's start-up; NaN: not measured */
	int64_t batch;                   /**< rows per call; 0: unknown */
	int threads;                     /**< the model's threads (libtorch's intra-op, the C form's
	                                      OpenMP threads); 0: their default */
	char machine[192];               /**< where it was measured */
	char unavailable[HML__NTARGETS][256];   /**< why a target has no figure, or "" */
} hml__latency;

/** Nothing measured: NaNs and empty strings. */
void hml__latency_init(hml__latency *l);

/** The card's "latency" object. New reference; NULL on OOM. */
json_t *hml__latency_to_json(const hml__latency *l);

/**
 * Read a card's "latency" object `j` into `l`. Errors: HML_ENOTFOUND when
 * `j` is NULL (a card without latencies: records of older hml, l is
 * initialised); HML_EINVALID "the card's latency is malformed: REASON"
 * when it is not an object, a figure is neither a positive finite number
 * nor null, batch is not a positive integer, or a string is too long.
 */
int hml__latency_from_json(hml__latency *l, const json_t *j);

/** hml__latency_from_json on record["latency"] of a model record. */
int hml__latency_of_record(hml__latency *l, const json_t *model_record);

/** "x86_64, CPU MODEL NAME, N cores" of this machine into buf. */
void hml__latency_machine(char *buf, size_t size);

typedef struct hml__latency_options {
	int64_t batch;          /**< rows per call (> 0) */
	int threads;            /**< the model's threads, each form (0: their default) */
	double seconds;         /**< time spent per target (default 0.15 when <= 0) */
	int in_ndim;            /**< the region's per-row input shape */
	const int64_t *in_shape;
	const float *rows;      /**< sample rows (nrows * features, float32), cycled */
	int64_t nrows;          /**< > 0 */
	int c;                  /**< nonzero: also measure the C form */
	int no_torchscript;     /**< nonzero: do not measure the TorchScript form
	                             (its figure stays NaN; with c: the C form only) */
	const char *probe;      /**< hml-probe to time each form's start-up with, or
	                             NULL: startup stays NaN */
} hml__latency_options;

/**
 * Measure the model file `pt_path` (TorchScript) in each form into `out`
 * (initialised here). The TorchScript form must run: a model that cannot
 * be loaded or rejects the rows fails (the backend's error). The C form is
 * measured when o->c is set; when it cannot be made (a graph hml cannot
 * compile, no C compiler, a compiler failure, a build without libtorch)
 * its figure stays NaN and unavailable[HML__TARGET_C] says why: that is
 * not an error. Errors: HML_EINVALID (bad options), the backend's errors,
 * HML_ENOMEM, HML_ERROR "interrupted".
 */
int hml__latency_measure(hml__latency *out, const char *pt_path, const hml__latency_options *o);

struct hml__dataset;

/**
 * Options that time both forms (c set) on the rows of `d` (borrowed: keep
 * it alive while measuring) at `batch` rows per call (1 when <= 0) with
 * `threads` (0: libtorch's default); the rest at their defaults.
 */
hml__latency_options hml__latency_options_for(const struct hml__dataset *d, int64_t batch,
                                              int threads);

#ifdef __cplusplus
}
#endif
#endif
