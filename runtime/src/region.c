/*
 * runtime/src/region.c - a region's life outside its calls: opened with
 * its configuration (config.c), its tensor maps bound and added, sought,
 * flushed and freed, and what it tells about itself (mode, policy, label,
 * statistics). Its batch calls are region_call.c's, its row calls rows.c's.
 */
#ifdef _OPENMP
#  include <omp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "config.h"
#include "core/error.h"
#include "core/util.h"
#include "rowguard.h"
#include "loader/loader.h"
#include "log.h"
#include "profile.h"
#include "region_internal.h"
#include "tmap_internal.h"

static int side_add(side *s, hml_tmap *map)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 2;
		hml_tmap **grown = realloc(s->maps, cap * sizeof(*grown));
		if (!grown)
			return hml__error_oom();
		s->maps = grown;
		s->cap = cap;
	}
	s->maps[s->n++] = map;
	return 0;
}

static void side_release(side *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		hml_tmap_free(s->maps[i]);
	free(s->maps);
	free(s->buf);
	free(s->mbuf);
	memset(s, 0, sizeof(*s));
}

/* The threads a model of the region gets (HML_THREADS, else OpenMP's
 * maximum here: libtorch's and a compiled model's default). */
static int model_threads(const hml__config *cfg)
{
	if (cfg->threads > 0)
		return cfg->threads;
#ifdef _OPENMP
	return omp_get_max_threads();
#else
	return 1;
#endif
}

static int uses_model(hml_mode m)
{
	return m == HML_MODE_INFER || m == HML_MODE_INTERLEAVE || m == HML_MODE_SHADOW;
}

/* How the profile registry reaches a region at exit (profile.h). */
static const hml__registry_hooks registry_hooks = {
	hml_region_flush, hml_region_stats_get, hml__swap_get
};

int hml_region_open(hml_region **out, const char *label,
                    const hml_region_options *opts)
{
	hml_region *r = NULL;
	int rc;

	if (!out)
		return hml__error_set(HML_EINVALID, "output pointer is NULL");
	*out = NULL;
	if ((rc = hml__label_check(label)) < 0)
		return rc;
	if (!(r = calloc(1, sizeof(*r))))
		return hml__error_oom();
	if (!(r->label = hml__strdup(label))) {
		rc = HML_ENOMEM;
		goto fail;
	}
	if ((rc = hml__config_resolve(&r->cfg, label, opts)) < 0)
		goto fail;
	if ((rc = hml__rows_init(r)) < 0)
		goto fail;
	r->timed = r->cfg.profile != NULL;

	if (uses_model(r->cfg.mode)) {
		rc = hml__model_load(&r->model, r->cfg.model, r->cfg.threads);
		if (rc < 0 && (rc = hml__region_degrade(r, rc, &r->model_broken,
		                            "running the original code")) < 0)
			goto fail;
		if (r->model) {
			r->model_dtype = hml__model_dtype(r->model);
			r->model_reentrant = hml__model_reentrant(r->model);
		}
		if (r->model && (rc = hml__guard_open(r)) < 0)
			goto fail;
	}
	if ((rc = hml__swap_init(r)) < 0)
		goto fail;
	r->collect_guarded = r->cfg.collect_guarded &&
		(r->cfg.mode == HML_MODE_INFER || r->cfg.mode == HML_MODE_INTERLEAVE);
	if (hml__region_collects(r)) {
		/* Find an unusable file now, not after the first call's work
		 * (and load HDF5: the collector's time, outside the calls). */
		double t = hml__now();

		rc = hml__collector_probe(r->cfg.db);
		r->stats.collect_outside_s += hml__now() - t;
		if (rc < 0 &&
		    (rc = hml__region_degrade(r, rc, &r->collect_broken, "not collecting")) < 0)
			goto fail;
	}
	if ((rc = hml__registry_add(r, r->label, r->cfg.mode, model_threads(&r->cfg), r->cfg.profile,
	                            &registry_hooks)) < 0)
		goto fail;
	hml__registry_guard(r, hml__guard_spec_text(r));
	*out = r;
	return 0;

fail:
	hml__swap_release(r);
	hml__rows_release(r);
	hml__guard_free(r);
	hml__model_free(r->model);
	hml__config_release(&r->cfg);
	free(r->label);
	free(r);
	return rc;
}

static int add_map(hml_region *r, side *s, hml_tmap *map)
{
	const hml_array *a;

	if (!r || !map)
		return hml__error_set(HML_EINVALID, "region or map is NULL");
	if (r->started)
		return hml__error_set(HML_EINVALID,
			"region '%s': maps must be added before the first hml_region_begin()",
			r->label);
	/* Model outputs are floating point; refuse integer targets up front. */
	for (size_t k = 0; s == &r->out && (a = hml_tmap_array(map, k)) != NULL; k++)
		if (a->dtype != HML_F32 && a->dtype != HML_F64)
			return hml__error_set(HML_ENOTSUPPORTED,
				"region '%s': output array '%s' is %s; outputs must be float32 or float64",
				r->label, a->name ? a->name : "?", hml_dtype_name(a->dtype));
	return side_add(s, map);
}

int hml_region_add_input(hml_region *r, hml_tmap *map)
{
	return add_map(r, r ? &r->in : NULL, map);
}

int hml_region_add_output(hml_region *r, hml_tmap *map)
{
	return add_map(r, r ? &r->out : NULL, map);
}

static int bind_and_add(hml_region *r, side *s, const char *functor,
                        const char *domain, const hml_array *arrays, size_t narrays,
                        const hml_symbol *symbols, size_t nsymbols)
{
	hml_functor *fn = NULL;
	hml_tmap *map = NULL;
	int rc;

	if (!r)
		return hml__error_set(HML_EINVALID, "region is NULL");
	if ((rc = hml_functor_parse(&fn, functor)) < 0)
		goto done;
	if ((rc = hml_tmap_new(&map, fn, domain, arrays, narrays, symbols, nsymbols)) < 0)
		goto done;
	if ((rc = add_map(r, s, map)) < 0)
		goto done;
	map = NULL;
	rc = (int)s->n - 1;
done:
	hml_tmap_free(map);
	hml_functor_free(fn);
	return rc;
}

int hml_region_input(hml_region *r, const char *functor, const char *domain,
                     const hml_array *arrays, size_t narrays,
                     const hml_symbol *symbols, size_t nsymbols)
{
	return bind_and_add(r, r ? &r->in : NULL, functor, domain, arrays, narrays,
	                    symbols, nsymbols);
}

int hml_region_output(hml_region *r, const char *functor, const char *domain,
                      const hml_array *arrays, size_t narrays,
                      const hml_symbol *symbols, size_t nsymbols)
{
	return bind_and_add(r, r ? &r->out : NULL, functor, domain, arrays, narrays,
	                    symbols, nsymbols);
}

hml_tmap *hml_region_input_map(hml_region *r, size_t k)
{
	return (r && k < r->in.n) ? r->in.maps[k] : NULL;
}

hml_tmap *hml_region_output_map(hml_region *r, size_t k)
{
	return (r && k < r->out.n) ? r->out.maps[k] : NULL;
}

int hml_region_seek(hml_region *r, int64_t rows)
{
	size_t k;
	int rc;

	if (!r)
		return hml__error_set(HML_EINVALID, "region is NULL");
	for (k = 0; k < r->in.n; k++)
		if ((rc = hml_tmap_seek(r->in.maps[k], rows)) < 0)
			return rc;
	for (k = 0; k < r->out.n; k++)
		if ((rc = hml_tmap_seek(r->out.maps[k], rows)) < 0)
			return rc;
	return 0;
}

int hml_region_flush(hml_region *r)
{
	double t;
	int rc;

	if (!r)
		return hml__error_set(HML_EINVALID, "region is NULL");
	if ((rc = hml__rows_drain(r)) < 0 || !r->col)
		return rc;
	t = hml__now();
	rc = hml__collector_flush(r->col);
	r->stats.collect_outside_s += hml__now() - t;
	return rc;
}

void hml_region_free(hml_region *r)
{
	if (!r)
		return;
	if (hml__rows_drain(r) < 0)
		hml__log(HML_LOG_WARNING, "region '%s': collected rows lost: %s",
		         r->label, hml_error_last()->message);
	if (r->col) {
		double t = hml__now();

		if (hml__collector_close(r->col) < 0)
			hml__log(HML_LOG_WARNING, "region '%s': collected data lost: %s",
			         r->label, hml_error_last()->message);
		r->stats.collect_outside_s += hml__now() - t;   /* before the registry's copy */
	}
	r->col = NULL;
	hml__registry_remove(r);
	hml__rows_release(r);
	hml__guard_free(r);
	hml__model_free(r->model);
	hml__swap_release(r);
	side_release(&r->in);
	side_release(&r->out);
	hml__region_conserve_release(r);
	hml__config_release(&r->cfg);
	free(r->label);
	free(r);
}

hml_mode hml_region_mode(const hml_region *r)
{
	return r ? r->cfg.mode : HML_MODE_OFF;
}

hml_on_error hml_region_on_error(const hml_region *r)
{
	return r ? r->cfg.on_error : HML_ON_ERROR_FALLBACK;
}

const char *hml_region_label(const hml_region *r)
{
	return r ? r->label : NULL;
}

hml_region *hml_region_find(const char *label)
{
	return hml__registry_find(label);
}

int hml_region_stats_get_sized(const hml_region *r, hml_region_stats *out, size_t size)
{
	hml_region_stats all;

	if (!r || !out)
		return hml__error_set(HML_EINVALID, "region or output is NULL");
	if (size < HML_REGION_STATS_SIZE_V1)
		return hml__error_set(HML_EINVALID, "hml_region_stats of %zu bytes: the smallest "
		                      "version has %zu", size, (size_t)HML_REGION_STATS_SIZE_V1);
	all = r->stats;
	hml__rows_stats(r, &all);
	memcpy(out, &all, size < sizeof all ? size : sizeof all);
	return 0;
}

int (hml_region_stats_get)(const hml_region *r, hml_region_stats *out)
{
	return hml_region_stats_get_sized(r, out, sizeof(*out));
}
