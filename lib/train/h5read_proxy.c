/*
 * lib/train/h5read_proxy.c - dataset.h's reader of collected data and
 * lib/core/qoi_file.h's reader of QoI files over the CLI's HDF5 plugin,
 * libhml-cli-hdf5.so (h5read.h).
 *
 * The CLI links no HDF5, so a command that reads no HDF5 file never maps
 * it: the plugin is opened the first time a region list, a data set or a
 * QoI file is read, and stays loaded. Each function forwards to the
 * plugin's function of the same name and turns a failure there into the
 * caller's hml error; freeing what was never read (the plugin not loaded)
 * has nothing to free.
 */
#include <stddef.h>
#include <string.h>

#include "core/error.h"
#include "core/qoi_file.h"
#include "hml/version.h"
#include "loader/loader.h"
#include "sys/interrupt.h"
#include "train/dataset.h"
#include "train/h5read.h"

static void loaded(const void *table)
{
	((const hml__h5read *)table)->set_interrupt(hml__interrupt_pending);
}

static const hml__plugin_spec spec = {
	HML__H5READ_PLUGIN, NULL, HML__H5READ_ENTRY, HML__H5READ_ABI, sizeof(hml__h5read),
	"the HDF5 reader plugin", "plugin", offsetof(hml__h5read, hml_version), "hml",
	hml_version, "hml", 0, loaded
};
static hml__plugin plugin = HML__PLUGIN_INIT(spec);

/* The plugin's table in *t, or the load failure recorded. */
static int h5read(const hml__h5read **t)
{
	const void *table;
	int rc = hml__plugin_load(&plugin, &table);

	*t = table;
	return rc;
}

int hml__region_info_list(const char *path, hml__region_info **out, size_t *n)
{
	const hml__h5read *t;
	int rc;

	if (out)
		*out = NULL;
	if (n)
		*n = 0;
	if ((rc = h5read(&t)) < 0)
		return rc;
	return (rc = t->region_info_list(path, out, n)) < 0 ? hml__plugin_fail(rc, t->last_error()) : rc;
}

void hml__region_info_free(hml__region_info *infos, size_t n)
{
	const hml__h5read *t = hml__plugin_loaded(&plugin);

	if (t)
		t->region_info_free(infos, n);
}

int hml__dataset_load(hml__dataset *d, const char *const *paths, size_t n,
                      const char *label, hml__nonfinite policy)
{
	const hml__h5read *t;
	int rc;

	if (d)
		memset(d, 0, sizeof(*d));
	if ((rc = h5read(&t)) < 0)
		return rc;
	rc = t->dataset_load(d, paths, n, label, policy);
	return rc < 0 ? hml__plugin_fail(rc, t->last_error()) : rc;
}

void hml__dataset_release(hml__dataset *d)
{
	const hml__h5read *t = hml__plugin_loaded(&plugin);

	if (t)
		t->dataset_release(d);
	else if (d)
		memset(d, 0, sizeof(*d));
}

int hml__qoi_file_read(const char *path, const char *name, double **out, size_t *n)
{
	const hml__h5read *t;
	int rc;

	if (out)
		*out = NULL;
	if (n)
		*n = 0;
	if ((rc = h5read(&t)) < 0)
		return rc;
	return (rc = t->qoi_file_read(path, name, out, n)) < 0 ? hml__plugin_fail(rc, t->last_error()) : rc;
}

int hml__qoi_file_read_ranks(const char *path, int ranks, const char *name, double **out,
                             size_t *n)
{
	const hml__h5read *t;
	int rc;

	if (out)
		*out = NULL;
	if (n)
		*n = 0;
	if ((rc = h5read(&t)) < 0)
		return rc;
	rc = t->qoi_file_read_ranks(path, ranks, name, out, n);
	return rc < 0 ? hml__plugin_fail(rc, t->last_error()) : rc;
}

int hml__qoi_file_read_steps(const char *path, const char *name, int64_t **steps, size_t *n)
{
	const hml__h5read *t;
	int rc;

	*steps = NULL;
	*n = 0;
	if ((rc = h5read(&t)) < 0)
		return rc;
	rc = t->qoi_file_read_steps(path, name, steps, n);
	return rc < 0 ? hml__plugin_fail(rc, t->last_error()) : rc;
}

int hml__coll_vds_build(const char *out, hml__coll_vds_part *parts, size_t nparts,
                        size_t *nused)
{
	const hml__h5read *t;
	int rc;

	if (nused)
		*nused = 0;
	if ((rc = h5read(&t)) < 0)
		return rc;
	rc = t->coll_vds_build(out, parts, nparts, nused);
	return rc < 0 ? hml__plugin_fail(rc, t->last_error()) : rc;
}
