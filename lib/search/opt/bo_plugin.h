/*
 * lib/search/opt/bo_plugin.h - the C interface between the hml CLI and its
 * optimiser plugin, libhml-cli-bo.so (internal; not installed).
 *
 * The CLI links neither LAPACKE nor NLopt: through them a process maps
 * OpenBLAS (initialised at load) and gfortran, which cost a C program
 * that links them +3.8 MB and +4.6 ms (fastest of 300 runs) to +12.8 ms
 * (median, on a loaded 2-core machine) at start-up on Debian 12, and which
 * only `hml search` uses, in one place: the Gaussian processes (gp.c: Cholesky
 * factorisations, L-BFGS fits) of the Bayesian optimiser (bo.c: BOBYQA
 * polishing, OpenMP thread count). So bo.h lives in this plugin, which
 * bo_proxy.c opens the first time an optimiser is made (hml__bo_new),
 * through the runtime's plugin opener (loader.h, hml__plugin_load), and
 * never unloads. The unit tests and bench/bo.c link bo.c and gp.c
 * directly instead (hml_bo_obj).
 *
 * The plugin exports one entry point returning a static table (loader.h).
 * Every function is the bo.h function of the same name run in the plugin,
 * on an optimiser it made (the options' projection callback is called
 * back in the CLI); after a failure, last_error() gives that thread's
 * message in the plugin, which the proxy turns into the caller's hml error.
 */
#ifndef HML_LIB_BO_PLUGIN_H
#define HML_LIB_BO_PLUGIN_H

#include <stddef.h>

#include "search/opt/bo.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bumped on any change to the table or to the structures it passes (hml__bo_options). */
#define HML__BO_PLUGIN_ABI 1

typedef struct hml__bo_plugin {
	int abi;                   /**< HML__BO_PLUGIN_ABI the plugin was built with */
	size_t size;               /**< sizeof(hml__bo_plugin) in the plugin's build */
	const char *hml_version;   /**< hml_version() of the plugin's build */
	int (*bo_new)(hml__bo **out, const hml__bo_options *opts);
	void (*bo_free)(hml__bo *bo);
	int (*bo_ask)(hml__bo *bo, size_t *id, double *u);
	int (*bo_add)(hml__bo *bo, size_t *id, const double *u);
	int (*bo_tell)(hml__bo *bo, size_t id, const double *obj, const double *cons);
	int (*bo_improve)(hml__bo *bo, size_t id, const double *obj, const double *cons);
	int (*bo_fail)(hml__bo *bo, size_t id);
	size_t (*bo_count)(const hml__bo *bo);
	int (*bo_trial)(const hml__bo *bo, size_t id, const double **u, const double **obj,
	                const double **cons);
	int (*bo_feasible)(const hml__bo *bo, size_t id);
	long (*bo_front)(const hml__bo *bo, size_t *ids);
	/** The message of this thread's last failure in the plugin. */
	const char *(*last_error)(void);
} hml__bo_plugin;

#define HML__BO_PLUGIN "libhml-cli-bo.so"
#define HML__BO_ENTRY "hml_cli_bo"

#ifdef __cplusplus
}
#endif
#endif
