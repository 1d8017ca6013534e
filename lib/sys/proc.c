/*
 * lib/sys/proc.c - running an application as a child process.
 *
 * fork + execve, never a shell. Everything the child needs (its
 * environment, its output files) is prepared before fork(), so that the
 * child only calls async-signal-safe functions until execve(). The child
 * first sends the CLOCK_MONOTONIC time just before its execve() through a
 * close-on-exec pipe, then, if the exec fails, its errno: the parent reads
 * the time, then either EOF (exec succeeded) or the errno. The wall time
 * runs from that moment to the reaping, so it leaves out fork(), whose
 * cost grows with the parent (a CLI with libtorch mapped: ~5 ms here) and
 * is no part of the application's run.
 *
 * The child leads its own process group (setpgid in both processes, so
 * that the group exists whichever runs first) and the wait watches a
 * pidfd with a timeout, so that the time limit and the grace period after
 * a SIGTERM are kept without a timer signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/util.h"
#include "sys/interrupt.h"
#include "sys/proc.h"

extern char **environ;

/* Length of the name in "KEY=VALUE" or "KEY". */
static size_t key_len(const char *entry)
{
	const char *eq = strchr(entry, '=');

	return eq ? (size_t)(eq - entry) : strlen(entry);
}

/* Does a later entry of `env` (from index `from`) name the same key? */
static int overridden(const char *entry, const char *const *env, size_t from)
{
	size_t n = key_len(entry);

	for (const char *const *e = env ? env + from : NULL; e && *e; e++)
		if (key_len(*e) == n && strncmp(*e, entry, n) == 0)
			return 1;
	return 0;
}

/*
 * The child's environment: ours without the keys `env` mentions, then
 * env's "KEY=VALUE" entries (the last one of a key wins; "KEY" removes).
 * The strings are borrowed; only the array is allocated.
 */
static char **compose_env(const char *const *env)
{
	size_t n = 0, k = 0, i;
	char **out;

	for (char **e = environ; e && *e; e++)
		n++;
	for (const char *const *e = env; e && *e; e++)
		n++;
	if (!(out = malloc((n + 1) * sizeof(*out)))) {
		hml__error_oom();
		return NULL;
	}
	for (char **e = environ; e && *e; e++)
		if (!overridden(*e, env, 0))
			out[k++] = *e;
	for (i = 0; env && env[i]; i++)
		if (strchr(env[i], '=') && !overridden(env[i], env, i + 1))
			out[k++] = (char *)env[i];
	out[k] = NULL;
	return out;
}

static int open_output(const char *path, int *fd)
{
	char *end;
	long n;

	/* "/dev/fd/N": the caller's descriptor N (a pipe), used as it is. */
	if (strncmp(path, "/dev/fd/", 8) == 0 && path[8] >= '0' && path[8] <= '9' &&
	    (n = strtol(path + 8, &end, 10)) >= 0 && n < INT_MAX && !*end &&
	    fcntl((int)n, F_GETFD) >= 0) {
		if ((*fd = fcntl((int)n, F_DUPFD_CLOEXEC, 3)) < 0)
			return hml__error_set(HML_EIO, "cannot write '%s': %s", path, strerror(errno));
		return 0;
	}
	/* Run logs are hml's own files: never written through a link. */
	*fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (*fd < 0 && errno == ELOOP)
		return hml__error_set(HML_EINVALID, "'%s' is a symbolic link; hml does not write "
		                      "through links", path);
	if (*fd < 0)
		return hml__error_set(HML_EIO, "cannot write '%s': %s", path, strerror(errno));
	return 0;
}

/* In the child: make `fd` the descriptor `target`, open across exec. */
static int redirect(int fd, int target)
{
	if (fd < 0)
		return 0;
	if (fd == target) {
		int flags = fcntl(fd, F_GETFD);
		return flags < 0 ? -1 : fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC);
	}
	return dup2(fd, target) < 0 ? -1 : 0;
}

static void child(const char *const *argv, char **envp, int in_fd, int out_fd, int err_fd,
                  int report_fd, pid_t parent)
{
	static const int caught[] = { SIGINT, SIGTERM, SIGHUP };
	struct timespec ts;
	struct sigaction sa;
	sigset_t none;
	size_t i;
	int e;

	/* The parent's handlers must not run here: reset them before the
	 * signals blocked around fork() are let through. exec would do the
	 * same later. Ignored signals stay ignored across exec, so SIGPIPE,
	 * which the CLI ignores for itself, is reset too. */
	for (i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
		if (sigaction(caught[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
			signal(caught[i], SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	setpgid(0, 0);
	/* hml killed (-9) takes the application with it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);   /* the parent died before the line above */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	clock_gettime(CLOCK_MONOTONIC, &ts);   /* the run starts here */
	while (write(report_fd, &ts, sizeof(ts)) < 0 && errno == EINTR)
		;
	if (redirect(in_fd, STDIN_FILENO) == 0 && redirect(out_fd, STDOUT_FILENO) == 0 &&
	    redirect(err_fd, STDERR_FILENO) == 0)
		execve(argv[0], (char *const *)argv, envp);
	e = errno;
	while (write(report_fd, &e, sizeof(e)) < 0 && errno == EINTR)
		;
	_exit(127);
}

#ifdef SYS_pidfd_open
static int pidfd_for(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}
#else
static int pidfd_for(pid_t pid)
{
	(void)pid;
	return -1;
}
#endif

/* Until the leader `pid` has exited (not reaped): SIGTERM to its group at
 * `limit_at` (0: never), SIGKILL HML__PROC_GRACE_S after that or after an
 * interrupt was forwarded. Without a pidfd (a kernel before 5.3) it polls
 * every 2 ms, which then bounds the wall time's error. */
static void wait_exit(pid_t pid, double limit_at, hml__proc_result *res)
{
	int pfd = pidfd_for(pid), killed = 0;
	double kill_at = 0.0;

	for (;;) {
		siginfo_t info;
		double now, next;

		memset(&info, 0, sizeof(info));
		if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT | WNOHANG) == 0) {
			if (info.si_pid == pid)
				break;
		} else if (errno != EINTR) {
			break;
		}
		now = hml__now();
		if (kill_at == 0.0 && hml__interrupt_pending())
			kill_at = now + HML__PROC_GRACE_S;
		if (limit_at > 0.0 && !res->timed_out && now >= limit_at) {
			res->timed_out = 1;
			kill(-pid, SIGTERM);
			kill(-pid, SIGCONT);   /* a stopped group would not see it */
			if (kill_at == 0.0 || kill_at > now + HML__PROC_GRACE_S)
				kill_at = now + HML__PROC_GRACE_S;
		}
		if (kill_at > 0.0 && now >= kill_at && !killed) {
			kill(-pid, SIGKILL);
			killed = 1;
		}
		/* Wake at the next deadline, and every 100 ms to see an interrupt
		 * whose handler ran on another thread. */
		next = now + 0.1;
		if (limit_at > 0.0 && !res->timed_out && limit_at < next)
			next = limit_at;
		if (kill_at > 0.0 && !killed && kill_at < next)
			next = kill_at;
		if (pfd >= 0) {
			struct pollfd p = { pfd, POLLIN, 0 };
			poll(&p, 1, (int)((next - now) * 1000.0) + 1);
		} else {
			struct timespec ts = { 0, 2000000 };
			nanosleep(&ts, NULL);
		}
	}
	if (pfd >= 0)
		close(pfd);
}

/* Wait for `pid` without reaping it first, so that the pid (and the
 * group's id) cannot be reused while a signal handler may still signal
 * the group. An interrupted or timed-out run's group is killed while the
 * leader is still a zombie: nothing it started outlives it. */
static int wait_child(pid_t pid, double limit_at, hml__proc_result *res, int *status)
{
	wait_exit(pid, limit_at, res);
	hml__interrupt_child(0);
	if (res->timed_out || hml__interrupt_pending())
		kill(-pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0) {
		if (errno != EINTR)
			return hml__error_set(HML_EIO, "cannot wait for process %ld: %s",
			                      (long)pid, strerror(errno));
	}
	return 0;
}

/*
 * A SIGCHLD that is ignored (or SA_NOCLDWAIT) makes the kernel reap
 * children by itself, so waitpid() fails with ECHILD; and the ignored
 * disposition would reach the application through exec. Both happen when
 * hml is started by a parent that ignores SIGCHLD: the default is put
 * back for the run and restored afterwards.
 */
static int chld_default(struct sigaction *saved)
{
	struct sigaction dfl;

	if (sigaction(SIGCHLD, NULL, saved) != 0 ||
	    (saved->sa_handler != SIG_IGN && !(saved->sa_flags & SA_NOCLDWAIT)))
		return 0;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	return sigaction(SIGCHLD, &dfl, NULL) == 0;
}

int hml__proc_run(const char *const *argv, const char *const *env,
                  const char *stdout_path, const char *stderr_path,
                  hml__proc_result *res)
{
	char **envp;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!(envp = compose_env(env)))
		return HML_ENOMEM;
	rc = hml__proc_run_env(argv, (const char *const *)envp, stdout_path, stderr_path, 0.0,
	                       res);
	free(envp);
	return rc;
}

int hml__proc_run_env(const char *const *argv, const char *const *envp,
                      const char *stdout_path, const char *stderr_path, double limit_s,
                      hml__proc_result *res)
{
	int in_fd = -1, out_fd = -1, err_fd = -1, report[2] = { -1, -1 };
	int rc = 0, status = 0, child_errno = 0, chld_changed = 0;
	struct sigaction chld_saved;
	sigset_t block, old;
	struct timespec started;
	double t0;
	ssize_t got;
	pid_t pid, self;

	memset(res, 0, sizeof(*res));
	if (!argv || !argv[0] || !*argv[0])
		return hml__error_set(HML_EINVALID, "no program to run");
	if (!envp)
		return hml__error_set(HML_EINVALID, "no environment for '%s'", argv[0]);
	if (stdout_path && (rc = open_output(stdout_path, &out_fd)) < 0)
		goto done;
	if (stderr_path) {
		/* One file for both streams: one descriptor, one offset. */
		if (stdout_path && strcmp(stdout_path, stderr_path) == 0)
			err_fd = out_fd;
		else if ((rc = open_output(stderr_path, &err_fd)) < 0)
			goto done;
	}
	/* A terminal belongs to hml's process group, not the child's: a read
	 * from it would stop the child (SIGTTIN) for good. So a terminal's
	 * place is taken by /dev/null; a file or pipe is passed on (hml(1)). */
	if (isatty(STDIN_FILENO) &&
	    (in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		rc = hml__error_set(HML_EIO, "cannot open '/dev/null': %s", strerror(errno));
		goto done;
	}
	chld_changed = chld_default(&chld_saved);
	if (pipe(report) < 0 || fcntl(report[0], F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(report[1], F_SETFD, FD_CLOEXEC) < 0) {
		rc = hml__error_set(HML_EIO, "cannot run '%s': %s", argv[0], strerror(errno));
		goto done;
	}
	/* SIGINT/SIGTERM/SIGHUP wait until the child's group exists, so that
	 * the handler can forward them; the child resets the handlers before
	 * it lets them through. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	if ((res->interrupted = hml__interrupt_consume()) != 0) {
		/* Interrupted while no child ran (between two runs): this run
		 * is the one that reports it, without starting. */
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		goto done;
	}
	t0 = hml__now();
	self = getpid();
	pid = fork();
	if (pid == 0)
		child(argv, (char **)envp, in_fd, out_fd, err_fd, report[1], self);
	if (pid > 0) {
		int sig;

		setpgid(pid, pid);
		/* Published, then checked: interrupt.h says why. */
		hml__interrupt_child(pid);
		if ((sig = hml__interrupt_pending()) != 0)
			kill(-pid, sig);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		rc = hml__error_set(HML_EIO, "cannot run '%s': %s", argv[0], strerror(errno));
		goto done;
	}
	close(report[1]);
	report[1] = -1;
	do
		got = read(report[0], &started, sizeof(started));
	while (got < 0 && errno == EINTR);
	if (got == (ssize_t)sizeof(started))
		t0 = (double)started.tv_sec + 1e-9 * (double)started.tv_nsec;
	do
		got = read(report[0], &child_errno, sizeof(child_errno));
	while (got < 0 && errno == EINTR);
	if ((rc = wait_child(pid, limit_s > 0.0 ? t0 + limit_s : 0.0, res, &status)) < 0)
		goto done;
	res->wall_s = hml__now() - t0;
	if (got == (ssize_t)sizeof(child_errno)) {
		rc = hml__error_set(child_errno == ENOENT || child_errno == ENOTDIR
		                    ? HML_ENOTFOUND : HML_EIO,
		                    "cannot run '%s': %s", argv[0], strerror(child_errno));
		goto done;
	}
	/* Consumed: an interrupt that comes later is the next run's. */
	res->interrupted = hml__interrupt_consume();
	if (WIFEXITED(status)) {
		res->exited = 1;
		res->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		res->signal = WTERMSIG(status);
	}
done:
	if (chld_changed)
		sigaction(SIGCHLD, &chld_saved, NULL);
	if (in_fd >= 0)
		close(in_fd);
	if (out_fd >= 0)
		close(out_fd);
	if (err_fd >= 0 && err_fd != out_fd)
		close(err_fd);
	if (report[0] >= 0)
		close(report[0]);
	if (report[1] >= 0)
		close(report[1]);
	return rc;
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGHUP: return "SIGHUP";
	case SIGINT: return "SIGINT";
	case SIGQUIT: return "SIGQUIT";
	case SIGILL: return "SIGILL";
	case SIGTRAP: return "SIGTRAP";
	case SIGABRT: return "SIGABRT";
	case SIGBUS: return "SIGBUS";
	case SIGFPE: return "SIGFPE";
	case SIGKILL: return "SIGKILL";
	case SIGUSR1: return "SIGUSR1";
	case SIGSEGV: return "SIGSEGV";
	case SIGUSR2: return "SIGUSR2";
	case SIGPIPE: return "SIGPIPE";
	case SIGALRM: return "SIGALRM";
	case SIGTERM: return "SIGTERM";
	case SIGXCPU: return "SIGXCPU";
	case SIGXFSZ: return "SIGXFSZ";
	case SIGSYS: return "SIGSYS";
	default: return NULL;
	}
}

const char *hml__proc_describe(const hml__proc_result *res)
{
	static _Thread_local char buf[64];
	const char *name;

	if (res->interrupted)
		return "interrupted";
	if (res->timed_out)
		return "timed out";
	if (res->exited)
		snprintf(buf, sizeof(buf), "exit %d", res->exit_code);
	else if ((name = signal_name(res->signal)) != NULL)
		snprintf(buf, sizeof(buf), "killed by %s", name);
	else
		snprintf(buf, sizeof(buf), "killed by signal %d", res->signal);
	return buf;
}
