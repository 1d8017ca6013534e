/*
 * lib/search/wire.h - the protocol between hml search and its workers (internal):
 * JSON objects, one per line, over a pair of pipes. Writer and reader of
 * every message side by side.
 *
 * A worker (`hml search-worker`, a hidden command) loads the data once,
 * then trains trial after trial in the same process, so libtorch is loaded
 * and the data read once per worker rather than once per trial:
 *
 *   coordinator -> worker   {"type":"init","region":R,"data":[paths],"nonfinite":"drop"}
 *   worker -> coordinator   {"type":"ready","rows":N}  or  {"type":"error","error":"..."}
 *   coordinator -> worker   {"type":"trial","trial":T,"out":PATH,"options":{...}}
 *                           (+ "latency":{"target":"c","known":S|null}, see below)
 *   worker -> coordinator   {"type":"result","trial":T,"status":"ok","result":{...}}
 *                           (+ "latency":{"target":"c","cost":S})
 *                        or {"type":"result","trial":T,"status":"failed","error":"..."}
 *
 * "options" holds lib/train/train.h's hml__train_options (arch, epochs, batch,
 * lr, ...), "result" its hml__train_result (params, val_rmse, latency, ...);
 * NaN travels as null. The worker ends when its input closes.
 *
 * The latency objective (hml search --target): a trial's "latency" names
 * the deployment target whose latency the result's latency_s_per_sample
 * must be ("torchscript" when absent: what training measures). For "c" the
 * worker compiles the trained model and times it (lib/deploy/latency.h) unless
 * "known" gives the figure already measured for the architecture (the
 * coordinator's cache); its result's "latency" says the target and the
 * seconds the measurement cost (0 when known).
 *
 * An iterative application's search (lib/search/iterative.h): init carries
 * "run": the plan with each group's data files instead of indices, the
 * experiment ("root") and a directory for the runs' files ("dir"); a trial
 * carries "run": {"k": K, "interleave": N} (null: not searched); its
 * result, "qoi": {"error": E} (the primary QoI's error after the run).
 */
#ifndef HML_LIB_WIRE_H
#define HML_LIB_WIRE_H

#include <stddef.h>

#include <jansson.h>

#include "train/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The "type" of a message, or "" when it has none. */
const char *hml__wire_type(const json_t *msg);

/** init: the region and its data files. New reference (NULL: out of memory). */
json_t *hml__wire_init(const char *region, const char *const *paths, size_t n,
                       const char *nonfinite);
/** Read an init message; *paths is a malloc'ed array of strings borrowed from msg.
 *  Errors: HML_EINVALID "worker message: ...". */
int hml__wire_init_read(const json_t *msg, const char **region, const char ***paths,
                        size_t *n, const char **nonfinite);

/** ready / error replies to init. */
json_t *hml__wire_ready(long long rows);
json_t *hml__wire_error(const char *message);

/** trial: train options o (o->arch must be set) into the model file `out`. */
json_t *hml__wire_trial(long trial, const char *out, const hml__train_options *o);
/** Read a trial message; strings in *o and *out are borrowed from msg.
 *  Fields absent keep o's values. Errors: HML_EINVALID. */
int hml__wire_trial_read(const json_t *msg, long *trial, const char **out,
                         hml__train_options *o);

/** Ask trial message `msg` for the latency of `target` (lib/deploy/latency.h
 *  hml__target); known: its figure when already measured, else NaN.
 *  Errors: HML_ENOMEM. */
int hml__wire_trial_set_latency(json_t *msg, int target, double known);
/** The target (HML__TARGET_TORCHSCRIPT when the trial names none) and known
 *  figure (NaN: measure it) of a trial message. Errors: HML_EINVALID for an
 *  unknown target. */
int hml__wire_trial_latency(const json_t *msg, int *target, double *known);

/** Mark trial message `msg` "discard": the model file is not wanted (a
 *  lower rung's): the worker deletes it once measured, so the coordinator
 *  does not spend an unlink per trial. Errors: HML_ENOMEM. */
int hml__wire_trial_set_discard(json_t *msg);
/** 1 when trial message `msg` is marked "discard", else 0. */
int hml__wire_trial_discard(const json_t *msg);

/** result: r when error is NULL, else the failure message. */
json_t *hml__wire_result(long trial, const char *error, const hml__train_result *r);
/** Read a result; *error (borrowed) is NULL for an ok trial, whose *r is filled.
 *  Errors: HML_EINVALID. */
int hml__wire_result_read(const json_t *msg, long *trial, const char **error,
                          hml__train_result *r);

/** Say in result message `msg` whose latency it carries and what measuring
 *  it cost (seconds). Errors: HML_ENOMEM. */
int hml__wire_result_set_latency(json_t *msg, int target, double cost);
/** The target (HML__TARGET_TORCHSCRIPT when absent) and cost (NaN when
 *  absent) of a result. Errors: HML_EINVALID for an unknown target. */
int hml__wire_result_latency(const json_t *msg, int *target, double *cost);

/** Add "run" to init message `msg`: iterative plan `plan` with the data
 *  indices of its groups replaced by paths[i]; root: the experiment; dir:
 *  the runs' directory. Errors: HML_ENOMEM. */
int hml__wire_init_set_run(json_t *msg, const json_t *plan, char *const *paths,
                           const char *root, const char *dir);
/** The "run" of an init message (borrowed), or NULL. */
const json_t *hml__wire_init_run(const json_t *msg);
/** Trial message `msg` runs the application at k and interleave (-1: not
 *  searched). Errors: HML_ENOMEM. */
int hml__wire_trial_set_run(json_t *msg, long long k, long long interleave);
/** 1 and *k, *interleave (-1 each: not searched) when trial message `msg`
 *  has a "run", else 0. */
int hml__wire_trial_run(const json_t *msg, long long *k, long long *interleave);
/** Result message `msg` carries the primary QoI's error after the run.
 *  Errors: HML_ENOMEM. */
int hml__wire_result_set_qoi(json_t *msg, double error);
/** The QoI error of a result message; NaN when it has none. */
double hml__wire_result_qoi(const json_t *msg);

/**
 * Write msg as one line to fd (all of it, retrying short writes and EINTR).
 * Errors: HML_EIO "cannot write to worker pipe: <strerror>", HML_ENOMEM.
 */
int hml__wire_send(int fd, const json_t *msg);

/** Buffers the bytes of one input descriptor into lines. */
typedef struct hml__wire_reader {
	int fd;
	char *buf;
	size_t len, cap;
	int eof;
} hml__wire_reader;

void hml__wire_reader_init(hml__wire_reader *r, int fd);
void hml__wire_reader_release(hml__wire_reader *r);

/**
 * The next message: 1 and *msg (yours) when a whole line is buffered
 * (reading once from fd when none is: call it when poll() says the fd is
 * readable, or with a blocking fd), 0 when no whole line has arrived yet.
 * Errors: HML_EIO "the worker closed its pipe" at end of input (a partial
 * line is dropped) or on a read error; HML_EINVALID for a line that is not
 * a JSON object.
 */
int hml__wire_recv(hml__wire_reader *r, json_t **msg);

#ifdef __cplusplus
}
#endif
#endif
