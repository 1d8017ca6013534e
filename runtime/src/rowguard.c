/*
 * runtime/src/rowguard.c - a region's guard at run time (rowguard.h), and the
 * rows of a call the original code computes (hml_region_rows).
 *
 * The guard reads the rows the model is about to answer (the gathered
 * inputs, in the model's dtype) and lists those it must not answer. A
 * region whose original code iterates over hml_region_rows() (declared
 * with hml_region_subset_enable()) gets the model's answers scattered for
 * every row, then runs its code over the guarded rows only, which
 * overwrites them: their outputs are exactly the original code's. Any
 * other region runs the original code for the whole call when a row is
 * guarded. An ensemble guard runs its members on the call's rows
 * (ensguard.c) and guards those they disagree on. The guard comes from a
 * guard file or from a spec resolved against the statistics the region's
 * compiled model carries (core/guard.h, part 4: guard_load).
 */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/guard.h"
#include "core/util.h"
#include "ensguard.h"
#include "rowguard.h"
#include "log.h"
#include "region_internal.h"

struct hml__rguard {
	hml__guard g;
	int loaded;             /* g holds a guard */
	char spec[64];
	int subset;             /* hml_region_subset_enable() */
	int active;             /* this call's rows are the guarded ones */
	int64_t *guarded, nguarded;   /* [in.rows]: the call's guarded rows */
	int64_t *all, nall;           /* 0 .. rows-1 */
	double *row;                  /* one row in double */
	hml__ensguard *ens;           /* ensemble: its members */
};

static int rguard_get(hml_region *r, hml__rguard **out)
{
	if (!r->guard && !(r->guard = calloc(1, sizeof(*r->guard))))
		return hml__error_oom();
	*out = r->guard;
	return 0;
}

/* A guard file used with a compiled model that embeds statistics must
 * have been made for it (core/guard.h, part 4); a model without them
 * (TorchScript, ABI version 1) has nothing to check the file against. */
static int check_file_model(const hml__guard *g, const char *path, const hml__model *m,
                            const char *model_path)
{
	hml__error_saved saved;
	const char *stats;
	char what[4200];

	hml__error_save(&saved);
	if (g->spec.kind == HML__GUARD_NONE || hml__model_input_stats(m, &stats) < 0) {
		hml__error_restore(&saved);
		return 0;
	}
	snprintf(what, sizeof(what), "guard file '%s'", path);
	if (hml__guard_stats_match_text(&g->stats, stats, what) == 0)
		return 0;
	return hml__error_set(HML_EINVALID, "guard file '%s' was made for another model (its "
	                      "statistics are not those compiled model '%s' carries)", path,
	                      model_path);
}

/* The guard `value` names for model `m`, loaded from `model_path`
 * (core/guard.h, part 4): a guard file, checked against the statistics
 * `m` embeds, or a spec resolved against them. *g is the caller's
 * (hml__guard_release). */
static int guard_load(hml__guard *g, const char *value, const hml__model *m,
                      const char *model_path)
{
	char what[4200];
	const char *stats = NULL;
	int rc;

	if (!hml__guard_value_is_spec(value)) {
		if ((rc = hml__guard_file_read(g, value)) < 0)
			return rc;
		if ((rc = check_file_model(g, value, m, model_path)) < 0)
			hml__guard_release(g);
		return rc;
	}
	memset(g, 0, sizeof(*g));
	snprintf(what, sizeof(what), "compiled model '%s'", model_path);
	if (strcmp(value, "none") != 0 && (rc = hml__model_input_stats(m, &stats)) < 0)
		return hml__error_set(rc, "guard '%s': %s", value, hml_error_last()->message);
	if ((rc = hml__guard_from_stats_text(g, value, strcmp(value, "none") ? stats : NULL,
	                                     what)) < 0)
		return hml__error_set(rc, "guard '%s': %s", value, hml_error_last()->message);
	return 0;
}

int hml__guard_open(hml_region *r)
{
	hml__rguard *rg = NULL;
	int rc;

	if (!r->cfg.guard || !*r->cfg.guard ||
	    (r->cfg.mode != HML_MODE_INFER && r->cfg.mode != HML_MODE_INTERLEAVE))
		return 0;
	if ((rc = rguard_get(r, &rg)) < 0)
		return rc;
	if ((rc = guard_load(&rg->g, r->cfg.guard, r->model, r->cfg.model)) < 0) {
		hml__error_set(rc, "region '%s': %s", r->label, hml_error_last()->message);
		return hml__region_degrade(r, rc, &r->model_broken, "running the original code");
	}
	if (rg->g.spec.kind == HML__GUARD_NONE) {
		hml__guard_release(&rg->g);
		return 0;
	}
	if (rg->g.spec.kind == HML__GUARD_ENSEMBLE &&
	    (rc = hml__ensguard_open(&rg->ens, &rg->g, r->cfg.threads)) < 0) {
		hml__guard_release(&rg->g);
		hml__error_set(rc, "guard '%s': %s", r->cfg.guard, hml_error_last()->message);
		return hml__region_degrade(r, rc, &r->model_broken, "running the original code");
	}
	rg->loaded = 1;
	hml__guard_spec_format(rg->spec, sizeof(rg->spec), &rg->g.spec);
	if (!(rg->row = malloc((size_t)rg->g.stats.features * sizeof(double))))
		return hml__error_oom();
	return 0;
}

struct hml__guard_next {
	hml__guard g;
	double *row;
	hml__ensguard *ens;
};

void hml__guard_discard(hml__guard_next *n)
{
	if (!n)
		return;
	hml__ensguard_free(n->ens);
	hml__guard_release(&n->g);
	free(n->row);
	free(n);
}

int hml__guard_prepare(hml__guard_next **out, hml_region *r, const char *path,
                       const hml__model *m, const char *model_path)
{
	hml__guard_next *n;
	int rc;

	*out = NULL;
	/* No guard file in the deployment: the region's own spec, if it has
	 * one, resolved for the next model (never its predecessor's stats). */
	if ((!path || !*path) && hml__guard_value_is_spec(r->cfg.guard) && *r->cfg.guard)
		path = r->cfg.guard;
	if (!path || !*path)
		return 0;
	if (!(n = calloc(1, sizeof(*n))))
		return hml__error_oom();
	if ((rc = guard_load(&n->g, path, m, model_path)) < 0)
		goto fail;
	if (n->g.spec.kind != HML__GUARD_NONE && n->g.stats.features != r->in.row_size) {
		rc = hml__error_set(HML_ESHAPE, "guard '%s' checks rows of %lld features but the "
		                    "region's have %lld", path, (long long)n->g.stats.features,
		                    (long long)r->in.row_size);
		goto fail;
	}
	if (n->g.spec.kind == HML__GUARD_ENSEMBLE &&
	    (rc = hml__ensguard_open(&n->ens, &n->g, r->cfg.threads)) < 0) {
		hml__error_set(rc, "guard '%s': %s", path, hml_error_last()->message);
		goto fail;
	}
	if (!(n->row = malloc((size_t)(n->g.stats.features > 0 ? n->g.stats.features : 1) *
	                      sizeof(double)))) {
		rc = hml__error_oom();
		goto fail;
	}
	*out = n;
	return 0;
fail:
	hml__guard_discard(n);
	return rc;
}

void hml__guard_switch(hml_region *r, hml__guard_next *n)
{
	hml__rguard *rg = r->guard;

	if (!rg) {
		if (!n || !(rg = r->guard = calloc(1, sizeof(*rg)))) {
			hml__guard_discard(n);   /* no guard before, none after (or no memory) */
			return;
		}
	}
	if (rg->loaded)
		hml__guard_release(&rg->g);
	hml__ensguard_free(rg->ens);
	rg->ens = NULL;
	free(rg->row);
	rg->row = NULL;
	rg->loaded = 0;
	rg->spec[0] = '\0';
	if (n && n->g.spec.kind != HML__GUARD_NONE) {
		rg->g = n->g;
		rg->row = n->row;
		rg->ens = n->ens;
		rg->loaded = 1;
		hml__guard_spec_format(rg->spec, sizeof(rg->spec), &rg->g.spec);
		free(n);
	} else {
		hml__guard_discard(n);
	}
}

void hml__guard_free(hml_region *r)
{
	hml__rguard *rg = r->guard;

	if (!rg)
		return;
	hml__ensguard_free(rg->ens);
	hml__guard_release(&rg->g);
	free(rg->guarded);
	free(rg->all);
	free(rg->row);
	free(rg);
	r->guard = NULL;
}

const char *hml__guard_spec_text(const hml_region *r)
{
	return r->guard && r->guard->loaded ? r->guard->spec : NULL;
}

static int check_features(hml_region *r, const hml__rguard *rg)
{
	if (rg->g.stats.features == r->in.row_size)
		return 0;
	return hml__error_set(HML_ESHAPE, "region '%s': guard '%s' checks rows of %lld features "
	                      "but the region's have %lld", r->label, r->cfg.guard,
	                      (long long)rg->g.stats.features, (long long)r->in.row_size);
}

/* Row i of x (model dtype) in double, into buf. */
static const double *row_of(const hml_region *r, const void *x, int64_t i, double *buf)
{
	int64_t f = r->in.row_size;

	if (r->model_dtype == HML_F64)
		return (const double *)x + i * f;
	hml__convert(buf, HML_F64, (const float *)x + i * f, HML_F32, (size_t)f);
	return buf;
}

int hml__guard_call(hml_region *r, const void *x)
{
	hml__rguard *rg = r->guard;
	int64_t n = r->in.rows, k = 0;
	double t = hml__now();
	int rc;

	if (!rg || !rg->loaded)
		return 0;
	if ((rc = check_features(r, rg)) < 0)
		return rc;
	if (!rg->guarded && !(rg->guarded = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t))))
		return hml__error_oom();
	if (rg->ens) {
		if ((k = hml__ensguard_check(rg->ens, &rg->g, x, r->model_dtype, r->in.ndim,
		                             r->in.shape, n, rg->guarded)) < 0)
			return (int)k;
	} else {
		for (int64_t i = 0; i < n; i++)
			if (hml__guard_row(&rg->g, row_of(r, x, i, rg->row)))
				rg->guarded[k++] = i;
	}
	rg->nguarded = k;
	r->stats.checked_rows += (uint64_t)n;
	r->stats.guard_s += hml__now() - t;
	if (k == 0)
		return 0;
	r->stats.guarded_rows += (uint64_t)k;
	r->stats.guarded_calls++;
	if (!rg->subset) {
		r->stats.guard_whole_calls++;
		return 2;
	}
	rg->active = 1;
	return 1;
}

int64_t hml__guard_listed(const hml_region *r, const int64_t **idx)
{
	*idx = r->guard ? r->guard->guarded : NULL;
	return r->guard && r->guard->guarded ? r->guard->nguarded : 0;
}

int hml__guard_one(hml_region *r, const void *x, hml_region_stats *st)
{
	hml__rguard *rg = r->guard;
	double buf[64], *row = buf;
	int64_t f = r->in.row_size;
	double t = hml__now();
	int guarded;

	if (!rg || !rg->loaded)
		return 0;
	if (check_features(r, rg) < 0)
		return hml_error_last()->code;
	if (rg->ens) {
		int64_t one;
		int64_t k = hml__ensguard_check(rg->ens, &rg->g, x, r->model_dtype, r->in.ndim,
		                                r->in.shape, 1, &one);
		if (k < 0)
			return (int)k;
		guarded = k > 0;
	} else {
		if (f > 64 && !(row = malloc((size_t)f * sizeof(double))))
			return hml__error_oom();
		guarded = hml__guard_row(&rg->g, row_of(r, x, 0, row));
		if (row != buf)
			free(row);
	}
	st->checked_rows++;
	st->guard_s += hml__now() - t;
	if (guarded) {
		st->guarded_rows++;
		st->guarded_calls++;
	}
	return guarded;
}

void hml__guard_call_end(hml_region *r)
{
	if (r->guard)
		r->guard->active = 0;
}

int hml_region_subset_enable(hml_region *r)
{
	hml__rguard *rg = NULL;
	int rc;

	if (!r)
		return hml__error_set(HML_EINVALID, "region is NULL");
	if (r->started)
		return hml__error_set(HML_EINVALID, "region '%s': hml_region_subset_enable() must "
		                      "come before the first hml_region_begin()", r->label);
	for (size_t a = 0; a < r->in.n; a++)
		for (size_t b = 0; b < r->out.n; b++)
			if (hml_tmap_array(r->in.maps[a], 0) && hml_tmap_array(r->out.maps[b], 0) &&
			    hml_tmap_array(r->in.maps[a], 0)->data == hml_tmap_array(r->out.maps[b], 0)->data)
				return hml__error_set(HML_ENOTSUPPORTED, "region '%s' updates its data in "
				                      "place: the model's answers would overwrite the inputs "
				                      "of the guarded rows", r->label);
	if ((rc = rguard_get(r, &rg)) < 0)
		return rc;
	rg->subset = 1;
	return 0;
}

int hml_region_rows(hml_region *r, const int64_t **idx, int64_t *n)
{
	hml__rguard *rg = NULL;
	int64_t rows;
	int rc;

	if (!r || !idx || !n)
		return hml__error_set(HML_EINVALID, "region or output is NULL");
	*idx = NULL;
	*n = 0;
	if (!r->in_call)
		return hml__error_set(HML_EINVALID, "region '%s': hml_region_rows() outside "
		                      "hml_region_begin() and hml_region_end()", r->label);
	if ((rc = rguard_get(r, &rg)) < 0)
		return rc;
	if (rg->active) {
		*idx = rg->guarded;
		*n = rg->nguarded;
		return 0;
	}
	rows = r->in.n ? hml_tmap_rows(r->in.maps[0]) : 0;
	if (rows > rg->nall) {
		int64_t *grown = realloc(rg->all, (size_t)rows * sizeof(int64_t));
		if (!grown)
			return hml__error_oom();
		rg->all = grown;
		for (int64_t i = rg->nall; i < rows; i++)
			grown[i] = i;
		rg->nall = rows;
	}
	*idx = rg->all;
	*n = rows;
	return 0;
}
