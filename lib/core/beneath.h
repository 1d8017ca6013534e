/*
 * lib/core/beneath.h - the one way hml writes inside an experiment (internal).
 *
 * An experiment directory is untrusted input: it is shared, copied,
 * unpacked from archives. Whatever hml writes, creates, truncates, appends
 * to, locks, renames or removes inside it goes through these functions,
 * which resolve the path relative to a descriptor of the experiment's
 * directory and never through a symbolic link: openat2() with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where the kernel has it, else a
 * walk of the components, each opened O_NOFOLLOW (O_DIRECTORY for the
 * directories). The experiment directory itself, as the user named it,
 * may be a link: that is the user's choice; what is inside is not.
 *
 * `root` is the experiment directory and `path` a path inside it: either
 * relative to it ("models/m1.pt") or `root` joined with such a path
 * ("EXP/models/m1.pt", as hml__store_path() gives). A `..` component, an
 * absolute path that is not under `root`, and a relative one that names
 * the parent are refused.
 *
 * Failures (negative HML_E* code, message set, nothing outside touched):
 *   HML_EINVALID "'search/s1/t1.pt' in experiment 'EXP' is a symbolic
 *     link; hml does not write through links" (the first component that
 *     is a link is named), "... is not a regular file; hml does not write
 *     to it" (a FIFO, a device, a directory where a file is written),
 *     "... is not a directory", "'P' is outside experiment 'EXP'";
 *   HML_EIO "cannot write 'PATH': <strerror>" (errno keeps the reason),
 *   HML_ENOTFOUND when a file opened without O_CREAT does not exist,
 *   HML_ENOMEM.
 */
#ifndef HML_LIB_BENEATH_H
#define HML_LIB_BENEATH_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * open(2) `path` inside `root` with `flags` (O_CLOEXEC and O_NOFOLLOW are
 * added) and `mode`. Without O_DIRECTORY, what is opened must be a
 * regular file (checked before anything is written; a FIFO does not block
 * the open). The descriptor (>= 0) is yours to close. A NULL `root` is
 * the directory that holds `path`: then only its last component is
 * guarded, for callers whose directory was opened beneath the experiment
 * before.
 */
int hml__beneath_open(const char *root, const char *path, int flags, mode_t mode);

/** hml__beneath_open as a stdio stream: `mode` "w" (create, truncate) or
 * "a" (create, append). *out is yours to fclose(). */
int hml__beneath_fopen(FILE **out, const char *root, const char *path, const char *mode);

/** As hml__beneath_open, `rel` relative to the open directory `dirfd`;
 * `root` only names the experiment in messages. */
int hml__beneath_openat(int dirfd, const char *root, const char *rel, int flags, mode_t mode);

/** mkdir -p of `path` inside `root` (mode 0777, umask applies): existing
 * directories are fine, a link or a file in the way is an error. */
int hml__beneath_mkdir_p(const char *root, const char *path);

/** rename(2) `from` to `to`, both inside `root`. `from` must not be a
 * link; `to`, when it exists, must be a regular file (never a link), and
 * with `noreplace` must not exist (HML_EEXISTS "'REL' already exists in
 * experiment 'EXP'"). */
int hml__beneath_rename(const char *root, const char *from, const char *to, int noreplace);

/** unlink(2) `path` inside `root` (a link there is removed as a link).
 * A missing file is fine. */
int hml__beneath_unlink(const char *root, const char *path);

/**
 * Write `size` bytes to `path` inside `root` atomically: a temporary
 * ".tmp-<pid>-<n>-<name>" beside it is created (O_EXCL), written,
 * fsync()ed and renamed over `path`, then the directory is fsync()ed.
 * A `path` that is a link or not a regular file is refused, not replaced.
 */
int hml__beneath_write_atomic(const char *root, const char *path, const void *data,
                              size_t size);

/** Create the directory named by `templ` ("EXP/eval/.tmp-XXXXXX", the
 * last six characters replaced in place, as mkdtemp, mode 0777 less the
 * umask) inside `root`. */
int hml__beneath_mkdtemp(const char *root, char *templ);

/** Tests: nonzero makes every resolution walk the components, as on a
 * kernel without openat2(). */
void hml__beneath_force_walk(int on);

#ifdef __cplusplus
}
#endif
#endif
