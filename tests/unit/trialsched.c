/*
 * tests/unit/trialsched.c - the scheduler of hml search: BO proposals and ASHA
 * promotions run to a complete search within the budget; replaying a
 * recorded history gives the same next decisions; constraints keep
 * infeasible results off the front without dropping them; failures; bad
 * arguments.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "search/opt/trialsched.h"

#define MAXEV 512

typedef struct event {
	int start;            /* 1 start, 0 end */
	size_t config;
	unsigned rung;
	double u[4];
	int failed;
	hml__sched_outcome o;
} event;

typedef struct sim {
	hml__sched *s;
	size_t dim;
	event ev[MAXEV];
	size_t nev;
	event run[4];         /* running trials, oldest first */
	int nrun;
	int workers;
	size_t fail_config;   /* this configuration fails at rung 0 */
} sim;

static hml__space *make_space(void)
{
	hml__space *sp = NULL;
	json_t *j = json_loads("{\"a\": {\"type\": \"float\", \"low\": 0, \"high\": 1},"
	                       " \"b\": {\"type\": \"float\", \"low\": 0.001, \"high\": 1, \"log\": true},"
	                       " \"c\": {\"type\": \"choice\", \"values\": [1, 2, 4]}}", 0, NULL);

	CHECK_OK(hml__space_parse(&sp, j, "test"));
	json_decref(j);
	return sp;
}

/* A made-up trial: better with more epochs, slower and bigger with a. */
static hml__sched_outcome outcome(const double *u, double fraction)
{
	hml__sched_outcome o = { 0 };

	o.val_rmse = (0.05 + (u[0] - 0.3) * (u[0] - 0.3) + (u[1] - 0.6) * (u[1] - 0.6)) /
	             (1.0 + fraction);
	o.latency_s = 1e-7 * (1.0 + 4.0 * u[0]);
	o.params = floor(100.0 + 1000.0 * u[0]);
	return o;
}

/* Fill free workers, then end the oldest running trial. Returns what next() said last. */
static int step(sim *m)
{
	hml__sched_trial t;
	int rc = 1;

	while (m->nrun < m->workers && (rc = hml__sched_next(m->s, &t)) == 1) {
		event *e = &m->run[m->nrun++];

		memset(e, 0, sizeof(*e));
		e->start = 1;
		e->config = t.config;
		e->rung = t.rung;
		memcpy(e->u, t.u, m->dim * sizeof(double));
		e->o = outcome(t.u, t.fraction);
		e->failed = t.config == m->fail_config && t.rung == 0;
		if (m->nev < MAXEV)
			m->ev[m->nev++] = *e;
	}
	if (rc < 0 || m->nrun == 0)
		return rc;
	{
		event e = m->run[0];

		memmove(m->run, m->run + 1, (size_t)(m->nrun - 1) * sizeof(event));
		m->nrun--;
		e.start = 0;
		if (e.failed)
			CHECK_OK(hml__sched_fail(m->s, e.config, e.rung));
		else
			CHECK_OK(hml__sched_report(m->s, e.config, e.rung, &e.o));
		if (m->nev < MAXEV)
			m->ev[m->nev++] = e;
	}
	return rc;
}

static hml__sched *new_sched(const hml__space *sp, size_t budget, double max_params)
{
	hml__sched_options o = HML__SCHED_OPTIONS_INIT;
	hml__sched *s = NULL;

	o.space = sp;
	o.seed = 11;
	o.budget = budget;
	o.rungs = 2;
	o.max_params = max_params;
	CHECK_OK(hml__sched_new(&s, &o));
	return s;
}

TEST(complete_search)
{
	hml__space *sp = make_space();
	sim *m = calloc(1, sizeof(*m));
	size_t configs[64], promoted = 0;
	hml__sched_outcome out[64];
	long nf;
	int rc, guard = 0;

	m->s = new_sched(sp, 14, 0);
	m->dim = hml__space_dim(sp);
	m->workers = 2;
	m->fail_config = 3;
	CHECK_EQ_INT(hml__sched_rungs(m->s), 2);
	CHECK_NEAR(hml__sched_fraction(m->s, 0), 1.0 / 3.0, 1e-12);
	CHECK_NEAR(hml__sched_fraction(m->s, 1), 1.0, 0);
	while ((rc = step(m)) != 2 && rc >= 0 && guard++ < 200)
		;
	CHECK_EQ_INT(rc, 2);
	CHECK_EQ_INT(hml__sched_configs(m->s), 14);
	CHECK_EQ_INT(hml__sched_running(m->s), 0);
	CHECK_EQ_INT(hml__sched_failed(m->s), 1);
	for (size_t i = 0; i < m->nev; i++)
		promoted += m->ev[i].start && m->ev[i].rung == 1;
	/* ASHA moves (at least) the best third of 13 finished rung-0 results
	 * up; asynchronously, an early leader may have been promoted too. */
	CHECK(promoted >= 13 / 3 && promoted <= 13 / 2);
	CHECK_EQ_INT(hml__sched_ended(m->s), 14 + promoted);
	nf = hml__sched_front(m->s, configs, out);
	CHECK(nf >= 1 && nf <= (long)promoted);
	for (long j = 1; j < nf; j++)   /* sorted by error, latency falling */
		CHECK(out[j].val_rmse >= out[j - 1].val_rmse && out[j].latency_s < out[j - 1].latency_s);
	CHECK(hml__sched_best_error(m->s) == out[0].val_rmse);
	hml__sched_free(m->s);
	free(m);
	hml__space_free(sp);
}

/* Stop a search part-way, replay its events into a new scheduler, and
 * both continue with the same decisions. */
TEST(replay_determinism)
{
	hml__space *sp = make_space();
	sim *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	hml__sched_trial ta, tb;

	a->s = new_sched(sp, 20, 0);
	a->dim = hml__space_dim(sp);
	a->workers = 2;
	a->fail_config = 5;
	for (int i = 0; i < 12; i++)
		step(a);
	/* Replay the events (starts and ends, in order) into b. */
	b->s = new_sched(sp, 20, 0);
	for (size_t i = 0; i < a->nev; i++) {
		const event *e = &a->ev[i];

		if (e->start)
			CHECK_OK(hml__sched_start(b->s, e->config, e->rung, e->u));
		else if (e->failed)
			CHECK_OK(hml__sched_fail(b->s, e->config, e->rung));
		else
			CHECK_OK(hml__sched_report(b->s, e->config, e->rung, &e->o));
	}
	CHECK_EQ_INT(hml__sched_configs(b->s), hml__sched_configs(a->s));
	CHECK_EQ_INT(hml__sched_running(b->s), hml__sched_running(a->s));
	/* The running trials end in both; then the next decisions agree. */
	for (int k = 0; k < a->nrun; k++) {
		const event *e = &a->run[k];

		if (e->failed) {
			CHECK_OK(hml__sched_fail(a->s, e->config, e->rung));
			CHECK_OK(hml__sched_fail(b->s, e->config, e->rung));
		} else {
			CHECK_OK(hml__sched_report(a->s, e->config, e->rung, &e->o));
			CHECK_OK(hml__sched_report(b->s, e->config, e->rung, &e->o));
		}
	}
	for (int k = 0; k < 6; k++) {
		int ra = hml__sched_next(a->s, &ta), rb = hml__sched_next(b->s, &tb);

		CHECK_EQ_INT(ra, rb);
		if (ra != 1 || rb != 1)
			break;
		CHECK_EQ_INT(ta.config, tb.config);
		CHECK_EQ_INT(ta.rung, tb.rung);
		CHECK(memcmp(ta.u, tb.u, a->dim * sizeof(double)) == 0);
		{
			hml__sched_outcome o = outcome(ta.u, ta.fraction);

			CHECK_OK(hml__sched_report(a->s, ta.config, ta.rung, &o));
			CHECK_OK(hml__sched_report(b->s, tb.config, tb.rung, &o));
		}
	}
	/* Out of order replays are refused. */
	CHECK_FAILS(hml__sched_start(b->s, 99, 0, ta.u), HML_EINVALID, "starts out of order");
	CHECK_FAILS(hml__sched_start(b->s, 999, 1, ta.u), HML_EINVALID, "promoted before");
	hml__sched_free(a->s);
	hml__sched_free(b->s);
	free(a);
	free(b);
	hml__space_free(sp);
}

TEST(constraints)
{
	hml__space *sp = make_space();
	sim *m = calloc(1, sizeof(*m));
	size_t configs[64];
	hml__sched_outcome out[64], big = { 0.1, 1e-7, 900, NAN, NAN }, small = { 0.1, 1e-7, 300, NAN, NAN };
	long nf;
	int guard = 0;

	m->s = new_sched(sp, 16, 500);
	m->dim = hml__space_dim(sp);
	m->workers = 1;
	m->fail_config = (size_t)-1;
	CHECK(!hml__sched_feasible(m->s, &big));
	CHECK(hml__sched_feasible(m->s, &small));
	while (step(m) != 2 && guard++ < 200)
		;
	CHECK_EQ_INT(hml__sched_configs(m->s), 16);
	/* Every result counts (none dropped); the front holds feasible ones only. */
	CHECK_EQ_INT(hml__sched_failed(m->s), 0);
	nf = hml__sched_front(m->s, configs, out);
	for (long j = 0; j < nf; j++)
		CHECK(out[j].params <= 500);
	hml__sched_free(m->s);
	free(m);
	hml__space_free(sp);
}

/* A budget too small for ASHA to reach the top rung still ends with a
 * fully trained configuration on the front. */
TEST(small_budget_reaches_top)
{
	hml__space *sp = make_space();
	hml__sched_options o = HML__SCHED_OPTIONS_INIT;
	sim *m = calloc(1, sizeof(*m));
	size_t configs[16];
	int guard = 0, rc;

	o.space = sp;
	o.seed = 2;
	o.budget = 3;
	o.rungs = 3;
	CHECK_OK(hml__sched_new(&m->s, &o));
	m->dim = hml__space_dim(sp);
	m->workers = 2;
	m->fail_config = (size_t)-1;
	while ((rc = step(m)) != 2 && rc >= 0 && guard++ < 100)
		;
	CHECK_EQ_INT(rc, 2);
	CHECK_EQ_INT(hml__sched_configs(m->s), 3);
	CHECK_EQ_INT(hml__sched_front(m->s, configs, NULL), 1);
	CHECK(!isnan(hml__sched_best_error(m->s)));
	hml__sched_free(m->s);
	free(m);
	hml__space_free(sp);
}

/* A trial with its own latency bound (an iterative search's k) is judged
 * against it, not against max_latency: feasible at 3 us under its bound
 * of 4 us with max_latency 1 us, infeasible at 3 us under 2 us. */
TEST(per_trial_latency_bound)
{
	hml__space *sp = make_space();
	hml__sched_options o = HML__SCHED_OPTIONS_INIT;
	hml__sched *s = NULL;
	hml__sched_outcome own = { 0.1, 3e-6, 10, NAN, 4e-6 }, tight = own, none = own;

	tight.latency_bound = 2e-6;
	none.latency_bound = NAN;
	o.space = sp;
	o.budget = 3;
	o.max_latency = 1e-6;
	CHECK_OK(hml__sched_new(&s, &o));
	CHECK(hml__sched_feasible(s, &own));
	CHECK(!hml__sched_feasible(s, &tight));
	CHECK(!hml__sched_feasible(s, &none));   /* max_latency's */
	none.latency_s = 0.5e-6;
	CHECK(hml__sched_feasible(s, &none));
	hml__sched_free(s);
	hml__space_free(sp);
}

TEST(bad_arguments)
{
	hml__space *sp = make_space();
	hml__sched_options o = HML__SCHED_OPTIONS_INIT;
	hml__sched *s = NULL;
	hml__sched_outcome bad = { NAN, 1e-6, 10, NAN, NAN };
	hml__sched_trial t;

	o.space = sp;
	CHECK_FAILS(hml__sched_new(&s, &o), HML_EINVALID, "budget must be at least 1");
	o.budget = 3;
	o.max_latency = -1;
	CHECK_FAILS(hml__sched_new(&s, &o), HML_EINVALID, "constraint bound");
	o.max_latency = 0;
	o.rungs = 0;
	CHECK_FAILS(hml__sched_new(&s, &o), HML_EINVALID, "rungs");
	o.rungs = 1;
	CHECK_OK(hml__sched_new(&s, &o));
	CHECK_FAILS(hml__sched_report(s, 0, 0, &bad), HML_EINVALID, "is not running");
	CHECK_EQ_INT(hml__sched_next(s, &t), 1);
	CHECK_NEAR(t.fraction, 1.0, 0);
	CHECK_FAILS(hml__sched_report(s, 0, 0, &bad), HML_EINVALID, "not finite");
	CHECK_OK(hml__sched_fail(s, 0, 0));
	CHECK_FAILS(hml__sched_fail(s, 0, 0), HML_EINVALID, "is not running");
	hml__sched_free(s);
	hml__space_free(sp);
}

int main(void)
{
	RUN(complete_search);
	RUN(replay_determinism);
	RUN(constraints);
	RUN(small_budget_reaches_top);
	RUN(per_trial_latency_bound);
	RUN(bad_arguments);
	return check_report();
}
