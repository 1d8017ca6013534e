/*
 * cmd/train_ensemble.h - hml train --ensemble N (cmd/train_ensemble.c):
 * the members trained, their files registered with the model, the card's
 * "ensemble" and the guard statistics' calibration.
 */
#ifndef HML_CMD_TRAIN_ENSEMBLE_H
#define HML_CMD_TRAIN_ENSEMBLE_H

#include <stdint.h>

#include <jansson.h>

#include "core/guard.h"
#include "train/dataset.h"
#include "train/train.h"

struct hml__store;
struct hml__store_file;

typedef struct cmd_ensemble {
	int n;                                          /**< members, 2 .. 16 */
	char *tmp[HML__GUARD_ENSEMBLE_MAX];             /**< their files until registered */
	uint64_t seed[HML__GUARD_ENSEMBLE_MAX];
	hml__train_result res[HML__GUARD_ENSEMBLE_MAX];
	char role[HML__GUARD_ENSEMBLE_MAX][16], ext[HML__GUARD_ENSEMBLE_MAX][16];
	hml__dataset fit, cal;                          /**< trained on, held out */
	hml__guard_ensemble calib;
} cmd_ensemble;

/**
 * Train e->n members of `o` (seed o->seed + k) on d less its held-out
 * rows, then calibrate their disagreement. e->tmp[k] are the members'
 * files (the caller may take tmp[0], member 0, and set it NULL). *res0 gets member 0's result
 * (an interrupted member's, with interrupted set, and no calibration).
 * Errors: hml__ensemble_split's (too few rows), hml__train's, the
 * calibration's.
 */
int cmd_ensemble_train(cmd_ensemble *e, const struct hml__store *s, const hml__dataset *d,
                       const hml__train_options *o, hml__train_result *res0);

/** The members k > 0 as files of the model's record (up to `size`); their count. */
int cmd_ensemble_files(const cmd_ensemble *e, struct hml__store_file *files, size_t size);

/** The card's "ensemble" and its guard statistics' "ensemble" (set on rec). */
int cmd_ensemble_card(const cmd_ensemble *e, json_t *rec);

/** The card's "ensemble" for people (hml train's result), if any. */
void cmd_ensemble_print(const json_t *ens);

/** The members' files were registered (or kept for the user): forget them. */
void cmd_ensemble_registered(cmd_ensemble *e);

/** Remove the files not registered, free the rows. */
void cmd_ensemble_release(cmd_ensemble *e);

#endif
