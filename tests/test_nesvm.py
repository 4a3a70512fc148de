"""NESVM (solver "nesvm", docs/algorithms.md §3) against independent solutions of its problems:
L-BFGS on the smoothed objective at a fixed mu, LIBSVM's linear-kernel optimum (through SSsNAL,
itself held to LIBSVM, and LIBSVM itself in the slow run), HiGHS for the LP-SVM, the ridge closed
form for the LS-SVM; the certificate (duality gap) recomputed here from w and alpha alone."""
import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog, minimize

from fastsvm._core._margins import largest_eigenvalue
from fastsvm.errors import FastSVMError, ParameterError
from fastsvm.estimators.linear import LinearSVC
from fastsvm.params import Params
from fastsvm.solvers import get_solver
from fastsvm.solvers.base import Kernel, Subproblem
from fastsvm.problems.blocks import OneBlock
from fastsvm.solvers.nesvm import Block, Config, Objective, lipschitz_bound, solve
from conftest import shared_file, stops_within_a_second
from linear_oracle import load

# heart_scale, C = 1, free bias: the hinge optimum, LIBSVM's (libsvm-official -s 0 -t 0 -c 1; test_alm.py's
# OPTIMA, which test_reference_optima_come_from_their_oracles recomputes)
HEART_HINGE = 92.4733746202
# the smoothed optimum F_mu at a fixed mu: L-BFGS-B on F_mu
# (recomputed in test_fixed_mu_reaches_the_smoothed_optimum_of_lbfgs)
HEART_SMOOTHED = {1.0: 52.0847773049, 0.1: 87.8629746062, 0.01: 92.0096584327}
# the LP-SVM's optimum at C = 1 by HiGHS (lp_svm_by_highs; recomputed in test_lp_svm_equals_highs)
HEART_LP, SONAR_LP = 96.7077932551, 81.7481803336
# the LS-SVM's optimum at C = 1, the ridge closed form (recomputed in test_ls_svm_equals_the_ridge_closed_form)
HEART_LS = 121.606018174342


def pm(labels):
    return np.where(labels == labels[0], 1.0, -1.0)

# passes of the paper scheme on heart_scale at -e 1e-3: between the exact constant's and twice its
PAPER_PASSES = 2000


def subproblem(X, y, C=1.0, tol=1e-3, loss=None, *, n_threads=1, log=None, max_iter=None, **options):
    config = options.pop("config", None)
    params = Params(solver="nesvm", kernel_type="linear", C=C, tol=tol, loss=loss, max_iter=max_iter,
                    options=options, config=config)
    return Subproblem("c_svc", X, np.asarray(y, dtype=float), np.full(X.shape[0], float(C)), Kernel("linear"),
                      params, n_threads=n_threads, log=log)


def hinge_objective(X, y, C, w, b):
    return 0.5 * w @ w + C * np.maximum(0.0, 1.0 - y * (X @ w + b)).sum()


def hinge_gap(X, y, C, sol):
    """(P(w) - D(alpha)) / P(w), alpha = y * coef made feasible here (y^T alpha = 0 by scaling the
    larger class down, inside the box): an independent certificate of the returned point."""
    alpha = np.clip(y * sol.coef, 0.0, C)
    s = y @ alpha
    if s != 0:
        side = y == np.sign(s)
        alpha[side] *= 1.0 - abs(s) / alpha[side].sum()
    v = X.T @ (y * alpha)
    primal = hinge_objective(X, y, C, sol.w, -sol.rho)
    return (primal - (alpha.sum() - 0.5 * v @ v)) / primal


# ---------------------------------------------------------------- C-SVM

@pytest.mark.parametrize("mu", sorted(HEART_SMOOTHED))
def test_fixed_mu_reaches_the_smoothed_optimum_of_lbfgs(mu):
    X, labels = load("heart_scale")
    y = pm(labels)
    sol = solve(subproblem(X, y, tol=1e-11, mu=mu))
    assert sol.status == "converged"
    assert sol.details["smoothed_objective"] == pytest.approx(HEART_SMOOTHED[mu], rel=1e-6)
    # the second method, here: L-BFGS on F_mu written out with NumPy
    A = y[:, None] * np.hstack([X.toarray(), np.ones((X.shape[0], 1))])
    rho = np.abs(A).max(axis=1)

    def f(w):
        m = 1.0 - A @ w
        u = np.clip(m / (mu * rho), 0.0, 1.0)
        g = -A.T @ u
        g[:-1] += w[:-1]
        return 0.5 * w[:-1] @ w[:-1] + np.sum(u * m - 0.5 * mu * rho * u * u), g
    lbfgs = minimize(f, np.zeros(A.shape[1]), jac=True, method="L-BFGS-B",
                     options={"maxiter": 50000, "gtol": 1e-12, "ftol": 1e-16})
    assert sol.details["smoothed_objective"] == pytest.approx(lbfgs.fun, rel=1e-6)


@pytest.mark.parametrize("scheme", ["backtracking", "paper"])
def test_default_homotopy_reaches_the_hinge_optimum(scheme):
    X, labels = load("heart_scale")
    y = pm(labels)
    sol = solve(subproblem(X, y, scheme=scheme))
    assert sol.status == "converged"
    assert HEART_HINGE * (1 - 1e-9) <= sol.objective <= HEART_HINGE * (1 + 1.5e-3)
    assert sol.objective == pytest.approx(hinge_objective(X.toarray(), y, 1.0, sol.w, -sol.rho), rel=1e-12)
    assert 0 <= hinge_gap(X.toarray(), y, 1.0, sol) <= 1e-3 * 1.01
    assert sol.stop_measure <= 1e-3
    tight = solve(subproblem(X, y, tol=1e-6, scheme=scheme))
    assert tight.objective == pytest.approx(HEART_HINGE, rel=1e-6)


def linear_optimum(X, y, C):
    """LIBSVM's linear-kernel C-SVC optimum (free bias) as SSsNAL reaches it (its own tests hold
    it to LIBSVM's dual objective): the primal optimum is minus the dual objective."""
    params = Params(solver="ssnal", kernel_type="linear", C=C, tol=1e-8)
    sub = Subproblem("c_svc", X, y, np.full(X.shape[0], C), Kernel("linear"), params)
    return -get_solver("ssnal").solve(sub).objective


@pytest.mark.parametrize("name", ["a9a", "w8a"])
def test_large_sets_reach_libsvms_linear_optimum(name):
    X, labels = load(name)
    y = pm(labels)
    sol = solve(subproblem(X, y, n_threads=2))
    assert sol.status == "converged"
    optimum = linear_optimum(X, y, 1.0)
    assert optimum * (1 - 1e-7) <= sol.objective <= optimum * (1 + 1.5e-3)
    assert hinge_gap(X, y, 1.0, sol) <= 1e-3 * 1.01


@pytest.mark.slow
@pytest.mark.parametrize("name", ["a9a", "w8a"])
def test_large_sets_against_libsvm_itself(name):
    svmutil = pytest.importorskip("libsvm.svmutil")
    X, labels = load(name)
    y = pm(labels)
    model = svmutil.svm_train(svmutil.svm_problem(y, X), "-t 0 -c 1 -e 1e-6 -m 1000 -q")
    alpha = np.abs(np.array([c[0] for c in model.get_sv_coef()]))
    sv = X[np.array(model.get_sv_indices()) - 1]
    v = sv.T @ (y[np.array(model.get_sv_indices()) - 1] * alpha)
    libsvm_dual = alpha.sum() - 0.5 * v @ v
    sol = solve(subproblem(X, y, n_threads=2))
    assert libsvm_dual * (1 - 1e-6) <= sol.objective <= libsvm_dual * (1 + 1.5e-3)


def test_class_weights_are_per_row_costs():
    X, labels = load("heart_scale")
    y = pm(labels)
    upper = np.where(y > 0, 2.0, 0.5)
    params = Params(solver="nesvm", kernel_type="linear", tol=1e-5)
    sol = solve(Subproblem("c_svc", X, y, upper, Kernel("linear"), params))
    ref = Params(solver="ssnal", kernel_type="linear", tol=1e-9)
    optimum = -get_solver("ssnal").solve(Subproblem("c_svc", X, y, upper, Kernel("linear"), ref)).objective
    assert optimum * (1 - 1e-9) <= sol.objective <= optimum * (1 + 1e-5)
    assert abs(optimum - HEART_HINGE) > 1e-3 * HEART_HINGE     # the weights change the problem


def test_two_threads_give_the_same_bits():
    X, labels = load("a9a")
    X, y = X[:12000], pm(labels)[:12000]
    one, two = (solve(subproblem(X, y, tol=1e-2, n_threads=t)) for t in (1, 2))
    np.testing.assert_array_equal(one.w, two.w)
    assert one.rho == two.rho and one.n_iter == two.n_iter


def test_backtracking_takes_fewer_passes_than_the_paper_scheme():
    X, labels = load("a9a")
    y = pm(labels)
    passes = {s: solve(subproblem(X[:8000], y[:8000], tol=1e-2, scheme=s)).details["passes"]
              for s in ("backtracking", "paper")}
    assert passes["backtracking"] * 2 <= passes["paper"]



def test_the_paper_schemes_step_constant_is_not_overestimated():
    """The paper scheme's steps are 1/L: an L twice the global constant (docs/algorithms.md §3)
    takes more passes to the same gap than PAPER_PASSES, which the constant itself stays under;
    the bound lies between the two counts on heart_scale at -e 1e-3 (deterministic for any -j)."""
    X, labels = load("heart_scale")
    y = pm(labels)
    exact = solve(subproblem(X, y, tol=1e-3, scheme="paper"))
    doubled = solve(subproblem(X, y, tol=1e-3, scheme="paper",
                               config=dataclasses.replace(Config(), lipschitz_safety=2 * Config().lipschitz_safety)))
    assert exact.status == doubled.status == "converged"
    assert exact.details["passes"] <= PAPER_PASSES < doubled.details["passes"]

# ---------------------------------------------------------------- LP-SVM and LS-SVM

def lp_svm_by_highs(X, y, C):
    """min |w|_1 + C sum xi s.t. y_i (x_i.w + b) >= 1 - xi, xi >= 0, as an LP for HiGHS."""
    n, p = X.shape
    Xd = X.toarray()
    A = np.hstack([-y[:, None] * Xd, y[:, None] * Xd, -y[:, None], y[:, None], -np.eye(n)])
    c = np.concatenate([np.ones(2 * p), [0.0, 0.0], np.full(n, C)])
    result = linprog(c, A_ub=A, b_ub=-np.ones(n), bounds=(0, None), method="highs")
    return result.fun, result.x[:p] - result.x[p:2 * p]


@pytest.mark.parametrize("name,value,tol,finish", [("heart_scale", HEART_LP, 1e-5, "interior"),
                                                    ("sonar_scale", SONAR_LP, 1e-4, "interior"),
                                                    ("heart_scale", HEART_LP, 1e-5, "none")])
def test_lp_svm_equals_highs(name, value, tol, finish):
    X, labels = load(name)
    y = pm(labels)
    optimum, w_lp = lp_svm_by_highs(X, y, 1.0)
    assert optimum == pytest.approx(value, rel=1e-9)
    lines = []
    sol = solve(subproblem(X, y, tol=tol, penalty="l1", max_iter=200000, finish=finish, log=lines.append))
    assert optimum * (1 - 1e-9) <= sol.objective <= optimum * (1 + tol)
    primal = np.abs(sol.w).sum() + np.maximum(0.0, 1.0 - y * (X @ sol.w - sol.rho)).sum()
    assert sol.objective == pytest.approx(primal, rel=1e-12)
    assert sol.stop_measure <= tol
    # the homotopy has to reach the finish's gap (0.3) only: its first mu is sized from that, not -e
    assert sol.history[0]["mu"] == pytest.approx(1.0 if finish == "interior" else 2 * np.sqrt(tol))
    if finish == "interior":       # the LP's own support, exactly
        assert any("interior-point finish" in line for line in lines)
        np.testing.assert_array_equal(sol.w != 0, np.abs(w_lp) > 1e-9)
    else:   # exact zeros from the l1 prox, on the LP's support up to weights below 1 % of the largest
        assert not any("interior-point finish" in line for line in lines)
        np.testing.assert_array_equal(np.abs(sol.w) > 0.01 * np.abs(sol.w).max(), np.abs(w_lp) > 1e-9)
    assert np.count_nonzero(sol.w) < X.shape[1]


def test_lp_svm_finish_grows_its_working_set():
    """Handed over early with no margin band, the finish misses rows and features that the whole
    problem's optimality conditions then bring in: several rounds, the same optimum."""
    X, labels = load("sonar_scale")
    y = pm(labels)
    optimum, _ = lp_svm_by_highs(X, y, 1.0)
    lines = []
    sol = solve(subproblem(X, y, tol=1e-5, penalty="l1", log=lines.append,
                           config=Config(finish_gap=1.0, working_band=0.0, feature_band=0.0)))
    assert sol.details["finish_rounds"] > 1
    assert any(" join" in line and not line.split("; ")[1].startswith("0 rows and 0 features")
               for line in lines if "finish" in line)
    assert sol.objective == pytest.approx(optimum, rel=1e-5)
    assert sol.stop_measure <= 1e-5


def test_ls_svm_equals_the_ridge_closed_form():
    X, labels = load("heart_scale")
    y = pm(labels)
    sol = solve(subproblem(X, y, tol=1e-12, loss="squared_error"))
    # ridge on +-1 targets with an unpenalized intercept: centre, solve, recover b
    Xd = X.toarray()
    mean_x, mean_y = Xd.mean(axis=0), y.mean()
    Xc = Xd - mean_x
    w = np.linalg.solve(Xc.T @ Xc + 0.5 * np.eye(Xd.shape[1]), Xc.T @ (y - mean_y))
    b = mean_y - mean_x @ w
    value = 0.5 * w @ w + np.sum((y - Xd @ w - b) ** 2)
    assert value == pytest.approx(HEART_LS, rel=1e-10)
    assert sol.objective == pytest.approx(HEART_LS, rel=1e-8)
    np.testing.assert_allclose(sol.w, w, rtol=0, atol=1e-5)
    assert -sol.rho == pytest.approx(b, abs=1e-5)


def test_ls_svm_step_uses_the_spectral_norm_not_eq_56():
    """The paper's eq. 56 (1 + 2C max_i |x_i|^2) is far below LS-SVM's Lipschitz constant 1 + 2C
    sigma_max(A)^2, and a step of its size diverges: the bound used must cover the true one."""
    X, labels = load("heart_scale")
    y = pm(labels)
    team = OneBlock(Block(X, y, np.ones(X.shape[0]), 1.0, "squared_error"))
    bound = 1.0 + lipschitz_bound(Objective(team, "l2", "squared_error"), Config(), np.zeros(1, np.int32))
    A = y[:, None] * np.hstack([X.toarray(), np.ones((X.shape[0], 1))])
    true = 1.0 + 2.0 * np.linalg.norm(A, 2) ** 2
    eq56 = 1.0 + 2.0 * (np.linalg.norm(A, axis=1) ** 2).max()
    assert bound >= true and eq56 * 10 < true
    sol = solve(subproblem(X, y, tol=1e-10, loss="squared_error", scheme="paper"))
    assert sol.objective == pytest.approx(HEART_LS, rel=1e-8)


def test_lipschitz_bound_over_a_team_is_the_rows_power_iteration():
    """The team's power iteration (fastsvm.problems.blocks) over the Block's A^T D A is
    fastsvm._core._margins.largest_eigenvalue's on the same D, bit for bit."""
    X, labels = load("heart_scale")
    y = pm(labels)
    upper = np.where(y > 0, 2.0, 0.5)
    for loss in ("hinge", "squared_error"):
        block = Block(X, y, upper, 1.0, loss)
        bound = lipschitz_bound(Objective(OneBlock(block), "l2", loss), Config(), np.zeros(1, np.int32))
        d = 2.0 * upper if loss != "hinge" else upper / block.rho
        assert bound == Config().lipschitz_safety * largest_eigenvalue(block.rows, d, Config().power_steps)


def test_squared_hinge_with_either_penalty_against_lbfgs():
    """The squared hinge (scikit-learn LinearSVC's default loss), free bias: l2 against L-BFGS and
    test_alm.py's optimum for p = 2, l1 against L-BFGS-B on w = w+ - w-."""
    X, labels = load("heart_scale")
    y = pm(labels)
    Xd = X.toarray()
    n, p = Xd.shape

    def l2(w):
        r = np.maximum(0.0, 1.0 - y * (Xd @ w[:-1] + w[-1]))
        g = np.append(w[:-1] - 2 * Xd.T @ (y * r), -2 * np.sum(y * r))
        return 0.5 * w[:-1] @ w[:-1] + r @ r, g

    def l1(v):
        w = v[:p] - v[p:2 * p]
        r = np.maximum(0.0, 1.0 - y * (Xd @ w + v[-1]))
        gw = -2 * Xd.T @ (y * r)
        return v[:2 * p].sum() + r @ r, np.concatenate([1 + gw, 1 - gw, [-2 * np.sum(y * r)]])
    options = {"maxiter": 50000, "gtol": 1e-12, "ftol": 1e-16}
    ref_l2 = minimize(l2, np.zeros(p + 1), jac=True, method="L-BFGS-B", options=options).fun
    ref_l1 = minimize(l1, np.zeros(2 * p + 1), jac=True, method="L-BFGS-B", options=options,
                      bounds=[(0, None)] * (2 * p) + [(None, None)]).fun
    assert ref_l2 == pytest.approx(114.914455016621, rel=1e-9)   # test_alm.py's OPTIMA for p = 2
    sol = solve(subproblem(X, y, tol=1e-10, loss="squared_hinge"))
    assert sol.objective == pytest.approx(114.914455016621, rel=1e-9)
    sol = solve(subproblem(X, y, tol=1e-9, loss="squared_hinge", penalty="l1"))
    assert ref_l1 * (1 - 1e-8) <= sol.objective <= ref_l1 * (1 + 1e-8)


# ---------------------------------------------------------------- surfaces of the solver

def test_progress_lines_per_stage_and_history():
    X, labels = load("heart_scale")
    lines = []
    sol = solve(subproblem(X, pm(labels), log=lines.append))
    stages = [line for line in lines if "stage" in line]
    assert len(stages) == len(sol.history) >= 3
    assert "mu" in stages[0] and "relative gap" in stages[0]
    assert "converged" in lines[-1]
    mus = [h["mu"] for h in sol.history]
    assert all(b == pytest.approx(a / 2) for a, b in zip(mus, mus[1:]))


@pytest.mark.parametrize("tol,mu_start,first", [(1e-2, None, 0.2), (1e-4, None, 0.02), (0.5, None, 1.0),
                                                (1e-2, 1.0, 1.0)])
def test_first_stage_is_sized_from_the_requested_gap(tol, mu_start, first):
    X, labels = load("heart_scale")
    y = pm(labels)
    options = {} if mu_start is None else {"mu_start": mu_start}
    sol = solve(subproblem(X, y, tol=tol, **options))
    assert sol.history[0]["mu"] == pytest.approx(first)
    assert sol.status == "converged" and hinge_gap(X.toarray(), y, 1.0, sol) <= tol * 1.01
    # the trace: every iterate's true objective at the passes spent, the last one the answer's
    passes, values = sol.details["trace"].T
    assert np.all(np.diff(passes) >= 0) and passes[-1] <= sol.details["passes"]
    assert values.min() <= sol.objective * (1 + 1e-12) and np.all(values >= HEART_HINGE * (1 - 1e-9))


def test_max_iter_and_bad_input():
    X, labels = load("heart_scale")
    y = pm(labels)
    sol = solve(subproblem(X, y, tol=1e-12, max_iter=20))
    assert sol.status == "max_iter" and sol.n_iter <= 20 and np.all(np.isfinite(sol.w))
    with pytest.raises(FastSVMError, match="binary"):
        solve(subproblem(X, labels + 1, tol=1e-3))
    with pytest.raises(FastSVMError, match="not one of its models"):
        solve(subproblem(X, y, penalty="l1", loss="squared_error"))
    with pytest.raises(ParameterError, match="scheme"):
        solve(subproblem(X, y, scheme="fast"))
    huge = sp.csr_matrix(np.array([[1e300, 1e300], [-1e300, 3.0], [2e300, 0.0]]))
    for scheme in ("backtracking", "paper"):          # overflow: a clear error, never a hang
        with pytest.raises(FastSVMError, match="overflowed"):
            solve(subproblem(huge, np.array([1.0, -1.0, 1.0]), scheme=scheme))
    with pytest.raises(ParameterError, match="mu_shrink"):
        solve(subproblem(X, y, mu_shrink=1.5))


def test_stop_flag_raises_keyboard_interrupt_within_a_second():
    X, labels = load("a9a")
    sub = subproblem(X, pm(labels), tol=1e-9)
    stops_within_a_second(solve, sub)


def test_registered_with_its_options_in_the_usage_text():
    spec = get_solver("nesvm")
    assert spec.kernels == ("linear",) and spec.multiclass == "ovr"
    assert {option.name for option in spec.options} >= {"penalty", "scheme", "mu", "mu_start", "mu_shrink"}
    usage = subprocess.run([str(Path(sys.executable).parent / "fastsvm-train")], capture_output=True, text=True)
    assert "nesvm" in usage.stderr and "penalty=l2|l1" in usage.stderr and "squared_error" in usage.stderr


def test_cli_trains_a_model_libsvm_reads(tmp_path):
    svmutil = pytest.importorskip("libsvm.svmutil")
    data = shared_file("heart_scale")
    bin_dir = Path(sys.executable).parent
    for extra, name in [([], "c"), (["-o", "penalty=l1"], "lp"), (["-L", "squared_error"], "ls")]:
        model = tmp_path / f"{name}.model"
        trained = subprocess.run([str(bin_dir / "fastsvm-train"), "-s", "nesvm", "-e", "1e-4", *extra, str(data),
                                  str(model)], capture_output=True, text=True, timeout=300)
        assert trained.returncode == 0, trained.stderr
        assert "nesvm: stage 1" in trained.stdout and "optimization finished" in trained.stdout
        y, x = svmutil.svm_read_problem(str(data))
        theirs, _, _ = svmutil.svm_predict(y, x, svmutil.svm_load_model(str(model)), "-q")
        X, labels = load("heart_scale")
        sol = solve(subproblem(X, pm(labels), tol=1e-4, loss="squared_error" if name == "ls" else None,
                               penalty="l1" if name == "lp" else "l2"))
        decision = X @ sol.w - sol.rho
        np.testing.assert_array_equal(theirs, np.where(decision > 0, labels[0], -labels[0]))
    quiet = subprocess.run([str(bin_dir / "fastsvm-train"), "-s", "nesvm", "-q", str(data), str(tmp_path / "q")],
                           capture_output=True, text=True, timeout=300)
    assert quiet.returncode == 0 and quiet.stdout == ""
    bad = subprocess.run([str(bin_dir / "fastsvm-train"), "-s", "nesvm", "-o", "penalty=l3", str(data)],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "penalty" in bad.stderr and "Traceback" not in bad.stderr


def test_linear_svc_solver_nesvm():
    X, labels = load("heart_scale")
    for penalty, loss in [("l2", "hinge"), ("l1", "hinge"), ("l2", "squared_error"), ("l2", "squared_hinge")]:
        clf = LinearSVC(solver="nesvm", penalty=penalty, loss=loss, tol=1e-4, max_iter=100000).fit(X, labels)
        # the positive class is the larger label, as scikit-learn's
        y = np.where(labels == clf.classes_[1], 1.0, -1.0)
        sol = solve(subproblem(X, y, tol=1e-4, loss=loss, penalty=penalty))
        np.testing.assert_allclose(clf.coef_[0], sol.w, rtol=0, atol=1e-12)
        assert clf.intercept_[0] == pytest.approx(-sol.rho, abs=1e-12)
        assert clf.n_iter_ == sol.n_iter
        np.testing.assert_array_equal(clf.predict(X), np.where(X @ sol.w - sol.rho > 0, clf.classes_[1],
                                                               clf.classes_[0]))
    assert np.count_nonzero(LinearSVC(solver="nesvm", penalty="l1", loss="hinge", C=0.05, max_iter=100000)
                            .fit(X, labels).coef_) < X.shape[1]
    Xi, yi = load("iris.scale")
    clf = LinearSVC(solver="nesvm", loss="hinge", max_iter=100000).fit(Xi, yi)
    assert clf.coef_.shape == (3, 4) and clf.score(Xi, yi) > 0.85
    with pytest.raises(ValueError, match="nesvm"):
        LinearSVC(loss="squared_error").fit(X, labels)
    with pytest.raises(ValueError, match="one-vs-rest"):
        LinearSVC(solver="nesvm", multi_class="crammer_singer").fit(Xi, yi)
