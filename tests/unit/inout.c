/*
 * tests/unit/inout.c - regions that update a whole field in place
 * (hml_region_inout(), the runtime's inout.c): a state [4, nz+4, nx+4] with
 * two halo cells, whose interior is the region's one sample per call. In
 * every mode the inputs must be read before the original code or the model
 * overwrites them, and the halos must stay untouched. The model is the
 * `affine` fixture (2x + 1, made by tests/python/make_models.py).
 */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixtures.h"
#include "hml/hml.h"

#define NV 4
#define NZ 6
#define NX 10
#define H (NZ + 4)
#define W (NX + 4)
#define FIELD "[0:4, 0:nz, 0:nx] = ([0:4, 2:nz+2, 2:nx+2])"

static const char *models_dir;
static double q[NV][H][W];

static int interior(int z, int x)
{
	return z >= 2 && z < NZ + 2 && x >= 2 && x < NX + 2;
}

/* Integer values (exact in float32): interior v*100 + z*10 + x, halos -1. */
static void fill(void)
{
	int v, z, x;

	for (v = 0; v < NV; v++)
		for (z = 0; z < H; z++)
			for (x = 0; x < W; x++)
				q[v][z][x] = interior(z, x) ? v * 100 + z * 10 + x : -1;
}

/* The original code: the interior times 3, in place. */
static void original(void)
{
	int v, z, x;

	for (v = 0; v < NV; v++)
		for (z = 2; z < NZ + 2; z++)
			for (x = 2; x < NX + 2; x++)
				q[v][z][x] *= 3;
}

/* Count cells that differ from what `times` applications of f(y) = a*y + b
 * to the initial field give (halos must still be -1). */
static int mismatches(const double *a, const double *b, int times)
{
	int v, z, x, t, bad = 0;

	for (v = 0; v < NV; v++)
		for (z = 0; z < H; z++)
			for (x = 0; x < W; x++) {
				double want = -1;
				if (interior(z, x)) {
					want = v * 100 + z * 10 + x;
					for (t = 0; t < times; t++)
						want = a[t] * want + b[t];
				}
				bad += q[v][z][x] != want;
			}
	return bad;
}

static hml_region *open_field(const char *label, hml_mode mode, const char *db, int interleave)
{
	hml_region_options o;
	hml_region *r = NULL;
	hml_symbol syms[2] = { { "nz", NZ }, { "nx", NX } };
	hml_array a = HML_ARRAY_3D(q, HML_F64, NV, H, W);
	char model[4096];

	snprintf(model, sizeof(model), "%s/affine.pt", models_dir);
	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = mode;
	o.model = mode == HML_MODE_COLLECT ? NULL : model;
	o.db = db;
	o.interleave = interleave;
	o.shadow = 1.0;
	o.on_error = HML_ON_ERROR_FAIL;
	CHECK_OK(hml_region_open(&r, label, &o));
	if (r)
		CHECK_OK(hml_region_inout(r, FIELD, NULL, &a, 1, syms, 2));
	return r;
}

/* One call: returns what begin returned. */
static int call(hml_region *r)
{
	int run = hml_region_begin(r);

	if (run)
		original();
	CHECK_OK(hml_region_end(r));
	return run;
}

TEST(infer_in_place)
{
	hml_region *r = open_field("inf", HML_MODE_INFER, NULL, 0);
	double a[2] = { 2, 2 }, b[2] = { 1, 1 };
	int64_t shape[HML_MAX_DIMS];

	if (!r)
		return;
	CHECK_EQ_INT(hml_tmap_rows(hml_region_input_map(r, 0)), 1);
	CHECK_EQ_INT(hml_tmap_features(hml_region_output_map(r, 0), shape), 3);
	CHECK_EQ_INT(shape[0] * shape[1] * shape[2], NV * NZ * NX);
	fill();
	CHECK_EQ_INT(call(r), 0);
	CHECK_EQ_INT(call(r), 0);
	CHECK_EQ_INT(mismatches(a, b, 2), 0);
	hml_region_free(r);
}

TEST(interleave_in_place)
{
	hml_region *r = open_field("il", HML_MODE_INTERLEAVE, NULL, 2);
	double a[3] = { 2, 2, 3 }, b[3] = { 1, 1, 0 };
	hml_region_stats s;

	if (!r)
		return;
	fill();
	CHECK_EQ_INT(call(r), 0);
	CHECK_EQ_INT(call(r), 0);
	CHECK_EQ_INT(call(r), 1);
	CHECK_EQ_INT(mismatches(a, b, 3), 0);
	CHECK_OK(hml_region_stats_get(r, &s));
	CHECK_EQ_INT(s.model_calls, 2);
	CHECK_EQ_INT(s.original_calls, 1);
	hml_region_free(r);
}

/* Shadow: the model reads the field before the original code changes it,
 * so its error against the original's 3x is |2x + 1 - 3x| = |x - 1|. */
TEST(shadow_in_place)
{
	hml_region *r = open_field("sh", HML_MODE_SHADOW, NULL, 0);
	double a[1] = { 3 }, b[1] = { 0 }, sq = 0, mx = 0;
	hml_region_stats s;
	int v, z, x;

	if (!r)
		return;
	fill();
	CHECK_EQ_INT(call(r), 1);
	CHECK_EQ_INT(mismatches(a, b, 1), 0);
	for (v = 0; v < NV; v++)
		for (z = 2; z < NZ + 2; z++)
			for (x = 2; x < NX + 2; x++) {
				double e = fabs(v * 100 + z * 10 + x - 1.0);
				sq += e * e;
				mx = e > mx ? e : mx;
			}
	CHECK_OK(hml_region_stats_get(r, &s));
	CHECK_EQ_INT(s.shadow_calls, 1);
	CHECK_NEAR(s.shadow_rmse, sqrt(sq / (NV * NZ * NX)), 1e-9);
	CHECK_NEAR(s.shadow_max_abs, mx, 0);
	hml_region_free(r);
}

/* Collect records each call's field from before the call as input and
 * from after it as output. */
TEST(collect_in_place)
{
	hml_region *r;
	const char *db;
	double *in = NULL, *out = NULL;
	hsize_t dims[5] = { 0 };
	hid_t f, d, sp;
	int k, i, n = NV * NZ * NX, bad = 0;

	db = tmp_path("inout_collect.h5");
	if (!(r = open_field("col", HML_MODE_COLLECT, db, 0)))
		return;
	fill();
	for (k = 0; k < 3; k++)
		CHECK_EQ_INT(call(r), 1);
	CHECK_OK(hml_region_flush(r));
	hml_region_free(r);

	in = malloc(3 * sizeof(double) * (size_t)n);
	out = malloc(3 * sizeof(double) * (size_t)n);
	CHECK((f = H5Fopen(db, H5F_ACC_RDONLY, H5P_DEFAULT)) >= 0);
	if (f < 0 || !in || !out)
		goto done;
	d = H5Dopen2(f, "col/input", H5P_DEFAULT);
	sp = H5Dget_space(d);
	CHECK_EQ_INT(H5Sget_simple_extent_dims(sp, dims, NULL), 4);
	CHECK_EQ_INT(dims[0], 3);
	CHECK_EQ_INT(dims[1] * dims[2] * dims[3], n);
	CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, in) >= 0);
	H5Sclose(sp);
	H5Dclose(d);
	d = H5Dopen2(f, "col/output", H5P_DEFAULT);
	CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
	H5Dclose(d);
	H5Fclose(f);
	/* Call k's input is the initial interior times 3^k; its output 3^(k+1). */
	for (k = 0; k < 3; k++)
		for (i = 0; i < n; i++) {
			int v = i / (NZ * NX), z = i / NX % NZ + 2, x = i % NX + 2;
			double x0 = v * 100 + z * 10 + x;
			bad += in[k * n + i] != x0 * pow(3, k);
			bad += out[k * n + i] != x0 * pow(3, k + 1);
		}
	CHECK_EQ_INT(bad, 0);
done:
	free(in);
	free(out);
}

TEST(errors_leave_region_unchanged)
{
	hml_region *r = open_field("err", HML_MODE_INFER, NULL, 0);
	hml_symbol syms[2] = { { "nz", NZ }, { "nx", NX } };
	hml_array a = HML_ARRAY_3D(q, HML_F64, NV, H, W);

	if (!r)
		return;
	CHECK_FAILS(hml_region_inout(r, "[0:4, 0:nz] = ([0:4, 2:nz+2, 2:", NULL, &a, 1, syms, 2),
	            HML_ESYNTAX, "expected");
	CHECK_FAILS(hml_region_inout(r, "[0:4, 0:nz, 0:nx] = ([0:4, 5:nz+5, 2:nx+2])", NULL,
	                             &a, 1, syms, 2), HML_ERANGE, "q");
	CHECK(hml_region_input_map(r, 1) == NULL);
	CHECK(hml_region_output_map(r, 1) == NULL);
	fill();
	CHECK_EQ_INT(call(r), 0);
	CHECK_FAILS(hml_region_inout(r, FIELD, NULL, &a, 1, syms, 2), HML_EINVALID,
	            "before the first hml_region_begin()");
	CHECK(hml_region_input_map(r, 1) == NULL);
	CHECK_FAILS(hml_region_inout(NULL, FIELD, NULL, &a, 1, syms, 2), HML_EINVALID, "NULL");
	hml_region_free(r);
}

/* hml_region_set_agree: what the other processes do, as the function's
 * context, and what it was asked. */
struct peers {
	int others;      /* another process runs the original code */
	int asked, last;
};

static int agree(int local, void *ctx)
{
	struct peers *p = ctx;

	p->asked++;
	p->last = local;
	return local || p->others;
}

/* A process whose model answers runs the original code when another does,
 * on the inputs as they were (the model's answers never reached the
 * field), once per call; interleave's accurate calls ask too; off mode
 * never asks. */
TEST(agreement_in_place)
{
	hml_region *r = open_field("agree", HML_MODE_INFER, NULL, 0);
	hml_region *il = NULL, *off = NULL;
	double a[4] = { 2, 3, 2, 3 }, b[4] = { 1, 0, 1, 0 };
	struct peers p = { 0, 0, 0 };
	hml_region_stats s = { 0 };

	if (!r)
		return;
	CHECK_OK(hml_region_set_agree(r, agree, &p));
	fill();
	CHECK_EQ_INT(call(r), 0);           /* all agree on the model */
	CHECK(p.asked == 1 && p.last == 0);
	p.others = 1;
	CHECK_EQ_INT(call(r), 1);           /* another rank fell back */
	CHECK(p.asked == 2 && p.last == 0);
	CHECK_EQ_INT(mismatches(a, b, 2), 0);
	CHECK_OK(hml_region_stats_get(r, &s));
	CHECK_EQ_INT(s.model_calls, 1);
	CHECK_EQ_INT(s.original_calls, 1);
	CHECK_EQ_INT(s.agreed_calls, 1);
	CHECK_EQ_INT(s.fallback_calls, 0);
	CHECK_EQ_INT(hml_region_begin(r), 1);
	CHECK_FAILS(hml_region_set_agree(r, NULL, NULL), HML_EINVALID, "inside");
	original();
	CHECK_OK(hml_region_end(r));
	CHECK(p.asked == 3);
	CHECK_OK(hml_region_set_agree(r, NULL, NULL));   /* removed: not asked */
	CHECK_EQ_INT(call(r), 0);
	CHECK_EQ_INT(p.asked, 3);
	CHECK_FAILS(hml_region_set_agree(NULL, agree, &p), HML_EINVALID, "NULL");
	hml_region_free(r);

	/* interleave 1: model, accurate, model: every call asks, the
	 * accurate one with local = 1. */
	p = (struct peers){ 0, 0, 0 };
	if (!(il = open_field("agree-il", HML_MODE_INTERLEAVE, NULL, 1)))
		return;
	CHECK_OK(hml_region_set_agree(il, agree, &p));
	CHECK_EQ_INT(call(il), 0);
	CHECK_EQ_INT(call(il), 1);
	CHECK(p.asked == 2 && p.last == 1);
	CHECK_EQ_INT(call(il), 0);
	CHECK_EQ_INT(p.asked, 3);
	hml_region_free(il);

	p = (struct peers){ 1, 0, 0 };
	if (!(off = open_field("agree-off", HML_MODE_OFF, NULL, 0)))
		return;
	CHECK_OK(hml_region_set_agree(off, agree, &p));
	CHECK_EQ_INT(call(off), 1);
	CHECK_EQ_INT(p.asked, 0);
	hml_region_free(off);
}

int main(void)
{
	models_dir = getenv("HML_TEST_MODELS");
	if (!models_dir || !*models_dir) {
		fprintf(stderr, "HML_TEST_MODELS is not set (run through ctest)\n");
		return 1;
	}
	if (tmp_dir_make("inout") < 0)
		return 1;
	RUN(infer_in_place);
	RUN(interleave_in_place);
	RUN(shadow_in_place);
	RUN(collect_in_place);
	RUN(errors_leave_region_unchanged);
	RUN(agreement_in_place);
	tmp_dir_remove();
	return check_report();
}
