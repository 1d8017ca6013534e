/*
 * cmd/evaluate_mpi.h - hml evaluate of an MPI workflow (a "launcher" in
 * its workflow.json, hml-workflow(5)): its accurate and surrogate runs are
 * started under the launcher with the workflow's ranks (or --ranks), and
 * each rank writes its own QoI file and profile (lib/core/rankfile.h),
 * which hml evaluate reads as one (hml__qoi_file_read_ranks,
 * hml__profile_file_find_ranks). Here: those files removed, or registered
 * with the evaluation, and the record's "mpi".
 */
#ifndef HML_CMD_EVALUATE_MPI_H
#define HML_CMD_EVALUATE_MPI_H

#include <jansson.h>

#include "run/workflow.h"
#include "store/store.h"


/* Remove the runs' files in `dir` (a<k>.h5, .json, .log, s<k>..., k below
 * `nruns`; with `ranks` > 1 each rank's file of each too), then `dir`:
 * an evaluation's, or a QoI check's (cmd/qoi_check.c). */
void cmd_evaluate_runs_remove(const char *dir, int nruns, int ranks);

/* The compared QoI files of an evaluation as store files. */
typedef struct cmd_evaluate_qoi_files {
	hml__store_file *files;
	size_t n;
	char **owned;          /* the names made for the ranks' files */
} cmd_evaluate_qoi_files;

/* The accurate (`a`) and surrogate (`s`) warm-up runs' QoI files: roles
 * "qoi_accurate" and "qoi_surrogate"; with `ranks` > 1, each rank's file,
 * roles "qoi_accurate.r0002" ... (the rank rule of the role, as a data
 * set's "data.r0002"); and the plot of the error over time when
 * `over_time_png` is not NULL (role "over_time_png"). 0 or HML_ENOMEM;
 * release it in either case. */
int cmd_evaluate_qoi_files_make(cmd_evaluate_qoi_files *f, const char *a, const char *s,
                                int ranks, const char *over_time_png);
void cmd_evaluate_qoi_files_release(cmd_evaluate_qoi_files *f);

/* The record's "mpi": {"ranks": 3, "launcher": ["mpirun", "-n", "{ranks}"],
 * "qoi_by_rank": [{"rank": 0, "error": E, "values": N}, ...]}: the primary
 * QoI's error (in its metric) of each rank's part, its accurate file (`a`
 * by the rank rule) against its surrogate file (`s`); empty for 1 rank. */
json_t *cmd_evaluate_mpi_json(char *const *launcher, int ranks, const hml__workflow *w,
                              const char *a, const char *s);

/* "by rank:  0: 1.2  1: 0.9  2: 1.4  [rmse of 'state']" on stdout, for an
 * evaluation record with a "qoi_by_rank". */
void cmd_evaluate_mpi_print(const json_t *evaluation);

#endif
