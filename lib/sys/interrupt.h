/*
 * lib/sys/interrupt.h - the process's interrupt flag (internal, CLI side).
 *
 * The CLI's SIGINT/SIGTERM/SIGHUP handler raises it (hml__interrupt());
 * work that takes long polls it to stop promptly (hashing a file, waiting
 * for the experiment's lock, reading a data set: hml__interrupt_pending());
 * and a run of a child process (lib/sys/proc.h) forwards the signal to the
 * child's process group and consumes it. Its own module, below the process
 * runner, so that what only polls the flag does not depend on running
 * processes.
 */
#ifndef HML_LIB_INTERRUPT_H
#define HML_LIB_INTERRUPT_H

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Async-signal-safe and thread-safe: mark an interrupt by signal `sig`
 * (SIGINT, SIGTERM or SIGHUP; 0 or less: SIGINT) pending and forward `sig`
 * itself to the process group of the running child, if any
 * (hml__interrupt_child()). With no child running, the interrupt stays
 * pending until it is consumed: the next hml__proc_run() reports it
 * without starting its program.
 */
void hml__interrupt(int sig);

/**
 * The pending interrupt's signal (nonzero) while one is pending
 * (hml__interrupt() was called and nothing has consumed it). Polling does
 * not consume it.
 */
int hml__interrupt_pending(void);

/**
 * Consume the pending interrupt: its signal when one was pending, which
 * then no longer is; an interrupt that comes later is the next one's.
 * Async-signal-safe.
 */
int hml__interrupt_consume(void);

/**
 * The signal of the process's first interrupt (0: none yet), consumed or
 * not: what the CLI's exit status reports (128 + the signal, hml(1)).
 */
int hml__interrupt_signal(void);

/**
 * The child whose process group hml__interrupt() forwards the signal to:
 * `pid` (a group leader, lib/sys/proc.c) while it runs, 0 once it has
 * exited (before it is reaped, so that neither its pid nor its group's id
 * can be reused meanwhile). Publish the pid, then check
 * hml__interrupt_pending() and forward the signal yourself if it is:
 * hml__interrupt() sets the flag, then reads the pid, so one of the two
 * forwards it whatever the order (both sequentially consistent).
 */
void hml__interrupt_child(pid_t pid);

#ifdef __cplusplus
}
#endif
#endif
