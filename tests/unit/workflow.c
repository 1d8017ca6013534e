/*
 * tests/unit/workflow.c - workflow.json: a full document read back field by
 * field, defaults, lookup by path, by directory and by bundled name, and
 * every kind of malformed document, each with the key its message names.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "fixtures.h"
#include "core/util.h"
#include "run/workflow.h"
#include "sys/fsutil.h"
#include "train/train.h"


static const char *VALID =
	"{\n"
	"  \"schema_version\": 1,\n"
	"  \"name\": \"demo\",\n"
	"  \"description\": \"a test workflow\",\n"
	"  \"program\": \"app\",\n"
	"  \"env\": {\"OMP_PROC_BIND\": \"false\", \"EMPTY\": \"\"},\n"
	"  \"collect\": {\"args\": [\"--n\", \"100\", \"--seed\", \"{seed}\"], \"runs\": 2, \"seed\": 7},\n"
	"  \"evaluate\": {\"args\": [\"--n\", \"100\"], \"repeat\": 5},\n"
	"  \"regions\": [\n"
	"    {\"label\": \"first\", \"batch\": 64,\n"
	"     \"model\": {\"family\": \"mlp\", \"arch\": \"mlp:32x32:relu\",\n"
	"               \"train\": {\"epochs\": 10, \"batch\": 32, \"lr\": 0.01},\n"
	"               \"search_space\": {\"layers\": [1, 3]}}},\n"
	"    {\"label\": \"second.b-2\", \"model\": {\"family\": \"cnn\"}}\n"
	"  ],\n"
	"  \"qoi\": {\"dataset\": \"price\", \"metric\": \"mape\", \"mape_floor\": 1}\n"
	"}\n";

/* DIR/<sub>/ with an executable "app" in it; returns DIR/<sub>. */
static const char *make_dir(const char *sub)
{
	static char dirs[8][1024];
	static int k;
	char *d = dirs[k++ % 8], app[600];

	snprintf(d, sizeof(dirs[0]), "%s/%s", tmpdir, sub);
	if (hml__mkdir_p(d) < 0) {
		fprintf(stderr, "cannot make %s\n", d);
		exit(1);
	}
	snprintf(app, sizeof(app), "%s/app", d);
	write_text_mode(app, "#!/bin/sh\nexit 0\n", 0755);
	return d;
}

/* Write `doc` as DIR/<sub>/workflow.json; returns the file's path. */
static const char *write_doc(const char *sub, const json_t *doc)
{
	static char path[600];
	const char *d = make_dir(sub);
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	snprintf(path, sizeof(path), "%s/workflow.json", d);
	write_text_mode(path, text, 0644);
	free(text);
	return path;
}

static const char *write_raw(const char *sub, const char *text)
{
	static char path[600];
	const char *d = make_dir(sub);

	snprintf(path, sizeof(path), "%s/workflow.json", d);
	write_text_mode(path, text, 0644);
	return path;
}

/*
 * Set (value != NULL, stolen) or delete (value == NULL) the element at a
 * dotted path of `doc`: "collect.args", "regions.0.model.family".
 */
static void set_path(json_t *doc, const char *path, json_t *value)
{
	char buf[256], *key, *next, *save = NULL;
	json_t *cur = doc;

	snprintf(buf, sizeof(buf), "%s", path);
	key = strtok_r(buf, ".", &save);
	while ((next = strtok_r(NULL, ".", &save)) != NULL) {
		cur = json_is_array(cur) ? json_array_get(cur, (size_t)atoi(key))
		                         : json_object_get(cur, key);
		key = next;
	}
	if (json_is_array(cur)) {
		if (value)
			json_array_set_new(cur, (size_t)atoi(key), value);
		else
			json_array_remove(cur, (size_t)atoi(key));
	} else if (value) {
		json_object_set_new(cur, key, value);
	} else {
		json_object_del(cur, key);
	}
}

static json_t *valid_doc(void)
{
	json_error_t e;
	json_t *doc = json_loads(VALID, 0, &e);

	if (!doc) {
		fprintf(stderr, "VALID does not parse: %s\n", e.text);
		exit(1);
	}
	return doc;
}

/* sha256sum's opinion of a file. */
static void sha256sum(const char *path, char hex[65])
{
	char cmd[700];
	FILE *p;

	hex[0] = '\0';
	snprintf(cmd, sizeof(cmd), "sha256sum '%s'", path);
	if ((p = popen(cmd, "r")) != NULL) {
		if (fscanf(p, "%64s", hex) != 1)
			hex[0] = '\0';
		pclose(p);
	}
}

TEST(load_full_document)
{
	hml__workflow *w = NULL;
	const char *path = write_raw("full", VALID);
	char *abs = hml__path_abs(path), want[65];
	const hml__workflow_region *r;

	CHECK_OK(hml__workflow_load(&w, path));
	if (!w)
		goto done;
	CHECK_STR(w->name, "demo");
	CHECK_STR(w->description, "a test workflow");
	CHECK_STR(w->path, abs);
	CHECK(w->dir && strlen(w->dir) + strlen("/workflow.json") == strlen(abs) &&
	      strncmp(w->dir, abs, strlen(w->dir)) == 0);
	CHECK(w->program && w->program[0] == '/');
	CHECK(w->program && strlen(w->program) > 4 &&
	      strcmp(w->program + strlen(w->program) - 4, "/app") == 0);
	CHECK(w->program && strncmp(w->program, w->dir, strlen(w->dir)) == 0);
	CHECK_STR(w->env[0], "OMP_PROC_BIND=false");
	CHECK_STR(w->env[1], "EMPTY=");
	CHECK(w->env[2] == NULL);
	CHECK_STR(w->collect_args[0], "--n");
	CHECK_STR(w->collect_args[3], "{seed}");
	CHECK(w->collect_args[4] == NULL);
	CHECK_EQ_INT(w->collect_runs, 2);
	CHECK_EQ_INT(w->collect_seed, 7);
	CHECK_STR(w->evaluate_args[1], "100");
	CHECK(w->evaluate_args[2] == NULL);
	CHECK_EQ_INT(w->evaluate_repeat, 5);
	CHECK_EQ_INT(w->nregions, 2);
	CHECK_STR(w->regions[0].label, "first");
	CHECK_EQ_INT(w->regions[0].batch, 64);
	CHECK_STR(w->regions[0].family, "mlp");
	CHECK_STR(w->regions[0].arch, "mlp:32x32:relu");
	CHECK(json_integer_value(json_object_get(w->regions[0].train, "epochs")) == 10);
	CHECK(json_is_array(json_object_get(w->regions[0].search_space, "layers")));
	CHECK_STR(w->regions[1].label, "second.b-2");
	CHECK_EQ_INT(w->regions[1].batch, 0);
	CHECK_STR(w->regions[1].family, "cnn");
	CHECK(w->regions[1].arch == NULL);
	CHECK(w->regions[1].train == NULL);
	CHECK(w->regions[1].search_space == NULL);
	CHECK_EQ_INT(w->nqoi, 1);
	CHECK_STR(w->qoi[0].dataset, "price");
	CHECK_STR(w->qoi[0].metric, "mape");
	CHECK_NEAR(w->qoi[0].mape_floor, 1.0, 0.0);
	CHECK(isnan(w->qoi[0].max_error));
	CHECK(json_is_object(w->json));
	sha256sum(path, want);
	CHECK_EQ_INT(strlen(want), 64);
	CHECK_STR(w->sha256, want);

	r = hml__workflow_region_find(w, NULL);
	CHECK(r == &w->regions[0]);
	r = hml__workflow_region_find(w, "second.b-2");
	CHECK(r == &w->regions[1]);
	CHECK(hml__workflow_region_find(w, "third") == NULL);
	CHECK(hml__workflow_region_find(NULL, NULL) == NULL);
done:
	hml__workflow_free(w);
	hml__workflow_free(NULL);
	free(abs);
}

/* model.train over the options: every key sets its option, the rest stay. */
TEST(train_options)
{
	hml__workflow_region r;
	hml__train_options o = HML__TRAIN_OPTIONS_INIT, base = HML__TRAIN_OPTIONS_INIT;
	const char *nf = "drop";

	memset(&r, 0, sizeof(r));
	r.train = json_pack("{s:i, s:i, s:f, s:f, s:s, s:s, s:i, s:f, s:i, s:i, s:f, s:f, s:s,"
	                    " s:f}", "epochs", 7, "batch", 48, "lr", 0.02, "weight_decay", 0.5,
	                    "optimizer", "adamw", "schedule", "cosine", "patience", 3, "clip", 2.0,
	                    "seed", 11, "threads", 4, "val_fraction", 0.3, "test_fraction", 0.2,
	                    "nonfinite", "error", "max_seconds", 9.5);
	hml__workflow_train_options(&r, &o, &nf);
	CHECK(o.epochs == 7 && o.batch == 48 && o.lr == 0.02 && o.weight_decay == 0.5);
	CHECK_STR(o.optimizer, "adamw");
	CHECK_STR(o.schedule, "cosine");
	CHECK(o.patience == 3 && o.clip == 2.0 && o.seed == 11 && o.threads == 4);
	CHECK(o.val_fraction == 0.3 && o.test_fraction == 0.2 && o.max_seconds == 9.5);
	CHECK_STR(nf, "error");
	json_decref(r.train);

	/* A partial object; no nonfinite wanted; no region at all. */
	r.train = json_pack("{s:i}", "batch", 8);
	o = base;
	hml__workflow_train_options(&r, &o, NULL);
	CHECK(o.batch == 8 && o.epochs == base.epochs && o.lr == base.lr && o.seed == base.seed);
	CHECK_STR(o.optimizer, "adam");
	json_decref(r.train);

	/* rollout read, and clamped rather than wrapped (2^32 + 2 is not 2) */
	r.train = json_pack("{s:i}", "rollout", 4);
	o = base;
	CHECK_EQ_INT(o.rollout, 1);
	hml__workflow_train_options(&r, &o, NULL);
	CHECK_EQ_INT(o.rollout, 4);
	json_decref(r.train);
	r.train = json_pack("{s:I}", "rollout", (json_int_t)4294967298LL);
	hml__workflow_train_options(&r, &o, NULL);
	CHECK_EQ_INT(o.rollout, INT_MAX);
	json_decref(r.train);
	o = base;
	nf = "drop";
	hml__workflow_train_options(NULL, &o, &nf);
	CHECK(o.epochs == base.epochs && o.batch == base.batch && o.threads == base.threads &&
	      o.optimizer == base.optimizer && o.max_seconds == base.max_seconds);
	CHECK_STR(nf, "drop");
}

/* model.categorical: kept in the canonical "F:K,..." form (sorted), set
 * on the training options; none without it; an empty array is none. */
TEST(categorical)
{
	json_t *doc = valid_doc();
	hml__workflow *w = NULL;
	hml__train_options o = HML__TRAIN_OPTIONS_INIT;

	set_path(doc, "regions.0.model.categorical",
	         json_pack("[{s:i, s:i}, {s:i, s:i}]", "feature", 3, "classes", 12, "feature", 1,
	                   "classes", 2));
	CHECK_OK(hml__workflow_load(&w, write_doc("categorical", doc)));
	CHECK_STR(w->regions[0].categorical, "1:2,3:12");
	CHECK(w->regions[1].categorical == NULL);
	hml__workflow_train_options(&w->regions[0], &o, NULL);
	CHECK_STR(o.categorical, "1:2,3:12");
	hml__workflow_train_options(&w->regions[1], &o, NULL);
	CHECK(o.categorical == NULL);
	hml__workflow_free(w);
	w = NULL;
	set_path(doc, "regions.0.model.categorical", json_array());
	CHECK_OK(hml__workflow_load(&w, write_doc("categorical-empty", doc)));
	CHECK(w->regions[0].categorical == NULL);
	hml__workflow_free(w);
	json_decref(doc);
}

/* "conserve" (lib/core/conserve.h): kept in its canonical form, what
 * HML_CONSERVE_<LABEL> carries; none without it. */
TEST(conserve)
{
	json_t *doc = valid_doc();
	hml__workflow *w = NULL;

	set_path(doc, "regions.0.conserve", json_string("0, 2:-2, 2:-2"));
	CHECK_OK(hml__workflow_load(&w, write_doc("conserve", doc)));
	CHECK_STR(w->regions[0].conserve, "0,2:-2,2:-2");
	CHECK(w->regions[1].conserve == NULL);
	hml__workflow_free(w);
	json_decref(doc);
}

/* The error objective follows qoi.metric: mape -> MAPE and the relative
 * loss (its floor with it), overridden per region by model.train.loss. */
TEST(metric_and_loss)
{
	json_t *doc = valid_doc();
	hml__workflow *w = NULL;
	hml__train_options o = HML__TRAIN_OPTIONS_INIT;

	set_path(doc, "qoi.metric", json_string("mape"));
	set_path(doc, "qoi.mape_floor", json_real(1.0));
	set_path(doc, "regions.1.model.train", json_pack("{s:s}", "loss", "log"));
	CHECK_OK(hml__workflow_load(&w, write_doc("objective", doc)));
	if (w) {
		CHECK_STR(w->regions[0].metric, "mape");
		CHECK_STR(w->regions[0].loss, "relative");
		CHECK_STR(w->regions[1].metric, "mape");
		CHECK_STR(w->regions[1].loss, "log");
		hml__workflow_train_options(&w->regions[0], &o, NULL);
		CHECK_STR(o.loss, "relative");
		CHECK_STR(o.metric, "mape");
		CHECK(o.mape_floor == 1.0);
		hml__workflow_train_options(&w->regions[1], &o, NULL);
		CHECK_STR(o.loss, "log");
	}
	hml__workflow_free(w);
	json_decref(doc);
}

TEST(defaults)
{
	json_t *doc = valid_doc();
	hml__workflow *w = NULL;

	set_path(doc, "description", NULL);
	set_path(doc, "env", NULL);
	set_path(doc, "collect.runs", NULL);
	set_path(doc, "collect.seed", NULL);
	set_path(doc, "evaluate.repeat", NULL);
	set_path(doc, "qoi.metric", NULL);
	set_path(doc, "qoi.mape_floor", NULL);
	set_path(doc, "regions.0.batch", NULL);
	set_path(doc, "regions.0.model.arch", NULL);
	CHECK_OK(hml__workflow_load(&w, write_doc("defaults", doc)));
	if (w) {
		CHECK_STR(w->description, "");
		CHECK(w->env && w->env[0] == NULL);
		CHECK_EQ_INT(w->collect_runs, 1);
		CHECK_EQ_INT(w->collect_seed, 1);
		CHECK_EQ_INT(w->evaluate_repeat, 3);
		CHECK_STR(w->qoi[0].metric, "rmse");
		CHECK_NEAR(w->qoi[0].mape_floor, 0.0, 0.0);
		CHECK_STR(w->regions[0].metric, "rmse");
		CHECK_STR(w->regions[0].loss, "mse");
		CHECK_EQ_INT(w->regions[0].batch, 0);
		CHECK(w->regions[0].arch == NULL);
	}
	hml__workflow_free(w);
	json_decref(doc);
}

/* collect.sample and collect.compression: read into collect_keep;
 * absent, they set nothing; bad ones name the key. */
TEST(collect_keep)
{
	json_t *doc = valid_doc();
	hml__workflow *w = NULL;

	CHECK_OK(hml__workflow_load(&w, write_doc("keep0", doc)));
	if (w)
		CHECK(w->collect_keep.rate == 0 && w->collect_keep.reservoir == 0 &&
		      !w->collect_keep.dedup && w->collect_keep.seed == -1 &&
		      !w->collect_keep.compression);
	hml__workflow_free(w);
	w = NULL;
	json_object_set_new(json_object_get(doc, "collect"), "sample",
		json_pack("{s:f, s:i, s:b, s:i}", "rate", 0.25, "reservoir", 100, "dedup", 1,
		          "seed", 9));
	json_object_set_new(json_object_get(doc, "collect"), "compression",
	                    json_string("shuffle+deflate:2"));
	CHECK_OK(hml__workflow_load(&w, write_doc("keep1", doc)));
	if (w) {
		CHECK(w->collect_keep.rate == 0.25 && w->collect_keep.reservoir == 100 &&
		      w->collect_keep.dedup == 1 && w->collect_keep.seed == 9);
		CHECK_STR(w->collect_keep.compression, "shuffle+deflate:2");
	}
	hml__workflow_free(w);
	w = NULL;
	json_object_set_new(json_object_get(doc, "collect"), "compression", json_string("gzip"));
	CHECK_FAILS(hml__workflow_load(&w, write_doc("keep2", doc)), HML_EINVALID,
	            "key 'collect.compression' must be none, deflate:L");
	json_decref(doc);
}

TEST(path_forms)
{
	hml__workflow *w = NULL;
	const char *path = write_raw("forms", VALID);
	char dir[600], rel[64], cwd[1024];

	/* A directory means DIR/workflow.json. */
	snprintf(dir, sizeof(dir), "%s/forms", tmpdir);
	CHECK_OK(hml__workflow_load(&w, dir));
	CHECK(w && strcmp(w->name, "demo") == 0);
	hml__workflow_free(w);
	w = NULL;
	/* A relative path, resolved against the working directory, recorded absolute. */
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK(chdir(tmpdir) == 0);
	snprintf(rel, sizeof(rel), "forms/workflow.json");
	CHECK_OK(hml__workflow_load(&w, rel));
	CHECK(w && w->path[0] == '/' && w->program[0] == '/');
	hml__workflow_free(w);
	w = NULL;
	/* Any file name ending in .json is a path too. */
	CHECK(rename(path, "forms/other.json") == 0);
	CHECK_OK(hml__workflow_load(&w, "forms/other.json"));
	hml__workflow_free(w);
	w = NULL;
	CHECK(chdir("forms") == 0);
	CHECK_OK(hml__workflow_load(&w, "other.json"));
	hml__workflow_free(w);
	w = NULL;
	CHECK(chdir(cwd) == 0);

	CHECK_FAILS(hml__workflow_load(&w, "/nonexistent/dir/workflow.json"), HML_ENOTFOUND,
	            "cannot read workflow '/nonexistent/dir/workflow.json': No such file or directory");
	CHECK(w == NULL);
	snprintf(dir, sizeof(dir), "%s/empty-dir", tmpdir);
	hml__mkdir_p(dir);
	CHECK_FAILS(hml__workflow_load(&w, dir), HML_ENOTFOUND, "empty-dir/workflow.json");
	CHECK_FAILS(hml__workflow_load(&w, ""), HML_EINVALID, "needs a name or a path");
	/* Not a regular file: refused without opening it (a FIFO would block). */
	snprintf(dir, sizeof(dir), "%s/fifo.json", tmpdir);
	CHECK(mkfifo(dir, 0644) == 0);
	CHECK_FAILS(hml__workflow_load(&w, dir), HML_EINVALID, "not a regular file");
	CHECK_CONTAINS(hml_error_last()->message, "fifo.json");
	snprintf(dir, sizeof(dir), "%s/nested/workflow.json", tmpdir);
	hml__mkdir_p(dir);
	snprintf(dir, sizeof(dir), "%s/nested", tmpdir);
	CHECK_FAILS(hml__workflow_load(&w, dir), HML_EINVALID,
	            "nested/workflow.json': not a regular file");
	CHECK(w == NULL);
}

TEST(bundled_names)
{
	hml__workflow *w = NULL;
	char env[1200], a[600], b[600], cwd[1024], *sp;

	snprintf(a, sizeof(a), "%s/bundle-a", tmpdir);
	snprintf(b, sizeof(b), "%s/bundle-b", tmpdir);
	hml__mkdir_p(a);
	write_raw("bundle-b/demo", VALID);
	snprintf(env, sizeof(env), "%s:%s", a, b);
	setenv("HML_WORKFLOW_PATH", env, 1);

	sp = hml__workflow_search_path();
	CHECK(sp && strncmp(sp, env, strlen(env)) == 0);
	CHECK_CONTAINS(sp, "/workflows:");
	CHECK_CONTAINS(sp, "/libexec/hml/workflows");
	free(sp);

	CHECK_OK(hml__workflow_load(&w, "demo"));
	CHECK(w && strstr(w->path, "/bundle-b/demo/workflow.json") != NULL);
	hml__workflow_free(w);
	w = NULL;

	/* The first directory that has it wins. */
	write_raw("bundle-a/demo", VALID);
	CHECK_OK(hml__workflow_load(&w, "demo"));
	CHECK(w && strstr(w->path, "/bundle-a/demo/workflow.json") != NULL);
	hml__workflow_free(w);
	w = NULL;

	CHECK_FAILS(hml__workflow_load(&w, "nosuch"), HML_ENOTFOUND, "unknown workflow 'nosuch' (looked in: ");
	CHECK_CONTAINS(hml_error_last()->message, a);
	CHECK_CONTAINS(hml_error_last()->message, b);
	CHECK_CONTAINS(hml_error_last()->message, "/libexec/hml/workflows)");
	CHECK(w == NULL);
	/* ./NAME/workflow.json is suggested, never loaded: a name is not a path. */
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK(chdir(tmpdir) == 0);
	write_raw("local", VALID);
	CHECK_FAILS(hml__workflow_load(&w, "local"), HML_ENOTFOUND,
	            "unknown workflow 'local'; did you mean ./local? (looked in: ");
	CHECK_OK(hml__workflow_load(&w, "./local"));
	hml__workflow_free(w);
	w = NULL;
	CHECK(chdir(cwd) == 0);
	CHECK_FAILS(hml__workflow_load(&w, "local"), HML_ENOTFOUND, "unknown workflow 'local' (looked in: ");
	CHECK_FAILS(hml__workflow_load(&w, "bad name!"), HML_EINVALID,
	            "invalid workflow name 'bad name!'");
	CHECK_FAILS(hml__workflow_load(&w, ".."), HML_EINVALID, "invalid workflow name '..'");

	/* Empty entries of the variable are skipped; the build tree has binomial. */
	setenv("HML_WORKFLOW_PATH", "", 1);
	sp = hml__workflow_search_path();
	CHECK(sp && sp[0] == '/');
	free(sp);
	CHECK_OK(hml__workflow_load(&w, "binomial"));
	if (w) {
		CHECK_STR(w->name, "binomial");
		CHECK(strstr(w->path, "/workflows/binomial/workflow.json") != NULL);
		CHECK(access(w->program, X_OK) == 0);
		CHECK_EQ_INT(w->nregions, 1);
		CHECK_STR(w->regions[0].label, "binomial");
		CHECK_EQ_INT(w->regions[0].batch, 4096);
		CHECK_EQ_INT(w->nqoi, 1);
		CHECK_STR(w->qoi[0].dataset, "price");
	}
	hml__workflow_free(w);
	unsetenv("HML_WORKFLOW_PATH");
}

TEST(bad_json)
{
	hml__workflow *w = NULL;

	CHECK_FAILS(hml__workflow_load(&w, write_raw("syntax", "{\n  \"name\": \"x\",\n  oops\n}\n")),
	            HML_EINVALID, "invalid JSON: ");
	CHECK_CONTAINS(hml_error_last()->message, "(line 3, column");
	CHECK_CONTAINS(hml_error_last()->message, "/syntax/workflow.json'");
	CHECK_FAILS(hml__workflow_load(&w, write_raw("empty", "")), HML_EINVALID, "invalid JSON");
	CHECK_FAILS(hml__workflow_load(&w, write_raw("truncated", "{\"schema_version\": 1, \"name\"")),
	            HML_EINVALID, "invalid JSON");
	CHECK_FAILS(hml__workflow_load(&w, write_raw("array", "[1, 2]")), HML_EINVALID,
	            "the document must be a JSON object");
	CHECK_FAILS(hml__workflow_load(&w, write_raw("dup", "{\"name\": \"a\", \"name\": \"b\"}")),
	            HML_EINVALID, "duplicate");
	CHECK(w == NULL);
}

/* One malformed document: a change to VALID and the expected failure. */
typedef struct bad_case {
	const char *path;      /* dotted path changed */
	const char *value;     /* new value as JSON text, NULL: delete the key */
	int code;
	const char *message;   /* expected part of the message */
} bad_case;

static const bad_case bad_cases[] = {
	{ "search_args", "[]", HML_EINVALID, "key 'search_args' must be an object" },
	{ "search_args", "{\"kk\": {}}", HML_EINVALID, "unknown key 'search_args.kk'" },
	{ "search_args", "{\"k\": {\"values\": [5]}}", HML_EINVALID,
	  "key 'search_args.k.arg' must be a non-empty string starting with '-'" },
	{ "search_args", "{\"k\": {\"arg\": \"--k\"}}", HML_EINVALID,
	  "key 'search_args.k' needs 'values' or 'range' (one of them)" },
	{ "search_args", "{\"k\": {\"arg\": \"--k\", \"values\": [5, 5]}}", HML_EINVALID,
	  "key 'search_args.k.values' must be 1 to 64 increasing integers >= 1" },
	{ "search_args", "{\"k\": {\"arg\": \"--k\", \"values\": [0]}}", HML_EINVALID,
	  "key 'search_args.k.values' must be 1 to 64 increasing integers >= 1" },
	{ "search_args", "{\"interleave\": {\"range\": [3, 1]}}", HML_EINVALID,
	  "key 'search_args.interleave.range' must be [lo, hi] with 0 <= lo <= hi and at most 64 values" },
	{ "search_args", "{\"interleave\": {\"range\": [0, 64]}}", HML_EINVALID,
	  "key 'search_args.interleave.range' must be [lo, hi]" },
	{ "search_args", "{\"interleave\": {\"range\": [0, 2], \"step\": 1}}", HML_EINVALID,
	  "key 'search_args.interleave' has unknown key 'step'" },
	{ "colect", "{}", HML_EINVALID, "unknown key 'colect'" },
	{ "collect.arg", "[]", HML_EINVALID, "unknown key 'collect.arg'" },
	{ "evaluate.repeats", "2", HML_EINVALID, "unknown key 'evaluate.repeats'" },
	{ "qoi.metrc", "\"rmse\"", HML_EINVALID, "unknown key 'qoi.metrc'" },
	{ "regions.0.lable", "\"x\"", HML_EINVALID, "unknown key 'regions[0].lable'" },
	{ "regions.0.conserve", "3", HML_EINVALID, "key 'regions[0].conserve' must be a string" },
	{ "regions.0.conserve", "\"0,2:x\"", HML_EINVALID,
	  "key 'regions[0].conserve' is not a spec (conserve '0,2:x': 'x' is not an index)" },
	{ "regions.1.model.familly", "\"mlp\"", HML_EINVALID, "unknown key 'regions[1].model.familly'" },
	{ "regions.0.model.train.epoch", "5", HML_EINVALID, "unknown key 'regions[0].model.train.epoch'" },
	{ "schema_version", NULL, HML_EINVALID, "key 'schema_version' is missing" },
	{ "schema_version", "\"1\"", HML_EINVALID, "key 'schema_version' must be an integer" },
	{ "schema_version", "0", HML_EINVALID, "key 'schema_version' must be an integer from 1" },
	{ "schema_version", "2", HML_ENOTSUPPORTED, "schema_version 2 is newer" },
	{ "name", NULL, HML_EINVALID, "key 'name' is missing" },
	{ "name", "3", HML_EINVALID, "key 'name' must be a string" },
	{ "name", "\"\"", HML_EINVALID, "key 'name' must not be empty" },
	{ "name", "\"two words\"", HML_EINVALID, "key 'name' is 'two words'" },
	{ "description", "[]", HML_EINVALID, "key 'description' must be a string" },
	{ "program", NULL, HML_EINVALID, "key 'program' is missing" },
	{ "program", "[\"app\"]", HML_EINVALID, "key 'program' must be a string" },
	{ "env", "[]", HML_EINVALID, "key 'env' must be an object" },
	{ "env.OMP_PROC_BIND", "1", HML_EINVALID, "key 'env.OMP_PROC_BIND' must be a string" },
	{ "env.A=B", "\"x\"", HML_EINVALID, "key 'env.A=B' is not a valid environment variable name" },
	{ "collect", NULL, HML_EINVALID, "key 'collect' is missing" },
	{ "collect", "[]", HML_EINVALID, "key 'collect' must be an object" },
	{ "collect.args", NULL, HML_EINVALID, "key 'collect.args' is missing" },
	{ "collect.args", "\"--n 100\"", HML_EINVALID, "key 'collect.args' must be an array of strings" },
	{ "collect.args", "[\"--n\", 100]", HML_EINVALID, "key 'collect.args' must be an array of strings (item 1 is not)" },
	{ "collect.runs", "\"2\"", HML_EINVALID, "key 'collect.runs' must be an integer" },
	{ "collect.runs", "1.5", HML_EINVALID, "key 'collect.runs' must be an integer" },
	{ "collect.runs", "0", HML_EINVALID, "key 'collect.runs' must be an integer from 1 to 1000000, not 0" },
	{ "collect.seed", "-1", HML_EINVALID, "key 'collect.seed' must be an integer from 0" },
	{ "evaluate", NULL, HML_EINVALID, "key 'evaluate' is missing" },
	{ "evaluate.args", NULL, HML_EINVALID, "key 'evaluate.args' is missing" },
	{ "evaluate.repeat", "0", HML_EINVALID, "key 'evaluate.repeat' must be an integer from 1" },
	{ "regions", NULL, HML_EINVALID, "key 'regions' is missing" },
	{ "regions", "[]", HML_EINVALID, "key 'regions' must be a non-empty array of objects" },
	{ "regions", "{}", HML_EINVALID, "key 'regions' must be a non-empty array of objects" },
	{ "regions.1", "\"second\"", HML_EINVALID, "key 'regions[1]' must be an object" },
	{ "regions.0.label", NULL, HML_EINVALID, "key 'regions[0].label' is missing" },
	{ "regions.0.label", "7", HML_EINVALID, "key 'regions[0].label' must be a string" },
	{ "regions.1.label", "\"a b\"", HML_EINVALID, "key 'regions[1].label' is 'a b'" },
	{ "regions.1.label", "\"first\"", HML_EINVALID, "key 'regions[1].label' repeats label 'first' of regions[0]" },
	{ "regions.0.batch", "-1", HML_EINVALID, "key 'regions[0].batch' must be an integer from 0" },
	{ "regions.0.batch", "\"64\"", HML_EINVALID, "key 'regions[0].batch' must be an integer" },
	{ "regions.0.model", NULL, HML_EINVALID, "key 'regions[0].model' is missing" },
	{ "regions.0.model", "\"mlp\"", HML_EINVALID, "key 'regions[0].model' must be an object" },
	{ "regions.1.model.family", NULL, HML_EINVALID, "key 'regions[1].model.family' is missing" },
	{ "regions.1.model.family", "\"rnn\"", HML_EINVALID, "key 'regions[1].model.family' must be a model family (cnn, cnnvec, mlp), not 'rnn'" },
	{ "regions.0.model.arch", "\"cnn:16:relu\"", HML_EINVALID, "key 'regions[0].model.arch' is 'cnn:16:relu', which is not of family 'mlp'" },
	{ "regions.0.model.arch", "64", HML_EINVALID, "key 'regions[0].model.arch' must be a string" },
	{ "regions.0.model.train", "[]", HML_EINVALID, "key 'regions[0].model.train' must be an object" },
	{ "regions.0.model.train.lr", "\"fast\"", HML_EINVALID, "key 'regions[0].model.train.lr' must be a non-negative number" },
	{ "regions.0.model.train.epochs", "2.5", HML_EINVALID, "key 'regions[0].model.train.epochs' must be a non-negative integer" },
	{ "regions.0.model.train.optimizer", "1", HML_EINVALID, "key 'regions[0].model.train.optimizer' must be a string" },
	{ "regions.0.model.train.loss", "\"l2\"", HML_EINVALID, "key 'regions[0].model.train.loss' names an unknown loss 'l2' (known: mse, mae, relative, log)" },
	{ "regions.0.model.train.loss", "2", HML_EINVALID, "key 'regions[0].model.train.loss' must be a string" },
	{ "regions.0.model.search_space", "[]", HML_EINVALID, "key 'regions[0].model.search_space' must be an object" },
	{ "regions.0.model.categorical", "{\"feature\": 1, \"classes\": 4}", HML_EINVALID, "regions[0].model.categorical must be an array of {\"feature\": F, \"classes\": K}" },
	{ "regions.0.model.categorical", "[3]", HML_EINVALID, "regions[0].model.categorical[0] must be an object {\"feature\": F, \"classes\": K}" },
	{ "regions.0.model.categorical", "[{\"feature\": 1}]", HML_EINVALID, "regions[0].model.categorical[0] needs integers 'feature' and 'classes'" },
	{ "regions.0.model.categorical", "[{\"feature\": \"1\", \"classes\": 4}]", HML_EINVALID, "regions[0].model.categorical[0] needs integers 'feature' and 'classes'" },
	{ "regions.0.model.categorical", "[{\"feature\": 1, \"classes\": 4, \"name\": \"m\"}]", HML_EINVALID, "regions[0].model.categorical[0]: unknown key 'name' (known: feature, classes)" },
	{ "regions.0.model.categorical", "[{\"feature\": 1, \"classes\": 1}]", HML_EINVALID, "regions[0].model.categorical: classes 1 of feature 1 is outside 2 to 4096" },
	{ "regions.0.model.categorical", "[{\"feature\": 1, \"classes\": 4097}]", HML_EINVALID, "classes 4097 of feature 1 is outside 2 to 4096" },
	{ "regions.0.model.categorical", "[{\"feature\": -1, \"classes\": 4}]", HML_EINVALID, "regions[0].model.categorical: feature -1 is negative" },
	{ "regions.0.model.categorical", "[{\"feature\": 2, \"classes\": 4}, {\"feature\": 2, \"classes\": 5}]", HML_EINVALID, "regions[0].model.categorical: feature 2 is declared twice" },
	{ "regions.1.model.categorical", "[{\"feature\": 0, \"classes\": 4}]", HML_EINVALID, "regions[1].model.categorical: categorical features are for the mlp family, not 'cnn'" },
	{ "qoi", NULL, HML_EINVALID, "key 'qoi' is missing" },
	{ "qoi.dataset", NULL, HML_EINVALID, "key 'qoi.dataset' is missing" },
	{ "qoi.dataset", "false", HML_EINVALID, "key 'qoi.dataset' must be a string" },
	{ "qoi.metric", "\"mse\"", HML_EINVALID, "key 'qoi.metric' must be \"rmse\", \"mape\" or \"max_abs\", not 'mse'" },
	{ "qoi.mape_floor", "\"1\"", HML_EINVALID, "key 'qoi.mape_floor' must be a finite number >= 0" },
	{ "qoi.mape_floor", "-1", HML_EINVALID, "key 'qoi.mape_floor' must be a finite number >= 0" },
	{ "qoi.max_error", "-0.5", HML_EINVALID, "key 'qoi.max_error' must be a finite number >= 0" },
	{ "qoi.max_error", "\"0.1\"", HML_EINVALID, "key 'qoi.max_error' must be a finite number >= 0" },
	{ "qoi", "\"price\"", HML_EINVALID, "key 'qoi' must be an object or a non-empty array of objects" },
	{ "qoi", "[]", HML_EINVALID, "key 'qoi' must be an object or a non-empty array of objects" },
	{ "qoi", "[{\"dataset\": \"a\"}, \"b\"]", HML_EINVALID, "key 'qoi[1]' must be an object" },
	{ "qoi", "[{\"dataset\": \"a\"}, {\"metric\": \"rmse\"}]", HML_EINVALID, "key 'qoi[1].dataset' is missing" },
	{ "qoi", "[{\"dataset\": \"a\"}, {\"dataset\": 2}]", HML_EINVALID, "key 'qoi[1].dataset' must be a string" },
	{ "qoi", "[{\"dataset\": \"a\"}, {\"dataset\": \"b\"}, {\"dataset\": \"a\"}]", HML_EINVALID, "key 'qoi[2].dataset' repeats data set 'a' of qoi[0]" },
	{ "qoi", "[{\"dataset\": \"a\"}, {\"dataset\": \"b\", \"max_eror\": 1}]", HML_EINVALID, "unknown key 'qoi[1].max_eror'" },
	{ "qoi", "[{\"dataset\": \"a\"}, {\"dataset\": \"b\", \"metric\": \"l1\"}]", HML_EINVALID, "key 'qoi[1].metric' must be \"rmse\", \"mape\" or \"max_abs\", not 'l1'" },
	{ "qoi", "[{\"dataset\": \"a\"}, {\"dataset\": \"b\", \"max_error\": -1}]", HML_EINVALID, "key 'qoi[1].max_error' must be a finite number >= 0" },
	{ "qoi", "[{\"dataset\": \"a\", \"mape_floor\": null}]", HML_EINVALID, "key 'qoi[0].mape_floor' must be a finite number >= 0" },
	{ "success_exit_codes", "[]", HML_EINVALID, "key 'success_exit_codes' must be a non-empty array of exit statuses (integers from 0 to 255)" },
	{ "success_exit_codes", "0", HML_EINVALID, "key 'success_exit_codes' must be a non-empty array" },
	{ "success_exit_codes", "[0, 256]", HML_EINVALID, "key 'success_exit_codes' must be an array of exit statuses from 0 to 255 (item 1 is not)" },
	{ "success_exit_codes", "[-1]", HML_EINVALID, "(item 0 is not)" },
	{ "success_exit_codes", "[\"1\"]", HML_EINVALID, "(item 0 is not)" },
	{ "verify", "\"PASSED\"", HML_EINVALID, "key 'verify' must be an object" },
	{ "verify", "{}", HML_EINVALID, "key 'verify.pattern' is missing" },
	{ "verify", "{\"pattern\": \"\"}", HML_EINVALID, "key 'verify.pattern' must not be empty" },
	{ "verify", "{\"pattern\": 1}", HML_EINVALID, "key 'verify.pattern' must be a string" },
	{ "verify", "{\"pattern\": \"x\", \"stream\": \"stdout\"}", HML_EINVALID, "unknown key 'verify.stream'" },
	{ "verify", "{\"pattern\": \"PASSED (\"}", HML_EINVALID, "key 'verify.pattern' is not a POSIX extended regular expression: " },
	{ "program", "\"nope\"", HML_ENOTFOUND, "program '" },
	{ "program", "\"/nonexistent/app\"", HML_ENOTFOUND, "program '/nonexistent/app' not found" },
	{ "program", "\".\"", HML_ENOTFOUND, "is not a file" },
};

TEST(malformed_documents)
{
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const bad_case *c = &bad_cases[i];
		json_t *doc = valid_doc(), *value = NULL;
		hml__workflow *w = NULL;
		char sub[32];
		int rc;

		if (c->value && !(value = json_loads(c->value, JSON_DECODE_ANY, NULL))) {
			fprintf(stderr, "case %zu: bad value %s\n", i, c->value);
			CHECK(0);
			continue;
		}
		set_path(doc, c->path, value);
		snprintf(sub, sizeof(sub), "bad-%zu", i);
		rc = hml__workflow_load(&w, write_doc(sub, doc));
		if (rc != c->code || !strstr(hml_error_last()->message, c->message)) {
			fprintf(stderr, "case %zu (%s = %s): rc %d, message \"%s\"; expected %d, \"%s\"\n",
			        i, c->path, c->value ? c->value : "(deleted)", rc,
			        hml_error_last()->message, c->code, c->message);
			CHECK(0);
		}
		/* Every message names the file. */
		CHECK_CONTAINS(hml_error_last()->message, "workflow '");
		CHECK(w == NULL);
		json_decref(doc);
	}
}

/* "qoi" as an array: every entry read in order, the first the primary,
 * whose metric and floor the regions' training takes. */
TEST(qoi_array)
{
	json_t *doc = valid_doc();
	hml__workflow *w = NULL;

	set_path(doc, "qoi", json_pack("[{s:s, s:s, s:f}, {s:s, s:f}, {s:s, s:s, s:i}]",
	                               "dataset", "state", "metric", "mape", "mape_floor", 0.5,
	                               "dataset", "mass", "max_error", 0.25,
	                               "dataset", "count", "metric", "max_abs", "max_error", 0));
	CHECK_OK(hml__workflow_load(&w, write_doc("qoi-array", doc)));
	if (w) {
		CHECK_EQ_INT(w->nqoi, 3);
		CHECK_STR(w->qoi[0].dataset, "state");
		CHECK_STR(w->qoi[0].metric, "mape");
		CHECK_NEAR(w->qoi[0].mape_floor, 0.5, 0.0);
		CHECK(isnan(w->qoi[0].max_error));
		CHECK_STR(w->qoi[1].dataset, "mass");
		CHECK_STR(w->qoi[1].metric, "rmse");
		CHECK_NEAR(w->qoi[1].mape_floor, 0.0, 0.0);
		CHECK_NEAR(w->qoi[1].max_error, 0.25, 0.0);
		CHECK_STR(w->qoi[2].metric, "max_abs");
		CHECK_NEAR(w->qoi[2].max_error, 0.0, 0.0);
		/* The primary decides the training objective of every region. */
		CHECK_STR(w->regions[0].metric, "mape");
		CHECK_STR(w->regions[0].loss, "relative");
		CHECK_NEAR(w->regions[0].mape_floor, 0.5, 0.0);
		CHECK_STR(w->regions[1].metric, "mape");
	}
	hml__workflow_free(w);
	w = NULL;
	/* Another primary: another objective; a one-entry array is the object. */
	set_path(doc, "qoi", json_pack("[{s:s}, {s:s, s:s}]", "dataset", "mass",
	                               "dataset", "state", "metric", "mape"));
	CHECK_OK(hml__workflow_load(&w, write_doc("qoi-primary", doc)));
	if (w) {
		CHECK_STR(w->qoi[0].dataset, "mass");
		CHECK_STR(w->regions[0].metric, "rmse");
		CHECK_STR(w->regions[0].loss, "mse");
	}
	hml__workflow_free(w);
	w = NULL;
	set_path(doc, "qoi", json_pack("[{s:s, s:f}]", "dataset", "price", "max_error", 1.5));
	CHECK_OK(hml__workflow_load(&w, write_doc("qoi-one", doc)));
	if (w) {
		CHECK_EQ_INT(w->nqoi, 1);
		CHECK_STR(w->qoi[0].dataset, "price");
		CHECK_NEAR(w->qoi[0].max_error, 1.5, 0.0);
	}
	hml__workflow_free(w);
	/* A bound too large for a double is no number JSON gives (jansson). */
	CHECK_FAILS(hml__workflow_load(&w, write_raw("qoi-inf", "{\"qoi\": {\"dataset\": "
	                                             "\"a\", \"max_error\": 1e999}}")),
	            HML_EINVALID, "invalid JSON: real number overflow");
	json_decref(doc);
}

/* "search_args": read (values and ranges), written back as read, and a
 * choice set on a run's command line and read from it again. */
TEST(search_args)
{
	json_t *doc = valid_doc(), *back;
	hml__workflow *w = NULL;
	char *argv[] = { "app", "--n", "3", "--k", "10", NULL }, **out = NULL;
	int64_t v = 0;

	CHECK_OK(hml__workflow_load(&w, write_doc("sa-none", doc)));
	CHECK(w && !hml__search_args_any(&w->search_args));
	hml__workflow_free(w);
	w = NULL;
	set_path(doc, "search_args", json_pack("{s:{s:s, s:[i, i, i]}, s:{s:[i, i]}}",
	         "k", "arg", "--k", "values", 5, 10, 20, "interleave", "range", 0, 3));
	CHECK_OK(hml__workflow_load(&w, write_doc("sa", doc)));
	if (w) {
		const hml__search_args *a = &w->search_args;

		CHECK(hml__search_args_any(a));
		CHECK_STR(a->k.arg, "--k");
		CHECK_EQ_INT(a->k.n, 3);
		CHECK_EQ_INT(a->k.values[2], 20);
		CHECK(a->interleave.arg == NULL);
		CHECK_EQ_INT(a->interleave.n, 4);
		CHECK_EQ_INT(a->interleave.values[3], 3);
		back = hml__search_args_json(a);
		{
			char *t = json_dumps(back, JSON_SORT_KEYS | JSON_COMPACT);

			CHECK_STR(t, "{\"interleave\":{\"values\":[0,1,2,3]},"
			          "\"k\":{\"arg\":\"--k\",\"values\":[5,10,20]}}");
			free(t);
		}
		/* What it writes reads back the same. */
		set_path(doc, "search_args", back);
		hml__workflow_free(w);
		w = NULL;
		CHECK_OK(hml__workflow_load(&w, write_doc("sa-back", doc)));
		CHECK(w && w->search_args.k.n == 3 && w->search_args.interleave.n == 4);
	}
	/* A choice on the command line: replaced where given, else appended. */
	CHECK_OK(hml__search_args_set(&out, argv, "--k", 5));
	CHECK(out && hml__search_args_value_in("--k", out, &v) && v == 5);
	CHECK(out && out[5] == NULL && strcmp(out[2], "3") == 0);
	hml__strv_free(out);
	CHECK_OK(hml__search_args_set(&out, argv, "--steps", 40));
	CHECK(out && hml__search_args_value_in("--steps", out, &v) && v == 40);
	CHECK(out && hml__search_args_value_in("--k", out, &v) && v == 10);
	hml__strv_free(out);
	CHECK(!hml__search_args_value_in("--x", argv, &v));
	hml__workflow_free(w);
	json_decref(doc);
}

/* success_exit_codes and verify: read, defaulted, and applied to a run. */
TEST(exit_codes_and_verify)
{
	json_t *doc = valid_doc();
	hml__workflow *w = NULL;
	char log[600];
	int passed = -1;

	CHECK_OK(hml__workflow_load(&w, write_doc("codes-default", doc)));
	if (w) {
		CHECK(hml__workflow_exit_ok(w, 0) && !hml__workflow_exit_ok(w, 1));
		CHECK(w->verify_pattern == NULL && w->verify_re == NULL);
		CHECK_OK(hml__workflow_verify(w, "/nonexistent/log", &passed));
		CHECK_EQ_INT(passed, 1);
	}
	hml__workflow_free(w);
	w = NULL;
	set_path(doc, "success_exit_codes", json_pack("[i, i]", 0, 3));
	set_path(doc, "verify", json_pack("{s:s}", "pattern", "^Verification: (PASSED|OK)$"));
	CHECK_OK(hml__workflow_load(&w, write_doc("codes", doc)));
	if (!w)
		goto done;
	CHECK(hml__workflow_exit_ok(w, 0) && hml__workflow_exit_ok(w, 3));
	CHECK(!hml__workflow_exit_ok(w, 1) && !hml__workflow_exit_ok(w, 255));
	CHECK_STR(w->verify_pattern, "^Verification: (PASSED|OK)$");
	snprintf(log, sizeof(log), "%s/codes/run.log", tmpdir);
	/* A matching line anywhere, the last one without its newline too. */
	write_text_mode(log, "step 1\nVerification: PASSED\nbye\n", 0644);
	CHECK_OK(hml__workflow_verify(w, log, &passed));
	CHECK_EQ_INT(passed, 1);
	write_text_mode(log, "step 1\nVerification: OK", 0644);
	CHECK_OK(hml__workflow_verify(w, log, &passed));
	CHECK_EQ_INT(passed, 1);
	/* Anchors hold per line: text around the phrase fails it. */
	write_text_mode(log, "Verification: FAILED\n  Verification: PASSED\n", 0644);
	CHECK_OK(hml__workflow_verify(w, log, &passed));
	CHECK_EQ_INT(passed, 0);
	write_text_mode(log, "", 0644);
	CHECK_OK(hml__workflow_verify(w, log, &passed));
	CHECK_EQ_INT(passed, 0);
	CHECK_FAILS(hml__workflow_verify(w, "/nonexistent/log", &passed), HML_ENOTFOUND,
	            "cannot read '/nonexistent/log': No such file or directory");
done:
	hml__workflow_free(w);
	json_decref(doc);
}

/* Collect and evaluate on the same inputs: no {seed}, equal arguments. */
TEST(same_inputs)
{
	json_t *doc = valid_doc();
	hml__workflow *w = NULL;
	char *a[] = { "--n", "100", NULL }, *b[] = { "--n", "100", "--x", NULL };
	char *seeded[] = { "--n", "100", "--seed={seed}", NULL };

	CHECK_OK(hml__workflow_load(&w, write_doc("same-seeded", doc)));
	/* VALID's collect args hold {seed}: never the same inputs. */
	CHECK(w && !hml__workflow_same_inputs(w, NULL, NULL));
	CHECK(w && !hml__workflow_same_inputs(w, NULL, w->collect_args));
	CHECK(w && !hml__workflow_same_inputs(w, seeded, seeded));
	/* Given lists: equal or not. */
	CHECK(w && hml__workflow_same_inputs(w, a, NULL));
	CHECK(w && hml__workflow_same_inputs(w, a, a));
	CHECK(w && !hml__workflow_same_inputs(w, a, b) && !hml__workflow_same_inputs(w, b, a));
	hml__workflow_free(w);
	w = NULL;
	set_path(doc, "collect.args", json_pack("[s, s]", "--n", "100"));
	CHECK_OK(hml__workflow_load(&w, write_doc("same", doc)));
	CHECK(w && hml__workflow_same_inputs(w, NULL, NULL));
	CHECK(w && !hml__workflow_same_inputs(w, NULL, b));
	hml__workflow_free(w);
	json_decref(doc);
}

TEST(program_not_executable)
{
	hml__workflow *w = NULL;
	char app[600];
	const char *path = write_raw("noexec", VALID);

	snprintf(app, sizeof(app), "%s/noexec/app", tmpdir);
	chmod(app, 0644);
	CHECK_FAILS(hml__workflow_load(&w, path), HML_ENOTFOUND, "is not executable");
	CHECK_CONTAINS(hml_error_last()->message, app);
	unlink(app);
	CHECK_FAILS(hml__workflow_load(&w, path), HML_ENOTFOUND, "not found");
	CHECK_CONTAINS(hml_error_last()->message, app);
	CHECK(w == NULL);
}

int main(void)
{
	if (tmp_dir_make("workflow") < 0)
		return 1;
	RUN(load_full_document);
	RUN(defaults);
	RUN(train_options);
	RUN(metric_and_loss);
	RUN(categorical);
	RUN(conserve);
	RUN(collect_keep);
	RUN(path_forms);
	RUN(bundled_names);
	RUN(bad_json);
	RUN(malformed_documents);
	RUN(qoi_array);
	RUN(search_args);
	RUN(exit_codes_and_verify);
	RUN(same_inputs);
	RUN(program_not_executable);
	tmp_dir_remove();
	return check_report();
}
