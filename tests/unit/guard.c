/*
 * tests/unit/guard.c - guards (lib/core/guard.c, lib/train/guard_fit.c and
 * the runtime's checks, through the public API): the spec, each guard on crafted rows (inside, at
 * the margin, outside), the calibration of the distance threshold, the
 * card and guard-file round trips, and in a region the per-row fallback
 * (guarded rows hold exactly the original code's values), the whole-call
 * fallback, row calls and the counts. Models from the `models` fixture
 * (identity.pt: its output is its input).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "check.h"
#include "core/guard.h"
#include "fixtures.h"
#include "hml/hml.h"
#include "train/guard_fit.h"

#define N 8
#define F 3

static char models_dir[4096];

/* Statistics by hand: feature k in [0, 1 + k]; no distance. */
static void bounds_stats(hml__guard_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->features = F;
	s->rows = 100;
	s->min = calloc(F, sizeof(double));
	s->max = calloc(F, sizeof(double));
	for (int k = 0; k < F; k++)
		s->max[k] = 1.0 + k;
}

TEST(spec)
{
	hml__guard_spec s;
	char text[64];

	CHECK_OK(hml__guard_spec_parse(&s, "none"));
	CHECK_EQ_INT(s.kind, HML__GUARD_NONE);
	CHECK_OK(hml__guard_spec_parse(&s, "bounds"));
	CHECK(s.kind == HML__GUARD_BOUNDS && s.margin == 0.0);
	CHECK_OK(hml__guard_spec_parse(&s, "bounds:margin=0.25"));
	CHECK(s.margin == 0.25);
	hml__guard_spec_format(text, sizeof(text), &s);
	CHECK_STR(text, "bounds:margin=0.25");
	CHECK_OK(hml__guard_spec_parse(&s, "distance"));
	CHECK(s.kind == HML__GUARD_DISTANCE && s.fa == 0.01);
	CHECK_OK(hml__guard_spec_parse(&s, "distance:fa=0.05"));
	hml__guard_spec_format(text, sizeof(text), &s);
	CHECK_STR(text, "distance:fa=0.05");
	CHECK_FAILS(hml__guard_spec_parse(&s, ""), HML_EINVALID, "malformed guard ''");
	CHECK_FAILS(hml__guard_spec_parse(&s, "ensembles"), HML_EINVALID, "malformed guard 'ensembles'");
	CHECK_FAILS(hml__guard_spec_parse(&s, "none:x=1"), HML_EINVALID, "expected none");
	CHECK_FAILS(hml__guard_spec_parse(&s, "bounds:margin=-1"), HML_EINVALID, "margin must be");
	CHECK_FAILS(hml__guard_spec_parse(&s, "bounds:margin="), HML_EINVALID, "margin=NUMBER");
	CHECK_FAILS(hml__guard_spec_parse(&s, "bounds:margin=x"), HML_EINVALID, "not a number");
	CHECK_FAILS(hml__guard_spec_parse(&s, "bounds:fa=0.1"), HML_EINVALID, "margin=NUMBER");
	CHECK_FAILS(hml__guard_spec_parse(&s, "distance:fa=0"), HML_EINVALID, "fa must be");
	CHECK_FAILS(hml__guard_spec_parse(&s, "distance:fa=0.6"), HML_EINVALID, "fa must be");
	CHECK_FAILS(hml__guard_spec_parse(&s, "distance:fa=nan"), HML_EINVALID, "not a number");
}

/* Inside, at the bounds, at the margin's edge, outside. */
TEST(bounds_rows)
{
	hml__guard_spec sp;
	hml__guard_stats st;
	hml__guard g;

	bounds_stats(&st);
	CHECK_OK(hml__guard_spec_parse(&sp, "bounds"));
	CHECK_OK(hml__guard_make(&g, &sp, &st));
	CHECK_EQ_INT(hml__guard_row(&g, (double[]){ 0.5, 1.0, 2.0 }), 0);
	CHECK_EQ_INT(hml__guard_row(&g, (double[]){ 0.0, 0.0, 0.0 }), 0);   /* at min */
	CHECK_EQ_INT(hml__guard_row(&g, (double[]){ 1.0, 2.0, 3.0 }), 0);   /* at max */
	CHECK_EQ_INT(hml__guard_row(&g, (double[]){ 1.0001, 1.0, 1.0 }), 1);
	CHECK_EQ_INT(hml__guard_row(&g, (double[]){ 0.5, -1e-9, 1.0 }), 1);
	CHECK_EQ_INT(hml__guard_row(&g, (double[]){ 0.5, 1.0, NAN }), 1);
	hml__guard_release(&g);

	/* margin 0.5: feature 2 (range 3) widened by 1.5 on both sides */
	CHECK_OK(hml__guard_spec_parse(&sp, "bounds:margin=0.5"));
	CHECK_OK(hml__guard_make(&g, &sp, &st));
	CHECK_EQ_INT(hml__guard_row(&g, (double[]){ 0.5, 1.0, 4.5 }), 0);   /* the edge */
	CHECK_EQ_INT(hml__guard_row(&g, (double[]){ 0.5, 1.0, -1.5 }), 0);
	CHECK_EQ_INT(hml__guard_row(&g, (double[]){ 0.5, 1.0, 4.5001 }), 1);
	CHECK_EQ_INT(hml__guard_row(&g, (double[]){ 1.6, 1.0, 1.0 }), 1);
	hml__guard_release(&g);

	/* A bound read back from a card of 15 significant digits: float pi, the
	 * largest of miniBUDE's angles, passes against its rounded maximum. */
	hml__guard_stats_release(&st);
	bounds_stats(&st);
	st.max[0] = 3.14159274101257;
	CHECK_OK(hml__guard_spec_parse(&sp, "bounds"));
	CHECK_OK(hml__guard_make(&g, &sp, &st));
	CHECK_EQ_INT(hml__guard_row(&g, (double[]){ (double)3.14159265358979f, 1.0, 1.0 }), 0);
	CHECK_EQ_INT(hml__guard_row(&g, (double[]){ 3.1416, 1.0, 1.0 }), 1);
	hml__guard_release(&g);
	hml__guard_stats_release(&st);
	bounds_stats(&st);

	/* distance needs statistics these have not */
	CHECK_OK(hml__guard_spec_parse(&sp, "distance"));
	CHECK_FAILS(hml__guard_make(&g, &sp, &st), HML_ENOTSUPPORTED, "no input statistics");
	hml__guard_stats_release(&st);
}

/* Correlated rows: x0 ~ U(0, 10), x1 = 2 x0 + U(-1, 1), x2 ~ U(-5, 5). */
static float *correlated(int64_t rows, uint64_t seed)
{
	float *x = malloc((size_t)(rows * F) * sizeof(float));

	for (int64_t i = 0; i < rows; i++) {
		double a = uniform(&seed, 0, 10);
		x[i * F] = (float)a;
		x[i * F + 1] = (float)(2 * a + uniform(&seed, -1, 1));
		x[i * F + 2] = (float)uniform(&seed, -5, 5);
	}
	return x;
}

/* The fit, and the false-alarm rate of the calibrated threshold on fresh
 * rows of the same distribution; a row that breaks the correlation (in
 * range feature by feature) is caught by distance, not by bounds. */
TEST(distance_calibration)
{
	float *x = correlated(20000, 7), *fresh = correlated(20000, 99);
	hml__guard_stats st;
	hml__guard_spec sp;
	hml__guard g, b;
	double row[F], fa[] = { 0.01, 0.05, 0.2 };

	CHECK_OK(hml__guard_fit(&st, x, 20000, F));
	CHECK(st.mean && st.whiten);
	CHECK_EQ_INT(st.calibration_rows, 4000);
	CHECK_NEAR(st.mean[0], 5.0, 0.1);
	CHECK(st.min[0] >= 0 && st.max[0] <= 10 && st.max[0] > 9.9);
	CHECK(st.component != NULL);
	for (int k = 1; k < HML__GUARD_NLEVELS; k++) {
		CHECK(st.quantile[k] >= st.quantile[k - 1]);
		for (int i = 0; i < F; i++)
			CHECK(st.component[k * F + i] >= st.component[(k - 1) * F + i]);
	}
	for (size_t t = 0; t < sizeof(fa) / sizeof(fa[0]); t++) {
		int64_t alarms = 0;

		sp = (hml__guard_spec){ HML__GUARD_DISTANCE, 0, fa[t] };
		CHECK_OK(hml__guard_make(&g, &sp, &st));
		for (int64_t i = 0; i < 20000; i++) {
			for (int k = 0; k < F; k++)
				row[k] = fresh[i * F + k];
			alarms += hml__guard_row(&g, row);
		}
		/* |z|_2 at fa/2 and each component at fa/6: between fa/2 (the
		 * component tests add nothing) and fa (the tests never agree), within
		 * a few standard errors */
		double se = 4 * sqrt(fa[t] * (1 - fa[t]) / 4000);
		CHECK((double)alarms / 20000 >= fa[t] / 2 - se);
		CHECK((double)alarms / 20000 <= fa[t] + se);
		hml__guard_release(&g);
	}
	/* The mean is at distance 0; the row (5, 0, 0) is in every feature's range
	 * but 10 standard deviations off the line x1 = 2 x0. */
	sp = (hml__guard_spec){ HML__GUARD_DISTANCE, 0, 0.01 };
	CHECK_OK(hml__guard_make(&g, &sp, &st));
	CHECK_NEAR(hml__guard_distance(&g, st.mean, NULL), 0.0, 1e-12);
	CHECK_EQ_INT(hml__guard_row(&g, st.mean), 0);
	CHECK_EQ_INT(hml__guard_row(&g, (double[]){ 5, 0.5, 0 }), 1);
	CHECK_EQ_INT(hml__guard_row(&g, (double[]){ 20, 40, 0 }), 1);
	sp = (hml__guard_spec){ HML__GUARD_BOUNDS, 0, 0 };
	CHECK_OK(hml__guard_make(&b, &sp, &st));
	CHECK_EQ_INT(hml__guard_row(&b, (double[]){ 5, 0.5, 0 }), 0);
	CHECK_EQ_INT(hml__guard_row(&b, (double[]){ 20, 40, 0 }), 1);
	hml__guard_release(&b);
	hml__guard_release(&g);
	hml__guard_stats_release(&st);

	/* Too few rows for a covariance: bounds only. */
	CHECK_OK(hml__guard_fit(&st, x, 20, F));
	CHECK(!st.mean && !st.whiten && st.min && st.rows == 20);
	hml__guard_stats_release(&st);
	CHECK_FAILS(hml__guard_fit(&st, x, 0, F), HML_EINVALID, "no rows");
	free(x);
	free(fresh);
}

/* Outside along one feature only: x2 ~ U(-5, 5) is independent of x0 and
 * x1, so with x0 and x1 at their means the whitened deviation is
 * z = (0, 0, W22 (x2 - mean2)). A row just past x2's range is within the
 * Mahalanobis threshold (the norm over three features) but not within
 * component 2's; rows just inside that threshold pass. x1 = 2 x0 + U(-1, 1)
 * makes z_1 the residual of that line: its own threshold, like z_0's, is
 * about sqrt(3) (a uniform's edge in standard deviations). */
TEST(distance_one_feature)
{
	float *x = correlated(20000, 5);
	hml__guard_stats st;
	hml__guard_spec sp = { HML__GUARD_DISTANCE, 0, 0.01 };
	hml__guard g;
	double row[F], z[F], w22;

	CHECK_OK(hml__guard_fit(&st, x, 20000, F));
	CHECK_OK(hml__guard_make(&g, &sp, &st));
	for (int i = 0; i < F; i++)
		CHECK(g.component_threshold[i] > 1.65 && g.component_threshold[i] < 1.8);
	w22 = st.whiten[2 * F + 2];
	memcpy(row, st.mean, sizeof(row));
	row[2] = st.max[2] + 0.05 * (st.max[2] - st.min[2]);       /* 5 % past the range */
	CHECK(hml__guard_distance(&g, row, z) <= g.threshold);      /* Mahalanobis: in */
	CHECK(fabs(z[2]) > g.component_threshold[2]);
	CHECK_EQ_INT(hml__guard_row(&g, row), 1);
	row[2] = st.mean[2] - 1.05 * g.component_threshold[2] / w22;   /* the other side */
	CHECK_EQ_INT(hml__guard_row(&g, row), 1);
	row[2] = st.mean[2] + 0.999 * g.component_threshold[2] / w22;  /* at the margin, in */
	CHECK_EQ_INT(hml__guard_row(&g, row), 0);
	row[2] = st.mean[2] + 1.001 * g.component_threshold[2] / w22;  /* at the margin, out */
	CHECK_EQ_INT(hml__guard_row(&g, row), 1);
	row[2] = st.mean[2];
	row[0] = st.max[0] + 0.05 * (st.max[0] - st.min[0]);         /* x0 alone past its */
	row[1] = 2 * row[0];                                         /* range, x1 follows */
	CHECK(hml__guard_distance(&g, row, z) <= g.threshold);
	CHECK_EQ_INT(hml__guard_row(&g, row), 1);
	CHECK_EQ_INT(hml__guard_row(&g, (double[]){ st.mean[0], st.mean[1], NAN }), 1);
	hml__guard_release(&g);
	hml__guard_stats_release(&st);
	free(x);
}

/* The card's statistics and the guard file read back as written, and a
 * guard read back decides as the one written. */
TEST(round_trips)
{
	float *x = correlated(2000, 3);
	hml__guard_stats st, back;
	hml__guard_spec sp = { HML__GUARD_DISTANCE, 0, 0.02 };
	hml__guard g, g2;
	json_t *j;
	const char *path = tmp_path("g.json");
	uint64_t seed = 11;

	CHECK_OK(hml__guard_fit(&st, x, 2000, F));
	j = hml__guard_stats_json(&st);
	CHECK(j != NULL);
	CHECK_OK(hml__guard_stats_from_json(&back, j, "card"));
	json_decref(j);
	CHECK(back.features == F && back.rows == 2000 && back.calibration_rows == st.calibration_rows);
	for (int k = 0; k < F; k++)
		CHECK(back.min[k] == st.min[k] && back.max[k] == st.max[k] && back.mean[k] == st.mean[k]);
	for (int k = 0; k < F * F; k++)
		CHECK(back.whiten[k] == st.whiten[k]);
	CHECK(back.component != NULL);
	for (int k = 0; k < HML__GUARD_NLEVELS; k++)
		CHECK(back.quantile[k] == st.quantile[k]);
	for (int k = 0; k < HML__GUARD_NLEVELS * F; k++)
		CHECK(back.component[k] == st.component[k]);
	hml__guard_stats_release(&back);

	CHECK_OK(hml__guard_make(&g, &sp, &st));
	j = hml__guard_file_json(&g);
	CHECK(j && json_dump_file(j, path, 0) == 0);
	json_decref(j);
	CHECK_OK(hml__guard_file_read(&g2, path));
	CHECK(g2.spec.kind == HML__GUARD_DISTANCE && g2.spec.fa == 0.02 && g2.threshold == g.threshold);
	for (int i = 0; i < F; i++)
		CHECK(g2.component_threshold[i] == g.component_threshold[i] &&
		      isfinite(g.component_threshold[i]));
	for (int i = 0; i < 1000; i++) {
		double row[F] = { uniform(&seed, -2, 12), uniform(&seed, -4, 24), uniform(&seed, -6, 6) };
		CHECK_EQ_INT(hml__guard_row(&g2, row), hml__guard_row(&g, row));
	}
	hml__guard_release(&g2);

	/* A card from before component_quantiles: read, bounds deploys, distance not;
	 * a schema 1 distance guard file is refused in one line, a schema 1
	 * bounds file still reads. */
	j = hml__guard_stats_json(&st);
	json_object_del(j, "component_quantiles");
	CHECK_OK(hml__guard_stats_from_json(&back, j, "card"));
	CHECK(!back.component && back.mean);
	CHECK_FAILS(hml__guard_make(&g2, &sp, &back), HML_ENOTSUPPORTED, "retrain the model");
	hml__guard_stats_release(&back);
	json_decref(j);
	j = hml__guard_file_json(&g);
	json_object_set_new(j, "schema_version", json_integer(1));
	json_object_del(json_object_get(j, "stats"), "component_quantiles");
	json_object_del(j, "component_thresholds");
	CHECK(json_dump_file(j, path, 0) == 0);
	CHECK_FAILS(hml__guard_file_read(&g2, path), HML_EINVALID, "schema 1");
	CHECK(strchr(hml_error_last()->message, '\n') == NULL);
	json_object_set_new(j, "spec", json_string("bounds"));
	json_object_set_new(j, "kind", json_string("bounds"));
	CHECK(json_dump_file(j, path, 0) == 0);
	CHECK_OK(hml__guard_file_read(&g2, path));
	CHECK(g2.spec.kind == HML__GUARD_BOUNDS);
	CHECK_NEAR(g2.hi[0], st.max[0], 2e-14 * fabs(st.max[0]));
	hml__guard_release(&g2);
	json_object_set_new(j, "schema_version", json_integer(3));
	CHECK(json_dump_file(j, path, 0) == 0);
	CHECK_FAILS(hml__guard_file_read(&g2, path), HML_EINVALID, "schema_version is not 1 or 2");
	json_decref(j);
	hml__guard_release(&g);

	/* Bad files: missing, not JSON, a statistics array of the wrong size. */
	CHECK_FAILS(hml__guard_file_read(&g2, tmp_path("none.json")), HML_EIO, "cannot read guard");
	write_text(path, "{");
	CHECK_FAILS(hml__guard_file_read(&g2, path), HML_EINVALID, "guard '");
	write_text(path, "{\"schema_version\": 1, \"spec\": \"bounds\", \"stats\": "
	           "{\"features\": 2, \"min\": [0], \"max\": [1, 2]}}");
	CHECK_FAILS(hml__guard_file_read(&g2, path), HML_EINVALID, "'min' must be 2 numbers");
	write_text(path, "{\"schema_version\": 1, \"spec\": \"bounds:margin=-2\", \"stats\": {}}");
	CHECK_FAILS(hml__guard_file_read(&g2, path), HML_EINVALID, "malformed guard");
	hml__guard_stats_release(&st);
	free(x);
}

/* A bounds guard file over F features, each in [0, 1]. */
static const char *unit_box_guard(void)
{
	hml__guard_stats st;
	hml__guard_spec sp = { HML__GUARD_BOUNDS, 0, 0 };
	hml__guard g;
	json_t *j;
	const char *path = tmp_path("box.json");

	bounds_stats(&st);
	for (int k = 0; k < F; k++)
		st.max[k] = 1.0;
	CHECK_OK(hml__guard_make(&g, &sp, &st));
	j = hml__guard_file_json(&g);
	CHECK(j && json_dump_file(j, path, 0) == 0);
	json_decref(j);
	hml__guard_release(&g);
	hml__guard_stats_release(&st);
	return path;
}

static hml_region *open_guarded(const char *label, const char *guard, hml_on_error policy)
{
	hml_region_options o;
	hml_region *r = NULL;
	char model[4200];

	snprintf(model, sizeof(model), "%s/identity.pt", models_dir);
	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = HML_MODE_INFER;
	o.on_error = policy;
	o.model = model;
	o.guard = guard;
	CHECK_OK(hml_region_open(&r, label, &o));
	return r;
}

static void map(hml_region *r, int output, double *x)
{
	hml_array a = HML_ARRAY_2D(x, HML_F64, N, F);
	hml_symbol n = { "N", N };

	CHECK((output ? hml_region_output(r, "[i, 0:3] = ([i, 0:3])", "0:N", &a, 1, &n, 1)
	              : hml_region_input(r, "[i, 0:3] = ([i, 0:3])", "0:N", &a, 1, &n, 1)) >= 0);
}

/* The original code: y = 2 x + 1 over the rows handed to it (distinct
 * from the identity model's answer). */
static void original(hml_region *r, double (*x)[F], double (*y)[F])
{
	const int64_t *idx;
	int64_t n;

	CHECK_OK(hml_region_rows(r, &idx, &n));
	for (int64_t k = 0; k < n; k++)
		for (int j = 0; j < F; j++)
			y[idx[k]][j] = 2 * x[idx[k]][j] + 1;
}

/* Rows 2 and 5 outside the box: those two are the original code's, exactly;
 * the others the model's. */
TEST(per_row_fallback)
{
	double x[N][F], y[N][F];
	hml_region_stats s;
	hml_region *r = open_guarded("g", unit_box_guard(), HML_ON_ERROR_FAIL);
	const int64_t *idx;
	int64_t n;

	if (!r)
		return;
	map(r, 0, &x[0][0]);
	map(r, 1, &y[0][0]);
	CHECK_FAILS(hml_region_rows(r, &idx, &n), HML_EINVALID, "outside hml_region_begin()");
	CHECK_OK(hml_region_subset_enable(r));
	for (int i = 0; i < N; i++)
		for (int j = 0; j < F; j++)
			x[i][j] = 0.125 * (i + j);   /* at most 1.125: row 7 (and 6) is out */
	x[2][1] = 3.0;
	x[5][0] = -0.5;
	memset(y, 0, sizeof(y));
	CHECK_EQ_INT(hml_region_begin(r), 1);
	CHECK_OK(hml_region_rows(r, &idx, &n));
	CHECK_EQ_INT(n, 3);
	CHECK(idx[0] == 2 && idx[1] == 5 && idx[2] == 7);
	original(r, x, y);
	CHECK_OK(hml_region_end(r));
	for (int i = 0; i < N; i++)
		for (int j = 0; j < F; j++) {
			int guarded = i == 2 || i == 5 || i == 7;
			CHECK(y[i][j] == (guarded ? 2 * x[i][j] + 1 : x[i][j]));
		}
	/* A call inside the box is the model's only. */
	x[2][1] = x[5][0] = x[7][2] = 0.5;
	CHECK_EQ_INT(hml_region_begin(r), 0);
	CHECK_OK(hml_region_end(r));
	CHECK(y[2][1] == 0.5 && y[7][2] == 0.5);
	s = (hml_region_stats){ 0 };
	CHECK_OK(hml_region_stats_get(r, &s));
	CHECK_EQ_INT(s.calls, 2);
	CHECK_EQ_INT(s.model_calls, 2);
	CHECK_EQ_INT(s.original_calls, 0);
	CHECK_EQ_INT(s.checked_rows, 2 * N);
	CHECK_EQ_INT(s.guarded_rows, 3);
	CHECK_EQ_INT(s.guarded_calls, 1);
	CHECK_EQ_INT(s.guard_whole_calls, 0);
	CHECK(s.guard_s >= 0);
	hml_region_free(r);
}

/* A region that did not declare it runs the original code for the whole
 * call when a row is guarded, and hml_region_rows hands it every row. */
TEST(whole_call_fallback)
{
	double x[N][F], y[N][F];
	hml_region_stats s;
	hml_region *r = open_guarded("w", unit_box_guard(), HML_ON_ERROR_FAIL);
	const int64_t *idx;
	int64_t n;

	if (!r)
		return;
	map(r, 0, &x[0][0]);
	map(r, 1, &y[0][0]);
	for (int i = 0; i < N; i++)
		for (int j = 0; j < F; j++)
			x[i][j] = 0.1;
	x[4][0] = 2.0;
	CHECK_EQ_INT(hml_region_begin(r), 1);
	CHECK_OK(hml_region_rows(r, &idx, &n));
	CHECK_EQ_INT(n, N);
	CHECK(idx[0] == 0 && idx[N - 1] == N - 1);
	original(r, x, y);
	CHECK_OK(hml_region_end(r));
	for (int i = 0; i < N; i++)
		CHECK(y[i][0] == 2 * x[i][0] + 1);
	CHECK_FAILS(hml_region_subset_enable(r), HML_EINVALID, "before the first");
	CHECK_OK(hml_region_stats_get(r, &s));
	CHECK_EQ_INT(s.original_calls, 1);
	CHECK_EQ_INT(s.model_calls, 0);
	CHECK_EQ_INT(s.guarded_rows, 1);
	CHECK_EQ_INT(s.guard_whole_calls, 1);
	hml_region_free(r);
}

/* Row calls: a guarded row runs its original code. */
TEST(row_calls)
{
	double x[N][F], y[N][F];
	hml_region_stats s;
	hml_region *r = open_guarded("rc", unit_box_guard(), HML_ON_ERROR_FAIL);

	if (!r)
		return;
	map(r, 0, &x[0][0]);
	map(r, 1, &y[0][0]);
	for (int i = 0; i < N; i++)
		for (int j = 0; j < F; j++)
			x[i][j] = i == 3 ? 5.0 : 0.25;
	for (int i = 0; i < N; i++) {
		int rc = hml_region_row_begin(r, i);
		CHECK_EQ_INT(rc, i == 3);
		if (rc)
			for (int j = 0; j < F; j++)
				y[i][j] = -1;
		CHECK_OK(hml_region_row_end(r));
	}
	CHECK(y[3][0] == -1 && y[2][0] == 0.25);
	CHECK_OK(hml_region_stats_get(r, &s));
	CHECK_EQ_INT(s.checked_rows, N);
	CHECK_EQ_INT(s.guarded_rows, 1);
	hml_region_free(r);
}

/* Rows of `which` ("input", "output") of region `label` in `db` (doubles,
 * F per row) into buf (up to N rows): their number, or -1. */
static int64_t stored(const char *db, const char *label, const char *which, double (*buf)[F])
{
	hsize_t dims[2] = { 0, 0 };
	hid_t f, g, d, sp;
	int64_t n = -1;

	if ((f = H5Fopen(db, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
		return -1;
	if ((g = H5Gopen2(f, label, H5P_DEFAULT)) >= 0) {
		if ((d = H5Dopen2(g, which, H5P_DEFAULT)) >= 0) {
			sp = H5Dget_space(d);
			H5Sget_simple_extent_dims(sp, dims, NULL);
			H5Sclose(sp);
			if (dims[0] <= N && dims[1] == F &&
			    (dims[0] == 0 || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
			                             H5P_DEFAULT, buf) >= 0))
				n = (int64_t)dims[0];
			H5Dclose(d);
		}
		H5Gclose(g);
	}
	H5Fclose(f);
	return n;
}

/* `total` rows stored, the first k exactly rows `want` of x and the
 * original code's y = 2 x + 1 for them, in order. */
static void check_stored(const char *db, const char *label, double (*x)[F],
                         const int *want, int k, int total)
{
	double in[N][F], out[N][F];

	CHECK_EQ_INT(stored(db, label, "input", in), total);
	CHECK_EQ_INT(stored(db, label, "output", out), total);
	for (int i = 0; i < k; i++)
		for (int j = 0; j < F; j++) {
			CHECK(in[i][j] == x[want[i]][j]);
			CHECK(out[i][j] == 2 * x[want[i]][j] + 1);
		}
}

/* HML_COLLECT_GUARDED=1: the model answers, the guarded rows alone are
 * stored with the original code's outputs (per-row fallback, whole-call
 * fallback, row calls); calls with no guarded row store nothing. */
TEST(guarded_collection)
{
	double x[N][F], y[N][F];
	const char *db = tmp_path("guarded.h5");
	const int subset_rows[] = { 2, 5, 7, 2, 5, 7 }, whole_rows[] = { 1, 4 };
	const int row_rows[] = { 3, 6 };
	double first[N][F], in[N][F];
	hml_region_stats s;
	hml_region *r;

	setenv("HML_COLLECT_GUARDED", "1", 1);
	setenv("HML_DB", db, 1);
	/* per-row fallback: two calls with guarded rows, one without */
	if ((r = open_guarded("gs", unit_box_guard(), HML_ON_ERROR_FAIL)) != NULL) {
		map(r, 0, &x[0][0]);
		map(r, 1, &y[0][0]);
		CHECK_OK(hml_region_subset_enable(r));
		for (int i = 0; i < N; i++)
			for (int j = 0; j < F; j++)
				x[i][j] = 0.1 * (i + j) + 0.01;
		x[2][1] = 3.0;
		x[5][0] = -0.5;
		x[7][2] = 1.5;
		memcpy(first, x, sizeof(first));
		CHECK_EQ_INT(hml_region_begin(r), 1);
		original(r, x, y);
		CHECK_OK(hml_region_end(r));
		CHECK_EQ_INT(hml_region_begin(r), 1);   /* the same rows again: stored again */
		original(r, x, y);
		CHECK_OK(hml_region_end(r));
		for (int j = 0; j < F; j++)
			x[2][j] = x[5][j] = x[7][j] = 0.5;
		CHECK_EQ_INT(hml_region_begin(r), 0);   /* none guarded: nothing stored */
		CHECK_OK(hml_region_end(r));
		x[1][0] = 9.0;
		CHECK_EQ_INT(hml_region_begin(r), 1);
		original(r, x, y);
		CHECK_OK(hml_region_end(r));
		CHECK_OK(hml_region_stats_get(r, &s));
		CHECK_EQ_INT(s.rows_in, 7);
		CHECK_EQ_INT(s.guarded_rows, 7);
		CHECK_EQ_INT(s.model_calls, 4);
		hml_region_free(r);
		check_stored(db, "gs", first, subset_rows, 6, 7);
		CHECK_EQ_INT(stored(db, "gs", "input", in), 7);
		for (int j = 0; j < F; j++)   /* the fourth call's row 1 */
			CHECK(in[6][j] == x[1][j]);
	}
	/* whole-call fallback: the original code runs every row, two are stored */
	if ((r = open_guarded("gw", unit_box_guard(), HML_ON_ERROR_FAIL)) != NULL) {
		map(r, 0, &x[0][0]);
		map(r, 1, &y[0][0]);
		for (int i = 0; i < N; i++)
			for (int j = 0; j < F; j++)
				x[i][j] = 0.05 * (i + 2 * j);
		x[1][2] = 4.0;
		x[4][0] = -2.0;
		CHECK_EQ_INT(hml_region_begin(r), 1);
		for (int i = 0; i < N; i++)
			for (int j = 0; j < F; j++)
				y[i][j] = 2 * x[i][j] + 1;
		CHECK_OK(hml_region_end(r));
		CHECK_OK(hml_region_stats_get(r, &s));
		CHECK_EQ_INT(s.guard_whole_calls, 1);
		CHECK_EQ_INT(s.rows_in, 2);
		hml_region_free(r);
		check_stored(db, "gw", x, whole_rows, 2, 2);
	}
	/* row calls: the guarded rows, collected as in collect mode */
	if ((r = open_guarded("gr", unit_box_guard(), HML_ON_ERROR_FAIL)) != NULL) {
		map(r, 0, &x[0][0]);
		map(r, 1, &y[0][0]);
		for (int i = 0; i < N; i++)
			for (int j = 0; j < F; j++)
				x[i][j] = i == 3 || i == 6 ? 5.0 + i + j : 0.25;
		for (int i = 0; i < N; i++) {
			int rc = hml_region_row_begin(r, i);
			CHECK_EQ_INT(rc, i == 3 || i == 6);
			if (rc)
				for (int j = 0; j < F; j++)
					y[i][j] = 2 * x[i][j] + 1;
			CHECK_OK(hml_region_row_end(r));
		}
		CHECK_OK(hml_region_flush(r));
		CHECK_OK(hml_region_stats_get(r, &s));
		CHECK_EQ_INT(s.rows_in, 2);
		hml_region_free(r);
		check_stored(db, "gr", x, row_rows, 2, 2);
	}
	/* a bad value is refused at open */
	setenv("HML_COLLECT_GUARDED", "2", 1);
	{
		hml_region_options o;
		hml_region *bad = NULL;
		char model[4200];

		snprintf(model, sizeof(model), "%s/identity.pt", models_dir);
		CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
		o.mode = HML_MODE_INFER;
		o.model = model;
		CHECK_FAILS(hml_region_open(&bad, "gb", &o), HML_EINVALID, "HML_COLLECT_GUARDED '2'");
		hml_region_free(bad);
	}
	unsetenv("HML_COLLECT_GUARDED");
	unsetenv("HML_DB");
}

/* A guard of other features, an unreadable guard file, a region in place. */
TEST(bad_guards)
{
	double x[N][2], y[N][F];
	hml_region *r = open_guarded("bad", unit_box_guard(), HML_ON_ERROR_FAIL);
	hml_array a = HML_ARRAY_2D(&x[0][0], HML_F64, N, 2);
	hml_symbol n = { "N", N };
	hml_region_options o;

	if (!r)
		return;
	CHECK(hml_region_input(r, "[i, 0:2] = ([i, 0:2])", "0:N", &a, 1, &n, 1) == 0);
	map(r, 1, &y[0][0]);
	memset(x, 0, sizeof(x));
	CHECK_FAILS(hml_region_begin(r), HML_ESHAPE, "guard '");
	hml_region_end(r);
	hml_region_free(r);

	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = HML_MODE_INFER;
	o.on_error = HML_ON_ERROR_FAIL;
	o.model = "/nonexistent.pt";
	r = NULL;
	{
		char model[4200];
		snprintf(model, sizeof(model), "%s/identity.pt", models_dir);
		o.model = model;
		o.guard = tmp_path("missing.json");
		CHECK_FAILS(hml_region_open(&r, "bad", &o), HML_EIO, "cannot read guard");
	}
	CHECK(r == NULL);

	r = open_guarded("inplace", NULL, HML_ON_ERROR_FAIL);
	if (!r)
		return;
	{
		hml_array b = HML_ARRAY_2D(&y[0][0], HML_F64, N, F);
		CHECK_OK(hml_region_inout(r, "[i, 0:3] = ([i, 0:3])", "0:N", &b, 1, &n, 1));
	}
	CHECK_FAILS(hml_region_subset_enable(r), HML_ENOTSUPPORTED, "in place");
	hml_region_free(r);
}

int main(void)
{
	const char *m = getenv("HML_TEST_MODELS");

	snprintf(models_dir, sizeof(models_dir), "%s", m ? m : "tests/models");
	unsetenv("HML_GUARD");   /* the options name the guard here */
	if (tmp_dir_make("guard") < 0)
		return 1;
	RUN(spec);
	RUN(bounds_rows);
	RUN(distance_calibration);
	RUN(distance_one_feature);
	RUN(round_trips);
	RUN(per_row_fallback);
	RUN(whole_call_fallback);
	RUN(row_calls);
	RUN(bad_guards);
	RUN(guarded_collection);
	tmp_dir_remove();
	return check_report();
}
