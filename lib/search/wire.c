/*
 * lib/search/wire.c - the hml search worker protocol (see wire.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/json.h"
#include "deploy/latency.h"
#include "search/wire.h"

static int bad(const char *why)
{
	return hml__error_set(HML_EINVALID, "worker message: %s", why);
}

static double num_of(const json_t *o, const char *key, double dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : json_is_null(v) ? NAN : dflt;
}

static long long int_of(const json_t *o, const char *key, long long dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

static const char *str_of(const json_t *o, const char *key, const char *dflt)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : dflt;
}

const char *hml__wire_type(const json_t *msg)
{
	const char *t = json_string_value(json_object_get(msg, "type"));

	return t ? t : "";
}

json_t *hml__wire_init(const char *region, const char *const *paths, size_t n,
                       const char *nonfinite)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++)
		json_array_append_new(arr, json_string(paths[i]));
	return json_pack("{s:s, s:s, s:o, s:s}", "type", "init", "region", region, "data", arr,
	                 "nonfinite", nonfinite ? nonfinite : "drop");
}

int hml__wire_init_read(const json_t *msg, const char **region, const char ***paths,
                        size_t *n, const char **nonfinite)
{
	const json_t *arr = json_object_get(msg, "data"), *v;
	size_t i;

	*paths = NULL;
	*n = 0;
	*region = json_string_value(json_object_get(msg, "region"));
	*nonfinite = json_string_value(json_object_get(msg, "nonfinite"));
	if (strcmp(hml__wire_type(msg), "init") != 0)
		return bad("expected 'init'");
	if (!*region || !*nonfinite || !json_is_array(arr) || !json_array_size(arr))
		return bad("init lacks 'region', 'nonfinite' or 'data'");
	if (!(*paths = calloc(json_array_size(arr), sizeof(**paths))))
		return hml__error_oom();
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v)) {
			free(*paths);
			*paths = NULL;
			return bad("init 'data' holds a value that is not a path");
		}
		(*paths)[i] = json_string_value(v);
	}
	*n = json_array_size(arr);
	return 0;
}

json_t *hml__wire_ready(long long rows)
{
	return json_pack("{s:s, s:I}", "type", "ready", "rows", (json_int_t)rows);
}

json_t *hml__wire_error(const char *message)
{
	return json_pack("{s:s, s:s}", "type", "error", "error", message ? message : "");
}

json_t *hml__wire_trial(long trial, const char *out, const hml__train_options *o)
{
	json_t *opt = json_pack(
		"{s:s, s:i, s:I, s:o, s:o, s:s, s:s, s:i, s:o, s:I, s:i, s:o, s:o, s:I, s:o, s:s, s:s,"
		" s:o, s:i, s:o, s:s, s:i}",
		"arch", o->arch ? o->arch : "", "epochs", o->epochs, "batch", (json_int_t)o->batch,
		"lr", hml__json_real(o->lr), "weight_decay", hml__json_real(o->weight_decay),
		"optimizer", o->optimizer ? o->optimizer : "adam",
		"schedule", o->schedule ? o->schedule : "plateau", "patience", o->patience,
		"clip", hml__json_real(o->clip), "seed", (json_int_t)o->seed, "threads", o->threads,
		"val_fraction", hml__json_real(o->val_fraction), "test_fraction", hml__json_real(o->test_fraction),
		"infer_batch", (json_int_t)o->infer_batch, "max_seconds", hml__json_real(o->max_seconds),
		"loss", o->loss ? o->loss : "mse", "metric", o->metric ? o->metric : "rmse",
		"mape_floor", hml__json_real(o->mape_floor), "latency_threads", o->latency_threads,
		"row_fraction", hml__json_real(o->row_fraction),
		"categorical", o->categorical ? o->categorical : "", "rollout", o->rollout);

	if (!opt)
		return NULL;
	return json_pack("{s:s, s:i, s:s, s:o}", "type", "trial", "trial", (int)trial, "out", out,
	                 "options", opt);
}

int hml__wire_trial_read(const json_t *msg, long *trial, const char **out,
                         hml__train_options *o)
{
	const json_t *opt = json_object_get(msg, "options");

	*trial = (long)int_of(msg, "trial", -1);
	*out = json_string_value(json_object_get(msg, "out"));
	if (strcmp(hml__wire_type(msg), "trial") != 0)
		return bad("expected 'trial'");
	if (*trial < 0 || !*out || !json_is_object(opt))
		return bad("trial lacks 'trial', 'out' or 'options'");
	o->arch = str_of(opt, "arch", o->arch);
	o->optimizer = str_of(opt, "optimizer", o->optimizer);
	o->schedule = str_of(opt, "schedule", o->schedule);
	o->loss = str_of(opt, "loss", o->loss);
	o->categorical = str_of(opt, "categorical", o->categorical);
	o->metric = str_of(opt, "metric", o->metric);
	o->mape_floor = num_of(opt, "mape_floor", o->mape_floor);
	o->epochs = (int)int_of(opt, "epochs", o->epochs);
	o->batch = int_of(opt, "batch", o->batch);
	o->patience = (int)int_of(opt, "patience", o->patience);
	o->rollout = (int)int_of(opt, "rollout", o->rollout);
	o->seed = (uint64_t)int_of(opt, "seed", (long long)o->seed);
	o->threads = (int)int_of(opt, "threads", o->threads);
	o->latency_threads = (int)int_of(opt, "latency_threads", o->latency_threads);
	o->row_fraction = num_of(opt, "row_fraction", o->row_fraction);
	o->infer_batch = int_of(opt, "infer_batch", o->infer_batch);
	o->lr = num_of(opt, "lr", o->lr);
	o->weight_decay = num_of(opt, "weight_decay", o->weight_decay);
	o->clip = num_of(opt, "clip", o->clip);
	o->val_fraction = num_of(opt, "val_fraction", o->val_fraction);
	o->test_fraction = num_of(opt, "test_fraction", o->test_fraction);
	o->max_seconds = num_of(opt, "max_seconds", o->max_seconds);
	if (isnan(o->max_seconds))
		o->max_seconds = 0;
	return 0;
}

json_t *hml__wire_result(long trial, const char *error, const hml__train_result *r)
{
	json_t *res;

	if (error)
		return json_pack("{s:s, s:i, s:s, s:s}", "type", "result", "trial", (int)trial,
		                 "status", "failed", "error", error);
	res = json_pack(
		"{s:s, s:I, s:I, s:I, s:I, s:i, s:i, s:b, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
		" s:o, s:I, s:b, s:o, s:o, s:o, s:o, s:I, s:o, s:o}",
		"arch", r->arch, "params", (json_int_t)r->params, "n_train", (json_int_t)r->n_train,
		"n_val", (json_int_t)r->n_val, "n_test", (json_int_t)r->n_test,
		"epochs_run", r->epochs_run, "best_epoch", r->best_epoch,
		"stopped_early", r->stopped_early, "interrupted", r->interrupted,
		"train_seconds", hml__json_real(r->train_seconds), "samples_per_second", hml__json_real(r->samples_per_second),
		"final_lr", hml__json_real(r->final_lr), "val_rmse", hml__json_real(r->val_rmse),
		"test_rmse", hml__json_real(r->test_rmse), "test_mae", hml__json_real(r->test_mae),
		"test_max_abs", hml__json_real(r->test_max_abs), "latency_s_per_sample", hml__json_real(r->latency_s_per_sample),
		"latency_batch", (json_int_t)r->latency_batch, "out_of_time", r->out_of_time,
		"train_step_seconds", hml__json_real(r->train_step_seconds),
		"forward_max_diff", hml__json_real(r->forward_max_diff),
		"val_mape", hml__json_real(r->val_mape), "test_mape", hml__json_real(r->test_mape),
		"val_rollout_windows", (json_int_t)r->val_rollout_windows,
		"val_rollout_rmse", hml__json_real(r->val_rollout_rmse),
		"val_rollout_mape", hml__json_real(r->val_rollout_mape));
	if (!res)
		return NULL;
	return json_pack("{s:s, s:i, s:s, s:o}", "type", "result", "trial", (int)trial,
	                 "status", "ok", "result", res);
}

int hml__wire_result_read(const json_t *msg, long *trial, const char **error,
                          hml__train_result *r)
{
	const json_t *res = json_object_get(msg, "result");
	const char *status = json_string_value(json_object_get(msg, "status"));
	const char *arch;

	*trial = (long)int_of(msg, "trial", -1);
	*error = NULL;
	memset(r, 0, sizeof(*r));
	if (strcmp(hml__wire_type(msg), "result") != 0)
		return bad("expected 'result'");
	if (*trial < 0 || !status)
		return bad("result lacks 'trial' or 'status'");
	if (strcmp(status, "failed") == 0) {
		*error = json_string_value(json_object_get(msg, "error"));
		if (!*error)
			*error = "the worker gave no reason";
		return 0;
	}
	if (strcmp(status, "ok") != 0 || !json_is_object(res))
		return bad("result has an unknown 'status' or no 'result'");
	arch = json_string_value(json_object_get(res, "arch"));
	snprintf(r->arch, sizeof(r->arch), "%s", arch ? arch : "");
	r->params = int_of(res, "params", -1);
	r->n_train = int_of(res, "n_train", 0);
	r->n_val = int_of(res, "n_val", 0);
	r->n_test = int_of(res, "n_test", 0);
	r->epochs_run = (int)int_of(res, "epochs_run", 0);
	r->best_epoch = (int)int_of(res, "best_epoch", 0);
	r->stopped_early = json_is_true(json_object_get(res, "stopped_early"));
	r->interrupted = json_is_true(json_object_get(res, "interrupted"));
	r->out_of_time = json_is_true(json_object_get(res, "out_of_time"));
	r->train_seconds = num_of(res, "train_seconds", NAN);
	r->samples_per_second = num_of(res, "samples_per_second", NAN);
	r->final_lr = num_of(res, "final_lr", NAN);
	r->val_rmse = num_of(res, "val_rmse", NAN);
	r->test_rmse = num_of(res, "test_rmse", NAN);
	r->test_mae = num_of(res, "test_mae", NAN);
	r->test_max_abs = num_of(res, "test_max_abs", NAN);
	r->latency_s_per_sample = num_of(res, "latency_s_per_sample", NAN);
	r->latency_batch = int_of(res, "latency_batch", 0);
	r->train_step_seconds = num_of(res, "train_step_seconds", NAN);
	r->forward_max_diff = num_of(res, "forward_max_diff", NAN);
	r->val_mape = num_of(res, "val_mape", NAN);
	r->test_mape = num_of(res, "test_mape", NAN);
	r->val_rollout_windows = int_of(res, "val_rollout_windows", 0);
	r->val_rollout_rmse = num_of(res, "val_rollout_rmse", NAN);
	r->val_rollout_mape = num_of(res, "val_rollout_mape", NAN);
	return 0;
}

/* ---- the latency objective ---------------------------------------------- */

static int set_latency(json_t *msg, int target, const char *key, double v)
{
	json_t *l = json_pack("{s:s, s:o}", "target", hml__target_name(target) ?
	                      hml__target_name(target) : "", key, hml__json_real(v));

	if (!l || json_object_set_new(msg, "latency", l) < 0)
		return hml__error_oom();
	return 0;
}

static int get_latency(const json_t *msg, const char *key, int *target, double *v)
{
	const json_t *l = json_object_get(msg, "latency");
	const char *name = json_string_value(json_object_get(l, "target"));

	*target = HML__TARGET_TORCHSCRIPT;
	*v = NAN;
	if (!l)
		return 0;
	if ((*target = hml__target_parse(name)) < 0) {
		*target = HML__TARGET_TORCHSCRIPT;
		return bad("'latency' names no known target");
	}
	*v = num_of(l, key, NAN);
	return 0;
}

int hml__wire_trial_set_latency(json_t *msg, int target, double known)
{
	return set_latency(msg, target, "known", known);
}

int hml__wire_trial_latency(const json_t *msg, int *target, double *known)
{
	return get_latency(msg, "known", target, known);
}

int hml__wire_trial_set_discard(json_t *msg)
{
	return json_object_set_new(msg, "discard", json_true()) < 0 ? hml__error_oom() : 0;
}

int hml__wire_trial_discard(const json_t *msg)
{
	return json_is_true(json_object_get(msg, "discard"));
}

int hml__wire_result_set_latency(json_t *msg, int target, double cost)
{
	return set_latency(msg, target, "cost", cost);
}

int hml__wire_result_latency(const json_t *msg, int *target, double *cost)
{
	return get_latency(msg, "cost", target, cost);
}

/* ---- an iterative application's runs ------------------------------------ */

int hml__wire_init_set_run(json_t *msg, const json_t *plan, char *const *paths,
                           const char *root, const char *dir)
{
	json_t *run = json_deep_copy(plan), *g;
	size_t i, j;

	if (!run)
		return hml__error_oom();
	json_array_foreach(json_object_get(run, "groups"), i, g) {
		json_t *data = json_object_get(g, "data"), *ix;

		json_array_foreach(data, j, ix)
			json_array_set_new(data, j, json_string(paths[json_integer_value(ix)]));
	}
	if (json_object_set_new(run, "root", json_string(root)) < 0 ||
	    json_object_set_new(run, "dir", json_string(dir)) < 0 ||
	    json_object_set_new(msg, "run", run) < 0)
		return hml__error_oom();
	return 0;
}

const json_t *hml__wire_init_run(const json_t *msg)
{
	const json_t *run = json_object_get(msg, "run");

	return json_is_object(run) ? run : NULL;
}

static json_t *int_or_null(long long v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

int hml__wire_trial_set_run(json_t *msg, long long k, long long interleave)
{
	if (json_object_set_new(msg, "run", json_pack("{s:o, s:o}", "k", int_or_null(k),
	                        "interleave", int_or_null(interleave))) < 0)
		return hml__error_oom();
	return 0;
}

int hml__wire_trial_run(const json_t *msg, long long *k, long long *interleave)
{
	const json_t *run = json_object_get(msg, "run");

	*k = *interleave = -1;
	if (!json_is_object(run))
		return 0;
	*k = int_of(run, "k", -1);
	*interleave = int_of(run, "interleave", -1);
	return 1;
}

int hml__wire_result_set_qoi(json_t *msg, double error)
{
	if (json_object_set_new(msg, "qoi", json_pack("{s:o}", "error",
	                                              hml__json_real(error))) < 0)
		return hml__error_oom();
	return 0;
}

double hml__wire_result_qoi(const json_t *msg)
{
	return num_of(json_object_get(msg, "qoi"), "error", NAN);
}

int hml__wire_send(int fd, const json_t *msg)
{
	char *line = json_dumps(msg, JSON_COMPACT | JSON_REAL_PRECISION(17));
	size_t len, done = 0;

	if (!line)
		return hml__error_oom();
	len = strlen(line);
	line[len++] = '\n';   /* over the NUL: the line is written whole */
	while (done < len) {
		ssize_t n = write(fd, line + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = errno;

			free(line);
			return hml__error_set(HML_EIO, "cannot write to worker pipe: %s", strerror(err));
		}
		done += (size_t)n;
	}
	free(line);
	return 0;
}

void hml__wire_reader_init(hml__wire_reader *r, int fd)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
}

void hml__wire_reader_release(hml__wire_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

/* A buffered whole line as a message: 1, 0 (none), or an error. */
static int take_line(hml__wire_reader *r, json_t **msg)
{
	char *nl = r->len ? memchr(r->buf, '\n', r->len) : NULL;
	json_error_t je;
	size_t used;

	if (!nl)
		return 0;
	used = (size_t)(nl - r->buf) + 1;
	*msg = json_loadb(r->buf, used - 1, 0, &je);
	memmove(r->buf, r->buf + used, r->len - used);
	r->len -= used;
	if (!*msg || !json_is_object(*msg)) {
		json_decref(*msg);
		*msg = NULL;
		return hml__error_set(HML_EINVALID, "worker message is not a JSON object: %s",
		                      je.text);
	}
	return 1;
}

int hml__wire_recv(hml__wire_reader *r, json_t **msg)
{
	ssize_t n;
	int rc;

	*msg = NULL;
	if ((rc = take_line(r, msg)) != 0)
		return rc;
	if (r->eof)
		return hml__error_set(HML_EIO, "the worker closed its pipe");
	if (r->cap - r->len < 4096) {
		size_t cap = r->cap ? 2 * r->cap : 8192;
		char *b = realloc(r->buf, cap);

		if (!b)
			return hml__error_oom();
		r->buf = b;
		r->cap = cap;
	}
	do
		n = read(r->fd, r->buf + r->len, r->cap - r->len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return hml__error_set(HML_EIO, "cannot read from worker pipe: %s", strerror(errno));
	if (n == 0) {
		r->eof = 1;
		return hml__error_set(HML_EIO, "the worker closed its pipe");
	}
	r->len += (size_t)n;
	return take_line(r, msg);
}
