/*
 * lib/sys/interrupt.h - the process's interrupt flag (internal, CLI side).
 *
 * The CLI's SIGINT/SIGTERM handler raises it (hml__interrupt()); work that
 * takes long polls it to stop promptly (hashing a file, waiting for the
 * experiment's lock, reading a data set: hml__interrupt_pending()); and a
 * run of a child process (lib/sys/proc.h) forwards it to the child and
 * consumes it. Its own module, below the process runner, so that what only
 * polls the flag does not depend on running processes.
 */
#ifndef HML_LIB_INTERRUPT_H
#define HML_LIB_INTERRUPT_H

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Async-signal-safe and thread-safe: mark an interrupt pending and forward
 * SIGINT to the running child, if any (hml__interrupt_child()). With no
 * child running, the interrupt stays pending until it is consumed: the
 * next hml__proc_run() reports it without starting its program.
 */
void hml__interrupt(void);

/**
 * Nonzero while an interrupt is pending (hml__interrupt() was called and
 * nothing has consumed it). Polling does not consume it.
 */
int hml__interrupt_pending(void);

/**
 * Consume the pending interrupt: nonzero when one was pending, which then
 * no longer is; an interrupt that comes later is the next one's.
 * Async-signal-safe.
 */
int hml__interrupt_consume(void);

/**
 * The child that hml__interrupt() forwards SIGINT to: `pid` while it runs,
 * 0 once it has exited (before it is reaped, so that its pid cannot be
 * reused meanwhile). Publish the pid, then check hml__interrupt_pending()
 * and send the SIGINT yourself if it is: hml__interrupt() sets the flag,
 * then reads the pid, so one of the two sends it whatever the order (both
 * sequentially consistent).
 */
void hml__interrupt_child(pid_t pid);

#ifdef __cplusplus
}
#endif
#endif
