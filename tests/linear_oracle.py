"""liblinear-official as the oracle of the linear primal and Crammer-Singer solvers: data loading,
its weights, and the Subproblem a solver gets (shared by test_primal_newton, test_l1_cd and
test_crammer_singer)."""
import functools

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from conftest import SHIPPED_DATA, shared_file
from fastsvm.csr import to_csr
from fastsvm.params import Params
from fastsvm.solvers.base import Kernel, Subproblem


def liblinear():
    """liblinear-official's Python interface; the test that needs it skips without it."""
    return pytest.importorskip("liblinear.liblinearutil")


@functools.cache
def load(name):
    """A shipped (data/) or shared dataset as canonical CSR, with its labels."""
    path = SHIPPED_DATA / name
    if not path.is_file():
        path = shared_file(name)
    X, y = load_svmlight_file(str(path), zero_based=False)
    return to_csr(X), y


def load_pair(name, test_name):
    """Training and test sets with the same number of columns."""
    X, y = load(name)
    Xt, yt = load(test_name)
    n = max(X.shape[1], Xt.shape[1])

    def widen(A):
        return to_csr(sp.csr_matrix((A.data, A.indices, A.indptr), shape=(A.shape[0], n)))
    return widen(X), y, widen(Xt), yt


def liblinear_weights(X, labels, solver_type, C, B, *, eps=1e-8):
    """liblinear-official's (W, w_bias, its labels): W has one row per decision function (one for
    a binary -s 2 / -s 5 model, +1 = its first label; k for -s 4), w_bias the bias weights."""
    liblinearutil = liblinear()
    model = liblinearutil.train(liblinearutil.problem(labels, X),
                                liblinearutil.parameter(f"-s {solver_type} -c {C} -e {eps} -B {B} -q"))
    n_rows = model.get_nr_class() if solver_type == 4 else 1
    W = np.zeros((n_rows, X.shape[1]))
    n_stored = min(model.get_nr_feature(), X.shape[1])
    for m in range(n_rows):
        W[m, :n_stored] = [model.get_decfun_coef(j + 1, m) for j in range(n_stored)]
    w_bias = np.array([model.get_decfun_bias(m) / B if B > 0 else 0.0 for m in range(n_rows)])
    return W, w_bias, list(model.get_labels())


def subproblem(solver, X, y, upper, bias=-1.0, *, tol=1e-8, max_iter=100_000, seed=0):
    params = Params(solver=solver, kernel_type="linear", loss="squared_hinge", bias=bias, tol=tol,
                    max_iter=max_iter)
    return Subproblem("c_svc", X, np.asarray(y, dtype=float), np.asarray(upper, dtype=float),
                      Kernel("linear"), params, seed=seed)


def with_bias_column(X, B):
    """X (CSR) with the bias feature appended when B > 0."""
    return sp.hstack([X, np.full((X.shape[0], 1), B)], format="csr") if B > 0 else X


def binary_oracle(solve, solver, solver_type, name, test_name, *, C, bias, tol):
    """Our binary solve and liblinear-official's (-s solver_type) on one data set, as full weight
    vectors (the bias weight appended when B > 0): (solution, D, y, upper, ours, theirs, Dt)."""
    X, labels, Xt, _ = load_pair(name, test_name)
    W, w_bias, ll_labels = liblinear_weights(X, labels, solver_type, C, bias)
    y = np.where(labels == ll_labels[0], 1.0, -1.0)
    upper = np.full(y.size, C)
    B = max(bias, 0.0)
    sol = solve(subproblem(solver, X, y, upper, bias, tol=tol))
    ours = np.append(sol.w, sol.details["bias_weight"]) if B > 0 else sol.w
    theirs = np.append(W[0], w_bias[0]) if B > 0 else W[0]
    return sol, with_bias_column(X, B), y, upper, ours, theirs, with_bias_column(Xt, B)


def assert_same_signs(Dt, ours, theirs):
    """Test predictions agree, but for points within 1e-4 of liblinear's hyperplane (<= 0.1%)."""
    dec_ours, dec_theirs = Dt @ ours, Dt @ theirs
    differ = np.sign(dec_ours) != np.sign(dec_theirs)
    assert differ.mean() <= 1e-3 and np.all(np.abs(dec_theirs[differ]) < 1e-4)
