/*
 * lib/core/rankfile.h - the file each MPI rank collects into (internal;
 * shared by the runtime, which writes it, and the CLI, which finds and
 * registers it).
 *
 * The runtime links no MPI: it learns its rank from the environment the
 * launcher gives every process. Rank: OMPI_COMM_WORLD_RANK (Open MPI),
 * PMI_RANK (MPICH/Hydra, Intel MPI), PMIX_RANK (PMIx launchers), the first
 * one set. Size: OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_SIZE, the first one set.
 *
 * Open MPI's singleton, an MPI program started without a launcher, sets
 * PMIX_RANK=0 and no size, but OMPI_MCA_ess=singleton (HML__SINGLETON_ENV):
 * it is one process, of size 1.
 *
 * A process is "one of several ranks" when a rank is found and the size is
 * greater than 1, or is unknown (a PMIx launcher that sets no size); it
 * then writes the file named by hml__rankfile_path() instead of HML_DB:
 * the rank, four digits at least, before the extension of the last path
 * component, or at its end when it has none:
 *
 *   /x/data.h5 -> /x/data.r0003.h5      /x/data -> /x/data.r0003
 *
 * so no two ranks ever share a file. hml__rankfile_parse() reads the rank
 * back from such a name.
 *
 * The rule holds for every file the runtime writes under a name from the
 * environment: the collected data (HML_DB), the QoI file (HML_QOI) and the
 * profile (HML_PROFILE). The runtime (the writer) asks hml__rankfile_own()
 * which file it writes; the CLI (the reader) knows the ranks it launched
 * and reads rank k's file at hml__rankfile_path(path, k) (the QoI file's
 * reader: hml__qoi_file_read_ranks(); the profile's:
 * hml__profile_file_find_ranks()).
 */
#ifndef HML_LIB_RANKFILE_H
#define HML_LIB_RANKFILE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The environment variables, in the order they are looked at. */
#define HML__RANK_ENV_VARS "OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK"
#define HML__SIZE_ENV_VARS "OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_SIZE"

/* Open MPI's mark of a process started without a launcher, and its value. */
#define HML__SINGLETON_ENV "OMPI_MCA_ess"
#define HML__SINGLETON_VALUE "singleton"

/** The largest rank a file name holds. */
#define HML__RANK_MAX 9999999

/**
 * The process's rank and size from the environment. *rank is -1 when no
 * rank variable is set, *size is 0 when no size variable is set. Returns
 * 1 when the process is one of several ranks (see above), 0 when it is not,
 * or HML_EINVALID "environment variable 'V' is not a rank: 'x'" when a set
 * variable is not a number in 0..HML__RANK_MAX (a size in 1..MAX+1), or a
 * rank is not below the size.
 */
int hml__rank_from_env(int *rank, int *size);

/**
 * The file rank `rank` (0..HML__RANK_MAX) writes instead of `path`, in a
 * new string that is the caller's to free(). HML_EINVALID for a NULL or
 * empty path, or a rank out of range; HML_ENOMEM.
 */
int hml__rankfile_path(char **out, const char *path, int rank);

/**
 * The file this process writes for `path` (a name from the environment):
 * `path` itself, or, when the process is one of several ranks
 * (hml__rank_from_env() returns 1), its rank's file; a new string, the
 * caller's to free(). The errors of hml__rank_from_env() and
 * hml__rankfile_path(); HML_ENOMEM.
 */
int hml__rankfile_own(char **out, const char *path);

/**
 * If `name` is the file some rank writes instead of `path` (as
 * hml__rankfile_path() makes it), its rank; otherwise -1. Sets no error.
 */
int hml__rankfile_parse(const char *path, const char *name);

#ifdef __cplusplus
}
#endif
#endif
