/*
 * lib/search/workers.h - one persistent worker process of hml search (internal):
 * started with a pipe to its standard input and one from its standard
 * output (the protocol is lib/search/wire.h), its standard error appended to a
 * log file, killed when its parent dies (PR_SET_PDEATHSIG), so a search
 * killed with SIGKILL leaves no worker behind to hold the lock.
 */
#ifndef HML_LIB_WORKERS_H
#define HML_LIB_WORKERS_H

#include <stddef.h>
#include <sys/types.h>

#include "search/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hml__worker {
	int index;               /**< the worker's number (recorded with its trials) */
	pid_t pid;               /**< 0: not running */
	int remote;              /**< 1: an MPI rank behind pipes (lib/search/mpi_relay.h): pid is
	                              its rank, it is never signalled or reaped */
	int to;                  /**< its standard input (write end), -1 when closed */
	hml__wire_reader from;   /**< its standard output */
	int ready;               /**< 1 once it answered init */
	long trial;              /**< the trial it runs, -1 when idle */
	double started;          /**< hml__now() when the trial was sent */
} hml__worker;

/**
 * Start argv[0] (absolute path; argv NULL-terminated) as worker `index`,
 * standard error appended to log_path (NULL: inherited; never through a
 * link: HML_EINVALID, core/beneath.h). *w is filled.
 * Errors: HML_EIO "cannot start worker: <strerror>".
 */
int hml__worker_spawn(hml__worker *w, int index, const char *const *argv,
                      const char *log_path);

/**
 * Make w the worker behind pipes `to` and `from` (an MPI rank, rank > 0).
 */
void hml__worker_remote(hml__worker *w, int index, int rank, int to, int from);

/**
 * Stop a worker: close its pipes, SIGKILL it (when `kill_it`; otherwise it
 * ends on its own when its input closes) and reap it; a remote worker's
 * pipes are closed only (why: "given up"). `why` (may be NULL)
 * gets how it ended: "exit 0", "exit 3", "killed by SIGKILL". NULL-safe on
 * a worker that is not running.
 */
void hml__worker_stop(hml__worker *w, int kill_it, char *why, size_t size);

#ifdef __cplusplus
}
#endif
#endif
