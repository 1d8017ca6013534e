/*
 * tests/unit/guard_embed.c - guards from the statistics a compiled model
 * embeds (lib/core/guard.h part 4, hml/cmodel.h ABI version 2, the
 * runtime's rowguard.c and swap.c): the card's statistics generated into
 * a model, compiled, loaded and read back equal; HML_GUARD as a spec
 * resolved against them, guarding the same rows as the guard file made
 * from the same card; a guard file of another model refused; a spec with
 * a TorchScript model, a version 1 object, a model without statistics or
 * `ensemble` refused with one warning (the original code runs); a hot
 * swap resolves the spec for the next model, and refuses a next model
 * that cannot serve it or whose guard file is another model's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "core/deployfile.h"
#include "core/envname.h"
#include "core/guard.h"
#include "deploy/cbuild.h"
#include "deploy/codegen.h"
#include "fixtures.h"
#include "hml/cmodel.h"
#include "hml/hml.h"
#include "loader/loader.h"

#define N 8
#define F 3

static char models_dir[4096];
static int warnings;
static char last_warning[1024];

static void on_log(hml_log_level level, const char *message, void *payload)
{
	(void)payload;
	if (level != HML_LOG_WARNING)
		return;
	__atomic_fetch_add(&warnings, 1, __ATOMIC_RELAXED);
	snprintf(last_warning, sizeof(last_warning), "%s", message);
}

/* Card statistics by hand: each feature in [0, hi], with distance parts. */
static void card_stats(hml__guard_stats *s, double hi)
{
	memset(s, 0, sizeof(*s));
	s->features = F;
	s->rows = 1000;
	s->calibration_rows = 200;
	s->min = calloc(F, sizeof(double));
	s->max = calloc(F, sizeof(double));
	s->mean = calloc(F, sizeof(double));
	s->whiten = calloc(F * F, sizeof(double));
	s->component = calloc(F * HML__GUARD_NLEVELS, sizeof(double));
	for (int k = 0; k < F; k++) {
		s->max[k] = hi;
		s->mean[k] = hi / 3.0;   /* not short in decimal */
		s->whiten[k * F + k] = 3.0 / hi;
	}
	for (int l = 0; l < HML__GUARD_NLEVELS; l++) {
		s->quantile[l] = 0.5 + 0.25 * l;
		for (int k = 0; k < F; k++)
			s->component[l * F + k] = 0.25 + 0.125 * l;
	}
}

/* The card's "guard" object as the deployment embeds it (compact JSON). */
static char *card_text(double hi)
{
	hml__guard_stats s;
	json_t *j;
	char *text;

	card_stats(&s, hi);
	j = hml__guard_stats_json(&s);
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	hml__guard_stats_release(&s);
	return text;
}

/* A compiled model of F inputs whose F outputs are all `value`, carrying
 * the statistics `stats` (JSON text, or NULL). */
static int build(char *so, size_t size, const char *id, const char *stats, float value)
{
	hml__cg_options o = { id, NULL, stats };
	hml__cbuild_info info;
	hml__cg_model m;
	int64_t sizes[2] = { F, F };
	char c[600];
	int rc;

	memset(&info, 0, sizeof(info));
	snprintf(c, sizeof(c), "%s.c", tmp_path(id));
	snprintf(so, size, "%s.so", tmp_path(id));
	if ((rc = hml__cg_model_init(&m, HML__CG_MLP, 1, sizes, 0)) == 0) {
		for (int k = 0; k < F; k++) {
			m.in_std[k] = 1;
			m.out_std[k] = 1;
			m.out_mean[k] = value;
		}
		m.in_ndim = m.out_ndim = 1;
		m.in_shape[0] = m.out_shape[0] = F;
		snprintf(m.arch, sizeof(m.arch), "mlp:0:relu");
		rc = hml__cbuild_so(&m, &o, NULL, c, NULL, so, &info);
		hml__cbuild_info_release(&info);
	}
	hml__cg_model_release(&m);
	return rc;
}

/* A guard file (spec `spec`) made from the card statistics of `hi`. */
static const char *guard_file(const char *name, const char *spec, double hi)
{
	hml__guard_stats st;
	hml__guard_spec sp;
	hml__guard g;
	json_t *j;
	const char *path = tmp_path(name);

	card_stats(&st, hi);
	CHECK_OK(hml__guard_spec_parse(&sp, spec));
	CHECK_OK(hml__guard_make(&g, &sp, &st));
	j = hml__guard_file_json(&g);
	CHECK(j && json_dump_file(j, path, 0) == 0);
	json_decref(j);
	hml__guard_release(&g);
	hml__guard_stats_release(&st);
	return path;
}

static char so_a[600], so_b[600], so_none[600], so_v1[600], so_a2[600];

TEST(value_kind)
{
	CHECK_EQ_INT(hml__guard_value_is_spec("bounds"), 1);
	CHECK_EQ_INT(hml__guard_value_is_spec("distance:fa=0.05"), 1);
	CHECK_EQ_INT(hml__guard_value_is_spec("guard.json"), 1);   /* a spec, malformed */
	CHECK_EQ_INT(hml__guard_value_is_spec("./bounds"), 0);
	CHECK_EQ_INT(hml__guard_value_is_spec("/exp/models/m1.guard-bounds-margin-0.json"), 0);
	CHECK_EQ_INT(hml__guard_value_is_spec(NULL), 0);
}

/* Generate -> compile -> load: the statistics are the card's, exactly. */
TEST(round_trip)
{
	hml__cmodel *cm = NULL;
	hml__guard_stats card, back, other;
	char *text = card_text(1.0);
	json_t *want = NULL, *got = NULL;

	CHECK(text != NULL);
	CHECK_OK(build(so_a, sizeof(so_a), "ga", text, 0.5f));
	CHECK_OK(hml__cmodel_load(&cm, so_a));
	if (!cm || !text)
		return;
	CHECK_EQ_INT(hml__cmodel_abi(cm), 3);
	CHECK(hml__cmodel_input_stats(cm) != NULL);
	CHECK_STR(hml__cmodel_input_stats(cm), text);
	want = json_loads(text, 0, NULL);
	got = json_loads(hml__cmodel_input_stats(cm), 0, NULL);
	CHECK(want && got && json_equal(want, got));
	card_stats(&card, 1.0);
	CHECK_OK(hml__guard_stats_from_json(&back, got, "back"));
	CHECK_EQ_INT(hml__guard_stats_same(&card, &back), 1);
	CHECK_OK(hml__guard_stats_match_text(&card, hml__cmodel_input_stats(cm), "m"));
	/* one bound off by 1e-9 of itself: another model; 1e-14: the same */
	card_stats(&other, 1.0);
	other.max[1] *= 1 + 1e-9;
	CHECK_EQ_INT(hml__guard_stats_same(&other, &back), 0);
	CHECK_FAILS(hml__guard_stats_match_text(&other, hml__cmodel_input_stats(cm), "m"),
	            HML_EINVALID, "m: the statistics differ");
	other.max[1] = 1.0 * (1 + 1e-14);
	CHECK_EQ_INT(hml__guard_stats_same(&other, &back), 1);
	free(other.mean);
	other.mean = NULL;   /* mean on one side only: another model */
	CHECK_EQ_INT(hml__guard_stats_same(&other, &back), 0);
	hml__guard_stats_release(&other);
	hml__guard_stats_release(&back);
	hml__guard_stats_release(&card);
	hml__cmodel_free(cm);
	json_decref(want);
	json_decref(got);
	free(text);

	/* without statistics: NULL, and the model says why a spec cannot use them */
	CHECK_OK(build(so_none, sizeof(so_none), "gnone", NULL, 0.5f));
	CHECK_OK(hml__cmodel_load(&cm, so_none));
	if (cm)
		CHECK(hml__cmodel_input_stats(cm) == NULL);
	hml__cmodel_free(cm);
}

/* Spec resolution in the library: what each kind needs. */
TEST(resolve)
{
	hml__guard g;
	char *text = card_text(1.0);

	CHECK_OK(hml__guard_from_stats_text(&g, "bounds:margin=0.5", text, "m"));
	CHECK(g.spec.kind == HML__GUARD_BOUNDS && g.hi[0] > 1.49 && g.hi[0] < 1.51);
	hml__guard_release(&g);
	CHECK_OK(hml__guard_from_stats_text(&g, "distance:fa=0.02", text, "m"));
	CHECK(g.spec.kind == HML__GUARD_DISTANCE && g.threshold > 0);
	hml__guard_release(&g);
	CHECK_OK(hml__guard_from_stats_text(&g, "none", NULL, "m"));
	CHECK_EQ_INT(g.spec.kind, HML__GUARD_NONE);
	CHECK_FAILS(hml__guard_from_stats_text(&g, "ensemble", text, "m"), HML_ENOTSUPPORTED,
	            "members' files");
	CHECK_FAILS(hml__guard_from_stats_text(&g, "bounds", NULL, "model 'x'"), HML_ENOTSUPPORTED,
	            "model 'x' carries no input statistics for guard 'bounds'");
	CHECK_FAILS(hml__guard_from_stats_text(&g, "bounds", "{", "m"), HML_EINVALID, "not JSON");
	CHECK_FAILS(hml__guard_from_stats_text(&g, "bounds", "{}", "m"), HML_EINVALID,
	            "feature count");
	CHECK_FAILS(hml__guard_from_stats_text(&g, "guard.json", text, "m"), HML_EINVALID,
	            "malformed guard 'guard.json'");
	free(text);
}

static hml_region *open_region(const char *label, const char *model, const char *guard,
                               hml_on_error policy, double *x, double *y)
{
	hml_region_options o;
	hml_region *r = NULL;
	hml_array a = HML_ARRAY_2D(x, HML_F64, N, F), b = HML_ARRAY_2D(y, HML_F64, N, F);
	hml_symbol n = { "N", N };
	int rc;

	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = HML_MODE_INFER;
	o.on_error = policy;
	o.model = model;
	o.guard = guard;
	if ((rc = hml_region_open(&r, label, &o)) < 0)
		return NULL;
	CHECK_OK(hml_region_input(r, "[i, 0:3] = ([i, 0:3])", "0:N", &a, 1, &n, 1));
	CHECK_OK(hml_region_output(r, "[i, 0:3] = ([i, 0:3])", "0:N", &b, 1, &n, 1));
	return r;
}

/* One call over x, the original code y = 2x + 1 on the rows handed to it. */
static int call(hml_region *r, double (*x)[F], double (*y)[F])
{
	const int64_t *idx;
	int64_t n;
	int rc;

	memset(y, 0, sizeof(double) * N * F);
	if ((rc = hml_region_begin(r)) != 0) {
		CHECK_OK(hml_region_rows(r, &idx, &n));
		for (int64_t k = 0; k < n; k++)
			for (int j = 0; j < F; j++)
				y[idx[k]][j] = 2 * x[idx[k]][j] + 1;
	}
	CHECK_OK(hml_region_end(r));
	return rc;
}

static void rows_in_box(double (*x)[F], double hi)
{
	for (int i = 0; i < N; i++)
		for (int j = 0; j < F; j++)
			x[i][j] = hi * 0.1 * (i % 5 + j);   /* at most 0.6 hi */
}

/* HML_GUARD=bounds against the model's statistics guards the rows the
 * guard file made from the same card guards; they hold the original
 * code's values exactly, the others the model's. */
TEST(spec_resolved)
{
	double x[N][F], y[N][F], ys[2][N][F];
	hml_region_stats st[2];

	for (int k = 0; k < 2; k++) {
		const char *g = k == 0 ? "bounds" : guard_file("a.json", "bounds", 1.0);
		hml_region *r = open_region(k ? "file" : "spec", so_a, g, HML_ON_ERROR_FAIL,
		                            &x[0][0], &y[0][0]);

		if (!r)
			return;
		CHECK_OK(hml_region_subset_enable(r));
		rows_in_box(x, 1.0);
		x[2][1] = 1.5;
		x[5][0] = -0.25;
		x[7][2] = 1.0;   /* at the maximum: passes */
		CHECK_EQ_INT(call(r, x, y), 1);
		memcpy(ys[k], y, sizeof(y));
		for (int i = 0; i < N; i++)
			for (int j = 0; j < F; j++)
				CHECK(y[i][j] == (i == 2 || i == 5 ? 2 * x[i][j] + 1 : 0.5));
		memset(&st[k], 0, sizeof(st[k]));
		CHECK_OK(hml_region_stats_get(r, &st[k]));
		CHECK_EQ_INT(st[k].guarded_rows, 2);
		CHECK_EQ_INT(st[k].checked_rows, N);
		hml_region_free(r);
	}
	CHECK(memcmp(ys[0], ys[1], sizeof(ys[0])) == 0);
}

/* Each refusal: HML_ON_ERROR=fail gives the error; fallback one warning
 * and the original code for every row. */
static void refused(const char *model, const char *guard, int code, const char *msg)
{
	double x[N][F], y[N][F];
	hml_region_options o;
	hml_region *r = NULL;

	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = HML_MODE_INFER;
	o.on_error = HML_ON_ERROR_FAIL;
	o.model = model;
	o.guard = guard;
	CHECK_FAILS(hml_region_open(&r, "bad", &o), code, msg);
	CHECK(r == NULL);
	warnings = 0;
	r = open_region("bad", model, guard, HML_ON_ERROR_FALLBACK, &x[0][0], &y[0][0]);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_EQ_INT(warnings, 1);
	CHECK(strstr(last_warning, msg) != NULL);
	CHECK(strstr(last_warning, "running the original code") != NULL);
	rows_in_box(x, 1.0);
	CHECK(call(r, x, y) != 0);
	CHECK(y[3][1] == 2 * x[3][1] + 1);
	CHECK_EQ_INT(warnings, 1);
	hml_region_free(r);
}

TEST(refusals)
{
	char pt[4200];
	static const char v1_src[] =
		"#include <stdint.h>\n#include \"hml/cmodel.h\"\n"
		"static int f(const float *x, float *y, int64_t r)\n"
		"{ (void)x; for (int64_t i = 0; i < 3 * r; i++) y[i] = 0.5f; return 0; }\n"
		"static int d(const double *x, double *y, int64_t r)\n"
		"{ (void)x; for (int64_t i = 0; i < 3 * r; i++) y[i] = 0.5; return 0; }\n"
		"__attribute__((visibility(\"default\"))) const hml_cmodel_v1_info hml_cmodel_v1 = {\n"
		"HML_CMODEL_MAGIC, 1, sizeof(hml_cmodel_v1_info), 1, HML_CMODEL_V1_TAG, 1, 1, {3},"
		" {3}, 3, 3, \"old\", \"\", \"mlp:0:relu\", f, d };\n";
	char cmd[8192];

	snprintf(pt, sizeof(pt), "%s/identity.pt", models_dir);
	refused(so_a, guard_file("other.json", "bounds", 2.0), HML_EINVALID,
	        "was made for another model");
	refused(pt, "bounds", HML_ENOTSUPPORTED, "a TorchScript model carries no input statistics");
	write_text(tmp_path("v1.c"), v1_src);
	snprintf(so_v1, sizeof(so_v1), "%s", tmp_path("v1.so"));
	snprintf(cmd, sizeof(cmd), "cc -std=c11 -fPIC -shared -fvisibility=hidden -I'%s/runtime/include' "
	         "-o '%s' '%s'", getenv("HML_SOURCE_DIR") ? getenv("HML_SOURCE_DIR") : ".",
	         so_v1, tmp_path("v1.c"));
	CHECK(system(cmd) == 0);
	refused(so_v1, "distance", HML_ENOTSUPPORTED, "(ABI version 1) carries no input statistics");
	refused(so_none, "bounds", HML_ENOTSUPPORTED, "carries no input statistics (its card had none");
	refused(so_a, "ensemble", HML_ENOTSUPPORTED, "members' files");
	refused(so_a, "bounds:margin=-1", HML_EINVALID, "malformed guard");
	refused(so_a, "./bounds", HML_EIO, "cannot read guard './bounds'");
	/* a guard file with a model that carries nothing to check it against: used */
	{
		double x[N][F], y[N][F];
		hml_region *r = open_region("v1", so_v1, guard_file("a.json", "bounds", 1.0),
		                            HML_ON_ERROR_FAIL, &x[0][0], &y[0][0]);
		CHECK(r != NULL);
		hml_region_free(r);
	}
}

static void pause_ms(int ms)
{
	struct timespec t = { 0, (long)ms * 1000000L };
	nanosleep(&t, NULL);
}

static void deploy(int k, const char *model, const char *path, const char *guard)
{
	hml__deployfile d;

	memset(&d, 0, sizeof(d));
	snprintf(d.region, sizeof(d.region), "sw");
	snprintf(d.deployment, sizeof(d.deployment), "p%d", k);
	snprintf(d.model, sizeof(d.model), "%s", model);
	snprintf(d.path, sizeof(d.path), "%s", path);
	snprintf(d.guard, sizeof(d.guard), "%s", guard ? guard : "");
	CHECK_OK(hml__deployfile_write(tmpdir, &d));
}

/* Calls until y[0][0] is `want` (the swap is seen at a call's begin). */
static int calls_until(hml_region *r, double (*x)[F], double (*y)[F], double want)
{
	for (int k = 0; k < 400; k++) {
		call(r, x, y);
		if (y[0][0] == want)
			return 1;
		pause_ms(2);
	}
	return 0;
}

/* The spec follows the model: after a swap to a model trained on [0, 2],
 * a row at 1.5 is the model's; a next model without statistics, or a
 * deployment whose guard file is another model's, is refused. */
TEST(swap)
{
	double x[N][F], y[N][F];
	char name[HML__ENVNAME_MAX], rel[128], path[4200];
	char *text_b = card_text(2.0), *text_a = card_text(1.0);
	hml_region *r;
	hml_region_stats st;

	CHECK_OK(build(so_b, sizeof(so_b), "gb", text_b, 0.25f));
	CHECK_OK(build(so_a2, sizeof(so_a2), "ga2", text_a, 0.75f));
	hml__envname_region(name, sizeof(name), HML__ENV_DEPLOYMENT, "sw");
	hml__deployfile_rel(rel, sizeof(rel), "sw");
	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	setenv(name, path, 1);
	setenv(HML__ENV_SWAP_INTERVAL, "1", 1);
	deploy(1, "ga", so_a, NULL);
	r = open_region("sw", so_a, "bounds", HML_ON_ERROR_FAIL, &x[0][0], &y[0][0]);
	if (!r)
		goto done;
	CHECK_OK(hml_region_subset_enable(r));
	rows_in_box(x, 1.0);
	x[0][0] = 1.5;
	CHECK_EQ_INT(call(r, x, y), 1);
	CHECK(y[0][0] == 4.0 && y[1][0] == 0.5);   /* row 0 guarded by [0, 1] */
	warnings = 0;
	deploy(2, "gb", so_b, NULL);
	CHECK(calls_until(r, x, y, 0.25));   /* the model of [0, 2]: row 0 is its own */
	CHECK(y[1][0] == 0.25);
	CHECK_EQ_INT(warnings, 0);
	x[0][0] = 2.5;
	CHECK_EQ_INT(call(r, x, y), 1);
	CHECK(y[0][0] == 6.0);
	/* no statistics for the spec: refused, the old pair stays */
	deploy(3, "gnone", so_none, NULL);
	for (int k = 0; k < 50 && warnings == 0; k++) {
		call(r, x, y);
		pause_ms(2);
	}
	CHECK_EQ_INT(warnings, 1);
	CHECK(strstr(last_warning, "new deployment refused, keeping model 'gb'") != NULL);
	CHECK(strstr(last_warning, "carries no input statistics") != NULL);
	x[0][0] = 1.5;
	call(r, x, y);
	CHECK(y[0][0] == 0.25);
	/* a guard file of another model: refused */
	deploy(4, "ga2", so_a2, guard_file("b.json", "bounds", 2.0));
	for (int k = 0; k < 50 && warnings == 1; k++) {
		call(r, x, y);
		pause_ms(2);
	}
	CHECK_EQ_INT(warnings, 2);
	CHECK(strstr(last_warning, "was made for another model") != NULL);
	call(r, x, y);
	CHECK(y[1][0] == 0.25);
	/* its own guard file: taken, with its model */
	deploy(5, "ga2", so_a2, guard_file("a2.json", "bounds", 1.0));
	CHECK(calls_until(r, x, y, 4.0));   /* row 0 at 1.5 guarded again */
	CHECK(y[1][0] == 0.75);
	memset(&st, 0, sizeof(st));
	CHECK_OK(hml_region_stats_get(r, &st));
	CHECK(st.guarded_rows >= 3);
	hml_region_free(r);
done:
	unsetenv(name);
	free(text_a);
	free(text_b);
}

int main(void)
{
	const char *m = getenv("HML_TEST_MODELS");

	snprintf(models_dir, sizeof(models_dir), "%s", m ? m : "tests/models");
	unsetenv("HML_GUARD");   /* the options name the guard here */
	hml_set_log_handler(on_log, NULL);
	if (tmp_dir_make("guard_embed") < 0)
		return 1;
	RUN(value_kind);
	RUN(round_trip);
	RUN(resolve);
	RUN(spec_resolved);
	RUN(refusals);
	RUN(swap);
	tmp_dir_remove();
	return check_report();
}
