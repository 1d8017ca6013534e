/*
 * runtime/src/swap.c - hot swap (swap.h): the deployment file looked at,
 * the new model loaded and checked off the hot path, then switched in.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "log.h"
#include "profile.h"
#include "region_internal.h"
#include "rowguard.h"

/* "models/m3.pt" -> "m3": the id of a model known by its path only. */
static void id_of_path(char *buf, size_t size, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strcspn(base, ".");
	snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), base);
}

int hml__swap_init(hml_region *r)
{
	hml__swap *sw = &r->swap;

	memset(sw, 0, sizeof(*sw));
	if (r->cfg.model)
		id_of_path(sw->model, sizeof(sw->model), r->cfg.model);
	/* A region whose model did not load has no buffers for one: it runs
	 * the original code to the end (hml-runtime(3)). */
	sw->on = r->cfg.deployment && strcmp(r->cfg.deployment, "0") != 0 && r->model;
	/* The modes a guard checks rows in take the deployment's guard with
	 * its model (rowguard.h); shadow mode compares every row anyway. */
	sw->guarded = r->cfg.mode == HML_MODE_INFER || r->cfg.mode == HML_MODE_INTERLEAVE;
	return 0;
}

/* A deployment that is not used: said once per version of the file
 * (the caller looks again only when the file changes), and counted. */
static void refuse(hml_region *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuse(hml_region *r, const char *fmt, ...)
{
	char why[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	r->swap.log.refused++;
	hml__log(HML_LOG_WARNING, "region '%s': new deployment refused, keeping model '%s': %s",
	         r->label, r->swap.model, why);
}

/* Rows of zeros through the candidate: every output shape it gives must
 * be the region's, before any call runs on it. */
static int vet(hml_region *r, hml__model *m, const char *path)
{
	int64_t decl[HML_MAX_DIMS], shape[HML_MAX_DIMS + 1], oshape[HML_MAX_DIMS + 1];
	int64_t per_row = 1, n = 1;
	const void *y;
	hml_dtype ydt;
	void *x;
	int nd, d, rc;

	if (hml__model_dtype(m) != r->model_dtype)
		return hml__error_set(HML_ESHAPE, "model '%s' computes in %s, the region's model in %s",
		                      path, hml_dtype_name(hml__model_dtype(m)),
		                      hml_dtype_name(r->model_dtype));
	if ((nd = hml__model_declared_input(m, decl)) > 0) {
		int same = nd == r->in.ndim;
		for (d = 0; same && d < nd; d++)
			same = decl[d] == r->in.shape[d];
		if (!same)
			return hml__error_set(HML_ESHAPE, "model '%s' declares other input rows than "
			                      "the region's", path);
	}
	shape[0] = 1;
	memcpy(shape + 1, r->in.shape, (size_t)r->in.ndim * sizeof(int64_t));
	for (d = 0; d < r->in.ndim; d++)
		n *= r->in.shape[d];
	if (!(x = calloc((size_t)n, hml_dtype_size(r->model_dtype))))
		return hml__error_oom();
	rc = hml__model_forward(m, x, r->model_dtype, r->in.ndim + 1, shape);
	free(x);
	if (rc < 0 || (rc = hml__model_output(m, &y, &ydt, &nd, oshape)) < 0)
		return rc;
	for (d = 1; d < nd; d++)
		per_row *= oshape[d];
	if (nd < 1 || oshape[0] != 1 || per_row != r->out.row_size)
		return hml__error_set(HML_ESHAPE,
			"model '%s' returns %lld values per row but region '%s' needs %lld", path,
			(long long)(nd >= 1 ? per_row : 0), r->label, (long long)r->out.row_size);
	return 0;
}

/* The deployment's interleave (deployfile.h; -1: none recorded) as the
 * region's mode, under the region's lock: 0 is infer mode, N interleave N.
 * Only a region that runs its model on calls (infer, interleave) changes.
 * Row calls read the mode unlocked (rows.c): the ratio is stored first.
 * 1 when it changed. */
static int adopt_interleave(hml_region *r, long long n)
{
	hml_mode m = n == 0 ? HML_MODE_INFER : HML_MODE_INTERLEAVE;

	if (!r->swap.guarded || n < 0 || n > HML__INTERLEAVE_MAX ||
	    (m == r->cfg.mode && (n == 0 || n == r->cfg.interleave)))
		return 0;
	if (n > 0)
		__atomic_store_n(&r->cfg.interleave, (int)n, __ATOMIC_RELAXED);
	__atomic_store_n(&r->cfg.mode, m, __ATOMIC_RELEASE);
	return 1;
}

static void say_interleave(const hml_region *r, const hml__deployfile *d)
{
	if (d->interleave > 0)
		hml__log(HML_LOG_INFO, "region '%s': now at interleave %lld (deployment %s): %lld "
		         "model calls, then the original code for one", r->label, d->interleave,
		         d->deployment, d->interleave);
	else
		hml__log(HML_LOG_INFO, "region '%s': now at interleave 0 (deployment %s): the model "
		         "on every call (infer)", r->label, d->deployment);
}

/* The switch: the model's pointer and the guard under the lock, in one
 * critical section; the old model freed after. `g` is taken. */
static int commit(hml_region *r, hml__model *m, hml__guard_next *g, const hml__deployfile *d,
                  hml__swap_calls_fn calls)
{
	hml__swap *sw = &r->swap;
	char *path = hml__strdup(d->path), **grown;
	hml__model *old;
	uint64_t call;
	int interleaved;

	grown = path ? realloc(sw->retired, (sw->nretired + 1) * sizeof(*grown)) : NULL;
	if (!grown) {
		free(path);
		hml__guard_discard(g);
		return hml__error_oom();
	}
	sw->retired = grown;
	pthread_mutex_lock(&r->mu);
	call = calls(r);
	old = r->model;
	__atomic_store_n(&r->model, m, __ATOMIC_RELEASE);   /* rows.c's choose() reads it unlocked */
	r->model_checked = 0;
	sw->retired[sw->nretired++] = r->cfg.model;
	r->cfg.model = path;
	__atomic_store_n(&r->model_broken, 0, __ATOMIC_RELAXED);
	if (sw->guarded)
		hml__guard_switch(r, g);
	interleaved = adopt_interleave(r, d->interleave);
	pthread_mutex_unlock(&r->mu);
	hml__model_free(old);
	if (sw->guarded)
		hml__registry_guard(r, hml__guard_spec_text(r));

	if (sw->log.n < HML__PROFILE_SWAPS_MAX) {
		hml__profile_swap *e = &sw->log.at[sw->log.n++];
		snprintf(e->from, sizeof(e->from), "%s", sw->model);
		snprintf(e->to, sizeof(e->to), "%s", d->model);
		e->call = call;
	}
	sw->log.done++;
	hml__log(HML_LOG_INFO, "region '%s': now running model '%s' (deployment %s), after %llu "
	         "calls", r->label, d->model, d->deployment, (unsigned long long)call);
	snprintf(sw->model, sizeof(sw->model), "%s", d->model);
	if (interleaved)
		say_interleave(r, d);
	return 0;
}

/* The same path, or another name of the same file (HML_MODEL relative,
 * say, where the deployment file is absolute). */
static int same_file(const char *a, const char *b)
{
	hml__file_identity ia, ib;

	if (strcmp(a, b) == 0)
		return 1;
	hml__file_identity_get(a, &ia);
	hml__file_identity_get(b, &ib);
	return ia.exists && hml__file_identity_same(&ia, &ib);
}

/* The file changed: read it, and switch to the model it names if that
 * model is new, loads and fits the region. */
static void look(hml_region *r, hml__swap_calls_fn calls)
{
	hml__swap *sw = &r->swap;
	hml__deployfile d;
	hml__model *m = NULL;
	hml__guard_next *g = NULL;
	int rc, first;

	if ((rc = hml__deployfile_read(r->cfg.deployment, &d)) < 0) {
		refuse(r, "%s", hml_error_last()->message);
		return;
	}
	if (strcmp(d.region, r->label) != 0) {
		refuse(r, "deployment file '%s' is for region '%s'", r->cfg.deployment, d.region);
		return;
	}
	first = !sw->read_once;
	sw->read_once = 1;
	if (same_file(d.path, r->cfg.model)) {   /* the model in use: learn its id */
		snprintf(sw->model, sizeof(sw->model), "%s", d.model);
		if (first) {   /* the deployment the application was started by */
			sw->k = d.k;
			return;
		}
		pthread_mutex_lock(&r->mu);
		rc = adopt_interleave(r, d.interleave);
		pthread_mutex_unlock(&r->mu);
		if (rc)
			say_interleave(r, &d);
		return;
	}
	if (sw->k >= 1 && d.k >= 1 && d.k != sw->k) {
		refuse(r, "model '%s' (deployment %s) was trained at k %lld, and this run's region "
		       "calls advance k %lld, the application's argument, which a swap cannot "
		       "change: start the application again with the arguments hml deploy printed",
		       d.model, d.deployment, d.k, sw->k);
		return;
	}
	if ((rc = hml__model_load(&m, d.path, r->cfg.threads)) < 0 ||
	    (rc = vet(r, m, d.path)) < 0 ||
	    (sw->guarded && (rc = hml__guard_prepare(&g, r, d.guard, m, d.path)) < 0)) {
		refuse(r, "model '%s' (deployment %s): %s", d.model, d.deployment,
		       hml_error_last()->message);
		hml__model_free(m);
		return;
	}
	if ((rc = commit(r, m, g, &d, calls)) < 0) {
		refuse(r, "model '%s' (deployment %s): %s", d.model, d.deployment,
		       hml_error_last()->message);
		hml__model_free(m);
	}
}

void hml__swap_check(hml_region *r, double now, hml__swap_calls_fn calls)
{
	hml__swap *sw = &r->swap;
	hml__file_identity id;
	double next = now + r->cfg.swap_interval * 1e-3;
	hml__error_saved saved;

	if (__atomic_exchange_n(&sw->busy, 1, __ATOMIC_ACQUIRE))
		return;   /* another thread is looking; this call goes on */
	hml__error_save(&saved);   /* the application's last error stays its own */
	hml__file_identity_get(r->cfg.deployment, &id);
	if (!sw->looked || !hml__file_identity_same(&id, &sw->seen)) {
		sw->seen = id;
		sw->looked = 1;
		if (!id.exists)
			refuse(r, "deployment file '%s' is missing", r->cfg.deployment);
		else
			look(r, calls);
	}
	hml__error_restore(&saved);
	__atomic_store(&sw->next, &next, __ATOMIC_RELAXED);
	__atomic_store_n(&sw->busy, 0, __ATOMIC_RELEASE);
}

int hml__swap_get(const hml_region *r, hml__profile_swaps *out)
{
	*out = r->swap.log;
	return 0;
}

void hml__swap_release(hml_region *r)
{
	for (size_t i = 0; i < r->swap.nretired; i++)
		free(r->swap.retired[i]);
	free(r->swap.retired);
	r->swap.retired = NULL;
	r->swap.nretired = 0;
}
