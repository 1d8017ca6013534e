#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "core/collection.h"
#include "core/collection_vds.h"
#include "core/error.h"
#include "core/h5util.h"
#include "core/util.h"
#include "sys/interrupt.h"
#include "train/dataset.h"

/* Rows read per HDF5 call: bounded by bytes too, so that whole-field rows
 * do not make one read hundreds of megabytes. */
#define SLAB_ROWS_MAX 65536
#define SLAB_BYTES ((int64_t)8 << 20)
/* Rows times features of one side, as elements: kept below what both
 * size_t byte counts and HDF5's hsize_t selections hold with room. */
#define ELEMENTS_MAX ((int64_t)1 << 60)

enum { IN = HML__COLL_IN, OUT = HML__COLL_OUT };

static const char *const *const side_name = hml__coll_side_name;

/* One region group of an open file. `rows` are the complete rows: the
 * shorter side, and no more than the calls table accounts for when the
 * group has one (a collector killed in a flush can leave rows past it). */
typedef struct {
	hid_t group, dset[2];
	int ndim[2];
	int64_t shape[2][HML_MAX_DIMS];
	int64_t features[2];
	hml_dtype dtype[2];
	int64_t calls, rows;
	double per_row;   /* median seconds per row of the original code; NaN */
} region;

static void region_init(region *r)
{
	memset(r, 0, sizeof(*r));
	r->group = r->dset[IN] = r->dset[OUT] = H5I_INVALID_HID;
}

static void region_close(region *r)
{
	int i;

	for (i = 0; i < 2; i++)
		if (r->dset[i] >= 0)
			H5Dclose(r->dset[i]);
	if (r->group >= 0)
		H5Gclose(r->group);
	region_init(r);
}

/* Open `input` or `output` and check that its rows are usable: rank 1 to
 * HML_MAX_DIMS + 1, float or double, no empty feature dimension. */
static int open_side(region *r, const char *path, const char *label, int side,
                     int64_t *extent)
{
	hml__coll_data info;
	int rc, d;

	if ((rc = hml__coll_data_open(&r->dset[side], &info, r->group, path, label,
	                              side)) < 0)
		return rc;
	if (info.rank < 1 || info.rank > HML_MAX_DIMS + 1)
		return hml__error_set(HML_EINVALID,
			"'%s': region '%s': %s has rank %d (1 to %d allowed)",
			path, label, side_name[side], info.rank, HML_MAX_DIMS + 1);
	if (!(r->dtype[side] = info.dtype))
		return hml__error_set(HML_EINVALID,
			"'%s': region '%s': %s is %s data, not float32 or float64",
			path, label, side_name[side], info.type_name);
	r->ndim[side] = info.ndim;
	r->features[side] = 1;
	for (d = 0; d < info.ndim; d++) {
		if (info.shape[d] <= 0 || info.shape[d] > INT32_MAX)
			return hml__error_set(HML_EINVALID,
				"'%s': region '%s': %s dim %d is %llu", path, label,
				side_name[side], d + 1, (unsigned long long)info.shape[d]);
		r->shape[side][d] = info.shape[d];
		if (r->features[side] > ELEMENTS_MAX / info.shape[d])
			return hml__error_set(HML_EINVALID,
				"'%s': region '%s': %s rows are too large", path,
				label, side_name[side]);
		r->features[side] *= info.shape[d];
	}
	if (info.rows > ELEMENTS_MAX / r->features[side])
		return hml__error_set(HML_EINVALID, "'%s': region '%s': %s is too large",
		                      path, label, side_name[side]);
	*extent = info.rows;
	return 0;
}

/* Deflate's largest compression ratio is 1032:1; a little above it. */
#define DEFLATE_RATIO_MAX 1100.0

/* The rows side `side` declares must be stored in the file: HDF5 returns
 * fill values for chunks never written, so a damaged or foreign file could
 * otherwise size the reader's arrays from its extents alone. Every row a
 * file accounts for was written, so without filters the bytes stored hold
 * the rows (chunks are allocated whole, with no slack needed);
 * with deflate, at most DEFLATE_RATIO_MAX times as many; shuffle and
 * fletcher32 add nothing; under any other filter there is no bound. */
static int check_stored(const region *r, int side, const char *path, const char *label)
{
	hid_t dcpl;
	double ratio = 1.0, need, stored;
	int nf, i;

	/* A view of several files (an MPI run's ranks) stores nothing itself:
	 * its parts are checked instead. */
	if ((i = hml__coll_vds_check(r->dset[side], path, label, side_name[side])) != 0)
		return i < 0 ? i : 0;
	if ((dcpl = H5Dget_create_plist(r->dset[side])) < 0)
		return hml__h5_error(HML_EIO, "cannot read '%s/%s' in '%s'", label,
		                     side_name[side], path);
	nf = H5Pget_nfilters(dcpl);
	for (i = 0; i < nf; i++) {
		unsigned flags;
		size_t nelm = 0;
		H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &nelm, NULL, 0, NULL, NULL);

		if (id == H5Z_FILTER_DEFLATE)
			ratio = DEFLATE_RATIO_MAX;
		else if (id != H5Z_FILTER_SHUFFLE && id != H5Z_FILTER_FLETCHER32)
			ratio = INFINITY;
	}
	H5Pclose(dcpl);
	need = (double)r->rows * (double)r->features[side] * (r->dtype[side] == HML_F32 ? 4.0 : 8.0);
	stored = (double)H5Dget_storage_size(r->dset[side]);
	if (nf < 0 || isinf(ratio) || need <= ratio * stored)
		return 0;
	return hml__error_set(HML_EINVALID, "'%s/%s' in '%s' is damaged: it declares %lld rows "
	                      "(%.3g MB) but stores %.0f bytes", label, side_name[side], path,
	                      (long long)r->rows, need / 1e6, stored);
}

/* The rows of `calls` and, when it is a table of the collector's records,
 * the input and output rows its last record accounts for (*limited = 1). */
static int read_calls(region *r, const char *path, const char *label,
                      int64_t accounted[2], int *limited)
{
	const hml__call_record *rec;
	hml__coll_calls info;
	hid_t dset = H5I_INVALID_HID;
	int rc;

	r->calls = 0;
	r->per_row = NAN;
	*limited = 0;
	if ((rc = hml__coll_has(r->group, path, label, HML__COLL_CALLS)) <= 0)
		return rc;
	if ((rc = hml__coll_calls_open(&dset, &info, r->group, path, label)) < 0)
		return rc;
	rc = hml__coll_calls_per_row(dset, &info, path, label, &r->per_row);
	H5Dclose(dset);
	if (rc < 0)
		return rc;
	/* Anything but a one-dimensional table is not the collector's. */
	r->calls = info.ncalls;
	if (!info.table || !info.fields)
		return 0;
	*limited = 1;
	rec = &info.last;
	if (rec->input_offset < 0 || rec->input_rows < 0 || rec->output_offset < 0 ||
	    rec->output_rows < 0 || rec->input_offset > INT64_MAX - rec->input_rows ||
	    rec->output_offset > INT64_MAX - rec->output_rows)
		return hml__error_set(HML_EIO,
			"region '%s' in '%s' is damaged: its last call record is invalid",
			label, path);
	accounted[IN] = rec->input_offset + rec->input_rows;
	accounted[OUT] = rec->output_offset + rec->output_rows;
	return 0;
}

static int region_open(region *r, hid_t file, const char *path, const char *label)
{
	int64_t extent[2] = { 0, 0 }, accounted[2] = { 0, 0 };
	int rc, i, limited;

	region_init(r);
	if ((r->group = H5Gopen2(file, label, H5P_DEFAULT)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot open region '%s' in '%s'", label, path);
		goto done;
	}
	for (i = 0; i < 2; i++)
		if ((rc = open_side(r, path, label, i, &extent[i])) < 0)
			goto done;
	if ((rc = read_calls(r, path, label, accounted, &limited)) < 0)
		goto done;
	for (i = 0; i < 2; i++)
		if (limited && accounted[i] < extent[i])
			extent[i] = accounted[i];
	r->rows = extent[IN] < extent[OUT] ? extent[IN] : extent[OUT];
	for (i = 0; i < 2; i++)
		if ((rc = check_stored(r, i, path, label)) < 0)
			goto done;
done:
	if (rc < 0)
		region_close(r);
	return rc;
}

/* ---- the labels of a file ---------------------------------------------- */

typedef struct {
	char **labels;
	size_t n, cap;
	int rc;
	const char *path;
} label_list;

static void labels_free(char **labels, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(labels[i]);
	free(labels);
}

/* HDF5 1.12 gave link callbacks a new info struct; `type` is in both. */
#if H5_VERSION_GE(1, 12, 0)
typedef H5L_info2_t link_info;
#else
typedef H5L_info_t link_info;
#endif

/* Open `name` when it is a group; H5I_INVALID_HID otherwise. */
static hid_t open_group(hid_t loc, const char *name)
{
	hid_t obj = H5Oopen(loc, name, H5P_DEFAULT);

	if (obj < 0 || H5Iget_type(obj) == H5I_GROUP)
		return obj;
	H5Oclose(obj);
	return H5I_INVALID_HID;
}

/* A group holding both `input` and `output`; anything else is skipped.
 * External links are never followed: they would open other files. */
static herr_t add_label(hid_t root, const char *name, const link_info *info,
                        void *payload)
{
	label_list *l = payload;
	hid_t group;
	int in, out;
	char **p;

	if (info->type == H5L_TYPE_EXTERNAL)
		return 0;
	if ((group = open_group(root, name)) < 0)
		return 0;       /* not a group, or a dangling soft link */
	in = hml__coll_has(group, l->path, name, side_name[IN]);
	out = in > 0 ? hml__coll_has(group, l->path, name, side_name[OUT]) : 0;
	H5Gclose(group);
	if (in < 0 || out < 0) {
		l->rc = in < 0 ? in : out;
		return -1;
	}
	if (!in || !out)
		return 0;
	if (l->n == l->cap) {
		if (!(p = realloc(l->labels, (l->cap ? 2 * l->cap : 8) * sizeof(*p)))) {
			l->rc = hml__error_oom();
			return -1;
		}
		l->labels = p;
		l->cap = l->cap ? 2 * l->cap : 8;
	}
	if (!(l->labels[l->n] = hml__strdup(name))) {
		l->rc = HML_ENOMEM;
		return -1;
	}
	l->n++;
	return 0;
}

/* The region labels of an open file, in name order. */
static int list_labels(hid_t file, const char *path, char ***labels, size_t *n)
{
	label_list l = { NULL, 0, 0, 0, path };
	hsize_t idx = 0;

	*labels = NULL;
	*n = 0;
	if (H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, &idx, add_label, &l) < 0 &&
	    l.rc == 0)
		l.rc = hml__h5_error(HML_EIO, "cannot list the groups of '%s'", path);
	if (l.rc < 0) {
		labels_free(l.labels, l.n);
		return l.rc;
	}
	*labels = l.labels;
	*n = l.n;
	return 0;
}

/* ---- region_info --------------------------------------------------------- */

void hml__region_info_free(hml__region_info *infos, size_t n)
{
	size_t i;

	if (!infos)
		return;
	for (i = 0; i < n; i++) {
		free(infos[i].label);
		free(infos[i].input_functor);
		free(infos[i].output_functor);
	}
	free(infos);
}

int hml__region_info_list(const char *path, hml__region_info **out, size_t *n)
{
	hml__region_info *infos = NULL, *p;
	char **labels = NULL;
	size_t nlabels = 0, i, done_n = 0;
	hid_t file = H5I_INVALID_HID;
	region r;
	int rc;

	region_init(&r);
	if (!out || !n)
		return hml__error_set(HML_EINVALID, "region list output is NULL");
	*out = NULL;
	*n = 0;
	if ((rc = hml__h5_open_ro(&file, path)) < 0)
		goto done;
	if ((rc = list_labels(file, path, &labels, &nlabels)) < 0)
		goto done;
	if (nlabels && !(infos = calloc(nlabels, sizeof(*infos)))) {
		rc = hml__error_oom();
		goto done;
	}
	for (i = 0; i < nlabels; i++) {
		if ((rc = region_open(&r, file, path, labels[i])) < 0)
			goto done;
		p = &infos[i];
		done_n = i + 1;
		p->label = labels[i];
		labels[i] = NULL;
		p->rows = r.rows;
		p->calls = r.calls;
		p->original_per_row = r.per_row;
		p->in_ndim = r.ndim[IN];
		p->out_ndim = r.ndim[OUT];
		memcpy(p->in_shape, r.shape[IN], sizeof(p->in_shape));
		memcpy(p->out_shape, r.shape[OUT], sizeof(p->out_shape));
		p->in_dtype = r.dtype[IN];
		p->out_dtype = r.dtype[OUT];
		if ((rc = hml__coll_attr_text(r.group, hml__coll_attr_functor[IN],
		                              &p->input_functor)) < 0 ||
		    (rc = hml__coll_attr_text(r.group, hml__coll_attr_functor[OUT],
		                              &p->output_functor)) < 0 ||
		    (rc = hml__coll_sampling_get(r.group, path, p->label, &p->sampling)) < 0)
			goto done;
		p->sampled = rc;
		rc = 0;
		region_close(&r);
	}
	*out = infos;
	*n = nlabels;
	infos = NULL;
done:
	region_close(&r);
	hml__region_info_free(infos, done_n);
	labels_free(labels, nlabels);
	if (file >= 0)
		H5Fclose(file);
	return rc;
}

/* ---- loading --------------------------------------------------------------- */

void hml__dataset_release(hml__dataset *d)
{
	if (!d)
		return;
	free(d->x);
	free(d->y);
	free(d->run);
	free(d->call);
	memset(d, 0, sizeof(*d));
}

/* HML_ENOTFOUND naming the regions the file does have; 0 when it has none. */
static int no_region(hid_t file, const char *path, const char *label)
{
	char list[320];
	char **labels = NULL;
	size_t n = 0, i, len = 0;
	int rc;

	if ((rc = list_labels(file, path, &labels, &n)) < 0)
		return rc;
	list[0] = '\0';
	for (i = 0; i < n && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
		                        i ? ", " : "", labels[i]);
	if (len >= sizeof(list))
		strcpy(list + sizeof(list) - 4, "...");
	labels_free(labels, n);
	if (n == 0)
		return 0;
	return hml__error_set(HML_ENOTFOUND, "'%s' has no region '%s' (it has: %s)",
	                      path, label, list);
}

/* Whether `label` names a region group of `file` (1), or not (0). */
static int has_region(hid_t file, const char *path, const char *label)
{
	link_info linfo;
	htri_t exists;
	hid_t group;
	int in, out;

	/* A label with '/' would be taken as a path into the file. */
	if (!hml__coll_label_ok(label))
		return 0;
	if ((exists = H5Lexists(file, label, H5P_DEFAULT)) < 0)
		return hml__h5_error(HML_EIO, "cannot read '%s'", path);
	if (!exists || H5Lget_info(file, label, &linfo, H5P_DEFAULT) < 0 ||
	    linfo.type == H5L_TYPE_EXTERNAL || (group = open_group(file, label)) < 0)
		return 0;
	in = hml__coll_has(group, path, label, side_name[IN]);
	out = in > 0 ? hml__coll_has(group, path, label, side_name[OUT]) : 0;
	H5Gclose(group);
	if (in < 0 || out < 0)
		return in < 0 ? in : out;
	return in > 0 && out > 0;
}

static int grow(float **p, int64_t rows, int64_t features)
{
	float *q;

	if (rows > ELEMENTS_MAX / (features ? features : 1) ||
	    (uint64_t)(rows * features) > SIZE_MAX / sizeof(float))
		return hml__error_oom();
	if (rows == 0)
		return 0;
	if (!(q = realloc(*p, (size_t)(rows * features) * sizeof(float))))
		return hml__error_oom();
	*p = q;
	return 0;
}

/* Read rows [first, first + count) of one side into `dst` as float32. The
 * memory space has the file selection's shape: HDF5 1.10 maps a selection
 * onto a memory space of another shape element by element, 8x slower. */
static int read_rows(const region *r, int side, const char *path,
                     const char *label, int64_t first, int64_t count, float *dst)
{
	hsize_t start[HML_MAX_DIMS + 1], cnt[HML_MAX_DIMS + 1];
	hid_t fspace = H5I_INVALID_HID, mspace = H5I_INVALID_HID;
	int rc = 0, d;

	start[0] = (hsize_t)first;
	cnt[0] = (hsize_t)count;
	for (d = 0; d < r->ndim[side]; d++) {
		start[d + 1] = 0;
		cnt[d + 1] = (hsize_t)r->shape[side][d];
	}
	if ((fspace = H5Dget_space(r->dset[side])) < 0 ||
	    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0 ||
	    (mspace = H5Screate_simple(r->ndim[side] + 1, cnt, NULL)) < 0 ||
	    H5Dread(r->dset[side], H5T_NATIVE_FLOAT, mspace, fspace, H5P_DEFAULT,
	            dst) < 0)
		rc = hml__h5_error(HML_EIO, "cannot read '%s/%s' in '%s'",
		                   label, side_name[side], path);
	if (mspace >= 0)
		H5Sclose(mspace);
	if (fspace >= 0)
		H5Sclose(fspace);
	return rc;
}

static int64_t count_nonfinite(const float *v, int64_t n)
{
	int64_t i, bad = 0;

	for (i = 0; i < n; i++)
		bad += !isfinite(v[i]);
	return bad;
}

/* Check the rows just read at row `at` of `d` (there are `count`),
 * counting the values and rows that are not finite, and with `drop` move
 * the finite ones down over the others. Returns the rows kept. */
static int64_t screen(hml__dataset *d, int64_t at, int64_t count, int drop,
                      int64_t *bad_rows, int64_t *bad_values)
{
	const int64_t fi = d->in_features, fo = d->out_features;
	int64_t i, kept = at, bad;

	for (i = at; i < at + count; i++) {
		bad = count_nonfinite(d->x + i * fi, fi) +
		      count_nonfinite(d->y + i * fo, fo);
		if (bad) {
			*bad_rows += 1;
			*bad_values += bad;
			if (drop)
				continue;
		}
		if (kept != i) {
			memcpy(d->x + kept * fi, d->x + i * fi, (size_t)fi * sizeof(float));
			memcpy(d->y + kept * fo, d->y + i * fo, (size_t)fo * sizeof(float));
			if (d->run) {
				d->run[kept] = d->run[i];
				d->call[kept] = d->call[i];
			}
		}
		kept++;
	}
	return kept - at;
}

static int shape_mismatch(const char *path, const char *first, const char *label,
                          int side, const region *r, const hml__dataset *d)
{
	char have[160], want[160];

	hml__format_shape(have, sizeof(have), r->shape[side], r->ndim[side]);
	if (side == IN)
		hml__format_shape(want, sizeof(want), d->in_shape, d->in_ndim);
	else
		hml__format_shape(want, sizeof(want), d->out_shape, d->out_ndim);
	return hml__error_set(HML_ESHAPE, "'%s': region '%s' %s is %s but '%s' has %s",
	                      path, label, side_name[side], have, first, want);
}

static int same_shape(const int64_t *a, int na, const int64_t *b, int nb)
{
	int i;

	if (na != nb)
		return 0;
	for (i = 0; i < na; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* ---- call order ------------------------------------------------------------ */

/* The call order of a file's rows (hml__dataset's run and call). */
typedef struct {
	int64_t *run, *call;   /* r.rows each, or NULL: no row's order is known */
	int64_t runs;          /* run numbers the file used (largest + 1) */
} file_order;

/* A record that stands for one call of one row, paired in both sides. */
static int one_row_call(const hml__call_record *c, int64_t rows)
{
	return c->input_rows == 1 && c->output_rows == 1 && c->ncalls == 1 &&
	       c->input_offset == c->output_offset && c->input_offset >= 0 &&
	       c->input_offset < rows && c->run >= 0 && c->run < INT32_MAX && c->call >= 0;
}

/* Read the `calls` table of r, when it is the collector's, into o: the run
 * and call of every row a record of one row stands for. Rows of row
 * regions (records of many rows) have no order; o->run stays NULL when no
 * row has one, so that those data sets cost no memory for it. */
static int read_order(const region *r, const char *path, const char *label, file_order *o)
{
	hml__call_record *recs = NULL;
	hml__coll_calls info;
	hid_t dset = H5I_INVALID_HID, type = H5I_INVALID_HID;
	int64_t k, n = 0;
	int rc;

	memset(o, 0, sizeof(*o));
	if ((rc = hml__coll_has(r->group, path, label, HML__COLL_CALLS)) <= 0)
		return rc;
	if ((rc = hml__coll_calls_open(&dset, &info, r->group, path, label)) < 0)
		return rc;
	if (info.fields < 2 || !info.table || info.ncalls <= 0)
		goto done;
	if ((uint64_t)info.ncalls > SIZE_MAX / sizeof(*recs) ||
	    !(recs = malloc((size_t)info.ncalls * sizeof(*recs)))) {
		rc = hml__error_oom();
		goto done;
	}
	for (k = 0; k < info.ncalls; k++)
		recs[k].ncalls = 1;   /* files made before the field */
	if ((type = hml__coll_calls_type(info.has_ncalls)) < 0 ||
	    H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, recs) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read '%s/calls' in '%s'", label, path);
		goto done;
	}
	for (k = 0; k < info.ncalls; k++)
		n += one_row_call(&recs[k], r->rows);
	if (n == 0 || r->rows == 0)
		goto done;
	if (!(o->run = malloc((size_t)r->rows * sizeof(int64_t))) ||
	    !(o->call = malloc((size_t)r->rows * sizeof(int64_t)))) {
		rc = hml__error_oom();
		goto done;
	}
	for (k = 0; k < r->rows; k++) {
		o->run[k] = 0;
		o->call[k] = -1;
	}
	for (k = 0; k < info.ncalls; k++)
		if (one_row_call(&recs[k], r->rows)) {
			o->run[recs[k].input_offset] = recs[k].run;
			o->call[recs[k].input_offset] = recs[k].call;
			if (recs[k].run >= o->runs)
				o->runs = recs[k].run + 1;
		}
done:
	free(recs);
	if (type >= 0)
		H5Tclose(type);
	H5Dclose(dset);
	if (rc < 0) {
		free(o->run);
		free(o->call);
		memset(o, 0, sizeof(*o));
	}
	return rc;
}

/* d's order arrays grown to `rows`, made (earlier rows: no order) on the
 * first file that has an order. */
static int order_grow(hml__dataset *d, int64_t rows)
{
	int64_t *p, old = d->rows, i;

	if ((uint64_t)rows > SIZE_MAX / sizeof(int64_t))
		return hml__error_oom();
	if (!(p = realloc(d->run, (size_t)(rows ? rows : 1) * sizeof(int64_t))))
		return hml__error_oom();
	d->run = p;
	if (!(p = realloc(d->call, (size_t)(rows ? rows : 1) * sizeof(int64_t))))
		return hml__error_oom();
	if (!d->call)
		for (i = 0; i < old; i++) {
			d->run[i] = -1;
			p[i] = -1;
		}
	d->call = p;
	return 0;
}

/* Append the region's rows of one file to `d`. A file with no region at
 * all (a collection that stopped before its first write) adds no rows;
 * *first is the file that set the shapes, NULL until one has. */
static int load_file(hml__dataset *d, const char *path, const char **first,
                     const char *label, hml__nonfinite policy, int64_t *run_base)
{
	hid_t file = H5I_INVALID_HID;
	int64_t slab, at, count, bad_rows = 0, bad_values = 0, k;
	file_order order = { NULL, NULL, 0 };
	region r;
	int rc;

	region_init(&r);
	if ((rc = hml__h5_open_ro(&file, path)) < 0)
		goto done;
	if ((rc = has_region(file, path, label)) < 0)
		goto done;
	if (rc == 0) {
		rc = no_region(file, path, label);
		goto done;
	}
	if ((rc = region_open(&r, file, path, label)) < 0)
		goto done;
	if (!*first) {
		*first = path;
		d->in_ndim = r.ndim[IN];
		d->out_ndim = r.ndim[OUT];
		memcpy(d->in_shape, r.shape[IN], sizeof(d->in_shape));
		memcpy(d->out_shape, r.shape[OUT], sizeof(d->out_shape));
		d->in_features = r.features[IN];
		d->out_features = r.features[OUT];
	} else if (!same_shape(r.shape[IN], r.ndim[IN], d->in_shape, d->in_ndim)) {
		rc = shape_mismatch(path, *first, label, IN, &r, d);
		goto done;
	} else if (!same_shape(r.shape[OUT], r.ndim[OUT], d->out_shape, d->out_ndim)) {
		rc = shape_mismatch(path, *first, label, OUT, &r, d);
		goto done;
	}
	if (r.rows > INT64_MAX - d->rows) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = grow(&d->x, d->rows + r.rows, d->in_features)) < 0 ||
	    (rc = grow(&d->y, d->rows + r.rows, d->out_features)) < 0 ||
	    (rc = read_order(&r, path, label, &order)) < 0 ||
	    ((order.run || d->run) && (rc = order_grow(d, d->rows + r.rows)) < 0))
		goto done;
	slab = SLAB_BYTES / (int64_t)sizeof(float) /
	       (d->in_features > d->out_features ? d->in_features : d->out_features);
	if (slab < 1)
		slab = 1;
	if (slab > SLAB_ROWS_MAX)
		slab = SLAB_ROWS_MAX;
	for (at = 0; at < r.rows; at += count) {
		count = r.rows - at < slab ? r.rows - at : slab;
		/* SIGINT/SIGTERM in the CLI: a file of gigabytes is not read to
		 * its end first. */
		if (hml__interrupt_pending()) {
			rc = hml__error_set(HML_ERROR, "interrupted while reading '%s'", path);
			goto done;
		}
		if ((rc = read_rows(&r, IN, path, label, at, count,
		                    d->x + d->rows * d->in_features)) < 0 ||
		    (rc = read_rows(&r, OUT, path, label, at, count,
		                    d->y + d->rows * d->out_features)) < 0)
			goto done;
		for (k = 0; d->run && k < count; k++) {
			d->run[d->rows + k] = order.run ? *run_base + order.run[at + k] : -1;
			d->call[d->rows + k] = order.run ? order.call[at + k] : -1;
		}
		d->rows += screen(d, d->rows, count, policy == HML__NONFINITE_DROP,
		                  &bad_rows, &bad_values);
	}
	d->nonfinite_rows += bad_rows;
	d->nonfinite_values += bad_values;
	*run_base += order.runs;
	if (bad_rows && policy != HML__NONFINITE_DROP)
		rc = hml__error_set(HML_EINVALID,
			"region '%s': %lld rows hold NaN or Inf (%lld values) in '%s'; "
			"use --nonfinite drop to drop them", label, (long long)bad_rows,
			(long long)bad_values, path);
done:
	free(order.run);
	free(order.call);
	region_close(&r);
	if (file >= 0)
		H5Fclose(file);
	return rc;
}

static int no_rows(const char *const *paths, size_t n, const char *label)
{
	char list[400];
	size_t i, len = 0;

	list[0] = '\0';
	for (i = 0; i < n && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s'%s'",
		                        i ? ", " : "", paths[i]);
	if (len >= sizeof(list))
		strcpy(list + sizeof(list) - 4, "...");
	return hml__error_set(HML_EINVALID, "region '%s' has no data rows in %s",
	                      label, list);
}

int hml__dataset_load(hml__dataset *d, const char *const *paths, size_t n,
                      const char *label, hml__nonfinite policy)
{
	const char *first = NULL;
	int64_t run_base = 0, *q;
	float *p;
	size_t i;
	int rc = 0;

	if (!d)
		return hml__error_set(HML_EINVALID, "data set is NULL");
	memset(d, 0, sizeof(*d));
	if (!paths || n == 0)
		return hml__error_set(HML_EINVALID, "no data files to load");
	if (!label || !*label)
		return hml__error_set(HML_EINVALID, "region label is empty");
	if (policy != HML__NONFINITE_DROP && policy != HML__NONFINITE_ERROR)
		return hml__error_set(HML_EINVALID, "unknown NaN/Inf policy %d",
		                      (int)policy);
	for (i = 0; i < n; i++)
		if ((rc = load_file(d, paths[i], &first, label, policy, &run_base)) < 0)
			goto done;
	if (d->rows == 0) {
		rc = no_rows(paths, n, label);
		goto done;
	}
	/* Dropped rows leave room at the end: give it back (a failure to
	 * shrink keeps the larger block, which is as good). */
	if (d->nonfinite_rows) {
		if ((p = realloc(d->x, (size_t)(d->rows * d->in_features) * sizeof(float))))
			d->x = p;
		if ((p = realloc(d->y, (size_t)(d->rows * d->out_features) * sizeof(float))))
			d->y = p;
		if (d->run && (q = realloc(d->run, (size_t)d->rows * sizeof(*q))))
			d->run = q;
		if (d->call && (q = realloc(d->call, (size_t)d->rows * sizeof(*q))))
			d->call = q;
	}
done:
	if (rc < 0)
		hml__dataset_release(d);
	return rc;
}
