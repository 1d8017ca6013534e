/*
 * lib/search/mpi_plugin.c - the entry point of libhml-cli-mpi.so
 * (mpi_plugin.h): the relay between pipes and MPI ranks (mpi_relay.c)
 * behind one table. Built only into the plugin.
 */
#include "core/error.h"
#include "hml/version.h"
#include "search/mpi_plugin.h"
#include "search/mpi_relay.h"

/* The plugin's own copy of lib/core/error.c keeps this thread's error. */
static const char *last_error(void)
{
	return hml_error_last()->message;
}

static const hml__mpi_plugin table = {
	HML__MPI_PLUGIN_ABI, sizeof(hml__mpi_plugin), HML_VERSION_STRING,
	hml__mpi_init, hml__mpi_relay_start, hml__mpi_finish, last_error
};

__attribute__((visibility("default"))) const void *hml_cli_mpi(int abi);

const void *hml_cli_mpi(int abi)
{
	return abi == HML__MPI_PLUGIN_ABI ? &table : NULL;
}
