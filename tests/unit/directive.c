/*
 * tests/unit/directive.c - the calls `hml translate` emits
 * (hml/directive.h; the runtime's directive_site.c, directive_qoi.c), driven
 * the way a translated file drives them: a static site per directive. A
 * site takes up to HML_DIR_LABELS labels; a batch site binds its region
 * anew when a length changes and re-points it when only addresses do; a
 * row site refuses a changed length; a dtype of 0 and a qoi slice outside
 * its array are one-line errors that name the place; and data lost at exit
 * under HML_ON_ERROR=fail is exit status 1 with the one-line error (a
 * forked child), a warning and status 0 under fallback.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hdf5.h>

#include "check.h"
#include "fixtures.h"
#include "hml/directive.h"
#include "hml/hml.h"

static double x[8], y[8];

/* One batch call of a directive `in(x[0:n]) out(y[0:n])` at site s. */
static int batch_call(hml_dir_site *s, const char *label, double *in, double *out, int64_t n)
{
	const hml_symbol sym[] = { { "n", n } };
	hml_array a[2];
	int rc;

	if ((rc = hml_dir_array(&a[0], s->where, "x", in, HML_F64, 1, HML_DIR_ROWS, 0, 0, 0)) < 0 ||
	    (rc = hml_dir_array(&a[1], s->where, "y", out, HML_F64, 1, HML_DIR_ROWS, 0, 0, 0)) < 0)
		return rc;
	{
		const hml_dir_map maps[] = {
			{ 0, "[i, 0:1] = ([i])", "0:n", &a[0], 1 },
			{ 1, "[i, 0:1] = ([i])", "0:n", &a[1], 1 },
		};
		if ((rc = hml_dir_begin(s, label, "collect", 1, NULL, NULL, 0, 0.0, maps, 2, sym, 1, -1)) < 0)
			return rc;
		if (rc)
			for (int64_t i = 0; i < n; i++)
				out[i] = 2 * in[i];
		return hml_dir_end(s);
	}
}

/* One row call of `in(p[0:m]) out(q[0:1])` at row site s. */
static int row_call(hml_dir_site *s, const char *label, double *p, double *q, int64_t m)
{
	const hml_symbol sym[] = { { "hml__0", m } };
	hml_dir_entry *e = NULL;
	hml_array a[2];
	int rc;

	if ((rc = hml_dir_array(&a[0], "r.c:3", "p", p, HML_F64, 1, m, 0, 0, 0)) < 0 ||
	    (rc = hml_dir_array(&a[1], "r.c:3", "q", q, HML_F64, 1, 1, 0, 0, 0)) < 0)
		return rc;
	{
		const hml_dir_map maps[] = {
			{ 0, "[0:hml__0] = ([0:hml__0])", "", &a[0], 1 },
			{ 1, "[0:1] = ([0:1])", "", &a[1], 1 },
		};
		if ((rc = hml_dir_row_begin(s, &e, "r.c:3", label, "collect", 1, NULL, NULL, 0, 0.0,
		                            maps, 2, sym, 1)) < 0)
			return rc;
		if (rc)
			q[0] = p[0] + p[m - 1];
		return hml_dir_row_end(s, e);
	}
}

/* Rows of data set `label`/input of the collection at path, -1 if none. */
static int64_t input_rows(const char *path, const char *label)
{
	char name[128];
	hsize_t dims[4] = { 0 };
	hid_t f, d, sp;
	int64_t rows = -1;

	snprintf(name, sizeof(name), "%s/input", label);
	if ((f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
		return -1;
	if ((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0) {
		sp = H5Dget_space(d);
		if (H5Sget_simple_extent_dims(sp, dims, NULL) >= 1)
			rows = (int64_t)dims[0];
		H5Sclose(sp);
		H5Dclose(d);
	}
	H5Fclose(f);
	return rows;
}

/* A child that collects through one site into `db` and exits: its exit
 * status, its stderr in `err`. `lose`: a folder takes the file's place
 * before the exit, so that writing then fails. */
static int child_exit(const char *db, const char *policy, const char *err, int lose)
{
	pid_t pid;
	int status = -1;

	fflush(NULL);
	if ((pid = fork()) == 0) {
		static hml_dir_site s;
		if (!freopen(err, "w", stderr))
			_exit(3);
		setenv("HML_DB", db, 1);
		setenv("HML_ON_ERROR", policy, 1);
		s.where = "t.c:9";
		for (int i = 0; i < 3; i++)
			if (batch_call(&s, "lost", x, y, 4) < 0) {
				fprintf(stderr, "call failed: %s\n", hml_error_last()->message);
				fflush(stderr);
				_exit(4);
			}
		if (lose && (remove(db), mkdir(db, 0755) != 0))
			_exit(5);
		exit(0);   /* the exit handlers run */
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* First, in a process that has opened no region yet. */
TEST(test_exit_status_under_fail)
{
	char dir[600], err[600], *text;

	snprintf(dir, sizeof(dir), "%s", tmp_path("lost.h5"));
	snprintf(err, sizeof(err), "%s", tmp_path("stderr.txt"));
	CHECK_EQ_INT(child_exit(dir, "fail", err, 1), 1);
	text = read_text(err);
	CHECK_CONTAINS(text, "hml: error: t.c:9: region 'lost': collected data lost at exit: ");
	CHECK_CONTAINS(text, "not a regular file");
	CHECK(!text || strchr(text, '\n') == text + strlen(text) - 1);   /* one line */
	free(text);
	rmdir(dir);
	CHECK_EQ_INT(child_exit(dir, "fallback", err, 1), 0);
	text = read_text(err);
	CHECK_CONTAINS(text, "hml: warning: region 'lost': collected data lost at exit");
	CHECK(!text || !strstr(text, "hml: error"));
	free(text);
	/* the same child with a writable file: status 0, every row kept */
	rmdir(dir);
	CHECK_EQ_INT(child_exit(dir, "fail", err, 0), 0);
	CHECK_EQ_INT(input_rows(dir, "lost"), 12);
}

TEST(test_labels_per_site)
{
	static hml_dir_site s;
	char label[16];

	s.where = "t.c:1";
	for (int i = 0; i < HML_DIR_LABELS; i++) {
		snprintf(label, sizeof(label), "l%d", i);
		CHECK_OK(batch_call(&s, label, x, y, 2));
	}
	CHECK_EQ_INT(s.n, HML_DIR_LABELS);
	CHECK_OK(batch_call(&s, "l3", x, y, 2));   /* a known one: still fine */
	CHECK_FAILS(batch_call(&s, "l8", x, y, 2), HML_EINVALID,
	            "t.c:1: region 'l8': more than 8 labels at one directive");
	CHECK_STR(hml_error_last()->message, "t.c:1: region 'l8': more than 8 labels at one directive");
	CHECK_FAILS(batch_call(&s, NULL, x, y, 2), HML_EINVALID, "t.c:1: the label is missing or too long");
	memset(label, 'a', sizeof(label));
	{
		char longl[HML_DIR_LABEL_MAX + 1];
		memset(longl, 'a', HML_DIR_LABEL_MAX);
		longl[HML_DIR_LABEL_MAX] = 0;
		CHECK_FAILS(batch_call(&s, longl, x, y, 2), HML_EINVALID, "the label is missing or too long");
	}
}

TEST(test_row_site_labels)
{
	static hml_dir_site s;
	double p[2] = { 1, 2 }, q[1];
	char label[16];

	for (int i = 0; i < HML_DIR_LABELS; i++) {
		snprintf(label, sizeof(label), "row%d", i);
		CHECK_OK(row_call(&s, label, p, q, 2));
	}
	CHECK_STR(s.where, "r.c:3");
	CHECK_FAILS(row_call(&s, "row8", p, q, 2), HML_EINVALID,
	            "r.c:3: region 'row8': more than 8 labels at one directive");
}

TEST(test_batch_rebinds_on_a_changed_length)
{
	static hml_dir_site s;
	static double x2[8], y2[8];
	hml_region *first;

	s.where = "t.c:2";
	for (int i = 0; i < 8; i++)
		x[i] = i, x2[i] = 10 + i;
	CHECK_OK(batch_call(&s, "rebind", x, y, 4));
	first = s.e[0].r;
	CHECK(first != NULL);
	/* other arrays, the same length: the region stays, pointed at them */
	CHECK_OK(batch_call(&s, "rebind", x2, y2, 4));
	CHECK(s.e[0].r == first);
	CHECK_EQ_INT(y2[3], 26);
	/* another length: flushed, freed and bound anew */
	CHECK_OK(batch_call(&s, "rebind", x, y, 3));
	CHECK_EQ_INT(s.e[0].sig[0], 3);
	CHECK_EQ_INT(s.e[0].nsig, 1);
	CHECK_EQ_INT(hml_region_flush(s.e[0].r), 0);
	CHECK_EQ_INT(input_rows(tmp_path("d.h5"), "rebind"), 4 + 4 + 3);
}

TEST(test_row_site_refuses_a_changed_length)
{
	static hml_dir_site s;
	double p[3] = { 1, 2, 3 }, q[1];

	CHECK_OK(row_call(&s, "len", p, q, 2));
	CHECK_EQ_INT(q[0], 3);
	CHECK_FAILS(row_call(&s, "len", p, q, 3), HML_EINVALID,
	            "r.c:3: region 'len': a length of a directive inside a loop body changed between "
	            "calls (2, then 3): keep it, or give each length its own label() (hml-cc(1))");
	CHECK_OK(row_call(&s, "len", p, q, 2));   /* the site still works */
}

TEST(test_dtype_zero)
{
	hml_array a;

	CHECK_FAILS(hml_dir_array(&a, "t.c:5", "w", x, (hml_dtype)0, 1, 8, 0, 0, 0), HML_EINVALID,
	            "t.c:5: array 'w' is not of float, double, int32_t or int64_t");
	CHECK_FAILS(hml_dir_qoi("t.c:6", "w", x, (hml_dtype)0, 1, 8, 0, 0, 0), HML_EINVALID,
	            "t.c:6: quantity of interest 'w': the array is not of float, double, int32_t "
	            "or int64_t");
	CHECK_OK(hml_dir_array(&a, "t.c:5", "x", x, HML_F64, 2, 2, 4, 0, 0));
	CHECK(a.data == x && a.dtype == HML_F64 && a.ndim == 2 && a.shape[1] == 4);
}

TEST(test_qoi_slice)
{
	static int g[5][6];
	const int64_t outside[12] = { 5, 6, 0, 0, 1, 2, 0, 0, 4, 5, 0, 0 };
	const int64_t inside[12] = { HML_DIR_ROWS, 6, 0, 0, 1, 2, 0, 0, 3, 2, 0, 0 };
	const int64_t negative[12] = { 5, 6, 0, 0, -1, 0, 0, 0, 2, 2, 0, 0 };
	hsize_t dims[2] = { 0 };
	double v[6] = { 0 };
	hid_t f, d;

	for (int i = 0; i < 5; i++)
		for (int j = 0; j < 6; j++)
			g[i][j] = 10 * i + j;
	setenv("HML_QOI", tmp_path("q.h5"), 1);
	CHECK_FAILS(hml_dir_qoi_slice("t.c:7", "g", g, HML_I32, sizeof(int), 2, outside), HML_ERANGE,
	            "t.c:7: quantity of interest 'g': the slice 2:7 of dimension 1 is not inside the "
	            "array's extent 6");
	CHECK_FAILS(hml_dir_qoi_slice("t.c:7", "g", g, HML_I32, sizeof(int), 2, negative), HML_ERANGE,
	            "the slice -1:1 of dimension 0");
	CHECK(!exists(tmp_path("q.h5")));
	/* rows 1..3, columns 2..3 */
	CHECK_OK(hml_dir_qoi_slice("t.c:8", "g", g, HML_I32, sizeof(int), 2, inside));
	if ((f = H5Fopen(tmp_path("q.h5"), H5F_ACC_RDONLY, H5P_DEFAULT)) >= 0) {
		if ((d = H5Dopen2(f, "g", H5P_DEFAULT)) >= 0) {
			hid_t sp = H5Dget_space(d);
			H5Sget_simple_extent_dims(sp, dims, NULL);
			H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
			H5Sclose(sp);
			H5Dclose(d);
		}
		H5Fclose(f);
	}
	CHECK_EQ_INT(dims[0], 3);
	CHECK_EQ_INT(dims[1], 2);
	CHECK_EQ_INT(v[0], 12);
	CHECK_EQ_INT(v[1], 13);
	CHECK_EQ_INT(v[4], 32);
	CHECK_EQ_INT(v[5], 33);
	unsetenv("HML_QOI");
}

static pid_t parent;

/* After libhml's exit handler (installed later, so run earlier), in the
 * parent only: the regions still open write into the folder first. */
static void remove_tmp(void)
{
	if (getpid() == parent)
		tmp_dir_remove();
}

int main(void)
{
	if (tmp_dir_make("directive") < 0)
		return 1;
	parent = getpid();
	atexit(remove_tmp);
	setenv("HML_MODE", "collect", 1);
	RUN(test_exit_status_under_fail);
	setenv("HML_DB", tmp_path("d.h5"), 1);
	setenv("HML_ON_ERROR", "fail", 1);
	RUN(test_labels_per_site);
	RUN(test_row_site_labels);
	RUN(test_batch_rebinds_on_a_changed_length);
	RUN(test_row_site_refuses_a_changed_length);
	RUN(test_dtype_zero);
	RUN(test_qoi_slice);
	return check_report();
}
