/*
 * lib/core/error.h - recording errors (internal).
 *
 * hml__error_set() records the code and a formatted one-line message for the
 * calling thread and returns the code, so a failure is reported where it is
 * detected:  return hml__error_set(HML_EINVALID, "unknown mode '%s'", s);
 * Callers that receive a negative code propagate it unchanged and do not
 * call hml__error_set() again, so the first, most precise message survives.
 */
#ifndef HML_LIB_ERROR_H
#define HML_LIB_ERROR_H

#include "hml/error.h"

#if defined(__GNUC__)
#  define HML__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#  define HML__PRINTF(a, b)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Messages longer than hml_error_last() holds (511 characters) lose their
 * middle, not their end: "cannot open 'first 160 characters...last
 * characters': no such file", so a long path never hides the reason. */
int hml__error_set(int code, const char *fmt, ...) HML__PRINTF(2, 3);

/** Record HML_ENOMEM with a fixed message (never allocates). */
int hml__error_oom(void);

/** Save and restore the current error around clean-up that may clobber it. */
typedef struct { int code; char message[512]; } hml__error_saved;
void hml__error_save(hml__error_saved *s);
void hml__error_restore(const hml__error_saved *s);

#ifdef __cplusplus
}
#endif
#endif
