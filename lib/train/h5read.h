/*
 * lib/train/h5read.h - the C interface between the hml CLI and its HDF5
 * reader plugin, libhml-cli-hdf5.so (internal; not installed).
 *
 * The CLI links no HDF5: mapping Debian's libhdf5 (and, through it,
 * libcurl, GnuTLS, Kerberos, LDAP, ...) costs a process ~8 ms and ~7 MB at
 * start-up, which `hml show` and `hml deploy` have no use for. The CLI
 * reads HDF5 in three places only: collected data (dataset.h: the region
 * listing and the loader, dataset.c), QoI files (lib/core/qoi_file.h's
 * reader) and the view of an MPI run's ranks' files it writes
 * (lib/core/collection_vds.h). Both live in this plugin, which h5read_proxy.c opens the first
 * time either is needed, through the runtime's plugin opener (loader.h,
 * hml__plugin_load), and never unloads (HDF5 keeps process-wide state and
 * an exit handler). The unit tests link dataset.c and qoi_file.c directly
 * instead (hml_dataset_obj, hml_core_h5_obj).
 *
 * The plugin exports one entry point returning a static table (loader.h).
 * Every function is the dataset.h or qoi_file.h function of the same name,
 * run in the plugin: what it allocates (region lists, rows, QoI values) is
 * plain malloc'ed memory of the process. The loader reads the CLI's
 * interrupt flag (SIGINT, SIGTERM) between slabs through the function
 * given to set_interrupt(). After a failure, last_error() gives that
 * thread's message in the plugin, which the proxy turns into the caller's
 * hml error.
 */
#ifndef HML_LIB_H5READ_H
#define HML_LIB_H5READ_H

#include <stddef.h>

#include "core/collection_vds.h"
#include "train/dataset.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bumped on any change to the table or to the structures it passes
 * (hml__region_info, hml__dataset). */
#define HML__H5READ_ABI 4

typedef struct hml__h5read {
	int abi;                   /**< HML__H5READ_ABI the plugin was built with */
	size_t size;               /**< sizeof(hml__h5read) in the plugin's build */
	const char *hml_version;   /**< hml_version() of the plugin's build */
	int (*region_info_list)(const char *path, hml__region_info **out, size_t *n);
	void (*region_info_free)(hml__region_info *infos, size_t n);
	int (*dataset_load)(hml__dataset *d, const char *const *paths, size_t n,
	                    const char *label, hml__nonfinite policy);
	void (*dataset_release)(hml__dataset *d);
	int (*qoi_file_read)(const char *path, const char *name, double **out, size_t *n);
	int (*qoi_file_read_ranks)(const char *path, int ranks, const char *name, double **out,
	                           size_t *n);
	int (*coll_vds_build)(const char *out, hml__coll_vds_part *parts, size_t nparts,
	                      size_t *nused);
	/** Where the loader asks whether an interrupt is pending (the CLI's
	 * hml__interrupt_pending); set once, before any read. */
	void (*set_interrupt)(int (*pending)(void));
	/** The message of this thread's last failure in the plugin. */
	const char *(*last_error)(void);
	int (*qoi_file_read_steps)(const char *path, const char *name, int64_t **steps,
	                           size_t *n);
} hml__h5read;

#define HML__H5READ_PLUGIN "libhml-cli-hdf5.so"
#define HML__H5READ_ENTRY "hml_cli_hdf5"

#ifdef __cplusplus
}
#endif
#endif
