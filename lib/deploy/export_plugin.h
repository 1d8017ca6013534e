/*
 * lib/deploy/export_plugin.h - the C interface between the hml CLI and its
 * TorchScript reader plugin, libhml-cli-export.so (internal; not
 * installed).
 *
 * The CLI links no libtorch (lib/train/train_plugin.h says why). Reading
 * a TorchScript model into the C code generator's description (export.h,
 * export.cpp) needs it, so it lives in this plugin, which export_proxy.c
 * opens the first time a model is compiled to C (`hml deploy --target c`,
 * the C latency of `hml search` and `hml import`) through the runtime's
 * plugin opener (loader.h, hml__plugin_load), and never unloads. The unit
 * tests link export.cpp directly instead (hml_export_obj).
 *
 * The plugin exports one entry point returning a static table (loader.h);
 * `export_model` is export.h's hml__export_model run in the plugin: the
 * description it fills is plain malloc'ed memory, released by the caller's
 * hml__cg_model_release. After a failure, last_error() gives that thread's
 * message in the plugin, which the proxy turns into the caller's hml error.
 */
#ifndef HML_LIB_EXPORT_PLUGIN_H
#define HML_LIB_EXPORT_PLUGIN_H

#include <stddef.h>

#include "deploy/codegen.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bumped on any change to the table or to the structure it fills (hml__cg_model). */
#define HML__EXPORT_PLUGIN_ABI 1

typedef struct hml__export_plugin {
	int abi;                   /**< HML__EXPORT_PLUGIN_ABI the plugin was built with */
	size_t size;               /**< sizeof(hml__export_plugin) in the plugin's build */
	const char *hml_version;   /**< hml_version() of the plugin's build */
	int (*export_model)(const char *path, hml__cg_model *out);
	/** The message of this thread's last failure in the plugin. */
	const char *(*last_error)(void);
} hml__export_plugin;

#define HML__EXPORT_PLUGIN "libhml-cli-export.so"
#define HML__EXPORT_ENTRY "hml_cli_export"

#ifdef __cplusplus
}
#endif
#endif
