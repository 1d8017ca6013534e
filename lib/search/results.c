/*
 * lib/search/results.c - a search's results, front and convergence from its
 * trial history (read through lib/search/history.h only).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "core/util.h"
#include "search/history.h"
#include "search/opt/pareto.h"
#include "search/results.h"
#include "sys/fsutil.h"

typedef struct loader {
	hml__search_results *r;
	size_t cap;
	long max_config;
	unsigned max_rung;
	json_t *samples;   /* config (as text) -> its "running" line's params */
} loader;

static int on_event(const hml__hist_event *ev, void *payload)
{
	loader *l = payload;
	hml__search_results *r = l->r;
	hml__sr_trial *t;
	double err;
	char key[32];

	if (ev->config > l->max_config)
		l->max_config = ev->config;
	if (ev->status == HML__HIST_KEPT) {
		for (size_t i = r->nres; i-- > 0;)
			if (r->res[i].trial == ev->trial) {
				snprintf(r->res[i].model, sizeof(r->res[i].model), "%s", ev->model);
				break;
			}
		return 0;
	}
	snprintf(key, sizeof(key), "%ld", ev->config);
	if (ev->status == HML__HIST_RUNNING && ev->params &&
	    json_object_set(l->samples, key, (json_t *)ev->params) < 0)
		return hml__error_oom();
	if (ev->status == HML__HIST_RUNNING || ev->status == HML__HIST_RERUN)
		return 0;
	r->ended++;
	if (ev->status != HML__HIST_OK) {
		r->failed++;
		return 0;
	}
	err = hml__hist_error(&ev->m, r->metric);
	if (!(err > 0 && isfinite(err) && ev->m.latency_s > 0 && isfinite(ev->m.latency_s)))
		return 0;
	if (r->nres == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		hml__sr_trial *p = realloc(r->res, cap * sizeof(*p));

		if (!p)
			return hml__error_oom();
		r->res = p;
		l->cap = cap;
	}
	t = &r->res[r->nres++];
	memset(t, 0, sizeof(*t));
	t->trial = ev->trial;
	t->config = ev->config;
	t->rung = ev->rung;
	t->ended = r->ended;
	t->error = err;
	t->latency_s = ev->m.latency_s;
	t->cost = hml__hist_cost(&ev->m);
	t->params = ev->m.params;
	t->latency_bound = ev->m.latency_bound;
	t->sample = json_incref(json_object_get(l->samples, key));
	if (ev->arch && !(t->arch = hml__strdup(ev->arch)))
		return hml__error_oom();
	if (ev->rung > l->max_rung)
		l->max_rung = ev->rung;
	return 0;
}

/* A model must take less than `cost` less `move` per row; when moving the
 * rows alone costs that much, the least positive bound: none can. */
double hml__search_latency_room(double cost, double move)
{
	double room;

	if (!(cost > 0))
		return NAN;
	room = cost - (move > 0 ? move : 0);
	return room > 0 ? room : DBL_MIN;
}

double hml__search_record_latency_bound(const json_t *rec)
{
	double b = hml__json_number(json_object_get(rec, "constraints"), "max_latency");
	double c = hml__search_latency_room(hml__json_number(rec, "region_cost_per_row"),
	                                    hml__json_number(rec, "region_move_per_row"));

	if (!(b > 0))
		b = INFINITY;
	if (c < b)
		b = c;
	return isfinite(b) ? b : NAN;
}

static double constraint(const json_t *c, const char *key)
{
	const json_t *v = json_object_get(c, key);

	return json_is_number(v) && json_number_value(v) > 0 ? json_number_value(v) : NAN;
}

static int feasible(const hml__search_results *r, const hml__sr_trial *t)
{
	double lat = t->latency_bound > 0 ? t->latency_bound : r->max_latency;

	return !(t->error > r->max_error) && !(t->latency_s > lat) &&
	       !(t->params >= 0 && (double)t->params > r->max_params);
}

/* The front of the feasible top-rung results among res[0 .. n-1]. */
static int front_of(hml__search_results *r)
{
	double *f = malloc((r->nres + 1) * 2 * sizeof(*f));
	size_t *which = malloc((r->nres + 1) * sizeof(*which)), m = 0, nf;
	int rc = 0;

	if (!f || !which || !(r->front = malloc((r->nres + 1) * sizeof(*r->front)))) {
		rc = hml__error_oom();
		goto done;
	}
	for (size_t i = 0; i < r->nres; i++)
		if (r->res[i].top && r->res[i].feasible) {
			f[2 * m] = r->res[i].error;
			f[2 * m + 1] = r->res[i].cost;
			which[m++] = i;
		}
	if ((nf = hml__pareto_front(r->front, f, m)) == (size_t)-1) {
		rc = hml__error_oom();
		goto done;
	}
	for (size_t j = 0; j < nf; j++) {
		r->front[j] = which[r->front[j]];
		r->res[r->front[j]].front = 1;
	}
	r->nfront = nf;
done:
	free(f);
	free(which);
	return rc;
}

/* Best error and hypervolume after each trial ended, in log10 space. */
static int convergence(hml__search_results *r)
{
	double *f = malloc((r->nres + 1) * 2 * sizeof(*f)), best = NAN, hv = 0;
	size_t m = 0, k = 0;

	r->best = malloc((r->ended + 1) * sizeof(*r->best));
	r->hv = malloc((r->ended + 1) * sizeof(*r->hv));
	if (!f || !r->best || !r->hv) {
		free(f);
		return hml__error_oom();
	}
	r->ref[0] = r->ref[1] = -HUGE_VAL;
	for (size_t i = 0; i < r->nres; i++) {
		r->ref[0] = fmax(r->ref[0], log10(r->res[i].error) + 0.1);
		r->ref[1] = fmax(r->ref[1], log10(r->res[i].cost) + 0.1);
	}
	if (r->nres == 0)
		r->ref[0] = r->ref[1] = NAN;
	for (size_t e = 0; e < r->ended; e++) {
		for (; k < r->nres && r->res[k].ended == e + 1; k++) {
			const hml__sr_trial *t = &r->res[k];

			if (!t->top || !t->feasible)
				continue;
			if (!(t->error >= best))
				best = t->error;
			f[2 * m] = log10(t->error);
			f[2 * m + 1] = log10(t->cost);
			m++;
			if ((hv = hml__pareto_hypervolume(f, m, r->ref)) < 0) {
				free(f);
				return hml__error_oom();
			}
		}
		r->best[e] = best;
		r->hv[e] = hv;
	}
	free(f);
	return 0;
}

int hml__search_results_load(hml__search_results *out, const char *dir,
                             const hml__search_view *v)
{
	loader l = { out, 0, -1, 0, NULL };
	char *path;
	int rc;

	memset(out, 0, sizeof(*out));
	out->metric = json_object_get(v->json, "iterative") ? "qoi" :
	              v->metric && strcmp(v->metric, "mape") == 0 ? "mape" : "rmse";
	if (!v->history)
		return hml__error_set(HML_EINVALID, "search '%s' has no trial history in the manifest",
		                      v->id ? v->id : "?");
	if (!(path = hml__path_join(dir, v->history)))
		return hml__error_oom();
	if (!(l.samples = json_object())) {
		free(path);
		return hml__error_oom();
	}
	rc = hml__history_read(path, on_event, &l, &out->torn);
	json_decref(l.samples);
	free(path);
	if (rc < 0)
		return rc;
	out->configs = (size_t)(l.max_config + 1);
	out->top_rung = isfinite(v->rungs) && v->rungs >= 1 ? (unsigned)v->rungs - 1 : l.max_rung;
	out->max_error = constraint(v->constraints, "max_error");
	out->max_latency = hml__search_record_latency_bound(v->json);
	out->max_params = constraint(v->constraints, "max_params");
	for (size_t i = 0; i < out->nres; i++) {
		out->res[i].top = out->res[i].rung == out->top_rung;
		out->res[i].feasible = feasible(out, &out->res[i]);
	}
	if ((rc = front_of(out)) < 0)
		return rc;
	return convergence(out);
}

void hml__search_results_release(hml__search_results *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nres; i++) {
		free(r->res[i].arch);
		json_decref(r->res[i].sample);
	}
	free(r->res);
	free(r->front);
	free(r->best);
	free(r->hv);
	memset(r, 0, sizeof(*r));
}

double hml__search_results_best(const hml__search_results *r)
{
	return r->nfront ? r->res[r->front[0]].error : NAN;
}
