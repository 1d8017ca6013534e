/*
 * cmd/collect_state.h - the state of one hml collect (cmd/collect.c) and
 * its runs of the application (cmd/collect_run.c).
 */
#ifndef HML_CMD_COLLECT_STATE_H
#define HML_CMD_COLLECT_STATE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "collect_mpi.h"
#include "core/deployfile.h"
#include "run/workflow.h"
#include "store/cost.h"
#include "store/model_run.h"
#include "store/store.h"
#include "train/dataset.h"

typedef struct collect_state {
	hml__store *s;
	hml__workflow *w;
	char *tmp_data, *tmp_log, *tmp_run, *db, *prof;
	hml__cost_times *times; /* per workflow region; NULL once a run's profile failed */
	char **args;            /* template, "{seed}" not yet substituted */
	json_t *runs;           /* records of the runs that were tried */
	hml__region_info *infos;
	size_t ninfos;
	int64_t rows, calls;
	hml__deployfile dep;    /* --guarded: the region's deployment (dep.region "": none) */
	hml__model_run run;     /* --guarded: its model's k and interleave, as deployed
	                           (lib/store/model_run.h); -1 each: none */
	char **launcher;        /* the workflow's, its program found; NULL: not MPI */
	int ranks;
	collect_mpi mpi;
} collect_state;

/* Several ranks, each with its file, and their view; one rank under a
 * launcher writes HML_DB itself (core/rankfile.h). */
#define MANY_RANKS(st) ((st)->launcher && (st)->ranks > 1)

/* Run the application `runs` times from seed first_seed, collecting (or,
 * with a --guarded deployment, running its model as deployed): the runs
 * that succeeded; why (why_size bytes) says why the others did not;
 * *interrupted is set by a signal. Each run is recorded in st->runs, its
 * output appended to the data set's log. */
int collect_run_all(collect_state *st, int64_t first_seed, int runs, int *interrupted,
                    char *why, size_t why_size);

#endif
