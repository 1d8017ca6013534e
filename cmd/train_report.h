/*
 * cmd/train_report.h - what hml train prints of the model it registered
 * (cmd/train_report.c): its record as --json, or the text report.
 */
#ifndef HML_CMD_TRAIN_REPORT_H
#define HML_CMD_TRAIN_REPORT_H

#include <stddef.h>

#include <jansson.h>

struct hml__store;

/**
 * Print model `id`'s report to stdout: with --json its whole record as in
 * the manifest of `s`, else the text (rows, errors, a constant's test RMSE,
 * categorical features, the training, the latencies, the ensemble's
 * members). `rec` is the record registered, `label` its region; `from`
 * (may be NULL) the model it continued, whose `parent_data` of the `n`
 * data sets it was trained on.
 */
void cmd_train_report(struct hml__store *s, const char *id, const char *label,
                      const json_t *rec, const char *from, size_t parent_data, size_t n);

#endif
