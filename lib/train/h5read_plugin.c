/*
 * lib/train/h5read_plugin.c - the entry point of libhml-cli-hdf5.so
 * (h5read.h): the reader of collected data (dataset.c) and of QoI files
 * (lib/core/qoi_file.c), with HDF5, behind one table. Built only into the
 * plugin, which links no lib/sys: the interrupt flag dataset.c polls is
 * the CLI's, reached through the function it hands over.
 */
#include "core/error.h"
#include "core/h5util.h"
#include "core/qoi_file.h"
#include "hml/version.h"
#include "sys/interrupt.h"
#include "train/h5read.h"

static int (*host_pending)(void);

/* dataset.c's interrupt check, answered by the CLI's flag. */
int hml__interrupt_pending(void)
{
	return host_pending ? host_pending() : 0;
}

static void set_interrupt(int (*pending)(void))
{
	host_pending = pending;
}

/* The plugin's own copy of lib/core/error.c keeps this thread's error. */
static const char *last_error(void)
{
	return hml_error_last()->message;
}

static const hml__h5read table = {
	HML__H5READ_ABI, sizeof(hml__h5read), HML_VERSION_STRING,
	hml__region_info_list, hml__region_info_free, hml__dataset_load, hml__dataset_release,
	hml__qoi_file_read, hml__qoi_file_read_ranks, hml__coll_vds_build, set_interrupt, last_error,
	hml__qoi_file_read_steps
};

__attribute__((visibility("default"))) const void *hml_cli_hdf5(int abi);

/* Initialises HDF5 (and its exit handler) and silences its printing. */
const void *hml_cli_hdf5(int abi)
{
	if (abi != HML__H5READ_ABI)
		return NULL;
	hml__h5_init();
	return &table;
}
