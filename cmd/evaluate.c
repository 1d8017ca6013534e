/*
 * hml evaluate - run the workflow accurately and with the surrogate, and
 * report the error of its quantity of interest and the speedups.
 *
 * Accurate and surrogate runs alternate (a0 s0 a1 s1 ...) so that drift of
 * a shared machine hits both alike; the first pair warms caches and loads
 * libraries and is discarded. Each run writes its QoI (HML_QOI) and a JSON
 * profile (HML_PROFILE); the region's own time comes from the profile, the
 * end-to-end time is the process's wall time.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "fsutil.h"
#include "h5util.h"
#include "metrics.h"
#include "proc.h"
#include "store.h"
#include "util.h"
#include "workflow.h"

static int64_t repeat = -1;
static const char *args_text;
static int keep;

static const cmd_option options[] = {
	{ "repeat", 'n', CMD_OPT_INT, &repeat, "N",
	  "measured runs of each configuration, after one discarded warm-up (default: the workflow's)" },
	{ "args", 0, CMD_OPT_STRING, &args_text, "'A B ...'",
	  "the application's arguments instead of the workflow's evaluate args (split on blanks)" },
	{ "keep-runs", 0, CMD_OPT_FLAG, &keep, NULL,
	  "keep every run's QoI, profile and log in eval/<id>-runs/" },
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static const cmd_spec spec = {
	"evaluate", "[options] [MODEL] [-- ARGS...]",
	"compare the application with and without the surrogate",
	"Runs the workflow's application accurately and with MODEL (default: the\n"
	"deployed model) in place of its region, N+1 times each, alternating and\n"
	"discarding the first pair, and reports the error of the quantity of interest\n"
	"(RMSE, MAPE, max abs error) and the end-to-end and region speedups with\n"
	"their spread. The evaluation is recorded in the experiment (eval/<id>.json).",
	options, 0, -1
};

/* One configuration's measured runs. */
typedef struct series {
	double *wall, *region;
	int64_t model_calls, fallback_calls, original_calls;
} series;

/* --- small helpers -------------------------------------------------------- */

static int push(char ***list, size_t *n, const char *s)
{
	char **grown = realloc(*list, (*n + 2) * sizeof(**list));

	if (!grown)
		return hml__error_oom();
	*list = grown;
	if (!(grown[*n] = hml__strdup(s)))
		return HML_ENOMEM;
	grown[++*n] = NULL;
	return 0;
}

static int pushf(char ***list, size_t *n, const char *fmt, const char *a, const char *b)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), fmt, a, b);
	return push(list, n, buf);
}

/* Replace one environment entry with "fmt % value". */
static int set_slot(char **slot, const char *fmt, const char *value)
{
	char buf[4200];

	snprintf(buf, sizeof(buf), fmt, value);
	free(*slot);
	return (*slot = hml__strdup(buf)) ? 0 : HML_ENOMEM;
}

/* Print the last lines of an application's log on stderr. */
static void log_tail(const char *path)
{
	char *text = NULL, *start;
	size_t size = 0;
	int lines = 0;

	if (g_cmd.quiet || hml__read_file(path, &text, &size) < 0)
		return;
	start = text + size;
	while (start > text && lines <= 10)
		if (*--start == '\n' && start + 1 < text + size)
			lines++;
	if (*start == '\n')
		start++;
	if (*start)
		fprintf(stderr, "hml: last lines of '%s':\n%s%s", path, start,
		        text[size ? size - 1 : 0] == '\n' ? "" : "\n");
	free(text);
}

/* The QoI dataset `name` of file `path` as doubles (*out malloc'ed). */
static int read_qoi(const char *path, const char *name, double **out, size_t *n)
{
	hid_t f = -1, d = -1, sp = -1;
	hssize_t count;
	int rc = 0;

	*out = NULL;
	*n = 0;
	hml__h5_init();
	if ((rc = hml__h5_open_ro(&f, path)) < 0)
		return rc;
	if (H5Lexists(f, name, H5P_DEFAULT) <= 0) {
		rc = hml__error_set(HML_ENOTFOUND,
			"the application wrote no quantity of interest '%s' to '%s'", name, path);
		goto done;
	}
	if ((d = H5Dopen2(f, name, H5P_DEFAULT)) < 0 || (sp = H5Dget_space(d)) < 0 ||
	    (count = H5Sget_simple_extent_npoints(sp)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read '%s' in '%s'", name, path);
		goto done;
	}
	if (!(*out = malloc((size_t)(count ? count : 1) * sizeof(double)))) {
		rc = hml__error_oom();
		goto done;
	}
	if (count && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read '%s' in '%s'", name, path);
		free(*out);
		*out = NULL;
		goto done;
	}
	*n = (size_t)count;
done:
	if (sp >= 0)
		H5Sclose(sp);
	if (d >= 0)
		H5Dclose(d);
	H5Fclose(f);
	return rc;
}

/* region_s, model_calls, ... of `label` in an HML_PROFILE JSON file. */
static int read_profile(const char *path, const char *label, double *region_s,
                        series *acc)
{
	json_error_t err;
	json_t *doc = json_load_file(path, 0, &err), *r;
	size_t i;
	int rc = HML_ENOTFOUND;

	if (!doc)
		return hml__error_set(HML_EIO, "cannot read the run's profile '%s': %s", path, err.text);
	json_array_foreach(json_object_get(doc, "regions"), i, r) {
		const json_t *l = json_object_get(r, "label");

		if (json_is_string(l) && strcmp(json_string_value(l), label) == 0) {
			*region_s = cmd_json_number(r, "region_s");
			acc->model_calls += (int64_t)cmd_json_number(r, "model_calls");
			acc->fallback_calls += (int64_t)cmd_json_number(r, "fallback_calls");
			acc->original_calls += (int64_t)cmd_json_number(r, "original_calls");
			rc = 0;
			break;
		}
	}
	json_decref(doc);
	if (rc < 0)
		return hml__error_set(HML_ENOTFOUND,
			"the application never entered region '%s' (profile '%s')", label, path);
	return 0;
}

static json_t *summary_json(const double *v, size_t n)
{
	hml__summary s;

	hml__summary_compute(&s, v, n);
	return json_pack("{s:o, s:o, s:o, s:o, s:o}", "mean", cmd_json_real(s.mean),
	                 "median", cmd_json_real(s.median), "min", cmd_json_real(s.min),
	                 "max", cmd_json_real(s.max), "stdev", cmd_json_real(s.stdev));
}

static json_t *array_json(const double *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, cmd_json_real(v[i]));
	return a;
}

static void rm_runs(const char *dir, int nruns)
{
	static const char *kinds[] = { "a", "s" };
	static const char *exts[] = { ".h5", ".json", ".log" };
	char path[4096];

	for (int k = 0; k < nruns; k++)
		for (int i = 0; i < 2; i++)
			for (int e = 0; e < 3; e++) {
				snprintf(path, sizeof(path), "%s/%s%d%s", dir, kinds[i], k, exts[e]);
				unlink(path);
			}
	rmdir(dir);
}

/* --- the command ----------------------------------------------------------- */

int cmd_evaluate(int argc, char **argv)
{
	hml__store *s = NULL;
	hml__workflow *w = NULL;
	const json_t *model = NULL;
	const char *id = NULL, *label;
	char *model_path = NULL, *tmp = NULL, **app_args = NULL, eid[32];
	char **acc_env = NULL, **sur_env = NULL;
	size_t nargs = 0, nacc = 0, nsur = 0;
	series acc = { 0 }, sur = { 0 };
	double *qa = NULL, *qb = NULL, *speed_e2e = NULL, *speed_region = NULL;
	size_t na = 0, nb = 0;
	hml__errors err;
	cmd_progress *bar = NULL;
	json_t *rec = NULL, *env = NULL, *v;
	const char *key;
	int first, rc = 0, code = HML_EXIT_OK, nrep = 0, dashdash = 0;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dashdash = i;
			break;
		}
	if ((rc = cmd_parse(&spec, dashdash ? dashdash : argc, argv, &first)) != 0)
		return rc > 0 ? cmd_finish(HML_EXIT_OK) : HML_EXIT_USAGE;
	if ((dashdash ? dashdash : argc) - first > 1) {
		cmd_error("evaluate: unexpected argument '%s' (usage: hml evaluate %s)",
		          argv[first + 1], spec.synopsis);
		return HML_EXIT_USAGE;
	}
	if (repeat != -1 && repeat < 1) {
		cmd_error("evaluate: --repeat must be at least 1, not %lld", (long long)repeat);
		return HML_EXIT_USAGE;
	}
	if ((rc = hml__store_open(&s, g_cmd.dir, 0)) < 0)
		goto fail;

	/* The model: named, or the latest deployment's. */
	if (first < (dashdash ? dashdash : argc)) {
		id = argv[first];
	} else {
		const json_t *deps = json_object_get(hml__store_manifest(s), "deployments");
		const json_t *last = json_array_get(deps, json_array_size(deps) - 1);

		id = json_string_value(json_object_get(last, "model"));
		if (!id) {
			rc = hml__error_set(HML_ENOTFOUND,
				"no model is deployed in experiment '%s': run 'hml deploy' or name a model",
				hml__store_dir(s));
			goto fail;
		}
	}
	if ((rc = cmd_model_get(s, id, &model, &model_path)) < 0 ||
	    (rc = cmd_model_workflow(s, model, &w)) < 0)
		goto fail;
	label = cmd_json_string(model, "region");
	if (!w->qoi_dataset) {
		rc = hml__error_set(HML_EINVALID, "workflow '%s' declares no quantity of interest ('qoi')",
		                    w->name);
		goto fail;
	}
	nrep = (int)(repeat > 0 ? repeat : (w->evaluate_repeat > 0 ? w->evaluate_repeat : 3));

	/* Arguments: --args, or after --, or the workflow's. */
	if ((rc = push(&app_args, &nargs, w->program)) < 0)
		goto fail;
	if (dashdash) {
		for (int i = dashdash + 1; i < argc; i++)
			if ((rc = push(&app_args, &nargs, argv[i])) < 0)
				goto fail;
	} else if (args_text) {
		char *copy = hml__strdup(args_text), *save = NULL;

		if (!copy) {
			rc = HML_ENOMEM;
			goto fail;
		}
		for (char *t = strtok_r(copy, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save))
			if ((rc = push(&app_args, &nargs, t)) < 0)
				break;
		free(copy);
		if (rc < 0)
			goto fail;
	} else {
		for (char **a = w->evaluate_args; a && *a; a++)
			if ((rc = push(&app_args, &nargs, *a)) < 0)
				goto fail;
	}

	/* A scratch directory inside eval/ for every run's files. */
	if (!(tmp = hml__store_tmp_path(s, "eval", ""))) {
		rc = HML_ENOMEM;
		goto fail;
	}
	if (mkdir(tmp, 0777) != 0) {
		rc = hml__error_set(HML_EIO, "cannot create '%s': %s", tmp, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto fail;
	}

	/* Environments: the workflow's, then hml's own settings. */
	env = cmd_deploy_env(label, model_path);
	for (char **e = w->env; e && *e; e++)
		if ((rc = push(&acc_env, &nacc, *e)) < 0 || (rc = push(&sur_env, &nsur, *e)) < 0)
			goto fail;
	if ((rc = push(&acc_env, &nacc, "HML_MODE=off")) < 0 ||
	    (rc = push(&acc_env, &nacc, "HML_MODEL")) < 0 ||
	    (rc = push(&sur_env, &nsur, "HML_MODE=off")) < 0 ||
	    (rc = push(&sur_env, &nsur, "HML_ON_ERROR=fail")) < 0)
		goto fail;
	json_object_foreach(env, key, v)
		if ((rc = pushf(&sur_env, &nsur, "%s=%s", key, json_string_value(v))) < 0)
			goto fail;
	/* Slots for HML_QOI and HML_PROFILE, rewritten per run. */
	if ((rc = push(&acc_env, &nacc, "HML_QOI")) < 0 || (rc = push(&acc_env, &nacc, "HML_PROFILE")) < 0 ||
	    (rc = push(&sur_env, &nsur, "HML_QOI")) < 0 || (rc = push(&sur_env, &nsur, "HML_PROFILE")) < 0)
		goto fail;

	acc.wall = calloc((size_t)nrep, sizeof(double));
	acc.region = calloc((size_t)nrep, sizeof(double));
	sur.wall = calloc((size_t)nrep, sizeof(double));
	sur.region = calloc((size_t)nrep, sizeof(double));
	speed_e2e = calloc((size_t)nrep, sizeof(double));
	speed_region = calloc((size_t)nrep, sizeof(double));
	if (!acc.wall || !acc.region || !sur.wall || !sur.region || !speed_e2e || !speed_region) {
		rc = hml__error_oom();
		goto fail;
	}

	cmd_info("evaluating model '%s' on workflow '%s': %d measured runs each, after a warm-up",
	         id, w->name, nrep);
	bar = cmd_progress_start("evaluate", 2.0 * (nrep + 1));
	for (int k = 0; k <= nrep; k++) {
		for (int which = 0; which < 2; which++) {
			char **envp = which ? sur_env : acc_env;
			size_t ne = which ? nsur : nacc;
			char qoi[4096], prof[4096], log[4096], detail[64];
			const char *kind = which ? "s" : "a";
			series *se = which ? &sur : &acc;
			series discard = { 0 };
			hml__proc_result pr;
			double region_s = NAN;

			snprintf(qoi, sizeof(qoi), "%s/%s%d.h5", tmp, kind, k);
			snprintf(prof, sizeof(prof), "%s/%s%d.json", tmp, kind, k);
			snprintf(log, sizeof(log), "%s/%s%d.log", tmp, kind, k);
			if ((rc = set_slot(&envp[ne - 2], "HML_QOI=%s", qoi)) < 0 ||
			    (rc = set_slot(&envp[ne - 1], "HML_PROFILE=%s", prof)) < 0)
				goto fail;
			snprintf(detail, sizeof(detail), "%s run %d/%d", which ? "surrogate" : "accurate",
			         k, nrep);
			cmd_progress_update(bar, 2.0 * k + which, detail);
			if ((rc = hml__proc_run((const char *const *)app_args, (const char *const *)envp,
			                        log, log, &pr)) < 0)
				goto fail;
			if (pr.interrupted || cmd_interrupted) {
				rc = hml__error_set(HML_ERROR, "interrupted");
				goto fail;
			}
			if (!pr.exited || pr.exit_code != 0) {
				cmd_progress_end(bar);
				bar = NULL;
				log_tail(log);
				rc = hml__error_set(HML_ERROR, "%s run of '%s' failed: %s",
				                    which ? "surrogate" : "accurate", w->program,
				                    hml__proc_describe(&pr));
				goto fail;
			}
			if ((rc = read_profile(prof, label, &region_s, k ? se : &discard)) < 0)
				goto fail;
			if (k == 0)
				continue;
			se->wall[k - 1] = pr.wall_s;
			se->region[k - 1] = region_s;
		}
		if (k > 0) {
			speed_e2e[k - 1] = acc.wall[k - 1] / sur.wall[k - 1];
			speed_region[k - 1] = acc.region[k - 1] / sur.region[k - 1];
		}
	}
	cmd_progress_end(bar);
	bar = NULL;
	if (sur.model_calls == 0)
		cmd_warn("the surrogate runs made no model calls in region '%s'", label);

	/* The QoI of the first measured pair. */
	{
		char a1[4096], s1[4096];

		snprintf(a1, sizeof(a1), "%s/a1.h5", tmp);
		snprintf(s1, sizeof(s1), "%s/s1.h5", tmp);
		if ((rc = read_qoi(a1, w->qoi_dataset, &qa, &na)) < 0 ||
		    (rc = read_qoi(s1, w->qoi_dataset, &qb, &nb)) < 0)
			goto fail;
		if (na != nb) {
			rc = hml__error_set(HML_ESHAPE,
				"quantity of interest '%s' has %zu values in the accurate run but %zu with the surrogate",
				w->qoi_dataset, na, nb);
			goto fail;
		}
		hml__errors_compute_floor(&err, qa, qb, na, w->qoi_mape_floor);
		if (err.nonfinite)
			cmd_warn("%zu values of '%s' are NaN or Inf; they are left out of the errors",
			         err.nonfinite, w->qoi_dataset);

		rec = json_pack("{s:s, s:s, s:s, s:i}", "model", id, "region", label,
		                "workflow", w->name, "repeat", nrep);
		json_object_set_new(rec, "argv", json_array());
		for (size_t i = 0; i < nargs; i++)
			json_array_append_new(json_object_get(rec, "argv"), json_string(app_args[i]));
		json_object_set_new(rec, "qoi", json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:I, s:I, s:I}",
			"dataset", w->qoi_dataset, "metric", w->qoi_metric ? w->qoi_metric : "rmse",
			"rmse", cmd_json_real(err.rmse), "mape", cmd_json_real(err.mape),
			"max_abs", cmd_json_real(err.max_abs), "mae", cmd_json_real(err.mae),
			"values", (json_int_t)err.n, "mape_values", (json_int_t)err.mape_n,
			"nonfinite", (json_int_t)err.nonfinite));
		json_object_set_new(rec, "accurate", json_pack("{s:o, s:o}",
			"wall_seconds", array_json(acc.wall, (size_t)nrep),
			"region_seconds", array_json(acc.region, (size_t)nrep)));
		json_object_set_new(rec, "surrogate", json_pack("{s:o, s:o, s:I, s:I, s:I}",
			"wall_seconds", array_json(sur.wall, (size_t)nrep),
			"region_seconds", array_json(sur.region, (size_t)nrep),
			"model_calls", (json_int_t)sur.model_calls,
			"fallback_calls", (json_int_t)sur.fallback_calls,
			"original_calls", (json_int_t)sur.original_calls));
		json_object_set_new(rec, "speedup", json_pack("{s:o, s:o}",
			"end_to_end", summary_json(speed_e2e, (size_t)nrep),
			"region", summary_json(speed_region, (size_t)nrep)));
		{
			hml__store_file files[2] = {
				{ "qoi_accurate", a1, "-accurate.h5" },
				{ "qoi_surrogate", s1, "-surrogate.h5" },
			};
			if ((rc = hml__store_add(s, "evaluations", rec, files, 2, 1, eid, sizeof(eid))) < 0) {
				rec = NULL;
				goto fail;
			}
			rec = NULL;
		}
	}

	if (g_cmd.json) {
		cmd_json_print(json_pack("{s:O}", "evaluation", hml__store_find(s, "evaluations", eid)));
	} else {
		hml__summary e2e, reg, aw, sw, ar, sr;
		const char *metric = w->qoi_metric ? w->qoi_metric : "rmse";

		hml__summary_compute(&e2e, speed_e2e, (size_t)nrep);
		hml__summary_compute(&reg, speed_region, (size_t)nrep);
		hml__summary_compute(&aw, acc.wall, (size_t)nrep);
		hml__summary_compute(&sw, sur.wall, (size_t)nrep);
		hml__summary_compute(&ar, acc.region, (size_t)nrep);
		hml__summary_compute(&sr, sur.region, (size_t)nrep);
		printf("%s: model %s on workflow %s, %d measured runs each\n", eid, id, w->name, nrep);
		printf("quantity of interest '%s' (%zu values): RMSE %.4g, MAPE %.4g%% (of %zu values), max abs error %.4g  [metric: %s]\n",
		       w->qoi_dataset, err.n, err.rmse, err.mape, err.mape_n, err.max_abs, metric);
		printf("end to end:      accurate %.3f s (sd %.3f), surrogate %.3f s (sd %.3f), speedup %.2fx (%.2f-%.2f)\n",
		       aw.mean, aw.stdev, sw.mean, sw.stdev, e2e.mean, e2e.min, e2e.max);
		printf("region %-8s accurate %.3f s (sd %.3f), surrogate %.4f s (sd %.4f), speedup %.1fx (%.1f-%.1f)\n",
		       label, ar.mean, ar.stdev, sr.mean, sr.stdev, reg.mean, reg.min, reg.max);
		printf("report: eval/%s.json\n", eid);
	}
	goto done;
fail:
	cmd_progress_end(bar);
	bar = NULL;
	code = cmd_fail(rc);
done:
	if (tmp) {
		char dest[4096];

		snprintf(dest, sizeof(dest), "%s/eval/%s-runs", hml__store_dir(s), eid);
		if (!(keep && code == HML_EXIT_OK && rename(tmp, dest) == 0))
			rm_runs(tmp, nrep + 1);
	}
	json_decref(rec);
	json_decref(env);
	hml__strv_free(app_args);
	hml__strv_free(acc_env);
	hml__strv_free(sur_env);
	free(acc.wall); free(acc.region); free(sur.wall); free(sur.region);
	free(speed_e2e); free(speed_region);
	free(qa); free(qb);
	free(tmp);
	free(model_path);
	hml__workflow_free(w);
	hml__store_free(s);
	return cmd_finish(code);
}
