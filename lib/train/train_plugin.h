/*
 * lib/train/train_plugin.h - the C interface between the hml CLI and its
 * training plugin, libhml-cli-train.so (internal; not installed).
 *
 * The CLI links no libtorch: mapping Debian's libtorch costs a process
 * ~0.3-0.8 s and ~150 MB at start-up, which `hml show` has no use for. The
 * libtorch training shim (train.cpp, train.h's hml__train) lives in this
 * plugin, which train_proxy.c opens the first time a command trains (`hml
 * train`, `hml search`'s workers) through the runtime's plugin opener
 * (loader.h, hml__plugin_load) and never unloads. The unit tests link
 * train.cpp directly instead (hml_train_torch_obj).
 *
 * The plugin exports one entry point returning a static table (loader.h);
 * `train` is train.h's hml__train run in the plugin, on the caller's data
 * set, options (their progress callback is called back in the CLI) and
 * result; after a failure, last_error() gives that thread's message in the
 * plugin, which the proxy turns into the caller's hml error.
 */
#ifndef HML_LIB_TRAIN_PLUGIN_H
#define HML_LIB_TRAIN_PLUGIN_H

#include <stddef.h>

#include "train/guard_fit.h"
#include "train/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bumped on any change to the table or to the structures it passes
 * (hml__dataset, hml__train_options, hml__train_result, hml__arch). */
#define HML__TRAIN_PLUGIN_ABI 2

typedef struct hml__train_plugin {
	int abi;                   /**< HML__TRAIN_PLUGIN_ABI the plugin was built with */
	size_t size;               /**< sizeof(hml__train_plugin) in the plugin's build */
	const char *hml_version;   /**< hml_version() of the plugin's build */
	int (*train)(const hml__dataset *d, const hml__train_options *o,
	             const char *out_path, hml__train_result *res);
	/** guard_fit.h's hml__guard_fit (LAPACKE lives in the plugin). */
	int (*guard_fit)(hml__guard_stats *out, const float *x, int64_t rows, int64_t features);
	/** The message of this thread's last failure in the plugin. */
	const char *(*last_error)(void);
} hml__train_plugin;

#define HML__TRAIN_PLUGIN "libhml-cli-train.so"
#define HML__TRAIN_ENTRY "hml_cli_train"

#ifdef __cplusplus
}
#endif
#endif
