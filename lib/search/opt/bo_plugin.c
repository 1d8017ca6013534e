/*
 * lib/search/opt/bo_plugin.c - the entry point of libhml-cli-bo.so
 * (bo_plugin.h): the Bayesian optimiser (bo.c, on gp.c and pareto.c) with
 * LAPACKE, NLopt and OpenMP, behind one table. Built only into the plugin.
 */
#include "core/error.h"
#include "hml/version.h"
#include "search/opt/bo_plugin.h"

/* The plugin's own copy of lib/core/error.c keeps this thread's error. */
static const char *last_error(void)
{
	return hml_error_last()->message;
}

static const hml__bo_plugin table = {
	HML__BO_PLUGIN_ABI, sizeof(hml__bo_plugin), HML_VERSION_STRING,
	hml__bo_new, hml__bo_free, hml__bo_ask, hml__bo_add, hml__bo_tell, hml__bo_improve,
	hml__bo_fail, hml__bo_count, hml__bo_trial, hml__bo_feasible, hml__bo_front, last_error
};

__attribute__((visibility("default"))) const void *hml_cli_bo(int abi);

const void *hml_cli_bo(int abi)
{
	return abi == HML__BO_PLUGIN_ABI ? &table : NULL;
}
