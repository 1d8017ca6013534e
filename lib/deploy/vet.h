/*
 * lib/deploy/vet.h - an untrusted TorchScript file loaded first in a child
 * process under limits (internal, CLI side).
 *
 * libtorch trusts a model file: its parser can overflow the stack
 * (SIGSEGV), or grow without bound and ignore signals while it does. The
 * archive check (runtime/loader/archive.h) refuses the shapes known to do
 * that; what it cannot foresee is found here: before hml import or hml
 * deploy --target c reads a model in its own process, `hml model-check`
 * (cmd/model_check.c, hidden), a fresh exec of the hml executable, loads
 * it through the runtime's backend with its address space limited to what
 * libtorch took plus `memory_mib`, within `limit_s` seconds, and reports
 * on a pipe, as one JSON object:
 *
 *   {"ok": true}   or   {"ok": false, "code": -9, "message": "..."}
 *
 * The child leads its own process group (lib/sys/proc.h): hml's SIGINT,
 * SIGTERM and SIGHUP are forwarded to it and escalated to SIGKILL after
 * HML__PROC_GRACE_S; past its time limit it gets SIGTERM, then SIGKILL.
 *
 * Limits (hml-import(1)): HML_MODEL_LOAD_TIMEOUT seconds (default 120)
 * and HML_MODEL_LOAD_MEMORY MiB beyond libtorch's own (default 4096 plus
 * four times the file's size), each a positive integer.
 */
#ifndef HML_LIB_VET_H
#define HML_LIB_VET_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HML__ENV_MODEL_LOAD_TIMEOUT "HML_MODEL_LOAD_TIMEOUT"
#define HML__ENV_MODEL_LOAD_MEMORY "HML_MODEL_LOAD_MEMORY"
#define HML__VET_TIMEOUT_S 120
#define HML__VET_MEMORY_MIB 4096

/** The limits for a model file of `file_bytes` bytes: the defaults, or
 * the environment's. HML_EINVALID naming the variable when one is set to
 * anything but a positive integer. */
int hml__vet_limits(uint64_t file_bytes, double *limit_s, uint64_t *memory_mib);

/**
 * Load the TorchScript file `path` in a child, `exe` (the hml executable)
 * run as `exe model-check --memory MIB PATH`, under the limits of
 * hml__vet_limits. 0 when it loaded. Errors: HML_EINVALID "cannot open
 * model 'PATH': ..." when the child refused it (the archive check, libtorch's
 * error), died of a signal ("libtorch's loader was killed by SIGSEGV while
 * reading it"), ran past its time or memory limit; HML_ENOTFOUND /
 * HML_ENOTSUPPORTED / HML_EIO when the file or the backend is missing
 * (the child's own code) or the child could not be started; an interrupt
 * of hml ends the child and is reported as HML_ERROR "interrupted while
 * model 'PATH' was loading".
 */
int hml__vet_model(const char *exe, const char *path);

/**
 * The child's report, both sides of the pipe. _write: the JSON text for
 * `rc` (0: loaded; else an HML_E* code with `message`), malloc'ed, yours;
 * NULL when out of memory. _read: `text` read back; 0 for a load, else the
 * code (HML_ENOTFOUND, HML_ENOTSUPPORTED and HML_EIO kept, any other made
 * HML_EINVALID: the file's fault) with the child's message; a text that is
 * not such a report is HML_EINVALID naming `path`.
 */
char *hml__vet_report_write(int rc, const char *message);
int hml__vet_report_read(const char *text, const char *path);

#ifdef __cplusplus
}
#endif
#endif
