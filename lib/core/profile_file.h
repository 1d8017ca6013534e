/*
 * lib/core/profile_file.h - the profile JSON: what the runtime writes at exit to
 * the file HML_PROFILE names and `hml evaluate` reads (internal; writer
 * and reader side by side).
 *
 * {"schema_version": 1, "hml_version": "0.1.0", "pid": 1234,
 *  "regions": [{"label": "binomial", "mode": "infer", "calls": 4,
 *               "original_calls": 0, "model_calls": 4, "shadow_calls": 0,
 *               "fallback_calls": 0, "rows_in": 0, "rows_out": 0,
 *               "nonfinite_calls": 0,
 *               "region_s": 0.01, "gather_s": ..., "forward_s": ...,
 *               "scatter_s": ..., "original_s": ..., "write_s": ...,
 *               "shadow_rmse": null, "shadow_max_abs": null,
 *               "checked_rows": 0, "guarded_rows": 0, "guarded_calls": 0,
 *               "guard_whole_calls": 0, "guard_s": 0, "agreed_calls": 0,
 *               "threads": 2, "guard": "bounds:margin=0",
 *               "swaps": [{"from": "m1", "to": "m2", "call": 1200}],
 *               "swaps_refused": 0}, ...],
 *  "cpu": {"run_s": 1.9, "wait_s": 0.4}}
 *
 * Counts are integers, times seconds; a number that is NaN or infinite
 * (JSON has neither) is written as null and read back as NaN. "threads"
 * (absent in profiles of older hml: read as 0) is the threads the region
 * gives its model: HML_THREADS, else OpenMP's maximum in the thread that
 * opened the region (OMP_NUM_THREADS, else the cores): what a model's
 * latency must be measured with to predict this application's time.
 * "guard" (absent: no guard) is the guard the region checked rows with
 * (hml deploy --guard); the guard counters and "agreed_calls" (calls
 * whose model answered but which ran the original code because another
 * process did: hml_region_set_agree) are read as 0 when absent.
 * "swaps" (the runtime's hot swap, swap.h) lists the models a running region
 * switched to when a new one was deployed: the model ids before and after
 * and the calls the region had completed then (the first
 * HML__PROFILE_SWAPS_MAX; "swaps_done" counts them all when there were
 * more), "swaps_refused" the deployments it refused (another shape, a
 * missing or corrupt file) and kept its model; both absent in older
 * profiles: read as none.
 * "cpu" (absent where the system does not say, and in older profiles:
 * read as NaN) is the process's, not a region's: the CPU time its threads
 * ran and the time they were runnable but waited for a CPU (Linux
 * schedstat, summed over the threads alive at exit), from their start to
 * the profile's writing. Waiting means other work held the CPUs: every
 * time the profile records was then stretched by it, an OpenMP loop's
 * the most (its threads wait at each barrier for the one descheduled).
 */
#ifndef HML_LIB_PROFILEFILE_H
#define HML_LIB_PROFILEFILE_H

#include <stddef.h>
#include <stdint.h>

#include "hml/region.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HML__PROFILE_SCHEMA 1

/** The largest profile file read (about 10000 regions' records): a bigger
 *  one, or one that is not a regular file, is refused unread. */
#define HML__PROFILE_MAX_BYTES ((size_t)8 << 20)

/** The swaps recorded per region record. */
#define HML__PROFILE_SWAPS_MAX 16

/** One hot swap: model `from` replaced by `to` after `call` calls. */
typedef struct hml__profile_swap {
	char from[64], to[64];
	uint64_t call;
} hml__profile_swap;

/** A region's hot swaps. */
typedef struct hml__profile_swaps {
	uint64_t done;           /**< swaps made (may exceed n) */
	uint64_t refused;        /**< deployments refused, the old model kept */
	size_t n;                /**< swaps listed in at[] */
	hml__profile_swap at[HML__PROFILE_SWAPS_MAX];
} hml__profile_swaps;

/** The process's threads' CPU time and wait for a CPU; NaN: unknown.
 *  Sums over several processes (an MPI run's ranks, a collection's runs)
 *  say how many they sum in `procs`: the floor of waiting that
 *  hml__profile_cpu_waited asks for is per process. */
typedef struct hml__profile_cpu {
	double run_s;            /**< seconds on a CPU, all threads */
	double wait_s;           /**< seconds runnable but waiting for one */
	double procs;            /**< the processes summed; 0 or NaN: one */
} hml__profile_cpu;

/** wait_s / (run_s + wait_s): the share of its threads' time the process
 *  waited for a CPU; NaN when unknown or both are 0. */
double hml__profile_cpu_wait_share(const hml__profile_cpu *c);

/** The share and the seconds of waiting from which hml says that a run's
 *  times were stretched by other work: both must be reached (a short
 *  OpenMP run waits a few ms while its threads are first placed, which is
 *  a large share of little). The seconds are per process: a sum over N
 *  processes must wait N times as long, so that many short runs, each
 *  waiting only while its threads are placed, are not said to have
 *  waited. */
#define HML__CPU_WAIT_NOTED 0.2
#define HML__CPU_WAIT_NOTED_SECONDS 0.1

/** 1 when `c` waited HML__CPU_WAIT_NOTED of its time and at least
 *  HML__CPU_WAIT_NOTED_SECONDS x its processes (c->procs, at least 1);
 *  0 otherwise or when unknown. The one rule of collect, deploy and
 *  evaluate. */
int hml__profile_cpu_waited(const hml__profile_cpu *c);

/** One region's profile record. */
typedef struct hml__profile_record {
	char label[72];          /**< the region label (at most 64 characters) */
	char mode[16];           /**< "off", "collect", "infer", ... */
	hml_region_stats stats;  /**< its counts and timings */
	int threads;             /**< its model's threads; 0: not recorded */
	char guard[48];          /**< its guard ("bounds:margin=0"), "" for none */
	hml__profile_swaps swaps; /**< its hot swaps */
	hml__profile_cpu cpu;    /**< read: the process's (procs 1; or the ranks'
	                              summed, procs the ranks that wrote one), the
	                              same in every region of one file; not written
	                              from here (hml__profile_file_write's `cpu`) */
} hml__profile_record;

/**
 * Write the records of `n` regions as a profile file at `path`,
 * atomically (a temporary file in the same directory, then rename), with
 * this process's pid and `cpu` (NULL, or NaN fields: no "cpu"). 0,
 * HML_ENOMEM, or HML_EIO "cannot write profile 'P': <reason>" (no file
 * left behind).
 */
int hml__profile_file_write(const char *path, const hml__profile_record *recs, size_t n,
                            const hml__profile_cpu *cpu);

/**
 * Read the record of region `label` from the profile file `path` into
 * *out; several records of that label (a region opened again under it)
 * are read as one: counters and times summed, the shadow error over all
 * shadowed calls, the first one's mode and threads, the swaps appended. HML_EIO "cannot read profile 'P': <reason>" for a missing,
 * malformed or oversized file (over HML__PROFILE_MAX_BYTES: "it is larger
 * than N bytes") and one that is not a regular file ("not a regular
 * file"), HML_ENOTSUPPORTED for a newer schema_version,
 * HML_ENOTFOUND "the application never entered region 'L' (profile 'P')".
 */
int hml__profile_file_find(const char *path, const char *label, hml__profile_record *out);

/**
 * The record of region `label` of an MPI run of `ranks` ranks, each of
 * which wrote its own profile (core/rankfile.h: rank k's at
 * hml__rankfile_path(path, k)), as one: the ranks' records merged as
 * several records of one file are (counters and times summed over the
 * ranks). `ranks` <= 1 reads `path` itself. A rank that never entered the
 * region adds nothing; HML_ENOTFOUND "no rank of 3 entered region 'L'
 * ..." when none did; a rank's missing or unreadable profile fails as
 * hml__profile_file_find() does (HML_EIO "cannot read profile 'P.r0001.json'").
 * out->cpu is the sum over the ranks that entered it (NaN when one's is unknown).
 */
int hml__profile_file_find_ranks(const char *path, int ranks, const char *label,
                                 hml__profile_record *out);

#ifdef __cplusplus
}
#endif
#endif
