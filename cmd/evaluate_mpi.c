/*
 * cmd/evaluate_mpi.c - hml evaluate of an MPI workflow: the files its
 * runs leave when each of their ranks writes its own QoI file and profile
 * (lib/core/rankfile.h), removed after the evaluation or registered with
 * it, and what the record says of the ranks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd.h"
#include "core/json.h"
#include "core/qoi_file.h"
#include "core/rankfile.h"
#include "deploy/metrics.h"
#include "evaluate_mpi.h"

/* `path`, and when the runs had several ranks, each rank's file of it. */
static void unlink_ranks(const char *path, int ranks)
{
	char *own = NULL;

	unlink(path);
	for (int k = 0; ranks > 1 && k < ranks; k++) {
		if (hml__rankfile_path(&own, path, k) == 0)
			unlink(own);
		free(own);
		own = NULL;
	}
}

void cmd_evaluate_runs_remove(const char *dir, int nruns, int ranks)
{
	static const char *kinds[] = { "a", "s" };
	static const char *exts[] = { ".h5", ".json", ".log" };
	static const char *plot[] = { "over_time.dat", "over_time.gp", "gnuplot.log",
	                              "over-time.png" };   /* cmd/evaluate_iterative.c's */
	char path[4096];

	for (size_t i = 0; i < sizeof(plot) / sizeof(plot[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, plot[i]);
		unlink(path);
	}
	for (int k = 0; k < nruns; k++)
		for (int i = 0; i < 2; i++)
			for (int e = 0; e < 3; e++) {
				snprintf(path, sizeof(path), "%s/%s%d%s", dir, kinds[i], k, exts[e]);
				unlink_ranks(path, ranks);
			}
	rmdir(dir);
}

void cmd_evaluate_qoi_files_release(cmd_evaluate_qoi_files *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->owned[3 * i]);
		free(f->owned[3 * i + 1]);
		free(f->owned[3 * i + 2]);
	}
	free(f->owned);
	free(f->files);
	f->owned = NULL;
	f->files = NULL;
	f->n = 0;
}

/* One rank's file of a configuration: role "qoi_accurate.r0002", the
 * file a0.r0002.h5, stored as eval/<id>-accurate.r0002.h5. */
static int add_rank(cmd_evaluate_qoi_files *f, const char *role, const char *path,
                    const char *ext, int k)
{
	char **o = &f->owned[3 * f->n];
	int rc;

	if ((rc = hml__rankfile_path(&o[0], role, k)) < 0 ||
	    (rc = hml__rankfile_path(&o[1], path, k)) < 0 ||
	    (rc = hml__rankfile_path(&o[2], ext, k)) < 0)
		return rc;
	f->files[f->n++] = (hml__store_file){ o[0], o[1], o[2], NULL, NULL };
	return 0;
}

int cmd_evaluate_qoi_files_make(cmd_evaluate_qoi_files *f, const char *a, const char *s,
                                int ranks, const char *over_time_png)
{
	size_t cap = (ranks > 1 ? 2 * (size_t)ranks : 2) + 1;
	int rc = 0;

	f->n = 0;
	if (!(f->files = calloc(cap, sizeof(*f->files))) ||
	    !(f->owned = calloc(3 * cap, sizeof(*f->owned))))
		return hml__error_oom();
	if (ranks <= 1) {
		f->files[0] = (hml__store_file){ "qoi_accurate", a, "-accurate.h5", NULL, NULL };
		f->files[1] = (hml__store_file){ "qoi_surrogate", s, "-surrogate.h5", NULL, NULL };
		f->n = 2;
	}
	for (int k = 0; ranks > 1 && k < ranks && rc == 0; k++)
		if ((rc = add_rank(f, "qoi_accurate", a, "-accurate.h5", k)) == 0)
			rc = add_rank(f, "qoi_surrogate", s, "-surrogate.h5", k);
	if (rc == 0 && over_time_png)
		f->files[f->n++] = (hml__store_file){ "over_time_png", over_time_png,
		                                      "-over-time.png", NULL, NULL };
	return rc;
}

/* Rank k's error of QoI `q`: its accurate and surrogate files compared. */
static json_t *rank_error(const hml__workflow_qoi *q, const char *a, const char *s, int k)
{
	char *pa = NULL, *ps = NULL;
	double *va = NULL, *vs = NULL;
	size_t na = 0, ns = 0;
	hml__errors err;
	json_t *o = NULL;

	if (hml__rankfile_path(&pa, a, k) == 0 && hml__rankfile_path(&ps, s, k) == 0 &&
	    hml__qoi_file_read(pa, q->dataset, &va, &na) == 0 &&
	    hml__qoi_file_read(ps, q->dataset, &vs, &ns) == 0 && na == ns) {
		hml__errors_compute_floor(&err, va, vs, na, q->mape_floor);
		o = json_pack("{s:i, s:o, s:I}", "rank", k,
		              "error", hml__json_real(hml__errors_metric(&err, q->metric)),
		              "values", (json_int_t)na);
	}
	free(pa); free(ps); free(va); free(vs);
	return o;
}

json_t *cmd_evaluate_mpi_json(char *const *launcher, int ranks, const hml__workflow *w,
                              const char *a, const char *s)
{
	json_t *l = json_array(), *by = json_array(), *r;

	for (; launcher && *launcher; launcher++)
		json_array_append_new(l, json_string(*launcher));
	for (int k = 0; ranks > 1 && k < ranks; k++)   /* the files were read: they are there */
		if ((r = rank_error(&w->qoi[0], a, s, k)))
			json_array_append_new(by, r);
	return json_pack("{s:i, s:o, s:o}", "ranks", ranks, "launcher", l, "qoi_by_rank", by);
}

void cmd_evaluate_mpi_print(const json_t *evaluation)
{
	const json_t *by = json_object_get(json_object_get(evaluation, "mpi"), "qoi_by_rank"), *r;
	size_t i;

	if (!json_array_size(by))
		return;
	printf("by rank:        ");
	json_array_foreach(by, i, r)
		printf(" %lld: %.4g", (long long)json_integer_value(json_object_get(r, "rank")),
		       hml__json_number(r, "error"));
	printf("  [%s of '%s']\n", hml__json_string(json_array_get(json_object_get(evaluation,
	       "qois"), 0), "metric"), hml__json_string(json_array_get(json_object_get(evaluation,
	       "qois"), 0), "dataset"));
}
