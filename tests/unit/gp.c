/*
 * tests/unit/gp.c - the Gaussian process against scikit-learn, fitting,
 * duplicate inputs, constant outputs and bad input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "check.h"
#include "search/opt/gp.h"

static size_t read_matrix(const json_t *a, double *out, size_t cols)
{
	size_t i, k;
	json_t *row;
	json_array_foreach(a, i, row) {
		if (cols == 0)
			out[i] = json_number_value(row);
		else
			for (k = 0; k < cols; k++)
				out[i * cols + k] = json_number_value(json_array_get(row, k));
	}
	return json_array_size(a);
}

/* Same data and fixed hyper-parameters: same mean, variance and likelihood
 * as scikit-learn's GaussianProcessRegressor (tests/python/gp_reference.py). */
TEST(matches_sklearn)
{
	char path[4096];
	json_error_t err;
	snprintf(path, sizeof path, "%s/gp_reference.json", getenv("HML_TEST_TMP"));
	json_t *ref = json_load_file(path, 0, &err);
	CHECK(ref != NULL);
	if (!ref)
		return;
	size_t d = (size_t)json_integer_value(json_object_get(ref, "dim"));
	double X[64 * 3], y[64], Xs[16 * 3], ls[3], mean[16], var[16], rmean[16], rvar[16];
	size_t n = read_matrix(json_object_get(ref, "X"), X, d);
	read_matrix(json_object_get(ref, "y"), y, 0);
	size_t m = read_matrix(json_object_get(ref, "Xs"), Xs, d);
	read_matrix(json_object_get(ref, "lengthscale"), ls, 0);
	read_matrix(json_object_get(ref, "mean"), rmean, 0);
	read_matrix(json_object_get(ref, "var"), rvar, 0);
	double s2 = json_number_value(json_object_get(ref, "s2"));
	double n2 = json_number_value(json_object_get(ref, "n2"));
	double lml = json_number_value(json_object_get(ref, "lml"));

	double ymean = 0, ystd = 0;
	for (size_t i = 0; i < n; i++)
		ymean += y[i] / (double)n;
	for (size_t i = 0; i < n; i++)
		ystd += (y[i] - ymean) * (y[i] - ymean) / (double)n;
	ystd = sqrt(ystd);

	hml__gp *gp = NULL;
	CHECK_OK(hml__gp_new(&gp, d));
	CHECK_OK(hml__gp_set_hyper(gp, ls, s2, n2));
	CHECK_OK(hml__gp_set_data(gp, X, y, n));
	CHECK_OK(hml__gp_predict(gp, Xs, m, mean, var));
	for (size_t j = 0; j < m; j++) {
		CHECK_NEAR(mean[j], rmean[j], 1e-9 * ystd);
		/* scikit-learn's variance includes the white noise */
		CHECK_NEAR(var[j] + n2 * ystd * ystd, rvar[j], 1e-9 * ystd * ystd);
	}
	CHECK_NEAR(hml__gp_log_likelihood(gp), lml, 1e-9 * fabs(lml));
	hml__gp_free(gp);
	json_decref(ref);
}

static double test_fn(const double *x)
{
	return sin(6 * x[0]) + 0.3 * x[1] + 0.01 * x[2];
}

/* Fitting raises the likelihood above the start and above random settings,
 * and learns that the third input barely matters. */
TEST(fit_maximises_likelihood)
{
	enum { N = 40, D = 3 };
	double X[N * D], y[N], ls[D];
	unsigned s = 1;
	for (size_t i = 0; i < N * D; i++)
		X[i] = (double)(s = s * 1103515245u + 12345u) / 4294967296.0;
	for (size_t i = 0; i < N; i++)
		y[i] = test_fn(X + i * D);
	hml__gp *gp = NULL;
	CHECK_OK(hml__gp_new(&gp, D));
	CHECK_OK(hml__gp_set_data(gp, X, y, N));
	double before = hml__gp_log_likelihood(gp);
	CHECK_OK(hml__gp_fit(gp, 2, 0, 42));
	double after = hml__gp_log_likelihood(gp), s2, n2;
	hml__gp_hyper(gp, ls, &s2, &n2);
	CHECK(after > before);
	CHECK(ls[2] > 2 * ls[0]);
	for (int r = 0; r < 20; r++) {
		double l[D], t;
		for (int k = 0; k < D; k++)
			l[k] = 0.02 + (double)(s = s * 1103515245u + 12345u) / 4294967296.0 * 3;
		t = 0.1 + (double)(s = s * 1103515245u + 12345u) / 4294967296.0 * 5;
		CHECK_OK(hml__gp_set_hyper(gp, l, t, 1e-4));
		CHECK(hml__gp_log_likelihood(gp) <= after + 1e-6);
	}
	/* fitting is deterministic */
	hml__gp *again = NULL;
	double ls2[D], s2b, n2b;
	CHECK_OK(hml__gp_new(&again, D));
	CHECK_OK(hml__gp_set_data(again, X, y, N));
	CHECK_OK(hml__gp_fit(again, 2, 0, 42));
	hml__gp_hyper(again, ls2, &s2b, &n2b);
	for (int k = 0; k < D; k++)
		CHECK(ls2[k] == ls[k]);
	CHECK(s2b == s2 && n2b == n2);
	hml__gp_free(again);
	hml__gp_free(gp);
}

/* Many copies of one input with different outputs: the noise floor keeps the
 * factorisation alive; the mean there is the copies' average. */
TEST(duplicate_inputs)
{
	double X[12 * 2], y[12], mean, var;
	for (int i = 0; i < 10; i++) {
		X[2 * i] = 0.25;
		X[2 * i + 1] = 0.75;
		y[i] = i % 2 ? 1.0 : 3.0;
	}
	X[20] = 0.9, X[21] = 0.1, y[10] = 0;
	X[22] = 0.1, X[23] = 0.1, y[11] = 5;
	hml__gp *gp = NULL;
	double ls[2] = { 0.3, 0.3 };
	CHECK_OK(hml__gp_new(&gp, 2));
	CHECK_OK(hml__gp_set_hyper(gp, ls, 1.0, 0.0)); /* raised to the floor */
	CHECK_OK(hml__gp_set_data(gp, X, y, 12));
	CHECK_OK(hml__gp_predict(gp, X, 1, &mean, &var));
	CHECK_NEAR(mean, 2.0, 0.05);
	CHECK(var >= 0 && isfinite(var));
	CHECK_OK(hml__gp_fit(gp, 1, 0, 3));
	CHECK_OK(hml__gp_predict(gp, X, 1, &mean, &var));
	CHECK(isfinite(mean) && isfinite(var) && var >= 0);
	hml__gp_free(gp);
}

TEST(constant_outputs_and_prior)
{
	double X[3] = { 0.1, 0.5, 0.9 }, y[3] = { 7, 7, 7 }, x = 0.3, mean, var;
	hml__gp *gp = NULL;
	CHECK_OK(hml__gp_new(&gp, 1));
	CHECK_OK(hml__gp_predict(gp, &x, 1, &mean, &var));
	CHECK(mean == 0 && var == 1.0);
	CHECK_OK(hml__gp_set_data(gp, X, y, 3));
	CHECK_OK(hml__gp_predict(gp, &x, 1, &mean, NULL));
	CHECK_NEAR(mean, 7.0, 1e-9);
	CHECK_OK(hml__gp_fit(gp, 1, 0, 1));
	CHECK_OK(hml__gp_predict(gp, &x, 1, &mean, &var));
	CHECK_NEAR(mean, 7.0, 1e-9);
	hml__gp_free(gp);
}

TEST(bad_input)
{
	hml__gp *gp = NULL;
	double X[2] = { 0, 1 }, y[2] = { 0, NAN }, ls = -1;
	CHECK_FAILS(hml__gp_new(&gp, 0), HML_EINVALID, "dimension");
	CHECK(gp == NULL);
	CHECK_OK(hml__gp_new(&gp, 1));
	CHECK_FAILS(hml__gp_set_data(gp, X, y, 0), HML_EINVALID, "no observations");
	CHECK_FAILS(hml__gp_set_data(gp, X, y, 2), HML_EINVALID, "non-finite output");
	CHECK_FAILS(hml__gp_set_hyper(gp, &ls, 1, 0), HML_EINVALID, "length-scale");
	CHECK_FAILS(hml__gp_fit(gp, 0, 0, 0), HML_EINVALID, "no observations");
	hml__gp_free(gp);
	hml__gp_free(NULL);
}

int main(void)
{
	RUN(matches_sklearn);
	RUN(fit_maximises_likelihood);
	RUN(duplicate_inputs);
	RUN(constant_outputs_and_prior);
	RUN(bad_input);
	return check_report();
}
