/*
 * tests/unit/coordinator.c - the search coordinator driven by a fake worker
 * pool: ASHA's promotions run in the order the scheduler decides, and only
 * the better configurations of a rung; a failed, a timed-out and a crashed
 * trial are recorded with their status while the search goes on and the
 * budget counts them; the scheduler holds the running trials' points
 * (constant liar) and new suggestions differ from them; a search
 * interrupted and resumed runs no trial twice and each trial left running
 * once more; several workers answering out of order never exceed the
 * budget; --deterministic gives the same trials whatever the order; a
 * time limit starts no trial that would not end by it, and the search it
 * stops resumes to its end.
 *
 * The fake pool answers a trial at once with metrics computed from its
 * options (val_rmse from the width of its arch, its learning rate and its
 * epochs; latency increasing with val_rmse, so ASHA's ranking is by
 * error), and can fail, crash or hang a chosen trial. Its answers are
 * delivered a few at a time, in an order drawn from a seed; with a time per
 * epoch, each answer comes only once its trial's epochs would have run.
 */
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "core/rng.h"
#include "core/util.h"
#include "deploy/latency.h"
#include "fixtures.h"
#include "search/coordinator.h"
#include "search/opt/trialsched.h"
#include "search/wire.h"

#define MAXW 8
#define MAXQ 512
#define MAXT 256


/* ---- the fake pool ------------------------------------------------------ */

typedef struct fake_event {
	int worker;
	int lost;
	json_t *msg;              /* owned */
	double due;               /* hml__now() from which it is delivered */
} fake_event;

typedef struct fake_pool {
	int n;
	int alive[MAXW];
	long running[MAXW];       /* the trial each worker runs, -1 */
	fake_event q[MAXQ];
	size_t nq;
	uint64_t rng;             /* 0: answers in order; else drawn from it */
	long fail, crash, hang;   /* the trial that fails, crashes, hangs (-1: none) */
	size_t stop_after;        /* set *flag after this many results (0: never) */
	volatile sig_atomic_t *flag;
	size_t results;           /* results delivered */
	int starts, stops;
	int max_inflight;         /* most trials running at once */
	long sent[MAXT];          /* trials sent, in order */
	double sent_at[MAXT];     /* ... when (hml__now()) */
	int sent_epochs[MAXT];    /* ... and their epochs */
	double sent_rows[MAXT];   /* ... row fraction */
	int sent_lat_threads[MAXT];   /* ... and latency threads */
	size_t nsent;
	double epoch_s;           /* a trial's answer waits epochs x this (0: none) */
	long slow;                /* the trial whose answer waits slow_x times longer (-1: none) */
	double slow_x;
	double due;               /* the next answer's due time */
	/* the constant-liar check, at each trial sent (coordinator set) */
	hml__coordinator *c;
	int liar_bad, liar_checked, liar_parallel;
} fake_pool;

static void fake_init(fake_pool *f, int n, uint64_t rng)
{
	memset(f, 0, sizeof(*f));
	f->n = n;
	f->rng = rng;
	f->fail = f->crash = f->hang = f->slow = -1;
	for (int k = 0; k < MAXW; k++)
		f->running[k] = -1;
}

static void fake_release(fake_pool *f)
{
	for (size_t i = 0; i < f->nq; i++)
		json_decref(f->q[i].msg);
	f->nq = 0;
}

static void push(fake_pool *f, int k, int lost, json_t *msg)
{
	if (f->nq < MAXQ)
		f->q[f->nq++] = (fake_event){ k, lost, msg, f->due };
	else
		json_decref(msg);
}

static int inflight(const fake_pool *f)
{
	int n = 0;

	for (int k = 0; k < f->n; k++)
		n += f->running[k] >= 0;
	return n;
}

/* The trial's metrics: a deterministic function of its options. */
static void answer(const hml__train_options *o, hml__train_result *r)
{
	int width = atoi(o->arch + strcspn(o->arch, "0123456789"));

	memset(r, 0, sizeof(*r));
	snprintf(r->arch, sizeof(r->arch), "%s", o->arch);
	r->val_rmse = 0.1 + 0.05 * pow(log10(o->lr) + 2.5, 2) + 8.0 / width + 1.0 / o->epochs;
	r->test_rmse = r->val_rmse * 1.1;
	r->latency_s_per_sample = r->val_rmse * 1e-6;
	r->latency_batch = 64;
	r->params = (int64_t)width * width;
	r->epochs_run = o->epochs;
}

/* The scheduler holds every trial running at a worker (this one too), and
 * a new configuration's point is none of theirs. */
static void check_liar(fake_pool *f, long trial)
{
	hml__coordinator_trial t, other;

	if (!f->c || hml__coordinator_trial_at(&t, f->c, (size_t)trial) < 0)
		return;
	f->liar_checked++;
	if (hml__coordinator_running(f->c) != (size_t)inflight(f))
		f->liar_bad++;
	if (t.rung != 0)
		return;
	f->liar_parallel += inflight(f) > 1;
	for (int k = 0; k < f->n; k++) {
		double d = 0;

		if (f->running[k] < 0 || f->running[k] == trial ||
		    hml__coordinator_trial_at(&other, f->c, (size_t)f->running[k]) < 0)
			continue;
		for (size_t j = 0; j < t.dim; j++)
			d += fabs(t.u[j] - other.u[j]);
		if (d < 1e-9)
			f->liar_bad++;
	}
}

static int fake_start(void *pool, int k)
{
	fake_pool *f = pool;

	f->alive[k] = 1;
	f->running[k] = -1;
	f->starts++;
	return 0;
}

static int fake_send(void *pool, int k, const json_t *msg)
{
	fake_pool *f = pool;
	hml__train_options o = HML__TRAIN_OPTIONS_INIT;
	hml__train_result r;
	const char *out;
	long trial;

	if (!f->alive[k])
		return HML_EIO;
	if (strcmp(hml__wire_type(msg), "init") == 0) {
		push(f, k, 0, hml__wire_ready(100));
		return 0;
	}
	if (hml__wire_trial_read(msg, &trial, &out, &o) < 0)
		return HML_EINVALID;
	f->running[k] = trial;
	if (f->nsent < MAXT) {
		f->sent_at[f->nsent] = hml__now();
		f->sent_epochs[f->nsent] = o.epochs;
		f->sent_rows[f->nsent] = o.row_fraction;
		f->sent_lat_threads[f->nsent] = o.latency_threads;
		f->sent[f->nsent++] = trial;
	}
	if (inflight(f) > f->max_inflight)
		f->max_inflight = inflight(f);
	check_liar(f, trial);
	if (trial == f->hang)
		return 0;   /* never answers: --trial-timeout kills it */
	if (trial == f->crash) {
		push(f, k, 1, NULL);
		return 0;
	}
	if (trial == f->fail) {
		push(f, k, 0, hml__wire_result(trial, "training diverged", NULL));
		return 0;
	}
	answer(&o, &r);
	f->due = f->epoch_s > 0 ? hml__now() + f->epoch_s * o.epochs * (trial == f->slow ? f->slow_x : 1) : 0;
	push(f, k, 0, hml__wire_result(trial, NULL, &r));
	f->due = 0;
	return 0;
}

static uint64_t next_rand(uint64_t *s)
{
	return hml__rng_lcg(s) >> 33;
}

/* The answers due at `now`, and the index of the j-th of them. */
static size_t due_count(const fake_pool *f, double now)
{
	size_t n = 0;

	for (size_t i = 0; i < f->nq; i++)
		n += f->q[i].due <= now;
	return n;
}

static size_t due_index(const fake_pool *f, size_t j, double now)
{
	size_t i = 0;

	for (; i < f->nq; i++)
		if (f->q[i].due <= now && j-- == 0)
			break;
	return i;
}

/* A few of the queued answers that are due (one to three; in order, or drawn), else a
 * short wait on `wake` (the history's sync). */
static int fake_wait(void *pool, double timeout_s, int wake, hml__pool_event_fn fn,
                     void *payload)
{
	fake_pool *f = pool;
	size_t n = f->rng ? 1 + next_rand(&f->rng) % 3 : 1, ready;
	double now = hml__now(), next = now + 0.05;
	int rc = 0;

	for (size_t i = 0; i < f->nq; i++)
		next = fmin(next, f->q[i].due);
	if (!(ready = due_count(f, now))) {
		struct pollfd pf = { wake, POLLIN, 0 };

		poll(&pf, 1, (int)ceil(fmax(0, fmin(timeout_s, next - now)) * 1e3));
		return 0;
	}
	for (size_t d = 0; d < n && (ready = due_count(f, now)) && rc == 0; d++) {
		size_t i = due_index(f, f->rng ? next_rand(&f->rng) % ready : 0, now);
		fake_event e = f->q[i];
		hml__pool_event ev = { e.worker, e.lost ? HML__POOL_LOST : HML__POOL_MESSAGE,
		                       e.msg, NULL };

		memmove(&f->q[i], &f->q[i + 1], (f->nq - i - 1) * sizeof(f->q[0]));
		f->nq--;
		if (!e.lost && strcmp(hml__wire_type(e.msg), "result") == 0) {
			f->running[e.worker] = -1;
			f->results++;
		}
		rc = fn(payload, &ev);
		json_decref(e.msg);
		/* SIGINT after this result: the answers after it are not seen */
		if (f->stop_after && f->results == f->stop_after)
			*f->flag = 1;
	}
	return rc;
}

static void fake_stop(void *pool, int k, char *why, size_t size)
{
	fake_pool *f = pool;
	size_t j = 0;

	if (why && size)
		snprintf(why, size, "%s", f->running[k] >= 0 && f->running[k] == f->crash
		                          ? "killed by SIGABRT" : "killed by SIGKILL");
	if (!f->alive[k])
		return;
	f->alive[k] = 0;
	f->running[k] = -1;
	f->stops++;
	for (size_t i = 0; i < f->nq; i++) {   /* a killed worker's output is gone */
		if (f->q[i].worker == k)
			json_decref(f->q[i].msg);
		else
			f->q[j++] = f->q[i];
	}
	f->nq = j;
}

static const hml__pool_ops fake_ops = { fake_start, fake_send, fake_wait, fake_stop };

/* ---- a search ----------------------------------------------------------- */

static const char *SPACE =
	"{\"width\": {\"type\": \"choice\", \"values\": [8, 16, 32, 64]},"
	" \"lr\": {\"type\": \"float\", \"low\": 0.0001, \"high\": 0.1, \"log\": true}}";

/* A plan as hml__search_plan_new() makes one, in DIR/<name>, without an
 * experiment: max_epochs 3 gives 2 rungs (1 and 3 epochs), 1 gives one. */
static void plan_init(hml__search_plan *p, const char *name, int workers, long long budget,
                      int max_epochs)
{
	char dir[700];
	json_error_t je;

	memset(p, 0, sizeof(*p));
	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, name);
	mkdir(dir, 0755);
	snprintf(p->id, sizeof(p->id), "s1");
	p->dir = strdup(dir);
	p->region = "r";
	p->workflow_name = "wf";
	p->family = "mlp";
	p->space_json = json_loads(SPACE, 0, &je);
	CHECK_OK(hml__space_parse(&p->space, p->space_json, "test"));
	p->base = (hml__train_options)HML__TRAIN_OPTIONS_INIT;
	p->base.epochs = p->max_epochs = max_epochs;
	p->target = HML__TARGET_TORCHSCRIPT;
	p->rungs = max_epochs >= 3 ? 2 : 1;
	p->budget = budget;
	p->seed = 7;
	p->trial_timeout = NAN;
	p->nworkers = workers;
	p->threads = 1;
}

typedef struct warnings {
	char text[4096];
} warnings;

static void on_warn(void *payload, const char *message)
{
	warnings *w = payload;
	size_t n = strlen(w->text);

	snprintf(w->text + n, sizeof(w->text) - n, "%s\n", message);
}

/* Run the plan on f to its end (or the flag): the coordinator, for the
 * caller to read and free. */
static hml__coordinator *run_limited(const hml__search_plan *p, fake_pool *f,
                                     volatile sig_atomic_t *flag, warnings *w, int want,
                                     double time_limit)
{
	hml__coordinator_options o = HML__COORDINATOR_OPTIONS_INIT;
	hml__coordinator *c = NULL;

	o.time_limit = time_limit;
	o.plan = p;
	o.pool_ops = &fake_ops;
	o.pool = f;
	o.interrupted = flag;
	o.warn = on_warn;
	o.payload = w;
	CHECK_OK(hml__coordinator_new(&c, &o));
	if (!c)
		return NULL;
	f->c = c;
	CHECK_OK(hml__coordinator_replay(c));
	CHECK_EQ_INT(hml__coordinator_run(c), want);
	return c;
}

static hml__coordinator *run(const hml__search_plan *p, fake_pool *f,
                             volatile sig_atomic_t *flag, warnings *w, int want)
{
	return run_limited(p, f, flag, w, want, 0);
}

/* The history's lines, counted per trial. */
typedef struct hist_counts {
	int starts[MAXT], ends[MAXT], reruns[MAXT];
	hml__hist_status status[MAXT];
	char error[MAXT][128];
	long n;                   /* 1 + the highest trial seen */
} hist_counts;

static int count_event(const hml__hist_event *ev, void *payload)
{
	hist_counts *h = payload;

	if (ev->trial < 0 || ev->trial >= MAXT)
		return HML_EINVALID;
	if (ev->trial + 1 > h->n)
		h->n = ev->trial + 1;
	switch (ev->status) {
	case HML__HIST_RUNNING:
		h->starts[ev->trial]++;
		break;
	case HML__HIST_RERUN:
		h->reruns[ev->trial]++;
		break;
	case HML__HIST_KEPT:
		break;
	default:
		h->ends[ev->trial]++;
		h->status[ev->trial] = ev->status;
		snprintf(h->error[ev->trial], sizeof(h->error[0]), "%s", ev->error ? ev->error : "");
	}
	return 0;
}

static void read_history(const hml__search_plan *p, hist_counts *h)
{
	char path[800];

	memset(h, 0, sizeof(*h));
	snprintf(path, sizeof(path), "%s/%s", p->dir, HML__HISTORY_FILE);
	CHECK_OK(hml__history_read(path, count_event, h, NULL));
}

/* Every trial started once and ended once, as the coordinator says. */
static void check_whole(const hml__coordinator *c, const hist_counts *h)
{
	hml__coordinator_counts n;

	hml__coordinator_counts_of(&n, c);
	CHECK_EQ_INT(h->n, (long)n.trials);
	for (long i = 0; i < h->n; i++) {
		hml__coordinator_trial t;

		CHECK_EQ_INT(h->starts[i], 1);
		CHECK_EQ_INT(h->ends[i], 1);
		CHECK_OK(hml__coordinator_trial_at(&t, c, (size_t)i));
		CHECK_EQ_INT(t.status, h->status[i]);
	}
}

/* ---- the tests ---------------------------------------------------------- */

/* One worker: the coordinator runs exactly the scheduler's decisions (a
 * second scheduler told the same outcomes decides the same trials, in the
 * same order), and each promotion takes a configuration from the best
 * third of those its rung had finished. */
TEST(promotion_order)
{
	hml__search_plan p;
	fake_pool f;
	warnings w = { "" };
	hml__coordinator *c;
	hml__coordinator_counts n;
	hml__sched_options so = HML__SCHED_OPTIONS_INIT;
	hml__sched *s = NULL;
	hist_counts h;
	double rung0[MAXT];
	size_t nrung0 = 0, promotions = 0;

	plan_init(&p, "order", 1, 9, 3);
	fake_init(&f, 1, 0);
	if (!(c = run(&p, &f, NULL, &w, 0)))
		goto done;
	hml__coordinator_counts_of(&n, c);
	CHECK_EQ_INT(n.configs, 9);
	CHECK_EQ_INT(n.failed, 0);
	CHECK_EQ_INT(n.ok, n.trials);
	CHECK(n.trials > 9);   /* some were promoted */
	read_history(&p, &h);
	check_whole(c, &h);
	so.space = p.space;
	so.seed = (uint64_t)p.seed;
	so.budget = (size_t)p.budget;
	so.rungs = p.rungs;
	CHECK_OK(hml__sched_new(&s, &so));
	for (size_t i = 0; s && i < n.trials; i++) {
		hml__coordinator_trial t;
		hml__sched_trial next;
		hml__sched_outcome out;

		CHECK_OK(hml__coordinator_trial_at(&t, c, i));
		CHECK_EQ_INT(hml__sched_next(s, &next), 1);
		CHECK_EQ_INT(next.config, t.config);
		CHECK_EQ_INT(next.rung, t.rung);
		CHECK_EQ_INT(t.epochs, t.rung == 0 ? 1 : 3);
		CHECK_EQ_INT(t.status, HML__HIST_OK);
		if (t.rung == 1) {
			/* among the best third of the rung-0 results so far */
			size_t better = 0;
			hml__coordinator_trial first;

			for (size_t j = 0; j < i; j++)
				if (hml__coordinator_trial_at(&first, c, j) == 0 && first.config == t.config &&
				    first.rung == 0)
					break;
			for (size_t k = 0; k < nrung0; k++)
				better += rung0[k] < first.m.val_rmse;
			CHECK(better < nrung0 / 3);
			promotions++;
		} else {
			rung0[nrung0++] = t.m.val_rmse;
		}
		out = (hml__sched_outcome){ t.m.val_rmse, t.m.latency_s, (double)t.m.params,
		                            hml__hist_cost(&t.m), t.m.latency_bound };
		CHECK_OK(hml__sched_report(s, (size_t)t.config, t.rung, &out));
	}
	if (s) {
		hml__sched_trial next;

		CHECK_EQ_INT(hml__sched_next(s, &next), 2);   /* and nothing more */
	}
	CHECK(promotions >= 1 && promotions == n.trials - 9);
	CHECK_STR(w.text, "");
	hml__sched_free(s);
	hml__coordinator_free(c);
done:
	fake_release(&f);
	hml__search_plan_release(&p);
}

/* A failed, a crashed and a hung trial: each recorded with its status and
 * why, its worker replaced where it died or was killed; the search goes on
 * and still starts exactly its budget of configurations. */
TEST(failed_and_timed_out)
{
	hml__search_plan p;
	fake_pool f;
	warnings w = { "" };
	hml__coordinator *c;
	hml__coordinator_counts n;
	hml__coordinator_trial t;
	hist_counts h;

	plan_init(&p, "fail", 2, 8, 1);
	p.trial_timeout = 0.3;
	fake_init(&f, 2, 11);
	f.fail = 1;
	f.crash = 3;
	f.hang = 4;
	if (!(c = run(&p, &f, NULL, &w, 0)))
		goto done;
	hml__coordinator_counts_of(&n, c);
	CHECK_EQ_INT(n.configs, 8);
	CHECK_EQ_INT(n.trials, 8);
	CHECK_EQ_INT(n.failed, 3);
	CHECK_EQ_INT(n.ok, 5);
	read_history(&p, &h);
	check_whole(c, &h);
	CHECK_EQ_INT(h.status[1], HML__HIST_FAILED);
	CHECK_STR(h.error[1], "training diverged");
	CHECK_EQ_INT(h.status[3], HML__HIST_CRASHED);
	CHECK_CONTAINS(h.error[3], "killed by SIGABRT");
	CHECK_EQ_INT(h.status[4], HML__HIST_TIMEOUT);
	CHECK_CONTAINS(h.error[4], "no result within --trial-timeout 0.3 s");
	for (long i = 0; i < 8; i++)
		if (i != 1 && i != 3 && i != 4)
			CHECK_EQ_INT(h.status[i], HML__HIST_OK);
	CHECK_OK(hml__coordinator_trial_at(&t, c, 4));
	CHECK_EQ_INT(t.status, HML__HIST_TIMEOUT);
	/* two workers at first, two replacements, all stopped at the end */
	CHECK_EQ_INT(f.starts, 4);
	CHECK_EQ_INT(f.stops, 4);
	CHECK_CONTAINS(w.text, "trial 3 crashed: worker ");
	CHECK_CONTAINS(w.text, "trial 4 timeout: no result within --trial-timeout 0.3 s; worker ");
	CHECK(strstr(w.text, "trial 1 ") == NULL);   /* a failure is no loss */
	hml__coordinator_free(c);
done:
	fake_release(&f);
	hml__search_plan_release(&p);
}

/* Four workers, one rung: every trial is a new suggestion. Whenever one is
 * sent, the scheduler counts exactly the trials at the workers as running
 * (the pending points the optimiser lies about), and the new point is none
 * of theirs. */
TEST(constant_liar)
{
	hml__search_plan p;
	fake_pool f;
	warnings w = { "" };
	hml__coordinator *c;
	hml__coordinator_counts n;

	plan_init(&p, "liar", 4, 16, 1);
	fake_init(&f, 4, 5);
	if (!(c = run(&p, &f, NULL, &w, 0)))
		goto done;
	hml__coordinator_counts_of(&n, c);
	CHECK_EQ_INT(n.configs, 16);
	CHECK_EQ_INT(f.liar_checked, 16);
	CHECK_EQ_INT(f.liar_bad, 0);
	CHECK(f.liar_parallel >= 8);   /* most suggestions had others pending */
	CHECK(f.max_inflight >= 3);
	hml__coordinator_free(c);
done:
	fake_release(&f);
	hml__search_plan_release(&p);
}

/* Interrupted after 5 results with trials running, then resumed from its
 * history by a new coordinator: the trials that ended are not run again,
 * each that was running runs once more (a "rerun" line first), and the
 * counts are those of one whole search. */
TEST(resume_replay)
{
	hml__search_plan p;
	fake_pool f;
	warnings w = { "" };
	volatile sig_atomic_t flag = 0;
	hml__coordinator *c;
	hml__coordinator_counts n;
	hist_counts h1, h2;
	int left = 0;

	plan_init(&p, "resume", 3, 10, 3);
	fake_init(&f, 3, 3);
	f.stop_after = 5;
	f.flag = &flag;
	if (!(c = run(&p, &f, &flag, &w, 1)))
		goto done;
	hml__coordinator_free(c);
	fake_release(&f);
	read_history(&p, &h1);
	for (long i = 0; i < h1.n; i++) {
		CHECK_EQ_INT(h1.starts[i], 1);
		left += h1.ends[i] == 0;
	}
	CHECK(left >= 1);   /* trials were running when it stopped */
	CHECK_EQ_INT(h1.n - left, 5);

	flag = 0;
	fake_init(&f, 3, 4);
	if (!(c = run(&p, &f, &flag, &w, 0)))
		goto done;
	read_history(&p, &h2);
	check_whole(c, &h2);
	for (long i = 0; i < h1.n; i++) {
		int sent = 0;

		for (size_t k = 0; k < f.nsent; k++)
			sent += f.sent[k] == i;
		CHECK_EQ_INT(sent, h1.ends[i] ? 0 : 1);   /* ended: never again; running: once */
		CHECK_EQ_INT(h2.reruns[i], h1.ends[i] ? 0 : 1);
	}
	hml__coordinator_counts_of(&n, c);
	CHECK_EQ_INT(n.configs, 10);
	CHECK_EQ_INT(n.reruns, left);
	CHECK_EQ_INT(n.ok, n.trials);
	CHECK_EQ_INT(n.session_trials, n.trials - 5);
	hml__coordinator_free(c);
done:
	fake_release(&f);
	hml__search_plan_release(&p);
}

/* Four workers answering out of order, a few at a time: never more trials
 * at once than workers, exactly the budget of configurations, every
 * promotion of one that ended at the rung below. */
TEST(budget_never_exceeded)
{
	for (uint64_t seed = 1; seed <= 3; seed++) {
		hml__search_plan p;
		fake_pool f;
		warnings w = { "" };
		hml__coordinator *c;
		hml__coordinator_counts n;
		hist_counts h;
		char name[32];
		size_t configs = 0;

		snprintf(name, sizeof(name), "budget%u", (unsigned)seed);
		plan_init(&p, name, 4, 11, 3);
		fake_init(&f, 4, seed * 977);
		if ((c = run(&p, &f, NULL, &w, 0))) {
			hml__coordinator_counts_of(&n, c);
			CHECK_EQ_INT(n.configs, 11);
			CHECK(f.max_inflight <= 4);
			CHECK(f.max_inflight >= 2);
			read_history(&p, &h);
			check_whole(c, &h);
			for (size_t i = 0; i < n.trials; i++) {
				hml__coordinator_trial t;

				CHECK_OK(hml__coordinator_trial_at(&t, c, i));
				configs += t.rung == 0;
				CHECK(configs <= 11);
				if (t.rung == 1) {
					/* its rung-0 trial had ended before */
					int found = 0;

					for (size_t j = 0; j < i; j++) {
						hml__coordinator_trial u;

						if (hml__coordinator_trial_at(&u, c, j) == 0 &&
						    u.config == t.config && u.rung == 0)
							found = u.status == HML__HIST_OK;
					}
					CHECK(found);
				}
			}
			CHECK_EQ_INT(configs, 11);
			hml__coordinator_free(c);
		}
		fake_release(&f);
		hml__search_plan_release(&p);
	}
}

/* --deterministic: the same seed and workers choose the same trials, with
 * the same outcomes, whatever order the workers answer in. */
TEST(deterministic_lockstep)
{
	char first[MAXT][64];
	size_t nfirst = 0;

	for (uint64_t seed = 0; seed <= 2; seed++) {
		hml__search_plan p;
		fake_pool f;
		warnings w = { "" };
		hml__coordinator *c;
		hml__coordinator_counts n;
		char name[32];

		snprintf(name, sizeof(name), "lockstep%u", (unsigned)seed);
		plan_init(&p, name, 3, 9, 3);
		p.deterministic = 1;
		fake_init(&f, 3, seed * 31);
		if ((c = run(&p, &f, NULL, &w, 0))) {
			hml__coordinator_counts_of(&n, c);
			CHECK_EQ_INT(n.configs, 9);
			for (size_t i = 0; i < n.trials && i < MAXT; i++) {
				hml__coordinator_trial t;
				char key[64];

				CHECK_OK(hml__coordinator_trial_at(&t, c, i));
				snprintf(key, sizeof(key), "%ld/%u/%.9g", t.config, t.rung, t.m.val_rmse);
				if (seed == 0)
					snprintf(first[nfirst++], sizeof(first[0]), "%s", key);
				else if (i < nfirst)
					CHECK_STR(key, first[i]);
			}
			if (seed > 0)
				CHECK_EQ_INT(n.trials, nfirst);
			hml__coordinator_free(c);
		}
		fake_release(&f);
		hml__search_plan_release(&p);
	}
}

/* The history of a search stopped at a time limit: every trial started
 * once; how many have no end (left running, or held) into *left, how many
 * of those were never sent to a worker (held) into *held. */
static void check_stopped(const hml__search_plan *p, const fake_pool *f, hist_counts *h,
                          int *left, int *held)
{
	read_history(p, h);
	*left = *held = 0;
	for (long i = 0; i < h->n; i++) {
		int sent = 0;

		CHECK_EQ_INT(h->starts[i], 1);
		for (size_t k = 0; k < f->nsent; k++)
			sent += f->sent[k] == i;
		*left += h->ends[i] == 0;
		*held += h->ends[i] == 0 && !sent;
	}
}

/* Resumed without a limit, the stopped search ends with every trial run
 * once, each left without an end (stopped or held) once more. */
static void check_resumed(const hml__search_plan *p, const hist_counts *h1, int left)
{
	fake_pool f;
	warnings w = { "" };
	hml__coordinator *c;
	hml__coordinator_counts n;
	hist_counts h2;

	fake_init(&f, 2, 0);
	if ((c = run(p, &f, NULL, &w, 0))) {
		read_history(p, &h2);
		check_whole(c, &h2);
		for (long i = 0; i < h1->n; i++)
			CHECK_EQ_INT(h2.reruns[i], h1->ends[i] ? 0 : 1);
		hml__coordinator_counts_of(&n, c);
		CHECK_EQ_INT(n.configs, p->budget);
		CHECK_EQ_INT(n.reruns, left);
		hml__coordinator_free(c);
	}
	fake_release(&f);
}

/* A time limit of 0.5 s on trials of 30 ms an epoch (rung 0: 1 epoch,
 * rung 1: 3), two workers, trial 3 hanging: the run stops at the limit
 * (2), the hanging trial stopped then, and no other trial was sent that
 * could not end by the limit (the first two, with nothing known, excepted;
 * promotions judged by rung 0's time scaled up). It resumes to its end. */
TEST(time_limit)
{
	hml__search_plan p;
	fake_pool f;
	warnings w = { "" };
	hml__coordinator *c;
	hml__coordinator_counts n;
	hist_counts h;
	double t0 = hml__now(), end;
	int left, held;

	plan_init(&p, "limit", 2, 40, 3);
	fake_init(&f, 2, 0);
	f.epoch_s = 0.03;
	f.hang = 3;
	if (!(c = run_limited(&p, &f, NULL, &w, 2, 0.5)))
		goto done;
	end = hml__now();
	CHECK(end - t0 >= 0.5 && end - t0 < 0.5 + 0.2);   /* waited for trial 3 until then */
	for (size_t k = 2; k < f.nsent; k++)   /* each answer's time would come by the limit */
		CHECK(f.sent[k] == 3 || f.sent_at[k] + f.epoch_s * f.sent_epochs[k] <= t0 + 0.5 + 0.05);
	hml__coordinator_counts_of(&n, c);
	CHECK(n.configs < 40);
	hml__coordinator_free(c);
	fake_release(&f);
	check_stopped(&p, &f, &h, &left, &held);
	CHECK(h.ends[3] == 0);
	CHECK(left >= 1 && left <= 3);   /* the workers' trials, a promotion held back */
	check_resumed(&p, &h, left);
done:
	fake_release(&f);
	hml__search_plan_release(&p);
}

/* Trials of 100 ms an epoch, a limit of 0.45 s: the first promotions come
 * after 0.2 s, when their 0.3 s no longer fit, while rung-0 trials do: the
 * promotions are held (recorded as started, never sent), rung-0 trials go
 * on, and the run stops (2) with nothing running. It resumes to its end. */
TEST(time_limit_hold)
{
	hml__search_plan p;
	fake_pool f;
	warnings w = { "" };
	hml__coordinator *c;
	hist_counts h;
	int left, held;

	plan_init(&p, "hold", 2, 12, 3);
	fake_init(&f, 2, 0);
	f.epoch_s = 0.1;
	if (!(c = run_limited(&p, &f, NULL, &w, 2, 0.45)))
		goto done;
	hml__coordinator_free(c);
	fake_release(&f);
	check_stopped(&p, &f, &h, &left, &held);
	CHECK(held >= 1);
	CHECK(left >= held && left <= held + 2);   /* (a late answer is stopped) */
	for (size_t k = 0; k < f.nsent; k++)   /* only rung 0 ran */
		CHECK_EQ_INT(f.sent_epochs[k], 1);
	check_resumed(&p, &h, left);
done:
	fake_release(&f);
	hml__search_plan_release(&p);
}

/* One worker, trials of 20 ms an epoch but trial 1 (a wide configuration)
 * 20 times slower, a limit of 1 s: a promotion is judged by its own
 * configuration's time at rung 0 (3 x 20 ms), not by trial 1's scaled up
 * (1.2 s, which would hold every promotion and leave the front empty). */
TEST(time_limit_own_config)
{
	hml__search_plan p;
	fake_pool f;
	warnings w = { "" };
	hml__coordinator *c;
	int promoted = 0;

	plan_init(&p, "ownconfig", 1, 80, 3);
	fake_init(&f, 1, 0);
	f.epoch_s = 0.02;
	f.slow = 1;
	f.slow_x = 20;
	if (!(c = run_limited(&p, &f, NULL, &w, 2, 1.0)))
		goto done;
	for (size_t k = 0; k < f.nsent; k++)
		promoted += f.sent_epochs[k] == 3 && f.sent[k] != 1;
	CHECK(promoted >= 1);
	hml__coordinator_free(c);
done:
	fake_release(&f);
	hml__search_plan_release(&p);
}

/* --fidelity: a lower rung trains fewer rows (all epochs), or sqrt of its
 * fraction of each; the top rung every row and epoch; every trial's
 * latency is measured with the application's threads. */
TEST(fidelity)
{
	static const int fids[] = { HML__FIDELITY_ROWS, HML__FIDELITY_BOTH, HML__FIDELITY_EPOCHS };
	static const char *const names[] = { "fid-rows", "fid-both", "fid-epochs" };

	for (int k = 0; k < 3; k++) {
		hml__search_plan p;
		fake_pool f;
		warnings w = { "" };
		hml__coordinator *c;
		int low = 0, top = 0;

		plan_init(&p, names[k], 1, 9, 9);
		p.fidelity = fids[k];
		p.lat_threads = 4;
		fake_init(&f, 1, 0);
		if (!(c = run(&p, &f, NULL, &w, 0)))
			goto next;
		for (size_t i = 0; i < f.nsent; i++) {
			int full = f.sent_rows[i] == 1 && f.sent_epochs[i] == 9;

			top += full;
			low += !full;
			CHECK_EQ_INT(f.sent_lat_threads[i], 4);
			if (full)
				continue;
			if (fids[k] == HML__FIDELITY_ROWS)    /* rung 0 of 2: a third of the rows */
				CHECK(f.sent_epochs[i] == 9 && fabs(f.sent_rows[i] - 1.0 / 3) < 1e-12);
			else if (fids[k] == HML__FIDELITY_BOTH)   /* sqrt(1/3): 5 epochs, 0.577 */
				CHECK(f.sent_epochs[i] == 5 && fabs(f.sent_rows[i] - sqrt(1.0 / 3)) < 1e-12);
			else
				CHECK(f.sent_epochs[i] == 3 && f.sent_rows[i] == 1);
		}
		CHECK(low >= 9 && top >= 1);
		CHECK_STR(w.text, "");
		hml__coordinator_free(c);
next:
		fake_release(&f);
		hml__search_plan_release(&p);
	}
}

int main(void)
{
	if (tmp_dir_make("coordinator") < 0)
		return 1;
	RUN(promotion_order);
	RUN(fidelity);
	RUN(failed_and_timed_out);
	RUN(constant_liar);
	RUN(resume_replay);
	RUN(budget_never_exceeded);
	RUN(deterministic_lockstep);
	RUN(time_limit);
	RUN(time_limit_hold);
	RUN(time_limit_own_config);
	tmp_dir_remove();
	return check_report();
}
