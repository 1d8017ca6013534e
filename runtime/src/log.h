/*
 * runtime/src/log.h - the runtime's one output channel: warnings and the
 * profile table go to the application's log handler (hml_set_log_handler(),
 * hml/region.h), by default to stderr (internal).
 *
 * Its own file, below everything else in the runtime, so that the regions
 * and the profile registry both write through it without either one
 * calling the other.
 */
#ifndef HML_RUNTIME_LOG_H
#define HML_RUNTIME_LOG_H

#include "hml/region.h"

/** Send a formatted line (at most 1023 bytes; longer is cut) to the log
 * handler. Thread-safe; the handler is called outside any lock. */
void hml__log(hml_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

#endif
