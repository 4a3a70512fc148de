"""The LP-SVM's interior-point method (fastsvm.problems.hinge_lp) against HiGHS on the same LP,
with per-row costs (class weights), with and without the free bias, and its dual certificate."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from fastsvm.csr import to_csr
from fastsvm.problems.hinge_lp import interior_point


def highs(X, y, c, bias):
    n, p = X.shape
    Xd, Y = X.toarray(), y[:, None]
    bias_columns = [-Y * bias, Y * bias] if bias else []
    A = np.hstack([-Y * Xd, Y * Xd, *bias_columns, -np.eye(n)])
    cost = np.concatenate([np.ones(2 * p), [0.0] * len(bias_columns), c])
    return linprog(cost, A_ub=A, b_ub=-np.ones(n), bounds=(0, None), method="highs").fun


@pytest.mark.parametrize("bias", [1.0, 0.0, 3.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_interior_point_equals_highs(seed, bias):
    rng = np.random.default_rng(seed)
    n, p = 150, 20
    X = to_csr(sp.random(n, p, density=0.3, random_state=seed, data_rvs=lambda k: rng.normal(size=k)))
    y = np.where(X @ rng.normal(size=p) + 0.3 * rng.normal(size=n) + 0.2 > 0, 1.0, -1.0)
    c = np.where(y > 0, 0.5, 2.0)
    w, b, lam, iterations, measure = interior_point(X, y, c, bias)
    assert measure <= 1e-5 and iterations < 60
    optimum = highs(X, y, c, bias)
    primal = np.abs(w).sum() + c @ np.maximum(0.0, 1.0 - y * (X @ w + bias * b))
    assert primal == pytest.approx(optimum, rel=1e-6)
    # the dual point certifies it: inside the box, y^T lambda = 0 with a bias, |A^T lambda| <= 1
    assert np.all(lam >= -1e-9) and np.all(lam <= c + 1e-9)
    if bias:
        assert abs(y @ lam) <= 1e-6 * c.sum()
    assert np.abs(X.T @ (y * lam)).max() <= 1.0 + 1e-6
    assert lam.sum() == pytest.approx(optimum, rel=1e-6)


def test_interior_point_on_separable_data_and_a_zero_column():
    """Separable data (a zero-loss optimum) and a feature that never occurs."""
    X = to_csr(np.array([[1.0, 0.0, 0.0], [2.0, 1.0, 0.0], [-1.0, 0.5, 0.0], [-2.0, -1.0, 0.0]]))
    y = np.array([1.0, 1.0, -1.0, -1.0])
    w, b, lam, _, measure = interior_point(X, y, np.full(4, 10.0), 1.0)
    assert measure <= 1e-6
    assert np.abs(w).sum() == pytest.approx(highs(X, y, np.full(4, 10.0), 1.0), rel=1e-6)
    assert abs(w[2]) <= 1e-8


def test_interior_point_stops_on_the_flag():
    X = to_csr(np.eye(3))
    with pytest.raises(KeyboardInterrupt):
        interior_point(X, np.array([1.0, -1.0, 1.0]), np.ones(3), 1.0, stop=[True])
