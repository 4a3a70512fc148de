"""Probability training (-b 1) against LIBSVM 3.37 (libsvm-official) and independent references.

LIBSVM draws its internal folds from the C library's rand() and fastsvm by default from a seeded
numpy Generator, so the Platt parameters and Laplace scales are compared as estimates (the
calibrated log-loss on held-out data, the scale within a few per cent); with Params.libsvm_folds
fastsvm draws LIBSVM's folds and they are compared to rounding, as is what involves no randomness
(the one-class density marks, probabilities from a given model file). LIBSVM's rand() is seeded
with srand() before each of its trainings so these tests do not depend on what ran before them in
the process.
"""
import contextlib
import ctypes
import dataclasses
import platform
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit

import fastsvm.training.trainer
from conftest import libsvm_one_thread, shared_file
from fastsvm import ParameterError, Params, fit_model, load_model, save_model
from fastsvm.tuning.crossval import cross_validation, fold_permutation
from fastsvm.csr import to_csr
from fastsvm.models.prediction import predict, predict_probability
from fastsvm.models.probability import (binary_cv_decision_values, cross_validated_values, density_marks, laplace_scale,
                                        sigmoid_train)

svmutil = pytest.importorskip("libsvm.svmutil")
from libsvm.svm import gen_svm_nodearray, libsvm as libsvm_c  # noqa: E402

BIN = Path(sys.executable).parent


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------

def read_data(name, rows=None):
    y, x = svmutil.svm_read_problem(str(shared_file(name)), return_scipy=True)
    x = to_csr(x)
    return (y, x) if rows is None else (y[rows], x[rows])


def train_test(train, test=None, n_train=None):
    """(y, X, y_test, X_test): the given test file, or a seeded split of the training file."""
    y, x = read_data(train)
    if test is not None:
        yt, xt = read_data(test)
        return y, x, yt, xt
    perm = np.random.default_rng(0).permutation(len(y))
    return y[perm[:n_train]], x[perm[:n_train]], y[perm[n_train:]], x[perm[n_train:]]


@contextlib.contextmanager
def libsvm_quiet_serial(seed=1):
    """LIBSVM on one OpenMP thread and its rand() seeded, so its internal folds are the same
    whatever ran before."""
    ctypes.CDLL(None).srand(seed)
    with libsvm_one_thread():
        yield


def libsvm_train(y, x, options):
    with libsvm_quiet_serial():
        return svmutil.svm_train(y, x, options + " -q")


def libsvm_probabilities(m, X):
    """LIBSVM's svm_predict_probability row by row at the C level (its Python svm_predict
    mis-sizes the decision buffer for multi-class nu-SVC models)."""
    k = m.get_nr_class()
    prob = (ctypes.c_double * max(k, 2))()
    labels, probs = [], []
    with libsvm_quiet_serial():
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            row = gen_svm_nodearray((X.indices[lo:hi].astype(np.int64), X.data[lo:hi]))[0]
            labels.append(libsvm_c.svm_predict_probability(m, row, prob))
            probs.append(prob[:k])
    return np.array(labels), np.array(probs)


def libsvm_model_keys(m, tmp_path):
    """The prob* lines of a LIBSVM model, as arrays."""
    path = tmp_path / "libsvm.model"
    svmutil.svm_save_model(str(path), m)
    keys = {}
    for line in path.read_text().splitlines():
        if line.startswith("prob"):
            name, *values = line.split()
            keys[name] = np.array(values, dtype=float)
    return keys


def log_loss(prob, labels, y):
    """Mean -log P(true class); column c of prob is labels[c]."""
    column = {label: c for c, label in enumerate(labels)}
    true = np.array([column[int(label)] for label in y])
    return float(-np.mean(np.log(prob[np.arange(len(y)), true])))


# ----------------------------------------------------------------------------------------------
# sigmoid_train and the other fitting pieces against independent references
# ----------------------------------------------------------------------------------------------

def regularised_log_loss(ab, dec, positive):
    """Platt's objective written directly: cross-entropy of 1 / (1 + exp(A f + B)) against the
    targets (n+ + 1) / (n+ + 2) and 1 / (n- + 2); with its gradient."""
    a, b = ab
    n_pos, n_neg = positive.sum(), (~positive).sum()
    t = np.where(positive, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    f = a * dec + b  # P(+1) = expit(-f), P(-1) = expit(f)
    loss = -np.sum(t * log_expit(-f) + (1 - t) * log_expit(f))
    d = t - expit(-f)  # d loss / d f
    return loss, np.array([np.sum(d * dec), np.sum(d)])


@pytest.mark.parametrize("case", ["noisy", "separable", "imbalanced", "scaled"])
def test_sigmoid_train_matches_scipy(case):
    rng = np.random.default_rng(["noisy", "separable", "imbalanced", "scaled"].index(case))
    n = 400
    positive = rng.random(n) < (0.1 if case == "imbalanced" else 0.5)
    noise = 0.05 if case == "separable" else 1.2
    dec = np.where(positive, 1.0, -1.0) + rng.normal(scale=noise, size=n)
    if case == "scaled":
        dec *= 30.0
    a, b = sigmoid_train(dec, positive)
    ref = minimize(regularised_log_loss, x0=np.zeros(2), args=(dec, positive), jac=True,
                   method="BFGS", options={"gtol": 1e-10, "maxiter": 10000})
    ours_loss, grad = regularised_log_loss((a, b), dec, positive)
    assert np.max(np.abs(grad)) < 1e-5  # LIBSVM's stopping test
    assert ours_loss <= ref.fun + 1e-9 * abs(ref.fun)
    np.testing.assert_allclose([a, b], ref.x, rtol=1e-4, atol=1e-5)


def test_sigmoid_train_degenerate_values_stay_finite():
    lines = []
    a, b = sigmoid_train(np.zeros(10), np.arange(10) < 3, log=lines.append)
    # all decision values 0: only the prior is learnt, B = log(n- + 1 / n+ + 1)... at optimum
    # P(+1) equals the mean target
    t_mean = (3 * 4 / 5 + 7 * 1 / 9) / 10
    assert a == 0.0 and 1 / (1 + np.exp(b)) == pytest.approx(t_mean, rel=1e-6)
    assert lines == []


def test_laplace_scale_drops_far_outliers():
    assert laplace_scale([1.0, -1.0, 1.0, -1.0, 2.0]) == pytest.approx(1.2)
    # mean |r| = 10.99, std = 15.5: the 1000 is beyond 5 std and left out
    assert laplace_scale([1.0] * 99 + [-1000.0]) == pytest.approx(1.0)


def test_density_marks_by_hand():
    dec = np.concatenate([-np.arange(1, 11, dtype=float), np.arange(0, 20, dtype=float) / 2])
    marks = density_marks(np.random.default_rng(0).permutation(dec))
    neg = np.sort(dec[dec < 0])
    pos = np.sort(dec[dec >= 0])
    # edges: every 2nd negative value, 0, then positives at steps of 4 ending at the largest
    edges = [neg[0], neg[2], neg[4], neg[6], neg[8], 0.0, pos[3], pos[7], pos[11], pos[15], pos[19]]
    np.testing.assert_array_equal(marks, (np.array(edges[:-1]) + np.array(edges[1:])) / 2)
    assert density_marks(np.r_[-np.ones(4), np.ones(20)]) is None
    assert density_marks(np.r_[-np.ones(20), np.ones(4)]) is None


def test_cross_validated_values_hold_each_row_out_once():
    n = 23
    seen = []

    def fit_fold(train, test):
        assert np.intersect1d(train, test).size == 0 and train.size + test.size == n
        seen.append(test.size)
        return test * 10.0

    out = cross_validated_values(np.random.default_rng(3).permutation(n), fit_fold)
    np.testing.assert_array_equal(out, np.arange(n) * 10.0)
    assert seen == [(f + 1) * n // 5 - f * n // 5 for f in range(5)]


def test_one_class_training_folds_get_constant_values():
    y = np.r_[1.0, -np.ones(9)]  # the fold that tests the only positive trains on negatives only

    def fit_fold(train, test):
        assert np.any(y[train] > 0) and np.any(y[train] < 0)
        return np.full(test.size, 5.0)

    dec = binary_cv_decision_values(y, fit_fold, np.random.default_rng(0).permutation(y.size))
    held_with_positive = dec[0]
    assert held_with_positive == -1.0
    assert np.count_nonzero(dec == -1.0) == 2 and np.count_nonzero(dec == 5.0) == 8
    assert np.all(binary_cv_decision_values(np.ones(4), fit_fold, np.arange(4)) == 1.0)


# ----------------------------------------------------------------------------------------------
# classification: calibration against LIBSVM
# ----------------------------------------------------------------------------------------------

CALIBRATION_CASES = {
    # name: (train file, test file or None, rows kept for training, LIBSVM options, Params)
    "c_svc_heart": ("heart_scale", None, 180, "-s 0 -t 2 -c 1",
                    dict(svm_type="c_svc", kernel_type="rbf", C=1.0)),
    "c_svc_heart_weighted": ("heart_scale", None, 180, "-s 0 -t 2 -c 2 -w1 3 -w-1 0.5",
                             dict(svm_type="c_svc", kernel_type="rbf", C=2.0,
                                  class_weight={1: 3.0, -1: 0.5})),
    "c_svc_dna": ("dna.scale", "dna.scale.t", None, "-s 0 -t 2 -c 1",
                  dict(svm_type="c_svc", kernel_type="rbf", C=1.0)),
    "nu_svc_heart": ("heart_scale", None, 180, "-s 1 -t 2 -n 0.4",
                     dict(svm_type="nu_svc", kernel_type="rbf", nu=0.4)),
    "nu_svc_satimage": ("satimage.scale", None, 3000, "-s 1 -t 2 -n 0.2",
                        dict(svm_type="nu_svc", kernel_type="rbf", nu=0.2)),
}


@pytest.mark.parametrize("name", list(CALIBRATION_CASES))
def test_probabilities_calibrated_like_libsvm(name, tmp_path):
    train, test, n_train, options, kw = CALIBRATION_CASES[name]
    y, x, yt, xt = train_test(train, test, n_train)
    theirs = libsvm_train(y, x, options + " -b 1")
    their_labels, their_prob = libsvm_probabilities(theirs, xt)
    model = fit_model(x, y, Params(probability=True, seed=0, **kw))
    our_labels, our_prob = predict_probability(model, xt)

    labels = np.array(theirs.get_labels())
    np.testing.assert_array_equal(model.labels, labels)
    ours_ll, theirs_ll = log_loss(our_prob, model.labels, yt), log_loss(their_prob, labels, yt)
    print(f"{name}: test log-loss fastsvm {ours_ll:.5f}, LIBSVM {theirs_ll:.5f}")
    assert abs(ours_ll - theirs_ll) <= 0.02 * theirs_ll
    agree = our_labels == their_labels
    assert np.mean(agree) >= 0.99
    # a label may differ only where LIBSVM itself hesitates between two classes (its own runs
    # with other rand() seeds disagree there too)
    top_two = np.sort(their_prob[~agree], axis=1)[:, -2:]
    assert np.all(top_two[:, 1] - top_two[:, 0] < 0.1)
    # the sigmoids themselves: same sign and size (both are 5-fold CV estimates)
    keys = libsvm_model_keys(theirs, tmp_path)
    assert np.all(np.sign(model.prob_a) == np.sign(keys["probA"]))
    np.testing.assert_allclose(model.prob_a, keys["probA"], rtol=0.25)


def test_same_seed_same_model_whatever_the_threads(tmp_path):
    y, x = read_data("vehicle.scale")
    params = Params(kernel_type="rbf", probability=True, seed=7)
    first = fit_model(x, y, dataclasses.replace(params, n_jobs=1))
    again = fit_model(x, y, dataclasses.replace(params, n_jobs=1))
    threaded = fit_model(x, y, dataclasses.replace(params, n_jobs=2))
    other_seed = fit_model(x, y, dataclasses.replace(params, n_jobs=2, seed=8))
    files = []
    for k, model in enumerate((first, again, threaded)):
        np.testing.assert_array_equal(model.prob_a, first.prob_a)
        np.testing.assert_array_equal(model.prob_b, first.prob_b)
        save_model(model, tmp_path / f"m{k}")
        files.append((tmp_path / f"m{k}").read_bytes())
    assert files[0] == files[1] == files[2]
    assert re.search(rb"^probA( \S+){6}$", files[0], re.M)
    assert not np.array_equal(other_seed.prob_a, first.prob_a)  # the seed is what decides


def test_probability_folds_train_with_the_pair_bounds_and_stop_flag(monkeypatch):
    y, x = read_data("iris.scale")
    calls = []
    original = fastsvm.training.trainer._Trainer.train

    def recording(trainer, X, y, weights):
        calls.append((trainer.params, np.unique(y), trainer.stop))
        return original(trainer, X, y, weights)

    monkeypatch.setattr(fastsvm.training.trainer._Trainer, "train", recording)
    stop = np.zeros(1, dtype=np.int32)
    fit_model(x, y, Params(kernel_type="rbf", C=2.0, class_weight={2: 3.0}, probability=True),
              stop=stop)
    folds = calls[1:]  # the first call trains the whole problem
    assert len(folds) == 3 * 5  # 5 folds for each of the 3 pairs
    boxes = {(2.0, 6.0), (2.0, 2.0), (6.0, 2.0)}  # (1, 2), (1, 3), (2, 3) with C_2 = 3 C
    for params, classes, passed in folds:
        assert passed is stop
        assert not params.probability and params.C == 1.0
        assert list(classes) == [-1.0, 1.0]
        assert (params.class_weight[1], params.class_weight[-1]) in boxes


def test_stop_flag_interrupts_the_probability_folds():
    y, x = read_data("satimage.scale")
    stop = np.zeros(1, dtype=np.int32)
    timer = threading.Timer(0.2, lambda: stop.__setitem__(0, 1))
    start = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        fit_model(x, y, Params(svm_type="nu_svc", nu=0.2, kernel_type="rbf", probability=True,
                               n_jobs=2), stop=stop)
    assert time.perf_counter() - start < 1.5
    timer.join()


def test_probability_needs_a_one_vs_one_solver():
    y, x = read_data("iris.scale")
    with pytest.raises(ParameterError, match="one-vs-one"):
        fit_model(x, y, Params(solver="dcd", probability=True))


def test_cross_validation_labels_by_probability():
    """svm-train -v with -b 1 labels each held-out row by its largest probability (LIBSVM's
    svm_cross_validation), which on glass differs from the one-vs-one vote for some rows."""
    y, x = read_data("glass.scale")
    params = Params(kernel_type="rbf", probability=True, seed=3, n_jobs=1)
    target = cross_validation(x, y, params, 5)
    perm, start = fold_permutation(y, "c_svc", 5, np.random.default_rng(params.seed))
    by_probability, by_vote = np.empty(len(y)), np.empty(len(y))
    for f in range(5):
        test = perm[start[f]:start[f + 1]]
        train = np.concatenate([perm[:start[f]], perm[start[f + 1]:]])
        model = fit_model(x[train], y[train], params)
        by_probability[test] = predict_probability(model, x[test])[0]
        by_vote[test] = predict(model, x[test])
    np.testing.assert_array_equal(target, by_probability)
    assert np.any(by_vote != by_probability)


# ----------------------------------------------------------------------------------------------
# regression and one-class
# ----------------------------------------------------------------------------------------------

SVR_CASES = {
    "epsilon_svr_housing": ("housing_scale", None, "-s 3 -t 2 -c 10 -p 0.1",
                            dict(svm_type="epsilon_svr", kernel_type="rbf", C=10.0, epsilon=0.1)),
    "epsilon_svr_abalone": ("abalone_scale", slice(0, 1500), "-s 3 -t 2 -c 1 -p 0.1",
                            dict(svm_type="epsilon_svr", kernel_type="rbf", C=1.0, epsilon=0.1)),
    "nu_svr_housing": ("housing_scale", None, "-s 4 -t 2 -c 10 -n 0.5",
                       dict(svm_type="nu_svr", kernel_type="rbf", C=10.0, nu=0.5)),
}


@pytest.mark.parametrize("name", list(SVR_CASES))
def test_svr_laplace_scale_close_to_libsvm(name, tmp_path):
    data, rows, options, kw = SVR_CASES[name]
    y, x = read_data(data, rows)
    theirs = libsvm_model_keys(libsvm_train(y, x, options + " -b 1"), tmp_path)["probA"][0]
    lines = []
    model = fit_model(x, y, Params(probability=True, seed=0, verbose=True, **kw), log=lines.append)
    ours = model.prob_a[0]
    print(f"{name}: Laplace sigma fastsvm {ours:.5f}, LIBSVM {theirs:.5f}")
    assert abs(ours - theirs) <= 0.05 * theirs
    assert model.prob_b is None
    assert f"z: Laplace distribution e^(-|z|/sigma)/(2sigma),sigma= {ours:g}" in lines


EXACT_CASES = {name: (train, slice(n_train), options, kw) for name, (train, _, n_train, options, kw)
               in CALIBRATION_CASES.items() if name.endswith(("heart", "weighted"))}
EXACT_CASES |= SVR_CASES | {
    "c_svc_glass": ("glass.scale", None, "-s 0 -t 2 -c 4", dict(kernel_type="rbf", C=4.0)),
    "nu_svc_iris": ("iris.scale", None, "-s 1 -t 2 -n 0.2", dict(svm_type="nu_svc", nu=0.2)),
}


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="LIBSVM's rand() here is not glibc's")
@pytest.mark.parametrize("name", list(EXACT_CASES))
def test_libsvm_folds_give_libsvms_probability_parameters(name, tmp_path):
    """With LIBSVM's stream (srand(1), drawn in svm_train's order: pair by pair, weighted pairs
    and nu-SVC alike) the sigmoids and Laplace scales are LIBSVM 3.37's own to rounding: Platt's
    Newton steps magnify last-bit differences of the folds' decision values, while one fold drawn
    otherwise moves them by orders of magnitude more than the tolerance."""
    data, rows, options, kw = EXACT_CASES[name]
    y, x = read_data(data, rows)
    keys = libsvm_model_keys(libsvm_train(y, x, options + " -b 1"), tmp_path)
    model = fit_model(x, y, Params(probability=True, libsvm_folds=True, **kw))
    np.testing.assert_allclose(model.prob_a, keys["probA"], rtol=1e-11, atol=0)
    if model.prob_b is not None or "probB" in keys:
        np.testing.assert_allclose(model.prob_b, keys["probB"], rtol=1e-11, atol=0)


@pytest.mark.parametrize("nu", [0.1, 0.5])
def test_one_class_density_marks_equal_libsvms(nu, tmp_path):
    y, x = read_data("heart_scale")
    theirs = libsvm_train(y, x, f"-s 2 -t 2 -n {nu} -b 1")
    marks = libsvm_model_keys(theirs, tmp_path)["prob_density_marks"]
    model = fit_model(x, y, Params(svm_type="one_class", kernel_type="rbf", nu=nu,
                                   probability=True))
    # no randomness here: the same solution's training decision values, binned the same way
    np.testing.assert_allclose(model.prob_density_marks, marks, rtol=1e-9, atol=1e-12)
    assert np.all(np.diff(model.prob_density_marks) > 0)
    labels, prob = predict_probability(model, x)
    assert np.all((prob >= 0) & (prob <= 1)) and np.allclose(prob.sum(axis=1), 1.0)
    _, their_prob = libsvm_probabilities(theirs, x)
    np.testing.assert_array_equal(prob[:, 0], their_prob[:, 0])
    np.testing.assert_array_equal(labels, predict(model, x))


def test_one_class_with_too_few_values_on_a_side_has_no_marks(tmp_path):
    # 9 decision values: one side has at most 4 of them
    x = to_csr(np.random.default_rng(0).normal(size=(9, 3)))
    y = np.ones(9)
    with pytest.warns(RuntimeWarning, match="too few"):
        model = fit_model(x, y, Params(svm_type="one_class", kernel_type="rbf", nu=0.1,
                                       probability=True))
    assert model.prob_density_marks is None
    theirs = libsvm_train(y, x, "-s 2 -t 2 -n 0.1 -b 1")
    assert "prob_density_marks" not in libsvm_model_keys(theirs, tmp_path)


# ----------------------------------------------------------------------------------------------
# command line, and LIBSVM reading our probability models
# ----------------------------------------------------------------------------------------------

def run(program, *args):
    return subprocess.run([str(BIN / program), *map(str, args)], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("data", ["iris.scale", "heart_scale"])
def test_cli_probability_model_read_by_libsvm(data, tmp_path):
    path = shared_file(data)
    model_file, out = tmp_path / "m", tmp_path / "out"
    trained = run("fastsvm-train", "-b", "1", "-q", path, model_file)
    assert trained.returncode == 0, trained.stderr
    predicted = run("fastsvm-predict", "-b", "1", path, model_file, out)
    assert predicted.returncode == 0, predicted.stderr
    lines = out.read_text().splitlines()
    ours = load_model(model_file)
    assert lines[0] == "labels " + " ".join(str(label) for label in ours.labels)
    table = np.array([line.split() for line in lines[1:]], dtype=float)
    y, x = read_data(data)
    labels, prob = predict_probability(ours, x)
    assert table.shape == (len(y), 1 + len(ours.labels))
    np.testing.assert_array_equal(table[:, 0], labels)
    np.testing.assert_allclose(table[:, 1:], prob, rtol=1e-5, atol=1e-6)  # written with %g

    their_labels, their_prob = libsvm_probabilities(svmutil.svm_load_model(str(model_file)), x)
    np.testing.assert_allclose(their_prob, prob, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(their_labels, labels)


def test_degenerate_nu_svc_folds_fall_back_to_the_prior_as_libsvm():
    """Tiny nu-SVC data whose probability folds have no finite solution: LIBSVM carries on with
    NaN decision values and Platt's starting point (A = 0, B = log prior); so do we."""
    x = 3 * np.random.RandomState(0).uniform(size=(10, 1))
    y = x[:, 0].astype(int).astype(float)
    model = fit_model(x, y, Params(svm_type="nu_svc", kernel_type="rbf", probability=True))
    ref = svmutil.svm_train(y.tolist(), [{1: float(v)} for v in x[:, 0]], "-s 1 -b 1 -q")
    n_pairs = len(model.rho)
    np.testing.assert_array_equal(model.prob_a, [ref.probA[i] for i in range(n_pairs)])
    np.testing.assert_allclose(model.prob_b, [ref.probB[i] for i in range(n_pairs)], rtol=1e-15)
