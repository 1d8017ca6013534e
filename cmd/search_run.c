/*
 * hml search-worker's runs of an iterative application (lib/search/
 * iterative.h): the data set of each k (a model predicts one region call,
 * k steps, ahead, so it trains on data collected at its k), the accurate
 * run of each k (the reference, once per worker), and the trial's run
 * with its model at its k and interleave, whose primary QoI error after
 * the whole run is the trial's objective (lib/store/qoi_compare.h, the
 * comparison hml evaluate makes).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "core/beneath.h"
#include "core/json.h"
#include "core/util.h"
#include "run/argv.h"
#include "run/childenv.h"
#include "run/workflow.h"
#include "store/model_run.h"
#include "store/qoi_compare.h"
#include "sys/fsutil.h"
#include "train/dataset.h"

typedef struct group {
	long long k;            /* -1: k is not searched */
	hml__dataset d;
	hml__qoi_ref *ref;      /* its accurate run's QoI, once run */
	double acc_wall;
} group;

struct cmd_search_run {
	hml__workflow *w;
	char *region;
	char **argv;            /* collect's arguments on the check seed */
	char *tmp;              /* the runs' files, beneath the experiment */
	group *g;
	size_t ng;
	hml__qoi_result *res;   /* [w->nqoi] */
};

void cmd_search_run_free(cmd_search_run *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ng; i++) {
		hml__dataset_release(&r->g[i].d);
		hml__qoi_ref_free(r->g[i].ref);
	}
	if (r->tmp)
		hml__remove_dir(r->tmp);
	free(r->tmp);
	free(r->g);
	free(r->res);
	hml__strv_free(r->argv);
	hml__workflow_free(r->w);
	free(r->region);
	free(r);
}

static int load_groups(cmd_search_run *r, const json_t *groups, int nf)
{
	const json_t *g;
	size_t i;
	int rc = 0;

	if (!(r->g = calloc(json_array_size(groups) + 1, sizeof(*r->g))))
		return hml__error_oom();
	json_array_foreach(groups, i, g) {
		const json_t *data = json_object_get(g, "data"), *p;
		const char **paths = calloc(json_array_size(data) + 1, sizeof(*paths));
		size_t j;

		if (!paths)
			return hml__error_oom();
		json_array_foreach(data, j, p)
			paths[j] = json_string_value(p) ? json_string_value(p) : "";
		r->g[i].k = json_is_integer(json_object_get(g, "k")) ?
		            json_integer_value(json_object_get(g, "k")) : -1;
		rc = hml__dataset_load(&r->g[i].d, paths, j, r->region, (hml__nonfinite)nf);
		free(paths);
		r->ng = i + 1;
		if (rc < 0)
			return rc;
	}
	return 0;
}

int cmd_search_run_open(cmd_search_run **out, const json_t *run, const char *region,
                        int nf, long long *rows)
{
	cmd_search_run *r = calloc(1, sizeof(*r));
	const json_t *argv = json_object_get(run, "argv"), *a;
	const char *root = hml__json_string(run, "root"), *dir = hml__json_string(run, "dir");
	size_t i;
	int rc;

	*out = NULL;
	*rows = 0;
	if (!r || !(r->argv = calloc(json_array_size(argv) + 1, sizeof(*r->argv))))
		goto oom;
	json_array_foreach(argv, i, a)
		if (!(r->argv[i] = hml__strdup(json_string_value(a) ? json_string_value(a) : "")))
			goto oom;
	if (!(r->region = hml__strdup(region)))
		goto oom;
	if (!root || !dir || !(r->tmp = hml__path_join(dir, ".runs-XXXXXX")))
		goto oom;
	if ((rc = hml__workflow_load(&r->w, hml__json_string(run, "workflow"))) < 0 ||
	    (rc = hml__beneath_mkdtemp(root, r->tmp)) < 0 ||
	    (rc = load_groups(r, json_object_get(run, "groups"), nf)) < 0)
		goto fail;
	if (!(r->res = calloc(r->w->nqoi, sizeof(*r->res))))
		goto oom;
	for (i = 0; i < r->ng; i++)
		*rows += r->g[i].d.rows;
	*out = r;
	return 0;
oom:
	rc = hml__error_oom();
fail:
	if (r && rc == HML_EIO && r->tmp && strstr(r->tmp, "XXXXXX"))
		rc = hml__error_set(HML_EIO, "cannot create a directory for the runs in '%s'", dir);
	cmd_search_run_free(r);
	return rc;
}

/* The group of k (the only one when k is not searched), or NULL. */
static group *group_of(cmd_search_run *r, long long k)
{
	for (size_t i = 0; i < r->ng; i++)
		if (r->g[i].k == k || r->g[i].k < 0)
			return &r->g[i];
	hml__error_set(HML_EINVALID, "no data set was collected with k %lld", k);
	return NULL;
}

const hml__dataset *cmd_search_run_data(cmd_search_run *r, long long k)
{
	group *g = group_of(r, k);

	return g ? &g->d : NULL;
}

/* The accurate run of group g, once. */
static int reference(cmd_search_run *r, group *g, char **argv)
{
	hml__run_config c = { HML__RUN_ACCURATE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL };
	char qoi[4200], log[4200], what[64];
	int rc;

	if (g->ref)
		return 0;
	snprintf(qoi, sizeof(qoi), "%s/a%lld.h5", r->tmp, g->k);
	snprintf(log, sizeof(log), "%s/a%lld.log", r->tmp, g->k);
	c.qoi = qoi;
	snprintf(what, sizeof(what), "k %lld", g->k);
	if ((rc = cmd_app_run(r->w, argv, &c, log, NAN, &g->acc_wall, NULL)) < 0 ||
	    (rc = hml__qoi_ref_load(&g->ref, r->w, qoi, 1)) < 0 ||
	    (rc = hml__qoi_ref_check_finite(g->ref, what)) < 0)
		return rc;
	return 0;
}

int cmd_search_run_qoi(cmd_search_run *r, const char *model, long long k, long long il,
                       long trial, double *err)
{
	hml__run_config c = { HML__RUN_SURROGATE, NULL, r->region, model, NULL, NULL, NULL,
	                      NULL, 0, NULL, NULL };
	hml__model_run at = { k, il };
	char qoi[4200], log[4200], what[64], **argv = NULL;
	group *g = group_of(r, k);
	int rc;

	*err = NAN;
	if (!g)
		return hml_error_last()->code;
	/* the trial's model run as hml evaluate will run it (lib/store/model_run.h) */
	if ((rc = hml__argv_copy(&argv, (const char *const *)r->argv, -1)) < 0 ||
	    (rc = hml__model_run_apply(&argv, &c, r->w, &at)) < 0 ||
	    (rc = reference(r, g, argv)) < 0)
		goto done;
	snprintf(qoi, sizeof(qoi), "%s/s.h5", r->tmp);
	snprintf(log, sizeof(log), "%s/s.log", r->tmp);
	c.qoi = qoi;
	snprintf(what, sizeof(what), "trial %ld", trial);
	if ((rc = cmd_app_run(r->w, argv, &c, log, g->acc_wall, NULL, NULL)) < 0 ||
	    (rc = hml__qoi_compare(r->res, g->ref, qoi, what)) < 0)
		goto done;
	*err = r->res[0].error;
done:
	hml__strv_free(argv);
	return rc;
}
