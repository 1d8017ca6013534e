/*
 * bench/vds_read.c - reading an MPI data set's view (HDF5 virtual data
 * sets over the ranks' files, lib/core/collection_vds.h) against one file
 * of the same rows, through the training reader (lib/train/dataset.c).
 *
 *   bench_vds_read SINGLE.h5 VIEW.h5 LABEL [REPEAT]
 *
 * Prints the best time of each over REPEAT loads (default 5) and the view's
 * speed as a fraction of the single file's. Both files must be hot in the
 * page cache for a fair figure: the first load of each is not counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hml/error.h"
#include "train/dataset.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Best seconds of `repeat` loads after one uncounted; rows into *rows. */
static double best_load(const char *path, const char *label, int repeat, int64_t *rows)
{
	double best = 1e300;

	for (int k = 0; k <= repeat; k++) {
		const char *one[1] = { path };
		hml__dataset d;
		double t0 = now(), t;

		if (hml__dataset_load(&d, one, 1, label, HML__NONFINITE_DROP) < 0) {
			fprintf(stderr, "bench_vds_read: %s\n", hml_error_last()->message);
			exit(1);
		}
		t = now() - t0;
		*rows = d.rows;
		hml__dataset_release(&d);
		if (k > 0 && t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	int64_t rows_single = 0, rows_view = 0;
	int repeat = argc > 4 ? atoi(argv[4]) : 5;
	double single, view;

	if (argc < 4 || repeat < 1) {
		fprintf(stderr, "usage: bench_vds_read SINGLE.h5 VIEW.h5 LABEL [REPEAT]\n");
		return 2;
	}
	single = best_load(argv[1], argv[3], repeat, &rows_single);
	view = best_load(argv[2], argv[3], repeat, &rows_view);
	printf("single file: %lld rows in %.4f s (%.3g rows/s)\n", (long long)rows_single,
	       single, (double)rows_single / single);
	printf("view (VDS):  %lld rows in %.4f s (%.3g rows/s)\n", (long long)rows_view, view,
	       (double)rows_view / view);
	printf("VDS read speed / single file: %.3f\n",
	       ((double)rows_view / view) / ((double)rows_single / single));
	return 0;
}
