"""SSsNAL on nonlinear kernels (fastsvm.solvers.ssnal.kernel, reached as solver "ssnal") against
LIBSVM, and NumPy twins of its kernel pieces.

The optimum is judged independently of the solver: the kernel matrix comes from scikit-learn's
pairwise kernels, eta (Niu et al. 2019 eq. 4.1) is recomputed here with a projection by bisection, the
dual objective of LIBSVM's solution is recomputed from its sv_coef / sv_indices, and the
predictions of both models are compared.
"""
import functools
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel, sigmoid_kernel

import fastsvm
from conftest import libsvm_one_thread, shared_file
from fastsvm import load_svmlight_file
from fastsvm._core._cache import KernelCache
from fastsvm._core._ssnal_kernel import KernelProducts, exp_neg
from fastsvm.csr import to_csr
from fastsvm.errors import FastSVMError, ParameterError
from fastsvm.params import Params
from fastsvm.models.prediction import decision_values
from fastsvm.solvers import get_solver
from fastsvm.solvers import ssnal
from fastsvm.solvers.ssnal import Config, kernel_inner
from fastsvm.solvers.ssnal import kernel as ssnal_kernel
from fastsvm.solvers.ssnal.kernel_inner import KernelCounters
from fastsvm.solvers.ssnal.kernel_newton import dense_solve, newton_direction, system_method, well_conditioned
from fastsvm.solvers.ssnal.warm import warm_start
from fastsvm.solvers.ssnal.working_set import WorkingSet
from fastsvm.solvers.base import Kernel, Subproblem

svmutil = pytest.importorskip("libsvm.svmutil")

TOL = 1e-6
LIBSVM_KERNEL = {"linear": 0, "polynomial": 1, "rbf": 2, "sigmoid": 3}


# ---------------------------------------------------------------- NumPy twins

def np_kernel(X, Z, kernel):
    """K(X, Z) by scikit-learn (dense), independent of fastsvm's kernel code."""
    X, Z = X.toarray(), Z.toarray()
    if kernel.kind == "rbf":
        return rbf_kernel(X, Z, gamma=kernel.gamma)
    if kernel.kind == "polynomial":
        return polynomial_kernel(X, Z, degree=kernel.degree, gamma=kernel.gamma, coef0=kernel.coef0)
    if kernel.kind == "sigmoid":
        return sigmoid_kernel(X, Z, gamma=kernel.gamma, coef0=kernel.coef0)
    return X @ Z.T


def np_dual(K, y, formulation, C, epsilon=0.1):
    """(Q, c, a, u) of docs/algorithms.md §0 with Q explicit."""
    n = K.shape[0]
    if formulation == "c_svc":
        return K * np.outer(y, y), -np.ones(n), y.astype(float), np.full(n, C)
    return (np.block([[K, -K], [-K, K]]), np.concatenate([epsilon - y, epsilon + y]),
            np.concatenate([np.ones(n), -np.ones(n)]), np.full(2 * n, C))


def np_project(v, a, u):
    """Pi_K(v), K = {a^T x = 0, 0 <= x <= u}, by bisection on the multiplier."""
    lo, hi = -np.abs(v).max() - u.max() - 1.0, np.abs(v).max() + u.max() + 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if a @ np.clip(v - mid * a, 0, u) > 0 else (lo, mid)
    return np.clip(v - 0.5 * (lo + hi) * a, 0, u)


def np_eta(Q, c, a, u, x):
    grad = Q @ x + c
    proj = np_project(x - grad, a, u)
    return np.linalg.norm(x - proj) / (1 + np.linalg.norm(x) + np.linalg.norm(grad))


def np_objective(Q, c, x):
    return 0.5 * x @ Q @ x + c @ x


# ---------------------------------------------------------------- helpers

@functools.cache
def load(name, rows=None):
    X, y = load_svmlight_file(str(shared_file(name)), zero_based=False)
    X = to_csr(X)
    if rows is not None and rows < X.shape[0]:
        keep = np.sort(np.random.default_rng(0).permutation(X.shape[0])[:rows])
        X, y = to_csr(X[keep]), y[keep]
    return X, y


def as_pm(labels):
    return np.where(labels == labels[0], 1.0, -1.0)


def subproblem(X, y, kernel, formulation="c_svc", C=1.0, *, tol=TOL, threads=1, seed=0, config=None, **options):
    params = Params(svm_type=formulation, solver="ssnal", kernel_type=kernel.kind, gamma=kernel.gamma,
                    degree=kernel.degree, coef0=kernel.coef0, C=C, tol=tol, epsilon=0.1, options=options,
                    config=config)
    return Subproblem(formulation, X, y, np.full(X.shape[0], C), kernel, params, seed=seed, n_threads=threads)


def dual_vector(sol, y, formulation):
    """The solver's dual vector, checked against its coefficients (y_i x_i, or x_i - x_{n+i})."""
    x = np.asarray(sol.dual)
    n = sol.coef.shape[0]
    np.testing.assert_array_equal(sol.coef, y * x if formulation == "c_svc" else x[:n] - x[n:])
    return x


def libsvm_solution(X, y, kernel, formulation, C):
    """LIBSVM at -e 1e-6: (its dual vector x in our variables, rho, model)."""
    rows = [dict(zip((X.indices[X.indptr[i]:X.indptr[i + 1]] + 1).tolist(),
                     X.data[X.indptr[i]:X.indptr[i + 1]].tolist()))
            for i in range(X.shape[0])]
    s = 0 if formulation == "c_svc" else 3
    with libsvm_one_thread():
        model = svmutil.svm_train(y.tolist(), rows,
                                  f"-s {s} -t {LIBSVM_KERNEL[kernel.kind]} -g {kernel.gamma!r} -d {kernel.degree} "
                                  f"-r {kernel.coef0!r} -c {C!r} -p 0.1 -e 1e-6 -q")
    coef = np.zeros(X.shape[0])
    coef[np.asarray(model.get_sv_indices()) - 1] = np.asarray(model.get_sv_coef()).ravel()
    if formulation == "c_svc":
        x = np.abs(coef)               # coef = +-alpha, LIBSVM's sign convention aside
    else:
        x = np.concatenate([np.maximum(coef, 0), np.maximum(-coef, 0)])
    return x, model.rho[0], model, rows


def libsvm_predictions(model, rows):
    with libsvm_one_thread():
        return np.array([svmutil.libsvm.svm_predict(model, svmutil.gen_svm_nodearray(r)[0]) for r in rows])


# ---------------------------------------------------------------- the optimum is LIBSVM's

CASES = [
    ("heart_scale", None, "c_svc", Kernel("rbf", gamma=1 / 13), 1.0),
    ("heart_scale", None, "c_svc", Kernel("polynomial", gamma=1 / 13, degree=3, coef0=1.0), 1.0),
    ("mushrooms", 1500, "c_svc", Kernel("rbf", gamma=1 / 112), 1.0),
    ("a9a", 2000, "c_svc", Kernel("rbf", gamma=1 / 123), 1.0),
    ("a9a", 1000, "c_svc", Kernel("polynomial", gamma=1 / 123, degree=2, coef0=1.0), 4.0),
    ("housing_scale", None, "epsilon_svr", Kernel("rbf", gamma=1 / 13), 1.0),
    ("housing_scale", None, "epsilon_svr", Kernel("polynomial", gamma=1 / 13, degree=3, coef0=1.0), 1.0),
    ("mg", None, "epsilon_svr", Kernel("rbf", gamma=1 / 6), 10.0),
    ("svmguide1", None, "c_svc", Kernel("rbf", gamma=1 / 4), 1.0),     # unscaled: K_UU held sparse
    # gammas users tune to, where the free set at the optimum is most of the rows
    ("w8a", 4000, "c_svc", Kernel("rbf", gamma=0.05), 1.0),
    ("a9a", 2000, "c_svc", Kernel("rbf", gamma=0.5), 10.0),
]


@pytest.mark.parametrize("name,rows,formulation,kernel,C", CASES,
                         ids=[f"{c[0]}-{c[2]}-{c[3].kind}" for c in CASES])
def test_optimum_equals_libsvm(name, rows, formulation, kernel, C):
    X, labels = load(name, rows)
    y = as_pm(labels) if formulation == "c_svc" else labels
    sol = ssnal.solve(subproblem(X, y, kernel, formulation, C))
    assert sol.status == "converged"
    K = np_kernel(X, X, kernel)
    Q, c, a, u = np_dual(K, y, formulation, C)
    x = dual_vector(sol, y, formulation)
    eta = np_eta(Q, c, a, u, x)
    assert eta <= TOL and sol.stop_measure <= TOL
    assert abs(eta - sol.stop_measure) <= 1e-7
    x_lib, rho_lib, model, libsvm_rows = libsvm_solution(X, labels, kernel, formulation, C)
    f_ours, f_lib = np_objective(Q, c, x), np_objective(Q, c, x_lib)
    assert abs(sol.objective - f_ours) <= 1e-6 * abs(f_ours)   # gradient kept with float32 columns
    assert abs(f_ours - f_lib) <= 1e-6 * abs(f_lib)
    # our model's decision values on the training rows against LIBSVM's predictions
    ours = K @ sol.coef - sol.rho
    theirs = libsvm_predictions(model, libsvm_rows)
    if formulation == "c_svc":
        other = labels[labels != labels[0]][0]
        assert np.mean(np.where(ours > 0, labels[0], other) == theirs) >= 0.999
        assert abs(sol.rho) == pytest.approx(abs(rho_lib), abs=1e-3)
    else:
        assert sol.rho == pytest.approx(rho_lib, abs=1e-3 * max(1.0, abs(rho_lib)))
        np.testing.assert_allclose(ours, theirs, atol=1e-3 * np.abs(y).max())


# ---------------------------------------------------------------- the kernel pieces

def small_data(n=60, p=7, density=0.6, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=density, random_state=rng, format="csr")
    X.data = rng.normal(size=X.data.shape)
    return to_csr(X)


@pytest.mark.parametrize("kernel", [Kernel("rbf", gamma=0.3), Kernel("polynomial", gamma=0.5, degree=3, coef0=1.0),
                                    Kernel("sigmoid", gamma=0.2, coef0=-0.5), Kernel("linear")],
                         ids=lambda k: k.kind)
def test_kernel_products_twin(kernel):
    X = small_data(n=300, p=9)
    rng = np.random.default_rng(1)
    rows = rng.permutation(300)[:120].astype(np.int32)
    cols = rng.permutation(300)[:80].astype(np.int32)
    coef = rng.normal(size=80)
    expected = np_kernel(X[rows], X[cols], kernel) @ coef
    outs = []
    for threads in (1, 2, 3):
        out = np.full(120, 0.5)
        products = KernelProducts(X, kernel.kind, kernel.gamma, kernel.degree, kernel.coef0, n_threads=threads)
        products.matvec(rows, cols, coef, out)
        outs.append(out)
    np.testing.assert_allclose(outs[0], 0.5 + expected, rtol=1e-12, atol=1e-12)
    for out in outs[1:]:
        np.testing.assert_array_equal(out, outs[0])     # each row summed by one thread, in order
    for threads in (1, 2):
        products = KernelProducts(X, kernel.kind, kernel.gamma, kernel.degree, kernel.coef0, n_threads=threads)
        block = products.block(rows, cols)
        np.testing.assert_allclose(block, np_kernel(X[rows], X[cols], kernel), rtol=1e-12, atol=1e-12)


def test_exp_neg_twin():
    """The vectorized exp(-max(v, 0)) of the RBF products: within 1 ulp of NumPy's exp down to
    e^-707.9; from 708 on 0, where NumPy's values turn denormal."""
    rng = np.random.default_rng(4)
    v = np.concatenate([np.linspace(-1.0, 60.0, 100001), rng.exponential(5.0, 100000), [0.0, -0.0, 1e-300]])
    out = exp_neg(v)
    expected = np.exp(-np.maximum(v, 0.0))
    assert np.max(np.abs(out - expected) / expected) <= 1.5 * np.finfo(float).eps
    assert exp_neg([707.9])[0] == pytest.approx(np.exp(-707.9), rel=2 * np.finfo(float).eps)
    np.testing.assert_array_equal(exp_neg([708.0, 708.5, 745.0, 1e10, np.inf]), 0.0)   # no denormals


def test_kernel_products_dense_and_sparse_features():
    """Features in many columns go through the dense index, rare ones through the lists."""
    rng = np.random.default_rng(5)
    dense_part = rng.normal(size=(200, 3))
    sparse_part = sp.random(200, 40, density=0.02, random_state=rng).toarray()
    X = to_csr(sp.csr_matrix(np.hstack([dense_part, sparse_part])))
    rows = np.arange(200, dtype=np.int32)
    cols = rng.permutation(200)[:90].astype(np.int32)
    coef = rng.normal(size=90)
    out = np.zeros(200)
    KernelProducts(X, "rbf", 0.2).matvec(rows, cols, coef, out)
    np.testing.assert_allclose(out, np_kernel(X, X[cols], Kernel("rbf", gamma=0.2)) @ coef, rtol=1e-12, atol=1e-12)


def _narrow_data(binary, rng):
    """201 rows: five features in every row (float32 draws of a normal, or ones) and 40 rare
    binary ones."""
    common = np.ones((201, 5)) if binary else rng.normal(size=(201, 5)).astype(np.float32).astype(np.float64)
    rare = (sp.random(201, 40, density=0.03, random_state=rng).toarray() > 0) * 1.0
    return np.hstack([common, rare])


@pytest.mark.parametrize("binary", [False, True], ids=["float32", "binary"])
def test_kernel_products_narrow_index_has_the_float64_bits(binary):
    """When float32 holds every value of X, the dense features' index is float32, widened as it
    is read; when every value is 1, it is bytes, and the sums are counts. Either way the sums
    are the float64 index's, bit for bit (products of float32 values are exact in double, and
    so are counts), and NumPy's. Values float32 holds but whose products it does not in every
    column, so that both indexes hold the same dense features; 90 columns: whole register
    blocks and a tail."""
    rng = np.random.default_rng(6)
    narrow = _narrow_data(binary, rng)
    wide = narrow.copy()
    wide[200, 0] = 0.1                       # float32 cannot hold it; row 200 is never used
    rows = np.arange(200, dtype=np.int32)
    cols = rng.permutation(200)[:90].astype(np.int32)
    coef = rng.normal(size=90)
    outs, blocks = [], []
    for A, is_narrow in ((narrow, True), (wide, False)):
        kp = KernelProducts(to_csr(sp.csr_matrix(A)), "rbf", 0.2, n_threads=2)
        assert (kp.narrow, kp.binary) == (is_narrow, is_narrow and binary)
        out = np.zeros(200)
        kp.matvec(rows, cols, coef, out)
        outs.append(out)
        blocks.append(kp.block(rows, cols))
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(blocks[0], blocks[1])
    K = np_kernel(sp.csr_matrix(narrow[:200]), sp.csr_matrix(narrow[cols]), Kernel("rbf", gamma=0.2))
    np.testing.assert_allclose(blocks[0], K, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(outs[0], K @ coef, rtol=1e-12, atol=1e-12)


def test_kernel_products_byte_counts_only_up_to_255_features_a_row():
    """Byte counts hold 255: a binary row with more features keeps the float32 index. Its
    squared distances are still integers: RBF values looked up, the exponentials' bits."""
    X = to_csr(sp.csr_matrix(np.ones((3, 300))))
    kp = KernelProducts(X, "linear")
    assert kp.narrow and not kp.binary
    np.testing.assert_array_equal(kp.block(np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int32)),
                                  np.full((3, 3), 300.0))
    lengths = np.array([300, 280, 257])
    X = to_csr(sp.csr_matrix((np.arange(300) < lengths[:, None]) * 1.0))
    rows = np.arange(3, dtype=np.int32)
    distances = np.abs(lengths[:, None] - lengths[None, :]).astype(np.float64)
    np.testing.assert_array_equal(KernelProducts(X, "rbf", 0.01).block(rows, rows),
                                  exp_neg(0.01 * distances).reshape(3, 3))


def test_kernel_products_checks_and_stop():
    X = small_data()
    kp = KernelProducts(X, "rbf", 0.5)
    with pytest.raises(FastSVMError, match="out of range"):
        kp.matvec(np.array([0, 60], np.int32), np.array([1], np.int32), np.ones(1), np.zeros(2))
    with pytest.raises(FastSVMError, match="match"):
        kp.matvec(np.array([0], np.int32), np.array([1], np.int32), np.ones(2), np.zeros(1))
    with pytest.raises(FastSVMError, match="precomputed"):
        KernelProducts(X, "precomputed")
    stop = np.ones(1, dtype=np.int32)
    big = small_data(n=3000, p=20, density=0.5)
    rows = np.arange(3000, dtype=np.int32)
    with pytest.raises(KeyboardInterrupt):
        KernelProducts(big, "rbf", 0.1, stop=stop).matvec(rows, rows, np.ones(3000), np.zeros(3000))


def test_cache_pieces_twin():
    X = small_data(n=50)
    K = np_kernel(X, X, Kernel("rbf", gamma=0.3))
    cache = KernelCache(X, "rbf", 0.3, cache_bytes=4096)      # room for a few columns only
    stop = np.zeros(1, dtype=np.int32)
    wanted = np.array([7, 3, 41, 12, 0], dtype=np.int32)
    row_at = cache.move_to_front(wanted)
    np.testing.assert_array_equal(row_at[:5], wanted)
    assert sorted(row_at) == list(range(50))
    np.testing.assert_array_equal(cache.move_to_front(wanted), row_at)   # already in place
    L = 20
    Kp = K[np.ix_(row_at, row_at)]                                        # K by position
    positions = np.array([4, 0, 19, 2], dtype=np.int32)
    coef = np.array([1.5, -2.0, 0.0, 0.25])
    out = np.ones(L)
    cache.axpy_columns(positions, coef, L, out, stop)
    np.testing.assert_allclose(out, 1 + Kp[:L, positions] @ coef, atol=1e-7 * np.abs(coef).sum())  # float32
    np.testing.assert_allclose(cache.columns_block(positions, L, stop), Kp[np.ix_(positions, positions)], rtol=1e-6)
    assert cache.cached_mask(positions, L).dtype == bool
    with pytest.raises(FastSVMError, match="working set"):
        cache.columns_block(np.array([25], np.int32), L, stop)
    with pytest.raises(FastSVMError, match="distinct"):
        cache.move_to_front(np.array([1, 1], np.int32))


def test_cache_axpy_adds_cached_columns_four_at_a_time():
    """Columns already cached are added four at a time (one pass over out), the others one at
    a time as computed, in column order either way: the NumPy product, to float32 rounding."""
    X = small_data(n=60)
    K = np_kernel(X, X, Kernel("rbf", gamma=0.3))
    stop = np.zeros(1, dtype=np.int32)
    L = 40
    positions = np.array([5, 1, 33, 2, 8, 13, 21, 34, 0, 39, 17, 25], dtype=np.int32)
    coef = np.array([1.5, -2.0, 0.0, 0.25, 3.0, -1.0, 0.5, 2.0, -0.75, 1.25, 0.125, 0.3])   # groups 4, 4, 3
    for budget in (1 << 20, 1200):          # all columns kept; room for a few only
        cache = KernelCache(X, "rbf", 0.3, cache_bytes=budget)
        row_at = cache.move_to_front(np.zeros(0, dtype=np.int32))      # the rows by position
        Kp = K[np.ix_(row_at, row_at)]
        for _ in range(2):                  # computed, then (as far as they stay) cached
            if budget > 1200:
                cache.axpy_columns(positions[:6], np.ones(6), L, np.zeros(L), stop)   # some cached first
            out = np.linspace(-1.0, 1.0, L)
            cache.axpy_columns(positions, coef, L, out, stop)
            np.testing.assert_allclose(out, np.linspace(-1.0, 1.0, L) + Kp[:L, positions] @ coef,
                                       atol=1e-7 * np.abs(coef).sum())      # float32 columns


def test_working_set_products_cache_a_column_from_its_second_use():
    # Q_UU v: columns never used before go through the inverted-index product (most are needed
    # once), those used again (the free set's, Newton step after Newton step) into the cache
    X, y = small_data(n=300, p=9), np.where(np.arange(300) % 2, 1.0, -1.0)
    kernel = Kernel("rbf", gamma=0.3)
    dual = ssnal_kernel.kernel_dual(subproblem(X, y, kernel))
    cache = KernelCache(X, "rbf", 0.3, cache_bytes=1 << 22)
    products = KernelProducts(X, "rbf", 0.3)
    rows = np.arange(0, 300, 2)                     # U: 150 rows
    ws = WorkingSet(dual, cache, products, rows, np.zeros(dual.m), stop=np.zeros(1, np.int32), budget_bytes=1 << 22)
    v = np.zeros(ws.L)
    v[:100] = np.linspace(-1.0, 1.0, 100)          # 100 >= PRODUCTS_MIN_COLUMNS columns
    Q = np_kernel(X[ws.rows], X[ws.rows], kernel) * np.outer(ws.a, ws.a)
    for use in range(3):
        np.testing.assert_allclose(ws.qmul(v), Q @ v, rtol=1e-6, atol=1e-6)
        held = cache.cached_mask(np.arange(100, dtype=np.int32), ws.L)
        assert held.all() == (use >= 1) and held.any() == (use >= 1)


@pytest.mark.parametrize("signed", [False, True])
def test_cache_store_rounds_as_computed_columns_and_keeps_held_values(signed):
    X = small_data(n=30)
    K = np_kernel(X, X, Kernel("rbf", gamma=0.3))
    sign = np.where(np.arange(30) % 3, 1, -1).astype(np.int8) if signed else None
    computed = KernelCache(X, "rbf", 0.3, sign=sign)
    stored = KernelCache(X, "rbf", 0.3, sign=sign)
    stored.get_column(4, 10)                      # held on [0, 10): kept, not overwritten
    positions = np.array([4, 17], dtype=np.int32)
    values = K[positions][:, :20].copy()
    values[0, :10] = np.nan
    stored.store_columns(positions, values, 20)
    for i in positions:
        np.testing.assert_array_equal(stored.get_column(i, 20), computed.get_column(i, 20))
    assert stored.n_computed == 40                # 10 computed, 10 + 20 stored
    with pytest.raises(FastSVMError, match="working set"):
        stored.store_columns(np.array([25], np.int32), K[[25]], 20)
    with pytest.raises(FastSVMError, match="values"):
        stored.store_columns(positions, np.ascontiguousarray(values[:, :5]), 20)


def test_working_set_products_store_new_columns_in_chunks_under_a_tight_budget():
    # many columns used for the second time are cached a chunk at a time (KernelProducts.block,
    # cache_store) after the cached ones are used; a budget of a few columns drops most of them
    # again: the product stays exact
    X, y = small_data(n=300, p=9), np.where(np.arange(300) % 2, 1.0, -1.0)
    kernel = Kernel("rbf", gamma=0.3)
    dual = ssnal_kernel.kernel_dual(subproblem(X, y, kernel))
    rows = np.arange(0, 300, 2)
    for budget in (1 << 22, 1 << 12):
        cache = KernelCache(X, "rbf", 0.3, cache_bytes=budget)
        ws = WorkingSet(dual, cache, KernelProducts(X, "rbf", 0.3), rows, np.zeros(dual.m), stop=np.zeros(1, np.int32),
                        budget_bytes=budget, config=Config(store_values=700))     # chunks of 4 columns of 150
        Q = np_kernel(X[ws.rows], X[ws.rows], kernel) * np.outer(ws.a, ws.a)
        v = np.zeros(ws.L)
        v[:5] = 1.0
        np.testing.assert_allclose(ws.qmul(v), Q @ v, rtol=1e-6, atol=1e-6)   # 5 columns cached
        v[10:140] = np.linspace(-1.0, 1.0, 130)
        for _ in range(3):
            np.testing.assert_allclose(ws.qmul(v), Q @ v, rtol=1e-6, atol=1e-6)
        if budget == 1 << 22:
            assert cache.cached_mask(np.flatnonzero(v).astype(np.int32), ws.L).all()


@pytest.mark.parametrize("formulation", ["c_svc", "epsilon_svr"])
@pytest.mark.parametrize("system", ["dense", "block", "products", "sparse"])
def test_newton_direction_is_the_linear_solvers_in_feature_space(formulation, system):
    """delta, Q delta of the kernel form equal Z^T delta = d, Z d of the linear solver's Newton
    system (I + sigma Z_J^T P_J Z_J) d = -Z^T r, with Z any factor of Q = Z Z^T, whichever way
    the |J| x |J| system is solved (a float32 block: to its rounding)."""
    X = small_data(n=40, p=6)
    rng = np.random.default_rng(3)
    y = np.where(rng.random(40) < 0.5, 1.0, -1.0) if formulation == "c_svc" else rng.normal(size=40)
    kernel = Kernel("rbf", gamma=0.4)
    sub = subproblem(X, y, kernel, formulation)
    dual = ssnal_kernel.kernel_dual(sub)
    cache = KernelCache(X, "rbf", 0.4, cache_bytes=1 << 20)
    products = KernelProducts(X, "rbf", 0.4)
    config = Config()
    if system == "sparse":      # every value kept: the CG on the kept values solves the same system
        config = Config(sparse_min_rows=1, sparse_max_density=1.0, sparse_drop=0.0)
    if system != "dense":
        config = replace(config, always_dense_j=5, dense_j_max=5, kernel_cg_rtol=1e-12)
    budget = 4 * 15 * 15 - 1 if system == "products" else 1 << 20      # no block of order 15 fits
    ws = WorkingSet(dual, cache, products, np.arange(40), np.zeros(dual.m), stop=sub.stop, budget_bytes=budget,
                    rbf=system == "sparse", config=config)
    assert (ws.sparse is not None) == (system == "sparse")
    Q, _, a, _ = np_dual(np_kernel(X, X, kernel), y, formulation, 1.0)
    Q = Q[np.ix_(ws.vars, ws.vars)]
    a = a[ws.vars]
    lam, V = np.linalg.eigh(Q)
    Z = V * np.sqrt(np.maximum(lam, 0))
    r = rng.normal(size=dual.m)
    J = np.sort(rng.permutation(dual.m)[:15])
    sigma = 7.0
    counters = KernelCounters()
    delta, hdelta = newton_direction(ws, J, r, Q @ r, sigma, counters=counters)
    assert counters.systems[system] == 1
    aJ = a[J]
    P = np.eye(15) - np.outer(aJ, aJ) / (aJ @ aJ)
    ZJ = Z[J]
    H = np.eye(Z.shape[1]) + sigma * ZJ.T @ P @ ZJ
    d = np.linalg.solve(H, -Z.T @ r)
    atol = 1e-5 if system == "block" else 1e-6
    np.testing.assert_allclose(Z.T @ delta, d, atol=atol * np.abs(d).max())
    np.testing.assert_allclose(hdelta, Z @ d, atol=atol * np.abs(Z @ d).max())


# ---------------------------------------------------------------- paths over C

@pytest.mark.parametrize("formulation", ["c_svc", "epsilon_svr"])
def test_a_path_over_c_reaches_the_cold_optima(formulation):
    """solve_path on a kernel starts each C after the first from the last C's solution scaled into
    the new box (no explicit-feature warm start): every problem reaches its cold solve's optimum
    (dual objective within 1e-6 relative, eta <= tol by the NumPy twin)."""
    X, labels = load("heart_scale") if formulation == "c_svc" else load("housing_scale")
    y = as_pm(labels) if formulation == "c_svc" else labels
    kernel = Kernel("rbf", gamma=1.0 / X.shape[1])
    Cs = [0.25, 1.0, 4.0, 16.0]
    lines = []
    path = ssnal.SOLVER.solve_c_path(replace(subproblem(X, y, kernel, formulation), log=lines.append), Cs)
    cold = [ssnal.solve(subproblem(X, y, kernel, formulation, C=C)) for C in Cs]
    K = np_kernel(X, X, kernel)
    for C, warm, reference in zip(Cs, path, cold):
        Q, c, a, u = np_dual(K, y, formulation, C)
        x = dual_vector(warm, y, formulation)
        assert warm.status == "converged" and np_eta(Q, c, a, u, x) <= 2 * TOL
        assert np_objective(Q, c, x) == pytest.approx(np_objective(Q, c, dual_vector(reference, y, formulation)),
                                                      rel=1e-6)
        np.testing.assert_array_equal(warm.upper, np.full(X.shape[0], C))
    assert [s.details["warm_start"]["from"] for s in path] == \
        ["random Fourier features"] + ["the solution at other bounds"] * 3
    assert sum("warm start from the solution at other bounds" in line for line in lines) == 3


@pytest.mark.parametrize("system", ["dense", "block"])
def test_a_newton_block_takes_its_bytes_from_the_cache(system):
    """-m is one budget: while a Newton system's block (8 |J|^2 bytes, float32: 4 |J|^2) is formed
    and used, the cache holds at most the rest; after, its whole share is back. K_UU's kept
    values are charged the same way, for as long as the working set lives."""
    X, y = small_data(n=300, p=9), np.where(np.arange(300) % 3, 1.0, -1.0)
    dual = ssnal_kernel.kernel_dual(subproblem(X, y, Kernel("rbf", gamma=0.3)))
    full = 300 * 20 + 300 * 300 * 4                 # every column held, bookkeeping included
    budget = full + 1000
    cache = KernelCache(X, "rbf", 0.3, cache_bytes=budget)
    config = Config(always_dense_j=1000) if system == "dense" else Config(always_dense_j=5, dense_j_max=5)
    ws = WorkingSet(dual, cache, KernelProducts(X, "rbf", 0.3), np.arange(300), np.zeros(dual.m),
                    stop=np.zeros(1, np.int32), budget_bytes=budget, config=config)
    for i in range(300):
        cache.get_column(i)
    assert cache.held_bytes == full
    held_while_formed = []
    q_block = ws.q_block

    def spy(J, dtype=np.float64):
        held_while_formed.append(cache.held_bytes)
        return q_block(J, dtype)

    ws.q_block = spy
    J = np.arange(0, 300, 2)
    r = np.random.default_rng(0).normal(size=dual.m)
    counters = KernelCounters()
    newton_direction(ws, J, r, ws.qmul(r), 5.0, counters=counters)
    assert counters.systems[system] == 1
    block_bytes = (8 if system == "dense" else 4) * 150 * 150
    assert held_while_formed and max(held_while_formed) <= budget - block_bytes
    for i in range(300):
        cache.get_column(i)
    assert cache.held_bytes == full

    kept = WorkingSet(dual, cache, KernelProducts(X, "rbf", 0.3), np.arange(300), np.zeros(dual.m),
                      stop=np.zeros(1, np.int32), budget_bytes=budget, rbf=True,
                      config=Config(sparse_min_rows=1, sparse_max_density=1.0, sparse_drop=0.9 * 300))
    for i in range(300):                            # the values >= 0.9 kept: the diagonal and a few more
        cache.get_column(i)
    assert kept.sparse is not None and cache.held_bytes + kept.sparse.nbytes <= budget


def test_a_warm_subproblem_starts_from_its_solution():
    """Subproblem.warm is honoured by solve: from its own solution a problem needs fewer Newton
    steps; another solver's solution (SMO's alpha) serves as a start as well."""
    X, labels = load("heart_scale")
    y = as_pm(labels)
    kernel = Kernel("rbf", gamma=1.0 / X.shape[1])
    sub = subproblem(X, y, kernel, C=2.0)
    first = ssnal.solve(sub)
    again = ssnal.solve(replace(sub, warm=first))
    assert again.objective == pytest.approx(first.objective, rel=1e-6)
    assert again.details["newton"] < first.details["newton"]
    smo = get_solver("smo").solve(replace(sub, params=replace(sub.params, solver="smo", tol=1e-5)))
    from_smo = ssnal.solve(replace(sub, warm=smo))
    assert from_smo.details["warm_start"]["from"] == "the solution at other bounds"
    assert from_smo.objective == pytest.approx(first.objective, rel=1e-6)


# ---------------------------------------------------------------- determinism, cache, stop

def test_same_seed_same_model_for_any_thread_count():
    X, labels = load("a9a", 1500)
    y = as_pm(labels)
    kernel = Kernel("rbf", gamma=1 / 123)
    runs = [ssnal.solve(subproblem(X, y, kernel, tol=1e-4, threads=t)) for t in (1, 2, 1)]
    for sol in runs[1:]:
        np.testing.assert_array_equal(sol.coef, runs[0].coef)
        assert sol.rho == runs[0].rho and sol.stop_measure == runs[0].stop_measure
    # another seed: another random Fourier map, another warm start, the same optimum
    other = ssnal.solve(subproblem(X, y, kernel, tol=1e-4, seed=12345))
    assert not np.array_equal(other.coef, runs[0].coef)
    assert other.objective == pytest.approx(runs[0].objective, rel=1e-4)


@pytest.mark.parametrize("warm", ["rff", "nystroem"])
def test_warm_start_maps(warm):
    """The warm start: an RFF (or Nystroem) problem solved by the linear SSsNAL; its dual vector
    is feasible for (P) and already close to the kernel optimum."""
    X, labels = load("heart_scale")
    y = as_pm(labels)
    kernel = Kernel("rbf", gamma=1 / 13)
    sub = subproblem(X, y, kernel)
    x0, sigma0, linear = warm_start(sub, 256, 1e-4, warm)
    assert linear.stop_measure <= 1e-4 and sigma0 > 0
    assert abs(y @ x0) <= 1e-9 and x0.min() >= 0 and x0.max() <= 1.0
    Q, c, a, u = np_dual(np_kernel(X, X, kernel), y, "c_svc", 1.0)
    assert np_eta(Q, c, a, u, x0) < 0.1
    sol = ssnal.solve(subproblem(X, y, kernel, warm=warm, rff=256))
    assert np_eta(Q, c, a, u, dual_vector(sol, y, "c_svc")) <= TOL


def test_early_rounds_stop_at_a_fraction_of_the_whole_eta(monkeypatch):
    """A round solves its working set to ROUND_REDUCTION times the whole problem's eta at the
    round's start (tol / 2 at the least): the rows joining next move that solution again. The
    first round's target is the NumPy twins' for the warm start's x0."""
    X, labels = load("mushrooms", 3000)
    y = as_pm(labels)
    kernel = Kernel("rbf", gamma=1 / 112)
    tol = 1e-3
    targets = []
    solve_working_set = kernel_inner.solve_working_set

    def recording(ws, x, hx, sigma, target, **kw):
        targets.append(target)
        return solve_working_set(ws, x, hx, sigma, target, **kw)

    monkeypatch.setattr(ssnal_kernel, "solve_working_set", recording)
    sol = ssnal.solve(subproblem(X, y, kernel, tol=tol))
    Q, c, a, u = np_dual(np_kernel(X, X, kernel), y, "c_svc", 1.0)
    x = dual_vector(sol, y, "c_svc")
    assert sol.status == "converged" and np_eta(Q, c, a, u, x) <= tol
    # the first round's target from the warm start's x0, by the NumPy twins
    x0 = warm_start(subproblem(X, y, kernel, tol=tol), Config.rff, max(Config.warm_tol, tol))[0]
    scale = 1.0 + np.linalg.norm(x0) + np.linalg.norm(Q @ x0 + c)
    assert targets[0] == pytest.approx(Config.round_reduction * np_eta(Q, c, a, u, x0) * scale, rel=1e-6)
    assert targets[0] > 0.5 * tol * scale
    tight = ssnal.solve(subproblem(X, y, kernel, tol=tol, config=Config(round_reduction=0.0)))
    assert sol.details["newton"] < tight.details["newton"]


def np_working_rows(Q, c, a, u, x, *, limit):
    """The rows with a free variable or a KKT violation at b = the projection's multiplier, the
    `limit` largest violations |x - clip(x - (grad + b a), 0, u)| (ties by row): the twin of
    kernel.working_rows for C-SVC."""
    grad = Q @ x + c
    lo, hi = -1e3, 1e3
    for _ in range(200):         # b: the multiplier of the projection of x - grad
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if a @ np.clip(x - grad - mid * a, 0, u) > 0 else (lo, mid)
    margin = grad + 0.5 * (lo + hi) * a
    violation = np.abs(x - np.clip(x - margin, 0, u))
    free = (x > 0) & (x < u)
    rows = list(np.flatnonzero(free | (violation > 0)))
    return sorted(sorted(rows, key=lambda r: -violation[r])[:limit])


def test_rows_join_the_working_set_most_violating_first():
    """At most Config.kernel_join_max rows join the working set a round, the largest KKT violations
    first (the NumPy twin picks the same rows), and the capped solve reaches the same optimum."""
    X, labels = load("mushrooms", 1000)
    y = as_pm(labels)
    kernel = Kernel("rbf", gamma=0.05)
    Q, c, a, u = np_dual(np_kernel(X, X, kernel), y, "c_svc", 1.0)
    x = np.clip(np.random.default_rng(1).normal(0.5, 0.6, 1000), 0.0, 1.0)
    x -= (a @ x) / 1000 * a                      # a^T x = 0, inside the box up to the clip below
    x = np.clip(x, 0.0, 1.0)
    dual = ssnal_kernel.kernel_dual(subproblem(X, y, kernel))
    grad = Q @ x + c
    b = dual.K.project(x - grad)[1]
    for limit in (None, 1000, 120, 7):
        rows = ssnal_kernel.working_rows(dual, x, grad, b, 0.0, limit=limit)
        expected = np_working_rows(Q, c, a, u, x, limit=1000 if limit is None else limit)
        assert rows.tolist() == expected
    reference = ssnal.solve(subproblem(X, y, kernel))
    capped = ssnal.solve(subproblem(X, y, kernel, config=Config(kernel_join_max=60)))
    sizes = [h["working_set"] for h in capped.history]
    assert len(sizes) > 3 and all(0 < b - a <= 60 for a, b in zip(sizes[:-1], sizes[1:]) if b != a)
    assert np_eta(Q, c, a, u, dual_vector(capped, y, "c_svc")) <= TOL
    assert capped.objective == pytest.approx(reference.objective, rel=1e-7)


def test_tiny_cache_and_cg_give_the_same_optimum():
    """A cache of a few columns (everything recomputed), CG Newton directions on a float32 block
    and CG on products computed on the fly reach the optimum of the default run."""
    X, labels = load("mushrooms", 800)
    y = as_pm(labels)
    kernel = Kernel("rbf", gamma=1 / 112)
    Q, c, a, u = np_dual(np_kernel(X, X, kernel), y, "c_svc", 1.0)
    reference = ssnal.solve(subproblem(X, y, kernel))
    sub = subproblem(X, y, kernel)
    sub.params.cache_size = 0.01
    tiny = ssnal.solve(sub)
    small_j = Config(always_dense_j=10, dense_j_max=10)
    block = ssnal.solve(subproblem(X, y, kernel, config=small_j))
    assert block.details["systems"]["block"] > 0 and block.details["systems"]["products"] == 0
    sub = subproblem(X, y, kernel, config=small_j)
    sub.params.cache_size = 0.001     # no block of order > 16 fits: products on the fly
    cg = ssnal.solve(sub)
    assert cg.details["systems"]["products"] > 0
    for sol in (tiny, block, cg):
        assert np_eta(Q, c, a, u, dual_vector(sol, y, "c_svc")) <= TOL
        assert sol.objective == pytest.approx(reference.objective, rel=1e-7)


def test_stop_flag_raises_keyboard_interrupt():
    X, labels = load("a9a", 1500)
    y = as_pm(labels)
    kernel = Kernel("rbf", gamma=1 / 123)
    sub = subproblem(X, y, kernel)
    sub.stop[0] = 1
    with pytest.raises(KeyboardInterrupt):
        ssnal.solve(sub)
    # set in the middle of the exact-kernel phase (from the progress callback)
    sub = subproblem(X, y, kernel)
    lines = []

    def log(line):
        lines.append(line)
        if line.startswith("ssnal: round 1"):
            sub.stop[0] = 1

    sub.log = log
    with pytest.raises(KeyboardInterrupt):
        ssnal.solve(sub)
    assert lines[-1].startswith("ssnal: round 1")


def test_stop_flag_from_another_thread_is_seen_within_a_second():
    X, labels = load("a9a")
    y = as_pm(labels)
    sub = subproblem(X, y, Kernel("rbf", gamma=1 / 123), tol=1e-12)
    sub.params.max_iter = 10_000
    timer = threading.Timer(0.3, lambda: sub.stop.__setitem__(0, 1))
    timer.start()
    import time
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        ssnal.solve(sub)
    assert time.perf_counter() - start < 0.3 + 1.0
    timer.join()


def test_progress_lines_and_summary():
    X, labels = load("heart_scale")
    sub = subproblem(X, as_pm(labels), Kernel("rbf", gamma=1 / 13))
    lines = []
    sub.log = lines.append
    sol = ssnal.solve(sub)
    iters = [line for line in lines if line.startswith("ssnal: iter")]
    rounds = [line for line in lines if line.startswith("ssnal: round")]
    assert len(iters) == sol.n_iter >= 1 and len(rounds) == sol.details["rounds"] >= 2
    for line in iters:
        for field in ("KKT residual on the", "working rows", "this round stops at", "objective", "sigma",
                      "Newton steps on", "free variables"):
            assert field in line
    for line in rounds:
        for field in ("KKT residual", "(stops at", "objective", "duality gap", "working rows"):
            assert field in line
    # the objective of the last AL iteration is that of the solution
    assert float(iters[-1].split("objective ")[1].split()[0]) == pytest.approx(sol.objective, rel=1e-9)
    assert any(line.startswith("warm start: ") for line in lines)
    assert any(line.startswith("ssnal: warm start (random Fourier features, D = ") for line in lines)
    assert sol.history and sol.history[-1]["eta"] == sol.stop_measure
    lines.clear()                                      # the summary names the map used
    sub.params = replace(sub.params, options={"warm": "nystroem"})
    ssnal.solve(sub)
    assert any(line.startswith("ssnal: warm start (Nystroem, D = ") for line in lines)


def test_sigmoid_kernel_gives_a_kkt_point_or_a_clear_error():
    """The sigmoid kernel matrix is indefinite here: SSsNAL either reaches a KKT point of the
    (nonconvex) dual, as LIBSVM's SMO does, when the working sets' blocks are positive
    definite, or stops with a clear error."""
    X, labels = load("heart_scale")
    y = as_pm(labels)
    for coef0 in (0.0, 1.0, -1.0):
        kernel = Kernel("sigmoid", gamma=1 / 13, coef0=coef0)
        K = np_kernel(X, X, kernel)
        assert np.linalg.eigvalsh(K)[0] < -0.1
        try:
            sol = ssnal.solve(subproblem(X, y, kernel))
        except FastSVMError as error:
            assert "positive semidefinite" in str(error)
            continue
        Q, c, a, u = np_dual(K, y, "c_svc", 1.0)
        assert np_eta(Q, c, a, u, dual_vector(sol, y, "c_svc")) <= TOL


def test_dense_newton_system_when_only_the_projected_matrix_is_definite():
    # I + sigma Q indefinite along a (possible for a sigmoid kernel), I + sigma P Q P definite:
    # the bordered solve fails and the projected matrix is factored instead
    rng = np.random.default_rng(5)
    n, sigma = 12, 2.0
    a = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    P = np.eye(n) - np.outer(a, a) / n
    B = rng.normal(size=(n, n))
    for Q in (P @ B @ B.T @ P, P @ B @ B.T @ P - 3.0 * np.outer(a, a) / n):
        t = P @ rng.normal(size=n)
        z = dense_solve(lambda Q=Q: Q.copy(), t, a, float(n), sigma)
        np.testing.assert_allclose(z, np.linalg.solve(np.eye(n) + sigma * P @ Q @ P, t), rtol=1e-9, atol=1e-12)
    with pytest.raises(FastSVMError, match="positive semidefinite"):
        dense_solve(lambda: -np.eye(n), t, a, float(n), sigma)


# ---------------------------------------------------------------- errors

def test_bad_input_gives_clear_errors():
    X, labels = load("heart_scale")
    y = as_pm(labels)
    sigmoid = Kernel("sigmoid", gamma=1 / 13, coef0=-1.0)   # indefinite on these rows
    dual = ssnal_kernel.kernel_dual(subproblem(X, y, sigmoid))
    cache = KernelCache(X, "sigmoid", 1 / 13, coef0=-1.0)
    products = KernelProducts(X, "sigmoid", 1 / 13, coef0=-1.0)
    ws = WorkingSet(dual, cache, products, np.arange(dual.n), np.zeros(dual.m), stop=np.zeros(1, np.int32),
                    budget_bytes=1 << 30)
    r = np.ones(dual.m)
    with pytest.raises(FastSVMError, match="positive semidefinite"):
        newton_direction(ws, np.arange(dual.m), r, ws.qmul(r), 1e3, counters=KernelCounters())
    with pytest.raises(ParameterError, match="unknown option"):
        ssnal.solve(subproblem(X, y, Kernel("rbf", gamma=0.1), bogus=1))
    with pytest.raises(ParameterError, match="rff"):
        ssnal.solve(subproblem(X, y, Kernel("rbf", gamma=0.1), rff=0))
    with pytest.raises(ParameterError, match="warm"):
        ssnal.solve(subproblem(X, y, Kernel("rbf", gamma=0.1), warm="fourier"))
    with pytest.raises(ParameterError, match="precomputed"):
        ssnal.solve(subproblem(X, y, Kernel("precomputed")))
    with pytest.raises(ParameterError, match="nu_svc"):
        ssnal.solve(Subproblem("nu_svc", X, y, np.ones(y.size), Kernel("rbf", gamma=0.1),
                                      Params(solver="ssnal")))
    with pytest.raises(FastSVMError, match="labels"):
        ssnal.solve(subproblem(X, 2 * y, Kernel("rbf", gamma=0.1)))


# ---------------------------------------------------------------- through the front doors

def test_registered_as_ssnal_for_nonlinear_kernels():
    spec = get_solver("ssnal")
    assert {"rbf", "polynomial", "sigmoid", "linear"} <= set(spec.kernels)
    X, labels = load("heart_scale")
    sub = subproblem(X, as_pm(labels), Kernel("rbf", gamma=1 / 13))
    np.testing.assert_array_equal(spec.solve(sub).coef, ssnal.solve(sub).coef)


def test_cli_train_rbf_and_predict(tmp_path):
    data = shared_file("heart_scale")
    model = tmp_path / "heart.model"
    bin_dir = Path(sys.executable).parent
    trained = subprocess.run([str(bin_dir / "fastsvm-train"), "-s", "ssnal", "-t", "2", "-e", "1e-6", str(data),
                              str(model)], capture_output=True, text=True, timeout=300)
    assert trained.returncode == 0, trained.stderr
    assert "ssnal: round" in trained.stdout and "optimization finished" in trained.stdout
    out = tmp_path / "heart.out"
    predicted = subprocess.run([str(bin_dir / "fastsvm-predict"), str(data), str(model), str(out)],
                               capture_output=True, text=True, timeout=300)
    assert predicted.returncode == 0, predicted.stderr
    # LIBSVM reads the model and predicts as LIBSVM's own model does
    y, x = svmutil.svm_read_problem(str(data))
    with libsvm_one_thread():
        ours, _, _ = svmutil.svm_predict(y, x, svmutil.svm_load_model(str(model)), "-q")
        theirs, _, _ = svmutil.svm_predict(y, x, svmutil.svm_train(y, x, "-t 2 -e 1e-6 -q"), "-q")
    np.testing.assert_array_equal(np.loadtxt(out), ours)
    assert np.mean(np.asarray(ours) == np.asarray(theirs)) >= 0.999


def test_estimator_solver_ssnal_rbf_equals_smo():
    X, labels = load("heart_scale")
    ours = fastsvm.SVC(solver="ssnal", kernel="rbf", gamma=1 / 13, tol=TOL).fit(X, labels)
    ref = fastsvm.SVC(kernel="rbf", gamma=1 / 13, tol=TOL).fit(X, labels)
    assert ours.model_.info["solver"] == "ssnal"
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=1e-4)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-4)
    reg = fastsvm.SVR(solver="ssnal", kernel="poly", degree=2, gamma=0.1, coef0=1.0, tol=TOL)
    X, t = load("housing_scale")
    np.testing.assert_allclose(reg.fit(X, t).predict(X),
                               fastsvm.SVR(kernel="poly", degree=2, gamma=0.1, coef0=1.0, tol=TOL).fit(X, t).predict(X),
                               atol=1e-3)


def test_multiclass_one_vs_one():
    X, labels = load("iris.scale")
    model = fastsvm.fit_model(X, labels, Params(solver="ssnal", kernel_type="rbf", tol=TOL, n_jobs=2))
    ref = fastsvm.fit_model(X, labels, Params(solver="smo", kernel_type="rbf", tol=TOL))
    np.testing.assert_array_equal(fastsvm.predict(model, X), fastsvm.predict(ref, X))
    np.testing.assert_allclose(decision_values(model, X), decision_values(ref, X), atol=1e-4)


# ---------------------------------------------------------------- larger problems (slow)

def np_gradient_blocked(X, y, x, kernel, block=2000):
    """Q x + c for C-SVC with K from scikit-learn, computed in blocks of rows (no n x n matrix)."""
    support = np.flatnonzero(x)
    beta = (y * x)[support]
    Xs = X[support]
    h = np.concatenate([np_kernel(X[lo:lo + block], Xs, kernel) @ beta for lo in range(0, X.shape[0], block)])
    return y * h - 1.0


@pytest.mark.slow
@pytest.mark.parametrize("name,rows", [("a9a", 32561), ("w8a", 15000), ("ijcnn1.xz", 15000)])
def test_larger_problems_reach_smos_optimum(name, rows):
    import lzma
    path = shared_file(name)
    with (lzma.open(path) if name.endswith(".xz") else open(path, "rb")) as f:
        X, labels = load_svmlight_file(f, zero_based=False)
    X = to_csr(X)
    keep = np.sort(np.random.default_rng(0).permutation(X.shape[0])[:rows])
    X, y = to_csr(X[keep]), as_pm(labels[keep])
    kernel = Kernel("rbf", gamma=1.0 / X.shape[1])
    sol = ssnal.solve(subproblem(X, y, kernel, threads=2))
    smo = get_solver("smo").solve(subproblem(X, y, kernel))
    x = dual_vector(sol, y, "c_svc")
    grad = np_gradient_blocked(X, y, x, kernel)
    a, u = y, np.ones(X.shape[0])
    proj = np_project(x - grad, a, u)
    eta = np.linalg.norm(x - proj) / (1 + np.linalg.norm(x) + np.linalg.norm(grad))
    assert eta <= TOL
    f_ours = 0.5 * x @ (grad + 1.0) - x.sum()
    assert abs(f_ours - smo.objective) <= 1e-6 * abs(smo.objective)
    K_sv = np_kernel(X, X[np.flatnonzero(sol.coef)], kernel)
    ours = np.sign(K_sv @ sol.coef[np.flatnonzero(sol.coef)] - sol.rho)
    theirs = np.sign(np_kernel(X, X[np.flatnonzero(smo.coef)], kernel) @ smo.coef[np.flatnonzero(smo.coef)] - smo.rho)
    assert np.mean(ours == theirs) >= 0.999


@pytest.mark.parametrize("positions", [[3], [-1], [0, 2, 3]])
def test_cache_products_refuse_positions_outside_the_working_set(positions):
    X = small_data(n=10, p=4)
    cache = KernelCache(X, "rbf", 0.3, cache_bytes=1 << 16)
    out = np.zeros(3)
    with pytest.raises(FastSVMError, match="position outside the working set"):
        cache.axpy_columns(np.array(positions, dtype=np.int32), np.ones(len(positions)), 3, out,
                           np.zeros(1, dtype=np.int32))
    cache.axpy_columns(np.array([0, 2], dtype=np.int32), np.ones(2), 3, out, np.zeros(1, dtype=np.int32))
    assert np.all(out > 0)

def spread_data(n=2000, seed=0):
    """Points spread far apart relative to 1 / sqrt(gamma) = 2 (as unscaled features are): almost
    every RBF value underflows and almost every row is a free support vector."""
    rng = np.random.default_rng(seed)
    D = rng.uniform(0.0, 60.0, size=(n, 4))
    y = np.where(D[:, 0] + D[:, 1] + rng.normal(scale=12.0, size=n) > 60.0, 1.0, -1.0)
    return to_csr(sp.csr_matrix(D)), y


def test_numerically_sparse_kernel_is_held_sparse():
    """A numerically sparse K_UU is held sparse and its Newton systems solved by CG on the kept
    values: the optimum is LIBSVM's and the dense path's, eta recomputed here."""
    X, y = spread_data()
    kernel = Kernel("rbf", gamma=0.25)
    Q, c, a, u = np_dual(np_kernel(X, X, kernel), y, "c_svc", 1.0)
    assert np.mean(np.abs(Q) >= 1e-16) < 0.02
    held = ssnal.solve(subproblem(X, y, kernel))
    assert held.details["systems"]["sparse"] > 0 and held.details["systems"]["products"] == 0
    dense = ssnal.solve(subproblem(X, y, kernel, config=Config(sparse_max_density=0.0)))
    assert dense.details["systems"]["sparse"] == 0
    x_lib = libsvm_solution(X, y, kernel, "c_svc", 1.0)[0]
    f_lib = np_objective(Q, c, x_lib)
    for sol in (held, dense):
        x = dual_vector(sol, y, "c_svc")
        assert np_eta(Q, c, a, u, x) <= TOL and sol.stop_measure <= TOL
        assert np_objective(Q, c, x) == pytest.approx(f_lib, rel=1e-6)
        assert sol.objective == pytest.approx(np_objective(Q, c, x), rel=1e-6)


def test_well_conditioned_newton_systems_take_cg():
    """Binary rows with few features in common and a large gamma: K is dense but diagonally
    dominant, so Gershgorin bounds every Newton system's condition number by CG_CONDITION and
    CG replaces Cholesky: on a formed block where it fits the budget, on products computed on
    the fly only where it does not. The row sums behind the bound are NumPy's; the optimum is
    LIBSVM's and the Cholesky path's."""
    rng = np.random.default_rng(11)
    n, p = 1500, 100
    cols = np.concatenate([rng.choice(p, 15, replace=False) for _ in range(n)])
    X = to_csr(sp.csr_matrix((np.ones(15 * n), cols, np.arange(0, 15 * n + 1, 15)), shape=(n, p)))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    kernel = Kernel("rbf", gamma=0.5)
    Q, c, a, u = np_dual(np_kernel(X, X, kernel), y, "c_svc", 1.0)
    assert np.mean(Q != 0.0) > 0.9                   # not numerically sparse: no SparseKernel
    sub = subproblem(X, y, kernel)
    dual = ssnal_kernel.kernel_dual(sub)

    def working_set(budget):
        return WorkingSet(dual, KernelCache(X, "rbf", 0.5, cache_bytes=budget), KernelProducts(X, "rbf", 0.5),
                          np.arange(n), np.zeros(n), stop=sub.stop, budget_bytes=budget, rbf=True)

    ws = working_set(1 << 24)
    J = np.sort(rng.permutation(n)[:700])
    QJ = Q[np.ix_(ws.vars[J], ws.vars[J])]
    np.testing.assert_allclose(ws.row_sums(J), np.abs(QJ).sum(axis=1), rtol=1e-6)
    radius = np.abs(QJ).sum(axis=1).max() - 1.0
    assert (1 + radius) / (1 - radius) <= Config.cg_condition and well_conditioned(ws, J)
    held = ssnal.solve(subproblem(X, y, kernel))
    systems = held.details["systems"]
    assert systems["block"] > 0 and systems["products"] == 0 and systems["sparse"] == 0
    assert system_method(working_set(4 * 700 * 700), J, 10.0) == "block"
    assert system_method(working_set(4 * 700 * 700 - 1), J, 10.0) == "products"
    sub = subproblem(X, y, kernel)
    sub.params.cache_size = 1.0       # blocks of order > 512 do not fit
    columns = ssnal.solve(sub)
    assert columns.details["systems"]["products"] > 0
    dense = ssnal.solve(subproblem(X, y, kernel, config=Config(cg_condition=0.0)))
    assert dense.details["systems"]["products"] == dense.details["systems"]["block"] == 0
    f_lib = np_objective(Q, c, libsvm_solution(X, y, kernel, "c_svc", 1.0)[0])
    for sol in (held, columns, dense):
        x = dual_vector(sol, y, "c_svc")
        assert np_eta(Q, c, a, u, x) <= TOL and sol.stop_measure <= TOL
        assert np_objective(Q, c, x) == pytest.approx(f_lib, rel=1e-6)


# ---------------------------------------------------------------- the hand-over to block_smo

def free_data(n=120, p=5, seed=3):
    """Gaussian points and labels with much noise: at a large gamma and C nearly every
    variable is a free support vector (the free set, and so every Newton system, is large)."""
    rng = np.random.default_rng(seed)
    D = rng.normal(size=(n, p))
    y = np.where(D[:, 0] + rng.normal(scale=1.0, size=n) > 0, 1.0, -1.0)
    return to_csr(sp.csr_matrix(D)), y


def assert_libsvm_optimum(sol, X, y, kernel, C, *, tol):
    """The solution's dual objective (recomputed with scikit-learn's kernel) is SMO's within 1e-6
    relative, its own final maximal violation is at most tol, and the one recomputed here at its
    dual vector too, but for the rounding of block_smo's float32 kernel rows."""
    from fastsvm.problems.libsvm_dual import max_violation
    x = dual_vector(sol, y, "c_svc")
    Q, c, _, _ = np_dual(np_kernel(X, X, kernel), y, "c_svc", C)
    smo = get_solver("smo").solve(subproblem(X, y, kernel, C=C, tol=tol))
    assert np_objective(Q, c, x) == pytest.approx(smo.objective, rel=1e-6)
    signs = y.astype(np.int8)
    assert sol.stop_measure <= tol
    assert max_violation(x, Q @ x + c, signs, np.full(len(y), C), False) <= 1.5 * tol


# any solve is past its share, after the warm start
HANDOVER_NOW = Config(handover_min_variables=0, handover_rows=1e-12, handover_at_once=0.0)


def test_hands_over_to_block_smo_where_the_free_set_is_large():
    X, y = free_data()
    kernel, C = Kernel("rbf", gamma=2.0), 100.0
    lines = []
    sub = subproblem(X, y, kernel, C=C, config=HANDOVER_NOW)
    sub.log = lines.append
    sol = ssnal.solve(sub)
    said = [line for line in lines if "handing over to block_smo" in line]
    assert len(said) == 1 and "-o handover=0" in said[0] and "free" in said[0]
    # the budget bounds the warm start too: it stops before its first Newton step, block_smo from 0
    assert any("warm start (random Fourier features, D = 128) stopped at the hand-over budget" in line
               for line in lines)
    assert "after the warm start" in said[0] and "from 0" in said[0]
    handover = sol.details["handover"]
    assert handover["solver"] == "block_smo" and sol.status == "converged" and not handover["warm"]
    assert sol.stop_measure <= TOL and sol.dual.shape == (X.shape[0],)
    x = sol.dual
    assert np.count_nonzero((x > 0) & (x < C)) > 0.5 * X.shape[0]      # the free set is large
    assert_libsvm_optimum(sol, X, y, kernel, C, tol=TOL)


def test_linear_solve_stops_at_its_deadline():
    """The warm start's linear solve takes no Newton step past its deadline: its last center
    (x = 0 before the first) with status max_iter; without one it converges."""
    import time
    from fastsvm.solvers.ssnal.linear import solve_linear
    X, y = free_data()
    sub = subproblem(X, y, Kernel("linear"), C=1.0)
    stopped = solve_linear(sub, Config(), merge=False, deadline=time.perf_counter())
    assert stopped.status == "max_iter" and not np.any(stopped.dual) and stopped.details["out_of_time"]
    done = solve_linear(sub, Config(), merge=False)
    assert done.status == "converged" and not done.details["out_of_time"]


def test_hands_over_its_point_during_the_rounds(monkeypatch):
    """A hand-over during the rounds (here the fourth check of the budget, made to pass) starts
    block_smo from the current point when its objective is below 0's, and reaches the optimum."""
    from fastsvm.solvers.ssnal import handover
    calls = []

    def reason(self, next_step=0.0, free=0):
        calls.append(free)
        return "made to pass in this test" if len(calls) >= 4 else None

    monkeypatch.setattr(handover.HandoverBudget, "reason", reason)
    X, y = free_data()
    kernel, C = Kernel("rbf", gamma=2.0), 100.0
    lines = []
    sub = subproblem(X, y, kernel, C=C, config=Config(handover_min_variables=0, handover_at_once=0.0))
    sub.log = lines.append
    sol = ssnal.solve(sub)
    said = [line for line in lines if "handing over to block_smo" in line]
    assert len(said) == 1 and "at round" in said[0] and "made to pass in this test" in said[0]
    assert sol.details["handover"]["warm"] == (sol.history[-1]["dual"] < 0.0)
    assert sol.details["newton"] > 0 and len(calls) == 4
    assert_libsvm_optimum(sol, X, y, kernel, C, tol=TOL)


def test_hands_over_at_once_where_the_blocked_solve_is_estimated_quick():
    """A blocked solve estimated under Config.handover_at_once is handed over before the warm
    start, from 0, and reaches LIBSVM's optimum; with the threshold at 0 the same problem is
    SSsNAL's own."""
    X, y = free_data()
    kernel, C = Kernel("rbf", gamma=2.0), 100.0
    for at_once, handed in ((1e9, True), (0.0, False)):
        lines = []
        sub = subproblem(X, y, kernel, C=C, config=Config(handover_min_variables=0, handover_at_once=at_once))
        sub.log = lines.append
        sol = ssnal.solve(sub)
        said = [line for line in lines if "handing over to block_smo" in line]
        assert any("warm start" in line for line in lines) != handed   # no warm start when handed at once
        if handed:
            assert len(said) == 1 and "at once" in said[0] and "from 0" in said[0]
            assert sol.details["handover"]["solver"] == "block_smo" and not sol.details["handover"]["warm"]
            assert_libsvm_optimum(sol, X, y, kernel, C, tol=TOL)
        else:
            assert not any("at once" in line for line in said)


def test_option_handover_0_forbids_the_hand_over():
    X, y = free_data()
    kernel, C = Kernel("rbf", gamma=2.0), 100.0
    lines = []
    sub = subproblem(X, y, kernel, C=C, tol=1e-4, config=HANDOVER_NOW, handover=0)
    sub.log = lines.append
    sol = ssnal.solve(sub)
    assert "handover" not in sol.details and not any("handing over" in line for line in lines)
    Q, c, a, u = np_dual(np_kernel(X, X, kernel), y, "c_svc", C)
    assert np_eta(Q, c, a, u, dual_vector(sol, y, "c_svc")) <= 1e-4 and sol.stop_measure <= 1e-4
    with pytest.raises(ParameterError, match="handover"):
        ssnal.solve(subproblem(X, y, kernel, C=C, handover=2))


def test_no_hand_over_on_small_problems_by_default():
    """Below Config.handover_min_variables the solve is SSsNAL's own, however its time compares."""
    X, y = free_data()
    lines = []
    sub = subproblem(X, y, Kernel("rbf", gamma=2.0), C=100.0, tol=1e-4)
    sub.log = lines.append
    sol = ssnal.solve(sub)
    assert "handover" not in sol.details and not any("handing over" in line for line in lines)


def test_budget_passes_where_a_large_free_set_makes_the_next_newton_step_dear():
    """The budget's rule alone: the time spent plus the next Newton step's predicted seconds
    (the last step's, grown as |J|^3 above cubic_from) against the share of the estimate."""
    import time
    from fastsvm.solvers.ssnal.handover import HandoverBudget, StepClock
    clock = StepClock(cubic_from=400)
    clock.record(0.01, 100)
    assert clock.predict(300) == pytest.approx(0.01)              # small systems: the last step's
    assert clock.predict(4000) == pytest.approx(0.01 * 10 ** 3)    # from 400 on: cubic
    budget = HandoverBudget(start=time.perf_counter(), row_seconds=1e-3, rows_per_support=2.0,
                            min_rows=2048, share=0.5, support=1000)
    assert budget.blocked_seconds() == pytest.approx(2.0 * 2048 * 1e-3)
    assert budget.reason(clock.predict(300), 300) is None             # a small free set: no hand-over
    said = budget.reason(clock.predict(4000), 4000)
    assert said is not None and "4000 free variables" in said and "4.10s" in said
