/*
 * lib/store/qoi_compare.h - the quantities of interest of a surrogate run
 * compared with an accurate run's (internal, CLI side).
 *
 * A workflow names one or more QoI data sets (lib/run/workflow.h "qoi";
 * the first is the primary). hml evaluate, the QoI check of hml deploy
 * --max-qoi-error and of hml search --qoi-check all compare them here:
 * the accurate run's QoI file is read once (hml__qoi_ref_load), then each
 * surrogate run's file is compared with it, every data set in the
 * workflow's order, each in its own metric and against its own max_error.
 */
#ifndef HML_LIB_QOI_COMPARE_H
#define HML_LIB_QOI_COMPARE_H

#include <stddef.h>

#include <jansson.h>

#include "deploy/metrics.h"
#include "run/workflow.h"

/* One data set compared. */
typedef struct hml__qoi_result {
	const hml__workflow_qoi *qoi; /**< the workflow's entry (borrowed from it) */
	hml__errors err;              /**< every figure of the comparison */
	double error;                 /**< err in qoi->metric; NaN: no value */
	int passed;                   /**< 1 without a max_error, else error <= max_error
	                                   (a NaN error fails) */
} hml__qoi_result;

/* The accurate run's values of every data set of a workflow. */
typedef struct hml__qoi_ref hml__qoi_ref;

/**
 * Read every QoI data set of `w` from the accurate run's QoI file `path`;
 * for a run of `ranks` > 1 MPI ranks, from the ranks' files as one
 * (hml__qoi_file_read_ranks(), lib/core/qoi_file.h), and so are the
 * surrogate runs' compared with it. *out is yours: hml__qoi_ref_free();
 * it borrows `w`, which must outlive it. Errors: those of
 * hml__qoi_file_read_ranks() (HML_ENOTFOUND "the application wrote no
 * quantity of interest 'N' to 'P'", "rank 1 of 3 wrote no QoI file
 * (...)", HML_EIO), HML_ENOMEM.
 */
int hml__qoi_ref_load(hml__qoi_ref **out, const hml__workflow *w, const char *path,
                      int ranks);

void hml__qoi_ref_free(hml__qoi_ref *ref);

/**
 * 0 when every value of the reference is finite, else HML_ERROR "the
 * accurate run (WHAT) gave 3 of 21 values of quantity of interest 'N' as
 * NaN or Inf: ..." for the first data set with any: a model's run is
 * compared with the values that are finite only, so such a run is no
 * reference to judge a model by, and the fault is the accurate run's.
 */
int hml__qoi_ref_check_finite(const hml__qoi_ref *ref, const char *what);

/**
 * Compare the QoI file `path` of a surrogate run with the reference:
 * out[i] (the caller's array of w->nqoi) for the workflow's entry i.
 * `what` names the surrogate run in messages ("the surrogate", "model
 * 'm3'"). Errors: hml__qoi_file_read()'s for a data set the run did not
 * write, HML_ESHAPE "quantity of interest 'N' has 10 values in the
 * accurate run but 9 with the surrogate"; out is then unspecified.
 */
int hml__qoi_compare(hml__qoi_result *out, const hml__qoi_ref *ref, const char *path,
                     const char *what);

/** The first result over its max_error, or NULL when all pass. */
const hml__qoi_result *hml__qoi_failed(const hml__qoi_result *r, size_t n);

/**
 * r[0 .. n) as recorded (hml-manifest(5)): [{dataset, metric, error,
 * rmse, mape, max_abs, mae, values, mape_values, nonfinite[, max_error,
 * passed]}], the last two for an entry with a max_error. New reference,
 * or NULL (out of memory).
 */
json_t *hml__qoi_results_json(const hml__qoi_result *r, size_t n);

#endif
