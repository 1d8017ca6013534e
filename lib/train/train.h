/*
 * lib/train/train.h - training a surrogate through libtorch (internal; the C++
 * shim lib/train/train.cpp behind extern "C"). The CLI reaches it through
 * its plugin libhml-cli-train.so (train_plugin.h, train_proxy.c), the unit
 * tests link it directly. The checks that need no libtorch (options, arch
 * spec: lib/train/arch.h) are in lib/train/train_check.c; in a build
 * without libtorch (HML_WITH_TORCH=OFF) hml__train fails with
 * HML_ENOTSUPPORTED.
 *
 * The model is a torch::jit::Module whose methods are TorchScript source
 * from the family templates in models/ (embedded at build time). Its
 * forward() takes application rows [batch, *in_shape] (float32), normalises
 * them with the training split's mean/std (buffers stored in the model; an
 * MLP one-hot encodes its categorical features instead, see
 * lib/train/categorical.h), runs the family's network and de-normalises to
 * [batch, *out_shape]. The saved file is plain TorchScript: torch.jit.load()
 * in Python and the hml runtime both load it. Attributes hml_input_shape /
 * hml_output_shape declare the per-row shapes (without the batch
 * dimension), which the runtime checks against the region before the first
 * call.
 *
 * Architecture spec: FAMILY:WIDTHS[:ACTIVATION][:key=value]..., see
 * lib/train/arch.h (cnn: conv layers with 'same' padding).
 */
#ifndef HML_LIB_TRAIN_H
#define HML_LIB_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "train/arch.h"
#include "train/dataset.h"
#include "train/rollout.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The fewest optimiser steps one epoch makes. An epoch is one pass over the
 * training rows, or as many passes as it takes for the whole training
 * split to make this many steps at the options' batch (1000 rows at batch
 * 256: 4 steps a pass, 16 passes an epoch); a search's lower fidelity
 * (row_fraction) makes the same passes over its share of the rows.
 * Without it, a small data set (a reservoir, a guarded collection) made a
 * few steps an epoch, so that the patience and the plateau schedule,
 * counted in epochs, stopped it and cut its learning rate after a few
 * dozen noisy steps: 983 binomial rows stopped after 53 epochs, about 200
 * steps. Data sets of 64 batches or more are unchanged.
 */
#define HML__TRAIN_MIN_EPOCH_STEPS 64

typedef struct hml__train_options {
	const char *arch;         /**< spec as above; NULL: "mlp:64x64:relu" */
	int epochs;               /**< maximum epochs (default 100) */
	int64_t batch;            /**< mini-batch rows (default 256) */
	double lr;                /**< initial learning rate (default 1e-3) */
	double weight_decay;      /**< default 0 (adam) / 1e-2 (adamw) */
	const char *optimizer;    /**< "adam" (default) or "adamw" */
	const char *schedule;     /**< "plateau" (default: x0.5 after patience/2 flat epochs), "cosine", "none" */
	int patience;             /**< early stopping: epochs without val improvement (default 10; 0 = off;
	                               under cosine, counted to a stop only once the rate is below
	                               a tenth of its start) */
	double clip;              /**< gradient norm clipping (default 5; 0 = off) */
	uint64_t seed;            /**< split, initialisation and shuffling (default 42) */
	int threads;              /**< at::set_num_threads (0: leave libtorch's default) */
	double val_fraction;      /**< default 0.1 */
	double test_fraction;     /**< default 0.1 */
	int64_t infer_batch;      /**< rows per call for the latency measurement (default batch) */
	double max_seconds;       /**< stop after this much training time (0 = no limit) */
	/** Called after every epoch with the validation error in `metric`; a
	 *  nonzero return stops training (interrupt). */
	int (*progress)(void *payload, int epoch, int epochs, double train_loss,
	                double val_error);
	void *payload;
	/** What training minimises (hml__train_losses; NULL: "mse"): "mse", "mae"
	 *  (of the normalised outputs), "relative" (|y - t| / max(|t|, floor) in
	 *  the application's units, floor: mape_floor, else 1e-3 of the largest
	 *  |t| of the training rows) or "log" (the MSE of log t, for positive
	 *  outputs; the saved model returns exp of its network, see hml-train(1)). */
	const char *loss;
	/** The error the best epoch is chosen by, and the objective a search
	 *  ranks by (hml__train_metrics; NULL: "rmse"): "rmse" or "mape". */
	const char *metric;
	/** The MAPE's floor (hml-workflow(5) qoi.mape_floor; 0: the relative rule
	 *  of lib/deploy/metrics.h), and the relative loss's. */
	double mape_floor;
	/** The threads the latency is measured with: the application's
	 *  (lib/store/cost.h "threads"); 0: `threads`. */
	int latency_threads;
	/** The share of the training rows trained on, (0, 1] (0: 1): a search's
	 *  lower fidelities train on fewer rows. The rows are drawn with `seed`
	 *  after the split, so validation and test rows stay the same. */
	double row_fraction;
	/** Input features declared categorical, "F:K[,F:K...]" (NULL, "" or
	 *  "none": none); MLP family only, one-hot inside the model
	 *  (lib/train/categorical.h). */
	const char *categorical;
	/** The experiment that holds the output path: the model is written
	 *  beneath it, never through a link (core/beneath.h). NULL: the output's
	 *  own directory (only its last component is guarded). */
	const char *out_root;
	/** Continue training this model (`hml train --from`): a TorchScript
	 *  file hml trained with the same arch, loss, categorical features and
	 *  row shapes. Its parameters are the starting point instead of a
	 *  fresh initialisation, and its normalisation (the buffers in_mean,
	 *  in_std, out_mean, out_std) is kept, so that what it learned means
	 *  the same on the new rows. NULL: a fresh model. */
	const char *init_from;
	/** Where the training steps run: "cpu" (NULL: the default), "cuda"
	 *  (the first GPU; refused with HML_EINVALID in a build without
	 *  HML_WITH_CUDA or with no GPU visible) or "auto" (cuda where it can
	 *  run, else cpu). Initialisation, the split and the saved model are
	 *  the same on either: the model is saved for the CPU (the runtime
	 *  moves it, HML_DEVICE), and the card's latency is the CPU's. */
	const char *device;
	/** Multi-step (unrolled) training, 1 to HML__ROLLOUT_MAX (default 1:
	 *  one call at a time). R > 1, for a region whose output has its
	 *  input's shape and whose data record the order of the calls
	 *  (lib/train/rollout.h): each training sample is a window of R
	 *  consecutive calls of one run whose rows are all training rows; the
	 *  model is applied R times from the first input, each output (in the
	 *  application's units, as the deployed model gives it) normalised
	 *  and fed back as the next input, and the loss is the sum of the R
	 *  steps' losses against the windows' outputs, back-propagated
	 *  through the whole chain. The rows are split by blocks of R
	 *  consecutive calls (hml__rollout_split), and the best epoch and
	 *  early stopping go by the R-step validation error: the model
	 *  applied R times from each validation window's first input, its
	 *  error over the R steps in `metric` (the result's val_rollout_*).
	 *  The card's val_* and test_* errors stay one-step. Loss log and
	 *  categorical features are refused with R > 1. */
	int rollout;
} hml__train_options;

#define HML__TRAIN_OPTIONS_INIT { NULL, 100, 256, 1e-3, -1.0, "adam", "plateau", \
	10, 5.0, 42, 0, 0.1, 0.1, 0, 0.0, NULL, NULL, NULL, NULL, 0.0, 0, 1.0, NULL, NULL, NULL, NULL, 1 }

/** The threads o's latency is measured with: latency_threads, else threads
 *  (0: the forms' defaults). */
int hml__train_latency_threads(const hml__train_options *o);

/** The loss names, NULL-terminated: mse, mae, relative, log. */
extern const char *const hml__train_losses[];

/** The metric names, NULL-terminated: rmse, mape. */
extern const char *const hml__train_metrics[];

/**
 * A training run's metric and loss for a workflow's qoi.metric
 * (hml-workflow(5); NULL: "rmse"): "mape" gives metric "mape" and loss
 * "relative"; "rmse" and "max_abs" give "rmse" and "mse". Static strings.
 */
const char *hml__train_metric_for_qoi(const char *qoi_metric);
const char *hml__train_loss_for_qoi(const char *qoi_metric);

/**
 * Check a loss or metric name: 0, or HML_EINVALID "unknown loss 'x'
 * (known: mse, mae, relative, log)" (likewise "unknown metric").
 */
int hml__train_loss_check(const char *name);
int hml__train_metric_check(const char *name);

typedef struct hml__train_result {
	char arch[256];              /**< canonical spec actually trained */
	int64_t params;              /**< trainable parameter count */
	int64_t n_train, n_val, n_test;
	int epochs_run, best_epoch;
	int stopped_early;           /**< 1: patience ran out */
	int interrupted;             /**< 1: progress callback asked to stop */
	double train_seconds;        /**< wall time of the epoch loop */
	double samples_per_second;   /**< training rows processed / train_seconds */
	double final_lr;
	/* errors in application units (after de-normalisation), best epoch's model */
	double val_rmse, test_rmse, test_mae, test_max_abs;
	/** test RMSE of a constant: every output the mean of its training
	 *  values, the figure a model must beat to have learned anything from
	 *  its inputs; 0 when not measured (search trials, imports) */
	double test_rmse_const;
	/** MAPE in per cent with the options' mape_floor (lib/deploy/metrics.h's
	 *  rule); NaN when no value is kept */
	double val_mape, test_mape;
	double latency_s_per_sample; /**< mean forward time at infer_batch / infer_batch;
	                                  NaN when it could not be measured */
	int64_t latency_batch;
	/** Why the latency could not be measured ("" when it was), e.g. "out of
	 * memory at batch 100000000000": the model is trained and saved all the
	 * same, and hml__train succeeds. */
	char latency_error[256];
	int out_of_time;             /**< 1: max_seconds ran out */
	double train_step_seconds;   /**< the part of train_seconds spent in training steps */
	/** Largest |saved module's forward - training forward| over the
	 * validation and test rows (application units); hml__train fails when
	 * it exceeds 1e-5 relative to the outputs' scale. */
	double forward_max_diff;
	char device[8];              /**< where the steps ran: "cpu" or "cuda" */
	/** Rollout R > 1: the R-step validation error of the best epoch's
	 *  weights (the model applied R times from each of the
	 *  val_rollout_windows windows' first input, the error over all R
	 *  steps), RMSE and MAPE in per cent; 0 windows for R = 1. */
	int64_t val_rollout_windows;
	double val_rollout_rmse, val_rollout_mape;
} hml__train_result;

/**
 * Train on `d` and save the TorchScript model to `out_path` (the best
 * validation epoch's weights). Deterministic for a given seed and thread
 * count. Errors: HML_EINVALID for a bad spec or option ("unknown activation
 * 'foo' in arch 'mlp:64:foo'"), too few rows for the split, a CNN on row
 * data, a categorical feature beyond the rows' features, an output that is
 * a link or not a regular file; HML_EIO when the file cannot be written; HML_EMODEL for a libtorch
 * failure (its message), and for an init_from model that does not load or
 * whose parameters or normalisation are not of this arch and data ("model
 * 'P' cannot be continued: its parameter 'w0' is [64, 5], this arch's
 * [32, 5]"). An interrupted run still saves the best model so
 * far and sets res->interrupted.
 */
int hml__train(const hml__dataset *d, const hml__train_options *o,
               const char *out_path, hml__train_result *res);

/**
 * Check the options and the arch spec that do not depend on the data (the
 * arch grammar, epochs, batch, lr, fractions, optimizer, schedule, the
 * categorical declaration's grammar and that its family is mlp, ...)
 * before any data is loaded. Fills `canonical` (may be NULL) with the
 * canonical spec ("mlp:64x64:relu"). Errors: HML_EINVALID as hml__train.
 */
int hml__train_check(const hml__train_options *o, char *canonical, size_t size);

/** hml__train_check, giving the parsed arch in `a` (for lib/train/train.cpp). */
int hml__train_check_arch(const hml__train_options *o, hml__arch *a);

/**
 * The validation (test 0) or test (test 1) error of `r` in `metric` (NULL:
 * "rmse"): val_rmse, val_mape, test_rmse or test_mape; NaN for an unknown
 * metric.
 */
double hml__train_result_error(const hml__train_result *r, const char *metric, int test);

#ifdef __cplusplus
}
#endif
#endif
