/* Unit tests of tensor maps: binding, bounds, gather, scatter
 * (the runtime's tmap.c). Every gather is compared with a hand-written loop. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "functor_internal.h"
#include "hml/tensor.h"
#include "tmap_internal.h"

/* Parse and bind; NULL (and a counted failure) when either fails. */
static hml_tmap *bind(const char *functor, const char *domain, const hml_array *arrays,
                      size_t narrays, const hml_symbol *syms, size_t nsyms)
{
	hml_functor *fn = NULL;
	hml_tmap *map = NULL;
	int rc;

	if ((rc = hml_functor_parse(&fn, functor)) == 0)
		rc = hml_tmap_new(&map, fn, domain, arrays, narrays, syms, nsyms);
	/* Maps outlive their functor. */
	hml_functor_free(fn);
	if (rc != 0) {
		fprintf(stderr, "binding \"%s\" over \"%s\" failed: %s\n", functor,
		        domain ? domain : "(inferred)", hml_error_last()->message);
		check_failures_++;
	}
	return map;
}

/* The return code of hml_tmap_new() for a functor that parses. */
static int bind_rc(const char *functor, const char *domain, const hml_array *arrays,
                   size_t narrays, const hml_symbol *syms, size_t nsyms)
{
	hml_functor *fn = NULL;
	hml_tmap *map = (hml_tmap *)&map;
	int rc;

	if ((rc = hml_functor_parse(&fn, functor)) != 0) {
		fprintf(stderr, "\"%s\" does not parse: %s\n", functor, hml_error_last()->message);
		check_failures_++;
		return rc;
	}
	rc = hml_tmap_new(&map, fn, domain, arrays, narrays, syms, nsyms);
	if (rc != 0 && map != NULL) {
		fprintf(stderr, "hml_tmap_new failed but left *out set\n");
		check_failures_++;
	}
	if (rc == 0)
		hml_tmap_free(map);
	hml_functor_free(fn);
	return rc;
}

static double value(int64_t k)
{
	return (double)k * 0.5 + 1.0 / (double)(k % 7 + 3);
}

static double *dfill(size_t n, int64_t seed)
{
	double *a = malloc(n * sizeof(*a));
	size_t k;

	for (k = 0; k < n; k++)
		a[k] = value((int64_t)k + seed);
	return a;
}

static float *ffill(size_t n, int64_t seed)
{
	float *a = malloc(n * sizeof(*a));
	size_t k;

	for (k = 0; k < n; k++)
		a[k] = (float)value((int64_t)k + seed);
	return a;
}

TEST(rows_five_arrays_to_float)
{
	enum { N = 1000 };
	double *in[5];
	hml_array arrays[5];
	const char *names[5] = { "S", "X", "T", "R", "V" };
	hml_symbol n = { "N", N };
	hml_tmap *map;
	float *dst = malloc(N * 5 * sizeof(float));
	double *ddst = malloc(N * 5 * sizeof(double));
	int64_t shape[HML_MAX_DIMS];
	char *list;
	int k, i, bad = 0;

	for (k = 0; k < 5; k++) {
		in[k] = dfill(N, 100 * k);
		arrays[k] = (hml_array){ names[k], in[k], HML_F64, 1, { N } };
	}
	map = bind("[i, 0:5] = ([i], [i], [i], [i], [i])", NULL, arrays, 5, NULL, 0);
	if (!map)
		goto done;
	CHECK_EQ_INT(hml_tmap_rows(map), N);
	CHECK_EQ_INT(hml_tmap_features(map, shape), 1);
	CHECK_EQ_INT(shape[0], 5);
	CHECK_EQ_INT(hml_tmap_features(map, NULL), 1);
	CHECK_EQ_INT(hml_tmap_row_size(map), 5);
	CHECK_EQ_INT(hml_tmap_dtype(map), HML_F64);
	CHECK_STR(hml__tmap_domain(map), "0:1000");
	CHECK_STR(hml__tmap_functor_text(map), "[i, 0:5] = ([i], [i], [i], [i], [i])");
	list = hml__tmap_array_names(map);
	CHECK_STR(list, "S, X, T, R, V");
	free(list);
	CHECK_STR(hml_tmap_array(map, 2)->name, "T");
	CHECK(hml_tmap_array(map, 2)->data == in[2]);
	CHECK(hml_tmap_array(map, 5) == NULL);

	CHECK_OK(hml_tmap_gather(map, dst, HML_F32, 1));
	CHECK_OK(hml_tmap_gather(map, ddst, HML_F64, 0));
	for (i = 0; i < N; i++)
		for (k = 0; k < 5; k++)
			bad += dst[i * 5 + k] != (float)in[k][i] || ddst[i * 5 + k] != in[k][i];
	CHECK_EQ_INT(bad, 0);
	CHECK(hml_tmap_contiguous(map, HML_F64) == NULL);
	hml_tmap_free(map);

	/* The same over an explicit domain with a symbol. */
	map = bind("[i, 0:5] = ([i], [i], [i], [i], [i])", "0:N", arrays, 5, &n, 1);
	if (map) {
		CHECK_EQ_INT(hml_tmap_rows(map), N);
		memset(dst, 0, N * 5 * sizeof(float));
		CHECK_OK(hml_tmap_gather(map, dst, HML_F32, 2));
		for (bad = 0, i = 0; i < N; i++)
			for (k = 0; k < 5; k++)
				bad += dst[i * 5 + k] != (float)in[k][i];
		CHECK_EQ_INT(bad, 0);
	}
	hml_tmap_free(map);
done:
	for (k = 0; k < 5; k++)
		free(in[k]);
	free(dst);
	free(ddst);
}

static void stencil_case(const char *domain, const hml_symbol *syms, size_t nsyms)
{
	enum { N = 7, M = 9 };
	double *t = dfill(N * M, 3);
	hml_array arrays[3];
	hml_tmap *map;
	double *dst = malloc((N - 2) * (M - 2) * 5 * sizeof(double));
	int64_t shape[HML_MAX_DIMS];
	int i, j, r = 0, bad = 0;

	for (i = 0; i < 3; i++)
		arrays[i] = HML_ARRAY_2D(t, HML_F64, N, M);
	map = bind("[i, j, 0:5] = ([i-1, j], [i+1, j], [i, j-1:j+2])", domain, arrays, 3,
	           syms, nsyms);
	if (!map)
		goto done;
	CHECK_EQ_INT(hml_tmap_rows(map), (N - 2) * (M - 2));
	CHECK_EQ_INT(hml_tmap_features(map, shape), 1);
	CHECK_EQ_INT(shape[0], 5);
	CHECK_STR(hml__tmap_domain(map), "1:6, 1:8");
	CHECK_OK(hml_tmap_gather(map, dst, HML_F64, 0));
	for (i = 1; i < N - 1; i++) {
		for (j = 1; j < M - 1; j++, r++) {
			const double *row = dst + r * 5;
			bad += row[0] != t[(i - 1) * M + j];
			bad += row[1] != t[(i + 1) * M + j];
			bad += row[2] != t[i * M + j - 1];
			bad += row[3] != t[i * M + j];
			bad += row[4] != t[i * M + j + 1];
		}
	}
	CHECK_EQ_INT(bad, 0);
done:
	hml_tmap_free(map);
	free(t);
	free(dst);
}

TEST(stencil_2d_interior)
{
	hml_symbol syms[] = { { "M", 9 }, { "N", 7 } };

	stencil_case("1:N-1, 1:M-1", syms, 2);
	stencil_case(NULL, NULL, 0);
	stencil_case("", NULL, 0);
	stencil_case(" 1 : 6 ,1:8 ", NULL, 0);
}

TEST(concatenation_mixed_widths_and_dtypes)
{
	double *a = dfill(10 * 3, 0), *c = dfill(20, 50);
	float *bf = ffill(10, 30);
	hml_array arrays[3] = {
		HML_ARRAY_2D(a, HML_F64, 10, 3),
		HML_ARRAY_1D(bf, HML_F32, 10),
		HML_ARRAY_1D(c, HML_F64, 20),
	};
	float *dst = malloc(10 * 6 * sizeof(float));
	double *ddst = malloc(10 * 6 * sizeof(double));
	hml_tmap *map;
	int i, k, bad = 0;

	map = bind("[i, 0:6] = ([i, 0:3], [i], [2*i : 2*i+2])", NULL, arrays, 3, NULL, 0);
	if (!map)
		goto done;
	CHECK_EQ_INT(hml_tmap_rows(map), 10);
	CHECK_EQ_INT(hml_tmap_dtype(map), HML_F64);
	CHECK_OK(hml_tmap_gather(map, dst, HML_F32, 0));
	CHECK_OK(hml_tmap_gather(map, ddst, HML_F64, 0));
	for (i = 0; i < 10; i++) {
		for (k = 0; k < 3; k++) {
			bad += dst[i * 6 + k] != (float)a[i * 3 + k];
			bad += ddst[i * 6 + k] != a[i * 3 + k];
		}
		bad += dst[i * 6 + 3] != bf[i];
		bad += ddst[i * 6 + 3] != (double)bf[i];
		for (k = 0; k < 2; k++) {
			bad += dst[i * 6 + 4 + k] != (float)c[2 * i + k];
			bad += ddst[i * 6 + 4 + k] != c[2 * i + k];
		}
	}
	CHECK_EQ_INT(bad, 0);
done:
	hml_tmap_free(map);
	free(a);
	free(bf);
	free(c);
	free(dst);
	free(ddst);
}

TEST(strided_and_offset_slices)
{
	double *a = dfill(20, 0), *b = dfill(5 * 8, 7), *c = dfill(10 * 6, 11);
	hml_array aa = HML_ARRAY_1D(a, HML_F64, 20);
	hml_array ba = HML_ARRAY_2D(b, HML_F64, 5, 8);
	hml_array ca = HML_ARRAY_2D(c, HML_F64, 10, 6);
	double dst[64];
	hml_tmap *map;
	int i, k, r, bad = 0;

	/* A domain with a step: i = 3, 7, 11, 15. */
	if ((map = bind("[i, 0:1] = ([i])", "3:17:4", &aa, 1, NULL, 0)) != NULL) {
		CHECK_EQ_INT(hml_tmap_rows(map), 4);
		CHECK_STR(hml__tmap_domain(map), "3:16:4");
		CHECK_OK(hml_tmap_gather(map, dst, HML_F64, 0));
		for (r = 0; r < 4; r++)
			bad += dst[r] != a[3 + 4 * r];
		CHECK(hml_tmap_contiguous(map, HML_F64) == NULL);
		hml_tmap_free(map);
	}
	/* A range with a step: columns 1, 3, 5. */
	if ((map = bind("[i, 0:3] = ([i, 1:7:2])", NULL, &ba, 1, NULL, 0)) != NULL) {
		CHECK_EQ_INT(hml_tmap_rows(map), 5);
		CHECK_OK(hml_tmap_gather(map, dst, HML_F64, 0));
		for (i = 0; i < 5; i++)
			for (k = 0; k < 3; k++)
				bad += dst[i * 3 + k] != b[i * 8 + 1 + 2 * k];
		hml_tmap_free(map);
	}
	/* Offset rows and columns with a stepped domain: i = 0, 3, 6. */
	if ((map = bind("[i, 0:2] = ([i+2, 3:5])", "0:8:3", &ca, 1, NULL, 0)) != NULL) {
		CHECK_EQ_INT(hml_tmap_rows(map), 3);
		CHECK_OK(hml_tmap_gather(map, dst, HML_F64, 0));
		for (r = 0; r < 3; r++)
			for (k = 0; k < 2; k++)
				bad += dst[r * 2 + k] != c[(3 * r + 2) * 6 + 3 + k];
		hml_tmap_free(map);
	}
	/* A reversed walk needs a domain: a[19 - i]. */
	if ((map = bind("[i, 0:1] = ([N - 1 - i])", "0:N", &aa, 1,
	                &(hml_symbol){ "N", 20 }, 1)) != NULL) {
		CHECK_OK(hml_tmap_gather(map, dst, HML_F64, 0));
		for (r = 0; r < 20; r++)
			bad += dst[r] != a[19 - r];
		hml_tmap_free(map);
	}
	/* An inferred domain may start below 0: a[i+10] for i = -10..9. */
	if ((map = bind("[i, 0:1] = ([i+10])", NULL, &aa, 1, NULL, 0)) != NULL) {
		CHECK_STR(hml__tmap_domain(map), "-10:10");
		CHECK_OK(hml_tmap_gather(map, dst, HML_F64, 0));
		for (r = 0; r < 20; r++)
			bad += dst[r] != a[r];
		hml_tmap_free(map);
	}
	/* Inference rounds outwards-in with coefficients above 1. */
	if ((map = bind("[i, 0:1] = ([2*i+20])", NULL, &aa, 1, NULL, 0)) != NULL) {
		CHECK_STR(hml__tmap_domain(map), "-10:0");
		hml_tmap_free(map);
	}
	if ((map = bind("[i, 0:1] = ([2*i-3])", NULL, &aa, 1, NULL, 0)) != NULL) {
		CHECK_STR(hml__tmap_domain(map), "2:12");
		CHECK_OK(hml_tmap_gather(map, dst, HML_F64, 0));
		for (r = 0; r < 10; r++)
			bad += dst[r] != a[2 * (r + 2) - 3];
		hml_tmap_free(map);
	}
	/* Columns of a 2-D array as samples (domain over the second index). */
	if ((map = bind("[j, 0:5] = ([0:5, j])", NULL, &ba, 1, NULL, 0)) != NULL) {
		CHECK_EQ_INT(hml_tmap_rows(map), 8);
		CHECK_OK(hml_tmap_gather(map, dst, HML_F64, 0));
		for (r = 0; r < 8; r++)
			for (k = 0; k < 5; k++)
				bad += dst[r * 5 + k] != b[k * 8 + r];
		hml_tmap_free(map);
	}
	CHECK_EQ_INT(bad, 0);
	free(a);
	free(b);
	free(c);
}

TEST(affine_rows)
{
	enum { M = 4 };
	double a[24], dst[40];
	hml_symbol m = { "m", M };
	hml_array arr = HML_ARRAY_1D(a, HML_F64, 24);
	hml_tmap *map;
	int k, bad = 0;

	for (k = 0; k < 24; k++)
		a[k] = value(k);
	map = bind("[i, 0:m] = ([i*m : i*m+m])", NULL, &arr, 1, &m, 1);
	if (!map)
		return;
	CHECK_EQ_INT(hml_tmap_rows(map), 6);
	CHECK_STR(hml__tmap_domain(map), "0:6");
	CHECK_OK(hml_tmap_gather(map, dst, HML_F64, 0));
	for (k = 0; k < 24; k++)
		bad += dst[k] != a[k];
	CHECK_EQ_INT(bad, 0);
	/* Already the tensor: zero-copy. */
	CHECK(hml_tmap_contiguous(map, HML_F64) == (void *)a);
	CHECK(hml_tmap_contiguous(map, HML_F32) == NULL);
	hml_tmap_free(map);

	/* Overlapping windows: 2*i+1 : 2*i+1+m. */
	map = bind("[i, 0:m] = ([2*i+1 : 2*i+1+m])", NULL, &arr, 1, &m, 1);
	if (!map)
		return;
	CHECK_EQ_INT(hml_tmap_rows(map), 10);   /* 2*9+1+3 = 22 <= 23 */
	CHECK_OK(hml_tmap_gather(map, dst, HML_F64, 0));
	for (k = 0; k < 10 * M; k++)
		bad += dst[k] != a[2 * (k / M) + 1 + k % M];
	CHECK_EQ_INT(bad, 0);
	CHECK(hml_tmap_contiguous(map, HML_F64) == NULL);
	hml_tmap_free(map);
}

static void whole_field_case(int nz, int nx, hml_dtype tensor_dtype)
{
	int64_t H = nz + 4, W = nx + 4;
	double *f = dfill((size_t)(4 * H * W), 1);
	hml_array arr = HML_ARRAY_3D(f, HML_F64, 4, H, W);
	hml_symbol syms[] = { { "nz", nz }, { "nx", nx } };
	size_t n = (size_t)(4 * nz * nx);
	void *dst = malloc(n * 8);
	double *back = calloc((size_t)(4 * H * W), sizeof(double));
	hml_array barr = HML_ARRAY_3D(back, HML_F64, 4, H, W);
	int64_t shape[HML_MAX_DIMS];
	hml_tmap *map, *bmap = NULL;
	int64_t v, z, x, bad = 0, halo = 0;

	map = bind("[0:4, 0:nz, 0:nx] = ([0:4, 2:nz+2, 2:nx+2])", NULL, &arr, 1, syms, 2);
	if (!map)
		goto done;
	CHECK_EQ_INT(hml_tmap_rows(map), 1);
	CHECK_EQ_INT(hml_tmap_features(map, shape), 3);
	CHECK_EQ_INT(shape[0], 4);
	CHECK_EQ_INT(shape[1], nz);
	CHECK_EQ_INT(shape[2], nx);
	CHECK_EQ_INT(hml_tmap_row_size(map), 4 * nz * nx);
	CHECK_STR(hml__tmap_domain(map), "");
	CHECK(hml_tmap_contiguous(map, HML_F64) == NULL);
	CHECK_OK(hml_tmap_gather(map, dst, tensor_dtype, 0));
	for (v = 0; v < 4; v++)
		for (z = 0; z < nz; z++)
			for (x = 0; x < nx; x++) {
				double want = f[(v * H + z + 2) * W + x + 2];
				size_t o = (size_t)((v * nz + z) * nx + x);
				if (tensor_dtype == HML_F64)
					bad += ((double *)dst)[o] != want;
				else
					bad += ((float *)dst)[o] != (float)want;
			}
	CHECK_EQ_INT(bad, 0);

	/* Scatter into zeroed memory: the interior comes back, halos stay 0. */
	bmap = bind("[0:4, 0:nz, 0:nx] = ([0:4, 2:nz+2, 2:nx+2])", "", &barr, 1, syms, 2);
	if (!bmap)
		goto done;
	CHECK_OK(hml_tmap_scatter(bmap, dst, tensor_dtype, 0));
	for (bad = 0, v = 0; v < 4; v++)
		for (z = 0; z < H; z++)
			for (x = 0; x < W; x++) {
				double got = back[(v * H + z) * W + x];
				double src = f[(v * H + z) * W + x];
				if (z < 2 || z >= nz + 2 || x < 2 || x >= nx + 2)
					halo += got != 0.0;
				else if (tensor_dtype == HML_F64)
					bad += got != src;
				else
					bad += got != (double)(float)src;
			}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(halo, 0);
done:
	hml_tmap_free(map);
	hml_tmap_free(bmap);
	free(f);
	free(back);
	free(dst);
}

TEST(whole_field_with_halos)
{
	whole_field_case(5, 7, HML_F64);
	whole_field_case(5, 7, HML_F32);
	/* Large: split into groups of lines, in parallel. */
	whole_field_case(200, 300, HML_F64);
	whole_field_case(200, 300, HML_F32);
}

TEST(float_double_both_directions)
{
	enum { N = 50, W = 40 };
	float *af = ffill(N * W, 5);
	double *ad = dfill(N * W, 9);
	hml_array arrays[2] = {
		HML_ARRAY_2D(af, HML_F32, N, W),
		HML_ARRAY_2D(ad, HML_F64, N, W),
	};
	float *tf = malloc(N * 2 * W * sizeof(float));
	double *td = malloc(N * 2 * W * sizeof(double));
	float *bf = calloc(N * W, sizeof(float));
	double *bd = calloc(N * W, sizeof(double));
	hml_tmap *map;
	int i, k, bad = 0;

	/* Long contiguous blocks (W = 40) take the line-copy path. */
	map = bind("[i, 0:80] = ([i, 0:40], [i, 0:40])", NULL, arrays, 2, NULL, 0);
	if (!map)
		goto done;
	CHECK_EQ_INT(hml_tmap_dtype(map), HML_F64);
	CHECK_OK(hml_tmap_gather(map, tf, HML_F32, 0));
	CHECK_OK(hml_tmap_gather(map, td, HML_F64, 0));
	for (i = 0; i < N; i++)
		for (k = 0; k < W; k++) {
			bad += tf[i * 80 + k] != af[i * W + k];
			bad += tf[i * 80 + 40 + k] != (float)ad[i * W + k];
			bad += td[i * 80 + k] != (double)af[i * W + k];
			bad += td[i * 80 + 40 + k] != ad[i * W + k];
		}
	CHECK_EQ_INT(bad, 0);

	/* Scatter from both tensor types into both array types. */
	CHECK_OK(hml_tmap_set_data(map, 0, bf));
	CHECK_OK(hml_tmap_set_data(map, 1, bd));
	CHECK_OK(hml_tmap_scatter(map, td, HML_F64, 0));
	for (i = 0; i < N * W; i++)
		bad += bf[i] != af[i] || bd[i] != ad[i];
	memset(bf, 0, N * W * sizeof(float));
	memset(bd, 0, N * W * sizeof(double));
	CHECK_OK(hml_tmap_scatter(map, tf, HML_F32, 0));
	for (i = 0; i < N * W; i++)
		bad += bf[i] != af[i] || bd[i] != (double)(float)ad[i];
	CHECK_EQ_INT(bad, 0);
done:
	hml_tmap_free(map);
	free(af);
	free(ad);
	free(tf);
	free(td);
	free(bf);
	free(bd);
}

TEST(broadcast_piece)
{
	double x[10], p[3] = { 7.5, -1.25, 3.0 };
	hml_array arrays[2] = { HML_ARRAY_1D(x, HML_F64, 10), HML_ARRAY_1D(p, HML_F64, 3) };
	float dst[30];
	hml_tmap *map;
	int i, bad = 0;

	for (i = 0; i < 10; i++)
		x[i] = value(i);
	map = bind("[i, 0:3] = ([i], [1:3])", NULL, arrays, 2, NULL, 0);
	if (!map)
		return;
	CHECK_EQ_INT(hml_tmap_rows(map), 10);
	CHECK_OK(hml_tmap_gather(map, dst, HML_F32, 0));
	for (i = 0; i < 10; i++)
		bad += dst[i * 3] != (float)x[i] || dst[i * 3 + 1] != -1.25f || dst[i * 3 + 2] != 3.0f;
	CHECK_EQ_INT(bad, 0);
	hml_tmap_free(map);

	/* A functor of constants alone: one row. */
	CHECK_FAILS(bind_rc("[0:2] = ([0], [2])", NULL, arrays + 1, 1, NULL, 0),
	            HML_ESHAPE, "has 2 pieces but 1 array was given");
	{
		hml_array two[2] = { arrays[1], arrays[1] };
		map = bind("[0:2] = ([0], [2])", NULL, two, 2, NULL, 0);
		if (map) {
			CHECK_EQ_INT(hml_tmap_rows(map), 1);
			CHECK_OK(hml_tmap_gather(map, dst, HML_F32, 0));
			CHECK(dst[0] == 7.5f && dst[1] == 3.0f);
			hml_tmap_free(map);
		}
	}
}

TEST(gather_into_column_offset)
{
	enum { N = 10, W = 7 };
	double a[N * 3], b[N * 2 * 3], buf[N * W], big[N * 2 * 5], back[N * 3];
	hml_array aa = HML_ARRAY_2D(a, HML_F64, N, 3);
	hml_array ba = HML_ARRAY_3D(b, HML_F64, N, 2, 3);
	hml_tmap *map;
	int i, k, d, bad = 0;

	for (i = 0; i < N * 3; i++)
		a[i] = value(i);
	for (i = 0; i < N * 6; i++)
		b[i] = value(i + 40);
	for (i = 0; i < N * W; i++)
		buf[i] = -99.0;
	if ((map = bind("[i, 0:3] = ([i, 0:3])", NULL, &aa, 1, NULL, 0)) != NULL) {
		CHECK_OK(hml_tmap_gather_into(map, buf, HML_F64, W, 2, 0));
		for (i = 0; i < N; i++)
			for (k = 0; k < W; k++)
				bad += k >= 2 && k < 5 ? buf[i * W + k] != a[i * 3 + k - 2]
				                       : buf[i * W + k] != -99.0;
		/* and back out of the wider buffer */
		memset(back, 0, sizeof(back));
		CHECK_OK(hml_tmap_set_data(map, 0, back));
		CHECK_OK(hml_tmap_scatter_from(map, buf, HML_F64, W, 2, 0));
		bad += memcmp(back, a, sizeof(a)) != 0;
		CHECK_FAILS(hml_tmap_gather_into(map, buf, HML_F64, W, 5, 0), HML_ESHAPE,
		            "columns 5 to 8 do not fit a last dimension of 7");
		CHECK_FAILS(hml_tmap_gather_into(map, buf, HML_F64, W, -1, 0), HML_ESHAPE,
		            "do not fit");
		CHECK_FAILS(hml_tmap_scatter_from(map, buf, HML_F64, 2, 0, 0), HML_ESHAPE,
		            "columns 0 to 3 do not fit a last dimension of 2");
		hml_tmap_free(map);
	}
	/* Two feature dimensions: [2, 3] into [2, 5] at column 1. */
	for (i = 0; i < N * 10; i++)
		big[i] = -99.0;
	if ((map = bind("[i, 0:2, 0:3] = ([i, 0:2, 0:3])", NULL, &ba, 1, NULL, 0)) != NULL) {
		CHECK_OK(hml_tmap_gather_into(map, big, HML_F64, 5, 1, 0));
		for (i = 0; i < N; i++)
			for (d = 0; d < 2; d++)
				for (k = 0; k < 5; k++)
					bad += k >= 1 && k < 4
					       ? big[i * 10 + d * 5 + k] != b[(i * 2 + d) * 3 + k - 1]
					       : big[i * 10 + d * 5 + k] != -99.0;
		hml_tmap_free(map);
	}
	CHECK_EQ_INT(bad, 0);
}

/* 200k rows: the OpenMP path gives the bytes of the serial one. */
TEST(large_rows_parallel)
{
	enum { N = 200000 };
	double *x = dfill(N, 1), *y = dfill(N, 2);
	float *z = ffill(N, 3);
	hml_array arrays[3] = {
		HML_ARRAY_1D(x, HML_F64, N),
		HML_ARRAY_1D(y, HML_F64, N),
		HML_ARRAY_1D(z, HML_F32, N),
	};
	float *t1 = malloc(N * 3 * sizeof(float)), *t2 = malloc(N * 3 * sizeof(float));
	float *t3 = malloc(N * 3 * sizeof(float));
	double *back[3];
	hml_tmap *map, *small;
	int i, k, bad = 0;

	for (k = 0; k < 3; k++)
		back[k] = calloc(N, sizeof(double));
	map = bind("[i, 0:3] = ([i], [i], [i])", NULL, arrays, 3, NULL, 0);
	if (!map)
		goto done;
	CHECK_OK(hml_tmap_gather(map, t1, HML_F32, 1));
	CHECK_OK(hml_tmap_gather(map, t2, HML_F32, 2));
	CHECK_OK(hml_tmap_gather(map, t3, HML_F32, -1));
	CHECK(memcmp(t1, t2, N * 3 * sizeof(float)) == 0);
	CHECK(memcmp(t1, t3, N * 3 * sizeof(float)) == 0);
	for (i = 0; i < N; i++)
		bad += t2[i * 3] != (float)x[i] || t2[i * 3 + 1] != (float)y[i] || t2[i * 3 + 2] != z[i];
	CHECK_EQ_INT(bad, 0);

	/* A small serial map over a piece of the domain agrees with the rows
	 * of the large one. */
	small = bind("[i, 0:3] = ([i], [i], [i])", "123456:123470", arrays, 3, NULL, 0);
	if (small) {
		float part[14 * 3];
		CHECK_OK(hml_tmap_gather(small, part, HML_F32, 1));
		CHECK(memcmp(part, t2 + 123456 * 3, sizeof(part)) == 0);
		hml_tmap_free(small);
	}

	/* Parallel scatter into zeroed double arrays. */
	for (k = 0; k < 3; k++) {
		arrays[k].data = back[k];
		arrays[k].dtype = HML_F64;
	}
	hml_tmap_free(map);
	map = bind("[i, 0:3] = ([i], [i], [i])", NULL, arrays, 3, NULL, 0);
	if (!map)
		goto done;
	CHECK_OK(hml_tmap_scatter(map, t2, HML_F32, 0));
	for (bad = 0, i = 0; i < N; i++)
		bad += back[0][i] != (double)(float)x[i] || back[1][i] != (double)(float)y[i] ||
		       back[2][i] != (double)z[i];
	CHECK_EQ_INT(bad, 0);
done:
	hml_tmap_free(map);
	free(x);
	free(y);
	free(z);
	free(t1);
	free(t2);
	free(t3);
	for (k = 0; k < 3; k++)
		free(back[k]);
}

/* A large 2-D stencil: chunks cut through runs of the inner index. */
TEST(large_stencil_parallel)
{
	enum { N = 400, M = 503 };
	double *t = dfill(N * M, 17);
	hml_array arrays[4];
	int64_t rows = (int64_t)(N - 2) * (M - 2);
	float *s = malloc((size_t)rows * 6 * sizeof(float));
	float *p = malloc((size_t)rows * 6 * sizeof(float));
	hml_tmap *map;
	int64_t r = 0;
	int i, j, bad = 0;

	for (i = 0; i < 4; i++)
		arrays[i] = HML_ARRAY_2D(t, HML_F64, N, M);
	map = bind("[i, j, 0:6] = ([i-1, j], [i+1, j], [i, j-1:j+2], [i+1, j+1])", NULL,
	           arrays, 4, NULL, 0);
	if (!map)
		goto done;
	CHECK_EQ_INT(hml_tmap_rows(map), rows);
	CHECK_STR(hml__tmap_domain(map), "1:399, 1:502");
	CHECK_OK(hml_tmap_gather(map, s, HML_F32, 1));
	CHECK_OK(hml_tmap_gather(map, p, HML_F32, 2));
	CHECK(memcmp(s, p, (size_t)rows * 6 * sizeof(float)) == 0);
	for (i = 1; i < N - 1; i++)
		for (j = 1; j < M - 1; j++, r++) {
			const float *row = p + r * 6;
			bad += row[0] != (float)t[(i - 1) * M + j] || row[1] != (float)t[(i + 1) * M + j];
			bad += row[2] != (float)t[i * M + j - 1] || row[3] != (float)t[i * M + j];
			bad += row[4] != (float)t[i * M + j + 1] || row[5] != (float)t[(i + 1) * M + j + 1];
		}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(r, rows);
done:
	hml_tmap_free(map);
	free(t);
	free(s);
	free(p);
}

TEST(scatter_round_trip)
{
	enum { N = 12, M = 15 };
	double *t = dfill(N * M, 4), *u = calloc(N * M, sizeof(double));
	double *x = dfill(30, 8), *y = dfill(30, 9), *x2 = calloc(30, sizeof(double));
	double *y2 = calloc(30, sizeof(double));
	hml_array ta = HML_ARRAY_2D(t, HML_F64, N, M), ua = HML_ARRAY_2D(u, HML_F64, N, M);
	hml_array rows[2] = { HML_ARRAY_1D(x, HML_F64, 30), HML_ARRAY_1D(y, HML_F64, 30) };
	hml_array rows2[2] = { HML_ARRAY_1D(x2, HML_F64, 30), HML_ARRAY_1D(y2, HML_F64, 30) };
	double buf[(N - 2) * (M - 2)], rbuf[60];
	hml_tmap *in = NULL, *out = NULL;
	int i, j, bad = 0, untouched = 0;

	/* The interior of a grid, one value per row. */
	in = bind("[i, j, 0:1] = ([i, j])", "1:N-1, 1:M-1", &ta, 1,
	          (hml_symbol[]){ { "N", N }, { "M", M } }, 2);
	out = bind("[i, j, 0:1] = ([i, j])", "1:N-1, 1:M-1", &ua, 1,
	           (hml_symbol[]){ { "N", N }, { "M", M } }, 2);
	if (in && out) {
		CHECK_OK(hml_tmap_gather(in, buf, HML_F64, 0));
		CHECK_OK(hml_tmap_scatter(out, buf, HML_F64, 0));
		for (i = 0; i < N; i++)
			for (j = 0; j < M; j++) {
				if (i == 0 || j == 0 || i == N - 1 || j == M - 1)
					untouched += u[i * M + j] != 0.0;
				else
					bad += u[i * M + j] != t[i * M + j];
			}
	}
	hml_tmap_free(in);
	hml_tmap_free(out);
	/* Rows of two arrays, half of the domain. */
	in = bind("[i, 0:2] = ([i], [i])", "0:30:2", rows, 2, NULL, 0);
	out = bind("[i, 0:2] = ([i], [i])", "0:30:2", rows2, 2, NULL, 0);
	if (in && out) {
		CHECK_OK(hml_tmap_gather(in, rbuf, HML_F64, 0));
		CHECK_OK(hml_tmap_scatter(out, rbuf, HML_F64, 0));
		for (i = 0; i < 30; i++) {
			if (i % 2) {
				untouched += x2[i] != 0.0 || y2[i] != 0.0;
			} else {
				bad += x2[i] != x[i] || y2[i] != y[i];
			}
		}
	}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(untouched, 0);
	hml_tmap_free(in);
	hml_tmap_free(out);
	free(t);
	free(u);
	free(x);
	free(y);
	free(x2);
	free(y2);
}

TEST(contiguous)
{
	double a[10 * 8], g[4 * 5];
	float f[10 * 8];
	hml_array aa = HML_ARRAY_2D(a, HML_F64, 10, 8), fa = HML_ARRAY_2D(f, HML_F32, 10, 8);
	hml_array ga = HML_ARRAY_2D(g, HML_F64, 4, 5), la = HML_ARRAY_1D(a, HML_F64, 80);
	hml_array two[2] = { aa, aa };
	hml_tmap *map;

	memset(a, 0, sizeof(a));
	memset(f, 0, sizeof(f));
	memset(g, 0, sizeof(g));
	if ((map = bind("[i, 0:8] = ([i, 0:8])", NULL, &aa, 1, NULL, 0)) != NULL) {
		CHECK(hml_tmap_contiguous(map, HML_F64) == (void *)a);
		CHECK(hml_tmap_contiguous(map, HML_F32) == NULL);
		hml_tmap_free(map);
	}
	/* Whole rows starting at row 2 are still one block. */
	if ((map = bind("[i, 0:8] = ([i, 0:8])", "2:5", &aa, 1, NULL, 0)) != NULL) {
		CHECK(hml_tmap_contiguous(map, HML_F64) == (void *)(a + 16));
		hml_tmap_free(map);
	}
	if ((map = bind("[i, 0:8] = ([i, 0:8])", NULL, &fa, 1, NULL, 0)) != NULL) {
		CHECK(hml_tmap_contiguous(map, HML_F32) == (void *)f);
		CHECK(hml_tmap_contiguous(map, HML_F64) == NULL);
		hml_tmap_free(map);
	}
	if ((map = bind("[0:4, 0:5] = ([0:4, 0:5])", NULL, &ga, 1, NULL, 0)) != NULL) {
		CHECK(hml_tmap_contiguous(map, HML_F64) == (void *)g);
		hml_tmap_free(map);
	}
	if ((map = bind("[i, 0:1] = ([i])", NULL, &la, 1, NULL, 0)) != NULL) {
		CHECK(hml_tmap_contiguous(map, HML_F64) == (void *)a);
		hml_tmap_free(map);
	}
	/* Strided, partial rows, halo interior, several pieces, stepped domain. */
	if ((map = bind("[i, 0:4] = ([i, 0:8:2])", NULL, &aa, 1, NULL, 0)) != NULL) {
		CHECK(hml_tmap_contiguous(map, HML_F64) == NULL);
		hml_tmap_free(map);
	}
	if ((map = bind("[i, 0:4] = ([i, 2:6])", NULL, &aa, 1, NULL, 0)) != NULL) {
		CHECK(hml_tmap_contiguous(map, HML_F64) == NULL);
		hml_tmap_free(map);
	}
	if ((map = bind("[0:2, 0:3] = ([1:3, 1:4])", NULL, &ga, 1, NULL, 0)) != NULL) {
		CHECK(hml_tmap_contiguous(map, HML_F64) == NULL);
		hml_tmap_free(map);
	}
	if ((map = bind("[i, 0:16] = ([i, 0:8], [i, 0:8])", NULL, two, 2, NULL, 0)) != NULL) {
		CHECK(hml_tmap_contiguous(map, HML_F64) == NULL);
		hml_tmap_free(map);
	}
	if ((map = bind("[i, 0:8] = ([i, 0:8])", "0:10:2", &aa, 1, NULL, 0)) != NULL) {
		CHECK(hml_tmap_contiguous(map, HML_F64) == NULL);
		hml_tmap_free(map);
	}
	CHECK(hml_tmap_contiguous(NULL, HML_F64) == NULL);
}

TEST(set_data_and_lifetime)
{
	double a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 10, 20, 30, 40, 50, 60 }, dst[6];
	hml_array arr = { NULL, a, HML_F64, 1, { 6 } };
	hml_tmap *map;
	char *names;

	if (!(map = bind("[i, 0:1] = ([i])", NULL, &arr, 1, NULL, 0)))
		return;
	names = hml__tmap_array_names(map);
	CHECK_STR(names, "#0");
	free(names);
	CHECK_OK(hml_tmap_gather(map, dst, HML_F64, 0));
	CHECK(dst[5] == 6.0);
	CHECK_OK(hml_tmap_set_data(map, 0, b));
	CHECK(hml_tmap_array(map, 0)->data == (void *)b);
	CHECK_OK(hml_tmap_gather(map, dst, HML_F64, 0));
	CHECK(dst[0] == 10.0 && dst[5] == 60.0);
	CHECK_FAILS(hml_tmap_set_data(map, 1, b), HML_EINVALID, "there is no array 1");
	CHECK_FAILS(hml_tmap_set_data(map, 0, NULL), HML_EINVALID, "no data given for array #0 of functor '[i, 0:1] = ([i])'");
	CHECK_FAILS(hml_tmap_set_data(NULL, 0, b), HML_EINVALID, "no map");
	CHECK_FAILS(hml_tmap_gather(map, NULL, HML_F64, 0), HML_EINVALID, "no buffer");
	CHECK_FAILS(hml_tmap_gather(map, dst, (hml_dtype)7, 0), HML_EINVALID, "tensor dtype 7 is not float32 or float64");
	CHECK_FAILS(hml_tmap_gather(NULL, dst, HML_F64, 0), HML_EINVALID, "no map");
	CHECK_FAILS(hml_tmap_scatter(map, NULL, HML_F64, 0), HML_EINVALID, "no buffer");
	hml_tmap_free(map);
	hml_tmap_free(NULL);
	CHECK_EQ_INT(hml_tmap_rows(NULL), 0);
	CHECK_EQ_INT(hml_tmap_row_size(NULL), 0);
	CHECK_EQ_INT(hml_tmap_features(NULL, NULL), 0);
}

TEST(errors_counts_and_arrays)
{
	double x[10], t[5 * 6];
	hml_array five[5], xa = HML_ARRAY_1D(x, HML_F64, 10), ta = HML_ARRAY_2D(t, HML_F64, 5, 6);
	hml_array bad;
	hml_functor *fn = NULL;
	hml_tmap *map = NULL;
	int k;

	for (k = 0; k < 5; k++)
		five[k] = xa;
	CHECK_FAILS(bind_rc("[i, 0:5] = ([i], [i], [i], [i], [i])", NULL, five, 4, NULL, 0),
	            HML_ESHAPE,
	            "functor '[i, 0:5] = ([i], [i], [i], [i], [i])' has 5 pieces but 4 arrays were given");
	CHECK_FAILS(bind_rc("[i, 0:1] = ([i, 0])", NULL, &xa, 1, NULL, 0), HML_ESHAPE,
	            "piece 0 '[i, 0]' has 2 subscripts but array 'x' has 1 dimension");
	CHECK_FAILS(bind_rc("[i, 0:2] = ([i, 0], [i])", NULL, (hml_array[]){ ta, ta }, 2, NULL, 0),
	            HML_ESHAPE, "piece 1 '[i]' has 1 subscript but array 't' has 2 dimensions");

	bad = xa;
	bad.data = NULL;
	CHECK_FAILS(bind_rc("[i, 0:1] = ([i])", NULL, &bad, 1, NULL, 0), HML_EINVALID,
	            "array 'x' for functor '[i, 0:1] = ([i])' has no data");
	bad = xa;
	bad.dtype = (hml_dtype)9;
	CHECK_FAILS(bind_rc("[i, 0:1] = ([i])", NULL, &bad, 1, NULL, 0), HML_EINVALID,
	            "unknown dtype 9");
	bad = xa;
	bad.ndim = 0;
	CHECK_FAILS(bind_rc("[i, 0:1] = ([i])", NULL, &bad, 1, NULL, 0), HML_EINVALID,
	            "has 0 dimensions; 1 to 8 are allowed");
	bad = xa;
	bad.shape[0] = 0;
	CHECK_FAILS(bind_rc("[i, 0:1] = ([i])", NULL, &bad, 1, NULL, 0), HML_EINVALID,
	            "array 'x' for functor '[i, 0:1] = ([i])' has extent 0 in dimension 0");

	CHECK_OK(hml_functor_parse(&fn, "[i, 0:1] = ([i])"));
	CHECK_FAILS(hml_tmap_new(NULL, fn, NULL, &xa, 1, NULL, 0), HML_EINVALID, "no output");
	CHECK_FAILS(hml_tmap_new(&map, NULL, NULL, &xa, 1, NULL, 0), HML_EINVALID, "no functor");
	CHECK_FAILS(hml_tmap_new(&map, fn, NULL, NULL, 1, NULL, 0), HML_EINVALID, "arrays is NULL");
	CHECK_FAILS(hml_tmap_new(&map, fn, NULL, &xa, 1, NULL, 2), HML_EINVALID, "symbols is NULL");
	CHECK(map == NULL);
	hml_functor_free(fn);
}

TEST(errors_bounds)
{
	double x[10], t[5 * 6];
	hml_array xa = HML_ARRAY_1D(x, HML_F64, 10), ta = HML_ARRAY_2D(t, HML_F64, 5, 6);
	hml_array T = { "T", t, HML_F64, 1, { 30 } };
	hml_symbol m = { "m", 4 };

	CHECK_FAILS(bind_rc("[i, 0:1] = ([i+1])", "0:10", &xa, 1, NULL, 0), HML_ERANGE,
	            "slice outside the declared array: 'x' dimension 0 reaches index 10 but its size is 10");
	CHECK_FAILS(bind_rc("[i, 0:1] = ([i-1])", "0:10", &xa, 1, NULL, 0), HML_ERANGE,
	            "slice outside the declared array: 'x' dimension 0 reaches index -1 but its size is 10");
	CHECK_FAILS(bind_rc("[i, j, 0:1] = ([i, j+1])", "0:5, 0:6", &ta, 1, NULL, 0), HML_ERANGE,
	            "'t' dimension 1 reaches index 6 but its size is 6 (piece 0 '[i, j+1]' of functor");
	CHECK_FAILS(bind_rc("[i, j, 0:3] = ([i, j-1:j+2])", "0:5, 1:6", &ta, 1, NULL, 0), HML_ERANGE,
	            "'t' dimension 1 reaches index 6 but its size is 6");
	CHECK_FAILS(bind_rc("[i, j, 0:1] = ([i, j])", "1:6, 0:6", &ta, 1, NULL, 0), HML_ERANGE,
	            "'t' dimension 0 reaches index 5 but its size is 5");
	/* A stepped domain reaches only its own points: 0, 4, 8 < 10. */
	CHECK_EQ_INT(bind_rc("[i, 0:1] = ([i+1])", "0:9:4", &xa, 1, NULL, 0), 0);
	CHECK_FAILS(bind_rc("[i, 0:1] = ([i+1])", "0:10:3", &xa, 1, NULL, 0), HML_ERANGE,
	            "reaches index 10 but its size is 10");
	/* Affine rows one too many. */
	CHECK_FAILS(bind_rc("[i, 0:m] = ([i*m : i*m+m])", "0:8", &T, 1, &m, 1), HML_ERANGE,
	            "'T' dimension 0 reaches index 31 but its size is 30");
	/* Constant subscripts are checked too. */
	CHECK_FAILS(bind_rc("[i, 0:2] = ([i], [10])", NULL, (hml_array[]){ xa, xa }, 2, NULL, 0),
	            HML_ERANGE, "'x' dimension 0 reaches index 10 but its size is 10 (piece 1 '[10]'");
}

TEST(errors_symbols_and_domains)
{
	double x[10], t[5 * 6];
	hml_array xa = HML_ARRAY_1D(x, HML_F64, 10), ta = HML_ARRAY_2D(t, HML_F64, 5, 6);
	hml_symbol n = { "N", 5 };

	CHECK_FAILS(bind_rc("[i, 0:m] = ([i*m : i*m+m])", NULL, &xa, 1, &n, 1), HML_EINVALID,
	            "unknown symbol 'm' in functor '[i, 0:m] = ([i*m : i*m+m])'");
	CHECK_FAILS(bind_rc("[i, 0:1] = ([i])", "0:M", &xa, 1, &n, 1), HML_EINVALID,
	            "unknown symbol 'M' in domain '0:M'");
	CHECK_FAILS(bind_rc("[i, j, 0:1] = ([i, j])", "1:N-1, 1:", &ta, 1, &n, 1), HML_ESYNTAX,
	            "domain '1:N-1, 1:': column 10: expected an expression but found end of input");
	CHECK_FAILS(bind_rc("[i, j, 0:1] = ([i, j])", "1:N-1", &ta, 1, &n, 1), HML_ESHAPE,
	            "domain '1:N-1' has 1 slice but functor '[i, j, 0:1] = ([i, j])' has 2 sample indices");
	CHECK_FAILS(bind_rc("[0:1] = ([0])", "0:3", &xa, 1, NULL, 0), HML_ESHAPE,
	            "has 1 slice but functor '[0:1] = ([0])' has 0 sample indices");
	CHECK_FAILS(bind_rc("[i, 0:1] = ([i])", "5:5", &xa, 1, NULL, 0), HML_EINVALID,
	            "domain '5:5': the slice of 'i' (5:5) is empty");
	CHECK_FAILS(bind_rc("[i, 0:1] = ([i])", "5:N-2", &xa, 1, &n, 1), HML_EINVALID,
	            "the slice of 'i' (5:3) is empty");
	CHECK_FAILS(bind_rc("[i, 0:1] = ([i])", "0:10:0", &xa, 1, NULL, 0), HML_EINVALID,
	            "domain '0:10:0': the slice of 'i' has step 0; steps must be positive");
	CHECK_FAILS(bind_rc("[i, 0:1] = ([i])", "0:10:-1", &xa, 1, NULL, 0), HML_EINVALID,
	            "has step -1");
	CHECK_FAILS(bind_rc("[i, 0:3] = ([i, 0:6:0])", NULL, &ta, 1, NULL, 0), HML_EINVALID,
	            "subscript 1 of piece 0 '[i, 0:6:0]' has step 0; steps must be positive");
	CHECK_FAILS(bind_rc("[i, 0:3] = ([i, 0:6:i])", NULL, &ta, 1, NULL, 0), HML_EINVALID,
	            "the step of subscript 1 of piece 0 '[i, 0:6:i]' depends on a sample index");
	CHECK_FAILS(bind_rc("[i, 0:3] = ([0:i])", NULL, &xa, 1, NULL, 0), HML_EINVALID,
	            "the extent of subscript 0 of piece 0 '[0:i]' depends on the sample index 'i'");
	CHECK_FAILS(bind_rc("[i, 0:3] = ([i, 4:2])", NULL, &ta, 1, NULL, 0), HML_EINVALID,
	            "subscript 1 of piece 0 '[i, 4:2]' is an empty range");
	/* Cannot infer: two indices in a subscript, a negative coefficient, an
	 * index no subscript uses. */
	CHECK_FAILS(bind_rc("[i, j, 0:1] = ([i+j])", NULL, &xa, 1, NULL, 0), HML_EINVALID,
	            "cannot infer the domain of 'i' in functor '[i, j, 0:1] = ([i+j])': give one");
	CHECK_FAILS(bind_rc("[i, 0:1] = ([N-1-i])", NULL, &xa, 1, &n, 1), HML_EINVALID,
	            "cannot infer the domain of 'i'");
	CHECK_FAILS(bind_rc("[i, j, 0:1] = ([i])", "", &xa, 1, NULL, 0), HML_EINVALID,
	            "cannot infer the domain of 'j'");
	CHECK_FAILS(bind_rc("[i, 0:2] = ([i+20], [i])", NULL, (hml_array[]){ xa, xa }, 2, NULL, 0),
	            HML_EINVALID,
	            "cannot infer the domain of 'i' in functor '[i, 0:2] = ([i+20], [i])': no value keeps every access inside its array");
	/* Overflowing symbols. */
	CHECK_FAILS(bind_rc("[i, 0:1] = ([i*m + m + m])", "0:2", &xa, 1,
	                    &(hml_symbol){ "m", INT64_MAX }, 1), HML_EINVALID, "overflows");
}

TEST(errors_shapes)
{
	double t[5 * 6], g[4 * 5 * 6];
	hml_array ta = HML_ARRAY_2D(t, HML_F64, 5, 6), ga = HML_ARRAY_3D(g, HML_F64, 4, 5, 6);

	CHECK_FAILS(bind_rc("[i, 0:5] = ([i, 0:3], [i, 0:3])", NULL, (hml_array[]){ ta, ta }, 2,
	                    NULL, 0), HML_ESHAPE,
	            "functor '[i, 0:5] = ([i, 0:3], [i, 0:3])': pieces give 6 values on the last dimension but the left-hand side declares 5");
	CHECK_FAILS(bind_rc("[i, 0:2] = ([i, 0])", NULL, &ta, 1, NULL, 0), HML_ESHAPE,
	            "pieces give 1 values on the last dimension but the left-hand side declares 2");
	CHECK_FAILS(bind_rc("[0:4, 0:3] = ([0:3, 0:3, 0])", NULL, &ga, 1, NULL, 0), HML_ESHAPE,
	            "piece 0 '[0:3, 0:3, 0]' gives a block [3, 3] that does not fit the feature shape [4, 3]");
	CHECK_FAILS(bind_rc("[i, 0:6] = ([0:2, 0:3])", NULL, &ta, 1, NULL, 0), HML_ESHAPE,
	            "piece 0 '[0:2, 0:3]' has 2 ranges but the left-hand side declares 1 feature dimension");
	CHECK_FAILS(bind_rc("[i, 0:n] = ([i, 0:n])", NULL, &ta, 1, &(hml_symbol){ "n", 0 }, 1),
	            HML_EINVALID, "feature dimension 0 (0:0) is empty");
	/* A scalar piece fits a 2-D feature shape only as [1, x]. */
	CHECK_FAILS(bind_rc("[i, 0:2, 0:1] = ([i, 0])", NULL, &ta, 1, NULL, 0), HML_ESHAPE,
	            "gives a block [1] that does not fit the feature shape [2, 1]");
	CHECK_EQ_INT(bind_rc("[i, 0:1, 0:2] = ([i, 0], [i, 1])", NULL, (hml_array[]){ ta, ta }, 2,
	                     NULL, 0), 0);
}

/* Named feature dimensions transpose: Rodinia's video, int32 laid out
 * [x][y][frame], read as rows of [frame, x, y] (a CNN's channels first),
 * one video per row of a batch; gathered element by element against the
 * hand-written loop, in both float types, and as the only row of a
 * functor without sample indices. Scattering back inverts the order. */
TEST(named_features_transpose)
{
	enum { V = 3, X = 4, Y = 5, T = 6 };
	static int32_t video[V][X][Y][T];
	static double back[2][T];
	float f[V * T * X * Y];
	double d[V * T * X * Y], e[2 * T];
	hml_array va = { "video", video, HML_I32, 4, { V, X, Y, T } };
	hml_array one = { "I", video[1], HML_I32, 3, { X, Y, T } };
	hml_array ba = HML_ARRAY_2D(back, HML_F64, 2, T);
	int64_t shape[HML_MAX_DIMS];
	hml_tmap *map;
	int v, x, y, t, bad = 0;

	for (v = 0; v < V; v++)
		for (x = 0; x < X; x++)
			for (y = 0; y < Y; y++)
				for (t = 0; t < T; t++)
					video[v][x][y][t] = 1000 * v + 100 * t + 10 * x + y;
	map = bind("[v, t = 0:nt, x = 0:nx, y = 0:ny] = ([v, x, y, t])", "0:3", &va, 1,
	           (hml_symbol[]){ { "nt", T }, { "nx", X }, { "ny", Y } }, 3);
	if (!map)
		return;
	CHECK_EQ_INT(hml_tmap_rows(map), V);
	CHECK_EQ_INT(hml_tmap_features(map, shape), 3);
	CHECK_EQ_INT(shape[0], T);
	CHECK_EQ_INT(shape[1], X);
	CHECK_EQ_INT(shape[2], Y);
	CHECK_OK(hml_tmap_gather(map, f, HML_F32, 1));
	CHECK_OK(hml_tmap_gather(map, d, HML_F64, 2));
	for (v = 0; v < V; v++)
		for (t = 0; t < T; t++)
			for (x = 0; x < X; x++)
				for (y = 0; y < Y; y++) {
					size_t k = (((size_t)v * T + t) * X + x) * Y + y;
					bad += f[k] != (float)video[v][x][y][t] || d[k] != (double)video[v][x][y][t];
				}
	CHECK_EQ_INT(bad, 0);
	CHECK(hml_tmap_contiguous(map, HML_F64) == NULL);
	hml_tmap_free(map);

	/* One video, no sample index: the whole region call is one row. */
	map = bind("[t = 0:T, x = 0:X, y = 0:Y] = ([x, y, t])", NULL, &one, 1,
	           (hml_symbol[]){ { "T", T }, { "X", X }, { "Y", Y } }, 3);
	if (map) {
		CHECK_EQ_INT(hml_tmap_rows(map), 1);
		CHECK_OK(hml_tmap_gather(map, d, HML_F64, 0));
		CHECK_NEAR(d[(2 * X + 3) * Y + 4], (double)video[1][3][4][2], 0.0);
		hml_tmap_free(map);
	}

	/* An output read as [frame, 2] and written to memory laid out [2][frame]. */
	for (t = 0; t < T; t++)
		e[2 * t] = t + 0.25, e[2 * t + 1] = -t;
	map = bind("[t = 0:T, c = 0:2] = ([c, t])", NULL, &ba, 1, &(hml_symbol){ "T", T }, 1);
	if (map) {
		CHECK_OK(hml_tmap_scatter(map, e, HML_F64, 0));
		for (t = 0; t < T; t++)
			bad += back[0][t] != t + 0.25 || back[1][t] != -t;
		CHECK_EQ_INT(bad, 0);
		hml_tmap_free(map);
	}
}

/* What a named feature dimension may not do, each a one-line error. */
TEST(named_features_errors)
{
	static int32_t video[4][5][6];
	hml_array one = { "I", video, HML_I32, 3, { 4, 5, 6 } };
	hml_functor *fn = NULL;

	CHECK_FAILS(bind_rc("[t = 0:6, x = 0:4, y = 0:5] = ([x, 0:5, t])", NULL, &one, 1, NULL, 0),
	            HML_EINVALID,
	            "piece 0 '[x, 0:5, t]' mixes named feature dimensions with a range; name every one");
	CHECK_FAILS(bind_rc("[t = 0:6, x = 0:4, y = 0:5] = ([x, x, t])", NULL, &one, 1, NULL, 0),
	            HML_EINVALID, "piece 0 '[x, x, t]' names the feature dimension 'x' twice");
	CHECK_FAILS(bind_rc("[t = 0:6, x = 0:4, y = 0:5] = ([x, y, 0])", NULL, &one, 1, NULL, 0),
	            HML_ESHAPE, "gives a block [4, 5] that does not fit the feature shape [6, 4, 5]");
	CHECK_FAILS(bind_rc("[t = 0:7, x = 0:4, y = 0:5] = ([x, y, t])", NULL, &one, 1, NULL, 0),
	            HML_ERANGE, "'I' dimension 2 reaches index 6 but its size is 6");
	CHECK_FAILS(hml_functor_parse(&fn, "[t = 0:6, t = 0:4] = ([t, t])"), HML_ESYNTAX,
	            "expected a distinct feature name");
	CHECK_FAILS(hml_functor_parse(&fn, "[i, t = 0:6] = ([i, t + 1])"), HML_ESYNTAX,
	            "expected an expression, not a feature dimension's name (it stands alone as a subscript)");
	CHECK_FAILS(hml_functor_parse(&fn, "[i, i = 0:6] = ([i, i])"), HML_ESYNTAX,
	            "expected a distinct feature name");
	CHECK(fn == NULL);
}

/* Integer inputs (dates, counts) beside float ones: gathered converted to
 * either float type, widened to float64 by hml_tmap_dtype(); never written. */
TEST(integer_inputs)
{
	double rate[10], back[10 * 8];
	int32_t dates[10][6];
	int64_t big[10];
	float fdst[10 * 8];
	double ddst[10 * 8];
	hml_array arrays[3] = {
		HML_ARRAY_1D(rate, HML_F64, 10),
		HML_ARRAY_2D(dates, HML_I32, 10, 6),
		HML_ARRAY_1D(big, HML_I64, 10),
	};
	hml_array only_int = HML_ARRAY_2D(dates, HML_I32, 10, 6);
	hml_tmap *map, *imap = NULL;
	int i, k, bad = 0;

	for (i = 0; i < 10; i++) {
		rate[i] = 0.03 + 0.01 * i;
		for (k = 0; k < 6; k++)
			dates[i][k] = (k % 3 == 0 ? 1998 : 1) + i * 7 + k - 30;
		big[i] = ((int64_t)1 << 52) + i;
	}
	map = bind("[i, 0:8] = ([i], [i, 0:6], [i])", "0:10", arrays, 3, NULL, 0);
	if (!map)
		return;
	CHECK_EQ_INT(hml_tmap_dtype(map), HML_F64);
	CHECK_OK(hml_tmap_gather(map, fdst, HML_F32, 0));
	CHECK_OK(hml_tmap_gather(map, ddst, HML_F64, 1));
	for (i = 0; i < 10; i++) {
		bad += ddst[i * 8] != rate[i] || fdst[i * 8] != (float)rate[i];
		for (k = 0; k < 6; k++)
			bad += ddst[i * 8 + 1 + k] != (double)dates[i][k] ||
			       fdst[i * 8 + 1 + k] != (float)dates[i][k];
		/* int64 up to 2^53 is exact in double. */
		bad += ddst[i * 8 + 7] != (double)big[i] || (int64_t)ddst[i * 8 + 7] != big[i];
		bad += fdst[i * 8 + 7] != (float)big[i];
	}
	CHECK_EQ_INT(bad, 0);
	CHECK(hml_tmap_contiguous(map, HML_F64) == NULL);

	/* A map of integers alone is float64 and never zero-copy. */
	imap = bind("[i, 0:6] = ([i, 0:6])", NULL, &only_int, 1, NULL, 0);
	if (imap) {
		CHECK_EQ_INT(hml_tmap_dtype(imap), HML_F64);
		CHECK(hml_tmap_contiguous(imap, HML_F32) == NULL);
		CHECK(hml_tmap_contiguous(imap, HML_F64) == NULL);
		CHECK_OK(hml_tmap_gather(imap, ddst, HML_F64, 0));
		CHECK_NEAR(ddst[6 * 3 + 2], (double)dates[3][2], 0.0);
	}

	/* Outputs are floating point: scattering into integers is refused and
	 * leaves the application memory as it was. */
	for (i = 0; i < 10 * 8; i++)
		back[i] = -1.0;
	CHECK_FAILS(hml_tmap_scatter(map, back, HML_F64, 0), HML_ENOTSUPPORTED,
	            "array 'dates' of functor '[i, 0:8] = ([i], [i, 0:6], [i])' is int32; outputs must be float32 or float64");
	CHECK_FAILS(hml_tmap_scatter_from(imap, back, HML_F32, 6, 0, 0), HML_ENOTSUPPORTED,
	            "is int32");
	CHECK_NEAR(rate[2], 0.05, 1e-15);
	CHECK_EQ_INT(dates[3][2], 1 + 21 + 2 - 30);
	hml_tmap_free(imap);
	hml_tmap_free(map);
}

/* Whole integer rows copied in contiguous runs: int32 -> float32 and
 * int64 -> float64 share an element size but not a representation, so
 * the runs are converted, not copied bit for bit (the particle filter's
 * frames, a 4-D int32 array, one video per row). */
TEST(integer_rows_contiguous)
{
	static int32_t frames[3][2][4][5];
	static int64_t counts[3][40];
	float fdst[3 * 40];
	double ddst[3 * 40];
	hml_array f4 = HML_ARRAY_4D(frames, HML_I32, 3, 2, 4, 5);
	hml_array c2 = HML_ARRAY_2D(counts, HML_I64, 3, 40);
	hml_symbol sym[3] = { { "T", 2 }, { "S", 4 }, { "V", 3 } };
	hml_tmap *fm, *cm;
	int i, bad = 0;

	for (i = 0; i < 3 * 40; i++) {
		(&frames[0][0][0][0])[i] = 100 + i;
		(&counts[0][0])[i] = -7 * i;
	}
	fm = bind("[v, 0:T, 0:S, 0:5] = ([v, 0:T, 0:S, 0:5])", "0:V", &f4, 1, sym, 3);
	cm = bind("[i, 0:40] = ([i, 0:40])", "0:3", &c2, 1, NULL, 0);
	if (!fm || !cm)
		goto done;
	CHECK_OK(hml_tmap_gather(fm, fdst, HML_F32, 1));
	CHECK_OK(hml_tmap_gather(fm, ddst, HML_F64, 1));
	for (i = 0; i < 3 * 40; i++)
		bad += fdst[i] != (float)(100 + i) || ddst[i] != (double)(100 + i);
	CHECK_OK(hml_tmap_gather(cm, ddst, HML_F64, 1));
	CHECK_OK(hml_tmap_gather(cm, fdst, HML_F32, 1));
	for (i = 0; i < 3 * 40; i++)
		bad += ddst[i] != -7.0 * i || fdst[i] != (float)(-7 * i);
	CHECK_EQ_INT(bad, 0);
done:
	hml_tmap_free(fm);
	hml_tmap_free(cm);
}

/* A map declared with one batch's shape walks a larger array batch by batch. */
TEST(seek_batches)
{
	double x[12][3], dst[4 * 4];
	int32_t n[12];
	hml_array arrays[2] = { HML_ARRAY_2D(x, HML_F64, 4, 3), HML_ARRAY_1D(n, HML_I32, 4) };
	hml_tmap *map;
	int i, k, off, bad = 0;

	for (i = 0; i < 12; i++) {
		n[i] = 100 + i;
		for (k = 0; k < 3; k++)
			x[i][k] = i * 10 + k;
	}
	map = bind("[i, 0:4] = ([i, 0:3], [i])", "0:4", arrays, 2, NULL, 0);
	if (!map)
		return;
	for (off = 8; off >= 0; off -= 4) {
		CHECK_OK(hml_tmap_seek(map, off));
		CHECK(hml_tmap_array(map, 0)->data == (void *)x[off]);
		CHECK_OK(hml_tmap_gather(map, dst, HML_F64, 0));
		for (i = 0; i < 4; i++) {
			for (k = 0; k < 3; k++)
				bad += dst[i * 4 + k] != x[off + i][k];
			bad += dst[i * 4 + 3] != n[off + i];
		}
	}
	CHECK_EQ_INT(bad, 0);
	/* Seeking is relative to the memory last set, not cumulative. */
	CHECK_OK(hml_tmap_set_data(map, 1, n + 4));
	CHECK_OK(hml_tmap_seek(map, 4));
	CHECK(hml_tmap_array(map, 1)->data == (void *)(n + 8));
	CHECK(hml_tmap_array(map, 0)->data == (void *)x[4]);
	CHECK_FAILS(hml_tmap_seek(map, -1), HML_EINVALID, "cannot seek to row -1");
	CHECK_FAILS(hml_tmap_seek(NULL, 0), HML_EINVALID, "no map");
	hml_tmap_free(map);
}

int main(void)
{
	RUN(rows_five_arrays_to_float);
	RUN(stencil_2d_interior);
	RUN(concatenation_mixed_widths_and_dtypes);
	RUN(integer_inputs);
	RUN(integer_rows_contiguous);
	RUN(seek_batches);
	RUN(strided_and_offset_slices);
	RUN(affine_rows);
	RUN(whole_field_with_halos);
	RUN(float_double_both_directions);
	RUN(broadcast_piece);
	RUN(gather_into_column_offset);
	RUN(large_rows_parallel);
	RUN(large_stencil_parallel);
	RUN(scatter_round_trip);
	RUN(contiguous);
	RUN(set_data_and_lifetime);
	RUN(errors_counts_and_arrays);
	RUN(errors_bounds);
	RUN(errors_symbols_and_domains);
	RUN(errors_shapes);
	RUN(named_features_transpose);
	RUN(named_features_errors);
	return check_report();
}
