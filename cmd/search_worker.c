/*
 * hml search-worker - a worker process of hml search (hidden command).
 *
 * Started by `hml search` with pipes on its standard input and output; it
 * loads the region's data once, then trains the trials it is sent one
 * after the other in this process (lib/search/wire.h), so libtorch is loaded and
 * the data read once per worker, not once per trial. It ends when its
 * input closes. Not meant to be run by hand.
 *
 * A worker runs under SCHED_BATCH (Linux; its threads inherit it): it
 * only computes, and a batch task does not preempt the task that wakes it.
 * Without it, the coordinator that sent a trial down the pipe lost its CPU
 * to the woken worker at once and waited for the worker's time slice:
 * 0.92 ms of wall time per trial in that write() for 0.03 ms of CPU,
 * 0.09 ms with it (a 100-trial search on the quiet 2-core machine). The
 * policy weakens wake-up preemption only; the worker's share of the CPU
 * is unchanged.
 *
 * Test hooks (documented in hml-search(1)): HML_SEARCH_TEST_CRASH=T makes
 * the worker abort() when it is sent trial T, HML_SEARCH_TEST_HANG=T makes
 * it sleep instead of training trial T (for --trial-timeout),
 * HML_SEARCH_TEST_LATENCY_PARAMS=1 replaces every measured latency by
 * 1e-9 s per parameter (noiseless, for the --deterministic test).
 */
#define _GNU_SOURCE 1   /* SCHED_BATCH */
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "core/util.h"
#include "deploy/latency.h"
#include "search/wire.h"
#include "train/dataset.h"
#include "train/train.h"

static const cmd_option options[] = {
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static const cmd_spec spec = {
	"search-worker", "",
	"a worker process of hml search (started by hml search, not by hand)",
	"Reads JSON lines (init, then trials) on standard input and answers on\n"
	"standard output; see lib/search/wire.h.",
	options, 0, 0, NULL
};

static long hook(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 10) : -1;
}

static int on_epoch(void *payload, int epoch, int total, double loss, double val)
{
	(void)payload; (void)epoch; (void)total; (void)loss; (void)val;
	return cmd_interrupted != 0;
}

/* Answer the init message: load the data (an iterative application's:
 * that of each k, and its runs, into *run). */
static int init(hml__wire_reader *rd, hml__dataset *d, cmd_search_run **run, int out)
{
	long long rows = 0;
	json_t *msg = NULL, *reply;
	const char *region, *nf, **paths = NULL;
	size_t n;
	int rc;

	while ((rc = hml__wire_recv(rd, &msg)) == 0)
		;
	if (rc > 0)
		rc = hml__wire_init_read(msg, &region, &paths, &n, &nf);
	if (rc >= 0 && hml__wire_init_run(msg))
		rc = cmd_search_run_open(run, hml__wire_init_run(msg), region, strcmp(nf, "error") == 0
		                         ? HML__NONFINITE_ERROR : HML__NONFINITE_DROP, &rows);
	else if (rc >= 0 && (rc = hml__dataset_load(d, paths, n, region, strcmp(nf, "error") == 0
	                                            ? HML__NONFINITE_ERROR : HML__NONFINITE_DROP)) >= 0)
		rows = d->rows;
	reply = rc < 0 ? hml__wire_error(hml_error_last()->message) : hml__wire_ready(rows);
	if (hml__wire_send(out, reply) < 0 && rc >= 0)
		rc = HML_EIO;
	json_decref(reply);
	free(paths);
	json_decref(msg);
	return rc;
}

/* The C form's latency of the model trained (lib/deploy/latency.h) as the trial's
 * latency; *cost: the seconds it took. NULL, or why it has none. */
static const char *c_latency(const hml__dataset *d, const char *path, int threads,
                             hml__train_result *r, double *cost)
{
	static char why[400];
	hml__latency l;
	hml__latency_options lo = hml__latency_options_for(d, r->latency_batch, threads);
	double t0 = hml__now();

	lo.no_torchscript = 1;
	if (hml__latency_measure(&l, path, &lo) < 0)
		snprintf(why, sizeof(why), "no C latency: %s", hml_error_last()->message);
	else if (!isfinite(l.seconds[HML__TARGET_C]))
		snprintf(why, sizeof(why), "no C latency: %s", l.unavailable[HML__TARGET_C]);
	else
		why[0] = '\0';
	*cost = hml__now() - t0;
	r->latency_s_per_sample = l.seconds[HML__TARGET_C];
	r->latency_batch = lo.batch;
	return why[0] ? why : NULL;
}

/* One trial: train and answer; an iterative application's trial trains on
 * the data of its k and runs the application with the model. */
static int trial(const json_t *msg, const hml__dataset *d, cmd_search_run *run, int out)
{
	hml__train_options o = HML__TRAIN_OPTIONS_INIT;
	hml__train_result r;
	const char *path, *err = NULL;
	json_t *reply;
	double known, cost = 0, qoi = NAN;
	long long k = -1, il = -1;
	long t;
	int rc, target;

	memset(&r, 0, sizeof(r));
	if ((rc = hml__wire_trial_read(msg, &t, &path, &o)) < 0 ||
	    (rc = hml__wire_trial_latency(msg, &target, &known)) < 0)
		return rc;
	if (t == hook("HML_SEARCH_TEST_CRASH"))
		abort();
	if (t == hook("HML_SEARCH_TEST_HANG"))
		for (;;)
			pause();
	o.progress = on_epoch;
	if (run && hml__wire_trial_run(msg, &k, &il) && !(d = cmd_search_run_data(run, k)))
		err = hml_error_last()->message;
	else if (hml__train(d, &o, path, &r) < 0)
		err = hml_error_last()->message;
	else if (r.interrupted)
		err = "interrupted";
	else if (target == HML__TARGET_C && isfinite(known))
		r.latency_s_per_sample = known;   /* its architecture's, measured before */
	else if (target == HML__TARGET_C)
		err = c_latency(d, path, hml__train_latency_threads(&o), &r, &cost);
	if (!err && hook("HML_SEARCH_TEST_LATENCY_PARAMS") > 0)
		r.latency_s_per_sample = 1e-9 * (double)r.params;   /* a noiseless latency */
	if (!err && run && cmd_search_run_qoi(run, path, k, il, t, &qoi) < 0)
		err = hml_error_last()->message;
	if (hml__wire_trial_discard(msg))
		unlink(path);   /* a lower rung's model: not wanted once measured */
	reply = hml__wire_result(t, err, &r);
	if (reply && !err && ((target != HML__TARGET_TORCHSCRIPT &&
	                       hml__wire_result_set_latency(reply, target, cost) < 0) ||
	                      (run && hml__wire_result_set_qoi(reply, qoi) < 0))) {
		json_decref(reply);
		reply = NULL;
	}
	rc = reply ? hml__wire_send(out, reply) : hml__error_oom();
	json_decref(reply);
	return rc;
}

int search_worker_loop(int in, int out)
{
	hml__wire_reader rd;
	hml__dataset d;
	cmd_search_run *run = NULL;
	json_t *msg = NULL;
	int rc;

#ifdef SCHED_BATCH
	{
		struct sched_param sp = { 0 };

		(void)sched_setscheduler(0, SCHED_BATCH, &sp);   /* best effort */
	}
#endif
	cmd_keep_heap();   /* it trains */
	memset(&d, 0, sizeof(d));
	hml__wire_reader_init(&rd, in);
	if ((rc = init(&rd, &d, &run, out)) < 0) {
		if (rd.eof)
			rc = 0;   /* the coordinator ended before it sent any work */
		goto done;
	}
	while (!cmd_interrupted && (rc = hml__wire_recv(&rd, &msg)) >= 0) {
		if (rc == 1 && (rc = trial(msg, &d, run, out)) < 0)
			break;
		json_decref(msg);
		msg = NULL;
	}
	if (rd.eof)
		rc = 0;   /* the coordinator closed our input: done */
done:
	json_decref(msg);
	hml__wire_reader_release(&rd);
	hml__dataset_release(&d);
	cmd_search_run_free(run);
	return rc;
}

int cmd_search_worker(int argc, char **argv)
{
	int first, rc;

	if ((rc = cmd_parse(&spec, argc, argv, &first)) != 0)
		return rc > 0 ? cmd_finish(HML_EXIT_OK) : HML_EXIT_USAGE;
	/* The coordinator alone handles ^C (it kills its workers); a worker
	 * killed by SIGTERM just dies: its trial is re-run on --resume. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	if ((rc = search_worker_loop(0, 1)) < 0)
		cmd_error("search-worker: %s", hml_error_last()->message);
	return rc < 0 ? cmd_exit_code(rc) : HML_EXIT_OK;
}
