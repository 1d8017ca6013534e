/*
 * lib/search/plot.c - a search's front and convergence plots: data and a
 * gnuplot script in a temporary directory, gnuplot as a child process,
 * the images renamed into search/<id>/ and registered in the record.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/beneath.h"
#include "core/error.h"
#include "core/util.h"
#include "search/plot.h"
#include "store/records.h"
#include "sys/fsutil.h"
#include "sys/gnuplot.h"

const char *const hml__plot_files[HML__PLOT_COUNT] = {
	"front.png", "front.svg", "convergence.png", "convergence.svg"
};
const char *const hml__plot_roles[HML__PLOT_COUNT] = {
	"front_png", "front_svg", "convergence_png", "convergence_svg"
};

/* ---- data and script ---------------------------------------------------- */

/* The series of the front plot; a result belongs to exactly one. */
enum { S_LOWER, S_TOP, S_INFEASIBLE, S_FRONT, NSERIES };
static const char *const series_file[NSERIES] = {
	"lower.dat", "top.dat", "infeasible.dat", "front.dat"
};

static int series_of(const hml__search_results *r, const hml__sr_trial *t)
{
	(void)r;
	if (t->front)
		return S_FRONT;
	if (!t->top)
		return S_LOWER;
	return t->feasible ? S_TOP : S_INFEASIBLE;
}

static int write_failed(const char *path)
{
	return hml__error_set(HML_EIO, "cannot write '%s': %s", path, strerror(errno));
}

/* fopen work/name for writing; *path (malloc'ed) is its path. */
static FILE *open_in(const char *work, const char *name, char **path)
{
	FILE *f;

	if (!(*path = hml__path_join(work, name)))
		return NULL;
	if (!(f = fopen(*path, "w")))
		write_failed(*path);
	return f;
}

static int close_checked(FILE *f, const char *path)
{
	int bad = ferror(f);

	if (fclose(f) != 0 || bad)
		return write_failed(path);
	return 0;
}

/* One data file per series, "latency error" rows; the front by latency so
 * that its line runs left to right. Counts go to n[]. */
static int write_front_data(const hml__search_results *r, const char *work, size_t n[NSERIES])
{
	int rc = 0;

	for (int s = 0; s < NSERIES && rc == 0; s++) {
		char *path = NULL;
		FILE *f = open_in(work, series_file[s], &path);

		n[s] = 0;
		if (!f) {
			free(path);
			return path ? HML_EIO : hml__error_oom();
		}
		if (s == S_FRONT) {
			/* r->front is by error, so by latency descending: write it reversed. */
			for (size_t j = r->nfront; j-- > 0; n[s]++)
				fprintf(f, "%.17g %.17g\n", r->res[r->front[j]].latency_s,
				        r->res[r->front[j]].error);
		} else {
			for (size_t i = 0; i < r->nres; i++)
				if (series_of(r, &r->res[i]) == s) {
					fprintf(f, "%.17g %.17g\n", r->res[i].latency_s, r->res[i].error);
					n[s]++;
				}
		}
		rc = close_checked(f, path);
		free(path);
	}
	return rc;
}

/* "k best hv" per trial ended; NaN where there is no best yet. */
static int write_convergence_data(const hml__search_results *r, const char *work)
{
	char *path = NULL;
	FILE *f = open_in(work, "convergence.dat", &path);
	int rc;

	if (!f) {
		free(path);
		return path ? HML_EIO : hml__error_oom();
	}
	for (size_t k = 0; k < r->ended; k++) {
		if (isnan(r->best[k]))
			fprintf(f, "%zu NaN %.17g\n", k + 1, r->hv[k]);
		else
			fprintf(f, "%zu %.17g %.17g\n", k + 1, r->best[k], r->hv[k]);
	}
	rc = close_checked(f, path);
	free(path);
	return rc;
}

/* `s` as a gnuplot single-quoted string (a quote doubled) on f. */
static void quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc((unsigned char)*s < 0x20 ? '?' : *s, f);   /* a newline would end the command */
	}
	fputc('\'', f);
}

/* A terminal and its output file work/name. */
static void output(FILE *f, const char *work, const char *name)
{
	char path[4352];

	snprintf(path, sizeof(path), "%s/%s", work, name);
	fprintf(f, "set terminal %s size 900,600 noenhanced font 'DejaVu Sans,11'\nset output ",
	        strstr(name, ".png") ? "pngcairo" : "svg");
	quoted(f, path);
	fputc('\n', f);
}

/* The range of the results and the bounds along one axis (log axes):
 * half a decade of margin... at least a factor 1.25 each side. */
static void axis_range(FILE *f, const char *axis, double lo, double hi)
{
	double pad = fmax(1.25, pow(hi / lo, 0.05));

	fprintf(f, "set %srange [%.17g:%.17g]\n", axis, lo / pad, hi * pad);
}

/* The error axis' name: "RMSE" or "MAPE (%)" (gnuplot text). */
static const char *metric_label(const hml__search_results *r)
{
	if (r->metric && strcmp(r->metric, "qoi") == 0)
		return "QoI error after the run";
	return r->metric && strcmp(r->metric, "mape") == 0 ? "MAPE (%)" : "RMSE";
}

static void front_script(FILE *f, const hml__search_results *r, const char *title,
                         const char *work, const size_t n[NSERIES])
{
	static const char *const style[NSERIES] = {
		"points pt 7 ps 0.6 lc rgb '#a0a0a0' title 'lower rungs'",
		"points pt 7 ps 0.8 lc rgb '#3070c0' title 'top rung'",
		"points pt 6 ps 0.8 lc rgb '#3070c0' title 'top rung, infeasible'",
		"linespoints pt 7 ps 1.1 lw 2 lc rgb '#d02020' title 'Pareto front'",
	};
	double xlo = HUGE_VAL, xhi = -HUGE_VAL, ylo = HUGE_VAL, yhi = -HUGE_VAL;
	const char *sep = "plot ";

	for (size_t i = 0; i < r->nres; i++) {
		xlo = fmin(xlo, r->res[i].latency_s);
		xhi = fmax(xhi, r->res[i].latency_s);
		ylo = fmin(ylo, r->res[i].error);
		yhi = fmax(yhi, r->res[i].error);
	}
	if (isfinite(r->max_latency)) {
		xlo = fmin(xlo, r->max_latency);
		xhi = fmax(xhi, r->max_latency);
	}
	if (isfinite(r->max_error)) {
		ylo = fmin(ylo, r->max_error);
		yhi = fmax(yhi, r->max_error);
	}
	fprintf(f, "reset\nset logscale xy\nset grid\nset key outside right top\n"
	           "set format x '%%.0e'\nset format y '%%.0e'\n"
	           "set xlabel 'inference latency per sample (s)'\n"
	           "set ylabel 'validation %s'\nset title ", metric_label(r));
	quoted(f, title);
	fputc('\n', f);
	axis_range(f, "x", xlo, xhi);
	axis_range(f, "y", ylo, yhi);
	if (isfinite(r->max_error))
		fprintf(f, "set arrow from graph 0, first %.17g to graph 1, first %.17g nohead "
		           "dt 2 lw 1.5 lc rgb '#208020'\n"
		           "set label 'max error' at graph 0.01, first %.17g offset 0,0.6 "
		           "tc rgb '#208020'\n", r->max_error, r->max_error, r->max_error);
	if (isfinite(r->max_latency))
		fprintf(f, "set arrow from first %.17g, graph 0 to first %.17g, graph 1 nohead "
		           "dt 2 lw 1.5 lc rgb '#208020'\n"
		           "set label 'max latency' at first %.17g, graph 0.97 offset 0.6,0 "
		           "tc rgb '#208020'\n", r->max_latency, r->max_latency, r->max_latency);
	for (int s = 0; s < NSERIES; s++) {
		char path[4352];

		if (!n[s])
			continue;
		snprintf(path, sizeof(path), "%s/%s", work, series_file[s]);
		fputs(sep, f);
		quoted(f, path);
		fprintf(f, " using 1:2 with %s", style[s]);
		sep = ", \\\n     ";
	}
	fputc('\n', f);
}

static void convergence_script(FILE *f, const hml__search_results *r, const char *title,
                               const char *work)
{
	double lo = HUGE_VAL, hi = -HUGE_VAL;
	char path[4352];

	/* the errors of every result: a flat best-error line keeps a readable scale */
	for (size_t i = 0; i < r->nres; i++) {
		lo = fmin(lo, r->res[i].error);
		hi = fmax(hi, r->res[i].error);
	}

	snprintf(path, sizeof(path), "%s/convergence.dat", work);
	fprintf(f, "reset\nset datafile missing 'NaN'\nset grid\nset key outside right top\n"
	           "set logscale y\nset format y '%%.0e'\nset ytics nomirror\n"
	           "set y2tics\nset xlabel 'trials ended'\n"
	           "set ylabel 'best validation %s (top rung)'\n"
	           "set y2label 'hypervolume of the front (decades^2)'\nset xrange [0:*]\n"
	           "set y2range [0:*]\nset offsets 0, 0, graph 0.05, graph 0.05\nset title ",
	           metric_label(r));
	quoted(f, title);
	fputc('\n', f);
	axis_range(f, "y", lo, hi);
	fputs("plot ", f);
	quoted(f, path);
	fputs(" using 1:2 axes x1y1 with steps lw 2 lc rgb '#d02020' title 'best error', \\\n     ",
	      f);
	quoted(f, path);
	fputs(" using 1:3 axes x1y2 with steps lw 2 lc rgb '#3070c0' title 'hypervolume'\n", f);
}

int hml__search_plot_prepare(char **script, const hml__search_results *r, const char *title,
                            const char *work)
{
	size_t n[NSERIES];
	char *path = NULL;
	FILE *f;
	int rc;

	*script = NULL;
	if (r->nres == 0)
		return hml__error_set(HML_EINVALID, "nothing to plot: no trial succeeded");
	if ((rc = write_front_data(r, work, n)) < 0 || (rc = write_convergence_data(r, work)) < 0)
		return rc;
	if (!(f = open_in(work, "plot.gp", &path))) {
		free(path);
		return path ? HML_EIO : hml__error_oom();
	}
	/* Each plot drawn for PNG, then replotted for SVG. */
	output(f, work, hml__plot_files[0]);
	front_script(f, r, title, work, n);
	output(f, work, hml__plot_files[1]);
	fputs("replot\nunset output\n", f);
	output(f, work, hml__plot_files[2]);
	convergence_script(f, r, title, work);
	output(f, work, hml__plot_files[3]);
	fputs("replot\nunset output\n", f);
	if ((rc = close_checked(f, path)) < 0) {
		free(path);
		return rc;
	}
	*script = path;
	return 0;
}

/* ---- gnuplot ------------------------------------------------------------ */

int hml__search_plot_run(const char *script, const char *log)
{
	char *dir = NULL;
	int rc;

	if ((rc = hml__gnuplot_run(script, log)) < 0)
		return rc;
	if (!(dir = hml__strdup(script)))
		return hml__error_oom();
	if (strrchr(dir, '/'))
		*strrchr(dir, '/') = '\0';
	for (int k = 0; k < HML__PLOT_COUNT && rc == 0; k++) {
		char *p = hml__path_join(dir, hml__plot_files[k]);

		if (!p)
			rc = hml__error_oom();
		else if (access(p, R_OK) != 0)
			rc = hml__error_set(HML_ERROR, "gnuplot made no '%s'", hml__plot_files[k]);
		free(p);
	}
	free(dir);
	return rc;
}

/* ---- into the experiment ------------------------------------------------ */

typedef struct reg_args {
	const char *id;
	const char *dir;
} reg_args;

/* Under the store's lock: the plots' roles in the record's files. */
static int register_plots(json_t *m, void *payload)
{
	const reg_args *a = payload;
	json_t *rec = hml__manifest_find(m, "searches", a->id), *files;

	if (rec) {
		if (!json_is_object(files = json_object_get(rec, "files"))) {
			files = json_object();
			if (json_object_set_new(rec, "files", files) < 0)
				return hml__error_oom();
		}
		for (int k = 0; k < HML__PLOT_COUNT; k++) {
			char rel[128];

			snprintf(rel, sizeof(rel), "search/%s/%s", a->id, hml__plot_files[k]);
			if (json_object_set_new(files, hml__plot_roles[k], json_string(rel)) < 0)
				return hml__error_oom();
		}
		return 0;
	}
	return hml__error_set(HML_ENOTFOUND, "no search '%s' in experiment '%s'", a->id, a->dir);
}

/* Draw r's plots in a temporary directory of sdir and move them into
 * sdir, beneath experiment xp (never through a link). */
static int draw_into(const hml__search_results *r, const char *title, const char *xp,
                     const char *sdir)
{
	char *work = hml__path_join(sdir, ".plot-XXXXXX"), *script = NULL, *log = NULL;
	int rc = 0;

	if (!work)
		return hml__error_oom();
	if ((rc = hml__beneath_mkdtemp(xp, work)) < 0) {
		if (rc == HML_EIO)
			rc = hml__error_set(HML_EIO, "cannot create a directory in '%s': %s", sdir,
			                    strerror(errno));
		free(work);
		return rc;
	}
	if ((rc = hml__search_plot_prepare(&script, r, title, work)) < 0)
		goto done;
	if (!(log = hml__path_join(work, "gnuplot.log"))) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = hml__search_plot_run(script, log)) < 0)
		goto done;
	for (int k = 0; k < HML__PLOT_COUNT && rc == 0; k++) {
		char *from = hml__path_join(work, hml__plot_files[k]);
		char *to = hml__path_join(sdir, hml__plot_files[k]);

		if (!from || !to)
			rc = hml__error_oom();
		else if ((rc = hml__beneath_rename(xp, from, to, 0)) == HML_EIO)
			rc = hml__error_set(HML_EIO, "cannot move the plot to '%s': %s", to,
			                    strerror(errno));
		free(from);
		free(to);
	}
done:
	hml__remove_dir(work);
	free(work);
	free(script);
	free(log);
	return rc;
}

int hml__search_plot_write(hml__store *s, const char *id)
{
	hml__search_view v;
	hml__search_results r;
	reg_args a = { id, hml__store_dir(s) };
	char rel[96], title[256], *sdir = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	if ((rc = hml__records_search(&v, s, id)) < 0)
		return rc;
	if ((rc = hml__search_results_load(&r, hml__store_dir(s), &v)) < 0)
		goto done;
	if (r.nres == 0) {
		rc = hml__error_set(HML_EINVALID, "search '%s' has no successful trial to plot", id);
		goto done;
	}
	snprintf(rel, sizeof(rel), "search/%s", id);
	if (!(sdir = hml__store_path(s, rel))) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = hml__beneath_mkdir_p(hml__store_dir(s), sdir)) < 0) {
		if (rc == HML_EIO)
			rc = hml__error_set(HML_EIO, "cannot create '%s': %s", sdir, strerror(errno));
		goto done;
	}
	snprintf(title, sizeof(title), "search %s: region %s, %zu results, front of %zu", id,
	         v.region ? v.region : "?", r.nres, r.nfront);
	if ((rc = draw_into(&r, title, hml__store_dir(s), sdir)) < 0)
		goto done;
	rc = hml__store_update(s, register_plots, &a);
done:
	free(sdir);
	hml__search_results_release(&r);
	return rc;
}
