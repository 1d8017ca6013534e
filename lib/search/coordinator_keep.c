/*
 * lib/search/coordinator_keep.c - the models a search keeps
 * (hml__coordinator_keep_models, coordinator.h): registered as "models"
 * records with the latency card and guard statistics hml train gives
 * them; the other model files deleted.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "search/coordinator_private.h"
#include "search/iterative.h"
#include "search/trialmap.h"
#include "store/records.h"
#include "train/guard_fit.h"

/* An iterative application's model: the k it predicts ahead and the
 * interleave it was judged at, with that QoI error (the card's
 * "iterative"), for hml evaluate --k --interleave. Steals rec. */
static json_t *iterative_facts(json_t *rec, const hml__coordinator *c, const hml__coord_trial *t)
{
	long long k, il;

	if (!rec || !t->m.has_qoi)
		return rec;
	hml__iterative_choice(c->cfg[t->config], &k, &il);
	if (json_object_set_new(rec, "iterative",
	                        hml__records_iterative_json(k, il, t->m.qoi_error)) < 0) {
		json_decref(rec);
		return NULL;
	}
	return rec;
}

/* A "models" record for trial i, in the layout of hml train's (lib/store/records.h
 * writes it; what the trial's summary lacks is null). */
static json_t *model_record(const hml__coordinator *c, long i)
{
	const hml__search_plan *p = c->p;
	const hml__coord_trial *t = &c->t[i];
	const json_t *reg;
	hml__dataset_view d;
	hml__train_options o = p->base;
	hml__train_result r;
	hml__model_facts f;
	char arch[256];
	const char *ids[256];
	size_t nids = 0;
	long long k, il;

	memset(&r, 0, sizeof(r));
	hml__dataset_view_of(&d, hml__store_find(c->o.store, "datasets", p->ds_ids[0]));
	reg = hml__dataset_view_region(&d, p->region);
	/* The options the trial trained with; its arch as it ran. */
	if (hml__trialmap_apply(&o, arch, sizeof(arch), p->family, p->base_arch,
	                        c->cfg[t->config]) < 0)
		o.arch = t->arch;
	snprintf(r.arch, sizeof(r.arch), "%s", t->arch);
	o.epochs = t->epochs;
	o.threads = p->threads;
	o.latency_threads = p->lat_threads;
	r.params = t->m.params;
	r.n_train = r.n_val = r.n_test = -1;
	r.epochs_run = t->m.epochs_run;
	r.best_epoch = r.stopped_early = r.out_of_time = -1;
	r.train_seconds = t->seconds;
	r.samples_per_second = r.final_lr = r.train_step_seconds = r.forward_max_diff = NAN;
	r.val_rmse = t->m.val_rmse;
	r.test_rmse = t->m.test_rmse;
	r.val_mape = t->m.val_mape;
	r.test_mape = t->m.test_mape;
	r.test_mae = r.test_max_abs = NAN;
	r.latency_s_per_sample = t->m.latency_s;
	r.latency_batch = t->m.latency_batch;
	/* an iterative trial trained on the data sets of its k only: its cost
	 * (lib/store/cost.h) is theirs */
	if (p->iterative) {
		hml__iterative_choice(c->cfg[t->config], &k, &il);
		if (hml__iterative_group(ids, sizeof(ids) / sizeof(ids[0]), &nids, p->iterative, k,
		                         p->ds_ids, p->nds) < 0 || nids == 0)
			nids = 0;
	}
	f = (hml__model_facts){ p->workflow_name, p->region, json_object_get(reg, "input_shape"),
	                        json_object_get(reg, "output_shape"), nids ? ids : p->ds_ids,
	                        nids ? nids : p->nds, &o, &r,
	                        NULL, -1, -1, p->id, i, t->config, NULL, NULL };
	return iterative_facts(hml__model_record_new(c->o.store, &f), c, t);
}

/* The region's data for the front models' cards, loaded once; NULL
 * (after a warning naming `what` they lack) when it cannot be. */
static hml__dataset *card_data(hml__coordinator *c, const char *what)
{
	hml__dataset *d;

	if (c->card_data)
		return c->card_data;
	d = calloc(1, sizeof(*d));
	if (!d || hml__dataset_load(d, (const char *const *)c->p->ds_paths, c->p->nds,
	                            c->p->region, HML__NONFINITE_DROP) < 0) {
		hml__coord_warn(c, "the front's models get no %s: %s", what,
		                d ? hml_error_last()->message : "out of memory");
		free(d);
		return NULL;
	}
	return c->card_data = d;
}

/* The latency card of trial i's model (as hml train measures it), on the
 * region's data, loaded once; NULL (after a warning) when it cannot be
 * measured. */
static json_t *latency_card(hml__coordinator *c, long i, const char *path)
{
	if (!c->o.card || !card_data(c, "latency card"))
		return NULL;
	return c->o.card(c->o.payload, path, c->card_data, c->t[i].m.latency_batch,
	                 c->p->lat_threads);
}

/* The statistics of the region's data that hml deploy --guard needs
 * (lib/core/guard.h, as hml train records them), fitted once: borrowed,
 * or NULL (after a warning) when they cannot be. */
static const json_t *guard_stats(hml__coordinator *c)
{
	hml__guard_stats g;

	if (c->guard || c->guard_failed)
		return c->guard;
	c->guard_failed = 1;
	if (!card_data(c, "guard statistics"))
		return NULL;
	if (hml__guard_fit(&g, c->card_data->x, c->card_data->rows, c->card_data->in_features) < 0) {
		hml__coord_warn(c, "the front's models get no guard statistics: %s",
		                hml_error_last()->message);
		return NULL;
	}
	c->guard = hml__guard_stats_json(&g);
	hml__guard_stats_release(&g);
	c->guard_failed = !c->guard;
	return c->guard;
}

typedef struct card_args {
	const char *id;
	json_t *card;
	const json_t *guard;       /* the input statistics, or NULL */
} card_args;

static int set_card(json_t *m, void *payload)
{
	const card_args *a = payload;
	json_t *rec = hml__manifest_find(m, "models", a->id);

	if (rec && a->guard && !json_object_get(rec, "guard") &&
	    json_object_set(rec, "guard", (json_t *)a->guard))
		return hml__error_oom();
	return rec && json_object_set(rec, "latency", a->card) ? hml__error_oom() : 0;
}

/* Trial i's registered model, kept at a time limit without a latency
 * card, gets its card now. */
static int add_card(hml__coordinator *c, long i)
{
	const json_t *rec = hml__store_find(c->o.store, "models", c->t[i].model);
	const char *rel = rec && !json_object_get(rec, "latency")
	                  ? hml__record_file(rec, "model") : NULL;
	char *path = rel ? hml__store_path(c->o.store, rel) : NULL;
	card_args a = { c->t[i].model, path ? latency_card(c, i, path) : NULL,
	                path ? guard_stats(c) : NULL };
	int rc = a.card ? hml__store_update(c->o.store, set_card, &a) : 0;

	json_decref(a.card);
	free(path);
	return rc;
}

static int keep(hml__coordinator *c, long i, int card)
{
	hml__coord_trial *t = &c->t[i];
	hml__hist_event ev;
	const char *before = hml__records_search_model(c->o.store, c->p->id, i);
	char mp[4200];
	int rc;

	if (before) {
		snprintf(t->model, sizeof(t->model), "%s", before);
	} else {
		hml__store_file f = { "model", mp, ".pt", NULL, NULL };
		json_t *rec, *lat;

		hml__coord_model_path(c, i, mp, sizeof(mp));
		if (!t->has_file) {
			hml__coord_warn(c, "the model of trial %ld is missing; it is not "
			                "registered", i);
			return 0;
		}
		rec = model_record(c, i);
		lat = card && rec ? latency_card(c, i, mp) : NULL;
		if (lat)
			json_object_set_new(rec, "latency", lat);
		if (card && rec && guard_stats(c))
			json_object_set(rec, "guard", c->guard);
		if ((rc = hml__store_add(c->o.store, "models", rec, &f, 1, 1, t->model,
		                         sizeof(t->model))) < 0)
			return rc;
		t->has_file = 0;
	}
	hml__coord_trial_event(c, i, HML__HIST_KEPT, &ev);
	ev.model = t->model;
	if ((rc = hml__history_append(c->hist, &ev)) < 0)
		return rc;
	t->status = HML__HIST_KEPT;
	return 0;
}

int hml__coordinator_keep_models(hml__coordinator *c)
{
	size_t *cfg;
	long nf;
	int rc;

	if ((rc = hml__coord_need_store(c)) < 0)
		return rc;
	nf = hml__coord_front_configs(c, &cfg);
	rc = nf < 0 ? (int)nf : 0;
	for (long j = 0; j < nf && rc == 0; j++) {
		long i = hml__coord_top_trial(c, cfg[j]);

		/* At the time limit no card: measuring takes seconds a model;
		 * a later session's front gets it. */
		if (i >= 0 && c->t[i].status == HML__HIST_OK)
			rc = keep(c, i, !c->time_up && !c->held);
		else if (i >= 0 && c->t[i].status == HML__HIST_KEPT && !c->time_up && !c->held)
			rc = add_card(c, i);
	}
	for (size_t i = 0; i < c->nt && rc == 0; i++) {
		char mp[4200];

		if (c->p->keep_all && c->t[i].status == HML__HIST_OK && c->t[i].has_file) {
			rc = keep(c, (long)i, 0);
			continue;
		}
		hml__coord_model_path(c, (long)i, mp, sizeof(mp));
		if (c->t[i].status != HML__HIST_KEPT)
			unlink(mp);
	}
	free(cfg);
	return rc;
}
