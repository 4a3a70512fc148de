"""fastsvm._core._ssnal_sparse_kernel (the working set's RBF block held sparse) against NumPy twins."""
import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from fastsvm._core._ssnal_sparse_kernel import SparseKernel, kept_above
from fastsvm._core._status import Status
from fastsvm.errors import FastSVMError


def np_kept_above(block, threshold):
    keep = block >= threshold
    rows, cols = np.nonzero(keep)
    return keep.sum(axis=1), cols, block[rows, cols]


def sparse_of(K, threshold, threads=1):
    counts, indices, values = kept_above(K, threshold)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    return SparseKernel(indptr, indices, values, threads)


def rbf_block(n, gamma, seed=0):
    """scikit-learn's RBF kernel matrix of points spread widely (at gamma >= 1: most values far
    below 1e-16)."""
    return rbf_kernel(np.random.default_rng(seed).uniform(0.0, 30.0, size=(n, 3)), gamma=gamma)


def np_newton(Q, a, sigma, t):
    """z with (I + sigma P Q P) z = t, P = I - a a^T / a^T a, by a dense solve."""
    P = np.eye(a.shape[0]) - np.outer(a, a) / (a @ a)
    return np.linalg.solve(np.eye(a.shape[0]) + sigma * P @ Q @ P, t)


def test_kept_above_twin():
    rng = np.random.default_rng(1)
    block = rng.random((37, 53))
    block[5] = 0.0                         # a row with nothing kept
    block[7, :] = 0.25                     # ties with the threshold are kept
    for got, want in zip(kept_above(block, 0.25), np_kept_above(block, 0.25)):
        np.testing.assert_array_equal(got, want)
    counts, indices, values = kept_above(block, 0.25)
    assert counts.dtype == np.int32 and indices.dtype == np.int32 and counts[5] == 0 and counts[7] == 53


@pytest.mark.parametrize("threads", [1, 2])
def test_scatter_twin(threads):
    K = rbf_block(300, 1.0)
    threshold = 1e-18
    S = sparse_of(K, threshold, threads)
    kept = np.where(K >= threshold, K, 0.0)
    assert 0 < S.nnz < 0.2 * K.size           # numerically sparse, as the solver meets it
    rng = np.random.default_rng(2)
    pos = rng.permutation(300)[:40].astype(np.int32)
    coef = rng.normal(size=40)
    coef[3] = 0.0
    out = rng.normal(size=300)
    want = out + kept[:, pos] @ coef
    np.testing.assert_allclose(S.scatter(pos, coef, out.copy()), want, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("repeat", [False, True], ids=["c_svc", "svr"])
def test_newton_cg_twin(threads, repeat):
    """The CG solution of (I + sigma P Q P) z = t, Q = (a a^T) o K[pos][:, pos], equals a dense
    solve; positions may repeat (epsilon-SVR: both variables of a row, a = +1 and -1)."""
    K = rbf_block(400, 0.05, seed=3)
    S = sparse_of(K, 0.0, threads)           # everything kept: the twin's matrix exactly
    rng = np.random.default_rng(4)
    pos = np.sort(rng.permutation(400)[:150]).astype(np.int32)
    a = np.where(rng.random(150) < 0.5, 1.0, -1.0)
    if repeat:
        pos = np.concatenate([pos, pos[:60]])
        a = np.concatenate([np.ones(150), -np.ones(60)])
    Q = np.outer(a, a) * K[np.ix_(pos, pos)]
    t = rng.normal(size=a.shape[0])
    t -= (a @ t) / (a @ a) * a
    sigma = 25.0
    z, iterations, status = S.newton_cg(pos, a, sigma, t, 1e-12, max_iter=1000, stop=np.zeros(1, np.int32))
    assert 0 < iterations < 1000 and status == Status.CONVERGED
    np.testing.assert_allclose(z, np_newton(Q, a, sigma, t), rtol=0, atol=1e-9 * np.abs(t).max())
    assert abs(a @ z) <= 1e-9 * np.abs(z).sum()


def test_newton_cg_iterations_rtol_and_indefinite():
    K = rbf_block(200, 0.05, seed=5)
    S = sparse_of(K, 0.0)
    pos = np.arange(200, dtype=np.int32)
    a = np.ones(200)
    t = np.random.default_rng(6).normal(size=200)
    t -= t.mean()
    stop = np.zeros(1, np.int32)
    z, it, status = S.newton_cg(pos, a, 10.0, t, 1e-3, max_iter=1000, stop=stop)
    assert status == Status.CONVERGED
    H = np.eye(200) + 10.0 * (np.eye(200) - 1 / 200) @ K @ (np.eye(200) - 1 / 200)
    assert np.linalg.norm(H @ z - t) <= 1e-3 * np.linalg.norm(t)
    assert S.newton_cg(pos, a, 10.0, t, 1e-3, max_iter=2, stop=stop)[1:] == (2, Status.MAX_ITER)     # max_iter caps it
    assert S.newton_cg(pos, a, 10.0, np.zeros(200), 1e-3, max_iter=100, stop=stop)[1:] == (0, Status.CONVERGED)
    # -K is negative definite: I - 10 P K P is not positive definite, reported as a breakdown
    N = sparse_of(-K, -np.inf)
    assert N.newton_cg(pos, a, 10.0, t, 1e-3, max_iter=1000, stop=stop)[2] == Status.BREAKDOWN


def test_newton_cg_stop_flag_raises_keyboard_interrupt():
    K = rbf_block(2000, 1e-4, seed=7)         # dense enough that a poll is due at once
    S = sparse_of(K, 0.0)
    pos = np.arange(2000, dtype=np.int32)
    t = np.random.default_rng(8).normal(size=2000)
    t -= t.mean()
    with pytest.raises(KeyboardInterrupt):
        S.newton_cg(pos, np.ones(2000), 1e3, t, 1e-14, max_iter=1000, stop=np.ones(1, np.int32))


def test_bad_input_gives_clear_errors():
    with pytest.raises(FastSVMError, match="square CSR"):
        SparseKernel(np.array([0, 1]), np.array([3]), np.array([1.0]))        # column outside
    with pytest.raises(FastSVMError, match="square CSR"):
        SparseKernel(np.array([0, 2, 1]), np.array([0, 1]), np.array([1.0, 1.0]))
    S = sparse_of(np.eye(3), 0.5)
    with pytest.raises(FastSVMError, match="positions"):
        S.scatter(np.array([3], np.int32), np.ones(1), np.zeros(3))
    with pytest.raises(FastSVMError, match="positions"):
        S.newton_cg(np.array([0, 1], np.int32), np.ones(3), 1.0, np.zeros(2), 1e-6, max_iter=10,
                    stop=np.zeros(1, np.int32))
