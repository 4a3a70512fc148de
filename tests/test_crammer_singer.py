"""Solver "crammer_singer" (LIBLINEAR -s 4's problem): the per-sample sub-problem against a QP
solved by scipy, the optimum against liblinear-official's, the dual KKT certificate recomputed from
alpha, predictions, and the joint multi-class hook of fastsvm.training.trainer."""
import numpy as np
import pytest
from scipy.optimize import minimize

import fastsvm
from fastsvm._core._crammer_singer import subproblem as solve_subproblem
from fastsvm.params import Params
from fastsvm.solvers.crammer_singer import primal_objective, solve
from linear_oracle import liblinear_weights, load, load_pair, subproblem, with_bias_column

TIGHT = 1e-8


def scipy_subproblem(A, b, upper):
    """min 1/2 A |a|^2 + b.a s.t. sum a = 0, a <= upper, by SLSQP."""
    k = b.shape[0]
    return minimize(lambda a: 0.5 * A * a @ a + b @ a, np.zeros(k), jac=lambda a: A * a + b, method="SLSQP",
                    constraints=[{"type": "eq", "fun": np.sum, "jac": lambda a: np.ones(k)},
                                 {"type": "ineq", "fun": lambda a: upper - a, "jac": lambda a: -np.eye(k)}],
                    options={"ftol": 1e-14, "maxiter": 500})


@pytest.mark.parametrize("k", [2, 3, 5, 8])
def test_subproblem_equals_scipy_qp(k):
    rng = np.random.default_rng(k)
    for _ in range(5):
        A = rng.uniform(0.1, 5.0)
        b = rng.normal(size=k)
        upper = np.zeros(k)
        upper[rng.integers(k)] = rng.uniform(0.0, 3.0)   # C_i on the true class, 0 elsewhere
        ours = solve_subproblem(A, b, upper)
        qp = scipy_subproblem(A, b, upper)
        assert qp.success
        assert abs(ours.sum()) <= 1e-12 and np.all(ours <= upper)
        objective = 0.5 * A * ours @ ours + b @ ours
        assert objective <= 0.5 * A * qp.x @ qp.x + b @ qp.x + 1e-10
        np.testing.assert_allclose(ours, qp.x, atol=1e-6)


def kkt_violation(D, codes, upper, W, alpha):
    """max_i (max_m G_im - min over alpha_im below its bound of G_im), G = W d_i + e_i, with the
    constraints of alpha checked on the way and W checked to be sum_i alpha_i x_i."""
    n, k = alpha.shape
    bound = np.zeros((n, k))
    bound[np.arange(n), codes] = upper
    assert np.all(alpha <= bound + 1e-12) and np.allclose(alpha.sum(axis=1), 0.0, atol=1e-10)
    np.testing.assert_allclose(D.T @ alpha, W.T, atol=1e-9)
    G = np.asarray(D @ W.T) + 1.0
    G[np.arange(n), codes] -= 1.0
    free = alpha < bound
    low = np.where(free, G, np.inf).min(axis=1)
    return np.max(np.where(np.isfinite(low), G.max(axis=1) - low, 0.0))



DATASETS = [("iris.scale", None, 1.0), ("dna.scale", "dna.scale.t", 0.1)]


@pytest.mark.parametrize("bias", [-1.0, 1.0], ids=["nobias", "B1"])
@pytest.mark.parametrize("name,test_name,C", DATASETS, ids=[d[0] for d in DATASETS])
def test_optimum_equals_liblinear(name, test_name, C, bias):
    X, labels, Xt, _ = load_pair(name, test_name) if test_name else (*load(name), None, None)
    W_ll, wb_ll, ll_labels = liblinear_weights(X, labels, 4, C, bias)
    codes = np.array([ll_labels.index(int(v)) for v in labels])
    upper = np.full(codes.size, C)
    B = max(bias, 0.0)
    sol = solve(subproblem("crammer_singer", X, codes, upper, bias, tol=TIGHT))
    assert sol.status == "converged" and sol.w.shape == (len(ll_labels), X.shape[1])
    w_bias = sol.details["bias_weights"]
    f_ours = primal_objective(X, codes, upper, sol.w, w_bias, bias=B)
    f_theirs = primal_objective(X, codes, upper, W_ll, wb_ll, bias=B)
    assert f_ours == pytest.approx(sol.objective, rel=1e-12)
    assert abs(f_ours - f_theirs) <= 1e-6 * f_theirs
    # certificate, recomputed here from alpha: every sample's KKT violation within the tolerance
    D = with_bias_column(X, B)
    W_full = np.hstack([sol.w, w_bias[:, None]]) if B > 0 else sol.w
    assert kkt_violation(D, codes, upper, W_full, sol.dual) <= TIGHT
    np.testing.assert_array_equal(sol.coef, sol.dual[np.arange(codes.size), codes])
    # the dual objective meets the primal one at the optimum
    assert abs(sol.dual_objective + f_ours) <= 1e-6 * f_ours
    if Xt is not None:
        Dt = with_bias_column(Xt, B)
        theirs_full = np.hstack([W_ll, wb_ll[:, None]]) if B > 0 else W_ll
        agree = np.mean(np.argmax(Dt @ W_full.T, axis=1) == np.argmax(Dt @ theirs_full.T, axis=1))
        assert agree >= 0.995


def test_fit_model_is_argmax_of_class_scores():
    """The joint hook: one solve over all classes, and a LIBSVM model predicting argmax_m w_m.x."""
    X, labels = load("iris.scale")
    lines = []
    model = fastsvm.fit_model(X, labels, Params(solver="crammer_singer", C=1.0, bias=1.0, tol=1e-6,
                                                verbose=True), log=lines.append)
    assert model.info["solver"] == "crammer_singer" and len(model.info["n_iter"]) == 1
    assert any(line.startswith("obj = ") and line.count(".") == 4 for line in lines)  # 3 rhos
    W = model.info["primal_weights"][0]
    scores = X @ W.T - np.asarray(model.info["rho"][0])
    np.testing.assert_array_equal(fastsvm.predict(model, X), model.labels[np.argmax(scores, axis=1)])
    # two classes: one decision, w_first - w_second
    two = labels != labels[0]
    model2 = fastsvm.fit_model(X[two], labels[two], Params(solver="crammer_singer", C=1.0, tol=1e-6))
    W2 = model2.info["primal_weights"][0]
    np.testing.assert_allclose(model2.support_vectors.toarray()[0], W2[0] - W2[1], atol=1e-15)
    scores2 = X[two] @ W2.T
    np.testing.assert_array_equal(fastsvm.predict(model2, X[two]), model2.labels[np.argmax(scores2, axis=1)])
