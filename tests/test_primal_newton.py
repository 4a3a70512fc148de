"""Solver "primal_newton" (LIBLINEAR -s 2's problem): its kernel against a NumPy twin and finite
differences, its optimum against liblinear-official's, its gradient certificate, its predictions."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import approx_fprime

from fastsvm._core._primal_newton import SquaredHingePrimal
from fastsvm.csr import to_csr
from fastsvm.solvers.primal_newton import solve
from linear_oracle import assert_same_signs, binary_oracle

TIGHT = 1e-8


def twin(D, y, upper, w):
    """f, grad and active rows of 1/2 |w|^2 + sum_i C_i max(0, 1 - y_i d_i.w)^2, D (dense or CSR)
    with the bias column."""
    slack = 1.0 - y * (D @ w)
    active = (slack > 0) & (upper > 0)
    f = 0.5 * w @ w + np.sum(upper[active] * slack[active] ** 2)
    grad = w - 2.0 * D[active].T @ (upper[active] * y[active] * slack[active])
    return f, grad, active


def twin_hessian(D, upper, active):
    """The generalized Hessian I + 2 sum_{active} C_i d_i d_i^T as a dense matrix (D dense)."""
    return np.eye(D.shape[1]) + 2.0 * D[active].T @ (upper[active, None] * D[active])


def random_problem(seed):
    rng = np.random.default_rng(seed)
    X = to_csr(sp.random(40, 9, density=0.4, random_state=seed, format="csr"))
    y = rng.choice([-1.0, 1.0], size=40)
    upper = rng.uniform(0.1, 3.0, size=40)
    upper[:3] = 0.0  # rows without weight take no part
    return X, y, upper


@pytest.mark.parametrize("B", [0.0, 1.5])
def test_kernel_equals_numpy_twin(B):
    X, y, upper = random_problem(3)
    # the kernel always holds a bias weight; B = 0 makes its column zero
    D = np.hstack([X.toarray(), np.full((X.shape[0], 1), B)])
    problem = SquaredHingePrimal(X, y, upper, bias=B)
    rng = np.random.default_rng(4)
    for _ in range(3):
        w = rng.normal(size=X.shape[1] + 1)
        f, grad = problem.fun_grad(w)
        f_np, grad_np, active_np = twin(D, y, upper, w)
        assert f == pytest.approx(f_np, rel=1e-13)
        np.testing.assert_allclose(grad, grad_np, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(problem.active, active_np)
        s = rng.normal(size=w.size)
        np.testing.assert_allclose(problem.hess_vec(s), twin_hessian(D, upper, active_np) @ s,
                                   rtol=1e-12, atol=1e-12)
        # the twin's gradient is itself the derivative of f (away from the kinks)
        np.testing.assert_allclose(approx_fprime(w, lambda v: problem.fun_grad(v)[0], 1e-7), grad,
                                   rtol=1e-4, atol=1e-5)



DATASETS = [("breast_cancer_scale", "breast_cancer_scale.t", 1.0), ("a9a", "a9a.t", 1.0),
            ("w8a", "w8a.t", 1.0)]


@pytest.mark.parametrize("bias", [-1.0, 1.0], ids=["nobias", "B1"])
@pytest.mark.parametrize("name,test_name,C", DATASETS, ids=[d[0] for d in DATASETS])
def test_optimum_equals_liblinear(name, test_name, C, bias):
    sol, D, y, upper, ours, theirs, Dt = binary_oracle(solve, "primal_newton", 2, name, test_name, C=C, bias=bias,
                                                       tol=TIGHT)
    assert sol.status == "converged"
    f_ours, grad, _ = twin(D, y, upper, ours)
    f_theirs = twin(D, y, upper, theirs)[0]
    assert f_ours == pytest.approx(sol.objective, rel=1e-12)
    assert abs(f_ours - f_theirs) <= 1e-6 * f_theirs
    # certificate, recomputed here: LIBLINEAR's stopping rule on |grad f|
    grad_at_zero = np.linalg.norm(twin(D, y, upper, np.zeros_like(ours))[1])
    assert np.linalg.norm(grad) <= TIGHT * grad_at_zero
    # the implied dual (LIBLINEAR -s 1's alpha, alpha_i = 2 C_i slack_i) gives back w, to |grad f|
    assert np.linalg.norm(D.T @ sol.coef - ours) <= 1.01 * TIGHT * grad_at_zero
    assert_same_signs(Dt, ours, theirs)
