/*
 * lib/search/coordinator_private.h - the search coordinator's object and
 * what its files share (private to lib/search/coordinator*.c; the
 * interface is coordinator.h). The files, each calling only those above
 * it in this list (no circle: tests/arrows/cycles.py):
 *
 *   coordinator.c          the object (new, free, trial_at), its table of
 *                          trials and configurations, the front's trials
 *   coordinator_count.c    a trial's end: its history line written, then
 *                          counted once durable (the scheduler learns it,
 *                          its model file kept or deleted); --deterministic
 *                          counts in trial order
 *   coordinator_replay.c   the history read back (hml__coordinator_replay)
 *   coordinator_start.c    the next trial chosen, its options, its start
 *                          line, sent to a worker or held at the time limit
 *   coordinator_workers.c  workers started, their messages, a lost one
 *                          replaced
 *   coordinator_limit.c    the time limit: a trial's expected seconds
 *   coordinator_run.c      the loop (hml__coordinator_run)
 *   coordinator_keep.c     the kept models (hml__coordinator_keep_models)
 *   coordinator_record.c   the search's record and counts
 */
#ifndef HML_LIB_COORDINATOR_PRIVATE_H
#define HML_LIB_COORDINATOR_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "search/coordinator.h"
#include "search/history_check.h"
#include "search/latency_cache.h"
#include "search/opt/trialsched.h"
#include "sys/reaper.h"
#include "train/train.h"

#include "sys/reaper.h"

/* What the coordinator knows of one trial (index: the trial number). */
typedef struct hml__coord_trial {
	long config;
	unsigned rung;
	hml__hist_status status;   /* RUNNING until it ends; KEPT once registered */
	int epochs;
	int worker;
	hml__hist_metrics m;
	char arch[256];
	double seconds;
	char model[16];            /* registered model id, or "" */
	int has_file;              /* search/<id>/t<trial>.pt exists */
	int cold;                  /* its worker's first trial (its time includes the
	                              worker's warm-up: libtorch loaded, first batches) */
	int reruns;
	int lat_cached;            /* its latency came from the cache (target c) */
	uint64_t end_seq;          /* its end's line in the history (hml__history_write) */
	hml__hist_status end_status;   /* that end, counted once the line is durable */
	int replayed;              /* its end was read from the history, not seen now */
} hml__coord_trial;

/* One worker of the pool, as the coordinator drives it. */
typedef struct hml__coord_worker {
	int alive;                 /* started, not lost or given up */
	int ready;                 /* answered init */
	long trial;                /* the trial it runs, -1 when idle */
	double started;            /* hml__now() when the trial was sent */
	int ran;                   /* trials it was sent since it started */
} hml__coord_worker;

struct hml__coordinator {
	hml__coordinator_options o;
	const hml__search_plan *p;
	hml__sched *sched;
	hml__history *hist;
	hml__history_check check;  /* what the history is checked against on replay */
	hml__reaper *reaper;       /* deletes pruned model files (lib/sys/reaper.h) */
	hml__coord_trial *t;
	size_t nt, capt;
	json_t **cfg;              /* parameters of each configuration */
	size_t ncfg, capcfg;
	long *queue;               /* trials to run again (resume), in order */
	size_t nqueue;
	long *pending;             /* trials ended whose end is not yet durable */
	size_t npending, cappending;
	hml__coord_worker *wk;
	hml__latency_cache lat;    /* C latencies measured, by (arch, batch, threads) */
	hml__dataset *card_data;   /* loaded for the front models' latency cards, or NULL */
	json_t *guard;             /* the data's input statistics for guards, fitted once */
	int guard_failed;          /* ... or why not, warned once */
	double t0;
	double busy, suggest;      /* this session: wall time outside the waits, in the scheduler */
	double busy_cpu, suggest_cpu;  /* its thread's CPU time in the same sections */
	double wait_t, wait_c;     /* a wait's busy clock: its first event (NaN: none yet) */
	size_t session_trials;     /* trials ended in this session */
	size_t counted;            /* deterministic: trials 0 .. counted-1 are counted */
	size_t det_extra;          /* ends counted past the rule since the last choice */
	int all_chosen;            /* the scheduler said the search is complete */
	double deadline;           /* hml__now() of the time limit; 0: none */
	int time_up;               /* no trial starts any more: the time limit */
	size_t held;               /* promotions chosen, not started: the time limit */
};

/* coordinator.c */

/** The warning callback of the options, if any, with the message. */
void hml__coord_warn(const hml__coordinator *c, const char *fmt, ...) HML__PRINTF(2, 3);

/** Nonzero once the search must stop (the options' interrupt flag). */
int hml__coord_interrupted(const hml__coordinator *c);

/** Grow the array *p of *cap elements of `size` bytes to hold `need`
 * (doubling). Errors: HML_ENOMEM (*p and *cap unchanged). */
int hml__coord_grow(void **p, size_t *cap, size_t need, size_t size);

/** A new trial, RUNNING on no worker, at the end of c->t. Errors: HML_ENOMEM. */
int hml__coord_trial_new(hml__coordinator *c, long config, unsigned rung, int epochs);

/** A new configuration's parameters (stolen, freed on failure). Errors: HML_ENOMEM. */
int hml__coord_cfg_push(hml__coordinator *c, json_t *params);

/** Trial `trial` ended, its end not yet counted. Errors: HML_ENOMEM. */
int hml__coord_pending_push(hml__coordinator *c, long trial);

/** The model file of trial `trial`: DIR/tN.pt. */
void hml__coord_model_path(const hml__coordinator *c, long trial, char *buf, size_t size);

/** The trial at the top rung of configuration `config` that ended ok, or -1. */
long hml__coord_top_trial(const hml__coordinator *c, size_t config);

/** The front's configurations (by error) into *cfg (yours): how many, or
 * negative (HML_ENOMEM; *cfg NULL). */
long hml__coord_front_configs(const hml__coordinator *c, size_t **cfg);

/** *ev: a history event of trial i with `status` (its trial, configuration
 * and rung set; every other field empty, for the caller to add). */
void hml__coord_trial_event(const hml__coordinator *c, long i, hml__hist_status status,
                            hml__hist_event *ev);

/** 0 when the options have a store; else HML_EINVALID "search 'ID': no
 * experiment to record in". */
int hml__coord_need_store(const hml__coordinator *c);

/* coordinator_count.c */

/** The scheduler learns the end of trial i (its end_status and metrics). */
int hml__coord_sched_learn(hml__coordinator *c, long i);

/** A lower rung's model never reaches the front: its file is not kept
 * (unless the plan keeps every model). */
int hml__coord_discarded(const hml__coordinator *c, const hml__coord_trial *t);

/** Record the end of trial i: its line is written now and made durable in
 * the background (lib/search/history.h); the trial counts
 * (hml__coord_count_durable) once it is. r, lat_cost and qoi: of an ok
 * trial (r NULL otherwise). */
int hml__coord_trial_end(hml__coordinator *c, long i, hml__hist_status status,
                         const char *error, const hml__train_result *r, double lat_cost,
                         double qoi);

/** Count the pending trials whose end is durable (wait: sync first, and
 * count every one: the search is stopping). */
int hml__coord_count_durable(hml__coordinator *c, int wait);

/** May a trial start now? Normally once every ended trial is counted;
 * deterministic, a re-run at once, a new choice once exactly the ends the
 * rule allows are counted. */
int hml__coord_may_start(const hml__coordinator *c);

/* coordinator_start.c */

/** The next trial to start: 1 (*i, *fresh: 0 for a re-run), 0 none now, 2 done. */
int hml__coord_trial_next(hml__coordinator *c, long *i, int *fresh);

/** New trial i, chosen but not to end by the time limit: recorded as
 * started on no worker, for --resume to run. */
int hml__coord_trial_hold(hml__coordinator *c, long i);

/** Start trial i on idle worker k (a bad configuration fails at once);
 * fresh: a new trial, whose start line is written first. */
int hml__coord_trial_start(hml__coordinator *c, int k, long i, int fresh);

/* coordinator_workers.c */

/** Start worker k and send it the data to load (a rank the pool gave up is
 * not replaced: 0, the worker not alive). */
int hml__coord_worker_start(hml__coordinator *c, int k);

/** Worker k died or was killed: its trial (if any) ends with `status`,
 * and a new worker takes its place. */
int hml__coord_worker_lost(hml__coordinator *c, int k, hml__hist_status status,
                           const char *detail);

/** The pool's wait callback (payload: the coordinator): a message, or a
 * worker lost (the trial stays running for --resume once the search is
 * stopping). */
int hml__coord_on_event(void *payload, const hml__pool_event *ev);

/* coordinator_limit.c */

/** May a trial at `rung` (i < 0), or trial i (a promotion is timed by its
 *  own configuration at a lower rung), start on worker k now and end by the
 *  time limit? */
int hml__coord_fits(const hml__coordinator *c, unsigned rung, long i, int k);

/** The rung the next trial would train at, if known before choosing it: a
 * re-run's, else rung 0 (the cheapest a choice may be). */
unsigned hml__coord_next_rung(const hml__coordinator *c);

/** Nonzero once the time limit has come. */
int hml__coord_past_deadline(const hml__coordinator *c);

#endif
