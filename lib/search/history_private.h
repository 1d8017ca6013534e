/*
 * lib/search/history_private.h - what the files of the trial history
 * share (private to lib/search/history*.c; the interface is history.h):
 *
 *   history.c         the history file: appended to, its lines made
 *                     durable by a background thread, read back
 *   history_line.c    one line: an event as JSON, and a line read back
 *                     into an event and checked, side by side
 *   history_record.c  the "searches" record and the search lock
 *
 * history.c calls history_line.c; neither calls history_record.c.
 */
#ifndef HML_LIB_HISTORY_PRIVATE_H
#define HML_LIB_HISTORY_PRIVATE_H

#include <stddef.h>

#include <jansson.h>

#include "search/history.h"

/** Event ev as a history line's object (new), or NULL when out of memory. */
json_t *hml__hist_event_json(const hml__hist_event *ev);

/** Fill *ev from line object o; *u receives the point (malloc'ed, the
 * caller's to free). NULL, or why the line is not an event (in `why`,
 * `size` bytes, or static). */
const char *hml__hist_event_of(hml__hist_event *ev, const json_t *o, double **u, char *why,
                               size_t size);

#endif
