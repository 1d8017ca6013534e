/*
 * tests/unit/latency.c - the latency part of model cards (lib/deploy/latency.c):
 * the card contract written and read back (every field, a target not
 * measured with its reason, malformed cards refused, a card without
 * latencies), target names, and measurements of real TorchScript models
 * through the runtime's loaders: a model hml can compile to C gets both
 * figures, one it cannot gets the TorchScript figure and the reason, and
 * without a C compiler the C figure is missing with that reason; build
 * directories left by killed processes are reclaimed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "core/error.h"
#include "deploy/latency.h"

static char models[512];

static const char *model_path(const char *name)
{
	static char buf[640];

	snprintf(buf, sizeof(buf), "%s/%s", models, name);
	return buf;
}

TEST(targets)
{
	CHECK_STR(hml__target_name(HML__TARGET_TORCHSCRIPT), "torchscript");
	CHECK_STR(hml__target_name(HML__TARGET_C), "c");
	CHECK(hml__target_name(2) == NULL);
	CHECK(hml__target_name(-1) == NULL);
	CHECK_EQ_INT(hml__target_parse("c"), HML__TARGET_C);
	CHECK_EQ_INT(hml__target_parse("torchscript"), HML__TARGET_TORCHSCRIPT);
	CHECK_EQ_INT(hml__target_parse("C"), -1);
	CHECK_EQ_INT(hml__target_parse(NULL), -1);
}

TEST(target_auto)
{
	char why[300];
	const char *path = getenv("PATH");
	char *saved = path ? strdup(path) : NULL;

	CHECK(hml__target_family_compiles("mlp") && hml__target_family_compiles("cnn") &&
	      hml__target_family_compiles("cnnvec"));
	CHECK(!hml__target_family_compiles("gru") && !hml__target_family_compiles(NULL));
	CHECK_EQ_INT(hml__target_auto("gru", why, sizeof(why)), HML__TARGET_TORCHSCRIPT);
	CHECK_STR(why, "models of family 'gru' do not compile to C");
	/* No compiler on PATH: torchscript, and the compiler's absence is why. */
	setenv("PATH", "/nonexistent", 1);
	CHECK_EQ_INT(hml__target_auto("mlp", why, sizeof(why)), HML__TARGET_TORCHSCRIPT);
	CHECK(strstr(why, "no C compiler") != NULL);
	if (saved)
		setenv("PATH", saved, 1);
	free(saved);
	/* (this test is built with libtorch only, and the tests need cc) */
	CHECK_EQ_INT(hml__target_auto("mlp", why, sizeof(why)), HML__TARGET_C);
	CHECK_STR(why, "");
}

TEST(card_round_trip)
{
	hml__latency a, b;
	json_t *j, *rec;
	char *text;

	hml__latency_init(&a);
	a.seconds[HML__TARGET_TORCHSCRIPT] = 1.25e-7;
	a.seconds[HML__TARGET_C] = 3.5e-8;
	a.batch = 4096;
	a.threads = 2;
	hml__latency_machine(a.machine, sizeof(a.machine));
	CHECK_CONTAINS(a.machine, "cores");
	j = hml__latency_to_json(&a);
	CHECK(j != NULL);
	/* through text, as the manifest and the card file hold it */
	text = json_dumps(j, JSON_REAL_PRECISION(15));
	json_decref(j);
	rec = json_pack("{s:s, s:o}", "id", "m1", "latency", json_loads(text, 0, NULL));
	free(text);
	CHECK_OK(hml__latency_of_record(&b, rec));
	CHECK_NEAR(b.seconds[HML__TARGET_TORCHSCRIPT], 1.25e-7, 1e-20);
	CHECK_NEAR(b.seconds[HML__TARGET_C], 3.5e-8, 1e-20);
	CHECK_EQ_INT(b.batch, 4096);
	CHECK_EQ_INT(b.threads, 2);
	CHECK_STR(b.machine, a.machine);
	CHECK_STR(b.unavailable[HML__TARGET_C], "");
	CHECK(json_object_get(json_object_get(rec, "latency"), "unavailable") == NULL);
	/* start-up not measured: no "startup" member, NaN read back */
	CHECK(json_object_get(json_object_get(rec, "latency"), "startup") == NULL);
	CHECK(isnan(b.startup[HML__TARGET_TORCHSCRIPT]) && isnan(b.startup[HML__TARGET_C]));
	json_decref(rec);

	/* start-up per target, one of them measured as 0 (faster than the baseline) */
	a.startup[HML__TARGET_TORCHSCRIPT] = 0.41;
	a.startup[HML__TARGET_C] = 0;
	j = hml__latency_to_json(&a);
	CHECK_OK(hml__latency_from_json(&b, j));
	CHECK_NEAR(b.startup[HML__TARGET_TORCHSCRIPT], 0.41, 1e-15);
	CHECK(b.startup[HML__TARGET_C] == 0);
	json_decref(j);
	a.startup[HML__TARGET_TORCHSCRIPT] = a.startup[HML__TARGET_C] = NAN;

	/* a target not measured: null and its reason */
	a.seconds[HML__TARGET_C] = NAN;
	snprintf(a.unavailable[HML__TARGET_C], sizeof(a.unavailable[0]), "no C compiler");
	j = hml__latency_to_json(&a);
	CHECK(json_is_null(json_object_get(j, "c")));
	CHECK_OK(hml__latency_from_json(&b, j));
	CHECK(isnan(b.seconds[HML__TARGET_C]));
	CHECK_NEAR(b.seconds[HML__TARGET_TORCHSCRIPT], 1.25e-7, 1e-20);
	CHECK_STR(b.unavailable[HML__TARGET_C], "no C compiler");
	CHECK_STR(b.unavailable[HML__TARGET_TORCHSCRIPT], "");
	json_decref(j);
}

TEST(card_malformed)
{
	static const char *const bad[][2] = {
		{ "[1]", "not an object" },
		{ "{\"c\": -1}", "not a positive number or null: 'c'" },
		{ "{\"torchscript\": \"fast\"}", "not a positive number or null: 'torchscript'" },
		{ "{\"c\": 0}", "'c'" },
		{ "{\"batch\": 1.5}", "'batch'" },
		{ "{\"batch\": -3}", "'batch'" },
		{ "{\"threads\": \"2\"}", "'threads'" },
		{ "{\"machine\": 3}", "'machine'" },
		{ "{\"unavailable\": []}", "'unavailable'" },
		{ "{\"unavailable\": {\"c\": 1}}", "'c'" },
		{ "{\"startup\": 0.4}", "not an object: 'startup'" },
		{ "{\"startup\": {\"c\": -0.1}}", "not a number of seconds: 'startup'" },
		{ "{\"startup\": {\"torchscript\": \"slow\"}}", "'startup'" },
	};
	hml__latency l;
	json_t *rec;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = json_loads(bad[i][0], JSON_DECODE_ANY, NULL);

		CHECK(j != NULL);
		CHECK_FAILS(hml__latency_from_json(&l, j), HML_EINVALID, bad[i][1]);
		json_decref(j);
	}
	/* a card of an older hml: no latency */
	rec = json_pack("{s:s}", "id", "m1");
	CHECK_FAILS(hml__latency_of_record(&l, rec), HML_ENOTFOUND, "no latency");
	CHECK(isnan(l.seconds[0]) && isnan(l.seconds[1]));
	json_decref(rec);
	/* an empty object is a card with nothing measured */
	rec = json_object();
	CHECK_OK(hml__latency_from_json(&l, rec));
	CHECK(isnan(l.seconds[0]) && isnan(l.seconds[1]) && l.batch == 0);
	json_decref(rec);
}

static void options(hml__latency_options *o, const float *rows, int64_t batch)
{
	static const int64_t shape[1] = { 5 };

	memset(o, 0, sizeof(*o));
	o->batch = batch;
	o->threads = 1;
	o->seconds = 0.03;
	o->in_ndim = 1;
	o->in_shape = shape;
	o->rows = rows;
	o->nrows = 3;
	o->c = 1;
}

TEST(measure)
{
	float rows[15];
	hml__latency_options o;
	hml__latency l;

	for (int i = 0; i < 15; i++)
		rows[i] = (float)i / 7.0f - 1.0f;
	/* a model hml cannot compile (its graph is 2x + 1): TorchScript only */
	options(&o, rows, 64);
	CHECK_OK(hml__latency_measure(&l, model_path("affine.pt"), &o));
	CHECK(l.seconds[HML__TARGET_TORCHSCRIPT] > 0 && isfinite(l.seconds[HML__TARGET_TORCHSCRIPT]));
	CHECK(isnan(l.seconds[HML__TARGET_C]));
	CHECK_CONTAINS(l.unavailable[HML__TARGET_C], "cannot compile model");
	CHECK_EQ_INT(l.batch, 64);
	CHECK_EQ_INT(l.threads, 1);
	/* a Sequential scripted in Python: compiled to C and timed too */
	CHECK_OK(hml__latency_measure(&l, model_path("mlp_f32.pt"), &o));
	CHECK(l.seconds[HML__TARGET_TORCHSCRIPT] > 0 && isfinite(l.seconds[HML__TARGET_TORCHSCRIPT]));
	CHECK(l.seconds[HML__TARGET_C] > 0 && isfinite(l.seconds[HML__TARGET_C]));
	CHECK_STR(l.unavailable[HML__TARGET_C], "");
	CHECK_STR(l.unavailable[HML__TARGET_TORCHSCRIPT], "");
	/* the C form only (hml search --target c) */
	o.no_torchscript = 1;
	CHECK_OK(hml__latency_measure(&l, model_path("mlp_f32.pt"), &o));
	CHECK(isnan(l.seconds[HML__TARGET_TORCHSCRIPT]));
	CHECK(l.seconds[HML__TARGET_C] > 0 && isfinite(l.seconds[HML__TARGET_C]));
	o.no_torchscript = 0;
	/* without a C compiler: the TorchScript figure, and why there is no C one */
	{
		char *path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");

		setenv("PATH", "/nonexistent", 1);
		CHECK_OK(hml__latency_measure(&l, model_path("mlp_f32.pt"), &o));
		setenv("PATH", path, 1);
		free(path);
		CHECK(l.seconds[HML__TARGET_TORCHSCRIPT] > 0);
		CHECK(isnan(l.seconds[HML__TARGET_C]));
		CHECK_CONTAINS(l.unavailable[HML__TARGET_C], "no C compiler: 'cc' is not on PATH");
	}
	/* not measured when not asked */
	o.c = 0;
	CHECK_OK(hml__latency_measure(&l, model_path("affine.pt"), &o));
	CHECK(isnan(l.seconds[HML__TARGET_C]));
	CHECK_STR(l.unavailable[HML__TARGET_C], "");
	/* a file that is not a model fails */
	options(&o, rows, 1);
	CHECK_FAILS(hml__latency_measure(&l, model_path("state_dict.pt"), &o), HML_EMODEL,
	            "state_dict.pt");
	CHECK_FAILS(hml__latency_measure(&l, model_path("absent.pt"), &o), HML_ENOTFOUND,
	            "absent.pt");
	/* bad options */
	o.batch = 0;
	CHECK_FAILS(hml__latency_measure(&l, model_path("affine.pt"), &o), HML_EINVALID, "batch 0");
}

/* A build directory left by a process killed during a measurement (it is
 * gone) is reclaimed by the next measurement; those of live processes,
 * and other names, are left alone; the measurement leaves nothing. */
TEST(orphans)
{
	const char *base = getenv("HML_TEST_TMP");
	char tmp[512], dead[600], live[600], other[600], file[700], *old;
	float rows[15] = { 0 };
	hml__latency_options o;
	hml__latency l;
	pid_t pid = fork();
	DIR *d;
	struct dirent *e;
	int left = 0;

	if (pid == 0)
		_exit(0);
	CHECK(pid > 0 && waitpid(pid, NULL, 0) == pid);
	snprintf(tmp, sizeof(tmp), "%s/orphans-%d", base ? base : "/tmp", (int)getpid());
	snprintf(dead, sizeof(dead), "%s/hml-latency-%d-AbC123", tmp, (int)pid);
	snprintf(live, sizeof(live), "%s/hml-latency-%d-AbC123", tmp, (int)getppid());
	snprintf(other, sizeof(other), "%s/hml-latency-x", tmp);
	CHECK(mkdir(tmp, 0755) == 0 && mkdir(dead, 0755) == 0 && mkdir(live, 0755) == 0 &&
	      mkdir(other, 0755) == 0);
	snprintf(file, sizeof(file), "%s/latency.so", dead);
	fclose(fopen(file, "w"));
	old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
	setenv("TMPDIR", tmp, 1);
	options(&o, rows, 8);
	CHECK_OK(hml__latency_measure(&l, model_path("mlp_f32.pt"), &o));
	CHECK(l.seconds[HML__TARGET_C] > 0);
	if (old)
		setenv("TMPDIR", old, 1);
	else
		unsetenv("TMPDIR");
	free(old);
	CHECK(access(dead, F_OK) != 0);
	CHECK(access(live, F_OK) == 0);
	CHECK(access(other, F_OK) == 0);
	for (d = opendir(tmp); d && (e = readdir(d)) != NULL;)
		left += e->d_name[0] != '.';
	if (d)
		closedir(d);
	CHECK_EQ_INT(left, 2);
	rmdir(live);
	rmdir(other);
	rmdir(tmp);
}

int main(void)
{
	const char *m = getenv("HML_TEST_MODELS");

	snprintf(models, sizeof(models), "%s", m ? m : "models");
	RUN(targets);
	RUN(target_auto);
	RUN(card_round_trip);
	RUN(card_malformed);
	RUN(measure);
	RUN(orphans);
	return check_report();
}
