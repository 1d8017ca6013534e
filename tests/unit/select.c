/*
 * tests/unit/select.c - choosing a (model, target) pair (lib/store/select.c):
 * over lists of candidates, the fastest within an error bound, the most
 * accurate within a latency bound, both bounds, the faster target of one
 * model, ties, unmeasured latencies, bad bounds and the messages that name
 * the best achievable; and the candidates read from an experiment's model
 * cards (lib/deploy/latency.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fixtures.h"
#include "core/error.h"
#include "deploy/latency.h"
#include "store/select.h"
#include "store/store.h"

#define TS HML__TARGET_TORCHSCRIPT
#define C HML__TARGET_C


/* A candidate with no start-up or rows per run: compared per sample;
 * no cost of the original code: never predicted slower. */
#define NOCOST { 0, 0, 0, 0, 0, 0, 0, NAN, NAN, 0 }
#define NOSCHED { NAN, 0 }
#define CAND(id, t, e, l) { id, t, e, l, NAN, NAN, NOCOST, NAN, NULL, 0, NOSCHED }

/* m1: accurate and slow; m2: middling; m3: rough and fast; m4: no error. */
static const hml__candidate list[] = {
	CAND("m1", TS, 0.010, 8e-6), CAND("m1", C, 0.010, 2e-6),
	CAND("m2", TS, 0.020, 4e-6), CAND("m2", C, 0.020, 1e-6),
	CAND("m3", TS, 0.090, 3e-6), CAND("m3", C, 0.090, 2e-7),
	CAND("m4", C, NAN, 1e-9),
};
#define N (sizeof(list) / sizeof(list[0]))

static hml__select_bounds bounds(double e, double l)
{
	hml__select_bounds b = { e, l, 0 };

	return b;
}

TEST(fastest_within_error)
{
	size_t k;
	hml__select_bounds b = bounds(0.05, NAN);

	CHECK_OK(hml__select(list, N, &b, &k));
	CHECK_STR(list[k].model, "m2");
	CHECK_EQ_INT(list[k].target, C);
	b.max_error = 1;   /* everything: the fastest with an error (m4 has none) */
	CHECK_OK(hml__select(list, N, &b, &k));
	CHECK_STR(list[k].model, "m3");
	b.max_error = 0.010;   /* the bound is inclusive */
	CHECK_OK(hml__select(list, N, &b, &k));
	CHECK_STR(list[k].model, "m1");
	CHECK_EQ_INT(list[k].target, C);
	/* only TorchScript candidates (--target torchscript) */
	CHECK_OK(hml__select(list, 1, &b, &k));
	CHECK_EQ_INT(k, 0);
	b.max_error = 0.005;
	CHECK_FAILS(hml__select(list, N, &b, &k), HML_ENOTFOUND,
	            "no model has a validation RMSE within 0.005 (the lowest is 0.01, model 'm1')");
}

TEST(most_accurate_within_latency)
{
	size_t k;
	hml__select_bounds b = bounds(NAN, 2.5e-6);

	CHECK_OK(hml__select(list, N, &b, &k));
	CHECK_STR(list[k].model, "m1");
	CHECK_EQ_INT(list[k].target, C);
	b.max_latency = 1.5e-6;
	CHECK_OK(hml__select(list, N, &b, &k));
	CHECK_STR(list[k].model, "m2");
	b.max_latency = 1e-7;
	CHECK_FAILS(hml__select(list, N, &b, &k), HML_ENOTFOUND,
	            "no model runs within 1e-07 s per sample (the fastest is 2e-07 s, model 'm3' as c)");
	/* both bounds */
	b = bounds(0.05, 3e-6);
	CHECK_OK(hml__select(list, N, &b, &k));
	CHECK_STR(list[k].model, "m1");
	b = bounds(0.015, 1.5e-6);
	CHECK_FAILS(hml__select(list, N, &b, &k), HML_ENOTFOUND,
	            "the lowest RMSE is 0.01, model 'm1'; the fastest is 2e-07 s, model 'm3' as c");
}

TEST(best_and_ties)
{
	static const hml__candidate tie[] = {
		CAND("a", TS, 0.5, NAN), CAND("b", TS, 0.5, 2e-6), CAND("c", C, 0.5, 2e-6),
		CAND("d", TS, 0.7, NAN),
	};
	size_t k;
	hml__select_bounds b = bounds(NAN, NAN);

	/* no bound: the most accurate; equal errors: the faster, then the earlier */
	CHECK_OK(hml__select(list, N, &b, &k));
	CHECK_STR(list[k].model, "m1");
	CHECK_EQ_INT(list[k].target, C);
	CHECK_OK(hml__select(tie, 4, &b, &k));
	CHECK_STR(tie[k].model, "b");
	/* unmeasured latencies lose to measured ones under --max-error ... */
	b.max_error = 1;
	CHECK_OK(hml__select(tie, 4, &b, &k));
	CHECK_STR(tie[k].model, "b");
	/* ... are chosen when nothing else is within the bound ... */
	CHECK_OK(hml__select(tie + 3, 1, &b, &k));
	CHECK_EQ_INT(k, 0);
	/* ... and never meet a latency bound */
	b = bounds(NAN, 1);
	CHECK_FAILS(hml__select(tie + 3, 1, &b, &k), HML_ENOTFOUND, "no model has a measured latency");
}

/* With start-ups and rows per run, "faster" is the cheaper application run. */
TEST(faster_per_run)
{
	/* TorchScript a little faster per sample, but 0.4 s to load libtorch;
	 * C loads in 4 ms. 16384 rows per run: C wins (4 ms + 14.7 ms against
	 * 0.4 s + 11.1 ms); 1e8 rows: TorchScript repays its start-up. */
	hml__candidate two[] = {
		{ "m1", TS, 0.01, 6.8e-7, 0.4, 16384, NOCOST, NAN, NULL, 0, NOSCHED },
		{ "m1", C, 0.01, 9e-7, 0.004, 16384, NOCOST, NAN, NULL, 0, NOSCHED },
		{ "m2", TS, 0.02, 5e-7, 0.4, 16384, NOCOST, NAN, NULL, 0, NOSCHED },
	};
	hml__select_bounds b = bounds(0.05, NAN);
	size_t k;

	CHECK_NEAR(hml__candidate_run_cost(&two[1]), 0.004 + 16384 * 9e-7, 1e-12);
	CHECK_OK(hml__select_target(two, 2, "m1", &k));
	CHECK_EQ_INT(two[k].target, C);
	CHECK_OK(hml__select(two, 3, &b, &k));
	CHECK_STR(two[k].model, "m1");
	CHECK_EQ_INT(two[k].target, C);
	for (int i = 0; i < 3; i++)
		two[i].rows_per_run = 1e8;
	CHECK_OK(hml__select_target(two, 2, "m1", &k));
	CHECK_EQ_INT(two[k].target, TS);
	CHECK_OK(hml__select(two, 3, &b, &k));
	CHECK_STR(two[k].model, "m2");
	/* one start-up unknown (a card of an older hml): per sample again */
	for (int i = 0; i < 3; i++)
		two[i].rows_per_run = 16384;
	two[0].startup = NAN;
	CHECK(isnan(hml__candidate_run_cost(&two[0])));
	CHECK_OK(hml__select_target(two, 2, "m1", &k));
	CHECK_EQ_INT(two[k].target, TS);
	/* rows per run unknown: per sample */
	two[0].startup = 0.4;
	two[0].rows_per_run = two[1].rows_per_run = NAN;
	CHECK_OK(hml__select_target(two, 2, "m1", &k));
	CHECK_EQ_INT(two[k].target, TS);
}

/* --max-qoi-error's walk: the undominated candidates, fastest first. */
TEST(front_fastest_first)
{
	static const hml__candidate ties[] = {
		CAND("a", TS, 0.02, 1e-6), CAND("b", TS, 0.01, 1e-6),   /* b dominates a */
		CAND("c", TS, 0.01, 1e-6),                              /* b's twin: b kept */
		CAND("d", TS, 0.005, NAN),                              /* unmeasured: slowest */
	};
	hml__select_bounds b = bounds(NAN, NAN);
	size_t idx[N], m;

	CHECK_OK(hml__select_front(list, N, &b, idx, &m));
	CHECK_EQ_INT(m, 3);
	CHECK_STR(list[idx[0]].model, "m3");
	CHECK_STR(list[idx[1]].model, "m2");
	CHECK_STR(list[idx[2]].model, "m1");
	for (size_t i = 0; i < m; i++)
		CHECK_EQ_INT(list[idx[i]].target, C);
	b.max_latency = 1.5e-6;
	CHECK_OK(hml__select_front(list, N, &b, idx, &m));
	CHECK_EQ_INT(m, 2);
	CHECK_STR(list[idx[1]].model, "m2");
	b.max_latency = NAN;
	CHECK_OK(hml__select_front(ties, 4, &b, idx, &m));
	CHECK_EQ_INT(m, 2);
	CHECK_STR(ties[idx[0]].model, "b");
	CHECK_STR(ties[idx[1]].model, "d");
	b.max_latency = 1e-9;
	CHECK_FAILS(hml__select_front(list, N, &b, idx, &m), HML_ENOTFOUND,
	            "no model runs within 1e-09 s per sample");
	CHECK_EQ_INT(m, 0);
	b.max_latency = -1;
	CHECK_FAILS(hml__select_front(list, N, &b, idx, &m), HML_EINVALID, "--max-latency");
	CHECK_FAILS(hml__select_front(list + 6, 1, &b, idx, &m), HML_EINVALID, "--max-latency");
}

TEST(bad_input)
{
	size_t k;
	hml__select_bounds b = bounds(-1, NAN);

	CHECK_FAILS(hml__select(list, N, &b, &k), HML_EINVALID,
	            "--max-error must be a positive finite number, not -1");
	b = bounds(NAN, 0);
	CHECK_FAILS(hml__select(list, N, &b, &k), HML_EINVALID, "--max-latency must be a positive");
	b = bounds(INFINITY, NAN);
	CHECK_FAILS(hml__select(list, N, &b, &k), HML_EINVALID, "not inf");
	CHECK_OK(hml__select_check_bound("max-error", NAN));
	CHECK_OK(hml__select_check_bound("max-error", 1e-300));
	b = bounds(1, NAN);
	CHECK_FAILS(hml__select(list, 0, &b, &k), HML_ENOTFOUND, "no model to choose from");
	CHECK_FAILS(hml__select(list + 6, 1, &b, &k), HML_ENOTFOUND, "no model to choose from");
}

TEST(target_of_model)
{
	size_t k;

	CHECK_OK(hml__select_target(list, N, "m2", &k));
	CHECK_EQ_INT(k, 3);
	CHECK_OK(hml__select_target(list, 1, "m1", &k));
	CHECK_EQ_INT(k, 0);
	CHECK_FAILS(hml__select_target(list, N, "m9", &k), HML_ENOTFOUND,
	            "model 'm9' has no measured latency in any target");
}

/* --target auto without a compiler keeps the TorchScript candidates only,
 * saying why; with one it keeps every candidate (#26: deploy failed where
 * search fell back). */
TEST(auto_without_compiler)
{
	hml__candidate c[N];
	const char *path = getenv("PATH");
	char *saved = path ? strdup(path) : NULL, why[300];
	size_t n = N;

	memcpy(c, list, sizeof(list));
	setenv("PATH", "/nonexistent", 1);
	hml__select_auto(c, &n, why, sizeof(why));
	CHECK_EQ_INT(n, 3);
	for (size_t i = 0; i < n; i++)
		CHECK_EQ_INT(c[i].target, TS);
	CHECK_STR(c[2].model, "m3");
	/* a build without libtorch (sanitize.runtime's) cannot compile at all */
	CHECK(strstr(why, "no C compiler: 'cc' is not on PATH") ||
	      strstr(why, "hml is built without libtorch"));
	/* nothing in C to leave out: nothing said */
	hml__select_auto(c, &n, why, sizeof(why));
	CHECK_EQ_INT(n, 3);
	CHECK_STR(why, "");
	if (saved)
		setenv("PATH", saved, 1);
	free(saved);
	n = N;
	memcpy(c, list, sizeof(list));
	if (hml__target_c_found(NULL, 0)) {   /* a cc here (and libtorch) */
		hml__select_auto(c, &n, why, sizeof(why));
		CHECK_EQ_INT(n, N);
		CHECK_STR(why, "");
	}
}

/* A model record with val_rmse `e` and card latency `lat` (NULL: none). */
static void add_model(hml__store *s, const char *region, double e, json_t *lat)
{
	json_t *rec = json_pack("{s:s, s:{s:f, s:f}}", "region", region, "metrics", "val_rmse", e,
	                        "latency_seconds_per_sample", 5e-6);
	char id[16];

	if (lat)
		json_object_set_new(rec, "latency", lat);
	CHECK_OK(hml__store_add(s, "models", rec, NULL, 0, 0, id, sizeof(id)));
}

/* Cards judged by MAPE (metric "mape"): their error is val_mape, whatever
 * their RMSE says; one without a metric is judged by RMSE. */
TEST(candidates_in_the_cards_metric)
{
	hml__store *s = NULL;
	hml__candidate *c = NULL;
	size_t n, k;
	hml__select_bounds best = bounds(NAN, NAN), within = bounds(15, NAN);
	char sub[600], id[16];

	snprintf(sub, sizeof(sub), "%s/mape", tmpdir);
	CHECK_OK(hml__store_open(&s, sub, 1));
	CHECK_OK(hml__store_add(s, "models", json_pack("{s:s, s:s, s:{s:f, s:f, s:f}}",
	         "region", "bude", "metric", "mape", "metrics", "val_rmse", 5.0, "val_mape", 10.0,
	         "latency_seconds_per_sample", 5e-6), NULL, 0, 0, id, sizeof(id)));
	CHECK_OK(hml__store_add(s, "models", json_pack("{s:s, s:s, s:{s:f, s:f, s:f}}",
	         "region", "bude", "metric", "mape", "metrics", "val_rmse", 1.0, "val_mape", 20.0,
	         "latency_seconds_per_sample", 1e-6), NULL, 0, 0, id, sizeof(id)));
	CHECK_OK(hml__select_candidates(&c, &n, s, "bude", 1u << TS));
	CHECK_EQ_INT(n, 2);
	if (n == 2) {
		CHECK(c[0].error == 10 && c[1].error == 20);
		CHECK_OK(hml__select(c, n, &best, &k));
		CHECK_STR(c[k].model, "m1");            /* the lower MAPE, not the lower RMSE */
		CHECK_OK(hml__select(c, n, &within, &k));
		CHECK_STR(c[k].model, "m1");            /* m2 is faster but 20% > 15% */
	}
	free(c);
	hml__store_free(s);
}

TEST(candidates_of_experiment)
{
	hml__store *s = NULL;
	hml__candidate *c = NULL;
	hml__latency l;
	size_t n, k;
	hml__select_bounds b = bounds(0.05, NAN);

	CHECK_OK(hml__store_open(&s, tmpdir, 1));
	hml__latency_init(&l);
	l.seconds[TS] = 4e-6, l.seconds[C] = 1e-6, l.batch = 64;
	add_model(s, "binomial", 0.02, hml__latency_to_json(&l));            /* m1 */
	l.seconds[C] = NAN;
	snprintf(l.unavailable[C], sizeof(l.unavailable[C]), "cannot compile");
	add_model(s, "binomial", 0.01, hml__latency_to_json(&l));            /* m2: no C */
	add_model(s, "binomial", 0.03, NULL);                                /* m3: old card */
	add_model(s, "other", 0.001, hml__latency_to_json(&l));              /* m4 */

	CHECK_OK(hml__select_candidates(&c, &n, s, "binomial", 1u << TS | 1u << C));
	CHECK_EQ_INT(n, 5);
	if (n == 5) {
		CHECK_STR(c[0].model, "m1");
		CHECK_EQ_INT(c[1].target, C);
		CHECK_NEAR(c[1].latency, 1e-6, 1e-18);
		CHECK_STR(c[2].model, "m2");
		CHECK_EQ_INT(c[2].target, TS);
		CHECK_STR(c[3].model, "m3");
		CHECK_NEAR(c[3].latency, 5e-6, 1e-18);   /* train's figure */
		CHECK(isnan(c[4].latency));
		CHECK_NEAR(c[4].error, 0.03, 1e-12);
		CHECK_OK(hml__select(c, n, &b, &k));
		CHECK_STR(c[k].model, "m1");
		CHECK_EQ_INT(c[k].target, C);
	}
	free(c);
	CHECK_OK(hml__select_candidates(&c, &n, s, NULL, 1u << TS));
	CHECK_EQ_INT(n, 4);
	free(c);
	CHECK_OK(hml__select_candidates(&c, &n, s, "nothing", 3));
	CHECK_EQ_INT(n, 0);
	CHECK(c == NULL);
	/* the front of a search */
	{
		char sid[16];

		CHECK_OK(hml__select_candidates(&c, &n, s, NULL, 3));
		CHECK_OK(hml__store_add(s, "searches", json_pack("{s:[{s:i, s:s}, {s:i, s:s}]}",
		         "front", "trial", 3, "model", "m3", "trial", 9, "model", "m4"),
		         NULL, 0, 0, sid, sizeof(sid)));
		CHECK_STR(sid, "s1");
		CHECK_OK(hml__select_in_search(c, &n, s, "s1"));
		CHECK_EQ_INT(n, 3);   /* m3 in two targets, m4 in TorchScript */
		if (n == 3) {
			CHECK_STR(c[0].model, "m3");
			CHECK_STR(c[2].model, "m4");
		}
		CHECK_FAILS(hml__select_in_search(c, &n, s, "s9"), HML_ENOTFOUND,
		            "no search 's9' in experiment");
		CHECK_OK(hml__store_add(s, "searches", json_pack("{s:[{s:i}]}", "front", "trial", 1),
		         NULL, 0, 0, sid, sizeof(sid)));
		CHECK_FAILS(hml__select_in_search(c, &n, s, "s2"), HML_ENOTFOUND,
		            "search 's2' has no registered model on its front");
		free(c);
	}
	/* a malformed card names the model */
	add_model(s, "binomial", 0.5, json_pack("{s:s}", "c", "fast"));    /* m5 */
	CHECK_FAILS(hml__select_candidates(&c, &n, s, NULL, 3), HML_EINVALID, "model 'm5'");
	hml__store_free(s);
}

/* A model of binomial with val_rmse 0.01, card `l`, trained on data set `ds`. */
static void add_model_on(hml__store *s, const char *ds, const hml__latency *l)
{
	json_t *rec = json_pack("{s:s, s:{s:s}, s:{s:f}, s:o}", "region", "binomial",
	                        "data_sha256", ds, "abc", "metrics", "val_rmse", 0.01,
	                        "latency", hml__latency_to_json(l));
	char id[16];

	CHECK_OK(hml__store_add(s, "models", rec, NULL, 0, 0, id, sizeof(id)));
}

/* Start-ups from the cards, rows per run from the data sets trained on. */
TEST(run_costs_of_experiment)
{
	hml__store *s = NULL;
	hml__candidate *c = NULL;
	hml__latency l;
	char sub[600], id[16];
	size_t n, k;

	snprintf(sub, sizeof(sub), "%s/costs", tmpdir);
	CHECK_OK(hml__store_open(&s, sub, 1));
	/* d1: 2 runs, 8192 rows of binomial -> 4096 rows per run */
	CHECK_OK(hml__store_add(s, "datasets", json_pack("{s:[{}, {}], s:{s:{s:i}}}", "runs",
	         "regions", "binomial", "rows", 8192), NULL, 0, 0, id, sizeof(id)));
	CHECK_STR(id, "d1");
	hml__latency_init(&l);
	l.seconds[TS] = 6.8e-7, l.seconds[C] = 9e-7, l.batch = 4096;
	l.startup[TS] = 0.4, l.startup[C] = 0.004;
	add_model_on(s, "d1", &l);                                          /* m1 */
	CHECK_OK(hml__select_candidates(&c, &n, s, NULL, 3));
	CHECK_EQ_INT(n, 2);
	if (n == 2) {
		CHECK_NEAR(c[0].rows_per_run, 4096, 1e-9);
		CHECK_NEAR(c[0].startup, 0.4, 1e-12);
		CHECK_NEAR(c[1].startup, 0.004, 1e-12);
		CHECK_OK(hml__select_target(c, n, "m1", &k));
		CHECK_EQ_INT(c[k].target, C);   /* 7.7 ms a run against 0.40 s */
	}
	free(c);
	/* a model whose data set is gone: rows per run unknown, per sample;
	 * its card has TorchScript start up in 0.3 s (noise) */
	l.startup[TS] = 0.3;
	add_model_on(s, "d9", &l);                                          /* m2 */
	CHECK_OK(hml__select_candidates(&c, &n, s, NULL, 3));
	CHECK_EQ_INT(n, 4);
	if (n == 4) {
		/* one start-up per target: the least of the cards' */
		CHECK_NEAR(c[2].startup, 0.3, 1e-12);
		CHECK_NEAR(c[0].startup, 0.3, 1e-12);
		CHECK_NEAR(c[3].startup, 0.004, 1e-12);
		CHECK(isnan(c[2].rows_per_run));
		CHECK_OK(hml__select_target(c, n, "m2", &k));
		CHECK_EQ_INT(c[k].target, TS);
	}
	free(c);
	hml__store_free(s);
}

/* The region's original code costs 1 us per row (2 s over 2e6 rows):
 * a model at 1 us or more per row is predicted slower and never chosen,
 * unless allow_slower; when all are, the message names both figures. */
TEST(slower_never_chosen)
{
	const hml__region_cost cost = { 2.0, 10.0, 2e6, 2, 0, 0, NAN, NAN, NAN, 0 };
	hml__candidate c[] = {
		CAND("m1", TS, 0.01, 3e-6), CAND("m1", C, 0.01, 1e-6),
		CAND("m2", C, 0.05, 4e-7), CAND("m3", C, 0.02, NAN),
	};
	hml__select_bounds b = bounds(NAN, NAN);
	size_t k, idx[4], m;

	for (k = 0; k < 4; k++)
		c[k].cost = cost;
	CHECK(hml__candidate_slower(&c[0]));
	CHECK(hml__candidate_slower(&c[1]));   /* as slow: nothing to gain */
	CHECK(!hml__candidate_slower(&c[2]));
	CHECK(!hml__candidate_slower(&c[3]));  /* unmeasured: not judged */
	CHECK_OK(hml__select(c, 4, &b, &k));   /* --best: m1 is slower, m3 has no latency */
	CHECK_STR(c[k].model, "m3");
	b.max_error = 0.03;
	CHECK_FAILS(hml__select(c, 3, &b, &k), HML_ENOTFOUND,
	            "no model is predicted faster than the original code: the region costs "
	            "1 us per row, the fastest model 1 us ('m1' as c, predicted 1.00x)");
	b.allow_slower = 1;
	CHECK_OK(hml__select(c, 3, &b, &k));
	CHECK_STR(c[k].model, "m1");
	CHECK_EQ_INT(c[k].target, C);
	b.allow_slower = 0;
	b.max_error = NAN;
	CHECK_OK(hml__select_front(c, 4, &b, idx, &m));
	CHECK_EQ_INT(m, 2);   /* m2, then m3 (unmeasured: slowest); m1 left out */
	if (m == 2) {
		CHECK_STR(c[idx[0]].model, "m2");
		CHECK_STR(c[idx[1]].model, "m3");
	}
}

/* --best: by the QoI error where a search's check measured one; the
 * bounds still apply; without any, by validation error. */
TEST(best_by_qoi)
{
	hml__candidate c[] = {
		CAND("m1", C, 0.01, 1e-6), CAND("m2", C, 0.02, 5e-7), CAND("m3", C, 0.03, 2e-7),
		CAND("m4", C, 0.005, 3e-6),
	};
	hml__select_bounds b = bounds(NAN, NAN);
	size_t k;

	c[1].qoi_error = 0.004;   /* m2: the best on the application */
	c[2].qoi_error = 0.009;
	c[0].qoi_error = 0.006;
	CHECK_OK(hml__select(c, 4, &b, &k));
	CHECK_STR(c[k].model, "m2");
	c[2].qoi_error = 0.004;   /* a tie: the faster */
	CHECK_OK(hml__select(c, 4, &b, &k));
	CHECK_STR(c[k].model, "m3");
	b.max_error = 0.025;      /* a bound: by validation error as before */
	CHECK_OK(hml__select(c, 4, &b, &k));
	CHECK_STR(c[k].model, "m2");
	b.max_error = NAN;
	for (k = 0; k < 4; k++)
		c[k].qoi_error = NAN;
	CHECK_OK(hml__select(c, 4, &b, &k));
	CHECK_STR(c[k].model, "m4");
}

/* --best's tie on the QoI error goes to the higher predicted end-to-end
 * speedup, the schedule counted (cost.h): m2 is faster per sample but
 * leaves one call in two to the original code (interleave 1; 8 us a
 * row): a run costs 0.2 + 1e5 x (0.5 x 0.5 + 0.5 x 8) us + 0.05 s =
 * 0.675 s; m3, slower per sample, answers every call: 0.2 + 0.2 + 0.05 =
 * 0.45 s. An iterative search's model without QoI error ranks after. */
TEST(best_qoi_tie_by_prediction)
{
	const hml__region_cost cost = { 8.0, 10.0, 1e6, 10, 0, 0, 1e4, NAN, NAN, 0 };
	hml__candidate c[] = {
		CAND("m1", C, 0.001, 1e-7), CAND("m2", C, 0.02, 5e-7), CAND("m3", C, 0.03, 2e-6),
	};
	hml__select_bounds b = bounds(NAN, NAN);
	hml__prediction p;
	size_t k;

	for (k = 0; k < 3; k++) {
		c[k].cost = cost;
		c[k].startup = 0.05;
		c[k].rows_per_run = 1e5;
	}
	c[1].qoi_error = c[2].qoi_error = 0.004;
	c[1].sched.interleave = 1;
	hml__candidate_predict(&c[1], &p);
	CHECK_NEAR(p.end_to_end, 1.0 / 0.675, 1e-9);
	hml__candidate_predict(&c[2], &p);
	CHECK_NEAR(p.end_to_end, 1.0 / 0.45, 1e-9);
	CHECK_OK(hml__select(c, 3, &b, &k));
	CHECK_STR(c[k].model, "m3");
	c[1].sched.interleave = 0;   /* both every call: m2 the faster */
	CHECK_OK(hml__select(c, 3, &b, &k));
	CHECK_STR(c[k].model, "m2");
}

int main(void)
{
	if (tmp_dir_make("select") < 0)
		return 1;
	unsetenv("HML_LOCK_TIMEOUT");
	RUN(fastest_within_error);
	RUN(most_accurate_within_latency);
	RUN(best_and_ties);
	RUN(faster_per_run);
	RUN(front_fastest_first);
	RUN(bad_input);
	RUN(target_of_model);
	RUN(auto_without_compiler);
	RUN(best_qoi_tie_by_prediction);
	RUN(candidates_in_the_cards_metric);
	RUN(candidates_of_experiment);
	RUN(run_costs_of_experiment);
	RUN(slower_never_chosen);
	RUN(best_by_qoi);
	tmp_dir_remove();
	return check_report();
}
