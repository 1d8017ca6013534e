/*
 * lib/run/limit.h - the time limit of an application run (internal, CLI side).
 *
 * Every run of a workflow's application that hml starts (collect,
 * evaluate, the QoI checks of deploy and search) has a limit: the one
 * given (--run-timeout), else $HML_RUN_TIMEOUT, else HML__RUN_LIMIT_FACTOR
 * times the wall time of the workflow's accurate run where one was
 * measured first (evaluate's and a QoI check's surrogate runs), or of the
 * slowest run collected with the workflow (their accurate runs: an
 * instrumented collect run is no faster than an accurate one), plus
 * HML__RUN_LIMIT_SLACK_S (a surrogate run adds the model's start-up --
 * libtorch alone ~1 s -- to a run that may take milliseconds), else none
 * (collect's own runs, and runs of a workflow nothing was collected with).
 * A run past it is ended by lib/sys/proc.h (SIGTERM to its process group,
 * SIGKILL after HML__PROC_GRACE_S). Documented in hml-collect(1),
 * hml-evaluate(1) and hml(1).
 */
#ifndef HML_LIB_RUN_LIMIT_H
#define HML_LIB_RUN_LIMIT_H

#ifdef __cplusplus
extern "C" {
#endif

/** A surrogate run may take this many times the accurate run's wall time,
 *  plus HML__RUN_LIMIT_SLACK_S seconds. */
#define HML__RUN_LIMIT_FACTOR 10.0
#define HML__RUN_LIMIT_SLACK_S 60.0

/**
 * The limit of a run into *out, in seconds (0: none). `given`: the
 * --run-timeout value, NAN when not given; `accurate_s`: the wall time of
 * the workflow's accurate run when one was measured (> 0), else 0. A
 * given or $HML_RUN_TIMEOUT value of 0 means no limit. HML_EINVALID
 * ("invalid HML_RUN_TIMEOUT 'x': ...", "invalid --run-timeout ...") for a
 * value that is not a finite number of seconds >= 0.
 */
int hml__run_limit(double *out, double given, double accurate_s);

#ifdef __cplusplus
}
#endif
#endif
