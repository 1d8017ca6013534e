/*
 * libFuzzer target: the reader of collected data (lib/train/dataset.c) on a
 * file of arbitrary bytes: the region listing, then loading the first
 * region's rows.
 *
 * After every input, no HDF5 object (file, group, dataset, attribute,
 * datatype) may be left open: hml closes all it opens, on every error path
 * too, or the target aborts. That is what makes tests/fuzz/lsan.supp sound:
 * with hml's handles all closed, what LeakSanitizer still sees allocated
 * inside libhdf5 is the library's own (HDF5 1.10.8 loses some allocations
 * on the error paths of corrupt files).
 */
#include <stdlib.h>

#include <hdf5.h>

#include "fuzz_files.h"
#include "train/dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hml__region_info *infos = NULL;
	hml__dataset d;
	size_t n = 0;
	const char *path = fuzz_write("data.h5", data, size);

	if (hml__region_info_list(path, &infos, &n) == 0 && n > 0) {
		const char *paths[1] = { path };

		if (hml__dataset_load(&d, paths, 1, infos[0].label, HML__NONFINITE_DROP) == 0)
			hml__dataset_release(&d);
	}
	hml__region_info_free(infos, n);
	if (H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) != 0)
		abort();   /* hml left an HDF5 object open */
	return 0;
}
