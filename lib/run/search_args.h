/*
 * lib/run/search_args.h - an iterative application's arguments that hml
 * search explores (internal): workflow.json's "search_args", its reader,
 * and the writer of a run's command line and environment from a choice
 * of them, side by side.
 *
 *   "search_args": {
 *     "k":          {"arg": "--k", "values": [5, 10, 20]},
 *     "interleave": {"range": [0, 4]}
 *   }
 *
 * "k" is the steps per model call: the application argument (`arg`) whose
 * value is the number of time steps one call of the region advances, so
 * the region's model predicts k steps ahead. A model is trained on data
 * collected at one k (the value of `arg` in the collect runs' argv), so a
 * search tries a k only where a data set was collected with it.
 * "interleave" is the interleave ratio N: the model for N calls, then the
 * original code for one (the runtime's interleave mode, HML_MODE
 * interleave with HML_INTERLEAVE=N; 0: the model on every call, infer
 * mode); with an "arg", the application's own argument instead.
 * Each takes "values" (distinct integers, increasing) or "range": [lo, hi]
 * (every integer of it, at most HML__SEARCH_ARG_MAX); k >= 1,
 * interleave >= 0. Either may be left out. Documented in hml-workflow(5).
 */
#ifndef HML_LIB_SEARCH_ARGS_H
#define HML_LIB_SEARCH_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The most values one search argument may take. */
#define HML__SEARCH_ARG_MAX 64

/* One declared argument; n == 0: not declared. */
typedef struct hml__search_arg {
	char *arg;            /**< the application's option, or NULL (interleave: the runtime's) */
	int64_t values[HML__SEARCH_ARG_MAX];
	size_t n;
} hml__search_arg;

typedef struct hml__search_args {
	hml__search_arg k, interleave;
} hml__search_args;

/**
 * Read "search_args" of workflow document `doc` (absent: nothing
 * declared) into *out (release with hml__search_args_release()). `path`
 * names the workflow in messages. Errors: HML_EINVALID, one line naming
 * the key: "workflow 'P': key 'search_args.k.arg' must be a non-empty
 * string starting with '-'", "... key 'search_args.k' needs 'values' or
 * 'range'", "... key 'search_args.k.values' must be increasing integers
 * >= 1", "... key 'search_args.interleave.range' must be [lo, hi] with
 * 0 <= lo <= hi and at most 64 values", "unknown key 'search_args.x'".
 */
int hml__search_args_read(hml__search_args *out, const json_t *doc, const char *path);

void hml__search_args_release(hml__search_args *a);

/** 1 when `a` declares k or interleave. */
int hml__search_args_any(const hml__search_args *a);

/** The declaration as JSON, the form read (new reference; NULL: out of memory). */
json_t *hml__search_args_json(const hml__search_args *a);

/**
 * The value of declared argument `arg` in `argv` (NULL-terminated: the
 * option, then its value, as in "--k 10"): 1 and *value, or 0 when argv
 * does not give it or gives no integer.
 */
int hml__search_args_value_in(const char *arg, char *const *argv, int64_t *value);

/**
 * A copy of `argv` (NULL-terminated) with argument `arg` set to `value`:
 * its value replaced where argv gives it, else "arg value" appended.
 * *out yours (hml__strv_free()). HML_ENOMEM.
 */
int hml__search_args_set(char ***out, char *const *argv, const char *arg, int64_t value);

#ifdef __cplusplus
}
#endif
#endif
