/*
 * tests/unit/fixtures.h - what several unit tests set up alike, in one
 * copy: a temporary directory and paths in it, small file helpers, the
 * seeded random numbers and in-memory data sets of the model tests
 * (cmodel, export, train, arch), and the known rows and calls table of the
 * collected-data tests (collect, collection, dataset).
 *
 *   int main(void) { if (tmp_dir_make("collect") < 0) return 1;
 *                    RUN(...); tmp_dir_remove(); return check_report(); }
 *
 * Everything is static inline (a test uses what it needs, unused parts
 * cost nothing and warn of nothing). The data-set part is compiled where
 * the test can see lib/train/dataset.h (it links hml_train), the calls
 * table's type where it included <hdf5.h> before this file.
 */
#ifndef HML_TEST_FIXTURES_H
#define HML_TEST_FIXTURES_H

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/rng.h"

#if defined(__has_include)
#  if __has_include("train/dataset.h")
#    include "train/dataset.h"
#    define FIXTURES_DATASET 1
#  endif
#endif

/* ---- the temporary directory --------------------------------------------- */

/* HML_TEST_TMP/<name>-XXXXXX (/tmp/... outside ctest), once made. */
static char tmpdir[512];
static char **fixture_paths_;
static size_t fixture_npaths_;

/* Make tmpdir; -1 (with a line on stderr) when it cannot be made. */
static inline int tmp_dir_make(const char *name)
{
	const char *base = getenv("HML_TEST_TMP");

	snprintf(tmpdir, sizeof(tmpdir), "%s/%s-XXXXXX", base && *base ? base : "/tmp", name);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return -1;
	}
	return 0;
}

/* "tmpdir/name", valid until tmp_dir_remove(); nothing is created. */
static inline const char *tmp_path(const char *name)
{
	size_t n = strlen(tmpdir) + strlen(name) + 2;
	char **grown = realloc(fixture_paths_, (fixture_npaths_ + 1) * sizeof(*grown));
	char *p = malloc(n);

	if (!grown || !p) {
		fprintf(stderr, "out of memory for a temporary path\n");
		exit(1);
	}
	fixture_paths_ = grown;
	snprintf(p, n, "%s/%s", tmpdir, name);
	return fixture_paths_[fixture_npaths_++] = p;
}

/* rm -rf `path`, without a shell and without following links (a read-only
 * directory is made writable first). */
static inline void rm_rf(const char *path)
{
	struct stat st;
	struct dirent *e;
	DIR *d;

	if (lstat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	chmod(path, 0700);
	if ((d = opendir(path)) != NULL) {
		while ((e = readdir(d)) != NULL) {
			size_t n = strlen(path) + strlen(e->d_name) + 2;
			char *p;

			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
			    !(p = malloc(n)))
				continue;
			snprintf(p, n, "%s/%s", path, e->d_name);
			rm_rf(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(path);
}

/* Remove tmpdir with everything in it; the paths of tmp_path() go too. */
static inline void tmp_dir_remove(void)
{
	rm_rf(tmpdir);
	for (size_t i = 0; i < fixture_npaths_; i++)
		free(fixture_paths_[i]);
	free(fixture_paths_);
	fixture_paths_ = NULL;
	fixture_npaths_ = 0;
}

/* ---- files ------------------------------------------------------------------ */

/* Something is at `path` (a link counts, whatever it points at). */
static inline int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* The bytes of `path` (malloc'ed, one more allocated) and their count in
 * *len; NULL (and 0) when it cannot be read. */
static inline unsigned char *slurp(const char *path, size_t *len)
{
	unsigned char *buf = NULL;
	FILE *f = fopen(path, "rb");
	long n;

	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL) {
		if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		} else {
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

/* The text of `path` (malloc'ed), or NULL when it cannot be read. */
static inline char *read_text(const char *path)
{
	size_t n;
	unsigned char *b = slurp(path, &n);

	if (b)
		b[n] = '\0';
	return (char *)b;
}

/* Write `text` to `path`; a fixture that cannot be written ends the test. */
static inline void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* write_text(), then the file's mode set to `mode`; the test ends if
 * either fails. */
static inline void write_text_mode(const char *path, const char *text, mode_t mode)
{
	write_text(path, text);
	if (chmod(path, mode) != 0) {
		perror(path);
		exit(1);
	}
}

/* Entries of `dir` whose name starts with ".tmp-" (atomic writes' leftovers). */
static inline int count_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) != NULL)
		if (strncmp(e->d_name, ".tmp-", 5) == 0)
			n++;
	if (d)
		closedir(d);
	return n;
}

/* ---- the model tests' numbers and data sets -------------------------------- */

/* Uniform in [lo, hi) from splitmix64 (core/rng.h): the same numbers in
 * every test and on every machine. */
static inline double uniform(uint64_t *s, double lo, double hi)
{
	return lo + (hi - lo) * hml__rng_uniform(s);
}

#ifdef FIXTURES_DATASET
/* d's row shapes and feature counts (nothing allocated). */
static inline void dataset_shape(hml__dataset *d, int in_ndim, const int64_t *in,
                                 int out_ndim, const int64_t *out)
{
	d->in_ndim = in_ndim;
	d->out_ndim = out_ndim;
	d->in_features = d->out_features = 1;
	for (int i = 0; i < in_ndim; i++)
		d->in_features *= (d->in_shape[i] = in[i]);
	for (int i = 0; i < out_ndim; i++)
		d->out_features *= (d->out_shape[i] = out[i]);
}

/* A data set of `rows` zero rows of those shapes (free with
 * hml__dataset_release()). */
static inline void dataset_zeros(hml__dataset *d, int64_t rows, int in_ndim, const int64_t *in,
                                 int out_ndim, const int64_t *out)
{
	memset(d, 0, sizeof(*d));
	d->rows = rows;
	dataset_shape(d, in_ndim, in, out_ndim, out);
	d->x = calloc((size_t)(d->rows * d->in_features), sizeof(float));
	d->y = calloc((size_t)(d->rows * d->out_features), sizeof(float));
}
#endif

/* ---- the collected-data tests' rows ------------------------------------------ */

/* The rows that call `call` of a run collects on side 0 (inputs) or 1
 * (outputs), and the value at (row, k) of run `run`: exact in float32 (an
 * integer below 2^24 plus a half), as tests/python/check_collect.py
 * expects them. */
static inline int64_t collected_rows(int side, int64_t call)
{
	return side == 0 ? 1 + call % 3 : 1 + (call + 1) % 2;
}

static inline double collected_value(int side, int64_t run, int64_t call, int64_t row, int64_t k)
{
	return 0.5 * side + 200000.0 * (double)run + 1000.0 * (double)(call % 4096) +
	       100.0 * (double)row + (double)k;
}

/* The seconds of the original code that the call records. */
static inline double collected_seconds(int64_t run, int64_t call)
{
	return (double)run + 0.001 * (double)call;
}

#ifdef H5_VERS_MAJOR   /* <hdf5.h> included first */
/* A record of a region's calls table as the collector writes it: the
 * layout of core/collection.h restated, so that the tests check it rather
 * than share it. */
typedef struct collected_call {
	int64_t run, call, input_offset, input_rows, output_offset, output_rows;
	double original_seconds;
} collected_call;

/* Its HDF5 type (H5Tclose() it). */
static inline hid_t collected_calls_type(void)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(collected_call));

	H5Tinsert(t, "run", HOFFSET(collected_call, run), H5T_NATIVE_INT64);
	H5Tinsert(t, "call", HOFFSET(collected_call, call), H5T_NATIVE_INT64);
	H5Tinsert(t, "input_offset", HOFFSET(collected_call, input_offset), H5T_NATIVE_INT64);
	H5Tinsert(t, "input_rows", HOFFSET(collected_call, input_rows), H5T_NATIVE_INT64);
	H5Tinsert(t, "output_offset", HOFFSET(collected_call, output_offset), H5T_NATIVE_INT64);
	H5Tinsert(t, "output_rows", HOFFSET(collected_call, output_rows), H5T_NATIVE_INT64);
	H5Tinsert(t, "original_seconds", HOFFSET(collected_call, original_seconds),
	          H5T_NATIVE_DOUBLE);
	return t;
}
#endif

#endif
