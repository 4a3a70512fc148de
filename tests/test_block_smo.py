"""The blocked working-set solver (block_smo) against LIBSVM, and its pieces against NumPy twins.

Every formulation x kernel is solved by block_smo and by LIBSVM at -e 1e-6 (test_smo's oracle:
dual objectives from both coefficient vectors, rho, support vectors, decision values), with a
working set small enough that the solve takes many outer steps and reuses and drops kernel rows.
The kernel block (dense rows through dgemm, CSR rows through the sparse product, every kernel)
and the subproblem's SMO are checked against plain NumPy.
"""
import numpy as np
import pytest

from conftest import read_shared
from test_smo import (CLASSIFICATION, KERNELS, REGRESSION, _data, _kernel_of, assert_matches_libsvm,
                      fastsvm_solve)
from fastsvm._core._block_smo import BlockSMO
from fastsvm._core._kernel_block import KernelRows
from fastsvm._core._status import Status
from fastsvm.csr import to_csr
from fastsvm.params import Params
from fastsvm.problems.libsvm_dual import dual_problem, libsvm_rho, max_violation
from fastsvm.solvers import block_smo, get_solver
from fastsvm.solvers.base import Kernel, Subproblem

SOLVER = block_smo.SOLVER
SMALL_BLOCKS = {"working_set": 16}   # heart's 270 rows: many outer steps, rows dropped and formed again


# ---------------------------------------------------------------- the kernel block

def kernel_twin(A, rows, kernel):
    """K[rows, :] in NumPy from the dense rows A (float64)."""
    dots = A[rows] @ A.T
    sq = np.einsum("ij,ij->i", A, A)
    g, r, d = kernel.gamma, kernel.coef0, kernel.degree
    return {"linear": dots, "polynomial": (g * dots + r) ** d, "sigmoid": np.tanh(g * dots + r),
            "rbf": np.exp(-g * np.maximum(sq[rows][:, None] + sq[None, :] - 2 * dots, 0))}[kernel.kind]


@pytest.mark.parametrize("kind", ["linear", "polynomial", "rbf", "sigmoid"])
@pytest.mark.parametrize("layout", ["csr", "dense"])
def test_kernel_block_equals_numpy(kind, layout, heart):
    X, _ = heart
    A = X.toarray()
    kernel = Kernel(kind, gamma=0.2, degree=3, coef0=0.5)
    data = X if layout == "csr" else np.ascontiguousarray(A)
    rows = np.array([3, 0, 269, 17, 17, 100])   # a block may name a row twice
    block = KernelRows(data, kind, kernel.gamma, kernel.degree, kernel.coef0, n_threads=2).rows(rows)
    want = kernel_twin(A, rows, kernel)
    # float32 values, as every kernel cache holds them
    np.testing.assert_allclose(block, want, rtol=2e-7, atol=2e-7 * np.abs(want).max())


@pytest.mark.parametrize("layout", ["csr", "dense"])
def test_kernel_block_groups_and_threads_give_the_same_bits(layout):
    """More rows than one pass over the data serves (wide rows), tiles on 1, 2 or 3 threads: the
    same float32 values."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((700, 600)) * (rng.random((700, 600)) < 0.3)
    data = to_csr(A) if layout == "csr" else np.ascontiguousarray(A)
    rows = rng.integers(0, 700, 300)
    blocks = [KernelRows(data, "rbf", 1e-3, 3, 0.0, n_threads=threads).rows(rows) for threads in (1, 2, 3)]
    for block in blocks[1:]:
        np.testing.assert_array_equal(block, blocks[0])
    np.testing.assert_allclose(blocks[0], kernel_twin(A, rows, Kernel("rbf", gamma=1e-3)), rtol=3e-7, atol=1e-7)


@pytest.mark.parametrize("kind, layout", [(kind, layout) for kind in ("linear", "polynomial", "rbf", "sigmoid")
                                          for layout in ("csr", "dense")] + [("precomputed", "csr")])
def test_kernel_values_at_listed_columns_are_their_kernel_rows_values(kind, layout):
    """K[rows, cols] for a list of columns (the working set's rows, a shrunk problem's active rows;
    more rows than one pass serves) holds the bits of the full kernel rows at those columns."""
    rng = np.random.default_rng(2)
    A = rng.standard_normal((900, 600)) * (rng.random((900, 600)) < 0.3)
    if kind == "precomputed":
        A = np.hstack([np.arange(1.0, 901.0)[:, None], A @ A[:900].T])
    rows = rng.permutation(900)[:400]
    data = to_csr(A) if layout == "csr" else np.ascontiguousarray(A)
    kernel_rows = KernelRows(data, kind, 1e-3, 3, 0.5, n_threads=2)
    full = kernel_rows.rows(rows)
    for cols in (rows, np.sort(rng.permutation(900)[:700]), np.array([7])):
        np.testing.assert_array_equal(kernel_rows.rows(rows, cols), full[:, cols])
    assert kernel_rows.rows(rows, np.arange(0)).shape == (400, 0)


def test_kernel_block_precomputed(heart):
    X, _ = heart
    A = X.toarray()
    K = kernel_twin(A, np.arange(A.shape[0]), Kernel("rbf", gamma=0.1))
    order = np.random.default_rng(1).permutation(A.shape[0])   # rows in any order: by serial number
    Xp = to_csr(np.hstack([order[:, None] + 1.0, K[order]]))   # row t is point order[t]
    block = KernelRows(Xp, "precomputed").rows([5, 0, 9])
    np.testing.assert_allclose(block, K[order[[5, 0, 9]]][:, order], rtol=1e-7)


# ---------------------------------------------------------------- the subproblem's SMO

def smo_twin(Q, p, y, C, alpha, *, eps, inner_ratio, max_steps, nu):
    """LIBSVM's SMO (second-order pairs, Fan, Chen & Lin 2005) on a dense Q, in NumPy, with the
    blocked solver's inner stop: violation below max(eps, inner_ratio x the first)."""
    alpha = alpha.copy()
    G = Q @ alpha + p
    QD = np.diag(Q)
    local_eps = None
    for _ in range(max_steps):
        up = np.where(y > 0, alpha < C, alpha > 0)
        low = np.where(y > 0, alpha > 0, alpha < C)
        key = -y * G
        best = None
        gaps = []
        for side in ((y > 0), (y < 0)) if nu else (np.ones_like(up),):
            cand = np.flatnonzero(up & side)
            if cand.size == 0:
                gaps.append(-np.inf)
                continue
            i = cand[np.flatnonzero(key[cand] == key[cand].max())[-1]]    # LIBSVM: the last maximum
            js = np.flatnonzero(low & side)
            gaps.append(key[i] - key[js].min() if js.size else -np.inf)
            grad_diff = key[i] - key[js]
            ok = grad_diff > 0
            quad = QD[i] + QD[js] - 2 * y[i] * y[js] * Q[i, js]
            obj = -grad_diff ** 2 / np.where(quad > 0, quad, 1e-12)
            if ok.any():
                pick = np.flatnonzero(ok & (obj == obj[ok].min()))[-1]
                if best is None or obj[pick] <= best[2]:
                    best = (i, js[pick], obj[pick])
        gap = max(gaps)
        if local_eps is None:
            local_eps = max(eps, inner_ratio * gap)
        if best is None or gap < local_eps:
            break
        i, j, _ = best
        # the two-variable subproblem along y_i d_i = -y_j d_j, clipped to the box
        if y[i] != y[j]:
            quad = max(QD[i] + QD[j] + 2 * Q[i, j], 1e-12)
            delta = (-G[i] - G[j]) / quad
            lo = max(-alpha[i], -alpha[j])
            hi = min(C[i] - alpha[i], C[j] - alpha[j])
            d_i = d_j = np.clip(delta, lo, hi)
        else:
            quad = max(QD[i] + QD[j] - 2 * Q[i, j], 1e-12)
            delta = (G[i] - G[j]) / quad
            lo = max(-alpha[j], alpha[i] - C[i])
            hi = min(C[j] - alpha[j], alpha[i])
            d_j = np.clip(delta, lo, hi)
            d_i = -d_j
        alpha[i] += d_i
        alpha[j] += d_j
        G += Q[:, i] * d_i + Q[:, j] * d_j
    return alpha


@pytest.mark.parametrize("formulation", ["c_svc", "nu_svc"])
def test_one_outer_step_is_the_numpy_smo_on_its_working_set(formulation, heart):
    """A working set of every variable: one outer step is SMO on the whole problem to -e (then the
    problem is solved); the twin, on the same float32 kernel in the same order."""
    X, y = heart
    X, y = X[:80], y[:80]
    kernel = _kernel_of("rbf", X.shape[1])
    p, signs, alpha0, C, nu_variant, _ = dual_problem(formulation, y, np.full(80, 1.0), 0.4, 0.1)
    rows = KernelRows(X, "rbf", kernel.gamma, 3, 0.0, n_threads=1)
    stop = np.zeros(1, np.int32)
    solver = BlockSMO(rows, np.arange(80, dtype=np.int32), p, signs, alpha0, C=C, eps=1e-6, nu=nu_variant, q=80,
                      n_slots=80, max_iter=10**6, stop=stop, check_signals=False, inner_ratio=0.1)
    assert solver.init() == Status.CONVERGED
    assert solver.run(1) == Status.CHUNK_DONE and solver.n_outer == 1
    assert solver.run(2) == Status.CONVERGED and solver.n_outer == 1
    order = solver.working_set()
    assert sorted(order) == list(range(80))
    K = rows.rows(np.arange(80))
    Q = signs[:, None] * signs[None, :] * K
    o = order
    want = smo_twin(Q[np.ix_(o, o)], p[o], signs[o].astype(float), C[o], alpha0[o], eps=1e-6, inner_ratio=0.0,
                    max_steps=10**6, nu=nu_variant)
    alpha, G = solver.state()
    np.testing.assert_allclose(alpha[o], want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(G, Q @ alpha + p, rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------- optima against LIBSVM

@pytest.mark.parametrize("kind", KERNELS)
@pytest.mark.parametrize("formulation", CLASSIFICATION + REGRESSION)
def test_matches_libsvm(formulation, kind, heart, housing):
    X, y, kernel, K = _data(formulation, kind, heart, housing)
    sol = assert_matches_libsvm(formulation, X, y, kernel, K, spec=SOLVER, options=SMALL_BLOCKS)
    assert sol.stop_measure < 1e-6
    assert sol.details["outer_steps"] > 3


@pytest.mark.parametrize("layout", ["csr", "dense"])
@pytest.mark.parametrize("formulation", CLASSIFICATION + REGRESSION)
def test_shrinking_reaches_the_unshrunk_optimum(formulation, layout, heart, housing):
    """-h 1 (shrunk variables, rows held at the active rows only, the gradient brought up to date
    at the end) and -h 0 solve the same problem to the same optimum; the final violation is the
    one of the whole problem."""
    X, y, kernel, K = _data(formulation, "rbf", heart, housing)
    options = {**SMALL_BLOCKS, "dense": "yes" if layout == "dense" else "no"}
    shrunk, whole = (fastsvm_solve(formulation, X, y, kernel, spec=SOLVER, options=options, shrinking=h)
                     for h in (True, False))
    assert shrunk.details["shrinks"] > 0 and shrunk.details["unshrinks"] > 0
    assert shrunk.details["fewest_active"] < len(y)
    assert whole.details["shrinks"] == 0
    assert abs(shrunk.objective - whole.objective) <= 1e-8 * abs(whole.objective)
    assert shrunk.stop_measure < 1e-6 and shrunk.status == "converged"


def test_shrunk_gradient_brought_up_to_date_is_q_alpha_plus_p(heart):
    """Stopped while variables are shrunk, the state's gradient is Q alpha + p for every
    variable: the active ones' kept up to date, the shrunk ones' rebuilt from where shrinking
    began (on the float32 kernel values the solver holds)."""
    X, y = heart
    kernel = _kernel_of("rbf", X.shape[1])
    l = len(y)
    p, signs, alpha0, C, nu_variant, _ = dual_problem("c_svc", y, np.full(l, 4.0), 0.5, 0.1)
    rows = KernelRows(X, "rbf", kernel.gamma, 3, 0.0, n_threads=2)
    solver = BlockSMO(rows, np.arange(l, dtype=np.int32), p, signs, alpha0, C=C, eps=1e-6, nu=nu_variant, q=16,
                      n_slots=64, max_iter=10**6, stop=np.zeros(1, np.int32), check_signals=False, inner_ratio=0.1)
    assert solver.init() == Status.CONVERGED
    while solver.l_act == l:
        assert solver.run(solver.n_outer + 1) == Status.CHUNK_DONE
    alpha, G = solver.state()
    Q = signs[:, None] * signs[None, :] * rows.rows(np.arange(l))
    np.testing.assert_allclose(G, Q @ alpha + p, rtol=1e-10, atol=1e-10)
    assert solver.l_act == l       # every variable active again, the solve goes on from there
    assert solver.run(10**6) == Status.CONVERGED
    alpha, G = solver.state()
    np.testing.assert_allclose(G, Q @ alpha + p, rtol=1e-10, atol=1e-10)
    assert max_violation(alpha, G, signs, C, nu_variant) < 1e-6


def test_weights_and_zero_bounds_match_libsvm(heart):
    X, y = heart
    kernel = _kernel_of("rbf", X.shape[1])
    _, _, _, K = _data("c_svc", "rbf", heart, None)
    upper = np.where(y > 0, 2.0, 0.5)
    upper[::7] = 0.0   # rows with C_i = 0 take no part
    sol = fastsvm_solve("c_svc", X, y, kernel, upper=upper, spec=SOLVER, options=SMALL_BLOCKS)
    ref = fastsvm_solve("c_svc", X, y, kernel, upper=upper)
    assert np.all(sol.coef[::7] == 0)
    assert abs(sol.objective - ref.objective) <= 1e-6 * abs(ref.objective)
    assert abs(sol.rho - ref.rho) <= 1e-5 * max(1, abs(ref.rho))


def test_same_optimum_as_smo_on_a_larger_set():
    """a1a (1,605 rows), default working set: LIBSVM's objective and rho within the tolerance."""
    X, y = read_shared("a1a")
    kernel = _kernel_of("rbf", X.shape[1])
    sol = fastsvm_solve("c_svc", X, y, kernel, C=4.0, spec=SOLVER)
    ref = fastsvm_solve("c_svc", X, y, kernel, C=4.0)
    assert abs(sol.objective - ref.objective) <= 1e-6 * abs(ref.objective)
    assert sol.stop_measure < 1e-6 and sol.status == "converged"


def test_rho_and_violation_from_the_gradient_are_smos():
    """libsvm_rho and max_violation (NumPy, from alpha and G) equal SMO's own at its solution."""
    from fastsvm._core._cache import KernelCache
    from fastsvm._core._smo import SMO
    X, y = read_shared("a1a", 400)
    for formulation in ("c_svc", "nu_svc"):
        p, signs, alpha0, C, nu_variant, _ = dual_problem(formulation, y, np.ones(400), 0.3, 0.1)
        cache = KernelCache(X, "rbf", 0.05, sign=signs)
        smo = SMO(cache, p, signs, alpha0, C, eps=1e-3, shrinking=True, nu=nu_variant, svr_rows=0, max_iter=10**7,
                  stop=np.zeros(1, np.int32), check_signals=False)
        smo.init()
        smo.run(10**7)
        res = smo.result()
        rho, r = libsvm_rho(res["alpha"], smo.gradient(), signs, C, nu_variant)
        assert rho == pytest.approx(res["rho"], rel=1e-12, abs=1e-14)
        if nu_variant:
            assert r == pytest.approx(res["r"], rel=1e-12)
        assert max_violation(res["alpha"], smo.gradient(), signs, C, nu_variant) == pytest.approx(res["kkt"])


# ---------------------------------------------------------------- threads, progress, stopping

def test_threads_give_the_same_bits():
    X, y = read_shared("a1a")
    kernel = _kernel_of("rbf", X.shape[1])
    results = []
    for threads in (1, 2, 3):
        sub = Subproblem("c_svc", X, y, np.ones(len(y)), kernel,
                         Params(tol=1e-4, options={"working_set": 64}), n_threads=threads)
        results.append(SOLVER.solve(sub))
    for sol in results[1:]:
        np.testing.assert_array_equal(sol.coef, results[0].coef)
        assert sol.rho == results[0].rho and sol.n_iter == results[0].n_iter


def test_dense_and_sparse_rows_reach_the_same_optimum(heart):
    X, y = heart
    kernel = _kernel_of("rbf", X.shape[1])
    sols = [fastsvm_solve("c_svc", X, y, kernel, spec=SOLVER, options={**SMALL_BLOCKS, "dense": dense})
            for dense in ("yes", "no")]
    assert sols[0].details["dense"] and not sols[1].details["dense"]
    assert abs(sols[0].objective - sols[1].objective) <= 1e-7 * abs(sols[1].objective)


def test_progress_lines_and_stop_flag(heart):
    X, y = heart
    kernel = _kernel_of("rbf", X.shape[1])
    lines = []
    sub = Subproblem("c_svc", X, y, np.ones(len(y)), kernel,
                     Params(tol=1e-6, options=SMALL_BLOCKS, config=block_smo.Config(chunk_seconds=1e-9)),
                     log=lines.append)
    sol = SOLVER.solve(sub)
    assert len(lines) == len(sol.history) > 2 and "max violation" in lines[0] and "kernel rows" in lines[0]
    sub.log = lambda line: sub.stop.__setitem__(0, 1)   # set after the first chunk
    with pytest.raises(KeyboardInterrupt):
        SOLVER.solve(sub)


def test_max_iter_status(heart):
    X, y = heart
    sol = fastsvm_solve("c_svc", X, y, _kernel_of("rbf", X.shape[1]), spec=SOLVER, max_iter=10)
    assert sol.status == "max_iter" and sol.n_iter == 10
    assert np.all(np.isfinite(sol.coef)) and sol.stop_measure > 1e-6


def test_registered_with_libsvm_problems():
    spec = get_solver("block_smo")
    assert set(spec.formulations) == {"c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr"}
    assert spec.multiclass == "ovo" and "precomputed" in spec.kernels
    assert block_smo.working_set_size(10**6, 10**6, 100 << 20, 0)[0] == 16      # -m holds 26 rows
    assert block_smo.working_set_size(5000, 5000, 100 << 20, 0) == (256, 5000)    # at least 256
    assert block_smo.working_set_size(300, 300, 100 << 20, 0) == (300, 300)       # the whole problem
    assert block_smo.working_set_size(3000, 3000, 100 << 20, 0) == (256, 3000)
    assert block_smo.working_set_size(15000, 15000, 100 << 20, 0) == (512, 1747)  # a 24th of the variables
    assert block_smo.working_set_size(50000, 50000, 500 << 20, 0) == (1024, 2621)


def test_warm_start_and_c_path_reach_the_cold_optima(heart):
    X, y = heart
    kernel = _kernel_of("rbf", X.shape[1])
    sub = Subproblem("c_svc", X, y, np.ones(len(y)), kernel, Params(tol=1e-6, options=SMALL_BLOCKS))
    path = SOLVER.solve_c_path(sub, [0.5, 2.0, 8.0])
    for C, sol in zip([0.5, 2.0, 8.0], path):
        cold = fastsvm_solve("c_svc", X, y, kernel, C=C)
        assert abs(sol.objective - cold.objective) <= 1e-6 * abs(cold.objective)
        assert sol.stop_measure < 1e-6
    # a warm start near the optimum takes fewer steps than a cold one (shrinking off on both, its
    # path apart)
    unshrunk = Params(tol=1e-6, shrinking=False, options=SMALL_BLOCKS)
    warm = SOLVER.solve_c_path(Subproblem("c_svc", X, y, np.ones(len(y)), kernel, unshrunk), [2.0, 8.0])[1]
    cold = fastsvm_solve("c_svc", X, y, kernel, C=8.0, spec=SOLVER, options=SMALL_BLOCKS, shrinking=False)
    assert warm.n_iter < cold.n_iter


def test_auto_takes_block_smo_from_its_threshold(heart):
    from fastsvm.solvers import auto
    X, y = heart
    kernel = _kernel_of("rbf", X.shape[1])
    sub = Subproblem("c_svc", X, y, np.ones(len(y)), kernel, Params())
    assert auto.pick(sub).name == "smo"
    big = Subproblem("c_svc", X, np.ones(auto.BLOCKED_FROM), np.ones(auto.BLOCKED_FROM), kernel, Params(),
                     rows=np.zeros(auto.BLOCKED_FROM, dtype=np.int64))
    assert auto.pick(big).name == "block_smo"
    svr = Subproblem("epsilon_svr", X, np.ones(auto.BLOCKED_FROM // 2), np.ones(auto.BLOCKED_FROM // 2), kernel,
                     Params(svm_type="epsilon_svr"), rows=np.zeros(auto.BLOCKED_FROM // 2, dtype=np.int64))
    assert auto.pick(svr).name == "block_smo"   # two dual variables per row


def test_estimators_default_to_auto_and_the_command_to_libsvms_solver(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    import fastsvm
    assert fastsvm.SVC().solver == "auto" and fastsvm.SVR().solver == "auto"
    assert Params().solver == "auto"
    train = Path(sys.executable).parent / "fastsvm-train"
    data = Path(__file__).resolve().parents[1] / "data" / "breast_cancer_scale"
    for extra in ([], ["-s", "auto"], ["-s", "block_smo"]):
        out = subprocess.run([str(train), *extra, str(data), str(tmp_path / "m")],
                             capture_output=True, text=True, check=True).stdout
        assert "optimization finished" in out
        assert ("outer" in out) == (extra == ["-s", "block_smo"])   # block_smo's progress lines
