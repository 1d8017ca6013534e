/*
 * tests/unit/ids.c - the one grammar of record ids (lib/store/ids.h): what
 * it accepts and refuses, writer and reader as one contract (every id the
 * store gives passes the check), and a manifest whose ids or references
 * break it is corrupt (lib/store/manifest_ids.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixtures.h"
#include "store/ids.h"
#include "store/store.h"

TEST(grammar)
{
	static const char *const good[] = { "m1", "m12", "m0", "m999999999", NULL };
	static const char *const bad[] = { "", "m", "M1", "m01", "m00", "m1.pt", "m-1", "m 1",
	                                   "m1/", "../m1", "../../../../etc/passwd", "m1\n",
	                                   "m1234567890", "d1", "mm1", "m+1", "m0x1", NULL };

	for (int i = 0; good[i]; i++)
		CHECK_OK(hml__id_check("models", good[i]));
	for (int i = 0; bad[i]; i++)
		CHECK_FAILS(hml__id_check("models", bad[i]), HML_EINVALID, "is not a model id");
	CHECK_FAILS(hml__id_check("models", NULL), HML_EINVALID, "null is not a model id");
	CHECK_FAILS(hml__id_check("models", "../../../../etc/passwd"), HML_EINVALID,
	            "'../../../../etc/passwd' is not a model id (m1, m2, ...)");
	CHECK_FAILS(hml__id_check("spoons", "m1"), HML_EINVALID, "unknown kind of id 'spoons'");
	CHECK_OK(hml__id_check("datasets", "d3"));
	CHECK_OK(hml__id_check("deployments", "p3"));
	CHECK_OK(hml__id_check("evaluations", "e3"));
	CHECK_OK(hml__id_check("searches", "s3"));
	CHECK_OK(hml__id_check("compiled", "c3"));
	CHECK_OK(hml__id_check("trials", "t0"));
	CHECK_FAILS(hml__id_check("searches", "m3"), HML_EINVALID, "is not a search id (s1, s2");
	CHECK_EQ_INT(hml__id_prefix("trials"), 't');
	CHECK_EQ_INT(hml__id_prefix("nope"), 0);
	/* a file name's id, read up to its extension */
	CHECK_EQ_INT(hml__id_number("models", "m12.pt", 3), 12);
	CHECK_EQ_INT(hml__id_number("models", "m012.pt", 4), -1);
	CHECK_EQ_INT(hml__id_number("models", ".tmp-1", 0), -1);
	/* a long message is cut, not the reason */
	{
		char longid[200];

		memset(longid, 'x', sizeof(longid) - 1);
		longid[sizeof(longid) - 1] = '\0';
		CHECK_FAILS(hml__id_check("models", longid), HML_EINVALID, "...' is not a model id");
	}
}

TEST(format_round_trip)
{
	static const char *const kinds[] = { "datasets", "models", "deployments", "evaluations",
	                                     "searches", "compiled", "trials", NULL };
	static const long numbers[] = { 0, 1, 9, 10, 99, 12345, 999999999 };
	char buf[HML__ID_SIZE];

	for (int k = 0; kinds[k]; k++)
		for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
			CHECK_OK(hml__id_format(buf, sizeof(buf), kinds[k], numbers[i]));
			CHECK_OK(hml__id_check(kinds[k], buf));
			CHECK_EQ_INT(hml__id_number(kinds[k], buf, strlen(buf)), numbers[i]);
		}
	CHECK_FAILS(hml__id_format(buf, sizeof(buf), "models", 1000000000L), HML_EINVALID,
	            "more than 9 digits");
	CHECK_FAILS(hml__id_format(buf, sizeof(buf), "models", -1), HML_EINVALID, "numbered -1");
	CHECK_FAILS(hml__id_format(buf, 3, "models", 123), HML_EINVALID, "more than");
}

/* Every id the store gives passes the readers' check. */
TEST(store_ids)
{
	static const char *const cols[] = { "datasets", "models", "deployments", "evaluations",
	                                    "searches", "compiled", NULL };
	hml__store *s = NULL;
	char id[32];

	CHECK_OK(hml__store_open(&s, tmp_path("ok"), 1));
	for (int k = 0; cols[k]; k++)
		for (int n = 0; n < 3; n++) {
			CHECK_OK(hml__store_add(s, cols[k], json_object(), NULL, 0, 0, id, sizeof(id)));
			CHECK_OK(hml__id_check(cols[k], id));
			CHECK_EQ_INT(hml__id_number(cols[k], id, strlen(id)), n + 1);
		}
	hml__store_free(s);
	CHECK_OK(hml__store_open(&s, tmp_path("ok"), 0));   /* and reads back */
	hml__store_free(s);
}

/* A manifest with `rec` as the only record of `col`, opened. */
static int open_with(const char *col, const char *rec)
{
	hml__store *s = NULL;
	char text[2048], *dir = NULL, *path = NULL;
	int rc;

	rm_rf(tmp_path("m"));
	CHECK_OK(hml__store_open(&s, tmp_path("m"), 1));
	hml__store_free(s);
	s = NULL;
	dir = strdup(tmp_path("m"));
	path = malloc(strlen(dir) + 32);
	sprintf(path, "%s/manifest.json", dir);
	snprintf(text, sizeof(text), "{\"schema_version\": 1, \"%s\": [%s]}\n", col, rec);
	write_text(path, text);
	rc = hml__store_open(&s, dir, 0);
	hml__store_free(s);
	free(path);
	free(dir);
	return rc;
}

TEST(manifest_refused)
{
	CHECK_OK(open_with("models", "{\"id\": \"m1\", \"search\": {\"id\": \"s1\", \"trial\": 3},"
	                   " \"datasets\": [\"d1\"], \"data_sha256\": {\"d1\": null}}"));
	CHECK_FAILS(open_with("models", "{\"id\": \"../../../../etc/passwd\"}"), HML_EINVALID,
	            "is corrupt: models[0].id '../../../../etc/passwd' is not a model id");
	CHECK_FAILS(open_with("models", "{\"files\": {}}"), HML_EINVALID,
	            "is corrupt: models[0] has no id");
	CHECK_FAILS(open_with("models", "{\"id\": 7}"), HML_EINVALID, "is corrupt: models[0].id is not a string");
	CHECK_FAILS(open_with("models", "{\"id\": \"d1\"}"), HML_EINVALID, "is not a model id");
	CHECK_FAILS(open_with("models", "{\"id\": \"m1\", \"search\": {\"id\": \"../s1\"}}"),
	            HML_EINVALID, "models[0].search.id '../s1' is not a search id");
	CHECK_FAILS(open_with("models", "{\"id\": \"m1\", \"datasets\": [\"d1\", \"x\"]}"),
	            HML_EINVALID, "models[0].datasets[1] 'x' is not a data set id");
	CHECK_FAILS(open_with("models", "{\"id\": \"m1\", \"data_sha256\": {\"/etc\": null}}"),
	            HML_EINVALID, "models[0].data_sha256 '/etc' is not a data set id");
	CHECK_FAILS(open_with("deployments", "{\"id\": \"p1\", \"model\": \"m01\"}"), HML_EINVALID,
	            "deployments[0].model 'm01' is not a model id");
	CHECK_FAILS(open_with("deployments", "{\"id\": \"p1\", \"model\": \"m1\", \"compiled\": "
	                      "\"c1.so\"}"), HML_EINVALID, "compiled 'c1.so' is not a compiled");
	CHECK_FAILS(open_with("compiled", "{\"id\": \"c1\", \"model\": 1}"), HML_EINVALID,
	            "compiled[0].model is not a string");
	CHECK_FAILS(open_with("evaluations", "{\"id\": \"e1\", \"model\": \"../m1\"}"),
	            HML_EINVALID, "evaluations[0].model '../m1'");
	CHECK_OK(open_with("searches", "{\"id\": \"s1\", \"front\": [{\"trial\": 2, \"model\": null},"
	                   " {\"trial\": 3, \"model\": \"m2\"}]}"));
	CHECK_FAILS(open_with("searches", "{\"id\": \"s1\", \"front\": [{\"model\": \"m2/x\"}]}"),
	            HML_EINVALID, "searches[0].front[0].model 'm2/x' is not a model id");
	CHECK_FAILS(open_with("searches", "{\"id\": \"s1\", \"qoi_check\": {\"checks\": "
	                      "[{\"model\": \"mX\"}]}}"), HML_EINVALID,
	            "qoi_check.checks[0].model 'mX'");
	CHECK_FAILS(open_with("searches", "{\"id\": \"s01\"}"), HML_EINVALID,
	            "searches[0].id 's01' is not a search id");
}

int main(void)
{
	if (tmp_dir_make("ids") < 0)
		return 1;
	unsetenv("HML_LOCK_TIMEOUT");
	RUN(grammar);
	RUN(format_round_trip);
	RUN(store_ids);
	RUN(manifest_refused);
	tmp_dir_remove();
	return check_report();
}
