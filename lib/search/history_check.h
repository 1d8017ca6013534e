/*
 * lib/search/history_check.h - a search's trial history checked against the
 * search and the experiment before it is replayed (internal).
 *
 * The history (lib/search/history.h) lies in an experiment that may have
 * been copied, unpacked or downloaded: hml search --resume re-runs the
 * trials it says were running, with the parameters it records, and puts
 * the models it says were kept on the search's front. So before a line is
 * replayed it is checked against what the search is (its space and rungs)
 * and what the manifest records (its models), and the history as a whole
 * against the search's record: a history that is missing, emptied or
 * shorter than the record says is refused, never taken for a new search.
 * The reader (hml__history_read) has already refused lines that are not
 * events; these checks need the search.
 */
#ifndef HML_LIB_HISTORY_CHECK_H
#define HML_LIB_HISTORY_CHECK_H

#include <stddef.h>

#include "search/history.h"
#include "search/opt/space.h"
#include "store/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a history is checked against (all borrowed). */
typedef struct hml__history_check {
	const char *search;          /**< the search's id ("s1") */
	const hml__space *space;     /**< the space it searches */
	unsigned rungs;              /**< its rungs (plan.h) */
	const hml__store *store;     /**< the experiment (NULL: kept models unchecked) */
} hml__history_check;

/**
 * Check one event (as hml__history_read hands it) against the search:
 *  - its rung is one of the search's rungs;
 *  - a "running" line's "params", when present, is a sample of the space
 *    (every active parameter in range or one of its values, no other key:
 *    hml__space_encode), its "u" has the space's dimension, and the two
 *    agree (u decodes to params); a configuration's first trial (rung 0)
 *    must have both;
 *  - a "kept" line's model is the one the manifest records as trial
 *    `trial` of this search (the model record's search.id and
 *    search.trial).
 * Errors: HML_EINVALID, one line without the file (hml__history_read adds
 * it and the line): "trial 4: rung 5 is not one of the search's 3 rungs",
 * "trial 4: its point is not in the search space: sample: key 'layers':
 * 32 is out of range [1, 4]", "trial 4: kept model 'm1' is not a model of
 * search s1", "... is not in the experiment", "... is a model of trial 2
 * of search s1".
 */
int hml__history_check_event(const hml__history_check *cx, const hml__hist_event *ev);

/**
 * Check that the history at `path`, read as holding `ntrials` trials (one
 * more than the largest trial it starts), is the search's whole history:
 * it exists, and it starts every trial the search's record counts
 * (counts.trials), lists on its front and every trial whose model the
 * manifest records as this search's. Errors: HML_EINVALID "trial history
 * 'P' is missing: search s1 cannot be resumed without it (start a new
 * search)", "trial history 'P' holds 3 trials, but the record of search
 * s1 counts 12: the history was cut short or emptied; start a new search".
 */
int hml__history_check_complete(const hml__history_check *cx, const char *path,
                                 size_t ntrials);

#ifdef __cplusplus
}
#endif
#endif
