/*
 * lib/run/argv.h - the application's command line as hml builds it (internal).
 *
 * `--args 'A B C'` (hml collect, hml evaluate) is split on blanks (space,
 * tab, newline), with no quoting and no escapes: the application is never
 * run through a shell, so no character is special. In collect's
 * arguments, every "{seed}" becomes the run's seed.
 */
#ifndef HML_LIB_ARGV_H
#define HML_LIB_ARGV_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The placeholder replaced by a run's seed. */
#define HML__ARGV_SEED "{seed}"

/**
 * Split `text` on blanks into a NULL-terminated list (*out, malloc'ed,
 * free with hml__strv_free; "" or only blanks give an empty list).
 * 0 or HML_ENOMEM (*out NULL).
 */
int hml__argv_split(char ***out, const char *text);

/**
 * A NULL-terminated argv: `program`, then `args` (NULL-terminated, may be
 * NULL), with every "{seed}" replaced by *seed in decimal when `seed` is
 * not NULL (collect), copied as they are when it is (evaluate). *out is
 * yours (hml__strv_free). 0 or HML_ENOMEM (*out NULL).
 */
int hml__argv_build(char ***out, const char *program, const char *const *args,
                    const int64_t *seed);

/** The placeholder replaced by an MPI workflow's number of ranks. */
#define HML__ARGV_RANKS "{ranks}"

/**
 * The command line of an MPI workflow's run: `launcher` (NULL-terminated,
 * its program found as the caller resolved it), every "{ranks}" in it
 * replaced by `ranks`, then `argv` (the application's, NULL-terminated).
 * *out is yours (hml__strv_free). 0 or HML_ENOMEM (*out NULL).
 */
int hml__argv_launch(char ***out, const char *const *launcher, int ranks, char **argv);

/** A copy of the first `n` strings of `v` (n < 0: up to its NULL), NULL-terminated.
 *  0 or HML_ENOMEM (*out NULL). */
int hml__argv_copy(char ***out, const char *const *v, int n);

#ifdef __cplusplus
}
#endif
#endif
