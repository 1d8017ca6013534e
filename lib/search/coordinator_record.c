/*
 * lib/search/coordinator_record.c - the search's record
 * (hml__coordinator_record, coordinator.h) and the counts it gives.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core/error.h"
#include "core/json.h"
#include "core/util.h"
#include "search/coordinator_private.h"
#include "search/iterative.h"

/* The front as JSON: [{trial, config, model, val_rmse, val_mape, latency...,
 * params, arch}]. */
static json_t *front_json(const hml__coordinator *c)
{
	size_t *cfg;
	long nf = hml__coord_front_configs(c, &cfg);
	json_t *arr = json_array();

	for (long j = 0; j < nf; j++) {
		long i = hml__coord_top_trial(c, cfg[j]);
		const hml__coord_trial *t = i >= 0 ? &c->t[i] : NULL;

		if (!t)
			continue;
		json_array_append_new(arr, json_pack("{s:I, s:I, s:o, s:o, s:o, s:o, s:I, s:s}",
			"trial", (json_int_t)i, "config", (json_int_t)t->config,
			"model", t->model[0] ? json_string(t->model) : json_null(),
			"val_rmse", hml__json_real(t->m.val_rmse),
			"val_mape", hml__json_real(t->m.val_mape),
			"latency_seconds_per_sample", hml__json_real(t->m.latency_s),
			"params", (json_int_t)t->m.params, "arch", t->arch));
		if (json_is_integer(json_object_get(c->cfg[t->config], "rollout")))
			json_object_set(json_array_get(arr, json_array_size(arr) - 1), "rollout",
			                json_object_get(c->cfg[t->config], "rollout"));
		if (t->m.has_qoi) {
			json_t *f = json_array_get(arr, json_array_size(arr) - 1);
			long long k, il;

			hml__iterative_choice(c->cfg[t->config], &k, &il);
			json_object_set_new(f, "qoi_error", hml__json_real(t->m.qoi_error));
			if (k >= 0)
				json_object_set_new(f, "k", json_integer(k));
			if (il >= 0)
				json_object_set_new(f, "interleave", json_integer(il));
		}
	}
	free(cfg);
	return arr;
}

void hml__coordinator_counts_of(hml__coordinator_counts *out, const hml__coordinator *c)
{
	memset(out, 0, sizeof(*out));
	out->configs = hml__sched_configs(c->sched);
	out->trials = c->nt;
	for (size_t i = 0; i < c->nt; i++) {
		out->ok += c->t[i].status == HML__HIST_OK || c->t[i].status == HML__HIST_KEPT;
		out->failed += c->t[i].status == HML__HIST_FAILED ||
		               c->t[i].status == HML__HIST_TIMEOUT ||
		               c->t[i].status == HML__HIST_CRASHED;
		out->reruns += (size_t)c->t[i].reruns;
	}
	out->session_trials = c->session_trials;
	out->busy = c->busy;
	out->busy_cpu = c->busy_cpu;
	out->suggest = c->suggest;
	out->suggest_cpu = c->suggest_cpu;
}

int hml__coordinator_record(hml__coordinator *c, const char *status)
{
	const hml__search_times *prev = &c->p->prev;
	hml__coordinator_counts n;
	struct rusage ru;
	double cpu;
	json_t *f;
	int rc;

	if ((rc = hml__coord_need_store(c)) < 0)
		return rc;
	hml__coordinator_counts_of(&n, c);
	cpu = getrusage(RUSAGE_SELF, &ru) == 0
		? (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
		  (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6 : NAN;
	f = json_pack("{s:s, s:{s:I, s:I, s:I, s:I, s:I}, s:f, s:o, s:f, s:f, s:f, s:f, s:o, s:I}",
		"status", status, "counts", "configs", (json_int_t)n.configs,
		"trials", (json_int_t)n.trials, "ok", (json_int_t)n.ok, "failed", (json_int_t)n.failed,
		"reruns", (json_int_t)n.reruns,
		"seconds", prev->seconds + hml__now() - c->t0,
		"coordinator_cpu_seconds", hml__json_real(prev->cpu + cpu),
		"coordinator_busy_seconds", prev->busy + c->busy,
		"coordinator_suggest_seconds", prev->suggest + c->suggest,
		"coordinator_busy_cpu_seconds", prev->busy_cpu + c->busy_cpu,
		"coordinator_suggest_cpu_seconds", prev->suggest_cpu + c->suggest_cpu,
		"front", front_json(c), "budget", (json_int_t)c->p->budget);
	if (f && (json_object_set_new(f, "stopped", strcmp(status, "stopped") == 0
	                                             ? json_string("time_limit") : json_null()) ||
	          json_object_set_new(f, "time_limit", hml__json_real(c->o.time_limit > 0
	                                                              ? c->o.time_limit : NAN)) ||
	          /* this session's: a search resumed under another launch runs as launched */
	          json_object_set_new(f, "transport", json_string(c->p->mpi ? "mpi" : "processes")) ||
	          json_object_set_new(f, "workers", json_integer(c->p->nworkers)) ||
	          json_object_set_new(f, "workers_requested", c->p->workers_requested > 0 ?
	                              json_integer(c->p->workers_requested) : json_null()))) {
		json_decref(f);
		f = NULL;
	}
	rc = f ? hml__search_set(c->o.store, c->p->id, f) : hml__error_oom();
	json_decref(f);
	return rc;
}
