/*
 * lib/search/history_line.c - one line of the trial history (history.h):
 * an event written as JSON and a line read back into an event, checked,
 * side by side.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "core/util.h"
#include "deploy/latency.h"
#include "search/history_private.h"
#include "store/ids.h"
#include "sys/fsutil.h"

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
	ev->m.val_rollout_rmse = NAN;
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
	if (isfinite(m->val_rollout_rmse))
		json_object_set_new(o, "val_rollout_rmse", json_real(m->val_rollout_rmse));
	return o;
}

json_t *hml__hist_event_json(const hml__hist_event *ev)
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
	"latency_bound", "val_rollout_rmse", NULL
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
	                                      "latency_cost_seconds", "qoi_error",
	                                      "val_rollout_rmse", NULL };
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
	m->val_rollout_rmse = hml__json_number(o, "val_rollout_rmse");
}

const char *hml__hist_event_of(hml__hist_event *ev, const json_t *o, double **u, char *why,
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
