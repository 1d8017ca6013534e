/*
 * runtime/src/collect_internal.h - the collector's state and the file
 * helpers that collect.c (the calls, the flushes) and collect_sample.c
 * (sampling, the reservoir's writes) share (internal to the collector).
 */
#ifndef HML_RUNTIME_COLLECT_INTERNAL_H
#define HML_RUNTIME_COLLECT_INTERNAL_H

#include <hdf5.h>

#include "collect.h"
#include "core/collection.h"
#include "sample.h"

enum { IN = HML__COLL_IN, OUT = HML__COLL_OUT };

#define side_name hml__coll_side_name

typedef struct {
	unsigned char *p;
	size_t len, cap;
	size_t touched;   /* bytes from p on written at least once (collect.c) */
} buffer;

struct hml__collector {
	char *path, *label;
	char *functor[2], *arrays[2], *domain[2];
	hml_dtype dtype[2];
	int ndim[2];
	int64_t shape[2][HML_MAX_DIMS];
	size_t row_bytes[2];
	size_t flush_bytes;
	double flush_seconds, last_flush;
	int64_t run, calls, rows;
	/* Not yet written: rows of each side, and one record per call whose
	 * offsets count from the start of the buffer until a flush adds the
	 * rows already in the file. */
	buffer buf[2];
	int64_t buf_rows[2];
	/* Rows placed by hml__collector_next() for the call not yet
	 * committed (after the buffered ones), -1 when none. */
	int64_t next_rows[2];
	hml__call_record *recs;
	size_t nrecs, caprecs;
	hml__coll_compression z;
	int64_t chunk_rows;   /* most rows per chunk (0: by bytes only) */
	/* Sampling (NULL: every row kept); the group's counts from earlier
	 * runs; where the reservoir's rows and record go in the file (rec
	 * -1 before its first write), and the time of the calls it saw. */
	hml__sampler *sampler;
	hml__coll_sampling base;
	int64_t res_at[2], res_rec;
	double res_seconds;
};

/* The HDF5 objects of one region's group while the file is open. `dims`
 * are the rows the data sets hold, `rows` those that the calls table
 * accounts for: a process killed in the middle of a flush can leave rows
 * beyond them, which the next flush overwrites. */
typedef struct {
	hid_t group, data[2], calls;
	int64_t dims[2], rows[2], ncalls;
	int has_ncalls;    /* the calls table has the `ncalls` field */
} h5set;

void hml__h5set_init(h5set *s);
void hml__h5set_close(h5set *s);

/* Open the region's group in `file`, creating what is missing; an existing
 * group is checked completely before anything is added to it. `runs` is
 * the count written into a group created here (*created = 1). */
int hml__collector_attach(const hml__collector *c, hid_t file, h5set *s, int64_t runs,
                          int *created);

/* Open HML_DB for writing: never through a FIFO, device or symbolic link. */
int hml__collector_open_rw(hid_t *file, const char *path);

/* Close the file; a failure to write what it held becomes rc if rc is 0. */
int hml__collector_close_file(const hml__collector *c, hid_t file, int rc);

/* ---- collect_sample.c ---- */

/* Pass the call's placed rows through the sampler: 1 when some are left to
 * record (*seconds scaled to them), 0 when none (the calls counted),
 * negative on failure (the rows dropped). */
int hml__collector_sample(hml__collector *c, int64_t ncalls, double *seconds);

/* The group's sample_* attributes: earlier runs' counts plus this run's. */
int hml__collector_put_sampling(const hml__collector *c, hid_t group);

/* The reservoir's rows and one record for the run, over those of the
 * previous write, and the sampling attributes. */
int hml__collector_write_reservoir(hml__collector *c);

#endif
