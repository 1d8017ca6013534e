/*
 * runtime/loader/archive.h - the check every TorchScript file passes before
 * libtorch sees it (internal; not installed).
 *
 * A TorchScript file is a zip archive. libtorch trusts what it reads:
 * a code file of a few tens of thousands of blank lines makes its parser
 * recurse until the stack overflows (SIGSEGV), a deflated entry that
 * claims gigabytes is allocated and parsed whole. So the archive is read
 * here first, in plain C, with bounded memory, and refused unless it
 * stays inside these limits (documented in hml-runtime(3) and
 * hml-import(1)):
 *
 *   - structure: one well-formed end of central directory record at the
 *     end of the file (zip64 record and locator when it uses them), one
 *     disk, a central directory inside the file, every entry's local
 *     header where the directory says, its data inside the file before
 *     the directory; no encrypted entry; compression stored (0) or
 *     deflate (8), a stored entry's sizes equal;
 *   - at most HML__ARCHIVE_MAX_ENTRIES entries, names of at most 4096
 *     bytes, a central directory of at most 64 MiB;
 *   - each entry at most HML__ARCHIVE_MAX_ENTRY uncompressed bytes, all
 *     together at most HML__ARCHIVE_MAX_TOTAL; a deflated entry at most
 *     HML__ARCHIVE_MAX_DEFLATED (libtorch deflates only code; weights are
 *     stored);
 *   - code files (a name with a component "code" and ending in ".py"):
 *     inflated here (streaming, never more than the limit is produced) and
 *     read: at most HML__ARCHIVE_MAX_CODE bytes, lines of at most
 *     HML__ARCHIVE_MAX_LINE bytes, at most HML__ARCHIVE_MAX_BLANK blank or
 *     comment-only lines in a row, bracket nesting ((, [, {) of at most
 *     HML__ARCHIVE_MAX_DEPTH, at most HML__ARCHIVE_MAX_DEPTH prefix
 *     operators (-, +, ~, not) in a row, indentation of at most
 *     HML__ARCHIVE_MAX_INDENT columns;
 *   - pickles (data.pkl, constants.pkl, *.debug_pkl): at most
 *     HML__ARCHIVE_MAX_PICKLE bytes each, inflated and counted the same way.
 *
 * Nothing of the file is executed or handed to another library but zlib's
 * inflate, fed at most 64 KiB at a time.
 */
#ifndef HML_LOADER_ARCHIVE_H
#define HML_LOADER_ARCHIVE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HML__ARCHIVE_MAX_ENTRIES  65536
#define HML__ARCHIVE_MAX_ENTRY    ((uint64_t)16 << 30)   /* 16 GiB */
#define HML__ARCHIVE_MAX_TOTAL    ((uint64_t)32 << 30)   /* 32 GiB */
#define HML__ARCHIVE_MAX_DEFLATED ((uint64_t)256 << 20)  /* 256 MiB */
#define HML__ARCHIVE_MAX_CODE     ((uint64_t)8 << 20)    /* 8 MiB */
#define HML__ARCHIVE_MAX_PICKLE   ((uint64_t)256 << 20)  /* 256 MiB */
#define HML__ARCHIVE_MAX_LINE     65536
#define HML__ARCHIVE_MAX_BLANK    1000
#define HML__ARCHIVE_MAX_DEPTH    200
#define HML__ARCHIVE_MAX_INDENT   400

/** The limits a check applies (tests shrink them). */
typedef struct hml__archive_limits {
	uint64_t entries, entry, total, deflated, code, pickle;
	uint64_t line, blank, depth, indent;
} hml__archive_limits;

/** The documented limits above. */
extern const hml__archive_limits hml__archive_default_limits;

/**
 * Check the TorchScript archive open on `fd` (a regular file, read with
 * pread: its offset is left alone) against the default limits; `path`
 * names it in messages. 0 when it passes. Errors: HML_EMODEL "cannot open
 * model 'PATH': not a TorchScript archive (REASON)" for a file that is not
 * a well-formed zip archive, or "cannot open model 'PATH': ENTRY WHAT
 * (the limit is N)" for one past a limit; HML_EIO when the file cannot be
 * read; HML_ENOMEM.
 */
int hml__archive_check(int fd, const char *path);

/** hml__archive_check() against `lim`. */
int hml__archive_check_with(int fd, const char *path, const hml__archive_limits *lim);

#ifdef __cplusplus
}
#endif
#endif
