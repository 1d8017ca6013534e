/*
 * lib/core/collection_vds.h - one collection file (collection.h) that is a
 * view of several: the files of an MPI run's ranks (rankfile.h) as one data
 * set, through HDF5 virtual data sets, with no copy of their rows
 * (internal; written by the CLI's hml collect, read like any collection
 * file by lib/train/dataset.c, h5py or h5dump).
 *
 * For each region found in any part, in the order first met, the view has
 * a group with the collection layout:
 *   input, output  virtual data sets: the complete rows of each part (those
 *                  its last `calls` record covers), in the parts' order;
 *   calls          a real table (small): the parts' records one after the
 *                  other, their row offsets moved to the view's rows and
 *                  their `run` numbers past the earlier parts' runs;
 *   attributes     the first part's; `runs` the sum of the parts'.
 * A part in the view's directory is referred to by its bare name, so the
 * view and its parts move together; any other by the path given.
 *
 * The view holds no copy: its rows read as long as the parts are in place
 * and unchanged (a reader of a missing part gets HDF5's error, or fill
 * values from HDF5 versions that fill: keep the parts with the view).
 * Its reader's check, hml__coll_vds_check(), is in collection.h (it takes
 * HDF5 handles; this header is for the CLI, which links no HDF5).
 */
#ifndef HML_LIB_COLLECTION_VDS_H
#define HML_LIB_COLLECTION_VDS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One part: in, its path (and the name the view records for it); out,
 * whether its rows are in the view. */
typedef struct hml__coll_vds_part {
	const char *path;
	const char *name;   /**< the name the view records; NULL: as said above
	                         (a part renamed once the view is written) */
	int used;           /**< 1: in the view; 0: left out, `why` says why */
	char why[512];      /**< one line, "" when used */
} hml__coll_vds_part;

/**
 * Write into `out` (an HDF5 file created, or an empty file filled, as
 * hml__h5_open_rw() does) the view of `parts` described above. A part
 * that cannot be read (missing, not HDF5, damaged, no collection layout)
 * or whose region differs from an earlier part's (dtype, row shape) is
 * left out: used 0 and `why` ("cannot read 'P': ...", "region 'L' of 'P'
 * has float64 input, not float32 as in 'Q'"). *nused: the parts in the
 * view. Errors: HML_ENOTFOUND "none of the N files can be read: <first
 * why>" (out then left as it was), HML_EIO, HML_ENOMEM.
 */
int hml__coll_vds_build(const char *out, hml__coll_vds_part *parts, size_t nparts,
                        size_t *nused);


#ifdef __cplusplus
}
#endif
#endif
