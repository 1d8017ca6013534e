/*
 * lib/store/data_pick.h - which collected data a command learns from (internal).
 *
 * hml train, hml search and hml import train on (or measure a model on)
 * the same data sets, chosen by the one rule here:
 *
 *   region     the one asked for, else the only region the data sets
 *              considered (the named ones, else all) hold rows of;
 *   data sets  the named ones (each must exist, hold rows of the region,
 *              and all come from one workflow), in the order named; else
 *              every data set holding rows of the region whose workflow is
 *              `workflow`, else the workflow of the newest data set holding
 *              rows of the region, in manifest order (oldest first).
 *
 * The newest data set holding rows of a region (of a workflow) is
 * hml__data_pick_newest(): hml deploy and hml evaluate check a model's
 * shapes against it (lib/store/checked.h).
 *
 * hml-train(1) ("DATA") documents the rule for users.
 */
#ifndef HML_LIB_DATAPICK_H
#define HML_LIB_DATAPICK_H

#include <stddef.h>

#include "store/records.h"
#include "store/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a command asks for; NULL / 0 fields: the default of the rule. */
typedef struct hml__data_query {
	const char *region;        /**< the region's label, or NULL: the only one with rows */
	const char *workflow;      /**< a workflow name, or NULL: the newest data set's */
	const char *const *ids;    /**< data-set ids named by the user, or NULL */
	size_t nids;
	const char *purpose;       /**< completes "no collected rows to ...": "train on" */
} hml__data_query;

/** The answer. Strings are borrowed from the query or the store's manifest
 *  (valid until hml__store_free()); the ids array is yours:
 *  hml__data_choice_release(). */
typedef struct hml__data_choice {
	const char *region;
	const char *workflow;      /**< the data sets' workflow name ("" when they record none) */
	const char **ids;          /**< n >= 1 data-set ids */
	size_t n;
} hml__data_choice;

/**
 * Choose the region and data sets of `q` in the manifest of `s`. On
 * failure *out is empty (release it all the same) and the error says why:
 * HML_ENOTFOUND "no data set 'd9' in experiment 'DIR'";
 * HML_EINVALID "experiment 'DIR' has no collected rows to train on (run
 * 'hml collect')", "the data sets hold several regions (a, b): choose one
 * with --region", "data set 'd2' has no rows of region 'R'", "data sets
 * 'd1' and 'd2' come from different workflows", "region 'R' has no
 * collected rows in experiment 'DIR'"; HML_ENOTFOUND "no data set of
 * workflow 'W' in experiment 'DIR' has rows of region 'R'", "no data set
 * of experiment 'DIR' holds region 'R' (collect it first: hml collect)";
 * HML_ENOMEM.
 */
int hml__data_pick(hml__data_choice *out, const hml__store *s, const hml__data_query *q);

/**
 * The newest data set (the last in manifest order) holding rows of region
 * `region` whose workflow is `workflow` (NULL: any workflow): 1 and *out
 * filled (borrowing from the store), or 0 when there is none.
 */
int hml__data_pick_newest(hml__dataset_view *out, const hml__store *s, const char *workflow,
                          const char *region);

/** Free the ids array (NULL-safe, idempotent). */
void hml__data_choice_release(hml__data_choice *c);

#ifdef __cplusplus
}
#endif
#endif
