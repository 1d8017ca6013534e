/*
 * cmd/collect.c - hml collect: run a workflow's application in collect
 * mode and register the HDF5 file it wrote as a data set.
 *
 * The application writes into a temporary file of the experiment's data/
 * directory; only a file that holds rows is registered. An application
 * that fails part-way keeps what its completed calls wrote: the runtime
 * leaves every finished call readable, so those rows are registered as an
 * incomplete data set rather than thrown away.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "core/deployfile.h"
#include "collect_mpi.h"
#include "collect_record.h"
#include "collect_state.h"
#include "core/profile_file.h"
#include "core/util.h"
#include "run/argv.h"
#include "run/workflow.h"
#include "store/cost.h"
#include "store/model_run.h"
#include "store/records.h"
#include "store/sampling.h"
#include "store/store.h"
#include "sys/fsutil.h"
#include "train/dataset.h"

#define RUNS_MAX 1000000
#define UNSET INT64_MIN


static const char description[] =
	"Runs the workflow's application N times (seeds S, S+1, ...) with\n"
	"HML_MODE=collect, writing every region's inputs and outputs into one HDF5\n"
	"file, and registers it in the experiment as a data set (d1, d2, ...).\n"
	"WORKFLOW is a bundled name (binomial) or a path to a workflow.json; without\n"
	"it, the workflow of the experiment's data sets is used. The application's\n"
	"arguments come from the workflow's collect.args, from --args, or from\n"
	"everything after '--'; \"{seed}\" in an argument becomes the run's seed.\n"
	"With --guarded the application runs its region's deployment (the model and\n"
	"the guard hml deploy --guard recorded) in infer mode with HML_COLLECT_GUARDED=1:\n"
	"only the rows the guard sent to the original code are stored.\n"
	"An MPI workflow (\"launcher\" in its workflow.json) runs under its launcher\n"
	"with --ranks N ranks (default: its \"ranks\"); each rank writes its own file,\n"
	"and the ranks' files are registered as one data set (an HDF5 virtual data\n"
	"set over them, no copy); a rank whose file cannot be read is left out with\n"
	"a warning.";

typedef struct collect_opts {
	int64_t runs;
	int64_t seed;
	hml__collect_keep keep;   /* set by the options, over the workflow's */
	int64_t ranks;
	const char *args;
	char **extra;       /* after "--" (NULL when there was none) */
	int nextra;
	int guarded;        /* --guarded */
} collect_opts;

/* ---- the workflow ------------------------------------------------------------ */

/* Without a WORKFLOW argument: the one workflow of the experiment's data sets. */
static int workflow_from_store(hml__store *s, const char **path)
{
	const char *found_name = NULL, *other_name = NULL;
	int n = hml__records_sole_workflow(s, path, &found_name, &other_name);

	if (n == 0) {
		cmd_error("collect: no workflow given, and experiment '%s' has no data set to "
		          "take it from (usage: hml collect WORKFLOW)", hml__store_dir(s));
		return -1;
	}
	if (n < 0) {
		cmd_error("collect: no workflow given, and experiment '%s' has data sets of "
		          "several workflows ('%s', '%s', ...): name one", hml__store_dir(s),
		          found_name ? found_name : "?", other_name ? other_name : "?");
		return -1;
	}
	return 0;
}

/*
 * "--" ends hml's options: what follows is the application's argument
 * list. It is cut off before the option parser sees it, skipping values of
 * options that take one (so `--args --` is not mistaken for it).
 */
static int split_dashdash(int argc, char **argv)
{
	static const char *const valued[] = { "--runs", "-n", "--seed", "-s", "--args", "--ranks",
	                                      "--dir", "-C", "--rate", "--reservoir", NULL };

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return i;
		for (const char *const *v = valued; *v; v++)
			if (strcmp(argv[i], *v) == 0) {
				i++;
				break;
			}
	}
	return argc;
}

/* ---- the command ------------------------------------------------------------- */

static void state_release(collect_state *st)
{
	hml__region_info_free(st->infos, st->ninfos);
	json_decref(st->runs);
	hml__strv_free(st->args);
	hml__strv_free(st->launcher);
	collect_mpi_release(&st->mpi);
	free(st->tmp_data);
	free(st->tmp_log);
	free(st->tmp_run);
	free(st->prof);
	free(st->times);
	free(st->db);
	hml__workflow_free(st->w);
	hml__store_free(st->s);
}

static void remove_tmp(const collect_state *st)
{
	const char *const files[] = { st->prof, st->tmp_data, st->tmp_log, st->tmp_run };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (files[i])
			unlink(files[i]);
	collect_mpi_remove(&st->mpi);
}

/* What the application left in the data file (nothing: rows 0). */
static int read_regions(collect_state *st)
{
	const char *data = st->tmp_data;
	struct stat sb;
	int rc;

	if (MANY_RANKS(st)) {   /* an MPI run's: the view over its ranks' files */
		if ((rc = collect_mpi_view(&st->mpi, st->s)) < 0)
			return rc == HML_ENOTFOUND ? 0 : rc;
		data = st->mpi.view;
	}
	if (stat(data, &sb) != 0 || sb.st_size == 0)
		return 0;
	if ((rc = hml__region_info_list(data, &st->infos, &st->ninfos)) < 0)
		return rc;
	for (size_t i = 0; i < st->ninfos; i++) {
		st->rows += st->infos[i].rows;
		st->calls += st->infos[i].calls;
	}
	return 0;
}

static int prepare(collect_state *st, const collect_opts *o)
{
	char cwd[4096];
	int rc;

	if (o->args)
		rc = hml__argv_split(&st->args, o->args);
	else if (o->extra)
		rc = hml__argv_copy(&st->args, (const char *const *)o->extra, o->nextra);
	else
		rc = hml__argv_copy(&st->args, (const char *const *)st->w->collect_args, -1);
	if (rc < 0)
		return rc;
	if (!(st->tmp_data = hml__store_tmp_create(st->s, "data", ".h5")) ||   /* never a link */
	    !(st->tmp_log = hml__store_tmp_create(st->s, "data", ".log")) ||
	    !(st->tmp_run = hml__store_tmp_create(st->s, "data", ".run.log")))
		return hml_error_last()->code;
	if (!st->args || !(st->runs = json_array()))
		return hml__error_oom();
	/* The application gets an absolute HML_DB: it may change directory. */
	if (st->tmp_data[0] == '/') {
		st->db = strdup(st->tmp_data);
	} else {
		if (!getcwd(cwd, sizeof(cwd)))
			return hml__error_set(HML_EIO, "cannot get the working directory: %s",
			                      strerror(errno));
		st->db = hml__path_join(cwd, st->tmp_data);
	}
	if (st->db && MANY_RANKS(st) && (rc = collect_mpi_prepare(&st->mpi, st->tmp_data, st->ranks)) < 0)
		return rc;
	if (!st->db || !(st->prof = malloc(strlen(st->db) + sizeof(".profile.json"))) ||
	    !(st->times = calloc(st->w->nregions + 1, sizeof(*st->times))))
		return hml__error_oom();
	for (size_t i = 0; i < st->w->nregions; i++)
		st->times[i].label = st->w->regions[i].label;
	sprintf(st->prof, "%s.profile.json", st->db);
	/* The log exists from the start, so that it can be registered even
	 * when the application wrote nothing. */
	snprintf(cwd, sizeof(cwd), "hml collect: workflow '%s' (%s)", st->w->name, st->w->path);
	return collect_log_append(st->tmp_log, NULL, cwd, NULL);
}

/* The command line's own rules: 0, or HML_EXIT_USAGE with its message. */
static int check_cli(const collect_opts *o)
{
	if (o->args && o->extra) {
		cmd_error("collect: give the application's arguments with --args or after '--', not both");
		return HML_EXIT_USAGE;
	}
	return 0;
}

/* The workflow (the argument wf_arg, or the experiment's when NULL) into
 * st->w, its runs and first seed (the options' over the workflow's), and
 * the experiment opened (created if need be). 0, or the exit status. */
static int open_workflow(collect_state *st, const char *wf_arg, const collect_opts *o,
                         int *runs, int64_t *seed)
{
	int rc;

	if (!wf_arg) {
		rc = hml__store_open(&st->s, g_cmd.dir, 0);
		if (rc == HML_ENOTFOUND) {
			cmd_error("collect: no workflow given, and there is no experiment at '%s' "
			          "(usage: hml collect WORKFLOW)", g_cmd.dir);
			return HML_EXIT_USAGE;
		}
		if (rc < 0)
			return cmd_fail(rc);
		if (workflow_from_store(st->s, &wf_arg) < 0)
			return HML_EXIT_USAGE;
	}
	if ((rc = hml__workflow_load(&st->w, wf_arg)) < 0)
		return cmd_fail(rc);
	*runs = o->runs != UNSET ? (int)o->runs : st->w->collect_runs;
	hml__collect_keep_over(&st->w->collect_keep, &o->keep);   /* options over the workflow */
	*seed = o->seed != UNSET ? o->seed : st->w->collect_seed;
	/* Every run's seed, not only the first, stays in the documented range. */
	if (*seed > HML__SEED_MAX - (*runs - 1)) {
		cmd_error("collect: the seeds of %d runs from %lld go past %lld, the largest seed",
		          *runs, (long long)*seed, (long long)HML__SEED_MAX);
		return o->runs != UNSET || o->seed != UNSET ? HML_EXIT_USAGE : HML_EXIT_INVALID;
	}
	if (!st->s && (rc = hml__store_open(&st->s, g_cmd.dir, 1)) < 0)
		return cmd_fail(rc);
	return 0;
}

/* --guarded: the deployment file of the workflow's first region that has
 * one with a guard, into st->dep. 0, or the exit status. */
static int find_deployment(collect_state *st)
{
	char rel[128], *path;
	int rc;

	for (size_t i = 0; i < st->w->nregions; i++) {
		if (hml__deployfile_rel(rel, sizeof(rel), st->w->regions[i].label) < 0 ||
		    !(path = hml__path_join(hml__store_dir(st->s), rel)))
			return cmd_fail(hml_error_last()->code);
		rc = hml__deployfile_read(path, &st->dep);
		free(path);
		if (rc == HML_ENOTFOUND)
			continue;
		if (rc < 0)
			return cmd_fail(rc);
		if (st->dep.guard[0]) {
			hml__model_run_read(&st->run, json_object_get(hml__store_find(st->s,
			                    "deployments", st->dep.deployment), "run"));
			return 0;
		}
		memset(&st->dep, 0, sizeof(st->dep));
	}
	cmd_error("collect: --guarded needs a region of workflow '%s' deployed with a guard "
	          "(hml deploy MODEL --guard bounds)", st->w->name);
	return HML_EXIT_INVALID;
}

/* The launcher and the ranks (collect_mpi.h). 0, or the exit status. */
static int setup_launcher(collect_state *st, const collect_opts *o)
{
	return collect_mpi_launcher(&st->launcher, &st->ranks, st->w,
	                            o->ranks != UNSET ? (int)o->ranks : 0, "collect");
}

/* What the runs left: the regions' rows read back, with a warning for each
 * region that collected none. 0, or the exit status with nothing
 * registered (why: the runs' failure, if any). */
/* The runs' processes waited for a CPU a large share of their time
 * (cost.h "cpu_wait_seconds"): every time the collection recorded, the
 * original code's among them, was stretched by other work, and the
 * speedups predicted from it are too high. Said once, over all runs: all
 * regions of a run share its processes, and a region's sums cover every
 * run that entered it, so the region entered by the most runs' processes
 * speaks for the collection (the rule's floor is per process). */
static void say_cpu_wait(const collect_state *st)
{
	hml__profile_cpu cpu = { NAN, NAN, 0 };
	double share;

	for (size_t i = 0; st->times && i < st->w->nregions; i++)
		if (st->times[i].cpu_procs > cpu.procs || isnan(cpu.run_s))
			cpu = (hml__profile_cpu){ st->times[i].cpu_run_s, st->times[i].cpu_wait_s,
			                          st->times[i].cpu_procs };
	if (hml__profile_cpu_waited(&cpu) && (share = hml__profile_cpu_wait_share(&cpu)) > 0)
		cmd_info("the application's threads waited for a CPU %.0f%% of their time while "
		         "it ran (other work on this machine): the cost of the original code "
		         "recorded, and the speedups hml predicts from it, are too high; collect "
		         "on an idle machine to trust them", 100.0 * share);
}

static int check_collected(collect_state *st, const char *why, int interrupted)
{
	int fail_code = interrupted ? HML_EXIT_INTERRUPTED : HML_EXIT_FAILURE;

	if (read_regions(st) < 0) {
		cmd_error("%s%s%s; nothing was registered", why, why[0] ? "; " : "",
		          hml_error_last()->message);
		return fail_code;
	}
	if (st->rows == 0) {
		if (why[0])
			cmd_error("%s; no data was collected, nothing was registered", why);
		else if (st->dep.region[0])
			cmd_error("the guard of deployment %s (model %s) sent no row of region '%s' "
			          "to the original code: nothing to collect, nothing was registered",
			          st->dep.deployment, st->dep.model, st->dep.region);
		else
			cmd_error("application '%s' ran but collected no data: no region wrote rows "
			          "(is it built with hml, and does it reach its regions?)", st->w->name);
		return fail_code;
	}
	for (size_t i = 0; i < st->w->nregions; i++) {
		size_t j;

		for (j = 0; j < st->ninfos; j++)
			if (strcmp(st->infos[j].label, st->w->regions[i].label) == 0 && st->infos[j].rows)
				break;
		if (j == st->ninfos)
			cmd_warn("region '%s' of workflow '%s' collected no rows",
			         st->w->regions[i].label, st->w->name);
	}
	say_cpu_wait(st);
	return 0;
}

/* The data set registered (complete when all runs succeeded and nothing
 * went wrong: why empty) and printed. Returns the exit status; when the
 * experiment refuses it, the data stays where it is and the message says
 * where: a locked or full experiment must not cost a long collection. */
static int register_data(collect_state *st, int complete, const char *why, int interrupted)
{
	hml__store_file *files = calloc((size_t)st->ranks + 3, sizeof(*files));
	size_t nfiles = 0;
	char id[32] = "", kept[1024];
	json_t *record = json_pack("{s:{s:s, s:s, s:s}, s:b, s:O, s:o}",
		"workflow", "name", st->w->name, "path", st->w->path, "sha256", st->w->sha256,
		"complete", complete, "runs", st->runs,
		"regions", collect_regions_json(st->infos, st->ninfos, st->times, st->w->nregions));
	int rc = record && files ? 0 : hml__error_oom();

	if (rc == 0 && st->dep.region[0])
		json_object_set_new(record, "guarded", json_pack("{s:s, s:s, s:s}",
			"region", st->dep.region, "deployment", st->dep.deployment,
			"model", st->dep.model));

	if (rc == 0 && MANY_RANKS(st)) {
		json_object_set_new(record, "mpi", collect_mpi_json(&st->mpi, st->w->launcher));
		rc = collect_mpi_files(&st->mpi, st->tmp_data, files, &nfiles);
	} else if (rc == 0) {
		files[nfiles++] = (hml__store_file){ "data", st->tmp_data, ".h5", NULL, NULL };
	}
	if (rc == 0) {
		files[nfiles++] = (hml__store_file){ "log", st->tmp_log, ".log", NULL, NULL };
		rc = hml__store_add(st->s, "datasets", record, files, nfiles, 0, id, sizeof(id));
		record = NULL;
	}
	json_decref(record);
	free(files);

	if (rc < 0) {
		cmd_error("%s", hml_error_last()->message);
		cmd_error("%s%sthe collected data is kept in '%s'%s", why, why[0] ? "; " : "",
		          MANY_RANKS(st) ? st->mpi.view : st->tmp_data,
		          MANY_RANKS(st) ? " (a view of the ranks' files beside it)" : "");
		return interrupted ? HML_EXIT_INTERRUPTED : cmd_exit_code(rc);
	}
	if (MANY_RANKS(st))   /* the first view, over the temporary names */
		unlink(st->mpi.view);
	collect_print_result(st->s, id, st->runs, st->infos, st->ninfos, st->calls);
	if (why[0]) {
		collect_rows_text(kept, sizeof(kept), st->infos, st->ninfos);
		cmd_error("%s; kept %s as incomplete data set %s", why, kept, id);
		return interrupted ? HML_EXIT_INTERRUPTED : HML_EXIT_FAILURE;
	}
	if (cmd_interrupted) {
		/* After the last run: the data is whole, and registered as such. */
		cmd_error("interrupted after the last run; data set %s was registered complete", id);
		return HML_EXIT_INTERRUPTED;
	}
	return HML_EXIT_OK;
}

int cmd_collect(int argc, char **argv)
{
	collect_opts o = { UNSET, UNSET, HML__COLLECT_KEEP_INIT, UNSET, NULL, NULL, 0, 0 };
	const cmd_option options[] = {
		{ "runs", 'n', CMD_OPT_INT, &o.runs, "N",
		  "run the application N times (default: the workflow's collect.runs)" },
		{ "seed", 's', CMD_OPT_INT, &o.seed, "S",
		  "seed of the first run; run k gets S+k-1 (default: collect.seed)" },
		{ "args", 0, CMD_OPT_STRING, &o.args, "'A B C'",
		  "the application's arguments, split on blanks (replaces collect.args)" },
		{ "rate", 0, CMD_OPT_DOUBLE, &o.keep.rate, "F", "keep each row with probability F" },
		{ "reservoir", 0, CMD_OPT_INT, &o.keep.reservoir, "N", "keep at most N rows per region, run" },
		{ "dedup", 0, CMD_OPT_FLAG, &o.keep.dedup, NULL, "drop rows whose inputs repeat exactly" },
		{ "guarded", 0, CMD_OPT_FLAG, &o.guarded, NULL,
		  "run the region's deployment with its guard; store only the guarded rows" },
		{ "ranks", 0, CMD_OPT_INT, &o.ranks, "N",
		  "an MPI workflow's ranks (default: the workflow's \"ranks\")" },
		CMD_RUN_TIMEOUT_OPTION,
		{ NULL, 0, 0, NULL, NULL, NULL }
	};
	static const cmd_range ranges[] = {
		{ "runs", 1, RUNS_MAX, 0 }, { "seed", 0, HML__SEED_MAX, 0 }, { "rate", 0, 1, 1 },
		{ "ranks", 1, HML__RANKS_MAX, 0 },
		{ "run-timeout", 0, INFINITY, 0 }, { "reservoir", 1, 1000000000, 0 }, { NULL, 0, 0, 0 }
	};
	const cmd_spec spec = {
		"collect", "[options] [WORKFLOW] [-- ARGS...]",
		"run a workflow's application and collect its region data",
		description, options, 0, 1, ranges
	};
	collect_state st;
	char why[1024];
	int split, first, rc, runs = 0, ok, interrupted = 0, code;
	int64_t seed = 0;

	memset(&st, 0, sizeof(st));
	st.run = (hml__model_run)HML__MODEL_RUN_INIT;
	split = split_dashdash(argc, argv);
	rc = cmd_parse(&spec, split, argv, &first);
	if (rc != 0)
		return rc > 0 ? cmd_finish(HML_EXIT_OK) : HML_EXIT_USAGE;
	if (split < argc) {
		o.extra = argv + split + 1;
		o.nextra = argc - split - 1;
	}
	if ((code = check_cli(&o)) != 0)
		return code;
	if ((code = open_workflow(&st, first < split ? argv[first] : NULL, &o, &runs, &seed)) != 0)
		goto done;
	if ((code = setup_launcher(&st, &o)) != 0)
		goto done;
	cmd_workflow_env_check(st.w);
	if (o.guarded && (code = find_deployment(&st)) != 0)
		goto done;
	if ((rc = prepare(&st, &o)) < 0) {
		code = cmd_fail(rc);
		remove_tmp(&st);
		goto done;
	}
	ok = collect_run_all(&st, seed, runs, &interrupted, why, sizeof(why));
	if ((code = check_collected(&st, why, interrupted)) != 0) {
		remove_tmp(&st);
		goto done;
	}
	if ((code = register_data(&st, ok == runs && !why[0], why, interrupted)) == 0)
		cmd_app_same_inputs_warn(st.w, st.args, NULL, st.s, NULL);
done:
	state_release(&st);
	return cmd_finish(code);
}
