/*
 * libFuzzer target: the reader of collected data (lib/dataset.c) on a
 * file of arbitrary bytes: the region listing, then loading the first
 * region's rows.
 */
#include "dataset.h"
#include "fuzz_files.h"

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
	return 0;
}
