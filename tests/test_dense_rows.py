"""Dense data stays dense: a NumPy array reaches the blocked solver, cross-validation and
prediction as it is (fastsvm.csr.to_rows), gives the model CSR input of the same values gives, and
is made CSR once for the solvers that read CSR only."""
import numpy as np
import pytest
import scipy.sparse as sp

import fastsvm
import fastsvm.solvers.block_smo as block_smo_module
import fastsvm.training.trainer as train
from fastsvm.tuning.crossval import cross_validation
from fastsvm.csr import RowSelection, is_dense, to_rows
from fastsvm.errors import FastSVMError
from fastsvm.files.modelfile import load_model, save_model
from fastsvm.params import Params
from fastsvm.models.prediction import decision_values
from fastsvm.training.trainer import fit_model


def dense_problem(n=360, p=80, classes=3, seed=0):
    """Dense rows (every value stored, 80 a row: block_smo holds them dense) and class labels."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = np.argmax(X[:, :classes] + 0.5 * rng.standard_normal((n, classes)), axis=1).astype(float)
    return X, y


def refuse_dense_to_csr(monkeypatch):
    """Make every conversion of a dense array to CSR in training fail the test."""
    def guarded(original):
        def to_csr(X, *args, **kwargs):
            if isinstance(X, np.ndarray):
                pytest.fail("dense rows made CSR")
            return original(X, *args, **kwargs)
        return to_csr
    for module in (train, block_smo_module):
        monkeypatch.setattr(module, "to_csr", guarded(module.to_csr))


def assert_same_model(a, b, rtol):
    np.testing.assert_array_equal(a.n_sv, b.n_sv)
    np.testing.assert_array_equal(a.sv_indices, b.sv_indices)
    np.testing.assert_allclose(a.sv_coef, b.sv_coef, rtol=rtol, atol=rtol * np.abs(b.sv_coef).max())
    np.testing.assert_allclose(a.rho, b.rho, rtol=rtol, atol=rtol * max(1.0, np.abs(b.rho).max()))


def test_to_rows_keeps_dense_input_dense():
    X = np.arange(12.0).reshape(3, 4)
    assert to_rows(X) is X
    for other in (np.asfortranarray(X), X.astype(np.float32), X.tolist(), X[:, ::2]):
        rows = to_rows(other)
        assert is_dense(rows) and rows.dtype == np.float64 and rows.flags.c_contiguous
        np.testing.assert_array_equal(rows, np.asarray(other, dtype=np.float64))
    assert sp.issparse(to_rows(sp.csc_matrix(X)))
    with pytest.raises(FastSVMError, match="NaN or infinity"):
        to_rows(np.array([[1.0, np.nan]]))
    with pytest.raises(FastSVMError, match="2-D"):
        to_rows(np.ones(3))


def test_support_vectors_of_dense_rows_are_rows_of_the_input():
    X, _ = dense_problem(n=20, p=5)
    X[3, 1] = 0.0
    selection = RowSelection(X, [3, 7])
    assert selection.base is X and selection.shape == (2, 5)
    np.testing.assert_array_equal(selection.toarray(), X[[3, 7]])
    assert selection.tocsr().nnz == 9   # the zero is not stored


@pytest.mark.parametrize("svm_type", ["c_svc", "nu_svc", "epsilon_svr", "one_class"])
def test_block_smo_trains_on_dense_rows_as_on_csr(svm_type, monkeypatch):
    X, y = dense_problem()
    if svm_type == "epsilon_svr":
        y = X[:, 0] - X[:, 1] + 0.1 * y
    params = Params(svm_type=svm_type, solver="block_smo", gamma=0.01, tol=1e-8, nu=0.3,
                    options={"working_set": 32}, verbose=False)
    csr_model = fit_model(sp.csr_matrix(X), y, params)
    refuse_dense_to_csr(monkeypatch)
    model = fit_model(X, y, params)
    assert model.support_vectors.base is X     # read in place, never copied or made CSR
    assert all(details["dense"] for details in model.info["details"])
    assert_same_model(model, csr_model, rtol=1e-10)
    np.testing.assert_allclose(decision_values(model, X), decision_values(csr_model, sp.csr_matrix(X)),
                               rtol=1e-10, atol=1e-10)


def test_a_dense_model_is_written_and_read_as_libsvm_writes_it(tmp_path):
    X, y = dense_problem(n=120, p=70)
    X[X < -1.0] = 0.0   # zeros are not written
    params = Params(solver="block_smo", gamma=0.02, verbose=False)
    dense, sparse = fit_model(X, y, params), fit_model(sp.csr_matrix(X), y, params)
    save_model(dense, tmp_path / "dense")
    save_model(sparse, tmp_path / "sparse")
    assert (tmp_path / "dense").read_bytes() == (tmp_path / "sparse").read_bytes()
    np.testing.assert_allclose(load_model(tmp_path / "dense").support_vectors.toarray(),
                               dense.support_vectors.toarray(), rtol=1e-7)   # LIBSVM writes %.8g


def test_solvers_of_csr_get_dense_input_converted_once_with_the_same_bits(monkeypatch):
    X, y = dense_problem(n=200, p=70)
    params = Params(solver="smo", gamma=0.02, verbose=False)
    expected = fit_model(sp.csr_matrix(X), y, params)
    conversions = []
    original = train.to_csr
    monkeypatch.setattr(train, "to_csr", lambda A, *a, **k: conversions.append(type(A)) or original(A, *a, **k))
    model = fit_model(X, y, params)
    assert conversions == [np.ndarray]
    np.testing.assert_array_equal(model.sv_coef, expected.sv_coef)
    np.testing.assert_array_equal(model.rho, expected.rho)
    # auto below its threshold: smo on the pair's rows made CSR, LIBSVM's model bit for bit
    auto = fit_model(X, y, Params(solver="auto", gamma=0.02, verbose=False))
    np.testing.assert_array_equal(auto.sv_coef, expected.sv_coef)
    np.testing.assert_array_equal(auto.rho, expected.rho)


def test_cross_validation_on_dense_rows_predicts_as_on_csr():
    X, y = dense_problem(n=240, p=70)
    for solver in ("block_smo", "smo"):
        params = Params(solver=solver, gamma=0.02, tol=1e-8, verbose=False)
        dense = cross_validation(X, y, params, 4)
        np.testing.assert_array_equal(dense, cross_validation(sp.csr_matrix(X), y, params, 4))


def test_estimators_keep_dense_input_dense(monkeypatch):
    X, y = dense_problem(n=200, p=70)
    refuse_dense_to_csr(monkeypatch)
    dense = fastsvm.SVC(solver="block_smo", gamma=0.02, tol=1e-8).fit(X, y)
    monkeypatch.undo()
    sparse = fastsvm.SVC(solver="block_smo", gamma=0.02, tol=1e-8).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(dense.support_, sparse.support_)
    np.testing.assert_allclose(dense.decision_function(X), sparse.decision_function(sp.csr_matrix(X)),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(dense.predict(np.asfortranarray(X)), sparse.predict(X))


def test_auto_keeps_dense_rows_for_its_blocked_pairs_and_gives_smo_the_rest_as_csr(monkeypatch):
    from fastsvm.solvers import auto
    X, y = dense_problem(n=360, p=70)          # three classes: pairs of about 240 rows
    params = Params(solver="auto", gamma=0.02, verbose=False)
    expected = fit_model(sp.csr_matrix(X), y, Params(solver="smo", gamma=0.02, verbose=False))
    monkeypatch.setattr(auto, "BLOCKED_FROM", 300)   # the training is blocked, its pairs are not
    assert auto.blocked(360, "c_svc") and not auto.blocked(240, "c_svc")
    model = fit_model(X, y, params)
    assert model.support_vectors.base is X
    np.testing.assert_array_equal(model.sv_coef, expected.sv_coef)
    np.testing.assert_array_equal(model.rho, expected.rho)
