/*
 * lib/search/opt/gp.h - Gaussian-process regression for the optimiser (internal).
 *
 * Kernel: k(a, b) = s2 * matern52(r) + n2 * [a == b],
 *   r = sqrt(sum_j ((a_j - b_j) / l_j)^2),
 *   matern52(r) = (1 + sqrt(5) r + 5/3 r^2) exp(-sqrt(5) r),
 * one length-scale l_j per input dimension (ARD), signal variance s2 and
 * noise variance n2, both in units of the standardised outputs: the outputs
 * are shifted by their mean and divided by their standard deviation (ddof 0;
 * 1 when they are all equal) before anything else, and predictions are
 * scaled back. This is scikit-learn's GaussianProcessRegressor with kernel
 * ConstantKernel(s2) * Matern(l, nu=2.5) + WhiteKernel(n2) and
 * normalize_y=True, except that predictions give the variance of the latent
 * function (add n2 * std^2 for scikit-learn's, which includes the noise).
 *
 * The noise variance never goes below HML__GP_NOISE_FLOOR, so duplicate
 * inputs keep the kernel matrix positive definite; if a factorisation still
 * fails, a growing jitter is added to the diagonal. Linear algebra is
 * LAPACKE (dpotrf, dpotrs, dpotri, dtrtrs); hyper-parameters are fitted by
 * NLopt's L-BFGS on the exact log marginal likelihood and its analytic
 * gradient, from the current values and from random restarts.
 */
#ifndef HML_LIB_GP_H
#define HML_LIB_GP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HML__GP_NOISE_FLOOR 1e-6

typedef struct hml__gp hml__gp;

/**
 * A new GP over dim >= 1 inputs, with no data and the hyper-parameters
 * l_j = 0.5, s2 = 1, n2 = 1e-3. *out is yours: hml__gp_free() it.
 * Errors: HML_EINVALID (dim 0), HML_ENOMEM.
 */
int hml__gp_new(hml__gp **out, size_t dim);

/** Free a GP (NULL-safe). */
void hml__gp_free(hml__gp *gp);

/**
 * Set the hyper-parameters (dim length-scales > 0, s2 > 0, n2 >= 0; n2 is
 * raised to the noise floor) and refactorise the data, if any.
 * Errors: HML_EINVALID for a non-positive or non-finite value; those of
 * hml__gp_set_data().
 */
int hml__gp_set_hyper(hml__gp *gp, const double *lengthscale, double s2, double n2);

/** The current hyper-parameters (lengthscale has room for dim values). */
void hml__gp_hyper(const hml__gp *gp, double *lengthscale, double *s2, double *n2);

/**
 * Condition the GP on n >= 1 observations: X is n x dim, row-major; y has n
 * finite values. Both are copied. Factorises the kernel matrix.
 * Errors: HML_EINVALID (n 0, a non-finite value), HML_ENOMEM, HML_ERROR
 * "gaussian process: kernel matrix is not positive definite" (only if the
 * largest jitter does not help, i.e. never for finite inputs).
 */
int hml__gp_set_data(hml__gp *gp, const double *X, const double *y, size_t n);

/**
 * Fit the hyper-parameters to the data by maximising the log marginal
 * likelihood: one L-BFGS run from the current values, then `restarts` from
 * random points drawn with `seed` (deterministic). Keeps the best; bounds:
 * l_j in [0.01, 20], s2 in [0.05, 20], n2 in [noise floor, 1].
 * maxeval bounds the likelihood evaluations of each run (0: 100).
 * Errors: HML_EINVALID (no data), HML_ENOMEM.
 */
int hml__gp_fit(hml__gp *gp, unsigned restarts, unsigned maxeval, uint64_t seed);

/** The log marginal likelihood of the standardised data (needs data). */
double hml__gp_log_likelihood(const hml__gp *gp);

/**
 * Predict at m points Xs (m x dim, row-major): mean[i] and the variance of
 * the latent function var[i] (>= 0), in the units of y. Either output may
 * be NULL. Without data, the prior (mean 0, variance s2).
 * Errors: HML_ENOMEM.
 */
int hml__gp_predict(const hml__gp *gp, const double *Xs, size_t m, double *mean,
                    double *var);

#ifdef __cplusplus
}
#endif
#endif
