/*
 * tests/unit/data_pick.c - the region and data sets hml train, search and
 * import learn from: the newest workflow wins, the region filter, named
 * data sets, and each refusal; and the newest data set of a region (of a
 * workflow) that the default pick starts from and hml deploy and evaluate
 * check a model's shapes against.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixtures.h"
#include "store/data_pick.h"
#include "store/store.h"


/* A data set of workflow `wf` with rows of r1 and r2 (-1: no such region). */
static void add_dataset(hml__store *s, const char *wf, int r1, int r2)
{
	json_t *regions = json_object();
	char id[16];

	if (r1 >= 0)
		json_object_set_new(regions, "r1", json_pack("{s:i}", "rows", r1));
	if (r2 >= 0)
		json_object_set_new(regions, "r2", json_pack("{s:i}", "rows", r2));
	CHECK_OK(hml__store_add(s, "datasets", json_pack("{s:{s:s}, s:o}", "workflow", "name", wf,
	                        "regions", regions), NULL, 0, 0, id, sizeof(id)));
}

/* The pick of `q` is region `region`, workflow `wf` and the ids `want`
 * ("d1 d3"). */
static void check_pick(const hml__store *s, const hml__data_query *q, const char *region,
                       const char *wf, const char *want)
{
	hml__data_choice c;
	char got[128] = "";

	CHECK_OK(hml__data_pick(&c, s, q));
	for (size_t i = 0; i < c.n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "", c.ids[i]);
	CHECK_STR(c.region, region);
	CHECK_STR(c.workflow, wf);
	CHECK_STR(got, want);
	hml__data_choice_release(&c);
	hml__data_choice_release(&c);   /* idempotent */
}

static void check_fails(const hml__store *s, const hml__data_query *q, int code,
                        const char *needle)
{
	hml__data_choice c;

	CHECK_FAILS(hml__data_pick(&c, s, q), code, needle);
	CHECK(c.ids == NULL && c.n == 0);
	hml__data_choice_release(&c);
}

TEST(pick)
{
	hml__store *s = NULL;
	hml__data_query q = { NULL, NULL, NULL, 0, "search on" };
	const char *named[2];

	CHECK_OK(hml__store_open(&s, tmpdir, 1));
	check_fails(s, &q, HML_EINVALID, "has no collected rows to search on (run 'hml collect')");

	add_dataset(s, "a", 10, -1);   /* d1 */
	add_dataset(s, "b", 5, -1);    /* d2 */
	add_dataset(s, "a", 7, 0);     /* d3: r2 known, no rows */
	/* The only region with rows; the newest holding data set's workflow. */
	check_pick(s, &q, "r1", "a", "d1 d3");
	add_dataset(s, "b", 2, -1);    /* d4: now b is the newest */
	check_pick(s, &q, "r1", "b", "d2 d4");
	/* A workflow asked for. */
	q.workflow = "a";
	check_pick(s, &q, "r1", "a", "d1 d3");
	q.workflow = "zz";
	check_fails(s, &q, HML_ENOTFOUND,
	            "no data set of workflow 'zz' in experiment '");
	q.workflow = NULL;
	/* A region asked for: with rows nowhere, or unknown. */
	q.region = "r2";
	check_fails(s, &q, HML_EINVALID, "region 'r2' has no collected rows in experiment '");
	q.region = "r9";
	check_fails(s, &q, HML_ENOTFOUND, "holds region 'r9' (collect it first: hml collect)");

	/* Named data sets: in the order named, checked. */
	q.region = NULL;
	q.ids = named;
	q.nids = 2;
	named[0] = "d3", named[1] = "d1";
	check_pick(s, &q, "r1", "a", "d3 d1");
	named[1] = "d2";
	check_fails(s, &q, HML_EINVALID, "data sets 'd3' and 'd2' come from different workflows");
	named[1] = "d9";
	check_fails(s, &q, HML_ENOTFOUND, "no data set 'd9' in experiment '");
	q.nids = 1;
	q.region = "r2";
	check_fails(s, &q, HML_EINVALID, "data set 'd3' has no rows of region 'r2'");

	/* Two regions with rows: --region chooses; named data sets narrow. */
	add_dataset(s, "b", -1, 4);    /* d5 */
	q.region = NULL;
	q.nids = 0;
	check_fails(s, &q, HML_EINVALID,
	            "the data sets hold several regions (r1, r2): choose one with --region");
	q.region = "r2";
	check_pick(s, &q, "r2", "b", "d5");
	q.region = NULL;
	q.nids = 1;
	named[0] = "d1";
	check_pick(s, &q, "r1", "a", "d1");
	hml__store_free(s);
}

/* The newest data set holding rows of `region` (of workflow `wf`, NULL:
 * any) is `want` (NULL: none). */
static void check_newest(const hml__store *s, const char *wf, const char *region,
                         const char *want)
{
	hml__dataset_view d;
	int found = hml__data_pick_newest(&d, s, wf, region);

	CHECK_EQ_INT(found, want != NULL);
	if (found && want)
		CHECK_STR(d.id, want);
}

TEST(newest)
{
	hml__store *s = NULL;
	hml__data_query q = { "r1", NULL, NULL, 0, "train on" };
	hml__data_choice c;
	char sub[600];

	snprintf(sub, sizeof(sub), "%s/newest", tmpdir);
	CHECK_OK(hml__store_open(&s, sub, 1));
	check_newest(s, NULL, "r1", NULL);
	add_dataset(s, "a", 10, -1);   /* d1 */
	add_dataset(s, "b", 5, -1);    /* d2 */
	add_dataset(s, "a", 0, 3);     /* d3: r1 known, no rows */
	/* Rows count, not a region merely named: d3 is not r1's newest. */
	check_newest(s, NULL, "r1", "d2");
	check_newest(s, "a", "r1", "d1");
	check_newest(s, "a", "r2", "d3");
	check_newest(s, "b", "r2", NULL);
	check_newest(s, NULL, "r9", NULL);
	check_newest(s, "zz", "r1", NULL);
	/* The default pick is the newest's workflow, and its last data set the
	 * newest of that workflow. */
	CHECK_OK(hml__data_pick(&c, s, &q));
	CHECK_STR(c.workflow, "b");
	CHECK(c.n == 1 && strcmp(c.ids[c.n - 1], "d2") == 0);
	hml__data_choice_release(&c);
	add_dataset(s, "a", 4, -1);    /* d4 */
	check_newest(s, NULL, "r1", "d4");
	CHECK_OK(hml__data_pick(&c, s, &q));
	CHECK_STR(c.workflow, "a");
	CHECK(c.n == 2 && strcmp(c.ids[0], "d1") == 0 && strcmp(c.ids[1], "d4") == 0);
	hml__data_choice_release(&c);
	hml__store_free(s);
}

int main(void)
{
	if (tmp_dir_make("data_pick") < 0)
		return 1;
	unsetenv("HML_LOCK_TIMEOUT");
	RUN(pick);
	RUN(newest);
	tmp_dir_remove();
	return check_report();
}
