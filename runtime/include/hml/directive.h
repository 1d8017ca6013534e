/*
 * hml/directive.h - the calls `hml translate` (hml cc, hml-cc(1)) emits for
 * `#pragma hml ml`, `#pragma approx ml` and `#pragma hml qoi`. Not for
 * hand-written code: a program written by hand uses hml/region.h and
 * hml/qoi.h, of which these are a thin layer.
 *
 * A translated file holds, per directive, a static hml_dir_site (zeroed
 * storage, its type from here), the arrays and maps of that execution, and
 * the calls below. The site and its entries are the translated program's
 * storage: libhml links a site into its list on first use and keeps the
 * regions it opens there until the process exits. The struct layouts are
 * part of libhml's ABI (a change bumps its SOVERSION); translate again after
 * an upgrade of the major version.
 *
 * Errors. Every function returns a negative HML_E* code on failure, with
 * hml_error_last()->message the whole line the program prints after
 * "hml: error: ": "FILE:LINE: region 'LABEL': what", or "FILE:LINE: what"
 * where no region is concerned. The library neither prints nor exits on
 * these paths: the translation carries a few lines of its own,
 * hml__dir_ck(), that print the line and exit(1) when a call fails — they
 * stand in for the error handling the user did not write, and they stay in
 * the user's file so that libhml keeps its rule and the file includes
 * <stdio.h> only at its end (after the user's feature macros took effect).
 *
 * The one exception is process exit, where no caller is left to return to.
 * libhml's own exit handler (the one that writes every region's collected
 * data and the profile) first writes what the directive sites' regions
 * still buffer and frees them. A site region whose data is lost then under
 * HML_ON_ERROR=fail makes the handler print, on stderr,
 * "hml: error: FILE:LINE: region 'LABEL': collected data lost at exit: why"
 * (one line per region), flush the streams and end the process with
 * _Exit(1): the exit status is the only place left to report it. Under the
 * fallback policy the loss is warned about through the log handler, as for
 * every region, and the status is left alone.
 *
 * Thread safety: a row site (hml_dir_row_begin) may be called from many
 * threads at once; a batch site (hml_dir_begin) from one thread at a time.
 */
#ifndef HML_DIRECTIVE_H
#define HML_DIRECTIVE_H

#include "hml/common.h"
#include "hml/error.h"
#include "hml/region.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Labels one site may open (a label() expression that varies). */
#define HML_DIR_LABELS 8
/** Room for a label, with its '\0'. */
#define HML_DIR_LABEL_MAX 128
/** Symbols (lengths) of one directive, and arrays of one row call. */
#define HML_DIR_SYMS 64
/** A pointer's first extent in an emitted shape: unknown, not checked. */
#define HML_DIR_ROWS ((int64_t)1 << 40)

/** One map of a directive: a functor applied to `narrays` arrays. */
typedef struct hml_dir_map {
	int kind;                 /**< 0 input, 1 output, 2 both (in place) */
	const char *functor;      /**< the functor text */
	const char *domain;       /**< its domain, "" for the default */
	hml_array *arrays;        /**< borrowed for the call */
	size_t narrays;
} hml_dir_map;

/** The region of one label at a site (libhml's; read it only through
 * the calls). */
typedef struct hml_dir_entry {
	char label[HML_DIR_LABEL_MAX];
	hml_region *r;            /**< NULL until the first call, and after exit */
	int64_t sig[HML_DIR_SYMS];/**< the symbols' values it was bound with */
	size_t nsig;
} hml_dir_entry;

/** One directive of a translated file: static storage, zeroed. */
typedef struct hml_dir_site {
	const char *where;        /**< "FILE:LINE" of the directive (static string) */
	struct hml_dir_site *next;/**< libhml's list of sites, for the exit */
	int n, registered;        /**< entries made; linked into the list */
	int subset;               /**< over(): the loop can run over hml_region_rows() */
	hml_dir_entry *cur;       /**< the entry of the call in progress (batch sites) */
	hml_dir_entry e[HML_DIR_LABELS]; /**< row sites: e[0..n) published, n read atomically */
} hml_dir_site;

/**
 * Fill `*a` (caller's storage) with array `name` at `data` (borrowed) of
 * `dt` and shape d0..d3 (the first `ndim` used). `dt` 0 is the translation's
 * mark of an element type the region cannot take: HML_EINVALID,
 * "WHERE: array 'NAME' is not of float, double, int32_t or int64_t".
 */
HML_EXTERN int hml_dir_array(hml_array *a, const char *where, const char *name,
                             const void *data, hml_dtype dt, int ndim, int64_t d0,
                             int64_t d1, int64_t d2, int64_t d3);

/**
 * Begin one execution of the batch site `s` (s->where set by the caller)
 * under `label`. The first call of a label opens its region: the
 * directive's `mode`, `model` and `db` (each NULL: none) are defaults that
 * HML_MODE[_<LABEL>], HML_MODEL[_<LABEL>], HML_DB and then HPAC-ML's
 * SURROGATE_MODEL and HPAC_DB_FILE override; `interleave` > 0 and
 * `shadow` > 0 likewise, under HML_INTERLEAVE and HML_SHADOW; a model mode
 * with no model anywhere runs the original code. The maps are bound with
 * the symbols `sym`; a later call with other symbol values flushes and
 * frees the region and binds it anew, one with the same values points the
 * maps at this call's arrays. `seek` >= 0: hml_region_seek() to that row.
 * `use_model` 0 sends this call down the original code.
 * Returns what hml_region_begin_if() returns (nonzero: run the original
 * code), or a negative code: a label missing or of HML_DIR_LABEL_MAX bytes
 * or more, more than HML_DIR_SYMS symbols, more than HML_DIR_LABELS labels
 * at the site (HML_EINVALID), or any failure of the runtime's calls.
 */
HML_EXTERN int hml_dir_begin(hml_dir_site *s, const char *label, const char *mode,
                             int use_model, const char *model, const char *db,
                             int interleave, double shadow, const hml_dir_map *maps,
                             size_t nmaps, const hml_symbol *sym, size_t nsym,
                             int64_t seek);

/** End the execution hml_dir_begin() began: hml_region_end(). */
HML_EXTERN int hml_dir_end(hml_dir_site *s);

/** The rows of the execution in progress that the loop runs (an over()
 * site whose region a guard kept rows of from the model: hml_region_rows());
 * their count, or a negative code. *idx is borrowed until hml_dir_end(). */
HML_EXTERN int64_t hml_dir_rows(hml_dir_site *s, const int64_t **idx);

/**
 * Begin one row call at row site `s` (`where`: its "FILE:LINE"), any
 * thread: as hml_dir_begin() for opening, then hml_region_row_begin_at()
 * with this row's addresses (the inputs' arrays, then the outputs'). The
 * entry used is stored in `*out`, to be handed to hml_dir_row_end(). A row
 * site keeps the symbols it was opened with (other threads may be inside a
 * row): other values are HML_EINVALID ("a length of a directive inside a
 * loop body changed between calls ..."), except in off mode, which reads
 * none; more than HML_DIR_SYMS arrays is HML_EINVALID too.
 */
HML_EXTERN int hml_dir_row_begin(hml_dir_site *s, hml_dir_entry **out, const char *where,
                                 const char *label, const char *mode, int use_model,
                                 const char *model, const char *db, int interleave,
                                 double shadow, const hml_dir_map *maps, size_t nmaps,
                                 const hml_symbol *sym, size_t nsym);

/** End this thread's row call of entry `e` (from hml_dir_row_begin()). */
HML_EXTERN int hml_dir_row_end(hml_dir_site *s, hml_dir_entry *e);

/**
 * Record quantity of interest `name`: hml_qoi_write() of `data` (borrowed)
 * of `dt` and shape d0..d3 (the first `ndim`). `dt` 0: HML_EINVALID
 * "WHERE: quantity of interest 'NAME': the array is not of ...".
 */
HML_EXTERN int hml_dir_qoi(const char *where, const char *name, const void *data,
                           hml_dtype dt, int ndim, int64_t d0, int64_t d1, int64_t d2,
                           int64_t d3);

/**
 * Record the slice of an array as quantity of interest `name`: its rows
 * gathered into one block (elements of `size` bytes), then hml_dir_qoi().
 * `q` holds twelve values: the array's extents (HML_DIR_ROWS: the first
 * one unknown), the slice's starts, and its extents, four of each, `ndim`
 * (1 to 4) of each used. A slice outside the array is HML_ERANGE ("the
 * slice LO:HI of dimension K is not inside the array's extent N").
 */
HML_EXTERN int hml_dir_qoi_slice(const char *where, const char *name, const void *data,
                                 hml_dtype dt, size_t size, int ndim, const int64_t *q);

#ifdef __cplusplus
}
#endif

#endif
