/*
 * tests/unit/guard_ensemble.c - the ensemble guard: the members'
 * disagreement (lib/core/guard_ensemble.c) on crafted outputs, its
 * quantiles, the card and guard-file round trips, the held-out rows and
 * the calibration of hml train --ensemble (lib/train/ensemble.c), and in a
 * region (through the public API) rows inside, at and beyond the
 * threshold with per-row and whole-call fallback, row calls, a member
 * missing at run time, and a hot swap that brings the ensemble guard with
 * its model (one whose member is missing is refused, the old pair stays). Members from the `models` fixture: identity.pt
 * (y = x) and affine.pt (y = 2 x + 1), whose disagreement on a row is
 * max_j |x_j + 1| / 2 with scale 1.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "core/deployfile.h"
#include "core/envname.h"
#include "core/guard.h"
#include "fixtures.h"
#include "hml/hml.h"
#include "train/ensemble.h"

#define N 6
#define F 3

static char models_dir[4096];

static const char *model(const char *name)
{
	static char buf[2][4200];
	static int k;

	k ^= 1;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", models_dir, name);
	return buf[k];
}

/* Statistics of F features in [0, 1], an ensemble of two members with
 * outputs of scale 1 and quantiles 0.1 * level (threshold 0.099 at fa 0.01). */
static void ens_stats(hml__guard_stats *s, int64_t members)
{
	memset(s, 0, sizeof(*s));
	s->features = F;
	s->rows = 100;
	s->min = calloc(F, sizeof(double));
	s->max = malloc(F * sizeof(double));
	for (int k = 0; k < F; k++)
		s->max[k] = 1.0;
	s->ens.members = members;
	s->ens.outputs = F;
	s->ens.calibration_rows = 10;
	s->ens.scale = malloc(F * sizeof(double));
	for (int k = 0; k < F; k++)
		s->ens.scale[k] = 1.0;
	for (int k = 0; k < HML__GUARD_NLEVELS; k++)
		s->ens.quantile[k] = 0.1 * HML__GUARD_LEVELS[k];
}

TEST(spread_and_quantiles)
{
	/* Two members, two outputs: std of (1, 3) is 1, of (5, 5) 0. */
	double y2[] = { 1, 5, 3, 5 }, scale[] = { 2, 1 }, one[] = { 1 };
	double y3[] = { 0, 0, 3 }, v[101], q[HML__GUARD_NLEVELS];

	CHECK_NEAR(hml__guard_spread(y2, 2, 2, scale), 0.5, 1e-15);
	scale[0] = 0.5;
	CHECK_NEAR(hml__guard_spread(y2, 2, 2, scale), 2.0, 1e-15);
	/* Three members 0, 0, 3: mean 1, population variance (1 + 1 + 4) / 3. */
	CHECK_NEAR(hml__guard_spread(y3, 3, 1, one), sqrt(2.0), 1e-15);
	CHECK(hml__guard_spread(y3, 1, 1, one) == 0.0);
	y3[1] = NAN;
	CHECK(isinf(hml__guard_spread(y3, 3, 1, one)));
	for (int i = 0; i <= 100; i++)
		v[i] = 100 - i;   /* sorted by the call */
	hml__guard_quantiles(q, 1, v, 101);
	CHECK_NEAR(q[0], 50, 1e-12);
	CHECK_NEAR(q[2], 90, 1e-12);
	CHECK_NEAR(q[5], 99, 1e-12);
	CHECK_NEAR(q[HML__GUARD_NLEVELS - 1], 100, 1e-12);
	CHECK_NEAR(hml__guard_threshold_of(q, 0.015), 98.5, 1e-9);
}

TEST(spec_make_and_round_trips)
{
	hml__guard_spec sp;
	hml__guard_stats st, back;
	hml__guard g, g2;
	const char *paths[2] = { "/m/a.pt", "/m/b.pt" };
	const char *path = tmp_path("ens.json");
	char text[64];
	json_t *j;

	CHECK_OK(hml__guard_spec_parse(&sp, "ensemble"));
	CHECK(sp.kind == HML__GUARD_ENSEMBLE && sp.fa == 0.01);
	CHECK_OK(hml__guard_spec_parse(&sp, "ensemble:fa=0.05"));
	hml__guard_spec_format(text, sizeof(text), &sp);
	CHECK(strcmp(text, "ensemble:fa=0.05") == 0);
	CHECK_FAILS(hml__guard_spec_parse(&sp, "ensemble:margin=1"), HML_EINVALID, "fa=NUMBER");
	CHECK_FAILS(hml__guard_spec_parse(&sp, "ensemble:fa=0"), HML_EINVALID, "(0, 0.5]");

	/* A model trained without --ensemble has no members to disagree. */
	ens_stats(&st, 0);
	CHECK_FAILS(hml__guard_make(&g, &sp, &st), HML_ENOTSUPPORTED, "without --ensemble");
	hml__guard_stats_release(&st);

	ens_stats(&st, 2);
	j = hml__guard_stats_json(&st);
	CHECK_OK(hml__guard_stats_from_json(&back, j, "card"));
	CHECK_EQ_INT(back.ens.members, 2);
	CHECK_EQ_INT(back.ens.outputs, F);
	CHECK(back.ens.scale[2] == 1.0 && back.ens.quantile[5] == st.ens.quantile[5]);
	hml__guard_stats_release(&back);
	/* Malformed: one member, or a scale per output missing. */
	json_object_set_new(json_object_get(j, "ensemble"), "members", json_integer(1));
	CHECK_FAILS(hml__guard_stats_from_json(&back, j, "card"), HML_EINVALID, "2 to 16");
	json_object_set_new(json_object_get(j, "ensemble"), "members", json_integer(2));
	json_array_remove(json_object_get(json_object_get(j, "ensemble"), "scale"), 0);
	CHECK_FAILS(hml__guard_stats_from_json(&back, j, "card"), HML_EINVALID, "scale");
	json_decref(j);

	CHECK_OK(hml__guard_spec_parse(&sp, "ensemble:fa=0.01"));
	CHECK_OK(hml__guard_make(&g, &sp, &st));
	CHECK_NEAR(g.threshold, 0.099, 1e-12);
	CHECK_FAILS(hml__guard_set_members(&g, paths, 1), HML_EINVALID, "2 members");
	CHECK_OK(hml__guard_set_members(&g, paths, 2));
	j = hml__guard_file_json(&g);
	CHECK(j && json_dump_file(j, path, 0) == 0);
	CHECK_OK(hml__guard_file_read(&g2, path));
	CHECK(g2.spec.kind == HML__GUARD_ENSEMBLE && g2.threshold == g.threshold);
	CHECK(g2.member && strcmp(g2.member[1], "/m/b.pt") == 0);
	hml__guard_release(&g2);
	/* A guard file without its members is refused. */
	json_object_del(j, "members");
	CHECK(json_dump_file(j, path, 0) == 0);
	CHECK_FAILS(hml__guard_file_read(&g2, path), HML_EINVALID, "'members'");
	json_decref(j);
	hml__guard_release(&g);
	hml__guard_stats_release(&st);
}

/* Rows 0..rows-1 of one feature x = i / 100 and one output y = x. */
static void line_data(hml__dataset *d, int64_t rows)
{
	memset(d, 0, sizeof(*d));
	d->rows = rows;
	d->in_ndim = d->out_ndim = 1;
	d->in_shape[0] = d->out_shape[0] = 1;
	d->in_features = d->out_features = 1;
	d->x = malloc((size_t)rows * sizeof(float));
	d->y = malloc((size_t)rows * sizeof(float));
	for (int64_t i = 0; i < rows; i++)
		d->x[i] = d->y[i] = (float)i / 100.0f;
}

/* Every 10th row held out; the calibration of identity and affine on them:
 * disagreement |x + 1| / 2 over the output's standard deviation. */
TEST(calibration)
{
	hml__dataset all, fit, cal;
	hml__guard_ensemble e;
	const char *members[2];
	double want[30], q[HML__GUARD_NLEVELS], mean = 0, sq = 0, sd;

	line_data(&all, 199);
	CHECK_FAILS(hml__ensemble_split(&fit, &cal, &all), HML_EINVALID, "too few for an ensemble");
	hml__ensemble_rows_release(&all);
	line_data(&all, 300);
	CHECK_OK(hml__ensemble_split(&fit, &cal, &all));
	CHECK_EQ_INT(fit.rows, 270);
	CHECK_EQ_INT(cal.rows, 30);
	CHECK(cal.x[0] == all.x[9] && cal.x[29] == all.x[299] && fit.x[9] == all.x[10]);
	for (int64_t i = 0; i < fit.rows; i++)
		mean += fit.y[i];
	mean /= (double)fit.rows;
	for (int64_t i = 0; i < fit.rows; i++)
		sq += (fit.y[i] - mean) * (fit.y[i] - mean);
	sd = sqrt(sq / (double)(fit.rows - 1));
	members[0] = strdup(model("identity.pt"));
	members[1] = strdup(model("affine.pt"));
	CHECK_FAILS(hml__ensemble_calibrate(&e, members, 1, &fit, &cal), HML_EINVALID, "2 to 16");
	CHECK_OK(hml__ensemble_calibrate(&e, members, 2, &fit, &cal));
	CHECK_EQ_INT(e.members, 2);
	CHECK_EQ_INT(e.calibration_rows, 30);
	CHECK_NEAR(e.scale[0], sd, 1e-9);
	for (int i = 0; i < 30; i++)
		want[i] = fabs((double)cal.x[i] + 1.0) / 2.0 / sd;
	hml__guard_quantiles(q, 1, want, 30);
	for (int k = 0; k < HML__GUARD_NLEVELS; k++)
		CHECK_NEAR(e.quantile[k], q[k], 1e-6 * q[k]);
	hml__guard_ensemble_release(&e);
	/* A member that is no model. */
	free((char *)members[1]);
	members[1] = strdup(model("not_a_model.pt"));
	CHECK(hml__ensemble_calibrate(&e, members, 2, &fit, &cal) < 0);
	CHECK(strstr(hml_error_last()->message, "not_a_model.pt") != NULL);
	free((char *)members[0]);
	free((char *)members[1]);
	hml__ensemble_rows_release(&fit);
	hml__ensemble_rows_release(&cal);
	hml__ensemble_rows_release(&all);
}

/* The guard file: identity and affine (or `second`), threshold 1. */
static const char *guard_file(const char *name, const char *second)
{
	hml__guard_stats st;
	hml__guard_spec sp = { HML__GUARD_ENSEMBLE, 0, 0.01 };
	hml__guard g;
	const char *paths[2];
	const char *path = tmp_path(name);
	char a[4200], b[4200];
	json_t *j;

	snprintf(a, sizeof(a), "%s", model("identity.pt"));
	snprintf(b, sizeof(b), "%s", second);
	paths[0] = a;
	paths[1] = b;
	ens_stats(&st, 2);
	CHECK_OK(hml__guard_make(&g, &sp, &st));
	g.threshold = 1.0;
	CHECK_OK(hml__guard_set_members(&g, paths, 2));
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

	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = HML_MODE_INFER;
	o.on_error = policy;
	o.model = model("identity.pt");
	o.guard = guard;
	if (hml_region_open(&r, label, &o) < 0)
		return NULL;
	return r;
}

static void map(hml_region *r, double (*x)[F], double (*y)[F])
{
	hml_array a = HML_ARRAY_2D(&x[0][0], HML_F64, N, F);
	hml_array b = HML_ARRAY_2D(&y[0][0], HML_F64, N, F);
	hml_symbol n = { "N", N };

	CHECK(hml_region_input(r, "[i, 0:3] = ([i, 0:3])", "0:N", &a, 1, &n, 1) >= 0);
	CHECK(hml_region_output(r, "[i, 0:3] = ([i, 0:3])", "0:N", &b, 1, &n, 1) >= 0);
}

/* Rows inside (disagreement 0.5), at the threshold (x = 1: exactly 1, let
 * through) and beyond it (x = 3: 2; x = -4: 1.5): the guarded rows are
 * the original code's (y = -x), exactly; the others the model's (y = x). */
TEST(region_rows)
{
	double x[N][F], y[N][F];
	const double row0[N] = { 0, 1, 3, 0, -4, 0.5 };
	hml_region_stats s;
	hml_region *r = open_guarded("e", guard_file("g1.json", model("affine.pt")),
	                             HML_ON_ERROR_FAIL);
	const int64_t *idx;
	int64_t n;

	CHECK(r != NULL);
	if (!r)
		return;
	map(r, x, y);
	CHECK_OK(hml_region_subset_enable(r));
	for (int i = 0; i < N; i++)
		for (int j = 0; j < F; j++)
			x[i][j] = j == 1 ? row0[i] : 0.0;
	CHECK_EQ_INT(hml_region_begin(r), 1);
	CHECK_OK(hml_region_rows(r, &idx, &n));
	CHECK_EQ_INT(n, 2);
	CHECK(n == 2 && idx[0] == 2 && idx[1] == 4);
	for (int64_t k = 0; k < n; k++)
		for (int j = 0; j < F; j++)
			y[idx[k]][j] = -x[idx[k]][j];
	CHECK_OK(hml_region_end(r));
	for (int i = 0; i < N; i++)
		CHECK(y[i][1] == (i == 2 || i == 4 ? -row0[i] : row0[i]));
	/* Row calls: the same rule, row by row. */
	for (int i = 0; i < N; i++) {
		int rc = hml_region_row_begin(r, i);
		CHECK_EQ_INT(rc, i == 2 || i == 4);
		CHECK_OK(hml_region_row_end(r));
	}
	CHECK_OK(hml_region_stats_get(r, &s));
	CHECK_EQ_INT(s.checked_rows, 2 * N);
	CHECK_EQ_INT(s.guarded_rows, 4);
	CHECK_EQ_INT(s.guard_whole_calls, 0);
	CHECK(s.guard_s > 0);
	hml_region_free(r);

	/* Without hml_region_subset_enable: the whole call falls back. */
	r = open_guarded("w", guard_file("g2.json", model("affine.pt")), HML_ON_ERROR_FAIL);
	if (!r)
		return;
	map(r, x, y);
	CHECK_EQ_INT(hml_region_begin(r), 1);
	CHECK_OK(hml_region_end(r));
	CHECK_OK(hml_region_stats_get(r, &s));
	CHECK_EQ_INT(s.guard_whole_calls, 1);
	CHECK_EQ_INT(s.original_calls, 1);
	hml_region_free(r);
}

/* A member missing at run time: an error under the fail policy; a warning
 * and the original code otherwise (the model must not answer unchecked). */
TEST(member_missing)
{
	double x[N][F], y[N][F];
	hml_region_stats s;
	const char *g = guard_file("g3.json", tmp_path("gone.pt"));
	hml_region *r = open_guarded("m", g, HML_ON_ERROR_FAIL);

	CHECK(r == NULL);
	CHECK(strstr(hml_error_last()->message, "ensemble member 1") != NULL);
	CHECK(strstr(hml_error_last()->message, "gone.pt") != NULL);
	r = open_guarded("m", g, HML_ON_ERROR_FALLBACK);
	CHECK(r != NULL);
	if (!r)
		return;
	map(r, x, y);
	memset(x, 0, sizeof(x));
	CHECK_EQ_INT(hml_region_begin(r), 1);
	CHECK_OK(hml_region_end(r));
	CHECK_OK(hml_region_stats_get(r, &s));
	CHECK_EQ_INT(s.model_calls, 0);
	CHECK_EQ_INT(s.original_calls, 1);
	hml_region_free(r);
}

static void deploy(const char *label, int k, const char *m, const char *guard)
{
	hml__deployfile d;

	memset(&d, 0, sizeof(d));
	snprintf(d.region, sizeof(d.region), "%s", label);
	snprintf(d.deployment, sizeof(d.deployment), "p%d", k);
	snprintf(d.model, sizeof(d.model), "m%d", k);
	snprintf(d.path, sizeof(d.path), "%s", m);
	snprintf(d.guard, sizeof(d.guard), "%s", guard ? guard : "");
	CHECK_OK(hml__deployfile_write(tmpdir, &d));
}

/* One whole call over rows of value v: y[0][0] after it (the original
 * code writes -1). */
static double swap_call(hml_region *r, double (*x)[F], double (*y)[F], double v)
{
	struct timespec t = { 0, 3000000L };   /* past the swap interval */

	nanosleep(&t, NULL);
	for (int i = 0; i < N; i++)
		for (int j = 0; j < F; j++)
			x[i][j] = v;
	if (hml_region_begin(r))
		for (int i = 0; i < N; i++)
			for (int j = 0; j < F; j++)
				y[i][j] = -1;
	CHECK_OK(hml_region_end(r));
	return y[0][0];
}

TEST(hot_swap)
{
	double x[N][F], y[N][F];
	char name[HML__ENVNAME_MAX], rel[128], path[4300], ident[4200], aff[4200];
	const char *g = guard_file("g4.json", model("affine.pt"));
	const char *broken = guard_file("g5.json", tmp_path("gone2.pt"));
	hml_region *r;

	snprintf(ident, sizeof(ident), "%s", model("identity.pt"));
	snprintf(aff, sizeof(aff), "%s", model("affine.pt"));
	hml__envname_region(name, sizeof(name), HML__ENV_DEPLOYMENT, "swap");
	hml__deployfile_rel(rel, sizeof(rel), "swap");
	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	setenv(name, path, 1);
	setenv(HML__ENV_SWAP_INTERVAL, "1", 1);
	deploy("swap", 1, ident, NULL);
	r = open_guarded("swap", NULL, HML_ON_ERROR_FAIL);
	unsetenv(name);
	CHECK(r != NULL);
	if (!r)
		return;
	map(r, x, y);
	CHECK(swap_call(r, x, y, 3.0) == 3.0);    /* identity, no guard */
	deploy("swap", 2, aff, g);
	CHECK(swap_call(r, x, y, 3.0) == -1.0);   /* disagreement 2 > 1: guarded */
	CHECK(swap_call(r, x, y, 0.0) == 1.0);    /* 0.5: affine answers */
	/* a member missing: the swap is refused, the pair stays */
	deploy("swap", 3, ident, broken);
	CHECK(swap_call(r, x, y, 3.0) == -1.0);
	CHECK(swap_call(r, x, y, 0.0) == 1.0);
	/* and a deployment without a guard removes it */
	deploy("swap", 4, ident, NULL);
	CHECK(swap_call(r, x, y, 3.0) == 3.0);
	hml_region_free(r);
	unsetenv(HML__ENV_SWAP_INTERVAL);
}

int main(void)
{
	const char *m = getenv("HML_TEST_MODELS");

	snprintf(models_dir, sizeof(models_dir), "%s", m ? m : "tests/models");
	unsetenv("HML_GUARD");
	if (tmp_dir_make("guard_ensemble") < 0)
		return 1;
	RUN(spread_and_quantiles);
	RUN(spec_make_and_round_trips);
	RUN(calibration);
	RUN(region_rows);
	RUN(member_missing);
	RUN(hot_swap);
	tmp_dir_remove();
	return check_report();
}
