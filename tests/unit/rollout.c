/*
 * tests/unit/rollout.c - the windows of multi-step training
 * (lib/train/rollout.h) and the rollout option's checks
 * (lib/train/train_check.c), without libtorch: windows never span two runs
 * or a missing call, only usable rows, the longest run, and the one-line
 * refusals of a rollout the data cannot serve.
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

int main(void)
{
	RUN(windows_stay_in_one_run);
	RUN(windows_across_a_boundary_of_equal_calls);
	RUN(windows_skip_gaps_and_unknown_calls);
	RUN(windows_only_of_usable_rows);
	RUN(bad_steps);
	RUN(check_against_data);
	RUN(option_checks);
	return check_report();
}
