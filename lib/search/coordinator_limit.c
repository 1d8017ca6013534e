/*
 * lib/search/coordinator_limit.c - the time limit (--time-limit): how long
 * a trial is expected to take, and whether it would end by the limit.
 */
#include <math.h>

#include "core/util.h"
#include "search/coordinator_private.h"

/* Seconds a trial at `rung` is expected to take: the longest of that rung
 * so far, ended ok or running (its time until now); with none, the longest
 * of another rung scaled up to this rung's epochs; NaN when nothing is
 * known. Conservative: a trial that would not end by the limit is not
 * started. On a worker that has run a trial (!cold), the trials that
 * warmed their workers up are left out while others are known. */
static double expected_seconds(const hml__coordinator *c, unsigned rung, int cold)
{
	double same = NAN, other = NAN, f = hml__sched_fraction(c->sched, rung), now = hml__now();

	for (size_t i = 0; i < c->nt; i++) {
		const hml__coord_trial *t = &c->t[i];

		if (t->end_status != HML__HIST_OK || !isfinite(t->seconds) || (t->cold && !cold))
			continue;
		if (t->rung == rung)
			same = fmax(same, t->seconds);   /* (fmax: NaN loses) */
		else
			other = fmax(other, t->seconds *
			                    fmax(1, f / hml__sched_fraction(c->sched, t->rung)));
	}
	for (int k = 0; c->wk && k < c->p->nworkers; k++) {
		const hml__coord_trial *t = c->wk[k].trial >= 0 ? &c->t[c->wk[k].trial] : NULL;

		if (t && t->rung == rung && (cold || !t->cold))
			same = fmax(same, now - c->wk[k].started);
	}
	if (isnan(same) && isnan(other) && !cold)
		return expected_seconds(c, rung, 1);
	return isnan(same) ? other : same;
}

/* Seconds trial i is expected to take: a promotion's own configuration at
 * a lower rung, scaled up to this rung's fidelity (the longest such; its
 * fixed costs, scaled too, keep it conservative), else expected_seconds().
 * The longest trial of any configuration judges only configurations not
 * yet timed: one wide configuration timed at rung 0 must not hold every
 * small one's promotion (a search of miniBUDE at benchmark size held all
 * of them behind a 5x252 trial and ended with an empty front). */
static double trial_expected_seconds(const hml__coordinator *c, long i, int cold)
{
	const hml__coord_trial *t = &c->t[i];
	double own = NAN, f = hml__sched_fraction(c->sched, t->rung);

	for (size_t j = 0; j < c->nt; j++) {
		const hml__coord_trial *u = &c->t[j];

		if (u->config == t->config && u->rung < t->rung && u->end_status == HML__HIST_OK &&
		    isfinite(u->seconds))
			own = fmax(own, u->seconds * fmax(1, f / hml__sched_fraction(c->sched, u->rung)));
	}
	return isnan(own) ? expected_seconds(c, t->rung, cold) : own;
}

int hml__coord_fits(const hml__coordinator *c, unsigned rung, long i, int k)
{
	double e;

	if (c->deadline <= 0)
		return 1;
	e = i >= 0 ? trial_expected_seconds(c, i, !c->wk[k].ran)
	           : expected_seconds(c, rung, !c->wk[k].ran);
	return hml__now() + (isnan(e) ? 0 : e) < c->deadline;
}

unsigned hml__coord_next_rung(const hml__coordinator *c)
{
	return c->nqueue ? c->t[c->queue[0]].rung : 0;
}

int hml__coord_past_deadline(const hml__coordinator *c)
{
	return c->deadline > 0 && hml__now() >= c->deadline;
}
