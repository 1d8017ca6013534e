/*
 * tests/unit/history_check.c - a trial history checked against its search
 * and the manifest before a replay (lib/search/history_check.h): points
 * inside the space and agreeing with their parameters, rungs of the
 * search, kept models the manifest's models of that trial of that search,
 * and a history missing or shorter than the record refused; through
 * hml__history_read, every refusal names the file and the line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/error.h"
#include "fixtures.h"
#include "search/history_check.h"
#include "store/store.h"

static hml__space *space_new(void)
{
	hml__space *sp = NULL;
	json_t *spec = json_pack("{s:{s:s, s:i, s:i}, s:{s:s, s:i, s:i, s:b}}",
	                         "layers", "type", "int", "low", 1, "high", 4,
	                         "width", "type", "int", "low", 8, "high", 256, "log", 1);

	CHECK_OK(hml__space_parse(&sp, spec, "test"));
	json_decref(spec);
	return sp;
}

/* A start of trial `trial` at `rung` with `params` and its point u. */
static void start_of(hml__hist_event *ev, const hml__space *sp, long trial, unsigned rung,
                     json_t *params, double *u)
{
	hml__hist_event_init(ev);
	ev->trial = trial;
	ev->config = trial;
	ev->rung = rung;
	ev->params = params;
	ev->u = u;
	ev->dim = hml__space_dim(sp);
}

TEST(points)
{
	hml__space *sp = space_new();
	hml__history_check cx = { "s1", sp, 2, NULL };
	json_t *ok = json_pack("{s:i, s:i}", "layers", 2, "width", 64);
	json_t *wide = json_pack("{s:i, s:i}", "layers", 32, "width", 16384);
	json_t *extra = json_pack("{s:i, s:i, s:i}", "layers", 2, "width", 64, "depth", 3);
	json_t *other = json_pack("{s:i, s:i}", "layers", 3, "width", 64);
	json_t *huge = json_pack("{s:i, s:f}", "layers", 2, "width", 1e308);
	double u[4], u2[4];
	hml__hist_event ev;

	CHECK_OK(hml__space_encode(u, sp, ok));
	start_of(&ev, sp, 0, 0, ok, u);
	CHECK_OK(hml__history_check_event(&cx, &ev));
	start_of(&ev, sp, 0, 0, wide, u);
	CHECK_FAILS(hml__history_check_event(&cx, &ev), HML_EINVALID,
	            "trial 0: its point is not in the search space: ");
	CHECK_FAILS(hml__history_check_event(&cx, &ev), HML_EINVALID, "'layers'");
	start_of(&ev, sp, 0, 0, extra, u);
	CHECK_FAILS(hml__history_check_event(&cx, &ev), HML_EINVALID, "'depth'");
	start_of(&ev, sp, 0, 0, huge, u);
	CHECK_FAILS(hml__history_check_event(&cx, &ev), HML_EINVALID, "not in the search space");
	/* parameters in the space but not those of the point */
	start_of(&ev, sp, 0, 0, other, u);
	CHECK_FAILS(hml__history_check_event(&cx, &ev), HML_EINVALID,
	            "trial 0: its parameters are not those of its point 'u'");
	/* a point of another dimension; none at all on a first rung */
	start_of(&ev, sp, 0, 0, ok, u);
	ev.dim = 1;
	CHECK_FAILS(hml__history_check_event(&cx, &ev), HML_EINVALID, "has 1 coordinates");
	start_of(&ev, sp, 0, 0, NULL, NULL);
	CHECK_FAILS(hml__history_check_event(&cx, &ev), HML_EINVALID, "has no point");
	start_of(&ev, sp, 4, 1, NULL, NULL);   /* a promotion need not repeat it */
	CHECK_OK(hml__history_check_event(&cx, &ev));
	start_of(&ev, sp, 4, 1, wide, NULL);   /* but what it repeats is checked */
	CHECK_FAILS(hml__history_check_event(&cx, &ev), HML_EINVALID, "not in the search space");
	start_of(&ev, sp, 4, 2, NULL, NULL);
	CHECK_FAILS(hml__history_check_event(&cx, &ev), HML_EINVALID,
	            "trial 4: rung 2 is not one of the search's 2 rungs");
	/* the point the optimiser proposes, decoded, passes */
	for (int i = 0; i < 4; i++)
		u2[i] = 0.123 * (i + 1);
	hml__space_project(sp, u2);
	{
		json_t *dec = NULL;

		CHECK_OK(hml__space_decode(&dec, sp, u2));
		start_of(&ev, sp, 1, 0, dec, u2);
		CHECK_OK(hml__history_check_event(&cx, &ev));
		json_decref(dec);
	}
	json_decref(ok);
	json_decref(wide);
	json_decref(extra);
	json_decref(other);
	json_decref(huge);
	hml__space_free(sp);
}

/* A model record of `search` trial `trial` ("" search: one of hml train). */
static void model_add(hml__store *s, const char *search, long trial, char *id)
{
	json_t *rec = *search ? json_pack("{s:{s:s, s:I, s:i}}", "search", "id", search, "trial",
	                                  (json_int_t)trial, "config", 0)
	                      : json_object();

	CHECK_OK(hml__store_add(s, "models", rec, NULL, 0, 0, id, 16));
}

TEST(kept_models)
{
	hml__space *sp = space_new();
	hml__store *s = NULL;
	hml__history_check cx = { "s1", sp, 2, NULL };
	hml__hist_event ev;
	char m1[16], m2[16], m3[16];

	CHECK_OK(hml__store_open(&s, tmp_path("kept"), 1));
	model_add(s, "", 0, m1);       /* m1: hml train's */
	model_add(s, "s1", 3, m2);     /* m2: trial 3 of s1 */
	model_add(s, "s2", 3, m3);     /* m3: trial 3 of s2 */
	cx.store = s;
	hml__hist_event_init(&ev);
	ev.trial = 3;
	ev.config = 1;
	ev.rung = 1;
	ev.status = HML__HIST_KEPT;
	ev.model = m2;
	CHECK_OK(hml__history_check_event(&cx, &ev));
	ev.model = m1;
	CHECK_FAILS(hml__history_check_event(&cx, &ev), HML_EINVALID,
	            "trial 3: kept model 'm1' is not a model of search s1");
	ev.model = m3;
	CHECK_FAILS(hml__history_check_event(&cx, &ev), HML_EINVALID,
	            "kept model 'm3' is not a model of search s1");
	ev.model = "m9";
	CHECK_FAILS(hml__history_check_event(&cx, &ev), HML_EINVALID,
	            "kept model 'm9' is not in the experiment");
	ev.model = m2;
	ev.trial = 4;
	CHECK_FAILS(hml__history_check_event(&cx, &ev), HML_EINVALID,
	            "kept model 'm2' is a model of another trial of search s1");
	hml__store_free(s);
	hml__space_free(sp);
}

static int count(const hml__hist_event *ev, void *payload)
{
	(void)ev;
	++*(int *)payload;
	return 0;
}

static int refuse_third(const hml__hist_event *ev, void *payload)
{
	(void)payload;
	return ev->trial == 2 ? hml__error_set(HML_EINVALID, "trial 2 is not welcome") : 0;
}

TEST(complete)
{
	hml__space *sp = space_new();
	hml__store *s = NULL;
	hml__history_check cx = { "s1", sp, 2, NULL };
	char id[16], path[700], m[16];
	json_t *counts;
	int n = 0;

	CHECK_OK(hml__store_open(&s, tmp_path("whole"), 1));
	CHECK_OK(hml__search_register(s, json_pack("{s:s}", "region", "r"), id, sizeof(id)));
	cx.store = s;
	snprintf(path, sizeof(path), "%s/search/s1/%s", tmp_path("whole"), HML__HISTORY_FILE);
	/* a search never started has nothing to miss but its file */
	CHECK_FAILS(hml__history_check_complete(&cx, path, 0), HML_EINVALID,
	            "/search/s1/trials.jsonl' is missing: search s1 cannot be resumed without it");
	write_text(path, "");
	CHECK_OK(hml__history_check_complete(&cx, path, 0));
	counts = json_pack("{s:{s:i}}", "counts", "trials", 12);
	CHECK_OK(hml__search_set(s, "s1", counts));
	json_decref(counts);
	CHECK_FAILS(hml__history_check_complete(&cx, path, 0), HML_EINVALID,
	            "holds 0 trials, but the record of search s1 counts 12: the history was cut "
	            "short or emptied");
	CHECK_FAILS(hml__history_check_complete(&cx, path, 11), HML_EINVALID, "counts 12");
	CHECK_OK(hml__history_check_complete(&cx, path, 12));
	/* its models count too (a record of older hml, or updated before the end) */
	model_add(s, "s1", 20, m);
	CHECK_FAILS(hml__history_check_complete(&cx, path, 12), HML_EINVALID,
	            "the models of search s1 include trial 20");
	CHECK_OK(hml__history_check_complete(&cx, path, 21));
	counts = json_pack("{s:[{s:i}]}", "front", "trial", 30);
	CHECK_OK(hml__search_set(s, "s1", counts));
	json_decref(counts);
	CHECK_FAILS(hml__history_check_complete(&cx, path, 21), HML_EINVALID,
	            "the front of search s1 lists trial 30");
	hml__store_free(s);

	/* The reader names the file and the line of a refusal by its callback. */
	write_text(path, "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"failed\"}\n"
	                 "{\"trial\":1,\"config\":0,\"rung\":0,\"status\":\"failed\"}\n"
	                 "{\"trial\":2,\"config\":0,\"rung\":0,\"status\":\"failed\"}\n");
	CHECK_OK(hml__history_read(path, count, &n, NULL));
	CHECK_EQ_INT(n, 3);
	CHECK_FAILS(hml__history_read(path, refuse_third, NULL, NULL), HML_EINVALID,
	            "/search/s1/trials.jsonl' line 3: trial 2 is not welcome");
	hml__space_free(sp);
}

int main(void)
{
	if (tmp_dir_make("history_check") < 0)
		return 1;
	unsetenv("HML_LOCK_TIMEOUT");
	RUN(points);
	RUN(kept_models);
	RUN(complete);
	tmp_dir_remove();
	return check_report();
}
