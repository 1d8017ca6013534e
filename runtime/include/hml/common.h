/*
 * hml/common.h - types shared by every part of the hml runtime API.
 *
 * Nothing here allocates. Application memory described by an hml_array is
 * always borrowed: hml never frees it and never keeps it past the lifetime of
 * the object it was handed to.
 */
#ifndef HML_COMMON_H
#define HML_COMMON_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#  define HML_EXTERN __declspec(dllexport)
#elif defined(__GNUC__)
#  define HML_EXTERN __attribute__((visibility("default")))
#else
#  define HML_EXTERN
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Largest number of dimensions an array or a tensor may have. */
#define HML_MAX_DIMS 8

/**
 * Element types of application data and of model tensors.
 *
 * Model tensors, collected data and quantities of interest are always
 * floating point. The integer types describe application *inputs* (dates,
 * counts, categories): a region gathers them converted to the model's float
 * type and collects them as float64, which holds every int32 and every int64
 * up to 2^53 exactly. An integer array cannot receive model outputs.
 */
typedef enum hml_dtype {
	HML_F32 = 1, /**< float   */
	HML_F64 = 2, /**< double  */
	HML_I32 = 3, /**< int32_t (inputs and quantities of interest only) */
	HML_I64 = 4  /**< int64_t (inputs and quantities of interest only) */
} hml_dtype;

/** Size in bytes of one element of `dtype`, 0 for an unknown dtype. */
HML_EXTERN size_t hml_dtype_size(hml_dtype dtype);

/** "float32", "float64", "int32" or "int64"; "unknown" otherwise. Static storage. */
HML_EXTERN const char *hml_dtype_name(hml_dtype dtype);

/**
 * A block of application memory with its declared, row-major shape.
 *
 * `shape` is the shape the application declared (for `double t[N][M]` it is
 * {N, M}), not the part a functor touches: strides are derived from it.
 * `name` is used in error messages and recorded in collected data; it may be
 * NULL. The struct and the memory it points to stay owned by the caller.
 */
typedef struct hml_array {
	const char *name;
	void *data;
	hml_dtype dtype;
	int ndim;
	int64_t shape[HML_MAX_DIMS];
} hml_array;

/** Describe a 1-D array of `n` elements; `name` is the variable's name. */
#define HML_ARRAY_1D(ptr, dt, n) \
	((hml_array){ #ptr, (void *)(ptr), (dt), 1, { (n) } })
/** Describe a 2-D row-major array `ptr[n0][n1]`. */
#define HML_ARRAY_2D(ptr, dt, n0, n1) \
	((hml_array){ #ptr, (void *)(ptr), (dt), 2, { (n0), (n1) } })
/** Describe a 3-D row-major array `ptr[n0][n1][n2]`. */
#define HML_ARRAY_3D(ptr, dt, n0, n1, n2) \
	((hml_array){ #ptr, (void *)(ptr), (dt), 3, { (n0), (n1), (n2) } })
/** Describe a 4-D row-major array `ptr[n0][n1][n2][n3]` (e.g. videos of frames). */
#define HML_ARRAY_4D(ptr, dt, n0, n1, n2, n3) \
	((hml_array){ #ptr, (void *)(ptr), (dt), 4, { (n0), (n1), (n2), (n3) } })

/**
 * A name in a functor or a domain bound to a run-time integer, e.g. the row
 * width `m` in `[i*m : i*m+m]` or the grid size `N` in the domain `1:N-1`.
 */
typedef struct hml_symbol {
	const char *name;
	int64_t value;
} hml_symbol;

#ifdef __cplusplus
}
#endif
#endif
