"""fastsvm's SVC, NuSVC, SVR, NuSVR and OneClassSVM against scikit-learn's own (LIBSVM inside).

Same data, same parameters, tol=1e-6: the same support vectors in the same order, the same dual
coefficients and intercepts (with scikit-learn's binary sign flip), decision functions and
predictions; then check_estimator, sparse = dense, precomputed = linear, threads, model files.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.svm as sk
from sklearn import datasets
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils.estimator_checks import check_estimator

import fastsvm
from conftest import shared_file, solver_like
from fastsvm.csr import to_csr
from fastsvm.solvers import SOLVERS

TOL = 1e-6
SKLEARN = {fastsvm.SVC: sk.SVC, fastsvm.NuSVC: sk.NuSVC, fastsvm.SVR: sk.SVR,
           fastsvm.NuSVR: sk.NuSVR, fastsvm.OneClassSVM: sk.OneClassSVM}


def load(name):
    """scikit-learn's reader (independent of fastsvm's), int32 indices as sklearn.svm wants."""
    X, y = load_svmlight_file(str(shared_file(name)))
    return to_csr(X), y


@pytest.fixture(scope="module")
def heart():
    return load("heart_scale")


@pytest.fixture(scope="module")
def iris():
    """Shuffled, so that the classes first occur out of order (LIBSVM's grouping order)."""
    X, y = load("iris.scale")
    order = np.random.default_rng(0).permutation(y.size)
    assert list(dict.fromkeys(y[order])) != sorted(set(y))
    return X[order], y[order]


@pytest.fixture(scope="module")
def housing():
    return load("housing_scale")


def dense(a):
    return a.toarray() if sp.issparse(a) else np.asarray(a)


def fit_both(cls, X, y, sample_weight=None, **kw):
    """(fastsvm estimator, scikit-learn estimator) fitted on the same problem."""
    ours = cls(tol=TOL, **kw).fit(X, y, sample_weight=sample_weight)
    theirs = SKLEARN[cls](tol=TOL, **kw).fit(X, y, sample_weight=sample_weight)
    return ours, theirs


def assert_same_model(ours, theirs):
    np.testing.assert_array_equal(ours.support_, theirs.support_)
    np.testing.assert_array_equal(ours.n_support_, theirs.n_support_)
    assert ours.dual_coef_.shape == theirs.dual_coef_.shape
    scale = np.abs(dense(theirs.dual_coef_)).max()
    np.testing.assert_allclose(dense(ours.dual_coef_), dense(theirs.dual_coef_), rtol=1e-4, atol=1e-6 * scale)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(dense(ours.support_vectors_), dense(theirs.support_vectors_))
    assert ours.fit_status_ == theirs.fit_status_ == 0
    assert np.shape(ours.n_iter_) == np.shape(theirs.n_iter_)
    assert ours.shape_fit_ == theirs.shape_fit_ and ours.n_features_in_ == theirs.n_features_in_


def assert_same_decisions(ours, theirs, X, method="decision_function"):
    a, b = getattr(ours, method)(X), getattr(theirs, method)(X)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6 * np.abs(b).max())


# ---------------------------------------------------------------- parity with scikit-learn

CLASSIFIER_CASES = [
    (fastsvm.SVC, "heart", dict(kernel="rbf", C=2.0)),
    (fastsvm.SVC, "heart", dict(kernel="linear", C=0.5)),
    (fastsvm.SVC, "heart", dict(kernel="sigmoid", gamma=0.05, coef0=-0.5)),
    (fastsvm.SVC, "iris", dict(kernel="poly", degree=2, gamma="auto", coef0=1.0, C=4.0)),
    (fastsvm.SVC, "iris", dict(kernel="linear", decision_function_shape="ovo")),
    (fastsvm.NuSVC, "heart", dict(kernel="rbf", nu=0.3)),
    (fastsvm.NuSVC, "iris", dict(kernel="rbf", nu=0.2, gamma=2.0)),
]


@pytest.mark.parametrize("cls, data, kw", CLASSIFIER_CASES)
@pytest.mark.parametrize("as_dense", [False, True], ids=["csr", "dense"])
def test_classifiers_equal_sklearn(cls, data, kw, as_dense, request):
    X, y = request.getfixturevalue(data)
    X = X.toarray() if as_dense else X
    ours, theirs = fit_both(cls, X, y, **kw)
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    assert_same_model(ours, theirs)
    np.testing.assert_array_equal(ours.class_weight_, theirs.class_weight_)
    assert_same_decisions(ours, theirs, X)
    assert np.mean(ours.predict(X) == theirs.predict(X)) >= 0.999
    assert ours.score(X, y) == pytest.approx(theirs.score(X, y), abs=1e-3)
    if kw["kernel"] == "linear":
        assert type(ours.coef_) is type(theirs.coef_)
        np.testing.assert_allclose(dense(ours.coef_), dense(theirs.coef_), rtol=1e-4, atol=1e-6)
    else:
        assert not hasattr(ours, "coef_")


def test_binary_sign_convention(heart):
    """Positive decision values mean classes_[1], for any label values and order."""
    X, y = heart
    names = np.where(y > 0, "sick", "healthy")
    clf = fastsvm.SVC(kernel="linear").fit(X, names)
    dec = clf.decision_function(X)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[(dec > 0).astype(int)])
    np.testing.assert_allclose(dec, X @ clf.coef_.toarray().ravel() + clf.intercept_, atol=1e-10)


@pytest.mark.parametrize("cls, kw", [
    (fastsvm.SVR, dict(kernel="rbf", C=10.0, epsilon=0.05)),
    (fastsvm.SVR, dict(kernel="linear", C=0.5)),
    (fastsvm.NuSVR, dict(kernel="poly", degree=3, gamma=0.3, coef0=1.0, nu=0.4)),
    (fastsvm.NuSVR, dict(kernel="rbf", nu=0.6, gamma="auto")),
])
def test_regressors_equal_sklearn(cls, kw, housing):
    X, y = housing
    ours, theirs = fit_both(cls, X, y, **kw)
    assert_same_model(ours, theirs)
    assert_same_decisions(ours, theirs, X, "predict")
    assert ours.score(X, y) == pytest.approx(theirs.score(X, y), rel=1e-6)
    if kw["kernel"] == "linear":
        np.testing.assert_allclose(dense(ours.coef_), dense(theirs.coef_), rtol=1e-4)


@pytest.mark.parametrize("kw", [dict(kernel="rbf", nu=0.3), dict(kernel="sigmoid", nu=0.5, gamma=0.1)])
def test_one_class_equals_sklearn(kw, heart):
    X, _ = heart
    ours, theirs = fit_both(fastsvm.OneClassSVM, X, None, **kw)
    assert_same_model(ours, theirs)
    np.testing.assert_allclose(ours.offset_, theirs.offset_, rtol=1e-4)
    assert_same_decisions(ours, theirs, X)
    assert_same_decisions(ours, theirs, X, "score_samples")
    pred = ours.predict(X)
    assert pred.dtype == np.intp and set(pred) == {-1, 1}
    assert np.mean(pred == theirs.predict(X)) >= 0.999


def test_weights_equal_sklearn(iris):
    X, y = iris
    sw = np.random.default_rng(1).uniform(0.2, 3.0, size=y.size)
    for class_weight in ({1: 3.0, 3: 0.5}, "balanced"):
        ours, theirs = fit_both(fastsvm.SVC, X, y, sample_weight=sw, kernel="rbf", C=2.0,
                                class_weight=class_weight)
        assert_same_model(ours, theirs)
        np.testing.assert_array_equal(ours.class_weight_, theirs.class_weight_)
        assert_same_decisions(ours, theirs, X)
    ours, theirs = fit_both(fastsvm.SVR, X, y, sample_weight=sw, C=3.0)
    assert_same_model(ours, theirs)


def test_zero_weights_drop_rows_and_index_the_training_data(iris):
    """Rows of weight 0 are left out as in scikit-learn, whose support_ then counts positions
    among the remaining rows (scikit-learn issues #5150, #25380); ours index X itself."""
    X, y = iris
    sw = np.ones(y.size)
    sw[::7] = 0
    ours, theirs = fit_both(fastsvm.SVC, X, y, sample_weight=sw, kernel="linear")
    kept = np.flatnonzero(sw > 0)
    np.testing.assert_array_equal(ours.support_, kept[theirs.support_])
    np.testing.assert_allclose(dense(ours.support_vectors_), dense(X[ours.support_]))
    np.testing.assert_allclose(dense(ours.dual_coef_), dense(theirs.dual_coef_), rtol=1e-4, atol=1e-8)
    assert_same_decisions(ours, theirs, X)


def test_break_ties_and_decision_shapes_equal_sklearn(iris):
    X, y = iris
    X = X.toarray()
    ours, theirs = fit_both(fastsvm.SVC, X, y, kernel="rbf", gamma=0.5, break_ties=True)
    assert ours.decision_function(X).shape == (y.size, 3)
    assert_same_decisions(ours, theirs, X)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    ours.set_params(decision_function_shape="ovo")
    with pytest.raises(ValueError, match="break_ties"):
        ours.predict(X)


@pytest.mark.parametrize("gamma", ["scale", "auto", 0.7])
def test_gamma_as_sklearn_computes_it(gamma, heart):
    X, y = heart
    for data in (X, X.toarray()):
        ours, theirs = fit_both(fastsvm.SVC, data, y, gamma=gamma)
        assert ours.model_.gamma == pytest.approx(theirs._gamma, rel=1e-12)
        assert ours._gamma == ours.model_.gamma  # scikit-learn's name, which its tests read


def test_iteration_limit_warns_and_sets_fit_status(iris):
    X, y = iris
    with pytest.warns(ConvergenceWarning, match="max_iter=5"):
        clf = fastsvm.SVC(max_iter=5).fit(X, y)
    assert clf.fit_status_ == 1
    np.testing.assert_array_equal(clf.n_iter_, [5, 5, 5])
    for cls in (fastsvm.NuSVC, fastsvm.SVR, fastsvm.NuSVR, fastsvm.OneClassSVM):
        with pytest.warns(ConvergenceWarning, match="max_iter=2"):
            assert cls(max_iter=2).fit(X, y).fit_status_ == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fastsvm.SVC(max_iter=-1).fit(X, y).fit_status_ == 0


# ---------------------------------------------------------------- check_estimator

# exactly the checks scikit-learn expects its own estimator to fail (PER_ESTIMATOR_XFAIL_CHECKS),
# and only those that fail here too: a solver stopped at tol is not exactly invariant to
# repeating a row instead of doubling its weight; nu-SVC ignores class weights, as in LIBSVM
SAMPLE_WEIGHT_XFAIL = {
    f"check_sample_weight_equivalence_on_{kind}_data":
        "sample_weight is not equivalent to removing/repeating samples (as in scikit-learn)."
    for kind in ("dense", "sparse")
}
CHECKS = [
    (fastsvm.SVC(), SAMPLE_WEIGHT_XFAIL),
    (fastsvm.SVC(kernel="precomputed"), {}),
    (fastsvm.SVC(probability=True), SAMPLE_WEIGHT_XFAIL),
    (fastsvm.NuSVC(), {**SAMPLE_WEIGHT_XFAIL,
                       "check_class_weight_classifiers": "class_weight is ignored (as in LIBSVM)."}),
    (fastsvm.SVR(), SAMPLE_WEIGHT_XFAIL),
    (fastsvm.SVR(kernel="precomputed"), {}),
    (fastsvm.NuSVR(), SAMPLE_WEIGHT_XFAIL),
    (fastsvm.OneClassSVM(), SAMPLE_WEIGHT_XFAIL),
]


@pytest.mark.parametrize("estimator, xfail", CHECKS, ids=[repr(est) for est, _ in CHECKS])
@pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::sklearn.exceptions.ConvergenceWarning",
                            "ignore::sklearn.exceptions.SkipTestWarning")
def test_check_estimator(estimator, xfail):
    results = check_estimator(estimator, expected_failed_checks=xfail, on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert not failed
    # the expected failures really fail (else they must come off the list)
    assert {r["check_name"] for r in results if r["status"] == "xfail"} == set(xfail)


# ---------------------------------------------------------------- probabilities

@pytest.mark.parametrize("cls", [fastsvm.SVC, fastsvm.NuSVC])
@pytest.mark.parametrize("data", ["heart", "iris"])
@pytest.mark.filterwarnings("ignore::FutureWarning")  # scikit-learn 1.9 deprecates its probability=True
def test_probabilities_close_to_sklearn(cls, data, request):
    X, y = request.getfixturevalue(data)
    ours, theirs = fit_both(cls, X, y, probability=True, random_state=0)
    assert_same_model(ours, theirs)  # the probability fit leaves the SVM itself alone
    n_pairs = len(ours.classes_) * (len(ours.classes_) - 1) // 2
    assert ours.probA_.shape == ours.probB_.shape == (n_pairs,)
    # Platt's sigmoids are fitted to 5-fold cross-validated decision values; the folds are drawn
    # by different generators, so the parameters are close, not equal
    np.testing.assert_allclose(ours.probA_, theirs.probA_, rtol=0.1)
    p, q = ours.predict_proba(X), theirs.predict_proba(X)
    assert p.shape == (y.size, len(ours.classes_))
    assert np.abs(p - q).max() < 0.05 and np.abs(p - q).mean() < 0.01
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(ours.predict_log_proba(X), np.log(p))


def test_probabilities_follow_random_state_not_threads(iris):
    X, y = iris
    fits = [fastsvm.SVC(probability=True, random_state=seed, n_jobs=n).fit(X, y)
            for seed, n in ((3, 1), (3, 2), (4, 2))]
    np.testing.assert_array_equal(fits[0].probA_, fits[1].probA_)
    np.testing.assert_array_equal(fits[0].predict_proba(X), fits[1].predict_proba(X))
    assert not np.array_equal(fits[0].probA_, fits[2].probA_)
    plain = fastsvm.SVC().fit(X, y)
    assert plain.probA_.shape == plain.probB_.shape == (0,)


# ---------------------------------------------------------------- equivalences

@pytest.mark.parametrize("cls, data", [
    (fastsvm.SVC, "iris"), (fastsvm.NuSVC, "heart"), (fastsvm.SVR, "housing"),
    (fastsvm.NuSVR, "housing"), (fastsvm.OneClassSVM, "heart"),
])
def test_sparse_equals_dense(cls, data, request):
    X, y = request.getfixturevalue(data)
    sparse = cls().fit(X, y)
    dense_ = cls().fit(X.toarray(), y)
    assert sp.issparse(sparse.support_vectors_) and sp.issparse(sparse.dual_coef_)
    assert isinstance(dense_.support_vectors_, np.ndarray) and isinstance(dense_.dual_coef_, np.ndarray)
    np.testing.assert_array_equal(sparse.support_, dense_.support_)
    np.testing.assert_allclose(sparse.dual_coef_.toarray(), dense_.dual_coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sparse.intercept_, dense_.intercept_, rtol=1e-10)
    np.testing.assert_array_equal(sparse.support_vectors_.toarray(), dense_.support_vectors_)
    # either model predicts either kind of input
    method = "predict" if cls in (fastsvm.SVR, fastsvm.NuSVR) else "decision_function"
    for model in (sparse, dense_):
        for rows in (X, X.toarray()):
            np.testing.assert_allclose(getattr(model, method)(rows), getattr(sparse, method)(X),
                                       rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("cls, data", [(fastsvm.SVC, "iris"), (fastsvm.NuSVR, "housing"),
                                       (fastsvm.OneClassSVM, "heart")])
def test_precomputed_and_callable_equal_linear(cls, data, request):
    X, y = request.getfixturevalue(data)
    X = X.toarray()
    train, test = X[:-20], X[-20:]
    y = None if y is None else y[:-20]
    linear = cls(kernel="linear", tol=TOL).fit(train, y)
    gram = cls(kernel="precomputed", tol=TOL).fit(train @ train.T, y)
    function = cls(kernel=lambda A, B: A @ B.T, tol=TOL).fit(train, y)
    method = "predict" if cls is fastsvm.NuSVR else "decision_function"
    for other, rows in ((gram, test @ train.T), (function, test)):
        np.testing.assert_array_equal(other.support_, linear.support_)
        np.testing.assert_allclose(other.dual_coef_, linear.dual_coef_, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(other.intercept_, linear.intercept_, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(getattr(other, method)(rows), getattr(linear, method)(test),
                                   rtol=1e-6, atol=1e-8)
        assert other.support_vectors_.shape == (0, 0)
    with pytest.raises(ValueError, match=rf"X has {len(train) - 10} features, but .* {len(train)} features"):
        gram.predict(test @ train[:-10].T)


def test_precomputed_equals_sklearn_precomputed(heart):
    X, y = heart
    K = (X @ X.T).toarray()
    ours, theirs = fit_both(fastsvm.SVC, K, y, kernel="precomputed")
    assert_same_model(ours, theirs)
    assert_same_decisions(ours, theirs, K[:30])
    # the model holds the 1-based serial numbers of the support vectors, as LIBSVM's does
    np.testing.assert_array_equal(ours.model_.sv_indices, ours.support_ + 1)


@pytest.mark.parametrize("cls", [fastsvm.SVC, fastsvm.NuSVC])
def test_threads_give_identical_models(cls, iris):
    X, y = iris
    one, two = (cls(n_jobs=n).fit(X, y) for n in (1, 2))
    np.testing.assert_array_equal(one.support_, two.support_)
    np.testing.assert_array_equal(one.dual_coef_.toarray(), two.dual_coef_.toarray())
    np.testing.assert_array_equal(one.intercept_, two.intercept_)
    np.testing.assert_array_equal(one.decision_function(X), two.decision_function(X))


# ---------------------------------------------------------------- model files

def test_model_file_round_trip(tmp_path, heart, iris, housing):
    svmutil = pytest.importorskip("libsvm.svmutil")
    cases = [(fastsvm.SVC(), heart), (fastsvm.NuSVC(kernel="poly"), iris),
             (fastsvm.SVR(C=3.0), housing), (fastsvm.OneClassSVM(nu=0.2), heart)]
    for k, (est, (X, y)) in enumerate(cases):
        est.fit(X, y)
        path = tmp_path / f"{k}.model"
        fastsvm.save_model(est.model_, path)
        model = fastsvm.load_model(path)
        np.testing.assert_allclose(fastsvm.predict(model, X), est.predict(X), rtol=1e-12)
    # binary labels -1/+1 are written as themselves; LIBSVM's own predictor agrees
    clf = cases[0][0]
    X, y = heart
    libsvm_model = svmutil.svm_load_model(str(tmp_path / "0.model"))
    labels, _, _ = svmutil.svm_predict(y, X, libsvm_model, "-q")
    np.testing.assert_array_equal(labels, clf.predict(X))


def test_string_labels_are_coded_in_the_model(tmp_path, iris):
    X, y = iris
    names = np.array(["setosa", "versicolor", "virginica"])[y.astype(int) - 1]
    clf = fastsvm.SVC().fit(X, names)
    np.testing.assert_array_equal(clf.model_.labels, [0, 1, 2])
    path = tmp_path / "iris.model"
    fastsvm.save_model(clf.model_, path)
    codes = fastsvm.predict(fastsvm.load_model(path), X).astype(int)
    np.testing.assert_array_equal(clf.classes_[codes], clf.predict(X))
    numeric = fastsvm.SVC().fit(X, y)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[numeric.predict(X).astype(int) - 1])


# ---------------------------------------------------------------- solvers and misuse

def test_solver_is_checked_against_the_registry(monkeypatch, iris):
    X, y = iris
    with pytest.raises(ValueError, match="unknown solver 'nope'"):
        fastsvm.SVC(solver="nope").fit(X, y)
    with pytest.raises(ValueError, match="LinearSVC"):
        fastsvm.SVC(kernel="linear", solver="dcd").fit(X, y)
    smo = SOLVERS["smo"]
    narrow = solver_like(smo, name="narrow", formulations=("c_svc",), kernels=("linear",), default_kernel="linear")
    monkeypatch.setitem(SOLVERS, "narrow", narrow)
    with pytest.raises(ValueError, match="does not solve nu_svc"):
        fastsvm.NuSVC(kernel="linear", solver="narrow").fit(X, y)
    with pytest.raises(ValueError, match="does not support the rbf kernel"):
        fastsvm.SVC(solver="narrow").fit(X, y)
    # a solver that supports the problem is used: here SMO under another name
    ours = fastsvm.SVC(kernel="linear", solver="narrow").fit(X, y)
    assert ours.model_.info["solver"] == "narrow"
    np.testing.assert_array_equal(ours.support_, fastsvm.SVC(kernel="linear").fit(X, y).support_)


@pytest.mark.skipif("ssnal" not in SOLVERS, reason="the ssnal solver is not registered")
def test_ssnal_solver_reaches_smo_optimum(heart, housing):
    """solver= picks a registered solver; its linear C-SVC / epsilon-SVR optimum is SMO's."""
    for cls, (X, y) in ((fastsvm.SVC, heart), (fastsvm.SVR, housing)):
        fast = cls(kernel="linear", solver="ssnal", tol=TOL).fit(X, y)
        ref = cls(kernel="linear", tol=TOL).fit(X, y)
        assert fast.model_.info["solver"] == "ssnal"
        scale = np.abs(ref.coef_.toarray()).max()
        np.testing.assert_allclose(fast.coef_.toarray(), ref.coef_.toarray(), atol=1e-3 * scale)
        np.testing.assert_allclose(fast.intercept_, ref.intercept_, rtol=1e-3, atol=1e-4)
        np.testing.assert_allclose(fast.predict(X), ref.predict(X), rtol=1e-3)


def test_misuse_gives_clear_errors(iris):
    X, y = iris
    with pytest.raises(ValueError, match="greater than one"):
        fastsvm.SVC().fit(X, np.ones(y.size))
    with pytest.raises(ValueError, match="class 2.0 has weight <= 0"):
        fastsvm.SVC().fit(X, y, sample_weight=(y != 2).astype(float))
    with pytest.raises(ValueError, match="square"):
        fastsvm.SVC(kernel="precomputed").fit(X.toarray(), y)
    with pytest.raises(TypeError, match="Sparse precomputed"):
        fastsvm.SVR(kernel="precomputed").fit(X @ X.T, y)
    with pytest.raises(ValueError, match="max_iter"):
        fastsvm.SVC(max_iter=0).fit(X, y)
    clf = fastsvm.SVC().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :3])
    assert not hasattr(clf, "predict_proba") and not hasattr(clf, "predict_log_proba")
    assert not hasattr(fastsvm.SVR(), "predict_proba")
    with pytest.raises(AttributeError, match="linear kernel"):
        _ = clf.coef_


# ---------------------------------------------------------------- scikit-learn's edge cases

@pytest.mark.parametrize("cls, make", [(fastsvm.SVC, "classification"), (fastsvm.SVR, "regression")])
def test_infinite_C_is_the_hard_margin_as_in_sklearn(cls, make):
    """C = inf: every alpha is free, SMO never forms inf * 0; the model is LIBSVM's."""
    X, y = getattr(datasets, f"make_{make}")(n_samples=80, n_features=6, random_state=3)
    ours, theirs = fit_both(cls, X, y, C=np.inf)
    assert_same_model(ours, theirs)
    assert_same_decisions(ours, theirs, X, "decision_function" if cls is fastsvm.SVC else "predict")
    with pytest.raises(ValueError, match="C = inf .* smo only"):
        cls(C=np.inf, kernel="linear", solver="ssnal").fit(X, y)
    if cls is fastsvm.SVR:  # scikit-learn's NuSVR(C=inf) finds non-finite coefficients
        with pytest.raises(ValueError, match="nu-SVR needs a finite C"):
            fastsvm.NuSVR(C=np.inf).fit(X, y)


def test_weights_at_most_zero_leave_their_samples_out(iris):
    X, y = iris
    sw = np.random.default_rng(2).uniform(-1.0, 3.0, size=y.size)
    ours, theirs = fit_both(fastsvm.SVC, X, y, sample_weight=sw, kernel="linear")
    kept = np.flatnonzero(sw > 0)  # scikit-learn's support_ counts among the kept rows
    np.testing.assert_array_equal(ours.support_, kept[theirs.support_])
    np.testing.assert_allclose(dense(ours.dual_coef_), dense(theirs.dual_coef_), rtol=1e-4, atol=1e-8)
    assert_same_decisions(ours, theirs, X)
    ours, theirs = fit_both(fastsvm.NuSVR, X, y, sample_weight=sw)
    np.testing.assert_allclose(dense(ours.dual_coef_), dense(theirs.dual_coef_), rtol=1e-3, atol=1e-8)
    assert_same_decisions(ours, theirs, X, "predict")


def test_weights_masking_everything_or_a_class_raise_sklearn_errors():
    X = np.array([[-2.0, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]])
    y = np.array([1, 1, 1, 2, 2, 2])
    none_left = np.array([0, -0.5, 0, 0, -1, 0])
    one_class_left = np.array([0, -0.5, 0, 1, 1, 1])
    for cls in (fastsvm.SVC, fastsvm.SVR, fastsvm.NuSVR, fastsvm.OneClassSVM):
        for est in (cls(kernel="linear"), SKLEARN[cls](kernel="linear")):
            with pytest.raises(ValueError, match="all samples have zero or negative weights"):
                est.fit(X, y, sample_weight=none_left)
    for cls, message in ((fastsvm.SVC, "all samples with positive weights belong to the same class"),
                         (fastsvm.NuSVC, "specified nu is infeasible")):
        for est in (cls(kernel="linear"), SKLEARN[cls](kernel="linear")):
            with pytest.raises(ValueError, match=message):
                est.fit(X, y, sample_weight=one_class_left)


def test_callable_kernel_gets_X_as_given():
    """A kernel over strings (X never converted to float), as scikit-learn's SVC runs it."""
    words = np.array(["A A", "A", "B", "B B", "A B", "B A B"], dtype=object)
    y = np.array([1, 1, 2, 2, 1, 2])

    def counts(A, B):
        assert isinstance(A[0], str)
        return np.array([[a.count("A") * b.count("A") + a.count("B") * b.count("B") for b in B] for a in A],
                        dtype=float)

    ours, theirs = fit_both(fastsvm.SVC, words, y, kernel=counts)
    np.testing.assert_array_equal(ours.support_, theirs.support_)
    np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_, rtol=1e-6, atol=1e-9)
    assert_same_decisions(ours, theirs, words[::-1])
    assert ours.shape_fit_ == theirs.shape_fit_ == (6,)
    with pytest.raises(ValueError, match="kernel returned a 1x1 matrix for 6 samples"):
        fastsvm.SVR(kernel=lambda A, B: np.ones((1, 1))).fit(words, y)


@pytest.mark.parametrize("gamma", ["scale", 1.0])
def test_data_too_large_for_the_kernel_raises_as_sklearn(gamma):
    """Near float64's largest value, 'scale' gamma underflows to 0 and squared norms overflow:
    scikit-learn finds non-finite coefficients, fastsvm refuses before solving, same error."""
    rng = np.random.default_rng(0)
    X = np.finfo(np.float64).max * rng.uniform(size=(10, 2))
    y = np.arange(10) % 2
    for est in (fastsvm.SVC(gamma=gamma), sk.SVC(gamma=gamma)):
        with pytest.raises(ValueError, match="The dual coefficients or intercepts are not finite"):
            est.fit(X, y)
    fastsvm.SVC(gamma=gamma).fit(X / 1e160, y)  # the same data scaled down fits


def test_predict_proba_without_platt_parameters_raises_not_fitted(heart):
    X, y = heart
    for cls in (fastsvm.SVC, sk.SVC):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            clf = cls(probability=False).fit(X, y)
        clf.probability = True
        assert hasattr(clf, "predict_proba")
        with pytest.raises(NotFittedError, match="fitted with probability=False"):
            clf.predict_proba(X)


@pytest.mark.parametrize("cls", [fastsvm.SVC, fastsvm.NuSVC])
def test_probability_deprecation_follows_installed_sklearn(cls, heart):
    """FutureWarnings exactly where the installed scikit-learn gives them (1.9 on: any explicit
    probability, and probA_ / probB_), and Platt parameters of the same shape (their values:
    test_probabilities_close_to_sklearn)."""
    X, y = heart
    theirs_cls = SKLEARN[cls]
    assert cls().probability == theirs_cls().probability
    for kw in ({}, {"probability": False}, {"probability": True, "random_state": 0}):
        with warnings.catch_warnings(record=True) as ours_caught:
            warnings.simplefilter("always")
            ours = cls(**kw).fit(X, y)
            ours_a, ours_b = ours.probA_, ours.probB_
        with warnings.catch_warnings(record=True) as theirs_caught:
            warnings.simplefilter("always")
            theirs = theirs_cls(**kw).fit(X, y)
            theirs_a, theirs_b = theirs.probA_, theirs.probB_
        future = [[str(w.message)[:40] for w in caught if w.category is FutureWarning]
                  for caught in (ours_caught, theirs_caught)]
        assert len(future[0]) == len(future[1]), future
        assert ours_a.shape == theirs_a.shape and ours_b.shape == theirs_b.shape
