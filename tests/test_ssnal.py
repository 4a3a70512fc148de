"""SSsNAL (solver "ssnal", linear kernel) against LIBSVM, a dense QP solved by SLSQP, and NumPy
twins of its pieces.

The optimum is judged by the KKT residual eta, recomputed here in plain NumPy (explicit Z,
projection by bisection) for SSsNAL's dual vector and for LIBSVM's (read from its sv_coef and
sv_indices), by the dual objective, the bias and the predictions.
"""
import dataclasses
import functools
import math
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import brentq as scipy_brentq

from conftest import shared_file
from fastsvm import load_svmlight_file
from fastsvm._core._cg import conjugate_gradient
from fastsvm._core._dcd import DualCD
from fastsvm._core._knapsack import KnapsackSet
from fastsvm._core._linalg import ProjectedBlock, bordered_solve, cholesky_solve, dense_newton
from fastsvm._core._screening import held_misses, hold_rows
from fastsvm._core._rows import StackedRows
from fastsvm._core._linesearch import line_point, off_system_moves, search_scalars
from fastsvm._core._ssnal_linear import NewtonCG, sorted_changes
from fastsvm._core._status import Status
from fastsvm.csr import to_csr
from fastsvm.errors import FastSVMError, ParameterError
from fastsvm.parallel import one_blas_thread
from fastsvm.params import Params
from fastsvm.solvers import get_solver
from fastsvm.solvers.base import Kernel, Subproblem
from fastsvm.solvers.ssnal import SOLVER, Config, kkt_residual, linear_dual, solve
from fastsvm.solvers.ssnal import screening as ssnal_screening
from fastsvm.solvers.ssnal.inner import InnerSolve
from fastsvm.solvers.ssnal.linesearch import line_minimum
from fastsvm.solvers.ssnal.newton import NewtonSystems
from fastsvm.solvers.ssnal.problem import Counters, RowSubset, coordinate_start
from fastsvm.solvers.ssnal.schedule import next_sigma

svmutil = pytest.importorskip("libsvm.svmutil")


# ---------------------------------------------------------------- NumPy twins

def np_project(v, a, lower, upper, d=0.0):
    """Pi_K(v) by bisection on the multiplier (200 halvings: exact to rounding)."""
    v, a = np.asarray(v, float), np.asarray(a, float)

    def g(lam):
        return a @ np.clip(v - lam * a, lower, upper) - d

    span = np.abs(v).max() + np.abs(np.where(np.isfinite(upper), upper, 0)).max() + 1.0
    lo, hi = -span / np.abs(a[a != 0]).min() - 1, span / np.abs(a[a != 0]).min() + 1
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if g(mid) > 0 else (lo, mid)
    lam = 0.5 * (lo + hi)
    return np.clip(v - lam * a, lower, upper), lam


def np_dual(X, y, formulation, upper, epsilon=0.1):
    """(Z, c, a, u) of docs/algorithms.md §0, Z explicit."""
    X = sp.csr_matrix(X)
    n = X.shape[0]
    if formulation == "c_svc":
        return sp.diags(y) @ X, -np.ones(n), y.astype(float), upper
    Z = sp.vstack([X, -X]).tocsr()
    return Z, np.concatenate([epsilon - y, epsilon + y]), np.concatenate([np.ones(n), -np.ones(n)]), \
        np.concatenate([upper, upper])


def np_eta(Z, c, a, u, x):
    """eta(x) = |x - Pi_K(x - grad f(x))| / (1 + |x| + |grad f(x)|), grad f = Z Z^T x + c."""
    grad = Z @ (Z.T @ x) + c
    proj, lam = np_project(x - grad, a, np.zeros_like(u), u)
    return np.linalg.norm(x - proj) / (1 + np.linalg.norm(x) + np.linalg.norm(grad)), lam


def np_objective(Z, c, x):
    w = Z.T @ x
    return 0.5 * w @ w + c @ x


# ---------------------------------------------------------------- helpers

@functools.cache
def load(name):
    X, y = load_svmlight_file(str(shared_file(name)), zero_based=False)
    return to_csr(X), y


def as_pm(labels):
    """+1 for the label LIBSVM lists first (that of the first row), -1 for the other."""
    return np.where(labels == labels[0], 1.0, -1.0)


def subproblem(X, y, formulation="c_svc", C=1.0, tol=1e-6, *, upper=None, log=None, stop=None, n_threads=1,
               config=None, **options):
    params = Params(svm_type=formulation, solver="ssnal", C=C, tol=tol, epsilon=0.1, options=options, config=config)
    kw = {} if stop is None else {"stop": stop}
    return Subproblem(formulation, X, y, np.full(X.shape[0], C) if upper is None else upper,
                      Kernel("linear"), params, log=log, n_threads=n_threads, **kw)


def libsvm_dual(X, y, formulation, C, extra=""):
    """LIBSVM's dual vector x (docs/algorithms.md §0 layout), its b, and the model."""
    if formulation == "c_svc":
        options = f"-s 0 -t 0 -c {C} -e 1e-6 -q {extra}"
    else:
        options = f"-s 3 -t 0 -c {C} -p 0.1 -e 1e-6 -q {extra}"
    model = svmutil.svm_train(y, X, options)
    coef = np.zeros(X.shape[0])
    coef[np.array(model.get_sv_indices()) - 1] = np.array(model.get_sv_coef())[:, 0]
    b = -model.rho[0]
    if formulation == "c_svc":
        if model.get_labels()[0] != 1:  # LIBSVM's decision is positive for its first label
            coef, b = -coef, -b
        return coef * y, b, model
    return np.concatenate([np.maximum(coef, 0), np.maximum(-coef, 0)]), b, model


# ---------------------------------------------------------------- against LIBSVM

CASES = [("heart_scale", "c_svc", 1.0), ("mushrooms", "c_svc", 1.0), ("housing_scale", "epsilon_svr", 1.0),
         ("abalone_scale", "epsilon_svr", 1.0), ("mg", "epsilon_svr", 4.0)]
SLOW_CASES = [("a9a", "c_svc", 1.0), ("w8a", "c_svc", 1.0)]


def check_against_libsvm(name, formulation, C):
    X, labels = load(name)
    check_solution_against_libsvm(X, as_pm(labels) if formulation == "c_svc" else labels, formulation, C)


def check_solution_against_libsvm(X, y, formulation, C):
    """SSsNAL to eta <= 1e-6 on (X, y) against LIBSVM on the same rows; returns the solution."""
    sol = solve(subproblem(X, y, formulation, C, tol=1e-6))
    assert sol.status == "converged" and sol.stop_measure <= 1e-6
    n = X.shape[0]
    x = sol.dual
    np.testing.assert_allclose(sol.coef, x * y if formulation == "c_svc" else x[:n] - x[n:], rtol=0, atol=0)
    x_lib, b_lib, model = libsvm_dual(X, y, formulation, C)
    Z, c, a, u = np_dual(X, y, formulation, np.full(n, C))
    eta_ours, b_eta = np_eta(Z, c, a, u, x)
    eta_lib, _ = np_eta(Z, c, a, u, x_lib)
    assert eta_ours <= 1e-6, eta_ours
    assert eta_lib <= 1e-6, eta_lib
    f_ours, f_lib = np_objective(Z, c, x), np_objective(Z, c, x_lib)
    assert abs(f_ours - f_lib) <= 1e-4 * abs(f_lib), (f_ours, f_lib)
    assert sol.objective == pytest.approx(f_ours, rel=1e-9, abs=1e-12)
    b = -sol.rho
    assert abs(b - b_lib) <= 1e-3 * (1 + abs(b_lib)), (b, b_lib)
    np.testing.assert_allclose(sol.w, X.T @ sol.coef, rtol=1e-9, atol=1e-9)
    ours = X @ sol.w + b
    theirs = np.array(svmutil.svm_predict(y, X, model, "-q")[0])
    if formulation == "c_svc":
        assert np.mean(np.where(ours > 0, 1.0, -1.0) == theirs) >= 0.999
    else:
        assert np.mean(np.abs(ours - theirs) <= 1e-3 * (1 + np.abs(theirs))) >= 0.999
    return sol


@pytest.mark.parametrize("name,formulation,C", CASES)
def test_optimum_equals_libsvm(name, formulation, C):
    check_against_libsvm(name, formulation, C)


@pytest.mark.slow
@pytest.mark.parametrize("name,formulation,C", SLOW_CASES)
def test_optimum_equals_libsvm_large(name, formulation, C):
    check_against_libsvm(name, formulation, C)


def test_class_weights_match_libsvm_w_options():
    X, labels = load("heart_scale")
    y = as_pm(labels)
    C, w_pos, w_neg = 2.0, 3.0, 0.5
    upper = C * np.where(y > 0, w_pos, w_neg)
    sol = solve(subproblem(X, y, C=C, upper=upper))
    pos_label, neg_label = int(labels[0]), int(labels[labels != labels[0]][0])
    x_lib, b_lib, _ = libsvm_dual(X, y, "c_svc", C, f"-w{pos_label} {w_pos} -w{neg_label} {w_neg}")
    Z, c, a, u = np_dual(X, y, "c_svc", upper)
    assert np_eta(Z, c, a, u, sol.coef * y)[0] <= 1e-6
    assert np_eta(Z, c, a, u, x_lib)[0] <= 1e-6
    assert np_objective(Z, c, sol.coef * y) == pytest.approx(np_objective(Z, c, x_lib), rel=1e-6)
    assert -sol.rho == pytest.approx(b_lib, rel=1e-3, abs=1e-3)
    assert np.all(sol.coef * y <= upper + 1e-12)


# ---------------------------------------------------------------- a dense QP solved another way

@pytest.mark.parametrize("formulation", ["c_svc", "epsilon_svr"])
def test_tiny_dense_qp_against_slsqp(formulation):
    from scipy.optimize import minimize

    rng = np.random.default_rng(0)
    n, p = 10, 3
    X = rng.normal(size=(n, p))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0) if formulation == "c_svc" else \
        X @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.normal(size=n)
    C = 0.7
    Z, c, a, u = np_dual(X, y, formulation, np.full(n, C))
    Q = (Z @ Z.T).toarray() if sp.issparse(Z) else Z @ Z.T
    res = minimize(lambda x: 0.5 * x @ Q @ x + c @ x, np.zeros(len(c)), jac=lambda x: Q @ x + c,
                   bounds=[(0, ui) for ui in u],
                   constraints=[{"type": "eq", "fun": lambda x: a @ x, "jac": lambda x: a}],
                   method="SLSQP", options={"ftol": 1e-14, "maxiter": 1000})
    assert res.success
    sol = solve(subproblem(sp.csr_matrix(X), y, formulation, C, tol=1e-9))
    x = sol.coef * y if formulation == "c_svc" else None
    assert sol.objective == pytest.approx(res.fun, rel=1e-7, abs=1e-9)
    if x is not None:
        np.testing.assert_allclose(x, res.x, atol=1e-5)
    else:
        np.testing.assert_allclose(sol.coef, res.x[:n] - res.x[n:], atol=1e-5)


def test_hand_solved_two_points():
    # x1 = (1, 0), y1 = +1; x2 = (-1, 0), y2 = -1: alpha = (1/2, 1/2) for C >= 1/2, w = (1, 0), b = 0
    X = sp.csr_matrix(np.array([[1.0, 0.0], [-1.0, 0.0]]))
    y = np.array([1.0, -1.0])
    sol = solve(subproblem(X, y, C=10.0, tol=1e-10))
    np.testing.assert_allclose(sol.coef, [0.5, -0.5], atol=1e-9)
    np.testing.assert_allclose(sol.w, [1.0, 0.0], atol=1e-9)
    assert abs(sol.rho) <= 1e-9
    assert sol.objective == pytest.approx(-0.5)
    # C = 0.25 < 1/2: both at the bound, w = (0.5, 0)
    sol = solve(subproblem(X, y, C=0.25, tol=1e-10))
    np.testing.assert_allclose(sol.coef, [0.25, -0.25], atol=1e-12)


# ---------------------------------------------------------------- pieces against NumPy

def test_kkt_residual_against_numpy_twin():
    rng = np.random.default_rng(1)
    X = sp.random(60, 7, density=0.5, random_state=2, format="csr")
    y = np.where(rng.random(60) < 0.5, 1.0, -1.0)
    u = rng.uniform(0.5, 2.0, 60)
    Z, c, a, _ = np_dual(X, y, "c_svc", u)
    K = KnapsackSet(a, 0.0, np.zeros(60), u)
    for scale in (0.0, 0.3, 1.0):
        x, _ = np_project(rng.uniform(0, 2, 60) * scale, a, np.zeros(60), u)
        grad = Z @ (Z.T @ x) + c
        eta, lam = kkt_residual(x, grad, K)
        eta2, lam2 = np_eta(Z, c, a, u, x)
        assert kkt_residual(x, grad, K, hint=lam + 0.1) == pytest.approx((eta, lam), rel=1e-12, abs=1e-15)
        assert eta == pytest.approx(eta2, rel=1e-9, abs=1e-15)
        assert lam == pytest.approx(lam2, rel=1e-9, abs=1e-12)
    assert kkt_residual(x, grad, K)[0] > 0
    # zero at the optimum (found by SSsNAL to 1e-10) and equal to the solver's report, which is
    # eta at its incrementally kept Z^T x (dense Newton systems update it from their Gram
    # matrices: rounding of ~1e-13 here), so within 1% of the tolerance
    sol = solve(subproblem(X, y, C=1.0, tol=1e-10, upper=u))
    x = sol.coef * y
    assert np_eta(Z, c, a, u, x)[0] <= 1e-10
    assert kkt_residual(x, Z @ (Z.T @ x) + c, K)[0] == pytest.approx(sol.stop_measure, rel=1e-6, abs=1e-12)


@pytest.fixture
def operator():
    rng = np.random.default_rng(3)
    X = to_csr(sp.random(300, 40, density=0.2, random_state=4, format="csr"))
    source = np.concatenate([np.arange(300), np.arange(300)]).astype(np.int32)
    sign = np.concatenate([np.ones(300), -np.ones(300)])
    sign[rng.random(600) < 0.3] *= -1
    sign *= np.sqrt(rng.integers(1, 5, size=600))    # merged equal samples scale their row by sqrt(copies)
    Zd = sp.diags(sign) @ X[source]
    return X, source, sign, Zd.toarray(), rng


@pytest.mark.parametrize("n_threads", [1, 2])
def test_stacked_rows_products_against_dense(operator, n_threads):
    X, source, sign, Zd, rng = operator
    Z = StackedRows(X, source, sign, n_threads=n_threads)
    v, u = rng.normal(size=40), rng.normal(size=600)
    np.testing.assert_allclose(Z.matvec(v), Zd @ v, atol=1e-12)
    np.testing.assert_allclose(Z.rmatvec(u), Zd.T @ u, atol=1e-12)
    rows = np.sort(rng.choice(600, 150, replace=False)).astype(np.int32)
    np.testing.assert_allclose(Z.rows_matvec(rows, v), Zd[rows] @ v, atol=1e-12)
    np.testing.assert_allclose(Z.rows_rmatvec(rows, u[:150]), Zd[rows].T @ u[:150], atol=1e-12)
    out = np.ones(40)
    Z.rows_rmatvec_diff(rows, u, 0.5 * u, out)
    np.testing.assert_allclose(out, 1 + Zd[rows].T @ (0.5 * u[rows]), atol=1e-12)
    a_rows = rng.normal(size=150)
    G, s = Z.rows_gram(rows, a_rows)
    np.testing.assert_allclose(G, Zd[rows].T @ Zd[rows], atol=1e-12)
    np.testing.assert_allclose(s, Zd[rows].T @ a_rows, atol=1e-12)
    np.testing.assert_allclose(Z.rows_kernel(rows), Zd[rows] @ Zd[rows].T, atol=1e-12)
    np.testing.assert_allclose(Z.rows_dense(rows), Zd[rows], atol=0)
    empty = np.array([], dtype=np.int32)
    assert Z.rows_kernel(empty).shape == (0, 0)
    np.testing.assert_array_equal(Z.rows_rmatvec(empty, np.array([])), 0)
    with pytest.raises(FastSVMError):
        Z.rows_matvec(np.array([600], dtype=np.int32), v)
    with pytest.raises(FastSVMError):
        Z.matvec(np.ones(39))


def test_newton_cg_solves_the_newton_system(operator):
    X, source, sign, Zd, rng = operator
    Z = StackedRows(X, source, sign)
    rows = np.sort(rng.choice(600, 80, replace=False)).astype(np.int32)
    a = np.where(rng.random(80) < 0.5, 1.0, -1.0)
    P = np.eye(80) - np.outer(a, a) / 80
    sigma = 7.0
    H = np.eye(40) + sigma * Zd[rows].T @ P @ Zd[rows]
    rhs = rng.normal(size=40)
    d = np.zeros(40)
    iters, status = NewtonCG(Z).solve(rows, a, sigma, rhs, d, rtol=1e-12, max_iter=200)
    assert status == Status.CONVERGED and 0 < iters <= 40 + 5
    np.testing.assert_allclose(d, np.linalg.solve(H, rhs), rtol=1e-9, atol=1e-10)
    iters, status = NewtonCG(Z).solve(rows, a, sigma, rhs, d, rtol=1e-12, max_iter=2)
    assert status == Status.MAX_ITER and iters == 2


def _numpy_pcg(H, b, iterations):
    """CG from 0 on the whole system, a fixed number of iterations, preconditioned with the
    diagonal to the power 7/8 (as NewtonCG)."""
    D = np.diag(H) ** 0.875
    x, r = np.zeros_like(b), b.copy()
    z = r / D
    d, rz = z.copy(), r @ z
    for _ in range(iterations):
        hd = H @ d
        alpha = rz / (d @ hd)
        x += alpha * d
        r -= alpha * hd
        z = r / D
        rz_new = r @ z
        if rz_new == 0.0:       # solved exactly (H = I on an empty free set)
            break
        d = z + rz_new / rz * d
        rz = rz_new
    return x


def _stacked_rows(rng, density, seed, n_threads):
    """Z over a random 400 x 300 X with stacked rows (each source twice, signs mixed), and Z dense."""
    X = to_csr(sp.random(400, 300, density=density, random_state=seed, format="csr"))
    source = np.concatenate([np.arange(400), np.arange(400)]).astype(np.int32)
    sign = np.where(rng.random(800) < 0.5, 1.0, -1.0)
    return StackedRows(X, source, sign, n_threads=n_threads), (sp.diags(sign) @ X[source]).toarray()


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("compact", [True, False])
def test_newton_cg_iterates_are_those_of_cg_on_the_whole_system(n_threads, compact):
    """NewtonCG on Z's rows, or on a copy of them over the columns they store with the others
    (where the system is the identity) carried by scalars: after any number of iterations its d
    is NumPy's CG iterate on the whole p x p system, for stacked rows (sources repeated, signs
    mixed), free sets that store few or all columns, an empty one, and one scratch reused across
    them all."""
    rng = np.random.default_rng(21)
    Z, Zd = _stacked_rows(rng, 0.01, 22, n_threads)
    cg = NewtonCG(Z)
    for n_rows in (30, 600, 5, 0, 120):
        rows = np.sort(rng.choice(800, n_rows, replace=False)).astype(np.int32)
        stored = np.count_nonzero(np.abs(Zd[rows]).sum(axis=0))
        assert n_rows == 0 or 0 < stored < 300 or n_rows == 600
        a = np.where(rng.random(n_rows) < 0.5, 1.0, -1.0)
        P = np.eye(n_rows) - np.outer(a, a) / max(n_rows, 1)
        sigma = float(rng.uniform(0.5, 20.0))
        H = np.eye(300) + sigma * Zd[rows].T @ P @ Zd[rows]
        rhs = rng.normal(size=300)
        for iterations in (1, 2, 5):
            d = np.full(300, np.nan)
            cg.solve(rows, a, sigma, rhs, d, rtol=0.0, max_iter=iterations, compact=compact)
            np.testing.assert_allclose(d, _numpy_pcg(H, rhs, iterations), rtol=1e-10, atol=1e-12)
            products = np.ones(300)       # += 2 Z_J^T P Z_J d - 3 Z_J^T a, from CG's residual
            cg.add_products(products, 2.0, -3.0)
            expected = 1.0 + 2.0 * (H @ d - d) / sigma - 3.0 * Zd[rows].T @ a
            np.testing.assert_allclose(products, expected, rtol=1e-9, atol=1e-10)
        d = np.full(300, np.nan)
        iters, status = cg.solve(rows, a, sigma, rhs, d, rtol=1e-12, max_iter=500, compact=compact)
        assert status == Status.CONVERGED
        np.testing.assert_allclose(H @ d, rhs, atol=1e-10)


def test_newton_cg_updates_its_copy_while_the_free_set_changes_little():
    """The copy of J's rows is brought to the next J by marking the rows that left dead and
    appending those that joined (a row may leave and come back), and made anew when J changes
    much: every system's iterates are still NumPy's CG iterates on the whole system."""
    rng = np.random.default_rng(8)
    Z, Zd = _stacked_rows(rng, 0.02, 9, 2)
    a_all = np.where(rng.random(800) < 0.5, 1.0, -1.0)
    J0 = rng.choice(800, 120, replace=False)
    gone, new = J0[:3], np.setdiff1d(np.arange(800), J0)[:2]
    J1 = np.union1d(np.setdiff1d(J0, gone), new)
    J2 = np.union1d(J1, gone[:1])                 # a dead row back in J
    J3 = np.setdiff1d(J2, new[:1])
    J4 = rng.choice(800, 90, replace=False)       # another free set: a new copy
    J5 = np.setdiff1d(J4, J4[:1])
    cg = NewtonCG(Z)
    made = updated = 0
    for J, anew in ((J0, True), (J1, False), (J2, False), (J3, False), (J4, True), (J5, False)):
        made, updated = made + anew, updated + (not anew)
        rows = np.sort(J).astype(np.int32)
        a = a_all[rows]
        P = np.eye(rows.shape[0]) - np.outer(a, a) / (a @ a)
        sigma = float(rng.uniform(0.5, 20.0))
        H = np.eye(300) + sigma * Zd[rows].T @ P @ Zd[rows]
        rhs = rng.normal(size=300)
        d = np.full(300, np.nan)
        cg.solve(rows, a, sigma, rhs, d, rtol=0.0, max_iter=3)
        np.testing.assert_allclose(d, _numpy_pcg(H, rhs, 3), rtol=1e-10, atol=1e-12)
        assert (cg.copies_made, cg.copies_updated) == (made, updated)
        assert cg.solve(rows, a, sigma, rhs, d, rtol=1e-12, max_iter=500)[1] == Status.CONVERGED
        np.testing.assert_allclose(H @ d, rhs, atol=1e-10)
        updated += 1                                  # the same J again
        assert (cg.copies_made, cg.copies_updated) == (made, updated)


def test_line_point_against_direct_psi():
    """line_point's decrease of psi equals psi evaluated from its definition."""
    rng = np.random.default_rng(5)
    X = to_csr(sp.random(200, 15, density=0.4, random_state=6, format="csr"))
    y = np.where(rng.random(200) < 0.5, 1.0, -1.0)
    u = np.full(200, 0.8)
    Z, c, a, _ = np_dual(X, y, "c_svc", u)
    K = KnapsackSet(a, 0.0, np.zeros(200), u)
    sigma = 3.0
    xk, _ = np_project(rng.uniform(0, 0.8, 200), a, np.zeros(200), u)

    def psi(v):
        pt = xk - sigma * (Z @ v + c)
        proj, _ = np_project(pt, a, np.zeros(200), u)
        return 0.5 * v @ v + (pt @ pt - (pt - proj) @ (pt - proj)) / (2 * sigma)

    v, d = rng.normal(size=15), rng.normal(size=15)
    pt0 = xk - sigma * (Z @ v + c)
    x0, lam0, _ = K.project(pt0)
    g = v - Z.T @ x0
    zd = Z @ d
    bufs = [np.empty(200), np.empty(200), np.empty(200, dtype=np.int32), np.empty(200, dtype=np.int32)]
    for alpha in (1e-3, 0.1, 1.0):
        res = line_point(K, pt0, zd, alpha * sigma, x0, lam0=lam0, lam_shift=0.0, pt=bufs[0], x=bufs[1], free=bufs[2],
                         changed=bufs[3])
        zdx, s = res.zdx, res.s
        dpsi = alpha * g @ d + 0.5 * alpha ** 2 * d @ d - alpha * zdx + s / sigma
        assert dpsi == pytest.approx(psi(v + alpha * d) - psi(v), rel=1e-8, abs=1e-10)
        np.testing.assert_allclose(bufs[1], np_project(pt0 - alpha * sigma * zd, a, np.zeros(200), u)[0], atol=1e-12)
        changed = bufs[3][:res.n_changed]
        np.testing.assert_array_equal(changed, np.flatnonzero(bufs[1] != x0))


@pytest.mark.parametrize("n", [1, 2, 17, 130])
def test_cholesky_solve_against_numpy(n):
    rng = np.random.default_rng(n)
    A = rng.normal(size=(n, n))
    A = A @ A.T + 0.1 * np.eye(n)
    b = rng.normal(size=n)
    H, d = A.copy(), b.copy()
    assert cholesky_solve(H, d)
    np.testing.assert_allclose(d, np.linalg.solve(A, b), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(np.triu(H), np.linalg.cholesky(A).T, rtol=1e-10, atol=1e-12)
    assert not cholesky_solve(-np.eye(n), np.ones(n))
    assert not cholesky_solve(np.full((n, n), np.nan), np.ones(n))
    with pytest.raises(FastSVMError):
        cholesky_solve(np.eye(n), np.ones(n + 1))


def test_cholesky_factor_flushes_denormals_and_restores_the_mode():
    """An RBF Newton matrix whose kernel values span hundreds of decades (points far apart on
    a line) fills LAPACK's factor with denormal numbers, each far slower than a normal one; they
    are flushed to zero, the solution stays NumPy's, and
    the caller's floating-point mode is restored (a denormal quotient is still one). On one
    BLAS thread, as fit_model runs the solvers: the mode is the calling thread's."""
    i = np.arange(300.0)
    M = np.eye(300) + 10.0 * np.exp(-0.25 * (i[:, None] - i[None, :]) ** 2)
    tiny = np.finfo(float).tiny
    L = np.linalg.cholesky(M)
    assert np.count_nonzero((L != 0) & (np.abs(L) < tiny)) > 0         # the case arises
    for solver in (lambda H, d: cholesky_solve(H, d), lambda H, d: bordered_solve(H, d, np.ones(300))):
        H, d = M.copy(), np.linspace(-1.0, 1.0, 300)
        with one_blas_thread():
            assert solver(H, d)
        U = np.triu(H)
        assert np.count_nonzero((U != 0) & (np.abs(U) < tiny)) == 0
        assert 0.0 < np.float64(1e-300) / 1e10 < tiny
    d = np.linspace(-1.0, 1.0, 300)
    assert cholesky_solve(M.copy(), d)
    np.testing.assert_allclose(d, np.linalg.solve(M, np.linspace(-1.0, 1.0, 300)), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 17, 130])
def test_bordered_solve_is_the_projected_newton_system(n):
    # (I + sigma P K P) z = P t with a^T z = 0, from I + sigma K alone
    rng = np.random.default_rng(n)
    B = rng.normal(size=(n, n))
    K, sigma = B @ B.T, 5.0
    a = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    t = rng.normal(size=n)
    P = np.eye(n) - np.outer(a, a) / (a @ a)
    z = t.copy()
    assert bordered_solve(np.eye(n) + sigma * K, z, a)
    np.testing.assert_allclose(z, np.linalg.solve(np.eye(n) + sigma * P @ K @ P, P @ t), rtol=1e-8, atol=1e-10)
    assert abs(a @ z) <= 1e-10 * np.abs(z).sum()
    assert not bordered_solve(-np.eye(n), t.copy(), a)
    with pytest.raises(FastSVMError):
        bordered_solve(np.eye(n), np.ones(n + 1), a)


@pytest.mark.parametrize("n", [1, 17, 300])
def test_projected_block_is_the_projected_newton_system(n):
    """ProjectedBlock applies I + sigma P Q P for a float32 Q (its NumPy twin below), the same bits
    for any thread count; the shared CG on it solves the system."""
    rng = np.random.default_rng(n)
    B = rng.normal(size=(n, max(n // 4, 1)))
    Q = (B @ B.T / B.shape[1]).astype(np.float32)
    a = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    sigma = 7.0
    P = np.eye(n) - np.outer(a, a) / (a @ a)
    H = np.eye(n) + sigma * P @ Q.astype(np.float64) @ P
    t = P @ rng.normal(size=n)
    solutions = []
    for threads in (1, 2):
        z, iterations, status = conjugate_gradient(ProjectedBlock(Q, a, sigma, threads), t, 1e-12, 10 * n + 10)
        assert status == Status.CONVERGED
        np.testing.assert_allclose(H @ z, t, atol=1e-9 * (1.0 + np.abs(t).max()))
        solutions.append(z)
    np.testing.assert_array_equal(solutions[0], solutions[1])
    with pytest.raises(FastSVMError):
        ProjectedBlock(np.zeros((n, n + 1), np.float32), a, sigma)
    with pytest.raises(FastSVMError):
        ProjectedBlock(Q, np.zeros(n), sigma)


def test_sigma_schedule():
    config = Config(sigma_factor=3.0)
    assert next_sigma(1.0, 3, True, config) == 6.0          # easy inner solve: faster growth
    assert next_sigma(1.0, 8, True, config) == 3.0
    assert next_sigma(1.0, 20, True, config) == pytest.approx(3.0 ** 0.5)
    assert next_sigma(1.0, 40, True, config) == 1.0
    assert next_sigma(1.0, 3, True, config, lagging=False) == 1.0  # primal side ahead: kept
    assert next_sigma(4.0, 50, False, config) == 2.0        # stalled: lowered
    assert next_sigma(1e10, 1, True, config) == 1e10         # bounded


@pytest.mark.parametrize("system", ["dense", "smw", "cg"])
@pytest.mark.parametrize("name,formulation", [("heart_scale", "c_svc"), ("housing_scale", "epsilon_svr")])
def test_every_newton_system_reaches_the_same_optimum(system, name, formulation):
    X, labels = load(name)
    y = as_pm(labels) if formulation == "c_svc" else labels
    ref = solve(subproblem(X, y, formulation, C=1.0, tol=1e-8))
    sol = solve(subproblem(X, y, formulation, C=1.0, tol=1e-8, newton_system=system))
    assert sol.details["systems"][system] > 0
    assert sol.objective == pytest.approx(ref.objective, rel=1e-9)
    # eta <= 1e-8 is relative to 1 + |x| + |grad f|, ~500 for housing's regression dual: b is
    # pinned to a few 1e-6 (the two paths stop at different eta below the tolerance)
    assert sol.rho == pytest.approx(ref.rho, abs=5e-6)


def test_dense_rows_take_blas_newton_systems_not_cg():
    # the random-Fourier-feature warm start's problem: dense rows, p = 256, free sets of
    # thousands. Their Gram matrix by one core's BLAS costs milliseconds, CG dozens of passes
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 256))
    y = np.where(X[:, 0] + rng.normal(size=3000) > 0, 1.0, -1.0)
    sol = solve(subproblem(to_csr(X), y, C=1.0, tol=1e-6))
    assert sol.stop_measure <= 1e-6
    assert sol.details["systems"]["cg"] == 0 and sol.details["systems"]["dense"] > 0


@pytest.mark.parametrize("line_search", ["armijo", "exact"])
def test_line_searches_and_threads_agree(line_search):
    X, labels = load("mushrooms")
    y = as_pm(labels)
    one = solve(subproblem(X, y, C=1.0, tol=1e-6, line_search=line_search))
    two = solve(subproblem(X, y, C=1.0, tol=1e-6, line_search=line_search, n_threads=2))
    assert one.stop_measure <= 1e-6 and two.stop_measure <= 1e-6
    assert two.objective == pytest.approx(one.objective, rel=1e-7)


# ---------------------------------------------------------------- interface

def test_registered_and_specified():
    assert get_solver("ssnal") is SOLVER
    assert SOLVER.formulations == ("c_svc", "epsilon_svr") and SOLVER.kernels[0] == "linear"
    assert "precomputed" not in SOLVER.kernels
    assert SOLVER.multiclass == "ovo" and SOLVER.default_tol == 1e-3


def test_verbose_trace_and_solution_record():
    X, labels = load("heart_scale")
    y = as_pm(labels)
    lines = []
    sol = solve(subproblem(X, y, C=1.0, tol=1e-3, log=lines.append))
    assert len(lines) == sol.n_iter == len(sol.history) >= 1
    for word in ("iteration 1", "KKT residual", "(stops at 0.001)", "objective", "duality gap", "sigma",
                 "Newton steps on", "free variables", "passes over the data"):
        assert word in lines[0]
    # the objective shown is LIBSVM's, the solution's
    assert float(lines[-1].split("objective ")[1].split()[0]) == pytest.approx(sol.objective, rel=1e-9)
    assert sol.stop_measure <= 1e-3 and sol.status == "converged"
    assert sol.history[-1]["eta"] == sol.stop_measure
    assert sol.details["primal_objective"] >= -sol.objective - 1e-9  # weak duality
    assert sol.details["newton"] >= sol.n_iter - 1 and sol.details["passes"] > 0
    assert solve(subproblem(X, y, C=1.0, tol=1e-3)).objective == sol.objective  # deterministic


def test_max_iter_status():
    X, labels = load("heart_scale")
    sub = subproblem(X, as_pm(labels), C=1.0, tol=1e-12)
    sub.params.max_iter = 1
    sol = solve(sub)
    assert sol.status == "max_iter" and sol.n_iter == 1 and sol.stop_measure > 1e-12


def test_bad_input_raises_clear_errors():
    X, labels = load("heart_scale")
    y = as_pm(labels)
    sub = subproblem(X, y)
    with pytest.raises(ParameterError, match="linear"):
        solve(Subproblem("c_svc", X, y, sub.upper, Kernel("precomputed"), sub.params))
    with pytest.raises(ParameterError, match="hinge"):
        bad = subproblem(X, y)
        bad.params.loss = "squared_hinge"
        solve(bad)
    with pytest.raises(ParameterError, match="nu_svc"):
        solve(Subproblem("nu_svc", X, y, sub.upper, Kernel("linear"), sub.params))
    with pytest.raises(FastSVMError, match="labels"):
        solve(subproblem(X, 2 * labels))
    with pytest.raises(FastSVMError, match="C_i must be"):
        solve(subproblem(X, y, upper=np.full(X.shape[0], -1.0)))
    with pytest.raises(ParameterError, match="unknown option"):
        solve(subproblem(X, y, bogus=1))
    with pytest.raises(ParameterError, match="line_search"):
        solve(subproblem(X, y, line_search="wolfe"))


def test_stop_flag_raises_keyboard_interrupt_within_a_second():
    rng = np.random.default_rng(7)
    n, p = 60000, 400
    X = to_csr(sp.random(n, p, density=0.05, random_state=8, format="csr"))
    y = np.where(X @ rng.normal(size=p) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    stop = np.zeros(1, dtype=np.int32)
    raised = []

    def set_stop_later(line):  # from another thread, once the solver is under way
        if not raised:
            raised.append(threading.Timer(0.05, lambda: (raised.append(time.perf_counter()), stop.__setitem__(0, 1))))
            raised[0].start()

    with pytest.raises(KeyboardInterrupt):
        solve(subproblem(X, y, C=100.0, tol=1e-14, stop=stop, log=set_stop_later))
    seen = time.perf_counter()
    raised[0].join()
    assert len(raised) == 2 and seen - raised[1] < 1.0


def test_sorted_changes_and_gram_updates_against_numpy(operator):
    X, source, sign, Zd, rng = operator
    Z = StackedRows(X, source, sign)
    old = np.sort(rng.choice(600, 200, replace=False)).astype(np.int32)
    new = np.sort(np.concatenate([rng.choice(old, 150, replace=False),
                                  rng.choice(np.setdiff1d(np.arange(600), old), 30, replace=False)])).astype(np.int32)
    rows, weights = sorted_changes(new, old)
    np.testing.assert_array_equal(np.sort(rows[weights > 0]), np.setdiff1d(new, old))
    np.testing.assert_array_equal(np.sort(rows[weights < 0]), np.setdiff1d(old, new))
    assert set(weights) <= {1.0, -1.0}
    a = rng.normal(size=600)
    G, s = Z.rows_gram(old, a[old])
    Z.rows_gram(rows, a[rows], G, s, weights)  # updated in place to the rows of `new`
    np.testing.assert_allclose(G, Zd[new].T @ Zd[new], atol=1e-12)
    np.testing.assert_allclose(s, Zd[new].T @ a[new], atol=1e-12)
    assert sorted_changes(new, new)[0].size == 0


def test_dense_newton_search_scalars_and_rows_nnz_against_numpy(operator):
    X, source, sign, Zd, rng = operator
    Z = StackedRows(X, source, sign)
    rows = np.sort(rng.choice(600, 90, replace=False)).astype(np.int32)
    counts = np.diff(X.indptr)[source[rows]].astype(float)
    assert Z.rows_nnz(rows) == pytest.approx((counts.sum(), counts @ counts))
    a = np.where(rng.random(90) < 0.5, 1.0, -1.0)
    G, s = Zd[rows].T @ Zd[rows], Zd[rows].T @ a
    g, sigma = rng.normal(size=40), 3.0
    H = np.eye(40) + sigma * (G - np.outer(s, s) / 90)
    d = np.empty(40)
    assert dense_newton(G, s, 90.0, sigma, g, H=np.empty((40, 40)), d=d)
    np.testing.assert_allclose(d, np.linalg.solve(H, -g), rtol=1e-9, atol=1e-12)
    assert not dense_newton(-np.eye(40) * 10, s, 0.0, 1.0, g, H=np.empty((40, 40)), d=d)
    dvec, zd, full_a = rng.normal(size=40), rng.normal(size=600), rng.normal(size=600)
    got = search_scalars(dvec, g, zd, full_a, rows)
    expected = (dvec @ dvec, g @ dvec, full_a[rows] @ full_a[rows], full_a[rows] @ zd[rows])
    assert (got.dd, got.gd, got.aa, got.az) == pytest.approx(expected)
    with pytest.raises(FastSVMError):
        search_scalars(dvec, g, zd, full_a, np.array([600], dtype=np.int32))


@pytest.mark.parametrize("rows", [[5], [-1], [0, 3, 5]])
def test_stacked_rows_refuse_rows_outside_z(rows):
    Z = StackedRows(to_csr(sp.random(5, 4, density=0.5, random_state=1, format="csr")), np.arange(5, dtype=np.int32),
                    np.ones(5))
    with pytest.raises(FastSVMError, match="row index out of range"):
        Z.rows_matvec(np.array(rows, dtype=np.int32), np.ones(4))
    assert Z.rows_matvec(np.array([0, 4], dtype=np.int32), np.ones(4)).shape == (2,)

def test_newton_cg_threaded_product_matches_one_thread():
    """The one-thread Hessian product and the threaded one (free sets of at least PARALLEL_ROWS
    rows: each thread sums its block's updates apart) give the same CG solve, equal to NumPy's."""
    rng = np.random.default_rng(11)
    X = to_csr(sp.random(5000, 30, density=0.2, random_state=12, format="csr"))
    rows = np.sort(rng.choice(5000, 3000, replace=False)).astype(np.int32)
    a = np.where(rng.random(3000) < 0.5, 1.0, -1.0)
    rhs = rng.normal(size=30)
    Zd = X[rows].toarray()
    H = np.eye(30) + 2.0 * Zd.T @ (np.eye(3000) - np.outer(a, a) / 3000) @ Zd
    sols = []
    for n_threads in (1, 2):
        Z = StackedRows(X, np.arange(5000, dtype=np.int32), np.ones(5000), n_threads=n_threads)
        d = np.zeros(30)
        assert NewtonCG(Z).solve(rows, a, 2.0, rhs, d, rtol=1e-12, max_iter=200)[1] == Status.CONVERGED
        sols.append(d)
    np.testing.assert_allclose(sols[0], np.linalg.solve(H, rhs), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(sols[1], sols[0], rtol=1e-9, atol=1e-11)


def test_newton_cg_threaded_vector_steps_match_one_thread():
    """With p >= PARALLEL_COLUMNS (16384) the CG's O(p) steps are split over the threads too:
    the solve equals the one-thread solve, and its residual, recomputed with SciPy, is tiny."""
    rng = np.random.default_rng(13)
    X = to_csr(sp.random(4000, 20000, density=0.002, random_state=14, format="csr"))
    rows = np.sort(rng.choice(4000, 3000, replace=False)).astype(np.int32)
    a = np.where(rng.random(3000) < 0.5, 1.0, -1.0)
    rhs = rng.normal(size=20000)
    sigma = 3.0
    XJ = X[rows]

    def hessian(d):
        t = XJ @ d
        t -= a * (a @ t) / (a @ a)
        return d + sigma * (XJ.T @ t)

    sols = []
    for n_threads in (1, 2):
        Z = StackedRows(X, np.arange(4000, dtype=np.int32), np.ones(4000), n_threads=n_threads)
        d = np.zeros(20000)
        assert NewtonCG(Z).solve(rows, a, sigma, rhs, d, rtol=1e-11, max_iter=500)[1] == Status.CONVERGED
        assert np.linalg.norm(hessian(d) - rhs) <= 1e-10 * np.linalg.norm(rhs)
        sols.append(d)
    np.testing.assert_allclose(sols[1], sols[0], rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("density, block_rows", [(0.5, None), (0.5, 7), (0.05, None)])
def test_kept_gram_updated_over_changed_rows_equals_numpy(density, block_rows):
    """The kept Z_J^T Z_J and Z_J^T a_J of the dense Newton systems, updated over the rows that
    joined or left J: by BLAS on dense copies of those rows, a block at a time (blocks of 7 rows
    put block boundaries everywhere), when they are at least a quarter full (0.5), by sparse
    outer products otherwise (0.05); both equal NumPy's."""
    config = Config() if block_rows is None else Config(dense_block_bytes=8 * 60 * block_rows)
    rng = np.random.default_rng(21)
    X = to_csr(sp.random(3000, 60, density=density, random_state=22, format="csr"))
    y = np.where(rng.random(3000) < 0.5, 1.0, -1.0)
    qp = linear_dual(subproblem(X, y))
    newton = NewtonSystems(qp, Counters(qp.nnz), config)
    used = []
    J1 = np.sort(rng.choice(3000, 2000, replace=False)).astype(np.int32)
    J2 = np.union1d(np.setdiff1d(J1, J1[::20]), np.setdiff1d(np.arange(3000), J1)[:250]).astype(np.int32)
    for J in (J1, J2):
        newton.nnz_J = qp.Z.rows_nnz(J)
        newton.changes = None
        if J is J2:
            rows, _ = sorted_changes(J2, J1)
            used.append(newton._update_gram_cost(rows)[1])
        G, s = newton._gram(J, np.ascontiguousarray(qp.K.a[J]))
    Zd = (y[:, None] * X.toarray())[J2]
    np.testing.assert_allclose(G, Zd.T @ Zd, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(s, Zd.T @ y[J2], rtol=1e-12, atol=1e-10)
    assert used == [density > 0.25]


def test_cg_systems_keep_the_few_rows_that_left_the_last_free_set():
    """A CG Newton system (after the first of an inner solve) takes J with the rows of the last
    CG system's J that left it, when at most kink_rows did and they are among the solve's rows;
    its direction solves that system. Dense systems and the first CG system are as given."""
    rng = np.random.default_rng(41)
    X = to_csr(sp.random(300, 40, density=0.2, random_state=42, format="csr"))
    y = np.where(rng.random(300) < 0.5, 1.0, -1.0)
    qp = linear_dual(subproblem(X, y))
    Zd = y[:, None] * X.toarray()
    sigma, g = 3.0, rng.normal(size=40)

    def newton_direction(J):
        a = y[J]
        H = np.eye(40) + sigma * Zd[J].T @ (np.eye(J.size) - np.outer(a, a) / (a @ a)) @ Zd[J]
        return np.linalg.solve(H, -g)

    J1 = np.sort(rng.choice(300, 120, replace=False)).astype(np.int32)
    newton = NewtonSystems(qp, Counters(qp.nnz), Config(newton_system="cg"))
    d = newton.direction(J1, g, sigma, 1e-13, kinks=True)      # no last CG system yet
    np.testing.assert_array_equal(newton.cg_J, J1)
    np.testing.assert_allclose(d, newton_direction(J1), rtol=1e-9, atol=1e-11)
    few = np.delete(J1, [5, 60, 90])                           # kink_rows = 3 rows left
    d = newton.direction(few, g, sigma, 1e-13, kinks=True)
    np.testing.assert_array_equal(newton.cg_J, J1)
    np.testing.assert_allclose(d, newton_direction(J1), rtol=1e-9, atol=1e-11)
    rows = np.setdiff1d(np.arange(300), J1[[60]]).astype(np.int32)   # one of them held out of the solve
    newton.direction(few, g, sigma, 1e-13, kinks=True, rows=rows)
    np.testing.assert_array_equal(newton.cg_J, np.delete(J1, [60]))
    newton.cg_J = J1
    d = newton.direction(few, g, sigma, 1e-13, kinks=False)    # the first system of a solve
    np.testing.assert_array_equal(newton.cg_J, few)
    np.testing.assert_allclose(d, newton_direction(few), rtol=1e-9, atol=1e-11)
    many = np.delete(J1, [1, 2, 3, 4]).astype(np.int32)       # more left: J is still being found
    newton.cg_J = J1
    newton.direction(many, g, sigma, 1e-13, kinks=True)
    np.testing.assert_array_equal(newton.cg_J, many)
    dense = NewtonSystems(qp, Counters(qp.nnz), Config(newton_system="dense"))
    dense.cg_J = J1
    np.testing.assert_allclose(dense.direction(few, g, sigma, 1e-13, kinks=True), newton_direction(few),
                               rtol=1e-9, atol=1e-11)
    assert dense.cg_J is None                                  # a later CG system compares with no stale J


def test_off_system_moves_against_numpy():
    """Z^T (x_new - x_old) over a line-search step equals what the Newton system over J predicts
    for J's rows plus the listed corrections, for a J that lost some of its free rows and holds
    rows at a bound; the rows free before and after in J are not listed; the marks are cleared."""
    rng = np.random.default_rng(31)
    m, p = 400, 12
    X = to_csr(sp.random(m, p, density=0.4, random_state=32, format="csr"))
    y = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    u = np.full(m, 0.7)
    Z, c, a, _ = np_dual(X, y, "c_svc", u)
    K = KnapsackSet(a, 0.0, np.zeros(m), u)
    pt0 = rng.normal(0.35, 0.6, m)
    x0, lam0, free0 = K.project(pt0)
    zd, step = Z @ rng.normal(size=p), 0.4
    pt, x1 = np.empty(m), np.empty(m)
    free1, changed = np.empty(m, dtype=np.int32), np.empty(m, dtype=np.int32)
    res = line_point(K, pt0, zd, step, x0, lam0=lam0, lam_shift=0.0, pt=pt, x=x1, free=free1, changed=changed)
    lam1, n_free, n_changed = res.lam, res.n_free, res.n_changed
    free1, changed = free1[:n_free], changed[:n_changed]
    at_bound = np.setdiff1d(np.arange(m), free0)
    J = np.sort(np.concatenate([free0[::3], at_bound[::4]])).astype(np.int32)
    assert 0 < np.setdiff1d(free0, free1).size and 0 < np.setdiff1d(free1, free0).size  # J's rows do change state
    mark = np.zeros(m, dtype=np.int8)
    rows, coef = np.empty(m, dtype=np.int32), np.empty(m)
    n = off_system_moves(changed, J, free0.astype(np.int32), free1, x1, x_old=x0, zd=zd, a=a, step=step,
                         dlam=lam1 - lam0, mark=mark, rows=rows, coef=coef)
    delta = -step * zd - (lam1 - lam0) * a
    predicted = Z[J].T @ delta[J]
    np.testing.assert_allclose(predicted + Z[rows[:n]].T @ coef[:n], Z.T @ (x1 - x0), rtol=1e-12, atol=1e-12)
    kept = np.intersect1d(J, np.intersect1d(free0, free1))
    assert kept.size > 0 and np.intersect1d(rows[:n], kept).size == 0
    assert np.unique(rows[:n]).size == n and not mark.any()


@pytest.mark.parametrize("newton_system", ["dense", "cg"])
def test_newton_system_steps_keep_z_transpose_x(monkeypatch, newton_system):
    """Z^T Pi_K(y) kept from the Newton systems (InnerSolve.accept given the system: the dense ones'
    Gram matrices, the CG ones' residuals) moves by Z^T (x_new - x_old) recomputed, at every step
    of a solve, restricted steps included (their held rows' part stays)."""
    rng = np.random.default_rng(33)
    X = to_csr(sp.random(3000, 25, density=0.3, random_state=34, format="csr"))
    y = np.where(X @ rng.normal(size=25) + 0.3 * rng.normal(size=3000) > 0, 1.0, -1.0)
    seen = {"system": 0, "checked": 0}
    accept = InnerSolve.accept

    def checked_accept(self, res, system=None):
        ztx, x = self.ztx.copy(), self.xp.copy()
        accept(self, res, system)
        seen["system"] += system is not None
        Z = self.qp.Z                  # a restricted solve's: Z^T x moves by its rows' part
        rows = Z.rows if isinstance(Z, RowSubset) else np.arange(Z.m, dtype=np.int32)
        whole = Z.Z if isinstance(Z, RowSubset) else Z
        np.testing.assert_allclose(self.ztx - ztx, whole.rows_rmatvec(rows, self.xp - x), rtol=1e-9, atol=1e-9)
        seen["checked"] += 1

    monkeypatch.setattr(InnerSolve, "accept", checked_accept)
    sol = solve(subproblem(X, y, C=4.0, tol=1e-6, newton_system=newton_system))
    assert sol.status == "converged" and seen["system"] >= 5 and seen["checked"] >= 5
    assert sol.details["systems"][newton_system] >= 5


# ---------------------------------------------------------------- rows held at their bounds

@pytest.mark.parametrize("m", [7, 5000, 9001])
def test_hold_rows_and_held_misses_against_numpy(m):
    rng = np.random.default_rng(m)
    a = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    lower, upper = np.zeros(m), rng.uniform(0.5, 2.0, m)
    pt0 = rng.normal(scale=3.0, size=m)
    pt = pt0 + rng.normal(scale=0.2, size=m)
    lam0, lam = 0.3, 0.25
    x = np.clip(pt - lam * a, lower, upper)
    row_nnz = rng.integers(0, 50, m).astype(np.int32)
    rows, held = np.empty(m, dtype=np.int32), np.empty(m, dtype=np.int32)
    split = hold_rows(pt, lam, pt0, lam0, x, a=a, lower=lower, upper=upper, row_nnz=row_nnz, factor=2.0, quantile=0.9,
                      rows=rows, held=held)
    n_rows, n_held, held_nnz, held_ax = split.n_rows, split.n_held, split.held_nnz, split.held_ax
    stride = -(-m // 4096)
    moves = np.abs((pt - lam * a) - (pt0 - lam0 * a))[::stride]
    threshold = 2.0 * np.sort(moves)[min(int(0.9 * moves.size), moves.size - 1)]
    z = pt - lam * a
    far = np.maximum(lower - z, z - upper) > threshold
    assert 0 < n_held < m or m == 7
    np.testing.assert_array_equal(held[:n_held], np.flatnonzero(far))
    np.testing.assert_array_equal(rows[:n_rows], np.flatnonzero(~far))
    assert held_nnz == row_nnz[far].sum()
    assert held_ax == pytest.approx(a[far] @ x[far], abs=1e-9)
    # held_misses: rows whose z = center - sigma (Zw + c) - lam a is not beyond their bound x by
    # more than slack |z_r|
    center, Zw, c, sigma = rng.uniform(0, 1, m), rng.normal(size=m), rng.normal(size=m), 0.7
    norms, slack = rng.uniform(0, 2, m), 0.05
    z = center - sigma * (Zw + c) - lam * a
    sure = np.where(x == lower, lower - z > slack * norms, (x == upper) & (z - upper > slack * norms))
    idx = held[:n_held]
    out = np.empty(n_held, dtype=np.int32)
    k = held_misses(idx, center, x, Zw, c, a=a, lower=lower, upper=upper, sigma=sigma, lam=lam, norms=norms,
                    slack=slack, out=out)
    np.testing.assert_array_equal(out[:k], idx[~sure[idx]])
    k = held_misses(idx, center, x, Zw, c, a=a, lower=lower, upper=upper, sigma=sigma, lam=lam, norms=norms, slack=0.0,
                    out=out)
    np.testing.assert_array_equal(out[:k], idx[np.clip(z, lower, upper)[idx] != x[idx]])
    # a point that stays put: nothing is held
    assert hold_rows(pt0, lam0, pt0, lam0, x, a=a, lower=lower, upper=upper, row_nnz=row_nnz, factor=2.0, quantile=0.9,
                     rows=rows, held=held).n_held == 0
    with pytest.raises(FastSVMError):
        hold_rows(pt, lam, pt0[:-1], lam0, x, a=a, lower=lower, upper=upper, row_nnz=row_nnz, factor=2.0, quantile=0.9,
                  rows=rows, held=held)


def test_row_subset_products_against_dense(operator):
    X, source, sign, Zd, rng = operator
    rows = np.sort(rng.choice(600, 200, replace=False)).astype(np.int32)
    Z_A = RowSubset(StackedRows(X, source, sign), rows)
    v = rng.normal(size=40)
    assert Z_A.m == 200 and Z_A.nnz == sum(X[source[r]].nnz for r in rows)
    np.testing.assert_allclose(Z_A.matvec(v), Zd[rows] @ v, atol=1e-12)
    np.testing.assert_allclose(Z_A.Z.row_norms(), np.linalg.norm(Zd, axis=1), rtol=1e-12)
    local = np.array([3, 17, 150], dtype=np.int32)
    x_new, x_old = rng.normal(size=200), rng.normal(size=200)
    out = np.ones(40)
    Z_A.rows_rmatvec_diff(local, x_new, x_old, out)
    np.testing.assert_allclose(out, 1 + Zd[rows[local]].T @ (x_new - x_old)[local], atol=1e-12)
    assert Z_A.rows_nnz(local)[0] == sum(X[source[rows[j]]].nnz for j in local)


@pytest.mark.parametrize("name,formulation", [("mushrooms", "c_svc"), ("abalone_scale", "epsilon_svr")])
def test_holding_rows_leaves_the_optimum_and_recovers_from_bad_holds(name, formulation):
    """Inner solves continued on part of the rows reach the optimum of the whole problem; so do
    holds far too eager (a factor 100 times smaller), whose misses are detected and counted."""
    X, labels = load(name)
    y = as_pm(labels) if formulation == "c_svc" else labels
    held = solve(subproblem(X, y, formulation, C=1.0, tol=1e-6))
    assert sum(h["held"] for h in held.history) > 0
    eager = solve(subproblem(X, y, formulation, C=1.0, tol=1e-6, config=Config(screen_factor=0.01)))
    assert sum(h["held_misses"] for h in eager.history) > 0
    never = Config(screen_factor=0.01, screen_min_share=math.inf)
    whole = solve(subproblem(X, y, formulation, C=1.0, tol=1e-6, config=never))
    assert sum(h["held"] for h in whole.history) == 0
    n = X.shape[0]
    Z, c, a, u = np_dual(X, y, formulation, np.full(n, 1.0))
    for sol in (held, eager):
        assert sol.status == "converged"
        assert np_eta(Z, c, a, u, sol.dual)[0] <= 1e-6
        assert sol.objective == pytest.approx(whole.objective, rel=1e-6)
    assert held.details["passes"] < whole.details["passes"]


@pytest.mark.parametrize("name, estimates", [("a9a", True), ("mushrooms", False)])
def test_far_outer_iterations_take_eta_from_z_v_without_a_pass(name, estimates):
    """Far from the end an outer iteration takes grad f from Z v + c, which it knows, instead of a
    pass for Z w + c, when the error bound is small against eta (a9a's first outer iteration; not
    mushrooms', whose first inner solve ends less tight): the same path and optimum for fewer passes, the stop on an
    exact eta."""
    X, labels = load(name)
    y = as_pm(labels)
    sol = solve(subproblem(X, y, C=1.0, tol=1e-6))
    exact = solve(subproblem(X, y, C=1.0, tol=1e-6, config=Config(estimated_eta_min=math.inf)))
    assert not any(h["eta_estimated"] for h in exact.history)
    assert sol.history[0]["eta_estimated"] == estimates
    assert sol.status == "converged" and not sol.history[-1]["eta_estimated"]
    Z, c, a, u = np_dual(X, y, "c_svc", np.full(X.shape[0], 1.0))
    assert np_eta(Z, c, a, u, sol.dual)[0] <= 1e-6
    assert sol.objective == pytest.approx(exact.objective, rel=1e-6)
    assert [h["newton"] for h in sol.history] == [h["newton"] for h in exact.history]
    for ours, theirs in zip(sol.history, exact.history):
        assert ours["eta"] == pytest.approx(theirs["eta"], rel=0.1)
    if estimates:
        assert sol.details["passes"] < exact.details["passes"]
    else:
        assert sol.details["passes"] == exact.details["passes"]


def test_max_outer_after_an_estimated_eta_returns_the_exact_one():
    X, labels = load("a9a")
    y = as_pm(labels)
    sub = subproblem(X, y, C=1.0, tol=1e-12)
    sub.params.max_iter = 1
    sol = solve(sub)
    assert sol.status == "max_iter" and sol.history[0]["eta_estimated"]
    Z, c, a, u = np_dual(X, y, "c_svc", np.full(X.shape[0], 1.0))
    eta = np_eta(Z, c, a, u, sol.dual)[0]
    assert sol.stop_measure == pytest.approx(eta, rel=1e-6)
    assert sol.history[0]["eta"] != pytest.approx(eta, rel=1e-3)   # the estimate, not returned


@pytest.mark.parametrize("name", ["a9a", "w8a"])
def test_a_tied_cold_start_steps_along_the_gradient_first(name):
    """C-SVC from x = 0: every row's y is sigma, the projection frees a whole class; the first step
    goes along -grad psi instead of a Newton direction on that free set. Same optimum, fewer passes
    to eta <= 1e-3 at C = 1 than with Config(cold_gradient_step=False)."""
    X, labels = load(name)
    y = as_pm(labels)
    fast, exact = (solve(subproblem(X, y, C=1.0, tol=tol)) for tol in (1e-3, 1e-6))
    assert exact.details["systems"]["none"] >= 1
    newton_first = Config(cold_gradient_step=False)
    slow, whole = (solve(subproblem(X, y, C=1.0, tol=tol, config=newton_first)) for tol in (1e-3, 1e-6))
    assert whole.details["systems"]["none"] == 0
    Z, c, a, u = np_dual(X, y, "c_svc", np.full(X.shape[0], 1.0))
    assert exact.status == "converged" and np_eta(Z, c, a, u, exact.dual)[0] <= 1e-6
    assert exact.objective == pytest.approx(whole.objective, rel=1e-6)
    assert fast.details["passes"] < slow.details["passes"]


def test_line_minimum_from_a_start_step_finds_the_same_root_in_fewer_trials():
    """The slope of a convex piecewise quadratic (kinks where rows enter the free set) has its root
    near 2e-3; searched from 1 or from a start near the root, both end within the slope tolerance,
    the second with fewer trials (the tied cold start's first step)."""
    kinks = np.array([1e-4, 5e-4, 1.5e-3, 0.01, 0.3])
    curv = np.array([10.0, 400.0, 900.0, 3000.0, 50.0])
    slope0 = -1.0

    def slope(alpha):
        return slope0 + alpha + np.sum(curv * np.maximum(alpha - kinks, 0.0))

    root = scipy_brentq(slope, 0.0, 1.0)
    for start in (1.0, 2.5e-3):
        calls = []

        def trial(alpha, calls=calls):
            calls.append(alpha)
            return (0.0, slope(alpha))

        alpha, out = line_minimum(trial, slope0, start=start)
        assert abs(out[1]) <= 0.2 * abs(slope0) and out[1] == slope(alpha)
        assert alpha == pytest.approx(root, rel=0.2)
        if start == 1.0:
            from_one = len(calls)
        else:
            assert calls[0] == start and len(calls) < from_one


def synthetic(kind, rows):
    """A set of tools/make_synthetic.py: "text" (100,000 Zipf features: its free sets are too
    large for the dense and SMW systems, so its Newton directions come from CG) or "covtype"."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    try:
        import make_synthetic
    finally:
        sys.path.pop(0)
    blocks = list(getattr(make_synthetic, f"{kind}_like_blocks")(rows, seed=0))
    return to_csr(sp.vstack([X for X, _ in blocks], format="csr")), np.concatenate([y for _, y in blocks]).astype(float)


@pytest.mark.parametrize("rows, rules", [(30000, ("early_step_passes", "early_every_step_passes")),
                                         (15000, ("early_every_step_passes",))])
def test_costly_newton_steps_test_eta_early(rows, rules):
    """With CG directions a Newton step costs many passes and the exact eta test one: the solve
    makes the test as soon as the inner solve is near its tolerance instead of waiting for the
    estimated bound (Config.early_step_passes), and again after every step, not only after |grad psi|
    fell tenfold since the last test (Config.early_every_step_passes: the 15k-row set reaches tol
    between two such tests). Without the rules it stops steps later on these two sets; both
    stop at an eta <= tol the NumPy twin confirms."""
    X, y = synthetic("text", rows)
    C, tol = 1.0, 1e-3
    early = solve(subproblem(X, y, C=C, tol=tol))
    late = solve(subproblem(X, y, C=C, tol=tol, config=Config(**dict.fromkeys(rules, math.inf))))
    assert early.details["systems"]["cg"] > 0
    Z, c, a, u = np_dual(X, y, "c_svc", np.full(X.shape[0], C))
    for sol in (early, late):
        assert sol.status == "converged" and np_eta(Z, c, a, u, sol.dual)[0] <= tol
    assert early.details["newton"] < late.details["newton"]
    assert early.details["passes"] < late.details["passes"]


def test_held_rows_are_not_checked_once_the_iterate_meets_tol(monkeypatch):
    """Rows held at their bounds are checked at the end of each inner solve (held_misses), and
    the solve reopened with those that had to move: unless the iterate already has eta <= tol on
    the whole problem, which ends the solve (the held rows only matter for an exact proximal
    step). Covtype-like rows: every outer iteration after the first holds rows; the last one
    stops without checking them, at an eta <= tol the NumPy twin confirms."""
    X, y = synthetic("covtype", 20000)
    C, tol = 1.0, 1e-3
    checks = []

    def counted(*args, **kw):
        checks.append(1)
        return held_misses(*args, **kw)

    monkeypatch.setattr(ssnal_screening, "held_misses", counted)
    sol = solve(subproblem(X, y, C=C, tol=tol))
    Z, c, a, u = np_dual(X, y, "c_svc", np.full(X.shape[0], C))
    assert sol.status == "converged" and np_eta(Z, c, a, u, sol.dual)[0] <= tol
    holding = [entry for entry in sol.history if entry["held"] > 0]
    assert holding and holding[-1] is sol.history[-1] and sol.history[-1]["held_misses"] == 0
    assert len(checks) == len(holding) - 1


def test_an_inner_solve_that_raised_the_objective_is_rejected():
    """Covtype-like rows at C = 32, tol 1e-6: held rows that had to move join a restricted
    solve, which then crawls (steps of alpha ~ 1e-3) to max_newton at a point of larger f. A
    proximal step never raises f: that outer step is rejected (x stays, sigma is lowered) instead
    of starting the next ones from a poor x, and the solve ends in under 80 passes."""
    X, y = synthetic("covtype", 20000)
    C, tol = 32.0, 1e-6
    Z, c, a, u = np_dual(X, y, "c_svc", np.full(X.shape[0], C))
    sol = solve(subproblem(X, y, C=C, tol=tol))
    assert sol.status == "converged" and np_eta(Z, c, a, u, sol.dual)[0] <= tol
    assert any(entry["rejected"] for entry in sol.history) and sol.details["passes"] < 80
    duals = [entry["dual"] for entry in sol.history]   # f never rises from one outer iteration to the next
    assert all(later <= earlier + 1e-9 * abs(earlier) for earlier, later in zip(duals, duals[1:]))


def with_copies(X, y, seed=0):
    """X and y with about half of the rows repeated (up to 4 times), some copies carrying the
    other label or another target, shuffled: a set whose equal samples the solver merges."""
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    extra = rng.choice(n, size=n // 2)
    rows = np.concatenate([np.arange(n), extra, extra[: n // 8], extra[: n // 16]])
    labels = y[rows].copy()
    flip = np.arange(n, rows.shape[0])[rng.random(rows.shape[0] - n) < 0.05]
    labels[flip] = -labels[flip] if set(np.unique(y)) <= {-1.0, 1.0} else labels[flip] + 1.0
    order = rng.permutation(rows.shape[0])
    return to_csr(X[rows[order]]), labels[order]


def check_copies_share_values(X, y, upper, x):
    """Every copy of a sample (same features, label or target, bound) holds the same dual value."""
    rows = np.hstack([X.toarray(), y[:, None], upper[:, None]])
    group = np.unique(rows, axis=0, return_inverse=True)[1].ravel()
    for half in x.reshape(-1, X.shape[0]):
        first = np.zeros(group.max() + 1)
        first[group[::-1]] = half[::-1]
        np.testing.assert_allclose(half, first[group], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name,formulation", [("heart_scale", "c_svc"), ("housing_scale", "epsilon_svr")])
def test_equal_samples_merged_reach_libsvm_optimum(name, formulation):
    """Equal samples solved as one row scaled by sqrt(copies): the dual, expanded to the copies,
    is optimal for the original problem (eta recomputed on the original rows, the objective and
    predictions against LIBSVM's on the same rows)."""
    X, labels = load(name)
    y = as_pm(labels) if formulation == "c_svc" else labels
    X, y = with_copies(X, y)
    n = X.shape[0]
    sol = check_solution_against_libsvm(X, y, formulation, 1.0)
    assert sol.details["merged_samples"] > n // 4
    x = sol.dual
    Z, c, a, u = np_dual(X, y, formulation, np.full(n, 1.0))
    assert x.shape == (Z.shape[0],)
    check_copies_share_values(X, y, np.full(n, 1.0), x)


@pytest.mark.parametrize("formulation", ["c_svc", "epsilon_svr"])
def test_merging_keeps_samples_with_other_bounds_apart_and_saves_work(formulation):
    """Copies whose bounds differ (per-sample C) are not merged; the merged solve reaches the
    optimum of the solve without merging in fewer passes over X."""
    X, labels = load("heart_scale" if formulation == "c_svc" else "housing_scale")
    y = as_pm(labels) if formulation == "c_svc" else labels
    X, y = with_copies(X, y, seed=1)
    n = X.shape[0]
    upper = np.where(np.arange(n) % 7 == 0, 2.0, 1.0)
    merged = solve(subproblem(X, y, formulation, tol=1e-6, upper=upper))
    Z, c, a, u = np_dual(X, y, formulation, upper)
    assert merged.status == "converged" and np_eta(Z, c, a, u, merged.dual)[0] <= 1e-6
    check_copies_share_values(X, y, upper, merged.dual)
    distinct = np.unique(np.hstack([X.toarray(), y[:, None], upper[:, None]]), axis=0).shape[0]
    assert merged.details["merged_samples"] == n - distinct
    whole = solve(subproblem(X, y, formulation, tol=1e-6, upper=upper), merge=False)
    assert whole.details["merged_samples"] == 0
    assert merged.objective == pytest.approx(whole.objective, rel=1e-7)
    assert merged.details["passes"] < whole.details["passes"]


@pytest.mark.parametrize("formulation", ["c_svc", "epsilon_svr"])
@pytest.mark.parametrize("copies", [False, True])
def test_presolve_row_norms_are_those_of_the_rows_of_z(formulation, copies):
    """The row norms the merging pass gives (the held rows' certainty test) are |z_r| of the
    rows of Z as solved, merged rows scaled by sqrt(copies) included; none without that pass."""
    X, labels = load("heart_scale" if formulation == "c_svc" else "housing_scale")
    y = as_pm(labels) if formulation == "c_svc" else labels
    if copies:
        X, y = with_copies(X, y)
    qp = linear_dual(subproblem(X, y, formulation), merge=True)
    assert (qp.merged is not None) == copies
    Zd = qp.Z.rows_dense(np.arange(qp.m, dtype=np.int32))
    np.testing.assert_allclose(qp.row_norms, np.linalg.norm(Zd, axis=1), rtol=1e-13)
    assert linear_dual(subproblem(X, y, formulation), merge=False).row_norms is None


def coordinate_epochs(X, y, C, seed=0):
    """The number of DCD epochs coordinate_start runs, recounted: epochs while each gains at most
    Config.coordinate_rate of the one before in DCD's dual objective (a DualCD of the same seed)."""
    n = X.shape[0]
    dcd = DualCD(X, y, np.full(n, C), np.zeros(n), bias=1.0, seed=seed, shrinking=False)
    gains, objective = [], 0.0
    while len(gains) < Config.coordinate_max_epochs:
        while dcd.epoch <= len(gains):
            dcd.run(0.0, len(gains) + 1, 1, 1 << 23)
        gain = dcd.alpha.sum() - 0.5 * dcd.w @ dcd.w - objective
        objective += gain
        gains.append(gain)
        if len(gains) > 1 and gain > Config.coordinate_rate * gains[-2]:
            break
    return len(gains)


def test_many_features_start_from_coordinate_descent_epochs():
    """C-SVC with more features than Config.coordinate_start_p (Newton systems by CG) starts from DCD
    epochs, as many as the recount says; from there the solve reaches LIBSVM's optimum, and
    eta <= 1e-3 in fewer passes over X (the epochs counted) than from x = 0."""
    X, y = synthetic("text", 5000)
    assert X.shape[1] > Config.coordinate_start_p
    lines = []
    started = solve(subproblem(X, y, C=1.0, tol=1e-3, log=lines.append))
    epochs = coordinate_epochs(X, y, 1.0)
    assert epochs >= 3
    assert f"ssnal: start from {epochs} epochs of dual coordinate descent" in lines[0]
    Z, c, a, u = np_dual(X, y, "c_svc", np.full(X.shape[0], 1.0))
    assert started.status == "converged" and np_eta(Z, c, a, u, started.dual)[0] <= 1e-3
    check_solution_against_libsvm(X, y, "c_svc", 1.0)
    cold_lines = []
    cold = solve(subproblem(X, y, C=1.0, tol=1e-3, log=cold_lines.append, config=Config(coordinate_start_p=math.inf)))
    assert not any("coordinate descent" in line for line in cold_lines)
    assert started.details["passes"] < 0.7 * cold.details["passes"]


def testcoordinate_start_sums_equal_copies_into_their_merged_row():
    """With equal samples merged, the start is the unmerged one in the merged variables:
    u = sum of the copies' x / sqrt(copies), in the subspace of equal copies SSsNAL keeps to; the
    solve from it reaches the optimum of the unmerged solve with equal values on the copies."""
    X, y = synthetic("text", 1000)
    X, y = with_copies(to_csr(X[:, :3000]), y)     # 3000 features: copies compared dense below
    merged = linear_dual(subproblem(X, y), merge=True)
    plain = linear_dual(subproblem(X, y), merge=False)
    assert merged.merged is not None
    stop = np.zeros(1, dtype=np.int32)
    x_merged, epochs_merged = coordinate_start(merged, 0, stop, None, Config())
    x_plain, epochs_plain = coordinate_start(plain, 0, stop, None, Config())
    assert epochs_merged == epochs_plain
    np.testing.assert_allclose(x_merged, np.bincount(merged.merged.group, weights=x_plain) / merged.merged.scale,
                               rtol=1e-12, atol=1e-15)
    sol = solve(subproblem(X, y, tol=1e-6))
    whole = solve(subproblem(X, y, tol=1e-6), merge=False)
    assert sol.details["merged_samples"] > 0 and sol.objective == pytest.approx(whole.objective, rel=1e-7)
    check_copies_share_values(X, y, np.full(X.shape[0], 1.0), sol.dual)


def test_stop_flag_stops_thecoordinate_start():
    X, y = synthetic("text", 2000)
    stop = np.ones(1, dtype=np.int32)
    with pytest.raises(KeyboardInterrupt):
        coordinate_start(linear_dual(subproblem(X, y)), 0, stop, None, Config())


def testcoordinate_start_is_the_same_for_every_thread_count():
    """The start runs on one thread in a seeded order: the same epochs and dual objective (its
    trace line) for 1 and 2 threads, and the same optimum after it."""
    X, y = synthetic("text", 2000)
    solutions, starts = [], []
    for threads in (1, 2):
        lines = []
        solutions.append(solve(subproblem(X, y, tol=1e-6, log=lines.append, n_threads=threads)))
        starts.append(lines[0])
    assert "dual coordinate descent" in starts[0] and starts[0] == starts[1]
    assert solutions[1].objective == pytest.approx(solutions[0].objective, rel=1e-7)


@pytest.mark.parametrize("name, formulation", [("heart_scale", "c_svc"), ("mushrooms", "c_svc"),
                                                ("abalone_scale", "epsilon_svr")])
def test_a_path_over_c_reaches_the_cold_optima(name, formulation):
    """solve_path warm-starts each C from the last C's solution (scaled into the new box) and
    reuses the presolve (mushrooms: equal samples merged): every problem of the path reaches the
    optimum of its cold solve (dual objective within 1e-6 relative, eta <= tol by the NumPy twin).
    Whether the warm starts save work depends on the data, so this test holds the optima only
    (a9a's savings: test_a_path_on_a9a_takes_fewer_passes_than_cold_solves)."""
    X, labels = load(name)
    y = as_pm(labels) if formulation == "c_svc" else labels
    X, y = X[:3000], y[:3000]
    Cs = [0.25, 1.0, 2.0, 8.0]
    sub = subproblem(X, y, formulation, C=1.0, tol=1e-6)
    path = SOLVER.solve_c_path(sub, Cs)
    cold = [solve(subproblem(X, y, formulation, C=C, tol=1e-6)) for C in Cs]
    for C, warm, reference in zip(Cs, path, cold):
        Z, c, a, u = np_dual(X, y, formulation, np.full(X.shape[0], C))
        assert warm.status == "converged" and np_eta(Z, c, a, u, warm.dual)[0] <= 1e-6
        assert warm.objective == pytest.approx(reference.objective, rel=1e-6)
    assert path[0].details["newton"] == cold[0].details["newton"]    # the first C starts cold


def test_a_path_on_a9a_takes_fewer_passes_than_cold_solves():
    """C = 1/8 .. 8 on a9a to eta <= 1e-3: the path's passes over X (its presolve once) and Newton
    steps are fewer than the cold solves' (the passes by at least 15 %)."""
    X, labels = load("a9a")
    y = as_pm(labels)
    Cs = [0.125, 0.5, 2.0, 8.0]
    path = SOLVER.solve_c_path(subproblem(X, y, C=1.0, tol=1e-3), Cs)
    cold = [solve(subproblem(X, y, C=C, tol=1e-3)) for C in Cs]
    assert all(s.status == "converged" for s in path)
    assert sum(s.details["passes"] for s in path) < 0.85 * sum(s.details["passes"] for s in cold)
    assert sum(s.details["newton"] for s in path) < sum(s.details["newton"] for s in cold)


def test_a_warm_subproblem_starts_from_its_solution():
    """Subproblem.warm (a Solution of the same rows at other bounds) is honoured by solve: from the
    solution at C = 2 the problem at C = 2 itself needs no Newton step beyond the checks."""
    X, labels = load("heart_scale")
    y = as_pm(labels)
    sub = subproblem(X, y, C=2.0, tol=1e-6)
    first = solve(sub)
    again = solve(dataclasses.replace(sub, warm=first))
    assert again.objective == pytest.approx(first.objective, rel=1e-9)
    assert again.details["newton"] < first.details["newton"]
