/*
 * lib/core/collection_vds.c - the files of an MPI run's ranks as one
 * collection file, through HDF5 virtual data sets (collection_vds.h).
 *
 * Two passes: every part is read and checked first (a part is in the view
 * whole or not at all), then the view is written from what was read, so a
 * part that turns out bad never leaves half a mapping behind.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collection.h"
#include "core/collection_vds.h"
#include "core/error.h"
#include "core/h5util.h"
#include "core/util.h"

/* One region of one part. */
typedef struct piece {
	char *label;
	size_t part;
	hid_t type[2];              /* file types of input and output */
	hml__coll_data d[2];
	int64_t rows[2];            /* complete rows: what the calls cover */
	hml__call_record *recs;
	int64_t nrecs, runs;
	char *text[2][3];           /* functor, arrays, domain */
} piece;

typedef struct pieces {
	piece *p;
	size_t n, cap;
} pieces;

static void piece_release(piece *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->type[i] > 0)
			H5Tclose(p->type[i]);
		for (int k = 0; k < 3; k++)
			free(p->text[i][k]);
	}
	free(p->recs);
	free(p->label);
	memset(p, 0, sizeof(*p));
}

#if H5_VERSION_GE(1, 12, 0)
typedef H5L_info2_t link_info;
#else
typedef H5L_info_t link_info;
#endif

static herr_t add_name(hid_t g, const char *name, const link_info *info, void *data)
{
	pieces *ps = data;
	piece *grown;

	(void)g;
	(void)info;
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? 2 * ps->cap : 8;
		if (!(grown = realloc(ps->p, ps->cap * sizeof(*grown))))
			return -1;
		ps->p = grown;
	}
	memset(&ps->p[ps->n], 0, sizeof(ps->p[0]));
	if (!(ps->p[ps->n].label = hml__strdup(name)))
		return -1;
	ps->n++;
	return 0;
}

/* The calls of a region: all records, and the rows they cover. */
static int read_calls(piece *p, hid_t group, const char *path)
{
	hml__coll_calls ci;
	hid_t dset = H5I_INVALID_HID, type = H5I_INVALID_HID;
	int rc, i;

	if ((rc = hml__coll_has(group, path, p->label, HML__COLL_CALLS)) <= 0)
		return rc < 0 ? rc : hml__error_set(HML_EINVALID,
			"region '%s' of '%s' has no calls table", p->label, path);
	if ((rc = hml__coll_calls_open(&dset, &ci, group, path, p->label)) < 0)
		return rc;
	if (ci.fields < 2 || !ci.table) {
		rc = hml__error_set(HML_EINVALID, "'%s/calls' in '%s' is not a table of calls",
		                    p->label, path);
		goto done;
	}
	p->nrecs = ci.ncalls;
	if (!(p->recs = calloc((size_t)p->nrecs + 1, sizeof(*p->recs)))) {
		rc = hml__error_oom();
		goto done;
	}
	for (int64_t k = 0; k < p->nrecs; k++)
		p->recs[k].ncalls = 1;   /* files made before the field */
	if (p->nrecs > 0 && ((type = hml__coll_calls_type(ci.has_ncalls)) < 0 ||
	    H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, p->recs) < 0)) {
		rc = hml__h5_error(HML_EIO, "cannot read '%s/calls' in '%s'", p->label, path);
		goto done;
	}
	p->rows[0] = ci.last.input_offset + ci.last.input_rows;
	p->rows[1] = ci.last.output_offset + ci.last.output_rows;
	for (i = 0; i < 2; i++)
		if (p->rows[i] < 0 || p->rows[i] > p->d[i].rows) {
			rc = hml__error_set(HML_EINVALID, "'%s/calls' in '%s' points past the "
				"%lld %s rows", p->label, path, (long long)p->d[i].rows,
				hml__coll_side_name[i]);
			goto done;
		}
done:
	if (type >= 0)
		H5Tclose(type);
	if (dset >= 0)
		H5Dclose(dset);
	return rc;
}

static int read_piece(piece *p, hid_t file, const char *path)
{
	hid_t group = H5I_INVALID_HID, dset;
	int rc = 0, i;

	if ((group = H5Gopen2(file, p->label, H5P_DEFAULT)) < 0)
		return hml__h5_error(HML_EIO, "cannot read region '%s' in '%s'", p->label, path);
	for (i = 0; i < 2 && rc == 0; i++) {
		dset = H5I_INVALID_HID;
		if ((rc = hml__coll_data_open(&dset, &p->d[i], group, path, p->label, i)) < 0)
			break;
		if (!p->d[i].dtype || p->d[i].rank < 1 || p->d[i].rank > HML_MAX_DIMS + 1)
			rc = hml__error_set(HML_EINVALID, "'%s/%s' in '%s' is not rows of floats "
				"(%s)", p->label, hml__coll_side_name[i], path, p->d[i].type_name);
		else if ((p->type[i] = H5Dget_type(dset)) < 0)
			rc = hml__h5_error(HML_EIO, "cannot read '%s/%s' in '%s'", p->label,
			                   hml__coll_side_name[i], path);
		H5Dclose(dset);
		if (rc == 0 &&
		    ((rc = hml__coll_attr_text(group, hml__coll_attr_functor[i], &p->text[i][0])) < 0 ||
		     (rc = hml__coll_attr_text(group, hml__coll_attr_arrays[i], &p->text[i][1])) < 0 ||
		     (rc = hml__coll_attr_text(group, hml__coll_attr_domain[i], &p->text[i][2])) < 0))
			break;
	}
	if (rc == 0 && (rc = hml__coll_runs_get(group, &p->runs)) == 0)
		rc = read_calls(p, group, path);
	H5Gclose(group);
	return rc;
}

/* A region of a later part must have the rows of the earlier ones. */
static int same_rows(const piece *a, const piece *b, const char *apath, const char *bpath)
{
	for (int i = 0; i < 2; i++) {
		int same = a->d[i].dtype == b->d[i].dtype && a->d[i].ndim == b->d[i].ndim;

		for (int k = 0; same && k < a->d[i].ndim; k++)
			same = a->d[i].shape[k] == b->d[i].shape[k];
		if (!same)
			return hml__error_set(HML_ESHAPE, "region '%s' of '%s' has %s %s rows of "
				"%d dims, not %s rows of %d dims as in '%s'", b->label, bpath,
				b->d[i].type_name, hml__coll_side_name[i], b->d[i].ndim,
				a->d[i].type_name, a->d[i].ndim, apath);
	}
	return 0;
}

/* Read part k's regions onto `all`; on failure nothing of it stays. */
static int scan_part(pieces *all, const hml__coll_vds_part *parts, size_t k)
{
	hid_t file = H5I_INVALID_HID;
	size_t first = all->n, i, j;
	hsize_t idx = 0;
	int rc;

	if ((rc = hml__h5_open_ro(&file, parts[k].path)) < 0)
		goto done;
	if (H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, &idx, add_name, all) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read '%s'", parts[k].path);
		goto done;
	}
	for (i = first; i < all->n && rc == 0; i++) {
		all->p[i].part = k;
		if ((rc = read_piece(&all->p[i], file, parts[k].path)) < 0)
			break;
		for (j = 0; j < first && rc == 0; j++)
			if (strcmp(all->p[j].label, all->p[i].label) == 0)
				rc = same_rows(&all->p[j], &all->p[i], parts[all->p[j].part].path,
				               parts[k].path);
	}
done:
	if (file >= 0)
		H5Fclose(file);
	if (rc < 0) {
		for (i = first; i < all->n; i++)
			piece_release(&all->p[i]);
		all->n = first;
	}
	return rc;
}

/* How the view names a part: its bare name when it is in out's directory. */
static const char *source_name(const char *out, const char *part)
{
	const char *os = strrchr(out, '/'), *ps = strrchr(part, '/');
	size_t od = os ? (size_t)(os - out) : 0, pd = ps ? (size_t)(ps - part) : 0;

	if (od == pd && strncmp(out, part, od) == 0)
		return ps ? ps + 1 : part;
	return part;
}

/* H5Pset_virtual() reads '%' in names as a printf-like mapping ("%b"):
 * a literal one is "%%". */
static void escape(char *buf, size_t size, const char *s)
{
	size_t n = 0;

	for (; *s && n + 3 < size; s++) {
		if (*s == '%')
			buf[n++] = '%';
		buf[n++] = *s;
	}
	buf[n] = '\0';
}

/* Side i of region `label`: a virtual data set over the pieces' rows. */
static int write_side(hid_t group, const char *out, const hml__coll_vds_part *parts,
                      piece *const *ps, size_t n, int i)
{
	const piece *a = ps[0];
	hsize_t dims[HML_MAX_DIMS + 1], sdims[HML_MAX_DIMS + 1];
	hsize_t start[HML_MAX_DIMS + 1] = { 0 }, count[HML_MAX_DIMS + 1];
	hid_t vspace = H5I_INVALID_HID, sspace = H5I_INVALID_HID, dcpl = H5I_INVALID_HID;
	hid_t dset = H5I_INVALID_HID;
	char src[512], name[4096], full[256];
	int rank = a->d[i].ndim + 1, rc = 0;
	int64_t total = 0;

	for (size_t k = 0; k < n; k++)
		total += ps[k]->rows[i];
	dims[0] = (hsize_t)total;
	for (int d = 1; d < rank; d++)
		dims[d] = (hsize_t)a->d[i].shape[d - 1];
	snprintf(full, sizeof(full), "/%s/%s", a->label, hml__coll_side_name[i]);
	escape(src, sizeof(src), full);
	if ((vspace = H5Screate_simple(rank, dims, NULL)) < 0 ||
	    (dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 || H5Pset_obj_track_times(dcpl, 0) < 0)
		goto fail;
	for (size_t k = 0; k < n; k++) {
		if (ps[k]->rows[i] == 0)
			continue;
		memcpy(count, dims, sizeof(count));
		memcpy(sdims, dims, sizeof(sdims));
		count[0] = (hsize_t)ps[k]->rows[i];
		sdims[0] = (hsize_t)ps[k]->d[i].rows;
		start[0] = 0;
		if ((sspace = H5Screate_simple(rank, sdims, NULL)) < 0 ||
		    H5Sselect_hyperslab(sspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0)
			goto fail;
		for (size_t j = 0; j < k; j++)
			start[0] += (hsize_t)ps[j]->rows[i];
		escape(name, sizeof(name), parts[ps[k]->part].name ? parts[ps[k]->part].name
		                           : source_name(out, parts[ps[k]->part].path));
		if (H5Sselect_hyperslab(vspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
		    H5Pset_virtual(dcpl, vspace, name, src, sspace) < 0)
			goto fail;
		H5Sclose(sspace);
		sspace = H5I_INVALID_HID;
	}
	if (H5Sselect_all(vspace) < 0 ||
	    (dset = H5Dcreate2(group, hml__coll_side_name[i], a->type[i], vspace, H5P_DEFAULT,
	                       dcpl, H5P_DEFAULT)) < 0)
		goto fail;
	goto done;
fail:
	rc = hml__h5_error(HML_EIO, "cannot create '%s/%s' in '%s'", a->label,
	                   hml__coll_side_name[i], out);
done:
	if (dset >= 0)
		H5Dclose(dset);
	if (sspace >= 0)
		H5Sclose(sspace);
	if (dcpl >= 0)
		H5Pclose(dcpl);
	if (vspace >= 0)
		H5Sclose(vspace);
	return rc;
}

/* The pieces' calls, one after the other, moved to the view's rows and runs. */
static int write_calls(hid_t group, const char *out, piece *const *ps, size_t n)
{
	hml__call_record *all = NULL;
	hid_t dset = H5I_INVALID_HID, type = H5I_INVALID_HID;
	int64_t total = 0, at = 0, in = 0, outr = 0, runs = 0;
	int rc;

	for (size_t k = 0; k < n; k++)
		total += ps[k]->nrecs;
	if (!(all = calloc((size_t)total + 1, sizeof(*all))))
		return hml__error_oom();
	for (size_t k = 0; k < n; k++) {
		for (int64_t r = 0; r < ps[k]->nrecs; r++, at++) {
			all[at] = ps[k]->recs[r];
			all[at].run += runs;
			all[at].input_offset += in;
			all[at].output_offset += outr;
		}
		in += ps[k]->rows[0];
		outr += ps[k]->rows[1];
		runs += ps[k]->runs;
	}
	if ((rc = hml__coll_calls_create(&dset, group, out, ps[0]->label, 0)) < 0)
		goto done;
	if ((type = hml__coll_calls_type(1)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot write '%s/calls' to '%s'", ps[0]->label, out);
		goto done;
	}
	if (total > 0)
		rc = hml__coll_rows_write(dset, out, ps[0]->label, HML__COLL_CALLS, type, 0, 0,
		                          total, 0, NULL, all);
done:
	if (type >= 0)
		H5Tclose(type);
	if (dset >= 0)
		H5Dclose(dset);
	free(all);
	return rc;
}

/* Region ps[0]->label of the view, from its n pieces. */
static int write_region(hid_t file, const char *out, const hml__coll_vds_part *parts,
                        piece *const *ps, size_t n)
{
	hml__coll_meta meta;
	hid_t group = H5I_INVALID_HID;
	int64_t runs = 0;
	int rc, i;

	for (i = 0; i < 2; i++) {
		meta.functor[i] = ps[0]->text[i][0] ? ps[0]->text[i][0] : "";
		meta.arrays[i] = ps[0]->text[i][1] ? ps[0]->text[i][1] : "";
		meta.domain[i] = ps[0]->text[i][2] ? ps[0]->text[i][2] : "";
		meta.dtype[i] = ps[0]->d[i].dtype;
	}
	for (size_t k = 0; k < n; k++)
		runs += ps[k]->runs;
	if ((rc = hml__coll_group_create(&group, file, out, ps[0]->label, &meta, runs)) < 0)
		return rc;
	for (i = 0; i < 2 && rc == 0; i++)
		rc = write_side(group, out, parts, ps, n, i);
	if (rc == 0)
		rc = write_calls(group, out, ps, n);
	H5Gclose(group);
	return rc;
}

static int write_view(const char *out, const hml__coll_vds_part *parts, pieces *all)
{
	piece **ps = calloc(all->n + 1, sizeof(*ps));
	hid_t file = H5I_INVALID_HID;
	int rc;

	if (!ps)
		return hml__error_oom();
	if ((rc = hml__h5_open_rw(&file, out)) < 0)
		goto done;
	for (size_t i = 0; i < all->n && rc == 0; i++) {
		size_t n = 0, j;

		for (j = 0; j < i; j++)
			if (strcmp(all->p[j].label, all->p[i].label) == 0)
				break;
		if (j < i)   /* written with its first piece */
			continue;
		for (j = i; j < all->n; j++)
			if (strcmp(all->p[j].label, all->p[i].label) == 0)
				ps[n++] = &all->p[j];
		rc = write_region(file, out, parts, ps, n);
	}
	if (H5Fclose(file) < 0 && rc == 0)
		rc = hml__h5_error(HML_EIO, "cannot write '%s'", out);
done:
	free(ps);
	return rc;
}

int hml__coll_vds_build(const char *out, hml__coll_vds_part *parts, size_t nparts,
                        size_t *nused)
{
	pieces all = { NULL, 0, 0 };
	size_t used = 0, k;
	int rc = 0;

	*nused = 0;
	hml__h5_init();
	for (k = 0; k < nparts; k++) {
		parts[k].used = 0;
		parts[k].why[0] = '\0';
		if (scan_part(&all, parts, k) < 0) {
			snprintf(parts[k].why, sizeof(parts[k].why), "%s", hml_error_last()->message);
			continue;
		}
		parts[k].used = 1;
		used++;
	}
	if (used == 0) {
		rc = hml__error_set(HML_ENOTFOUND, "none of the %zu files can be read%s%s", nparts,
		                    nparts ? ": " : "", nparts ? parts[0].why : "");
		goto done;
	}
	if ((rc = write_view(out, parts, &all)) == 0)
		*nused = used;
done:
	for (k = 0; k < all.n; k++)
		piece_release(&all.p[k]);
	free(all.p);
	return rc;
}

/* Undo escape(); a "%b" (never written here) is kept as it is. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '%' && s[1] == '%')
			s++;
		*w++ = *s;
	}
	*w = '\0';
}

/* Mapping k of the view's dcpl: its part open, and the bytes it maps there
 * stored. */
static int check_mapping(hid_t dcpl, size_t k, const char *path, const char *what,
                         size_t elem)
{
	char file[4096], dname[512], *full = NULL;
	hid_t src = H5I_INVALID_HID, f = H5I_INVALID_HID, d = H5I_INVALID_HID;
	hssize_t points;
	int rc = 0;

	if (H5Pget_virtual_filename(dcpl, k, file, sizeof(file)) < 0 ||
	    H5Pget_virtual_dsetname(dcpl, k, dname, sizeof(dname)) < 0 ||
	    (src = H5Pget_virtual_srcspace(dcpl, k)) < 0 ||
	    (points = H5Sget_select_npoints(src)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read %s", what);
		goto done;
	}
	unescape(file);
	unescape(dname);
	if (file[0] != '/' && strrchr(path, '/')) {
		size_t dir = (size_t)(strrchr(path, '/') - path);

		if (!(full = malloc(dir + strlen(file) + 2))) {
			rc = hml__error_oom();
			goto done;
		}
		sprintf(full, "%.*s/%s", (int)dir, path, file);
	}
	if ((rc = hml__h5_open_ro(&f, full ? full : file)) < 0) {
		if (rc == HML_ENOTFOUND)
			rc = hml__error_set(HML_ENOTFOUND, "%s maps rows of '%s', which is missing",
			                    what, full ? full : file);
		goto done;
	}
	if ((d = H5Dopen2(f, dname, H5P_DEFAULT)) < 0) {
		rc = hml__h5_error(HML_EIO, "%s maps rows of '%s' in '%s'", what, dname,
		                   full ? full : file);
		goto done;
	}
	if ((double)H5Dget_storage_size(d) < (double)points * (double)elem)
		rc = hml__error_set(HML_EINVALID, "%s maps rows of '%s', which stores fewer "
		                    "rows than it maps", what, full ? full : file);
done:
	if (d >= 0)
		H5Dclose(d);
	if (f >= 0)
		H5Fclose(f);
	if (src >= 0)
		H5Sclose(src);
	free(full);
	return rc;
}

int hml__coll_vds_check(hid_t dset, const char *path, const char *label, const char *name)
{
	hid_t dcpl = H5Dget_create_plist(dset), type = H5Dget_type(dset);
	char what[512];
	size_t n = 0, elem = type >= 0 ? H5Tget_size(type) : 0;
	int rc = 0;

	snprintf(what, sizeof(what), "'%s/%s' in '%s'", label, name, path);
	if (dcpl < 0 || type < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read %s", what);
		goto done;
	}
	if (H5Pget_layout(dcpl) != H5D_VIRTUAL)
		goto done;
	if (H5Pget_virtual_count(dcpl, &n) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read %s", what);
		goto done;
	}
	for (size_t k = 0; k < n && rc == 0; k++)
		rc = check_mapping(dcpl, k, path, what, elem);
	if (rc == 0)
		rc = 1;
done:
	if (type >= 0)
		H5Tclose(type);
	if (dcpl >= 0)
		H5Pclose(dcpl);
	return rc;
}
