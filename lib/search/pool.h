/*
 * lib/search/pool.h - the workers of hml search as the coordinator sees
 * them (internal): an interface, hml__pool_ops, and its implementation
 * over worker processes (lib/search/workers.h) or MPI ranks behind pipes
 * (lib/search/mpi_relay.h).
 *
 * The coordinator (lib/search/coordinator.h) numbers its workers 0 .. n-1
 * and speaks the messages of lib/search/wire.h with them: it starts a
 * worker, sends it init and then one trial at a time, waits for what the
 * workers send (or for their loss), and stops a worker that crashed, hung
 * or is no longer needed. Whoever made the pool frees it after the
 * coordinator is done with it. The unit tests drive the coordinator with
 * a pool of their own (tests/unit/coordinator.c).
 */
#ifndef HML_LIB_POOL_H
#define HML_LIB_POOL_H

#include <stddef.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hml__pool_event_kind {
	HML__POOL_MESSAGE,   /**< the worker sent a message */
	HML__POOL_LOST       /**< its output ended or failed: the worker is gone */
} hml__pool_event_kind;

/** What a wait saw of one worker. */
typedef struct hml__pool_event {
	int worker;                  /**< 0 .. n-1 */
	hml__pool_event_kind kind;
	const json_t *msg;           /**< MESSAGE: borrowed for the callback's duration */
	const char *detail;          /**< LOST: why (NULL: its output just ended) */
} hml__pool_event;

/** A wait's callback: 0 to go on, nonzero to stop the wait (returned by it). */
typedef int (*hml__pool_event_fn)(void *payload, const hml__pool_event *ev);

/** A worker pool. Every operation gets the pool's own pointer first. */
typedef struct hml__pool_ops {
	/** Start worker k (stopped or never started): 0; 1 when it cannot be
	 *  (an MPI rank given up is never replaced); negative: an hml error. */
	int (*start)(void *pool, int k);
	/** Send msg (borrowed) to running worker k: 0, or negative when it
	 *  could not be written (a worker that died shows as lost in a wait). */
	int (*send)(void *pool, int k, const json_t *msg);
	/** Wait up to timeout_s seconds for output of the running workers, or
	 *  for descriptor `wake` (-1: none) to become readable; then call fn
	 *  for each event, in the order they arrived. 0 (also when nothing
	 *  came), fn's nonzero return, or negative: an hml error of the wait. */
	int (*wait)(void *pool, double timeout_s, int wake, hml__pool_event_fn fn, void *payload);
	/** Stop worker k (killed, reaped; nothing when it is not running); `why`
	 *  (may be NULL) gets how it ended: "exit 3", "killed by SIGKILL",
	 *  "(rank 2) ended". */
	void (*stop)(void *pool, int k, char *why, size_t size);
} hml__pool_ops;

/** The implementation over processes and MPI ranks: pass it with an hml__pool. */
extern const hml__pool_ops hml__pool_workers;

typedef struct hml__pool hml__pool;

/**
 * A pool of n worker processes, each `exe search-worker` (exe: absolute
 * path), its standard error appended to log_dir/worker-<k>.log. Nothing is
 * started yet. *out is yours: hml__pool_free(). Errors: HML_ENOMEM.
 */
int hml__pool_new(hml__pool **out, int n, const char *exe, const char *log_dir);

/**
 * A pool of n MPI ranks 1 .. n, worker k behind pipes to[k] (its input)
 * and from[k] (its output), as hml__mpi_relay_start() made them; the pool
 * owns the pipes and the arrays (malloc'ed) from now on, also after a
 * failure. A rank is started once: stopped, it is given up. *out is yours:
 * hml__pool_free(). Errors: HML_ENOMEM.
 */
int hml__pool_new_ranks(hml__pool **out, int n, int *to, int *from);

/** Stop every worker, close the pipes never handed to one, and free the
 *  pool (NULL-safe). */
void hml__pool_free(hml__pool *p);

#ifdef __cplusplus
}
#endif
#endif
