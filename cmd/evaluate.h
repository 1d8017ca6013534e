/*
 * cmd/evaluate.h - an hml evaluate run (cmd/evaluate.c), shared with the
 * report it prints (cmd/evaluate_print.c).
 */
#ifndef HML_CMD_EVALUATE_H
#define HML_CMD_EVALUATE_H

#include <stdint.h>

#include "cmd.h"
#include "deploy/latency.h"
#include "store/cost.h"
#include "store/model_run.h"
#include "store/qoi_compare.h"
#include "store/store.h"

/* One configuration's measured runs. */
typedef struct series {
	double *wall, *region;
	double *cpu_wait;         /* each run's share of thread time waiting for a CPU, or NaN */
	double cpu_noted;         /* the largest share of a run that waited enough to say so */
	int64_t model_calls, fallback_calls, original_calls;
	cmd_guard_counts guard;
	int unverified;           /* runs whose output failed the workflow's verify.pattern */
} series;

/*
 * An evaluation, step by step: plan (what to run: the model, its workflow
 * and region, the application's argv, a scratch directory), run (the
 * alternating series), read (the QoI of the warm-up pair and its
 * errors), record (the report in the experiment), print.
 */
typedef struct evaluation {
	/* plan */
	hml__store *s;
	hml__workflow *w;
	const char *id, *label;
	const char *target;       /* "torchscript", or "c" for a compiled deployment */
	char *model_path, *tmp, **argv;
	char **launcher;          /* an MPI workflow's (collect_mpi.h), else NULL */
	int ranks;                /* its ranks, each with its QoI file and profile; else 1 */
	char *guard_path;         /* the deployment's guard file, or NULL */
	const char *guard_spec;   /* its spec ("bounds:margin=0"), or NULL: none */
	int nrep;
	hml__model_run run;       /* the surrogate runs' k and interleave (lib/store/model_run.h) */
	int interleave;           /* > 0: the runtime's interleave mode in surrogate runs */
	hml__schedule sched;      /* the surrogate runs' k and interleave (lib/store/cost.h) */
	/* run */
	series acc, sur;
	double *speed_e2e, *speed_region;
	double *ceiling;          /* per repeat: the end-to-end speedup of a model that
	                             costs nothing (hml__speedup_ceiling), from the
	                             accurate run */
	/* read */
	hml__qoi_result *qoi;     /* [w->nqoi], qoi[0] the primary's */
	json_t *over_time;        /* the QoIs' error over time, or NULL (cmd/evaluate_iterative.c) */
	char *over_time_png;      /* its plot in tmp, or NULL */
	hml__latency lat;         /* the card's, or measured here when it has none */
	const char *lat_source;   /* "card", "measured", or NULL: none */
	hml__prediction pred;     /* from the collected cost and that latency */
	double pred_run;          /* end to end for these runs, from their accurate times */
	double acc_wall_max;      /* the slowest accurate run's wall time, warm-up included */
	double collected_wall;    /* the slowest collected run's: the accurate runs' limit */
	/* record */
	char eid[32];
} evaluation;

/* The report on stdout (--json: the recorded evaluation). */
void cmd_evaluate_print(const evaluation *e);

#endif
