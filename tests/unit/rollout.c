/*
 * tests/unit/rollout.c - the windows of multi-step training
 * (lib/train/rollout.h) and the rollout option's checks
 * (lib/train/train_check.c), without libtorch: windows never span two runs
 * or a missing call, only usable rows, the longest run, and the one-line
 * refusals of a rollout the data cannot serve; the split by blocks of
 * consecutive calls that gives validation its windows.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/error.h"
#include "fixtures.h"
#include "train/rollout.h"
#include "train/train.h"

/* Two runs of 4 calls each, back to back: run 7 (calls 0..3), run 8. */
static const int64_t run2[] = { 7, 7, 7, 7, 8, 8, 8, 8 };
static const int64_t call2[] = { 0, 1, 2, 3, 0, 1, 2, 3 };

static int64_t windows(const int64_t *run, const int64_t *call, const unsigned char *usable,
                       int64_t rows, int steps, int64_t *first, int64_t cap)
{
	int64_t *s = NULL, n = 0;

	CHECK_OK(hml__rollout_windows(&s, &n, run, call, usable, rows, steps));
	for (int64_t i = 0; i < n && i < cap; i++)
		first[i] = s[i];
	free(s);
	return n;
}

TEST(windows_stay_in_one_run)
{
	int64_t w[16];

	/* R = 1: every row; R = 2: 3 per run, none from row 3 (run 7's last) to 4 */
	CHECK_EQ_INT(windows(run2, call2, NULL, 8, 1, w, 16), 8);
	CHECK_EQ_INT(windows(run2, call2, NULL, 8, 2, w, 16), 6);
	CHECK_EQ_INT(w[0], 0);
	CHECK_EQ_INT(w[2], 2);
	CHECK_EQ_INT(w[3], 4);
	CHECK_EQ_INT(windows(run2, call2, NULL, 8, 4, w, 16), 2);
	CHECK_EQ_INT(w[0], 0);
	CHECK_EQ_INT(w[1], 4);
	CHECK_EQ_INT(windows(run2, call2, NULL, 8, 5, w, 16), 0);
	CHECK_EQ_INT(hml__rollout_longest(run2, call2, 8), 4);
}

TEST(windows_across_a_boundary_of_equal_calls)
{
	/* two runs whose call numbers continue across the boundary (run 0's
	 * calls 0..2, run 1's 3..5) are still two runs */
	static const int64_t run[] = { 0, 0, 0, 1, 1, 1 };
	static const int64_t call[] = { 0, 1, 2, 3, 4, 5 };
	int64_t w[8];

	CHECK_EQ_INT(windows(run, call, NULL, 6, 3, w, 8), 2);
	CHECK_EQ_INT(w[1], 3);
	CHECK_EQ_INT(windows(run, call, NULL, 6, 4, w, 8), 0);
	CHECK_EQ_INT(hml__rollout_longest(run, call, 6), 3);
}

TEST(windows_skip_gaps_and_unknown_calls)
{
	/* call 2 missing (a dropped NaN row), a row of unknown order */
	static const int64_t run[] = { 0, 0, 0, 0, 0, 0 };
	static const int64_t call[] = { 0, 1, 3, 4, -1, 6 };
	int64_t w[8];

	CHECK_EQ_INT(windows(run, call, NULL, 6, 2, w, 8), 2);
	CHECK_EQ_INT(w[0], 0);
	CHECK_EQ_INT(w[1], 2);
	CHECK_EQ_INT(windows(run, call, NULL, 6, 3, w, 8), 0);
	CHECK_EQ_INT(windows(run, call, NULL, 6, 1, w, 8), 5);
	CHECK_EQ_INT(hml__rollout_longest(run, call, 6), 2);
	CHECK_EQ_INT(hml__rollout_longest(NULL, NULL, 6), 0);
	CHECK_EQ_INT(windows(NULL, NULL, NULL, 6, 2, w, 8), 0);
}

TEST(windows_only_of_usable_rows)
{
	/* rows 2 and 5 are validation or test rows */
	static const unsigned char usable[] = { 1, 1, 0, 1, 1, 0, 1, 1 };
	int64_t w[8];

	/* (0, 1) and (6, 7): (1, 2) and (2, 3) use row 2, (3, 4) spans two runs */
	CHECK_EQ_INT(windows(run2, call2, usable, 8, 2, w, 8), 2);
	CHECK_EQ_INT(w[0], 0);
	CHECK_EQ_INT(w[1], 6);
	CHECK_EQ_INT(windows(run2, call2, usable, 8, 3, w, 8), 0);
}

TEST(bad_steps)
{
	int64_t *s = (int64_t *)&s, n = 5;

	CHECK_FAILS(hml__rollout_windows(&s, &n, run2, call2, NULL, 8, 0), HML_EINVALID,
	            "rollout 0 is not a number of steps");
	CHECK(s == NULL);
	CHECK_EQ_INT(n, 0);
}

TEST(check_against_data)
{
	static const int64_t field[] = { 2, 3 }, vec[] = { 6 };
	hml__dataset d;

	dataset_zeros(&d, 8, 2, field, 2, field);
	CHECK_OK(hml__rollout_check(&d, 1));
	CHECK_FAILS(hml__rollout_check(&d, 2), HML_EINVALID,
	            "--rollout 2 needs the order of the calls, which the data do not record");
	d.run = malloc(8 * sizeof(int64_t));
	d.call = malloc(8 * sizeof(int64_t));
	memcpy(d.run, run2, sizeof(run2));
	memcpy(d.call, call2, sizeof(call2));
	CHECK_OK(hml__rollout_check(&d, 4));
	CHECK_FAILS(hml__rollout_check(&d, 5), HML_EINVALID,
	            "--rollout 5 is more than the 4 consecutive calls of the longest run in the data");
	CHECK_FAILS(hml__rollout_check(&d, 0), HML_EINVALID, "rollout must be 1 to 64, not 0");
	dataset_shape(&d, 2, field, 1, vec);
	CHECK_FAILS(hml__rollout_check(&d, 2), HML_EINVALID,
	            "--rollout 2 needs a region whose output has its input's shape; the input is "
	            "[2, 3], the output [6]");
	free(d.x);
	free(d.y);
	free(d.run);
	free(d.call);
}

TEST(option_checks)
{
	hml__train_options o = HML__TRAIN_OPTIONS_INIT;

	CHECK_EQ_INT(o.rollout, 1);
	o.arch = "cnn:8:tanh:kernel=3";
	o.rollout = 4;
	CHECK_OK(hml__train_check(&o, NULL, 0));
	o.rollout = 0;
	CHECK_FAILS(hml__train_check(&o, NULL, 0), HML_EINVALID, "rollout must be 1 to 64, not 0");
	o.rollout = -3;
	CHECK_FAILS(hml__train_check(&o, NULL, 0), HML_EINVALID, "rollout must be 1 to 64, not -3");
	o.rollout = 65;
	CHECK_FAILS(hml__train_check(&o, NULL, 0), HML_EINVALID, "not 65");
	o.rollout = 2;
	o.arch = "cnn:8:tanh";
	o.loss = "log";
	CHECK_FAILS(hml__train_check(&o, NULL, 0), HML_EINVALID,
	            "loss 'log' cannot train with rollout 2");
	o.loss = "relative";
	CHECK_OK(hml__train_check(&o, NULL, 0));
	o.arch = "mlp:8";
	o.categorical = "0:3";
	CHECK_FAILS(hml__train_check(&o, NULL, 0), HML_EINVALID,
	            "categorical features cannot train with rollout 2");
}

/* Whether rows order[from .. from + block - 1] are consecutive calls of one run. */
static int one_window(const int64_t *order, int64_t from, int block, const int64_t *run,
                      const int64_t *call)
{
	for (int64_t k = from + 1; k < from + block; k++)
		if (order[k] != order[k - 1] + 1 || run[order[k]] != run[order[k - 1]] ||
		    call[order[k]] != call[order[k - 1]] + 1)
			return 0;
	return 1;
}

/* 4 runs of 10 calls: 40 rows. */
static void runs_of_ten(int64_t *run, int64_t *call)
{
	for (int64_t i = 0; i < 40; i++) {
		run[i] = i / 10;
		call[i] = i % 10;
	}
}

TEST(split_by_blocks)
{
	int64_t run[40], call[40], order[40], again[40], other[40], n_val = 4, n_test = 4;
	unsigned char seen[40] = { 0 }, val[40] = { 0 };
	int64_t *s = NULL, n = 0, i, differs = 0;

	runs_of_ten(run, call);
	CHECK_OK(hml__rollout_split(order, &n_val, &n_test, run, call, 40, 4, 7));
	CHECK_EQ_INT(n_test, 4);
	CHECK_EQ_INT(n_val, 4);
	for (i = 0; i < 40; i++) {   /* a permutation of the rows */
		CHECK(order[i] >= 0 && order[i] < 40 && !seen[order[i]]);
		seen[order[i]] = 1;
	}
	/* the test block and the validation block: 4 consecutive calls of one
	 * run each, from a chain's call 0 or 4 (blocks cut from a chain's start) */
	CHECK(one_window(order, 0, 4, run, call));
	CHECK(one_window(order, 4, 4, run, call));
	CHECK(call[order[0]] % 4 == 0 && call[order[4]] % 4 == 0);
	/* a chain's tail of 2 calls (8, 9) is no block: always training */
	for (i = 0; i < 8; i++)
		CHECK(call[order[i]] < 8);
	/* the validation rows hold one window of 4, and the training rows'
	 * windows never reach into validation or test */
	for (i = 4; i < 8; i++)
		val[order[i]] = 1;
	CHECK_OK(hml__rollout_windows(&s, &n, run, call, val, 40, 4));
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_INT(s[0], order[4]);
	free(s);
	/* the same seed deals the same blocks; another seed others */
	CHECK_OK(hml__rollout_split(again, &n_val, &n_test, run, call, 40, 4, 7));
	CHECK(memcmp(order, again, sizeof(order)) == 0);
	CHECK_OK(hml__rollout_split(other, &n_val, &n_test, run, call, 40, 4, 8));
	for (i = 0; i < 8; i++)
		differs += order[i] != other[i];
	CHECK(differs > 0);
}

TEST(split_rounds_to_whole_blocks)
{
	int64_t run[40], call[40], order[40], n_val = 6, n_test = 1, i;

	runs_of_ten(run, call);
	/* 6 rows: 1.5 blocks of 4, rounded to 2; 1 row: at least 1 block */
	CHECK_OK(hml__rollout_split(order, &n_val, &n_test, run, call, 40, 4, 1));
	CHECK_EQ_INT(n_test, 4);
	CHECK_EQ_INT(n_val, 8);
	for (i = 0; i < 12; i += 4)
		CHECK(one_window(order, i, 4, run, call));
	/* blocks of 1: the rows themselves, shuffled */
	n_val = 5;
	n_test = 3;
	CHECK_OK(hml__rollout_split(order, &n_val, &n_test, run, call, 40, 1, 1));
	CHECK_EQ_INT(n_val, 5);
	CHECK_EQ_INT(n_test, 3);
}

TEST(split_skips_gaps_and_refuses_too_few_blocks)
{
	/* call 2 missing, a row of unknown order: chains (0, 1), (3, 4), (6, 7) */
	static const int64_t run[] = { 0, 0, 0, 0, 0, 0, 0 };
	static const int64_t call[] = { 0, 1, 3, 4, -1, 6, 7 };
	int64_t order[8], n_val = 2, n_test = 2;

	CHECK_OK(hml__rollout_split(order, &n_val, &n_test, run, call, 7, 2, 3));
	CHECK(one_window(order, 0, 2, run, call));
	CHECK(one_window(order, 2, 2, run, call));
	CHECK(order[0] != 4 && order[1] != 4 && order[2] != 4 && order[3] != 4);
	n_val = n_test = 2;
	CHECK_FAILS(hml__rollout_split(order, &n_val, &n_test, run, call, 7, 3, 3), HML_EINVALID,
	            "--rollout 3: the 7 rows hold 0 blocks of 3 consecutive calls of one run, too "
	            "few for 1 test, 1 validation and a training block; collect more calls");
	/* two runs of 4: two blocks of 4, no training block left */
	n_val = n_test = 1;
	CHECK_FAILS(hml__rollout_split(order, &n_val, &n_test, run2, call2, 8, 4, 3), HML_EINVALID,
	            "the 8 rows hold 2 blocks of 4 consecutive calls");
	CHECK_FAILS(hml__rollout_split(order, &n_val, &n_test, NULL, NULL, 8, 2, 3), HML_EINVALID,
	            "needs the order of the calls");
	CHECK_FAILS(hml__rollout_split(order, &n_val, &n_test, run2, call2, 8, 0, 3), HML_EINVALID,
	            "rollout 0 is not a number of steps");
}

int main(void)
{
	RUN(windows_stay_in_one_run);
	RUN(windows_across_a_boundary_of_equal_calls);
	RUN(windows_skip_gaps_and_unknown_calls);
	RUN(windows_only_of_usable_rows);
	RUN(bad_steps);
	RUN(check_against_data);
	RUN(option_checks);
	RUN(split_by_blocks);
	RUN(split_rounds_to_whole_blocks);
	RUN(split_skips_gaps_and_refuses_too_few_blocks);
	return check_report();
}
