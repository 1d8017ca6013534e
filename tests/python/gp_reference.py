#!/usr/bin/env python3
"""Reference predictions of scikit-learn's Gaussian process for tests/unit/gp.c.

usage: gp_reference.py OUT.json

Fits nothing: the kernel's hyper-parameters are fixed, so the C Gaussian
process with the same hyper-parameters must give the same predictive mean,
variance and log marginal likelihood. The data (seeded) include a duplicated
input and outputs far from zero mean and unit scale, so that the noise floor
and the standardisation of the outputs are exercised.

The file holds: dim, X (n x dim), y, Xs (m x dim), lengthscale, s2, n2,
mean, var (scikit-learn's, which includes the noise n2 * std(y)^2) and lml
(of the standardised outputs).
"""
import json
import sys

import numpy as np
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel


def main():
    rng = np.random.default_rng(20261124)
    dim, n, m = 3, 25, 12
    X = rng.uniform(size=(n, dim))
    X[7] = X[3]  # a duplicate point
    y = 100.0 * (np.sin(3 * X[:, 0]) + X[:, 1] ** 2 - X[:, 2]) + 50.0
    y += rng.normal(scale=2.0, size=n)
    Xs = rng.uniform(size=(m, dim))
    Xs[0] = X[3]  # predict at a training point too
    ls, s2, n2 = [0.3, 0.5, 0.8], 1.7, 1e-3
    kernel = (ConstantKernel(s2, "fixed") * Matern(ls, "fixed", nu=2.5)
              + WhiteKernel(n2, "fixed"))
    gpr = GaussianProcessRegressor(kernel, alpha=0.0, optimizer=None, normalize_y=True)
    gpr.fit(X, y)
    mean, std = gpr.predict(Xs, return_std=True)
    out = {"dim": dim, "X": X.tolist(), "y": y.tolist(), "Xs": Xs.tolist(),
           "lengthscale": ls, "s2": s2, "n2": n2, "mean": mean.tolist(),
           "var": (std ** 2).tolist(), "lml": float(gpr.log_marginal_likelihood_value_)}
    with open(sys.argv[1], "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
