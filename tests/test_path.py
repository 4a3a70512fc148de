"""Paths of problems and warm starts: SMO and DCD solved along C from the previous solution give
the optima of cold solves, the trainer's fit_path gives fit_model's models, the estimators'
warm_start refit gives a cold fit's.

The optimum of a warm solve is checked against an independent cold solve (itself checked against
LIBSVM / LIBLINEAR in test_smo / test_dcd) on the dual objective, and its stopping measure is
recomputed here in NumPy from the returned dual point alone.
"""
import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

import fastsvm
from conftest import shared_file
from fastsvm._core._cache import KernelCache
from fastsvm._core._dcd import DualCD
from fastsvm._core._kernel import kernel_matrix
from fastsvm._core._smo import SMO
from fastsvm.csr import to_csr
from fastsvm.errors import ParameterError
from fastsvm.params import Params
from fastsvm.solvers import dcd, smo
from fastsvm.solvers.base import Kernel, Solution, Subproblem, solve_path_cold
from fastsvm.training.trainer import WarmStart, fit_model

Cs = [2.0 ** k for k in range(-3, 7)]   # 2^-3 .. 2^6, the C grid users tune over
TOL = 1e-6


def rows_of(name, n=None):
    """The first n rows (all: None) of a shared dataset, as fastsvm reads it."""
    X, y = fastsvm.load_svmlight_file(str(shared_file(name)), zero_based=False)
    return to_csr(X[:n]), np.asarray(y[:n], dtype=np.float64)


@pytest.fixture(scope="module")
def heart():
    X, labels = rows_of("heart_scale")
    return X, np.where(labels > 0, 1.0, -1.0)


def smo_subproblem(formulation, heart, **params):
    """The subproblem on heart (on the first 300 rows of housing for regression), bounds 1 and 2."""
    X, y = rows_of("housing_scale", 300) if formulation in ("epsilon_svr", "nu_svr") else heart
    if formulation == "one_class":
        y = np.ones(X.shape[0])
    # per-sample bounds that are not all equal: the warm start must scale each by its own ratio
    upper = np.where(np.arange(X.shape[0]) % 3 == 0, 2.0, 1.0)
    prm = Params(svm_type=formulation, nu=0.3, epsilon=0.1, tol=TOL, **params)
    return Subproblem(formulation, X, y, upper, Kernel("rbf", gamma=1.0 / X.shape[1]), prm)


def smo_dual(sub):
    """SMO's dual in NumPy: Q (kernel values rounded to float32, as the cache holds them), p,
    signs, and the bounds of the 2n variables for regression."""
    X, y, upper = sub.X, sub.y, np.asarray(sub.upper)
    K = kernel_matrix(X, X, "rbf", sub.kernel.gamma, 3, coef0=0.0).astype(np.float32).astype(np.float64)
    if sub.formulation in ("epsilon_svr", "nu_svr"):
        signs = np.concatenate([np.ones_like(y), -np.ones_like(y)])
        K = np.block([[K, K], [K, K]])
        eps = sub.params.epsilon if sub.formulation == "epsilon_svr" else 0.0
        p = np.concatenate([eps - y, eps + y])
        upper = np.concatenate([upper, upper])
    else:
        signs = y
        p = -np.ones_like(y) if sub.formulation == "c_svc" else np.zeros_like(y)
    return signs[:, None] * K * signs[None, :], p, signs, upper


def smo_kkt_gap(sub, alpha):
    """LIBSVM's stopping measure at alpha, from scratch: the maximal violating pair's gap (per
    sign for the nu formulations) of the gradient Q alpha + p."""
    Q, p, y, C = smo_dual(sub)
    assert np.all(alpha >= 0) and np.all(alpha <= C)
    G = Q @ alpha + p
    up = (alpha < C) & (y > 0) | (alpha > 0) & (y < 0)
    low = (alpha < C) & (y < 0) | (alpha > 0) & (y > 0)
    if sub.formulation in ("nu_svc", "nu_svr"):
        return max(np.max(-y[up & (y == s)] * G[up & (y == s)]) - np.min(-y[low & (y == s)] * G[low & (y == s)])
                   for s in (1, -1))
    return np.max(-y[up] * G[up]) - np.min(-y[low] * G[low])


def smo_objective(sub, alpha):
    Q, p, _, _ = smo_dual(sub)
    return 0.5 * alpha @ Q @ alpha + p @ alpha


# ---------------------------------------------------------------- SMO

@pytest.mark.parametrize("formulation", ["c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr"])
def test_smo_path_optima_equal_cold_optima(formulation, heart):
    sub = smo_subproblem(formulation, heart)
    path = smo.SOLVER.solve_c_path(sub, Cs, smo.SOLVER.prepare(sub))
    cold = solve_path_cold(smo.SOLVER, sub, Cs)
    assert len(path) == len(Cs)
    for C, warm, ref in zip(Cs, path, cold):
        at_C = dataclasses.replace(sub, upper=sub.upper * C)
        np.testing.assert_array_equal(warm.upper, at_C.upper)
        assert warm.status == "converged"
        f_warm, f_cold = smo_objective(at_C, warm.dual), smo_objective(at_C, ref.dual)
        assert abs(f_warm - f_cold) <= 1e-6 * max(1.0, abs(f_cold))
        assert smo_kkt_gap(at_C, warm.dual) <= TOL * (1 + 1e-6)
    # the path started warm from the second C on: fewer iterations than from scratch in total
    assert sum(s.n_iter for s in path[1:]) < sum(s.n_iter for s in cold[1:])


@pytest.mark.parametrize("formulation", ["c_svc", "nu_svc", "epsilon_svr", "nu_svr"])
def test_smo_path_conjugate_steps_reach_the_optimum_in_fewer_iterations(formulation, heart):
    """A warm start steps along Q-conjugate directions (Config.conjugate): up to C = 2^15 it stops
    where the pair steps do (KKT gap from scratch, the same objective) after at most 60 % of
    their iterations."""
    sub = dataclasses.replace(smo_subproblem(formulation, heart), kernel=Kernel("rbf", gamma=2.0 ** -7))
    grid = [2.0 ** k for k in range(-5, 16, 2)]
    paths = {}
    for conjugate in (False, True):
        params = dataclasses.replace(sub.params, tol=1e-3, config=smo.Config(conjugate=conjugate))
        paths[conjugate] = smo.solve_path(dataclasses.replace(sub, params=params), grid)
    for C, pair, conjugate in zip(grid, paths[False], paths[True]):
        at_C = dataclasses.replace(sub, upper=sub.upper * C)
        assert smo_kkt_gap(at_C, conjugate.dual) <= 1e-3 * (1 + 1e-6)
        # a gap of 1e-3 puts each objective within about 1e-3 sum(C_i) of the optimum
        f_pair, f_conjugate = smo_objective(at_C, pair.dual), smo_objective(at_C, conjugate.dual)
        assert abs(f_conjugate - f_pair) <= 1e-3 * at_C.upper.sum()
    assert paths[True][0].n_iter == paths[False][0].n_iter   # the first problem is cold: LIBSVM's steps
    assert sum(s.n_iter for s in paths[True][1:]) <= 0.6 * sum(s.n_iter for s in paths[False][1:])


@pytest.mark.parametrize("formulation", ["c_svc", "epsilon_svr"])
def test_smo_path_conjugate_steps_same_bits_for_any_thread_count(formulation, heart):
    sub = dataclasses.replace(smo_subproblem(formulation, heart), kernel=Kernel("rbf", gamma=2.0 ** -7))
    sub.params = dataclasses.replace(sub.params, tol=1e-3, config=smo.Config(parallel_scan_min=1))
    paths = [smo.solve_path(dataclasses.replace(sub, n_threads=threads), [1.0, 64.0]) for threads in (1, 2)]
    for one, two in zip(*paths):
        np.testing.assert_array_equal(one.coef, two.coef)
        assert one.rho == two.rho and one.n_iter == two.n_iter


def test_smo_path_first_solve_and_shared_cache_give_the_cold_result(heart):
    """A path's first problem (no warm point) is the cold solve, bit for bit; so is a cold solve
    on the cache a path left behind (its positions put back in order)."""
    sub = smo_subproblem("c_svc", heart)
    columns = smo.prepare(sub)
    first, = smo.solve_path(sub, [4.0], columns)
    cold = smo.solve(dataclasses.replace(sub, upper=sub.upper * 4.0))
    again, = smo.solve_path(sub, [4.0], columns)   # no warm point given: cold, on the used cache
    for s in (first, again):
        assert s.n_iter == cold.n_iter and s.rho == cold.rho
        np.testing.assert_array_equal(s.coef, cold.coef)
    assert columns.cache is not None


def test_smo_path_in_any_order(heart):
    sub = smo_subproblem("c_svc", heart)
    down = smo.solve_path(sub, Cs[::-1])
    for C, s in zip(Cs[::-1], down):
        np.testing.assert_array_equal(s.upper, sub.upper * C)
        assert smo_kkt_gap(dataclasses.replace(sub, upper=sub.upper * C), s.dual) <= TOL * (1 + 1e-6)


@pytest.mark.parametrize("warm", [None, "no dual", "wrong size", "nan"])
def test_smo_unusable_warm_point_falls_back_to_cold(warm, heart):
    sub = smo_subproblem("c_svc", heart)
    n = sub.y.shape[0]
    point = {None: None,
             "no dual": Solution(coef=np.zeros(n), rho=0.0, upper=sub.upper),
             "wrong size": Solution(coef=np.zeros(n), rho=0.0, dual=np.ones(n - 1), upper=sub.upper[1:]),
             "nan": Solution(coef=np.zeros(n), rho=0.0, dual=np.full(n, np.nan), upper=sub.upper)}[warm]
    cold = smo.solve(sub)
    started = smo.solve(dataclasses.replace(sub, warm=point))
    assert started.n_iter == cold.n_iter
    np.testing.assert_array_equal(started.coef, cold.coef)


@pytest.mark.parametrize("formulation", ["c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr"])
def test_smo_warm_point_from_other_bounds_is_made_feasible(formulation, heart):
    """A warm point whose bounds are not a multiple of the new ones (other class weights, another
    nu): warm_alpha brings it into the new box and onto the equality constraints, and SMO
    reaches the cold optimum from it."""
    sub = smo_subproblem(formulation, heart)
    old = smo.solve(dataclasses.replace(sub, upper=np.linspace(0.5, 3.0, sub.y.shape[0]),
                                        params=dataclasses.replace(sub.params, nu=0.6)))
    p, signs, alpha0, C, nu_variant, regression = smo.dual_problem(
        formulation, sub.y, sub.upper, sub.params.nu, sub.params.epsilon)
    start = smo.warm_alpha(old, C, signs, alpha0, nu_variant or formulation == "one_class", regression=regression,
                           kept=smo.KeptRows(None, sub.y.shape[0]))
    assert np.all(start >= 0) and np.all(start <= C)
    if nu_variant or formulation == "one_class":   # the cold start's sums per sign
        for s in (1, -1):
            assert start[signs == s].sum() == pytest.approx(alpha0[signs == s].sum(), rel=1e-12)
    else:
        assert signs @ start == pytest.approx(0.0, abs=1e-12 * C.sum())
    warm = smo.solve(dataclasses.replace(sub, warm=old))
    cold = smo.solve(sub)
    f_warm, f_cold = smo_objective(sub, warm.dual), smo_objective(sub, cold.dual)
    assert abs(f_warm - f_cold) <= 1e-6 * max(1.0, abs(f_cold))
    assert smo_kkt_gap(sub, warm.dual) <= TOL * (1 + 1e-6)


def test_smo_on_a_permuted_cache_solves_by_variable(heart):
    """A cache a shrinking solve left permuted serves the next SMO as it is: given the variable
    at each position (smo.variable_order), SMO returns alpha, G and its products by variable and
    reaches the fresh cache's optimum; a cold start puts the positions back in order first and is
    then the fresh cache's solve, bit for bit."""
    X, y = heart
    kernel = Kernel("rbf", gamma=1.0 / X.shape[1])
    signs = y.astype(np.int8)
    n = X.shape[0]
    rows = np.arange(n, dtype=np.int32)[::-1].copy()   # variable v is data row n - 1 - v
    ys = signs[rows]

    def solver_on(cache, C, order=None):
        s = SMO(cache, -np.ones(n), ys, np.zeros(n), np.full(n, C), eps=1e-6, shrinking=True, nu=False, svr_rows=0,
                max_iter=10**7, stop=np.zeros(1, np.int32), check_signals=False, order=order)
        s.init()
        assert s.run(10**7).name == "CONVERGED"
        return s

    used = KernelCache(X, "rbf", kernel.gamma, 3, 0.0, cache_bytes=1 << 20, n_threads=1, sign=ys, rows=rows)
    solver_on(used, 4.0)
    order = smo.variable_order(used, rows, cold=False)
    assert not np.array_equal(order, np.arange(n))          # shrinking moved the positions
    np.testing.assert_array_equal(np.sort(order), np.arange(n))
    on_used = solver_on(used, 2.0, order)
    on_fresh = solver_on(KernelCache(X, "rbf", kernel.gamma, 3, 0.0, cache_bytes=1 << 20, n_threads=1, sign=ys,
                                     rows=rows), 2.0)
    K = kernel_matrix(X[rows], X[rows], "rbf", kernel.gamma, 3, coef0=0.0)
    Q = (ys[:, None] * K * ys[None, :]).astype(np.float32).astype(np.float64)
    a_used, a_fresh = on_used.result()["alpha"], on_fresh.result()["alpha"]
    f = [0.5 * a @ Q @ a - a.sum() for a in (a_used, a_fresh)]
    assert abs(f[0] - f[1]) <= 1e-9 * abs(f[1])
    np.testing.assert_allclose(on_used.gradient(), Q @ a_used - 1.0, atol=1e-6)
    np.testing.assert_allclose(on_used.products()[0], Q @ a_used, atol=1e-6)
    # cold: back in order, and LIBSVM's solve exactly
    assert smo.variable_order(used, rows, cold=True) is None
    np.testing.assert_array_equal(used.rows_at_positions(), rows)
    again = solver_on(used, 2.0)
    assert again.n_iter == on_fresh.n_iter
    np.testing.assert_array_equal(again.result()["alpha"], a_fresh)


def test_init_from_and_products_equal_numpy(heart):
    """SMO.init_from's G and G_bar equal NumPy's Q alpha + p and sum over bounded j of C_j Q_j at the
    start, from a base point whose products are given (columns only where the start differs); and
    products() after a solve is (Q alpha, G_bar) of the returned alpha."""
    X, y = heart
    n = X.shape[0]
    gamma = 1.0 / X.shape[1]
    signs = y.astype(np.int8)
    K = kernel_matrix(X, X, "rbf", gamma, 3, coef0=0.0)
    Q = (y[:, None] * K * y[None, :]).astype(np.float32).astype(np.float64)
    C = np.full(n, 2.0)
    rng = np.random.default_rng(0)
    base = rng.choice([0.0, 2.0, 0.7], size=n)
    start = base.copy()
    moved = rng.choice(n, 20, replace=False)
    start[moved] = rng.choice([0.0, 2.0, 1.3], size=20)   # some leave the bound, some reach it

    def fresh(alpha):
        cache = KernelCache(X, "rbf", gamma, 3, 0.0, cache_bytes=1 << 20, n_threads=1, sign=signs)
        return cache, SMO(cache, -np.ones(n), signs, alpha, C, eps=1e-6, shrinking=True, nu=False, svr_rows=0,
                          max_iter=10**7, stop=np.zeros(1, np.int32), check_signals=False)

    bounded = base >= C
    cache, solver = fresh(start)
    before = cache.n_computed
    assert solver.init_from(base, Q @ base, Q[:, bounded] @ C[bounded], bounded).name == "CONVERGED"
    assert cache.n_computed - before <= len(moved) * n     # one column per moved variable at most
    q, g_bar = solver.products()
    np.testing.assert_allclose(q, Q @ start, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(g_bar, Q[:, start >= C] @ C[start >= C], rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(solver.gradient(), Q @ start - 1.0, rtol=1e-12, atol=1e-9)

    _, solver = fresh(np.zeros(n))
    solver.init()
    solver.run(10**7)
    alpha = solver.result()["alpha"]
    q, g_bar = solver.products()
    np.testing.assert_allclose(q, Q @ alpha, rtol=1e-6, atol=1e-6)  # G was updated step by step
    np.testing.assert_allclose(g_bar, Q[:, alpha >= C] @ C[alpha >= C], rtol=1e-6, atol=1e-6)


def test_smo_path_reuses_the_last_gradient(heart, monkeypatch):
    """From the second C on, a path's SMO starts from the last solution's products scaled with
    it (SMO.init_from) rather than computing Q alpha from scratch; a warm start without the path's
    state (the estimators' warm_start) computes it."""
    calls = []

    class Recording(SMO):
        def init(self):
            calls.append("init")
            return super().init()

        def init_from(self, *base):
            calls.append("from")
            return super().init_from(*base)

    monkeypatch.setattr(smo, "SMO", Recording)
    sub = smo_subproblem("c_svc", heart)
    path = smo.solve_path(sub, Cs[:4], smo.prepare(sub))
    assert calls == ["init"] + ["from"] * 3
    calls.clear()
    smo.solve(dataclasses.replace(sub, upper=sub.upper * Cs[4], warm=path[-1]))
    assert calls == ["init"]


# ---------------------------------------------------------------- DCD

def dcd_subproblem(heart, loss):
    X, y = heart
    upper = np.where(y > 0, 1.0, 0.5)
    params = Params(solver="dcd", loss=loss, bias=1.0, tol=1e-8, max_iter=100_000)
    return Subproblem("c_svc", X, y, upper, Kernel("linear"), params)


def dcd_duality_gap(sub, solution, loss):
    """(P(w) - D(alpha)) / P(w) from the returned alpha alone, w rebuilt here."""
    X, y, upper = sub.X, sub.y, np.asarray(sub.upper)
    alpha = solution.dual
    assert np.all(alpha >= 0) and (loss != "hinge" or np.all(alpha <= upper))
    w = np.append(X.T @ (alpha * y), (alpha * y).sum())   # bias feature B = 1
    slack = np.maximum(0.0, 1.0 - y * (X @ w[:-1] + w[-1]))
    primal = 0.5 * w @ w + upper @ (slack if loss == "hinge" else slack ** 2)
    diag = np.zeros_like(upper) if loss == "hinge" else 0.5 / upper
    dual = 0.5 * w @ w + 0.5 * diag @ (alpha * alpha) - alpha.sum()
    return (primal + dual) / primal


# the hinge loss at C > 4 takes DCD tens of thousands of epochs on heart, warm or cold
@pytest.mark.parametrize("loss, grid", [("hinge", Cs[:6]), ("squared_hinge", Cs)])
def test_dcd_path_optima_equal_cold_optima(loss, grid, heart):
    sub = dcd_subproblem(heart, loss)
    path = dcd.SOLVER.solve_c_path(sub, grid)
    cold = solve_path_cold(dcd.SOLVER, sub, grid)
    assert len(path) == len(grid)
    for C, warm, ref in zip(grid, path, cold):
        np.testing.assert_array_equal(warm.upper, sub.upper * C)
        assert warm.status == "converged"
        assert abs(warm.dual_objective - ref.dual_objective) <= 1e-6 * abs(ref.dual_objective)
        assert dcd_duality_gap(dataclasses.replace(sub, upper=sub.upper * C), warm, loss) <= 1e-6
    if loss == "squared_hinge":   # (the hinge's epoch counts at large C vary widely either way)
        assert sum(s.n_iter for s in path[1:]) < sum(s.n_iter for s in cold[1:])


def test_dcd_unusable_warm_point_falls_back_to_cold(heart):
    sub = dcd_subproblem(heart, "hinge")
    n = sub.y.shape[0]
    cold = dcd.solve(sub)
    for point in (None, Solution(coef=np.zeros(n), rho=0.0, dual=np.ones(n + 1), upper=np.ones(n + 1))):
        started = dcd.solve(dataclasses.replace(sub, warm=point))
        assert started.n_iter == cold.n_iter
        np.testing.assert_array_equal(started.coef, cold.coef)


def test_dual_cd_start_builds_w_as_numpy(heart):
    """DualCD's w from a starting alpha equals sum_i alpha_i y_i [x_i, B] computed by scipy."""
    X, y = heart
    rng = np.random.default_rng(0)
    alpha = rng.uniform(0, 1, X.shape[0]) * (rng.uniform(size=X.shape[0]) < 0.5)
    cd = DualCD(X, y, np.ones(X.shape[0]), np.zeros(X.shape[0]), bias=2.0, alpha=alpha)
    np.testing.assert_array_equal(cd.alpha, alpha)
    np.testing.assert_allclose(cd.w, np.append(X.T @ (alpha * y), 2.0 * (alpha * y).sum()), rtol=1e-12,
                               atol=1e-12)
    with pytest.raises(ValueError, match="within"):
        DualCD(X, y, np.ones(X.shape[0]), np.zeros(X.shape[0]), alpha=np.full(X.shape[0], 2.0))


# ---------------------------------------------------------------- trainer and estimators

def three_classes():
    """Three overlapping clouds around the corners of a triangle (each class has a linear
    one-vs-rest boundary: no ties of decision values), labels not in sorted order."""
    rng = np.random.default_rng(3)
    centers = np.array([[0.0, 2.0, 0.0, 0.0], [-2.0, -1.0, 0.0, 0.0], [2.0, -1.0, 0.0, 0.0]])
    X = np.vstack([rng.normal(center, 1.0, size=(40, 4)) for center in centers])
    return X, np.repeat([3.0, 1.0, 2.0], 40)


@pytest.mark.parametrize("solver, svm_type", [("smo", "c_svc"), ("smo", "epsilon_svr"), ("dcd", "c_svc"),
                                              ("primal_newton", "c_svc")])
def test_fit_path_models_equal_fit_model(solver, svm_type):
    """One model per C in order, each that of fit_model at that C (one-vs-one pairs for smo,
    one-vs-rest classes for the linear solvers; primal_newton has no solve_path and is solved
    cold)."""
    X, y = three_classes()
    if svm_type == "epsilon_svr":
        y = X @ np.array([1.0, -0.5, 0.2, 0.0])
    params = Params(svm_type=svm_type, solver=solver, tol=1e-8, max_iter=100_000, bias=1.0 if solver != "smo" else -1.0,
                    kernel_type="rbf" if solver == "smo" else "linear", loss="squared_hinge" if solver ==
                    "primal_newton" else None)
    path = fastsvm.fit_path(X, y, Cs, params)
    assert len(path) == len(Cs)
    for C, model in zip(Cs, path):
        cold = fit_model(X, y, dataclasses.replace(params, C=C))
        for ours, theirs in zip(model.info["objective"], cold.info["objective"]):
            assert abs(ours - theirs) <= 1e-6 * max(1.0, abs(theirs))
        if svm_type == "c_svc":
            assert (fastsvm.predict(model, X) == fastsvm.predict(cold, X)).mean() >= 0.99
        else:
            np.testing.assert_allclose(fastsvm.predict(model, X), fastsvm.predict(cold, X), atol=1e-3)


def test_fit_path_refuses_what_has_no_path():
    X, y = three_classes()
    with pytest.raises(ParameterError, match="C does not enter"):
        fastsvm.fit_path(X, y, Cs, Params(svm_type="nu_svc"))
    with pytest.raises(ParameterError, match="finite and > 0"):
        fastsvm.fit_path(X, y, [1.0, -1.0], Params())
    with pytest.raises(ParameterError, match="probability"):
        fastsvm.fit_path(X, y, Cs, Params(probability=True))


def test_fit_model_warm_start_record():
    """A WarmStart receives one solution per subproblem; a second fit starts from them."""
    X, y = three_classes()
    warm = WarmStart()
    fit_model(X, y, Params(C=1.0, tol=1e-8), warm=warm)
    assert len(warm.solutions) == 3 and all(s.dual is not None for s in warm.solutions)
    first = list(warm.solutions)
    model = fit_model(X, y, Params(C=4.0, tol=1e-8), warm=warm)
    cold = fit_model(X, y, Params(C=4.0, tol=1e-8))
    assert warm.solutions[0] is not first[0]
    for ours, theirs in zip(model.info["objective"], cold.info["objective"]):
        assert abs(ours - theirs) <= 1e-6 * max(1.0, abs(theirs))
    assert model.info["n_iter"] != cold.info["n_iter"]   # it did start elsewhere


@pytest.mark.parametrize("make, change", [
    (lambda **kw: fastsvm.SVC(tol=1e-8, **kw), {"C": 8.0}),
    (lambda **kw: fastsvm.NuSVC(tol=1e-8, **kw), {"nu": 0.2}),
    (lambda **kw: fastsvm.SVR(tol=1e-8, **kw), {"C": 8.0}),
    (lambda **kw: fastsvm.OneClassSVM(tol=1e-8, **kw), {"nu": 0.2}),
    (lambda **kw: fastsvm.LinearSVC(loss="hinge", dual=True, tol=1e-8, max_iter=100_000, **kw), {"C": 8.0}),
])
def test_estimator_warm_start_refit_equals_cold_fit(make, change):
    X, y = three_classes()
    if "SVR" in type(make()).__name__:
        y = X @ np.array([1.0, -0.5, 0.2, 0.0])
    warm = make(warm_start=True).fit(X, y)
    warm.set_params(**change).fit(X, y)
    cold = make(**change).fit(X, y)
    for ours, theirs in zip(warm.model_.info["objective"], cold.model_.info["objective"]):
        assert abs(ours - theirs) <= 1e-6 * max(1.0, abs(theirs))
    decision = warm.decision_function(X) if hasattr(warm, "decision_function") else warm.predict(X)
    reference = cold.decision_function(X) if hasattr(cold, "decision_function") else cold.predict(X)
    np.testing.assert_allclose(decision, reference, rtol=1e-4, atol=1e-4)
    if not isinstance(warm, fastsvm.SVR):
        assert (warm.predict(X) == cold.predict(X)).mean() >= 0.99
    # warm_start=False forgets: a refit is the cold fit exactly
    forgetful = make(warm_start=True).fit(X, y)
    forgetful.set_params(warm_start=False, **change).fit(X, y)
    np.testing.assert_array_equal(forgetful.model_.info["n_iter"], cold.model_.info["n_iter"])


def test_estimator_warm_start_with_other_data_still_fits():
    """A warm start from a fit on other rows (scikit-learn leaves that to the user) cannot hurt:
    wrong-size points are dropped, and the fit equals the cold one."""
    X, y = three_classes()
    clf = fastsvm.SVC(warm_start=True, tol=1e-8).fit(X[::2], y[::2])
    clf.fit(X, y)
    cold = fastsvm.SVC(tol=1e-8).fit(X, y)
    np.testing.assert_array_equal(clf.model_.info["n_iter"], cold.model_.info["n_iter"])
    np.testing.assert_array_equal(clf.predict(X), cold.predict(X))


def test_sparse_input_path():
    X, y = three_classes()
    dense = fastsvm.fit_path(X, y, Cs[:2], Params(tol=1e-6))
    sparse = fastsvm.fit_path(sp.csr_matrix(X), y, Cs[:2], Params(tol=1e-6))
    for a, b in zip(dense, sparse):
        np.testing.assert_array_equal(a.info["n_iter"], b.info["n_iter"])
