/*
 * tests/unit/qoi_file.c - the QoI file: what hml_qoi_write() writes,
 * hml evaluate reads back (round trip), and shapes that cannot be
 * written.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fixtures.h"
#include "core/qoi_file.h"
#include "hml/qoi.h"


static const char *path_of(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", tmpdir, name);
	return buf;
}

TEST(round_trip_double_and_float)
{
	double d[6] = { 1.5, -2.25, 3e10, 0.0, 1e-300, 42.0 }, *back = NULL;
	float f[6] = { 0.5f, 1.5f, -3.0f, 7.25f, 8.0f, 9.5f };
	int64_t shape[2] = { 2, 3 };
	char path[640];
	size_t n = 0;

	path_of(path, sizeof(path), "rt.h5");
	unlink(path);
	CHECK_OK(hml_qoi_write_to(path, "price", d, HML_F64, 2, shape));
	CHECK_OK(hml__qoi_file_write(path, "state", f, HML_F32, 1, (int64_t[]){ 6 }));
	CHECK_OK(hml__qoi_file_read(path, "price", &back, &n));
	CHECK_EQ_INT(n, 6);
	for (size_t i = 0; back && i < n; i++)
		CHECK(back[i] == d[i]);
	free(back);
	CHECK_OK(hml__qoi_file_read(path, "state", &back, &n));
	CHECK_EQ_INT(n, 6);
	for (size_t i = 0; back && i < n; i++)
		CHECK(back[i] == (double)f[i]);
	free(back);
	/* Writing a name again replaces it. */
	CHECK_OK(hml__qoi_file_write(path, "price", d, HML_F64, 1, (int64_t[]){ 2 }));
	CHECK_OK(hml__qoi_file_read(path, "price", &back, &n));
	CHECK_EQ_INT(n, 2);
	free(back);
}

/* Integer QoIs are stored as integers and read back as doubles. */
TEST(round_trip_integers)
{
	int32_t i32[4] = { -7, 0, 2147483647, 12 };
	int64_t i64[3] = { INT64_C(1) << 40, -3, INT64_C(9007199254740993) };
	char path[640];
	double *back = NULL;
	size_t n = 0;

	path_of(path, sizeof(path), "int.h5");
	unlink(path);
	CHECK_OK(hml_qoi_write_to(path, "cells", i32, HML_I32, 2, (int64_t[]){ 2, 2 }));
	CHECK_OK(hml__qoi_file_write(path, "dates", i64, HML_I64, 1, (int64_t[]){ 3 }));
	CHECK_OK(hml__qoi_file_read(path, "cells", &back, &n));
	CHECK_EQ_INT(n, 4);
	for (size_t i = 0; back && i < n; i++)
		CHECK(back[i] == (double)i32[i]);
	free(back);
	CHECK_OK(hml__qoi_file_read(path, "dates", &back, &n));
	CHECK_EQ_INT(n, 3);
	/* 2^53 + 1 has no double: it is rounded, as the header says. */
	CHECK(back && back[0] == 1099511627776.0 && back[1] == -3.0 &&
	      back[2] == 9007199254740992.0);
	free(back);
}

TEST(read_errors)
{
	char path[640];
	double *back = (double *)1, v = 1.0;
	size_t n = 7;

	path_of(path, sizeof(path), "missing.h5");
	CHECK(hml__qoi_file_read(path, "price", &back, &n) < 0);
	CHECK(back == NULL && n == 0);
	path_of(path, sizeof(path), "other.h5");
	CHECK_OK(hml__qoi_file_write(path, "other", &v, HML_F64, 1, (int64_t[]){ 1 }));
	CHECK_FAILS(hml__qoi_file_read(path, "price", &back, &n), HML_ENOTFOUND,
	            "the application wrote no quantity of interest 'price'");
}

/* 2^32 x 2^32 doubles: the element count overflows 64 bits. Refused, and
 * no file is made (before the check the file claimed 1.8e19 rows). */
TEST(shape_overflow_refused)
{
	int64_t huge[2] = { INT64_C(1) << 32, INT64_C(1) << 32 };
	int64_t bytes[1] = { INT64_MAX / 4 + 1 };
	int64_t fits[1] = { INT64_MAX / 8 };
	char path[640];
	struct stat st;
	double v = 0.0;

	path_of(path, sizeof(path), "overflow.h5");
	unlink(path);
	CHECK_FAILS(hml_qoi_write_to(path, "q", &v, HML_F64, 2, huge), HML_EINVALID,
	            "quantity of interest 'q': shape [4294967296, 4294967296] has too many elements");
	CHECK(stat(path, &st) != 0);
	CHECK_FAILS(hml_qoi_write_to(path, "q", &v, HML_F32, 1, bytes), HML_EINVALID,
	            "too many elements");
	CHECK_FAILS(hml_qoi_write("q", &v, HML_F64, 2, huge), HML_EINVALID, "too many elements");
	/* The largest count whose bytes fit passes the check. */
	CHECK_OK(hml__qoi_check("q", &v, HML_F64, 1, fits));
	CHECK(stat(path, &st) != 0);
}

/* HML_QOI that is a FIFO or a symbolic link: refused without blocking,
 * the FIFO still one and the link's target as it was. */
TEST(fifo_and_link_refused)
{
	const int64_t shape[1] = { 1 };
	char fifo[640], target[640], link_path[640];
	double v = 1.0;
	struct stat st;

	path_of(fifo, sizeof(fifo), "q.fifo");
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK_FAILS(hml_qoi_write_to(fifo, "q", &v, HML_F64, 1, shape), HML_EINVALID,
	            "q.fifo': not a regular file (a FIFO)");
	CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
	path_of(target, sizeof(target), "kept.txt");
	write_text(target, "kept");
	path_of(link_path, sizeof(link_path), "q-link.h5");
	CHECK(symlink(target, link_path) == 0);
	CHECK_FAILS(hml_qoi_write_to(link_path, "q", &v, HML_F64, 1, shape), HML_EINVALID,
	            "q-link.h5': not a regular file (a symbolic link)");
	CHECK(lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(stat(target, &st) == 0 && st.st_size == 4);
}

/* A QoI over time: its steps travel as an attribute of the dataset, the
 * values read back as any QoI's; a QoI written at the end only (as every
 * file before the steps) has none. */
TEST(steps_round_trip)
{
	double d[6] = { 1, 2, 3, 4, 5, 6 }, *back = NULL;
	int64_t steps[3] = { 0, 10, 40 }, *got = NULL, shape[2] = { 3, 2 };
	char path[640];
	size_t n = 0, ns = 9;

	path_of(path, sizeof(path), "steps.h5");
	unlink(path);
	CHECK_OK(hml__qoi_file_write_steps(path, "traj", steps, d, HML_F64, 2, shape));
	CHECK_OK(hml__qoi_file_read(path, "traj", &back, &n));
	CHECK_EQ_INT(n, 6);
	for (size_t i = 0; back && i < n; i++)
		CHECK(back[i] == d[i]);
	free(back);
	CHECK_OK(hml__qoi_file_read_steps(path, "traj", &got, &ns));
	CHECK_EQ_INT(ns, 3);
	for (size_t i = 0; got && i < ns; i++)
		CHECK_EQ_INT(got[i], steps[i]);
	free(got);
	/* The end-only form: no steps. Writing it again drops the attribute. */
	CHECK_OK(hml__qoi_file_write(path, "traj", d, HML_F64, 2, shape));
	CHECK_OK(hml__qoi_file_read_steps(path, "traj", &got, &ns));
	CHECK(got == NULL);
	CHECK_EQ_INT(ns, 0);
	CHECK_FAILS(hml__qoi_file_read_steps(path, "nope", &got, &ns), HML_ENOTFOUND,
	            "no quantity of interest 'nope'");
}

TEST(steps_refused)
{
	double d[3] = { 1, 2, 3 };
	int64_t shape[1] = { 3 }, down[3] = { 0, 5, 5 }, neg[3] = { -1, 0, 1 };
	char path[640];

	path_of(path, sizeof(path), "badsteps.h5");
	unlink(path);
	CHECK_FAILS(hml__qoi_file_write_steps(path, "q", down, d, HML_F64, 1, shape),
	            HML_EINVALID, "quantity of interest 'q': step 5 of record 2 does not follow step 5");
	CHECK_FAILS(hml__qoi_file_write_steps(path, "q", neg, d, HML_F64, 1, shape),
	            HML_EINVALID, "step -1 of record 0 is negative");
	CHECK_FAILS(hml__qoi_file_write_steps(path, "q", NULL, d, HML_F64, 1, shape),
	            HML_EINVALID, "steps is NULL");
	CHECK(access(path, F_OK) != 0);
	/* The runtime's face checks the same without HML_QOI. */
	unsetenv("HML_QOI");
	CHECK_FAILS(hml_qoi_write_steps("q", down, d, HML_F64, 1, shape), HML_EINVALID,
	            "does not follow");
}

int main(void)
{
	if (tmp_dir_make("qoi_file") < 0)
		return 1;
	RUN(round_trip_double_and_float);
	RUN(round_trip_integers);
	RUN(read_errors);
	RUN(shape_overflow_refused);
	RUN(fifo_and_link_refused);
	RUN(steps_round_trip);
	RUN(steps_refused);
	tmp_dir_remove();
	return check_report();
}
