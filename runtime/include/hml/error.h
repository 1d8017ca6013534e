/*
 * hml/error.h - error codes and the last error of the calling thread.
 *
 * Every fallible hml function returns an int: 0 on success, one of the
 * negative HML_E* codes on failure. The failing call also records a one-line
 * message in thread-local storage; read it with hml_error_last() before the
 * next hml call on the same thread overwrites it.
 */
#ifndef HML_ERROR_H
#define HML_ERROR_H

#include "hml/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hml_error_code {
	HML_OK = 0,
	HML_ERROR = -1,          /**< failure with no more specific code */
	HML_EINVALID = -2,       /**< invalid argument or setting */
	HML_ENOMEM = -3,         /**< out of memory */
	HML_ENOTFOUND = -4,      /**< a file, region, dataset or name is missing */
	HML_EIO = -5,            /**< reading or writing a file failed */
	HML_ESHAPE = -6,         /**< shapes or element counts do not agree */
	HML_ERANGE = -7,         /**< an index falls outside a declared array */
	HML_ENOTSUPPORTED = -8,  /**< valid but not supported by this build */
	HML_EMODEL = -9,         /**< a model cannot be loaded or run */
	HML_ESYNTAX = -10,       /**< a functor or domain does not parse */
	HML_EEXISTS = -11,       /**< something already exists */
	HML_ELOCKED = -12        /**< held by another process */
} hml_error_code;

/** The last error recorded on this thread. */
typedef struct hml_error {
	int code;             /**< an hml_error_code; HML_OK when none */
	const char *message;  /**< one line, never NULL; "" when none */
} hml_error;

/**
 * The last error recorded on the calling thread. The pointer stays valid
 * until the thread exits; its contents change with the next failing call.
 * Never NULL.
 */
HML_EXTERN const hml_error *hml_error_last(void);

/** Forget the last error of the calling thread. */
HML_EXTERN void hml_error_clear(void);

/** A short static description of an error code ("invalid argument", ...). */
HML_EXTERN const char *hml_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif
