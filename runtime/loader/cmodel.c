/*
 * runtime/loader/cmodel.c - loading and running compiled models (loader.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/util.h"
#include "hml/cmodel.h"
#include "loader/loader.h"

struct hml__cmodel {
	void *handle;
	const hml_cmodel_v1_info *info;   /* &head */
	hml_cmodel_v1_info head;   /* the entry's version 1 fields (a copy: its prefix) */
	unsigned abi;              /* the entry's ABI version, 1 to 3 */
	const char *input_stats;   /* version 2's, in the object; NULL: none */
	int (*forward_i32)(const int32_t *, float *, int64_t);  /* version 3's; NULL: none */
	char *path;
	void *out;              /* last output */
	size_t out_cap;         /* bytes */
	hml_dtype out_dtype;
	int64_t out_rows;       /* -1: no forward yet */
	int threads;            /* > 0: the forwards' OpenMP threads */
	void (*omp_set)(int);   /* the model's omp_set_num_threads, when threads > 0 */
	int (*omp_get)(void);   /* its omp_get_max_threads */
};

/* RTLD_NODELETE: a model built with -fopenmp may be what brought libgomp
 * into the process; unloading it at free would unmap the code of OpenMP
 * worker threads that are still parked (a crash seen when nothing else
 * linked libgomp). A model's code stays mapped until exit. */
#define DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)

static const unsigned char elf_magic[4] = { 0x7f, 'E', 'L', 'F' };

int hml__cmodel_sniff(const char *path)
{
	unsigned char head[4];
	hml__error_saved saved;
	struct stat st;
	ssize_t n;
	int fd;

	/* A sniff that fails is no error of the caller's: the last one stays. */
	hml__error_save(&saved);
	if ((fd = hml__model_file_open(path, "model", &st)) < 0) {
		hml__error_restore(&saved);
		return 0;
	}
	n = read(fd, head, sizeof(head));
	close(fd);
	return n == (ssize_t)sizeof(head) && memcmp(head, elf_magic, sizeof(head)) == 0;
}

/* Check the file without running any of it (cmodel_elf.c): its ABI
 * version (1 to 3), or a negative code. The check and
 * the dlopen that follows it name the same path: a file planted in an
 * experiment is caught, a concurrent writer replacing it in between is not
 * (dlopen of /proc/self/fd/N would close that gap, but glibc matches a
 * later load's name against the earlier one's and would hand a second
 * model loaded through a reused descriptor the first one's handle). */
static int check_file(const char *path)
{
	struct stat st;
	void *map = MAP_FAILED;
	int fd, rc = 0;

	if ((fd = hml__model_file_open(path, "compiled model", &st)) < 0)
		return fd;
	if (st.st_size < 64 ||
	    (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED ||
	    memcmp(map, elf_magic, sizeof(elf_magic)) != 0)
		rc = hml__error_set(HML_EMODEL, "cannot open compiled model '%s': not an ELF shared object",
		                    path);
	else
		rc = hml__cmodel_elf_check(map, (size_t)st.st_size, path);
	if (map != MAP_FAILED)
		munmap(map, (size_t)st.st_size);
	close(fd);
	return rc;
}

/* dlopen `path`; one without '/' would be searched for in the library path. */
static void *open_checked(const char *path)
{
	char *rel;
	void *h;

	if (strchr(path, '/'))
		return dlopen(path, DLOPEN_FLAGS);
	if (!(rel = malloc(strlen(path) + 3)))
		return NULL;
	strcpy(rel, "./");
	strcat(rel, path);
	h = dlopen(rel, DLOPEN_FLAGS);
	free(rel);
	return h;
}

static int shape_ok(int ndim, const int64_t *shape, int64_t features)
{
	int64_t p = 1;

	if (ndim < 1 || ndim > HML_CMODEL_MAX_DIMS || ndim >= HML_MAX_DIMS)
		return 0;
	for (int i = 0; i < ndim; i++) {
		if (shape[i] < 1 || shape[i] > ((int64_t)1 << 40) / p)
			return 0;
		p *= shape[i];
	}
	return p == features;
}

/* The entry struct of ABI version v (its symbol, size and tag), checked
 * field by field before anything is called. */
static int check_info(const char *path, const hml_cmodel_v1_info *i,
                      const hml__cmodel_version *v)
{
	unsigned abi = v->version;
	const char *entry = v->entry, *tag = v->tag;
	size_t size = v->size;

	if (i->magic != HML_CMODEL_MAGIC)
		return hml__error_set(HML_EMODEL, "cannot open compiled model '%s': bad magic number "
		                      "%#x in '%s'", path, (unsigned)i->magic, entry);
	if (i->abi_version != abi)
		return hml__error_set(HML_ENOTSUPPORTED, "cannot open compiled model '%s': ABI version "
		                      "%u, this runtime reads 1 to %u (compile it again with this "
		                      "hml)", path, (unsigned)i->abi_version, HML_CMODEL_ABI_VERSION);
	if (i->size != size || memcmp(i->tag, tag, strlen(tag) + 1) != 0)
		return hml__error_set(HML_EMODEL, "cannot open compiled model '%s': its '%s' "
		                      "does not have the layout of ABI version %u", path, entry, abi);
	if (i->dtype != HML_CMODEL_DTYPE_F32)
		return hml__error_set(HML_ENOTSUPPORTED, "cannot open compiled model '%s': dtype %u "
		                      "is not supported", path, (unsigned)i->dtype);
	if (!shape_ok(i->in_ndim, i->in_shape, i->in_features) ||
	    !shape_ok(i->out_ndim, i->out_shape, i->out_features) ||
	    !i->forward_f32 || !i->forward_f64)
		return hml__error_set(HML_EMODEL, "cannot open compiled model '%s': its shapes or "
		                      "functions are not valid", path);
	return 0;
}

int hml__cmodel_load(hml__cmodel **out, const char *path)
{
	hml__cmodel *m = NULL;
	const hml__cmodel_version *ver;
	const char *why;
	const void *sym;
	int rc, abi;

	*out = NULL;
	if ((abi = check_file(path)) < 0)
		return abi;
	ver = hml__cmodel_version_of((unsigned)abi);
	if (!(m = calloc(1, sizeof(*m))) || !(m->path = strdup(path))) {
		rc = hml__error_oom();
		goto done;
	}
	m->out_rows = -1;
	dlerror();
	if (!(m->handle = open_checked(path))) {
		why = dlerror();
		rc = why ? hml__error_set(HML_EMODEL, "cannot open compiled model '%s': %s", path, why)
		         : hml__error_oom();
		goto done;
	}
	if (!(sym = dlsym(m->handle, ver->entry))) {
		rc = hml__error_set(HML_EMODEL, "cannot open compiled model '%s': no '%s' symbol "
		                    "(not a model compiled by hml)", path, ver->entry);
		goto done;
	}
	/* A newer entry begins with the older versions' fields, laid out alike. */
	memcpy(&m->head, sym, sizeof(m->head));
	m->info = &m->head;
	m->abi = (unsigned)abi;
	if ((rc = check_info(path, m->info, ver)) < 0)
		goto done;
	if (abi >= 2)
		m->input_stats = ((const hml_cmodel_v2_info *)sym)->input_stats;
	if (abi >= 3 && !(m->forward_i32 = ((const hml_cmodel_v3_info *)sym)->forward_i32)) {
		rc = hml__error_set(HML_EMODEL, "cannot open compiled model '%s': its shapes or "
		                    "functions are not valid", path);
		goto done;
	}
	*out = m;
	m = NULL;
done:
	hml__cmodel_free(m);
	return rc;
}

void hml__cmodel_free(hml__cmodel *m)
{
	if (!m)
		return;
	if (m->handle)
		dlclose(m->handle);
	free(m->out);
	free(m->path);
	free(m);
}

int hml__cmodel_set_threads(hml__cmodel *m, int threads)
{
	void *set = dlsym(m->handle, "omp_set_num_threads");
	void *get = dlsym(m->handle, "omp_get_max_threads");

	m->threads = 0;
	if (threads <= 0 || !set || !get)
		return 0;
	/* POSIX: a function pointer converts to and from void * (dlsym). */
	memcpy(&m->omp_set, &set, sizeof(set));
	memcpy(&m->omp_get, &get, sizeof(get));
	m->threads = threads;
	return 1;
}

hml_dtype hml__cmodel_dtype(const hml__cmodel *m)
{
	(void)m;
	return HML_F32;
}

int hml__cmodel_takes(const hml__cmodel *m, hml_dtype dtype)
{
	return dtype == HML_F32 || dtype == HML_F64 || (dtype == HML_I32 && m->forward_i32);
}

static int copy_shape(int64_t *shape, const int64_t *from, int ndim)
{
	memcpy(shape, from, (size_t)ndim * sizeof(*shape));
	return ndim;
}

int hml__cmodel_declared_input(const hml__cmodel *m, int64_t *shape)
{
	return copy_shape(shape, m->info->in_shape, m->info->in_ndim);
}

int hml__cmodel_declared_output(const hml__cmodel *m, int64_t *shape)
{
	return copy_shape(shape, m->info->out_shape, m->info->out_ndim);
}

const char *hml__cmodel_id(const hml__cmodel *m)
{
	return m->info->id ? m->info->id : "";
}

const char *hml__cmodel_hash(const hml__cmodel *m)
{
	return m->info->hash ? m->info->hash : "";
}

const char *hml__cmodel_path(const hml__cmodel *m)
{
	return m->path;
}

unsigned hml__cmodel_abi(const hml__cmodel *m)
{
	return m->abi;
}

const char *hml__cmodel_input_stats(const hml__cmodel *m)
{
	return m->input_stats && *m->input_stats ? m->input_stats : NULL;
}

static int shape_error(const hml__cmodel *m, int ndim, const int64_t *shape)
{
	char want[160], got[160];

	hml__format_shape(want, sizeof(want), m->info->in_shape, m->info->in_ndim);
	if (ndim >= 1 && ndim <= HML_MAX_DIMS)
		hml__format_shape(got, sizeof(got), shape + 1, ndim - 1);
	else
		snprintf(got, sizeof(got), "%d dimensions", ndim);
	return hml__error_set(HML_ESHAPE, "compiled model '%s' takes rows of %s, not %s",
	                      m->path, want, got);
}

int hml__cmodel_forward(hml__cmodel *m, const void *in, hml_dtype dtype,
                        int ndim, const int64_t *shape)
{
	const hml_cmodel_v1_info *i = m->info;
	hml_dtype ydt = dtype == HML_I32 ? HML_F32 : dtype;
	int64_t features = 1, rows;
	size_t need;
	int rc, saved = 0;

	if (!hml__cmodel_takes(m, dtype))
		return hml__error_set(HML_EINVALID, "compiled model '%s': bad input dtype %d",
		                      m->path, (int)dtype);
	if (ndim < 1 || ndim > HML_MAX_DIMS || shape[0] < 0)
		return shape_error(m, ndim, shape);
	for (int d = 1; d < ndim; d++)
		features *= shape[d];
	if (features != i->in_features)
		return shape_error(m, ndim, shape);
	rows = shape[0];
	need = (size_t)(rows > 0 ? rows : 1) * (size_t)i->out_features * hml_dtype_size(ydt);
	if (need > m->out_cap) {
		void *p = realloc(m->out, need);

		if (!p)
			return hml__error_oom();
		m->out = p;
		m->out_cap = need;
	}
	if (m->threads > 0) {
		saved = m->omp_get();
		m->omp_set(m->threads);
	}
	if (dtype == HML_F32)
		rc = i->forward_f32(in, m->out, rows);
	else if (dtype == HML_F64)
		rc = i->forward_f64(in, m->out, rows);
	else
		rc = m->forward_i32(in, m->out, rows);
	if (m->threads > 0)
		m->omp_set(saved);
	if (rc != 0)
		return hml__error_set(HML_ENOMEM, "compiled model '%s': out of memory in forward",
		                      m->path);
	m->out_dtype = ydt;
	m->out_rows = rows;
	return 0;
}

int hml__cmodel_forward_into(const hml__cmodel *m, const void *in, hml_dtype dtype,
                             int64_t rows, void *out)
{
	int rc;

	if (dtype == HML_F32)
		rc = m->info->forward_f32(in, out, rows);
	else if (dtype == HML_F64)
		rc = m->info->forward_f64(in, out, rows);
	else
		return hml__error_set(HML_EINVALID, "compiled model '%s': bad input dtype %d",
		                      m->path, (int)dtype);
	if (rc != 0)
		return hml__error_set(HML_ENOMEM, "compiled model '%s': out of memory in forward",
		                      m->path);
	return 0;
}

int hml__cmodel_output(const hml__cmodel *m, const void **data, hml_dtype *dtype,
                       int *ndim, int64_t *shape)
{
	if (m->out_rows < 0)
		return hml__error_set(HML_EINVALID, "compiled model '%s' has not run yet", m->path);
	*data = m->out;
	*dtype = m->out_dtype;
	*ndim = m->info->out_ndim + 1;
	shape[0] = m->out_rows;
	memcpy(shape + 1, m->info->out_shape, (size_t)m->info->out_ndim * sizeof(*shape));
	return 0;
}
