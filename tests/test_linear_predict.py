"""Linear-kernel models predict through their weight vectors w_p = sum_i coef_{p,i} sv_i, and
one-vs-one votes are counted for all rows and pairs at once.

The weight path is held against the support-vector path (``exact=True``, LIBSVM's sums, itself
tested against LIBSVM in test_predict.py) on trained models, against a dense NumPy twin of the
Cython kernel (both of its layouts), and the vote against a row-by-row Python loop.
"""
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import shared_file
from fastsvm._core._linear_predict import LinearDecisionFunction
from fastsvm.csr import to_csr
from fastsvm.files.datafile import load_svmlight_file
from fastsvm.models.model import Model
from fastsvm.files.modelfile import load_model
from fastsvm.params import Params
from fastsvm.models.prediction import (EXACT_REGRESSION_LIMIT, decision_values, one_vs_one_winners, predict,
                                       predicts_through_weights)
from fastsvm.training.trainer import fit_model

BIN = Path(sys.executable).parent
SVM_TRAIN = shutil.which("svm-train")
SVM_PREDICT = shutil.which("svm-predict")


def relative_gap(actual, expected):
    return np.abs(actual - expected).max() / np.abs(expected).max()


# ----------------------------------------------------------------------------------------------
# the weight path against the support-vector path on trained models
# ----------------------------------------------------------------------------------------------

def test_ssnal_linear_model_on_a9a():
    X, y = load_svmlight_file(str(shared_file("a9a")))
    X_test, y_test = load_svmlight_file(str(shared_file("a9a.t")), n_features=X.shape[1])
    model = fit_model(X[:6000], y[:6000], Params(solver="ssnal", kernel_type="linear", verbose=False))
    assert model.support_vectors.shape[0] > 1000
    assert predicts_through_weights(model)
    through_w = decision_values(model, X_test, n_jobs=2)
    through_sv = decision_values(model, X_test, n_jobs=2, exact=True)
    assert relative_gap(through_w, through_sv) < 1e-10
    np.testing.assert_array_equal(predict(model, X_test), predict(model, X_test, exact=True))
    # the weights are formed once and kept with the model
    assert model.decision_weights() is model.decision_weights()


def test_multiclass_linear_libsvm_model_file_on_dna(tmp_path):
    svmutil = pytest.importorskip("libsvm.svmutil")
    y, x = svmutil.svm_read_problem(str(shared_file("dna.scale")), return_scipy=True)
    path = tmp_path / "dna.model"
    svmutil.svm_save_model(str(path), svmutil.svm_train(y, x, "-s 0 -t 0 -c 0.1 -q"))
    model = load_model(path)
    X_test, _ = load_svmlight_file(str(shared_file("dna.scale.t")), n_features=x.shape[1])
    assert model.nr_class == 3 and predicts_through_weights(model)
    through_w = decision_values(model, X_test)
    through_sv = decision_values(model, X_test, exact=True)
    assert relative_gap(through_w, through_sv) < 1e-10
    np.testing.assert_array_equal(predict(model, X_test), predict(model, X_test, exact=True))


def random_linear_model(rng, svm_type, n_sv, n_features, nr_class=2, *, density=1.0):
    sv = sp.random(n_sv, n_features, density=density, random_state=rng, format="csr")
    classification = svm_type == "c_svc"
    k = nr_class if classification else 2
    n_sv_per_class = np.diff(np.linspace(0, n_sv, k + 1).astype(int)) if classification else None
    return Model(svm_type, "linear", sv, sv_coef=rng.normal(size=(k - 1, n_sv)),
                 rho=rng.normal(size=k * (k - 1) // 2),
                 labels=np.arange(k) * 3 + 1 if classification else None, n_sv=n_sv_per_class)


def test_many_support_vectors_built_directly():
    """100,000 SVs x 50 features (the shape of a large SSsNAL fit): the weight path equals a
    dense NumPy evaluation of x . w - rho (the time is measured by tools/bench_predict_linear.py)."""
    rng = np.random.default_rng(0)
    model = random_linear_model(rng, "c_svc", 100_000, 50)
    X = to_csr(rng.normal(size=(20_000, 50)))
    assert predicts_through_weights(model)
    w = model.sv_coef[0] @ model.support_vectors.toarray()
    dec = decision_values(model, X, n_jobs=2)
    np.testing.assert_allclose(dec[:, 0], X.toarray() @ w - model.rho[0], rtol=1e-9,
                               atol=1e-9 * np.abs(w).sum())
    np.testing.assert_array_equal(predict(model, X), np.where(dec[:, 0] > 0, 1.0, 4.0))
    # and the support-vector sums on a few rows
    assert relative_gap(dec[:20], decision_values(model, X[:20], exact=True)) < 1e-10


def test_weights_of_a_model_equal_a_dense_twin():
    """Model.decision_weights against sum_i coef_{p,i} sv_i formed densely, pair by pair."""
    rng = np.random.default_rng(1)
    for svm_type, nr_class in (("c_svc", 2), ("c_svc", 5), ("epsilon_svr", 2), ("one_class", 2)):
        model = random_linear_model(rng, svm_type, 40, 9, nr_class, density=0.4)
        Z = model.support_vectors.toarray()
        if svm_type == "c_svc":
            start = np.concatenate([[0], np.cumsum(model.n_sv)])
            expected = []
            for a in range(nr_class):
                for b in range(a + 1, nr_class):
                    sa, sb = slice(start[a], start[a + 1]), slice(start[b], start[b + 1])
                    expected.append(model.sv_coef[b - 1, sa] @ Z[sa] + model.sv_coef[a, sb] @ Z[sb])
            expected = np.array(expected)
        else:
            expected = model.sv_coef[:1] @ Z
        weights = model.decision_weights()
        assert weights.has_sorted_indices
        np.testing.assert_allclose(weights.toarray(), expected, rtol=1e-13, atol=1e-13)


def test_model_with_a_huge_feature_index():
    """Support vectors with an index of 2**31 - 2 (the width of the model): the weights keep the
    columns that occur, and rows are evaluated without a buffer of the model's width."""
    top = 2**31 - 2
    sv = sp.csr_matrix(([1.0, 2.0, -1.0, 0.5], [0, top, 5, top], [0, 2, 4]), shape=(2, top + 1))
    model = Model("c_svc", "linear", sv, sv_coef=[[0.5, -1.0]], rho=[0.25], labels=[1, -1], n_sv=[1, 1])
    weights = model.decision_weights()
    np.testing.assert_array_equal(weights.indices, [0, 5, top])
    np.testing.assert_array_equal(weights.data, [0.5, 1.0, 0.5])
    X = sp.csr_matrix(([3.0, 1.0, 4.0, 1.0], [0, 5, top, top], [0, 3, 4]), shape=(2, top + 1))
    np.testing.assert_array_equal(decision_values(model, X), [[4.25], [0.25]])


def test_weights_cached_until_the_arrays_are_replaced():
    rng = np.random.default_rng(2)
    model = random_linear_model(rng, "epsilon_svr", 30, 6)
    first = model.decision_weights()
    model.sv_coef = model.sv_coef * 2
    np.testing.assert_allclose(model.decision_weights().toarray(), 2 * first.toarray(), rtol=1e-14)


# ----------------------------------------------------------------------------------------------
# where the weight path applies
# ----------------------------------------------------------------------------------------------

def test_small_linear_regression_keeps_libsvms_sums_unless_asked():
    rng = np.random.default_rng(3)
    model = random_linear_model(rng, "epsilon_svr", 200, 20)
    X = to_csr(rng.normal(size=(300, 20)))
    assert not predicts_through_weights(model)
    assert predicts_through_weights(model, exact=False)
    exact = decision_values(model, X, exact=True)
    assert np.array_equal(decision_values(model, X), exact)
    assert relative_gap(decision_values(model, X, exact=False), exact) < 1e-12


def test_large_linear_regression_goes_through_weights():
    rng = np.random.default_rng(4)
    n_sv = EXACT_REGRESSION_LIMIT // 20 + 1
    model = random_linear_model(rng, "nu_svr", n_sv, 20)
    assert predicts_through_weights(model) and not predicts_through_weights(model, exact=True)
    X = to_csr(rng.normal(size=(50, 20)))
    assert relative_gap(decision_values(model, X), decision_values(model, X, exact=True)) < 1e-10


def test_other_kernels_and_many_classes_with_few_svs_keep_the_sv_path():
    rng = np.random.default_rng(5)
    rbf = random_linear_model(rng, "c_svc", 50, 5)
    rbf.kernel_type = "rbf"
    assert not predicts_through_weights(rbf, exact=False)
    # 60 classes, one dense SV each: 1,770 weight vectors cost more per row than 60 SVs
    many = random_linear_model(rng, "c_svc", 60, 200, nr_class=60)
    assert not predicts_through_weights(many)
    X = to_csr(rng.normal(size=(5, 200)))
    assert np.array_equal(decision_values(many, X), decision_values(many, X, exact=True))


@pytest.mark.skipif(SVM_TRAIN is None or SVM_PREDICT is None,
                    reason="LIBSVM's svm-train / svm-predict not installed")
def test_cli_linear_regression_output_identical_to_svm_predict(tmp_path):
    """A small linear epsilon-SVR keeps LIBSVM's sums: fastsvm-predict's %.17g values are
    svm-predict's, byte for byte (a linear classifier's labels are covered by test_predict_output)."""
    data, model = shared_file("housing_scale"), tmp_path / "model"
    subprocess.run([SVM_TRAIN, "-q", "-s", "3", "-t", "0", data, model], check=True)
    subprocess.run([str(BIN / "fastsvm-predict"), "-q", data, model, tmp_path / "ours"], check=True)
    subprocess.run([SVM_PREDICT, "-q", data, model, tmp_path / "theirs"], check=True, capture_output=True)
    assert (tmp_path / "ours").read_bytes() == (tmp_path / "theirs").read_bytes()


# ----------------------------------------------------------------------------------------------
# the Cython kernel against a dense NumPy twin
# ----------------------------------------------------------------------------------------------

def twin_linear_decisions(W, rho, X):
    """x . w_p - rho_p densely; columns beyond either side's width count as zeros."""
    width = max(W.shape[1], X.shape[1])
    Wd = np.zeros((W.shape[0], width))
    Wd[:, :W.shape[1]] = W.toarray()
    Xd = np.zeros((X.shape[0], width))
    Xd[:, :X.shape[1]] = X.toarray()
    return Xd @ Wd.T - rho


def kernel_values(W, rho, X, dense, n_threads):
    function = LinearDecisionFunction(W, rho, dense)
    out = np.empty((X.shape[0], W.shape[0]))
    function.compute(X, out, n_threads)
    return out


def test_kernel_matches_numpy_twin_in_both_layouts():
    rng = np.random.default_rng(6)
    W = to_csr(sp.random(6, 15, density=0.3, random_state=rng, format="csr"))
    rho = rng.normal(size=6)
    for cols in (4, 15, 40):   # rows narrower and wider than the weights
        X = to_csr(sp.random(2000, cols, density=0.4, random_state=rng, format="csr"))
        dense = kernel_values(W, rho, X, True, 1)
        np.testing.assert_allclose(dense, twin_linear_decisions(W, rho, X), rtol=1e-13, atol=1e-13)
        # both layouts sum the same products in the row's index order; threads: the same bits
        for layout, n_threads in ((False, 1), (True, 2), (False, 2)):
            assert np.array_equal(kernel_values(W, rho, X, layout, n_threads), dense)


def test_kernel_with_a_huge_feature_index():
    """Weights in columns up to 2**31 - 2 held sparse (sorted index + value): no dense buffer."""
    top = 2**31 - 2
    W = to_csr(sp.csr_matrix(([1.5, -2.0, 4.0, 0.5], [3, top, 0, 7], [0, 2, 4]), shape=(2, top + 1)))
    X = to_csr(sp.csr_matrix(([2.0, 1.0, 3.0, 5.0], [3, top, 7, 8], [0, 2, 4, 4]), shape=(3, top + 1)))
    np.testing.assert_array_equal(kernel_values(W, np.array([0.25, -1.0]), X, False, 2),
                                  [[3.0 - 2.0 - 0.25, 1.0], [-0.25, 1.5 + 1.0], [-0.25, 1.0]])


def test_kernel_empty_inputs():
    W = to_csr(sp.csr_matrix((2, 0)))
    X = to_csr(sp.csr_matrix((3, 4)))
    np.testing.assert_array_equal(kernel_values(W, np.array([1.0, -2.0]), X, True, 1), [[-1.0, 2.0]] * 3)
    assert kernel_values(W, np.zeros(2), to_csr(sp.csr_matrix((0, 4))), False, 1).shape == (0, 2)


# ----------------------------------------------------------------------------------------------
# one-vs-one voting
# ----------------------------------------------------------------------------------------------

def reference_winners(dec, nr_class):
    """svm_predict's vote, row by row: pair (i, j) votes i when its value is > 0, else j; the
    first class with the most votes wins."""
    winners = []
    for row in dec:
        votes = [0] * nr_class
        p = 0
        for i in range(nr_class):
            for j in range(i + 1, nr_class):
                if row[p] > 0:
                    votes[i] += 1
                else:
                    votes[j] += 1
                p += 1
        best = 0
        for c in range(1, nr_class):
            if votes[c] > votes[best]:
                best = c
        winners.append(best)
    return np.array(winners)


@pytest.mark.parametrize("nr_class", [2, 3, 40])
def test_vote_matches_reference_loop_with_ties(nr_class):
    rng = np.random.default_rng(nr_class)
    n_dec = nr_class * (nr_class - 1) // 2
    # values in {-1, 0, 1} (zeros vote for j) and NaN: many rows with tied counts
    dec = rng.integers(-1, 2, size=(3000, n_dec)).astype(float)
    dec[rng.random(dec.shape) < 0.01] = np.nan
    expected = reference_winners(dec, nr_class)
    assert np.array_equal(one_vs_one_winners(dec, nr_class), expected)
    if nr_class == 3:   # three classes each winning one pair: the first class
        assert one_vs_one_winners(np.array([[1.0, -1.0, 1.0]]), 3)[0] == 0
