/*
 * tests/unit/region.c - execution control through the public API only
 * (the runtime's region.c, config.c, profile.c): settings from options and
 * the environment, the five modes, the failure policy and the log handler.
 * Models come from the `models` fixture ($HML_TEST_MODELS, made by
 * tests/python/make_models.py); scratch files go to $HML_TEST_TMP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "fixtures.h"
#include "hml/hml.h"
#include "reference.h"

#define N 8

static const char *models_dir;

/* "$HML_TEST_MODELS/file" into `buf`. */
static const char *model_path(char *buf, size_t size, const char *file)
{
	snprintf(buf, size, "%s/%s", models_dir, file);
	return buf;
}

/* Every setting the runtime reads, globally and for the labels used here. */
static void env_clear(void)
{
	static const char *const keys[] = { "MODE", "MODEL", "DB", "INTERLEAVE",
		"SHADOW", "THREADS", "ON_ERROR", "PROFILE", "FLUSH_SECONDS", "FLUSH_BYTES",
		"DEVICE", "GUARD" };
	static const char *const labels[] = { "", "_MY_REGION_1", "_OTHER", "_R" };
	char name[128];
	size_t k, l;

	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		for (l = 0; l < sizeof(labels) / sizeof(labels[0]); l++) {
			snprintf(name, sizeof(name), "HML_%s%s", keys[k], labels[l]);
			unsetenv(name);
		}
}

/* A log handler that counts and keeps the last message. */
typedef struct logbook {
	int warnings, infos;
	char last[1024];
} logbook;

static logbook book;

static void count_log(hml_log_level level, const char *message, void *payload)
{
	logbook *b = payload;

	if (level == HML_LOG_WARNING)
		b->warnings++;
	else
		b->infos++;
	snprintf(b->last, sizeof(b->last), "%s", message);
}

static void book_reset(void)
{
	memset(&book, 0, sizeof(book));
}

static hml_region_stats stats_of(const hml_region *r)
{
	hml_region_stats s;

	memset(&s, 0xff, sizeof(s));
	CHECK_OK(hml_region_stats_get(r, &s));
	return s;
}

/* Open with the given mode/model/policy (options; NULL model: none). */
static hml_region *open_with(const char *label, hml_mode mode, const char *model_file,
                             hml_on_error policy)
{
	hml_region_options o;
	hml_region *r = NULL;
	char path[4096];

	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = mode;
	o.on_error = policy;
	if (model_file)
		o.model = model_path(path, sizeof(path), model_file);
	CHECK_OK(hml_region_open(&r, label, &o));
	return r;
}

/* Add `[i, 0:w] = ([i, 0:w])` over a double x[N][w] as input or output. */
static void map_rows(hml_region *r, int output, double *x, int64_t w, int want_index)
{
	hml_array a = HML_ARRAY_2D(x, HML_F64, N, w);
	char functor[64];
	int rc;

	snprintf(functor, sizeof(functor), "[i, 0:%lld] = ([i, 0:%lld])",
	         (long long)w, (long long)w);
	rc = output ? hml_region_output(r, functor, "0:N", &a, 1,
	                                &(hml_symbol){ "N", N }, 1)
	            : hml_region_input(r, functor, "0:N", &a, 1,
	                               &(hml_symbol){ "N", N }, 1);
	CHECK_EQ_INT(rc, want_index);
}

/* Values that float holds exactly, so a float32 model round-trips them. */
static void fill(double *x, size_t n, double base)
{
	size_t k;

	for (k = 0; k < n; k++)
		x[k] = base + 0.25 * (double)k;
}

/* ------------------------------------------------------------------ */

TEST(mode_names)
{
	hml_mode m = HML_MODE_DEFAULT;

	CHECK_STR(hml_mode_name(HML_MODE_OFF), "off");
	CHECK_STR(hml_mode_name(HML_MODE_COLLECT), "collect");
	CHECK_STR(hml_mode_name(HML_MODE_INFER), "infer");
	CHECK_STR(hml_mode_name(HML_MODE_INTERLEAVE), "interleave");
	CHECK_STR(hml_mode_name(HML_MODE_SHADOW), "shadow");
	CHECK(hml_mode_name(HML_MODE_DEFAULT) == NULL);
	CHECK(hml_mode_name((hml_mode)99) == NULL);
	CHECK_OK(hml_mode_parse(&m, "shadow"));
	CHECK_EQ_INT(m, HML_MODE_SHADOW);
	CHECK_OK(hml_mode_parse(&m, "collect"));
	CHECK_EQ_INT(m, HML_MODE_COLLECT);
	CHECK_FAILS(hml_mode_parse(&m, "Infer"), HML_EINVALID, "unknown mode 'Infer'");
	CHECK_EQ_INT(m, HML_MODE_COLLECT);
	CHECK_FAILS(hml_mode_parse(&m, NULL), HML_EINVALID, "unknown mode");
}

TEST(options_init_and_version)
{
	hml_region_options o;
	hml_region *r = (hml_region *)&o;

	memset(&o, 0x5a, sizeof(o));
	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	CHECK_EQ_INT(o.version, HML_REGION_OPTIONS_VERSION);
	CHECK_EQ_INT(o.mode, HML_MODE_DEFAULT);
	CHECK(o.model == NULL && o.db == NULL && o.profile == NULL);
	CHECK_EQ_INT(o.interleave, 0);
	CHECK_EQ_INT(o.on_error, HML_ON_ERROR_DEFAULT);
	CHECK_EQ_INT(o.flush_bytes, 0);
	CHECK(o.shadow == 0.0 && o.threads == 0 && o.flush_seconds == 0.0);
	CHECK(o.guard == NULL);
	CHECK_FAILS(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION + 1),
	            HML_EINVALID, "version 3 is not supported");
	CHECK_FAILS(hml_region_options_init(NULL, HML_REGION_OPTIONS_VERSION),
	            HML_EINVALID, "NULL");

	/* Version 1, the layout before `guard`: initialised and read only up
	 * to flush_bytes (what lies after is the caller's, never touched). */
	memset(&o, 0x5a, sizeof(o));
	CHECK_OK(hml_region_options_init(&o, 1));
	CHECK_EQ_INT(o.version, 1);
	CHECK(o.model == NULL && o.flush_bytes == 0);
	CHECK(o.guard == (const char *)(uintptr_t)0x5a5a5a5a5a5a5a5aULL);
	o.mode = HML_MODE_OFF;
	CHECK_OK(hml_region_open(&r, "v1", &o));
	hml_region_free(r);

	/* A struct from a newer (or garbage) header is refused by open. */
	o.version = 3;
	CHECK_FAILS(hml_region_open(&r, "r", &o), HML_EINVALID, "version 3 is not supported");
	CHECK(r == NULL);
	o.version = 0;
	r = (hml_region *)&o;
	CHECK_FAILS(hml_region_open(&r, "r", &o), HML_EINVALID, "version 0");
	CHECK(r == NULL);
	CHECK_FAILS(hml_region_open(NULL, "r", NULL), HML_EINVALID, "NULL");
}

TEST(labels)
{
	hml_region *r = NULL;
	char longest[65], too_long[66];

	memset(longest, 'a', 64);
	longest[64] = '\0';
	memset(too_long, 'b', 65);
	too_long[65] = '\0';

	CHECK_FAILS(hml_region_open(&r, "has space", NULL), HML_EINVALID,
	            "region label 'has space' has character ' '");
	CHECK(r == NULL);
	CHECK_FAILS(hml_region_open(&r, "a/b", NULL), HML_EINVALID, "character '/'");
	CHECK_FAILS(hml_region_open(&r, "", NULL), HML_EINVALID, "non-empty label");
	CHECK_FAILS(hml_region_open(&r, NULL, NULL), HML_EINVALID, "non-empty label");
	CHECK_FAILS(hml_region_open(&r, too_long, NULL), HML_EINVALID, "longer than 64");
	CHECK(r == NULL);

	CHECK_OK(hml_region_open(&r, longest, NULL));
	CHECK_STR(hml_region_label(r), longest);
	hml_region_free(r);
	r = NULL;
	CHECK_OK(hml_region_open(&r, "Aa_0-9.z", NULL));
	CHECK_STR(hml_region_label(r), "Aa_0-9.z");
	CHECK_EQ_INT(hml_region_mode(r), HML_MODE_OFF);
	hml_region_free(r);
	hml_region_free(NULL);
	CHECK(hml_region_label(NULL) == NULL);
}

TEST(find_by_label)
{
	hml_region *a = NULL, *b = NULL;

	CHECK(hml_region_find("findme") == NULL);
	CHECK(hml_region_find(NULL) == NULL);
	CHECK_OK(hml_region_open(&a, "findme", NULL));
	CHECK(hml_region_find("findme") == a);
	CHECK(hml_region_find("findm") == NULL);
	CHECK_OK(hml_region_open(&b, "findme", NULL));
	CHECK(hml_region_find("findme") == b);
	hml_region_free(b);
	CHECK(hml_region_find("findme") == a);
	hml_region_free(a);
	CHECK(hml_region_find("findme") == NULL);
	CHECK_STR(hml_mode_name(hml_region_mode(hml_region_find("findme"))), "off");
}

TEST(mode_from_env)
{
	hml_region_options o;
	hml_region *r = NULL, *other = NULL;
	char path[4096];

	env_clear();
	/* Default: off. */
	CHECK_OK(hml_region_open(&r, "my-region.1", NULL));
	CHECK_EQ_INT(hml_region_mode(r), HML_MODE_OFF);
	hml_region_free(r);
	r = NULL;

	/* HML_MODE applies to every region. */
	setenv("HML_MODE", "shadow", 1);
	setenv("HML_MODEL", model_path(path, sizeof(path), "identity.pt"), 1);
	CHECK_OK(hml_region_open(&r, "my-region.1", NULL));
	CHECK_EQ_INT(hml_region_mode(r), HML_MODE_SHADOW);
	hml_region_free(r);
	r = NULL;

	/* HML_MODE_<LABEL> (upper-cased, '-' and '.' as '_') wins for its
	 * region only. */
	setenv("HML_MODE", "off", 1);
	setenv("HML_MODE_MY_REGION_1", "interleave", 1);
	CHECK_OK(hml_region_open(&r, "my-region.1", NULL));
	CHECK_OK(hml_region_open(&other, "other", NULL));
	CHECK_EQ_INT(hml_region_mode(r), HML_MODE_INTERLEAVE);
	CHECK_EQ_INT(hml_region_mode(other), HML_MODE_OFF);
	hml_region_free(r);
	hml_region_free(other);
	r = other = NULL;

	/* An empty per-region variable falls through to the global one. */
	setenv("HML_MODE_MY_REGION_1", "", 1);
	setenv("HML_MODE", "infer", 1);
	CHECK_OK(hml_region_open(&r, "my-region.1", NULL));
	CHECK_EQ_INT(hml_region_mode(r), HML_MODE_INFER);
	hml_region_free(r);
	r = NULL;

	/* An options field wins over both variables. */
	setenv("HML_MODE_MY_REGION_1", "interleave", 1);
	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = HML_MODE_OFF;
	CHECK_OK(hml_region_open(&r, "my-region.1", &o));
	CHECK_EQ_INT(hml_region_mode(r), HML_MODE_OFF);
	hml_region_free(r);
	r = NULL;
	CHECK(hml_region_mode(NULL) == HML_MODE_OFF);

	/* An invalid mode number in the options. */
	o.mode = (hml_mode)42;
	CHECK_FAILS(hml_region_open(&r, "my-region.1", &o), HML_EINVALID, "invalid mode 42");
	CHECK(r == NULL);
	env_clear();
}

TEST(bad_settings)
{
	hml_region_options o;
	hml_region *r = NULL;
	char path[4096];

	env_clear();
	setenv("HML_MODE", "fast", 1);
	CHECK_FAILS(hml_region_open(&r, "my-region.1", NULL), HML_EINVALID,
	            "unknown mode 'fast' in HML_MODE ");
	CHECK(r == NULL);
	setenv("HML_MODE_MY_REGION_1", "bogus", 1);
	CHECK_FAILS(hml_region_open(&r, "my-region.1", NULL), HML_EINVALID,
	            "unknown mode 'bogus' in HML_MODE_MY_REGION_1");
	CHECK(r == NULL);
	/* A bad mode is refused whatever the policy. */
	setenv("HML_ON_ERROR", "fallback", 1);
	CHECK_FAILS(hml_region_open(&r, "my-region.1", NULL), HML_EINVALID, "bogus");
	env_clear();

	/* HML_DEVICE misspelt: refused where a model would load, under either
	 * policy (it used to fall back with a warning); ignored without a model. */
	setenv("HML_MODE", "infer", 1);
	setenv("HML_MODEL", model_path(path, sizeof(path), "identity.pt"), 1);
	setenv("HML_DEVICE", "gpu", 1);
	setenv("HML_ON_ERROR", "fallback", 1);
	CHECK_FAILS(hml_region_open(&r, "r", NULL), HML_EINVALID,
	            "HML_DEVICE='gpu' is not auto, cpu or cuda");
	CHECK(r == NULL);
	setenv("HML_MODE", "off", 1);
	CHECK_OK(hml_region_open(&r, "r", NULL));
	hml_region_free(r);
	r = NULL;
	env_clear();

	setenv("HML_ON_ERROR", "maybe", 1);
	CHECK_FAILS(hml_region_open(&r, "r", NULL), HML_EINVALID,
	            "invalid HML_ON_ERROR 'maybe': expected fallback or fail");
	env_clear();
	setenv("HML_INTERLEAVE_R", "two", 1);
	CHECK_FAILS(hml_region_open(&r, "r", NULL), HML_EINVALID, "HML_INTERLEAVE_R 'two'");
	setenv("HML_INTERLEAVE_R", "0", 1);
	CHECK_FAILS(hml_region_open(&r, "r", NULL), HML_EINVALID,
	            "expected an integer from 1 to 1000000000");
	env_clear();
	/* Thread counts are bounded (10000 threads on 2 cores hung in infer mode). */
	setenv("HML_THREADS", "10000", 1);
	CHECK_FAILS(hml_region_open(&r, "r", NULL), HML_EINVALID,
	            "invalid HML_THREADS '10000': expected an integer from 0 to ");
	CHECK_CONTAINS(hml_error_last()->message, "(16 per online core)");
	env_clear();
	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.threads = 100000;
	CHECK_FAILS(hml_region_open(&r, "r", &o), HML_EINVALID, "invalid threads 100000 in options");
	env_clear();
	setenv("HML_SHADOW", "1.5", 1);
	CHECK_FAILS(hml_region_open(&r, "r", NULL), HML_EINVALID, "invalid HML_SHADOW '1.5'");
	setenv("HML_SHADOW", "0", 1);
	CHECK_FAILS(hml_region_open(&r, "r", NULL), HML_EINVALID, "HML_SHADOW '0'");
	env_clear();
	setenv("HML_FLUSH_BYTES", "-3", 1);
	CHECK_FAILS(hml_region_open(&r, "r", NULL), HML_EINVALID, "HML_FLUSH_BYTES '-3'");
	env_clear();
	/* Blanks around a value are refused the same way in every variable. */
	setenv("HML_THREADS", " 4", 1);
	CHECK_FAILS(hml_region_open(&r, "r", NULL), HML_EINVALID, "invalid HML_THREADS ' 4'");
	env_clear();
	setenv("HML_INTERLEAVE", "3 ", 1);
	CHECK_FAILS(hml_region_open(&r, "r", NULL), HML_EINVALID, "invalid HML_INTERLEAVE '3 '");
	env_clear();
	setenv("HML_SHADOW", " 0.5", 1);
	CHECK_FAILS(hml_region_open(&r, "r", NULL), HML_EINVALID, "invalid HML_SHADOW ' 0.5'");
	env_clear();
	setenv("HML_FLUSH_SECONDS", "\t2", 1);
	CHECK_FAILS(hml_region_open(&r, "r", NULL), HML_EINVALID, "invalid HML_FLUSH_SECONDS");
	env_clear();
	setenv("HML_MODE", "infer ", 1);
	CHECK_FAILS(hml_region_open(&r, "r", NULL), HML_EINVALID, "unknown mode 'infer '");
	env_clear();
	setenv("HML_ON_ERROR", " fail", 1);
	CHECK_FAILS(hml_region_open(&r, "r", NULL), HML_EINVALID, "invalid HML_ON_ERROR ' fail'");
	env_clear();
	CHECK(r == NULL);

	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.shadow = 1.5;
	CHECK_FAILS(hml_region_open(&r, "r", &o), HML_EINVALID, "invalid shadow fraction 1.5");
	o.shadow = -0.5;
	CHECK_FAILS(hml_region_open(&r, "r", &o), HML_EINVALID, "invalid shadow fraction");
	/* An options field that is valid wins over a bad variable. */
	setenv("HML_SHADOW", "7", 1);
	o.shadow = 0.5;
	CHECK_OK(hml_region_open(&r, "r", &o));
	hml_region_free(r);
	r = NULL;
	env_clear();

	/* Modes that run a model need one, from the options or the env. */
	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = HML_MODE_INFER;
	CHECK_FAILS(hml_region_open(&r, "r", &o), HML_EINVALID,
	            "region 'r': mode 'infer' needs a model");
	o.mode = HML_MODE_SHADOW;
	CHECK_FAILS(hml_region_open(&r, "r", &o), HML_EINVALID, "mode 'shadow' needs a model");
	o.mode = HML_MODE_DEFAULT;
	setenv("HML_MODE", "interleave", 1);
	CHECK_FAILS(hml_region_open(&r, "r", &o), HML_EINVALID, "needs a model");
	CHECK(r == NULL);
	/* ... and the per-region HML_MODEL_<LABEL> supplies it. */
	setenv("HML_MODEL_R", model_path(path, sizeof(path), "identity.pt"), 1);
	CHECK_OK(hml_region_open(&r, "r", &o));
	CHECK_EQ_INT(hml_region_mode(r), HML_MODE_INTERLEAVE);
	hml_region_free(r);
	env_clear();
}

/* options.model wins over HML_MODEL, and HML_ON_ERROR=fail from the env. */
TEST(model_option_beats_env)
{
	hml_region_options o;
	hml_region *r = NULL;
	char path[4096];

	env_clear();
	setenv("HML_ON_ERROR", "fail", 1);
	setenv("HML_MODEL", model_path(path, sizeof(path), "no-such-model.pt"), 1);
	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = HML_MODE_INFER;
	CHECK_FAILS(hml_region_open(&r, "r", &o), HML_ENOTFOUND, "no-such-model.pt");
	CHECK(r == NULL);
	o.model = model_path(path, sizeof(path), "identity.pt");
	CHECK_OK(hml_region_open(&r, "r", &o));
	CHECK_EQ_INT(hml_region_mode(r), HML_MODE_INFER);
	hml_region_free(r);
	env_clear();
}

/* A program built against an older header passes a smaller struct: it
 * gets the fields it knows, and nothing past them is written. */
static void stats_sizes(const hml_region *r)
{
	union {
		hml_region_stats s;
		unsigned char b[sizeof(hml_region_stats) + 16];
	} u;
	hml_region_stats whole;
	size_t v1 = HML_REGION_STATS_SIZE_V1, k;

	memset(&u, 0xab, sizeof u);
	CHECK_OK(hml_region_stats_get_sized(r, &u.s, v1));
	CHECK_EQ_INT(u.s.calls, 7);
	CHECK_EQ_INT(u.s.original_calls, 7);
	for (k = v1; k < sizeof u.b; k++)
		if (u.b[k] != 0xab)
			break;
	CHECK_EQ_INT(k, sizeof u.b);
	CHECK_FAILS(hml_region_stats_get_sized(r, &u.s, v1 - 1), HML_EINVALID, "the smallest version");
	/* The function itself (programs built before the macro): the whole struct. */
	CHECK_OK((hml_region_stats_get)(r, &whole));
	CHECK_EQ_INT(whole.calls, 7);
	CHECK_EQ_INT(whole.checked_rows, 0);
}

TEST(off_mode)
{
	double x[N][3], y[N][3];
	hml_region *r = NULL;
	hml_region_stats s;
	int k;

	env_clear();
	CHECK_OK(hml_region_open(&r, "off", NULL));
	if (!r)
		return;
	/* Off needs no maps; begin only counts. */
	for (k = 0; k < 5; k++) {
		CHECK_EQ_INT(hml_region_begin(r), 1);
		CHECK_EQ_INT(hml_region_end(r), 0);
	}
	CHECK_EQ_INT(hml_region_begin_if(r, 1), 1);
	CHECK_OK(hml_region_end(r));
	CHECK_EQ_INT(hml_region_begin_if(r, 0), 1);

	CHECK_FAILS(hml_region_begin(r), HML_EINVALID, "called again before hml_region_end()");
	CHECK_OK(hml_region_end(r));
	CHECK_FAILS(hml_region_end(r), HML_EINVALID,
	            "region 'off': hml_region_end() without hml_region_begin()");
	s = stats_of(r);
	CHECK_EQ_INT(s.calls, 7);
	CHECK_EQ_INT(s.original_calls, 7);
	CHECK_EQ_INT(s.model_calls, 0);
	CHECK_EQ_INT(s.shadow_calls, 0);
	CHECK_EQ_INT(s.fallback_calls, 0);
	CHECK_EQ_INT(s.rows_in, 0);
	stats_sizes(r);
	CHECK_OK(hml_region_flush(r));
	hml_region_free(r);

	/* Maps in off mode are accepted (and freed with the region). */
	fill(&x[0][0], N * 3, 0.0);
	CHECK_OK(hml_region_open(&r, "off", NULL));
	map_rows(r, 0, &x[0][0], 3, 0);
	map_rows(r, 1, &y[0][0], 3, 0);
	CHECK(hml_region_input_map(r, 0) != NULL);
	CHECK(hml_region_output_map(r, 0) != NULL);
	CHECK(hml_region_input_map(r, 1) == NULL);
	CHECK(hml_region_output_map(r, 1) == NULL);
	CHECK_EQ_INT(hml_region_begin(r), 1);
	CHECK_OK(hml_region_end(r));
	hml_region_free(r);

	/* NULL regions. */
	CHECK_FAILS(hml_region_begin(NULL), HML_EINVALID, "NULL");
	CHECK_FAILS(hml_region_end(NULL), HML_EINVALID, "NULL");
	CHECK_FAILS(hml_region_flush(NULL), HML_EINVALID, "NULL");
	CHECK_FAILS(hml_region_stats_get(NULL, &s), HML_EINVALID, "NULL");
	CHECK(hml_region_input_map(NULL, 0) == NULL);
}

/* identity.pt over [i, 0:3] = ([i, 0:3]): the outputs become the inputs. */
TEST(infer_identity)
{
	double x[N][3], y[N][3];
	hml_region *r;
	hml_region_stats s;
	int i, j, call;

	env_clear();
	r = open_with("ident", HML_MODE_INFER, "identity.pt", HML_ON_ERROR_FAIL);
	if (!r)
		return;
	CHECK_EQ_INT(hml_region_mode(r), HML_MODE_INFER);
	map_rows(r, 0, &x[0][0], 3, 0);
	map_rows(r, 1, &y[0][0], 3, 0);
	for (call = 0; call < 3; call++) {
		fill(&x[0][0], N * 3, (double)call);
		memset(y, 0, sizeof(y));
		CHECK_EQ_INT(hml_region_begin(r), 0);
		CHECK_OK(hml_region_end(r));
		for (i = 0; i < N; i++)
			for (j = 0; j < 3; j++)
				CHECK_NEAR(y[i][j], x[i][j], 0.0);
	}
	s = stats_of(r);
	CHECK_EQ_INT(s.calls, 3);
	CHECK_EQ_INT(s.model_calls, 3);
	CHECK_EQ_INT(s.original_calls, 0);
	CHECK_EQ_INT(s.fallback_calls, 0);
	CHECK(s.forward_s >= 0.0 && s.region_s >= s.forward_s);

	/* begin_if(r, 1) takes the original path, and it is not a fallback. */
	memset(y, 0, sizeof(y));
	CHECK_EQ_INT(hml_region_begin_if(r, 1), 1);
	CHECK_NEAR(y[0][0], 0.0, 0.0);
	CHECK_OK(hml_region_end(r));
	CHECK_EQ_INT(hml_region_begin_if(r, 0), 0);
	CHECK_OK(hml_region_end(r));
	s = stats_of(r);
	CHECK_EQ_INT(s.calls, 5);
	CHECK_EQ_INT(s.model_calls, 4);
	CHECK_EQ_INT(s.original_calls, 1);
	CHECK_EQ_INT(s.fallback_calls, 0);

	/* The pairing rules hold in infer mode as well. */
	CHECK_EQ_INT(hml_region_begin(r), 0);
	CHECK_FAILS(hml_region_begin(r), HML_EINVALID, "before hml_region_end()");
	CHECK_OK(hml_region_end(r));
	CHECK_FAILS(hml_region_end(r), HML_EINVALID, "without hml_region_begin()");
	hml_region_free(r);
}

/* Two input maps are concatenated in the order added: a[n][2] then b[n][1]. */
TEST(infer_concatenated_inputs)
{
	double a[N][2], b[N][1], y[N][3];
	hml_region *r;
	int i;

	env_clear();
	r = open_with("concat", HML_MODE_INFER, "identity.pt", HML_ON_ERROR_FAIL);
	if (!r)
		return;
	fill(&a[0][0], N * 2, 1.0);
	fill(&b[0][0], N, -100.0);
	map_rows(r, 0, &a[0][0], 2, 0);
	map_rows(r, 0, &b[0][0], 1, 1);
	map_rows(r, 1, &y[0][0], 3, 0);
	memset(y, 0, sizeof(y));
	CHECK_EQ_INT(hml_region_begin(r), 0);
	CHECK_OK(hml_region_end(r));
	for (i = 0; i < N; i++) {
		CHECK_NEAR(y[i][0], a[i][0], 0.0);
		CHECK_NEAR(y[i][1], a[i][1], 0.0);
		CHECK_NEAR(y[i][2], b[i][0], 0.0);
	}
	CHECK_EQ_INT(stats_of(r).model_calls, 1);
	hml_region_free(r);

	/* The same three columns split over two output maps. */
	r = open_with("concat", HML_MODE_INFER, "identity.pt", HML_ON_ERROR_FAIL);
	if (!r)
		return;
	{
		double x[N][3], p[N][1], q[N][2];

		fill(&x[0][0], N * 3, 3.0);
		map_rows(r, 0, &x[0][0], 3, 0);
		map_rows(r, 1, &p[0][0], 1, 0);
		map_rows(r, 1, &q[0][0], 2, 1);
		CHECK_EQ_INT(hml_region_begin(r), 0);
		CHECK_OK(hml_region_end(r));
		for (i = 0; i < N; i++) {
			CHECK_NEAR(p[i][0], x[i][0], 0.0);
			CHECK_NEAR(q[i][0], x[i][1], 0.0);
			CHECK_NEAR(q[i][1], x[i][2], 0.0);
		}
	}
	hml_region_free(r);
}

/* Inputs of three dtypes (double, int32, float) in two maps, outputs into a
 * float and a double array of two columns each: the identity model returns
 * every value converted; collect mode stores the integers as float64. */
TEST(mixed_dtypes_and_integer_inputs)
{
	double rate[N], p[N][2];
	int32_t days[N][2];
	float f[N], y[N][2];
	hml_symbol sym = { "N", N };
	hml_array in0[2] = { HML_ARRAY_1D(rate, HML_F64, N), HML_ARRAY_2D(days, HML_I32, N, 2) };
	hml_array in1 = HML_ARRAY_1D(f, HML_F32, N);
	hml_array outs[2] = { HML_ARRAY_2D(y, HML_F32, N, 2), HML_ARRAY_2D(p, HML_F64, N, 2) };
	hml_array bad_out = HML_ARRAY_2D(days, HML_I32, N, 2);
	hml_region_options o;
	hml_region *r;
	const char *db;
	int i, k;

	env_clear();
	for (i = 0; i < N; i++) {
		rate[i] = 0.25 * i;
		days[i][0] = 1998 + i;
		days[i][1] = -i;
		f[i] = 0.5f * (float)i;
	}
	for (k = 0; k < 2; k++) {
		if (k == 0) {
			r = open_with("mixed", HML_MODE_INFER, "identity.pt", HML_ON_ERROR_FAIL);
		} else {
			db = tmp_path("region_mixed.h5");
			CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
			o.mode = HML_MODE_COLLECT;
			o.db = db;
			o.on_error = HML_ON_ERROR_FAIL;
			r = NULL;
			CHECK_OK(hml_region_open(&r, "mixed", &o));
		}
		if (!r)
			return;
		CHECK_EQ_INT(hml_region_input(r, "[i, 0:3] = ([i], [i, 0:2])", "0:N", in0, 2, &sym, 1), 0);
		CHECK_EQ_INT(hml_region_input(r, "[i, 0:1] = ([i])", "0:N", &in1, 1, &sym, 1), 1);
		CHECK_FAILS(hml_region_output(r, "[i, 0:2] = ([i, 0:2])", "0:N", &bad_out, 1, &sym, 1),
		            HML_ENOTSUPPORTED, "output array 'days' is int32");
		CHECK_EQ_INT(hml_region_output(r, "[i, 0:4] = ([i, 0:2], [i, 0:2])", "0:N", outs, 2,
		                               &sym, 1), 0);
		memset(y, 0, sizeof(y));
		memset(p, 0, sizeof(p));
		if (hml_region_begin(r)) {
			for (i = 0; i < N; i++) {
				y[i][0] = (float)rate[i];
				y[i][1] = (float)days[i][0];
				p[i][0] = days[i][1];
				p[i][1] = f[i];
			}
		}
		CHECK_OK(hml_region_end(r));
		for (i = 0; i < N; i++) {
			CHECK_NEAR(y[i][0], rate[i], 0.0);
			CHECK_NEAR(y[i][1], days[i][0], 0.0);
			CHECK_NEAR(p[i][0], days[i][1], 0.0);
			CHECK_NEAR(p[i][1], f[i], 0.0);
		}
		CHECK_EQ_INT(stats_of(r).model_calls, k == 0 ? 1 : 0);
		CHECK_EQ_INT(stats_of(r).rows_in, k == 0 ? 0 : N);
		CHECK_OK(hml_region_flush(r));
		hml_region_free(r);
	}
}

/* A region declared over one batch of N rows walks 3 batches with
 * hml_region_seek(), inputs and outputs alike. */
TEST(seek_batches)
{
	double x[3 * N][2], y[3 * N][2];
	hml_region *r;
	int b, i;

	env_clear();
	r = open_with("seek", HML_MODE_INFER, "identity.pt", HML_ON_ERROR_FAIL);
	if (!r)
		return;
	fill(&x[0][0], 3 * N * 2, 1.0);
	memset(y, 0, sizeof(y));
	map_rows(r, 0, &x[0][0], 2, 0);
	map_rows(r, 1, &y[0][0], 2, 0);
	for (b = 2; b >= 0; b--) {
		CHECK_OK(hml_region_seek(r, (int64_t)b * N));
		CHECK_EQ_INT(hml_region_begin(r), 0);
		CHECK_OK(hml_region_end(r));
	}
	for (i = 0; i < 3 * N; i++) {
		CHECK_NEAR(y[i][0], x[i][0], 0.0);
		CHECK_NEAR(y[i][1], x[i][1], 0.0);
	}
	CHECK_EQ_INT(stats_of(r).model_calls, 3);
	CHECK_FAILS(hml_region_seek(r, -1), HML_EINVALID, "cannot seek to row -1");
	CHECK_FAILS(hml_region_seek(NULL, 0), HML_EINVALID, "region is NULL");
	hml_region_free(r);
}

/* Row counts of concatenated maps must agree. */
TEST(concatenation_mismatch)
{
	double a[N][2], b[N][1], y[N][3];
	hml_array arr = HML_ARRAY_2D(b, HML_F64, N, 1);
	hml_region *r;

	env_clear();
	fill(&a[0][0], N * 2, 0.0);
	fill(&b[0][0], N, 0.0);
	r = open_with("rows", HML_MODE_INFER, "identity.pt", HML_ON_ERROR_FALLBACK);
	if (!r)
		return;
	map_rows(r, 0, &a[0][0], 2, 0);
	CHECK_EQ_INT(hml_region_input(r, "[i, 0:1] = ([i, 0:1])", "0:4", &arr, 1, NULL, 0), 1);
	map_rows(r, 1, &y[0][0], 3, 0);
	CHECK_FAILS(hml_region_begin(r), HML_ESHAPE,
	            "input map 1 has 4 rows but map 0 has 8");
	CHECK_OK(hml_region_end(r));
	hml_region_free(r);
}

static int ref_read(ref *t, const char *file)
{
	char path[4096];

	return ref_read_path(t, model_path(path, sizeof(path), file));
}

/* mlp_f32.pt through a region, with float (zero-copy) and double arrays. */
static void mlp_reference(hml_dtype dt)
{
	ref in, want;
	hml_region *r;
	hml_array ia, oa;
	hml_symbol sym;
	void *x = NULL, *y = NULL;
	size_t k, rows;
	double worst = 0.0;

	if (ref_read(&in, "mlp_f32.in.txt") < 0) {
		CHECK(!"reference input");
		return;
	}
	if (ref_read(&want, "mlp_f32.out.txt") < 0) {
		CHECK(!"reference output");
		free(in.v);
		return;
	}
	CHECK_EQ_INT(in.ndim, 2);
	CHECK_EQ_INT(in.shape[1], 5);
	CHECK_EQ_INT(want.ndim, 2);
	CHECK_EQ_INT(want.shape[0], in.shape[0]);
	CHECK_EQ_INT(want.shape[1], 1);
	rows = (size_t)in.shape[0];
	x = malloc(in.n * hml_dtype_size(dt));
	y = calloc(rows, hml_dtype_size(dt));
	for (k = 0; k < in.n; k++) {
		if (dt == HML_F32)
			((float *)x)[k] = (float)in.v[k];
		else
			((double *)x)[k] = in.v[k];
	}
	ia = (hml_array){ "x", x, dt, 2, { (int64_t)rows, 5 } };
	oa = (hml_array){ "y", y, dt, 1, { (int64_t)rows } };
	sym = (hml_symbol){ "n", (int64_t)rows };

	r = open_with("mlp", HML_MODE_INFER, "mlp_f32.pt", HML_ON_ERROR_FAIL);
	if (r) {
		CHECK_EQ_INT(hml_region_input(r, "[i, 0:5] = ([i, 0:5])", "0:n", &ia, 1, &sym, 1), 0);
		/* One output feature per row: [i, 0:1] = ([i]) over a 1-D array. */
		CHECK_EQ_INT(hml_region_output(r, "[i, 0:1] = ([i])", "0:n", &oa, 1, &sym, 1), 0);
		CHECK_EQ_INT(hml_region_begin(r), 0);
		CHECK_OK(hml_region_end(r));
		for (k = 0; k < rows; k++) {
			double got = dt == HML_F32 ? ((float *)y)[k] : ((double *)y)[k];
			double e = fabs(got - want.v[k]) / fmax(1.0, fabs(want.v[k]));
			if (!(e <= worst))
				worst = e;
		}
		if (!(worst <= 1e-6))
			fprintf(stderr, "mlp_f32 via region (%s arrays): max relative error %g\n",
			        hml_dtype_name(dt), worst);
		CHECK(worst <= 1e-6);
		CHECK_EQ_INT(stats_of(r).model_calls, 1);
		hml_region_free(r);
	}
	free(x);
	free(y);
	free(in.v);
	free(want.v);
}

TEST(infer_mlp_reference)
{
	env_clear();
	mlp_reference(HML_F32);
	mlp_reference(HML_F64);
}

TEST(interleave_pattern)
{
	double x[N][3], y[N][3];
	hml_region_options o;
	hml_region *r = NULL;
	hml_region_stats s;
	char path[4096];
	static const int want[9] = { 0, 0, 1, 0, 0, 1, 0, 0, 1 };
	int k, got[9];

	env_clear();
	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = HML_MODE_INTERLEAVE;
	o.model = model_path(path, sizeof(path), "identity.pt");
	o.interleave = 2;
	setenv("HML_INTERLEAVE", "5", 1);   /* the options field wins */
	CHECK_OK(hml_region_open(&r, "il", &o));
	if (!r)
		return;
	fill(&x[0][0], N * 3, 0.5);
	map_rows(r, 0, &x[0][0], 3, 0);
	map_rows(r, 1, &y[0][0], 3, 0);
	for (k = 0; k < 9; k++) {
		memset(y, 0, sizeof(y));
		got[k] = hml_region_begin(r);
		if (got[k] == 1)
			y[0][0] = -1.0;  /* the original code */
		CHECK_OK(hml_region_end(r));
		CHECK_EQ_INT(got[k], want[k]);
		CHECK_NEAR(y[0][0], got[k] == 0 ? x[0][0] : -1.0, 0.0);
	}
	s = stats_of(r);
	CHECK_EQ_INT(s.calls, 9);
	CHECK_EQ_INT(s.model_calls, 6);
	CHECK_EQ_INT(s.original_calls, 3);
	CHECK_EQ_INT(s.fallback_calls, 0);
	hml_region_free(r);
	r = NULL;

	/* From the environment: HML_INTERLEAVE_<LABEL>=1 alternates. */
	o.interleave = 0;
	setenv("HML_INTERLEAVE_R", "1", 1);
	CHECK_OK(hml_region_open(&r, "r", &o));
	if (r) {
		map_rows(r, 0, &x[0][0], 3, 0);
		map_rows(r, 1, &y[0][0], 3, 0);
		for (k = 0; k < 4; k++) {
			CHECK_EQ_INT(hml_region_begin(r), k % 2);
			CHECK_OK(hml_region_end(r));
		}
		hml_region_free(r);
	}
	env_clear();
}

/* Shadow: the original code always runs; every 1/fraction-th call the model
 * runs too and is compared with what the original code wrote. */
static void shadow_run(double offset, double want_rmse)
{
	double x[N][3], y[N][3];
	hml_region_options o;
	hml_region *r = NULL;
	hml_region_stats s;
	char path[4096];
	int k, i, j;

	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = HML_MODE_SHADOW;
	o.model = model_path(path, sizeof(path), "identity.pt");
	o.shadow = 0.5;
	o.on_error = HML_ON_ERROR_FAIL;
	CHECK_OK(hml_region_open(&r, "sh", &o));
	if (!r)
		return;
	map_rows(r, 0, &x[0][0], 3, 0);
	map_rows(r, 1, &y[0][0], 3, 0);
	for (k = 0; k < 6; k++) {
		fill(&x[0][0], N * 3, (double)k);
		memset(y, 0, sizeof(y));
		CHECK_EQ_INT(hml_region_begin(r), 1);
		/* The model never writes the outputs in shadow mode. */
		CHECK_NEAR(y[N - 1][2], 0.0, 0.0);
		for (i = 0; i < N; i++)
			for (j = 0; j < 3; j++)
				y[i][j] = x[i][j] + offset;
		CHECK_OK(hml_region_end(r));
	}
	s = stats_of(r);
	CHECK_EQ_INT(s.calls, 6);
	CHECK_EQ_INT(s.original_calls, 6);
	CHECK_EQ_INT(s.shadow_calls, 3);
	CHECK_EQ_INT(s.model_calls, 0);
	CHECK_NEAR(s.shadow_rmse, want_rmse, 1e-12);
	CHECK_NEAR(s.shadow_max_abs, want_rmse, 1e-12);
	hml_region_free(r);
}

TEST(shadow)
{
	env_clear();
	shadow_run(0.0, 0.0);
	shadow_run(1.0, 1.0);

	/* HML_SHADOW=1 from the environment shadows every call. */
	{
		double x[N][3], y[N][3];
		hml_region *r = NULL;
		char path[4096];
		int k;

		setenv("HML_MODE_R", "shadow", 1);
		setenv("HML_MODEL", model_path(path, sizeof(path), "identity.pt"), 1);
		setenv("HML_SHADOW", "1", 1);
		CHECK_OK(hml_region_open(&r, "r", NULL));
		if (r) {
			fill(&x[0][0], N * 3, 2.0);
			map_rows(r, 0, &x[0][0], 3, 0);
			map_rows(r, 1, &y[0][0], 3, 0);
			for (k = 0; k < 4; k++) {
				CHECK_EQ_INT(hml_region_begin(r), 1);
				memcpy(y, x, sizeof(y));
				y[1][1] += 0.5;  /* one value off by 0.5 */
				CHECK_OK(hml_region_end(r));
			}
			CHECK_EQ_INT(stats_of(r).shadow_calls, 4);
			CHECK_NEAR(stats_of(r).shadow_max_abs, 0.5, 1e-12);
			CHECK_NEAR(stats_of(r).shadow_rmse, sqrt(0.25 / (N * 3)), 1e-12);
			hml_region_free(r);
		}
		env_clear();
	}
}

/* Fallback: a missing model warns once and the original code runs. */
TEST(fallback_missing_model)
{
	double x[N][3], y[N][3];
	hml_region *r = NULL;
	hml_region_stats s;
	int k;

	env_clear();
	book_reset();
	r = open_with("fb", HML_MODE_INFER, "no-such-model.pt", HML_ON_ERROR_DEFAULT);
	CHECK(r != NULL);
	CHECK_EQ_INT(book.warnings, 1);
	CHECK_CONTAINS(book.last, "region 'fb'");
	CHECK_CONTAINS(book.last, "no-such-model.pt");
	CHECK_CONTAINS(book.last, "running the original code");
	if (!r)
		return;
	CHECK_EQ_INT(hml_region_mode(r), HML_MODE_INFER);
	fill(&x[0][0], N * 3, 0.0);
	map_rows(r, 0, &x[0][0], 3, 0);
	map_rows(r, 1, &y[0][0], 3, 0);
	for (k = 0; k < 4; k++) {
		CHECK_EQ_INT(hml_region_begin(r), 1);
		CHECK_OK(hml_region_end(r));
	}
	CHECK_EQ_INT(book.warnings, 1);
	s = stats_of(r);
	CHECK_EQ_INT(s.calls, 4);
	CHECK_EQ_INT(s.original_calls, 4);
	CHECK_EQ_INT(s.fallback_calls, 4);
	CHECK_EQ_INT(s.model_calls, 0);
	hml_region_free(r);
	CHECK_EQ_INT(book.warnings, 1);

	/* Fail policy: open itself fails. */
	r = (hml_region *)&r;
	{
		hml_region_options o;
		char path[4096];

		CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
		o.mode = HML_MODE_INFER;
		o.model = model_path(path, sizeof(path), "no-such-model.pt");
		o.on_error = HML_ON_ERROR_FAIL;
		CHECK_FAILS(hml_region_open(&r, "fb", &o), HML_ENOTFOUND,
		            "cannot open model");
		CHECK(r == NULL);
		/* Not a model: EMODEL under fail, a warning under fallback. */
		o.model = model_path(path, sizeof(path), "not_a_model.pt");
		CHECK_FAILS(hml_region_open(&r, "fb", &o), HML_EMODEL, "not_a_model.pt");
		o.on_error = HML_ON_ERROR_DEFAULT;
		setenv("HML_ON_ERROR", "fail", 1);
		CHECK_FAILS(hml_region_open(&r, "fb", &o), HML_EMODEL, "not_a_model.pt");
		setenv("HML_ON_ERROR", "fallback", 1);
		book_reset();
		CHECK_OK(hml_region_open(&r, "fb", &o));
		CHECK_EQ_INT(book.warnings, 1);
		CHECK_CONTAINS(book.last, "not_a_model.pt");
		hml_region_free(r);
		env_clear();
	}
	CHECK_EQ_INT(book.infos, 0);
}

/* nonfinite.pt returns NaN in row 0 and Inf in the last row: nothing of it
 * may reach y. Fallback: this call runs the original code, the model stays
 * in use; fail: the call fails; interleave and shadow count it too. */
TEST(nonfinite_outputs)
{
	double x[N][1], y[N][1];
	hml_region *r;
	hml_region_stats s;
	int k, call;

	env_clear();
	fill(&x[0][0], N, 1.0);
	for (k = 0; k < N; k++)
		y[k][0] = -7.0;
	book_reset();
	r = open_with("nf", HML_MODE_INFER, "nonfinite.pt", HML_ON_ERROR_FALLBACK);
	map_rows(r, 0, &x[0][0], 1, 0);
	map_rows(r, 1, &y[0][0], 1, 0);
	for (call = 0; call < 3; call++) {
		CHECK_EQ_INT(hml_region_begin(r), 1);
		CHECK_OK(hml_region_end(r));
	}
	for (k = 0; k < N; k++)
		CHECK(y[k][0] == -7.0);
	s = stats_of(r);
	CHECK_EQ_INT(s.nonfinite_calls, 3);
	CHECK_EQ_INT(s.fallback_calls, 3);
	CHECK_EQ_INT(s.original_calls, 3);
	CHECK_EQ_INT(s.model_calls, 0);
	CHECK_EQ_INT(book.warnings, 1);
	CHECK_CONTAINS(book.last, "returned 2 non-finite output values (NaN or Inf) in call 1");
	hml_region_free(r);

	r = open_with("nf", HML_MODE_INFER, "nonfinite.pt", HML_ON_ERROR_FAIL);
	map_rows(r, 0, &x[0][0], 1, 0);
	map_rows(r, 1, &y[0][0], 1, 0);
	CHECK_FAILS(hml_region_begin(r), HML_EMODEL, "non-finite output values");
	CHECK_OK(hml_region_end(r));
	for (k = 0; k < N; k++)
		CHECK(y[k][0] == -7.0);
	s = stats_of(r);
	CHECK_EQ_INT(s.nonfinite_calls, 1);
	CHECK_EQ_INT(s.model_calls, 0);
	hml_region_free(r);

	setenv("HML_INTERLEAVE", "2", 1);
	r = open_with("nf", HML_MODE_INTERLEAVE, "nonfinite.pt", HML_ON_ERROR_FALLBACK);
	map_rows(r, 0, &x[0][0], 1, 0);
	map_rows(r, 1, &y[0][0], 1, 0);
	for (call = 0; call < 6; call++) {
		CHECK_EQ_INT(hml_region_begin(r), 1);
		CHECK_OK(hml_region_end(r));
	}
	s = stats_of(r);
	CHECK_EQ_INT(s.nonfinite_calls, 4);
	CHECK_EQ_INT(s.fallback_calls, 4);
	CHECK_EQ_INT(s.original_calls, 6);
	hml_region_free(r);
	env_clear();

	setenv("HML_SHADOW", "1", 1);
	r = open_with("nf", HML_MODE_SHADOW, "nonfinite.pt", HML_ON_ERROR_FALLBACK);
	map_rows(r, 0, &x[0][0], 1, 0);
	map_rows(r, 1, &y[0][0], 1, 0);
	CHECK_EQ_INT(hml_region_begin(r), 1);
	CHECK_OK(hml_region_end(r));
	s = stats_of(r);
	CHECK_EQ_INT(s.nonfinite_calls, 1);
	CHECK_EQ_INT(s.shadow_calls, 1);
	hml_region_free(r);
	env_clear();
	for (k = 0; k < N; k++)
		CHECK(y[k][0] == -7.0);
}

/* mlp_f32 wants 5 input columns; give it 4. */
TEST(shape_mismatch)
{
	double x[N][4], y[N][1];
	hml_region *r;
	hml_region_stats s;
	int k;

	env_clear();
	fill(&x[0][0], N * 4, 0.0);
	book_reset();
	r = open_with("shape", HML_MODE_INFER, "mlp_f32.pt", HML_ON_ERROR_FALLBACK);
	if (r) {
		CHECK_EQ_INT(book.warnings, 0);
		map_rows(r, 0, &x[0][0], 4, 0);
		map_rows(r, 1, &y[0][0], 1, 0);
		for (k = 0; k < 3; k++) {
			y[0][0] = 0.0;
			CHECK_EQ_INT(hml_region_begin(r), 1);
			y[0][0] = 7.0;
			CHECK_OK(hml_region_end(r));
			CHECK_NEAR(y[0][0], 7.0, 0.0);
		}
		CHECK_EQ_INT(book.warnings, 1);
		CHECK_CONTAINS(book.last, "region 'shape'");
		CHECK_CONTAINS(book.last, "[8, 4]");   /* what the region gave */
		CHECK_CONTAINS(book.last, "5x16");     /* what the first layer takes */
		CHECK_CONTAINS(book.last, "running the original code");
		s = stats_of(r);
		CHECK_EQ_INT(s.fallback_calls, 3);
		CHECK_EQ_INT(s.original_calls, 3);
		CHECK_EQ_INT(s.model_calls, 0);
		hml_region_free(r);
	}

	/* Fail policy: begin returns the error; end still pairs with it. */
	r = open_with("shape", HML_MODE_INFER, "mlp_f32.pt", HML_ON_ERROR_FAIL);
	if (r) {
		int rc;

		map_rows(r, 0, &x[0][0], 4, 0);
		map_rows(r, 1, &y[0][0], 1, 0);
		rc = hml_region_begin(r);
		CHECK(rc == HML_ESHAPE || rc == HML_EMODEL);
		CHECK_CONTAINS(hml_error_last()->message, "[8, 4]");
		CHECK_OK(hml_region_end(r));
		/* And again: the fail policy does not switch the model off. */
		rc = hml_region_begin(r);
		CHECK(rc == HML_ESHAPE || rc == HML_EMODEL);
		CHECK_OK(hml_region_end(r));
		s = stats_of(r);
		CHECK_EQ_INT(s.model_calls, 0);
		CHECK_EQ_INT(s.original_calls, 0);
		CHECK_EQ_INT(s.fallback_calls, 0);
		hml_region_free(r);
	}

	/* A model that declares its input shape is checked before forward. */
	r = open_with("decl", HML_MODE_INFER, "declared.pt", HML_ON_ERROR_FAIL);
	if (r) {
		map_rows(r, 0, &x[0][0], 4, 0);
		map_rows(r, 1, &y[0][0], 1, 0);
		CHECK_FAILS(hml_region_begin(r), HML_ESHAPE,
		            "expects input rows [5] but region 'decl' gives [8, 4]");
		CHECK_OK(hml_region_end(r));
		hml_region_free(r);
	}
	CHECK_EQ_INT(book.warnings, 1);

	/* declared.pt with the right width runs. */
	r = open_with("decl", HML_MODE_INFER, "declared.pt", HML_ON_ERROR_FAIL);
	if (r) {
		double x5[N][5];

		fill(&x5[0][0], N * 5, 0.0);
		map_rows(r, 0, &x5[0][0], 5, 0);
		map_rows(r, 1, &y[0][0], 1, 0);
		CHECK_EQ_INT(hml_region_begin(r), 0);
		CHECK_OK(hml_region_end(r));
		hml_region_free(r);
	}
}

/* The model's output must fit the output maps. */
TEST(output_mismatch)
{
	double x[N][3], y[N][2];
	hml_region *r;

	env_clear();
	fill(&x[0][0], N * 3, 0.0);
	r = open_with("out", HML_MODE_INFER, "identity.pt", HML_ON_ERROR_FAIL);
	if (!r)
		return;
	map_rows(r, 0, &x[0][0], 3, 0);
	map_rows(r, 1, &y[0][0], 2, 0);
	CHECK_FAILS(hml_region_begin(r), HML_ESHAPE,
	            "returns [8, 3] but region 'out' needs outputs [8, 2]");
	CHECK_OK(hml_region_end(r));
	hml_region_free(r);
}

TEST(collect)
{
	double x[N][3], y[N][3];
	hml_region_options o;
	hml_region *r = NULL;
	hml_region_stats s;
	struct stat st;
	const char *db;
	int k;

	env_clear();
	db = tmp_path("region_collect.h5");
	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = HML_MODE_COLLECT;
	o.db = db;
	o.on_error = HML_ON_ERROR_FAIL;
	CHECK_OK(hml_region_open(&r, "col", &o));
	if (!r)
		return;
	CHECK_EQ_INT(hml_region_mode(r), HML_MODE_COLLECT);
	map_rows(r, 0, &x[0][0], 3, 0);
	map_rows(r, 1, &y[0][0], 3, 0);
	for (k = 0; k < 3; k++) {
		fill(&x[0][0], N * 3, (double)k);
		CHECK_EQ_INT(hml_region_begin(r), 1);
		memcpy(y, x, sizeof(y));
		CHECK_OK(hml_region_end(r));
	}
	/* begin_if(r, 1) is collected as well. */
	CHECK_EQ_INT(hml_region_begin_if(r, 1), 1);
	CHECK_OK(hml_region_end(r));
	CHECK_OK(hml_region_flush(r));
	s = stats_of(r);
	CHECK_EQ_INT(s.calls, 4);
	CHECK_EQ_INT(s.original_calls, 4);
	CHECK_EQ_INT(s.rows_in, 4 * N);
	CHECK_EQ_INT(s.rows_out, 4 * N);
	CHECK_EQ_INT(s.model_calls, 0);
	CHECK(stat(db, &st) == 0 && st.st_size > 0);

	/* Maps cannot be added once the first call froze the shapes. */
	CHECK_FAILS(hml_region_input(r, "[i, 0:3] = ([i, 0:3])", "0:8",
	                             &HML_ARRAY_2D(x, HML_F64, N, 3), 1, NULL, 0),
	            HML_EINVALID, "before the first hml_region_begin()");
	CHECK(hml_region_input_map(r, 1) == NULL);
	hml_region_free(r);
	CHECK(stat(db, &st) == 0 && st.st_size > 0);

	/* A collection file that cannot be written: fail vs fallback. */
	r = (hml_region *)&r;
	o.db = "/nonexistent-dir/x/region.h5";
	CHECK(hml_region_open(&r, "col", &o) < 0);
	CHECK(r == NULL);
	book_reset();
	o.on_error = HML_ON_ERROR_FALLBACK;
	CHECK_OK(hml_region_open(&r, "col", &o));
	CHECK_EQ_INT(book.warnings, 1);
	CHECK_CONTAINS(book.last, "not collecting");
	if (r) {
		map_rows(r, 0, &x[0][0], 3, 0);
		map_rows(r, 1, &y[0][0], 3, 0);
		CHECK_EQ_INT(hml_region_begin(r), 1);
		CHECK_OK(hml_region_end(r));
		CHECK_EQ_INT(stats_of(r).rows_in, 0);
		CHECK_EQ_INT(stats_of(r).original_calls, 1);
		CHECK_OK(hml_region_flush(r));
		hml_region_free(r);
	}
	CHECK_EQ_INT(book.warnings, 1);
}

TEST(maps_after_begin_and_missing_maps)
{
	double x[N][3], y[N][3];
	hml_array a = HML_ARRAY_2D(x, HML_F64, N, 3);
	hml_symbol sym = { "N", N };
	hml_functor *fn = NULL;
	hml_tmap *map = NULL;
	hml_region_options o;
	hml_region *r;
	const char *db;

	env_clear();
	fill(&x[0][0], N * 3, 0.0);

	/* Infer: after the first begin no map may be added. */
	r = open_with("late", HML_MODE_INFER, "identity.pt", HML_ON_ERROR_FAIL);
	if (r) {
		map_rows(r, 0, &x[0][0], 3, 0);
		map_rows(r, 1, &y[0][0], 3, 0);
		CHECK_EQ_INT(hml_region_begin(r), 0);
		CHECK_OK(hml_region_end(r));
		CHECK_FAILS(hml_region_output(r, "[i, 0:3] = ([i, 0:3])", "0:N", &a, 1, &sym, 1),
		            HML_EINVALID, "region 'late': maps must be added before");
		/* A map of one's own that the region refused stays one's own. */
		CHECK_OK(hml_functor_parse(&fn, "[i, 0:3] = ([i, 0:3])"));
		CHECK_OK(hml_tmap_new(&map, fn, "0:N", &a, 1, &sym, 1));
		CHECK_FAILS(hml_region_add_input(r, map), HML_EINVALID, "before the first");
		CHECK_FAILS(hml_region_add_output(r, map), HML_EINVALID, "before the first");
		hml_tmap_free(map);
		map = NULL;
		CHECK(hml_region_output_map(r, 1) == NULL);
		/* The region still works. */
		CHECK_EQ_INT(hml_region_begin(r), 0);
		CHECK_OK(hml_region_end(r));
		hml_region_free(r);
	}

	/* A map added with add_input before begin is owned by the region. */
	r = open_with("own", HML_MODE_INFER, "identity.pt", HML_ON_ERROR_FAIL);
	if (r) {
		CHECK_OK(hml_tmap_new(&map, fn, "0:N", &a, 1, &sym, 1));
		CHECK_OK(hml_region_add_input(r, map));
		CHECK(hml_region_input_map(r, 0) == map);
		map_rows(r, 1, &y[0][0], 3, 0);
		memset(y, 0, sizeof(y));
		CHECK_EQ_INT(hml_region_begin(r), 0);
		CHECK_OK(hml_region_end(r));
		CHECK_NEAR(y[N - 1][2], x[N - 1][2], 0.0);
		CHECK_FAILS(hml_region_add_input(r, NULL), HML_EINVALID, "NULL");
		CHECK_FAILS(hml_region_add_input(NULL, NULL), HML_EINVALID, "NULL");
		hml_region_free(r);  /* frees `map` */
	}
	hml_functor_free(fn);

	/* Bad functors and domains are reported and nothing is added. */
	r = open_with("bad", HML_MODE_INFER, "identity.pt", HML_ON_ERROR_FAIL);
	if (r) {
		CHECK_FAILS(hml_region_input(r, "[i, 0:3] = ([i, 0:3]", "0:N", &a, 1, &sym, 1),
		            HML_ESYNTAX, "expected");
		CHECK_FAILS(hml_region_input(r, "[i, 0:3] = ([i, 0:3])", "0:N+1", &a, 1, &sym, 1),
		            HML_ERANGE, "x");
		CHECK(hml_region_input_map(r, 0) == NULL);
		/* No maps at all. */
		CHECK_FAILS(hml_region_begin(r), HML_EINVALID, "region 'bad' has no input map");
		CHECK_OK(hml_region_end(r));
		map_rows(r, 0, &x[0][0], 3, 0);
		CHECK_FAILS(hml_region_begin(r), HML_EINVALID, "has no output map");
		CHECK_OK(hml_region_end(r));
		/* Not yet frozen: an output can still be added, then it runs. */
		map_rows(r, 1, &y[0][0], 3, 0);
		CHECK_EQ_INT(hml_region_begin(r), 0);
		CHECK_OK(hml_region_end(r));
		hml_region_free(r);
	}

	/* Collect with no maps: EINVALID, even under the fallback policy. */
	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = HML_MODE_COLLECT;
	o.db = db = tmp_path("region_nomaps.h5");
	r = NULL;
	CHECK_OK(hml_region_open(&r, "nomaps", &o));
	if (r) {
		CHECK_FAILS(hml_region_begin(r), HML_EINVALID, "region 'nomaps' has no input map");
		CHECK_OK(hml_region_end(r));
		CHECK_OK(hml_region_flush(r));
		CHECK_EQ_INT(stats_of(r).rows_in, 0);
		hml_region_free(r);
	}
}

/* hml_set_log_handler(NULL) restores the default handler. */
/* Regressions: failures that must be remembered or counted exactly. */
TEST(regressions)
{
	double x[N][3], y[N][2];
	hml_region_options o;
	hml_region *r = NULL;
	hml_region_stats s;
	const char *db;
	int k;

	env_clear();
	/* A bad on_error value in the options is refused like a bad mode. */
	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.on_error = (hml_on_error)7;
	CHECK_FAILS(hml_region_open(&r, "oe", &o), HML_EINVALID, "invalid on_error 7");

	/* Off mode: maps cannot be added after the first call either. */
	r = open_with("offmaps", HML_MODE_OFF, NULL, HML_ON_ERROR_FAIL);
	if (r) {
		CHECK_EQ_INT(hml_region_begin(r), 1);
		CHECK_OK(hml_region_end(r));
		CHECK_FAILS(hml_region_input(r, "[i, 0:3] = ([i, 0:3])", "0:8",
		                             &HML_ARRAY_2D(x, HML_F64, N, 3), 1, NULL, 0),
		            HML_EINVALID, "before the first hml_region_begin()");
		hml_region_free(r);
	}

	/* Interleave with a missing model: only the calls that wanted the
	 * model count as fallbacks (K = 2: 4 of 6). */
	book_reset();
	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = HML_MODE_INTERLEAVE;
	o.interleave = 2;
	o.model = "/nonexistent/m.pt";
	r = NULL;
	CHECK_OK(hml_region_open(&r, "ilfb", &o));
	if (r) {
		map_rows(r, 0, &x[0][0], 3, 0);
		map_rows(r, 1, &y[0][0], 2, 0);
		for (k = 0; k < 6; k++) {
			CHECK_EQ_INT(hml_region_begin(r), 1);
			CHECK_OK(hml_region_end(r));
		}
		s = stats_of(r);
		CHECK_EQ_INT(s.fallback_calls, 4);
		CHECK_EQ_INT(s.original_calls, 6);
		hml_region_free(r);
	}

	/* Collect into a group of another shape under the fail policy: every
	 * call fails with the same message, none is silently dropped. */
	db = tmp_path("region_regress.h5");
	CHECK_OK(hml_region_options_init(&o, HML_REGION_OPTIONS_VERSION));
	o.mode = HML_MODE_COLLECT;
	o.db = db;
	o.on_error = HML_ON_ERROR_FAIL;
	r = NULL;
	CHECK_OK(hml_region_open(&r, "shape", &o));
	if (r) {
		map_rows(r, 0, &x[0][0], 3, 0);
		map_rows(r, 1, &y[0][0], 2, 0);
		CHECK_EQ_INT(hml_region_begin(r), 1);
		CHECK_OK(hml_region_end(r));
		hml_region_free(r);
	}
	r = NULL;
	CHECK_OK(hml_region_open(&r, "shape", &o));
	if (r) {
		map_rows(r, 0, &x[0][0], 2, 0);
		map_rows(r, 1, &y[0][0], 2, 0);
		for (k = 0; k < 2; k++) {
			CHECK_FAILS(hml_region_begin(r), HML_ESHAPE, "region 'shape'");
			CHECK_OK(hml_region_end(r));
		}
		s = stats_of(r);
		CHECK_EQ_INT(s.rows_in, 0);
		hml_region_free(r);
	}
}

TEST(log_handler_reset)
{
	hml_region *r = NULL;

	env_clear();
	hml_set_log_handler(NULL, NULL);
	book_reset();
	r = open_with("quiet", HML_MODE_INFER, "no-such-model.pt", HML_ON_ERROR_FALLBACK);
	CHECK(r != NULL);
	CHECK_EQ_INT(book.warnings, 0);  /* went to stderr */
	hml_region_free(r);
	hml_set_log_handler(count_log, &book);
}

int main(void)
{
	models_dir = getenv("HML_TEST_MODELS");
	if (!models_dir || !*models_dir) {
		fprintf(stderr, "HML_TEST_MODELS is not set (run through ctest)\n");
		return 1;
	}
	if (tmp_dir_make("region") < 0)
		return 1;
	env_clear();
	hml_set_log_handler(count_log, &book);
	RUN(mode_names);
	RUN(options_init_and_version);
	RUN(labels);
	RUN(find_by_label);
	RUN(mode_from_env);
	RUN(bad_settings);
	RUN(model_option_beats_env);
	RUN(off_mode);
	RUN(infer_identity);
	RUN(infer_concatenated_inputs);
	RUN(mixed_dtypes_and_integer_inputs);
	RUN(seek_batches);
	RUN(concatenation_mismatch);
	RUN(infer_mlp_reference);
	RUN(interleave_pattern);
	RUN(shadow);
	RUN(fallback_missing_model);
	RUN(nonfinite_outputs);
	RUN(shape_mismatch);
	RUN(output_mismatch);
	RUN(collect);
	RUN(maps_after_begin_and_missing_maps);
	RUN(regressions);
	RUN(log_handler_reset);
	hml_set_log_handler(NULL, NULL);
	tmp_dir_remove();
	return check_report();
}
