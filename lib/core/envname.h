/*
 * lib/core/envname.h - the names of the environment variables the runtime reads
 * (internal; shared by the runtime and the CLI).
 *
 * A region setting is read from HML_<KEY>_<LABEL> first, then from the
 * global HML_<KEY>; <LABEL> is the region label upper-cased, with every
 * character other than a letter or a digit turned into '_'
 * ("bin.omial-2" -> HML_MODE_BIN_OMIAL_2). The runtime looks names up and
 * the CLI builds them (collect, evaluate, deploy) through this one module,
 * so the two cannot drift apart.
 */
#ifndef HML_LIB_ENVNAME_H
#define HML_LIB_ENVNAME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Region settings: global name, and the prefix of the per-region forms. */
#define HML__ENV_MODE          "HML_MODE"
#define HML__ENV_MODEL         "HML_MODEL"
#define HML__ENV_DB            "HML_DB"
#define HML__ENV_PROFILE       "HML_PROFILE"
#define HML__ENV_ON_ERROR      "HML_ON_ERROR"
#define HML__ENV_INTERLEAVE    "HML_INTERLEAVE"
#define HML__ENV_SHADOW        "HML_SHADOW"
#define HML__ENV_THREADS       "HML_THREADS"
#define HML__ENV_FLUSH_SECONDS "HML_FLUSH_SECONDS"
#define HML__ENV_FLUSH_BYTES   "HML_FLUSH_BYTES"
#define HML__ENV_GUARD         "HML_GUARD"
#define HML__ENV_COLLECT_GUARDED "HML_COLLECT_GUARDED"
/* The sum a model's output conserves (core/conserve.h): a spec. */
#define HML__ENV_CONSERVE      "HML_CONSERVE"
/* Hot swap: the deployment file a region watches (core/deployfile.h), and
 * the milliseconds between two looks at it. */
#define HML__ENV_DEPLOYMENT    "HML_DEPLOYMENT"
#define HML__ENV_SWAP_INTERVAL "HML_SWAP_INTERVAL"
/* What a collecting region keeps (hml-runtime(3), the runtime's sample.h). */
#define HML__ENV_COLLECT_RATE        "HML_COLLECT_RATE"
#define HML__ENV_COLLECT_RESERVOIR   "HML_COLLECT_RESERVOIR"
#define HML__ENV_COLLECT_DEDUP       "HML_COLLECT_DEDUP"
#define HML__ENV_COLLECT_SEED        "HML_COLLECT_SEED"
#define HML__ENV_COLLECT_COMPRESSION "HML_COLLECT_COMPRESSION"
/* Process-wide settings (global form only). */
#define HML__ENV_QOI           "HML_QOI"
#define HML__ENV_JIT_OPTIMIZE  "HML_JIT_OPTIMIZE"
#define HML__ENV_DEVICE        "HML_DEVICE"

/* The CLI's own: the time limit of an application run (lib/run/limit.h);
 * the seconds between two progress lines when stderr is not a terminal
 * (cmd/common.c). */
#define HML__ENV_RUN_TIMEOUT   "HML_RUN_TIMEOUT"
#define HML__ENV_PROGRESS_SECONDS "HML_PROGRESS_SECONDS"

/* Every prefix every HML variable has. */
#define HML__ENV_PREFIX        "HML_"

/* Room for the longest per-region name (a 64-character label), with '\0'. */
#define HML__ENVNAME_MAX 96

/**
 * Write the per-region name of `var` (one of the HML__ENV_* region
 * settings) for region `label` into buf: "<var>_<LABEL>". Returns 0, or
 * HML_EINVALID "variable name for region 'L' is longer than N characters"
 * when it does not fit in `size` bytes (buf then holds "").
 */
int hml__envname_region(char *buf, size_t size, const char *var, const char *label);

/**
 * Does `entry` ("KEY=VALUE" or "KEY") name `var` itself or one of its
 * per-region forms ("<var>_<anything>")? 1 or 0.
 */
int hml__envname_matches(const char *entry, const char *var);

/** 1 when `v` names a device HML_DEVICE (hml-runtime(3)), hml train
 *  --device and hml evaluate --device accept: "auto", "cpu" or "cuda"
 *  (also NULL or empty: auto, the default), else 0. */
int hml__device_known(const char *v);

#ifdef __cplusplus
}
#endif
#endif
