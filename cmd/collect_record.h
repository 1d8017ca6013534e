/*
 * cmd/collect_record.h - what hml collect writes about its runs: the data
 * set's log (each run's output between marker lines) and the record's
 * JSON (regions, runs), for cmd/collect.c.
 */
#ifndef HML_CMD_COLLECT_RECORD_H
#define HML_CMD_COLLECT_RECORD_H

#include <stdint.h>

#include <jansson.h>

#include "store/cost.h"
#include "store/store.h"
#include "sys/proc.h"
#include "train/dataset.h"

/* Append the run's output (if any) to the data set's log `log`, between
 * marker lines (the footer is optional). 0 or HML_EIO. */
int collect_log_append(const char *log, const char *run_log, const char *header,
                       const char *footer);

/* The record's "regions": each region's rows, calls, shapes, dtypes,
 * functors, sampling and cost times (times may be NULL). New reference. */
json_t *collect_regions_json(const hml__region_info *infos, size_t n,
                             const hml__cost_times *times, size_t ntimes);

/* A run's record; "succeeded": it exited with one of the workflow's
 * success codes; start_error: why it did not start (res unused). */
json_t *collect_run_json(int64_t seed, char *const *argv, const hml__proc_result *res,
                         const char *start_error, int succeeded);

/* "16384 rows of region 'binomial'", joined for every region with rows. */
void collect_rows_text(char *buf, size_t size, const hml__region_info *infos, size_t n);

/* The registered data set `id` printed (its record under --json, else a
 * line of rows, runs, calls and file); a warning when it cannot be read. */
void collect_print_result(hml__store *s, const char *id, const json_t *runs,
                          const hml__region_info *infos, size_t ninfos, int64_t calls);

#endif
