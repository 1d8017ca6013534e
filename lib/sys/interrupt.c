/*
 * lib/sys/interrupt.c - the interrupt flag and the child it is forwarded
 * to (see interrupt.h).
 *
 * Both are shared with hml__interrupt() in a signal handler or another
 * thread. Lock-free atomics are async-signal-safe, and their sequential
 * consistency closes the window between fork() and the publication of the
 * child's pid: the interrupter sets the flag and then reads the pid, the
 * runner publishes the pid and then reads the flag, so at least one of
 * the two sends the SIGINT.
 */
#include <signal.h>
#include <stdatomic.h>

#include "sys/interrupt.h"

static atomic_int interrupt_child;
static atomic_int interrupt_pending;

void hml__interrupt(void)
{
	pid_t pid;

	atomic_store(&interrupt_pending, 1);
	pid = (pid_t)atomic_load(&interrupt_child);
	if (pid > 0)
		kill(pid, SIGINT);
}

int hml__interrupt_pending(void)
{
	return atomic_load(&interrupt_pending);
}

int hml__interrupt_consume(void)
{
	return atomic_exchange(&interrupt_pending, 0);
}

void hml__interrupt_child(pid_t pid)
{
	atomic_store(&interrupt_child, (int)pid);
}
