/*
 * runtime/src/collect_proxy.c - libhml's collect.h and hml__qoi_file_write()
 * over the HDF5 plugin libhml-hdf5.so (h5io.h).
 *
 * libhml links no HDF5, so a program that does not collect never maps it:
 * the plugin is dlopen-ed the first time a region probes or opens a
 * collection file or the application records a quantity of interest, and
 * stays loaded (HDF5 keeps process-wide state and an exit handler). Each
 * function forwards to the plugin's function of the same name and turns a
 * failure there into this library's hml error. The unit tests link
 * collect.c and qoi_file.c directly instead (hml_testing).
 */
#include <dlfcn.h>
#include <stddef.h>

#include "collect.h"
#include "core/error.h"
#include "core/qoi_file.h"
#include "h5io.h"
#include "hml/version.h"
#include "loader/loader.h"
#include "profile.h"

static const hml__h5io *io;   /* the table, once loaded */

/* HDF5 installed its exit handler when the plugin's entry point ran; the
 * regions' handler must run before it, while HDF5 still works. */
static void loaded(const void *table)
{
	io = table;
	hml__registry_exit_hook();
}

/* Loaded once per process (loader.h, hml__plugin_load); a failure is
 * remembered and reported again. */
static const hml__plugin_spec spec = {
	HML__HDF5_PLUGIN, NULL, HML__HDF5_ENTRY, HML__H5IO_ABI, sizeof(hml__h5io),
	"the HDF5 plugin", "plugin", offsetof(hml__h5io, hml_version), "hml", hml_version,
	"libhml", RTLD_NODELETE, loaded
};
static hml__plugin h5io = HML__PLUGIN_INIT(spec);

/* The plugin's table in *t, or the load failure recorded. */
static int plugin(const hml__h5io **t)
{
	const void *table;
	int rc = hml__plugin_load(&h5io, &table);

	*t = table;
	return rc;
}

/* A failure in the plugin, re-recorded as this library's error. */
static int fail(const hml__h5io *t, int rc)
{
	return hml__plugin_fail(rc, t->last_error());
}

int hml__collector_open(hml__collector **out, const hml__collector_desc *desc)
{
	const hml__h5io *t;
	int rc;

	if (out)
		*out = NULL;
	if ((rc = plugin(&t)) < 0)
		return rc;
	return (rc = t->collector_open(out, desc)) < 0 ? fail(t, rc) : rc;
}

int hml__collector_probe(const char *path)
{
	const hml__h5io *t;
	int rc;

	if ((rc = plugin(&t)) < 0)
		return rc;
	return (rc = t->collector_probe(path)) < 0 ? fail(t, rc) : rc;
}

/* A collector exists only when the plugin was loaded (by its open). */
int hml__collector_next(hml__collector *c, int side, int64_t rows, void **dst)
{
	int rc;

	if (!c)
		return hml__error_set(HML_EINVALID, "collector, side or destination is invalid");
	return (rc = io->collector_next(c, side, rows, dst)) < 0 ? fail(io, rc) : rc;
}

int hml__collector_commit(hml__collector *c, double original_seconds)
{
	int rc;

	if (!c)
		return hml__error_set(HML_EINVALID, "collector is NULL");
	return (rc = io->collector_commit(c, original_seconds)) < 0 ? fail(io, rc) : rc;
}

int hml__collector_append(hml__collector *c, const void *in, int64_t in_rows,
                          const void *out, int64_t out_rows, double original_seconds)
{
	int rc;

	if (!c)
		return hml__error_set(HML_EINVALID, "collector is NULL");
	rc = io->collector_append(c, in, in_rows, out, out_rows, original_seconds);
	return rc < 0 ? fail(io, rc) : rc;
}

int hml__collector_append_calls(hml__collector *c, const void *in, int64_t in_rows,
                                const void *out, int64_t out_rows, int64_t ncalls,
                                double original_seconds)
{
	int rc;

	if (!c)
		return hml__error_set(HML_EINVALID, "collector is NULL");
	rc = io->collector_append_calls(c, in, in_rows, out, out_rows, ncalls, original_seconds);
	return rc < 0 ? fail(io, rc) : rc;
}

int hml__collector_flush(hml__collector *c)
{
	int rc;

	if (!c)
		return hml__error_set(HML_EINVALID, "collector is NULL");
	return (rc = io->collector_flush(c)) < 0 ? fail(io, rc) : rc;
}

int64_t hml__collector_rows(const hml__collector *c)
{
	return c ? io->collector_rows(c) : 0;
}

int hml__collector_close(hml__collector *c)
{
	int rc;

	if (!c)
		return 0;
	return (rc = io->collector_close(c)) < 0 ? fail(io, rc) : rc;
}

/* The arguments are checked here first (qoi_check.c), so that a mistake is
 * reported without loading HDF5, as in a run that records nothing. */
int hml__qoi_file_write(const char *path, const char *name, const void *data,
                        hml_dtype dtype, int ndim, const int64_t *shape)
{
	const hml__h5io *t;
	int rc;

	if ((rc = hml__qoi_check(name, data, dtype, ndim, shape)) < 0)
		return rc;
	if ((rc = plugin(&t)) < 0)
		return rc;
	return (rc = t->qoi_file_write(path, name, data, dtype, ndim, shape)) < 0 ? fail(t, rc) : rc;
}

int hml__qoi_file_write_steps(const char *path, const char *name, const int64_t *steps,
                              const void *data, hml_dtype dtype, int ndim,
                              const int64_t *shape)
{
	const hml__h5io *t;
	int rc;

	if ((rc = hml__qoi_check(name, data, dtype, ndim, shape)) < 0 ||
	    (rc = hml__qoi_check_steps(name, steps, ndim, shape)) < 0)
		return rc;
	if ((rc = plugin(&t)) < 0)
		return rc;
	rc = t->qoi_file_write_steps(path, name, steps, data, dtype, ndim, shape);
	return rc < 0 ? fail(t, rc) : rc;
}
