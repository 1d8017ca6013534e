/*
 * runtime/src/swap.h - hot swap: a running region picks up the model newly
 * deployed for it, at a call's start, without a restart (internal).
 *
 * The region watches the deployment file HML_DEPLOYMENT names
 * (lib/core/deployfile.h; `hml deploy` replaces it with rename(2)). A call
 * looks at the clock anyway; when HML_SWAP_INTERVAL milliseconds have
 * passed since the last look, one thread (the others go on) stat()s the
 * file, and only when its identity changed reads it, loads the model it
 * names and checks it completely (the region's rows of zeros through a
 * forward: outputs per row, declared input and output shapes, the dtype)
 * before the switch, which is one pointer exchange under the region's
 * lock. A batch call runs on the model it started with (the switch happens
 * before its path is chosen, by the thread that owns batch calls); a row
 * call's forward and the copy of its output happen under the lock, so no
 * row ever sees two models, and the old model is freed as soon as it is
 * switched out. The deployment's guard file (or none) is loaded and
 * checked with the model and switched in the same critical section, so a
 * call runs with one (model, guard) pair: row calls of a watching region
 * check their row under the lock. A deployment that cannot be used (a
 * missing or corrupt file, a missing or corrupt guard file, a model of
 * another shape or dtype, for another region) is refused: the region
 * keeps its model and guard, says so once per version of the file, and
 * counts it. Each swap is recorded (model ids, the calls completed) for
 * the profile (lib/core/profile_file.h).
 *
 * An iterative application's run (the deployment file's k and
 * interleave): k, the time steps one region call advances, is the
 * application's argument, which the runtime cannot change. The region
 * learns it from the deployment file at its first look, when that file
 * names the model the region opened with (the deployment the application
 * was started by); a swap to a deployment whose model was trained at
 * another k is refused (the model would predict the wrong step), one
 * whose k or the application's is not recorded is not checked. The
 * interleave ratio is the runtime's own decision (its mode): in infer or
 * interleave mode, a swap adopts the deployment's (0: infer, N: interleave
 * N), in the same critical section as the model; a redeployment of the
 * model in use at another interleave adopts it too.
 */
#ifndef HML_RUNTIME_SWAP_H
#define HML_RUNTIME_SWAP_H

#include <stdint.h>

#include "core/deployfile.h"
#include "core/profile_file.h"

typedef struct hml_region hml_region;

typedef struct hml__swap {
	int on;                    /* watching (a deployment file and a model) */
	int guarded;               /* the deployment's guard comes with its model */
	double next;               /* clock time of the next look (atomic) */
	int busy;                  /* a thread is looking (atomic) */
	hml__file_identity seen;   /* the file at the last look */
	int looked;
	char model[64];            /* the id of the model in use */
	int read_once;             /* a deployment file of this region was read */
	long long k;               /* the application's k (see above); 0: unknown */
	char **retired;            /* model paths switched out (messages may name them) */
	size_t nretired;
	hml__profile_swaps log;
} hml__swap;

/* At open, after the model was loaded: watch when the region has a model
 * and a deployment file. 0 or HML_ENOMEM. */
int hml__swap_init(hml_region *r);

/* The calls a region has completed (batch and row calls), for the swap's
 * record; called with the region's lock held. The caller's: swap.c calls
 * into neither region.c nor rows.c. */
typedef uint64_t (*hml__swap_calls_fn)(hml_region *r);

/* Look at the deployment file now (the slow path of hml__swap_poll). */
void hml__swap_check(hml_region *r, double now, hml__swap_calls_fn calls);

/* Copy the region's swaps (profile hook). */
int hml__swap_get(const hml_region *r, hml__profile_swaps *out);

void hml__swap_release(hml_region *r);

#endif
