"""SVM-ALM (solver "alm", docs/algorithms.md §4) against independent solutions of its problems:
reference optima (LIBSVM's dual for p = 1, L-BFGS for p > 1), L-BFGS
here on the smooth cases with class weights and without a bias, and the certificate (duality gap)
recomputed here from w and alpha alone."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from fastsvm.errors import FastSVMError, ParameterError
from fastsvm.estimators.linear import LinearSVC
from fastsvm.params import Params
from fastsvm.solvers import get_solver
from fastsvm.solvers.alm import Config, solve
from fastsvm.solvers.base import Kernel, Subproblem
from conftest import shared_file, stops_within_a_second
from linear_oracle import load

# C = 1 (and 100), free bias: p = 1 LIBSVM's optimum (libsvm-official -s 0 -t 0), p > 1 L-BFGS-B on the primal
# (lbfgs below); test_reference_optima_come_from_their_oracles recomputes them
OPTIMA = {("heart_scale", 1.0, 1.0): 92.4733746202, ("heart_scale", 1.0, 1.5): 105.757167802259,
          ("heart_scale", 1.0, 2.0): 114.914455016621, ("a1a", 1.0, 1.0): 540.575067298,
          ("a1a", 1.0, 1.5): 599.930875750623, ("a1a", 1.0, 2.0): 637.741857156215,
          ("heart_scale", 100.0, 1.0): 8987.1599891}


def pm(labels):
    return np.where(labels == labels[0], 1.0, -1.0)


def subproblem(X, y, C=1.0, tol=1e-3, loss=None, *, n_threads=1, log=None, max_iter=None, weights=None,
               bias=-1.0, **options):
    upper = np.full(X.shape[0], float(C)) if weights is None else C * weights
    params = Params(solver="alm", kernel_type="linear", C=C, tol=tol, loss=loss, max_iter=max_iter, bias=bias,
                    options=options)
    return Subproblem("c_svc", X, np.asarray(y, dtype=float), upper, Kernel("linear"), params,
                      n_threads=n_threads, log=log)


def primal(X, y, upper, p, w, *, b):
    return 0.5 * w @ w + upper @ np.maximum(0.0, 1.0 - y * (X @ w + b)) ** p


def certified_gap(X, y, upper, p, sol):
    """(P(w) - D(alpha)) / P(w) with alpha = y * coef made feasible here: clipped to the box (p = 1)
    or to alpha >= 0, the larger class scaled down to y^T alpha = 0."""
    alpha = np.clip(y * sol.coef, 0.0, upper if p == 1 else None)
    s = y @ alpha
    if s != 0:
        side = y == np.sign(s)
        alpha[side] *= 1.0 - abs(s) / alpha[side].sum()
    v = X.T @ (y * alpha)
    a = np.divide(alpha, upper, out=np.zeros_like(alpha), where=upper > 0)
    conjugate = 0.0 if p == 1 else upper @ ((p - 1.0) * (a / p) ** (p / (p - 1.0)))
    value = primal(X, y, upper, p, sol.w, b=-sol.rho)
    return (value - (alpha.sum() - 0.5 * v @ v - conjugate)) / value


@pytest.mark.parametrize("step", ["inexact", "exact"])
@pytest.mark.parametrize("name,C,p", list(OPTIMA))
def test_optimum_and_certificate(name, C, p, step):
    X, labels = load(name)
    y = pm(labels)
    sol = solve(subproblem(X, y, C=C, tol=1e-8, p=p, step=step))
    assert sol.status == "converged"
    upper = np.full(X.shape[0], C)
    optimum = OPTIMA[(name, C, p)]
    assert sol.objective == pytest.approx(primal(X, y, upper, p, sol.w, b=-sol.rho), rel=1e-12)
    assert optimum * (1 - 1e-9) <= sol.objective <= optimum * (1 + 1e-6)
    assert 0.0 <= certified_gap(X, y, upper, p, sol) <= 1e-8


@pytest.mark.parametrize("p", [1.0, 2.0])
def test_the_trace_holds_what_any_looser_tol_would_have_stopped_at(p):
    """tools/bench_alm.py reads the run at any -e from one run's trace: a looser -e stops at the
    trace's first certificate within it, with that row's passes and objective."""
    X, labels = load("heart_scale")
    y = pm(labels)
    tight = solve(subproblem(X, y, tol=1e-7, p=p))
    trace = tight.details["trace"]
    assert trace[-1, 0] == tight.details["passes"] and trace[-1, 2] == tight.objective
    assert trace[-1, 3] == tight.stop_measure <= 1e-7 < trace[-2, 3]
    assert np.all(np.diff(trace[:, 0]) > 0) and np.all(np.diff(trace[:, 1]) >= 0)
    for tol in (1e-2, 1e-4):
        loose = solve(subproblem(X, y, tol=tol, p=p))
        row = trace[np.flatnonzero(trace[:, 3] <= tol)[0]]
        assert (loose.details["passes"], loose.objective, loose.stop_measure) == (row[0], row[2], row[3])
        assert np.array_equal(loose.details["trace"][:, [0, 2, 3]], trace[:len(loose.details["trace"])][:, [0, 2, 3]])


def lbfgs(X, y, upper, p, bias=True):
    """min 1/2 |w|^2 + sum upper_i max(0, 1 - y_i (x_i w + b))^p for p > 1 (C^1) by L-BFGS-B."""
    Xd = X.toarray()
    n_w = Xd.shape[1]

    def f(v):
        w, b = v[:n_w], (v[n_w] if bias else 0.0)
        r = np.maximum(0.0, 1.0 - y * (Xd @ w + b))
        coef = upper * p * r ** (p - 1.0) * y
        g = np.concatenate([w - Xd.T @ coef, [-coef.sum()] if bias else []])
        return 0.5 * w @ w + upper @ r ** p, g
    result = minimize(f, np.zeros(n_w + bias), jac=True, method="L-BFGS-B",
                      options={"maxiter": 50000, "gtol": 1e-12, "ftol": 1e-16})
    return result.fun


def libsvm_linear_bounds(X, y, C):
    """(dual objective, primal objective) of LIBSVM's linear C-SVC (libsvm-official, -e 1e-10): the
    optimum lies between them."""
    from libsvm.svmutil import svm_parameter, svm_problem, svm_train
    model = svm_train(svm_problem(y, X), svm_parameter(f"-s 0 -t 0 -c {C} -e 1e-10 -q"))
    assert model.get_labels()[0] == 1     # LIBSVM's first class is +1: coef = y alpha, b = -rho
    coef = np.zeros(X.shape[0])
    coef[np.asarray(model.get_sv_indices()) - 1] = np.asarray(model.get_sv_coef()).ravel()
    w = X.T @ coef
    return np.abs(coef).sum() - 0.5 * w @ w, primal(X, y, np.full(X.shape[0], C), 1.0, w, b=-model.rho[0])


@pytest.mark.parametrize("name,C,p", list(OPTIMA))
def test_reference_optima_come_from_their_oracles(name, C, p):
    X, labels = load(name)
    y = pm(labels)
    if p == 1.0:
        pytest.importorskip("libsvm.svmutil")
        dual, primal_value = libsvm_linear_bounds(X, y, C)
        assert dual * (1 - 1e-9) <= OPTIMA[(name, C, p)] <= primal_value * (1 + 1e-9)
        assert primal_value - dual <= 1e-5 * primal_value     # LIBSVM's -e bounds the gradient, not the gap
    else:
        assert lbfgs(X, y, np.full(X.shape[0], C), p) == pytest.approx(OPTIMA[(name, C, p)], rel=1e-8)


@pytest.mark.parametrize("p", [1.5, 2.0, 3.0])
def test_class_weights_and_no_bias_against_lbfgs(p):
    X, labels = load("heart_scale")
    y = pm(labels)
    weights = np.where(y > 0, 2.0, 0.5)
    sol = solve(subproblem(X, y, tol=1e-9, p=p, weights=weights))
    assert sol.objective == pytest.approx(lbfgs(X, y, weights, p), rel=1e-7)
    assert certified_gap(X, y, weights, p, sol) <= 1e-9
    sol = solve(subproblem(X, y, tol=1e-9, p=p, bias=0.0))
    assert sol.rho == 0.0
    assert sol.objective == pytest.approx(lbfgs(X, y, np.ones(X.shape[0]), p, bias=False), rel=1e-7)


def test_loss_sets_p_and_the_same_bits_for_any_thread_count():
    X, labels = load("a1a")
    y = pm(labels)
    by_loss = solve(subproblem(X, y, tol=1e-6, loss="squared_hinge"))
    by_p = solve(subproblem(X, y, tol=1e-6, p=2.0))
    assert by_loss.details["p"] == 2.0 and by_loss.objective == by_p.objective
    two = solve(subproblem(X, y, tol=1e-6, loss="squared_hinge", n_threads=2))
    np.testing.assert_array_equal(two.w, by_loss.w)
    assert two.n_iter == by_loss.n_iter


def test_a_growing_mu_is_an_option_and_mu_can_be_fixed():
    X, labels = load("heart_scale")
    y = pm(labels)
    fixed = solve(subproblem(X, y, tol=1e-6, p=2.0, mu=0.3))
    assert fixed.details["mu"] == 0.3 and fixed.status == "converged"
    grown = solve(subproblem(X, y, tol=1e-6, p=2.0, mu=0.3, mu_growth=1.01, max_iter=3000))
    assert grown.details["mu"] > 0.3


def test_progress_lines_max_iter_and_bad_input():
    X, labels = load("heart_scale")
    y = pm(labels)
    lines = []
    sol = solve(subproblem(X, y, log=lines.append))
    assert any("alm: iteration" in line and "relative gap" in line for line in lines)
    assert "converged" in lines[-1] and len(sol.history) >= 1
    sol = solve(subproblem(X, y, tol=1e-12, max_iter=20))
    assert sol.status == "max_iter" and sol.n_iter == 20 and np.all(np.isfinite(sol.w))
    with pytest.raises(FastSVMError, match="binary"):
        solve(subproblem(X, labels + 1))
    with pytest.raises(FastSVMError, match="not an Lp hinge"):
        solve(subproblem(X, y, loss="squared_error"))
    with pytest.raises(ParameterError, match="step"):
        solve(subproblem(X, y, step="newton"))
    with pytest.raises(FastSVMError, match="p must be >= 1"):
        solve(subproblem(X, y, p=0.5))
    huge = sp.csr_matrix(np.array([[1e300, 1e300], [-1e300, 3.0], [2e300, 0.0]]))
    with pytest.raises(FastSVMError, match="overflowed"):
        solve(subproblem(huge, np.array([1.0, -1.0, 1.0])))


def test_stop_flag_raises_keyboard_interrupt_within_a_second():
    X, labels = load("a9a")
    sub = subproblem(X, pm(labels), tol=1e-12, p=1.0)
    stops_within_a_second(solve, sub)


def test_registered_with_its_options_in_the_usage_text():
    spec = get_solver("alm")
    assert spec.kernels == ("linear",) and spec.multiclass == "ovr"
    assert {option.name for option in spec.options} >= {"p", "step", "mu", "mu_growth"}
    usage = subprocess.run([str(Path(sys.executable).parent / "fastsvm-train")], capture_output=True, text=True)
    assert "alm" in usage.stderr and "step=inexact|exact" in usage.stderr


def test_cli_trains_a_model_libsvm_reads(tmp_path):
    svmutil = pytest.importorskip("libsvm.svmutil")
    data = shared_file("heart_scale")
    bin_dir = Path(sys.executable).parent
    model = tmp_path / "alm.model"
    trained = subprocess.run([str(bin_dir / "fastsvm-train"), "-s", "alm", "-o", "p=1.5", "-e", "1e-6", str(data),
                              str(model)], capture_output=True, text=True, timeout=300)
    assert trained.returncode == 0, trained.stderr
    assert "alm: iteration" in trained.stdout
    y, x = svmutil.svm_read_problem(str(data))
    theirs, _, _ = svmutil.svm_predict(y, x, svmutil.svm_load_model(str(model)), "-q")
    X, labels = load("heart_scale")
    sol = solve(subproblem(X, pm(labels), tol=1e-6, p=1.5))
    np.testing.assert_array_equal(theirs, np.where(X @ sol.w - sol.rho > 0, labels[0], -labels[0]))
    bad = subprocess.run([str(bin_dir / "fastsvm-train"), "-s", "alm", "-o", "p=0.5", str(data)],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "p" in bad.stderr and "Traceback" not in bad.stderr


def test_linear_svc_solver_alm_binary_and_one_vs_rest():
    X, labels = load("heart_scale")
    clf = LinearSVC(solver="alm", p=1.5, tol=1e-6, max_iter=100000).fit(X, labels)
    y = np.where(labels == clf.classes_[1], 1.0, -1.0)
    sol = solve(subproblem(X, y, tol=1e-6, p=1.5))
    np.testing.assert_allclose(clf.coef_[0], sol.w, rtol=0, atol=1e-12)
    assert clf.intercept_[0] == pytest.approx(-sol.rho, abs=1e-12)
    assert clf.n_iter_ == sol.n_iter
    X, labels = load("iris.scale")
    clf = LinearSVC(solver="alm", loss="hinge", tol=1e-6, max_iter=100000).fit(X, labels)
    for k, label in enumerate(clf.classes_):      # one-vs-rest: each row its own binary problem
        one = solve(subproblem(X, np.where(labels == label, 1.0, -1.0), tol=1e-6, p=1.0))
        np.testing.assert_allclose(clf.coef_[k], one.w, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="solver='alm'"):
        LinearSVC(solver="alm", penalty="l1").fit(X, labels)
    with pytest.raises(ValueError, match="applies to solver='alm'"):
        LinearSVC(solver="nesvm", p=2.0).fit(X, labels)


def test_config_is_the_options_defaults():
    assert Config().step == "inexact" and Config().mu == 0.0 and Config().mu_growth == 1.0
