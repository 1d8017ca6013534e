/*
 * lib/store/lock.h - the lock that serialises the processes that change an
 * experiment (internal; taken by lib/store/store.c around every write of
 * the manifest).
 *
 * DIR/.lock, flock()ed exclusively; while held it holds "PID COMMAND" of
 * its holder, so that a process that waits too long can say who holds it.
 * The kernel releases a flock() when its holder dies: a process killed
 * while holding the lock leaves no lock behind.
 */
#ifndef HML_LIB_LOCK_H
#define HML_LIB_LOCK_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Take the lock file `path` (created when missing) of experiment `dir`,
 * polling every 50 ms for up to HML_LOCK_TIMEOUT seconds (default 60),
 * then write our pid and `command` ("hml train") into it for whoever waits
 * next. *out receives the held descriptor, for hml__lock_release(); -1
 * on failure. Errors: HML_EINVALID "invalid HML_LOCK_TIMEOUT ..."; HML_EIO
 * "cannot lock experiment 'DIR': <strerror>"; HML_ERROR "interrupted while
 * waiting for the lock of experiment 'DIR'" when an interrupt is pending
 * (sys/interrupt.h); HML_ELOCKED "experiment 'DIR' is locked by another
 * hml process (pid N, 'hml train'); waited 60 s".
 */
int hml__lock_take(int *out, const char *path, const char *dir, const char *command);

/** Release the lock taken as `fd`: empty the file and close it. -1: nothing. */
void hml__lock_release(int fd);

#ifdef __cplusplus
}
#endif
#endif
