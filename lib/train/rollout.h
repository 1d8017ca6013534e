/*
 * lib/train/rollout.h - the windows of multi-step (unrolled) training
 * (hml train --rollout R, hml-train(1)), kept apart from the libtorch shim
 * so that they are tested without it (internal).
 *
 * A region that advances a field in place (its output has its input's
 * shape, and the application passes call c's output back as call c + 1's
 * input) is trained with R > 1 on windows of R consecutive calls of one
 * run: the model applied R times from x_c, its k-th output judged against
 * y_{c+k}. A window is rows i .. i + R - 1 of a data set whose run numbers
 * are equal and whose call numbers are call[i], call[i] + 1, ...
 * (hml__dataset's run and call, from the collector's calls table): it
 * never spans two runs, nor a call that is missing (a sampled collection,
 * a row dropped for NaN).
 */
#ifndef HML_LIB_TRAIN_ROLLOUT_H
#define HML_LIB_TRAIN_ROLLOUT_H

#include <stdint.h>

#include "train/dataset.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The largest rollout hml train accepts. */
#define HML__ROLLOUT_MAX 64

/**
 * The most consecutive calls of one run among `rows` rows (run, call as in
 * hml__dataset; NULL: 0): the largest R any window can have.
 */
int64_t hml__rollout_longest(const int64_t *run, const int64_t *call, int64_t rows);

/**
 * The first rows of every window of `steps` consecutive calls of one run
 * whose rows are all usable (usable[i] nonzero; usable NULL: every row),
 * in increasing order. *starts (*n of them) is yours to free(); NULL when
 * *n is 0. Errors: HML_EINVALID for steps < 1, HML_ENOMEM.
 */
int hml__rollout_windows(int64_t **starts, int64_t *n, const int64_t *run,
                         const int64_t *call, const unsigned char *usable, int64_t rows,
                         int steps);

/**
 * Whether d can be trained with rollout `steps` (1: always): its output
 * has its input's shape, and it holds `steps` consecutive calls of one run.
 * Errors: HML_EINVALID "--rollout 4 needs a region whose output has its
 * input's shape; the input is [2, 8], the output [3]", "--rollout 4 needs
 * the order of the calls, which the data do not record (no calls table,
 * or several rows per call)", "--rollout 40 is more than the 16
 * consecutive calls of the longest run in the data".
 */
int hml__rollout_check(const hml__dataset *d, int steps);

/**
 * The split of rollout `block` (R > 1): the rows' order as train.cpp deals
 * it (test rows first, then validation, then training), by blocks of
 * `block` consecutive calls of one run, so that every validation and test
 * block is a window of R calls and the best epoch can be chosen by the
 * R-step error (hml-train(1) ROLLOUT). Every chain of consecutive calls
 * of one run (hml__rollout_windows' rule) is cut into blocks of `block`
 * rows from its first call; the blocks are shuffled with `seed`; the
 * first round(*n_test / block) (at least 1) are the test rows, the next
 * round(*n_val / block) (at least 1) the validation rows, and the rest,
 * with every row in no block (a chain's shorter tail, a call of unknown
 * order), the training rows. order has `rows` elements; *n_val and
 * *n_test are the rows wanted on entry and the rows given on return
 * (multiples of block). A block's rows are in call order.
 * Errors: HML_EINVALID when the data hold too few blocks for a test, a
 * validation and a training block ("--rollout 4: the 12 rows hold 3
 * blocks of 4 consecutive calls of one run, too few for 1 test, 1
 * validation and a training block; collect more calls") or no order of
 * the calls, HML_ENOMEM.
 */
int hml__rollout_split(int64_t *order, int64_t *n_val, int64_t *n_test, const int64_t *run,
                       const int64_t *call, int64_t rows, int block, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
