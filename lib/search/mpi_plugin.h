/*
 * lib/search/mpi_plugin.h - the C interface between the hml CLI and its MPI
 * plugin, libhml-cli-mpi.so (internal; not installed; built with
 * -DHML_WITH_MPI=ON).
 *
 * The CLI links no MPI: Open MPI's libraries (libmpi, libopen-rte,
 * libopen-pal, hwloc, libevent, ...) are needed only by `hml search` run
 * under an MPI launcher (mpirun -n N hml search), which cmd/search.c
 * detects from the launcher's environment before it calls
 * hml__mpi_init(). So the relay (mpi_relay.c, mpi_relay.h) lives in this
 * plugin, which mpi_proxy.c opens in hml__mpi_init, through the runtime's
 * plugin opener (loader.h, hml__plugin_load), and never unloads. Without a
 * launcher no libmpi is mapped.
 *
 * The plugin exports one entry point returning a static table (loader.h).
 * Every function is the mpi_relay.h function of the same name, run in the
 * plugin; after a failure, last_error() gives that thread's message in the
 * plugin, which the proxy turns into the caller's hml error.
 */
#ifndef HML_LIB_MPI_PLUGIN_H
#define HML_LIB_MPI_PLUGIN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bumped on any change to the table. */
#define HML__MPI_PLUGIN_ABI 1

typedef struct hml__mpi_plugin {
	int abi;                   /**< HML__MPI_PLUGIN_ABI the plugin was built with */
	size_t size;               /**< sizeof(hml__mpi_plugin) in the plugin's build */
	const char *hml_version;   /**< hml_version() of the plugin's build */
	int (*mpi_init)(int *rank, int *size);
	int (*mpi_relay_start)(int rank, int size, int *to, int *from, int *in, int *out);
	void (*mpi_finish)(void);
	/** The message of this thread's last failure in the plugin. */
	const char *(*last_error)(void);
} hml__mpi_plugin;

#define HML__MPI_PLUGIN "libhml-cli-mpi.so"
#define HML__MPI_ENTRY "hml_cli_mpi"

#ifdef __cplusplus
}
#endif
#endif
