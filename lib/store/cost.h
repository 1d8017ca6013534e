/*
 * lib/store/cost.h - what the original code of a region costs, as collected,
 * and the speedup a model is predicted to give (internal, CLI side).
 *
 * `hml collect` measures the region while the application runs as written
 * (the runtime's profile, HML_PROFILE: the original code's time and the
 * collector's own time in the region) and records these fields in each
 * region of the data set's record (hml-manifest(5)):
 *   "original_seconds": the original code's time in the region, all runs;
 *   "collect_seconds":  the collector's time (gathering and writing rows in
 *                       the region's calls; loading HDF5, the last flush
 *                       and closing the file outside them: the profile's
 *                       collect_outside_s), all runs;
 *   "gather_seconds":   the part of it spent gathering the rows' inputs and
 *                       outputs from the application's arrays: what a
 *                       deployed model pays besides its forward (gathering
 *                       its inputs, scattering its outputs);
 *   "threads":          the threads the region gives a model (the
 *                       profile's, lib/core/profile_file.h): latencies are
 *                       measured with them;
 *   "original_seconds_per_row": the median over the calls of the original
 *                       code's seconds per row (the data file's `calls`
 *                       table): what one preempted call of a short run
 *                       cannot move, where the sum can be doubled by it;
 *   "cpu_run_seconds", "cpu_wait_seconds": the collect runs' processes'
 *                       CPU time and time waiting for a CPU (the profiles'
 *                       "cpu", lib/core/profile_file.h), summed over every
 *                       run that entered the region (each rank of an MPI
 *                       run); absent when a run's is unknown. Their wait
 *                       share says the cost above was measured while other
 *                       work held the CPUs, and is then too high (hml
 *                       collect says so);
 *   "cpu_processes":    the processes those seconds sum (runs x ranks):
 *                       hml__profile_cpu_waited's floor of waiting is per
 *                       process (absent in data sets of older hml: read as
 *                       the data set's runs).
 * The region's cost is the median per row x rows when the data set has
 * it, else original_seconds. The ranks of an MPI run run the region side
 * by side, and their profiles' times, rows and calls are summed: read
 * back, a data set of P processes a run (cpu_processes / runs) counts
 * them over P, the share of a mean process, so that a run's time is set
 * against one process's region (the cost per row is the same).
 * The writer (hml__cost_put) and the reader (hml__cost_of_datasets) are
 * side by side here. A data set collected before these fields existed has
 * no cost: predictions are then unknown (NaN), never guessed (one without
 * gather_seconds or threads only: moving rows counts 0, threads unknown).
 *
 * The prediction compares per row: the region's original code takes
 * original_seconds / rows per row; a model in a deployment form takes its
 * card's latency per sample (lib/deploy/latency.h) plus gather_seconds /
 * rows for moving the rows. A model is "predicted slower" when that sum
 * is not below the original code's: no run is long enough for it to pay.
 * End to end, for a run like the collected ones: the application's time
 * without the collector (wall - collect_seconds), less the region's
 * original time, plus the model's rows x (latency + moving) and its
 * form's start-up (libtorch: ~0.5 s).
 *
 * An iterative application (lib/run/search_args.h) calls the region once
 * per k time steps, and under interleave N the runtime sends call c
 * (counted from 0) to the original code when c % (N + 1) == N
 * (the runtime's interleave mode): of C calls a run makes, the model answers
 * C - floor(C / (N + 1)) and the original code the other floor(C / (N + 1))
 * (N = 0, infer mode: all C). The region's cost is that of data sets
 * collected at the model's k (one call's rows advance k steps; its
 * training data), so a run of S steps makes C = S / k calls as they
 * did; the calls the original code keeps cost what the collect runs'
 * profile says they cost. hml__predict() counts both (its schedule);
 * the prediction's step_seconds, the region's time per application step
 * (rows per run x the time per row, over C x k steps), compares models of
 * different k: it is hml search's second objective for an iterative
 * application. One function, for hml deploy, hml evaluate, hml show and
 * hml search.
 */
#ifndef HML_LIB_COST_H
#define HML_LIB_COST_H

#include <stddef.h>

#include <jansson.h>

#include "store/records.h"
#include "store/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A region's cost over some data sets; NaN fields: unknown. */
typedef struct hml__region_cost {
	double original_s;   /**< the original code's time in the region, all runs
	                          (from the median per row where recorded; an MPI
	                          run's: a mean rank's, as rows, calls and gather_s) */
	double app_s;        /**< the applications' wall time without the collector */
	double rows;         /**< rows through the region */
	double runs;         /**< application runs */
	double gather_s;     /**< moving the rows in and out, all runs (0: not recorded) */
	int threads;         /**< the threads the region gives a model; 0: not recorded,
	                          or data sets that differ */
	double calls;        /**< region calls over the runs (the data sets' "calls");
	                          0 or NaN: unknown */
	double cpu_run_s;    /**< the runs' CPU time, all threads; NaN: unknown */
	double cpu_wait_s;   /**< the runs' time waiting for a CPU; NaN: unknown */
	double cpu_procs;    /**< the processes they sum ("cpu_processes") */
} hml__region_cost;

/** How a run calls the region (an iterative application's k and interleave). */
typedef struct hml__schedule {
	double k;            /**< time steps one region call advances; NaN or <= 0:
	                          unknown (step_seconds is then per call) */
	long long interleave;  /**< N: of each N + 1 calls, the last runs the original
	                            code; 0: every call the model's (infer mode) */
} hml__schedule;

/** A model's predicted speedup; NaN fields: unknown. */
typedef struct hml__prediction {
	double cost_per_row;  /**< the original code, seconds per row */
	double model_per_row; /**< the model in its form, seconds per row */
	double move_per_row;  /**< gathering and scattering a row (0: not recorded) */
	double startup;       /**< the form's start-up, seconds per run */
	double region;        /**< cost_per_row / model_per_row */
	double end_to_end;    /**< a run like the collected ones: before / after */
	int slower;           /**< 1: model_per_row + move_per_row >= cost_per_row
	                           (both known): no schedule makes the model pay */
	double model_share;   /**< the share of the region's calls the model answers
	                           (1 in infer mode) */
	double step_seconds;  /**< the region's seconds per application time step with
	                           the model (per call when k is unknown) */
	double cpu_wait_share; /**< the collect runs' share of time waiting for a CPU
	                            (hml__cost_cpu_wait_share; hml__cost_cpu_waited:
	                            enough to make cost_per_row and so the speedups
	                            too high); NaN: unknown */
	int cpu_waited;        /**< hml__cost_cpu_waited: 1 when that wait is the one
	                            rule's (hml__profile_cpu_waited) */
	double ceiling;        /**< the end-to-end speedup of a model that costs
	                            nothing (no latency, no moving, no start-up)
	                            answering the same calls, for a run like the
	                            collected ones: no model of any form does
	                            better (hml__speedup_ceiling); NaN: unknown */
} hml__prediction;

/** What the profiles of collect runs say of one region (writer side). */
typedef struct hml__cost_times {
	const char *label;   /**< the region (borrowed) */
	double original_s;   /**< its original code's time, summed */
	double region_s;     /**< its whole time in collect mode, summed, with the
	                          collector's outside its calls (the rest of it
	                          beside original_s is the collector's) */
	double gather_s;     /**< the collector's gathering of rows, summed */
	int threads;         /**< the threads it gives a model (the first run's) */
	double cpu_run_s;    /**< the runs' processes' CPU time, summed (NaN: a run's
	                          unknown) */
	double cpu_wait_s;   /**< their time waiting for a CPU, summed */
	double cpu_procs;    /**< the processes summed (runs x ranks that entered it) */
} hml__cost_times;

/**
 * Add the profile at `path` (HML_PROFILE of a finished collect run; the
 * runtime's profile_file.h) to each of t[0 .. n): a region the run never
 * entered adds nothing. Errors: the profile reader's (a missing or
 * damaged profile), HML_EINVALID when a region's time is less than its
 * original code's; the caller then records no cost: a sum over part of
 * the runs would mislead.
 */
int hml__cost_times_add(hml__cost_times *t, size_t n, const char *path);

/**
 * Record a region's cost `t` in its data-set region record `rec` (an
 * object): "original_seconds" and "collect_seconds" (region_s -
 * original_s) when both are >= 0 and finite (else none of the times: a
 * run the profile could not measure), "gather_seconds" with them when it
 * is >= 0, finite and not above collect_seconds, "threads" when > 0, and
 * "original_seconds_per_row" when `per_row` is > 0 and finite,
 * "cpu_run_seconds" and "cpu_wait_seconds" when both are known. Returns 0
 * or HML_ENOMEM.
 */
int hml__cost_put(json_t *rec, const hml__cost_times *t, double per_row);

/**
 * The cost of region `region` over the data sets `ids` (n of them): sums
 * of their original_seconds, rows and runs, and of their runs'
 * wall_seconds less collect_seconds. *out is all NaN when any data set
 * lacks a field, has no rows of the region, or is not found (a cost from
 * part of the data would mislead). Never fails.
 */
void hml__cost_of_datasets(hml__region_cost *out, const hml__store *s, const char *region,
                           const char *const *ids, size_t n);

/**
 * The processes one run of data set `d` ran region `region` in (an MPI
 * run's ranks that entered it): its "cpu_processes" over its runs, 1 when
 * not recorded. The summed times, rows and calls of such a run are P
 * processes' side by side; hml__cost_of_datasets and the candidates' rows
 * per run (lib/store/select.h) count a mean process's. Never fails.
 */
double hml__cost_processes(const hml__dataset_view *d, const char *region);

/** The cost of the data sets model `m` was trained on (its data_sha256 ids). */
void hml__cost_of_model(hml__region_cost *out, const hml__store *s,
                        const hml__model_view *m);

/** The original code's seconds per row: original_s / rows, or NaN. */
double hml__cost_per_row(const hml__region_cost *c);

/** The share of the collect runs' thread time spent waiting for a CPU
 *  (cpu_wait_s / (cpu_run_s + cpu_wait_s)); NaN when unknown. */
double hml__cost_cpu_wait_share(const hml__region_cost *c);

/** 1 when the collect runs waited enough for a CPU that hml says their
 *  cost is too high (hml__profile_cpu_waited over their sums). */
int hml__cost_cpu_waited(const hml__region_cost *c);

/** Moving a row in and out (gather_s / rows): 0 when not recorded, NaN
 *  when the cost is unknown. */
double hml__cost_move_per_row(const hml__region_cost *c);

/**
 * The calls of `calls` a run makes that the model answers under
 * interleave `interleave` (see above): calls - floor(calls / (N + 1)), all
 * for N <= 0; calls x N / (N + 1) when calls is unknown (NaN) gives NaN.
 */
double hml__schedule_model_calls(long long interleave, double calls);

/**
 * Predict a model's speedup from the region's cost `c` (moving rows
 * included), its latency per row, its form's start-up per run (NaN:
 * unknown; an unknown start-up leaves end_to_end NaN) and schedule `sch`
 * (NULL: the model on every call, k unknown). Under interleave N the
 * region's time per row is share x (latency + moving) + (1 - share) x
 * cost_per_row, share = hml__schedule_model_calls(N, C) / C over the C
 * calls per run the data sets record (N / (N + 1) when they record none).
 * "slower" stays the per-row comparison. Never fails.
 */
void hml__predict(hml__prediction *p, const hml__region_cost *c, double latency,
                  double startup, const hml__schedule *sch);

/**
 * The most a surrogate can speed up a run of `wall` seconds of which the
 * region's original code took `region`: wall / (wall - region), the run
 * with the region taking no time at all (Amdahl's law). INFINITY when the
 * region took the whole run; NaN when a figure is unknown, negative, or
 * the region took longer than the run. Never fails.
 */
double hml__speedup_ceiling(double wall, double region);

/**
 * The most a model answering every call can speed up a run like the
 * collected ones of cost `c` (hml__speedup_ceiling of a run's time without
 * the collector and the region's share of it); the region's share of the
 * runs' time into *share when `share` is not NULL. NaN: unknown. Never fails.
 */
double hml__cost_ceiling(const hml__region_cost *c, double *share);

/**
 * The prediction as JSON (the "predicted" member of deployment records,
 * hml show --json and evaluation records, hml-manifest(5)): {"cost_per_row",
 * "model_per_row", "move_per_row", "startup", "region", "end_to_end",
 * "slower", "model_share", "step_seconds", "cpu_wait_share", "cpu_waited",
 * "ceiling"}, null where unknown (cpu_waited: where the share is; ceiling:
 * also where unbounded). New reference; NULL when out of memory.
 */
json_t *hml__prediction_json(const hml__prediction *p);

/**
 * What the model pays per row, for messages: "0.70 us", or "0.70 us +
 * 0.21 us moving rows" when moving rows costs something. Returns buf.
 */
char *hml__prediction_model_text(char *buf, size_t size, const hml__prediction *p);

/**
 * The predicted speedup per row, for messages: "predicted 4.00x", or with
 * the digits a slowdown needs, "predicted 0.030x", "predicted 0.000080x";
 * "predicted ?x" when unknown. Returns buf.
 */
char *hml__prediction_speed_text(char *buf, size_t size, const hml__prediction *p);

/**
 * The ceiling for messages: " (any model: at most 9.5x)", or "" when it is
 * unknown or unbounded. Returns buf.
 */
char *hml__prediction_ceiling_text(char *buf, size_t size, const hml__prediction *p);

/**
 * The end-to-end speedup p predicts for a run that took `wall` seconds
 * with `region` of them in the region's original code: wall over the
 * same run with the region's share divided by p->region and the form's
 * start-up added; NaN when a figure is unknown.
 */
double hml__predict_run(const hml__prediction *p, double wall, double region);


#ifdef __cplusplus
}
#endif
#endif
