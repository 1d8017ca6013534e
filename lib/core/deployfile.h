/*
 * lib/core/deployfile.h - the deployment file: what `hml deploy` writes for
 * a region and a running application reads to pick up a newly deployed
 * model without a restart (internal; writer and reader side by side).
 *
 * EXP/deployed/<label>.json, one per region label:
 *
 *   {"schema_version": 1, "region": "binomial", "deployment": "p3",
 *    "model": "m3", "path": "/home/me/hml-experiment/models/m3.pt",
 *    "guard": "/home/me/hml-experiment/models/m3.guard-bounds-margin=0.01.json",
 *    "k": 8, "interleave": 2}
 *
 * `model` is the model id (a compiled deployment's id, "c2", for --target
 * c), `path` the absolute path of the file the region loads, `guard`
 * (absent: no guard) the absolute path of the guard file (core/guard.h)
 * made for that model by `hml deploy --guard`: a swap switches the model
 * and its guard together, and a deployment without one removes the guard
 * (a model retrained on wider data must not be checked against the old
 * model's ranges). `k` (absent: none recorded) is the steps per model call
 * of an iterative application the model was trained at (the deployment's
 * "run", lib/store/model_run.h): the application's own argument, which a
 * running application cannot change, so a swap to a model of another k is
 * refused. `interleave` (absent: none recorded) is the runtime's interleave
 * ratio the deployment runs at, N model calls then the original code for
 * one, 0 for the model on every call (infer): the runtime's own decision,
 * which a swap adopts (hml-runtime(3) "Hot swap"); absent when the
 * interleave is an application argument (search_args.interleave.arg).
 * The file is
 * only ever replaced whole, with rename(2) (core/beneath.h), so a reader
 * sees the old file or the new one, never a part: its identity (device,
 * inode, size, modification time) changes with every deployment, which is
 * what the runtime compares, at most once per HML_SWAP_INTERVAL
 * milliseconds, to learn that there is something new to read.
 */
#ifndef HML_LIB_DEPLOYFILE_H
#define HML_LIB_DEPLOYFILE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HML__DEPLOYFILE_SCHEMA 1

/** The folder of the experiment that holds the deployment files. */
#define HML__DEPLOYFILE_DIR "deployed"

/** The largest deployment file read: a bigger one is refused unread. */
#define HML__DEPLOYFILE_MAX_BYTES ((size_t)64 << 10)

/** One deployment, as the file says it. */
typedef struct hml__deployfile {
	char region[72];       /**< the region label */
	char deployment[32];   /**< the deployment id ("p3") */
	char model[64];        /**< the model id ("m3", "c2") */
	char path[4096];       /**< the model file, absolute */
	char guard[4096];      /**< the guard file, absolute; "": no guard */
	long long k;           /**< steps per model call, >= 1; 0: not recorded */
	long long interleave;  /**< the runtime's interleave, 0 .. HML__DEPLOYFILE_INTERLEAVE_MAX;
	                            -1: not recorded (a writer sets it) */
} hml__deployfile;

/** The largest k and interleave a deployment file holds (the runtime's
 *  HML_INTERLEAVE range). */
#define HML__DEPLOYFILE_K_MAX 1000000000LL
#define HML__DEPLOYFILE_INTERLEAVE_MAX 1000000000LL

/** What identifies one version of a file: it changes with each rename over it. */
typedef struct hml__file_identity {
	int exists;            /**< 0: missing or unreadable (the rest is 0) */
	uint64_t dev, ino, size;
	int64_t mtime_ns;
} hml__file_identity;

/**
 * The relative path of region `label`'s deployment file in an experiment,
 * "deployed/<label>.json", into buf. HML_EINVALID when it does not fit.
 */
int hml__deployfile_rel(char *buf, size_t size, const char *label);

/**
 * Write `d` as the deployment file of region d->region inside experiment
 * `root` (creating deployed/), atomically and never through a link
 * (hml__beneath_write_atomic). HML_EINVALID (a label or id too long, a
 * relative path, a link in the way), HML_EIO, HML_ENOMEM.
 */
int hml__deployfile_write(const char *root, const hml__deployfile *d);

/**
 * Read the deployment file at `path` into *out. Errors, message "cannot
 * read deployment file 'P': REASON": HML_ENOTFOUND (missing), HML_EIO
 * (unreadable, not a regular file, larger than HML__DEPLOYFILE_MAX_BYTES,
 * not JSON, a field missing or too long, a path or guard path that is not
 * absolute, a guard that is not a string, a k or interleave that is not an
 * integer in range; absent, they are read as 0 and -1),
 * HML_ENOTSUPPORTED (a newer schema_version).
 */
int hml__deployfile_read(const char *path, hml__deployfile *out);

/** The identity of the file at `path` now (stat(2); follows a link). Never fails. */
void hml__file_identity_get(const char *path, hml__file_identity *out);

/** 1 when a and b are the same version of a file (both missing included). */
int hml__file_identity_same(const hml__file_identity *a, const hml__file_identity *b);

#ifdef __cplusplus
}
#endif
#endif
