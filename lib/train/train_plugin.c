/*
 * lib/train/train_plugin.c - the entry point of libhml-cli-train.so
 * (train_plugin.h): the libtorch training shim (train.cpp) behind one
 * table. Built only into the plugin.
 */
#include "core/error.h"
#include "hml/version.h"
#include "train/train_plugin.h"

/* The plugin's own copy of lib/core/error.c keeps this thread's error. */
static const char *last_error(void)
{
	return hml_error_last()->message;
}

static const hml__train_plugin table = {
	HML__TRAIN_PLUGIN_ABI, sizeof(hml__train_plugin), HML_VERSION_STRING, hml__train, hml__guard_fit,
	last_error
};

__attribute__((visibility("default"))) const void *hml_cli_train(int abi);

const void *hml_cli_train(int abi)
{
	return abi == HML__TRAIN_PLUGIN_ABI ? &table : NULL;
}
