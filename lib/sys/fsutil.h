/*
 * lib/sys/fsutil.h - files, paths, hashes and provenance facts (internal, CLI side).
 *
 * Everything here records an hml error on failure (HML_EIO "cannot <verb>
 * 'PATH': <strerror>", HML_ENOTFOUND when a file to read does not exist,
 * HML_ENOMEM) and returns a negative code; nothing prints. errno still
 * holds the system's reason after a failure.
 */
#ifndef HML_LIB_FSUTIL_H
#define HML_LIB_FSUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "core/read_file.h"   /* hml__read_file(), hml__read_file_max() */

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Write `size` bytes to `path` atomically: a temporary file in the same
 * directory is written, fsync()ed and renamed over `path`, then the
 * directory is fsync()ed. A crash leaves either the old or the new file;
 * a failure removes the temporary file and leaves the old one as it was.
 * The temporary file is named ".tmp-<pid>-<n>-<name>" in the same directory.
 */
int hml__write_atomic(const char *path, const void *data, size_t size);

/** mkdir -p with mode 0777 (umask applies). Existing directories are fine. */
int hml__mkdir_p(const char *path);

/**
 * Remove directory `dir` and the files in it, never following a symbolic
 * link: a link in it is removed as a link, and a `dir` that is a link is
 * left as it is, with what it points at. A subdirectory stays, and so
 * then does `dir`. Best effort, for cleaning up: it records no hml error,
 * so it may run on a failure path without replacing the error returned.
 */
void hml__remove_dir(const char *dir);

/** SHA-256 of a file's bytes as 64 lowercase hex digits + NUL (OpenSSL EVP). */
int hml__sha256_file(const char *path, char hex[65]);

/** "a/b" from "a" and "b" (malloc'ed; NULL + HML_ENOMEM). An absolute `b`
 * or an empty `a` gives a copy of `b`. */
char *hml__path_join(const char *a, const char *b);

/** Absolute, normalised form of an existing path (realpath, malloc'ed). */
char *hml__path_abs(const char *path);

/** The executable regular file `name` found in the directories of PATH,
 * first match (an empty entry is the current directory), malloc'ed; NULL
 * when none is (no error set). */
char *hml__find_on_path(const char *name);

/** Directory of the running executable (/proc/self/exe), malloc'ed. */
char *hml__exe_dir(void);

/** Current UTC time as "2026-11-23T14:05:09Z" into buf (>= 21 bytes). */
void hml__time_iso(char *buf, size_t size);

/** The host name (never fails: "unknown" when it cannot be read). */
void hml__hostname(char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
