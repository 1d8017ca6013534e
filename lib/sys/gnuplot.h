/*
 * lib/sys/gnuplot.h - gnuplot as a child process (internal): the one
 * runner of the plots hml draws (a search's front and convergence,
 * lib/search/plot.h; an evaluation's error over time, lib/store/qoi_series.h).
 */
#ifndef HML_SYS_GNUPLOT_H
#define HML_SYS_GNUPLOT_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Run gnuplot (found on PATH) on `script`, its output and diagnostics
 * into `log`. Errors (all HML_ERROR): "gnuplot is not installed (no
 * 'gnuplot' on PATH)"; "gnuplot failed (exit 1): <its last message
 * line>"; "gnuplot was interrupted"; HML_ENOTFOUND / HML_EIO when it
 * cannot be started (lib/sys/proc.h).
 */
int hml__gnuplot_run(const char *script, const char *log);

/** Nonzero when gnuplot is on PATH. */
int hml__gnuplot_found(void);

#ifdef __cplusplus
}
#endif
#endif
