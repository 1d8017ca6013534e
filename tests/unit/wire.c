/*
 * tests/unit/wire.c - the hml search worker protocol: every message
 * round-trips (training options and results field by field, NaN as null),
 * lines cross a real pipe whole, split or several at once, and the end of
 * the pipe and bad lines are reported.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "deploy/latency.h"
#include "search/wire.h"

TEST(messages)
{
	const char *paths[] = { "/e/data/d1.h5", "/e/data/d2.h5" };
	hml__train_options o = HML__TRAIN_OPTIONS_INIT, back = HML__TRAIN_OPTIONS_INIT;
	hml__train_result r, rb;
	const char *region, *nf, **got, *out, *err;
	json_t *m;
	size_t n;
	long trial;
	int target;
	double known;

	m = hml__wire_init("binomial", paths, 2, "error");
	CHECK_STR(hml__wire_type(m), "init");
	CHECK_OK(hml__wire_init_read(m, &region, &got, &n, &nf));
	CHECK_STR(region, "binomial");
	CHECK_STR(nf, "error");
	CHECK_EQ_INT(n, 2);
	CHECK_STR(got[1], "/e/data/d2.h5");
	free(got);
	json_decref(m);

	o.arch = "mlp:16x32:tanh:dropout=0.1";
	o.epochs = 7; o.batch = 128; o.lr = 0.0031; o.weight_decay = 1e-4; o.optimizer = "adamw";
	o.schedule = "cosine"; o.patience = 3; o.clip = 0; o.seed = 9; o.threads = 2;
	o.val_fraction = 0.2; o.test_fraction = 0.15; o.infer_batch = 4096; o.max_seconds = 30;
	o.loss = "relative"; o.metric = "mape"; o.mape_floor = 1;
	o.latency_threads = 3; o.row_fraction = 0.25;
	o.categorical = "1:8,3:2";
	o.rollout = 4;
	m = hml__wire_trial(12, "/e/search/s1/t12.pt", &o);
	CHECK_OK(hml__wire_trial_read(m, &trial, &out, &back));
	CHECK_EQ_INT(trial, 12);
	CHECK_STR(out, "/e/search/s1/t12.pt");
	CHECK_STR(back.arch, o.arch);
	CHECK_STR(back.optimizer, "adamw");
	CHECK_STR(back.schedule, "cosine");
	CHECK(back.epochs == 7 && back.batch == 128 && back.lr == 0.0031 &&
	      back.weight_decay == 1e-4 && back.patience == 3 && back.clip == 0 && back.seed == 9 &&
	      back.threads == 2 && back.val_fraction == 0.2 && back.test_fraction == 0.15 &&
	      back.infer_batch == 4096 && back.max_seconds == 30);
	CHECK_STR(back.loss, "relative");
	CHECK_STR(back.metric, "mape");
	CHECK_STR(back.categorical, "1:8,3:2");
	CHECK(back.mape_floor == 1);
	CHECK(back.latency_threads == 3 && back.row_fraction == 0.25);
	CHECK_EQ_INT(back.rollout, 4);
	/* The latency objective: torchscript unless the trial names a target. */
	CHECK_OK(hml__wire_trial_latency(m, &target, &known));
	CHECK(target == HML__TARGET_TORCHSCRIPT && isnan(known));
	CHECK_OK(hml__wire_trial_set_latency(m, HML__TARGET_C, NAN));
	CHECK_OK(hml__wire_trial_latency(m, &target, &known));
	CHECK(target == HML__TARGET_C && isnan(known));
	CHECK_OK(hml__wire_trial_set_latency(m, HML__TARGET_C, 1.25e-7));
	CHECK_OK(hml__wire_trial_latency(m, &target, &known));
	CHECK(target == HML__TARGET_C && known == 1.25e-7);
	CHECK_EQ_INT(hml__wire_trial_discard(m), 0);
	CHECK_OK(hml__wire_trial_set_discard(m));
	CHECK_EQ_INT(hml__wire_trial_discard(m), 1);
	json_object_set_new(json_object_get(m, "latency"), "target", json_string("gpu"));
	CHECK_FAILS(hml__wire_trial_latency(m, &target, &known), HML_EINVALID, "no known target");
	json_decref(m);

	memset(&r, 0, sizeof(r));
	snprintf(r.arch, sizeof(r.arch), "mlp:16x32:tanh");
	r.params = 737; r.n_train = 800; r.n_val = 100; r.n_test = 100; r.epochs_run = 7;
	r.best_epoch = 6; r.stopped_early = 1; r.train_seconds = 1.5; r.samples_per_second = 3733.3;
	r.final_lr = NAN; r.val_rmse = 0.0123456789012345; r.test_rmse = 0.013; r.test_mae = 0.01;
	r.test_max_abs = 0.1; r.latency_s_per_sample = 2.5e-8; r.latency_batch = 4096;
	r.train_step_seconds = 1.2; r.forward_max_diff = 1e-7; r.val_mape = 12.25; r.test_mape = NAN;
	r.val_rollout_windows = 3; r.val_rollout_rmse = 0.0456789012345678; r.val_rollout_mape = NAN;
	m = hml__wire_result(12, NULL, &r);
	CHECK_OK(hml__wire_result_read(m, &trial, &err, &rb));
	CHECK(err == NULL);
	CHECK_STR(rb.arch, "mlp:16x32:tanh");
	CHECK(rb.params == 737 && rb.n_train == 800 && rb.epochs_run == 7 && rb.best_epoch == 6 &&
	      rb.stopped_early == 1 && rb.interrupted == 0);
	CHECK(rb.val_rmse == r.val_rmse);   /* every digit */
	CHECK(rb.val_mape == 12.25 && isnan(rb.test_mape));
	CHECK(rb.val_rollout_windows == 3 && rb.val_rollout_rmse == r.val_rollout_rmse &&
	      isnan(rb.val_rollout_mape));
	CHECK(rb.latency_s_per_sample == 2.5e-8 && rb.latency_batch == 4096);
	CHECK(isnan(rb.final_lr));
	CHECK_OK(hml__wire_result_latency(m, &target, &known));
	CHECK(target == HML__TARGET_TORCHSCRIPT && isnan(known));
	CHECK_OK(hml__wire_result_set_latency(m, HML__TARGET_C, 2.5));
	CHECK_OK(hml__wire_result_latency(m, &target, &known));
	CHECK(target == HML__TARGET_C && known == 2.5);
	json_decref(m);

	m = hml__wire_result(13, "unknown activation 'x'", NULL);
	CHECK_OK(hml__wire_result_read(m, &trial, &err, &rb));
	CHECK_EQ_INT(trial, 13);
	CHECK_STR(err, "unknown activation 'x'");
	CHECK_FAILS(hml__wire_trial_read(m, &trial, &out, &back), HML_EINVALID, "expected 'trial'");
	json_decref(m);

	m = hml__wire_ready(4096);
	CHECK_STR(hml__wire_type(m), "ready");
	CHECK_FAILS(hml__wire_init_read(m, &region, &got, &n, &nf), HML_EINVALID, "expected 'init'");
	json_decref(m);
	m = hml__wire_error("no data");
	CHECK_STR(hml__wire_type(m), "error");
	CHECK_FAILS(hml__wire_result_read(m, &trial, &err, &rb), HML_EINVALID, "expected 'result'");
	json_decref(m);
}

TEST(pipe_lines)
{
	int fd[2];
	hml__wire_reader rd;
	json_t *m = NULL, *a = hml__wire_ready(1), *b = hml__wire_ready(2);

	CHECK(pipe(fd) == 0);
	hml__wire_reader_init(&rd, fd[0]);
	/* Two messages in one go, then one split in two writes. */
	CHECK_OK(hml__wire_send(fd[1], a));
	CHECK_OK(hml__wire_send(fd[1], b));
	CHECK_EQ_INT(hml__wire_recv(&rd, &m), 1);
	CHECK(m && json_integer_value(json_object_get(m, "rows")) == 1);
	json_decref(m);
	CHECK_EQ_INT(hml__wire_recv(&rd, &m), 1);   /* from the buffer */
	CHECK(m && json_integer_value(json_object_get(m, "rows")) == 2);
	json_decref(m);
	CHECK(write(fd[1], "{\"type\":\"re", 11) == 11);
	CHECK_EQ_INT(hml__wire_recv(&rd, &m), 0);
	CHECK(write(fd[1], "ady\"}\nnot json\n", 15) == 15);
	CHECK_EQ_INT(hml__wire_recv(&rd, &m), 1);
	CHECK_STR(hml__wire_type(m), "ready");
	json_decref(m);
	CHECK_FAILS(hml__wire_recv(&rd, &m), HML_EINVALID, "not a JSON object");
	/* A partial line, then the end of the pipe. */
	CHECK(write(fd[1], "{\"ty", 4) == 4);
	close(fd[1]);
	CHECK_EQ_INT(hml__wire_recv(&rd, &m), 0);
	CHECK_FAILS(hml__wire_recv(&rd, &m), HML_EIO, "closed its pipe");
	CHECK_FAILS(hml__wire_recv(&rd, &m), HML_EIO, "closed its pipe");
	hml__wire_reader_release(&rd);
	close(fd[0]);
	json_decref(a);
	json_decref(b);
}

/* An iterative application's search: the plan's data indices become
 * paths in init, the trial's k and interleave and the result's QoI error
 * travel and read back. */
TEST(iterative_messages)
{
	char *paths[] = { "/e/data/d1.h5", "/e/data/d2.h5" };
	json_t *plan = json_pack("{s:s, s:[{s:i, s:[i]}, {s:i, s:[i, i]}]}", "workflow", "/w.json",
	                         "groups", "k", 5, "data", 1, "k", 10, "data", 0, 1);
	json_t *m = hml__wire_init("r", (const char *const *)paths, 2, "drop");
	const json_t *run, *g;
	long long k, il;

	CHECK_OK(hml__wire_init_set_run(m, plan, paths, "/e", "/e/search/s1"));
	CHECK((run = hml__wire_init_run(m)) != NULL);
	g = json_array_get(json_object_get(run, "groups"), 0);
	CHECK_STR(json_string_value(json_array_get(json_object_get(g, "data"), 0)), "/e/data/d2.h5");
	CHECK_STR(json_string_value(json_object_get(run, "dir")), "/e/search/s1");
	/* the plan itself keeps its indices */
	g = json_array_get(json_object_get(plan, "groups"), 0);
	CHECK(json_integer_value(json_array_get(json_object_get(g, "data"), 0)) == 1);
	json_decref(m);
	json_decref(plan);

	m = json_object();
	CHECK(hml__wire_trial_run(m, &k, &il) == 0 && k == -1 && il == -1);
	CHECK_OK(hml__wire_trial_set_run(m, 10, -1));
	CHECK(hml__wire_trial_run(m, &k, &il) == 1 && k == 10 && il == -1);
	CHECK(isnan(hml__wire_result_qoi(m)));
	CHECK_OK(hml__wire_result_set_qoi(m, 0.125));
	CHECK(hml__wire_result_qoi(m) == 0.125);
	json_decref(m);
}

int main(void)
{
	RUN(messages);
	RUN(pipe_lines);
	RUN(iterative_messages);
	return check_report();
}
