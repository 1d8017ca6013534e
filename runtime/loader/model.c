/*
 * runtime/loader/model.c - the TorchScript half of loader.h, over run-time loaded backends (backend.h).
 *
 * libhml links no ML framework: the libtorch backend, libhml-torch.so, is
 * dlopen-ed the first time a region opens a model, so `off` and `collect`
 * never pay for libtorch. A model handle is its backend's table and the
 * backend's own handle; every call forwards through the table and turns a
 * backend failure into this library's hml error.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/util.h"
#include "loader/archive.h"
#include "loader/backend.h"
#include "loader/loader.h"

struct hml__model {
	const hml__backend *be;
	void *impl;
};

/* A backend's failure, re-recorded as this library's error. */
static int backend_error(const hml__backend *be, int rc)
{
	return hml__plugin_fail(rc, be->last_error());
}

/* A TorchScript file is checked against the archive limits (archive.h)
 * before libtorch reads it: what fails there is a model error, never a
 * crash in libtorch's parser. */
static int check_file(const char *path, int torchscript)
{
	struct stat st;
	int fd = hml__model_file_open(path, "model", &st), rc = 0;

	if (fd < 0)
		return fd;
	if (torchscript)
		rc = hml__archive_check(fd, path);
	close(fd);
	return rc;
}

#ifdef HML_WITH_TORCH

/* The plugin is loaded once per process and never unloaded (libtorch does
 * not survive dlclose); a failure is remembered and reported to every
 * later load with the same message (loader.h, hml__plugin_load). */
static const hml__plugin_spec torch_spec = {
	HML__TORCH_PLUGIN, "HML_TORCH_PLUGIN", HML__TORCH_ENTRY, HML__BACKEND_ABI,
	sizeof(hml__backend), "the libtorch backend", "backend",
	offsetof(hml__backend, version), "libtorch", hml__torch_version, "libhml", 0, NULL
};
static hml__plugin torch_plugin = HML__PLUGIN_INIT(torch_spec);

static int torch_backend(const char *path, const hml__backend **out)
{
	const void *t;
	int rc;

	if ((rc = hml__plugin_load(&torch_plugin, &t)) < 0)
		return hml__error_set(rc, "cannot open model '%s': %s", path, torch_plugin.msg);
	*out = t;
	return 0;
}

int hml__model_torch_prepare(void)
{
	const void *t;
	int rc;

	if ((rc = hml__plugin_load(&torch_plugin, &t)) < 0)
		return hml__error_set(rc, "%s", torch_plugin.msg);
	return 0;
}

#else

int hml__model_torch_prepare(void)
{
	return hml__error_set(HML_ENOTSUPPORTED, "hml was built without libtorch "
	                      "(HML_WITH_TORCH=OFF), so it cannot run TorchScript models");
}

static int torch_backend(const char *path, const hml__backend **out)
{
	*out = NULL;
	return hml__error_set(HML_ENOTSUPPORTED,
		"cannot open model '%s': hml was built without libtorch (HML_WITH_TORCH=OFF), "
		"so it cannot run TorchScript models", path);
}

#endif

/*
 * Compiled models (hml deploy --target c) run in this process through
 * cmodel.c, behind the same table as a plugin: no libtorch is loaded.
 */
static const char *c_last_error(void)
{
	static _Thread_local char msg[2048];   /* lib/core/error.c keeps messages shorter */

	snprintf(msg, sizeof(msg), "%s", hml_error_last()->message);
	return msg;
}

static int c_load(void **out, const char *path, int threads, const char *device)
{
	(void)device;   /* a compiled model runs on the CPU */
	int rc = hml__cmodel_load((hml__cmodel **)out, path);

	if (rc == 0)
		hml__cmodel_set_threads(*out, threads);
	return rc;
}

static void c_free(void *m) { hml__cmodel_free(m); }
static hml_dtype c_dtype(const void *m) { return hml__cmodel_dtype(m); }
static int c_declared_input(const void *m, int64_t *shape)
{
	return hml__cmodel_declared_input(m, shape);
}
static int c_declared_output(const void *m, int64_t *shape)
{
	return hml__cmodel_declared_output(m, shape);
}
static int c_forward(void *m, const void *in, hml_dtype dtype, int ndim, const int64_t *shape)
{
	return hml__cmodel_forward(m, in, dtype, ndim, shape);
}
static int c_output(const void *m, const void **data, hml_dtype *dtype, int *ndim,
                    int64_t *shape)
{
	return hml__cmodel_output(m, data, dtype, ndim, shape);
}

static const hml__backend c_backend = {
	HML__BACKEND_ABI, sizeof(hml__backend), "c", "1", c_load, c_free, c_dtype,
	c_declared_input, c_declared_output, c_forward, c_output, c_last_error
};

/*
 * The backend for the model file at `path`: an ELF shared object is a
 * compiled model (its loader checks the ABI tag, magic and version before
 * running anything of it); anything else goes to TorchScript, whose loader
 * says best why a file is not one.
 */
static int backend_for(const char *path, const hml__backend **out)
{
	if (hml__cmodel_sniff(path)) {
		*out = &c_backend;
		return 0;
	}
	return torch_backend(path, out);
}

int hml__model_load(hml__model **out, const char *path, int threads)
{
	return hml__model_load_on(out, path, threads, NULL);
}

int hml__model_load_on(hml__model **out, const char *path, int threads, const char *device)
{
	const hml__backend *be = NULL;
	hml__model *m;
	int rc;

	if (out)
		*out = NULL;
	if (!out || !path)
		return hml__error_set(HML_EINVALID, "cannot open model: no path given");
	if ((rc = check_file(path, 0)) < 0 || (rc = backend_for(path, &be)) < 0 ||
	    (be != &c_backend && (rc = check_file(path, 1)) < 0))
		return rc;
	if (!(m = calloc(1, sizeof(*m))))
		return hml__error_oom();
	m->be = be;
	if ((rc = be->load(&m->impl, path, threads, device)) < 0) {
		rc = backend_error(be, rc);
		free(m);
		return rc;
	}
	*out = m;
	return 0;
}

void hml__model_free(hml__model *m)
{
	if (!m)
		return;
	if (m->impl)
		m->be->free(m->impl);
	free(m);
}

hml_dtype hml__model_dtype(const hml__model *m)
{
	return m ? m->be->dtype(m->impl) : HML_F32;
}

int hml__model_declared_input(const hml__model *m, int64_t *shape)
{
	return m ? m->be->declared_input(m->impl, shape) : 0;
}

int hml__model_declared_output(const hml__model *m, int64_t *shape)
{
	return m ? m->be->declared_output(m->impl, shape) : 0;
}

int hml__model_forward(hml__model *m, const void *in, hml_dtype dtype,
                       int ndim, const int64_t *shape)
{
	int rc;

	if (!m)
		return hml__error_set(HML_EINVALID, "cannot run model: no model given");
	if ((rc = m->be->forward(m->impl, in, dtype, ndim, shape)) < 0)
		return backend_error(m->be, rc);
	return 0;
}

int hml__model_output(const hml__model *m, const void **data, hml_dtype *dtype,
                      int *ndim, int64_t *shape)
{
	int rc;

	if (!m)
		return hml__error_set(HML_EINVALID, "no model given");
	if ((rc = m->be->output(m->impl, data, dtype, ndim, shape)) < 0)
		return backend_error(m->be, rc);
	return 0;
}

int hml__model_takes(const hml__model *m, hml_dtype dtype)
{
	if (!m)
		return 0;
	if (m->be == &c_backend)
		return hml__cmodel_takes(m->impl, dtype);
	return dtype == hml__model_dtype(m);
}

int hml__model_reentrant(const hml__model *m)
{
	return m && m->be == &c_backend;
}

int hml__model_forward_into(hml__model *m, const void *in, hml_dtype dtype, int64_t rows,
                            void *out)
{
	if (!hml__model_reentrant(m))
		return hml__error_set(HML_ENOTSUPPORTED,
			"cannot run model: its backend keeps one output (not reentrant)");
	return hml__cmodel_forward_into(m->impl, in, dtype, rows, out);
}

int hml__model_input_stats(const hml__model *m, const char **json)
{
	*json = NULL;
	if (!m)
		return hml__error_set(HML_EINVALID, "no model given");
	if (m->be != &c_backend)
		return hml__error_set(HML_ENOTSUPPORTED, "a TorchScript model carries no input "
		                      "statistics (its card does: deploy it with --guard)");
	if (hml__cmodel_abi(m->impl) < 2)
		return hml__error_set(HML_ENOTSUPPORTED, "compiled model '%s' (ABI version 1) "
		                      "carries no input statistics: compile it again with this hml "
		                      "(hml deploy --target c)", hml__cmodel_path(m->impl));
	if (!(*json = hml__cmodel_input_stats(m->impl)))
		return hml__error_set(HML_ENOTSUPPORTED, "compiled model '%s' carries no input "
		                      "statistics (its card had none: an imported model)",
		                      hml__cmodel_path(m->impl));
	return 0;
}

const char *hml__model_backend(const hml__model *m)
{
	return m ? m->be->name : NULL;
}

int hml__model_predict_f32(const char *path, const float *x, int64_t rows, int in_ndim,
                           const int64_t *in_shape, float *y, int64_t y_size,
                           int64_t *per_row)
{
	int64_t shape[HML_MAX_DIMS + 1], oshape[HML_MAX_DIMS + 1], n = 1;
	hml__model *m = NULL;
	const void *data;
	hml_dtype dt;
	int nd, rc;

	if (in_ndim < 0 || in_ndim > HML_MAX_DIMS - 1)
		return hml__error_set(HML_ESHAPE, "rows of %d dims cannot be run", in_ndim);
	shape[0] = rows;
	memcpy(shape + 1, in_shape, (size_t)in_ndim * sizeof(int64_t));
	if ((rc = hml__model_load_on(&m, path, 0, "cpu")) < 0 ||
	    (rc = hml__model_forward(m, x, HML_F32, in_ndim + 1, shape)) < 0 ||
	    (rc = hml__model_output(m, &data, &dt, &nd, oshape)) < 0)
		goto done;
	for (int d = 0; d < nd; d++)
		n *= oshape[d];
	if (per_row)
		*per_row = rows > 0 ? n / rows : 0;
	if (n > y_size)
		rc = hml__error_set(HML_ESHAPE, "model '%s' returned %lld values for %lld rows; room for %lld",
		                    path, (long long)n, (long long)rows, (long long)y_size);
	else
		hml__convert(y, HML_F32, data, dt, (size_t)n);
done:
	hml__model_free(m);
	return rc;
}
