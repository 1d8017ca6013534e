/*
 * runtime/loader/loader.h - the model loader (internal; not installed): the
 * one component that opens hml's run-time plugins and models, linked by
 * libhml, the hml CLI, hml-probe and the benchmarks (target hml_loader),
 * never compiled by path.
 *
 *   - plugins: where hml's run-time loaded plugins lie (hml__plugin_path)
 *     and the one way they are opened (hml__plugin_load). libhml keeps its
 *     heavy dependencies out of every program's start-up: libtorch lives in
 *     libhml-torch.so (backend.h), HDF5 in libhml-hdf5.so
 *     (runtime/src/h5io.h); each is dlopen-ed the first time a region needs
 *     it, found relative to the object holding this code, so no environment
 *     variable is needed in the build tree or in an installed prefix. The
 *     hml CLI does the same for its own: libtorch training
 *     (libhml-cli-train.so), the TorchScript reader of the C code generator
 *     (libhml-cli-export.so), the HDF5 reader of collected data and QoI
 *     files (libhml-cli-hdf5.so), the optimiser's Gaussian processes
 *     (libhml-cli-bo.so: LAPACKE, NLopt, OpenMP) and the MPI relay
 *     (libhml-cli-mpi.so), so that `hml show` starts like a plain C program.
 *   - TorchScript models (hml__model_*): forwarded to a backend loaded at run
 *     time (backend.h): TorchScript runs in libhml-torch.so, dlopen-ed on the
 *     first load, so a process that never loads a model never maps libtorch.
 *     The plugin is looked up in $HML_TORCH_PLUGIN when set (a path; for
 *     tests and for programs that link the runtime statically), else beside
 *     the object that holds this code (libhml.so), else in its hml/
 *     subdirectory (the installed LIBDIR/hml/libhml-torch.so). No C++
 *     exception crosses this interface.
 *   - compiled models (hml__cmodel_*): shared objects made by
 *     `hml deploy --target c` (ABI: hml/cmodel.h). Plain C, no dependency
 *     beyond libc and libdl; shaped like the TorchScript calls so a region
 *     can run either through the same calls. A file is trusted only after
 *     these checks, in this order, none of which runs code from the file: it
 *     is an ELF file; it contains the ABI tag string (so a foreign shared
 *     object is refused before dlopen would run its constructors);
 *     dlopen(RTLD_NOW | RTLD_LOCAL) succeeds; it exports the data symbol
 *     HML_CMODEL_ENTRY (or version 1's HML_CMODEL_V1_ENTRY); the struct
 *     there carries the magic number, ABI version, size and tag of that
 *     version, this runtime's dtype, sane shapes and both forward
 *     pointers. Only then is forward ever called.
 */
#ifndef HML_LOADER_LOADER_H
#define HML_LOADER_LOADER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "hml/common.h"

struct stat;

#ifdef __cplusplus
extern "C" {
#endif

/* ---- plugins ------------------------------------------------------------ */

/**
 * The path of plugin `file` ("libhml-torch.so") into buf: $`env` when
 * `env` is not NULL and that variable is set and not empty; else beside
 * the object holding this code (libhml.so, in the build tree and in
 * LIBDIR); else in its hml/ subdirectory (LIBDIR/hml, where plugins are
 * installed); for an executable that compiles this file in (the hml CLI),
 * the build tree's runtime/ beside its cmd/, or BINDIR/HML__BIN_TO_PLUGIN_DIR.
 * The object's directory is the one its loaded name gives, and, when that
 * name is not absolute (an executable started from PATH as "hml", or as
 * "./hml"), the one /proc/self/exe gives. The first candidate that exists,
 * or the last one (whose dlopen then says what is missing). Never fails;
 * the result is truncated to `size`.
 */
void hml__plugin_path(char *buf, size_t size, const char *file, const char *env);

/*
 * A plugin is a MODULE that exports one entry point, `const T *ENTRY(int
 * abi)`, returning a static table of function pointers when `abi` is its
 * own interface version and NULL otherwise. Every table begins with
 * hml__plugin_head. Its functions return 0 or a negative HML_E* code and
 * leave this thread's one-line message for the table's last_error(), which
 * the caller copies into its own hml error; no C++ exception crosses. A
 * plugin carries its own copy of lib/core's error and utility code and
 * exports nothing but its entry point.
 */
typedef struct hml__plugin_head {
	int abi;          /**< the interface version the plugin was built with */
	size_t size;      /**< sizeof its table in the plugin's build */
} hml__plugin_head;

/** An entry point: the table (hml__plugin_head first), NULL when `abi` is not its own. */
typedef const void *(*hml__plugin_entry)(int abi);

/** What a caller asks of one plugin (static storage). */
typedef struct hml__plugin_spec {
	const char *file;        /**< file name, looked up by hml__plugin_path */
	const char *env;         /**< a variable that may name its path, or NULL */
	const char *entry;       /**< its entry point */
	int abi;                 /**< the interface version asked for */
	size_t size;             /**< the size of the table this caller knows */
	const char *what;        /**< for messages: "the libtorch backend" */
	const char *kind;        /**< "... is not an hml KIND of interface version N" */
	size_t version_at;       /**< offset of the table's version string */
	const char *version_of;  /**< what that is the version of: "libtorch", "hml" */
	const char *(*version)(void);  /**< the version this caller wants: hml_version, ... */
	const char *host;        /**< for messages: "libhml", "hml" */
	int dlflags;             /**< added to RTLD_NOW | RTLD_LOCAL (RTLD_NODELETE, ...) */
	/** Called once with the table after a successful load (may be NULL). */
	void (*loaded)(const void *table);
} hml__plugin_spec;

/** One plugin's state in a process: a static `hml__plugin p = HML__PLUGIN_INIT(spec);`. */
typedef struct hml__plugin {
	const hml__plugin_spec *spec;
	pthread_mutex_t lock;
	int tried;              /**< 1 once the load was tried (read atomically) */
	const void *table;      /**< the table, NULL until loaded or after a failure */
	int rc;                 /**< the failure's HML_E* code */
	char msg[4400];         /**< the failure's message */
} hml__plugin;

#define HML__PLUGIN_INIT(spec) { &(spec), PTHREAD_MUTEX_INITIALIZER, 0, NULL, 0, { 0 } }

/**
 * The table of plugin `p` in *table, the plugin opened on the first call:
 * dlopen(RTLD_NOW | RTLD_LOCAL | spec->dlflags) of hml__plugin_path(file,
 * env), its entry point called with spec->abi, and the table used only when
 * it answers with that interface version, a table at least spec->size
 * large, and the version string at spec->version_at equal to
 * spec->version(). A plugin is loaded once per process and never unloaded
 * (libtorch and HDF5 do not survive dlclose); a failure is remembered and
 * every later call fails the same way, without a second dlopen.
 * Thread-safe. Errors (the hml error set; the message also in p->msg):
 * HML_ENOTFOUND "WHAT cannot be loaded: DLERROR", HML_ENOTSUPPORTED "WHAT
 * 'PATH' is not an hml KIND of interface version N" (no entry point, NULL,
 * another version or a short table: nothing of it is called again) or
 * "WHAT 'PATH' was built with VERSION_OF X, this HOST with Y".
 */
int hml__plugin_load(hml__plugin *p, const void **table);

/** The table of `p` when it is loaded already, else NULL; never loads it. */
const void *hml__plugin_loaded(hml__plugin *p);

/**
 * A plugin function's failure `rc` (< 0; anything else becomes HML_ERROR),
 * re-recorded as this caller's hml error with the plugin's message
 * `message` (its table's last_error()). Returns the code.
 */
int hml__plugin_fail(int rc, const char *message);

/* ---- TorchScript models (backend.h) ------------------------------------- */

typedef struct hml__model hml__model;

/**
 * Load the TorchScript file `path` for inference on the CPU (on the GPU in a
 * HML_WITH_CUDA build when one is present), or a compiled model (an ELF
 * file, hml__cmodel_*). `threads` > 0 sets libtorch's intra-op thread
 * count (process-wide), or a compiled model's threads per forward
 * (hml__cmodel_set_threads). `*out` is yours (hml__model_free).
 * Errors: HML_ENOTFOUND (no such file), HML_EIO (unreadable),
 * HML_EMODEL (not a TorchScript archive, one past the limits of
 * archive.h, checked before libtorch reads it, or no forward method),
 * HML_ENOTFOUND / HML_ENOTSUPPORTED when the libtorch plugin cannot be
 * loaded or is not this build's, HML_ENOTSUPPORTED in a build without
 * libtorch (HML_WITH_TORCH=OFF); the message is "cannot open model 'PATH':
 * REASON".
 */
int hml__model_load(hml__model **out, const char *path, int threads);

/**
 * hml__model_load on the device `device` names: NULL is HML_DEVICE's
 * choice (as hml__model_load), "cpu" the CPU whatever HML_DEVICE says (the
 * CLI's checks and latencies describe the CPU, where the card's figures
 * and compiled models run), "cuda" or "auto" as HML_DEVICE's values.
 */
int hml__model_load_on(hml__model **out, const char *path, int threads, const char *device);

/**
 * Load the libtorch backend now, as the first TorchScript model would, so
 * that a process can limit what loading a model costs beyond libtorch
 * itself (hml's model check, cmd/model_check.c). 0, or the error of
 * hml__model_load's plugin load (HML_ENOTSUPPORTED without libtorch).
 */
int hml__model_torch_prepare(void);

/**
 * Open the model file at `path` for reading, as every model file is
 * opened: without blocking (a FIFO never blocks the open) and accepted
 * only when the open descriptor is a regular file (fstat into *st). The
 * descriptor (>= 0, blocking, close-on-exec) is yours to close. Errors:
 * HML_ENOTFOUND ("cannot open WHAT 'PATH': no such file"), HML_EIO (a
 * directory, unreadable), HML_EINVALID ("...: not a regular file": a
 * FIFO, a device, a socket); nothing is left open.
 */
int hml__model_file_open(const char *path, const char *what, struct stat *st);

void hml__model_free(hml__model *m);

/** Element type of the model's floating-point parameters (F32 if none). */
hml_dtype hml__model_dtype(const hml__model *m);

/**
 * Feature shapes the model declares, if its module has the integer-list
 * attributes `hml_input_shape` / `hml_output_shape` (hml-trained models do;
 * Python models may). Returns the number of dims copied into `shape`
 * (without the leading batch dim), or 0 when the attribute is absent.
 */
int hml__model_declared_input(const hml__model *m, int64_t *shape);
int hml__model_declared_output(const hml__model *m, int64_t *shape);

/**
 * Whether hml__model_forward() reads `dtype` without a converted copy:
 * the model's own dtype, and for a compiled model every dtype
 * hml__cmodel_takes(). 1 or 0.
 */
int hml__model_takes(const hml__model *m, hml_dtype dtype);

/**
 * Run forward on `in` (row-major, `ndim` dims of `shape`, element type
 * `dtype`; the memory is borrowed, not copied, when hml__model_takes()).
 * Runs under torch::NoGradGuard. The result is kept inside the model until
 * the next forward; read it with hml__model_output(). A model that rejects
 * the input fails with HML_ESHAPE or HML_EMODEL naming the input shape.
 */
int hml__model_forward(hml__model *m, const void *in, hml_dtype dtype,
                       int ndim, const int64_t *shape);

/**
 * The last forward's output: a contiguous CPU buffer owned by the model,
 * valid until the next forward or free. `*dtype` is F32 or F64 (other
 * output types are converted to the model dtype by the shim).
 */
int hml__model_output(const hml__model *m, const void **data, hml_dtype *dtype,
                      int *ndim, int64_t *shape);

/**
 * Whether `m` may run on several threads at once through
 * hml__model_forward_into(): 1 for a compiled model, 0 for TorchScript
 * (whose forward keeps its output in the model: one thread at a time).
 */
int hml__model_reentrant(const hml__model *m);

/**
 * Run a reentrant model (hml__model_reentrant()) on `rows` rows of `in`,
 * its outputs to `out` in `dtype` (rows times the output features), with
 * no state kept in the model. Input shapes are not checked here: check
 * them once with hml__model_forward(). HML_ENOTSUPPORTED for a model that
 * is not reentrant.
 */
int hml__model_forward_into(hml__model *m, const void *in, hml_dtype dtype, int64_t rows,
                            void *out);

/**
 * The input statistics a compiled model carries (hml__cmodel_input_stats:
 * the card's "guard" JSON text) into *json, borrowed while `m` is loaded.
 * HML_ENOTSUPPORTED, *json NULL, with the reason: a TorchScript model
 * ("a TorchScript model carries no input statistics ..."), a compiled
 * model of ABI version 1, or one compiled from a card without them.
 */
int hml__model_input_stats(const hml__model *m, const char **json);

/** The name of the backend running `m` ("torch"). Static storage. */
const char *hml__model_backend(const hml__model *m);

/**
 * Load the model at `path` on the CPU, run it once on `rows` rows of x (float32,
 * [rows, *in_shape]) and write its outputs (float32) to y, which holds
 * y_size floats; *per_row (may be NULL) gets the outputs per row. The one
 * way the CLI and the tests run a TorchScript model: through the same
 * backend as applications. HML_ESHAPE when the outputs do not fit in y.
 */
int hml__model_predict_f32(const char *path, const float *x, int64_t rows, int in_ndim,
                           const int64_t *in_shape, float *y, int64_t y_size,
                           int64_t *per_row);

/* ---- compiled models (hml/cmodel.h) ------------------------------------- */

typedef struct hml__cmodel hml__cmodel;

/**
 * 1 when the file at `path` starts like a shared object (ELF magic), so a
 * region should load it with hml__cmodel_load rather than as TorchScript
 * (a zip archive); 0 otherwise or when unreadable.
 */
int hml__cmodel_sniff(const char *path);

/**
 * Load the compiled model at `path`. `*out` is yours (hml__cmodel_free).
 * Errors (message "cannot open compiled model 'PATH': REASON"):
 * HML_ENOTFOUND (no such file), HML_EIO (unreadable), HML_EMODEL (not an
 * ELF file, not a compiled hml model, dlopen failure, missing entry
 * symbol, bad magic), HML_ENOTSUPPORTED (another ABI version or dtype).
 * Every refusal but a dlopen failure comes before dlopen, so a file
 * without the entry symbol runs none of its code (constructors included):
 * see hml__cmodel_elf_check.
 */
int hml__cmodel_load(hml__cmodel **out, const char *path);

/** What an ABI version's object exports (hml/cmodel.h). */
typedef struct hml__cmodel_version {
	unsigned version;       /* 1, 2 or 3 */
	const char *entry;      /* its data symbol, "hml_cmodel_v3" */
	size_t size;            /* sizeof its struct */
	const char *tag;        /* "hml-cmodel-abi-3" */
} hml__cmodel_version;

/** ABI version `abi`'s exports (static storage), or NULL: not one this
 *  runtime reads. The one table of them (cmodel_elf.c). */
const hml__cmodel_version *hml__cmodel_version_of(unsigned abi);

/**
 * Check the ELF file mapped at `map` (`size` bytes, from `path`) without
 * loading it: a 64-bit shared object of this machine whose dynamic symbol
 * table defines the entry symbol of an ABI version this runtime reads
 * (the newest found of HML_CMODEL_ENTRY, HML_CMODEL_V2_ENTRY and
 * HML_CMODEL_V1_ENTRY) as a global data symbol of the size of that
 * version's struct, whose magic number, size and tag (read from the
 * file) are that ABI version's. Every offset read from the file is
 * bounded by `size`. Returns the ABI version found (1 to 3), or
 * HML_EMODEL / HML_ENOTSUPPORTED (another ABI version) with the message
 * "cannot open compiled model 'PATH': REASON (refused without loading it)".
 */
int hml__cmodel_elf_check(const unsigned char *map, size_t size, const char *path);

/** dlclose()s the object. NULL-safe. */
void hml__cmodel_free(hml__cmodel *m);

/**
 * Run the model's forwards on `threads` threads (HML_THREADS; 0: OpenMP's
 * own setting, the default). The model's OpenMP runtime (found through
 * the model, so no OpenMP is linked here) gets the count in the calling
 * thread for the time of each forward, and its former value back after:
 * the application's own parallel regions keep theirs. Returns 1 when the
 * count will be applied, 0 when not (threads 0, or a model built without
 * OpenMP, which runs on one thread).
 */
int hml__cmodel_set_threads(hml__cmodel *m, int threads);

/** The model's arithmetic type: HML_F32. */
hml_dtype hml__cmodel_dtype(const hml__cmodel *m);

/**
 * The per-row feature shapes the model declares (without the batch
 * dimension); returns the number of dims copied into `shape` (room for
 * HML_MAX_DIMS).
 */
int hml__cmodel_declared_input(const hml__cmodel *m, int64_t *shape);
int hml__cmodel_declared_output(const hml__cmodel *m, int64_t *shape);

/** The model id and the SHA-256 of the TorchScript file it came from. Borrowed. */
const char *hml__cmodel_id(const hml__cmodel *m);
const char *hml__cmodel_hash(const hml__cmodel *m);

/** The path it was loaded from. Borrowed. */
const char *hml__cmodel_path(const hml__cmodel *m);

/** The ABI version of the object (hml/cmodel.h): 1 to 3. */
unsigned hml__cmodel_abi(const hml__cmodel *m);

/** The model's input statistics (hml/cmodel.h, version 2's input_stats:
 *  the card's "guard" JSON text), borrowed while the model is loaded;
 *  NULL for a version 1 object or a model compiled without them. */
const char *hml__cmodel_input_stats(const hml__cmodel *m);

/**
 * Whether hml__cmodel_forward() reads `dtype` itself, converting each
 * value where the model reads it: F32 and F64 always, I32 from ABI
 * version 3 (forward_i32). 1 or 0.
 */
int hml__cmodel_takes(const hml__cmodel *m, hml_dtype dtype);

/**
 * Run the model on `in`: `ndim` dims of `shape`, shape[0] the rows, the
 * rest multiplying to the model's input features (row-major, element type
 * `dtype`, one hml__cmodel_takes(); borrowed). The output, in the same
 * dtype (F32 for I32 input), is kept in
 * the model until the next forward (hml__cmodel_output). Errors:
 * HML_ESHAPE "compiled model 'PATH' takes rows of [5], not [4]",
 * HML_EINVALID (bad dtype), HML_ENOMEM.
 */
int hml__cmodel_forward(hml__cmodel *m, const void *in, hml_dtype dtype,
                        int ndim, const int64_t *shape);

/**
 * Run the model on `rows` rows of `in` (F32 or F64, the model's input
 * features each) and write its outputs, in the same dtype, to `out` (rows
 * times the output features). Unlike hml__cmodel_forward() it touches no
 * state of the model: the generated forward functions are thread-safe
 * (hml/cmodel.h), so several threads may call it at once, each with its
 * own buffers (row calls, rows.c). Runs on the calling thread (the model's
 * thread count is not applied). Errors: HML_EINVALID (bad dtype),
 * HML_ENOMEM.
 */
int hml__cmodel_forward_into(const hml__cmodel *m, const void *in, hml_dtype dtype,
                             int64_t rows, void *out);

/**
 * The last forward's output: [rows, *declared output shape], a buffer owned
 * by the model, valid until the next forward or free; `*dtype` is the
 * input's dtype (F32 after an I32 input). HML_EINVALID before any forward.
 */
int hml__cmodel_output(const hml__cmodel *m, const void **data, hml_dtype *dtype,
                       int *ndim, int64_t *shape);

#ifdef __cplusplus
}
#endif
#endif
