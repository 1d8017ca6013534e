/*
 * lib/core/h5_ordered.h - the ordered-write HDF5 driver (internal; used by
 * hml__h5_open_rw(), core/h5util.h).
 *
 * HDF5's POSIX driver with the order of its writes arranged so that a
 * process killed at any moment leaves a file that opens and reads as it
 * was before HDF5's last flush or as it is after it, for sessions that add
 * data and objects (h5_ordered.c says how, and what it does not cover).
 * Needed with HDF5 1.10 only; with any other version the file-access list
 * is left with HDF5's own driver.
 */
#ifndef HML_LIB_H5_ORDERED_H
#define HML_LIB_H5_ORDERED_H

#include <hdf5.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Make the file-access property list `fapl` write through the ordered
 * driver (registered with HDF5 on first use, and again after HDF5 was
 * closed and reopened). 0 on success, and when the driver is not needed
 * or cannot be registered (then HDF5's own driver stays); negative when
 * H5Pset_driver() fails (HDF5's error stack says why; no hml error is
 * recorded).
 */
int hml__h5_ordered_use(hid_t fapl);

#ifdef __cplusplus
}
#endif
#endif
