/*
 * lib/core/util.h - small helpers shared by the runtime and the CLI (internal).
 */
#ifndef HML_LIB_UTIL_H
#define HML_LIB_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "hml/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Monotonic clock in seconds. */
double hml__now(void);

/** CPU time of the calling thread in seconds (CLOCK_THREAD_CPUTIME_ID). */
double hml__thread_cpu(void);

/**
 * pthread_create() with every signal blocked in the new thread (the
 * caller's mask is restored), so that signals reach the caller's threads:
 * for the CLI's background threads (trial history sync, file reaper).
 * 0, or pthread_create's error number.
 */
int hml__thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

/** strdup that records HML_ENOMEM on failure (returns NULL). */
char *hml__strdup(const char *s);

/** Free a NULL-terminated array of malloc'ed strings and the array (NULL-safe). */
void hml__strv_free(char **v);

/**
 * May hml create or replace the file `path`? The one check before a file
 * that the runtime writes (HML_PROFILE, HML_DB, HML_QOI) is created,
 * opened for writing or renamed over: 0 when nothing is there (ENOENT) or
 * a regular file that is not a symbolic link (lstat). Otherwise
 * HML_EINVALID, "cannot write 'P': not a regular file (a FIFO)" (a
 * symbolic link, a directory, a character device, ...), or HML_EIO when
 * it cannot be examined. What is there is left untouched.
 */
int hml__path_replaceable(const char *path);

/**
 * Parse a whole decimal integer / floating number; 0 or HML_EINVALID (no
 * message). The one parser of every number hml reads from the environment
 * and the command line: the whole string must be the number, so leading or
 * trailing blanks are refused (strtoll alone would skip leading ones).
 */
int hml__parse_i64(const char *s, int64_t *out);

/* The most threads a region (HML_THREADS, options.threads) or `hml train`
 * (--threads, HML_THREADS) may ask for, per online core: thousands of
 * threads on a few cores only stall the process. */
#define HML__THREADS_PER_CORE 16

/** The thread bound: HML__THREADS_PER_CORE x the online cores (sysconf). */
int hml__threads_max(void);
int hml__parse_double(const char *s, double *out);

/** Format a shape as "[a, b, c]" into buf (always terminated). */
void hml__format_shape(char *buf, size_t size, const int64_t *shape, int ndim);

/** Convert n elements between float and double (or copy when equal). */
void hml__convert(void *dst, hml_dtype dst_dtype, const void *src,
                  hml_dtype src_dtype, size_t n);

/**
 * The libtorch version this build of hml was configured with ("1.13.0"),
 * "none" in a build without libtorch (HML_WITH_TORCH=OFF). Recorded as
 * provenance by the CLI; the runtime refuses a libtorch plugin built with
 * any other. Static storage.
 */
const char *hml__torch_version(void);

/**
 * The HDF5 version this build of hml was compiled against ("1.10.8"), read
 * from HDF5's headers, so that it is known without loading HDF5 (the hml
 * CLI prints it in --version and records it as provenance). It is the
 * version hml__h5_version() reports from the loaded library: Debian's
 * libhdf5-dev requires the libhdf5 of its own version (tests/unit/collect.c
 * checks that they agree). Static storage.
 */
const char *hml__hdf5_version(void);

#ifdef __cplusplus
}
#endif
#endif
