/*
 * lib/search/workers.c - persistent worker processes of hml search (see workers.h).
 */
#define _GNU_SOURCE 1   /* pipe2, sigabbrev_np */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/beneath.h"
#include "core/error.h"
#include "search/workers.h"

/* In the child between fork and exec: async-signal-safe calls only. */
static void child(int in, int out, int log_fd, pid_t parent, const char *const *argv)
{
	sigset_t none;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)   /* the parent died before prctl */
		_exit(127);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || (log_fd >= 0 && dup2(log_fd, 2) < 0))
		_exit(127);
	execv(argv[0], (char *const *)argv);
	_exit(127);
}

int hml__worker_spawn(hml__worker *w, int index, const char *const *argv,
                      const char *log_path)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, log_fd = -1, err, rc = HML_EIO;
	pid_t parent = getpid(), pid;
	sigset_t all, old;

	memset(w, 0, sizeof(*w));
	w->index = index;
	w->to = -1;
	w->trial = -1;
	hml__wire_reader_init(&w->from, -1);
	/* The log, in the search's directory: not through a link (core/beneath.h). */
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
	    (log_path && (rc = log_fd = hml__beneath_open(NULL, log_path,
	                                                  O_WRONLY | O_CREAT | O_APPEND, 0666)) < 0))
		goto fail;
	/* No handler of ours may run in the child before exec. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	pid = fork();
	if (pid == 0)
		child(in[0], out[1], log_fd, parent, argv);
	err = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = err;
	if (pid < 0)
		goto fail;
	close(in[0]);
	close(out[1]);
	if (log_fd >= 0)
		close(log_fd);
	w->pid = pid;
	w->to = in[1];
	hml__wire_reader_init(&w->from, out[0]);
	return 0;
fail:
	err = errno;
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	if (log_fd >= 0)
		close(log_fd);
	if (rc < 0 && rc != HML_EIO)
		return rc;
	return hml__error_set(HML_EIO, "cannot start worker: %s", strerror(err));
}

void hml__worker_remote(hml__worker *w, int index, int rank, int to, int from)
{
	memset(w, 0, sizeof(*w));
	w->index = index;
	w->pid = rank;
	w->remote = 1;
	w->to = to;
	w->trial = -1;
	hml__wire_reader_init(&w->from, from);
}

void hml__worker_stop(hml__worker *w, int kill_it, char *why, size_t size)
{
	int status = 0;
	pid_t got;

	if (why && size)
		why[0] = '\0';
	if (w->to >= 0)
		close(w->to);
	w->to = -1;
	if (w->from.fd >= 0)
		close(w->from.fd);
	hml__wire_reader_release(&w->from);
	if (w->remote) {
		if (why && size)
			snprintf(why, size, "(rank %d) ended", (int)w->pid);
		w->pid = 0;
		w->ready = 0;
		w->trial = -1;
		return;
	}
	if (w->pid <= 0)
		return;
	if (kill_it)
		kill(w->pid, SIGKILL);
	do
		got = waitpid(w->pid, &status, 0);
	while (got < 0 && errno == EINTR);
	if (why && size && got == w->pid) {
		if (WIFEXITED(status))
			snprintf(why, size, "exit %d", WEXITSTATUS(status));
		else if (WIFSIGNALED(status))
			snprintf(why, size, "killed by SIG%s", sigabbrev_np(WTERMSIG(status))
			         ? sigabbrev_np(WTERMSIG(status)) : "NAL");
	}
	w->pid = 0;
	w->ready = 0;
	w->trial = -1;
}
