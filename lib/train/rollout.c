/*
 * lib/train/rollout.c - the windows of multi-step (rollout) training
 * (rollout.h): R consecutive calls of one run, every row usable for
 * training, and the checks that a rollout can be served by the data.
 * No libtorch: train.cpp draws its batches from these windows, and splits
 * the rows by blocks of consecutive calls (hml__rollout_split) so that
 * validation has windows too.
 */
#include <stdlib.h>

#include "core/error.h"
#include "core/rng.h"
#include "core/util.h"
#include "train/rollout.h"

/* Row i + 1 is the call after row i's, in the same run. */
static int follows(const int64_t *run, const int64_t *call, int64_t i)
{
	return call[i] >= 0 && call[i + 1] == call[i] + 1 && run[i + 1] == run[i];
}

int64_t hml__rollout_longest(const int64_t *run, const int64_t *call, int64_t rows)
{
	int64_t i, len = 0, best = 0;

	if (!run || !call)
		return 0;
	for (i = 0; i < rows; i++) {
		len = i > 0 && follows(run, call, i - 1) ? len + 1 : call[i] >= 0;
		if (len > best)
			best = len;
	}
	return best;
}

/* Rows i .. i + steps - 1 are one window of usable rows. */
static int window_at(const int64_t *run, const int64_t *call, const unsigned char *usable,
                     int64_t rows, int steps, int64_t i)
{
	int64_t k;

	if (i + steps > rows || call[i] < 0)
		return 0;
	for (k = 0; k < steps; k++)
		if ((usable && !usable[i + k]) || (k + 1 < steps && !follows(run, call, i + k)))
			return 0;
	return 1;
}

int hml__rollout_windows(int64_t **starts, int64_t *n, const int64_t *run,
                         const int64_t *call, const unsigned char *usable, int64_t rows,
                         int steps)
{
	int64_t i, count = 0, *out;

	*starts = NULL;
	*n = 0;
	if (steps < 1)
		return hml__error_set(HML_EINVALID, "rollout %d is not a number of steps (1 or more)",
		                      steps);
	if (!run || !call)
		return 0;
	for (i = 0; i < rows; i++)
		count += window_at(run, call, usable, rows, steps, i);
	if (count == 0)
		return 0;
	if ((uint64_t)count > SIZE_MAX / sizeof(*out) || !(out = malloc((size_t)count * sizeof(*out))))
		return hml__error_oom();
	for (i = 0, count = 0; i < rows; i++)
		if (window_at(run, call, usable, rows, steps, i))
			out[count++] = i;
	*starts = out;
	*n = count;
	return 0;
}

static int same_shape(const hml__dataset *d)
{
	int i;

	if (d->in_ndim != d->out_ndim)
		return 0;
	for (i = 0; i < d->in_ndim; i++)
		if (d->in_shape[i] != d->out_shape[i])
			return 0;
	return 1;
}

int hml__rollout_check(const hml__dataset *d, int steps)
{
	char in[160], out[160];
	int64_t longest;

	if (steps == 1)
		return 0;
	if (steps < 1 || steps > HML__ROLLOUT_MAX)
		return hml__error_set(HML_EINVALID, "rollout must be 1 to %d, not %d",
		                      HML__ROLLOUT_MAX, steps);
	if (!same_shape(d)) {
		hml__format_shape(in, sizeof(in), d->in_shape, d->in_ndim);
		hml__format_shape(out, sizeof(out), d->out_shape, d->out_ndim);
		return hml__error_set(HML_EINVALID, "--rollout %d needs a region whose output has "
		                      "its input's shape; the input is %s, the output %s", steps,
		                      in, out);
	}
	longest = hml__rollout_longest(d->run, d->call, d->rows);
	if (longest == 0)
		return hml__error_set(HML_EINVALID, "--rollout %d needs the order of the calls, "
		                      "which the data do not record (no calls table, or several "
		                      "rows per call)", steps);
	if (longest < steps)
		return hml__error_set(HML_EINVALID, "--rollout %d is more than the %lld consecutive "
		                      "calls of the longest run in the data", steps,
		                      (long long)longest);
	return 0;
}

/* The first rows of the blocks a split by blocks deals: every chain of
 * consecutive calls of one run cut into `block` rows from its first call;
 * a chain's shorter tail is no block. *first (*n) is yours to free(). */
static int blocks_of(int64_t **first, int64_t *n, const int64_t *run, const int64_t *call,
                     int64_t rows, int block)
{
	int64_t i, pos = 0, count = 0, *out = NULL;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0, pos = 0; i < rows; i++) {
			pos = i > 0 && follows(run, call, i - 1) ? pos + 1 : 0;
			if (pos % block == 0 && window_at(run, call, NULL, rows, block, i)) {
				if (out)
					out[count] = i;
				count++;
			}
		}
		if (pass == 1 || count == 0)
			break;
		if ((uint64_t)count > SIZE_MAX / sizeof(*out) ||
		    !(out = malloc((size_t)count * sizeof(*out))))
			return hml__error_oom();
		count = 0;
	}
	*first = out;
	*n = count;
	return 0;
}

/* The blocks a part of `want` rows gets: the nearest whole number, at least 1. */
static int64_t blocks_for(int64_t want, int block)
{
	int64_t b = (want + block / 2) / block;

	return b > 0 ? b : 1;
}

int hml__rollout_split(int64_t *order, int64_t *n_val, int64_t *n_test, const int64_t *run,
                       const int64_t *call, int64_t rows, int block, uint64_t seed)
{
	int64_t *first = NULL, nb = 0, i, j, at = 0, b_test, b_val;
	unsigned char *dealt = NULL;
	uint64_t state = seed;
	int rc;

	if (block < 1)
		return hml__error_set(HML_EINVALID, "rollout %d is not a number of steps (1 or more)",
		                      block);
	if (!run || !call)
		return hml__error_set(HML_EINVALID, "a split by blocks of %d calls needs the order "
		                      "of the calls, which the data do not record", block);
	if ((rc = blocks_of(&first, &nb, run, call, rows, block)) < 0)
		return rc;
	b_test = blocks_for(*n_test, block);
	b_val = blocks_for(*n_val, block);
	if (nb < b_test + b_val + 1) {
		free(first);
		return hml__error_set(HML_EINVALID, "--rollout %d: the %lld rows hold %lld blocks of "
		                      "%d consecutive calls of one run, too few for %lld test, %lld "
		                      "validation and a training block; collect more calls", block,
		                      (long long)rows, (long long)nb, block, (long long)b_test,
		                      (long long)b_val);
	}
	if (!(dealt = calloc((size_t)rows, 1))) {
		free(first);
		return hml__error_oom();
	}
	for (i = nb; i > 1; i--) {   /* Fisher-Yates; the bias of % is < nb / 2^64 */
		int64_t k = (int64_t)(hml__rng_splitmix64(&state) % (uint64_t)i), t = first[i - 1];

		first[i - 1] = first[k];
		first[k] = t;
	}
	/* test blocks, validation blocks, then the training blocks and rows */
	for (i = 0; i < nb; i++)
		for (j = 0; j < block; j++) {
			order[at++] = first[i] + j;
			dealt[first[i] + j] = 1;
		}
	for (i = 0; i < rows; i++)
		if (!dealt[i])
			order[at++] = i;
	*n_test = b_test * block;
	*n_val = b_val * block;
	free(dealt);
	free(first);
	return 0;
}
