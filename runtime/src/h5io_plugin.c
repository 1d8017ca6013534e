/*
 * runtime/src/h5io_plugin.c - the entry point of libhml-hdf5.so (h5io.h):
 * the collector (collect.c) and the QoI writer (lib/core/qoi_file.c), with
 * HDF5, behind one table. Built only into the plugin.
 */
#include "core/error.h"
#include "core/h5util.h"
#include "core/qoi_file.h"
#include "h5io.h"
#include "hml/version.h"

/* The plugin's own copy of lib/core/error.c keeps this thread's error. */
static const char *last_error(void)
{
	return hml_error_last()->message;
}

static const hml__h5io table = {
	HML__H5IO_ABI, sizeof(hml__h5io), HML_VERSION_STRING,
	hml__collector_open, hml__collector_probe, hml__collector_next,
	hml__collector_commit, hml__collector_append, hml__collector_flush, hml__collector_rows,
	hml__collector_close, hml__qoi_file_write, last_error, hml__collector_append_calls,
	hml__qoi_file_write_steps
};

__attribute__((visibility("default"))) const hml__h5io *hml_hdf5_io(int abi);

const hml__h5io *hml_hdf5_io(int abi)
{
	if (abi != HML__H5IO_ABI)
		return NULL;
	hml__h5_init();
	return &table;
}
