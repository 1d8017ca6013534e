/*
 * lib/search/plot.h - the plots of a search, drawn by gnuplot (internal).
 *
 * Two plots, each as PNG and SVG, written into the experiment beside the
 * trial history and registered in the search's record (documented in
 * hml-manifest(5), section searches):
 *
 *   search/<id>/front.png, front.svg
 *       every result (validation RMSE against latency per sample, both
 *       axes logarithmic; failed trials have none): lower rungs in grey,
 *       the top rung in blue, infeasible ones hollow, the Pareto front
 *       (lib/search/results.h) in red, connected; the bounds --max-error and
 *       --max-latency as dashed lines when the search had them.
 *       files: "front_png", "front_svg"
 *   search/<id>/convergence.png, convergence.svg
 *       against trials ended: the best error of the top rung so far (left
 *       axis, logarithmic) and the front's hypervolume (right axis).
 *       files: "convergence_png", "convergence_svg"
 *
 * gnuplot is a child process (lib/sys/proc.h, found on PATH) that reads a
 * script and data files hml writes into a temporary directory
 * search/<id>/.plot-XXXXXX; its images are then renamed into place, so a
 * plot is either the old one or the new one, never half drawn.
 */
#ifndef HML_SEARCH_PLOT_H
#define HML_SEARCH_PLOT_H

#include <stddef.h>

#include "search/results.h"
#include "store/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The plots: their file names in search/<id>/ and their roles in "files". */
#define HML__PLOT_COUNT 4
extern const char *const hml__plot_files[HML__PLOT_COUNT];  /**< "front.png", ... */
extern const char *const hml__plot_roles[HML__PLOT_COUNT];  /**< "front_png", ... */

/**
 * Write the data files and the gnuplot script (plot.gp) that draw the
 * plots of `r` into directory `work` (which exists), the images also into
 * `work`. `title` heads both plots. *script (malloc'ed) is the script's
 * path. Nothing is run. Errors: HML_EINVALID "nothing to plot: no trial
 * succeeded" when r has no result; HML_EIO naming a file
 * that cannot be written; HML_ENOMEM.
 */
int hml__search_plot_prepare(char **script, const hml__search_results *r, const char *title,
                            const char *work);

/**
 * Run gnuplot on `script`, its output and diagnostics into `log`, and
 * check that it made the four images beside the script.
 * Errors (all HML_ERROR): "gnuplot is not installed (no 'gnuplot' on
 * PATH)"; "gnuplot failed (exit 1): <its last message line>"; "gnuplot
 * made no 'front.png'"; "gnuplot was interrupted"; HML_ENOTFOUND / HML_EIO
 * when it cannot be started (lib/sys/proc.h).
 */
int hml__search_plot_run(const char *script, const char *log);

/**
 * Draw the plots of search `id` of store `s` from its history and
 * register them: search/<id>/front.png ... are replaced, and the record's
 * files gain the four roles (under the store's lock, lib/store/store.h). The
 * relative paths are those of hml__plot_files under search/<id>/.
 * Errors: HML_EINVALID "search 's1' has no successful trial to plot";
 * those of hml__records_search(), hml__search_results_load(),
 * hml__search_plot_prepare(), hml__search_plot_run(), hml__store_update();
 * HML_EIO when the temporary directory cannot be made or an image cannot
 * be moved. A failure before the images are moved (no gnuplot, a gnuplot
 * error) leaves the earlier plots, if any, as they were.
 */
int hml__search_plot_write(hml__store *s, const char *id);

#ifdef __cplusplus
}
#endif
#endif
