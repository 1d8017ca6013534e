/*
 * cmd/collect_mpi.h - hml collect of an MPI workflow: the ranks' files
 * (lib/core/rankfile.h) found after the run and registered as one data set,
 * a view through HDF5 virtual data sets (lib/core/collection_vds.h).
 *
 * The view is written twice: over the files' temporary names first, to
 * learn which ranks' files can be read (the others are left out with a
 * warning) and what they hold; then, once the experiment has given the data
 * set its id, over their final names (data/d1.r0003.h5 beside the view
 * data/d1.h5), which the manifest lists under the roles "data.r0003" with
 * their SHA-256 (lib/store/checked.h checks them with the view).
 */
#ifndef HML_CMD_COLLECT_MPI_H
#define HML_CMD_COLLECT_MPI_H

#include <jansson.h>

#include "core/collection_vds.h"
#include "run/workflow.h"
#include "store/cost.h"
#include "store/store.h"

typedef struct collect_mpi {
	int ranks;                  /* ranks launched */
	char **paths;               /* rank k's file: HML_DB's rank name */
	hml__coll_vds_part *parts;
	size_t used;
	char *view;                 /* the first view, over the temporary names */
	char **roles, **exts;       /* of the used ranks' files, for the store */
	char **names;               /* the final names, while the second view is made */
	char **lost;                /* why rank k is left out though its file may read:
	                               it did not finish a run; NULL: it did */
} collect_mpi;

/* The workflow's launcher (a copy, its program found on PATH when it has
 * no '/') in *launcher (NULL when it has none) and the ranks (ranks_opt,
 * --ranks, when > 0, else the workflow's) in *ranks. 0, or the exit status
 * with the message printed ("CMD: launcher 'mpirun' of workflow 'W' is not
 * found ...", `cmd` the command's name): HML_EXIT_USAGE for ranks above 1
 * without a launcher, HML_EXIT_INVALID for a launcher not found. hml
 * collect and hml evaluate both start ranks through it. */
int collect_mpi_launcher(char ***launcher, int *ranks, const hml__workflow *w,
                         int ranks_opt, const char *cmd);

/* The workflow's launcher resolved as above, for a caller that reports
 * errors itself: 0 (*launcher NULL when the workflow has none), or
 * HML_ENOTFOUND "launcher 'mpirun' of workflow 'W' is not found on PATH
 * (is MPI installed?)", HML_ENOMEM. */
int collect_mpi_launcher_find(char ***launcher, const hml__workflow *w);

/* Rank names of `db` (HML_DB, as the store names it) for `ranks` ranks; a rank's file that exists already
 * is refused (HML_EEXISTS "rank 1's file 'P' exists already"). */
int collect_mpi_prepare(collect_mpi *m, const char *db, int ranks);

/* After a run of the launcher that failed (`why`: how): the ranks that did
 * not finish it, those without a profile (HML_PROFILE `prof` by the rank
 * rule), which the runtime writes at a rank's exit, are marked lost: left
 * out of the data set (collect_mpi_view) even where their file reads, with
 * the reason. Returns the ranks lost by this run (0: every rank finished,
 * the run failed for another reason), or -1 when no rank finished it (the
 * whole run was lost). */
int collect_mpi_lost(collect_mpi *m, const char *prof, const char *why);

/* After the run: the first view, in a new temporary file of the
 * experiment's data/ (its path in m->view), of the ranks not lost, with a
 * warning for each rank left out. HML_ENOTFOUND when no rank's file can be
 * read. */
int collect_mpi_view(collect_mpi *m, hml__store *s);

/* The store files of the data set (the view under role "data", made by
 * the second pass, then the used ranks' files) in files[0 .. *n); `files`
 * has room for m->ranks + 2; the log is the caller's to add. */
int collect_mpi_files(collect_mpi *m, const char *tmp_data, hml__store_file *files,
                      size_t *n);

/* {"ranks": N, "launcher": [...], "collected": [0, 2], "left_out":
 * [{"rank": 1, "file": "...", "why": "..."}]} */
json_t *collect_mpi_json(const collect_mpi *m, char *const *launcher);

/* Add the run's profiles, one per rank (HML_PROFILE `prof` by the rank
 * rule, core/rankfile.h), to the regions' times, and remove them: the
 * ranks' times summed, as their rows are; a lost rank's left out.
 * hml__cost_times_add()'s errors. */
int collect_mpi_times_add(const collect_mpi *m, hml__cost_times *t, size_t n,
                          const char *prof);

/* A failed run (`why`: how) that some ranks finished: the others lost
 * (collect_mpi_lost) with a warning, the finished ranks' times added to *t
 * (freed and NULL when they cannot be read), `why` emptied: 1, the run
 * counts. 0: no rank was lost, or none finished; the run stays failed. */
int collect_mpi_run_lost(collect_mpi *m, const char *prof, char *why, hml__cost_times **t,
                         size_t n);

/* Remove what is left of the ranks' files and the first view (after a
 * registration, the renamed files are gone from their temporary names). */
void collect_mpi_remove(const collect_mpi *m);
void collect_mpi_release(collect_mpi *m);

#endif
