/*
 * tests/unit/seed.c - a search seeded with another's front
 * (lib/search/seed.h): the front's samples come from the trial history in
 * front order; a search without a front, of another region, or whose
 * front is not in its history is refused; samples a space cannot express
 * are left out and counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "core/error.h"
#include "fixtures.h"
#include "search/history.h"
#include "search/opt/space.h"
#include "search/seed.h"
#include "store/store.h"

static json_t *space_json(void)
{
	return json_pack("{s:{s:s, s:i, s:i}, s:{s:s, s:[s, s]}}",
	                 "width", "type", "int", "low", 8, "high", 64,
	                 "activation", "type", "choice", "values", "relu", "tanh");
}

/* A running event of configuration `config` with `params`. */
static void started(hml__history *h, long trial, long config, json_t *params)
{
	hml__hist_event ev;

	hml__hist_event_init(&ev);
	ev.trial = trial;
	ev.config = config;
	ev.params = params;
	CHECK_OK(hml__history_append(h, &ev));
	json_decref(params);
}

TEST(front_samples_in_front_order)
{
	hml__store *s = NULL;
	hml__history *h = NULL;
	json_t *seeds = NULL, *front;
	char id[16], path[700];

	CHECK_OK(hml__store_open(&s, tmpdir, 1));
	if (!s)
		return;
	CHECK_OK(hml__search_register(s, json_pack("{s:s, s:s}", "region", "r", "status",
	                                           "finished"), id, sizeof(id)));
	snprintf(path, sizeof(path), "%s/search/%s/trials.jsonl", tmpdir, id);
	CHECK_OK(hml__history_open(&h, NULL, path));
	started(h, 0, 0, json_pack("{s:i, s:s}", "width", 8, "activation", "relu"));
	started(h, 1, 1, json_pack("{s:i, s:s}", "width", 32, "activation", "tanh"));
	started(h, 2, 1, json_pack("{s:i, s:s}", "width", 32, "activation", "tanh"));   /* rung 1 */
	started(h, 3, 2, json_pack("{s:i, s:s}", "width", 64, "activation", "relu"));
	hml__history_close(h);
	CHECK_FAILS(hml__seed_front(&seeds, s, id, "r"), HML_EINVALID,
	            "search 's1' has nothing on its front (status finished)");
	front = json_pack("{s:[{s:i, s:i, s:s}, {s:i, s:i, s:s}]}", "front",
	                  "trial", 3, "config", 2, "model", "m2", "trial", 2, "config", 1, "model", "m1");
	CHECK_OK(hml__search_set(s, id, front));
	json_decref(front);
	CHECK_OK(hml__seed_front(&seeds, s, id, "r"));
	CHECK_EQ_INT(json_array_size(seeds), 2);
	CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(seeds, 0), "width")), 64);
	CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(seeds, 1), "width")), 32);
	json_decref(seeds);
	seeds = NULL;
	CHECK_OK(hml__seed_front(&seeds, s, id, NULL));   /* any region */
	json_decref(seeds);
	CHECK_FAILS(hml__seed_front(&seeds, s, id, "q"), HML_EINVALID,
	            "search 's1' is of region 'r', not 'q'");
	CHECK_FAILS(hml__seed_front(&seeds, s, "s9", "r"), HML_ENOTFOUND, "no search 's9'");
	/* a front configuration the history does not have */
	front = json_pack("{s:[{s:i, s:i, s:s}]}", "front", "trial", 9, "config", 7, "model", "m3");
	CHECK_OK(hml__search_set(s, id, front));
	json_decref(front);
	CHECK_FAILS(hml__seed_front(&seeds, s, id, "r"), HML_EINVALID,
	            "front configuration 7 is not in its trial history");
	CHECK(seeds == NULL);
	hml__store_free(s);
}

TEST(points_of_what_the_space_expresses)
{
	hml__space *sp = NULL;
	json_t *spec = space_json(), *back = NULL;
	json_t *seeds = json_pack("[{s:i, s:s}, {s:i, s:s}, {s:i, s:s, s:f}, {s:i, s:s}]",
	                          "width", 16, "activation", "tanh",
	                          "width", 128, "activation", "relu",          /* out of range */
	                          "width", 32, "activation", "relu", "lr", 0.1, /* not searched */
	                          "width", 8, "activation", "relu");
	double u[4 * 8];   /* a choice takes one coordinate per value */
	size_t skipped = 99, n;

	CHECK_OK(hml__space_parse(&sp, spec, "test"));
	if (!sp || hml__space_dim(sp) > 8)
		return;
	hml__error_set(HML_EIO, "the caller's error");
	n = hml__seed_points(u, 4, sp, seeds, &skipped);
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_INT(skipped, 2);
	CHECK_STR(hml_error_last()->message, "the caller's error");   /* left as it was */
	CHECK_OK(hml__space_decode(&back, sp, u));
	CHECK(json_equal(back, json_array_get(seeds, 0)));
	json_decref(back);
	CHECK_OK(hml__space_decode(&back, sp, u + hml__space_dim(sp)));
	CHECK(json_equal(back, json_array_get(seeds, 3)));
	json_decref(back);
	/* room for one: the rest counted as left out */
	CHECK_EQ_INT(hml__seed_points(u, 1, sp, seeds, &skipped), 1);
	CHECK_EQ_INT(skipped, 3);
	hml__space_free(sp);
	json_decref(spec);
	json_decref(seeds);
}

int main(void)
{
	if (tmp_dir_make("seed") < 0)
		return 1;
	RUN(front_samples_in_front_order);
	RUN(points_of_what_the_space_expresses);
	tmp_dir_remove();
	return check_report();
}
