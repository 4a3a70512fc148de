"""ADMM (fastsvm.solvers.admm) over fastsvm.kernels.factor: the factors against dense NumPy, the
converged solver against LIBSVM's optimum (objective, b, test accuracy) and an independent eta,
paper mode's early-stopped classifier, one factorization per path and per one-vs-rest problem,
the model file against LIBSVM's svm-predict, bad options and the stop flag."""
import re
import subprocess
import sys
import types
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import fastsvm.solvers.admm as admm
from conftest import SHIPPED_DATA, shared_file, stops_within_a_second
from fastsvm._core._kernel import kernel_matrix
from fastsvm.cli import train as cli_train
from fastsvm.cli.common import run
from fastsvm.files.datafile import load_svmlight_file
from fastsvm.errors import FastSVMError, ParameterError
from fastsvm.kernels.approximation import nystroem_map, sample_landmarks
from fastsvm.kernels.factor import ExactFactor, cholesky_in_place, factor_kernel
from fastsvm.kernels.hodlr import LEAF_SIZE, MAX_RANK, estimate_bytes, fitting_shape
from fastsvm.files.modelfile import load_model, save_model
from fastsvm.params import Params
from fastsvm.models.prediction import decision_values, predict
from fastsvm.solvers import Kernel, Subproblem, get_solver
from fastsvm.training.trainer import fit_model, fit_path

RBF = Kernel(kind="rbf", gamma=0.5)
# heart_scale, RBF gamma 0.5, C = 1: LIBSVM's C-SVC dual objective (libsvm-official -t 4 -e 1e-9 on the
# precomputed K, libsvm_on); test_converged_heart_scale_equals_libsvm computes it
HEART_OPTIMUM = -90.01794446
BIN = Path(sys.executable).parent


def load(name):
    return load_svmlight_file(shared_file(name))


def subproblem(X, y, tol=1e-6, C=1.0, mode="converged", **options):
    params = Params(solver="admm", gamma=0.5, tol=tol, options={"mode": mode, **options})
    return Subproblem("c_svc", X, np.asarray(y, dtype=np.float64), np.full(X.shape[0], C), RBF, params)


def eta_numpy(z, y, K, upper):
    """eta of docs/algorithms.md §0 with the projection onto {y^T x = 0, 0 <= x <= u} by bisection
    on its multiplier: the twin of the solver's certificate."""
    grad = y * (K @ (y * z)) - 1.0
    v = z - grad
    lo, hi = -1e3 - np.abs(v).max(), 1e3 + np.abs(v).max()
    for _ in range(200):
        lam = 0.5 * (lo + hi)
        if y @ np.clip(v - lam * y, 0.0, upper) > 0:
            lo = lam
        else:
            hi = lam
    projected = np.clip(v - lam * y, 0.0, upper)
    return np.linalg.norm(z - projected) / (1 + np.linalg.norm(z) + np.linalg.norm(grad))


def dual_objective(z, y, K):
    return 0.5 * (y * z) @ K @ (y * z) - z.sum()


def libsvm_on(K, y, C=1.0):
    """LIBSVM's C-SVC (libsvm-official, -t 4 -e 1e-9) on the precomputed kernel K: (dual objective,
    rho), the oracle of a solve over that K."""
    svmutil = pytest.importorskip("libsvm.svmutil")
    n = K.shape[0]
    rows = [[float(i + 1)] + list(K[i]) for i in range(n)]
    theirs = svmutil.svm_train(svmutil.svm_problem(list(y), rows, isKernel=True),
                               svmutil.svm_parameter(f"-t 4 -c {C} -e 1e-9 -q"))
    assert theirs.get_labels()[0] == y[0]
    alpha = np.zeros(n)
    alpha[np.asarray(theirs.get_sv_indices()) - 1] = np.abs(np.asarray(theirs.get_sv_coef()).ravel())
    sign = 1.0 if y[0] > 0 else -1.0      # LIBSVM's first label is its +1 side
    return dual_objective(alpha, y, K), sign * theirs.rho[0]


def paper_iterations(K, y, beta, C=1.0, iterations=10):
    """docs/algorithms.md §5's iteration written out in dense NumPy from zero: the twin of paper mode."""
    n = K.shape[0]
    K_beta = K + beta * np.eye(n)
    u = np.linalg.solve(K_beta, np.ones(n))
    w1 = u.sum()
    z, mu = np.zeros(n), np.zeros(n)
    for _ in range(iterations):
        q = 1.0 + mu + beta * z
        w2 = u @ (y * q)
        x = y * (np.linalg.solve(K_beta, y * q) - (w2 / w1) * u)
        z = np.clip(x - mu / beta, 0.0, C)
        mu = mu - beta * (x - z)
    return z, w2 / w1


@pytest.fixture
def count_factors(monkeypatch):
    """The number of factorizations ADMM makes (calls of factor_kernel)."""
    calls = []

    def counted(*args, **kwargs):
        calls.append(args[3])
        return factor_kernel(*args, **kwargs)

    monkeypatch.setattr(admm, "factor_kernel", counted)
    return calls


# ---------------------------------------------------------------------------- the factors

def test_exact_factor_solves_and_multiplies_as_dense_numpy():
    X, _ = load_svmlight_file(SHIPPED_DATA / "breast_cancer_scale")
    X = X[:300]
    K = kernel_matrix(X, X, "rbf", 0.5)
    f = factor_kernel(X, RBF, 0.7, "exact")
    B = np.random.default_rng(0).standard_normal((300, 3))
    assert (f.n, f.beta, f.backend, f.nbytes) == (300, 0.7, "exact", 8 * 300 * 300)
    np.testing.assert_allclose(f.matvec(B), K @ B, atol=1e-12)
    np.testing.assert_allclose(f.matvec(B[:, 0]), K @ B[:, 0], atol=1e-12)
    assert np.abs((K + 0.7 * np.eye(300)) @ f.solve(B) - B).max() < 1e-10
    assert np.abs((K + 0.7 * np.eye(300)) @ f.solve(B[:, 1]) - B[:, 1]).max() < 1e-10
    assert set(f.timings) == {"kernel", "factorization"}


def test_nystroem_factor_is_woodbury_on_the_features():
    X, _ = load_svmlight_file(SHIPPED_DATA / "breast_cancer_scale")
    f = factor_kernel(X, RBF, 0.3, "nystroem", n_landmarks=40, seed=3)
    fmap = nystroem_map(X, "rbf", 0.5, landmarks=np.sort(sample_landmarks(X.shape[0], 40, 3)))
    Phi = fmap.transform(X)
    np.testing.assert_allclose(f.features, Phi)
    Kt = Phi @ Phi.T
    B = np.random.default_rng(1).standard_normal((X.shape[0], 2))
    np.testing.assert_allclose(f.matvec(B), Kt @ B, atol=1e-12)
    np.testing.assert_allclose(f.solve(B), np.linalg.solve(Kt + 0.3 * np.eye(X.shape[0]), B), atol=1e-10)


def test_blocked_cholesky_equals_lapack_and_stops():
    rng = np.random.default_rng(2)
    G = rng.standard_normal((301, 301))
    A = G @ G.T / 301 + np.eye(301)
    stop = np.zeros(1, dtype=np.int32)
    for block in (64, 100, 301, 512):
        F = np.asfortranarray(A)
        assert cholesky_in_place(F, stop, block)
        np.testing.assert_allclose(np.tril(F), np.linalg.cholesky(A), atol=1e-13)
    assert not cholesky_in_place(np.asfortranarray(A - 2 * np.eye(301)), stop, 64)
    with pytest.raises(KeyboardInterrupt):
        cholesky_in_place(np.asfortranarray(A), np.ones(1, dtype=np.int32), 64)


def test_default_landmarks_fit_in_memory_limit():
    X, _ = load_svmlight_file(SHIPPED_DATA / "breast_cancer_scale")
    n = X.shape[0]
    f = factor_kernel(X, RBF, 1.0, "nystroem", memory_limit=8 * n * 37)
    assert 0 < f.features.shape[1] <= 37 and f.nbytes <= 8 * n * 37


def test_factor_refuses_bad_beta_backend_and_memory():
    X, _ = load_svmlight_file(SHIPPED_DATA / "breast_cancer_scale")
    with pytest.raises(ParameterError, match="beta"):
        factor_kernel(X, RBF, 0.0, "exact")
    with pytest.raises(ParameterError, match="unknown backend"):
        factor_kernel(X, RBF, 1.0, "hss")
    with pytest.raises(FastSVMError, match=r"more than -m .*backend=nystroem"):
        factor_kernel(X, RBF, 1.0, "exact", memory_limit=1 << 16)
    with pytest.raises(FastSVMError, match=r"more than -m .*landmarks"):
        factor_kernel(X, RBF, 1.0, "nystroem", n_landmarks=400, memory_limit=1 << 16)


def test_fitting_shape_gives_the_budget_to_the_rank():
    MB = 2**20
    assert fitting_shape(50_000, 2000 * MB) == (LEAF_SIZE, MAX_RANK, "leaf_size and max_rank")
    assert fitting_shape(50_000, None) == (LEAF_SIZE, MAX_RANK, "leaf_size and max_rank")
    # the default shape needs 767.52 MB here: the largest rank over leaves 512 .. 32, 21 at
    # leaves 64 and 32 (the larger taken)
    limit = 200 * MB
    assert estimate_bytes(50_000, LEAF_SIZE, MAX_RANK) > limit
    leaf, rank, chosen = fitting_shape(50_000, limit)
    assert (leaf, rank, chosen) == (64, 21, "leaf_size and max_rank")
    assert estimate_bytes(50_000, 64, 21) <= limit < estimate_bytes(50_000, 64, 22)
    assert all(estimate_bytes(50_000, other, rank + 1) > limit for other in (512, 256, 128, 64, 32))
    assert estimate_bytes(50_000, 32, 21) <= limit
    # one of the two given: the other chosen around it, the given one kept
    assert fitting_shape(50_000, limit, leaf_size=256) == (256, 15, "max_rank")
    assert fitting_shape(50_000, limit, max_rank=10) == (256, 10, "leaf_size")
    assert fitting_shape(50_000, limit, leaf_size=512, max_rank=100) == (512, 100, "")
    with pytest.raises(FastSVMError, match=r"50000 rows needs at least 12\.21 MB .*; raise the limit$"):
        fitting_shape(50_000, 5 * MB)
    with pytest.raises(FastSVMError, match=r"max_rank 100\), more than .*; lower max_rank or raise the limit$"):
        fitting_shape(50_000, limit, max_rank=100)


def test_default_hodlr_shape_is_chosen_to_fit_the_limit_and_said():
    """At -m 0.3 neither the exact factor (0.56 MB) nor the default hierarchical shape (0.76 MB)
    of heart_scale fits: the fit takes a shape that does, names it and holds no more."""
    X, y = load("heart_scale")
    limit = 0.3 * 2**20
    assert estimate_bytes(X.shape[0], LEAF_SIZE, MAX_RANK) > limit and 8 * X.shape[0] ** 2 > limit
    lines = []
    model = fit_model(X, y, Params(solver="admm", gamma=0.5, cache_size=0.3), log=lines.append)
    said = [re.fullmatch(r"hodlr shape: leaf_size (\d+), max_rank (\d+) \(leaf_size and max_rank chosen to fit "
                         r"the limit of 0\.30 MB; up to ([\d.]+) MB\)", line) for line in lines]
    said = [m for m in said if m]
    assert len(said) == 1, lines
    leaf, rank = int(said[0].group(1)), int(said[0].group(2))
    assert (leaf, rank) == (32, 12)
    assert estimate_bytes(X.shape[0], leaf, rank) <= limit
    assert float(said[0].group(3)) == pytest.approx(estimate_bytes(X.shape[0], leaf, rank) / 2**20, abs=0.005)
    details = model.info["details"][0]
    assert details["backend"] == "hodlr" and details["factor_bytes"] <= limit
    assert np.mean(predict(model, X) == y) > max(np.mean(y == 1), np.mean(y == -1))
    # the same shape given by hand: the same model, and nothing said about a choice
    given = []
    same = fit_model(X, y, Params(solver="admm", gamma=0.5, cache_size=0.3,
                                  options={"leaf_size": leaf, "rank": rank}), log=given.append)
    np.testing.assert_array_equal(same.sv_coef, model.sv_coef)
    assert not any(line.startswith("hodlr shape") for line in given)


def test_default_mode_is_the_papers():
    assert admm.Config().mode == "paper"
    X, y = load("heart_scale")
    default = get_solver("admm").solve(Subproblem("c_svc", X, y, np.ones(X.shape[0]), RBF,
                                                  Params(solver="admm", gamma=0.5)))
    paper = get_solver("admm").solve(subproblem(X, y, mode="paper"))
    assert default.details["mode"] == "paper" and default.n_iter == admm.PAPER_ITERATIONS
    assert default.details["beta"] == admm.paper_beta(X.shape[0])
    np.testing.assert_array_equal(default.dual, paper.dual)


def test_auto_backend_is_exact_within_m_else_the_large_backend(count_factors):
    X, y = load("heart_scale")       # the exact factor: 270 x 270 doubles, 0.56 MB
    sub = subproblem(X, y)
    assert get_solver("admm").solve(sub).details["backend"] == "exact"
    small = replace(sub, params=replace(sub.params, cache_size=0.1, options={"leaf_size": 16, "rank": 2}))
    solution = get_solver("admm").solve(small)
    assert count_factors == ["exact", admm.LARGE_BACKEND]
    assert solution.details["factor_bytes"] <= 0.1 * 2**20


def test_hodlr_backend_is_dispatched_with_its_arguments(monkeypatch):
    """The hierarchical backend is another branch's module: a stand-in shows what it is given
    and that ADMM runs on what it returns."""
    seen = {}

    def stand_in(X, kernel, beta, **kwargs):
        seen.update(kwargs)
        return ExactFactor(X, kernel, beta)

    monkeypatch.setitem(sys.modules, "fastsvm.kernels.hodlr", types.SimpleNamespace(HODLRFactor=stand_in))
    X, y = load("heart_scale")
    solution = get_solver("admm").solve(subproblem(X, y, backend="hodlr", approx_tol=0.05, rank=7, leaf_size=64))
    assert {k: seen[k] for k in ("tol", "max_rank", "leaf_size")} == {"tol": 0.05, "max_rank": 7, "leaf_size": 64}
    assert set(seen) == {"tol", "max_rank", "leaf_size", "seed", "n_threads", "stop", "log", "memory_limit"}
    assert solution.objective == pytest.approx(HEART_OPTIMUM, rel=1e-6)


def test_hodlr_backend_at_a_tight_tolerance_equals_libsvm():
    X, y = load("heart_scale")
    solution = get_solver("admm").solve(subproblem(X, y, backend="hodlr", approx_tol=1e-10, rank=300, leaf_size=64))
    assert solution.details["backend"] == "hodlr"
    objective, rho = libsvm_on(kernel_matrix(X, X, "rbf", 0.5), y)
    assert solution.objective == pytest.approx(objective, rel=1e-6)
    assert solution.rho == pytest.approx(rho, abs=1e-4)


def test_a_compressing_hodlr_factor_solves_the_svm_on_its_own_kernel():
    """At the default tolerance and a rank of 16 the factor's K~ differs from K, and the converged
    solve is LIBSVM's optimum on K~ itself (K~ materialized from the factor's products)."""
    from fastsvm.kernels.hodlr import HODLRFactor
    X, y = load("heart_scale")
    n = X.shape[0]
    factor = HODLRFactor(X, RBF, 1.0, tol=1e-2, max_rank=16, leaf_size=32, seed=0)
    K_tilde = factor.matvec(np.eye(n))
    K = kernel_matrix(X, X, "rbf", 0.5)
    assert max(factor.ranks) <= 16 and len(factor.coupling_blocks()) >= 3
    assert 1e-4 < np.linalg.norm(K_tilde - K) / np.linalg.norm(K) < 0.1       # compressed, not exact
    assert np.allclose(K_tilde, K_tilde.T, atol=1e-12) and np.linalg.eigvalsh(K_tilde).min() > -1e-8
    solution = get_solver("admm").solve(subproblem(X, y, tol=1e-8, backend="hodlr", approx_tol=1e-2, rank=16,
                                                   leaf_size=32))
    objective, rho = libsvm_on(K_tilde, y)
    assert solution.objective == pytest.approx(objective, rel=1e-6)
    assert solution.rho == pytest.approx(rho, abs=1e-4)
    assert eta_numpy(solution.dual, y, K_tilde, np.ones(n)) < 1e-7
    assert abs(solution.objective - libsvm_on(K, y)[0]) > 1e-6 * abs(objective)   # K~'s optimum, not K's


def test_a_default_beta_is_raised_when_the_approximation_is_not_positive_definite():
    # a rank-1 coupling of the RBF kernel at gamma 0.1 is far from K: K~ + beta I is indefinite
    # below beta = 10 (three raises from 1e-2)
    X, y = load("heart_scale")
    lines = []
    sub = subproblem(X, y, backend="hodlr", rank=1, leaf_size=16)
    sub = replace(sub, kernel=replace(sub.kernel, gamma=0.1), log=lines.append)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(admm, "CONVERGED_BETA", 1e-2)
        solution = get_solver("admm").solve(sub)
    raised = [line for line in lines if "not positive definite" in line]
    assert raised and "trying beta" in raised[0]
    assert solution.details["beta"] == pytest.approx(10.0)
    # the raises refactor one compression (it does not depend on beta), as a factor built at 10 would
    assert sum(line.startswith("hodlr compression") for line in lines) == 1
    assert sum(line.startswith("hodlr factorization") for line in lines) == 1
    fresh = get_solver("admm").solve(replace(sub, log=None, params=replace(sub.params, options={
        **sub.params.options, "beta": 10.0})))
    np.testing.assert_array_equal(solution.dual, fresh.dual)
    with pytest.raises(FastSVMError, match="not positive definite"):     # a beta the user chose stays
        get_solver("admm").solve(replace(sub, params=replace(sub.params, options={
            **sub.params.options, "beta": 1e-2})))


# ---------------------------------------------------------------------------- converged mode = LIBSVM

def test_converged_heart_scale_equals_libsvm():
    X, y = load("heart_scale")
    solution = get_solver("admm").solve(subproblem(X, y))
    assert solution.status == "converged" and solution.stop_measure <= 1e-6
    K = kernel_matrix(X, X, "rbf", 0.5)
    objective, rho = libsvm_on(K, y)
    assert solution.objective == pytest.approx(objective, rel=1e-6)
    assert solution.rho == pytest.approx(rho, abs=1e-4)
    z = solution.dual
    assert dual_objective(z, y, K) == pytest.approx(solution.objective, rel=1e-12)
    assert eta_numpy(z, y, K, np.ones_like(y)) < 1e-6
    assert abs(y @ z) < 1e-6 * z.sum() and z.min() >= 0 and z.max() <= 1
    np.testing.assert_array_equal(solution.coef, y * z)


def test_converged_a1a_equals_libsvm_with_its_test_accuracy():
    svmutil = pytest.importorskip("libsvm.svmutil")
    X, y = load("a1a")
    Xt, yt = load("a1a.t")
    model = fit_model(X, y, Params(solver="admm", gamma=0.5, tol=1e-6, options={"mode": "converged"}))
    theirs = svmutil.svm_train(svmutil.svm_problem(y, X), svmutil.svm_parameter("-t 2 -g 0.5 -c 1 -e 1e-9 -q"))
    K = kernel_matrix(X, X, "rbf", 0.5)
    alpha = np.zeros(X.shape[0])
    alpha[np.asarray(theirs.get_sv_indices()) - 1] = np.abs(np.asarray(theirs.get_sv_coef()).ravel())
    assert model.info["objective"][0] == pytest.approx(dual_objective(alpha, y, K), rel=1e-6)
    assert model.labels[0] == theirs.get_labels()[0] and model.rho[0] == pytest.approx(theirs.rho[0], abs=1e-4)
    assert model.info["stop_measure"][0] <= 1e-6
    theirs_predicted = np.asarray(svmutil.svm_predict(yt, Xt, theirs, "-q")[0])
    assert abs(np.mean(predict(model, Xt) == yt) - np.mean(theirs_predicted == yt)) <= 1e-3


def test_class_weights_are_per_coordinate_bounds():
    """-w1 2 -w-1 0.5 against SMO (LIBSVM's solver) on the same problem."""
    X, y = load("heart_scale")
    weights = {1: 2.0, -1: 0.5}
    ours = fit_model(X, y, Params(solver="admm", gamma=0.5, tol=1e-7, class_weight=weights,
                                  options={"mode": "converged"}))
    smo = fit_model(X, y, Params(solver="smo", gamma=0.5, tol=1e-6, class_weight=weights))
    assert ours.info["objective"][0] == pytest.approx(smo.info["objective"][0], rel=1e-6)
    assert ours.rho[0] == pytest.approx(smo.rho[0], abs=1e-4)
    assert np.abs(ours.sv_coef).max() <= 2.0 + 1e-12


def test_converged_path_factors_once_and_each_c_is_the_optimum(count_factors):
    X, y = load("heart_scale")
    Cs = [0.1, 1.0, 10.0]
    sub = subproblem(X, y, tol=1e-7)
    path = get_solver("admm").solve_c_path(sub, Cs)
    assert len(count_factors) == 1
    cold = [get_solver("admm").solve(replace(sub, upper=sub.upper * C)) for C in Cs]
    assert len(count_factors) == 4
    for warm, alone in zip(path, cold):
        assert warm.objective == pytest.approx(alone.objective, rel=1e-7)
        assert warm.rho == pytest.approx(alone.rho, abs=1e-5)
    assert path[1].objective == pytest.approx(HEART_OPTIMUM, rel=1e-6)
    # the warm start (the previous point, clipped to the new box) is used: from the optimum of
    # the same C the first eta check stops
    again = get_solver("admm").solve_c_path(sub, [1.0, 1.0])
    assert again[0].n_iter > 100 and again[1].n_iter == admm.Config().check_every


# ---------------------------------------------------------------------------- paper mode

def test_paper_mode_a1a_is_the_early_stopped_classifier(count_factors):
    X, y = load("a1a")
    Xt, yt = load("a1a.t")
    params = Params(solver="admm", gamma=0.5, options={"mode": "paper"})
    models = fit_path(X, y, [1.0, 10.0, 100.0], params)
    assert count_factors == ["exact"]        # one factorization for the three C
    assert [m.info["n_iter"][0] for m in models] == [10, 10, 10]
    assert models[0].info["details"][0]["beta"] == 100.0
    # z never approaches C: the same model for every C, every row a support vector
    np.testing.assert_array_equal(models[0].sv_coef, models[1].sv_coef)
    np.testing.assert_array_equal(models[0].rho, models[2].rho)
    assert models[0].sv_coef.shape[1] == X.shape[0] and np.abs(models[0].sv_coef).max() < 0.2
    majority = max(np.mean(yt == 1), np.mean(yt == -1))
    decision = decision_values(models[0], Xt)[:, 0] * models[0].labels[0]   # f(x) for label +1
    assert np.mean(np.where(decision > 0, 1, -1) == yt) > majority
    np.testing.assert_array_equal(predict(models[0], Xt[:2000]), np.where(decision[:2000] > 0, 1, -1))
    # the paper's printed bias sign (rho = b, so f + 2 rho) fails this: it puts (nearly) every row
    # on the +1 side, so its accuracy is a1a.t's share of +1 rows
    flipped = np.where(decision + 2 * models[0].rho[0] > 0, 1, -1)
    assert np.mean(flipped == yt) == pytest.approx(np.mean(yt == 1), abs=1e-4)


def test_paper_mode_heart_scale_is_far_from_the_optimum():
    """docs/algorithms.md §5: beta = 100, 10 iterations from zero, the NumPy twin's point, far above
    LIBSVM's optimum; every row a support vector."""
    X, y = load("heart_scale")
    solution = get_solver("admm").solve(subproblem(X, y, mode="paper"))
    assert solution.n_iter == 10 and solution.details["beta"] == 100.0
    K = kernel_matrix(X, X, "rbf", 0.5)
    z, b = paper_iterations(K, y, beta=100.0)
    np.testing.assert_allclose(solution.dual, z, rtol=1e-9, atol=1e-12)
    assert solution.rho == pytest.approx(-b, rel=1e-9)
    assert solution.objective == pytest.approx(dual_objective(z, y, K), rel=1e-9)
    assert solution.objective > 0.5 * libsvm_on(K, y)[0]
    assert np.all(solution.dual > 0) and solution.dual.max() < 0.2


def test_paper_beta_by_size():
    assert [admm.paper_beta(n) for n in (300, 50_000, 200_000, 2_000_000)] == [1e2, 1e2, 1e3, 1e4]


# ---------------------------------------------------------------------------- the Nystroem backend

def test_nystroem_backend_equals_libsvm_on_the_precomputed_nystroem_kernel():
    svmutil = pytest.importorskip("libsvm.svmutil")
    X, y = load("heart_scale")
    n = X.shape[0]
    solution = get_solver("admm").solve(replace(subproblem(X, y, tol=1e-8, backend="nystroem", landmarks=60),
                                                seed=5))
    Phi = nystroem_map(X, "rbf", 0.5, landmarks=np.sort(sample_landmarks(n, 60, 5))).transform(X)
    Kt = Phi @ Phi.T
    rows = [[float(i + 1)] + list(Kt[i]) for i in range(n)]
    theirs = svmutil.svm_train(svmutil.svm_problem(list(y), rows, isKernel=True),
                               svmutil.svm_parameter("-t 4 -c 1 -e 1e-6 -q"))
    alpha = np.zeros(n)
    alpha[np.asarray(theirs.get_sv_indices()) - 1] = np.abs(np.asarray(theirs.get_sv_coef()).ravel())
    assert solution.objective == pytest.approx(dual_objective(alpha, y, Kt), rel=1e-6)
    assert solution.rho == pytest.approx(theirs.rho[0], abs=1e-4)
    assert eta_numpy(solution.dual, y, Kt, np.ones(n)) < 1e-7


# ---------------------------------------------------------------------------- one-vs-rest

def test_one_vs_rest_shares_one_factor_and_predicts_the_argmax(count_factors, tmp_path):
    X, y = load("iris.scale")
    model = fit_model(X, y, Params(solver="admm", gamma=0.5, tol=1e-7, options={"mode": "converged"}))
    assert count_factors == ["exact"]        # three classes, one factorization
    # each class against the rest, solved alone: f_c, and the model must pick argmax_c f_c
    K = kernel_matrix(X, X, "rbf", 0.5)
    f = []
    for label in model.labels:
        solution = get_solver("admm").solve(subproblem(X, np.where(y == label, 1.0, -1.0), tol=1e-7))
        f.append(K @ solution.coef - solution.rho)
    expected = model.labels[np.argmax(np.vstack(f), axis=0)]
    np.testing.assert_array_equal(predict(model, X), expected)
    assert np.mean(expected == y) > 0.95
    svmutil = pytest.importorskip("libsvm.svmutil")
    path = tmp_path / "iris.model"
    save_model(model, path)
    labels, _, _ = svmutil.svm_predict(list(y), [dict(zip(r.indices + 1, r.data)) for r in X],
                                       svmutil.svm_load_model(str(path)), "-q")
    np.testing.assert_array_equal(labels, expected)
    np.testing.assert_array_equal(predict(load_model(path), X), expected)
    # a path over C on two threads: still the one factorization, each C as fit alone
    before = len(count_factors)
    models = fit_path(X, y, [1.0, 10.0], Params(solver="admm", gamma=0.5, tol=1e-7, n_jobs=2,
                                                options={"mode": "converged"}))
    assert len(count_factors) == before + 1
    alone = fit_model(X, y, Params(solver="admm", gamma=0.5, tol=1e-7, C=10.0, options={"mode": "converged"}))
    np.testing.assert_allclose(models[1].info["objective"], alone.info["objective"], rtol=1e-7)


def test_one_vs_rest_nystroem_model_is_the_same_for_any_thread_count():
    X, y = load("iris.scale")
    models = [fit_model(X, y, Params(solver="admm", gamma=0.5, n_jobs=jobs, seed=4,
                                     options={"backend": "nystroem", "landmarks": 20}))
              for jobs in (1, 2, 2, 3)]
    for model in models[1:]:
        np.testing.assert_array_equal(model.sv_coef, models[0].sv_coef)
        np.testing.assert_array_equal(model.rho, models[0].rho)


def test_svc_estimator_takes_admm_at_its_defaults(capsys):
    """SVC(solver="admm") is paper mode, and at a budget the default shape does not fit it
    trains on the chosen one and says so (verbose)."""
    from fastsvm.estimators import SVC

    X, y = load("heart_scale")
    ours = SVC(solver="admm", gamma=0.5).fit(X, y)
    model = fit_model(X, y, Params(solver="admm", gamma=0.5, tol=1e-3, cache_size=200, options={"mode": "paper"}))
    assert ours.n_iter_ == admm.PAPER_ITERATIONS and ours.support_vectors_.shape[0] == X.shape[0]
    np.testing.assert_array_equal(ours.predict(X), predict(model, X))
    small = SVC(solver="admm", gamma=0.5, cache_size=0.3, verbose=True).fit(X, y)
    assert "hodlr shape: leaf_size 32, max_rank 12 (leaf_size and max_rank chosen" in capsys.readouterr().out
    assert small.score(X, y) > max(np.mean(y == 1), np.mean(y == -1))


# ---------------------------------------------------------------------------- CLI, bad input, Ctrl-C

def train_cli(*args):
    return subprocess.run([str(BIN / "fastsvm-train"), *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def test_cli_writes_a_model_libsvm_predicts(tmp_path):
    svmutil = pytest.importorskip("libsvm.svmutil")
    data = shared_file("heart_scale")
    model = tmp_path / "hs.model"
    result = train_cli("-s", "admm", "-o", "mode=converged", "-g", "0.5", "-e", "1e-6", data, model)
    assert result.returncode == 0, result.stderr
    assert "admm: exact factor" in result.stdout and "obj = -90.01794" in result.stdout   # HEART_OPTIMUM as %g
    yy, xx = svmutil.svm_read_problem(str(data))
    labels, (accuracy, _, _), _ = svmutil.svm_predict(yy, xx, svmutil.svm_load_model(str(model)), "-q")
    X, y = load("heart_scale")
    np.testing.assert_array_equal(labels, predict(load_model(model), X))
    theirs = svmutil.svm_train(yy, xx, "-g 0.5 -e 1e-6 -q")   # LIBSVM's own model of the same problem
    assert accuracy == pytest.approx(svmutil.svm_predict(yy, xx, theirs, "-q")[1][0])


@pytest.mark.parametrize("args, pattern", [
    (["-o", "mode=fast"], r"option mode=fast: expected one of converged, paper"),
    (["-o", "beta=0"], r"option beta=0: expected a number > 0"),
    (["-o", "backend=hss"], r"option backend=hss"),
    (["-t", "0"], r"admm does not support the linear kernel"),
    (["-s", "3"], r"admm does not solve epsilon_svr"),
    (["-o", "backend=exact", "-m", "0.1"], r"exact kernel factor .* more than -m 0.1"),
    # a hierarchical shape given in full, or in part, that does not fit -m: refused, not changed
    (["-o", "backend=hodlr", "-o", "rank=100", "-o", "leaf_size=512", "-m", "0.3"],
     r"hierarchical approximation of 270 rows needs up to 0\.76 MB \(leaf_size 512, max_rank 100\), more than the "
     r"limit of 0\.30 MB; lower leaf_size or max_rank, or raise the limit$"),
    (["-o", "backend=hodlr", "-o", "rank=100", "-m", "0.3"],
     r"needs at least .* \(leaf_size 32, max_rank 100\), .*; lower max_rank or raise the limit$"),
    (["-m", "0.01"], r"hierarchical approximation of 270 rows needs at least .*; raise the limit$"),
])
def test_bad_options_are_one_line(args, pattern, tmp_path, capsys):
    """fastsvm-train's own error handling, in process (test_cli runs it as a program)."""
    argv = ["-s", "admm", *args, str(shared_file("heart_scale")), str(tmp_path / "m")]
    assert run(cli_train.main, cli_train.PROG, cli_train.usage, argv) == 1
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("fastsvm-train: ") and re.search(pattern, first), first
    assert not (tmp_path / "m").exists()


def test_stop_flag_is_honoured():
    X, y = load("a1a")
    sub = replace(subproblem(X, y, tol=1e-300), params=Params(solver="admm", gamma=0.5, tol=1e-300,
                                                                max_iter=10**8, options={"mode": "converged"}))
    stops_within_a_second(get_solver("admm").solve, sub)
