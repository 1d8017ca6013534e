/*
 * lib/search/duration.h - wall-clock durations as hml search reads and
 * writes them (internal): --time-limit's argument, the progress line's
 * elapsed and remaining times.
 */
#ifndef HML_LIB_DURATION_H
#define HML_LIB_DURATION_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The longest duration hml__search_duration_parse() takes: a year. */
#define HML__SEARCH_DURATION_MAX (366.0 * 86400.0)

/**
 * Parse a duration: a positive decimal number of seconds, or one followed
 * by s, m or h ("90", "90s", "45m", "2h", "1.5h"; no sign, exponent or
 * blanks). Seconds into *seconds. Errors: HML_EINVALID "'5x' is not a
 * duration (a number of seconds, or with s, m or h: 90, 90s, 45m, 1.5h)",
 * "... must be positive" (0), "... is longer than a year" (also what
 * overflows).
 */
int hml__search_duration_parse(double *seconds, const char *text);

/**
 * Format seconds for a person, always terminated: "0.5s", "45s", "2m10s",
 * "45m", "1h05m", "2h" (rounded to whole seconds from a minute on, to
 * whole minutes from an hour on); "?" for a negative or non-finite value.
 */
void hml__search_duration_format(char *buf, size_t size, double seconds);

#ifdef __cplusplus
}
#endif
#endif
