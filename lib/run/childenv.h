/*
 * lib/run/childenv.h - the environment of an application run by hml collect,
 * hml evaluate (and hml search), built from scratch for each configuration
 * (internal).
 *
 * A run must measure what its configuration says, whatever the shell
 * holds: after `eval "$(hml deploy --best)"` the shell has
 * HML_MODE_<LABEL>=infer, which the runtime reads before HML_MODE, so an
 * "accurate" run that merely added HML_MODE=off would infer with the model
 * and evaluate would compare the surrogate with itself. The environment is
 * therefore composed in three layers, later ones overriding earlier ones:
 *
 * 1. The caller's environment without any HML_* variable -- global or per
 *    region, for any label, known to this version or not. None passes
 *    through: every HML_* variable is a runtime setting or reserved for
 *    one, and a run's settings must be those recorded with its result (the
 *    workflow, whose SHA-256 the experiment keeps, and the configuration),
 *    not whatever a shell happened to export. Everything else (PATH,
 *    OMP_NUM_THREADS, LD_LIBRARY_PATH, ...) passes unchanged.
 * 2. The workflow's "env" entries, except those naming a variable the
 *    configuration controls (hml__childenv_controls(): HML_MODE,
 *    HML_MODEL, HML_DB, HML_QOI, HML_PROFILE, HML_ON_ERROR and HML_GUARD, in their
 *    global and per-region forms), which are ignored: a workflow may tune
 *    the runtime (HML_THREADS, HML_INTERLEAVE, ...) but cannot change what
 *    a run is. The CLI warns about the ignored ones.
 * 3. What the configuration needs:
 *      collect    HML_MODE=collect, HML_DB=<db>
 *      accurate   HML_MODE=off
 *      surrogate  HML_MODE=off, HML_ON_ERROR=fail, HML_MODE_<REGION>=infer,
 *                 HML_MODEL_<REGION>=<model>[, HML_GUARD_<REGION>=<guard file>];
 *                 with an interleave ratio N > 0 HML_MODE_<REGION>=interleave
 *                 and HML_INTERLEAVE_<REGION>=N instead of infer
 *    and, for any of them, HML_QOI / HML_PROFILE when given; for collect,
 *    the HML_COLLECT_* variables that `keep` sets (hml__collect_keep).
 */
#ifndef HML_LIB_CHILDENV_H
#define HML_LIB_CHILDENV_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hml__run_kind {
	HML__RUN_COLLECT,    /**< every region collects into `db` */
	HML__RUN_ACCURATE,   /**< every region runs its original code */
	HML__RUN_SURROGATE,  /**< `region` infers with `model`, a model failure
	                          fails the run; the others run their code */
	HML__RUN_GUARDED     /**< as surrogate, with `guard` (required), and the
	                          guarded rows stored in `db` (HML_COLLECT_GUARDED) */
} hml__run_kind;

/**
 * What a collect run keeps (HML_COLLECT_RATE, _RESERVOIR, _DEDUP, _SEED,
 * _COMPRESSION: hml-runtime(3)): set from workflow.json's
 * "collect.sample" and "collect.compression" (lib/run/workflow.h) and
 * hml collect's --rate, --reservoir, --dedup. Zeroed: every row, the
 * runtime's defaults. A field left 0 (or NULL) sets no variable.
 */
typedef struct hml__collect_keep {
	double rate;              /**< (0, 1]; 0: unset */
	int64_t reservoir;        /**< > 0; 0: unset */
	int dedup;                /**< 1: drop duplicates; 0: unset */
	int64_t seed;             /**< -1: unset */
	const char *compression;  /**< "deflate:4", ...; NULL: unset */
} hml__collect_keep;

#define HML__COLLECT_KEEP_INIT { 0.0, 0, 0, -1, NULL }

/** Every field that `over` sets (hml collect's options) replaces base's
 *  (the workflow's). */
void hml__collect_keep_over(hml__collect_keep *base, const hml__collect_keep *over);

/** One configuration of a run. Strings are borrowed. */
typedef struct hml__run_config {
	hml__run_kind kind;
	const char *db;       /**< collect, guarded: the HDF5 file to write (required) */
	const char *region;   /**< surrogate, guarded: the label the model replaces (required) */
	const char *model;    /**< surrogate, guarded: the model file (required) */
	const char *qoi;      /**< HML_QOI, or NULL for none */
	const char *profile;  /**< HML_PROFILE, or NULL for none */
	const char *guard;    /**< surrogate: HML_GUARD_<REGION>, the guard file
	                           (lib/core/guard.h), or NULL for none */
	const hml__collect_keep *keep;  /**< collect: HML_COLLECT_*, or NULL */
	int interleave;       /**< surrogate, guarded: > 0: the interleave mode, the model for
	                           this many calls, then the original code for one; 0: infer */
	const char *conserve; /**< surrogate, guarded: HML_CONSERVE_<REGION>, the sum the
	                           model's output keeps (lib/core/conserve.h), or NULL */
	const char *device;   /**< surrogate, guarded: HML_DEVICE, where a TorchScript model
	                           runs (hml__device_known), replacing the workflow env's;
	                           NULL: the workflow env's or the runtime's default */
} hml__run_config;

/**
 * Compose the complete environment of a run of configuration `c` from
 * `caller` (the caller's "KEY=VALUE" list, e.g. environ; may be NULL) and
 * `workflow_env` (the workflow's "KEY=VALUE" list; may be NULL), as the
 * header comment describes. Each key appears once. *out (NULL-terminated,
 * malloc'ed strings) is yours: hml__strv_free(). Returns 0, HML_ENOMEM,
 * or HML_EINVALID for a configuration that lacks what its kind requires
 * or a region label too long for a variable name.
 */
int hml__childenv_build(char ***out, const hml__run_config *c,
                        const char *const *caller, const char *const *workflow_env);

/**
 * The variables of region `region` in a run with the model file `model`
 * at interleave ratio `interleave` (0: infer), guard file `guard` (NULL:
 * none) and conserved sum `conserve` (NULL: none), as a surrogate run's
 * layer 3 sets them: HML_MODE_<REGION>=infer (or interleave with
 * HML_INTERLEAVE_<REGION>=N), HML_MODEL_<REGION>, HML_GUARD_<REGION> and
 * HML_CONSERVE_<REGION>. hml deploy prints them for the shell, so that a
 * deployed model runs as hml evaluate runs it. *out ("KEY=VALUE",
 * NULL-terminated) yours: hml__strv_free(). HML_EINVALID (no region or
 * model, a label too long for a variable name), HML_ENOMEM.
 */
int hml__childenv_model(char ***out, const char *region, const char *model, int interleave,
                        const char *guard, const char *conserve);

/** 1 when `entry` ("KEY=VALUE" or "KEY") names a variable that every run's
 *  configuration sets (so a workflow's "env" cannot), else 0. */
int hml__childenv_controls(const char *entry);

#ifdef __cplusplus
}
#endif
#endif
