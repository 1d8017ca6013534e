/*
 * lib/search/opt/gp.c - Gaussian-process regression: Matern-5/2 ARD kernel, LAPACKE
 * factorisations, NLopt fitting of the hyper-parameters.
 */
#include "search/opt/gp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>
#include <nlopt.h>

#include "core/error.h"
#include "core/rng.h"

/* The LAPACKE *_work entry points skip LAPACKE's NaN scan of every input
 * matrix, an O(n^2) pass that costs more than a one-column triangular solve;
 * the inputs are checked to be finite once, in hml__gp_set_data(). */

#define SQRT5 2.23606797749978969641

/* Bounds of the fitted hyper-parameters (natural units). */
#define LS_MIN 0.01
#define LS_MAX 20.0
#define S2_MIN 0.05
#define S2_MAX 20.0
#define N2_MAX 1.0

struct hml__gp {
	size_t dim, n, cap;
	double *ls;      /* dim length-scales */
	double s2, n2;
	double *X;       /* n x dim, row-major */
	double *y;       /* standardised */
	double ymean, ystd;
	double *L;       /* n x n, column-major; lower Cholesky factor of K */
	double *alpha;   /* K^-1 y */
	double *work;    /* n x n scratch for the fit */
	double logdet;   /* sum log L_ii */
	int factored;
};

int hml__gp_new(hml__gp **out, size_t dim)
{
	*out = NULL;
	if (dim == 0)
		return hml__error_set(HML_EINVALID, "gaussian process: dimension must be >= 1");
	hml__gp *gp = calloc(1, sizeof *gp);
	if (!gp || !(gp->ls = malloc(dim * sizeof *gp->ls))) {
		free(gp);
		return hml__error_oom();
	}
	gp->dim = dim;
	for (size_t j = 0; j < dim; j++)
		gp->ls[j] = 0.5;
	gp->s2 = 1.0;
	gp->n2 = 1e-3;
	*out = gp;
	return 0;
}

void hml__gp_free(hml__gp *gp)
{
	if (!gp)
		return;
	free(gp->ls);
	free(gp->X);
	free(gp->y);
	free(gp->L);
	free(gp->alpha);
	free(gp->work);
	free(gp);
}

/* Scaled squared distance between two rows. */
static double dist2(const double *a, const double *b, const double *ls, size_t dim)
{
	double r2 = 0;
	for (size_t k = 0; k < dim; k++) {
		double t = (a[k] - b[k]) / ls[k];
		r2 += t * t;
	}
	return r2;
}

static double matern52(double r2)
{
	double r = sqrt(r2);
	return (1.0 + SQRT5 * r + 5.0 / 3.0 * r2) * exp(-SQRT5 * r);
}

/* K (lower triangle, column-major) for hyper-parameters ls, s2 and diagonal
 * noise n2 + jitter, then its Cholesky factor in place. Returns 0, or the
 * LAPACK info (> 0: not positive definite). */
static int factor_into(const hml__gp *gp, double *K, const double *ls, double s2,
                       double diag)
{
	size_t n = gp->n, d = gp->dim;
	for (size_t j = 0; j < n; j++) {
		K[j + j * n] = s2 + diag;
		for (size_t i = j + 1; i < n; i++)
			K[i + j * n] = s2 * matern52(dist2(gp->X + i * d, gp->X + j * d, ls, d));
	}
	return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int)n, K, (lapack_int)n);
}

/* Factorise with a jitter that grows until the factorisation succeeds. */
static int factor_jitter(const hml__gp *gp, double *K, const double *ls, double s2,
                         double n2)
{
	double jitter = 0;
	for (int attempt = 0; attempt < 8; attempt++) {
		if (factor_into(gp, K, ls, s2, n2 + jitter) == 0)
			return 0;
		jitter = jitter ? jitter * 10 : 1e-10 * s2;
	}
	return -1;
}

static int refactor(hml__gp *gp)
{
	size_t n = gp->n;
	gp->factored = 0;
	if (n == 0)
		return 0;
	if (factor_jitter(gp, gp->L, gp->ls, gp->s2, gp->n2) < 0)
		return hml__error_set(HML_ERROR, "gaussian process: kernel matrix is not "
		                      "positive definite");
	memcpy(gp->alpha, gp->y, n * sizeof *gp->alpha);
	LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', (lapack_int)n, 1, gp->L, (lapack_int)n,
	               gp->alpha, (lapack_int)n);
	gp->logdet = 0;
	for (size_t i = 0; i < n; i++)
		gp->logdet += log(gp->L[i + i * n]);
	gp->factored = 1;
	return 0;
}

int hml__gp_set_hyper(hml__gp *gp, const double *lengthscale, double s2, double n2)
{
	for (size_t j = 0; j < gp->dim; j++)
		if (!(lengthscale[j] > 0) || !isfinite(lengthscale[j]))
			return hml__error_set(HML_EINVALID, "gaussian process: length-scale %zu "
			                      "must be positive", j);
	if (!(s2 > 0) || !isfinite(s2) || !(n2 >= 0) || !isfinite(n2))
		return hml__error_set(HML_EINVALID, "gaussian process: variances must be "
		                      "positive");
	memcpy(gp->ls, lengthscale, gp->dim * sizeof *gp->ls);
	gp->s2 = s2;
	gp->n2 = fmax(n2, HML__GP_NOISE_FLOOR);
	return refactor(gp);
}

void hml__gp_hyper(const hml__gp *gp, double *lengthscale, double *s2, double *n2)
{
	if (lengthscale)
		memcpy(lengthscale, gp->ls, gp->dim * sizeof *lengthscale);
	if (s2)
		*s2 = gp->s2;
	if (n2)
		*n2 = gp->n2;
}

static int reserve(hml__gp *gp, size_t n)
{
	if (n <= gp->cap)
		return 0;
	double *X = realloc(gp->X, n * gp->dim * sizeof *X);
	if (X)
		gp->X = X;
	double *y = realloc(gp->y, n * sizeof *y);
	if (y)
		gp->y = y;
	double *a = realloc(gp->alpha, n * sizeof *a);
	if (a)
		gp->alpha = a;
	free(gp->L);
	free(gp->work);
	gp->L = malloc(n * n * sizeof *gp->L);
	gp->work = malloc(n * n * sizeof *gp->work);
	if (!X || !y || !a || !gp->L || !gp->work) {
		gp->cap = gp->n = 0;
		return hml__error_oom();
	}
	gp->cap = n;
	return 0;
}

int hml__gp_set_data(hml__gp *gp, const double *X, const double *y, size_t n)
{
	int rc;
	if (n == 0)
		return hml__error_set(HML_EINVALID, "gaussian process: no observations");
	for (size_t i = 0; i < n * gp->dim; i++)
		if (!isfinite(X[i]))
			return hml__error_set(HML_EINVALID, "gaussian process: non-finite input");
	double mean = 0, var = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(y[i]))
			return hml__error_set(HML_EINVALID, "gaussian process: non-finite output");
		mean += y[i];
	}
	mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		var += (y[i] - mean) * (y[i] - mean);
	var /= (double)n;
	gp->n = 0;
	if ((rc = reserve(gp, n)) < 0)
		return rc;
	gp->n = n;
	gp->ymean = mean;
	gp->ystd = var > 1e-24 ? sqrt(var) : 1.0;
	memcpy(gp->X, X, n * gp->dim * sizeof *X);
	for (size_t i = 0; i < n; i++)
		gp->y[i] = (y[i] - mean) / gp->ystd;
	return refactor(gp);
}

double hml__gp_log_likelihood(const hml__gp *gp)
{
	double quad = 0;
	for (size_t i = 0; i < gp->n; i++)
		quad += gp->y[i] * gp->alpha[i];
	return -0.5 * quad - gp->logdet - 0.5 * (double)gp->n * log(2 * M_PI);
}

int hml__gp_predict(const hml__gp *gp, const double *Xs, size_t m, double *mean,
                    double *var)
{
	size_t n = gp->factored ? gp->n : 0, d = gp->dim;
	if (n == 0) {
		for (size_t j = 0; j < m; j++) {
			if (mean)
				mean[j] = 0;
			if (var)
				var[j] = gp->s2;
		}
		return 0;
	}
	double *Ks = malloc(n * m * sizeof *Ks);
	if (!Ks)
		return hml__error_oom();
	for (size_t j = 0; j < m; j++) {
		double *col = Ks + j * n, mu = 0;
		for (size_t i = 0; i < n; i++) {
			col[i] = gp->s2 * matern52(dist2(gp->X + i * d, Xs + j * d, gp->ls, d));
			mu += col[i] * gp->alpha[i];
		}
		if (mean)
			mean[j] = mu * gp->ystd + gp->ymean;
	}
	if (var) {
		/* v = L^-1 Ks; var = s2 - |v|^2, all columns in one BLAS-3 solve */
		LAPACKE_dtrtrs_work(LAPACK_COL_MAJOR, 'L', 'N', 'N', (lapack_int)n, (lapack_int)m,
		               gp->L, (lapack_int)n, Ks, (lapack_int)n);
		for (size_t j = 0; j < m; j++) {
			double q = 0;
			for (size_t i = 0; i < n; i++)
				q += Ks[i + j * n] * Ks[i + j * n];
			var[j] = fmax(gp->s2 - q, 0.0) * gp->ystd * gp->ystd;
		}
	}
	free(Ks);
	return 0;
}

/* ---- fitting ---------------------------------------------------------- */

typedef struct {
	hml__gp *gp;
	double *ls;           /* scratch: dim length-scales */
	double best;          /* lowest negative log likelihood seen */
	double *best_theta;
	unsigned evals;
} fit_ctx;

/* Negative log marginal likelihood at theta = (log l, log s2, log n2) and its
 * gradient: d(-LML)/dtheta = -1/2 tr((alpha alpha' - K^-1) dK/dtheta). */
static double neg_lml(unsigned nt, const double *theta, double *grad, void *data)
{
	fit_ctx *c = data;
	hml__gp *gp = c->gp;
	size_t n = gp->n, d = gp->dim;
	double *K = gp->work, s2 = exp(theta[d]), n2 = exp(theta[d + 1]);
	c->evals++;
	for (size_t k = 0; k < d; k++)
		c->ls[k] = exp(theta[k]);
	if (factor_jitter(gp, K, c->ls, s2, n2) < 0) {
		if (grad)
			memset(grad, 0, nt * sizeof *grad);
		return 1e300;
	}
	double *a = gp->alpha; /* restored by refactor() after the fit */
	memcpy(a, gp->y, n * sizeof *a);
	LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', (lapack_int)n, 1, K, (lapack_int)n, a,
	               (lapack_int)n);
	double f = 0.5 * (double)n * log(2 * M_PI);
	for (size_t i = 0; i < n; i++)
		f += 0.5 * gp->y[i] * a[i] + log(K[i + i * n]);
	if (grad) {
		LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'L', (lapack_int)n, K, (lapack_int)n);
		memset(grad, 0, nt * sizeof *grad);
		for (size_t j = 0; j < n; j++) {
			const double *xj = gp->X + j * d;
			double w = a[j] * a[j] - K[j + j * n];
			grad[d] += 0.5 * w * s2;
			grad[d + 1] += 0.5 * w * n2;
			for (size_t i = j + 1; i < n; i++) {
				const double *xi = gp->X + i * d;
				double r2 = dist2(xi, xj, c->ls, d), r = sqrt(r2), e = exp(-SQRT5 * r);
				double wij = a[i] * a[j] - K[i + j * n]; /* x2 (symmetry) x 1/2 */
				grad[d] += wij * s2 * (1.0 + SQRT5 * r + 5.0 / 3.0 * r2) * e;
				double g = wij * s2 * 5.0 / 3.0 * (1.0 + SQRT5 * r) * e;
				for (size_t k = 0; k < d; k++) {
					double t = (xi[k] - xj[k]) / c->ls[k];
					grad[k] += g * t * t;
				}
			}
		}
		for (size_t k = 0; k < nt; k++)
			grad[k] = -grad[k];
	}
	if (f < c->best) {
		c->best = f;
		memcpy(c->best_theta, theta, nt * sizeof *theta);
	}
	return f;
}

int hml__gp_fit(hml__gp *gp, unsigned restarts, unsigned maxeval, uint64_t seed)
{
	size_t d = gp->dim, nt = d + 2;
	int rc = 0;
	if (gp->n == 0)
		return hml__error_set(HML_EINVALID, "gaussian process: no observations to fit");
	double *mem = malloc((5 * nt + d) * sizeof *mem);
	nlopt_opt opt = nlopt_create(NLOPT_LD_LBFGS, (unsigned)nt);
	if (!mem || !opt) {
		rc = hml__error_oom();
		goto done;
	}
	double *lo = mem, *hi = lo + nt, *theta = hi + nt, *start = theta + nt;
	fit_ctx c = { gp, start + nt, INFINITY, start + nt + d, 0 };
	for (size_t k = 0; k < d; k++) {
		lo[k] = log(LS_MIN);
		hi[k] = log(LS_MAX);
		start[k] = log(gp->ls[k]);
	}
	lo[d] = log(S2_MIN), hi[d] = log(S2_MAX), start[d] = log(gp->s2);
	lo[d + 1] = log(HML__GP_NOISE_FLOOR), hi[d + 1] = log(N2_MAX);
	start[d + 1] = log(gp->n2);
	nlopt_set_lower_bounds(opt, lo);
	nlopt_set_upper_bounds(opt, hi);
	nlopt_set_min_objective(opt, neg_lml, &c);
	nlopt_set_maxeval(opt, (int)(maxeval ? maxeval : 100));
	nlopt_set_ftol_rel(opt, 1e-7);
	nlopt_set_xtol_rel(opt, 1e-5);
	uint64_t rng = seed;
	for (unsigned r = 0; r <= restarts; r++) {
		for (size_t k = 0; k < nt; k++) {
			double s = r == 0 ? start[k] : lo[k] + hml__rng_uniform(&rng) * (hi[k] - lo[k]);
			theta[k] = fmin(fmax(s, lo[k]), hi[k]);
		}
		double f;
		nlopt_optimize(opt, theta, &f); /* the best point is tracked in c */
	}
	if (isfinite(c.best)) {
		for (size_t k = 0; k < d; k++)
			gp->ls[k] = exp(c.best_theta[k]);
		gp->s2 = exp(c.best_theta[d]);
		gp->n2 = fmax(exp(c.best_theta[d + 1]), HML__GP_NOISE_FLOOR);
	}
	rc = refactor(gp);
done:
	nlopt_destroy(opt);
	free(mem);
	return rc;
}
