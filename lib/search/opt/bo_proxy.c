/*
 * lib/search/opt/bo_proxy.c - bo.h over the CLI's optimiser plugin,
 * libhml-cli-bo.so (bo_plugin.h).
 *
 * The CLI links neither LAPACKE nor NLopt, so a command that makes no
 * optimiser never maps them (nor OpenBLAS, gfortran, libgomp): the plugin
 * is opened by the first hml__bo_new and stays loaded. Each function
 * forwards to the plugin's function of the same name and turns a failure
 * there into the caller's hml error. An optimiser exists only when the
 * plugin made it, so every function but hml__bo_new finds it loaded.
 */
#include <stddef.h>

#include "core/error.h"
#include "hml/version.h"
#include "loader/loader.h"
#include "search/opt/bo.h"
#include "search/opt/bo_plugin.h"

static const hml__bo_plugin *bo_t;   /* the table, once loaded */

static void loaded(const void *table)
{
	bo_t = table;
}

static const hml__plugin_spec spec = {
	HML__BO_PLUGIN, NULL, HML__BO_ENTRY, HML__BO_PLUGIN_ABI, sizeof(hml__bo_plugin),
	"the optimiser plugin", "plugin", offsetof(hml__bo_plugin, hml_version), "hml",
	hml_version, "hml", 0, loaded
};
static hml__plugin plugin = HML__PLUGIN_INIT(spec);

/* A failure in the plugin, re-recorded as the caller's error. */
static int fail(int rc)
{
	return hml__plugin_fail(rc, bo_t->last_error());
}

int hml__bo_new(hml__bo **out, const hml__bo_options *opts)
{
	const void *table;
	int rc;

	if (out)
		*out = NULL;
	if ((rc = hml__plugin_load(&plugin, &table)) < 0)
		return hml__error_set(rc, "cannot make an optimiser: %s", plugin.msg);
	return (rc = bo_t->bo_new(out, opts)) < 0 ? fail(rc) : rc;
}

void hml__bo_free(hml__bo *bo)
{
	if (bo)
		bo_t->bo_free(bo);
}

int hml__bo_ask(hml__bo *bo, size_t *id, double *u)
{
	int rc = bo_t->bo_ask(bo, id, u);

	return rc < 0 ? fail(rc) : rc;
}

int hml__bo_add(hml__bo *bo, size_t *id, const double *u)
{
	int rc = bo_t->bo_add(bo, id, u);

	return rc < 0 ? fail(rc) : rc;
}

int hml__bo_tell(hml__bo *bo, size_t id, const double *obj, const double *cons)
{
	int rc = bo_t->bo_tell(bo, id, obj, cons);

	return rc < 0 ? fail(rc) : rc;
}

int hml__bo_improve(hml__bo *bo, size_t id, const double *obj, const double *cons)
{
	int rc = bo_t->bo_improve(bo, id, obj, cons);

	return rc < 0 ? fail(rc) : rc;
}

int hml__bo_fail(hml__bo *bo, size_t id)
{
	int rc = bo_t->bo_fail(bo, id);

	return rc < 0 ? fail(rc) : rc;
}

size_t hml__bo_count(const hml__bo *bo)
{
	return bo_t->bo_count(bo);
}

/* -1 for an unknown id is an answer, not a failure: no error to copy. */
int hml__bo_trial(const hml__bo *bo, size_t id, const double **u, const double **obj,
                  const double **cons)
{
	return bo_t->bo_trial(bo, id, u, obj, cons);
}

int hml__bo_feasible(const hml__bo *bo, size_t id)
{
	return bo_t->bo_feasible(bo, id);
}

long hml__bo_front(const hml__bo *bo, size_t *ids)
{
	long n = bo_t->bo_front(bo, ids);

	return n < 0 ? fail((int)n) : n;
}
