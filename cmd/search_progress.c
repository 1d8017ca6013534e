/*
 * hml search's progress on stderr (see cmd.h): the bar of a terminal, or
 * a plain line per finished configuration for a log file or a batch
 * job's output, through the coordinator's one progress callback.
 */
#include <math.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd.h"
#include "search/coordinator.h"
#include "search/duration.h"

struct search_progress {
	cmd_progress *bar;         /* a terminal */
	int lines;                 /* no terminal: a line when done or top moves */
	char id[16];
	char metric[16];           /* the error objective's key: val_rmse, val_mape */
	size_t done, top;          /* at the last line */
};

search_progress *search_progress_start(const char *id, long long budget, const char *metric)
{
	search_progress *sp;

	if (g_cmd.quiet || !(sp = calloc(1, sizeof(*sp))))
		return NULL;
	snprintf(sp->id, sizeof(sp->id), "%s", id);
	if (metric && strcmp(metric, "qoi_error") == 0)   /* an iterative application's */
		snprintf(sp->metric, sizeof(sp->metric), "%s", metric);
	else
		snprintf(sp->metric, sizeof(sp->metric), "val_%s", metric ? metric : "rmse");
	if (!(sp->bar = cmd_progress_start("search", (double)budget, 0)))
		sp->lines = !isatty(STDERR_FILENO);   /* its own lines, one per configuration */
	return sp;
}

static void draw_bar(search_progress *sp, const hml__coordinator_progress *p)
{
	char detail[200], ebuf[32], bbuf[32];

	snprintf(ebuf, sizeof(ebuf), isfinite(p->eta) ? "%.0f s" : "?", p->eta);
	snprintf(bbuf, sizeof(bbuf), isfinite(p->best) ? "%.3g" : "-", p->best);
	snprintf(detail, sizeof(detail), "%zu/%lld done, %zu running, %zu failed, best %s, "
	         "front %zu, %.0f s, ETA %s", p->done, p->budget, p->running, p->failed, bbuf,
	         p->front, p->elapsed, ebuf);
	cmd_progress_update(sp->bar, (double)p->done, detail);
}

/* The error's name as the progress reports it ("error" while it names
 * none). */
/* One line once a configuration's first trial or a top-rung trial ended;
 * the time left at the pace so far, or to the time limit when sooner. */
static void print_line(search_progress *sp, const hml__coordinator_progress *p)
{
	char best[32], elapsed[16], left[32], eta[48] = "";

	if (p->done == sp->done && p->top == sp->top)
		return;
	sp->done = p->done;
	sp->top = p->top;
	snprintf(best, sizeof(best), isfinite(p->best) ? "%.3g" : "-", p->best);
	hml__search_duration_format(elapsed, sizeof(elapsed), p->elapsed);
	hml__search_duration_format(left, sizeof(left), p->eta);
	if (isfinite(p->eta))
		snprintf(eta, sizeof(eta), p->eta >= p->time_left ? ", %s left to the time limit"
		                                                  : ", about %s left", left);
	cmd_info("search %s: %zu/%lld configurations, %zu trials, best %s %s, %s elapsed%s",
	         sp->id, p->done, p->budget, p->trials, sp->metric, best, elapsed, eta);
}

void search_progress_update(search_progress *sp, const hml__coordinator_progress *p)
{
	if (!sp)
		return;
	if (!p) {   /* the run loop ended: the bar goes, what follows is plain text */
		cmd_progress_end(sp->bar);
		sp->bar = NULL;
		sp->lines = 0;
	} else if (sp->bar)
		draw_bar(sp, p);
	else if (sp->lines)
		print_line(sp, p);
}

void search_progress_end(search_progress *sp)
{
	if (!sp)
		return;
	cmd_progress_end(sp->bar);
	free(sp);
}
