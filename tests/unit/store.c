/*
 * tests/unit/store.c - the experiment store: creating and reopening,
 * registering records with files (renames, ids, hashes, cards,
 * provenance), corrupt manifests left byte-identical, unwritable places,
 * the lock (timeout message, four writers at once), updates, rollback
 * when the manifest cannot be written, and stray temporary files.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "core/error.h"
#include "fixtures.h"
#include "hml/version.h"
#include "store/store.h"
#include "sys/fsutil.h"

#define SHA_ABC "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

static char *path_in(const char *fmt, const char *name)
{
	static char bufs[16][1024];
	static int k;
	char *p = bufs[k++ % 16];

	snprintf(p, sizeof(bufs[0]), "%s/", tmpdir);
	snprintf(p + strlen(p), sizeof(bufs[0]) - strlen(p), fmt, name);
	return p;
}

/* A fresh experiment directory name under the test's temporary dir. */
static const char *fresh(const char *name)
{
	static char d[1024];

	snprintf(d, sizeof(d), "%s/%s", tmpdir, name);
	rm_rf(d);
	return d;
}

static json_t *load(const char *path)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);

	if (!j)
		fprintf(stderr, "%s: %s\n", path, je.text);
	return j;
}

/* A produced artefact: a temporary file in the experiment with `text`. */
static char *produce(hml__store *s, const char *subdir, const char *ext, const char *text)
{
	char *p = hml__store_tmp_path(s, subdir, ext);

	if (p)
		write_text(p, text);
	return p;
}

static int add_data(hml__store *s, const char *text, char id[16])
{
	char *tmp = produce(s, "data", ".h5", text);
	hml__store_file f = { "data", tmp, ".h5", NULL, NULL };
	int rc = hml__store_add(s, "datasets", json_pack("{s:b}", "complete", 1), &f, 1, 0, id, 16);

	free(tmp);
	return rc;
}

TEST(create_open_reopen)
{
	const char *dir = fresh("exp-create");
	hml__store *s = NULL;
	const json_t *m;
	char *text;
	struct stat st;

	CHECK_FAILS(hml__store_open(&s, dir, 0), HML_ENOTFOUND, "no experiment at '");
	CHECK_CONTAINS(hml_error_last()->message, "exp-create' (run 'hml collect' first)");
	CHECK(s == NULL);
	CHECK(!exists(dir));

	CHECK_OK(hml__store_open(&s, dir, 1));
	CHECK_STR(hml__store_dir(s), dir);
	CHECK(stat(path_in("exp-create/%s", "data"), &st) == 0 && S_ISDIR(st.st_mode));
	CHECK(stat(path_in("exp-create/%s", "models"), &st) == 0 && S_ISDIR(st.st_mode));
	CHECK(stat(path_in("exp-create/%s", "eval"), &st) == 0 && S_ISDIR(st.st_mode));
	m = hml__store_manifest(s);
	CHECK_EQ_INT(json_integer_value(json_object_get(m, "schema_version")), 1);
	CHECK_STR(json_string_value(json_object_get(m, "hml_version")), HML_VERSION_STRING);
	CHECK(strlen(json_string_value(json_object_get(m, "created"))) == 20);
	CHECK(json_array_size(json_object_get(m, "datasets")) == 0);
	CHECK(json_is_array(json_object_get(m, "models")));
	CHECK(json_is_array(json_object_get(m, "deployments")));
	CHECK(json_is_array(json_object_get(m, "evaluations")));
	hml__store_free(s);

	/* Human-diffable: indented, in the documented order, newline at the end. */
	text = read_text(path_in("exp-create/%s", "manifest.json"));
	CHECK(text && text[strlen(text) - 1] == '\n');
	CHECK(text && strncmp(text, "{\n  \"schema_version\": 1,\n  \"hml_version\"", 40) == 0);
	free(text);

	CHECK_OK(hml__store_open(&s, dir, 0));
	CHECK_OK(hml__store_reload(s));
	CHECK(hml__store_find(s, "datasets", "d1") == NULL);
	{
		char *p = hml__store_path(s, "models/m1.pt");
		char *t = hml__store_tmp_path(s, "models", ".pt");
		char *t2 = hml__store_tmp_path(s, "models", ".pt");
		char pre[1100];

		CHECK_STR(p, path_in("exp-create/%s", "models/m1.pt"));
		snprintf(pre, sizeof(pre), "%s/models/.tmp-%ld-", dir, (long)getpid());
		CHECK(t && strncmp(t, pre, strlen(pre)) == 0);
		CHECK(t && strcmp(t + strlen(t) - 3, ".pt") == 0);
		CHECK(t && t2 && strcmp(t, t2) != 0);
		CHECK(t && !exists(t));
		free(p);
		free(t);
		free(t2);
	}
	hml__store_free(s);
	hml__store_free(NULL);

	/* Opening an existing one with create keeps its records. */
	CHECK_OK(hml__store_open(&s, dir, 1));
	hml__store_free(s);
}

TEST(datasets_get_ids_files_and_provenance)
{
	const char *dir = fresh("exp-data");
	hml__store *s = NULL, *s2 = NULL;
	char id[16], *tmp, *text;
	const json_t *r, *prov, *v;
	const char *key;

	CHECK_OK(hml__store_open(&s, dir, 1));
	hml__store_set_version("libtorch", "9.9.9");
	tmp = produce(s, "data", ".h5", "abc");
	{
		hml__store_file f = { "data", tmp, ".h5", NULL, NULL };
		json_t *rec = json_pack("{s:{s:s}, s:b, s:[]}", "workflow", "name", "binomial",
		                        "complete", 1, "runs");

		CHECK_OK(hml__store_add(s, "datasets", rec, &f, 1, 0, id, sizeof(id)));
	}
	CHECK_STR(id, "d1");
	CHECK(!exists(tmp));
	free(tmp);
	CHECK_STR(text = read_text(path_in("exp-data/%s", "data/d1.h5")), "abc");
	free(text);
	CHECK_OK(add_data(s, "second", id));
	CHECK_STR(id, "d2");

	r = hml__store_find(s, "datasets", "d1");
	CHECK(r != NULL);
	CHECK_STR(json_string_value(json_object_get(json_object_get(r, "files"), "data")), "data/d1.h5");
	CHECK_STR(json_string_value(json_object_get(json_object_get(r, "workflow"), "name")), "binomial");
	CHECK(json_is_true(json_object_get(r, "complete")));
	/* "id" first, the command's fields, then files and provenance */
	{
		void *it = json_object_iter((json_t *)r);
		const char *order[] = { "id", "workflow", "complete", "runs", "files", "provenance" };

		for (int i = 0; i < 6; i++, it = json_object_iter_next((json_t *)r, it))
			CHECK_STR(it ? json_object_iter_key(it) : NULL, order[i]);
		CHECK(it == NULL);
	}
	prov = json_object_get(r, "provenance");
	CHECK_STR(json_string_value(json_object_get(json_object_get(prov, "sha256"), "data/d1.h5")),
	          SHA_ABC);
	CHECK_EQ_INT(json_object_size(json_object_get(prov, "sha256")), 1);
	CHECK(strlen(json_string_value(json_object_get(prov, "time"))) == 20);
	CHECK(json_string_length(json_object_get(prov, "host")) > 0);
	CHECK(json_string_length(json_object_get(prov, "user")) > 0);
	CHECK(json_string_length(json_object_get(prov, "cwd")) > 0);
	/* Not set by main(): the command line as the kernel has it. */
	v = json_object_get(prov, "command");
	CHECK(json_array_size(v) >= 1);
	CHECK(strstr(json_string_value(json_array_get(v, 0)), "test_store") != NULL);
	v = json_object_get(prov, "versions");
	CHECK_STR(json_string_value(json_object_get(v, "hml")), HML_VERSION_STRING);
	CHECK_STR(json_string_value(json_object_get(v, "jansson")), JANSSON_VERSION);
	CHECK(json_string_length(json_object_get(v, "hdf5")) >= 5);
	CHECK_STR(json_string_value(json_object_get(v, "libtorch")), "9.9.9");

	/* The command line main() sets is the one recorded. */
	{
		char *argv[] = { (char *)"/usr/bin/hml", (char *)"-C", (char *)"x",
		                 (char *)"collect", (char *)"binomial", NULL };

		hml__store_set_command(5, argv);
		CHECK_OK(add_data(s, "third", id));
		CHECK_STR(id, "d3");
		v = json_object_get(json_object_get(hml__store_find(s, "datasets", "d3"), "provenance"),
		                    "command");
		CHECK_EQ_INT(json_array_size(v), 5);
		CHECK_STR(json_string_value(json_array_get(v, 3)), "collect");
	}

	/* Another handle sees everything, in the file too. */
	CHECK_OK(hml__store_open(&s2, dir, 0));
	CHECK_EQ_INT(json_array_size(json_object_get(hml__store_manifest(s2), "datasets")), 3);
	json_object_foreach((json_t *)hml__store_find(s2, "datasets", "d2"), key, v)
		CHECK(json_equal((json_t *)v,
		                 json_object_get(hml__store_find(s, "datasets", "d2"), key)));
	hml__store_free(s2);
	CHECK_EQ_INT(count_tmp(path_in("exp-data/%s", "data")), 0);
	CHECK_EQ_INT(count_tmp(dir), 0);
	hml__store_free(s);
}

TEST(every_collection_and_cards)
{
	const char *dir = fresh("exp-all");
	hml__store *s = NULL;
	char id[16], *pt, *card_path;
	json_t *card, *copy, *sums;
	const json_t *r;

	CHECK_OK(hml__store_open(&s, dir, 1));
	pt = produce(s, "models", ".pt", "abc");
	{
		hml__store_file f = { "model", pt, ".pt", NULL, NULL };
		json_t *rec = json_pack("{s:s, s:s, s:{s:f, s:i}}", "region", "binomial",
		                        "arch", "mlp:64x64:relu", "metrics", "val_rmse", 0.125,
		                        "params", 4545);

		CHECK_OK(hml__store_add(s, "models", rec, &f, 1, 1, id, sizeof(id)));
	}
	CHECK_STR(id, "m1");
	CHECK(!exists(pt));
	free(pt);
	r = hml__store_find(s, "models", "m1");
	CHECK_STR(json_string_value(json_object_get(json_object_get(r, "files"), "model")), "models/m1.pt");
	CHECK_STR(json_string_value(json_object_get(json_object_get(r, "files"), "card")), "models/m1.json");
	sums = json_object_get(json_object_get(r, "provenance"), "sha256");
	CHECK_STR(json_string_value(json_object_get(sums, "models/m1.pt")), SHA_ABC);

	/* The card is the record, apart from the card's own hash. */
	card_path = path_in("exp-all/%s", "models/m1.json");
	card = load(card_path);
	CHECK(card != NULL);
	{
		char hex[65];

		CHECK_OK(hml__sha256_file(card_path, hex));
		CHECK_STR(json_string_value(json_object_get(sums, "models/m1.json")), hex);
	}
	copy = json_deep_copy(r);
	json_object_del(json_object_get(json_object_get(copy, "provenance"), "sha256"), "models/m1.json");
	CHECK(json_equal(card, copy));
	CHECK(json_object_get(json_object_get(json_object_get(card, "provenance"), "sha256"),
	                      "models/m1.json") == NULL);
	json_decref(card);
	json_decref(copy);

	/* A deployment has no files. */
	CHECK_OK(hml__store_add(s, "deployments",
	                        json_pack("{s:s, s:s}", "model", "m1", "selection", "id"),
	                        NULL, 0, 0, id, sizeof(id)));
	CHECK_STR(id, "p1");
	r = hml__store_find(s, "deployments", "p1");
	CHECK_STR(json_string_value(json_object_get(r, "model")), "m1");
	CHECK_EQ_INT(json_object_size(json_object_get(r, "files")), 0);
	CHECK_EQ_INT(json_object_size(json_object_get(json_object_get(r, "provenance"), "sha256")), 0);
	CHECK_OK(hml__store_add(s, "deployments", json_pack("{s:s}", "model", "m1"), NULL, 0, 0,
	                        id, sizeof(id)));
	CHECK_STR(id, "p2");

	/* An evaluation report: the card only. */
	CHECK_OK(hml__store_add(s, "evaluations", json_pack("{s:s, s:i}", "model", "m1", "repeat", 3),
	                        NULL, 0, 1, id, sizeof(id)));
	CHECK_STR(id, "e1");
	card = load(path_in("exp-all/%s", "eval/e1.json"));
	CHECK(card != NULL);
	CHECK_STR(json_string_value(json_object_get(card, "id")), "e1");
	CHECK_EQ_INT(json_integer_value(json_object_get(card, "repeat")), 3);
	CHECK_STR(json_string_value(json_object_get(json_object_get(card, "files"), "card")), "eval/e1.json");
	json_decref(card);

	/* The public provenance helper hashes experiment files. */
	{
		const char *rels[] = { "models/m1.pt" };
		json_t *p = hml__store_provenance(s, rels, 1);

		CHECK(p != NULL);
		CHECK_STR(json_string_value(json_object_get(json_object_get(p, "sha256"), "models/m1.pt")),
		          SHA_ABC);
		CHECK(json_object_get(p, "versions") && json_object_get(p, "time"));
		json_decref(p);
		rels[0] = "models/m9.pt";
		CHECK(hml__store_provenance(s, rels, 1) == NULL);
		CHECK_EQ_INT(hml_error_last()->code, HML_ENOTFOUND);
		CHECK_CONTAINS(hml_error_last()->message, "models/m9.pt");
	}
	hml__store_free(s);
}

TEST(bad_records_change_nothing)
{
	const char *dir = fresh("exp-bad");
	hml__store *s = NULL;
	char id[16] = "zz", *before, *after, *tmp;

	CHECK_OK(hml__store_open(&s, dir, 1));
	before = read_text(path_in("exp-bad/%s", "manifest.json"));
	CHECK_FAILS(hml__store_add(s, "trials", json_object(), NULL, 0, 0, id, sizeof(id)),
	            HML_EINVALID, "unknown collection 'trials'");
	CHECK_STR(id, "");
	CHECK_FAILS(hml__store_add(s, "models", json_string("x"), NULL, 0, 0, id, sizeof(id)),
	            HML_EINVALID, "must be a JSON object");
	CHECK_FAILS(hml__store_add(s, "models", NULL, NULL, 0, 0, NULL, 0),
	            HML_EINVALID, "must be a JSON object");
	tmp = produce(s, NULL, ".bin", "x");
	{
		hml__store_file f = { "data", tmp, ".bin", NULL, NULL };

		CHECK_FAILS(hml__store_add(s, "deployments", json_object(), &f, 1, 0, id, sizeof(id)),
		            HML_EINVALID, "records of 'deployments' have no files");
	}
	CHECK(exists(tmp));
	unlink(tmp);
	{
		hml__store_file f = { "data", tmp, ".h5", NULL, NULL };

		CHECK_FAILS(hml__store_add(s, "datasets", json_object(), &f, 1, 0, id, sizeof(id)),
		            HML_ENOTFOUND, "No such file or directory");
	}
	free(tmp);
	/* Two files that would get one name, a file that would be the card. */
	{
		char *a = produce(s, "models", ".pt", "a"), *b = produce(s, "models", ".pt", "b");
		hml__store_file two[2] = { { "model", a, ".pt", NULL, NULL }, { "other", b, ".pt", NULL, NULL } };
		hml__store_file js = { "meta", a, ".json", NULL, NULL };

		CHECK_FAILS(hml__store_add(s, "models", json_object(), two, 2, 0, id, sizeof(id)),
		            HML_EINVALID, "two files of record 'm1' would both be 'models/m1.pt'");
		CHECK_FAILS(hml__store_add(s, "models", json_object(), &js, 1, 1, id, sizeof(id)),
		            HML_EINVALID, "a file of record 'm1' would overwrite its card 'models/m1.json'");
		CHECK(exists(a) && exists(b));
		CHECK(!exists(path_in("exp-bad/%s", "models/m1.pt")));
		CHECK(!exists(path_in("exp-bad/%s", "models/m1.json")));
		unlink(a);
		unlink(b);
		free(a);
		free(b);
	}
	after = read_text(path_in("exp-bad/%s", "manifest.json"));
	CHECK_STR(after, before);
	free(before);
	free(after);
	hml__store_free(s);
}

TEST(ids_are_never_reused)
{
	const char *dir = fresh("exp-ids");
	hml__store *s = NULL;
	char id[16];
	json_t *m;

	CHECK_OK(hml__store_open(&s, dir, 1));
	CHECK_OK(add_data(s, "1", id));
	hml__store_free(s);
	/* Edited by hand: the record renumbered to d7. */
	m = load(path_in("exp-ids/%s", "manifest.json"));
	json_object_set_new(json_array_get(json_object_get(m, "datasets"), 0), "id", json_string("d7"));
	CHECK(json_dump_file(m, path_in("exp-ids/%s", "manifest.json"), JSON_INDENT(2)) == 0);
	json_decref(m);
	CHECK_OK(hml__store_open(&s, dir, 0));
	CHECK_OK(add_data(s, "2", id));
	CHECK_STR(id, "d8");
	hml__store_free(s);
	/* d8 removed by hand, its file left: the next is still d9. */
	m = load(path_in("exp-ids/%s", "manifest.json"));
	json_array_remove(json_object_get(m, "datasets"), 1);
	CHECK(json_dump_file(m, path_in("exp-ids/%s", "manifest.json"), JSON_INDENT(2)) == 0);
	json_decref(m);
	CHECK(exists(path_in("exp-ids/%s", "data/d8.h5")));
	CHECK_OK(hml__store_open(&s, dir, 0));
	CHECK_OK(add_data(s, "3", id));
	CHECK_STR(id, "d9");
	hml__store_free(s);
}

/* Each corrupt manifest: the code, the message, and the file unchanged
 * by open, by a create-open, and by add/update through a handle opened
 * before it went bad. */
TEST(corrupt_manifests_are_left_alone)
{
	static const struct {
		const char *text;
		int code;
		const char *needle;
	} cases[] = {
		{ "garbage\n", HML_EINVALID, "is corrupt: line 1: " },
		{ "{\"schema_version\": 1, \"datasets\": [{\"id\": \"d1\",", HML_EINVALID,
		  "is corrupt: line 1: " },
		{ "{\n  \"schema_version\": 1,\n  \"models\": [\n    {\"id\": \"m1\"}\n", HML_EINVALID,
		  "is corrupt: line 5: ']' expected near end of file" },
		{ "", HML_EINVALID, "is corrupt: the file is empty" },
		{ "[]\n", HML_EINVALID, "is corrupt: the top level is not a JSON object" },
		{ "{\"datasets\": []}\n", HML_EINVALID, "is corrupt: \"schema_version\" is missing" },
		{ "{\"schema_version\": \"1\"}\n", HML_EINVALID, "\"schema_version\" is not an integer" },
		{ "{\"schema_version\": 0}\n", HML_EINVALID, "\"schema_version\" 0 is not valid" },
		{ "{\"schema_version\": 99, \"models\": {}}\n", HML_ENOTSUPPORTED,
		  "has schema_version 99; this hml reads 1" },
		{ "{\"schema_version\": 1, \"models\": {}}\n", HML_EINVALID,
		  "is corrupt: \"models\" is not an array" },
		{ "{\"schema_version\": 1, \"datasets\": [1]}\n", HML_EINVALID,
		  "is corrupt: datasets[0] is not an object" },
		{ "{\"schema_version\": 1, \"evaluations\": [{\"id\": 3}]}\n", HML_EINVALID,
		  "is corrupt: evaluations[0].id is not a string" },
		{ "{\"schema_version\": 1, \"schema_version\": 1}\n", HML_EINVALID,
		  "duplicate object key" },
		{ "{\"schema_version\": 1, \"models\": [{\"id\": \"m1\"}, {\"id\": \"m1\"}]}\n",
		  HML_EINVALID, "is corrupt: models[1].id 'm1' is used twice" },
		{ "{\"schema_version\": 1, \"models\": [{\"id\": \"m1\", \"files\": "
		  "{\"model\": \"../outside.pt\"}}]}\n", HML_EINVALID,
		  "is corrupt: models[0].files.model '../outside.pt' is not a path inside the experiment" },
		{ "{\"schema_version\": 1, \"datasets\": [{\"id\": \"d1\", \"files\": "
		  "{\"data\": \"/etc/passwd\"}}]}\n", HML_EINVALID,
		  "is corrupt: datasets[0].files.data '/etc/passwd' is not a path inside the experiment" },
		{ "{\"schema_version\": 1, \"datasets\": [{\"id\": \"d1\", \"files\": "
		  "{\"data\": \"data/../../x.h5\"}}]}\n", HML_EINVALID,
		  "datasets[0].files.data 'data/../../x.h5' is not a path inside the experiment" },
		{ "{\"schema_version\": 1, \"models\": [{\"id\": \"m1\", \"files\": "
		  "{\"model\": 7}}]}\n", HML_EINVALID, "is corrupt: models[0].files.model is not a string" },
		{ "{\"schema_version\": 1, \"models\": [{\"id\": \"m1\", \"files\": []}]}\n",
		  HML_EINVALID, "is corrupt: models[0].files is not an object" },
	};
	const char *dir = fresh("exp-corrupt");
	hml__store *s = NULL, *early = NULL;
	char mpath[1100];

	snprintf(mpath, sizeof(mpath), "%s/manifest.json", dir);

	CHECK_OK(hml__store_open(&early, dir, 1));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *after, id[16], *tmp;
		hml__store_file f = { "data", NULL, ".h5", NULL, NULL };

		write_text(mpath, cases[i].text);
		CHECK_FAILS(hml__store_open(&s, dir, 0), cases[i].code, cases[i].needle);
		CHECK_CONTAINS(hml_error_last()->message, "manifest '");
		CHECK_CONTAINS(hml_error_last()->message, "exp-corrupt/manifest.json'");
		CHECK(s == NULL);
		CHECK_FAILS(hml__store_open(&s, dir, 1), cases[i].code, cases[i].needle);
		CHECK_FAILS(hml__store_reload(early), cases[i].code, cases[i].needle);
		tmp = produce(early, "data", ".h5", "abc");
		f.tmp_path = tmp;
		CHECK_FAILS(hml__store_add(early, "datasets", json_object(), &f, 1, 0, id, sizeof(id)),
		            cases[i].code, cases[i].needle);
		CHECK(exists(tmp));     /* not moved */
		unlink(tmp);
		free(tmp);
		CHECK_FAILS(hml__store_add(early, "evaluations", json_object(), NULL, 0, 1, id, sizeof(id)),
		            cases[i].code, cases[i].needle);
		CHECK(!exists(path_in("exp-corrupt/%s", "eval/e1.json")));
		after = read_text(mpath);
		CHECK_STR(after, cases[i].text);
		if (after && strcmp(after, cases[i].text) != 0)
			fprintf(stderr, "case %zu changed\n", i);
		free(after);
		CHECK_EQ_INT(count_tmp(dir), 0);
		CHECK(!exists(path_in("exp-corrupt/%s", "data/d1.h5")));
	}
	hml__store_free(early);
}

static int set_note(json_t *m, void *payload)
{
	return json_object_set_new(m, "note", json_string(payload)) ? HML_ENOMEM : 0;
}

static int refuse(json_t *m, void *payload)
{
	(void)payload;
	json_object_set_new(m, "note", json_string("never written"));
	return hml__error_set(HML_EINVALID, "refused");
}

static int break_it(json_t *m, void *payload)
{
	(void)payload;
	return json_object_set_new(m, "models", json_object()) ? HML_ENOMEM : 0;
}

TEST(updates)
{
	const char *dir = fresh("exp-update");
	hml__store *s = NULL, *other = NULL;
	char *before, *after, id[16];

	CHECK_OK(hml__store_open(&s, dir, 1));
	CHECK_OK(hml__store_open(&other, dir, 0));
	CHECK_OK(add_data(other, "x", id));   /* s has not seen d1 */
	CHECK_OK(hml__store_update(s, set_note, "hello"));
	CHECK_STR(json_string_value(json_object_get(hml__store_manifest(s), "note")), "hello");
	/* The update applied to the fresh manifest: d1 is still there. */
	CHECK(hml__store_find(s, "datasets", "d1") != NULL);
	CHECK_OK(hml__store_reload(other));
	CHECK_STR(json_string_value(json_object_get(hml__store_manifest(other), "note")), "hello");

	before = read_text(path_in("exp-update/%s", "manifest.json"));
	CHECK_FAILS(hml__store_update(s, refuse, NULL), HML_EINVALID, "refused");
	CHECK_FAILS(hml__store_update(s, break_it, NULL), HML_EINVALID,
	            "was not written: manifest '");
	CHECK_CONTAINS(hml_error_last()->message, "\"models\" is not an array");
	after = read_text(path_in("exp-update/%s", "manifest.json"));
	CHECK_STR(after, before);
	CHECK_STR(json_string_value(json_object_get(hml__store_manifest(s), "note")), "hello");
	free(before);
	free(after);
	hml__store_free(s);
	hml__store_free(other);
}

/* What a caller borrowed from the manifest outlives the writes that
 * replace it (valgrind: no read of freed memory). */
TEST(borrowed_records_outlive_writes)
{
	const char *dir = fresh("exp-borrow");
	hml__store *s = NULL;
	const json_t *d1, *man;
	const char *label;
	char id[16];

	CHECK_OK(hml__store_open(&s, dir, 1));
	CHECK_OK(add_data(s, "x", id));
	d1 = hml__store_find(s, "datasets", "d1");
	man = hml__store_manifest(s);
	label = json_string_value(json_object_get(d1, "id"));
	CHECK_OK(add_data(s, "y", id));
	CHECK_OK(hml__store_update(s, set_note, "hi"));
	CHECK_OK(hml__store_reload(s));
	CHECK(hml__store_manifest(s) != man);
	CHECK_STR(label, "d1");
	CHECK_STR(json_string_value(json_object_get(d1, "id")), "d1");
	CHECK_EQ_INT(json_array_size(json_object_get(man, "datasets")), 1);
	hml__store_free(s);
}

TEST(unwritable_places)
{
	hml__store *s = NULL;
	const char *file = path_in("%s", "a-file");

	write_text(file, "I am a file\n");
	CHECK_FAILS(hml__store_open(&s, path_in("%s", "a-file/exp"), 1), HML_EIO,
	            "cannot create experiment '");
	CHECK_CONTAINS(hml_error_last()->message, "a-file/exp': Not a directory");
	CHECK(s == NULL);
	CHECK_FAILS(hml__store_open(&s, file, 1), HML_EIO, "Not a directory");
	CHECK_FAILS(hml__store_open(&s, file, 0), HML_ENOTFOUND, "no experiment at '");
	CHECK_FAILS(hml__store_open(&s, "", 1), HML_EINVALID, "empty");
	{
		char *t = read_text(file);

		CHECK_STR(t, "I am a file\n");
		free(t);
	}
	if (geteuid() != 0) {
		const char *ro = path_in("%s", "ro-parent");

		CHECK(mkdir(ro, 0555) == 0);
		CHECK_FAILS(hml__store_open(&s, path_in("%s", "ro-parent/exp"), 1), HML_EIO,
		            "Permission denied");
		CHECK(!exists(path_in("%s", "ro-parent/exp")));
		chmod(ro, 0755);
	}
}

/* Signal the parent through `fd` once the lock is held, hold it `secs`. */
static void hold_lock(const char *dir, int fd, double secs)
{
	char lock[1100], text[64];
	int l;
	struct timespec ts = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };

	snprintf(lock, sizeof(lock), "%s/.lock", dir);
	l = open(lock, O_RDWR | O_CREAT, 0666);
	if (l < 0 || flock(l, LOCK_EX) < 0)
		_exit(2);
	snprintf(text, sizeof(text), "%ld hml train\n", (long)getpid());
	if (ftruncate(l, 0) < 0 || write(l, text, strlen(text)) < 0 || write(fd, "x", 1) != 1)
		_exit(3);
	nanosleep(&ts, NULL);
	_exit(0);
}

TEST(lock_timeout_names_the_holder)
{
	const char *dir = fresh("exp-lock");
	hml__store *s = NULL;
	char id[16], *before, *after, *tmp, expect[256], c;
	int p[2], status;
	pid_t pid;

	CHECK_OK(hml__store_open(&s, dir, 1));
	before = read_text(path_in("exp-lock/%s", "manifest.json"));
	CHECK(pipe(p) == 0);
	fflush(NULL);
	if ((pid = fork()) == 0) {
		close(p[0]);
		hold_lock(dir, p[1], 2.0);
	}
	close(p[1]);
	CHECK(read(p[0], &c, 1) == 1);
	close(p[0]);

	setenv("HML_LOCK_TIMEOUT", "0.3", 1);
	tmp = produce(s, "data", ".h5", "abc");
	{
		hml__store_file f = { "data", tmp, ".h5", NULL, NULL };

		CHECK_FAILS(hml__store_add(s, "datasets", json_object(), &f, 1, 0, id, sizeof(id)),
		            HML_ELOCKED, "is locked by another hml process");
	}
	snprintf(expect, sizeof(expect),
	         "experiment '%s' is locked by another hml process (pid %ld, 'hml train'); waited 0.3 s",
	         dir, (long)pid);
	CHECK_STR(hml_error_last()->message, expect);
	CHECK(exists(tmp));
	CHECK_FAILS(hml__store_update(s, set_note, "x"), HML_ELOCKED, "waited 0.3 s");
	after = read_text(path_in("exp-lock/%s", "manifest.json"));
	CHECK_STR(after, before);
	free(after);

	/* Bad settings of the timeout. */
	setenv("HML_LOCK_TIMEOUT", "soon", 1);
	CHECK_FAILS(hml__store_update(s, set_note, "x"), HML_EINVALID,
	            "invalid HML_LOCK_TIMEOUT 'soon' (expected a number of seconds >= 0)");
	setenv("HML_LOCK_TIMEOUT", "-1", 1);
	CHECK_FAILS(hml__store_update(s, set_note, "x"), HML_EINVALID, "invalid HML_LOCK_TIMEOUT '-1'");
	setenv("HML_LOCK_TIMEOUT", "nan", 1);
	CHECK_FAILS(hml__store_update(s, set_note, "x"), HML_EINVALID, "invalid HML_LOCK_TIMEOUT 'nan'");

	/* With time enough, the add waits for the holder and succeeds. */
	setenv("HML_LOCK_TIMEOUT", "30", 1);
	{
		hml__store_file f = { "data", tmp, ".h5", NULL, NULL };

		CHECK_OK(hml__store_add(s, "datasets", json_object(), &f, 1, 0, id, sizeof(id)));
		CHECK_STR(id, "d1");
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Released: the lock file no longer names anyone. */
	{
		char *l = read_text(path_in("exp-lock/%s", ".lock"));

		CHECK_STR(l, "");
		free(l);
	}
	unsetenv("HML_LOCK_TIMEOUT");
	free(tmp);
	free(before);
	hml__store_free(s);
}

TEST(four_writers_at_once)
{
	enum { WRITERS = 4, EACH = 25 };
	const char *dir = fresh("exp-many");
	hml__store *s = NULL;
	pid_t pids[WRITERS];
	json_t *m, *rec;
	size_t i;
	int seen[WRITERS * EACH + 1] = { 0 }, status;

	CHECK_OK(hml__store_open(&s, dir, 1));
	hml__store_free(s);
	setenv("HML_LOCK_TIMEOUT", "60", 1);
	fflush(NULL);
	for (int w = 0; w < WRITERS; w++) {
		if ((pids[w] = fork()) == 0) {
			hml__store *c = NULL;
			char id[16], text[32];

			if (hml__store_open(&c, dir, 0) < 0)
				_exit(2);
			for (int k = 0; k < EACH; k++) {
				snprintf(text, sizeof(text), "writer %d item %d", w, k);
				if (add_data(c, text, id) < 0) {
					fprintf(stderr, "writer %d: %s\n", w, hml_error_last()->message);
					_exit(3);
				}
			}
			hml__store_free(c);
			_exit(0);
		}
	}
	for (int w = 0; w < WRITERS; w++)
		CHECK(waitpid(pids[w], &status, 0) == pids[w] && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0);
	unsetenv("HML_LOCK_TIMEOUT");

	m = load(path_in("exp-many/%s", "manifest.json"));
	CHECK(m != NULL);
	CHECK_EQ_INT(json_array_size(json_object_get(m, "datasets")), WRITERS * EACH);
	json_array_foreach(json_object_get(m, "datasets"), i, rec) {
		const char *id = json_string_value(json_object_get(rec, "id"));
		const char *rel = json_string_value(json_object_get(json_object_get(rec, "files"), "data"));
		int n = id && id[0] == 'd' ? atoi(id + 1) : 0;
		char want[32], *text;

		CHECK(n >= 1 && n <= WRITERS * EACH);
		if (n >= 1 && n <= WRITERS * EACH)
			seen[n]++;
		snprintf(want, sizeof(want), "data/%s.h5", id ? id : "?");
		CHECK_STR(rel, want);
		text = read_text(path_in("exp-many/%s", want));
		CHECK(text && strncmp(text, "writer ", 7) == 0);
		free(text);
	}
	for (int n = 1; n <= WRITERS * EACH; n++)
		CHECK_EQ_INT(seen[n], 1);
	json_decref(m);
	CHECK_EQ_INT(count_tmp(path_in("exp-many/%s", "data")), 0);
	CHECK_OK(hml__store_open(&s, dir, 0));
	hml__store_free(s);
}

/* In a child under a file size limit, add `tmp` to `collection` and
 * expect HML_EIO "File too large". */
static int add_too_large(hml__store *s, const char *collection, const char *tmp,
                         const char *ext, int card)
{
	int status;
	pid_t pid;

	fflush(NULL);
	if ((pid = fork()) == 0) {
		struct rlimit rl = { 200, 200 };
		hml__store_file f = { "file", tmp, ext, NULL, NULL };
		char id[16];
		int rc;

		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
		rc = hml__store_add(s, collection, json_pack("{s:s}", "region", "r"), &f, 1, card,
		                    id, sizeof(id));
		if (rc != HML_EIO || !strstr(hml_error_last()->message, "File too large")) {
			fprintf(stderr, "add gave %d: %s\n", rc, hml_error_last()->message);
			_exit(1);
		}
		_exit(0);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

/* The card or the manifest cannot be written (a file size limit, as a
 * full disk would do): the files go back to their temporary names, no
 * card stays, the manifest is as it was. */
TEST(failed_writes_put_files_back)
{
	const char *dir = fresh("exp-rollback");
	hml__store *s = NULL;
	char *before, *after, *pt, *h5, id[16];

	CHECK_OK(hml__store_open(&s, dir, 1));
	before = read_text(path_in("exp-rollback/%s", "manifest.json"));
	pt = produce(s, "models", ".pt", "abc");
	h5 = produce(s, "data", ".h5", "abc");
	CHECK(add_too_large(s, "models", pt, ".pt", 1));        /* the card fails */
	CHECK(add_too_large(s, "datasets", h5, ".h5", 0));      /* the manifest fails */
	CHECK(exists(pt));
	CHECK(exists(h5));
	CHECK(!exists(path_in("exp-rollback/%s", "models/m1.pt")));
	CHECK(!exists(path_in("exp-rollback/%s", "models/m1.json")));
	CHECK(!exists(path_in("exp-rollback/%s", "data/d1.h5")));
	after = read_text(path_in("exp-rollback/%s", "manifest.json"));
	CHECK_STR(after, before);
	CHECK_EQ_INT(count_tmp(dir), 0);
	CHECK_EQ_INT(count_tmp(path_in("exp-rollback/%s", "models")), 1);   /* the artefact itself */
	CHECK_EQ_INT(count_tmp(path_in("exp-rollback/%s", "data")), 1);
	/* The same adds, unconstrained, then work. */
	{
		hml__store_file f = { "model", pt, ".pt", NULL, NULL }, g = { "data", h5, ".h5", NULL, NULL };

		CHECK_OK(hml__store_add(s, "models", json_object(), &f, 1, 1, id, sizeof(id)));
		CHECK_STR(id, "m1");
		CHECK_OK(hml__store_add(s, "datasets", json_object(), &g, 1, 0, id, sizeof(id)));
		CHECK_STR(id, "d1");
	}
	free(before);
	free(after);
	free(pt);
	free(h5);
	hml__store_free(s);
}

TEST(stray_temporary_files_are_ignored)
{
	const char *dir = fresh("exp-stray");
	hml__store *s = NULL;
	char id[16];

	CHECK_OK(hml__store_open(&s, dir, 1));
	hml__store_free(s);
	write_text(path_in("exp-stray/%s", ".tmp-999-0-manifest.json"), "{\"half");
	write_text(path_in("exp-stray/%s", "data/.tmp-999-3.h5"), "half a file");
	write_text(path_in("exp-stray/%s", "models/.tmp-1-1.pt"), "x");
	CHECK_OK(hml__store_open(&s, dir, 0));
	CHECK_OK(add_data(s, "x", id));
	CHECK_STR(id, "d1");
	hml__store_free(s);
	CHECK_OK(hml__store_open(&s, dir, 1));
	hml__store_free(s);
}

/* A manifest that is not a regular file, or is too large to be one, is
 * refused at once (no blocking on a FIFO, no read until memory runs out)
 * and left where it is. */
TEST(manifests_that_are_not_files)
{
	const char *dir = fresh("exp-fifo");
	hml__store *s = NULL;
	char mpath[1100];
	struct stat st;
	FILE *f;

	CHECK_OK(hml__store_open(&s, dir, 1));
	hml__store_free(s);
	s = NULL;
	snprintf(mpath, sizeof(mpath), "%s/manifest.json", dir);
	unlink(mpath);
	CHECK(mkfifo(mpath, 0600) == 0);
	CHECK_FAILS(hml__store_open(&s, dir, 0), HML_EINVALID, "not a regular file");
	CHECK_FAILS(hml__store_open(&s, dir, 1), HML_EINVALID, "not a regular file");
	CHECK(lstat(mpath, &st) == 0 && S_ISFIFO(st.st_mode));
	unlink(mpath);

	/* One byte past the bound, as a sparse file. */
	CHECK((f = fopen(mpath, "wb")) != NULL);
	if (f) {
		CHECK(fseeko(f, (off_t)HML__READ_MAX, SEEK_SET) == 0);
		CHECK(fputc('}', f) == '}');
		fclose(f);
	}
	CHECK_FAILS(hml__store_open(&s, dir, 0), HML_EINVALID, "is larger than");
	CHECK(s == NULL);
	CHECK(lstat(mpath, &st) == 0 && st.st_size == (off_t)HML__READ_MAX + 1);
}

/* Provenance keeps bytes that are not UTF-8 (argv, cwd) instead of
 * replacing them. */
TEST(json_bytes_are_lossless)
{
	json_t *j = hml__json_bytes("caf\xe9 \xff");

	CHECK(json_is_object(j));
	CHECK_STR(json_string_value(json_object_get(j, "hex")), "636166e920ff");
	json_decref(j);
	j = hml__json_bytes("plain \xc3\xa9");
	CHECK_STR(json_string_value(j), "plain \xc3\xa9");
	json_decref(j);
	j = hml__json_bytes(NULL);
	CHECK(json_is_null(j));
	json_decref(j);
}

int main(void)
{
	if (tmp_dir_make("store") < 0)
		return 1;
	unsetenv("HML_LOCK_TIMEOUT");
	RUN(create_open_reopen);
	RUN(datasets_get_ids_files_and_provenance);
	RUN(every_collection_and_cards);
	RUN(bad_records_change_nothing);
	RUN(ids_are_never_reused);
	RUN(corrupt_manifests_are_left_alone);
	RUN(updates);
	RUN(borrowed_records_outlive_writes);
	RUN(unwritable_places);
	RUN(lock_timeout_names_the_holder);
	RUN(four_writers_at_once);
	RUN(failed_writes_put_files_back);
	RUN(stray_temporary_files_are_ignored);
	RUN(manifests_that_are_not_files);
	RUN(json_bytes_are_lossless);
	tmp_dir_remove();
	return check_report();
}
