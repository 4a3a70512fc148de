"""Solver "l1_cd" (LIBLINEAR -s 5's problem): one CDN step and the subgradient measure against
NumPy twins, the optimum against liblinear-official's, the min-norm subgradient certificate, and
the predictions."""
import numpy as np
import pytest
import scipy.sparse as sp

from fastsvm._core._l1_cd import L1SquaredHingeCD
from fastsvm.csr import to_csr
from fastsvm.solvers.l1_cd import columns_with_bias, solve
from linear_oracle import assert_same_signs, binary_oracle

TIGHT = 1e-8


def objective(D, y, upper, w):
    slack = np.maximum(0.0, 1.0 - y * (D @ w))
    return np.abs(w).sum() + upper @ slack**2


def loss_derivative(D, y, upper, w):
    """Gradient of the loss sum_i C_i max(0, 1 - y_i d_i.w)^2 (D dense or CSR)."""
    slack = np.maximum(0.0, 1.0 - y * (D @ w))
    return -2.0 * (D.T @ (upper * y * slack))


def min_norm_subgradient(D, y, upper, w):
    """The smallest element of the objective's subdifferential, per weight."""
    g = loss_derivative(D, y, upper, w)
    at_zero = np.sign(g) * np.maximum(np.abs(g) - 1.0, 0.0)
    return np.where(w != 0, g + np.sign(w), at_zero)


def twin_step(D, y, upper, w, j):
    """One CDN step on w_j written out: the Newton direction of G d + H d^2 / 2 + |w_j + d|, then
    halving until f(w + lam d e_j) - f(w) <= 0.01 lam (G d + |w_j + d| - |w_j|)."""
    b = 1.0 - y * (D @ w)
    col = D[:, j]
    act = b > 0
    G = -2.0 * np.sum(upper[act] * y[act] * col[act] * b[act])
    H = max(2.0 * np.sum(upper[act] * col[act] ** 2), 1e-12)
    if G + 1 <= H * w[j]:
        d = -(G + 1) / H
    elif G - 1 >= H * w[j]:
        d = -(G - 1) / H
    else:
        d = -w[j]
    predicted = G * d + abs(w[j] + d) - abs(w[j])
    f0 = objective(D, y, upper, w)
    lam = 1.0
    for _ in range(20):
        trial = w.copy()
        trial[j] += lam * d
        if objective(D, y, upper, trial) - f0 <= 0.01 * lam * predicted + 1e-12 * abs(f0):
            return lam * d
        lam *= 0.5
    return 0.0


def test_step_and_violations_equal_numpy_twins():
    rng = np.random.default_rng(5)
    X = to_csr(sp.random(50, 8, density=0.5, random_state=5, format="csr"))
    y = rng.choice([-1.0, 1.0], size=50)
    upper = rng.uniform(0.2, 2.0, size=50)
    columns = columns_with_bias(X, 1.0)
    D = columns.toarray()
    cd = L1SquaredHingeCD(columns, y, upper)
    np.testing.assert_allclose(cd.violations(), np.abs(min_norm_subgradient(D, y, upper, cd.w)), atol=1e-12)
    for _ in range(3 * D.shape[1]):
        j = int(rng.integers(D.shape[1]))
        w_before = cd.w.copy()
        expected = twin_step(D, y, upper, w_before, j)
        change, violation = cd.step(j)
        assert violation == pytest.approx(abs(min_norm_subgradient(D, y, upper, w_before)[j]), abs=1e-12)
        assert change == pytest.approx(expected, rel=1e-9, abs=1e-14)
        np.testing.assert_allclose(cd.b, 1.0 - y * (D @ cd.w), atol=1e-12)
    assert np.count_nonzero(cd.w) > 0



# C small enough for liblinear-official to reach -e 1e-8 within its 1000 iterations
DATASETS = [("breast_cancer_scale", "breast_cancer_scale.t", 0.03), ("a9a", "a9a.t", 0.003),
            ("w8a", "w8a.t", 0.05)]


@pytest.mark.parametrize("bias", [-1.0, 1.0], ids=["nobias", "B1"])
@pytest.mark.parametrize("name,test_name,C", DATASETS, ids=[d[0] for d in DATASETS])
def test_optimum_equals_liblinear(name, test_name, C, bias):
    sol, D, y, upper, ours, theirs, Dt = binary_oracle(solve, "l1_cd", 5, name, test_name, C=C, bias=bias, tol=TIGHT)
    assert sol.status == "converged"
    f_ours, f_theirs = objective(D, y, upper, ours), objective(D, y, upper, theirs)
    assert f_ours == pytest.approx(sol.objective, rel=1e-12)
    assert abs(f_ours - f_theirs) <= 1e-6 * f_theirs
    # certificate, recomputed here: LIBLINEAR's rule on the 1-norm of the min-norm subgradient
    at_zero = np.abs(min_norm_subgradient(D, y, upper, np.zeros_like(ours))).sum()
    assert np.abs(min_norm_subgradient(D, y, upper, ours)).sum() <= TIGHT * at_zero
    # coef holds y_i times the loss' multiplier: X^T coef is minus the loss' gradient
    np.testing.assert_allclose(D.T @ sol.coef, -loss_derivative(D, y, upper, ours), rtol=1e-9, atol=1e-9)
    assert_same_signs(Dt, ours, theirs)
