"""fastsvm._core._margins (A = diag(y) [X, B 1] and its mat-vecs, the primal solvers' passes)
against dense NumPy, and the same bits for 1, 2 and 3 threads."""
import numpy as np
import pytest
import scipy.sparse as sp

from fastsvm._core._margins import LabeledRows, largest_eigenvalue
from fastsvm.csr import to_csr
from fastsvm.errors import FastSVMError


def random_rows(n=300, p=40, density=0.2, seed=0, empty_rows=()):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=density, random_state=rng, format="lil")
    for r in empty_rows:
        X[r, :] = 0
    X = to_csr(sp.csr_matrix(X))
    X.data = rng.normal(size=X.data.shape)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    C = rng.uniform(0.5, 2.0, n)
    return X, y, C


def dense_A(X, y, B):
    return y[:, None] * np.hstack([X.toarray(), np.full((X.shape[0], 1), B)])


@pytest.mark.parametrize("B", [1.0, 2.5, 0.0])
def test_labeled_rows_products_against_dense(B):
    X, y, C = random_rows(empty_rows=(3, 17))
    rows = LabeledRows(X, y, C, bias=B)
    A = dense_A(X, y, B)
    rng = np.random.default_rng(6)
    w, c = rng.normal(size=rows.n_weights), rng.normal(size=rows.n_rows)
    np.testing.assert_allclose(rows.margins(w, np.empty(rows.n_rows)), A @ w, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(rows.rmatvec(c, np.empty(rows.n_weights)), A.T @ c, rtol=1e-13, atol=1e-12)
    some = np.array([5, 3, 250], dtype=np.int64)
    np.testing.assert_allclose(rows.rows_rmatvec(some, c[:3], np.empty(rows.n_weights)), A[some].T @ c[:3],
                               rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(rows.row_scales(), np.abs(A).max(axis=1))
    assert rows.row_scales()[3] == abs(B)        # an empty row keeps its bias entry


def test_labeled_rows_products_have_the_same_bits_for_any_thread_count():
    X, y, C = random_rows(n=30000, p=200, density=0.03, seed=7)   # several row blocks
    rng = np.random.default_rng(8)
    w, c = rng.normal(size=X.shape[1] + 1), rng.normal(size=X.shape[0])
    many = np.arange(0, X.shape[0], 3, dtype=np.int64)          # a third of the rows: one threaded pass
    many = np.concatenate([many, many[:5]])                     # a row twice adds twice
    results = []
    for threads in (1, 2, 3):
        rows = LabeledRows(X, y, C, bias=1.0, n_threads=threads)
        results.append((rows.margins(w, np.empty(rows.n_rows)), rows.rmatvec(c, np.empty(rows.n_weights)),
                        rows.rows_rmatvec(many, c[:many.size], np.empty(rows.n_weights))))
    for z, g, h in results[1:]:
        np.testing.assert_array_equal(z, results[0][0])
        np.testing.assert_array_equal(g, results[0][1])
        np.testing.assert_array_equal(h, results[0][2])
    A = dense_A(X, y, 1.0)
    np.testing.assert_allclose(results[0][2], A[many].T @ c[:many.size], rtol=1e-12, atol=1e-11)


def test_largest_eigenvalue_against_eigvalsh():
    X, y, C = random_rows(n=200, p=15, density=0.4, seed=9)
    rows = LabeledRows(X, y, C, bias=1.0)
    d = 1.0 / rows.row_scales()
    A = dense_A(X, y, 1.0)
    exact = np.linalg.eigvalsh(A.T @ (d[:, None] * A)).max()
    estimate = largest_eigenvalue(rows, d, 200)
    assert estimate == pytest.approx(exact, rel=1e-6)
    assert largest_eigenvalue(rows, d, 5) <= exact * (1 + 1e-12)   # from below


def test_labeled_rows_refuse_bad_shapes():
    X, y, C = random_rows(n=10, p=4)
    rows = LabeledRows(X, y, C)
    with pytest.raises(FastSVMError, match="entries"):
        rows.margins(np.zeros(4), np.empty(10))
    with pytest.raises(FastSVMError, match="entries"):
        rows.rmatvec(np.zeros(9), np.empty(5))
    with pytest.raises(FastSVMError, match="outside"):
        rows.rows_rmatvec(np.array([10], dtype=np.int64), np.ones(1), np.empty(5))
    with pytest.raises(ValueError):
        LabeledRows(X, y[:5], C)
