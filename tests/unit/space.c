/*
 * tests/unit/space.c - search spaces: parsing, encoding round trips,
 * conditional parameters, and every malformed space.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "search/opt/space.h"

static const char *mlp_space =
	"{\"layers\": {\"type\": \"int\", \"low\": 1, \"high\": 4},"
	" \"width_1\": {\"type\": \"int\", \"low\": 8, \"high\": 256, \"log\": true},"
	" \"width_2\": {\"type\": \"int\", \"low\": 8, \"high\": 256, \"log\": true,"
	"              \"when\": {\"parent\": \"layers\", \"min\": 2}},"
	" \"activation\": {\"type\": \"choice\", \"values\": [\"relu\", \"tanh\", \"gelu\"]},"
	" \"dropout\": {\"type\": \"float\", \"low\": 0, \"high\": 0.3},"
	" \"lr\": {\"type\": \"float\", \"low\": 1e-4, \"high\": 1e-2, \"log\": true},"
	" \"batch\": {\"type\": \"choice\", \"values\": [64, 128, 256]},"
	" \"optimizer\": {\"type\": \"choice\", \"values\": [\"adam\", \"sgd\"]},"
	" \"momentum\": {\"type\": \"float\", \"low\": 0, \"high\": 0.99,"
	"              \"when\": {\"parent\": \"optimizer\", \"values\": [\"sgd\"]}},"
	" \"epochs\": {\"type\": \"int\", \"low\": 10, \"high\": 200}}";

static int parse_text(hml__space **out, const char *text)
{
	json_error_t err;
	json_t *j = json_loads(text, 0, &err);
	if (!j) {
		fprintf(stderr, "bad test JSON: %s\n", err.text);
		return -100;
	}
	int rc = hml__space_parse(out, j, "test.json");
	json_decref(j);
	return rc;
}

TEST(dimensions_and_names)
{
	hml__space *s = NULL;
	CHECK_OK(parse_text(&s, mlp_space));
	if (!s)
		return;
	/* 1+1+1 + 3 (one-hot) + 1+1 + 1 (ordinal) + 2 (one-hot) + 1 + 1 */
	CHECK_EQ_INT(hml__space_dim(s), 13);
	CHECK_EQ_INT(hml__space_count(s), 10);
	CHECK_STR(hml__space_name(s, 3), "activation");
	hml__space_free(s);
}

/* Random points decode to valid samples; encoding a decoded sample and
 * decoding again gives the same sample; projection is idempotent. */
TEST(round_trip)
{
	hml__space *s = NULL;
	CHECK_OK(parse_text(&s, mlp_space));
	if (!s)
		return;
	size_t d = hml__space_dim(s);
	double u[13], v[13], w[13];
	unsigned seed = 7;
	int saw_inactive = 0, saw_active = 0, saw_sgd = 0;
	for (int trial = 0; trial < 500; trial++) {
		for (size_t k = 0; k < d; k++)
			u[k] = (double)(seed = seed * 1103515245u + 12345u) / 4294967296.0;
		json_t *a = NULL, *b = NULL;
		CHECK_OK(hml__space_decode(&a, s, u));
		CHECK_OK(hml__space_encode(v, s, a));
		CHECK_OK(hml__space_decode(&b, s, v));
		CHECK(json_equal(a, b));
		memcpy(w, u, sizeof u);
		hml__space_project(s, w);
		for (size_t k = 0; k < d; k++)
			CHECK(w[k] == v[k]);
		json_int_t layers = json_integer_value(json_object_get(a, "layers"));
		json_int_t width = json_integer_value(json_object_get(a, "width_1"));
		CHECK(layers >= 1 && layers <= 4);
		CHECK(width >= 8 && width <= 256);
		CHECK((json_object_get(a, "width_2") != NULL) == (layers >= 2));
		saw_inactive |= layers == 1;
		saw_active |= layers == 4;
		const char *opt = json_string_value(json_object_get(a, "optimizer"));
		CHECK((json_object_get(a, "momentum") != NULL) == !strcmp(opt, "sgd"));
		saw_sgd |= !strcmp(opt, "sgd");
		double lr = json_real_value(json_object_get(a, "lr"));
		CHECK(lr >= 1e-4 && lr <= 1e-2);
		json_decref(a);
		json_decref(b);
	}
	CHECK(saw_inactive && saw_active && saw_sgd);
	hml__space_free(s);
}

/* Ints cover their range evenly, including both ends; a sample is printed
 * as a JSON object of the active parameters. */
TEST(ends_and_printing)
{
	hml__space *s = NULL;
	CHECK_OK(parse_text(&s, "{\"n\": {\"type\": \"int\", \"low\": 1, \"high\": 4},"
	                        " \"c\": {\"type\": \"choice\", \"values\": [\"a\", \"b\"]},"
	                        " \"k\": {\"type\": \"choice\", \"values\": [3, 5],"
	                        "   \"when\": {\"parent\": \"n\", \"max\": 2}}}"));
	if (!s)
		return;
	double lo[4] = { 0, 0, 1, 0 }, hi[4] = { 1, 1, 0, 1 };
	json_t *a = NULL, *b = NULL;
	CHECK_OK(hml__space_decode(&a, s, lo));
	CHECK_OK(hml__space_decode(&b, s, hi));
	char *ta = json_dumps(a, JSON_COMPACT), *tb = json_dumps(b, JSON_COMPACT);
	CHECK_STR(ta, "{\"n\":1,\"c\":\"b\",\"k\":3}");
	CHECK_STR(tb, "{\"n\":4,\"c\":\"a\"}");
	free(ta);
	free(tb);
	json_decref(a);
	json_decref(b);
	int counts[5] = { 0 };
	for (int i = 0; i < 400; i++) {
		double u[4] = { (i + 0.5) / 400.0, 0, 0, 0 };
		json_t *x = NULL;
		CHECK_OK(hml__space_decode(&x, s, u));
		counts[json_integer_value(json_object_get(x, "n"))]++;
		json_decref(x);
	}
	for (int v = 1; v <= 4; v++)
		CHECK_EQ_INT(counts[v], 100);
	hml__space_free(s);
}

TEST(bad_samples)
{
	hml__space *s = NULL;
	double u[13];
	CHECK_OK(parse_text(&s, mlp_space));
	if (!s)
		return;
	json_t *ok = json_loads("{\"layers\": 1, \"width_1\": 16, \"activation\": \"relu\","
	                        " \"dropout\": 0.1, \"lr\": 0.001, \"batch\": 64,"
	                        " \"optimizer\": \"adam\", \"epochs\": 20}", 0, NULL);
	CHECK_OK(hml__space_encode(u, s, ok));
	json_object_set_new(ok, "width_2", json_integer(32));
	CHECK_FAILS(hml__space_encode(u, s, ok), HML_EINVALID, "key 'width_2' is set but inactive");
	json_object_set_new(ok, "layers", json_integer(2));
	CHECK_OK(hml__space_encode(u, s, ok));
	json_object_set_new(ok, "lr", json_real(0.5));
	CHECK_FAILS(hml__space_encode(u, s, ok), HML_EINVALID, "key 'lr': 0.5 is out of range");
	json_object_set_new(ok, "lr", json_real(0.001));
	json_object_set_new(ok, "activation", json_string("elu"));
	CHECK_FAILS(hml__space_encode(u, s, ok), HML_EINVALID, "key 'activation': \"elu\" is not");
	json_object_set_new(ok, "activation", json_string("relu"));
	json_object_set_new(ok, "lrr", json_real(0.1));
	CHECK_FAILS(hml__space_encode(u, s, ok), HML_EINVALID, "unknown key 'lrr'");
	json_object_del(ok, "lrr");
	json_object_del(ok, "epochs");
	CHECK_FAILS(hml__space_encode(u, s, ok), HML_EINVALID, "key 'epochs' is missing");
	json_decref(ok);
	hml__space_free(s);
}

/* Every malformed space fails with a one-line message naming the key. */
TEST(malformed_spaces)
{
	static const struct { const char *text, *msg; } cases[] = {
		{ "{}", "search space 'test.json': no parameters" },
		{ "[]", "must be an object of parameters" },
		{ "{\"lr\": 3}", "key 'lr' must be an object" },
		{ "{\"lr\": {\"low\": 1, \"high\": 2}}", "key 'lr.type' is missing" },
		{ "{\"lr\": {\"type\": \"real\", \"low\": 1, \"high\": 2}}",
		  "key 'lr.type': unknown type 'real' (expected int, float or choice)" },
		{ "{\"lr\": {\"type\": \"float\", \"low\": 0.1, \"high\": 0.01}}",
		  "key 'lr': low 0.1 is greater than high 0.01" },
		{ "{\"lr\": {\"type\": \"float\", \"low\": 0, \"high\": 1, \"log\": true}}",
		  "key 'lr': a log scale needs low > 0" },
		{ "{\"lr\": {\"type\": \"float\", \"high\": 1}}", "key 'lr.low' is missing" },
		{ "{\"lr\": {\"type\": \"float\", \"low\": \"a\", \"high\": 1}}",
		  "key 'lr.low' must be a number" },
		{ "{\"n\": {\"type\": \"int\", \"low\": 1.5, \"high\": 4}}",
		  "key 'n': low and high of an int must be integers" },
		/* found by fuzz_space: a bound that int64 cannot hold (undefined
		 * behaviour when decoded), and a number repeated as 0 and 0e8
		 * (a sample could not be encoded back to its index) */
		{ "{\"n\": {\"type\": \"int\", \"low\": 93, \"high\": 2.2e60}}",
		  "key 'n': low and high of an int must be within +-2^53" },
		{ "{\"n\": {\"type\": \"int\", \"low\": -9007199254740994, \"high\": 0}}",
		  "key 'n': low and high of an int must be within +-2^53" },
		{ "{\"h\": {\"type\": \"choice\", \"values\": [0, 32, 64, 0e8]}}",
		  "key 'h.values[3]' repeats an earlier value" },
		{ "{\"lr\": {\"type\": \"float\", \"low\": 0, \"hihg\": 1}}", "unknown key 'lr.hihg'" },
		{ "{\"act\": {\"type\": \"choice\", \"values\": []}}", "key 'act.values' is empty" },
		{ "{\"act\": {\"type\": \"choice\"}}", "key 'act.values' is missing" },
		{ "{\"act\": {\"type\": \"choice\", \"values\": [\"a\", 1]}}",
		  "key 'act.values' mixes strings and numbers" },
		{ "{\"act\": {\"type\": \"choice\", \"values\": [\"a\", \"a\"]}}",
		  "key 'act.values[1]' repeats an earlier value" },
		{ "{\"act\": {\"type\": \"choice\", \"values\": [\"a\"], \"low\": 0}}",
		  "key 'act': a choice takes 'values'" },
		{ "{\"w\": {\"type\": \"int\", \"low\": 1, \"high\": 2,"
		  " \"when\": {\"parent\": \"layrs\", \"min\": 2}}}",
		  "key 'w.when.parent': unknown parent 'layrs'" },
		{ "{\"w\": {\"type\": \"int\", \"low\": 1, \"high\": 2,"
		  " \"when\": {\"parent\": \"n\", \"min\": 2}},"
		  " \"n\": {\"type\": \"int\", \"low\": 1, \"high\": 4}}",
		  "key 'w.when.parent': later-declared parent 'n'" },
		{ "{\"n\": {\"type\": \"int\", \"low\": 1, \"high\": 4},"
		  " \"w\": {\"type\": \"int\", \"low\": 1, \"high\": 2, \"when\": {\"parent\": \"n\"}}}",
		  "key 'w.when' needs either 'values' or 'min'/'max'" },
		{ "{\"n\": {\"type\": \"int\", \"low\": 1, \"high\": 4},"
		  " \"w\": {\"type\": \"int\", \"low\": 1, \"high\": 2,"
		  "  \"when\": {\"parent\": \"n\", \"above\": 1}}}", "unknown key 'w.when.above'" },
		{ "{\"bad name\": {\"type\": \"int\", \"low\": 1, \"high\": 4}}",
		  "invalid parameter name 'bad name'" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		hml__space *s = (hml__space *)1;
		int rc = parse_text(&s, cases[i].text);
		CHECK_EQ_INT(rc, HML_EINVALID);
		CHECK(s == NULL);
		CHECK_CONTAINS(hml_error_last()->message, cases[i].msg);
		CHECK(!strchr(hml_error_last()->message, '\n'));
	}
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

/* Files: a bare space, a model family file, invalid JSON, duplicate keys, a
 * missing file; and the shipped model families parse. */
TEST(files)
{
	char path[4096], fam[4096], fifo[4200];
	const char *tmp = getenv("HML_TEST_TMP"), *src = getenv("HML_SOURCE_DIR");
	hml__space *s = NULL;
	CHECK(tmp && src);
	if (!tmp || !src)
		return;
	snprintf(path, sizeof path, "%s/space_test.json", tmp);
	write_file(path, mlp_space);
	CHECK_OK(hml__space_load(&s, path));
	hml__space_free(s);
	write_file(path, "{\"lr\": {\"type\": \"float\", \"low\": 1,}}");
	CHECK_FAILS(hml__space_load(&s, path), HML_EINVALID, "invalid JSON");
	write_file(path, "{\"lr\": {\"type\": \"float\", \"type\": \"int\"}}");
	CHECK_FAILS(hml__space_load(&s, path), HML_EINVALID, "invalid JSON: duplicate object key");
	CHECK_FAILS(hml__space_load(&s, "/nonexistent/space.json"), HML_EIO,
	            "cannot read search space '/nonexistent/space.json'");
	/* Read bounded: a FIFO is refused without blocking. */
	snprintf(fifo, sizeof(fifo), "%s.fifo", path);
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK_FAILS(hml__space_load(&s, fifo), HML_EIO, "': not a regular file");
	unlink(fifo);
	const char *families[] = { "mlp", "cnn", "cnnvec" };
	const size_t nparams[] = { 7, 7, 10 };   /* cnnvec adds pool, head and spatial */
	for (int i = 0; i < 3; i++) {
		snprintf(fam, sizeof fam, "%s/models/%s.json", src, families[i]);
		CHECK_OK(hml__space_load(&s, fam));
		CHECK(s && hml__space_count(s) == nparams[i]);
		hml__space_free(s);
		s = NULL;
	}
}

/* The example of hml-workflow(5), SEARCH SPACE, parses. */
TEST(manual_example)
{
	hml__space *s = NULL;
	CHECK_OK(parse_text(&s,
		"{\"layers\": {\"type\": \"int\", \"low\": 1, \"high\": 3},"
		" \"width_1\": {\"type\": \"int\", \"low\": 8, \"high\": 256, \"log\": true},"
		" \"width_2\": {\"type\": \"int\", \"low\": 8, \"high\": 256, \"log\": true,"
		"   \"when\": {\"parent\": \"layers\", \"min\": 2}},"
		" \"width_3\": {\"type\": \"int\", \"low\": 8, \"high\": 256, \"log\": true,"
		"   \"when\": {\"parent\": \"layers\", \"min\": 3}},"
		" \"activation\": {\"type\": \"choice\", \"values\": [\"relu\", \"tanh\", \"gelu\", \"silu\"]},"
		" \"dropout\": {\"type\": \"float\", \"low\": 0, \"high\": 0.2},"
		" \"lr\": {\"type\": \"float\", \"low\": 1e-4, \"high\": 1e-2, \"log\": true},"
		" \"batch\": {\"type\": \"choice\", \"values\": [64, 128, 256, 512]},"
		" \"weight_decay\": {\"type\": \"float\", \"low\": 1e-7, \"high\": 1e-3, \"log\": true},"
		" \"optimizer\": {\"type\": \"choice\", \"values\": [\"adam\", \"sgd\"]},"
		" \"momentum\": {\"type\": \"float\", \"low\": 0, \"high\": 0.99,"
		"   \"when\": {\"parent\": \"optimizer\", \"values\": [\"sgd\"]}},"
		" \"epochs\": {\"type\": \"int\", \"low\": 20, \"high\": 200}}"));
	CHECK(s && hml__space_count(s) == 12 && hml__space_dim(s) == 16);
	hml__space_free(s);
}

int main(void)
{
	RUN(dimensions_and_names);
	RUN(round_trip);
	RUN(ends_and_printing);
	RUN(bad_samples);
	RUN(malformed_spaces);
	RUN(files);
	RUN(manual_example);
	return check_report();
}
