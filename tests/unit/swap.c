/*
 * tests/unit/swap.c - hot swap (the runtime's swap.c): a region running
 * calls, batch calls and row calls from several threads, while another
 * thread deploys models of constant outputs (compiled with
 * lib/deploy/cbuild.h) one after the other: no call ever mixes two models
 * (every output of a batch call, every output of a row, from one model),
 * and once the last deployment is seen every call runs on it. Deployments
 * that cannot be used (another output or input shape, a corrupt or
 * missing deployment file, a missing model file) are refused: the region
 * keeps its model, warns once per deployment, counts them. A deployment's
 * guard comes and goes with its model: no call, batch or row, runs one
 * model with another deployment's guard; a missing, corrupt or misshapen
 * guard file refuses the deployment, the old pair stays.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "core/deployfile.h"
#include "core/envname.h"
#include "core/guard.h"
#include "deploy/cbuild.h"
#include "deploy/codegen.h"
#include "fixtures.h"
#include "hml/hml.h"
#include "region_internal.h"
#include "rowguard.h"

#define ROWS 256
#define THREADS 4

static double x[ROWS][3], y[ROWS][3];
static char model_a[600], model_b[600], model_wide[600], model_in3[600];
static int warnings, swaps_logged;

static void on_log(hml_log_level level, const char *message, void *payload)
{
	(void)payload;
	if (level == HML_LOG_WARNING && strstr(message, "new deployment refused"))
		__atomic_fetch_add(&warnings, 1, __ATOMIC_RELAXED);
	else if (level == HML_LOG_WARNING)
		fprintf(stderr, "unexpected warning: %s\n", message);
	if (level == HML_LOG_INFO && strstr(message, "now running model"))
		__atomic_fetch_add(&swaps_logged, 1, __ATOMIC_RELAXED);
}

/* A compiled model of `nin` inputs whose `nout` outputs are all `value`. */
static int build(char *so, size_t size, const char *id, int64_t nin, int64_t nout, float value)
{
	hml__cg_options o = { id, NULL, NULL };
	hml__cbuild_info info;
	hml__cg_model m;
	int64_t sizes[2] = { nin, nout };
	char c[600];
	int rc;

	snprintf(c, sizeof(c), "%s.c", tmp_path(id));
	snprintf(so, size, "%s.so", tmp_path(id));
	if ((rc = hml__cg_model_init(&m, HML__CG_MLP, 1, sizes, 0)) == 0) {
		for (int64_t k = 0; k < nin; k++)
			m.in_std[k] = 1;
		for (int64_t k = 0; k < nout; k++) {
			m.out_std[k] = 1;
			m.out_mean[k] = value;
		}
		m.in_ndim = m.out_ndim = 1;
		m.in_shape[0] = nin;
		m.out_shape[0] = nout;
		snprintf(m.arch, sizeof(m.arch), "mlp:0:relu");
		rc = hml__cbuild_so(&m, &o, NULL, c, NULL, so, &info);
		hml__cbuild_info_release(&info);
	}
	hml__cg_model_release(&m);
	return rc;
}

static char guard_unit[600], guard_wide[600], guard_3[600];

/* A bounds guard file over `f` features, each in [0, hi]. */
static int guard_file(char *path, size_t size, const char *name, int64_t f, double hi)
{
	hml__guard_stats st;
	hml__guard_spec sp = { HML__GUARD_BOUNDS, 0, 0 };
	hml__guard g;
	json_t *j = NULL;
	int rc;

	snprintf(path, size, "%s", tmp_path(name));
	memset(&st, 0, sizeof(st));
	st.features = f;
	st.rows = 100;
	st.min = calloc((size_t)f, sizeof(double));
	st.max = calloc((size_t)f, sizeof(double));
	for (int64_t k = 0; k < f; k++)
		st.max[k] = hi;
	if ((rc = hml__guard_make(&g, &sp, &st)) == 0) {
		j = hml__guard_file_json(&g);
		rc = j && json_dump_file(j, path, 0) == 0 ? 0 : -1;
		hml__guard_release(&g);
	}
	json_decref(j);
	hml__guard_stats_release(&st);
	return rc;
}

/* Deployment p<k> of `model` at `path`, its guard file (NULL: none), its
 * run's steps per call `rk` (0: none) and interleave `n` (-1: none). */
static void deploy_run(const char *label, int k, const char *model, const char *path,
                       const char *guard, long long rk, long long n)
{
	hml__deployfile d;

	memset(&d, 0, sizeof(d));
	d.k = rk;
	d.interleave = n;
	snprintf(d.guard, sizeof(d.guard), "%s", guard ? guard : "");
	snprintf(d.region, sizeof(d.region), "%s", label);
	snprintf(d.deployment, sizeof(d.deployment), "p%d", k);
	snprintf(d.model, sizeof(d.model), "%s", model);
	snprintf(d.path, sizeof(d.path), "%s", path);
	CHECK_OK(hml__deployfile_write(tmpdir, &d));
}

static void deploy_guarded(const char *label, int k, const char *model, const char *path,
                           const char *guard)
{
	deploy_run(label, k, model, path, guard, 0, -1);
}

static void deploy(const char *label, int k, const char *model, const char *path)
{
	deploy_guarded(label, k, model, path, NULL);
}

static const char *deployfile(char *buf, size_t size, const char *label)
{
	char rel[128];

	hml__deployfile_rel(rel, sizeof(rel), label);
	snprintf(buf, size, "%s/%s", tmpdir, rel);
	return buf;
}

/* Region `label` in infer mode on model_a, watching its deployment file
 * every millisecond; `nin` inputs, two outputs per row. */
static hml_region *open_watching(const char *label, int nin)
{
	hml_region_options o;
	hml_region *r = NULL;
	hml_array ax = HML_ARRAY_2D(&x[0][0], HML_F64, ROWS, 3);
	hml_array ay = HML_ARRAY_2D(&y[0][0], HML_F64, ROWS, 3);
	hml_symbol n = { "N", ROWS };
	char name[HML__ENVNAME_MAX], path[700], in[64];

	hml__envname_region(name, sizeof(name), HML__ENV_DEPLOYMENT, label);
	setenv(name, deployfile(path, sizeof(path), label), 1);
	setenv(HML__ENV_SWAP_INTERVAL, "1", 1);
	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = HML_MODE_INFER;
	o.model = model_a;
	o.on_error = HML_ON_ERROR_FAIL;
	CHECK_OK(hml_region_open(&r, label, &o));
	if (!r)
		return NULL;
	snprintf(in, sizeof(in), "[i, 0:%d] = ([i, 0:%d])", nin, nin);
	CHECK_EQ_INT(hml_region_input(r, in, "0:N", &ax, 1, &n, 1), 0);
	CHECK_EQ_INT(hml_region_output(r, "[i, 0:2] = ([i, 0:2])", "0:N", &ay, 1, &n, 1), 0);
	return r;
}

/* The value every output holds, or -1 when they differ. */
static double batch_value(void)
{
	double v = y[0][0];

	for (int i = 0; i < ROWS; i++)
		if (y[i][0] != v || y[i][1] != v)
			return -1;
	return v;
}

/* One batch call: the value every output holds, or -1 when they differ. */
static double batch_call(hml_region *r)
{
	for (int i = 0; i < ROWS; i++)
		y[i][0] = y[i][1] = -7;
	CHECK_EQ_INT(hml_region_begin(r), 0);
	CHECK_OK(hml_region_end(r));
	return batch_value();
}

static void pause_ms(int ms)
{
	struct timespec t = { 0, (long)ms * 1000000L };
	nanosleep(&t, NULL);
}

typedef struct flipper {
	const char *label;
	int rounds, last;     /* last: 1 = b */
	volatile int done;
} flipper;

static void *flip(void *arg)
{
	flipper *f = arg;

	for (int k = 0; k < f->rounds; k++) {
		f->last = k % 2 == 0;
		deploy(f->label, k + 2, f->last ? "cb" : "ca", f->last ? model_b : model_a);
		pause_ms(3);
	}
	__atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int swaps_consistent(hml_region *r)
{
	const hml__profile_swaps *s = &r->swap.log;
	uint64_t last = 0;

	for (size_t k = 0; k < s->n; k++) {
		if (strcmp(s->at[k].from, s->at[k].to) == 0 || s->at[k].call < last)
			return 0;
		if (k > 0 && strcmp(s->at[k].from, s->at[k - 1].to) != 0)
			return 0;
		last = s->at[k].call;
	}
	return 1;
}

TEST(batch_calls_during_swaps)
{
	flipper f = { "swapb", 9, 0, 0 };
	hml_region *r;
	pthread_t t;
	int torn = 0, seen[3] = { 0 }, calls = 0;
	double v;

	deploy("swapb", 1, "ca", model_a);
	if (!(r = open_watching("swapb", 2)))
		return;
	CHECK(batch_call(r) == 1.0);
	CHECK(pthread_create(&t, NULL, flip, &f) == 0);
	while (!__atomic_load_n(&f.done, __ATOMIC_ACQUIRE) || calls < 50) {
		v = batch_call(r);
		torn += v != 1.0 && v != 2.0;
		seen[v == 1.0 ? 1 : v == 2.0 ? 2 : 0]++;
		calls++;
	}
	pthread_join(t, NULL);
	CHECK_EQ_INT(torn, 0);
	CHECK(seen[2] > 0);
	pause_ms(5);
	CHECK(batch_call(r) == (f.last ? 2.0 : 1.0));
	CHECK(r->swap.log.done >= 2);
	CHECK(swaps_consistent(r));
	CHECK_STR(r->swap.model, f.last ? "cb" : "ca");
	CHECK_EQ_INT(r->swap.log.refused, 0);
	hml_region_free(r);
}

typedef struct rower {
	hml_region *r;
	int t;
	flipper *f;
	int passes, torn, errors, final;
} rower;

/* Row calls over this thread's rows until the flipper is done, then one
 * pass more once its last deployment had time to be seen. */
static void *rows_run(void *arg)
{
	rower *w = arg;
	int lo = w->t * ROWS / THREADS, hi = (w->t + 1) * ROWS / THREADS, last = 0;

	while (!last) {
		last = __atomic_load_n(&w->f->done, __ATOMIC_ACQUIRE) && w->passes > 20;
		if (last)
			pause_ms(5);
		for (int i = lo; i < hi; i++) {
			y[i][0] = y[i][1] = -7;
			if (hml_region_row_begin(w->r, i) != 0)
				w->errors++;
			w->errors += hml_region_row_end(w->r) != 0;
			w->torn += y[i][0] != y[i][1] || (y[i][0] != 1.0 && y[i][0] != 2.0);
			if (last)
				w->final += y[i][0] == (w->f->last ? 2.0 : 1.0);
		}
		w->passes++;
	}
	return NULL;
}

TEST(row_calls_from_threads_during_swaps)
{
	flipper f = { "swapr", 12, 0, 0 };
	rower w[THREADS];
	pthread_t t[THREADS], ft;
	hml_region *r;
	int final = 0;

	deploy("swapr", 1, "ca", model_a);
	if (!(r = open_watching("swapr", 2)))
		return;
	CHECK(pthread_create(&ft, NULL, flip, &f) == 0);
	for (int k = 0; k < THREADS; k++) {
		w[k] = (rower){ r, k, &f, 0, 0, 0, 0 };
		CHECK(pthread_create(&t[k], NULL, rows_run, &w[k]) == 0);
	}
	pthread_join(ft, NULL);
	for (int k = 0; k < THREADS; k++) {
		pthread_join(t[k], NULL);
		CHECK_EQ_INT(w[k].torn, 0);
		CHECK_EQ_INT(w[k].errors, 0);
		final += w[k].final;
	}
	CHECK_EQ_INT(final, ROWS);
	CHECK(r->swap.log.done >= 2);
	CHECK(swaps_consistent(r));
	CHECK_EQ_INT(r->swap.log.refused, 0);
	hml_region_free(r);
}

TEST(bad_deployments_refused)
{
	const char *label = "swapbad";
	hml_region *r;
	char path[700], missing[700];
	int k = 2;

	warnings = 0;
	deploy(label, 1, "ca", model_a);
	if (!(r = open_watching(label, 2)))
		return;
	CHECK(batch_call(r) == 1.0);
	CHECK_EQ_INT(warnings, 0);
	/* three outputs per row, three inputs per row */
	deploy(label, k++, "cw", model_wide);
	pause_ms(3);
	CHECK(batch_call(r) == 1.0);
	CHECK(batch_call(r) == 1.0);
	CHECK_EQ_INT(warnings, 1);
	deploy(label, k++, "c3", model_in3);
	pause_ms(3);
	CHECK(batch_call(r) == 1.0);
	CHECK_EQ_INT(warnings, 2);
	/* a model file that is not there */
	snprintf(missing, sizeof(missing), "%s/none.so", tmpdir);
	deploy(label, k++, "cx", missing);
	pause_ms(3);
	CHECK(batch_call(r) == 1.0);
	CHECK_EQ_INT(warnings, 3);
	/* another region's deployment file where this one's should be */
	{
		hml__deployfile other;

		memset(&other, 0, sizeof(other));
		snprintf(other.region, sizeof(other.region), "elsewhere");
		snprintf(other.deployment, sizeof(other.deployment), "p%d", k++);
		snprintf(other.model, sizeof(other.model), "cb");
		snprintf(other.path, sizeof(other.path), "%s", model_b);
		CHECK_OK(hml__deployfile_write(tmpdir, &other));
		CHECK(rename(deployfile(missing, sizeof(missing), "elsewhere"),
		             deployfile(path, sizeof(path), label)) == 0);
	}
	pause_ms(3);
	CHECK(batch_call(r) == 1.0);
	CHECK_EQ_INT(warnings, 4);
	/* a corrupt deployment file, then none */
	write_text(deployfile(path, sizeof(path), label), "{\"schema_version\": 1, \"reg");
	pause_ms(3);
	CHECK(batch_call(r) == 1.0);
	CHECK_EQ_INT(warnings, 5);
	CHECK(unlink(path) == 0);
	pause_ms(3);
	CHECK(batch_call(r) == 1.0);
	CHECK(batch_call(r) == 1.0);
	CHECK_EQ_INT(warnings, 6);
	CHECK_EQ_INT(r->swap.log.refused, 6);
	CHECK_EQ_INT(r->swap.log.done, 0);
	CHECK_STR(r->swap.model, "ca");
	/* and a good one still swaps */
	deploy(label, k++, "cb", model_b);
	pause_ms(3);
	CHECK(batch_call(r) == 2.0);
	CHECK_EQ_INT(r->swap.log.done, 1);
	CHECK_STR(r->swap.log.at[0].from, "ca");
	CHECK_STR(r->swap.log.at[0].to, "cb");
	CHECK_EQ_INT(r->swap.log.at[0].call, 9);   /* calls completed before */
	CHECK_EQ_INT(warnings, 6);
	hml_region_free(r);
}

/* The region's model under another name than the deployment file's
 * (a relative or roundabout HML_MODEL): the same file, no swap. */
TEST(same_model_under_another_name)
{
	hml_region *r;
	char other[700];
	const char *slash = strrchr(model_a, '/');

	warnings = 0;
	deploy("swapsame", 1, "ca", model_a);
	if (!(r = open_watching("swapsame", 2)))
		return;
	snprintf(other, sizeof(other), "%.*s/.%s", (int)(slash - model_a), model_a, slash);
	free(r->cfg.model);   /* as if HML_MODEL had said it so */
	r->cfg.model = strdup(other);
	CHECK(batch_call(r) == 1.0);
	CHECK(batch_call(r) == 1.0);
	CHECK_EQ_INT(r->swap.log.done, 0);
	CHECK_EQ_INT(warnings, 0);
	CHECK_STR(r->swap.model, "ca");
	hml_region_free(r);
}

/* One call; 1 when it ran the model (its value checked), 0 the original code. */
static int model_call(hml_region *r, double want)
{
	int go = hml_region_begin(r);

	CHECK(go == 0 || go == 1);
	CHECK_OK(hml_region_end(r));
	if (go == 0)
		CHECK(batch_value() == want);
	return go == 0;
}

/* An iterative run (swap.h): the application's k, learned from the
 * deployment it was started by, refuses a model of another k; the
 * interleave of a new deployment, or of the model in use redeployed, is
 * adopted (0: infer); a deployment without them changes nothing. */
TEST(run_k_and_interleave)
{
	hml_region *r;
	int models = 0;

	warnings = 0;
	deploy_run("swapk", 1, "ca", model_a, NULL, 4, 0);
	if (!(r = open_watching("swapk", 2)))
		return;
	CHECK(batch_call(r) == 1.0);   /* the first look: k 4 */
	CHECK(r->swap.k == 4);
	deploy_run("swapk", 2, "cb", model_b, NULL, 8, 0);
	pause_ms(5);
	CHECK(batch_call(r) == 1.0);
	CHECK(batch_call(r) == 1.0);
	CHECK_EQ_INT(r->swap.log.refused, 1);
	CHECK_EQ_INT(warnings, 1);
	CHECK_STR(r->swap.model, "ca");
	/* k 4 at interleave 2: the model and the mode switched together */
	deploy_run("swapk", 3, "cb", model_b, NULL, 4, 2);
	pause_ms(5);
	for (int i = 0; i < 9; i++)
		models += model_call(r, 2.0);
	CHECK_EQ_INT(r->swap.log.done, 1);
	CHECK(r->cfg.mode == HML_MODE_INTERLEAVE && r->cfg.interleave == 2);
	CHECK_EQ_INT(models, 6);
	/* the model in use at interleave 0: infer, no swap */
	deploy_run("swapk", 4, "cb", model_b, NULL, 4, 0);
	pause_ms(5);
	models = 0;
	for (int i = 0; i < 6; i++)
		models += model_call(r, 2.0);
	CHECK(r->cfg.mode == HML_MODE_INFER);
	CHECK_EQ_INT(models, 6);
	/* a model without a k, without an interleave: swapped, the mode kept */
	deploy_run("swapk", 5, "ca", model_a, NULL, 0, -1);
	pause_ms(5);
	CHECK(batch_call(r) == 1.0);
	CHECK(r->cfg.mode == HML_MODE_INFER);
	CHECK_EQ_INT(r->swap.log.done, 2);
	CHECK_EQ_INT(r->swap.log.refused, 1);
	CHECK_EQ_INT(warnings, 1);
	hml_region_free(r);
}

/* Without HML_DEPLOYMENT a region never looks; with a region whose model
 * never loaded, it does not either (it has no buffers for one). */
TEST(not_watching)
{
	hml_region *r;
	char name[HML__ENVNAME_MAX];

	hml__envname_region(name, sizeof(name), HML__ENV_DEPLOYMENT, "nowatch");
	unsetenv(name);
	unsetenv(HML__ENV_DEPLOYMENT);
	{
		hml_region_options o;
		hml_array ax = HML_ARRAY_2D(&x[0][0], HML_F64, ROWS, 3);
		hml_array ay = HML_ARRAY_2D(&y[0][0], HML_F64, ROWS, 3);
		hml_symbol n = { "N", ROWS };

		CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
		o.mode = HML_MODE_INFER;
		o.model = model_a;
		CHECK_OK(hml_region_open(&r, "nowatch", &o));
		if (!r)
			return;
		CHECK(!r->swap.on);
		CHECK_STR(r->swap.model, "ca");   /* the id of its path */
		CHECK_EQ_INT(hml_region_input(r, "[i, 0:2] = ([i, 0:2])", "0:N", &ax, 1, &n, 1), 0);
		CHECK_EQ_INT(hml_region_output(r, "[i, 0:2] = ([i, 0:2])", "0:N", &ay, 1, &n, 1), 0);
		CHECK(batch_call(r) == 1.0);
		hml_region_free(r);
	}
}

/* One batch call over rows of value v: the model's value when it
 * answered, 3 when the original code ran (the guard sent the call). */
static double guarded_call(hml_region *r, double v)
{
	int go;

	for (int i = 0; i < ROWS; i++)
		x[i][0] = x[i][1] = v;
	go = hml_region_begin(r);
	CHECK(go == 0 || go == 1);
	if (go == 1)
		for (int i = 0; i < ROWS; i++)
			y[i][0] = y[i][1] = 3.0;
	CHECK_OK(hml_region_end(r));
	return batch_value();
}

TEST(guard_follows_model)
{
	const char *label = "swapguard";
	char name[HML__ENVNAME_MAX], bad[700];
	hml_region *r;
	int k = 2;

	warnings = 0;
	hml__envname_region(name, sizeof(name), HML__ENV_GUARD, label);
	setenv(name, guard_unit, 1);
	deploy_guarded(label, 1, "ca", model_a, guard_unit);
	r = open_watching(label, 2);
	unsetenv(name);
	if (!r)
		return;
	CHECK(guarded_call(r, 0.5) == 1.0);
	CHECK(guarded_call(r, 5.0) == 3.0);      /* outside [0, 1]: the original code */
	CHECK_STR(hml__guard_spec_text(r), "bounds:margin=0");
	deploy_guarded(label, k++, "cb", model_b, guard_wide);
	pause_ms(3);
	CHECK(guarded_call(r, 5.0) == 2.0);      /* the new model, checked by its own guard */
	CHECK(guarded_call(r, 50.0) == 3.0);
	CHECK_EQ_INT(r->stats.guarded_calls, 2);
	/* a deployment without a guard removes it */
	deploy_guarded(label, k++, "ca", model_a, NULL);
	pause_ms(3);
	CHECK(guarded_call(r, 50.0) == 1.0);
	CHECK(hml__guard_spec_text(r) == NULL);
	/* and one with a guard brings one back */
	deploy_guarded(label, k++, "cb", model_b, guard_unit);
	pause_ms(3);
	CHECK(guarded_call(r, 5.0) == 3.0);
	CHECK(guarded_call(r, 0.5) == 2.0);
	CHECK_EQ_INT(r->swap.log.done, 3);
	CHECK_EQ_INT(warnings, 0);
	/* a missing, a corrupt, a misshapen guard file: refused, the pair stays */
	snprintf(bad, sizeof(bad), "%s/none.json", tmpdir);
	deploy_guarded(label, k++, "ca", model_a, bad);
	pause_ms(3);
	CHECK(guarded_call(r, 5.0) == 3.0);
	CHECK(guarded_call(r, 0.5) == 2.0);
	CHECK_EQ_INT(warnings, 1);
	snprintf(bad, sizeof(bad), "%s", tmp_path("corrupt-guard.json"));
	write_text(bad, "{\"schema_version\": 1, \"spec\"");
	deploy_guarded(label, k++, "ca", model_a, bad);
	pause_ms(3);
	CHECK(guarded_call(r, 5.0) == 3.0);
	CHECK_EQ_INT(warnings, 2);
	deploy_guarded(label, k++, "ca", model_a, guard_3);
	pause_ms(3);
	CHECK(guarded_call(r, 5.0) == 3.0);
	CHECK(guarded_call(r, 0.5) == 2.0);
	CHECK_EQ_INT(warnings, 3);
	CHECK_EQ_INT(r->swap.log.refused, 3);
	CHECK_EQ_INT(r->swap.log.done, 3);
	CHECK_STR(r->swap.model, "cb");
	CHECK_STR(hml__guard_spec_text(r), "bounds:margin=0");
	hml_region_free(r);
}

static void *flip_guarded(void *arg)
{
	flipper *f = arg;

	for (int k = 0; k < f->rounds; k++) {
		f->last = k % 2 == 0;
		deploy_guarded(f->label, k + 2, f->last ? "cb" : "ca", f->last ? model_b : model_a,
		               f->last ? guard_wide : guard_unit);
		pause_ms(3);
	}
	__atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Rows of 5 from threads while (ca, [0, 1]) and (cb, [0, 10]) take turns:
 * a row sees 3 (ca's guard sent it to the original code) or 2 (cb
 * answered under its guard), never 1 (ca under cb's guard). */
static void *guarded_rows_run(void *arg)
{
	rower *w = arg;
	int lo = w->t * ROWS / THREADS, hi = (w->t + 1) * ROWS / THREADS, last = 0, go;

	while (!last) {
		last = __atomic_load_n(&w->f->done, __ATOMIC_ACQUIRE) && w->passes > 20;
		if (last)
			pause_ms(5);
		for (int i = lo; i < hi; i++) {
			y[i][0] = y[i][1] = -7;
			if ((go = hml_region_row_begin(w->r, i)) == 1)
				y[i][0] = y[i][1] = 3.0;
			w->errors += go < 0;
			w->errors += hml_region_row_end(w->r) != 0;
			w->torn += y[i][0] != y[i][1] || (y[i][0] != 3.0 && y[i][0] != 2.0);
			if (last)
				w->final += y[i][0] == (w->f->last ? 2.0 : 3.0);
		}
		w->passes++;
	}
	return NULL;
}

TEST(row_calls_switch_guard_with_model)
{
	flipper f = { "swapgr", 12, 0, 0 };
	rower w[THREADS];
	pthread_t t[THREADS], ft;
	char name[HML__ENVNAME_MAX];
	hml_region *r;
	int final = 0;

	hml__envname_region(name, sizeof(name), HML__ENV_GUARD, f.label);
	setenv(name, guard_unit, 1);
	deploy_guarded(f.label, 1, "ca", model_a, guard_unit);
	r = open_watching(f.label, 2);
	unsetenv(name);
	if (!r)
		return;
	for (int i = 0; i < ROWS; i++)
		x[i][0] = x[i][1] = 5.0;
	CHECK(pthread_create(&ft, NULL, flip_guarded, &f) == 0);
	for (int k = 0; k < THREADS; k++) {
		w[k] = (rower){ r, k, &f, 0, 0, 0, 0 };
		CHECK(pthread_create(&t[k], NULL, guarded_rows_run, &w[k]) == 0);
	}
	pthread_join(ft, NULL);
	for (int k = 0; k < THREADS; k++) {
		pthread_join(t[k], NULL);
		CHECK_EQ_INT(w[k].torn, 0);
		CHECK_EQ_INT(w[k].errors, 0);
		final += w[k].final;
	}
	CHECK_EQ_INT(final, ROWS);
	CHECK(r->swap.log.done >= 2);
	CHECK_EQ_INT(r->swap.log.refused, 0);
	hml_region_free(r);
}

int main(void)
{
	if (tmp_dir_make("swap") < 0)
		return 1;
	hml_set_log_handler(on_log, NULL);
	if (build(model_a, sizeof(model_a), "ca", 2, 2, 1.0f) < 0 ||
	    build(model_b, sizeof(model_b), "cb", 2, 2, 2.0f) < 0 ||
	    build(model_wide, sizeof(model_wide), "cw", 2, 3, 1.0f) < 0 ||
	    build(model_in3, sizeof(model_in3), "c3", 3, 2, 1.0f) < 0) {
		fprintf(stderr, "cannot build the test models: %s\n", hml_error_last()->message);
		return 1;
	}
	if (guard_file(guard_unit, sizeof(guard_unit), "unit.guard.json", 2, 1.0) < 0 ||
	    guard_file(guard_wide, sizeof(guard_wide), "wide.guard.json", 2, 10.0) < 0 ||
	    guard_file(guard_3, sizeof(guard_3), "three.guard.json", 3, 10.0) < 0) {
		fprintf(stderr, "cannot write the test guards: %s\n", hml_error_last()->message);
		return 1;
	}
	RUN(batch_calls_during_swaps);
	RUN(row_calls_from_threads_during_swaps);
	RUN(bad_deployments_refused);
	RUN(same_model_under_another_name);
	RUN(run_k_and_interleave);
	RUN(not_watching);
	RUN(guard_follows_model);
	RUN(row_calls_switch_guard_with_model);
	tmp_dir_remove();
	return check_report();
}
