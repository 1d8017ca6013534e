/*
 * lib/deploy/export_plugin.c - the entry point of libhml-cli-export.so
 * (export_plugin.h): the TorchScript reader of the code generator
 * (export.cpp) behind one table. Built only into the plugin.
 */
#include "core/error.h"
#include "deploy/export.h"
#include "deploy/export_plugin.h"
#include "hml/version.h"

/* The plugin's own copy of lib/core/error.c keeps this thread's error. */
static const char *last_error(void)
{
	return hml_error_last()->message;
}

static const hml__export_plugin table = {
	HML__EXPORT_PLUGIN_ABI, sizeof(hml__export_plugin), HML_VERSION_STRING,
	hml__export_model, last_error
};

__attribute__((visibility("default"))) const void *hml_cli_export(int abi);

const void *hml_cli_export(int abi)
{
	return abi == HML__EXPORT_PLUGIN_ABI ? &table : NULL;
}
