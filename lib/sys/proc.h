/*
 * lib/sys/proc.h - running an application as a child process (internal).
 *
 * argv is executed directly (posix_spawn / fork+execv), never through a
 * shell. With hml__proc_run() the child gets the parent's environment plus
 * `env` entries ("KEY=VALUE", overriding; "KEY=" with nothing after '='
 * keeps the empty value, "KEY" alone removes KEY); with hml__proc_run_env()
 * exactly the environment given (see lib/run/childenv.h for how hml composes
 * an application's).
 *
 * The child leads a process group of its own, so that what it starts is
 * ended with it: an interrupt (lib/sys/interrupt.h) is forwarded to the
 * group as the signal that hml received, a run past its time limit gets
 * SIGTERM, and a group still there HML__PROC_GRACE_S seconds after either
 * gets SIGKILL; an interrupted or timed-out run's group is killed once its
 * leader has exited, stragglers included. The child dies with SIGKILL if
 * the thread that started it dies first (PR_SET_PDEATHSIG: hml killed).
 * Its standard input is the parent's, but /dev/null in place of a
 * terminal: a process group other than the terminal's foreground one is
 * stopped (SIGTTIN) when it reads the terminal.
 */
#ifndef HML_LIB_PROC_H
#define HML_LIB_PROC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Seconds from the SIGTERM (or the forwarded interrupt) to the SIGKILL
 * of a child's process group: the one grace period, hml(1). */
#define HML__PROC_GRACE_S 5.0

typedef struct hml__proc_result {
	int exited;        /**< 1 when the child exited normally */
	int exit_code;     /**< its exit status when exited */
	int signal;        /**< the terminating signal when !exited */
	int interrupted;   /**< the signal given to hml__interrupt()
	                        (sys/interrupt.h) when it was called while it ran,
	                        or before it started (then it was not started:
	                        exited and signal are 0); the run consumed the
	                        interrupt. 0: not interrupted */
	int timed_out;     /**< 1 when it ran past its limit and was ended */
	double wall_s;     /**< wall-clock seconds from the child's execve() to its
	                        reaping (fork() left out: lib/sys/proc.c) */
} hml__proc_result;

/**
 * Run argv[0] (an absolute or relative path, not searched in PATH) with
 * `env` added, stdout to `stdout_path` (NULL: inherit) and stderr to
 * `stderr_path` (NULL: inherit; the same path as stdout_path: one file,
 * one offset), wait for it and fill *res. Returns 0 when the child ran
 * (whatever its status) or was not started because of a pending
 * interrupt (res->interrupted), HML_ENOTFOUND / HML_EIO when it could not
 * be started ("cannot run 'P': <strerror>", "cannot write 'F': ..."),
 * HML_EINVALID when an output path is a symbolic link (never followed);
 * "/dev/fd/N" naming a descriptor open in the caller (a pipe) is that
 * descriptor, duplicated, not a path opened.
 * SIGINT and SIGTERM are blocked in the calling thread for the moment of
 * fork(). An ignored SIGCHLD is set to the default for the run (else the
 * child could not be waited for) and restored. Not reentrant: one child
 * at a time per process.
 */
int hml__proc_run(const char *const *argv, const char *const *env,
                  const char *stdout_path, const char *stderr_path,
                  hml__proc_result *res);

/**
 * hml__proc_run() with the child's complete environment `envp`
 * (NULL-terminated "KEY=VALUE" list, used as it is; nothing of the
 * parent's is added) and a time limit: `limit_s` > 0 seconds from its
 * start, after which its group gets SIGTERM, then SIGKILL after
 * HML__PROC_GRACE_S, and res->timed_out is set (0: no limit).
 * HML_EINVALID when envp is NULL.
 */
int hml__proc_run_env(const char *const *argv, const char *const *envp,
                      const char *stdout_path, const char *stderr_path, double limit_s,
                      hml__proc_result *res);

/** "exit 3", "killed by SIGSEGV", "interrupted", "timed out": a description
 * of *res (static). */
const char *hml__proc_describe(const hml__proc_result *res);

#ifdef __cplusplus
}
#endif
#endif
