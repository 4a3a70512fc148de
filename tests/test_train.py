"""fastsvm.training.trainer and fastsvm.training.multiclass: class grouping, one-vs-one / one-vs-rest
splitting and LIBSVM's model layout, checked with stand-in solvers whose answers are known, so the
layout is tested on its own."""
import subprocess
import sys
import threading

import numpy as np
import pytest
import scipy.sparse as sp

import fastsvm.training.schedule as schedule_module
import fastsvm.training.trainer as train_module
from fastsvm.params import Params
from fastsvm.solvers import Solution, Solver
from fastsvm.training.multiclass import group_classes
from fastsvm.training.trainer import fit_model
from conftest import solver_like


def test_group_classes_first_occurrence_and_plus_one_first():
    g = group_classes([3, 1, 3, 2, 1])
    assert g.labels.tolist() == [3, 1, 2]
    assert [r.tolist() for r in g.rows] == [[0, 2], [1, 4], [3]]
    assert group_classes([-1, 1, -1]).labels.tolist() == [1, -1]      # LIBSVM's swap
    assert group_classes([-1, 2, -1]).labels.tolist() == [-1, 2]      # only for -1/+1
    assert group_classes([1.7, -0.2, 1.2]).labels.tolist() == [1, 0]  # (int) truncation


def _fake_ovo(problem):
    """coef_i = y_i * id_i for rows whose id (column 0) is not a multiple of 3, else 0; the
    subproblem's identity is encoded in rho so the test can find which pair it was."""
    ids = problem.x_rows()[:, 0].toarray().ravel()
    coef = np.where(ids % 3 == 0, 0.0, problem.y * ids)
    rho = float(ids[problem.y > 0].min() * 1000 + ids[problem.y < 0].min())
    return Solution(coef=coef, rho=rho, n_iter=1)


def _fake_ovr(problem):
    """w = mean of the positive rows; rho = -(number of positive rows)."""
    pos = problem.x_rows(problem.y > 0)
    return Solution(coef=np.zeros(problem.y.shape[0]), rho=-float(pos.shape[0]),
                    w=np.asarray(pos.mean(axis=0)).ravel(), n_iter=1)


@pytest.fixture
def fake_solver(monkeypatch):
    def install(solve, multiclass, stops_on_signals=False):
        spec = solver_like(Solver(), name="fake", solve=solve, formulations=("c_svc",), kernels=("linear",),
                           multiclass=multiclass, default_kernel="linear", default_tol=1e-3,
                           stops_on_signals=stops_on_signals)
        monkeypatch.setattr(train_module, "get_solver", lambda name: spec)
    return install


def test_one_vs_one_layout_is_libsvms(fake_solver):
    fake_solver(_fake_ovo, "ovo")
    y = np.array([5, 7, 5, 9, 7, 9, 9, 5, 7, 5, 9, 7])
    ids = np.arange(1, y.size + 1, dtype=float)
    X = sp.csr_matrix(np.column_stack([ids, np.ones_like(ids)]))
    model = fit_model(X, y, Params(solver="fake", kernel_type="linear"))
    labels = model.labels.tolist()
    assert labels == [5, 7, 9]
    rows = {c: np.flatnonzero(y == c) for c in labels}
    sv_ids = model.support_vectors[:, 0].toarray().ravel()
    np.testing.assert_array_equal(sv_ids, model.sv_indices)       # SV k is training row id k
    # SVs: every row whose id is not a multiple of 3, grouped by class, in file order per class
    expect = np.concatenate([ids[rows[c]][ids[rows[c]] % 3 != 0] for c in labels])
    np.testing.assert_array_equal(sv_ids, expect)
    assert model.n_sv.tolist() == [np.count_nonzero(ids[rows[c]] % 3) for c in labels]
    start = np.concatenate([[0], np.cumsum(model.n_sv)])
    k = 0
    for i in range(3):
        for j in range(i + 1, 3):
            # LIBSVM: pair (i, j) keeps class i's coefficients in row j-1, class j's in row i
            ci = model.sv_coef[j - 1, start[i]:start[i + 1]]
            cj = model.sv_coef[i, start[j]:start[j + 1]]
            np.testing.assert_array_equal(ci, sv_ids[start[i]:start[i + 1]])
            np.testing.assert_array_equal(cj, -sv_ids[start[j]:start[j + 1]])
            first_i, first_j = ids[rows[labels[i]]].min(), ids[rows[labels[j]]].min()
            assert model.rho[k] == first_i * 1000 + first_j
            k += 1


def test_heap_pages_are_given_back_after_several_problems_only(fake_solver, monkeypatch):
    # one-vs-one results stay alive amid the freed caches: trimmed; a single problem's pages are
    # left for the next fit (trimmed, they would all fault in again)
    trims = []
    monkeypatch.setattr(schedule_module, "release_free_memory", lambda: trims.append(1))
    fake_solver(_fake_ovo, "ovo")
    ids = np.arange(1, 13, dtype=float)
    X = sp.csr_matrix(np.column_stack([ids, np.ones_like(ids)]))
    fit_model(X, np.array([5, 7] * 6), Params(solver="fake", kernel_type="linear"))
    assert trims == []
    fit_model(X, np.array([5, 7, 9] * 4), Params(solver="fake", kernel_type="linear"))
    assert trims == [1]


@pytest.mark.parametrize("stops_on_signals", [False, True])
def test_a_single_problem_runs_on_the_main_thread_when_its_solver_watches_ctrl_c(
        fake_solver, stops_on_signals):
    # else in a worker, so that Ctrl-C reaches the main thread, which sets Subproblem.stop
    threads = []

    def solve(problem):
        threads.append(threading.current_thread() is threading.main_thread())
        return _fake_ovo(problem)

    fake_solver(solve, "ovo", stops_on_signals)
    ids = np.arange(1, 13, dtype=float)
    X = sp.csr_matrix(np.column_stack([ids, np.ones_like(ids)]))
    fit_model(X, np.array([5, 7] * 6), Params(solver="fake", kernel_type="linear", n_jobs=2))
    assert threads == [stops_on_signals]
    threads.clear()
    fit_model(X, np.array([5, 7, 9] * 4), Params(solver="fake", kernel_type="linear", n_jobs=2))
    # the largest pair alone first, then the others side by side in workers
    assert threads == [stops_on_signals, False, False]


def test_one_vs_rest_weights_decide_by_argmax(fake_solver):
    fake_solver(_fake_ovr, "ovr")
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, size=40)
    X = sp.csr_matrix(rng.normal(size=(40, 6)))
    model = fit_model(X, y, Params(solver="fake", kernel_type="linear"))
    scores = []
    for c in model.labels:
        w = np.asarray(X[y == c].mean(axis=0)).ravel()
        scores.append(X @ w + np.count_nonzero(y == c))
    scores = np.column_stack(scores)
    # pairwise decision values of the LIBSVM representation equal s_i - s_j
    sv = model.support_vectors.toarray()
    start = np.concatenate([[0], np.cumsum(model.n_sv)])
    k = 0
    for i in range(4):
        for j in range(i + 1, 4):
            dec = (X @ (sv[start[i]:start[i + 1]].T @ model.sv_coef[j - 1, start[i]:start[i + 1]])
                   + X @ (sv[start[j]:start[j + 1]].T @ model.sv_coef[i, start[j]:start[j + 1]])
                   - model.rho[k])
            np.testing.assert_allclose(dec, scores[:, i] - scores[:, j], atol=1e-12)
            k += 1


def test_binary_one_vs_rest_is_one_weight_vector(fake_solver):
    fake_solver(_fake_ovr, "ovr")
    X = sp.csr_matrix(np.array([[1.0, 0], [0, 1], [1, 1]]))
    model = fit_model(X, [-1, 1, 1], Params(solver="fake", kernel_type="linear"))
    assert model.labels.tolist() == [1, -1]
    np.testing.assert_allclose(model.support_vectors.toarray(), [[0.5, 1.0]])
    assert model.sv_coef.tolist() == [[1.0]] and model.rho.tolist() == [-2.0]
    assert model.n_sv.tolist() == [1, 0]


def test_sample_weight_zero_rows_are_left_out(fake_solver):
    seen = []

    def solve(problem):
        seen.append(problem.y.shape[0])
        return _fake_ovo(problem)

    fake_solver(solve, "ovo")
    X = sp.csr_matrix(np.column_stack([np.arange(1.0, 7), np.ones(6)]))
    fit_model(X, [1, 1, 1, -1, -1, -1], Params(solver="fake", kernel_type="linear"),
              sample_weight=[1, 0, 2, 1, 1, 0])
    assert seen == [4]


def test_bad_inputs_are_clear_errors():
    from fastsvm.errors import FastSVMError
    X = sp.csr_matrix(np.eye(3))
    with pytest.raises(FastSVMError, match="rows but y has"):
        fit_model(X, [1, -1], Params(solver="dcd"))
    with pytest.raises(FastSVMError, match="NaN"):
        fit_model(X, [1, -1, np.nan], Params(solver="dcd"))
    with pytest.raises(FastSVMError, match="non-negative"):
        fit_model(X, [1, -1, 1], Params(solver="dcd"), sample_weight=[1, -1, 1])
    with pytest.raises(FastSVMError, match="unknown solver"):
        fit_model(X, [1, -1, 1], Params(solver="nope"))


def test_solvers_run_with_one_blas_thread_and_the_setting_is_restored(fake_solver):
    # threaded OpenBLAS calls leave spinning workers that take cores from the solvers' own threads
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    seen = []

    def solve(problem):
        seen.append(blas_threads())
        return _fake_ovr(problem)

    fake_solver(solve, "ovr")
    X = sp.csr_matrix(np.eye(4))
    with threadpool_limits(2, user_api="blas"):
        fit_model(X, np.array([1, -1, 1, -1]), Params(solver="fake", kernel_type="linear"))
        after = blas_threads()
    assert seen and all(n == [1] * len(n) for n in seen)
    assert after == [2] * len(after)


def test_one_blas_thread_limits_a_blas_loaded_after_the_first_fit(tmp_path):
    # scipy's own OpenBLAS comes with scipy.linalg, which a program may import after a first fit
    code = """
import numpy as np, scipy.sparse as sp
from threadpoolctl import threadpool_info, threadpool_limits
from fastsvm.params import Params
from fastsvm.parallel import one_blas_thread
from fastsvm.training.trainer import fit_model
X, y = sp.csr_matrix(np.eye(4)), np.array([1.0, -1.0, 1.0, -1.0])
fit_model(X, y, Params(kernel_type="linear"))
import scipy.linalg
with threadpool_limits(2, user_api="blas"), one_blas_thread():
    print(*(lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() and set(result.stdout.split()) == {"1"}, result.stdout


# ---------------------------------------------------------------- support vectors read in place

def _three_class_data():
    rng = np.random.default_rng(5)
    y = np.repeat([2.0, 1.0, 3.0], 40)
    X = sp.random(120, 8, density=0.6, random_state=rng, format="csr") + sp.csr_matrix(
        np.outer(y, np.ones(8)) * 0.3)
    return sp.csr_matrix(X), y


@pytest.mark.parametrize("svm_type", ["c_svc", "epsilon_svr"])
def test_support_vectors_are_training_rows_named_not_copied(tmp_path, svm_type):
    from fastsvm.csr import RowSelection, to_csr
    from fastsvm.files.modelfile import save_model
    from fastsvm.models.prediction import decision_values
    X, y = _three_class_data()
    X = to_csr(X)
    model = fit_model(X, y, Params(svm_type=svm_type, kernel_type="rbf", gamma=0.2))
    sv = model.support_vectors
    assert isinstance(sv, RowSelection) and np.shares_memory(sv.base.data, X.data)   # no copy
    own = model.detached()
    assert sp.issparse(own.support_vectors) and own.support_vectors.shape == sv.shape
    np.testing.assert_array_equal(own.support_vectors.toarray(), X[model.info["support_rows"]].toarray())
    # prediction and the model file read the rows in place, with the same results as the copy
    np.testing.assert_array_equal(decision_values(model, X), decision_values(own, X))
    save_model(model, tmp_path / "in_place.model")
    save_model(own, tmp_path / "copied.model")
    assert (tmp_path / "in_place.model").read_bytes() == (tmp_path / "copied.model").read_bytes()
    # a pickled model carries its support vectors, not the training data
    import pickle
    again = pickle.loads(pickle.dumps(model))
    assert sp.issparse(again.support_vectors) and again.support_vectors.shape == sv.shape
    np.testing.assert_array_equal(decision_values(again, X), decision_values(own, X))


def test_an_estimators_model_keeps_its_support_vectors_not_the_training_data():
    from fastsvm import SVC
    X, y = _three_class_data()
    clf = SVC(kernel="rbf", gamma=0.2).fit(X, y)
    own = clf.model_.support_vectors
    assert sp.issparse(own) and own.shape == clf.support_vectors_.shape
    np.testing.assert_array_equal(own.toarray(), clf.support_vectors_.toarray())
