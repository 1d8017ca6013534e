/*
 * tests/unit/model.c - the libtorch shim against models scripted in Python
 * (tests/python/make_models.py, run by the `models` fixture into
 * $HML_TEST_MODELS with reference inputs and Python's outputs).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "core/error.h"
#include "core/util.h"
#include "loader/loader.h"
#include "reference.h"

static const char *models_dir;
static char path_buf[4096];

static const char *model_path(const char *file)
{
	snprintf(path_buf, sizeof(path_buf), "%s/%s", models_dir, file);
	return path_buf;
}

static int ref_read(ref *r, const char *file)
{
	return ref_read_path(r, model_path(file));
}

static float *to_f32(const ref *r)
{
	float *p = malloc((r->n ? r->n : 1) * sizeof(float));
	size_t i;

	for (i = 0; p && i < r->n; i++)
		p[i] = (float)r->v[i];
	return p;
}

/* The last output as doubles (exact for float); its shape must be `want`. */
static int output_of(hml__model *m, hml_dtype want_dtype, int want_ndim,
                     const int64_t *want_shape, double *dst, size_t n)
{
	const void *data = NULL;
	hml_dtype dt = 0;
	int64_t shape[HML_MAX_DIMS + 1];
	int nd = -1, d, ok = 1;
	size_t i;

	CHECK_OK(hml__model_output(m, &data, &dt, &nd, shape));
	CHECK_EQ_INT(dt, want_dtype);
	CHECK_EQ_INT(nd, want_ndim);
	if (nd != want_ndim || dt != want_dtype || !data)
		return -1;
	for (d = 0; d < nd; d++) {
		CHECK_EQ_INT(shape[d], want_shape[d]);
		ok &= shape[d] == want_shape[d];
	}
	if (!ok)
		return -1;
	for (i = 0; i < n; i++)
		dst[i] = dt == HML_F32 ? (double)((const float *)data)[i] : ((const double *)data)[i];
	return 0;
}

/* Largest |a - b| / max(1, |b|) over n values. */
static double max_rel(const double *a, const double *b, size_t n)
{
	double worst = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		double e = fabs(a[i] - b[i]) / fmax(1.0, fabs(b[i]));
		if (!(e <= worst))
			worst = e;
	}
	return worst;
}

/* Forward a reference input and compare with Python's output. */
static void forward_ref(hml__model *m, const char *name, hml_dtype in_dtype,
                        hml_dtype out_dtype, double tol)
{
	char file[256];
	ref in, want;
	double *got;
	float *in32 = NULL;

	snprintf(file, sizeof(file), "%s.in.txt", name);
	if (ref_read(&in, file) < 0) {
		CHECK(!"reference input");
		return;
	}
	snprintf(file, sizeof(file), "%s.out.txt", name);
	if (ref_read(&want, file) < 0) {
		CHECK(!"reference output");
		free(in.v);
		return;
	}
	got = calloc(want.n, sizeof(double));
	if (in_dtype == HML_F32)
		in32 = to_f32(&in);
	CHECK_OK(hml__model_forward(m, in_dtype == HML_F32 ? (void *)in32 : (void *)in.v,
	                            in_dtype, in.ndim, in.shape));
	if (output_of(m, out_dtype, want.ndim, want.shape, got, want.n) == 0) {
		double e = max_rel(got, want.v, want.n);
		if (!(e <= tol))
			fprintf(stderr, "%s (%s input): max relative error %g > %g\n", name,
			        hml_dtype_name(in_dtype), e, tol);
		CHECK(e <= tol);
	}
	free(got);
	free(in32);
	free(in.v);
	free(want.v);
}

TEST(mlp_f32)
{
	hml__model *m = NULL;
	int64_t shape[HML_MAX_DIMS];

	CHECK_OK(hml__model_load(&m, model_path("mlp_f32.pt"), 0));
	if (!m)
		return;
	CHECK_EQ_INT(hml__model_dtype(m), HML_F32);
	CHECK_EQ_INT(hml__model_declared_input(m, shape), 0);
	CHECK_EQ_INT(hml__model_declared_output(m, shape), 0);
	/* float input is borrowed; double input is converted to float exactly
	 * (the reference values are float32 numbers), so both match Python. */
	forward_ref(m, "mlp_f32", HML_F32, HML_F32, 1e-6);
	forward_ref(m, "mlp_f32", HML_F64, HML_F32, 1e-6);
	hml__model_free(m);
}

TEST(mlp_f64)
{
	hml__model *m = NULL;
	ref in;
	float *in32;
	double *x64, *a, *b;
	size_t i;
	int64_t oshape[2];

	CHECK_OK(hml__model_load(&m, model_path("mlp_f64.pt"), 0));
	if (!m)
		return;
	CHECK_EQ_INT(hml__model_dtype(m), HML_F64);
	forward_ref(m, "mlp_f64", HML_F64, HML_F64, 1e-12);

	/* float input: converted to double inside, so the result equals the
	 * double path on the same (float-rounded) values, bit for bit. */
	if (ref_read(&in, "mlp_f64.in.txt") == 0) {
		in32 = to_f32(&in);
		x64 = malloc(in.n * sizeof(double));
		a = malloc((size_t)in.shape[0] * sizeof(double));
		b = malloc((size_t)in.shape[0] * sizeof(double));
		for (i = 0; i < in.n; i++)
			x64[i] = in32[i];
		oshape[0] = in.shape[0];
		oshape[1] = 1;
		CHECK_OK(hml__model_forward(m, x64, HML_F64, in.ndim, in.shape));
		CHECK_OK(output_of(m, HML_F64, 2, oshape, a, (size_t)in.shape[0]));
		CHECK_OK(hml__model_forward(m, in32, HML_F32, in.ndim, in.shape));
		CHECK_OK(output_of(m, HML_F64, 2, oshape, b, (size_t)in.shape[0]));
		CHECK(memcmp(a, b, (size_t)in.shape[0] * sizeof(double)) == 0);
		free(in32);
		free(x64);
		free(a);
		free(b);
		free(in.v);
	} else {
		CHECK(!"reference input");
	}
	hml__model_free(m);
}

TEST(batch_one)
{
	hml__model *m = NULL;
	ref in, want;
	float row[5];
	int64_t shape[2] = { 1, 5 }, oshape[2] = { 1, 1 };
	double y;
	int i;

	CHECK_OK(hml__model_load(&m, model_path("mlp_f32.pt"), 0));
	if (!m || ref_read(&in, "mlp_f32.in.txt") < 0)
		goto done;
	if (ref_read(&want, "mlp_f32.out.txt") < 0) {
		free(in.v);
		goto done;
	}
	/* row 3 of the reference batch, alone */
	for (i = 0; i < 5; i++)
		row[i] = (float)in.v[3 * 5 + i];
	CHECK_OK(hml__model_forward(m, row, HML_F32, 2, shape));
	if (output_of(m, HML_F32, 2, oshape, &y, 1) == 0)
		CHECK_NEAR(y, want.v[3], 1e-6 * fmax(1.0, fabs(want.v[3])));
	free(in.v);
	free(want.v);
done:
	hml__model_free(m);
}

TEST(declared)
{
	hml__model *m = NULL;
	int64_t shape[HML_MAX_DIMS];

	CHECK_OK(hml__model_load(&m, model_path("declared.pt"), 0));
	if (!m)
		return;
	memset(shape, 0, sizeof(shape));
	CHECK_EQ_INT(hml__model_declared_input(m, shape), 1);
	CHECK_EQ_INT(shape[0], 5);
	CHECK_EQ_INT(hml__model_declared_output(m, shape), 1);
	CHECK_EQ_INT(shape[0], 1);
	forward_ref(m, "declared", HML_F32, HML_F32, 1e-6);
	hml__model_free(m);
}

TEST(field_cnn)
{
	hml__model *m = NULL;

	CHECK_OK(hml__model_load(&m, model_path("field_cnn.pt"), 0));
	if (!m)
		return;
	CHECK_EQ_INT(hml__model_dtype(m), HML_F32);
	/* output shape [3, 4, 8, 16] is checked against the reference file */
	forward_ref(m, "field_cnn", HML_F32, HML_F32, 1e-6);
	forward_ref(m, "field_cnn", HML_F64, HML_F32, 1e-6);
	hml__model_free(m);
}

/* Integer outputs come back in the model's dtype. */
TEST(int_output)
{
	hml__model *m = NULL;

	CHECK_OK(hml__model_load(&m, model_path("argmax_out.pt"), 0));
	if (!m)
		return;
	forward_ref(m, "argmax_out", HML_F32, HML_F32, 0);
	hml__model_free(m);
}

/* A model without parameters is float32; an output that is the input must
 * not hand back the caller's buffer. */
TEST(identity_copies)
{
	hml__model *m = NULL;
	double x[6] = { 1, 2, 3, 4, 5, 6 };
	int64_t shape[2] = { 3, 2 };
	const void *data = NULL;
	hml_dtype dt = 0;
	int64_t oshape[HML_MAX_DIMS + 1];
	int nd = 0;
	float fx[6] = { 1, 2, 3, 4, 5, 6 };

	CHECK_OK(hml__model_load(&m, model_path("identity.pt"), 0));
	if (!m)
		return;
	CHECK_EQ_INT(hml__model_dtype(m), HML_F32);
	CHECK_OK(hml__model_forward(m, x, HML_F64, 2, shape));
	CHECK_OK(hml__model_output(m, &data, &dt, &nd, oshape));
	CHECK_EQ_INT(dt, HML_F32);
	CHECK_EQ_INT(nd, 2);
	CHECK(data != NULL && ((const float *)data)[5] == 6.0f);

	CHECK_OK(hml__model_forward(m, fx, HML_F32, 2, shape));
	CHECK_OK(hml__model_output(m, &data, &dt, &nd, oshape));
	CHECK(data != (const void *)fx);
	fx[5] = -1;
	CHECK(data != NULL && ((const float *)data)[5] == 6.0f);
	hml__model_free(m);
}

TEST(load_errors)
{
	hml__model *m = (hml__model *)&m;
	char p[4200];

	CHECK_FAILS(hml__model_load(&m, model_path("missing.pt"), 0), HML_ENOTFOUND,
	            "cannot open model '");
	CHECK_CONTAINS(hml_error_last()->message, "missing.pt': no such file");
	CHECK(m == NULL);
	snprintf(p, sizeof(p), "%s/nodir/x.pt", models_dir);
	CHECK_FAILS(hml__model_load(&m, p, 0), HML_ENOTFOUND, "no such file");

	CHECK_FAILS(hml__model_load(&m, models_dir, 0), HML_EIO, "is a directory");
	CHECK(m == NULL);

	CHECK_FAILS(hml__model_load(&m, model_path("not_a_model.pt"), 0), HML_EMODEL,
	            "not_a_model.pt': not a TorchScript archive (");
	CHECK(strchr(hml_error_last()->message, '\n') == NULL);
	CHECK(m == NULL);
	CHECK_FAILS(hml__model_load(&m, model_path("state_dict.pt"), 0), HML_EMODEL,
	            "state_dict.pt': not a TorchScript archive (");
	CHECK(strchr(hml_error_last()->message, '\n') == NULL);

	CHECK_FAILS(hml__model_load(&m, model_path("no_forward.pt"), 0), HML_EMODEL,
	            "no_forward.pt': no forward method");
	CHECK_FAILS(hml__model_load(&m, model_path("mlp_f16.pt"), 0), HML_ENOTSUPPORTED,
	            "mlp_f16.pt': parameters of type float16 are not supported");
	CHECK(m == NULL);
	m = (hml__model *)&m;
	CHECK_FAILS(hml__model_load(&m, NULL, 0), HML_EINVALID, "no path");
	CHECK(m == NULL);
}

TEST(unreadable)
{
	hml__model *m = NULL;
	const char *tmp = getenv("HML_TEST_TMP");
	char p[4200], buf[8192];
	FILE *src, *dst;
	size_t k;

	snprintf(p, sizeof(p), "%s/unreadable_%ld.pt", tmp ? tmp : "/tmp", (long)getpid());
	src = fopen(model_path("mlp_f32.pt"), "rb");
	dst = fopen(p, "wb");
	CHECK(src && dst);
	while (src && dst && (k = fread(buf, 1, sizeof(buf), src)) > 0)
		fwrite(buf, 1, k, dst);
	if (src)
		fclose(src);
	if (dst)
		fclose(dst);
	CHECK(chmod(p, 0) == 0);
	if (access(p, R_OK) == 0) {
		/* root reads anything: the check is meaningless here */
		printf("note: unreadable: skipped, a mode-000 file is readable (running as root?)\n");
	} else {
		CHECK_FAILS(hml__model_load(&m, p, 0), HML_EIO, "Permission denied");
		CHECK_CONTAINS(hml_error_last()->message, "cannot open model '");
		CHECK(m == NULL);
	}
	chmod(p, 0600);
	remove(p);
}

TEST(forward_errors)
{
	hml__model *m = NULL, *t = NULL;
	float x[24] = { 0 };
	int64_t shape[2] = { 4, 6 }, ok[2] = { 4, 5 };
	const void *data;
	hml_dtype dt;
	int nd;
	int64_t oshape[HML_MAX_DIMS + 1];

	CHECK_OK(hml__model_load(&m, model_path("mlp_f32.pt"), 0));
	if (!m)
		return;
	CHECK_FAILS(hml__model_output(m, &data, &dt, &nd, oshape), HML_EINVALID, "no output");
	CHECK_FAILS(hml__model_forward(m, x, HML_F32, 2, shape), HML_EMODEL,
	            "mlp_f32.pt' failed on input [4, 6] of float32: ");
	/* the reason is libtorch's, on one line, not the interpreter's banner */
	CHECK_CONTAINS(hml_error_last()->message, "shapes cannot be multiplied");
	CHECK(strchr(hml_error_last()->message, '\n') == NULL);
	CHECK_FAILS(hml__model_forward(m, x, HML_F64, 2, shape), HML_EMODEL,
	            "failed on input [4, 6] of float64: ");
	/* a failed forward leaves no stale output; the model still works */
	CHECK_FAILS(hml__model_output(m, &data, &dt, &nd, oshape), HML_EINVALID, "no output");
	CHECK_OK(hml__model_forward(m, x, HML_F32, 2, ok));
	CHECK_OK(hml__model_output(m, &data, &dt, &nd, oshape));
	CHECK_FAILS(hml__model_forward(m, NULL, HML_F32, 2, ok), HML_EINVALID, "no data");
	CHECK_FAILS(hml__model_forward(m, x, (hml_dtype)7, 2, ok), HML_EINVALID,
	            "unknown element type");
	CHECK_FAILS(hml__model_forward(m, x, HML_F32, 0, ok), HML_EINVALID, "0 dims");

	CHECK_OK(hml__model_load(&t, model_path("tuple_out.pt"), 0));
	if (t) {
		CHECK_FAILS(hml__model_forward(t, x, HML_F32, 2, ok), HML_EMODEL,
		            "tuple_out.pt' returned Tuple[Tensor, Tensor], expected a tensor");
	}
	hml__model_free(t);
	hml__model_free(m);
}

/* Zero rows go through (libtorch handles empty batches). */
TEST(empty_batch)
{
	hml__model *m = NULL;
	int64_t shape[2] = { 0, 5 };
	const void *data;
	hml_dtype dt;
	int nd = -1;
	int64_t oshape[HML_MAX_DIMS + 1];

	CHECK_OK(hml__model_load(&m, model_path("mlp_f32.pt"), 0));
	if (!m)
		return;
	CHECK_OK(hml__model_forward(m, NULL, HML_F32, 2, shape));
	CHECK_OK(hml__model_output(m, &data, &dt, &nd, oshape));
	CHECK_EQ_INT(nd, 2);
	CHECK_EQ_INT(oshape[0], 0);
	hml__model_free(m);
}

/* threads is process-wide; the results do not depend on it. */
TEST(threads)
{
	hml__model *m1 = NULL, *m2 = NULL;
	ref in;
	float *x;
	double *a, *b;
	int64_t oshape[2];

	if (ref_read(&in, "field_cnn.in.txt") < 0) {
		CHECK(!"reference input");
		return;
	}
	x = to_f32(&in);
	a = malloc(in.n * sizeof(double));
	b = malloc(in.n * sizeof(double));
	CHECK_OK(hml__model_load(&m1, model_path("field_cnn.pt"), 1));
	if (m1) {
		CHECK_OK(hml__model_forward(m1, x, HML_F32, in.ndim, in.shape));
		CHECK_OK(output_of(m1, HML_F32, in.ndim, in.shape, a, in.n));
	}
	CHECK_OK(hml__model_load(&m2, model_path("field_cnn.pt"), 2));
	if (m2) {
		CHECK_OK(hml__model_forward(m2, x, HML_F32, in.ndim, in.shape));
		CHECK_OK(output_of(m2, HML_F32, in.ndim, in.shape, b, in.n));
		CHECK(memcmp(a, b, in.n * sizeof(double)) == 0);
	}
	(void)oshape;
	hml__model_free(m1);
	hml__model_free(m2);
	free(x);
	free(a);
	free(b);
	free(in.v);
}

/* 1 in a build with AddressSanitizer (gcc defines __SANITIZE_ADDRESS__,
 * clang answers __has_feature). */
#if defined(__SANITIZE_ADDRESS__)
#define HML_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HML_TEST_ASAN 1
#endif
#endif
#ifndef HML_TEST_ASAN
#define HML_TEST_ASAN 0
#endif

/* Resident set size in bytes from /proc/self/statm, -1 where there is none. */
static long rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size, resident = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

/*
 * 1100 calls, 1000 of them measured: batches of 1 to 1024 rows, float input
 * (borrowed) and double input (converted) in turn. The answers stay right
 * every time, and resident memory does not grow: a tensor kept per call
 * would leak 4 to 20 KiB a call at 1024 rows, megabytes in all.
 */
TEST(repeated)
{
	enum { ROWS = 1024 };
	hml__model *m = NULL;
	ref in, want;
	float *x32;
	double *x64, *got, *y;
	int i, bad = 0;
	size_t r, k, ref_rows;
	long rss0 = -1, rss1;

	CHECK_OK(hml__model_load(&m, model_path("mlp_f32.pt"), 0));
	if (!m)
		return;
	if (ref_read(&in, "mlp_f32.in.txt") < 0 || ref_read(&want, "mlp_f32.out.txt") < 0) {
		CHECK(!"reference");
		hml__model_free(m);
		return;
	}
	/* the 64 reference rows, tiled to 1024 */
	ref_rows = (size_t)in.shape[0];
	x32 = malloc(ROWS * 5 * sizeof(float));
	x64 = malloc(ROWS * 5 * sizeof(double));
	y = malloc(ROWS * sizeof(double));
	got = malloc(ROWS * sizeof(double));
	for (r = 0; r < ROWS; r++) {
		for (k = 0; k < 5; k++)
			x64[r * 5 + k] = x32[r * 5 + k] = (float)in.v[(r % ref_rows) * 5 + k];
		y[r] = want.v[r % ref_rows];
	}
	for (i = 0; i < 1100 && !bad; i++) {
		int64_t rows = i % 3 == 0 ? ROWS : 1 + (i * 37) % ROWS;
		int64_t shape[2] = { rows, 5 }, oshape[2] = { rows, 1 };
		int f64 = i % 2;
		if (hml__model_forward(m, f64 ? (void *)x64 : (void *)x32, f64 ? HML_F64 : HML_F32,
		                       2, shape) < 0 ||
		    output_of(m, HML_F32, 2, oshape, got, (size_t)rows) < 0 ||
		    max_rel(got, y, (size_t)rows) > 1e-6)
			bad = i + 1;
		if (i == 99) /* after warm-up: the profiling executor, allocator caches */
			rss0 = rss_bytes();
	}
	rss1 = rss_bytes();
	if (HML_TEST_ASAN) {
		/* AddressSanitizer's quarantine holds freed memory back on
		 * purpose: resident memory grows whatever the code does. */
		printf("SKIP: repeated: memory growth not checked under AddressSanitizer\n");
	} else if (rss0 > 0 && rss1 > 0) {
		if (rss1 - rss0 > (2L << 20))
			fprintf(stderr, "repeated: resident memory grew by %ld KiB over 1000 calls\n",
			        (rss1 - rss0) >> 10);
		CHECK(rss1 - rss0 <= (2L << 20));
	} else {
		printf("note: repeated: no /proc/self/statm, memory growth not checked\n");
	}
	if (bad)
		fprintf(stderr, "repeated: call %d went wrong: %s\n", bad - 1, hml_error_last()->message);
	CHECK_EQ_INT(bad, 0);
	free(x32);
	free(x64);
	free(y);
	free(got);
	free(in.v);
	free(want.v);
	hml__model_free(m);
}

TEST(version)
{
	const char *v = hml__torch_version();   /* the build's; the plugin must match it */
	hml__model *m = NULL;

	CHECK(v != NULL && strlen(v) > 0);
	CHECK(strcmp(v, "none") != 0);
	CHECK(v[0] >= '1' && v[0] <= '9' && strchr(v, '.') != NULL);
	CHECK_OK(hml__model_load(&m, model_path("mlp_f32.pt"), 0));
	CHECK_STR(hml__model_backend(m), "torch");
	hml__model_free(m);
}

/* In a child (the plugin is loaded once per process): load with
 * HML_TORCH_PLUGIN set to `plugin`; its exit status says whether the load
 * failed with `code` and a message containing `needle`. */
static int plugin_fails(const char *plugin, int code, const char *needle)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		hml__model *m = NULL;
		int rc;

		setenv("HML_TORCH_PLUGIN", plugin, 1);
		rc = hml__model_load(&m, model_path("mlp_f32.pt"), 0);
		if (rc != code || !strstr(hml_error_last()->message, needle)) {
			fprintf(stderr, "plugin '%s': %d: %s\n", plugin, rc, hml_error_last()->message);
			_exit(1);
		}
		/* a second load gives the same error, without a second dlopen */
		rc = hml__model_load(&m, model_path("mlp_f32.pt"), 0);
		_exit(rc == code && strstr(hml_error_last()->message, needle) ? 0 : 1);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

TEST(plugin_errors)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s/no-such-plugin.so", models_dir);
	CHECK(plugin_fails(p, HML_ENOTFOUND, "the libtorch backend cannot be loaded: "));
	/* a shared object that is no hml backend is refused, never called */
	CHECK(plugin_fails("libm.so.6", HML_ENOTSUPPORTED,
	                   "the libtorch backend 'libm.so.6' is not an hml backend of interface version 2"));
}

int main(void)
{
	models_dir = getenv("HML_TEST_MODELS");
	if (!models_dir || !*models_dir) {
		fprintf(stderr, "HML_TEST_MODELS is not set (run through ctest)\n");
		return 1;
	}
	RUN(plugin_errors);   /* first: before this process loads the plugin */
	RUN(mlp_f32);
	RUN(mlp_f64);
	RUN(batch_one);
	RUN(declared);
	RUN(field_cnn);
	RUN(int_output);
	RUN(identity_copies);
	RUN(load_errors);
	RUN(unreadable);
	RUN(forward_errors);
	RUN(empty_batch);
	RUN(threads);
	RUN(repeated);
	RUN(version);
	hml__model_free(NULL);
	return check_report();
}
