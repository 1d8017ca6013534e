/*
 * lib/search/history.c - the trial history of hml search (search/<id>/trials.jsonl)
 * and its "searches" record: writer and reader side by side.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/beneath.h"
#include "core/error.h"
#include "core/json.h"
#include "core/util.h"
#include "deploy/latency.h"
#include "search/history.h"
#include "store/ids.h"
#include "sys/fsutil.h"

struct hml__history {
	int fd;
	char *path;
	/* Lines written and made durable, counted from 1 since open; a thread
	 * (started by the first hml__history_write) syncs in the background
	 * and says so on the pipe. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	int thread_on, stop, sync_errno;
	uint64_t written, synced;
	int pipe[2];
};

static const char *const status_names[] = {
	"running", "ok", "failed", "timeout", "crashed", "rerun", "kept"
};
#define NSTATUS (sizeof(status_names) / sizeof(status_names[0]))

const char *hml__hist_status_name(hml__hist_status st)
{
	return (unsigned)st < NSTATUS ? status_names[st] : NULL;
}

void hml__hist_event_init(hml__hist_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->trial = ev->config = -1;
	ev->worker = -1;
	ev->counted = -1;
	ev->seconds = NAN;
	ev->m.val_rmse = ev->m.test_rmse = ev->m.latency_s = NAN;
	ev->m.val_mape = ev->m.test_mape = NAN;
	ev->m.latency_batch = ev->m.params = -1;
	ev->m.epochs_run = -1;
	ev->m.latency_target = -1;
	ev->m.latency_cost = NAN;
	ev->m.qoi_error = NAN;
	ev->m.step_seconds = NAN;
	ev->m.latency_bound = NAN;
}

/* ---- writer ------------------------------------------------------------- */

/* Cut a torn last line (a writer killed mid-line) so the next line starts clean. */
static int cut_torn_tail(int fd)
{
	struct stat st;
	off_t end, pos;
	char buf[4096];

	if (fstat(fd, &st) < 0)
		return -1;
	end = st.st_size;
	pos = end;
	while (pos > 0) {
		size_t n = pos >= (off_t)sizeof(buf) ? sizeof(buf) : (size_t)pos;
		ssize_t got = pread(fd, buf, n, pos - (off_t)n);

		if (got != (ssize_t)n)
			return -1;
		for (size_t i = n; i-- > 0;)
			if (buf[i] == '\n') {
				off_t keep = pos - (off_t)n + (off_t)i + 1;

				return keep == end ? 0 : ftruncate(fd, keep);
			}
		pos -= (off_t)n;
	}
	return end ? ftruncate(fd, 0) : 0;
}

int hml__history_open(hml__history **out, const char *root, const char *path)
{
	hml__history *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (!h || !(h->path = hml__strdup(path))) {
		free(h);
		return hml__error_oom();
	}
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	h->fd = h->pipe[0] = h->pipe[1] = -1;
	if (pipe(h->pipe) < 0 || fcntl(h->pipe[0], F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(h->pipe[1], F_SETFL, O_NONBLOCK) < 0 || fcntl(h->pipe[0], F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(h->pipe[1], F_SETFD, FD_CLOEXEC) < 0) {
		int rc = hml__error_set(HML_EIO, "cannot open trial history '%s': %s", path,
		                        strerror(errno));

		hml__history_close(h);
		return rc;
	}
	h->fd = hml__beneath_open(root, path, O_RDWR | O_APPEND | O_CREAT, 0666);
	if (h->fd < 0 || cut_torn_tail(h->fd) < 0) {
		int rc = h->fd < 0 && h->fd != HML_EIO
		         ? h->fd
		         : hml__error_set(HML_EIO, "cannot open trial history '%s': %s", path,
		                          strerror(errno));

		hml__history_close(h);
		return rc;
	}
	*out = h;
	return 0;
}

void hml__history_close(hml__history *h)
{
	if (!h)
		return;
	if (h->thread_on) {
		pthread_mutex_lock(&h->mu);
		h->stop = 1;
		pthread_cond_signal(&h->cv);
		pthread_mutex_unlock(&h->mu);
		pthread_join(h->thread, NULL);
	}
	if (h->fd >= 0 && h->written > h->synced)
		(void)fdatasync(h->fd);
	if (h->fd >= 0)
		close(h->fd);
	for (int i = 0; i < 2; i++)
		if (h->pipe[i] >= 0)
			close(h->pipe[i]);
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
	free(h->path);
	free(h);
}

/* The sync thread: fdatasync() whatever was written since the last sync,
 * then one byte on the pipe. One sync covers every line written before it. */
static void *sync_thread(void *arg)
{
	hml__history *h = arg;

	pthread_mutex_lock(&h->mu);
	for (;;) {
		uint64_t upto;
		int rc;

		while (!h->stop && h->written == h->synced)
			pthread_cond_wait(&h->cv, &h->mu);
		if (h->written == h->synced)
			break;   /* stopping, and nothing is left */
		upto = h->written;
		pthread_mutex_unlock(&h->mu);
		rc = fdatasync(h->fd);
		pthread_mutex_lock(&h->mu);
		if (rc < 0 && !h->sync_errno)
			h->sync_errno = errno;
		if (upto > h->synced)
			h->synced = upto;
		(void)!write(h->pipe[1], "s", 1);   /* full pipe: a wake-up is pending anyway */
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

static int start_thread(hml__history *h)
{
	/* Signals go to the coordinator's thread, not to this one. */
	int rc = hml__thread_start(&h->thread, sync_thread, h);

	if (rc != 0)
		return hml__error_set(HML_ERROR, "cannot start the trial history's sync thread: %s",
		                      strerror(rc));
	h->thread_on = 1;
	return 0;
}

double hml__hist_error(const hml__hist_metrics *m, const char *metric)
{
	if (m->has_qoi)
		return m->qoi_error;
	if (!metric || strcmp(metric, "rmse") == 0)
		return m->val_rmse;
	return strcmp(metric, "mape") == 0 ? m->val_mape : NAN;
}

double hml__hist_cost(const hml__hist_metrics *m)
{
	return m->has_qoi && m->step_seconds > 0 ? m->step_seconds : m->latency_s;
}

static json_t *metrics_json(const hml__hist_metrics *m)
{
	json_t *o = json_object();

	json_object_set_new(o, "val_rmse", hml__json_real(m->val_rmse));
	json_object_set_new(o, "test_rmse", hml__json_real(m->test_rmse));
	if (!isnan(m->val_mape) || !isnan(m->test_mape)) {
		json_object_set_new(o, "val_mape", hml__json_real(m->val_mape));
		json_object_set_new(o, "test_mape", hml__json_real(m->test_mape));
	}
	json_object_set_new(o, "latency_seconds_per_sample", hml__json_real(m->latency_s));
	json_object_set_new(o, "latency_batch", json_integer(m->latency_batch));
	if (hml__target_name(m->latency_target)) {
		json_object_set_new(o, "latency_target", json_string(hml__target_name(m->latency_target)));
		json_object_set_new(o, "latency_threads", json_integer(m->latency_threads));
		json_object_set_new(o, "latency_cached", json_boolean(m->latency_cached));
		json_object_set_new(o, "latency_cost_seconds", hml__json_real(m->latency_cost));
	}
	json_object_set_new(o, "params", json_integer(m->params));
	json_object_set_new(o, "epochs_run", json_integer(m->epochs_run));
	if (m->has_qoi)
		json_object_set_new(o, "qoi_error", hml__json_real(m->qoi_error));
	if (m->has_qoi && m->step_seconds > 0 && isfinite(m->step_seconds))
		json_object_set_new(o, "step_seconds", json_real(m->step_seconds));
	if (m->latency_bound > 0 && isfinite(m->latency_bound))
		json_object_set_new(o, "latency_bound", json_real(m->latency_bound));
	return o;
}

static json_t *event_json(const hml__hist_event *ev)
{
	json_t *o = json_object(), *u;
	char when[32];

	json_object_set_new(o, "trial", json_integer(ev->trial));
	json_object_set_new(o, "config", json_integer(ev->config));
	json_object_set_new(o, "rung", json_integer(ev->rung));
	json_object_set_new(o, "status", json_string(hml__hist_status_name(ev->status)));
	if (ev->epochs > 0)
		json_object_set_new(o, "epochs", json_integer(ev->epochs));
	if (ev->worker >= 0)
		json_object_set_new(o, "worker", json_integer(ev->worker));
	if (ev->counted >= 0)
		json_object_set_new(o, "counted", json_integer(ev->counted));
	if (ev->params)
		json_object_set(o, "params", (json_t *)ev->params);
	if (ev->u) {
		u = json_array();
		for (size_t i = 0; i < ev->dim; i++)
			json_array_append_new(u, json_real(ev->u[i]));
		json_object_set_new(o, "u", u);
	}
	if (isfinite(ev->seconds))
		json_object_set_new(o, "seconds", json_real(ev->seconds));
	if (ev->arch)
		json_object_set_new(o, "arch", json_string(ev->arch));
	if (ev->status == HML__HIST_OK)
		json_object_set_new(o, "metrics", metrics_json(&ev->m));
	if (ev->error)
		json_object_set_new(o, "error", hml__json_bytes(ev->error));
	if (ev->model)
		json_object_set_new(o, "model", json_string(ev->model));
	hml__time_iso(when, sizeof(when));
	json_object_set_new(o, "time", json_string(when));
	return o;
}

/* Write ev as one line (one write(2) on the O_APPEND descriptor); *seq:
 * its number. */
static int write_line(hml__history *h, const hml__hist_event *ev, uint64_t *seq)
{
	json_t *o;
	char *line;
	size_t len;
	ssize_t n;

	if (!hml__hist_status_name(ev->status))
		return hml__error_set(HML_EINVALID, "trial %ld: status %d is not valid", ev->trial,
		                      (int)ev->status);
	if (!(o = event_json(ev)))
		return hml__error_oom();
	/* Doubles keep all 17 digits, so "u" reads back bit for bit. */
	line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	json_decref(o);
	if (!line)
		return hml__error_oom();
	len = strlen(line);
	line[len] = '\n';   /* json_dumps's NUL becomes the newline: one write */
	n = write(h->fd, line, len + 1);
	free(line);
	if (n != (ssize_t)(len + 1))
		return hml__error_set(HML_EIO, "cannot write trial history '%s': %s", h->path,
		                      n < 0 ? strerror(errno) : "short write");
	pthread_mutex_lock(&h->mu);
	*seq = ++h->written;
	pthread_mutex_unlock(&h->mu);
	return 0;
}

int hml__history_append(hml__history *h, const hml__hist_event *ev)
{
	uint64_t seq;
	int rc = write_line(h, ev, &seq);

	if (rc < 0)
		return rc;
	if (fdatasync(h->fd) < 0)
		return hml__error_set(HML_EIO, "cannot write trial history '%s': %s", h->path,
		                      strerror(errno));
	pthread_mutex_lock(&h->mu);
	if (seq > h->synced)
		h->synced = seq;
	pthread_mutex_unlock(&h->mu);
	return 0;
}

int hml__history_write(hml__history *h, const hml__hist_event *ev, uint64_t *seq)
{
	int rc;

	if (!h->thread_on && (rc = start_thread(h)) < 0)
		return rc;
	if ((rc = write_line(h, ev, seq)) < 0)
		return rc;
	pthread_mutex_lock(&h->mu);
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
	return 0;
}

int hml__history_sync_fd(const hml__history *h)
{
	return h->pipe[0];
}

int hml__history_durable(hml__history *h, uint64_t *seq)
{
	char buf[64];
	int err;

	while (read(h->pipe[0], buf, sizeof(buf)) > 0)
		;
	pthread_mutex_lock(&h->mu);
	*seq = h->synced;
	err = h->sync_errno;
	pthread_mutex_unlock(&h->mu);
	if (err)
		return hml__error_set(HML_EIO, "cannot write trial history '%s': %s", h->path,
		                      strerror(err));
	return 0;
}

int hml__history_flush(hml__history *h, uint64_t *seq)
{
	uint64_t upto;

	pthread_mutex_lock(&h->mu);
	upto = h->written;
	pthread_mutex_unlock(&h->mu);
	if (fdatasync(h->fd) < 0)
		return hml__error_set(HML_EIO, "cannot write trial history '%s': %s", h->path,
		                      strerror(errno));
	pthread_mutex_lock(&h->mu);
	if (upto > h->synced)
		h->synced = upto;
	pthread_mutex_unlock(&h->mu);
	return hml__history_durable(h, seq);
}

/* ---- reader ------------------------------------------------------------- */

static int bad_line(const char *path, size_t line, const char *why)
{
	return hml__error_set(HML_EINVALID, "trial history '%s' line %zu: %s", path, line, why);
}

static int64_t int_or(const json_t *o, const char *key, int64_t dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

/* The keys a line and its metrics may have: anything else is refused, so
 * that a history edited by hand is never half understood. */
static const char *const line_keys[] = {
	"trial", "config", "rung", "status", "epochs", "worker", "counted", "params", "u",
	"seconds", "arch", "metrics", "error", "model", "time", NULL
};
static const char *const metric_keys[] = {
	"val_rmse", "test_rmse", "val_mape", "test_mape", "latency_seconds_per_sample",
	"latency_batch", "latency_target", "latency_threads", "latency_cached",
	"latency_cost_seconds", "params", "epochs_run", "qoi_error", "step_seconds",
	"latency_bound", NULL
};

/* The first key of o not in keys (NULL: none). */
static const char *unknown_key(const json_t *o, const char *const *keys)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)o, key, v) {
		size_t k;

		for (k = 0; keys[k] && strcmp(keys[k], key) != 0; k++)
			;
		if (!keys[k])
			return key;
	}
	return NULL;
}

/* o[key], when present, is an integer in [lo, hi]. */
static int int_ok(const json_t *o, const char *key, json_int_t lo, json_int_t hi)
{
	const json_t *v = json_object_get(o, key);

	return !v || (json_is_integer(v) && json_integer_value(v) >= lo &&
	              json_integer_value(v) <= hi);
}

/* o[key], when present and not null (unknown), is a finite number that is
 * >= 0 (positive: > 0). */
static int real_ok(const json_t *o, const char *key, int positive)
{
	const json_t *v = json_object_get(o, key);
	double x = json_number_value(v);

	return !v || json_is_null(v) ||
	       (json_is_number(v) && isfinite(x) && (positive ? x > 0 : x >= 0));
}

/* Where the checks of a line fail: why, in `why` (size bytes). */
static const char *say(char *why, size_t size, const char *fmt, const char *key)
{
	snprintf(why, size, fmt, key);
	return why;
}

/* The metrics of an "ok" line: known keys, values finite and in range. */
static const char *metrics_check(const json_t *m, char *why, size_t size)
{
	static const char *const errors[] = { "val_rmse", "test_rmse", "val_mape", "test_mape",
	                                      "latency_cost_seconds", "qoi_error", NULL };
	const char *key;

	if (!json_is_object(m))
		return "'metrics' is not an object";
	if ((key = unknown_key(m, metric_keys)) != NULL)
		return say(why, size, "unknown key 'metrics.%.64s'", key);
	for (size_t k = 0; errors[k]; k++)
		if (!real_ok(m, errors[k], 0))
			return say(why, size, "'metrics.%s' is not a finite number >= 0", errors[k]);
	if (!real_ok(m, "latency_seconds_per_sample", 1))
		return "'metrics.latency_seconds_per_sample' is not a finite number > 0";
	if (!real_ok(m, "step_seconds", 1))
		return "'metrics.step_seconds' is not a finite number > 0";
	if (!real_ok(m, "latency_bound", 1))
		return "'metrics.latency_bound' is not a finite number > 0";
	/* (-1: unknown, as the writer writes it) */
	if (!int_ok(m, "latency_batch", -1, INT32_MAX) || int_or(m, "latency_batch", -1) == 0 ||
	    !int_ok(m, "params", -1, INT64_MAX) || !int_ok(m, "epochs_run", -1, INT32_MAX) ||
	    !int_ok(m, "latency_threads", 0, 4096))
		return "a count in 'metrics' is not an integer in range";
	if (json_object_get(m, "latency_cached") && !json_is_boolean(json_object_get(m,
	                                                                    "latency_cached")))
		return "'metrics.latency_cached' is not true or false";
	if (json_object_get(m, "latency_target") &&
	    hml__target_parse(json_string_value(json_object_get(m, "latency_target"))) < 0)
		return "unknown 'metrics.latency_target'";
	return NULL;
}

/* The members every line may have besides the counts: known keys, each of
 * its type, numbers finite and in range, the model an id (lib/store/ids.h). */
static const char *line_check(const json_t *o, char *why, size_t size)
{
	const json_t *err = json_object_get(o, "error"), *v;
	const char *key;
	size_t i;

	if ((key = unknown_key(o, line_keys)) != NULL)
		return say(why, size, "unknown key '%.64s'", key);
	if (!int_ok(o, "trial", 0, HML__HIST_MAX_TRIAL))
		return "'trial' is missing or not a count below 10^9";
	if (!int_ok(o, "config", 0, HML__HIST_MAX_TRIAL))
		return "'config' is missing or not a count below 10^9";
	if (!int_ok(o, "rung", 0, HML__HIST_MAX_RUNG))
		return "'rung' is not a count below 64";
	if (!int_ok(o, "epochs", 0, INT32_MAX) || !int_ok(o, "worker", -1, 1 << 20))
		return "'epochs' or 'worker' is not an integer in range";
	if (!real_ok(o, "seconds", 0))
		return "'seconds' is not a finite number >= 0";
	if ((json_object_get(o, "params") && !json_is_object(json_object_get(o, "params"))) ||
	    (json_object_get(o, "arch") && !json_is_string(json_object_get(o, "arch"))) ||
	    (json_object_get(o, "time") && !json_is_string(json_object_get(o, "time"))) ||
	    (err && !json_is_string(err) && !json_is_object(err)))
		return "'params', 'arch', 'time' or 'error' is not of its type";
	if (json_object_get(o, "model") &&
	    hml__id_check("models", json_string_value(json_object_get(o, "model"))) < 0)
		return say(why, size, "'model': %s", hml_error_last()->message);
	if (json_object_get(o, "metrics") &&
	    (key = metrics_check(json_object_get(o, "metrics"), why, size)) != NULL)
		return key;
	json_array_foreach(json_object_get(o, "u"), i, v)
		if (!json_is_number(v) || !(json_number_value(v) >= 0 && json_number_value(v) <= 1))
			return "'u' holds a value that is not a number in [0, 1]";
	return NULL;
}

static void metrics_of(hml__hist_metrics *m, const json_t *o)
{
	m->val_rmse = hml__json_number(o, "val_rmse");
	m->test_rmse = hml__json_number(o, "test_rmse");
	m->val_mape = hml__json_number(o, "val_mape");
	m->test_mape = hml__json_number(o, "test_mape");
	m->latency_s = hml__json_number(o, "latency_seconds_per_sample");
	m->latency_batch = int_or(o, "latency_batch", -1);
	m->params = int_or(o, "params", -1);
	m->epochs_run = (int)int_or(o, "epochs_run", -1);
	m->latency_target = hml__target_parse(json_string_value(json_object_get(o,
	                                                                        "latency_target")));
	m->latency_threads = (int)int_or(o, "latency_threads", 0);
	m->latency_cached = json_is_true(json_object_get(o, "latency_cached"));
	m->latency_cost = hml__json_number(o, "latency_cost_seconds");
	m->has_qoi = json_object_get(o, "qoi_error") != NULL;
	m->qoi_error = hml__json_number(o, "qoi_error");
	m->step_seconds = hml__json_number(o, "step_seconds");
	m->latency_bound = hml__json_number(o, "latency_bound");
}

/* Fill *ev from line object o; *u receives the point (malloc'ed). NULL,
 * or why the line is not an event (in `why` or static). */
static const char *event_of(hml__hist_event *ev, const json_t *o, double **u, char *why,
                            size_t size)
{
	const char *st = json_string_value(json_object_get(o, "status")), *bad;
	const json_t *arr = json_object_get(o, "u"), *v;
	size_t i;

	hml__hist_event_init(ev);
	if (!json_is_integer(json_object_get(o, "trial")))
		return "'trial' is missing or not a count";
	if (!json_is_integer(json_object_get(o, "config")))
		return "'config' is missing or not a count";
	if (!json_is_integer(json_object_get(o, "rung")))
		return "'rung' is missing or not a count";
	if (arr && !json_is_array(arr))
		return "'u' is not an array";
	if ((bad = line_check(o, why, size)) != NULL)
		return bad;
	if (!st)
		return "'status' is missing";
	for (i = 0; i < NSTATUS && strcmp(status_names[i], st) != 0; i++)
		;
	if (i == NSTATUS)
		return "unknown 'status'";
	ev->status = (hml__hist_status)i;
	ev->trial = (long)int_or(o, "trial", -1);
	ev->config = (long)int_or(o, "config", -1);
	ev->rung = (unsigned)int_or(o, "rung", 0);
	ev->epochs = (int)int_or(o, "epochs", 0);
	ev->worker = (int)int_or(o, "worker", -1);
	if (json_object_get(o, "counted") &&
	    (!json_is_integer(json_object_get(o, "counted")) || int_or(o, "counted", -1) < 0 ||
	     int_or(o, "counted", -1) > ev->trial))
		return "'counted' is not a count of earlier trials";
	ev->counted = (long)int_or(o, "counted", -1);
	ev->params = json_object_get(o, "params");
	ev->seconds = hml__json_number(o, "seconds");
	ev->arch = json_string_value(json_object_get(o, "arch"));
	ev->error = json_string_value(json_object_get(o, "error"));
	ev->model = json_string_value(json_object_get(o, "model"));
	metrics_of(&ev->m, json_object_get(o, "metrics"));
	if (arr) {
		if (!(*u = malloc((json_array_size(arr) + 1) * sizeof(**u))))
			return "out of memory";
		json_array_foreach(arr, i, v)
			(*u)[i] = json_number_value(v);
		ev->u = *u;
		ev->dim = json_array_size(arr);
	}
	if (ev->status == HML__HIST_KEPT && !ev->model)
		return "'model' is missing";
	return NULL;
}

int hml__history_read(const char *path, int (*fn)(const hml__hist_event *ev, void *payload),
                      void *payload, int *torn)
{
	char *text = NULL, *p, *nl;
	size_t len = 0, line = 0;
	int rc;

	if (torn)
		*torn = 0;
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0;
	if ((rc = hml__read_file(path, &text, &len)) < 0)
		return rc;
	for (p = text; p < text + len && rc == 0; p = nl + 1) {
		json_error_t je;
		json_t *o;
		hml__hist_event ev;
		double *u = NULL;
		const char *why;
		char whybuf[256];

		line++;
		if (!(nl = memchr(p, '\n', (size_t)(text + len - p)))) {
			if (torn)
				*torn = 1;   /* killed mid-line: never completed */
			break;
		}
		if (!(o = json_loadb(p, (size_t)(nl - p), 0, &je))) {
			rc = bad_line(path, line, je.text);
			break;
		}
		if (!json_is_object(o))
			rc = bad_line(path, line, "not a JSON object");
		else if ((why = event_of(&ev, o, &u, whybuf, sizeof(whybuf))) != NULL)
			rc = bad_line(path, line, why);
		else if ((rc = fn(&ev, payload)) < 0 && hml_error_last()->code == HML_EINVALID) {
			hml__error_saved saved;   /* the file and the line named */

			hml__error_save(&saved);
			rc = bad_line(path, line, saved.message);
		}
		free(u);
		json_decref(o);
	}
	free(text);
	return rc;
}

/* ---- the "searches" record ---------------------------------------------- */

int hml__json_sha256(const json_t *v, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY |
	                           JSON_REAL_PRECISION(17));

	if (!text)
		return hml__error_oom();
	if (EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha256(), NULL) != 1) {
		free(text);
		return hml__error_set(HML_ERROR, "SHA-256 failed");
	}
	free(text);
	for (unsigned i = 0; i < mdlen && i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
	return 0;
}

typedef struct set_args {
	const char *id;
	const json_t *fields;
	const char *dir;
} set_args;

static int set_fields(json_t *m, void *payload)
{
	const set_args *a = payload;
	json_t *rec = hml__manifest_find(m, "searches", a->id);

	if (rec)
		return json_object_update(rec, (json_t *)a->fields) ? hml__error_oom() : 0;
	return hml__error_set(HML_ENOTFOUND, "no search '%s' in experiment '%s'", a->id, a->dir);
}

int hml__search_set(hml__store *s, const char *id, const json_t *fields)
{
	set_args a = { id, fields, hml__store_dir(s) };

	return hml__store_update(s, set_fields, &a);
}

int hml__search_register(hml__store *s, json_t *record, char *id_out, size_t id_size)
{
	char rel[96], *dir = NULL;
	json_t *files = NULL;
	int rc;

	if ((rc = hml__store_add(s, "searches", record, NULL, 0, 0, id_out, id_size)) < 0)
		return rc;
	snprintf(rel, sizeof(rel), "search/%s", id_out);
	if (!(dir = hml__store_path(s, rel)))
		return hml__error_oom();
	if ((rc = hml__beneath_mkdir_p(hml__store_dir(s), dir)) < 0) {
		if (rc == HML_EIO)
			rc = hml__error_set(HML_EIO, "cannot create '%s': %s", dir, strerror(errno));
		goto done;
	}
	snprintf(rel, sizeof(rel), "search/%s/%s", id_out, HML__HISTORY_FILE);
	if (!(files = json_pack("{s:{s:s}}", "files", "history", rel))) {
		rc = hml__error_oom();
		goto done;
	}
	rc = hml__search_set(s, id_out, files);
done:
	json_decref(files);
	free(dir);
	return rc;
}

int hml__search_lock(hml__store *s, int *fd)
{
	char *dir = hml__store_path(s, "search"), *path = NULL, text[64];
	int rc = 0, n;

	*fd = -1;
	if (!dir || !(path = hml__path_join(dir, ".lock"))) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = hml__beneath_mkdir_p(hml__store_dir(s), dir)) < 0 ||
	    (rc = *fd = hml__beneath_open(hml__store_dir(s), path, O_RDWR | O_CREAT, 0666)) < 0) {
		*fd = -1;
		if (rc == HML_EIO)
			rc = hml__error_set(HML_EIO, "cannot lock '%s': %s", path, strerror(errno));
		goto done;
	}
	rc = 0;
	/* A reader's probe (hml__search_holder) holds it for an instant. */
	for (int i = 0; i < 20 && flock(*fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK; i++)
		usleep(10000);
	if (flock(*fd, LOCK_EX | LOCK_NB) < 0) {
		ssize_t got = pread(*fd, text, sizeof(text) - 1, 0);
		long pid = 0;

		text[got > 0 ? got : 0] = '\0';
		pid = strtol(text, NULL, 10);
		rc = errno == EWOULDBLOCK
		     ? hml__error_set(HML_ELOCKED, "a search is already running in experiment '%s' "
		                      "(pid %ld)", hml__store_dir(s), pid)
		     : hml__error_set(HML_EIO, "cannot lock '%s': %s", path, strerror(errno));
		close(*fd);
		*fd = -1;
		goto done;
	}
	n = snprintf(text, sizeof(text), "%ld\n", (long)getpid());
	if (ftruncate(*fd, 0) == 0 && n > 0)
		(void)!pwrite(*fd, text, (size_t)n, 0);
done:
	free(path);
	free(dir);
	return rc;
}

void hml__search_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

void hml__search_lock_name(int fd, const char *id)
{
	char text[64];
	int n = snprintf(text, sizeof(text), "%ld %s\n", (long)getpid(), id);

	if (fd >= 0 && n > 0 && (size_t)n < sizeof(text) && ftruncate(fd, 0) == 0)
		(void)!pwrite(fd, text, (size_t)n, 0);
}

int hml__search_holder(const hml__store *s, char *id, size_t size)
{
	char *path = hml__store_path(s, "search/.lock"), text[64];
	const char *p;
	ssize_t got;
	int fd, held;

	if (id && size)
		id[0] = '\0';
	if (!path)
		return hml__error_oom();
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int rc = errno == ENOENT ? 0 : hml__error_set(HML_EIO, "cannot probe '%s': %s", path,
		                                               strerror(errno));
		free(path);
		return rc;
	}
	free(path);
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
		close(fd);
		return 0;
	}
	held = errno == EWOULDBLOCK;
	got = pread(fd, text, sizeof(text) - 1, 0);
	text[got > 0 ? got : 0] = '\0';
	close(fd);
	if (!held)
		return hml__error_set(HML_EIO, "cannot probe the search lock: %s", strerror(errno));
	p = text + strcspn(text, " \n");
	p += strspn(p, " ");
	if (id && size)
		snprintf(id, size, "%.*s", (int)strcspn(p, " \n"), p);
	return 1;
}

const char *hml__search_status(const hml__store *s, const json_t *rec)
{
	const char *status = json_string_value(json_object_get(rec, "status"));
	const char *sid = json_string_value(json_object_get(rec, "id"));
	char id[32];
	int held;

	if (!status || strcmp(status, "running") != 0 || !sid)
		return status;
	held = hml__search_holder(s, id, sizeof(id));
	if (held < 0)
		return status;
	/* A live holder runs this search, or has not named its search yet. */
	if (held && (!id[0] || strcmp(id, sid) == 0))
		return status;
	return "interrupted";
}
