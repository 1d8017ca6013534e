/*
 * lib/sys/reaper.h - delete files in the background (internal).
 *
 * hml search's coordinator deletes the model files of trials the front
 * dominates. unlink(2) of a large file waits for the file system (its
 * journal, freeing its blocks): ~0.3 ms here, as much as the rest of the
 * coordinator's work per trial. A reaper takes that wait off the
 * coordinating thread: hml__reaper_add queues a path and returns; one
 * thread, started on the first add, unlinks the queue in order.
 *
 * Crash safety: a path still queued when the process dies is simply not
 * deleted. Callers must only queue files whose survival is harmless (a
 * dominated model file: hml search --resume prunes again).
 *
 * Not thread-safe for callers: one thread adds, the reaper's own thread
 * deletes.
 */
#ifndef HML_LIB_REAPER_H
#define HML_LIB_REAPER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hml__reaper hml__reaper;

/* A new reaper (*out; no thread yet). 0, or HML_ENOMEM. */
int hml__reaper_open(hml__reaper **out);

/* Queue `path` (copied) for deletion. If the path cannot be queued (no
 * memory, no thread) it is deleted now instead. A path that does not
 * exist is not an error. */
void hml__reaper_add(hml__reaper *r, const char *path);

/* Delete what is still queued, stop the thread, free r (NULL: nothing).
 * Returns how many unlinks failed for a reason other than ENOENT
 * (the files stay; the caller may report it). */
size_t hml__reaper_close(hml__reaper *r);

#ifdef __cplusplus
}
#endif

#endif
