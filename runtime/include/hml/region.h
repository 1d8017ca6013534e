/*
 * hml/region.h - execution control: a labelled code region that runs as
 * written, collects its inputs and outputs, or is replaced by a model.
 *
 *     hml_region *r;
 *     hml_region_open(&r, "binomial", NULL);          once
 *     hml_region_input(r, "[i, 0:5] = ([i],[i],[i],[i],[i])", "0:n", in, 5, syms, 1);
 *     hml_region_output(r, "[i, 0:1] = ([i])", "0:n", out, 1, syms, 1);
 *     ...
 *     if (hml_region_begin(r)) {                      every call
 *         ... the original code ...
 *     }
 *     hml_region_end(r);
 *     ...
 *     hml_region_free(r);
 *
 * The mode is chosen at run time, without recompiling, from the options or
 * the environment (see hml-runtime(3)):
 *
 *   off         run as written; begin/end only count calls
 *   collect     run as written; append inputs (gathered before the original
 *               code, which may overwrite them) and outputs to an HDF5 file
 *   infer       gather inputs, run the model, scatter its outputs; the
 *               original code does not run
 *   interleave  like infer, but every (K+1)-th call runs the original code
 *   shadow      like off, but a fraction of calls also runs the model and
 *               records its error against the original outputs
 *
 * Failure policy: by default (fallback) a model that cannot be loaded or run,
 * or a collection file that cannot be written, produces one warning through
 * the log handler and the region keeps running the original code, so the
 * application never computes with garbage. With HML_ON_ERROR=fail (or
 * options.on_error) hml_region_open() and hml_region_begin()/end() return the
 * negative error code instead and leave the decision to the application.
 *
 * A region's batch calls (hml_region_begin/end), set-up, flush and free
 * belong to one thread at a time; model and gather parallelism come from
 * inside the runtime (HML_THREADS). A region inside a loop body, one call
 * per iteration, uses the row calls instead (hml_region_row_begin()),
 * which any number of threads may make at once.
 */
#ifndef HML_REGION_H
#define HML_REGION_H

#include "hml/common.h"
#include "hml/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hml_region hml_region;

typedef enum hml_mode {
	HML_MODE_DEFAULT = 0, /**< from HML_MODE_<LABEL>, then HML_MODE, else off */
	HML_MODE_OFF,
	HML_MODE_COLLECT,
	HML_MODE_INFER,
	HML_MODE_INTERLEAVE,
	HML_MODE_SHADOW
} hml_mode;

typedef enum hml_on_error {
	HML_ON_ERROR_DEFAULT = 0, /**< from HML_ON_ERROR, else fallback */
	HML_ON_ERROR_FALLBACK,    /**< warn once, run the original code */
	HML_ON_ERROR_FAIL         /**< return the error to the application */
} hml_on_error;

/**
 * Region settings. Every field left at its initial value is taken from the
 * environment, then from the built-in default; a field you set wins over the
 * environment. Per-region variables (HML_MODE_<LABEL>, HML_MODEL_<LABEL>,
 * with the label upper-cased and non-alphanumerics turned into '_') win over
 * the global ones.
 */
typedef struct hml_region_options {
	unsigned int version;   /**< HML_REGION_OPTIONS_VERSION */
	hml_mode mode;          /**< HML_MODE; default off */
	const char *model;      /**< HML_MODEL: TorchScript file for infer/interleave/shadow */
	const char *db;         /**< HML_DB: HDF5 file for collect; default "hml-data.h5" */
	int interleave;         /**< HML_INTERLEAVE: model calls per original call; default 4 */
	double shadow;          /**< HML_SHADOW: fraction of calls shadowed, (0, 1]; default 0.1 */
	int threads;            /**< HML_THREADS: model and gather threads; default: libtorch's and OpenMP's own */
	hml_on_error on_error;  /**< HML_ON_ERROR: fallback or fail */
	const char *profile;    /**< HML_PROFILE: "0" none, "1" table on stderr at exit, else a JSON file path */
	double flush_seconds;   /**< HML_FLUSH_SECONDS: collect flush interval; default 1 s */
	size_t flush_bytes;     /**< HML_FLUSH_BYTES: collect buffer limit; default 16 MiB */
	const char *guard;      /**< HML_GUARD: guard file written by hml deploy --guard
	                             (infer and interleave check each row against it);
	                             default none */
} hml_region_options;

/* 2 added `guard`; a struct of version 1 (without it) is still accepted and
 * read only up to `flush_bytes`. */
#define HML_REGION_OPTIONS_VERSION 2
#define HML_REGION_OPTIONS_INIT { HML_REGION_OPTIONS_VERSION, HML_MODE_DEFAULT, \
	NULL, NULL, 0, 0.0, 0, HML_ON_ERROR_DEFAULT, NULL, 0.0, 0, NULL }

/** Initialise `opts` to HML_REGION_OPTIONS_INIT. */
HML_EXTERN int hml_region_options_init(hml_region_options *opts, unsigned int version);

/**
 * Open a region named `label` (letters, digits, '_', '-', '.'; it names the
 * HDF5 group and the per-region environment variables). `opts` may be NULL.
 * Resolves the settings, loads the model when the mode needs one and checks
 * that the collection file can be written. `*out` is yours to free with
 * hml_region_free().
 *
 * Fails with HML_EINVALID (bad label, unknown mode name, malformed number in
 * the environment) whatever the policy, and, under the fail policy, with
 * HML_ENOTFOUND / HML_EIO / HML_EMODEL / HML_ENOTSUPPORTED (e.g. float16
 * parameters) for a model or collection file that cannot be used.
 */
HML_EXTERN int hml_region_open(hml_region **out, const char *label,
                               const hml_region_options *opts);

/**
 * Flush collected data and free the region (NULL-safe). Its statistics are
 * kept for the profile report at process exit (HML_PROFILE). Maps added to it are freed too. Use hml_region_flush()
 * first if you need to know whether the last write succeeded.
 */
HML_EXTERN void hml_region_free(hml_region *r);

/**
 * Add an input (or output) map. On success the region owns `map` (do not
 * free it; you may still call hml_tmap_set_data() on it). Several input maps
 * are concatenated along the last feature dimension, in the order added;
 * their row counts and other feature extents must agree. Maps can only be
 * added before the first hml_region_begin(). Input maps may bind arrays of
 * different dtypes, integers included (converted to the model's float type,
 * collected as float64); an output map binds float32 or float64 arrays only
 * (HML_ENOTSUPPORTED otherwise).
 */
HML_EXTERN int hml_region_add_input(hml_region *r, hml_tmap *map);
HML_EXTERN int hml_region_add_output(hml_region *r, hml_tmap *map);

/**
 * Parse `functor`, bind it (see hml_tmap_new()) and add it as an input (or
 * output). Returns the map's index (>= 0) or a negative error code.
 */
HML_EXTERN int hml_region_input(hml_region *r, const char *functor,
                                const char *domain,
                                const hml_array *arrays, size_t narrays,
                                const hml_symbol *symbols, size_t nsymbols);
HML_EXTERN int hml_region_output(hml_region *r, const char *functor,
                                 const char *domain,
                                 const hml_array *arrays, size_t narrays,
                                 const hml_symbol *symbols, size_t nsymbols);

/**
 * A region that updates memory in place (a time step over a whole field):
 * bind `functor` once as an input and once as an output, as
 * hml_region_input() and hml_region_output() would with the same
 * arguments. The input is gathered before the original code runs in every
 * mode, so collect records the values from before the call and the model
 * reads them; the outputs are then written over the same memory. The two
 * maps are the region's last input and last output (point both at new
 * memory with hml_tmap_set_data() if the field moves). Returns 0, or a
 * negative code from parsing or binding (the region is then unchanged) or
 * from adding the maps (after the first call: HML_EINVALID).
 */
HML_EXTERN int hml_region_inout(hml_region *r, const char *functor,
                                const char *domain,
                                const hml_array *arrays, size_t narrays,
                                const hml_symbol *symbols, size_t nsymbols);

/** Input (or output) map number k, owned by the region; NULL if none. */
HML_EXTERN hml_tmap *hml_region_input_map(hml_region *r, size_t k);
HML_EXTERN hml_tmap *hml_region_output_map(hml_region *r, size_t k);

/**
 * hml_tmap_seek() on every input and output map: for an application that
 * declares its maps with the shape of one batch and calls the region once
 * per batch, `hml_region_seek(r, first_row_of_batch)` before
 * hml_region_begin() points the region at that batch. Fails with
 * HML_EINVALID for a NULL region or rows < 0.
 */
HML_EXTERN int hml_region_seek(hml_region *r, int64_t rows);

/**
 * Start a call. Returns 1 when the original code must run now, 0 when the
 * model has already written the outputs, or a negative code. Failures of
 * the model or of collection return 1 under the fallback policy and the
 * negative code under the fail policy. Errors in the region's set-up
 * (no input or output map, maps that cannot be concatenated, out of
 * memory) are negative whatever the policy; a negative return still runs
 * the original code in `if (hml_region_begin(r))`. Always pair with
 * hml_region_end().
 */
HML_EXTERN int hml_region_begin(hml_region *r);

/**
 * Like hml_region_begin(), but when `run_original` is nonzero the call takes
 * the original path whatever the mode (collect mode still collects it).
 */
HML_EXTERN int hml_region_begin_if(hml_region *r, int run_original);

/**
 * Finish a call: in collect mode gather the outputs and buffer the call for
 * the HDF5 file; in shadow mode compare the model with the original outputs.
 * Returns 0 or, under the fail policy, a negative code.
 */
HML_EXTERN int hml_region_end(hml_region *r);

/**
 * Row calls: the region inside a loop body, one call per iteration, left
 * as written (OpenMP's `parallel for` included). The maps are bound once,
 * before the loop, over the loop's whole domain (as for one batch call);
 * each iteration then calls
 *
 *     if (hml_region_row_begin(r, i - lo)) {
 *         ... the iteration's original code ...
 *     }
 *     hml_region_row_end(r);
 *
 * where `row` (0 to rows - 1) is the iteration's row of the domain: the
 * call reads and writes that row of every map and nothing else. Input and
 * output maps must have the same rows (HML_ESHAPE otherwise).
 *
 * Any number of threads may make row calls on one region at once: each
 * thread keeps its own call state and buffers. Collection gathers the rows
 * into the thread's buffer and hands them to the collector in chunks (one
 * record of the `calls` table per chunk, standing for its calls; see
 * hml-runtime(3)); the rows still buffered are written by
 * hml_region_flush(), hml_region_free() and at exit, so the last, short
 * chunk is exact. Inference runs the model on the row: a compiled model
 * (hml deploy --target c) on every thread at once, into the thread's own
 * buffers, once the first call checked its shapes; a TorchScript model one
 * thread at a time (it keeps its output). Interleave counts calls per
 * thread. Not
 * while row calls run: batch calls, hml_region_flush(),
 * hml_region_free(), hml_region_stats_get(), hml_tmap_seek() and
 * hml_tmap_set_data() on its maps: call them before or after the loop.
 *
 * Returns as hml_region_begin() does: 1 run the original code, 0 the model
 * wrote the row's outputs, negative on error (HML_EINVALID: a row outside
 * the domain, a second begin without end on this thread).
 */
HML_EXTERN int hml_region_row_begin(hml_region *r, int64_t row);

/** hml_region_row_begin() that takes the original path when `run_original`
 * is nonzero (collect mode still collects the row). */
HML_EXTERN int hml_region_row_begin_if(hml_region *r, int64_t row, int run_original);

/**
 * A row call whose arrays are given per call: for a region inside a loop
 * body whose data lives at other addresses every iteration (locals of the
 * body, `x + 2*i`), so that no map can be bound over the loop's domain.
 * The maps are bound once with one row each (e.g. "[0:2] = ([0:2])" with
 * no domain, at any valid address: the first iteration's); each call then
 * passes `data`, the base address of every array of every map, in this
 * order: the input maps in the order added (hml_region_input() and
 * hml_region_inout()), each map's arrays in the order given, then the
 * output maps likewise (an inout map appears in both lists). Each address
 * is what hml_array.data would be for that call: the row's transfers read
 * and write there instead of the bound data, on the calling thread only
 * (the maps are never changed, so any number of threads may call at
 * once). The addresses are copied into the thread's call state: `data`
 * itself need not outlive this call, but what it points to must stay
 * valid until hml_region_row_end(). In off mode it is not read.
 *
 *     const void *at[] = { &x[i], &s, &y[i / 2] };
 *     if (hml_region_row_begin_at(r, at, 3, 0)) { ... }
 *     hml_region_row_end(r);
 *
 * Everything else is as hml_region_row_begin_if(): collection buffered per
 * thread and written in chunks (the last one exact at flush, free or
 * exit), inference on the row (compiled models without a lock), interleave,
 * shadow, the fallback policy and the statistics. Fails with HML_ESHAPE
 * when the maps have more than one row, HML_EINVALID for a NULL `data`, a
 * NULL address, `ndata` other than the arrays of the maps, or a second
 * begin without end on this thread.
 */
HML_EXTERN int hml_region_row_begin_at(hml_region *r, const void *const *data, size_t ndata,
                                       int run_original);

/** Finish this thread's row call. 0, or under the fail policy a negative
 * code (HML_EINVALID without a row call in progress on this thread). */
HML_EXTERN int hml_region_row_end(hml_region *r);

/**
 * Per-row fallback. A guard (HML_GUARD, written by `hml deploy --guard`)
 * sends the rows the model should not answer to the original code. A
 * region whose original code can compute any subset of its rows declares
 * it once, before its first call, with hml_region_subset_enable(), and
 * iterates over the rows the runtime hands it:
 *
 *     if (hml_region_begin(r)) {
 *         const int64_t *idx; int64_t n;
 *         hml_region_rows(r, &idx, &n);
 *         for (int64_t k = 0; k < n; k++)
 *             ... the original code for row idx[k] of the domain ...
 *     }
 *
 * In a call where the guard sent rows back, the model's answers are in
 * every other row and idx lists the guarded rows (ascending): the original
 * code overwrites their outputs, which are then exactly its own. In every
 * other call that runs the original code, idx is 0 .. rows - 1. A region
 * that did not declare it runs the original code for the whole call when
 * any row is guarded (counted in guard_whole_calls). Row calls
 * (hml_region_row_begin) need nothing: a guarded row returns 1.
 *
 * hml_region_subset_enable: HML_EINVALID after the first call,
 * HML_ENOTSUPPORTED for a region that updates its data in place (the
 * model's answers would overwrite the guarded rows' inputs).
 * hml_region_rows: idx is the region's, valid until hml_region_end();
 * HML_EINVALID outside a call.
 */
HML_EXTERN int hml_region_subset_enable(hml_region *r);
HML_EXTERN int hml_region_rows(hml_region *r, const int64_t **idx, int64_t *n);

/**
 * Processes that must take the same path (MPI ranks whose original code
 * exchanges halos or makes collective calls). Whether a call runs the
 * original code is decided by each process alone: a guard may send one
 * rank's rows back, a model may fail on one rank only. A rank that runs
 * the original code while its neighbours take the model's answers then
 * waits for them for ever. With an agreement function, every batch call
 * (hml_region_begin, hml_region_begin_if) in infer and interleave mode
 * calls
 *
 *     all = agree(local, ctx);
 *
 * once, with local = 1 when this process would run the original code in
 * this call (any part of it) and 0 when the model answers all of it, after
 * the model ran and before its answers reach the application's memory
 * (an in-place region's inputs are still there). agree must return nonzero
 * when any process's local is nonzero, e.g.
 *
 *     static int agree(int local, void *ctx)
 *     {
 *         int all = 0;
 *         MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_LOR, *(MPI_Comm *)ctx);
 *         return all;
 *     }
 *
 * When it does and this process's model answered, the process runs the
 * original code for the whole call as well (hml_region_begin returns 1;
 * counted in agreed_calls, not in model_calls). Every process must set the
 * same function at the same point, run in the same mode and make the same
 * batch calls: agree is collective. It is not called in off, collect and
 * shadow mode (the original code runs in every call there), nor by a call
 * that returns an error, nor by row calls (hml_region_row_begin). NULL
 * removes it. HML_EINVALID inside a call.
 */
typedef int (*hml_agree_fn)(int local, void *ctx);
HML_EXTERN int hml_region_set_agree(hml_region *r, hml_agree_fn agree, void *ctx);

/** Write buffered collected calls to the HDF5 file now. */
HML_EXTERN int hml_region_flush(hml_region *r);

/** The mode in effect (after resolving options and environment). */
HML_EXTERN hml_mode hml_region_mode(const hml_region *r);

/** The failure policy in effect (after resolving options and
 * HML_ON_ERROR): HML_ON_ERROR_FALLBACK or HML_ON_ERROR_FAIL (FALLBACK for a
 * NULL region). An exit handler uses it to tell data lost under the fail
 * policy, an error, from a loss already warned about. */
HML_EXTERN hml_on_error hml_region_on_error(const hml_region *r);

/** The region's label. Owned by the region. */
HML_EXTERN const char *hml_region_label(const hml_region *r);

/**
 * The open region labelled `label` (the one opened last, if several are),
 * or NULL if none is open. Borrowed: it stays its opener's, valid until
 * freed. For a program whose regions come from directives (hml-cc(1)),
 * which holds no handle: hml_mode_name(hml_region_mode(hml_region_find("x")))
 * is the mode in effect ("off" before the region first runs).
 */
HML_EXTERN hml_region *hml_region_find(const char *label);

/** "off", "collect", "infer", "interleave", "shadow"; NULL for others. */
HML_EXTERN const char *hml_mode_name(hml_mode mode);

/** Parse a mode name; HML_EINVALID (with a message) if unknown. */
HML_EXTERN int hml_mode_parse(hml_mode *out, const char *name);

/** Counters and accumulated seconds of one region. */
typedef struct hml_region_stats {
	uint64_t calls;          /**< begin/end pairs */
	uint64_t original_calls; /**< calls where the original code ran */
	uint64_t model_calls;    /**< calls whose outputs came from the model */
	uint64_t shadow_calls;   /**< calls where both ran and were compared */
	uint64_t fallback_calls; /**< calls that wanted the model but ran the original */
	uint64_t rows_in;        /**< input rows collected */
	uint64_t rows_out;       /**< output rows collected */
	double region_s;         /**< begin entry to end exit, all calls */
	double gather_s;         /**< application memory -> tensors */
	double forward_s;        /**< model forward passes */
	double scatter_s;        /**< tensors -> application memory */
	double original_s;       /**< the original code */
	double write_s;          /**< collection: buffering and HDF5 writes */
	double shadow_rmse;      /**< RMSE of model vs original over shadowed calls */
	double shadow_max_abs;   /**< largest absolute model error seen in shadow */
	uint64_t nonfinite_calls; /**< calls whose model outputs held NaN or Inf
	                               (never scattered; also fallback calls under
	                               the fallback policy) */
	uint64_t checked_rows;    /**< rows the guard (HML_GUARD) checked */
	uint64_t guarded_rows;    /**< of those, rows it sent to the original code */
	uint64_t guarded_calls;   /**< calls (row calls: rows) with a guarded row */
	uint64_t guard_whole_calls; /**< of those, calls whose every row ran the
	                               original code: the region does not iterate
	                               over hml_region_rows() */
	double guard_s;           /**< checking rows */
	uint64_t agreed_calls;    /**< calls whose model answered here but which ran the
	                               original code because another process did
	                               (hml_region_set_agree) */
	double collect_outside_s; /**< collection outside the calls: loading HDF5 and
	                               probing the file (hml_region_open), flushing
	                               the rows (hml_region_flush, and at exit),
	                               closing the file (hml_region_free) */
} hml_region_stats;

/**
 * Copy the region's statistics into `*out`, whose size is `size`: the
 * sizeof(hml_region_stats) of the header the caller was built with. Fields
 * are only ever added at the end of hml_region_stats, so a program built
 * against an older header gets the fields it knows and nothing is written
 * past them. A size below HML_REGION_STATS_SIZE_V1 (the first version's:
 * up to nonfinite_calls) is HML_EINVALID. Write hml_region_stats_get(r,
 * &st), which passes sizeof st.
 */
HML_EXTERN int hml_region_stats_get_sized(const hml_region *r, hml_region_stats *out,
                                          size_t size);
#define HML_REGION_STATS_SIZE_V1 offsetof(hml_region_stats, checked_rows)
/** The whole struct of this header (the function of that name is the same
 *  for programs built before the sized form existed). */
HML_EXTERN int hml_region_stats_get(const hml_region *r, hml_region_stats *out);
#define hml_region_stats_get(r, out) hml_region_stats_get_sized((r), (out), sizeof(*(out)))

/** Severity passed to a log handler. */
typedef enum hml_log_level { HML_LOG_WARNING = 1, HML_LOG_INFO = 2 } hml_log_level;

typedef void (*hml_log_fn)(hml_log_level level, const char *message, void *payload);

/**
 * Route the runtime's warnings (and the HML_PROFILE=1 table) to `fn`. The
 * default handler writes "hml: warning: MESSAGE" lines to stderr; NULL
 * restores it. This is the only output the runtime produces by itself.
 */
HML_EXTERN void hml_set_log_handler(hml_log_fn fn, void *payload);

#ifdef __cplusplus
}
#endif
#endif
