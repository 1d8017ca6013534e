/*
 * tests/unit/proc.c - child processes: exit statuses, signals, the
 * composed environment, output redirection, programs that cannot be run,
 * and interrupt forwarding.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fixtures.h"
#include "core/util.h"
#include "sys/interrupt.h"
#include "sys/proc.h"

/* A file's contents (static buffer, "" when unreadable). */
static const char *file_text(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = '\0';
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

TEST(true_exits_zero)
{
	const char *argv[] = { "/bin/true", NULL };
	hml__proc_result r;

	CHECK_OK(hml__proc_run(argv, NULL, NULL, NULL, &r));
	CHECK_EQ_INT(r.exited, 1);
	CHECK_EQ_INT(r.exit_code, 0);
	CHECK_EQ_INT(r.signal, 0);
	CHECK_EQ_INT(r.interrupted, 0);
	CHECK(r.wall_s >= 0);
	CHECK_STR(hml__proc_describe(&r), "exit 0");
}

TEST(false_exits_one)
{
	const char *argv[] = { "/bin/false", NULL };
	hml__proc_result r;

	CHECK_OK(hml__proc_run(argv, NULL, NULL, NULL, &r));
	CHECK_EQ_INT(r.exited, 1);
	CHECK_EQ_INT(r.exit_code, 1);
	CHECK_STR(hml__proc_describe(&r), "exit 1");
}

TEST(exit_status_passed_through)
{
	const char *argv[] = { "/bin/sh", "-c", "exit 42", NULL };
	hml__proc_result r;

	CHECK_OK(hml__proc_run(argv, NULL, NULL, NULL, &r));
	CHECK_EQ_INT(r.exited, 1);
	CHECK_EQ_INT(r.exit_code, 42);
	CHECK_STR(hml__proc_describe(&r), "exit 42");
}

TEST(killed_by_signal)
{
	const char *argv[] = { "/bin/sh", "-c", "kill -SEGV $$", NULL };
	hml__proc_result r;

	CHECK_OK(hml__proc_run(argv, NULL, NULL, NULL, &r));
	CHECK_EQ_INT(r.exited, 0);
	CHECK_EQ_INT(r.signal, SIGSEGV);
	CHECK_EQ_INT(r.interrupted, 0);
	CHECK_STR(hml__proc_describe(&r), "killed by SIGSEGV");

	{
		const char *abrt[] = { "/bin/sh", "-c", "kill -ABRT $$", NULL };
		CHECK_OK(hml__proc_run(abrt, NULL, NULL, NULL, &r));
		CHECK_STR(hml__proc_describe(&r), "killed by SIGABRT");
	}
	{
		/* A signal without a name in the table. */
		hml__proc_result odd = { 0, 0, 40, 0, 0, 0.0 };
		CHECK_STR(hml__proc_describe(&odd), "killed by signal 40");
	}
}

TEST(argv_passed_verbatim)
{
	/* No shell: quotes, globs and $ reach the program unchanged. */
	const char *out = tmp_path("argv.txt");
	const char *argv[] = { "/usr/bin/printf", "%s|", "a b", "*", "$HOME", "'q'", "", NULL };
	hml__proc_result r;

	CHECK_OK(hml__proc_run(argv, NULL, out, NULL, &r));
	CHECK_EQ_INT(r.exit_code, 0);
	CHECK_STR(file_text(out), "a b|*|$HOME|'q'||");
}

TEST(environment_override_and_removal)
{
	const char *out = tmp_path("env.txt");
	const char *argv[] = { "/usr/bin/env", NULL };
	const char *env[] = { "HML_TEST_NEW=new value", "HML_TEST_KEEP=changed",
	                      "HML_TEST_GONE", "HML_TEST_EMPTY=", "HML_TEST_TWICE=first",
	                      "HML_TEST_TWICE=second", NULL };
	hml__proc_result r;
	const char *text;

	setenv("HML_TEST_KEEP", "original", 1);
	setenv("HML_TEST_GONE", "should not be seen", 1);
	setenv("HML_TEST_OTHER", "inherited", 1);
	CHECK_OK(hml__proc_run(argv, env, out, NULL, &r));
	CHECK_EQ_INT(r.exit_code, 0);
	text = file_text(out);
	CHECK_CONTAINS(text, "HML_TEST_NEW=new value\n");
	CHECK_CONTAINS(text, "HML_TEST_KEEP=changed\n");
	CHECK(!strstr(text, "HML_TEST_KEEP=original"));
	CHECK(!strstr(text, "HML_TEST_GONE"));
	CHECK_CONTAINS(text, "HML_TEST_EMPTY=\n");
	CHECK_CONTAINS(text, "HML_TEST_TWICE=second\n");
	CHECK(!strstr(text, "HML_TEST_TWICE=first"));
	CHECK_CONTAINS(text, "HML_TEST_OTHER=inherited\n");
	/* The parent's own environment is untouched. */
	CHECK_STR(getenv("HML_TEST_KEEP"), "original");
	CHECK_STR(getenv("HML_TEST_GONE"), "should not be seen");
	CHECK(getenv("HML_TEST_NEW") == NULL);
}

TEST(stdout_and_stderr_redirected)
{
	const char *out = tmp_path("out.txt"), *err = tmp_path("err.txt"), *both = tmp_path("both.txt");
	const char *argv[] = { "/bin/sh", "-c", "echo to-out; echo to-err >&2; echo again", NULL };
	hml__proc_result r;
	char text[256];

	/* An existing file is truncated. */
	FILE *f = fopen(out, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("old content that must go away\n", f);
		fclose(f);
	}
	CHECK_OK(hml__proc_run(argv, NULL, out, err, &r));
	CHECK_EQ_INT(r.exit_code, 0);
	CHECK_STR(file_text(out), "to-out\nagain\n");
	CHECK_STR(file_text(err), "to-err\n");

	/* The same path for both: one file with everything, in order. */
	CHECK_OK(hml__proc_run(argv, NULL, both, both, &r));
	snprintf(text, sizeof(text), "%s", file_text(both));
	CHECK_STR(text, "to-out\nto-err\nagain\n");
}

TEST(output_file_unwritable)
{
	const char *argv[] = { "/bin/true", NULL };
	hml__proc_result r;

	CHECK_FAILS(hml__proc_run(argv, NULL, tmp_path("no/such/dir/out.txt"), NULL, &r),
	            HML_EIO, "cannot write '");
	CHECK_CONTAINS(hml_error_last()->message, "No such file or directory");
	CHECK_FAILS(hml__proc_run(argv, NULL, NULL, tmp_path("no/such/dir/err.txt"), &r),
	            HML_EIO, "no/such/dir/err.txt");
}

TEST(missing_program)
{
	const char *argv[] = { "/nonexistent/hml-test-program", "--x", NULL };
	hml__proc_result r;

	CHECK_FAILS(hml__proc_run(argv, NULL, NULL, NULL, &r), HML_ENOTFOUND,
	            "cannot run '/nonexistent/hml-test-program': No such file or directory");
	/* Not searched in PATH: a bare name is a path relative to the cwd. */
	{
		const char *bare[] = { "true", NULL };
		CHECK_FAILS(hml__proc_run(bare, NULL, NULL, NULL, &r), HML_ENOTFOUND,
		            "cannot run 'true'");
	}
	{
		const char *empty[] = { NULL };
		CHECK_FAILS(hml__proc_run(empty, NULL, NULL, NULL, &r), HML_EINVALID,
		            "no program to run");
	}
}

TEST(not_executable)
{
	const char *path = tmp_path("plain.txt");
	const char *argv[] = { path, NULL };
	hml__proc_result r;
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f) {
		fputs("not a program\n", f);
		fclose(f);
	}
	/* No x bit: exec fails, for root too. */
	chmod(path, 0644);
	CHECK_FAILS(hml__proc_run(argv, NULL, NULL, NULL, &r), HML_EIO,
	            "Permission denied");
	CHECK_CONTAINS(hml_error_last()->message, path);
}

/*
 * Interrupts are sent once the child has provably started: it creates a
 * marker file before it sleeps, and the sender waits for the file. No
 * fixed delay is assumed, so a loaded machine only makes the test slower.
 * When forwarding is broken the child sleeps its 60 s and exits 0, which
 * the checks catch; ctest's timeout is the backstop.
 */
typedef struct sender {
	const char *marker;
	int use_kill;          /* kill(getpid(), SIGINT) instead of a direct call */
} sender;

static void *interrupt_when_started(void *arg)
{
	const sender *s = arg;
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	sigset_t mask;
	int i;

	/* The process-directed SIGINT goes to the main thread, as in the CLI. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	for (i = 0; i < 60 * 200 && access(s->marker, F_OK) != 0; i++)
		nanosleep(&ts, NULL);
	if (s->use_kill)
		kill(getpid(), SIGINT);
	else
		hml__interrupt(SIGINT);
	return NULL;
}

/* "touch MARKER; exec sleep 60" as argv, without a shell quoting problem. */
static void sleeper_argv(const char *marker, const char *argv[5], char *script, size_t size)
{
	snprintf(script, size, "touch \"$0\"; exec sleep 60");
	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = script;
	argv[3] = marker;
	argv[4] = NULL;
}

TEST(interrupt_forwarded)
{
	sender s = { tmp_path("started-1"), 0 };
	const char *argv[5];
	char script[128];
	hml__proc_result r;
	pthread_t t;

	sleeper_argv(s.marker, argv, script, sizeof(script));
	CHECK_EQ_INT(pthread_create(&t, NULL, interrupt_when_started, &s), 0);
	CHECK_OK(hml__proc_run(argv, NULL, NULL, NULL, &r));
	pthread_join(t, NULL);
	CHECK_EQ_INT(access(s.marker, F_OK), 0);
	CHECK_EQ_INT(r.interrupted, SIGINT);
	CHECK_EQ_INT(r.exited, 0);
	CHECK_EQ_INT(r.signal, SIGINT);
	CHECK_STR(hml__proc_describe(&r), "interrupted");

	/* Reporting consumed it: the next run starts clean. */
	{
		const char *ok[] = { "/bin/true", NULL };
		CHECK_OK(hml__proc_run(ok, NULL, NULL, NULL, &r));
		CHECK_EQ_INT(r.interrupted, 0);
		CHECK_EQ_INT(r.exited, 1);
		CHECK_STR(hml__proc_describe(&r), "exit 0");
	}
}

TEST(interrupt_between_runs)
{
	/* With no child running nothing is signalled, but the interrupt is
	 * remembered: the next run reports it and does not start. */
	const char *marker = tmp_path("never-created");
	const char *touch[] = { "/usr/bin/touch", marker, NULL };
	hml__proc_result r;

	hml__interrupt(SIGINT);
	CHECK_OK(hml__proc_run(touch, NULL, NULL, NULL, &r));
	CHECK_EQ_INT(r.interrupted, SIGINT);
	CHECK_EQ_INT(r.exited, 0);
	CHECK_EQ_INT(r.signal, 0);
	CHECK_STR(hml__proc_describe(&r), "interrupted");
	CHECK(access(marker, F_OK) != 0);
	/* Only once. */
	CHECK_OK(hml__proc_run(touch, NULL, NULL, NULL, &r));
	CHECK_EQ_INT(r.interrupted, 0);
	CHECK_EQ_INT(r.exit_code, 0);
	CHECK_EQ_INT(access(marker, F_OK), 0);
}

static volatile sig_atomic_t handled;

static void on_sigint(int sig)
{
	(void)sig;
	handled = 1;
	hml__interrupt(SIGINT);
}

TEST(interrupt_from_signal_handler)
{
	/* As the CLI does it: SIGINT to the process, forwarded by its handler. */
	sender s = { tmp_path("started-2"), 1 };
	const char *argv[5];
	char script[128];
	struct sigaction sa, old;
	hml__proc_result r;
	pthread_t t;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	sleeper_argv(s.marker, argv, script, sizeof(script));
	handled = 0;
	CHECK_EQ_INT(pthread_create(&t, NULL, interrupt_when_started, &s), 0);
	CHECK_OK(hml__proc_run(argv, NULL, NULL, NULL, &r));
	pthread_join(t, NULL);
	sigaction(SIGINT, &old, NULL);
	CHECK_EQ_INT(handled, 1);
	CHECK_EQ_INT(r.interrupted, SIGINT);
	CHECK_EQ_INT(r.exited, 0);
	CHECK_EQ_INT(r.signal, SIGINT);
}

/* The sender thread's interrupt, as the CLI's handler makes it on SIGTERM. */
static void *term_when_started(void *arg)
{
	const char *marker = arg;
	struct timespec ts = { 0, 5 * 1000 * 1000 };

	for (int i = 0; i < 60 * 200 && access(marker, F_OK) != 0; i++)
		nanosleep(&ts, NULL);
	hml__interrupt(SIGTERM);
	return NULL;
}

/* The pid the script wrote to `path` is gone (not even a zombie of ours:
 * it was reparented and reaped, or killed). */
static int pid_gone(const char *path)
{
	long pid = atol(file_text(path));
	char stat_path[64], *text;

	if (pid <= 0)
		return 0;
	if (kill((pid_t)pid, 0) != 0)
		return 1;
	/* A zombie whose new parent has not reaped it yet is gone too. */
	snprintf(stat_path, sizeof(stat_path), "/proc/%ld/stat", pid);
	text = (char *)file_text(stat_path);
	return (text = strrchr(text, ')')) != NULL && strncmp(text, ") Z", 3) == 0;
}

/* pid_gone within 10 s: a process sent SIGKILL dies asynchronously, and a
 * loaded machine may not have run its exit yet when the leader is reaped. */
static int pid_gone_soon(const char *path)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i < 1000; i++) {
		if (pid_gone(path))
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

TEST(interrupt_reaches_the_group_as_itself)
{
	/* A shell that ignores SIGINT and SIGTERM, with a grandchild in its
	 * group that ignores them too: SIGTERM is forwarded as SIGTERM, then
	 * the group gets SIGKILL after the grace period, grandchild included. */
	const char *marker = tmp_path("started-3"), *grandchild = tmp_path("grandchild.pid");
	char script[512];
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	hml__proc_result r;
	pthread_t t;
	double t0;

	snprintf(script, sizeof(script),
	         "trap '' INT TERM; sleep 60 & echo $! > '%s'; touch '%s'; wait; wait",
	         grandchild, marker);
	t0 = hml__now();
	CHECK_EQ_INT(pthread_create(&t, NULL, term_when_started, (void *)marker), 0);
	CHECK_OK(hml__proc_run(argv, NULL, NULL, NULL, &r));
	pthread_join(t, NULL);
	CHECK_EQ_INT(r.interrupted, SIGTERM);
	CHECK_EQ_INT(r.signal, SIGKILL);
	CHECK(hml__now() - t0 >= HML__PROC_GRACE_S);
	CHECK(hml__now() - t0 < HML__PROC_GRACE_S + 30.0);
	CHECK(pid_gone_soon(grandchild));
}

TEST(time_limit)
{
	/* Past its limit: SIGTERM to the group; one that ignores it gets
	 * SIGKILL after the grace period. Within it: nothing happens. */
	const char *sleeper[] = { "/bin/sleep", "60", NULL };
	const char *stubborn[] = { "/bin/sh", "-c", "trap '' TERM; sleep 60; sleep 60", NULL };
	const char *quick[] = { "/bin/true", NULL };
	const char *const envp[] = { "PATH=/bin:/usr/bin", NULL };
	hml__proc_result r;
	double t0 = hml__now();

	CHECK_OK(hml__proc_run_env(sleeper, envp, NULL, NULL, 0.3, &r));
	CHECK_EQ_INT(r.timed_out, 1);
	CHECK_EQ_INT(r.signal, SIGTERM);
	CHECK_STR(hml__proc_describe(&r), "timed out");
	CHECK(hml__now() - t0 < 20.0);
	t0 = hml__now();
	CHECK_OK(hml__proc_run_env(stubborn, envp, NULL, NULL, 0.3, &r));
	CHECK_EQ_INT(r.timed_out, 1);
	CHECK_EQ_INT(r.signal, SIGKILL);
	CHECK(hml__now() - t0 >= 0.3 + HML__PROC_GRACE_S);
	CHECK_OK(hml__proc_run_env(quick, envp, NULL, NULL, 30.0, &r));
	CHECK_EQ_INT(r.timed_out, 0);
	CHECK_EQ_INT(r.exit_code, 0);
}

TEST(child_gets_default_signals)
{
	/* The parent ignores SIGPIPE (as the CLI does); the child must not.
	 * grep reads its own status: a shell in between would show the mask
	 * it blocks while it waits for its child. */
	const char *out = tmp_path("sig.txt");
	const char *argv[] = { "/bin/grep", "-E", "^Sig(Ign|Blk):", "/proc/self/status", NULL };
	hml__proc_result r;
	const char *text;

	signal(SIGPIPE, SIG_IGN);
	CHECK_OK(hml__proc_run(argv, NULL, out, NULL, &r));
	signal(SIGPIPE, SIG_DFL);
	CHECK_EQ_INT(r.exit_code, 0);
	text = file_text(out);
	/* SIGPIPE is signal 13: bit 0x1000 of SigIgn. */
	CHECK_CONTAINS(text, "SigBlk:\t0000000000000000");
	{
		const char *ign = strstr(text, "SigIgn:\t");
		unsigned long long mask = ign ? strtoull(ign + 8, NULL, 16) : ~0ULL;
		CHECK((mask & (1ULL << (SIGPIPE - 1))) == 0);
	}
}

TEST(sigchld_ignored_by_the_parent)
{
	/* A parent that ignores SIGCHLD makes children reap themselves: the
	 * run must still get the exit status, the child must get the default
	 * disposition, and the parent's is restored. */
	const char *out = tmp_path("chld.txt");
	const char *argv[] = { "/bin/grep", "-E", "^SigIgn:", "/proc/self/status", NULL };
	const char *fail[] = { "/bin/sh", "-c", "exit 7", NULL };
	struct sigaction sa;
	hml__proc_result r;
	const char *text;

	signal(SIGCHLD, SIG_IGN);
	CHECK_OK(hml__proc_run(fail, NULL, NULL, NULL, &r));
	CHECK_EQ_INT(r.exited, 1);
	CHECK_EQ_INT(r.exit_code, 7);
	CHECK_OK(hml__proc_run(argv, NULL, out, NULL, &r));
	CHECK_EQ_INT(r.exit_code, 0);
	CHECK(sigaction(SIGCHLD, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	text = file_text(out);
	{
		const char *ign = strstr(text, "SigIgn:\t");
		unsigned long long mask = ign ? strtoull(ign + 8, NULL, 16) : ~0ULL;
		CHECK((mask & (1ULL << (SIGCHLD - 1))) == 0);
	}
}

TEST(complete_environment_given)
{
	const char *out = tmp_path("env-exact.txt");
	const char *argv[] = { "/usr/bin/env", NULL };
	const char *envp[] = { "ONLY=this", "AND=that", NULL };
	hml__proc_result r;

	setenv("HML_TEST_PARENT", "not inherited", 1);
	CHECK_OK(hml__proc_run_env(argv, envp, out, NULL, 0.0, &r));
	CHECK_EQ_INT(r.exit_code, 0);
	CHECK_STR(file_text(out), "ONLY=this\nAND=that\n");
	CHECK_FAILS(hml__proc_run_env(argv, NULL, out, NULL, 0.0, &r), HML_EINVALID,
	            "no environment for '/usr/bin/env'");
	unsetenv("HML_TEST_PARENT");
}

int main(void)
{
	if (tmp_dir_make("proc") < 0)
		return 1;
	RUN(true_exits_zero);
	RUN(false_exits_one);
	RUN(exit_status_passed_through);
	RUN(killed_by_signal);
	RUN(argv_passed_verbatim);
	RUN(environment_override_and_removal);
	RUN(complete_environment_given);
	RUN(stdout_and_stderr_redirected);
	RUN(output_file_unwritable);
	RUN(missing_program);
	RUN(not_executable);
	RUN(interrupt_forwarded);
	RUN(interrupt_between_runs);
	RUN(interrupt_from_signal_handler);
	RUN(interrupt_reaches_the_group_as_itself);
	RUN(time_limit);
	RUN(child_gets_default_signals);
	RUN(sigchld_ignored_by_the_parent);
	tmp_dir_remove();
	return check_report();
}
