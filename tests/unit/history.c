/*
 * tests/unit/history.c - the trial history of hml search: every event
 * round-trips bit for bit, a torn last line is ignored by the reader and
 * cut by the next writer, bad lines are named; the "searches" record
 * through the store and its typed view; the one-search lock.
 */
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fixtures.h"
#include "deploy/latency.h"
#include "search/history.h"
#include "store/records.h"
#include "store/store.h"


typedef struct collected {
	hml__hist_event ev[16];
	double u[16][3];
	json_t *params[16];
	char arch[16][64], err[16][64], model[16][16];
	int n;
} collected;

/* Copy what the reader lends (valid during the call only). */
static int collect(const hml__hist_event *ev, void *payload)
{
	collected *c = payload;
	hml__hist_event *e = &c->ev[c->n];

	if (c->n >= 16)
		return -1;
	*e = *ev;
	if (ev->u) {
		memcpy(c->u[c->n], ev->u, ev->dim * sizeof(double));
		e->u = c->u[c->n];
	}
	c->params[c->n] = ev->params ? json_deep_copy(ev->params) : NULL;
	e->params = c->params[c->n];
	snprintf(c->arch[c->n], 64, "%s", ev->arch ? ev->arch : "");
	snprintf(c->err[c->n], 64, "%s", ev->error ? ev->error : "");
	snprintf(c->model[c->n], 16, "%s", ev->model ? ev->model : "");
	c->n++;
	return 0;
}

static void collected_release(collected *c)
{
	for (int i = 0; i < c->n; i++)
		json_decref(c->params[i]);
	memset(c, 0, sizeof(*c));
}

static void path_of(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", tmpdir, name);
}

TEST(round_trip)
{
	hml__history *h = NULL;
	hml__hist_event ev;
	collected c;
	/* Values that print badly with fewer than 17 digits. */
	double u[3] = { 0.1, 1.0 / 3.0, 0.7071067811865476 };
	json_t *params = json_pack("{s:i, s:f, s:s}", "layers", 2, "lr", 1e-3, "activation", "tanh");
	char path[600];
	int torn = -1;

	memset(&c, 0, sizeof(c));
	path_of(path, sizeof(path), "rt.jsonl");
	CHECK_OK(hml__history_open(&h, NULL, path));

	hml__hist_event_init(&ev);
	ev.trial = 0; ev.config = 0; ev.rung = 0; ev.epochs = 3; ev.worker = 1;
	ev.params = params; ev.u = u; ev.dim = 3;
	CHECK_OK(hml__history_append(h, &ev));

	ev.status = HML__HIST_OK;
	ev.params = NULL; ev.u = NULL;
	ev.seconds = 2.25; ev.arch = "mlp:16x16:tanh";
	ev.m.val_rmse = 0.0123; ev.m.test_rmse = 0.0125; ev.m.latency_s = 3.5e-8;
	ev.m.latency_batch = 4096; ev.m.params = 385; ev.m.epochs_run = 3;
	CHECK_OK(hml__history_append(h, &ev));
	/* The same trial's end as a --target c search of MAPE records it. */
	ev.m.val_mape = 12.5; ev.m.test_mape = 14.75;
	ev.m.latency_target = HML__TARGET_C; ev.m.latency_threads = 2; ev.m.latency_cached = 1;
	ev.m.latency_cost = 1.75;
	CHECK_OK(hml__history_append(h, &ev));

	hml__hist_event_init(&ev);
	ev.trial = 1; ev.config = 0; ev.rung = 1; ev.status = HML__HIST_CRASHED;
	ev.error = "killed by SIGKILL";
	CHECK_OK(hml__history_append(h, &ev));
	ev.status = HML__HIST_RERUN; ev.error = NULL;
	CHECK_OK(hml__history_append(h, &ev));
	ev.status = HML__HIST_TIMEOUT;
	CHECK_OK(hml__history_append(h, &ev));
	ev.status = HML__HIST_FAILED; ev.error = "unknown activation";
	CHECK_OK(hml__history_append(h, &ev));
	ev.status = HML__HIST_KEPT; ev.error = NULL; ev.model = "m7";
	CHECK_OK(hml__history_append(h, &ev));
	/* a --deterministic search's start: the ends counted when it was chosen */
	hml__hist_event_init(&ev);
	ev.trial = 2; ev.config = 1; ev.rung = 0; ev.counted = 2;
	ev.params = params; ev.u = u; ev.dim = 3;
	CHECK_OK(hml__history_append(h, &ev));
	ev.status = (hml__hist_status)99;
	CHECK_FAILS(hml__history_append(h, &ev), HML_EINVALID, "status 99 is not valid");
	hml__history_close(h);

	CHECK_OK(hml__history_read(path, collect, &c, &torn));
	CHECK_EQ_INT(torn, 0);
	CHECK_EQ_INT(c.n, 9);
	CHECK_EQ_INT(c.ev[0].counted, -1);   /* not recorded */
	CHECK_EQ_INT(c.ev[8].counted, 2);
	CHECK_EQ_INT(c.ev[8].trial, 2);
	/* torchscript when not recorded, the recorded target otherwise */
	CHECK_EQ_INT(c.ev[1].m.latency_target, -1);
	CHECK(isnan(c.ev[1].m.latency_cost));
	CHECK_EQ_INT(c.ev[2].m.latency_target, HML__TARGET_C);
	CHECK_EQ_INT(c.ev[2].m.latency_threads, 2);
	CHECK_EQ_INT(c.ev[2].m.latency_cached, 1);
	CHECK(c.ev[2].m.latency_cost == 1.75);
	CHECK_EQ_INT(c.ev[0].status, HML__HIST_RUNNING);
	CHECK_EQ_INT(c.ev[0].epochs, 3);
	CHECK_EQ_INT(c.ev[0].worker, 1);
	CHECK_EQ_INT(c.ev[0].dim, 3);
	for (int i = 0; i < 3; i++)
		CHECK(c.ev[0].u && c.ev[0].u[i] == u[i]);   /* bit for bit */
	CHECK(c.ev[0].params && json_equal((json_t *)c.ev[0].params, params));
	CHECK_EQ_INT(c.ev[1].status, HML__HIST_OK);
	CHECK(c.ev[1].m.val_rmse == 0.0123 && c.ev[1].m.latency_s == 3.5e-8);
	/* no MAPE recorded (older hml): NaN; the error follows the metric */
	CHECK(isnan(c.ev[1].m.val_mape) && isnan(hml__hist_error(&c.ev[1].m, "mape")));
	CHECK(hml__hist_error(&c.ev[1].m, NULL) == 0.0123);
	CHECK(c.ev[2].m.val_mape == 12.5 && c.ev[2].m.test_mape == 14.75);
	CHECK(hml__hist_error(&c.ev[2].m, "mape") == 12.5);
	CHECK(hml__hist_error(&c.ev[2].m, "rmse") == 0.0123);
	CHECK(isnan(hml__hist_error(&c.ev[2].m, "max_abs")));
	CHECK_EQ_INT(c.ev[1].m.params, 385);
	CHECK_EQ_INT(c.ev[1].m.latency_batch, 4096);
	CHECK_EQ_INT(c.ev[1].m.epochs_run, 3);
	CHECK(c.ev[1].seconds == 2.25);
	CHECK_STR(c.arch[1], "mlp:16x16:tanh");
	CHECK_EQ_INT(c.ev[3].status, HML__HIST_CRASHED);
	CHECK_EQ_INT(c.ev[3].trial, 1);
	CHECK_EQ_INT(c.ev[3].rung, 1);
	CHECK_STR(c.err[3], "killed by SIGKILL");
	CHECK(isnan(c.ev[3].m.val_rmse));
	CHECK_EQ_INT(c.ev[4].status, HML__HIST_RERUN);
	CHECK_EQ_INT(c.ev[5].status, HML__HIST_TIMEOUT);
	CHECK_EQ_INT(c.ev[6].status, HML__HIST_FAILED);
	CHECK_EQ_INT(c.ev[7].status, HML__HIST_KEPT);
	CHECK_STR(c.model[7], "m7");
	collected_release(&c);
	json_decref(params);
}

/* Lines written without waiting are made durable by the sync thread, which
 * says so on its descriptor; a flush waits; close syncs the rest. */
TEST(background_sync)
{
	hml__history *h = NULL;
	hml__hist_event ev;
	collected c;
	char path[600];
	uint64_t a = 0, b = 0, d = 0;
	struct pollfd pf;

	memset(&c, 0, sizeof(c));
	path_of(path, sizeof(path), "async.jsonl");
	CHECK_OK(hml__history_open(&h, NULL, path));
	hml__hist_event_init(&ev);
	ev.trial = 0; ev.config = 0; ev.rung = 0;
	CHECK_OK(hml__history_write(h, &ev, &a));
	ev.status = HML__HIST_FAILED; ev.error = "x";
	CHECK_OK(hml__history_write(h, &ev, &b));
	CHECK(a == 1 && b == 2);
	/* readable once the thread synced; then both lines are durable */
	pf.fd = hml__history_sync_fd(h);
	pf.events = POLLIN;
	for (int i = 0; i < 100 && d < b; i++) {
		CHECK(poll(&pf, 1, 5000) == 1);
		CHECK_OK(hml__history_durable(h, &d));
	}
	CHECK(d == 2);
	CHECK(poll(&pf, 1, 0) == 0);   /* drained */
	ev.status = HML__HIST_RERUN; ev.error = NULL;
	CHECK_OK(hml__history_append(h, &ev));   /* synchronous: line 3 */
	CHECK_OK(hml__history_durable(h, &d));
	CHECK(d == 3);
	ev.status = HML__HIST_OK;
	CHECK_OK(hml__history_write(h, &ev, &a));
	CHECK_OK(hml__history_flush(h, &d));
	CHECK(a == 4 && d == 4);
	ev.status = HML__HIST_KEPT; ev.model = "m1";
	CHECK_OK(hml__history_write(h, &ev, &a));
	hml__history_close(h);   /* joins the thread, syncs line 5 */
	CHECK_OK(hml__history_read(path, collect, &c, NULL));
	CHECK_EQ_INT(c.n, 5);
	CHECK_EQ_INT(c.ev[1].status, HML__HIST_FAILED);
	CHECK_EQ_INT(c.ev[4].status, HML__HIST_KEPT);
	collected_release(&c);
}

/* A writer killed mid-line: the reader ignores the fragment, the next
 * writer cuts it off, and the line after it is whole. */
TEST(torn_line)
{
	hml__history *h = NULL;
	hml__hist_event ev;
	collected c;
	char path[600];
	FILE *f;
	int torn = 0;

	memset(&c, 0, sizeof(c));
	path_of(path, sizeof(path), "torn.jsonl");
	CHECK_OK(hml__history_open(&h, NULL, path));
	hml__hist_event_init(&ev);
	ev.trial = 0; ev.config = 0;
	CHECK_OK(hml__history_append(h, &ev));
	hml__history_close(h);
	CHECK((f = fopen(path, "a")) != NULL);
	if (f) {
		fputs("{\"trial\":1,\"config\":1,\"ru", f);
		fclose(f);
	}
	CHECK_OK(hml__history_read(path, collect, &c, &torn));
	CHECK_EQ_INT(torn, 1);
	CHECK_EQ_INT(c.n, 1);
	collected_release(&c);

	CHECK_OK(hml__history_open(&h, NULL, path));
	ev.trial = 1; ev.config = 1; ev.status = HML__HIST_FAILED;
	CHECK_OK(hml__history_append(h, &ev));
	hml__history_close(h);
	CHECK_OK(hml__history_read(path, collect, &c, &torn));
	CHECK_EQ_INT(torn, 0);
	CHECK_EQ_INT(c.n, 2);
	CHECK_EQ_INT(c.ev[1].trial, 1);
	CHECK_EQ_INT(c.ev[1].status, HML__HIST_FAILED);
	collected_release(&c);

	/* A file that is one torn line only. */
	path_of(path, sizeof(path), "torn-only.jsonl");
	CHECK((f = fopen(path, "w")) != NULL);
	if (f) {
		fputs("{\"tri", f);
		fclose(f);
	}
	CHECK_OK(hml__history_open(&h, NULL, path));
	CHECK_OK(hml__history_append(h, &ev));
	hml__history_close(h);
	CHECK_OK(hml__history_read(path, collect, &c, &torn));
	CHECK_EQ_INT(c.n, 1);
	collected_release(&c);

	/* No file: an empty history. */
	path_of(path, sizeof(path), "none.jsonl");
	CHECK_OK(hml__history_read(path, collect, &c, &torn));
	CHECK_EQ_INT(c.n, 0);
}

TEST(bad_lines)
{
	collected c;
	char path[600];

	memset(&c, 0, sizeof(c));
	path_of(path, sizeof(path), "bad.jsonl");
	write_text(path, "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"ok\"}\nnot json\n");
	CHECK_FAILS(hml__history_read(path, collect, &c, NULL), HML_EINVALID, "line 2:");
	collected_release(&c);
	write_text(path, "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"done\"}\n");
	CHECK_FAILS(hml__history_read(path, collect, &c, NULL), HML_EINVALID,
	            "line 1: unknown 'status'");
	write_text(path, "{\"config\":0,\"rung\":0,\"status\":\"ok\"}\n");
	CHECK_FAILS(hml__history_read(path, collect, &c, NULL), HML_EINVALID, "'trial'");
	write_text(path, "[1]\n");
	CHECK_FAILS(hml__history_read(path, collect, &c, NULL), HML_EINVALID, "not a JSON object");
	write_text(path, "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"running\",\"u\":[\"x\"]}\n");
	CHECK_FAILS(hml__history_read(path, collect, &c, NULL), HML_EINVALID, "'u'");
	write_text(path, "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"kept\"}\n");
	CHECK_FAILS(hml__history_read(path, collect, &c, NULL), HML_EINVALID, "'model' is missing");
	write_text(path, "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"ok\",\"metrics\":"
	           "{\"latency_target\":\"gpu\"}}\n");
	CHECK_FAILS(hml__history_read(path, collect, &c, NULL), HML_EINVALID,
	            "unknown 'metrics.latency_target'");
	/* a trial cannot have counted more ends than there are trials before it */
	write_text(path, "{\"trial\":1,\"config\":1,\"rung\":0,\"status\":\"running\",\"counted\":2}\n");
	CHECK_FAILS(hml__history_read(path, collect, &c, NULL), HML_EINVALID,
	            "'counted' is not a count of earlier trials");
	write_text(path, "{\"trial\":1,\"config\":1,\"rung\":0,\"status\":\"running\",\"counted\":\"1\"}\n");
	CHECK_FAILS(hml__history_read(path, collect, &c, NULL), HML_EINVALID, "'counted'");
	collected_release(&c);
}

/* Lines a hand or a tool changed: unknown keys, values out of range or of
 * another type, ids not by the grammar (lib/store/ids.h). Each refused
 * with the file and the line. */
TEST(hostile_lines)
{
	static const char *const lines[][2] = {
		{ "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"running\",\"layers\":32}",
		  "line 1: unknown key 'layers'" },
		{ "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"ok\",\"metrics\":{\"x\":1}}",
		  "unknown key 'metrics.x'" },
		{ "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"running\",\"u\":[1e308,0.5]}",
		  "'u' holds a value that is not a number in [0, 1]" },
		{ "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"running\",\"u\":[-0.1]}",
		  "not a number in [0, 1]" },
		{ "{\"trial\":1e3,\"config\":0,\"rung\":0,\"status\":\"ok\"}", "'trial'" },
		{ "{\"trial\":-1,\"config\":0,\"rung\":0,\"status\":\"ok\"}", "'trial'" },
		{ "{\"trial\":1000000000,\"config\":0,\"rung\":0,\"status\":\"ok\"}",
		  "'trial' is missing or not a count below 10^9" },
		{ "{\"trial\":0,\"config\":0,\"rung\":64,\"status\":\"ok\"}", "'rung'" },
		{ "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"ok\",\"seconds\":-1}",
		  "'seconds' is not a finite number >= 0" },
		{ "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"ok\",\"metrics\":"
		  "{\"val_rmse\":-0.5}}", "'metrics.val_rmse' is not a finite number >= 0" },
		{ "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"ok\",\"metrics\":"
		  "{\"latency_seconds_per_sample\":0}}", "latency_seconds_per_sample' is not a finite "
		  "number > 0" },
		{ "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"ok\",\"metrics\":"
		  "{\"latency_batch\":0}}", "a count in 'metrics'" },
		{ "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"ok\",\"metrics\":"
		  "{\"latency_bound\":-1e-6}}", "'metrics.latency_bound' is not a finite number > 0" },
		{ "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"ok\",\"metrics\":"
		  "{\"val_rollout_rmse\":-2}}", "'metrics.val_rollout_rmse' is not a finite number >= 0" },
		{ "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"ok\",\"metrics\":[]}",
		  "'metrics' is not an object" },
		{ "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"kept\",\"model\":"
		  "\"../../../../etc/passwd\"}",
		  "line 1: 'model': '../../../../etc/passwd' is not a model id" },
		{ "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"kept\",\"model\":7}",
		  "'model': null is not a model id" },
		{ "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"running\",\"params\":[1]}",
		  "is not of its type" },
		{ "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"running\",\"u\":{}}",
		  "'u' is not an array" },
	};
	collected c;
	char path[600], text[600];

	memset(&c, 0, sizeof(c));
	path_of(path, sizeof(path), "hostile.jsonl");
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		snprintf(text, sizeof(text), "%s\n", lines[i][0]);
		write_text(path, text);
		CHECK_FAILS(hml__history_read(path, collect, &c, NULL), HML_EINVALID, lines[i][1]);
		CHECK_CONTAINS(hml_error_last()->message, "hostile.jsonl' line 1: ");
		collected_release(&c);
	}
	/* unknown (null) values are no error: an older hml or a failed measure */
	write_text(path, "{\"trial\":0,\"config\":0,\"rung\":0,\"status\":\"ok\",\"metrics\":"
	           "{\"val_rmse\":null,\"latency_seconds_per_sample\":null}}\n");
	CHECK_OK(hml__history_read(path, collect, &c, NULL));
	CHECK_EQ_INT(c.n, 1);
	collected_release(&c);
}

TEST(search_record)
{
	hml__store *s = NULL;
	hml__search_view v;
	json_t *rec, *upd;
	char id[16], id2[16], hex[65], hex2[65], sub[600];
	int fd = -1, fd2 = -1;
	json_t *a = json_pack("{s:i, s:s}", "b", 1, "a", "x");
	json_t *b = json_pack("{s:s, s:i}", "a", "x", "b", 1);

	CHECK_OK(hml__json_sha256(a, hex));
	CHECK_OK(hml__json_sha256(b, hex2));
	CHECK_STR(hex, hex2);   /* key order does not matter */
	CHECK_EQ_INT(strlen(hex), 64);

	CHECK_OK(hml__store_open(&s, tmpdir, 1));
	CHECK_FAILS(hml__records_search(&v, s, "s1"), HML_ENOTFOUND, "no search 's1'");
	rec = json_pack("{s:s, s:s, s:s, s:s, s:O, s:s, s:[s], s:{s:s}, s:i, s:i, s:i, s:i, s:i,"
	                " s:i, s:{s:n, s:i, s:n}}",
	                "region", "binomial", "workflow", "binomial", "family", "mlp",
	                "status", "running", "space", a, "space_sha256", hex,
	                "datasets", "d1", "data_sha256", "d1", "abc", "seed", 7, "budget", 20,
	                "workers", 2, "eta", 3, "rungs", 2, "max_epochs", 9,
	                "constraints", "max_latency", "max_params", 1000, "max_error");
	CHECK_OK(hml__search_register(s, rec, id, sizeof(id)));
	CHECK_STR(id, "s1");
	snprintf(sub, sizeof(sub), "%s/search/s1", tmpdir);
	CHECK(access(sub, F_OK) == 0);
	CHECK_OK(hml__records_search(&v, s, "s1"));
	CHECK_STR(v.region, "binomial");
	CHECK_STR(v.family, "mlp");
	CHECK_STR(v.status, "running");
	CHECK_STR(v.history, "search/s1/trials.jsonl");
	CHECK_STR(v.space_sha256, hex);
	CHECK(v.space && json_equal((json_t *)v.space, a));
	CHECK_EQ_INT(json_array_size(v.datasets), 1);
	CHECK_STR(json_string_value(json_object_get(v.data_sha256, "d1")), "abc");
	CHECK(v.seed == 7 && v.budget == 20 && v.workers == 2 && v.eta == 3 && v.rungs == 2 &&
	      v.max_epochs == 9);
	CHECK_EQ_INT(v.deterministic, 0);   /* absent: not deterministic */
	{
		json_t *det = json_pack("{s:b}", "deterministic", 1);

		CHECK_OK(hml__search_set(s, "s1", det));
		json_decref(det);
		CHECK_OK(hml__records_search(&v, s, "s1"));
		CHECK_EQ_INT(v.deterministic, 1);
	}
	CHECK(json_is_null(json_object_get(v.constraints, "max_latency")));
	CHECK(v.front == NULL);
	CHECK(json_is_array(json_object_get(json_object_get(v.json, "provenance"), "command")));

	upd = json_pack("{s:s, s:[{s:i, s:s}]}", "status", "finished", "front", "trial", 4,
	                "model", "m2");
	CHECK_OK(hml__search_set(s, "s1", upd));
	CHECK_OK(hml__records_search(&v, s, "s1"));
	CHECK_STR(v.status, "finished");
	CHECK_EQ_INT(json_array_size(v.front), 1);
	CHECK_FAILS(hml__search_set(s, "s9", upd), HML_ENOTFOUND, "no search 's9'");
	json_decref(upd);

	/* A second search gets the next id; the first is still there. */
	CHECK_OK(hml__search_register(s, json_pack("{s:s}", "region", "r"), id2, sizeof(id2)));
	CHECK_STR(id2, "s2");
	CHECK(hml__records_search_at(&v, s, 0) && strcmp(v.id, "s1") == 0);
	CHECK(hml__records_search_at(&v, s, 1) && strcmp(v.id, "s2") == 0);
	CHECK(!hml__records_search_at(&v, s, 2));

	/* One search at a time. */
	CHECK_EQ_INT(hml__search_holder(s, hex, sizeof(hex)), 0);   /* no lock file yet */
	CHECK_OK(hml__search_lock(s, &fd));
	CHECK_FAILS(hml__search_lock(s, &fd2), HML_ELOCKED, "a search is already running");
	/* The lock and who holds it, as hml show reads them (a probe is
	 * another open file description: it conflicts as another process). */
	CHECK_EQ_INT(hml__search_holder(s, hex, sizeof(hex)), 1);
	CHECK_STR(hex, "");   /* not named yet: its search counts as running */
	rec = json_pack("{s:s, s:s}", "id", "s1", "status", "running");
	CHECK_STR(hml__search_status(s, rec), "running");
	hml__search_lock_name(fd, "s1");
	CHECK_EQ_INT(hml__search_holder(s, hex, sizeof(hex)), 1);
	CHECK_STR(hex, "s1");
	CHECK_STR(hml__search_status(s, rec), "running");
	upd = json_pack("{s:s, s:s}", "id", "s2", "status", "running");
	CHECK_STR(hml__search_status(s, upd), "interrupted");   /* another search runs */
	hml__search_unlock(fd);
	CHECK_EQ_INT(hml__search_holder(s, hex, sizeof(hex)), 0);
	CHECK_STR(hml__search_status(s, rec), "interrupted");   /* killed: nobody holds it */
	json_object_set_new(rec, "status", json_string("finished"));
	CHECK_STR(hml__search_status(s, rec), "finished");
	json_decref(rec);
	json_decref(upd);
	CHECK_OK(hml__search_lock(s, &fd2));
	hml__search_unlock(fd2);

	json_decref(a);
	json_decref(b);
	hml__store_free(s);
}

/* Trial 0 of config 0, finished, with the metrics every ok trial has. */
static void ok_trial(hml__hist_event *ev)
{
	hml__hist_event_init(ev);
	ev->trial = 0; ev->config = 0; ev->status = HML__HIST_OK; ev->arch = "cnn:4:relu";
	ev->m.val_rmse = 0.5; ev->m.test_rmse = 0.6; ev->m.latency_s = 1e-4;
	ev->m.latency_batch = 1; ev->m.params = 9; ev->m.epochs_run = 1;
}

/* An iterative application's trial: its QoI error after the run is
 * written, read back, and is the error the search ranks it by. */
TEST(qoi_error_round_trip)
{
	hml__history *h = NULL;
	hml__hist_event ev;
	collected c;
	char path[600];
	int torn = -1;

	memset(&c, 0, sizeof(c));
	path_of(path, sizeof(path), "qoi.jsonl");
	CHECK_OK(hml__history_open(&h, NULL, path));
	ok_trial(&ev);
	ev.m.has_qoi = 1; ev.m.qoi_error = 3.25; ev.m.latency_bound = 2.5e-6;
	CHECK_OK(hml__history_append(h, &ev));
	ev.trial = 1; ev.m.has_qoi = 0;   /* an ordinary trial writes none */
	ev.m.latency_bound = NAN;
	CHECK_OK(hml__history_append(h, &ev));
	hml__history_close(h);
	CHECK_OK(hml__history_read(path, collect, &c, &torn));
	CHECK_EQ_INT(c.n, 2);
	CHECK(c.ev[0].m.has_qoi && c.ev[0].m.qoi_error == 3.25);
	CHECK(c.ev[0].m.latency_bound == 2.5e-6);   /* its k's bound (lib/search/iterative.h) */
	CHECK(isnan(c.ev[1].m.latency_bound));
	CHECK(hml__hist_error(&c.ev[0].m, "rmse") == 3.25);
	CHECK(!c.ev[1].m.has_qoi);
	CHECK(hml__hist_error(&c.ev[1].m, "rmse") == 0.5);
	collected_release(&c);
}

/* A trial of rollout R > 1: its R-step validation error is written and
 * read back beside val_rmse, which it is still ranked by; R 1 writes none. */
TEST(rollout_round_trip)
{
	hml__history *h = NULL;
	hml__hist_event ev;
	collected c;
	char path[600];
	int torn = -1;

	memset(&c, 0, sizeof(c));
	path_of(path, sizeof(path), "rollout.jsonl");
	CHECK_OK(hml__history_open(&h, NULL, path));
	ok_trial(&ev);
	CHECK(isnan(ev.m.val_rollout_rmse));
	ev.m.val_rollout_rmse = 0.875;
	CHECK_OK(hml__history_append(h, &ev));
	ev.trial = 1; ev.m.val_rollout_rmse = NAN;
	CHECK_OK(hml__history_append(h, &ev));
	hml__history_close(h);
	CHECK_OK(hml__history_read(path, collect, &c, &torn));
	CHECK_EQ_INT(c.n, 2);
	CHECK(c.ev[0].m.val_rollout_rmse == 0.875);
	CHECK(hml__hist_error(&c.ev[0].m, "rmse") == 0.5);
	CHECK(isnan(c.ev[1].m.val_rollout_rmse));
	collected_release(&c);
}

int main(void)
{
	if (tmp_dir_make("history") < 0)
		return 1;
	unsetenv("HML_LOCK_TIMEOUT");
	RUN(round_trip);
	RUN(background_sync);
	RUN(torn_line);
	RUN(bad_lines);
	RUN(hostile_lines);
	RUN(search_record);
	RUN(qoi_error_round_trip);
	RUN(rollout_round_trip);
	tmp_dir_remove();
	return check_report();
}
