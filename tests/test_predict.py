"""Prediction against LIBSVM 3.37 (libsvm-official) and against a pure-NumPy twin of the Cython
decision-value kernel.

LIBSVM is called at the C level row by row (svm_predict_values / svm_predict /
svm_predict_probability): the Python svm_predict of libsvm-official 3.37 sizes its decision
buffer wrongly for nu-SVC and multi-class models.
"""
import _thread
import ctypes
import threading

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import libsvm_one_thread, shared_file
from fastsvm.csr import to_csr
from fastsvm.errors import FastSVMError
from fastsvm.models.model import Model
from fastsvm.files.modelfile import load_model
from fastsvm.models.prediction import decision_values, predict, predict_probability
from fastsvm.models.probability import couple, svr_laplace_scale

svmutil = pytest.importorskip("libsvm.svmutil")
from libsvm.svm import gen_svm_nodearray, libsvm as libsvm_c  # noqa: E402

# name -> (training data, rows used for training, svm-train options, test data, test rows)
LIBSVM_CASES = {
    "c_svc_rbf_iris": ("iris.scale", None, "-s 0 -t 2 -c 4 -b 1", None, None),
    "c_svc_rbf_dna": ("dna.scale", 500, "-s 0 -t 2 -g 0.01 -b 1", "dna.scale.t", 300),
    "c_svc_linear_dna": ("dna.scale", 400, "-s 0 -t 0 -c 0.1", "dna.scale.t", 200),
    "nu_svc_poly_iris": ("iris.scale", None, "-s 1 -t 1 -d 3 -g 0.5 -r 1 -n 0.3 -b 1", None, None),
    "nu_svc_rbf_heart": ("heart_scale", None, "-s 1 -t 2 -n 0.4 -b 1", None, None),
    "c_svc_sigmoid_heart": ("heart_scale", None, "-s 0 -t 3 -g 0.05 -r -0.5 -b 1", None, None),
    "one_class_rbf_heart": ("heart_scale", None, "-s 2 -t 2 -n 0.3 -b 1", None, None),
    "epsilon_svr_rbf_housing": ("housing_scale", None, "-s 3 -t 2 -c 10 -p 0.1 -b 1", None, None),
    "nu_svr_poly_housing": ("housing_scale", None, "-s 4 -t 1 -d 2 -g 0.2 -r 0.5 -b 1", None, None),
    "precomputed_heart": ("heart_scale", None, "-s 0 -t 4 -b 1", None, None),
    "single_class_iris": ("iris.scale", "class1", "-s 0 -t 2", None, None),
}


def read_data(name, rows=None):
    y, x = svmutil.svm_read_problem(str(shared_file(name)), return_scipy=True)
    x = to_csr(x)
    if rows == "class1":
        keep = np.flatnonzero(y == 1)
        return y[keep], x[keep]
    if rows is not None:
        return y[:rows], x[:rows]
    return y, x


def precomputed_rows(x, basis):
    """Rows [serial, x.basis_1, x.basis_2, ...] of a linear-kernel matrix, dense."""
    k = (x @ basis.T).toarray()
    return np.hstack([np.arange(1, x.shape[0] + 1)[:, None], k])


class LibsvmCase:
    """A model LIBSVM trained and wrote, with test rows for it (CSR, column j = index j + 1; for
    the precomputed kernel a dense matrix whose column c is index c)."""

    def __init__(self, name, path, X, svm_type, nr_class):
        self.name, self.path, self.X = name, path, X
        self.svm_type, self.nr_class = svm_type, nr_class
        self.precomputed = "precomputed" in name


@pytest.fixture(scope="session")
def libsvm_cases(tmp_path_factory):
    """Every case of LIBSVM_CASES trained once per session (skipped cases are left out)."""
    out = {}
    for name, (train, rows, options, test, test_rows) in LIBSVM_CASES.items():
        try:
            y, x = read_data(train, rows)
            X = read_data(test, test_rows)[1] if test else x
        except pytest.skip.Exception:
            continue
        path = tmp_path_factory.mktemp("libsvm") / f"{name}.model"
        with libsvm_one_thread():
            if "-t 4" in options:
                X = precomputed_rows(x, x)
                m = svmutil.svm_train(list(y), [list(row) for row in X], options + " -q")
            else:
                m = svmutil.svm_train(y, x, options + " -q")
        svmutil.svm_save_model(str(path), m)
        out[name] = LibsvmCase(name, path, X, m.get_svm_type(), m.get_nr_class())
    return out


def case_list():
    return list(LIBSVM_CASES)


def libsvm_row(X, i, precomputed):
    if precomputed:
        row = np.asarray(X[i], dtype=float)
        return gen_svm_nodearray((np.arange(X.shape[1]), row), isKernel=True)[0]
    lo, hi = X.indptr[i], X.indptr[i + 1]
    return gen_svm_nodearray((X.indices[lo:hi].astype(np.int64), X.data[lo:hi]))[0]


def libsvm_predict(path, X, precomputed=False, probability=False):
    """LIBSVM's own (labels, decision values, probabilities) for every row, from the file."""
    with libsvm_one_thread():
        return _libsvm_predict(path, X, precomputed, probability)


def _libsvm_predict(path, X, precomputed, probability):
    m = svmutil.svm_load_model(str(path))
    nr_class = m.get_nr_class()
    regression_like = m.get_svm_type() in (2, 3, 4)
    n_dec = 1 if regression_like else nr_class * (nr_class - 1) // 2
    dec = (ctypes.c_double * max(n_dec, 1))()
    prob = (ctypes.c_double * max(nr_class, 2))()
    labels, decs, probs, prob_labels = [], [], [], []
    for i in range(X.shape[0]):
        row = libsvm_row(X, i, precomputed)
        labels.append(libsvm_c.svm_predict_values(m, row, dec))
        decs.append(dec[:n_dec])
        if probability:
            prob_labels.append(libsvm_c.svm_predict_probability(m, row, prob))
            probs.append(prob[:nr_class])
    decs = np.array(decs).reshape(len(labels), n_dec)
    return np.array(labels), decs, np.array(prob_labels), np.array(probs)


def fastsvm_input(case):
    return sp.csr_matrix(case.X) if case.precomputed else case.X


def assert_close(actual, expected, rtol=1e-12):
    """Relative agreement, with an absolute floor rtol * max|expected| for values near zero."""
    scale = np.abs(expected).max() if np.size(expected) else 0.0
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale)


# ----------------------------------------------------------------------------------------------
# against LIBSVM
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", case_list())
def test_decision_values_and_labels_match_libsvm(libsvm_cases, name):
    case = libsvm_cases.get(name) or pytest.skip("data not available")
    model = load_model(case.path)
    labels, dec, _, _ = libsvm_predict(case.path, case.X, case.precomputed)
    X = fastsvm_input(case)
    ours = decision_values(model, X, n_jobs=2)
    assert ours.shape == dec.shape
    assert_close(ours, dec)
    if model.svm_type in ("epsilon_svr", "nu_svr"):
        assert_close(predict(model, X, n_jobs=2), labels)
    else:
        np.testing.assert_array_equal(predict(model, X, n_jobs=2), labels)


@pytest.mark.parametrize("name", [n for n in case_list() if "-b 1" in LIBSVM_CASES[n][2]])
def test_probabilities_match_libsvm(libsvm_cases, name):
    case = libsvm_cases.get(name) or pytest.skip("data not available")
    model = load_model(case.path)
    X = fastsvm_input(case)
    labels, prob = predict_probability(model, X)
    lib_labels, _, lib_prob_labels, lib_prob = libsvm_predict(case.path, case.X, case.precomputed, True)
    if model.svm_type in ("epsilon_svr", "nu_svr"):
        assert prob.shape == (X.shape[0], 0)  # LIBSVM leaves the estimates empty for SVR
        assert svr_laplace_scale(model) == svmutil.svm_load_model(str(case.path)).get_svr_probability()
        assert_close(labels, lib_labels)
    else:
        np.testing.assert_array_equal(labels, lib_prob_labels)
        np.testing.assert_allclose(prob, lib_prob, rtol=0, atol=1e-10)
        np.testing.assert_allclose(prob.sum(axis=1), 1.0, atol=1e-12)


def test_feature_width_differs_from_model(libsvm_cases):
    """Features beyond the model's width are ignored; missing ones count as zeros."""
    case = libsvm_cases.get("c_svc_rbf_iris") or pytest.skip("data not available")
    model = load_model(case.path)
    rng = np.random.default_rng(0)
    wide = sp.hstack([case.X, sp.random(case.X.shape[0], 5, density=0.5, random_state=rng)]).tocsr()
    narrow = case.X[:, :2]
    for X in (wide, narrow):
        X = to_csr(X)
        _, dec, _, _ = libsvm_predict(case.path, X)
        assert_close(decision_values(model, X), dec)


def test_single_class_model_predicts_its_label(libsvm_cases):
    case = libsvm_cases.get("single_class_iris") or pytest.skip("data not available")
    model = load_model(case.path)
    assert model.nr_class == 1
    assert decision_values(model, case.X).shape == (case.X.shape[0], 0)
    np.testing.assert_array_equal(predict(model, case.X), np.ones(case.X.shape[0]))


def test_probability_needs_probability_model(libsvm_cases):
    case = libsvm_cases.get("c_svc_linear_dna") or pytest.skip("data not available")
    with pytest.raises(FastSVMError, match="probability"):
        predict_probability(load_model(case.path), case.X)


def test_tied_votes_go_to_the_first_label():
    """Three classes each winning one pair: LIBSVM picks the first label in label order."""
    sv = sp.csr_matrix(np.array([[1.0], [1.0], [1.0]]))
    # decision values: (0,1) > 0, (0,2) < 0, (1,2) > 0 -> one vote each
    model = Model("c_svc", "linear", sv, sv_coef=[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
                  rho=[-1.0, 1.0, -1.0], labels=[7, 5, 9], n_sv=[1, 1, 1])
    X = sp.csr_matrix(np.zeros((1, 1)))
    np.testing.assert_array_equal(np.sign(decision_values(model, X)), [[1, -1, 1]])
    assert predict(model, X)[0] == 7.0


# ----------------------------------------------------------------------------------------------
# the Cython kernel against a dense NumPy twin
# ----------------------------------------------------------------------------------------------

def twin_kernel(kind, X, Z, gamma, degree, *, coef0):
    """k(x_i, z_j) with dense arithmetic (distances formed directly for the RBF kernel)."""
    dot = X @ Z.T
    if kind == "linear":
        return dot
    if kind == "polynomial":
        return (gamma * dot + coef0) ** degree
    if kind == "sigmoid":
        return np.tanh(gamma * dot + coef0)
    return np.exp(-gamma * ((X[:, None, :] - Z[None, :, :]) ** 2).sum(axis=2))


def twin_decision_values(model, X):
    """LIBSVM's svm_predict_values written out densely."""
    if model.kernel_type == "precomputed":
        Xd = X.toarray()
        K = np.array([[Xd[i, s] if s < Xd.shape[1] else 0.0 for s in model.sv_indices]
                      for i in range(Xd.shape[0])]).reshape(Xd.shape[0], -1)
    else:
        width = max(X.shape[1], model.n_features)
        Xd = np.zeros((X.shape[0], width))
        Xd[:, :X.shape[1]] = X.toarray()
        Zd = np.zeros((model.support_vectors.shape[0], width))
        Zd[:, :model.n_features] = model.support_vectors.toarray()
        K = twin_kernel(model.kernel_type, Xd, Zd, model.gamma, model.degree, coef0=model.coef0)
    if not model.is_classification:
        return K @ model.sv_coef[0][:, None] - model.rho[0]
    start = np.concatenate([[0], np.cumsum(model.n_sv)])
    cols = []
    p = 0
    for i in range(model.nr_class):
        for j in range(i + 1, model.nr_class):
            si, sj = slice(start[i], start[i + 1]), slice(start[j], start[j + 1])
            cols.append(K[:, si] @ model.sv_coef[j - 1, si] + K[:, sj] @ model.sv_coef[i, sj]
                        - model.rho[p])
            p += 1
    return np.stack(cols, axis=1)


def random_model(rng, svm_type, kernel, n_features=7, nr_class=4):
    n_sv = rng.integers(1, 6, size=nr_class) if svm_type == "c_svc" else None
    l = int(n_sv.sum()) if n_sv is not None else 9
    k = nr_class if svm_type == "c_svc" else 2
    if kernel == "precomputed":
        sv = sp.csr_matrix((l, 0))
        serial = rng.integers(1, 40, size=l)
    else:
        sv = sp.random(l, n_features, density=0.5, random_state=rng, format="csr")
        serial = None
    return Model(svm_type, kernel, sv, sv_coef=rng.normal(size=(k - 1, l)),
                 rho=rng.normal(size=k * (k - 1) // 2), degree=3, gamma=0.3, coef0=0.7,
                 labels=np.arange(k) + 1 if n_sv is not None else None, n_sv=n_sv, sv_indices=serial)


KERNELS = ["linear", "polynomial", "rbf", "sigmoid", "precomputed"]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("svm_type", ["c_svc", "epsilon_svr"])
def test_kernel_matches_numpy_twin(kernel, svm_type):
    rng = np.random.default_rng(KERNELS.index(kernel) + 10 * (svm_type == "c_svc"))
    model = random_model(rng, svm_type, kernel)
    # rows narrower and wider than the model (for the precomputed kernel: than its serials)
    for cols in ((20, 46) if kernel == "precomputed" else (3, 12)):
        X = to_csr(sp.random(3000, cols, density=0.4, random_state=rng, format="csr"))
        ours = decision_values(model, X, n_jobs=1)
        assert_close(ours, twin_decision_values(model, X))
        # threads over rows: the very same bits
        assert np.array_equal(decision_values(model, X, n_jobs=2), ours)


def test_ctrl_c_stops_a_long_prediction():
    """The kernel returns to Python between blocks of rows, where Ctrl-C raises."""
    rng = np.random.default_rng(5)
    sv = sp.random(3000, 200, density=0.25, random_state=rng, format="csr")
    model = Model("one_class", "rbf", sv, sv_coef=[np.ones(3000)], rho=[0.0], gamma=0.1)
    X = to_csr(sp.random(40000, 200, density=0.25, random_state=rng, format="csr"))  # seconds of work
    timer = threading.Timer(0.2, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            decision_values(model, X, n_jobs=2)
    finally:
        timer.cancel()


def test_empty_input_and_empty_rows():
    rng = np.random.default_rng(1)
    model = random_model(rng, "c_svc", "rbf")
    assert decision_values(model, sp.csr_matrix((0, 7))).shape == (0, 6)
    X = sp.csr_matrix((4, 7))
    assert_close(decision_values(model, X), twin_decision_values(model, X))


# ----------------------------------------------------------------------------------------------
# pairwise coupling
# ----------------------------------------------------------------------------------------------

def libsvm_coupling_reference(r):
    """multiclass_probability for one row, scalar loops in LIBSVM's order."""
    k = r.shape[0]
    Q = np.zeros((k, k))
    for t in range(k):
        for j in range(k):
            if j != t:
                Q[t, t] += r[j, t] * r[j, t]
                Q[t, j] = -r[j, t] * r[t, j]
    p = np.full(k, 1.0 / k)
    for _ in range(max(100, k)):
        Qp = np.array([sum(Q[t, j] * p[j] for j in range(k)) for t in range(k)])
        pQp = sum(p[t] * Qp[t] for t in range(k))
        if max(abs(Qp[t] - pQp) for t in range(k)) < 0.005 / k:
            break
        for t in range(k):
            diff = (-Qp[t] + pQp) / Q[t, t]
            p[t] += diff
            pQp = (pQp + diff * (diff * Q[t, t] + 2 * Qp[t])) / (1 + diff) / (1 + diff)
            Qp = (Qp + diff * Q[t]) / (1 + diff)
            p = p / (1 + diff)
    return p


def test_coupling_matches_row_by_row_reference():
    rng = np.random.default_rng(2)
    for k in (3, 5, 8):
        upper = rng.uniform(0.01, 0.99, size=(40, k, k))
        r = np.triu(upper, 1) + np.tril(1 - upper.transpose(0, 2, 1), -1)
        ours = couple(r)
        ref = np.array([libsvm_coupling_reference(row) for row in r])
        np.testing.assert_array_equal(ours, ref)


# ----------------------------------------------------------------------------------------------
# predict_many: models of one path share their kernel values

def path_of_models(kernel, svm_type="c_svc", classes=3, seed=0):
    """Models along a C path on random rows (their support vectors rows of one matrix), and test rows."""
    from fastsvm.params import Params
    from fastsvm.training.trainer import fit_path
    rng = np.random.default_rng(seed)
    X = to_csr(sp.random(260, 6, density=0.7, random_state=rng, format="csr"))
    y = rng.integers(0, classes, size=260).astype(float) if svm_type == "c_svc" else rng.normal(size=260)
    models = fit_path(X[:200], y[:200], [0.1, 1.0, 30.0], Params(svm_type=svm_type, kernel_type=kernel, gamma=0.7,
                                                                  coef0=0.5, degree=2, n_jobs=1))
    return models, X[200:]


def counted_predict(monkeypatch):
    """fastsvm.models.prediction.predict wrapped to count the models it is called for."""
    import fastsvm.models.prediction as prediction
    calls, one_by_one = [], prediction.predict
    monkeypatch.setattr(prediction, "predict", lambda model, X, n_jobs=None, exact=None:
                        calls.append(model) or one_by_one(model, X, n_jobs, exact))
    return calls


@pytest.mark.parametrize("kernel", ["rbf", "polynomial", "sigmoid"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_predict_many_shares_one_kernel_block_and_gives_predicts_bits(kernel, n_jobs, monkeypatch):
    import fastsvm.models.prediction as prediction
    models, X = path_of_models(kernel)
    assert len({m.support_vectors.shape[0] for m in models}) > 1   # different support vectors along the path
    expected = [decision_values(m, X, n_jobs=1) for m in models]
    labels = [predict(m, X, n_jobs=1) for m in models]
    calls = counted_predict(monkeypatch)
    monkeypatch.setattr(prediction, "SHARED_BLOCK_VALUES", 500)   # several blocks of rows
    many = prediction.predict_many(models, X, n_jobs=n_jobs)
    assert calls == []                                            # not one by one
    assert all(np.array_equal(a, b) for a, b in zip(many, labels))
    # the sums from a kernel block: decision_values' bits, and its NumPy twin's values
    from fastsvm._core._kernel import kernel_matrix
    from fastsvm._core._predict import DecisionFunction
    for model, values in zip(models, expected):
        base = model.support_vectors.base
        rows = model.support_vectors.rows
        K = np.empty((X.shape[0], base.shape[0]))
        DecisionFunction(base, np.zeros((1, base.shape[0])), [0.0], [0, base.shape[0], base.shape[0]], np.zeros(0),
                         kind=kernel, gamma=model.gamma, degree=model.degree, coef0=model.coef0, one_vs_one=True,
                         kernel_values=True).compute(X, K)
        assert_close(K, kernel_matrix(X, base, kernel, model.gamma, model.degree, coef0=model.coef0))
        function = DecisionFunction(model.support_vectors, model.sv_coef, model.rho,
                                    np.concatenate([[0], np.cumsum(model.n_sv)]), np.zeros(0), kind=kernel,
                                    gamma=model.gamma, degree=model.degree, coef0=model.coef0, one_vs_one=True)
        out = np.empty_like(values)
        function.compute_from_kernel(K, rows, out, n_jobs)
        assert np.array_equal(out, values)
        assert_close(out, twin_decision_values(model, X))
        with pytest.raises(ValueError, match="outside K"):
            function.compute_from_kernel(np.ascontiguousarray(K[:, :rows.max()]), rows, out)


@pytest.mark.parametrize("case", ["linear", "regression", "other rows"])
def test_predict_many_predicts_one_by_one_where_models_do_not_share(case, monkeypatch):
    import fastsvm.models.prediction as prediction
    if case == "other rows":
        models = path_of_models("rbf")[0][:1] + path_of_models("rbf", seed=1)[0][:1]
        X = path_of_models("rbf")[1]
    else:
        models, X = path_of_models("linear" if case == "linear" else "rbf",
                                   svm_type="epsilon_svr" if case == "regression" else "c_svc")
    labels = [predict(m, X, n_jobs=1) for m in models]
    calls = counted_predict(monkeypatch)
    many = prediction.predict_many(models, X, n_jobs=1)
    assert calls == models
    assert all(np.array_equal(a, b) for a, b in zip(many, labels))


@pytest.mark.parametrize("kernel", ["linear", "rbf", "polynomial", "sigmoid"])
@pytest.mark.parametrize("svm_type", ["c_svc", "epsilon_svr"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_tiles_of_kernel_values_give_the_row_by_row_bits(kernel, svm_type, n_jobs):
    """Decision values from the support vectors' feature-major table, in tiles of rows and chunks
    of support vectors, equal those of the dot products row by row, bit for bit (test rows wider
    than the support vectors included), and their NumPy twin's values; a regression model's RBF
    values are LIBSVM's term-by-term sums, never tiles."""
    models, X = path_of_models(kernel, svm_type=svm_type)
    rng = np.random.default_rng(3)
    wide = to_csr(sp.hstack([X, sp.random(X.shape[0], 3, density=0.5, random_state=rng)]).tocsr())
    for model in models:
        functions = [decision_function(model, tiles=tiles) for tiles in (True, False)]
        for rows in (X, wide):
            outs = [np.empty((rows.shape[0], functions[0].n_dec)) for _ in functions]
            for function, out in zip(functions, outs):
                function.compute(rows, out, n_jobs)
            assert np.array_equal(outs[0], outs[1])
            if rows is X:
                assert_close(outs[0], twin_decision_values(model, X))


def binary_rows(rng, n, cols, density):
    """0/1 rows (every stored value 1)."""
    X = sp.random(n, cols, density=density, random_state=rng, format="csr")
    X.data[:] = 1.0
    return to_csr(X)


@pytest.mark.parametrize("kernel", ["linear", "rbf", "polynomial", "sigmoid"])
@pytest.mark.parametrize("svm_type", ["c_svc", "one_class"])
def test_binary_rows_count_their_features_with_the_row_by_row_bits(kernel, svm_type):
    """Support vectors whose values are all 1 give binary rows' dot products as counts from a byte
    table (and RBF values from a table of exponentials): the bits of the dot products row by row,
    over more support vectors than one chunk (sums carried from chunk to chunk), for binary rows,
    rows with other values, rows of more than 255 features and rows wider than the support
    vectors; and the NumPy twin's values."""
    rng = np.random.default_rng(7)
    sv = binary_rows(rng, 1300, 400, 0.05)
    if svm_type == "c_svc":
        n_sv = np.array([700, 100, 500])
        model = Model("c_svc", kernel, sv, sv_coef=rng.normal(size=(2, 1300)), rho=rng.normal(size=3),
                      degree=2, gamma=0.05, coef0=0.5, labels=np.arange(3) + 1, n_sv=n_sv)
    else:
        model = Model("one_class", kernel, sv, sv_coef=[rng.normal(size=1300)], rho=[0.3],
                      degree=2, gamma=0.05, coef0=0.5)
    scaled = binary_rows(rng, 50, 400, 0.05)
    scaled.data *= rng.uniform(0.5, 2.0, size=scaled.data.shape[0])
    wide = binary_rows(rng, 40, 410, 0.05)
    rows = to_csr(sp.vstack([sp.hstack([block, sp.csr_matrix((block.shape[0], 10))])
                             for block in (binary_rows(rng, 200, 400, 0.05), scaled,
                                           binary_rows(rng, 10, 400, 0.8))] + [wide]).tocsr())
    functions = [decision_function(model, tiles=tiles) for tiles in (True, False)]
    outs = [np.empty((rows.shape[0], functions[0].n_dec)) for _ in functions]
    for function, out in zip(functions, outs):
        function.compute(rows, out, 2)
    assert np.array_equal(outs[0], outs[1])
    assert_close(outs[0], twin_decision_values(model, rows), rtol=1e-11)


@pytest.mark.parametrize("kernel", ["linear", "rbf", "polynomial"])
@pytest.mark.parametrize("svm_type", ["c_svc", "epsilon_svr"])
def test_dense_rows_with_sparse_columns_add_those_by_their_nonzeros_as_their_twin(kernel, svm_type):
    """Dense rows of continuous and one-hot columns (covtype's layout) and a column of zeros: the
    columns with few nonzeros add their dot products by each row's nonzeros, the rest by dgemm;
    whichever columns go which way, values within rounding of the twin's, the same bits for 1, 2
    and 3 threads."""
    from fastsvm.params import Params
    from fastsvm.training.trainer import fit_model
    rng = np.random.default_rng(3)
    n = 800
    continuous = rng.uniform(size=(n, 3))
    one_hot = np.zeros((n, 8))
    one_hot[np.arange(n), rng.choice(8, size=n, p=[0.5, 0.2, 0.1, 0.1, 0.05, 0.03, 0.01, 0.01])] = 1.0
    X = np.hstack([continuous, one_hot, np.zeros((n, 1)), continuous[:, :1] * (rng.uniform(size=(n, 1)) < 0.3)])
    y = (np.sign(continuous[:, 0] - continuous[:, 1] + one_hot[:, 0] - 0.4) if svm_type == "c_svc"
         else continuous.sum(axis=1) + one_hot[:, 1])
    model = fit_model(to_csr(X[:200]), y[:200], Params(svm_type=svm_type, kernel_type=kernel, gamma=0.7, coef0=0.5,
                                                        degree=2, C=10.0, n_jobs=1))
    rows = np.ascontiguousarray(X[200:])   # several tiles of rows
    expected = twin_decision_values(model, to_csr(rows))
    function = decision_function(model)
    for share in (0.0, 0.4, 1.01):   # every column through dgemm; the one-hot and the 30 % column apart; none
        outs = []
        for n_threads in (1, 2, 3):
            out = np.empty((rows.shape[0], function.n_dec))
            function.compute_dense(rows, out, n_threads, sparse_share=share)
            outs.append(out)
        assert_close(outs[0], expected)
        assert all(np.array_equal(out, outs[0]) for out in outs[1:])


def decision_function(model, tiles=True):
    from fastsvm._core._predict import DecisionFunction
    start = np.concatenate([[0], np.cumsum(model.n_sv)]) if model.is_classification else np.zeros(0)
    return DecisionFunction(model.support_vectors, model.sv_coef, model.rho, start, np.zeros(0),
                            kind=model.kernel_type, gamma=model.gamma, degree=model.degree, coef0=model.coef0,
                            one_vs_one=model.is_classification, tiles=tiles)


@pytest.mark.parametrize("kernel", ["linear", "rbf", "polynomial", "sigmoid"])
@pytest.mark.parametrize("svm_type", ["c_svc", "epsilon_svr"])
def test_dense_rows_are_predicted_through_blas_as_their_twin(kernel, svm_type, monkeypatch):
    """Dense test rows (C or F order, float64 or float32) never become CSR: their kernel values
    come from the table by dgemm, within rounding of the twin's, the same bits for 1, 2 and 3
    threads; rows wider or narrower than the support vectors count their missing columns as zeros."""
    import fastsvm.models.prediction as prediction
    models, X = path_of_models(kernel, svm_type=svm_type)
    rows = np.vstack([X.toarray()] * 3)   # several tiles of rows
    monkeypatch.setattr(prediction, "to_csr", lambda X: pytest.fail("dense rows made CSR"))
    for model in models:
        expected = twin_decision_values(model, to_csr(rows))
        outs = [decision_values(model, rows, n_jobs=n_jobs) for n_jobs in (1, 2, 3)]
        assert_close(outs[0], expected)
        assert all(np.array_equal(out, outs[0]) for out in outs[1:])
        assert_close(decision_values(model, np.asfortranarray(rows)), expected)
        assert_close(decision_values(model, rows.astype(np.float32)),
                     twin_decision_values(model, to_csr(rows.astype(np.float32))))
        wide = np.hstack([rows, np.ones((rows.shape[0], 2))])
        assert_close(decision_values(model, wide), twin_decision_values(model, to_csr(wide)))
        assert_close(decision_values(model, rows[:, :4]), twin_decision_values(model, to_csr(rows[:, :4])))
