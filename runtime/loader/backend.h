/*
 * runtime/loader/backend.h - the C interface between libhml and an inference
 * backend loaded at run time (internal; not installed).
 *
 * libhml links no ML framework. A backend is a shared object exporting one
 * entry point that returns a static table of function pointers. The loader
 * (model.c) calls the entry point with the ABI version it was built for
 * and uses the table only when the backend answers with that same version
 * and a table at least as large as it knows; a mismatch is an error, never
 * a call into an unknown layout. Backends:
 *   - libhml-torch.so (torch_backend.cpp): TorchScript through libtorch, entry point
 *     HML__TORCH_ENTRY, found next to libhml (loader.h says where).
 * A second backend (a compiled model .so recognised by its own magic
 * symbol) fills in the same table.
 *
 * Every function returns 0 or a negative HML_E* code; after a failure,
 * last_error() gives that thread's one-line message, which the loader turns
 * into the caller's hml error. No C++ exception crosses this interface.
 */
#ifndef HML_RUNTIME_BACKEND_H
#define HML_RUNTIME_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "hml/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bumped on any change to hml__backend below. */
#define HML__BACKEND_ABI 2

typedef struct hml__backend {
	int abi;               /**< HML__BACKEND_ABI the backend was built with */
	size_t size;           /**< sizeof(hml__backend) in the backend's build */
	const char *name;      /**< "torch" */
	const char *version;   /**< its library's version, e.g. libtorch's "1.13.0" */
	/* The loader.h hml__model_* functions of the same names, on the backend's own handle;
	 * load's device is hml__model_load_on's (NULL: HML_DEVICE decides). */
	int (*load)(void **out, const char *path, int threads, const char *device);
	void (*free)(void *model);
	hml_dtype (*dtype)(const void *model);
	int (*declared_input)(const void *model, int64_t *shape);
	int (*declared_output)(const void *model, int64_t *shape);
	int (*forward)(void *model, const void *in, hml_dtype dtype, int ndim,
	               const int64_t *shape);
	int (*output)(const void *model, const void **data, hml_dtype *dtype,
	              int *ndim, int64_t *shape);
	/** The message of this thread's last failure in the backend. */
	const char *(*last_error)(void);
} hml__backend;

/** Signature of a backend's entry point: NULL when `abi` is not its own. */
typedef const hml__backend *(*hml__backend_entry)(int abi);

/** The libtorch backend: file name and exported entry point. */
#define HML__TORCH_PLUGIN "libhml-torch.so"
#define HML__TORCH_ENTRY "hml_torch_backend"

#ifdef __cplusplus
}
#endif
#endif
