/*
 * tests/unit/search_plot.c - a search's results from a history written by
 * the history writer (front, feasibility, counts, best error and
 * hypervolume after every trial), and the data and gnuplot script of its
 * plots; gnuplot itself is replaced by small scripts that fail in the ways
 * it can (the e2e tests run the real one).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fixtures.h"
#include "search/history.h"
#include "search/plot.h"
#include "search/results.h"
#include "store/records.h"
#include "store/store.h"
#include "sys/fsutil.h"


#define OK HML__HIST_OK

typedef struct ev_spec {
	long trial, config;
	unsigned rung;
	hml__hist_status st;
	double err, lat;
	long params;
} ev_spec;

/* The metric make_search records (NULL: none, as older hml). With "mape",
 * each trial's error is its val_mape and its val_rmse is 1 / error, the
 * reverse order, so that a result ranked by the wrong one shows. */
static const char *search_metric;

/* A search record with `constraints` and `rungs` (0: not recorded) and
 * its history made of evs. */
static void make_search(hml__store *s, const char *constraints, int rungs, const ev_spec *evs,
                        size_t n, char *id)
{
	json_t *rec = json_pack("{s:s, s:s, s:o}", "region", "binomial", "status", "finished",
	                        "constraints", json_loads(constraints, 0, NULL));
	hml__history *h = NULL;
	char rel[64], *path;

	if (rungs)
		json_object_set_new(rec, "rungs", json_integer(rungs));
	if (search_metric)
		json_object_set_new(rec, "metric", json_string(search_metric));
	CHECK_OK(hml__search_register(s, rec, id, 16));
	snprintf(rel, sizeof(rel), "search/%s/%s", id, HML__HISTORY_FILE);
	path = hml__store_path(s, rel);
	CHECK_OK(hml__history_open(&h, NULL, path));
	for (size_t i = 0; h && i < n; i++) {
		hml__hist_event ev;

		hml__hist_event_init(&ev);
		ev.trial = evs[i].trial;
		ev.config = evs[i].config;
		ev.rung = evs[i].rung;
		ev.status = evs[i].st;
		ev.model = ev.status == HML__HIST_KEPT ? "m1" : NULL;
		ev.arch = ev.status == OK ? "mlp:8x8:relu" : NULL;
		ev.error = ev.status == HML__HIST_FAILED || ev.status == HML__HIST_TIMEOUT ? "x" : NULL;
		ev.m.val_rmse = evs[i].err;
		if (search_metric) {
			ev.m.val_mape = evs[i].err;
			ev.m.val_rmse = 1 / evs[i].err;
		}
		ev.m.latency_s = evs[i].lat;
		ev.m.params = evs[i].params;
		CHECK_OK(hml__history_append(h, &ev));
	}
	hml__history_close(h);
	free(path);
}

static const ev_spec two_rungs[] = {
	{ 0, 0, 0, HML__HIST_RUNNING, NAN, NAN, -1 },
	{ 0, 0, 0, OK, 0.4, 1e-6, 100 },             /* ended 1: lower rung */
	{ 1, 1, 0, HML__HIST_RUNNING, NAN, NAN, -1 },
	{ 1, 1, 0, HML__HIST_FAILED, NAN, NAN, -1 }, /* ended 2 */
	{ 2, 0, 1, OK, 0.2, 2e-6, 100 },             /* 3: front */
	{ 3, 2, 1, OK, 0.1, 1e-5, 500 },             /* 4: front */
	{ 4, 3, 1, OK, 0.3, 5e-6, 100 },             /* 5: dominated by trial 2 */
	{ 5, 4, 1, OK, 0.05, 1e-7, 5000 },           /* 6: too many parameters */
	{ 6, 5, 1, OK, 0.6, 1e-7, 10 },              /* 7: error above the bound */
	{ 2, 0, 1, HML__HIST_KEPT, NAN, NAN, -1 },
	{ 7, 6, 0, HML__HIST_TIMEOUT, NAN, NAN, -1 },/* 8 */
	{ 8, 7, 0, HML__HIST_RERUN, NAN, NAN, -1 },
	{ 9, 7, 0, HML__HIST_RUNNING, NAN, NAN, -1 },
};

static void load(hml__store *s, const char *id, hml__search_results *r)
{
	hml__search_view v;

	CHECK_OK(hml__store_reload(s));
	CHECK_OK(hml__records_search(&v, s, id));
	CHECK_OK(hml__search_results_load(r, tmpdir, &v));
}

TEST(results)
{
	hml__store *s = NULL;
	hml__search_results r;
	char id[16];
	double r0, r1, xa, ya, xb, yb;

	CHECK_OK(hml__store_open(&s, tmpdir, 1));
	make_search(s, "{\"max_error\": 0.5, \"max_latency\": null, \"max_params\": 1000}", 2,
	            two_rungs, sizeof(two_rungs) / sizeof(two_rungs[0]), id);
	load(s, id, &r);
	CHECK_EQ_INT(r.nres, 6);
	CHECK_EQ_INT(r.ended, 8);
	CHECK_EQ_INT(r.failed, 2);
	CHECK_EQ_INT(r.configs, 8);
	CHECK_EQ_INT(r.top_rung, 1);
	CHECK_NEAR(r.max_error, 0.5, 0);
	CHECK(isnan(r.max_latency));
	CHECK_NEAR(r.max_params, 1000, 0);
	CHECK_EQ_INT(r.nfront, 2);
	if (r.nfront == 2) {
		CHECK_EQ_INT(r.res[r.front[0]].trial, 3);   /* by error */
		CHECK_EQ_INT(r.res[r.front[1]].trial, 2);
	}
	CHECK_NEAR(hml__search_results_best(&r), 0.1, 0);
	CHECK(!r.res[0].top && r.res[0].feasible && !r.res[0].front);
	CHECK(r.res[3].top && r.res[3].feasible && !r.res[3].front);
	CHECK(!r.res[4].feasible && !r.res[5].feasible);
	CHECK_EQ_INT(r.res[2].ended, 4);
	CHECK_STR(r.res[1].model, "m1");            /* trial 2 was kept */
	CHECK_STR(r.res[0].model, "");
	CHECK_STR(r.res[1].arch, "mlp:8x8:relu");
	/* Best error and hypervolume (decades) after every trial ended. */
	r0 = log10(0.6) + 0.1;
	r1 = log10(1e-5) + 0.1;
	CHECK_NEAR(r.ref[0], r0, 1e-12);
	CHECK_NEAR(r.ref[1], r1, 1e-12);
	CHECK(isnan(r.best[0]) && isnan(r.best[1]));
	CHECK(r.hv[0] == 0 && r.hv[1] == 0);
	CHECK_NEAR(r.best[2], 0.2, 0);
	xb = log10(0.2);
	yb = log10(2e-6);
	CHECK_NEAR(r.hv[2], (r0 - xb) * (r1 - yb), 1e-12);
	xa = log10(0.1);
	ya = log10(1e-5);
	for (int k = 3; k < 8; k++) {
		CHECK_NEAR(r.best[k], 0.1, 0);
		CHECK_NEAR(r.hv[k], (r0 - xa) * (r1 - ya) + (r0 - xb) * (ya - yb), 1e-12);
	}
	hml__search_results_release(&r);
	CHECK(r.res == NULL && r.nres == 0);
	hml__search_results_release(NULL);
	hml__store_free(s);
}

/* The whole of a small file into buf. */
static const char *slurp_in(const char *work, const char *name, char *buf, size_t size)
{
	char path[1024];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", work, name);
	buf[0] = '\0';
	if (!(f = fopen(path, "r")))
		return buf;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int lines(const char *text)
{
	int n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

TEST(script)
{
	hml__store *s = NULL;
	hml__search_results r;
	char id[16], work[600], *script = NULL, buf[8192];

	CHECK_OK(hml__store_open(&s, tmpdir, 1));
	make_search(s, "{\"max_error\": 0.5, \"max_latency\": null, \"max_params\": 1000}", 2,
	            two_rungs, sizeof(two_rungs) / sizeof(two_rungs[0]), id);
	load(s, id, &r);
	snprintf(work, sizeof(work), "%s/work-%s", tmpdir, id);
	CHECK(mkdir(work, 0777) == 0);
	CHECK_OK(hml__search_plot_prepare(&script, &r, "it's s2", work));
	CHECK(script && strstr(script, "/plot.gp"));
	slurp_in(work, "plot.gp", buf, sizeof(buf));
	CHECK_CONTAINS(buf, "set logscale xy\n");
	CHECK_CONTAINS(buf, "set ylabel 'validation RMSE'\n");
	CHECK_CONTAINS(buf, "set ylabel 'best validation RMSE (top rung)'\n");
	CHECK_CONTAINS(buf, "set title 'it''s s2'\n");
	CHECK_CONTAINS(buf, "set terminal pngcairo");
	CHECK_CONTAINS(buf, "set terminal svg");
	CHECK_CONTAINS(buf, "/front.png'\n");
	CHECK_CONTAINS(buf, "/front.svg'\n");
	CHECK_CONTAINS(buf, "/convergence.png'\n");
	CHECK_CONTAINS(buf, "/convergence.svg'\n");
	CHECK_CONTAINS(buf, "set arrow from graph 0, first 0.5 to graph 1, first 0.5 nohead");
	CHECK(strstr(buf, "max latency") == NULL);   /* the search had no such bound */
	CHECK_CONTAINS(buf, "/lower.dat' using 1:2 with points");
	CHECK_CONTAINS(buf, "/infeasible.dat' using 1:2 with points");
	CHECK_CONTAINS(buf, "/front.dat' using 1:2 with linespoints");
	CHECK_CONTAINS(buf, "using 1:3 axes x1y2 with steps");
	/* Every result in exactly one series; the front by latency. */
	CHECK_STR(slurp_in(work, "front.dat", buf, sizeof(buf)),
	          "1.9999999999999999e-06 0.20000000000000001\n"
	          "1.0000000000000001e-05 0.10000000000000001\n");
	CHECK_EQ_INT(lines(slurp_in(work, "lower.dat", buf, sizeof(buf))), 1);
	CHECK_EQ_INT(lines(slurp_in(work, "top.dat", buf, sizeof(buf))), 1);
	CHECK_EQ_INT(lines(slurp_in(work, "infeasible.dat", buf, sizeof(buf))), 2);
	slurp_in(work, "convergence.dat", buf, sizeof(buf));
	CHECK_EQ_INT(lines(buf), 8);
	CHECK(strncmp(buf, "1 NaN 0\n2 NaN 0\n3 0.20000000000000001 ", 38) == 0);
	free(script);
	hml__search_results_release(&r);
	hml__store_free(s);
}

/* A search of MAPE: the front, the bound and the axes in it. */
TEST(mape_metric)
{
	hml__store *s = NULL;
	hml__search_results r;
	char id[16], work[600], *script = NULL, buf[8192];

	CHECK_OK(hml__store_open(&s, tmpdir, 1));
	search_metric = "mape";
	make_search(s, "{\"max_error\": 0.5, \"max_latency\": null, \"max_params\": 1000}", 2,
	            two_rungs, sizeof(two_rungs) / sizeof(two_rungs[0]), id);
	search_metric = NULL;
	load(s, id, &r);
	CHECK_STR(r.metric, "mape");
	CHECK_EQ_INT(r.nfront, 2);
	if (r.nfront == 2) {
		CHECK_EQ_INT(r.res[r.front[0]].trial, 3);
		CHECK_NEAR(r.res[r.front[0]].error, 0.1, 0);
	}
	CHECK_NEAR(hml__search_results_best(&r), 0.1, 0);
	snprintf(work, sizeof(work), "%s/work-%s", tmpdir, id);
	CHECK(mkdir(work, 0777) == 0);
	CHECK_OK(hml__search_plot_prepare(&script, &r, "s", work));
	slurp_in(work, "plot.gp", buf, sizeof(buf));
	CHECK_CONTAINS(buf, "set ylabel 'validation MAPE (%)'\n");
	CHECK_CONTAINS(buf, "set ylabel 'best validation MAPE (%) (top rung)'\n");
	free(script);
	hml__search_results_release(&r);
	hml__store_free(s);
}

static const ev_spec one_rung[] = {
	{ 0, 0, 0, OK, 0.02, 3e-7, 50 },
	{ 1, 1, 0, OK, 0.01, 9e-7, 90 },
};

TEST(bounds_and_empty)
{
	hml__store *s = NULL;
	hml__search_results r;
	char id[16], work[600], *script = NULL, buf[8192];

	CHECK_OK(hml__store_open(&s, tmpdir, 1));
	/* No rungs recorded: the top rung is the highest seen; a latency bound. */
	make_search(s, "{\"max_latency\": 5e-7}", 0, one_rung, 2, id);
	load(s, id, &r);
	CHECK_EQ_INT(r.top_rung, 0);
	CHECK_EQ_INT(r.nfront, 1);
	snprintf(work, sizeof(work), "%s/work-%s", tmpdir, id);
	CHECK(mkdir(work, 0777) == 0);
	CHECK_OK(hml__search_plot_prepare(&script, &r, "t", work));
	slurp_in(work, "plot.gp", buf, sizeof(buf));
	CHECK_CONTAINS(buf, "set arrow from first 4.9999999999999998e-07, graph 0 to first");
	CHECK(strstr(buf, "max error") == NULL);
	CHECK(strstr(buf, "lower.dat") == NULL);    /* an empty series is not plotted */
	free(script);
	hml__search_results_release(&r);
	/* A search with no result yet: nothing to plot. */
	make_search(s, "{}", 1, NULL, 0, id);
	load(s, id, &r);
	CHECK_EQ_INT(r.nres, 0);
	CHECK_EQ_INT(r.ended, 0);
	CHECK(isnan(hml__search_results_best(&r)));
	script = NULL;
	CHECK_FAILS(hml__search_plot_prepare(&script, &r, "t", work), HML_EINVALID,
	            "nothing to plot: no trial succeeded");
	CHECK(script == NULL);
	CHECK_FAILS(hml__search_plot_write(s, id), HML_EINVALID, "has no successful trial to plot");
	CHECK_FAILS(hml__search_plot_write(s, "s99"), HML_ENOTFOUND, "no search 's99'");
	hml__search_results_release(&r);
	hml__store_free(s);
}

/* A program named gnuplot in bin/ doing `body`. */
static void fake_gnuplot(const char *bin, const char *body)
{
	char path[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/gnuplot", bin);
	if (!(f = fopen(path, "w")))
		return;
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	chmod(path, 0755);
}

TEST(gnuplot_failures)
{
	char bin[600], script[700], log[700];
	char *saved = getenv("PATH") ? strdup(getenv("PATH")) : NULL;

	snprintf(bin, sizeof(bin), "%s/bin", tmpdir);
	snprintf(script, sizeof(script), "%s/plot.gp", tmpdir);
	snprintf(log, sizeof(log), "%s/gnuplot.log", tmpdir);
	CHECK(mkdir(bin, 0777) == 0);
	setenv("PATH", bin, 1);
	CHECK_FAILS(hml__search_plot_run(script, log), HML_ERROR,
	            "gnuplot is not installed (no 'gnuplot' on PATH)");
	fake_gnuplot(bin, "echo 'plot.gp line 3: unknown terminal' >&2\necho >&2\nexit 1");
	CHECK_FAILS(hml__search_plot_run(script, log), HML_ERROR,
	            "gnuplot failed (exit 1): plot.gp line 3: unknown terminal");
	fake_gnuplot(bin, "exit 0");
	CHECK_FAILS(hml__search_plot_run(script, log), HML_ERROR, "gnuplot made no 'front.png'");
	fake_gnuplot(bin, "cd \"${1%/*}\" && : >front.png && : >front.svg && : >convergence.png && "
	                  ": >convergence.svg");
	CHECK_OK(hml__search_plot_run(script, log));
	if (saved)
		setenv("PATH", saved, 1);
	free(saved);
}

int main(void)
{
	if (tmp_dir_make("search_plot") < 0)
		return 1;
	unsetenv("HML_LOCK_TIMEOUT");
	RUN(results);
	RUN(script);
	RUN(mape_metric);
	RUN(bounds_and_empty);
	RUN(gnuplot_failures);
	tmp_dir_remove();
	return check_report();
}
