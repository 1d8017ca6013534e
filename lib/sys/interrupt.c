/*
 * lib/sys/interrupt.c - the interrupt flag and the child it is forwarded
 * to (see interrupt.h).
 *
 * Both are shared with hml__interrupt() in a signal handler or another
 * thread. Lock-free atomics are async-signal-safe, and their sequential
 * consistency closes the window between fork() and the publication of the
 * child's pid: the interrupter sets the flag and then reads the pid, the
 * runner publishes the pid and then reads the flag, so at least one of
 * the two forwards the signal.
 */
#include <signal.h>
#include <stdatomic.h>

#include "sys/interrupt.h"

static atomic_int interrupt_child;
static atomic_int interrupt_pending;   /* the pending interrupt's signal */
static atomic_int interrupt_first;     /* the process's first one's */

void hml__interrupt(int sig)
{
	int none = 0;
	pid_t pid;

	if (sig <= 0)
		sig = SIGINT;
	atomic_compare_exchange_strong(&interrupt_first, &none, sig);
	atomic_store(&interrupt_pending, sig);
	pid = (pid_t)atomic_load(&interrupt_child);
	if (pid > 0)
		kill(-pid, sig);
}

int hml__interrupt_pending(void)
{
	return atomic_load(&interrupt_pending);
}

int hml__interrupt_consume(void)
{
	return atomic_exchange(&interrupt_pending, 0);
}

int hml__interrupt_signal(void)
{
	return atomic_load(&interrupt_first);
}

void hml__interrupt_child(pid_t pid)
{
	atomic_store(&interrupt_child, (int)pid);
}
