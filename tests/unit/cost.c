/*
 * tests/unit/cost.c - the region's collected cost and predicted speedups
 * (lib/store/cost.c): the fields hml collect writes read back through a
 * store (one data set, several, one without the fields, one missing),
 * moving rows and the application's threads, and the prediction per row
 * and end to end.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixtures.h"
#include "core/error.h"
#include "core/profile_file.h"
#include "store/cost.h"
#include "store/store.h"

/* A data set of `runs` runs of `wall` seconds each, `rows` rows of region
 * "r" whose original code took `orig` s and the collector `coll` s (no
 * cost fields when orig < 0). */
static void add_dataset(hml__store *s, int runs, double wall, long long rows, double orig,
                        double coll, char *id, size_t size)
{
	json_t *region = json_pack("{s:I, s:I}", "rows", (json_int_t)rows, "calls",
	                           (json_int_t)rows / 10), *list = json_array();

	for (int k = 0; k < runs; k++)
		json_array_append_new(list, json_pack("{s:f}", "wall_seconds", wall));
	const hml__cost_times t = { "r", orig, orig + coll, 0, 0, NAN, NAN, 0 };

	if (orig >= 0)
		CHECK_OK(hml__cost_put(region, &t, NAN));
	CHECK_OK(hml__store_add(s, "datasets", json_pack("{s:o, s:{s:o}}", "runs", list,
	         "regions", "r", region), NULL, 0, 0, id, size));
}

TEST(round_trip)
{
	hml__store *s = NULL;
	hml__region_cost c;
	char d1[16], d2[16], d3[16];
	const char *ids[3] = { d1, d2, d3 };

	CHECK_OK(hml__store_open(&s, tmpdir, 1));
	add_dataset(s, 2, 3.0, 2000, 4.0, 1.0, d1, sizeof(d1));
	add_dataset(s, 1, 2.0, 1000, 1.0, 0.5, d2, sizeof(d2));
	add_dataset(s, 1, 2.0, 1000, -1, 0, d3, sizeof(d3));   /* collected before */
	hml__cost_of_datasets(&c, s, "r", ids, 1);
	CHECK_NEAR(c.original_s, 4.0, 1e-12);
	CHECK_NEAR(c.app_s, 5.0, 1e-12);   /* 2 x 3 s less the collector's 1 s */
	CHECK_NEAR(c.rows, 2000, 0);
	CHECK_NEAR(c.runs, 2, 0);
	CHECK_NEAR(hml__cost_per_row(&c), 2e-3, 1e-15);
	hml__cost_of_datasets(&c, s, "r", ids, 2);
	CHECK_NEAR(c.original_s, 5.0, 1e-12);
	CHECK_NEAR(c.app_s, 6.5, 1e-12);
	CHECK_NEAR(c.rows, 3000, 0);
	CHECK_NEAR(c.runs, 3, 0);
	CHECK_NEAR(c.calls, 300, 0);   /* the data sets' calls, summed */
	/* a data set without the fields, a region it lacks, an unknown id:
	 * unknown, never a cost from part of the data */
	hml__cost_of_datasets(&c, s, "r", ids, 3);
	CHECK(isnan(c.original_s) && isnan(hml__cost_per_row(&c)));
	hml__cost_of_datasets(&c, s, "other", ids, 1);
	CHECK(isnan(hml__cost_per_row(&c)));
	ids[0] = "d9";
	hml__cost_of_datasets(&c, s, "r", ids, 1);
	CHECK(isnan(hml__cost_per_row(&c)));
	hml__cost_of_datasets(&c, s, "r", ids, 0);
	CHECK(isnan(hml__cost_per_row(&c)));
	hml__store_free(s);
}

/* One preempted call doubled the sum: the median per row stands for the
 * region, the wall time keeps the rest of the run. */
TEST(median_per_row)
{
	hml__store *s = NULL;
	hml__region_cost c;
	json_t *region = json_pack("{s:i}", "rows", 1000);
	const hml__cost_times t = { "r", 2e-3, 3e-3, 0, 0, NAN, NAN, 0 };
	char sub[600], id[16];
	const char *ids[1] = { id };

	snprintf(sub, sizeof(sub), "%s/median", tmpdir);
	CHECK_OK(hml__store_open(&s, sub, 1));
	CHECK_OK(hml__cost_put(region, &t, 1e-6));
	CHECK_OK(hml__store_add(s, "datasets", json_pack("{s:[{s:f}], s:{s:o}}", "runs",
	         "wall_seconds", 0.01, "regions", "r", region), NULL, 0, 0, id, sizeof(id)));
	hml__cost_of_datasets(&c, s, "r", ids, 1);
	CHECK_NEAR(c.original_s, 1e-3, 1e-15);
	CHECK_NEAR(c.app_s, 0.01 - 1e-3 - 1e-3, 1e-15);
	CHECK_NEAR(hml__cost_per_row(&c), 1e-6, 1e-18);
	hml__store_free(s);
}

/* The profiles of collect runs summed per region (the runtime writes them,
 * core/profile_file.h); a region a run never entered adds nothing; a
 * missing profile or a region shorter than its original code is an error. */
TEST(times_from_profiles)
{
	hml__profile_record rec[1];
	hml__cost_times t[2] = { { "a", 0, 0, 0, 0, 0, 0, 0 }, { "b", 0, 0, 0, 0, 0, 0, 0 } };
	const hml__profile_cpu cpu = { 1.0, 0.5, 1 };
	json_t *o;
	char path[600];

	snprintf(path, sizeof(path), "%s/p.json", tmpdir);
	memset(rec, 0, sizeof(rec));
	snprintf(rec[0].label, sizeof(rec[0].label), "a");
	rec[0].stats.original_s = 2.0;
	rec[0].stats.region_s = 2.5;
	rec[0].stats.gather_s = 0.125;
	rec[0].threads = 3;
	CHECK_OK(hml__profile_file_write(path, rec, 1, &cpu));
	CHECK_OK(hml__cost_times_add(t, 2, path));
	CHECK_OK(hml__cost_times_add(t, 2, path));
	/* The processes' CPU and CPU-wait seconds, summed over the runs and
	 * recorded beside the times (cost.h "cpu_run_seconds"). */
	CHECK_NEAR(t[0].cpu_run_s, 2.0, 1e-12);
	CHECK_NEAR(t[0].cpu_wait_s, 1.0, 1e-12);
	CHECK_OK(hml__cost_put(o = json_object(), &t[0], NAN));
	CHECK_NEAR(json_real_value(json_object_get(o, "cpu_run_seconds")), 2.0, 1e-12);
	CHECK_NEAR(json_real_value(json_object_get(o, "cpu_wait_seconds")), 1.0, 1e-12);
	json_decref(o);
	CHECK_NEAR(t[0].original_s, 4.0, 1e-12);
	CHECK_NEAR(t[0].region_s, 5.0, 1e-12);
	CHECK_NEAR(t[0].gather_s, 0.25, 1e-12);
	CHECK_EQ_INT(t[0].threads, 3);
	CHECK_NEAR(t[1].original_s, 0.0, 0);
	CHECK_EQ_INT(t[1].threads, 0);
	/* A run whose profile has no "cpu" leaves the sums unknown: none recorded. */
	CHECK_OK(hml__profile_file_write(path, rec, 1, NULL));
	CHECK_OK(hml__cost_times_add(t, 2, path));
	CHECK(isnan(t[0].cpu_run_s) && isnan(t[0].cpu_wait_s));
	CHECK_OK(hml__cost_put(o = json_object(), &t[0], NAN));
	CHECK(!json_object_get(o, "cpu_run_seconds") && !json_object_get(o, "cpu_wait_seconds"));
	json_decref(o);
	rec[0].stats.region_s = 1.0;
	CHECK_OK(hml__profile_file_write(path, rec, 1, NULL));
	CHECK_FAILS(hml__cost_times_add(t, 2, path), HML_EINVALID, "less than its original code");
	CHECK(hml__cost_times_add(t, 2, "/nonexistent/p.json") < 0);
}

/* The CPU-wait figures of several runs: their seconds summed with the
 * processes they sum ("cpu_processes"), read back through a store; the
 * floor of waiting is per process, so that runs each waiting a little
 * (threads being placed) are not said to have waited however many. */
TEST(cpu_wait_over_runs)
{
	hml__profile_record rec[1];
	hml__cost_times t[1] = { { "r", 0, 0, 0, 0, 0, 0, 0 } };
	hml__profile_cpu cpu = { 0.06, 0.06, 0 };   /* each run: half of little */
	hml__store *s = NULL;
	hml__region_cost c;
	json_t *region, *runs;
	char path[600], sub[600], id[16], old[16];
	const char *ids[2] = { id, old };

	snprintf(path, sizeof(path), "%s/cpu.json", tmpdir);
	memset(rec, 0, sizeof(rec));
	snprintf(rec[0].label, sizeof(rec[0].label), "r");
	rec[0].stats.original_s = 0.5;
	rec[0].stats.region_s = 0.6;
	CHECK_OK(hml__profile_file_write(path, rec, 1, &cpu));
	CHECK_OK(hml__cost_times_add(t, 1, path));
	CHECK_OK(hml__cost_times_add(t, 1, path));
	CHECK_NEAR(t[0].cpu_wait_s, 0.12, 1e-12);
	CHECK_NEAR(t[0].cpu_procs, 2, 0);
	/* 0.12 s in all, over the floor of one process, under that of two */
	cpu = (hml__profile_cpu){ t[0].cpu_run_s, t[0].cpu_wait_s, 0 };
	CHECK(hml__profile_cpu_waited(&cpu));
	cpu.procs = t[0].cpu_procs;
	CHECK(!hml__profile_cpu_waited(&cpu));
	snprintf(sub, sizeof(sub), "%s/cpu", tmpdir);
	CHECK_OK(hml__store_open(&s, sub, 1));
	region = json_pack("{s:i, s:i}", "rows", 1000, "calls", 2);
	CHECK_OK(hml__cost_put(region, &t[0], NAN));
	CHECK(json_integer_value(json_object_get(region, "cpu_processes")) == 2);
	runs = json_pack("[{s:f}, {s:f}]", "wall_seconds", 1.0, "wall_seconds", 1.0);
	CHECK_OK(hml__store_add(s, "datasets", json_pack("{s:o, s:{s:o}}", "runs", runs,
	         "regions", "r", region), NULL, 0, 0, id, sizeof(id)));
	hml__cost_of_datasets(&c, s, "r", ids, 1);
	CHECK_NEAR(c.cpu_wait_s, 0.12, 1e-12);
	CHECK_NEAR(c.cpu_procs, 2, 0);
	CHECK_NEAR(hml__cost_cpu_wait_share(&c), 0.5, 1e-12);
	CHECK(!hml__cost_cpu_waited(&c));
	/* A data set of older hml (no "cpu_processes"): its runs. One that
	 * waited 1 s in its one run brings the sum over the floor of three. */
	region = json_pack("{s:i, s:i, s:f, s:f, s:f, s:f}", "rows", 1000, "calls", 2,
	                   "original_seconds", 0.5, "collect_seconds", 0.1,
	                   "cpu_run_seconds", 1.0, "cpu_wait_seconds", 1.0);
	runs = json_pack("[{s:f}]", "wall_seconds", 2.0);
	CHECK_OK(hml__store_add(s, "datasets", json_pack("{s:o, s:{s:o}}", "runs", runs,
	         "regions", "r", region), NULL, 0, 0, old, sizeof(old)));
	hml__cost_of_datasets(&c, s, "r", ids, 2);
	CHECK_NEAR(c.cpu_procs, 3, 0);
	CHECK_NEAR(c.cpu_wait_s, 1.12, 1e-12);
	CHECK(hml__cost_cpu_waited(&c));
	/* The prediction carries the rule's verdict, as the apps table reads it. */
	{
		hml__prediction p;
		json_t *j;

		hml__predict(&p, &c, 1e-6, 0.05, NULL);
		CHECK(p.cpu_waited);
		j = hml__prediction_json(&p);
		CHECK(json_is_true(json_object_get(j, "cpu_waited")));
		json_decref(j);
		c.cpu_run_s = c.cpu_wait_s = NAN;
		hml__predict(&p, &c, 1e-6, 0.05, NULL);
		j = hml__prediction_json(&p);
		CHECK(!p.cpu_waited && json_is_null(json_object_get(j, "cpu_waited")));
		json_decref(j);
	}
	hml__store_free(s);
}

TEST(put_refuses_nonsense)
{
	json_t *o = json_object();
	const hml__cost_times bad[] = {
		{ "r", NAN, 1, 0, 0, NAN, NAN, 0 }, { "r", 1, 0, 0, 0, NAN, NAN, 0 },   /* a region shorter than its code */
		{ "r", INFINITY, INFINITY, 0, -2, NAN, NAN, 0 }, { "r", NAN, NAN, NAN, 0, NAN, NAN, 0 },
	};
	const hml__cost_times zero = { "r", 0, 0, 0, 0, NAN, NAN, 0 };
	const hml__cost_times gather_over = { "r", 1, 2, 1.5, 0, NAN, NAN, 0 };   /* more than the collector's */

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_OK(hml__cost_put(o, &bad[i], i % 2 ? 0 : i == 0 ? NAN : INFINITY));
	CHECK_EQ_INT(json_object_size(o), 0);
	CHECK_OK(hml__cost_put(o, &zero, NAN));
	CHECK_EQ_INT(json_object_size(o), 3);   /* original, collect, gather */
	CHECK_OK(hml__cost_put(o, &zero, 1e-9));
	CHECK_EQ_INT(json_object_size(o), 4);
	json_decref(o);
	o = json_object();
	CHECK_OK(hml__cost_put(o, &gather_over, NAN));
	CHECK(!json_object_get(o, "gather_seconds") && json_object_get(o, "collect_seconds"));
	json_decref(o);
}

TEST(prediction)
{
	/* 10 runs of 1 s without the collector, 0.8 s of it in the region's
	 * original code over 1e5 rows: 8 us per row */
	const hml__region_cost c = { 8.0, 10.0, 1e6, 10, 0, 0, NAN, NAN, NAN, 0 };
	const hml__region_cost none = { NAN, NAN, NAN, NAN, NAN, 0, NAN, NAN, NAN, 0 };
	/* the same region, where gathering and scattering a row costs 1 us */
	const hml__region_cost moved = { 8.0, 10.0, 1e6, 10, 1.0, 2, NAN, NAN, NAN, 0 };
	char text[64];
	hml__prediction p;

	hml__predict(&p, &c, 1e-6, 0.05, NULL);
	CHECK_NEAR(p.cost_per_row, 8e-6, 1e-18);
	CHECK_NEAR(p.region, 8.0, 1e-12);
	CHECK(!p.slower);
	/* a run: 1 s before; 0.2 s outside + 0.1 s of model + 0.05 s start-up */
	CHECK_NEAR(p.end_to_end, 1.0 / 0.35, 1e-9);
	hml__predict(&p, &c, 8e-6, 0.05, NULL);
	CHECK(p.slower);   /* as slow as the original code: nothing to gain */
	CHECK_NEAR(p.region, 1.0, 1e-12);
	hml__predict(&p, &c, 1e-6, NAN, NULL);   /* start-up unknown: end to end unknown */
	CHECK(isnan(p.end_to_end) && !isnan(p.region));
	hml__predict(&p, &c, NAN, 0.05, NULL);   /* unmeasured model: not judged */
	CHECK(isnan(p.region) && !p.slower);
	hml__predict(&p, &none, 1e-6, 0.05, NULL);
	CHECK(isnan(p.region) && isnan(p.end_to_end) && !p.slower);
	CHECK_STR(hml__prediction_model_text(text, sizeof(text), &p), "1 us");
	/* moving rows is paid besides the model: 8 / (1 + 1) */
	hml__predict(&p, &moved, 1e-6, 0.05, NULL);
	CHECK_NEAR(p.move_per_row, 1e-6, 1e-18);
	CHECK_NEAR(p.region, 4.0, 1e-12);
	CHECK_NEAR(p.end_to_end, 1.0 / 0.45, 1e-9);
	CHECK_STR(hml__prediction_model_text(text, sizeof(text), &p), "1 us + 1 us moving rows");
	CHECK_STR(hml__prediction_speed_text(text, sizeof(text), &p), "predicted 4.00x");
	p.region = 0.03;
	CHECK_STR(hml__prediction_speed_text(text, sizeof(text), &p), "predicted 0.030x");
	p.region = 8e-5;
	CHECK_STR(hml__prediction_speed_text(text, sizeof(text), &p), "predicted 0.000080x");
	p.region = NAN;
	CHECK_STR(hml__prediction_speed_text(text, sizeof(text), &p), "predicted ?x");
	hml__predict(&p, &moved, 7e-6, 0.05, NULL);   /* faster than the code, not with the moves */
	CHECK(p.slower);
}

/* An iterative run (cost.h): 10 runs of 1000 calls of 100 rows, each call
 * k steps; the original code 8 us per row, the model 1 us. Interleave N
 * sends call c to the original code when c % (N + 1) == N (the runtime's
 * rule), so of 10 calls at N = 2 the model answers 7 (calls 2, 5, 8 are
 * the original code's). Every figure below is worked by hand. */
TEST(schedule)
{
	const hml__region_cost c = { 8.0, 10.0, 1e6, 10, 0, 0, 1e4, NAN, NAN, 0 };
	const hml__region_cost odd = { 8.0, 10.0, 1e6, 10, 0, 0, 10010, NAN, NAN, 0 };
	const hml__region_cost nocalls = { 8.0, 10.0, 1e6, 10, 0, 0, NAN, NAN, NAN, 0 };
	hml__schedule infer5 = { 5, 0 }, il3 = { 5, 3 }, infer10 = { 10, 0 };
	hml__prediction p;

	CHECK_NEAR(hml__schedule_model_calls(2, 10), 7, 0);
	CHECK_NEAR(hml__schedule_model_calls(0, 10), 10, 0);
	CHECK_NEAR(hml__schedule_model_calls(3, 1000), 750, 0);
	CHECK_NEAR(hml__schedule_model_calls(3, 3), 3, 0);   /* call 3 would be the first */
	/* infer mode at k 5: 1 us a row, 1e5 rows a run over 5000 steps */
	hml__predict(&p, &c, 1e-6, 0.05, &infer5);
	CHECK_NEAR(p.model_share, 1, 0);
	CHECK_NEAR(p.region, 8.0, 1e-12);
	CHECK_NEAR(p.step_seconds, 1e6 * 1e-6 / (1e4 * 5), 1e-18);   /* 2e-5 s */
	CHECK_NEAR(p.end_to_end, 1.0 / 0.35, 1e-9);   /* as without a schedule */
	/* the same model at k 10 is called half as often: half the time a step */
	hml__predict(&p, &c, 1e-6, 0.05, &infer10);
	CHECK_NEAR(p.step_seconds, 1e-5, 1e-18);
	/* interleave 3: 750 model calls and 250 original a run; a row costs
	 * 0.75 x 1 us + 0.25 x 8 us = 2.75 us: 8 / 2.75 in the region; a run
	 * 0.2 s outside + 1e5 x 2.75 us + 0.05 s = 0.525 s against 1 s */
	hml__predict(&p, &c, 1e-6, 0.05, &il3);
	CHECK_NEAR(p.model_share, 0.75, 1e-15);
	CHECK_NEAR(p.region, 8.0 / 2.75, 1e-12);
	CHECK_NEAR(p.end_to_end, 1.0 / 0.525, 1e-9);
	CHECK_NEAR(p.step_seconds, 1e6 * 2.75e-6 / (1e4 * 5), 1e-18);   /* 5.5e-5 s */
	CHECK(!p.slower);
	/* 1001 calls a run: floor(1001 / 4) = 250 original, 751 the model's */
	hml__predict(&p, &odd, 1e-6, 0.05, &il3);
	CHECK_NEAR(p.model_share, 751.0 / 1001.0, 1e-15);
	/* calls not recorded: N / (N + 1), and no time per step */
	hml__predict(&p, &nocalls, 1e-6, 0.05, &il3);
	CHECK_NEAR(p.model_share, 0.75, 1e-15);
	CHECK(isnan(p.step_seconds));
	/* a model slower per row stays slower, whatever the interleave: the
	 * original calls cannot make up for it */
	hml__predict(&p, &c, 9e-6, 0.05, &il3);
	CHECK(p.slower && p.region < 1);
}

/* An MPI data set: 2 runs of 3 ranks each (cpu_processes 6), whose
 * profiles summed the ranks' times, rows and calls. Read back, a run
 * counts a mean rank's: per run 1.2 s of wall time, 1 s of region
 * (3 s summed), 0.1 s of collector (0.3 s), 1000 rows (3000). */
TEST(mpi_ranks)
{
	hml__store *s = NULL;
	hml__region_cost c;
	hml__prediction p;
	json_t *region = json_pack("{s:I, s:I}", "rows", (json_int_t)6000, "calls",
	                           (json_int_t)60), *runs = json_array();
	const hml__cost_times t = { "r", 6.0, 6.6, 0.06, 1, 1.0, 0.0, 6 };
	hml__dataset_view d;
	char id[16];
	const char *ids[1] = { id };

	CHECK_OK(hml__store_open(&s, tmpdir, 1));
	for (int k = 0; k < 2; k++)
		json_array_append_new(runs, json_pack("{s:f}", "wall_seconds", 1.2));
	CHECK_OK(hml__cost_put(region, &t, NAN));
	CHECK_OK(hml__store_add(s, "datasets", json_pack("{s:o, s:{s:o}}", "runs", runs,
	         "regions", "r", region), NULL, 0, 0, id, sizeof(id)));
	CHECK_OK(hml__records_dataset(&d, s, id));
	CHECK_NEAR(hml__cost_processes(&d, "r"), 3, 0);
	CHECK_NEAR(hml__cost_processes(&d, "other"), 1, 0);   /* not recorded: one */
	hml__cost_of_datasets(&c, s, "r", ids, 1);
	CHECK_NEAR(c.original_s, 2.0, 1e-12);
	CHECK_NEAR(c.app_s, 2.4 - 0.2, 1e-12);
	CHECK_NEAR(c.rows, 2000, 1e-9);
	CHECK_NEAR(c.calls, 20, 1e-12);
	CHECK_NEAR(c.gather_s, 0.02, 1e-12);
	CHECK_NEAR(c.cpu_procs, 6, 0);
	CHECK_NEAR(hml__cost_per_row(&c), 1e-3, 1e-15);   /* as the sums say */
	/* a run: 1.1 s without the collector, 1 s of it the region's */
	hml__predict(&p, &c, 1e-4, 0, NULL);
	CHECK_NEAR(p.ceiling, 11, 1e-9);
	/* 0.1 s outside + 1000 rows x (0.1 ms + 0.01 ms moving) = 0.21 s */
	CHECK_NEAR(p.end_to_end, 1.1 / 0.21, 1e-9);
	/* a hostile count (an edited manifest): no region left in a run, the
	 * cost per row as the sums say; fewer processes than runs: one a run */
	json_object_set_new((json_t *)hml__dataset_view_region(&d, "r"), "cpu_processes",
	                    json_real(1e300));
	hml__cost_of_datasets(&c, s, "r", ids, 1);
	CHECK(isfinite(c.app_s) && c.original_s >= 0 && c.original_s < 1e-200);
	CHECK_NEAR(hml__cost_per_row(&c), 1e-3, 1e-15);
	hml__predict(&p, &c, 1e-4, 0, NULL);
	CHECK_NEAR(p.ceiling, 1, 1e-12);
	json_object_set_new((json_t *)hml__dataset_view_region(&d, "r"), "cpu_processes",
	                    json_integer(1));
	CHECK_NEAR(hml__cost_processes(&d, "r"), 1, 0);
	hml__cost_of_datasets(&c, s, "r", ids, 1);
	CHECK_NEAR(c.cpu_procs, 1, 0);   /* the one process the CPU times sum */
	CHECK_NEAR(c.original_s, 6.0, 1e-12);   /* the sums as they are */
	hml__store_free(s);
}

/* Amdahl's bound: the run with the region taking no time at all. */
TEST(ceiling)
{
	const hml__region_cost c = { 8.0, 10.0, 1e6, 10, 1.0, 0, 1e4, NAN, NAN, 0 };
	const hml__region_cost none = { NAN, NAN, NAN, NAN, NAN, 0, NAN, NAN, NAN, 0 };
	hml__schedule il3 = { 5, 3 };
	hml__prediction p;
	double share;
	char text[64];
	json_t *j;

	CHECK_NEAR(hml__speedup_ceiling(10, 8), 5, 1e-12);
	CHECK_NEAR(hml__speedup_ceiling(10, 0), 1, 0);
	CHECK(isinf(hml__speedup_ceiling(10, 10)));   /* all region: no bound */
	CHECK(isnan(hml__speedup_ceiling(10, 10.5)));  /* a region longer than its run */
	CHECK(isnan(hml__speedup_ceiling(0, 0)) && isnan(hml__speedup_ceiling(-1, 0.5)));
	CHECK(isnan(hml__speedup_ceiling(NAN, 1)) && isnan(hml__speedup_ceiling(10, NAN)));
	CHECK(isnan(hml__speedup_ceiling(INFINITY, 1)) && isnan(hml__speedup_ceiling(10, -1)));
	/* a run: 1 s, 0.8 s of it the region; the model's latency, moving
	 * rows and start-up do not enter it */
	hml__predict(&p, &c, 1e-6, 0.05, NULL);
	CHECK_NEAR(p.ceiling, 5, 1e-12);
	CHECK(p.end_to_end < p.ceiling);
	CHECK_NEAR(hml__cost_ceiling(&c, &share), 5, 1e-12);   /* every call the model's */
	CHECK_NEAR(share, 0.8, 1e-15);
	CHECK(isnan(hml__cost_ceiling(&none, &share)) && isnan(share));
	CHECK_NEAR(hml__cost_ceiling(&c, NULL), 5, 1e-12);
	hml__predict(&p, &c, NAN, NAN, NULL);   /* no model measured: the bound stands */
	CHECK_NEAR(p.ceiling, 5, 1e-12);
	/* interleave 3: the original code keeps a quarter of the calls,
	 * 0.2 s a run: 1 / (0.2 + 0.2) */
	hml__predict(&p, &c, 1e-6, 0.05, &il3);
	CHECK_NEAR(p.ceiling, 2.5, 1e-12);
	hml__predict(&p, &none, 1e-6, 0.05, NULL);
	CHECK(isnan(p.ceiling));
	CHECK_STR(hml__prediction_ceiling_text(text, sizeof(text), &p), "");   /* unknown */
	hml__predict(&p, &c, 1e-6, 0.05, NULL);
	CHECK_STR(hml__prediction_ceiling_text(text, sizeof(text), &p), " (any model: at most 5.0x)");
	p.ceiling = INFINITY;
	CHECK_STR(hml__prediction_ceiling_text(text, sizeof(text), &p), "");
	/* in the prediction's JSON; null when unknown */
	hml__predict(&p, &c, 1e-6, 0.05, NULL);
	CHECK((j = hml__prediction_json(&p)) != NULL);
	CHECK_NEAR(json_real_value(json_object_get(j, "ceiling")), 5, 1e-12);
	json_decref(j);
	hml__predict(&p, &none, 1e-6, 0.05, NULL);
	CHECK((j = hml__prediction_json(&p)) != NULL);
	CHECK(json_is_null(json_object_get(j, "ceiling")));
	json_decref(j);
}

/* gather_seconds and threads read back; data sets that differ in threads
 * give 0 (unknown), never one of them. */
TEST(moves_and_threads)
{
	hml__store *s = NULL;
	hml__region_cost c;
	char sub[600], id[3][16];
	const char *ids[3] = { id[0], id[1], id[2] };
	const hml__cost_times t[3] = {
		{ "r", 2.0, 3.0, 0.5, 4, NAN, NAN, 0 }, { "r", 2.0, 3.0, 0.25, 4, NAN, NAN, 0 }, { "r", 2.0, 3.0, 0.25, 1, NAN, NAN, 0 },
	};

	snprintf(sub, sizeof(sub), "%s/moves", tmpdir);
	CHECK_OK(hml__store_open(&s, sub, 1));
	for (int k = 0; k < 3; k++) {
		json_t *region = json_pack("{s:i}", "rows", 1000);

		CHECK_OK(hml__cost_put(region, &t[k], NAN));
		CHECK_OK(hml__store_add(s, "datasets", json_pack("{s:[{s:f}], s:{s:o}}", "runs",
		         "wall_seconds", 5.0, "regions", "r", region), NULL, 0, 0, id[k],
		         sizeof(id[k])));
	}
	hml__cost_of_datasets(&c, s, "r", ids, 2);
	CHECK_NEAR(c.gather_s, 0.75, 1e-12);
	CHECK_NEAR(hml__cost_move_per_row(&c), 0.75 / 2000, 1e-15);
	CHECK_EQ_INT(c.threads, 4);
	hml__cost_of_datasets(&c, s, "r", ids, 3);
	CHECK_EQ_INT(c.threads, 0);
	hml__store_free(s);
}

int main(void)
{
	if (tmp_dir_make("cost") < 0)
		return 1;
	unsetenv("HML_LOCK_TIMEOUT");
	RUN(round_trip);
	RUN(median_per_row);
	RUN(times_from_profiles);
	RUN(cpu_wait_over_runs);
	RUN(put_refuses_nonsense);
	RUN(prediction);
	RUN(moves_and_threads);
	RUN(schedule);
	RUN(ceiling);
	RUN(mpi_ranks);
	tmp_dir_remove();
	return check_report();
}
