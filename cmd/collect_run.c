/*
 * cmd/collect_run.c - hml collect's runs of the application: each run's
 * command line and environment, its record and log, and why a run failed
 * (cmd/collect_state.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "collect_record.h"
#include "collect_state.h"
#include "core/util.h"
#include "run/argv.h"
#include "run/childenv.h"
#include "run/limit.h"
#include "sys/proc.h"

extern char **environ;

/* Add a finished run's profile to the regions' times; a profile that
 * cannot be read leaves the data set without a cost (cost.h). */
static void add_times(collect_state *st)
{
	if (st->times && (MANY_RANKS(st) ?
	                  collect_mpi_times_add(&st->mpi, st->times, st->w->nregions, st->prof) :
	                  hml__cost_times_add(st->times, st->w->nregions, st->prof)) < 0) {
		free(st->times);
		st->times = NULL;
	}
	unlink(st->prof);
}

/* Run the application; returns the number of runs that succeeded. `why`
 * receives the reason of the first failure ("" when all ran). */
int collect_run_all(collect_state *st, int64_t first_seed, int runs, int *interrupted,
                    char *why, size_t why_size)
{
	const int g = st->dep.region[0] != '\0';
	hml__run_config config = { g ? HML__RUN_GUARDED : HML__RUN_COLLECT, st->db,
	                           g ? st->dep.region : NULL, g ? st->dep.path : NULL,
	                           NULL, st->prof, g ? st->dep.guard : NULL,
	                           g ? NULL : &st->w->collect_keep, 0, NULL, NULL };
	char **env = NULL, *program[] = { st->w->program, NULL }, **probe = NULL;
	cmd_progress *bar = cmd_progress_start("collect", runs, 0);
	double limit;   /* lib/run/limit.h: no accurate run to scale */
	int k, ok = 0;

	why[0] = '\0';
	/* --guarded: the deployed model runs as deployed, its interleave in the
	 * environment (and its k on each run's command line below) */
	if (g && (hml__argv_copy(&probe, (const char *const *)program, -1) < 0 ||
	          hml__model_run_apply(&probe, &config, st->w, &st->run) < 0)) {
		snprintf(why, why_size, "%s", hml_error_last()->message);
		hml__strv_free(probe);
		goto done;
	}
	hml__strv_free(probe);
	if (hml__run_limit(&limit, cmd_run_timeout, 0.0) < 0 ||
	    hml__childenv_build(&env, &config, (const char *const *)environ,
	                        (const char *const *)st->w->env) < 0) {
		snprintf(why, why_size, "%s", hml_error_last()->message);
		goto done;
	}
	for (k = 0; k < runs; k++) {
		int64_t seed = first_seed + k;
		char **argv = NULL;
		char header[256], footer[256], detail[64];
		hml__proc_result res;
		int rc;

		hml__argv_build(&argv, st->w->program, (const char *const *)st->args, &seed);
		if (argv && g && hml__model_run_apply(&argv, &config, st->w, &st->run) < 0) {
			hml__strv_free(argv);
			argv = NULL;
		}
		if (argv && st->launcher) {   /* mpirun -n 3 PROGRAM ARGS */
			char **app = argv;

			hml__argv_launch(&argv, (const char *const *)st->launcher, st->ranks, app);
			hml__strv_free(app);
		}

		if (cmd_interrupted) {
			*interrupted = 1;
			snprintf(why, why_size, "interrupted before run %d of %d", k + 1, runs);
			hml__strv_free(argv);
			break;
		}
		if (!argv) {
			snprintf(why, why_size, "out of memory");
			break;
		}
		snprintf(detail, sizeof(detail), "run %d/%d (seed %lld)", k + 1, runs,
		         (long long)seed);
		cmd_progress_update(bar, k, detail);
		if (!bar)
			cmd_info("collect: %s: run %d of %d (seed %lld)", st->w->name, k + 1, runs,
			         (long long)seed);
		rc = hml__proc_run_env((const char *const *)argv, (const char *const *)env,
		                       st->tmp_run, st->tmp_run, limit, &res);
		if (rc < 0) {
			snprintf(why, why_size, "%s (run %d of %d)", hml_error_last()->message,
			         k + 1, runs);
			json_array_append_new(st->runs, collect_run_json(seed, argv, NULL,
			                                         hml_error_last()->message, 0));
			hml__strv_free(argv);
			break;
		}
		json_array_append_new(st->runs, collect_run_json(seed, argv, &res, NULL, res.exited &&
		                      hml__workflow_exit_ok(st->w, res.exit_code)));
		snprintf(header, sizeof(header), "run %d of %d, seed %lld", k + 1, runs,
		         (long long)seed);
		snprintf(footer, sizeof(footer), "%s after %.3f s", hml__proc_describe(&res),
		         res.wall_s);
		if (collect_log_append(st->tmp_log, st->tmp_run, header, footer) < 0)
			cmd_warn("%s", hml_error_last()->message);
		hml__strv_free(argv);
		if (res.interrupted || cmd_interrupted) {
			*interrupted = 1;
			snprintf(why, why_size, "application '%s' was interrupted (run %d of %d)",
			         st->w->name, k + 1, runs);
		} else if (!res.exited) {
			snprintf(why, why_size, "application '%s' was %s (run %d of %d)", st->w->name,
			         cmd_run_status(footer, sizeof(footer), &res, limit), k + 1, runs);
		} else if (!hml__workflow_exit_ok(st->w, res.exit_code)) {
			snprintf(why, why_size, "application '%s' exited with status %d (run %d of %d)",
			         st->w->name, res.exit_code, k + 1, runs);
		} else {
			ok++;
			if (!g)   /* a guarded run's time is mostly the model's */
				add_times(st);
			continue;
		}
		if (!*interrupted && MANY_RANKS(st) &&   /* some ranks finished: kept */
		    collect_mpi_run_lost(&st->mpi, st->prof, why, &st->times, st->w->nregions)) {
			ok++;
			continue;
		}
		cmd_progress_end(bar);
		bar = NULL;
		if (!*interrupted) {   /* the failed run's last lines, to stderr (unless -q) */
			snprintf(header, sizeof(header), "the application's output in run %d of %d",
			         k + 1, runs);
			cmd_log_tail(st->tmp_run, header);
		}
		break;
	}
	cmd_progress_update(bar, ok, "done");
	if (ok < runs) {   /* a failed run's rows are not in the times */
		free(st->times);
		st->times = NULL;
	}
done:
	cmd_progress_end(bar);
	unlink(st->tmp_run);
	unlink(st->prof);   /* a failed run's profile */
	hml__strv_free(env);
	return ok;
}
