/*
 * tests/unit/collection_vds.c - the files of an MPI run's ranks as one
 * collection file (lib/core/collection_vds.h): what the runtime's
 * collector writes per rank, the view joins, and lib/train/dataset.c reads
 * back as one table; files of different lengths, a rank missing, a rank
 * whose file is damaged or of other rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "collect.h"
#include "core/collection.h"
#include "core/collection_vds.h"
#include "core/h5util.h"
#include "fixtures.h"
#include "train/dataset.h"

/* Rank r's call c: 1 + (r + c) % 3 rows, input (x, 2x), output x + 0.5,
 * x = 1000 r + 10 c + row. */
static float value_of(int rank, int call, int row)
{
	return (float)(1000 * rank + 10 * call + row);
}

static int rows_of(int rank, int call)
{
	return 1 + (rank + call) % 3;
}

static void write_rank(const char *path, int rank, int calls, int in_feat)
{
	hml__collector_desc d;
	hml__collector *c = NULL;
	float in[8], out[4];

	memset(&d, 0, sizeof(d));
	d.path = path;
	d.label = "r%x";   /* '%' is special in virtual data set names */
	d.in_dtype = d.out_dtype = HML_F32;
	d.in_ndim = d.out_ndim = 1;
	d.in_shape[0] = in_feat;
	d.out_shape[0] = 1;
	d.in_functor = d.out_functor = d.in_arrays = d.out_arrays = "x";
	d.in_domain = d.out_domain = "0:n";
	CHECK_OK(hml__collector_open(&c, &d));
	if (!c)
		return;
	for (int k = 0; k < calls; k++) {
		int n = rows_of(rank, k);

		for (int r = 0; r < n; r++) {
			in[2 * r] = value_of(rank, k, r);
			in[2 * r + 1] = 2 * value_of(rank, k, r);
			out[r] = value_of(rank, k, r) + 0.5f;
		}
		CHECK_OK(hml__collector_append(c, in, n, out, n, 0.001));
	}
	CHECK_OK(hml__collector_close(c));
}

/* Ranks 0 and 2 of different lengths, rank 1 missing, rank 3 not HDF5,
 * rank 4 of other rows: the view holds ranks 0 and 2, in order. */
TEST(ranks_joined_in_order)
{
	const char *view = tmp_path("view.h5"), *bad = tmp_path("data.r0003.h5");
	hml__coll_vds_part parts[5] = {
		{ tmp_path("data.r0000.h5"), NULL, 0, "" }, { tmp_path("data.r0001.h5"), NULL, 0, "" },
		{ tmp_path("data.r0002.h5"), NULL, 0, "" }, { bad, NULL, 0, "" },
		{ tmp_path("data.r0004.h5"), NULL, 0, "" },
	};
	const char *one[1] = { view };
	const int calls[3] = { 4, 0, 7 };
	hml__region_info *info = NULL;
	hml__dataset ds;
	size_t n = 0, used = 9;
	int64_t expect = 0, row = 0;
	FILE *f;
	int wrong = 0;

	write_rank(parts[0].path, 0, calls[0], 2);
	write_rank(parts[2].path, 2, calls[2], 2);
	write_rank(parts[4].path, 4, 3, 1);
	if ((f = fopen(bad, "w")) != NULL) {
		fputs("not HDF5\n", f);
		fclose(f);
	}
	CHECK_OK(hml__coll_vds_build(view, parts, 5, &used));
	CHECK_EQ_INT(used, 2);
	CHECK(parts[0].used && parts[2].used);
	CHECK(!parts[1].used && !parts[3].used && !parts[4].used);
	CHECK_CONTAINS(parts[1].why, "data.r0001.h5");
	CHECK_CONTAINS(parts[3].why, "not an HDF5 file");
	CHECK_CONTAINS(parts[4].why, "region 'r%x'");
	for (int r = 0; r < 3; r += 2)
		for (int k = 0; k < calls[r]; k++)
			expect += rows_of(r, k);

	CHECK_OK(hml__region_info_list(view, &info, &n));
	CHECK_EQ_INT(n, 1);
	if (n == 1) {
		CHECK_EQ_INT(info[0].rows, expect);
		CHECK_EQ_INT(info[0].calls, calls[0] + calls[2]);
		CHECK_STR(info[0].input_functor, "x");
	}
	hml__region_info_free(info, n);

	CHECK_OK(hml__dataset_load(&ds, one, 1, "r%x", HML__NONFINITE_ERROR));
	CHECK_EQ_INT(ds.rows, expect);
	for (int r = 0; r < 3 && ds.x; r += 2)
		for (int k = 0; k < calls[r]; k++)
			for (int i = 0; i < rows_of(r, k); i++, row++)
				wrong += ds.x[2 * row] != value_of(r, k, i) ||
				         ds.x[2 * row + 1] != 2 * value_of(r, k, i) ||
				         ds.y[row] != value_of(r, k, i) + 0.5f;
	CHECK_EQ_INT(wrong, 0);
	hml__dataset_release(&ds);

	/* A part gone after the view was made: an error, never fill values. */
	unlink(parts[2].path);
	CHECK_FAILS(hml__dataset_load(&ds, one, 1, "r%x", HML__NONFINITE_ERROR),
	            HML_ENOTFOUND, "data.r0002.h5', which is missing");
}

/* The calls table's offsets and runs point into the view's rows. */
TEST(calls_point_into_the_view)
{
	const char *view = tmp_path("calls.h5");
	hml__coll_vds_part parts[2] = {
		{ tmp_path("c.r0000.h5"), NULL, 0, "" }, { tmp_path("c.r0001.h5"), NULL, 0, "" },
	};
	hml__call_record recs[16];
	hid_t file = -1, dset = -1, type = -1;
	size_t used = 0;
	int64_t next = 0;

	write_rank(parts[0].path, 0, 3, 2);
	write_rank(parts[1].path, 1, 5, 2);
	CHECK_OK(hml__coll_vds_build(view, parts, 2, &used));
	CHECK_EQ_INT(used, 2);
	CHECK_OK(hml__h5_open_ro(&file, view));
	if (file < 0)
		return;
	dset = H5Dopen2(file, "/r%x/calls", H5P_DEFAULT);
	type = hml__coll_calls_type(1);
	CHECK(dset >= 0 && H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, recs) >= 0);
	for (int k = 0; k < 8; k++) {
		CHECK_EQ_INT(recs[k].input_offset, next);
		CHECK_EQ_INT(recs[k].run, k < 3 ? 0 : 1);
		next += recs[k].input_rows;
	}
	H5Tclose(type);
	H5Dclose(dset);
	H5Fclose(file);
}

/* No part readable: an error, and the view is not written. */
TEST(no_part)
{
	hml__coll_vds_part parts[1] = { { tmp_path("none.r0000.h5"), NULL, 0, "" } };
	size_t used = 9;

	CHECK_FAILS(hml__coll_vds_build(tmp_path("none.h5"), parts, 1, &used), HML_ENOTFOUND,
	            "none of the 1 files can be read");
	CHECK_EQ_INT(used, 0);
	CHECK(access(tmp_path("none.h5"), F_OK) != 0);
}

int main(void)
{
	if (tmp_dir_make("collection_vds") < 0)
		return 1;
	hml__h5_init();
	RUN(ranks_joined_in_order);
	RUN(calls_point_into_the_view);
	RUN(no_part);
	tmp_dir_remove();
	return check_report();
}
