/*
 * lib/core/read_file.h - bounded reads of regular files (internal; the
 * runtime and the CLI alike).
 *
 * Every file hml reads whole goes through here: only a regular file is
 * opened (a FIFO, device or socket in its place would block hml or feed it
 * without end), and no more than a stated bound is read. Failures record
 * an hml error and return a negative code; nothing prints.
 */
#ifndef HML_LIB_READFILE_H
#define HML_LIB_READFILE_H

#include <stddef.h>
#include <sys/stat.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The most hml__read_file() reads: manifests, workflows, cards, logs. */
#define HML__READ_MAX ((size_t)64 << 20)

/**
 * Read a whole file into a malloc'ed NUL-terminated buffer (*out yours),
 * at most HML__READ_MAX bytes. Only a regular file is read (procfs files
 * are regular): a FIFO, device or socket is refused without blocking,
 * HML_EINVALID "cannot read 'P': not a regular file"; a larger file,
 * HML_EINVALID "cannot read 'P': it is larger than N bytes"; a directory,
 * HML_EIO; a missing file, HML_ENOTFOUND.
 */
int hml__read_file(const char *path, char **out, size_t *size);

/** hml__read_file() with the bound `max` instead of HML__READ_MAX. */
int hml__read_file_max(const char *path, size_t max, char **out, size_t *size);

/**
 * The reason alone of a failed read's message `msg` ("cannot read 'P':
 * not a regular file" gives "not a regular file"), for a caller that
 * words its own "cannot read search space 'P': <reason>"; `msg` itself
 * when it is not of that form. Pass a saved copy (hml__error_save()), not
 * the live message the caller is about to overwrite.
 */
const char *hml__read_file_reason(const char *msg, const char *path);

/**
 * Open `path` for reading (O_CLOEXEC) without blocking on a FIFO, and
 * only when it is a regular file; *st gets its fstat(). The descriptor
 * (>= 0, yours) or: HML_EINVALID "cannot read 'P': not a regular file",
 * HML_EIO for a directory, HML_ENOTFOUND for a missing file, HML_EIO
 * "cannot read 'P': <strerror>".
 */
int hml__open_regular(const char *path, struct stat *st);

#ifdef __cplusplus
}
#endif
#endif
