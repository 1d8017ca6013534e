/*
 * tests/unit/rows.c - row calls (the runtime's rows.c): a region inside the
 * body of an OpenMP parallel loop, one call per iteration, from many
 * threads at once. Collection keeps every row exactly once, pairs each
 * input row with its output, records chunks whose calls add up and writes
 * the last short chunk at free; inference writes every row; the call
 * rules hold per thread.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "check.h"
#include "core/collection.h"
#include "fixtures.h"
#include "hml/hml.h"

#define ROWS 10007      /* prime: the chunks of each thread end short */
#define THREADS 8

static double x[ROWS][2], y[ROWS];

static hml_region *open_mode(const char *label, hml_mode mode, const char *db,
                             const char *model)
{
	hml_region_options o;
	hml_region *r = NULL;
	hml_array ax = HML_ARRAY_2D(&x[0][0], HML_F64, ROWS, 2);
	hml_array ay = HML_ARRAY_1D(y, HML_F64, ROWS);
	hml_symbol n = { "N", ROWS };

	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = mode;
	o.db = db;
	o.model = model;
	o.on_error = HML_ON_ERROR_FAIL;
	CHECK_OK(hml_region_open(&r, label, &o));
	if (!r)
		return NULL;
	CHECK_EQ_INT(hml_region_input(r, "[i, 0:2] = ([i, 0:2])", "0:N", &ax, 1, &n, 1), 0);
	CHECK_EQ_INT(hml_region_output(r, "[i, 0:1] = ([i])", "0:N", &ay, 1, &n, 1), 0);
	return r;
}

/* The loop as an application writes it: the region around its body. */
static int64_t run_loop(hml_region *r)
{
	int64_t i, bad = 0;

	#pragma omp parallel for num_threads(THREADS) schedule(dynamic, 7) reduction(+:bad)
	for (i = 0; i < ROWS; i++) {
		if (hml_region_row_begin(r, i))
			y[i] = x[i][0] + 2 * x[i][1];
		bad += hml_region_row_end(r) != 0;
	}
	return bad;
}

static void fill(void)
{
	int64_t i;

	for (i = 0; i < ROWS; i++) {
		x[i][0] = (double)i;
		x[i][1] = 0.5;
		y[i] = -1;
	}
}

/* The file `db` holds, under `label`, every row i of 0..ROWS-1 exactly
 * once as input (i, 0.5) with output i + 1, and chunk records whose calls
 * add up to ROWS (the threads' last chunks short and exact). */
static void check_collected(const char *db, const char *label)
{
	hid_t f, g, d, t;
	hsize_t dims[2];
	double (*in)[2] = malloc(sizeof(double[ROWS][2])), *out = malloc(ROWS * sizeof(double));
	hml__call_record *rec = NULL;
	char *seen = calloc(ROWS, 1);
	int64_t k, calls = 0, dup = 0, mismatch = 0, missing = 0, nrec;

	if (!in || !out || !seen)
		goto done;
	f = H5Fopen(db, H5F_ACC_RDONLY, H5P_DEFAULT);
	g = H5Gopen2(f, label, H5P_DEFAULT);
	d = H5Dopen2(g, "input", H5P_DEFAULT);
	t = H5Dget_space(d);
	H5Sget_simple_extent_dims(t, dims, NULL);
	CHECK_EQ_INT(dims[0], ROWS);
	H5Sclose(t);
	if (dims[0] == ROWS)
		H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, in);
	H5Dclose(d);
	d = H5Dopen2(g, "output", H5P_DEFAULT);
	if (dims[0] == ROWS)
		H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out);
	H5Dclose(d);
	d = H5Dopen2(g, "calls", H5P_DEFAULT);
	t = H5Dget_space(d);
	H5Sget_simple_extent_dims(t, dims, NULL);
	H5Sclose(t);
	nrec = (int64_t)dims[0];
	CHECK(nrec >= THREADS / 2 && nrec < ROWS / 4);
	if ((rec = calloc((size_t)nrec, sizeof(*rec))) != NULL) {
		t = hml__coll_calls_type(1);
		H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rec);
		H5Tclose(t);
		for (k = 0; k < nrec; k++) {
			calls += rec[k].ncalls;
			mismatch += rec[k].input_rows != rec[k].ncalls ||
			            rec[k].output_rows != rec[k].ncalls ||
			            !(rec[k].original_seconds >= 0);
		}
	}
	H5Dclose(d);
	H5Gclose(g);
	H5Fclose(f);
	CHECK_EQ_INT(calls, ROWS);
	/* Every row once, its output beside it, whatever thread wrote it. */
	for (k = 0; k < ROWS; k++) {
		int64_t i = (int64_t)in[k][0];

		if (i < 0 || i >= ROWS || in[k][1] != 0.5) {
			missing++;
			continue;
		}
		dup += seen[i]++ != 0;
		mismatch += out[k] != (double)i + 1.0;
	}
	CHECK_EQ_INT(missing, 0);
	CHECK_EQ_INT(dup, 0);
	CHECK_EQ_INT(mismatch, 0);
done:
	free(rec);
	free(seen);
	free(in);
	free(out);
}

TEST(collect_many_threads)
{
	const char *db = tmp_path("rows.h5");
	hml_region *r = open_mode("rows", HML_MODE_COLLECT, db, NULL);
	hml_region_stats st;

	if (!r)
		return;
	fill();
	CHECK_EQ_INT(run_loop(r), 0);
	CHECK_OK(hml_region_stats_get(r, &st));
	CHECK_EQ_INT(st.calls, ROWS);
	CHECK_EQ_INT(st.original_calls, ROWS);
	hml_region_free(r);   /* writes the threads' last, short chunks */
	check_collected(db, "rows");
}

/* A region of one-row maps bound at a dummy, every call at its own
 * locals: the body of a parallel loop whose values live on each
 * iteration's stack (what a directive inside the body becomes). */
static hml_region *open_local(const char *label, hml_mode mode, const char *db,
                              const char *model, int nout)
{
	static double bx[2], by[2];
	hml_array ax = HML_ARRAY_1D(bx, HML_F64, 2), ay = HML_ARRAY_1D(by, HML_F64, nout);
	hml_region_options o;
	hml_region *r = NULL;

	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = mode;
	o.db = db;
	o.model = model;
	o.on_error = HML_ON_ERROR_FAIL;
	CHECK_OK(hml_region_open(&r, label, &o));
	if (!r)
		return NULL;
	CHECK_EQ_INT(hml_region_input(r, "[0:2] = ([0:2])", NULL, &ax, 1, NULL, 0), 0);
	CHECK_EQ_INT(hml_region_output(r, nout == 2 ? "[0:2] = ([0:2])" : "[0:1] = ([0:1])", NULL,
	                               &ay, 1, NULL, 0), 0);
	return r;
}

/* HML_COLLECT_RESERVOIR: the threads share one reservoir, which keeps
 * exactly N distinct rows of the loop, each with its own output, from
 * every part of it; the sampling attributes count every row. */
TEST(collect_reservoir_many_threads)
{
	const char *db = tmp_path("reservoir.h5");
	hml_region *r;
	hid_t f, g, d;
	hsize_t dims[2];
	double (*in)[2] = malloc(sizeof(double[ROWS][2])), *out = malloc(ROWS * sizeof(double));
	char *seen = calloc(ROWS, 1);
	int64_t k, n = 500, dup = 0, mismatch = 0, quarters[4] = { 0 }, attr = 0;

	setenv("HML_COLLECT_RESERVOIR", "500", 1);
	r = open_mode("res", HML_MODE_COLLECT, db, NULL);
	unsetenv("HML_COLLECT_RESERVOIR");
	if (!r || !in || !out || !seen)
		goto done;
	fill();
	CHECK_EQ_INT(run_loop(r), 0);
	hml_region_free(r);
	f = H5Fopen(db, H5F_ACC_RDONLY, H5P_DEFAULT);
	g = H5Gopen2(f, "res", H5P_DEFAULT);
	d = H5Dopen2(g, "input", H5P_DEFAULT);
	hid_t t = H5Dget_space(d);
	H5Sget_simple_extent_dims(t, dims, NULL);
	H5Sclose(t);
	CHECK_EQ_INT(dims[0], n);
	if (dims[0] == (hsize_t)n)
		H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, in);
	H5Dclose(d);
	d = H5Dopen2(g, "output", H5P_DEFAULT);
	if (dims[0] == (hsize_t)n)
		H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out);
	H5Dclose(d);
	hid_t a = H5Aopen(g, "sample_rows_seen", H5P_DEFAULT);
	H5Aread(a, H5T_NATIVE_INT64, &attr);
	H5Aclose(a);
	CHECK_EQ_INT(attr, ROWS);
	H5Gclose(g);
	H5Fclose(f);
	for (k = 0; dims[0] == (hsize_t)n && k < n; k++) {
		int64_t i = (int64_t)in[k][0];

		if (i < 0 || i >= ROWS || seen[i]++) {
			dup++;
			continue;
		}
		mismatch += out[k] != (double)i + 1.0;
		quarters[i * 4 / ROWS]++;
	}
	CHECK_EQ_INT(dup, 0);
	CHECK_EQ_INT(mismatch, 0);
	for (k = 0; k < 4; k++)   /* 125 each, +- 4 sd (10) */
		CHECK(quarters[k] > 85 && quarters[k] < 165);
done:
	free(in);
	free(out);
	free(seen);
}

TEST(collect_at_locals)
{
	const char *db = tmp_path("locals.h5");
	hml_region *r = open_local("locals", HML_MODE_COLLECT, db, NULL, 1);
	hml_region_stats st;
	int64_t i, bad = 0;

	if (!r)
		return;
	fill();
	#pragma omp parallel for num_threads(THREADS) schedule(dynamic, 5) reduction(+:bad)
	for (i = 0; i < ROWS; i++) {
		double a[2] = { (double)i, 0.5 }, c = -1;
		const void *at[] = { a, &c };

		if (hml_region_row_begin_at(r, at, 2, 0) != 1)
			bad++;
		else
			c = a[0] + 2 * a[1];
		bad += hml_region_row_end(r) != 0;
		y[i] = c;   /* the local left the loop body: the row's output */
	}
	CHECK_EQ_INT(bad, 0);
	for (i = 0; i < ROWS; i++)
		bad += y[i] != (double)i + 1.0;
	CHECK_EQ_INT(bad, 0);
	CHECK_OK(hml_region_flush(r));   /* the threads' last, short chunks */
	CHECK_OK(hml_region_stats_get(r, &st));
	CHECK_EQ_INT(st.calls, ROWS);
	CHECK_EQ_INT(st.rows_in, ROWS);
	CHECK_EQ_INT(st.rows_out, ROWS);
	hml_region_free(r);
	check_collected(db, "locals");
}

TEST(at_call_rules)
{
	hml_region *r = open_local("atrules", HML_MODE_COLLECT, tmp_path("atrules.h5"), NULL, 1);
	hml_region *many = open_mode("atmany", HML_MODE_COLLECT, tmp_path("atmany.h5"), NULL);
	hml_region *off = open_local("atoff", HML_MODE_OFF, NULL, NULL, 1);
	double a[2] = { 1, 2 }, c = 0;
	const void *at[] = { a, &c }, *hole[] = { a, NULL };
	hml_region_stats st;

	if (!r || !many || !off)
		return;
	CHECK_FAILS(hml_region_row_begin_at(r, NULL, 2, 0), HML_EINVALID,
	            "region 'atrules': no addresses");
	CHECK_FAILS(hml_region_row_begin_at(NULL, at, 2, 0), HML_EINVALID, "region is NULL");
	CHECK_FAILS(hml_region_row_begin_at(r, at, 3, 0), HML_EINVALID,
	            "3 addresses given but its maps have 2 arrays");
	CHECK_OK(hml_region_row_end(r));
	CHECK_FAILS(hml_region_row_begin_at(r, hole, 2, 0), HML_EINVALID, "address 1 is NULL");
	CHECK_OK(hml_region_row_end(r));
	CHECK_FAILS(hml_region_row_begin_at(many, at, 2, 0), HML_ESHAPE,
	            "need maps of one row, not 10007");
	CHECK_OK(hml_region_row_end(many));
	CHECK_EQ_INT(hml_region_row_begin_at(r, at, 2, 0), 1);
	CHECK_FAILS(hml_region_row_begin_at(r, at, 2, 0), HML_EINVALID, "before hml_region_row_end()");
	c = 7;
	CHECK_OK(hml_region_row_end(r));
	CHECK_FAILS(hml_region_row_end(r), HML_EINVALID, "without hml_region_row_begin()");
	CHECK_OK(hml_region_flush(r));
	CHECK_OK(hml_region_stats_get(r, &st));
	CHECK_EQ_INT(st.rows_in, 1);
	/* off mode runs the code and reads no address */
	CHECK_EQ_INT(hml_region_row_begin_at(off, at, 2, 0), 1);
	CHECK_OK(hml_region_row_end(off));
	hml_region_free(off);
	hml_region_free(many);
	hml_region_free(r);
}

TEST(off_and_call_rules)
{
	hml_region *r = open_mode("off", HML_MODE_OFF, NULL, NULL);
	hml_region *c = open_mode("rules", HML_MODE_COLLECT, tmp_path("rules.h5"), NULL);
	hml_region_stats st;
	int64_t i, wrong = 0;

	if (!r || !c)
		return;
	fill();
	CHECK_EQ_INT(run_loop(r), 0);
	for (i = 0; i < ROWS; i++)
		wrong += y[i] != (double)i + 1.0;
	CHECK_EQ_INT(wrong, 0);
	CHECK_OK(hml_region_stats_get(r, &st));
	CHECK_EQ_INT(st.calls, ROWS);
	CHECK_EQ_INT(st.original_calls, ROWS);

	CHECK_FAILS(hml_region_row_end(c), HML_EINVALID, "without hml_region_row_begin()");
	CHECK_FAILS(hml_region_row_begin(c, ROWS), HML_EINVALID, "row 10007 is outside its 10007 rows");
	CHECK_OK(hml_region_row_end(c));
	CHECK_FAILS(hml_region_row_begin(c, -1), HML_EINVALID, "row -1");
	CHECK_OK(hml_region_row_end(c));
	CHECK_EQ_INT(hml_region_row_begin(c, 3), 1);
	CHECK_FAILS(hml_region_row_begin(c, 4), HML_EINVALID, "before hml_region_row_end()");
	CHECK_OK(hml_region_row_end(c));
	CHECK_FAILS(hml_region_row_begin(NULL, 0), HML_EINVALID, "region is NULL");
	CHECK_OK(hml_region_flush(c));
	CHECK_OK(hml_region_stats_get(c, &st));
	CHECK_EQ_INT(st.rows_in, 1);
	hml_region_free(c);
	hml_region_free(r);
}

/* Inference on every row from many threads: the identity model is not
 * this region's function, so what the rows hold tells model from code. */
TEST(infer_many_threads)
{
	const char *dir = getenv("HML_TEST_MODELS");
	char model[4096];
	hml_region *r;
	hml_region_stats st;
	int64_t i, wrong = 0;
	hml_array ax = HML_ARRAY_2D(&x[0][0], HML_F64, ROWS, 2);
	hml_array ay = HML_ARRAY_2D(&x[0][0], HML_F64, ROWS, 2);
	hml_symbol n = { "N", ROWS };
	hml_region_options o;
	static double z[ROWS][2];

	snprintf(model, sizeof(model), "%s/identity.pt", dir ? dir : "");
	if (!dir || access(model, R_OK) != 0) {
		printf("note: no %s (a build without libtorch): skipping inference\n", model);
		return;
	}
	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = HML_MODE_INFER;
	o.model = model;
	o.on_error = HML_ON_ERROR_FAIL;
	CHECK_OK(hml_region_open(&r, "ident", &o));
	if (!r)
		return;
	ay.data = &z[0][0];
	CHECK_EQ_INT(hml_region_input(r, "[i, 0:2] = ([i, 0:2])", "0:N", &ax, 1, &n, 1), 0);
	CHECK_EQ_INT(hml_region_output(r, "[i, 0:2] = ([i, 0:2])", "0:N", &ay, 1, &n, 1), 0);
	fill();
	#pragma omp parallel for num_threads(THREADS) reduction(+:wrong)
	for (i = 0; i < ROWS; i++) {
		if (hml_region_row_begin(r, i) != 0)
			wrong++;
		wrong += hml_region_row_end(r) != 0;
	}
	for (i = 0; i < ROWS; i++)
		wrong += z[i][0] != x[i][0] || z[i][1] != x[i][1];
	CHECK_EQ_INT(wrong, 0);
	CHECK_OK(hml_region_stats_get(r, &st));
	CHECK_EQ_INT(st.model_calls, ROWS);
	hml_region_free(r);
}

/* Inference at each iteration's locals: the identity model copies the
 * input local into the output local, on every thread. */
TEST(infer_at_locals)
{
	const char *dir = getenv("HML_TEST_MODELS");
	char model[4096];
	hml_region *r;
	hml_region_stats st;
	int64_t i, wrong = 0;

	snprintf(model, sizeof(model), "%s/identity.pt", dir ? dir : "");
	if (!dir || access(model, R_OK) != 0) {
		printf("note: no %s (a build without libtorch): skipping inference\n", model);
		return;
	}
	if (!(r = open_local("identl", HML_MODE_INFER, NULL, model, 2)))
		return;
	#pragma omp parallel for num_threads(THREADS) reduction(+:wrong)
	for (i = 0; i < ROWS; i++) {
		double a[2] = { (double)i, -0.25 * (double)i }, z[2] = { -1, -1 };
		const void *at[] = { a, z };

		if (hml_region_row_begin_at(r, at, 2, 0) != 0)
			wrong++;
		wrong += hml_region_row_end(r) != 0;
		wrong += z[0] != a[0] || z[1] != a[1];
	}
	CHECK_EQ_INT(wrong, 0);
	CHECK_OK(hml_region_stats_get(r, &st));
	CHECK_EQ_INT(st.model_calls, ROWS);
	hml_region_free(r);
}

int main(void)
{
	int rc;

	if (tmp_dir_make("rows") < 0)
		return 1;
	RUN(collect_many_threads);
	RUN(collect_reservoir_many_threads);
	RUN(collect_at_locals);
	RUN(at_call_rules);
	RUN(off_and_call_rules);
	RUN(infer_many_threads);
	RUN(infer_at_locals);
	rc = check_report();
	tmp_dir_remove();
	return rc;
}
