/*
 * runtime/src/h5io.h - the C interface between libhml and its HDF5 plugin,
 * libhml-hdf5.so (internal; not installed).
 *
 * libhml links no HDF5: linking it (and, through Debian's libhdf5, libcurl,
 * GnuTLS, Kerberos, LDAP, ...) cost every program ~8 ms and ~8 MB at
 * start-up, in every mode (#13). HDF5 is needed only to collect (collect.h)
 * and to record a quantity of interest (qoi_file.h), so both live in the
 * plugin, which libhml loads the first time either is needed (the
 * collect_proxy.c loader) and never unloads. `off` and `infer` never load it.
 *
 * The plugin exports one entry point returning a static table; the loader
 * uses it only when its ABI version is this header's and the table is at
 * least as large as it knows. Every function is the collect.h or qoi_file.h
 * function of the same name, run in the plugin; after a failure,
 * last_error() gives that thread's one-line message in the plugin, which
 * the loader turns into the caller's hml error.
 */
#ifndef HML_RUNTIME_H5IO_H
#define HML_RUNTIME_H5IO_H

#include <stddef.h>
#include <stdint.h>

#include "collect.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bumped on any change to hml__h5io or to the structures it passes. */
#define HML__H5IO_ABI 4

typedef struct hml__h5io {
	int abi;               /**< HML__H5IO_ABI the plugin was built with */
	size_t size;           /**< sizeof(hml__h5io) in the plugin's build */
	const char *hml_version;   /**< hml_version() of the plugin's build */
	int (*collector_open)(hml__collector **out, const hml__collector_desc *desc);
	int (*collector_probe)(const char *path);
	int (*collector_next)(hml__collector *c, int side, int64_t rows, void **dst);
	int (*collector_commit)(hml__collector *c, double original_seconds);
	int (*collector_append)(hml__collector *c, const void *in, int64_t in_rows,
	                        const void *out, int64_t out_rows, double original_seconds);
	int (*collector_flush)(hml__collector *c);
	int64_t (*collector_rows)(const hml__collector *c);
	int (*collector_close)(hml__collector *c);
	int (*qoi_file_write)(const char *path, const char *name, const void *data,
	                      hml_dtype dtype, int ndim, const int64_t *shape);
	/** The message of this thread's last failure in the plugin. */
	const char *(*last_error)(void);
	int (*collector_append_calls)(hml__collector *c, const void *in, int64_t in_rows,
	                              const void *out, int64_t out_rows, int64_t ncalls,
	                              double original_seconds);
	int (*qoi_file_write_steps)(const char *path, const char *name, const int64_t *steps,
	                            const void *data, hml_dtype dtype, int ndim,
	                            const int64_t *shape);
} hml__h5io;

/** Signature of the entry point: NULL when `abi` is not its own. Calling
 * it initialises HDF5 (and its exit handler) and silences its printing. */
typedef const hml__h5io *(*hml__h5io_entry)(int abi);

#define HML__HDF5_PLUGIN "libhml-hdf5.so"
#define HML__HDF5_ENTRY "hml_hdf5_io"

#ifdef __cplusplus
}
#endif
#endif
