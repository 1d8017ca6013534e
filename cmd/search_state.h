/*
 * cmd/search_state.h - what cmd/search.c (the command: options, data, space,
 * resume checks, results) and cmd/search_run.c (the coordinator: replay,
 * workers, trials, kept models) share.
 */
#ifndef HML_CMD_SEARCH_STATE_H
#define HML_CMD_SEARCH_STATE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "deploy/latency.h"
#include "run/workflow.h"
#include "search/history.h"
#include "search/latency_cache.h"
#include "search/opt/space.h"
#include "search/opt/trialsched.h"
#include "search/workers.h"
#include "store/store.h"
#include "sys/reaper.h"
#include "train/train.h"

/* What the coordinator knows of one trial (index: the trial number). */
typedef struct search_trial {
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
	int reruns;
	int lat_cached;            /* its latency came from the cache (target c) */
	uint64_t end_seq;          /* its end's line in the history (hml__history_write) */
	hml__hist_status end_status;   /* that end, counted once the line is durable */
	int replayed;              /* its end was read from the history, not seen now */
} search_trial;

typedef struct search_state {
	hml__store *s;
	int lock_fd;
	char id[16];               /* "s1" */
	char *dir;                 /* search/<id>, absolute */
	hml__workflow *w;
	const hml__workflow_region *wr;
	const char *label, *family, *base_arch, *wname;
	const char **ds_ids;       /* borrowed from the manifest */
	char **ds_paths;
	size_t nds;
	json_t *space_json;        /* the space searched */
	json_t *space_source;      /* {"kind": ..., "path": ...} */
	char space_sha[65];
	hml__space *space;
	hml__sched *sched;
	hml__history *hist;
	hml__reaper *reaper;       /* deletes pruned model files (lib/sys/reaper.h) */
	search_trial *t;
	size_t nt, capt;
	json_t **cfg;              /* parameters of each configuration */
	size_t ncfg, capcfg;
	long *queue;               /* trials to run again (resume), in order */
	size_t nqueue;
	long *pending;             /* trials ended whose end is not yet durable */
	size_t npending, cappending;
	hml__worker *wk;
	int nworkers, threads;
	int mpi;                   /* 1: the workers are MPI ranks 1 .. nworkers */
	int *mpi_to, *mpi_from;    /* their pipes (lib/search/mpi_relay.h) */
	hml__train_options base;   /* every trial's options before its sample */
	int max_epochs;
	unsigned rungs;
	long long budget, seed;
	double max_latency, max_params, max_error, trial_timeout;
	int keep_all;
	int target;                /* the latency objective's deployment form (hml__target) */
	hml__latency_cache lat;    /* C latencies measured, by (arch, batch, threads) */
	struct hml__dataset *card_data; /* loaded for the front models' latency cards, or NULL */
	char *exe;                 /* this hml, for the workers */
	double t0;
	double prev_seconds;       /* wall and coordinator CPU time of earlier sessions */
	double prev_cpu;
	double busy, prev_busy;    /* coordinator wall time outside its waits (this session, before) */
	double suggest, prev_suggest;  /* of which in the scheduler (BO suggestions, ASHA) */
	double busy_cpu, prev_busy_cpu;        /* its thread's CPU time in the same sections */
	double suggest_cpu, prev_suggest_cpu;  /* ... and in the scheduler */
	size_t session_trials;     /* trials ended in this session */
	int reruns;                /* trials re-run by this session */
	/* --deterministic (lockstep): trial ends are counted in trial order, and
	 * trial k is chosen once exactly the ends of trials 0 .. k-W are counted
	 * (W workers; one more each time the scheduler had nothing to start),
	 * so the choices depend on the seed, W and the trials' results, never
	 * on which trial ended first (cmd/search_run.c). */
	int deterministic;
	size_t counted;            /* deterministic: trials 0 .. counted-1 are counted */
	size_t det_extra;          /* ends counted past the rule since the last choice */
	int all_chosen;            /* the scheduler said the search is complete */
} search_state;

/* The worker's loop: init, then trials, on descriptors in and out, until
 * in ends (0) or an error. cmd/search_worker.c */
int search_worker_loop(int in, int out);

/* Rebuild the scheduler from the history; trials that were running are
 * queued to run again (a "rerun" line each). cmd/search_run.c */
int search_replay(search_state *st);

/* Run trials until the budget is spent (0) or a signal stops the search
 * (1, running trials left for --resume). Negative: an error. */
int search_run(search_state *st);

/* Register the models to keep (the front's, or every one with
 * --keep-models all) and drop the other model files. */
int search_keep_models(search_state *st);

/* The front as JSON: [{trial, config, model, val_rmse, latency..., params, arch}]. */
json_t *search_front_json(const search_state *st);

/* The trial at the top rung of configuration `config` that ended ok, or -1. */
long search_top_trial(const search_state *st, size_t config);

/* *ev: a history event of trial i with `status` (its trial, configuration
 * and rung set; every other field empty, for the caller to add). */
void search_trial_event(const search_state *st, long i, hml__hist_status status,
                        hml__hist_event *ev);

#endif
