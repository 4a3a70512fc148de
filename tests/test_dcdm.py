"""DCDM (solver "dcdm", docs/algorithms.md §6): the bias-in-kernel nu-SVM and one-class SVM against
reference optima, each also recomputed here by LIBSVM's one-class on the precomputed Q, a
NumPy twin of the pair steps, and the paper's single-coordinate update, which stalls."""
import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from fastsvm._core._margins import LabeledRows
from fastsvm._core._nu_pair_sweeps import held_kkt, pair_steps, pair_sweeps
from fastsvm._core._status import Status
from fastsvm.errors import DegenerateProblemError, FastSVMError, ParameterError
from fastsvm.params import Params
from fastsvm.solvers.base import Kernel, Subproblem
from fastsvm.solvers.dcdm import solve
from conftest import stops_within_a_second
from linear_oracle import load

# (set, kernel, nu): the paper-scale F* (a <= 1/l, e^T a = nu) and rho*: LIBSVM's one-class (libsvm-official,
# -s 2 -t 4 -e 1e-12) on the precomputed Q, F / l^2 and rho / l; test_nu_svm_optimum recomputes them
NU_SVM = {("australian_scale", "rbf", 0.5): (7.536090840812e-04, 6.81105e-03),
          ("australian_scale", "linear", 0.5): (2.215094981369e-02, 0.213791),
          ("breast-cancer_scale", "rbf", 0.3): (3.276878855972e-03, 3.24505e-02),
          ("breast-cancer_scale", "linear", 0.7): (4.698901770461e-01, 2.49521)}
# one-class on breast-cancer_scale's benign rows (label 2, l = 444), RBF sigma = 1: the paper-scale F* of
# LIBSVM's one-class (libsvm-official -s 2 -t 4 -e 1e-12) on the precomputed Q, F / (nu l)^2;
# test_one_class_optimum recomputes it
ONE_CLASS = {0.1: 1.056352848284e-01, 0.5: 2.802560668265e-01}


def pm(labels):
    return np.where(labels == labels[0], 1.0, -1.0)


def subproblem(X, y, nu, kind="linear", formulation="nu_svc", *, tol=1e-12, weights=None, log=None, **options):
    params = Params(svm_type=formulation, solver="dcdm", kernel_type=kind, nu=nu, gamma=0.5, tol=tol,
                    options=options)
    upper = np.ones(X.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    return Subproblem(formulation, X, np.asarray(y, dtype=float), upper, Kernel(kind, gamma=0.5), params, log=log)


def q_matrix(X, y, kind, shift=1.0):
    """Q = (y y^T) o (K + shift), dense, computed here."""
    A = X.toarray()
    if kind == "linear":
        K = A @ A.T
    else:
        sq = (A * A).sum(axis=1)
        K = np.exp(-0.5 * np.maximum(sq[:, None] + sq[None, :] - 2 * A @ A.T, 0.0))
    return np.outer(y, y) * (K + shift)


def libsvm_one_class(Q, nu):
    """LIBSVM's one-class (-s 2) on the precomputed Q: (alpha, rho) in its scale."""
    from libsvm.svmutil import svm_parameter, svm_problem, svm_train
    n = Q.shape[0]
    rows = np.hstack([np.arange(1, n + 1)[:, None], Q])
    model = svm_train(svm_problem(np.ones(n), rows, isKernel=True), svm_parameter(f"-s 2 -t 4 -n {nu} -e 1e-12 -q"))
    alpha = np.zeros(n)
    alpha[np.asarray(model.get_sv_indices()) - 1] = np.asarray(model.get_sv_coef()).ravel()
    return alpha, model.rho[0]


@pytest.mark.parametrize("case", sorted(NU_SVM))
def test_nu_svm_optimum(case):
    name, kind, nu = case
    F_star, rho_star = NU_SVM[case]
    X, labels = load(name)
    y = pm(labels)
    sol = solve(subproblem(X, y, nu, kind))
    assert sol.status == "converged"
    l = X.shape[0]
    Q = q_matrix(X, y, kind)
    # the kernel path's own objective is summed from float32 columns (as LIBSVM's): 1e-8 is
    # checked in double precision at its point
    assert 0.5 * sol.dual @ Q @ sol.dual / l**2 == pytest.approx(F_star, rel=1e-8)
    assert sol.details["objective"] == pytest.approx(F_star, rel=1e-8 if kind == "linear" else 1e-6)
    assert sol.details["rho"] == pytest.approx(rho_star, rel=1e-6, abs=5e-7)
    # LIBSVM's one-class on the same Q, here: the same optimum and margin
    alpha, rho = libsvm_one_class(Q, nu)
    assert 0.5 * alpha @ Q @ alpha / l**2 == pytest.approx(F_star, rel=1e-8)
    assert rho / l == pytest.approx(sol.details["rho"], rel=1e-6)
    # the model: coef = y a / rho, rho carries the bias; decision values at the margin are +-1
    a = sol.dual
    assert np.allclose(sol.coef, y * a / sol.margin_scale)
    decision = (Q * y[None, :] * y[:, None]) @ (y * a) / sol.margin_scale   # sum_j coef_j (k + 1)
    free = (a > 1e-9) & (a < 1 - 1e-9)
    assert np.allclose(y[free] * decision[free], 1.0, atol=1e-6)
    kernel_part = (Q * y[None, :] * y[:, None] - 1.0) @ sol.coef
    assert np.allclose(kernel_part - sol.rho, decision, atol=1e-9)


@pytest.mark.parametrize("nu", sorted(ONE_CLASS))
def test_one_class_optimum(nu):
    X, labels = load("breast-cancer_scale")
    X = X[labels == 2]
    l = X.shape[0]
    assert l == 444
    sol = solve(subproblem(X, np.ones(l), nu, "rbf", "one_class"))
    Q = q_matrix(X, np.ones(l), "rbf", shift=0.0)
    scale = nu * l                  # the paper's a = LIBSVM's / (nu l)
    assert 0.5 * sol.dual @ Q @ sol.dual / scale**2 == pytest.approx(ONE_CLASS[nu], rel=1e-8)
    assert sol.details["objective"] == pytest.approx(ONE_CLASS[nu], rel=1e-6)
    alpha, rho = libsvm_one_class(Q, nu)
    assert 0.5 * alpha @ Q @ alpha / scale**2 == pytest.approx(ONE_CLASS[nu], rel=1e-8)
    assert np.allclose(sol.coef, alpha, atol=1e-7)
    assert sol.rho == pytest.approx(rho, rel=1e-6)


def test_linear_one_class_matches_kernel_path():
    """The linear pair sweeps and the SMO path on the linear kernel solve the same problem."""
    X, labels = load("breast-cancer_scale")
    X = X[labels == 2]
    linear = solve(subproblem(X, np.ones(X.shape[0]), 0.3, "linear", "one_class"))
    alpha, rho = libsvm_one_class(q_matrix(X, np.ones(X.shape[0]), "linear", shift=0.0), 0.3)
    A = X.toarray()
    assert 0.5 * np.sum((A.T @ linear.coef) ** 2) == pytest.approx(0.5 * np.sum((A.T @ alpha) ** 2), rel=1e-8)
    assert linear.rho == pytest.approx(rho, rel=1e-6)


def stored_dot(X, i, v):
    """x_i . v summed over the row's stored values in order, as the kernels sum it."""
    total = 0.0
    for k in range(X.indptr[i], X.indptr[i + 1]):
        total += X.data[k] * v[X.indices[k]]
    return total


def stored_pair_dot(X, i, j):
    """x_i . x_j over the columns both rows store, in column order, as the kernel merges them."""
    row_j = dict(zip(X.indices[X.indptr[j]:X.indptr[j + 1]], X.data[X.indptr[j]:X.indptr[j + 1]]))
    total = 0.0
    for k in range(X.indptr[i], X.indptr[i + 1]):
        if X.indices[k] in row_j:
            total += X.data[k] * row_j[X.indices[k]]
    return total


def numpy_pair_steps(X, sign, bias, alpha, w, *, upper, sqnorm, up, low):
    """pair_steps' twin: the same exact steps, each sum taken in the kernel's order (a near-tie of
    two gradients is decided by rounding). Returns the stored values of X pair_steps reads: both
    rows for a pair's gradients, three times that for a step."""
    nnz, reads, p = np.diff(X.indptr), 0, X.shape[1]
    for i, j in zip(up, low):
        room = min(upper[i] - alpha[i], alpha[j])
        if i == j or not room > 0:
            continue
        gi = sign[i] * (stored_dot(X, i, w) + bias * w[p])
        gj = sign[j] * (stored_dot(X, j, w) + bias * w[p])
        reads += nnz[i] + nnz[j]
        if not gj > gi:
            continue
        reads += 2 * (nnz[i] + nnz[j])
        quad = max(sqnorm[i] + sqnorm[j] - 2.0 * sign[i] * sign[j] * (stored_pair_dot(X, i, j) + bias * bias), 1e-12)
        t = (gj - gi) / quad
        if t >= room:   # a variable that reaches its bound is put on it exactly, not within rounding
            t = room
            alpha[i] = upper[i] if upper[i] - alpha[i] == room else alpha[i] + t
            alpha[j] = 0.0 if alpha[j] == room else alpha[j] - t
        else:
            alpha[i] += t
            alpha[j] -= t
        for row, scale in ((i, t * sign[i]), (j, -t * sign[j])):
            for k in range(X.indptr[row], X.indptr[row + 1]):
                w[X.indices[k]] += scale * X.data[k]
        w[p] += t * bias * (sign[i] - sign[j])
    return reads


def test_pair_steps_match_numpy_twin():
    rng = np.random.default_rng(3)
    X = sp.random(40, 7, density=0.5, random_state=4, format="csr")
    y = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    upper = rng.uniform(0.5, 1.5, 40)
    alpha = 0.4 * upper
    rows = LabeledRows(X, y, upper, bias=1.0)
    w = np.empty(8)
    rows.rmatvec(alpha, w)
    sqnorm = np.asarray(X.multiply(X).sum(axis=1)).ravel() + 1.0
    up, low = rng.integers(0, 40, 60).astype(np.int32), rng.integers(0, 40, 60).astype(np.int32)
    a_twin, w_twin = alpha.copy(), w.copy()
    stepped = pair_steps(X, y, 1.0, alpha, w, upper=upper, sqnorm=sqnorm, up=up, low=low, stop=np.zeros(1, np.int32))
    twin_reads = numpy_pair_steps(X, y, 1.0, a_twin, w_twin, upper=upper, sqnorm=sqnorm, up=up, low=low)
    assert stepped.steps > 10 and stepped.reads == twin_reads > 0
    assert np.allclose(alpha, a_twin, rtol=0, atol=1e-13) and np.allclose(w, w_twin, rtol=0, atol=1e-12)
    assert alpha.sum() == pytest.approx(0.4 * upper.sum(), rel=1e-14)
    assert np.all(alpha >= 0) and np.all(alpha <= upper)
    before = 0.5 * np.sum(LabeledRows(X, y, upper, bias=1.0).rmatvec(0.4 * upper, np.empty(8)) ** 2)
    assert before - 0.5 * w @ w == pytest.approx(stepped.decrease, rel=1e-9)


def test_held_kkt_matches_numpy_twin():
    """The safety check's gradients of the held rows, the gap's two sides over all rows and the
    held rows breaking KKT equal NumPy's; rows not held keep their G and their flag."""
    rng = np.random.default_rng(5)
    X = sp.random(60, 5, density=0.6, random_state=6, format="csr")
    y = np.where(rng.random(60) < 0.5, 1.0, -1.0)
    upper = np.ones(60)
    alpha = np.where(rng.random(60) < 0.4, 0.0, np.where(rng.random(60) < 0.5, 1.0, rng.random(60)))
    w = rng.normal(size=6)
    Z = y[:, None] * np.hstack([X.toarray(), np.ones((60, 1))])
    G_true = Z @ w
    held = np.flatnonzero((alpha == 0) | (alpha == 1)).astype(np.int32)
    G = np.where(np.isin(np.arange(60), held), np.nan, G_true)    # current on the swept rows only
    wrong = np.zeros(60, dtype=bool)
    top, bottom, n_wrong = held_kkt(X, y, 1.0, alpha, w, upper=upper, held=held, G=G, tol=0.1,
                                    wrong=wrong.view(np.uint8))
    assert np.allclose(G, G_true, rtol=0, atol=1e-14)
    assert top == G_true[alpha > 0].max() and bottom == G_true[alpha < 1].min()
    twin = np.zeros(60, dtype=bool)
    a, g = alpha[held], G_true[held]
    twin[held] = ((a == 0) & (g < top - 0.1)) | ((a == 1) & (g > bottom + 0.1))
    assert np.array_equal(wrong, twin) and n_wrong == twin.sum() > 0


@pytest.mark.parametrize("name", ["australian_scale", "gaussian"])
def test_shrinking_reaches_the_same_optimum(name):
    """Linear sweeps with shrinking: rows leave the sweeps (the working set's sweeps and SMO), yet
    the stop is over every row (the returned G is Z w on all of them and their gap is <= tol), and
    the optimum is the one reached without shrinking."""
    X, y = path_set(name)
    l = X.shape[0]
    rows = LabeledRows(X, y, np.ones(l), bias=1.0)
    sqnorm = np.asarray(X.multiply(X).sum(axis=1)).ravel() + 1.0
    found = {}
    for shrinking in (False, True):
        alpha, w, G = np.full(l, 0.6), np.empty(X.shape[1] + 1), np.empty(l)
        rows.rmatvec(alpha, w)
        swept = pair_sweeps(X, y, 1.0, alpha, w, upper=np.ones(l), sqnorm=sqnorm, active=np.arange(l, dtype=np.int32),
                            G=G, tol=1e-9, max_sweeps=100_000, passes=4, n_threads=1, stop=np.zeros(1, np.int32),
                            seed=None, shrinking=shrinking)
        assert swept.status == Status.CONVERGED
        assert np.allclose(G, rows.margins(w, np.empty(l)), rtol=0, atol=1e-12)
        assert G[alpha > 0].max() - G[alpha < 1].min() == pytest.approx(swept.gap) and swept.gap <= 1e-9
        assert alpha.sum() == pytest.approx(0.6 * l, rel=1e-13)
        found[shrinking] = 0.5 * w @ w, swept.sweeps, swept.left_out, swept.rounds
    assert found[True][0] == pytest.approx(found[False][0], rel=1e-10)
    assert found[True][2] > 0 == found[False][2]          # rows were left out of the last working set
    assert found[True][3] > 0 == found[False][3]          # which had sweeps / SMO of its own
    assert found[True][1] < found[False][1]               # and full sweeps were fewer


def test_sweep_reads_count_the_stored_values():
    """pair_sweeps' work counter: a sweep that only looks (max_sweeps 0) reads each active row once;
    one sweep more adds its pair steps' reads, which pair_steps' twin counts the same way."""
    rng = np.random.default_rng(8)
    X = sp.random(50, 6, density=0.5, random_state=9, format="csr")
    y = np.where(rng.random(50) < 0.5, 1.0, -1.0)
    l, nnz = 50, np.diff(X.indptr)
    rows = LabeledRows(X, y, np.ones(l), bias=1.0)
    sqnorm = np.asarray(X.multiply(X).sum(axis=1)).ravel() + 1.0
    active = np.flatnonzero(rng.random(l) < 0.7).astype(np.int32)
    alpha, w, G = np.full(l, 0.5), np.empty(7), np.empty(l)
    rows.rmatvec(alpha, w)
    look = pair_sweeps(X, y, 1.0, alpha, w, upper=np.ones(l), sqnorm=sqnorm, active=active, G=G, tol=1e-9,
                       max_sweeps=0, passes=4, n_threads=1, stop=np.zeros(1, np.int32))
    assert look.status == Status.CHUNK_DONE and look.reads == nnz[active].sum()
    a_twin, w_twin = alpha.copy(), w.copy()
    swept = pair_sweeps(X, y, 1.0, alpha, w, upper=np.ones(l), sqnorm=sqnorm, active=active, G=G, tol=1e-9,
                        max_sweeps=1, passes=1, n_threads=1, stop=np.zeros(1, np.int32))
    # the sweep's pairs: the rows below the largest G over a > 0 by G ascending, with those above
    # the smallest over a < 1 by G descending (all rows are free here)
    g = np.array([y[i] * (stored_dot(X, i, w_twin) + w_twin[-1]) for i in range(l)])
    up = sorted(active[g[active] < g[active].max()], key=lambda i: (g[i], i))
    low = sorted(active[g[active] > g[active].min()], key=lambda i: (-g[i], i))
    k = min(len(up), len(low))
    twin_reads = numpy_pair_steps(X, y, 1.0, a_twin, w_twin, upper=np.ones(l), sqnorm=sqnorm, up=up[:k], low=low[:k])
    assert swept.sweeps == 1 and swept.steps > 0 and swept.reads == 2 * nnz[active].sum() + twin_reads
    assert np.allclose(alpha, a_twin, rtol=0, atol=1e-13)


def test_linear_sweeps_stop_at_the_rounding_floor():
    """-e below what double precision resolves in G (20,000 Gaussian rows: the gap sits at one ulp
    of G, 1.8e-12) ends the sweeps within a few chunks, said in the status and the log, at the
    optimum of a reachable -e."""
    X, y = gaussian_toy(10_000)
    lines = []
    sol = solve(subproblem(X, y, 0.5, tol=1e-14, log=lines.append))
    assert sol.status == "precision_floor" and sol.n_iter < 200
    assert any("rounding floor" in line for line in lines)
    assert 0 < sol.stop_measure < 1e-10
    reachable = solve(subproblem(X, y, 0.5, tol=1e-9))
    assert sol.details["objective"] == pytest.approx(reachable.details["objective"], rel=1e-12)


def paper_dcdm(Q, nu, sweeps):
    """The paper's Alg. 2: one coordinate at a time within [max(0, nu - sum_{k != i} a_k), 1/l]."""
    l = Q.shape[0]
    a = np.full(l, nu / l)
    for _ in range(sweeps):
        for i in range(l):
            g = Q[i] @ a
            low = max(0.0, nu - (a.sum() - a[i]))
            a[i] = min(max(a[i] - g / Q[i, i], low), 1.0 / l)
    return a


def violation(Q, a, upper):
    G = Q @ a
    return G[a > 0].max() - G[a < upper].min(), np.abs(G).max()


def test_single_coordinate_update_stalls_where_pairs_do_not():
    X, labels = load("australian_scale")
    y = pm(labels)
    Q = q_matrix(X, y, "linear")
    l = X.shape[0]
    stalled = paper_dcdm(Q, 0.5, 50)
    gap, scale = violation(Q, stalled, 1.0 / l)
    assert gap > 1e-3 * scale          # far from KKT: no single coordinate can move on e^T a = nu
    sol = solve(subproblem(X, y, 0.5, "linear"))
    gap, scale = violation(Q, sol.dual / l, 1.0 / l)
    assert gap <= 1e-8 * scale
    assert 0.5 * stalled @ Q @ stalled > sol.details["objective"] * (1 + 1e-3)


def test_trivial_region_is_reported():
    X, labels = load("heart_scale")
    with pytest.raises(DegenerateProblemError, match="trivial region"):
        solve(subproblem(X, pm(labels), 0.3, "linear", tol=1e-6))


def test_bias_free_variant_drops_the_plus_one():
    X, labels = load("breast-cancer_scale")
    y = pm(labels)
    sol = solve(subproblem(X, y, 0.3, "rbf", bias="none"))
    alpha, rho = libsvm_one_class(q_matrix(X, y, "rbf", shift=0.0), 0.3)
    assert np.allclose(sol.dual, alpha, atol=1e-7)
    assert sol.rho == 0.0


def test_bad_input():
    X, labels = load("heart_scale")
    with pytest.raises(ParameterError, match="nu"):
        solve(subproblem(X, pm(labels), 1.5))
    with pytest.raises(FastSVMError, match="binary"):
        solve(subproblem(X, labels + 1.0, 0.5))


def test_stops_within_a_second():
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.normal(size=(4000, 20)))
    y = np.where(X[:, 0].toarray().ravel() + 0.3 * rng.normal(size=4000) > 0, 1.0, -1.0)
    stops_within_a_second(solve, subproblem(X, y, 0.5, "rbf", tol=1e-14))


# ---------------------------------------------------------------- the nu path and SRBO

from fastsvm.problems.nu_screening import greedy_fill, moved_to_sum, order_rank, screen  # noqa: E402
from fastsvm.solvers.dcdm import KERNEL_SCREEN_SHARE, SCREEN_PROBE, solve_nu_path  # noqa: E402

PATH = np.round(np.arange(0.50, 0.6000001, 0.001), 3)


def gaussian_toy(per_class=1000, seed=0):
    """The paper's toy: N(+-(1, 1), I), per_class points each."""
    rng = np.random.default_rng(seed)
    A = np.vstack([rng.normal(1.0, 1.0, (per_class, 2)), rng.normal(-1.0, 1.0, (per_class, 2))])
    return sp.csr_matrix(A), np.concatenate([np.ones(per_class), -np.ones(per_class)])


def path_set(name):
    if name == "gaussian":
        return gaussian_toy()
    X, labels = load(name)
    return X, pm(labels)


@pytest.mark.parametrize("name", ["gaussian", "breast-cancer_scale", "australian_scale", "sonar_scale"])
def test_screened_path_equals_unscreened(name):
    X, y = path_set(name)
    sub = subproblem(X, y, PATH[0], "linear", tol=1e-9)
    screened = solve_nu_path(sub, PATH, screening=True)
    plain = solve_nu_path(sub, PATH, screening=False)
    for a, b in zip(screened, plain):
        assert a.details["objective"] == pytest.approx(b.details["objective"], rel=1e-10)
        assert a.details["violations"] == 0
    assert all(step.details["screened"] == 0 for step in plain)
    share = np.mean([step.details["screened"] for step in screened])
    print(f"{name}: {100 * share:.1f}% screened on average along nu = 0.50:0.001:0.60")
    assert share > (0.2 if name in ("gaussian", "breast-cancer_scale") else 0.0)


def test_given_screen_is_checked():
    """A callable screen replaces SRBO's test at no cost, and the path stays exact: the optimum's own
    bounds are kept (no violation); five samples of each bound swapped are freed by the full KKT
    check; a screen that leaves the nu's mass no room (every sample at 0) is dropped whole."""
    X, y = path_set("breast-cancer_scale")
    nus, l = PATH[:11], len(y)
    sub = subproblem(X, y, nus[0], "linear", tol=1e-9)
    plain = solve_nu_path(sub, nus, screening=False)
    bounds = {nu: (s.dual <= 0.0, s.dual >= 1.0) for nu, s in zip(nus, plain)}

    def swapped(nu):
        zero, one = (mask.copy() for mask in bounds[nu])
        at_zero, at_one = np.flatnonzero(zero)[:5], np.flatnonzero(one)[:5]
        zero[at_zero], one[at_zero], zero[at_one], one[at_one] = False, True, True, False
        return zero, one
    for given, sent_back in ((bounds.__getitem__, lambda n: n == 0), (swapped, lambda n: n > 0),
                             (lambda nu: (np.ones(l, bool), np.zeros(l, bool)), lambda n: n == l)):
        path = solve_nu_path(sub, nus, screening=given)
        assert all(s.details["screening"] and sent_back(s.details["violations"]) for s in path[1:])
        for a, b in zip(path, plain):
            assert a.details["objective"] == pytest.approx(b.details["objective"], rel=1e-8)
    with pytest.raises(ParameterError, match="two boolean masks"):
        solve_nu_path(sub, nus, screening=lambda nu: (np.zeros(l - 1, bool), np.zeros(l, bool)))


def kkt_sides(Q, alpha, tol):
    """(G, top, bottom): G = Q a, the largest G over a > 0, the smallest over a < 1."""
    G = Q @ alpha
    return G, G[alpha > 1e-12].max(), G[alpha < 1 - 1e-12].min()


def test_random_small_problems_never_screen_unsafely():
    """60 seeded problems, l = 15..70, nu1 with l - nu1 l integer (odd seeds) or not: every screened
    sample is at that bound at the exact optimum (its gradient on the right side of rho)."""
    screened = solved = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        l = int(rng.integers(15, 71))
        A = rng.normal(size=(l, int(rng.integers(2, 6)))) + rng.normal(size=(1, 1))
        y = np.where(A @ rng.normal(size=A.shape[1]) + 0.7 * rng.normal(size=l) > 0, 1.0, -1.0)
        X = sp.csr_matrix(A)
        nu0 = float(rng.uniform(0.3, 0.8))
        nu1 = min((np.ceil(nu0 * l + 1) / l) if seed % 2 else nu0 + float(rng.uniform(0.001, 0.05)), 1.0)
        try:
            first = solve(subproblem(X, y, nu0, "linear", tol=1e-12))
            second = solve(subproblem(X, y, nu1, "linear", tol=1e-12))
        except DegenerateProblemError:
            continue                       # the trivial region: nothing to screen
        Z = y[:, None] * np.hstack([A, np.ones((l, 1))])
        Q = Z @ Z.T
        a0 = first.dual
        G0 = Q @ a0
        delta = greedy_fill(G0, a0, nu1 * l - a0.sum(), np.ones(l))
        zero, one, _ = screen(G0, Q @ delta, delta, a0, np.diag(Q).copy(), nu1=nu1)
        G1, top, bottom = kkt_sides(Q, second.dual, 1e-9)
        assert np.all(G1[zero] >= top - 1e-8), f"seed {seed}: screened to 0 where the optimum has a > 0"
        assert np.all(G1[one] <= bottom + 1e-8), f"seed {seed}: screened to 1 where the optimum has a < 1"
        screened += int(zero.sum() + one.sum())
        solved += 1
    assert solved >= 50 and screened > 0


def numpy_screen(G0, Qdelta, delta, alpha0, sqnorm, *, nu1):
    """SRBO's screen written out in NumPy (docs/algorithms.md §6): the twin of srbo_screen."""
    l = alpha0.size
    mass = alpha0.sum()
    whole = min(int(np.floor(mass)), l)
    smallest = np.sort(G0)
    best = smallest[:whole].sum() + ((mass - whole) * smallest[whole] if whole < l else 0.0)
    r = max(G0 @ delta + 0.25 * delta @ Qdelta + max(G0 @ alpha0 - best, 0.0), 0.0)
    centre = G0 + 0.5 * Qdelta
    spread = np.sqrt(r) * np.sqrt(np.maximum(sqnorm, 0.0))
    lower, upper = centre - spread, centre + spread
    k = order_rank(l, nu1)
    rho_up = np.inf if k <= 0 else -np.inf if k > l else np.sort(upper)[l - k]
    rho_low = np.inf if k <= 0 else -np.inf if k > l else np.sort(lower)[l - k]
    return lower > rho_up, upper < rho_low, r


def test_screen_matches_numpy_twin():
    """The nogil screen equals its NumPy twin on random inputs (ties in G0 included), screening some."""
    rng = np.random.default_rng(7)
    total = 0
    for trial in range(40):
        l = int(rng.integers(1, 300))
        Z = rng.normal(size=(l, 3))
        a0 = np.clip(rng.uniform(-0.5, 1.5, l), 0, 1)
        G0 = np.round(Z @ (Z.T @ a0), 1 if trial % 3 == 0 else 12)
        nu1 = min((a0.sum() + rng.uniform(0, 0.05 * l)) / l, 1.0) if trial != 5 else 1.0
        delta = greedy_fill(G0, a0, max(nu1 * l - a0.sum(), 0.0), np.ones(l))
        Qd = Z @ (Z.T @ delta)
        sqnorm = (Z * Z).sum(axis=1)
        zero, one, r = screen(G0, Qd, delta, a0, sqnorm, nu1=nu1)
        zero_t, one_t, r_t = numpy_screen(G0, Qd, delta, a0, sqnorm, nu1=nu1)
        assert r == pytest.approx(r_t, rel=1e-12, abs=1e-12)
        assert np.array_equal(zero, zero_t) and np.array_equal(one, one_t)
        total += int(zero.sum() + one.sum())
    assert total > 100


def numpy_fill(key, have, mass):
    order = np.argsort(key, kind="stable")
    out = np.zeros_like(have)
    out[order] = np.minimum(have[order], np.maximum(mass - (np.cumsum(have[order]) - have[order]), 0.0))
    return out


def test_greedy_fill_matches_a_full_sort():
    """The partial ranking over rows with room gives what a full stable sort gives (ties by position)."""
    rng = np.random.default_rng(11)
    for trial in range(30):
        l = int(rng.integers(1, 2000))
        G = np.round(rng.normal(size=l), 1 if trial % 2 else 9)
        alpha = np.where(rng.random(l) < 0.6, 1.0, np.where(rng.random(l) < 0.5, 0.0, rng.random(l)))
        mass = float(rng.uniform(0, min(5.0, (1 - alpha).sum())))
        assert np.array_equal(greedy_fill(G, alpha, mass, np.ones(l)), numpy_fill(G, 1 - alpha, mass))
        moved = moved_to_sum(alpha, G, alpha.sum() - mass, np.ones(l))
        excess = alpha.sum() - (alpha.sum() - mass)       # the mass moved_to_sum takes away, rounded as it is
        assert np.array_equal(moved, alpha - numpy_fill(-G, alpha, excess))


def test_order_rank_guards_rounding():
    assert order_rank(100, 0.57) == 43
    assert order_rank(100, 0.575) == 43
    assert order_rank(7, 0.5) == 4


def test_weighted_path_is_warm_and_unscreened():
    X, labels = load("breast-cancer_scale")
    y = pm(labels)
    weights = np.where(y > 0, 1.0, 2.0)
    nus = [0.5, 0.52, 0.55]
    steps = solve_nu_path(subproblem(X, y, 0.5, "linear", tol=1e-10, weights=weights), nus)
    for nu, step in zip(nus, steps):
        cold = solve(subproblem(X, y, nu, "linear", tol=1e-10, weights=weights))
        assert step.details["objective"] == pytest.approx(cold.details["objective"], rel=1e-9)
        assert step.details["screened"] == 0


def test_kernel_path_is_warm():
    X, labels = load("breast-cancer_scale")
    y = pm(labels)
    nus = [0.3, 0.31, 0.35]
    steps = solve_nu_path(subproblem(X, y, 0.3, "rbf", tol=1e-10), nus)
    for nu, step in zip(nus, steps):
        cold = solve(subproblem(X, y, nu, "rbf", tol=1e-10))
        assert step.details["objective"] == pytest.approx(cold.details["objective"], rel=1e-6)


def test_path_refuses_a_decreasing_grid():
    X, labels = load("heart_scale")
    with pytest.raises(ParameterError, match="increasing"):
        solve_nu_path(subproblem(X, pm(labels), 0.5), [0.6, 0.5])


# ---------------------------------------------------------------- surfaces

def test_cli_trains_models_libsvm_reads(tmp_path):
    """-s dcdm (its nu-SVM) and -s dcdm -s 2 (one-class): LIBSVM model files whose predictions
    LIBSVM's own predict repeats, and a nu grid writing one model per nu."""
    import subprocess
    import sys
    from pathlib import Path
    from libsvm.svmutil import svm_load_model, svm_predict
    from fastsvm.files.datafile import load_svmlight_file
    from fastsvm.files.modelfile import load_model
    from fastsvm.models.prediction import decision_values
    from conftest import shared_file

    train = str(Path(sys.executable).parent / "fastsvm-train")
    data = str(shared_file("australian_scale"))
    X, labels = load_svmlight_file(data)
    for kind, extra in (("0", []), ("2", ["-g", "0.5"]), ("2", ["-s", "2", "-g", "0.5"])):
        model = tmp_path / f"m{kind}{len(extra)}"
        run = subprocess.run([train, "-q", "-s", "dcdm", "-t", kind, *extra,
                              "-n", "0.5", data, str(model)], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        ours = decision_values(load_model(str(model)), X)[:, 0]
        rows = [dict(zip((X[i].indices + 1).tolist(), X[i].data.tolist())) for i in range(X.shape[0])]
        _, _, theirs = svm_predict(labels.tolist(), rows, svm_load_model(str(model)), "-q")
        assert np.allclose(ours, np.asarray(theirs).ravel(), atol=1e-10)
    grid = tmp_path / "grid"
    run = subprocess.run([train, "-q", "-s", "dcdm", "-t", "0", "-n",
                          "0.5:0.02:0.56", data, str(grid)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in tmp_path.glob("grid.*")) == ["grid.0.5", "grid.0.52", "grid.0.54", "grid.0.56"]
    run = subprocess.run([train, "-q", "-s", "dcdm", "-t", "0", "-n",
                          "0.6:0.02:0.5", data, str(grid)], capture_output=True, text=True)
    assert run.returncode == 1 and "invalid value for -n" in run.stderr and "Traceback" not in run.stderr


def test_fit_nu_path_models_and_statistics():
    from fastsvm import fit_nu_path
    from fastsvm.models.prediction import predict
    X, labels = load("breast-cancer_scale")
    params = Params(svm_type="nu_svc", solver="dcdm", kernel_type="linear", tol=1e-9, verbose=False)
    nus = [0.5, 0.501, 0.502]
    models = fit_nu_path(X, labels, nus, params)
    assert len(models) == 3
    for nu, model in zip(nus, models):
        details = model.info["details"][0]
        alone = solve(subproblem(X, pm(labels), nu, "linear", tol=1e-9))
        assert details["objective"] == pytest.approx(alone.details["objective"], rel=1e-10)
        assert {"seconds", "screened", "violations"} <= set(details)
        assert np.mean(predict(model, X) == labels) > 0.9
    assert models[1].info["details"][0]["screened"] > 0.2
    with pytest.raises(ParameterError, match="increasing"):
        fit_nu_path(X, labels, [0.5, 0.4], params)


def test_estimators_take_the_solver():
    from fastsvm import NuSVC, OneClassSVM
    X, labels = load("breast-cancer_scale")
    clf = NuSVC(nu=0.3, kernel="rbf", gamma=0.5, solver="dcdm").fit(X, labels)
    assert clf.score(X, labels) > 0.9
    benign = X[labels == 2]
    ours = OneClassSVM(nu=0.1, gamma=0.5, solver="dcdm").fit(benign)
    libsvm = OneClassSVM(nu=0.1, gamma=0.5).fit(benign)
    assert np.allclose(ours.decision_function(benign), libsvm.decision_function(benign), atol=1e-6)


def test_linear_sweeps_stop_within_a_second():
    # rows enough that the solve outlasts the delay before the flag is set: shrinking and the
    # rounding-floor stop end far smaller problems at -e 1e-14 before it
    rng = np.random.default_rng(0)
    A = rng.normal(size=(400000, 20))
    y = np.where(A[:, 0] + A[:, 1] + rng.normal(size=400000) > 0, 1.0, -1.0)
    stops_within_a_second(solve, subproblem(sp.csr_matrix(A), y, 0.5, "linear", tol=1e-14))


@pytest.mark.parametrize("name", ["gaussian", "breast-cancer_scale"])
def test_screened_rbf_path_is_safe(name):
    """SRBO on the RBF kernel (SMO with the screened samples set aside): no screened sample moves
    at the final check, and each nu's optimum (in double precision here) equals the unscreened one."""
    X, y = path_set(name)
    nus = PATH[:21]
    sub = subproblem(X, y, nus[0], "rbf", tol=1e-10)
    screened = solve_nu_path(sub, nus, screening=True)
    plain = solve_nu_path(sub, nus, screening=False)
    Q = q_matrix(X, y, "rbf")
    l = X.shape[0]
    for a, b in zip(screened, plain):
        assert a.details["violations"] == 0
        Fa, Fb = (0.5 * s.dual @ Q @ s.dual / l**2 for s in (a, b))
        assert Fa == pytest.approx(Fb, rel=1e-8)
    assert np.mean([s.details["screened"] for s in screened[1:]]) > 0.05


def test_kernel_path_screens_only_where_it_pays():
    """screening="auto" on RBF: the first screen measures the share; below KERNEL_SCREEN_SHARE only
    probes are screened, SCREEN_PROBE nu apart and then twice as far each time (the progress line
    says why the others are not), and the path's optima equal the unscreened ones."""
    X, y = path_set("breast-cancer_scale")
    nus = PATH[:23]
    lines = []
    sub = subproblem(X, y, nus[0], "rbf", tol=1e-10, log=lines.append)
    auto = solve_nu_path(sub, nus)
    plain = solve_nu_path(subproblem(X, y, nus[0], "rbf", tol=1e-10), nus, screening=False)
    shares = [s.details["screened"] for s in auto]
    assert 0 < shares[1] < KERNEL_SCREEN_SHARE               # a small share: screening is skipped after it
    probes = [1, 1 + SCREEN_PROBE, 1 + 3 * SCREEN_PROBE]    # 10, then 20 nu apart (22 warm nu)
    assert [k for k, s in enumerate(auto) if s.details["screening"]] == [k for k in probes if k < len(nus)]
    assert sum("screening skipped" in line for line in lines) == len(nus) - 1 - sum(k < len(nus) for k in probes)
    for a, b in zip(auto, plain):
        assert a.details["violations"] == 0
        assert a.details["objective"] == pytest.approx(b.details["objective"], rel=1e-6)
    # linear: screened while share x mean passes per warm nu pays: without shrinking (-h 0: a pass a
    # sweep, many sweeps a warm nu), not with the working sets (a few passes a warm nu) but for the
    # probes
    X, y = path_set("gaussian")
    for tol, shrinking, most in ((1e-3, False, True), (1e-3, True, False), (0.3, True, False)):
        lines = []
        params = dataclasses.replace(subproblem(X, y, nus[0], "linear", tol=tol).params, shrinking=shrinking)
        auto = solve_nu_path(dataclasses.replace(subproblem(X, y, nus[0], log=lines.append), params=params), nus)
        plain = solve_nu_path(dataclasses.replace(subproblem(X, y, nus[0]), params=params), nus, screening=False)
        screened = sum(s.details["screening"] for s in auto)
        assert screened == len(nus) - 1 if most else screened <= len(nus) // 3
        assert most or any("passes < 2 passes" in line for line in lines)
        for a, b in zip(auto, plain):
            assert a.details["objective"] == pytest.approx(b.details["objective"], rel=1e-3 * tol)
    with pytest.raises(ParameterError):
        solve_nu_path(sub, nus, screening="sometimes")


def test_random_pairs_reach_the_optimum():
    X, labels = load("australian_scale")
    sol = solve(subproblem(X, pm(labels), 0.5, "linear", pairs="random"))
    assert sol.details["objective"] == pytest.approx(NU_SVM[("australian_scale", "linear", 0.5)][0], rel=1e-8)


@pytest.mark.parametrize("kind", ["linear", "rbf"])
def test_exact_delta_screens_as_the_greedy_one(kind):
    """The page: the greedy delta screens within +-0.5 % of the exact bi-level delta."""
    X, labels = load("breast-cancer_scale")
    y = pm(labels)
    nus = PATH[:11]
    greedy = solve_nu_path(subproblem(X, y, nus[0], kind, tol=1e-10), nus, screening=True)
    exact = solve_nu_path(subproblem(X, y, nus[0], kind, tol=1e-10, delta="exact"), nus, screening=True)
    for a, b in zip(greedy, exact):
        assert b.details["violations"] == 0
        assert a.details["objective"] == pytest.approx(b.details["objective"], rel=1e-6 if kind == "rbf" else 1e-10)
    share = [np.mean([s.details["screened"] for s in run[1:]]) for run in (greedy, exact)]
    assert share[1] > 0.05 and abs(share[0] - share[1]) <= 0.01
