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
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "collect.h"
#include "core/error.h"
#include "core/qoi_file.h"
#include "h5io.h"
#include "hml/version.h"
#include "loader/loader.h"
#include "profile.h"

/* Loaded once per process; a failure is remembered and reported again. */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static const hml__h5io *io;
static int load_rc;
static char load_msg[4400];

static void load(void)
{
	char path[4096];
	void *dl;
	hml__h5io_entry entry;
	const hml__h5io *t;

	hml__plugin_path(path, sizeof(path), HML__HDF5_PLUGIN, NULL);
	if (!(dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE))) {
		const char *e = dlerror();

		load_rc = HML_ENOTFOUND;
		snprintf(load_msg, sizeof(load_msg), "the HDF5 plugin cannot be loaded: %s",
		         e ? e : path);
		return;
	}
	entry = (hml__h5io_entry)dlsym(dl, HML__HDF5_ENTRY);
	t = entry ? entry(HML__H5IO_ABI) : NULL;
	if (!t || t->abi != HML__H5IO_ABI || t->size < sizeof(hml__h5io)) {
		load_rc = HML_ENOTSUPPORTED;
		snprintf(load_msg, sizeof(load_msg),
		         "the HDF5 plugin '%s' is not an hml plugin of interface version %d",
		         path, HML__H5IO_ABI);
	} else if (strcmp(t->hml_version, HML_VERSION_STRING) != 0) {
		load_rc = HML_ENOTSUPPORTED;
		snprintf(load_msg, sizeof(load_msg),
		         "the HDF5 plugin '%s' is from hml %s, this libhml is %s",
		         path, t->hml_version, HML_VERSION_STRING);
	} else {
		io = t;
		/* HDF5 installed its exit handler just now; the regions'
		 * handler must run before it, while HDF5 still works. */
		hml__registry_exit_hook();
		return;
	}
	dlclose(dl);
}

/* The plugin's table, or NULL with the load failure recorded. */
static const hml__h5io *plugin(void)
{
	pthread_once(&once, load);
	if (!io)
		hml__error_set(load_rc, "%s", load_msg);
	return io;
}

/* A failure in the plugin, re-recorded as this library's error. */
static int fail(const hml__h5io *t, int rc)
{
	return hml__error_set(rc, "%s", t->last_error());
}

int hml__collector_open(hml__collector **out, const hml__collector_desc *desc)
{
	const hml__h5io *t;
	int rc;

	if (out)
		*out = NULL;
	if (!(t = plugin()))
		return load_rc;
	return (rc = t->collector_open(out, desc)) < 0 ? fail(t, rc) : rc;
}

int hml__collector_probe(const char *path)
{
	const hml__h5io *t;
	int rc;

	if (!(t = plugin()))
		return load_rc;
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
	if (!(t = plugin()))
		return load_rc;
	return (rc = t->qoi_file_write(path, name, data, dtype, ndim, shape)) < 0 ? fail(t, rc) : rc;
}
