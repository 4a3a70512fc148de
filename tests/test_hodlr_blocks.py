"""The hierarchical kernel approximation (fastsvm.kernels.hodlr, fastsvm._core._hodlr_blocks) against the dense
kernel of fastsvm._core._kernel.kernel_matrix: the kernel blocks and the ACA against NumPy twins,
K~ against K, the solve and the product against a NumPy assembly of K~ from the stored blocks,
the permutation, the positive-definiteness check, dense = CSR, threads, the stop flag, memory."""
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import shared_file
from fastsvm._core._hodlr_blocks import aca, kernel_block
from fastsvm._core._kernel import kernel_matrix, row_sqnorms
from fastsvm.csr import to_csr
from fastsvm.files.datafile import load_svmlight_file
from fastsvm.errors import FastSVMError, ParameterError
from fastsvm.kernels.hodlr import HODLRFactor, cluster_tree, estimate_bytes
from fastsvm.parallel import one_blas_thread
from fastsvm.solvers.base import Kernel

RBF = Kernel("rbf", gamma=0.2)


def blobs(n=1500, dim=3, seed=0):
    return np.random.default_rng(seed).standard_normal((n, dim))


def shared_rows(name, n):
    X = load_svmlight_file(str(shared_file(name)))[0]
    return to_csr(X[:n])


def dense_kernel(X, kernel):
    X = to_csr(X)
    return kernel_matrix(X, X, kernel.kind, kernel.gamma, kernel.degree, coef0=kernel.coef0)


def assemble(f):
    """K~ in the original row order, from the stored leaves and U V^T blocks alone."""
    Kt = np.zeros((f.n, f.n))
    for lo, hi, B in f.leaf_blocks():
        Kt[lo:hi, lo:hi] = B
    for lo, mid, hi, U, V in f.coupling_blocks():
        Kt[lo:mid, mid:hi] = U @ V.T
        Kt[mid:hi, lo:mid] = V @ U.T
    out = np.empty_like(Kt)
    out[np.ix_(f.perm, f.perm)] = Kt
    return out


def lowest_eigenvalue(A):
    with one_blas_thread():     # a threaded eigh on a busy machine waits for cores the tests hold
        return np.linalg.eigvalsh(A)[0]


def relative(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


# ------------------------------------------------------------------------ NumPy twins of the kernels

def aca_twin(K, tol, max_rank, s_rows=(), s_cols=(), *, zero_pivot=1e-13):
    """Plain partially pivoted ACA on a dense block: row 0 first, then the largest |u| among unused
    rows; the column of a cross is the largest |residual row| among unused columns; stop at
    max_rank or when |u||v| <= tol |S|_F (running estimate) and the residual at the sampled
    entries (s_rows, s_cols) agrees, (m p / S) sum R_s^2 <= tol^2 |S|_F^2; else, or on a zero
    pivot row, the next pivot row is the unused one of the largest sampled residual."""
    m, p = K.shape
    s_rows, s_cols = np.asarray(s_rows, int), np.asarray(s_cols, int)
    us, vs = [], []
    row_used, col_used = np.zeros(m, bool), np.zeros(p, bool)
    res = K[s_rows, s_cols].copy()
    area = m * p / max(res.size, 1)
    scale = np.abs(res).max(initial=0.0)
    norm2, i = 0.0, 0

    def sampled_pivot():
        live = ~row_used[s_rows] & (np.abs(res) > zero_pivot * scale)
        return s_rows[np.flatnonzero(live)[np.argmax(np.abs(res[live]))]] if live.any() else -1

    while len(us) < min(max_rank, m, p):
        row_used[i] = True
        scale = max(scale, np.abs(K[i]).max())
        v = K[i].copy()
        for u_l, v_l in zip(us, vs):
            v -= u_l[i] * v_l
        free = np.flatnonzero(~col_used)
        j = free[np.argmax(np.abs(v[free]))] if free.size else -1
        if j < 0 or abs(v[j]) <= zero_pivot * scale:
            i = sampled_pivot()
            if i < 0:
                break
            continue
        col_used[j] = True
        v /= v[j]
        scale = max(scale, np.abs(K[:, j]).max())
        u = K[:, j].copy()
        for u_l, v_l in zip(us, vs):
            u -= v_l[j] * u_l
        norm2 += 2 * sum((u_l @ u) * (v_l @ v) for u_l, v_l in zip(us, vs)) + (u @ u) * (v @ v)
        res -= u[s_rows] * v[s_cols]
        us.append(u)
        vs.append(v)
        if (u @ u) * (v @ v) <= tol * tol * norm2:
            if area * (res @ res) <= tol * tol * norm2:
                break
            i = sampled_pivot()
        else:
            unused = np.flatnonzero(~row_used)
            i = unused[np.argmax(np.abs(u[unused]))] if unused.size else -1
        if i < 0:
            break
    return np.array(us).reshape(-1, m).T, np.array(vs).reshape(-1, p).T


def samples(m, p, count, seed=0):
    draw = np.random.default_rng(seed)
    return draw.integers(0, m, count, dtype=np.int32), draw.integers(0, p, count, dtype=np.int32)


def run_aca(X, rows, cols, kernel, tol, *, max_rank, sampled=((), ()), n_threads=1):
    X = to_csr(X)
    rows, cols = np.asarray(rows, np.int32), np.asarray(cols, np.int32)
    work = np.empty(max_rank * (rows.size + cols.size))
    r = aca(X, rows, cols, kernel.kind, kernel.gamma, degree=kernel.degree, coef0=kernel.coef0, sqnorms=row_sqnorms(X),
            tol=tol, max_rank=max_rank, work=work, sample_rows=np.asarray(sampled[0], np.int32),
            sample_cols=np.asarray(sampled[1], np.int32), n_threads=n_threads)
    m, p = rows.size, cols.size
    return work[:r * m].reshape(r, m).T, work[max_rank * m:max_rank * m + r * p].reshape(r, p).T


KERNELS = [Kernel("rbf", 0.3), Kernel("linear"), Kernel("polynomial", 0.2, 3, 1.0), Kernel("sigmoid", 0.05, 3, -0.5)]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.kind)
def test_kernel_block_equals_kernel_matrix(kernel):
    X = to_csr(sp.random(300, 20, density=0.3, random_state=1, format="csr"))
    K = dense_kernel(X, kernel)
    rows = np.array([5, 0, 299, 17, 17, 42], np.int32)
    cols = np.arange(0, 300, 7, dtype=np.int32)
    out = np.empty((rows.size, cols.size))
    kernel_block(X, rows, cols, kernel.kind, kernel.gamma, degree=kernel.degree, coef0=kernel.coef0,
                 sqnorms=row_sqnorms(X), out=out)
    np.testing.assert_allclose(out, K[np.ix_(rows, cols)], rtol=1e-13, atol=1e-13)
    # the symmetric block (rows is cols): exactly symmetric, equal to K, the same bits on 2 threads
    sym = np.empty((cols.size, cols.size))
    kernel_block(X, cols, cols, kernel.kind, kernel.gamma, degree=kernel.degree, coef0=kernel.coef0,
                 sqnorms=row_sqnorms(X), out=sym)
    np.testing.assert_allclose(sym, K[np.ix_(cols, cols)], rtol=1e-13, atol=1e-13)
    assert np.array_equal(sym, sym.T)
    sym2 = np.empty_like(sym)
    kernel_block(X, cols, cols, kernel.kind, kernel.gamma, degree=kernel.degree, coef0=kernel.coef0,
                 sqnorms=row_sqnorms(X), out=sym2, n_threads=2)
    assert np.array_equal(sym, sym2)


@pytest.mark.parametrize("kernel", KERNELS[:3], ids=lambda k: k.kind)
@pytest.mark.parametrize("tol", [1e-1, 1e-3, 1e-6])
@pytest.mark.parametrize("n_samples", [0, 900])
def test_aca_equals_its_numpy_twin(kernel, tol, n_samples):
    X = blobs(900, 3, seed=2)
    rows, cols = np.arange(0, 900, 2), np.arange(1, 900, 2)[::-1]
    K = dense_kernel(X, kernel)[np.ix_(rows, cols)]
    sampled = samples(450, 450, n_samples)
    U, V = run_aca(X, rows, cols, kernel, tol, max_rank=60, sampled=sampled)
    Ut, Vt = aca_twin(K, tol, 60, *sampled)
    assert U.shape == Ut.shape and U.shape[1] >= 1
    np.testing.assert_allclose(U @ V.T, Ut @ Vt.T, rtol=0, atol=1e-10 * np.abs(K).max())
    np.testing.assert_allclose(U, Ut, rtol=1e-8, atol=1e-10 * np.abs(U).max())
    if U.shape[1] < 60:                 # stopped by the tolerance: the estimate is honest here
        assert relative(U @ V.T, K) <= 10 * tol
    U2, V2 = run_aca(X, rows, cols, kernel, tol, max_rank=60, sampled=sampled, n_threads=2)
    assert np.array_equal(U, U2) and np.array_equal(V, V2)


def test_aca_on_real_rows_and_exactly_zero_blocks():
    X = shared_rows("a1a", 1200)
    kernel = Kernel("rbf", 0.5)
    rows, cols = np.arange(600), np.arange(600, 1200)
    K = dense_kernel(X, kernel)[np.ix_(rows, cols)]
    sampled = samples(600, 600, 1200)
    U, V = run_aca(X, rows, cols, kernel, 1e-2, max_rank=80, sampled=sampled)
    Ut, Vt = aca_twin(K, 1e-2, 80, *sampled)
    np.testing.assert_allclose(U @ V.T, Ut @ Vt.T, rtol=0, atol=1e-10)
    # far-apart points: the RBF block is exactly zero, ACA stops at the first pivot row (rank 0)
    far = np.vstack([np.zeros((50, 2)), 1e3 + np.zeros((50, 2))])
    U, V = run_aca(far, np.arange(50), np.arange(50, 100), kernel, 1e-2, max_rank=10, sampled=samples(50, 50, 100))
    assert U.shape == (50, 0) and V.shape == (50, 0)


def test_sampled_stopping_test_finds_what_the_last_cross_misses():
    """Rows in many far-apart clusters (as w8a's duplicate rows): each cross covers one cluster
    pair, so the last cross is small while most of the block is left; the samples see the rest."""
    rng = np.random.default_rng(8)
    centres = 10.0 * np.arange(12)[:, None] * np.ones((1, 2))
    heavy = np.repeat([0, 0, 0, 0] + list(range(12)), 40)      # a heavy cluster 0, then all of them
    X = centres[heavy] + 1e-3 * rng.standard_normal((heavy.size, 2))
    kernel = Kernel("rbf", 1.0)
    rows, cols = np.arange(0, X.shape[0], 2), np.arange(1, X.shape[0], 2)
    K = dense_kernel(X, kernel)[np.ix_(rows, cols)]
    U0, V0 = run_aca(X, rows, cols, kernel, 0.2, max_rank=50)
    U, V = run_aca(X, rows, cols, kernel, 0.2, max_rank=50,
                   sampled=samples(rows.size, cols.size, rows.size + cols.size))
    assert relative(U0 @ V0.T, K) > 0.2 >= relative(U @ V.T, K)


# ------------------------------------------------------------------------ the factor

def test_cluster_tree_is_balanced_and_contiguous():
    X = to_csr(blobs(1000))
    for split in ("pca", "2means"):
        perm, lo, hi, left, right = cluster_tree(X, 100, split)
        assert np.array_equal(np.sort(perm), np.arange(1000))
        inner = left >= 0
        assert np.array_equal(lo[left[inner]], lo[inner]) and np.array_equal(hi[right[inner]], hi[inner])
        assert np.array_equal(hi[left[inner]], lo[right[inner]])
        sizes_l, sizes_r = hi[left[inner]] - lo[left[inner]], hi[right[inner]] - lo[right[inner]]
        assert np.all(np.abs(sizes_l - sizes_r) <= 1)
        assert np.all(hi[~inner] - lo[~inner] <= 100)


@pytest.mark.parametrize("tol", [1e-1, 1e-2, 1e-4, 1e-6])
def test_approximation_error_follows_tol(tol):
    X = blobs()
    K = dense_kernel(X, RBF)
    f = HODLRFactor(X, RBF, 50.0, tol=tol, max_rank=200, leaf_size=200)
    assert max(f.ranks) < 200            # every block stopped by the tolerance
    assert relative(assemble(f), K) <= 3 * tol
    assert f.backend == "hodlr" and f.n == 1500 and f.beta == 50.0 and f.levels == 3


@pytest.mark.parametrize("tol", [1e-1, 1e-2, 1e-4])
def test_approximation_error_on_real_data(tol):
    X = shared_rows("mg", 1385)
    kernel = Kernel("rbf", 0.5)
    f = HODLRFactor(X, kernel, 100.0, tol=tol, max_rank=200, leaf_size=256)
    assert relative(assemble(f), dense_kernel(X, kernel)) <= 3 * tol


def test_duplicate_rows_give_exact_rank_one_blocks():
    """Three distinct points, each 200 times (w8a has thousands of empty rows): every coupling
    block has rank <= 3 and ACA must store it exactly, rank-1 blocks too."""
    X = np.repeat([[0.0, 0.0], [1.0, 0.5], [0.0, 2.0]], 200, axis=0)
    K = dense_kernel(X, RBF)
    f = HODLRFactor(X, RBF, 1.0, tol=1e-2, leaf_size=50)
    assert 1 in f.ranks and max(f.ranks) <= 3
    assert relative(assemble(f), K) <= 1e-12
    b = np.random.default_rng(9).standard_normal(600)
    assert np.linalg.norm(K @ f.solve(b) + f.solve(b) - b) <= 1e-10 * np.linalg.norm(b)


def test_the_coupling_matters():
    """max_rank = 0 keeps the dense leaves alone: far worse than with the low-rank blocks."""
    X = blobs()
    K = dense_kernel(X, RBF)
    leaves = HODLRFactor(X, RBF, 50.0, max_rank=0, leaf_size=200)
    assert leaves.ranks == [0] * 7
    coupled = HODLRFactor(X, RBF, 50.0, tol=1e-2, leaf_size=200)
    assert relative(assemble(leaves), K) > 0.5 > 0.02 > relative(assemble(coupled), K)
    b = np.random.default_rng(3).standard_normal(1500)
    x = leaves.solve(b)
    np.testing.assert_allclose((assemble(leaves) + 50.0 * np.eye(1500)) @ x, b, rtol=0, atol=1e-10 * np.linalg.norm(b))


@pytest.mark.parametrize("data", ["blobs", "a1a"])
def test_solve_residual_and_matvec(data):
    if data == "blobs":
        X, kernel, beta, tol = blobs(), RBF, 5.0, 1e-2
    else:
        X, kernel, beta, tol = shared_rows("a1a", 1605), Kernel("rbf", 0.5), 1.0, 1e-1
    f = HODLRFactor(X, kernel, beta, tol=tol, leaf_size=200)
    Kt = assemble(f)
    rng = np.random.default_rng(4)
    b, B = rng.standard_normal(f.n), rng.standard_normal((f.n, 3))
    x, Y = f.solve(b), f.solve(B)
    assert x.shape == b.shape and Y.shape == B.shape
    for rhs, sol in ((b, x), (B, Y)):
        assert np.linalg.norm(f.matvec(sol) + beta * sol - rhs) <= 1e-10 * np.linalg.norm(rhs)
        assert np.linalg.norm(Kt @ sol + beta * sol - rhs) <= 1e-10 * np.linalg.norm(rhs)
    np.testing.assert_allclose(f.matvec(b), Kt @ b, rtol=0, atol=1e-12 * np.linalg.norm(Kt @ b))
    np.testing.assert_allclose(f.matvec(B), Kt @ B, rtol=0, atol=1e-12 * np.linalg.norm(Kt @ B))
    np.testing.assert_allclose(Y[:, 1], f.solve(B[:, 1]), rtol=1e-12, atol=1e-14)


def test_permutation_round_trip():
    """One leaf holding everything is the exact kernel: the solve must equal the dense solve in
    the original order; with a tree, solve and product invert each other row for row."""
    X = blobs(300)
    K = dense_kernel(X, RBF)
    b = np.random.default_rng(5).standard_normal(300)
    exact = HODLRFactor(X, RBF, 0.5, leaf_size=300)
    assert exact.ranks == [] and np.array_equal(exact.perm, np.arange(300))
    np.testing.assert_allclose(exact.solve(b), np.linalg.solve(K + 0.5 * np.eye(300), b), rtol=1e-10)
    np.testing.assert_allclose(exact.matvec(b), K @ b, rtol=1e-12)
    f = HODLRFactor(X, RBF, 0.5, tol=1e-8, leaf_size=40)
    assert not np.array_equal(f.perm, np.arange(300)) and np.array_equal(np.sort(f.perm), np.arange(300))
    np.testing.assert_allclose(f.solve(f.matvec(b) + 0.5 * b), b, rtol=0, atol=1e-10 * np.abs(b).max())
    np.testing.assert_allclose(f.matvec(b), K @ b, rtol=0, atol=1e-6 * np.abs(K @ b).max())


def test_positive_definiteness_is_checked_both_ways():
    """K~ of loose ACA blocks is indefinite: a beta below -lambda_min(K~) must be refused at a core,
    one above it accepted (K~ does not depend on beta)."""
    X = blobs(800, 5)
    loose = HODLRFactor(X, RBF, 1e3, tol=1e-1, leaf_size=100)
    lam = lowest_eigenvalue(assemble(loose))
    assert lam < -1.0              # a real test: the leaves alone are PD, K~ is not
    with pytest.raises(FastSVMError, match="not positive definite.*coupling.*tighten tol.*max_rank.*raise beta"):
        HODLRFactor(X, RBF, -0.9 * lam, tol=1e-1, leaf_size=100)
    ok = HODLRFactor(X, RBF, -1.1 * lam, tol=1e-1, leaf_size=100)
    assert np.array_equal(assemble(ok), assemble(loose))


def test_refactor_after_a_refused_beta_is_a_fresh_factor():
    """The compression does not depend on beta: the refused factor's compression, refactored at a
    larger beta, gives the bits of a factor built from scratch there (at a core and at a leaf)."""
    X = blobs(800, 5)
    b = np.random.default_rng(3).standard_normal((800, 2))
    for kernel, options, low, high in ((RBF, {"tol": 1e-1, "leaf_size": 100}, 1e-3, 1e3),
                                       (Kernel("sigmoid", 1.0, 3, 1.0), {"leaf_size": 300}, 1e-3, 1e4)):
        with pytest.raises(FastSVMError, match="not positive definite") as refused:
            HODLRFactor(X, kernel, low, **options)
        again = refused.value.compressed.refactor(high)
        fresh = HODLRFactor(X, kernel, high, **options)
        assert again.beta == high
        np.testing.assert_array_equal(again.solve(b), fresh.solve(b))
        np.testing.assert_array_equal(again.matvec(b), fresh.matvec(b))
        # and once more from a successful factor, back to where it started
        np.testing.assert_array_equal(fresh.refactor(2 * high).refactor(high).solve(b), again.solve(b))


def test_indefinite_sigmoid_leaf_is_refused():
    X = shared_rows("heart_scale", 270)
    kernel = Kernel("sigmoid", 1.0, 3, 1.0)
    lam = lowest_eigenvalue(dense_kernel(X, kernel))
    assert lam < -1.0
    with pytest.raises(FastSVMError, match="not positive definite.*dense leaf block.*raise beta"):
        HODLRFactor(X, kernel, 1e-3, leaf_size=300)
    f = HODLRFactor(X, kernel, -2 * lam, leaf_size=300)
    b = np.ones(270)
    assert np.linalg.norm(f.matvec(f.solve(b)) - 2 * lam * f.solve(b) - b) <= 1e-10 * np.linalg.norm(b)


def test_dense_equals_csr_and_threads_give_the_same_bits():
    X = blobs(600, 4)
    X[np.abs(X) < 0.5] = 0.0
    a = HODLRFactor(X, RBF, 5.0, tol=1e-3, leaf_size=80)
    b = HODLRFactor(sp.csr_matrix(X), RBF, 5.0, tol=1e-3, leaf_size=80, n_threads=2)
    assert np.array_equal(a.perm, b.perm) and a.ranks == b.ranks
    assert np.array_equal(assemble(a), assemble(b))
    v = np.random.default_rng(6).standard_normal(600)
    assert np.array_equal(a.solve(v), b.solve(v))


def test_progress_memory_and_timings():
    lines = []
    X = blobs(800)
    f = HODLRFactor(X, RBF, 5.0, leaf_size=100, log=lines.append)
    assert [line.split(":")[0] for line in lines] == ["hodlr clustering", "hodlr compression",
                                                     "hodlr factorization"]
    assert "MB held" in lines[-1]
    assert set(f.timings) == {"clustering", "compression", "factorization"}
    assert 0 < f.nbytes <= estimate_bytes(800, 100, 100)
    with pytest.raises(FastSVMError, match="needs up to .* MB.*limit of 1.00 MB"):
        HODLRFactor(X, RBF, 5.0, leaf_size=100, max_rank=100, memory_limit=1 << 20)
    # the rank left to choose: the largest that fits, said before the phases
    lines.clear()
    f = HODLRFactor(X, RBF, 5.0, leaf_size=100, memory_limit=2 << 20, log=lines.append)
    assert f.max_rank == 32 and estimate_bytes(800, 100, 32) <= 2 << 20 < estimate_bytes(800, 100, 33)
    assert lines[0] == ("hodlr shape: leaf_size 100, max_rank 32 (max_rank chosen to fit the limit of 2.00 MB; "
                        "up to 1.98 MB)")
    assert f.nbytes <= 2 << 20


def test_bad_input_is_one_clear_error():
    X = blobs(50)
    with pytest.raises(ParameterError, match="beta"):
        HODLRFactor(X, RBF, 0.0)
    with pytest.raises(ParameterError, match="kernels"):
        HODLRFactor(X, Kernel("precomputed"), 1.0)
    with pytest.raises(ParameterError, match="max_rank"):
        HODLRFactor(X, RBF, 1.0, max_rank=-1)
    with pytest.raises(FastSVMError, match="input contains NaN"):
        HODLRFactor(np.full((5, 2), np.nan), RBF, 1.0)
    f = HODLRFactor(X, RBF, 1.0, leaf_size=10)
    with pytest.raises(FastSVMError, match="vector of 50 values"):
        f.solve(np.ones(49))


def test_stop_flag_is_honoured():
    X = to_csr(blobs(400))
    stop = np.ones(1, dtype=np.int32)
    rows = np.arange(400, dtype=np.int32)
    with pytest.raises(KeyboardInterrupt):
        kernel_block(X, rows, rows, "rbf", 0.2, degree=3, coef0=0.0, sqnorms=row_sqnorms(X), out=np.empty((400, 400)),
                     n_threads=1, stop=stop)
    with pytest.raises(KeyboardInterrupt):
        aca(X, rows[:200], rows[200:], "rbf", 0.2, degree=3, coef0=0.0, sqnorms=row_sqnorms(X), tol=1e-2, max_rank=10,
            work=np.empty(4000), sample_rows=rows[:0], sample_cols=rows[:0], n_threads=1, stop=stop)
    with pytest.raises(KeyboardInterrupt):
        HODLRFactor(X, RBF, 1.0, leaf_size=50, stop=stop)


def stops_within_a_second(work, stop, after=0.3):
    timer = threading.Timer(after, lambda: stop.__setitem__(0, 1))
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            work()
    finally:
        timer.cancel()
    elapsed = time.monotonic() - started
    assert after <= elapsed < after + 1.0


@pytest.mark.slow
def test_stop_flag_within_a_second_of_being_set():
    X = to_csr(np.random.default_rng(7).standard_normal((12000, 100)))
    sq, rows = row_sqnorms(X), np.arange(12000, dtype=np.int32)
    stop = np.zeros(1, dtype=np.int32)
    stops_within_a_second(lambda: kernel_block(X, rows, rows, "rbf", 1e-3, degree=3, coef0=0.0, sqnorms=sq,
                                               out=np.empty((12000, 12000)), n_threads=1, stop=stop), stop)
    stop[0] = 0
    stops_within_a_second(lambda: aca(X, rows[:6000], rows[6000:], "rbf", 1e-3, degree=3, coef0=0.0, sqnorms=sq,
                                      tol=0.0, max_rank=2000, work=np.empty(2000 * 12000), sample_rows=rows[:6000],
                                      sample_cols=rows[5999::-1].copy(), n_threads=1, stop=stop), stop)
    stop[0] = 0
    stops_within_a_second(lambda: HODLRFactor(X, Kernel("rbf", 1e-3), 1.0, tol=0.0, max_rank=2000, leaf_size=2500,
                                              stop=stop), stop)
