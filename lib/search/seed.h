/*
 * lib/search/seed.h - a search seeded with the front of another (hml
 * search --from SID): the configurations on SID's Pareto front are the
 * new search's first trials, ahead of its own initial design
 * (lib/search/opt/bo.h "first"), so that what an earlier search found is
 * judged again at once, on the data the new search trains on (old plus
 * new rows after a collection), and the optimiser builds on it (internal).
 *
 * The seeds are recorded in the new search's record, "from": {"search":
 * "s1", "configs": [{sample}, ...]} (hml-manifest(5)), so that a resumed
 * search replays the very same design without reading s1 again.
 */
#ifndef HML_LIB_SEARCH_SEED_H
#define HML_LIB_SEARCH_SEED_H

#include <stddef.h>

#include <jansson.h>

#include "search/opt/space.h"
#include "store/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The samples (parameter objects, as the trial history records them) of
 * the configurations on search `from`'s front, in front order, as a new
 * array in *out. `region`, when not NULL, must be that search's region.
 * Errors: HML_ENOTFOUND "no search 's9' in experiment 'DIR'";
 * HML_EINVALID "search 's1' is of region 'a', not 'b'", "search 's1' has
 * nothing on its front (status S)", "search 's1': front configuration C
 * is not in its trial history"; those of hml__history_read().
 */
int hml__seed_front(json_t **out, const hml__store *s, const char *from, const char *region);

/**
 * Encode the samples of `seeds` into points of `space`, n x dim in u
 * (room for max points): those the space cannot express (a parameter it
 * does not search, a value outside its range) are left out, counted in
 * *skipped. Returns the points written.
 */
size_t hml__seed_points(double *u, size_t max, const hml__space *space, const json_t *seeds,
                        size_t *skipped);

#ifdef __cplusplus
}
#endif
#endif
