/*
 * runtime/src/plugin.h - where libhml's run-time loaded plugins lie
 * (internal).
 *
 * libhml keeps its heavy dependencies out of every program's start-up:
 * libtorch lives in libhml-torch.so (backend.h), HDF5 in libhml-hdf5.so
 * (h5io.h); each is dlopen-ed the first time a region needs it. Both are
 * found relative to the object holding libhml's code, so no environment
 * variable is needed in the build tree or in an installed prefix.
 */
#ifndef HML_RUNTIME_PLUGIN_H
#define HML_RUNTIME_PLUGIN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The path of plugin `file` ("libhml-torch.so") into buf: $`env` when
 * `env` is not NULL and that variable is set and not empty; else beside
 * the object holding this code (libhml.so, in the build tree and in
 * LIBDIR); else in its hml/ subdirectory (LIBDIR/hml, where plugins are
 * installed); for an executable that compiles this file in (the hml CLI),
 * the build tree's runtime/ beside its cmd/, or BINDIR/HML__BIN_TO_PLUGIN_DIR.
 * The first candidate that exists, or the last one (whose dlopen then says
 * what is missing). Never fails; the result is truncated to `size`.
 */
void hml__plugin_path(char *buf, size_t size, const char *file, const char *env);

#ifdef __cplusplus
}
#endif
#endif
