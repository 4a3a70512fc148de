"""Objectives, problems and the tolerance ladder the linear benchmarks share."""
import os

import numpy as np

from fastsvm.params import Params
from fastsvm.solvers import get_solver
from fastsvm.solvers.base import Kernel, Subproblem

LADDER = 10 ** -0.5      # ladder_side's tolerances: start, start 10^-0.5, start 10^-1, ...


def hinge_primal(X, y, C, w, b, p=1.0):
    """1/2 |w|^2 + C sum max(0, 1 - y (X w + b))^p."""
    return 0.5 * float(w @ w) + C * float((np.maximum(0.0, 1.0 - y * (X @ w + b)) ** p).sum())


def linear_subproblem(solver, X, y, C, tol, threads=1, **params):
    """The linear C-SVC subproblem (bounds C) of a solver by name; ``options`` and any other
    Params fields as keywords."""
    options = params.pop("options", {})
    params = Params(solver=solver, kernel_type="linear", C=C, tol=tol, options=options, **params)
    return Subproblem("c_svc", X, y, np.full(X.shape[0], float(C)), Kernel("linear"), params, n_threads=threads)


def ssnal_subproblem(X, y, C, tol, threads=1):
    """SSsNAL's linear C-SVC subproblem (unregularized bias), as fastsvm -s ssnal -t 0 builds it."""
    params = Params(svm_type="c_svc", solver="ssnal", C=C, tol=tol)
    return Subproblem("c_svc", X, y, np.full(len(y), C), Kernel("linear"), params, n_threads=threads)


def optimum(X, y, C, threads):
    """F*: the hinge primal objective of SSsNAL's solution at eta 1e-9 (LIBSVM's linear problem)."""
    sol = get_solver("ssnal").solve(linear_subproblem("ssnal", X, y, C, 1e-9, threads))
    w = X.T @ sol.coef
    return hinge_primal(X, y, C, w, -sol.rho)


def ladder_side(run, gap, F_star, start, steps):
    """The first tolerance of start, start 10^-0.5, ... whose run meets the gap: (tol, seconds,
    result) or None. ``run(tol)`` returns (seconds, objective, result)."""
    tol = start
    for _ in range(steps):
        seconds, objective, result = run(tol)
        if (objective - F_star) / F_star <= gap:
            return tol, seconds, result
        tol *= LADDER
    return None


def dual_quality(X, y, C, gamma, run):
    """(dual objective, eta) of an RBF C-SVC run's solution (benchlib.rbf_child's record), both
    sides measured alike: coef_i = s_i x_i on its rows (s_i = +1 for the model's first label),
    the gradient Q x - e by kernel products over all rows, eta (docs/algorithms.md §0) by the
    linear solver's kkt_residual."""
    from fastsvm._core._knapsack import KnapsackSet
    from fastsvm._core._ssnal_kernel import KernelProducts
    from fastsvm.csr import to_csr
    from fastsvm.solvers.ssnal import kkt_residual
    X = to_csr(X)
    n = X.shape[0]
    s = np.where(y == run["label"], 1.0, -1.0)
    rows = np.asarray(run["rows"], dtype=np.int32)
    beta = np.zeros(n)
    beta[rows] = run["coef"]
    x = s * beta
    h = np.zeros(n)
    KernelProducts(X, "rbf", gamma, n_threads=os.cpu_count() or 1).matvec(
        np.arange(n, dtype=np.int32), rows, beta[rows], h)
    grad = s * h - 1.0
    eta, _ = kkt_residual(x, grad, KnapsackSet(s, 0.0, np.zeros(n), np.full(n, C)))
    return 0.5 * float(x @ (grad + 1.0)) - float(x.sum()), eta
