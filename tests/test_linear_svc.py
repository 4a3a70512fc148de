"""fastsvm.LinearSVC against scikit-learn's LinearSVC (LIBLINEAR inside): same problem, same optimum."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC as SkLinearSVC
from sklearn.utils.estimator_checks import check_estimator

import fastsvm
from conftest import SHIPPED_DATA, shared_file
from fastsvm.csr import to_csr
from fastsvm.solvers import get_solver
from linear_oracle import subproblem


def sk_load(path):
    """scikit-learn's reader (an independent one), with int32 indices as its LinearSVC wants."""
    X, y = load_svmlight_file(path)
    return to_csr(X), y

# scikit-learn expects the same two failures of its own LinearSVC: a dual solver stopped at a
# tolerance is not exactly invariant to repeating a row instead of doubling its weight
SKLEARN_XFAIL = {
    "check_sample_weight_equivalence_on_dense_data":
        "sample_weight is not equivalent to removing/repeating samples (as sklearn's LinearSVC).",
    "check_sample_weight_equivalence_on_sparse_data":
        "sample_weight is not equivalent to removing/repeating samples (as sklearn's LinearSVC).",
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("kw", [{}, dict(penalty="l1", dual=False), dict(multi_class="crammer_singer")],
                         ids=["default", "l1", "crammer_singer"])
def test_check_estimator(kw):
    check_estimator(fastsvm.LinearSVC(**kw), expected_failed_checks=SKLEARN_XFAIL)


def primal_objective(coef, intercept, X, y_pm, C, *, loss, intercept_scaling, sample_weight=None):
    """0.5 |[w, b/s]|^2 + C sum loss(y (Xw + b)): LIBLINEAR's problem with the bias feature."""
    margins = 1 - y_pm * (X @ coef + intercept)
    losses = np.maximum(margins, 0)
    if loss == "squared_hinge":
        losses = losses ** 2
    sw = np.ones_like(y_pm) if sample_weight is None else sample_weight
    return 0.5 * (coef @ coef + (intercept / intercept_scaling) ** 2) + C * (sw * losses).sum()


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_binary_optimum_equals_liblinear(loss, fit_intercept):
    X, y = sk_load(str(SHIPPED_DATA / "breast_cancer_scale"))
    kw = dict(loss=loss, C=2.0, tol=1e-8, max_iter=100000, fit_intercept=fit_intercept,
              intercept_scaling=1.5)
    ours = fastsvm.LinearSVC(**kw).fit(X, y)
    theirs = SkLinearSVC(dual=True, random_state=0, **kw).fit(X, y)
    y_pm = np.where(y == ours.classes_[1], 1.0, -1.0)
    f_ours = primal_objective(ours.coef_[0], np.atleast_1d(ours.intercept_)[0], X, y_pm, 2.0, loss=loss,
                              intercept_scaling=1.5)
    f_theirs = primal_objective(theirs.coef_[0], np.atleast_1d(theirs.intercept_)[0], X, y_pm, 2.0, loss=loss,
                                intercept_scaling=1.5)
    assert abs(f_ours - f_theirs) <= 1e-6 * abs(f_theirs)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X), atol=1e-3)


def test_multiclass_one_vs_rest_equals_liblinear():
    X, y = sk_load(str(shared_file("iris.scale")))
    kw = dict(C=1.0, tol=1e-9, max_iter=100000)
    ours = fastsvm.LinearSVC(**kw).fit(X, y)
    theirs = SkLinearSVC(dual=True, random_state=0, **kw).fit(X, y)
    assert ours.coef_.shape == theirs.coef_.shape == (3, 4)
    for c in range(3):
        y_pm = np.where(y == ours.classes_[c], 1.0, -1.0)
        f = [primal_objective(m.coef_[c], m.intercept_[c], X, y_pm, 1.0, loss="squared_hinge", intercept_scaling=1.0)
             for m in (ours, theirs)]
        assert abs(f[0] - f[1]) <= 1e-6 * f[1]
    assert np.mean(ours.predict(X) == theirs.predict(X)) == 1.0


def test_class_weight_and_sample_weight_match_liblinear():
    X, y = sk_load(str(SHIPPED_DATA / "breast_cancer_scale"))
    sw = np.random.default_rng(0).uniform(0.5, 2.0, size=y.size)
    kw = dict(C=0.5, tol=1e-9, max_iter=100000, class_weight={1: 3.0, -1: 0.5})
    ours = fastsvm.LinearSVC(**kw).fit(X, y, sample_weight=sw)
    theirs = SkLinearSVC(dual=True, random_state=0, **kw).fit(X, y, sample_weight=sw)
    y_pm = np.where(y == 1, 1.0, -1.0)
    weight = sw * np.where(y == 1, 3.0, 0.5)
    f = [primal_objective(m.coef_[0], m.intercept_[0], X, y_pm, 0.5, loss="squared_hinge", intercept_scaling=1.0,
                          sample_weight=weight)
         for m in (ours, theirs)]
    assert abs(f[0] - f[1]) <= 1e-6 * f[1]


def test_string_labels_dense_equals_sparse_and_model_file(tmp_path):
    X, y = sk_load(str(SHIPPED_DATA / "breast_cancer_scale"))
    names = np.where(y > 0, "benign", "malignant")
    dense = fastsvm.LinearSVC(random_state=3).fit(X.toarray(), names)
    sparse = fastsvm.LinearSVC(random_state=3).fit(X, names)
    np.testing.assert_array_equal(dense.coef_, sparse.coef_)
    assert list(dense.classes_) == ["benign", "malignant"]
    path = tmp_path / "bc.model"
    fastsvm.save_model(sparse.model_, path)
    model = fastsvm.load_model(path)
    labels = fastsvm.predict(model, X)   # LIBSVM labels: +1 for classes_[1]
    np.testing.assert_array_equal(np.where(labels > 0, "malignant", "benign"), sparse.predict(X))


def test_same_seed_same_model_any_thread_count():
    X, y = sk_load(str(shared_file("dna.scale")))
    models = [fastsvm.fit_model(X, y, fastsvm.Params(solver="dcd", seed=7, n_jobs=n)) for n in (1, 2)]
    assert (models[0].support_vectors != models[1].support_vectors).nnz == 0
    np.testing.assert_array_equal(models[0].rho, models[1].rho)


# ---------------------------------------------------------------- penalty, dual, multi_class

COMBINATIONS = [(p, l, d) for p in ("l1", "l2") for l in ("hinge", "squared_hinge") for d in (True, False)]


@pytest.mark.parametrize("penalty,loss,dual", COMBINATIONS)
def test_unsupported_arguments_as_scikit_learn(penalty, loss, dual):
    """Rejected exactly when scikit-learn's LinearSVC rejects, with its message's parts."""
    X, y = sk_load(str(SHIPPED_DATA / "breast_cancer_scale"))
    kw = dict(penalty=penalty, loss=loss, dual=dual)
    try:
        SkLinearSVC(**kw).fit(X[:40], y[:40])
        sklearn_rejects = False
    except ValueError:
        sklearn_rejects = True
    if sklearn_rejects:
        with pytest.raises(ValueError, match=f"Unsupported set of arguments.*penalty='{penalty}.*"
                                             f"loss='{loss}.*dual={dual}"):
            fastsvm.LinearSVC(**kw).fit(X[:40], y[:40])
    else:
        fastsvm.LinearSVC(**kw).fit(X[:40], y[:40])
    # crammer_singer ignores penalty, loss and dual (as scikit-learn's)
    fastsvm.LinearSVC(multi_class="crammer_singer", **kw).fit(X[:40], y[:40])


@pytest.mark.parametrize("penalty,loss,tall,solver", [
    ("l2", "squared_hinge", True, "primal_newton"), ("l2", "squared_hinge", False, "dcd"),
    ("l2", "hinge", True, "dcd"), ("l1", "squared_hinge", False, "l1_cd")])
def test_dual_auto_picks_as_scikit_learn(penalty, loss, tall, solver):
    """dual="auto": the primal for more samples than features when it solves the problem, the
    dual for fewer when it does, else the formulation there is."""
    X, y = sk_load(str(SHIPPED_DATA / "breast_cancer_scale"))
    X, y = (X, y) if tall else (X[:20], y[:20])
    clf = fastsvm.LinearSVC(penalty=penalty, loss=loss).fit(X, y)
    assert clf.model_.info["solver"] == solver
    with pytest.raises(ValueError, match="does not solve this problem"):
        fastsvm.LinearSVC(penalty=penalty, loss=loss, solver="crammer_singer").fit(X, y)
    # a named solver settles dual="auto": the other formulation of the l2 squared hinge
    if (penalty, loss) == ("l2", "squared_hinge"):
        other = {"primal_newton": "dcd", "dcd": "primal_newton"}[solver]
        assert fastsvm.LinearSVC(solver=other).fit(X, y).model_.info["solver"] == other


def l1_objective(coef, intercept, X, y_pm, C, *, intercept_scaling):
    """|[w, b/s]|_1 + C sum max(0, 1 - y (Xw + b))^2: LIBLINEAR -s 5's problem."""
    slack = np.maximum(0.0, 1 - y_pm * (X @ coef + intercept))
    return np.abs(coef).sum() + abs(intercept / intercept_scaling) + C * (slack**2).sum()


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_l1_penalty_optimum_equals_liblinear(fit_intercept):
    X, y = sk_load(str(SHIPPED_DATA / "breast_cancer_scale"))
    kw = dict(penalty="l1", dual=False, C=0.03, tol=1e-8, max_iter=100000,
              fit_intercept=fit_intercept, intercept_scaling=2.0)
    ours = fastsvm.LinearSVC(**kw).fit(X, y)
    theirs = SkLinearSVC(random_state=0, **kw).fit(X, y)
    y_pm = np.where(y == ours.classes_[1], 1.0, -1.0)
    f = [l1_objective(m.coef_[0], np.atleast_1d(m.intercept_)[0], X, y_pm, 0.03, intercept_scaling=2.0)
         for m in (ours, theirs)]
    assert abs(f[0] - f[1]) <= 1e-6 * f[1]
    assert 0 < np.count_nonzero(ours.coef_) < X.shape[1]  # the L1 penalty's zeros
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


def crammer_singer_objective(coef, intercept, X, codes, C, *, intercept_scaling):
    scores = X @ coef.T + intercept
    rows = np.arange(X.shape[0])
    margins = scores - scores[rows, codes][:, None] + 1.0
    margins[rows, codes] = 0.0
    regularizer = 0.5 * (np.sum(coef**2) + np.sum((intercept / intercept_scaling) ** 2))
    return regularizer + C * margins.max(axis=1).sum()


def test_crammer_singer_equals_liblinear():
    X, y = sk_load(str(shared_file("iris.scale")))
    kw = dict(multi_class="crammer_singer", C=1.0, tol=1e-8, max_iter=100000, intercept_scaling=1.5)
    ours = fastsvm.LinearSVC(**kw).fit(X, y)
    theirs = SkLinearSVC(random_state=0, **kw).fit(X, y)
    assert ours.coef_.shape == theirs.coef_.shape == (3, 4) and ours.intercept_.shape == (3,)
    codes = np.searchsorted(ours.classes_, y)
    f = [crammer_singer_objective(m.coef_, m.intercept_, X, codes, 1.0, intercept_scaling=1.5) for m in (ours, theirs)]
    assert abs(f[0] - f[1]) <= 1e-6 * f[1]
    assert np.mean(ours.predict(X) == theirs.predict(X)) >= 0.99
    argmax = ours.classes_[np.argmax(ours.decision_function(X), axis=1)]
    np.testing.assert_array_equal(ours.predict(X), argmax)


def test_crammer_singer_binary_shapes_as_scikit_learn():
    """Two classes: scikit-learn keeps one row, w_1 - w_0 (and b_1 - b_0)."""
    X, y = sk_load(str(SHIPPED_DATA / "breast_cancer_scale"))
    kw = dict(multi_class="crammer_singer", C=1.0, tol=1e-8, max_iter=100000)
    ours = fastsvm.LinearSVC(**kw).fit(X, y)
    theirs = SkLinearSVC(random_state=0, **kw).fit(X, y)
    assert ours.coef_.shape == theirs.coef_.shape == (1, X.shape[1])
    assert ours.intercept_.shape == theirs.intercept_.shape == (1,)
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X), atol=1e-4)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


@pytest.mark.parametrize("kw", [dict(dual=True), dict(dual=False), dict(penalty="l1", dual=False),
                                dict(multi_class="crammer_singer")], ids=["dcd", "primal", "l1", "cs"])
def test_iteration_limit_warns_convergence_warning(kw):
    X, y = sk_load(str(shared_file("iris.scale")))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = fastsvm.LinearSVC(max_iter=1, tol=1e-12, **kw).fit(X, y)
    categories = [w.category for w in caught]
    assert categories == [ConvergenceWarning]
    assert "failed to converge" in str(caught[0].message)
    assert isinstance(clf.n_iter_, int) and clf.n_iter_ == 1


def test_sparsify_densify():
    X, y = sk_load(str(shared_file("iris.scale")))
    clf = fastsvm.LinearSVC(penalty="l1", dual=False, C=0.5).fit(X, y)
    dense = clf.decision_function(X)
    assert clf.sparsify() is clf and sp.issparse(clf.coef_)
    np.testing.assert_allclose(clf.decision_function(X), dense, rtol=1e-12, atol=1e-12)
    assert clf.densify() is clf and isinstance(clf.coef_, np.ndarray)
    np.testing.assert_allclose(clf.decision_function(X), dense, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("solver,multiclass", [("primal_newton", "ovr"), ("l1_cd", "ovr"),
                                               ("crammer_singer", "joint")])
def test_linear_solver_registered_stops_at_its_limit_and_on_the_stop_flag(solver, multiclass):
    spec = get_solver(solver)
    assert (spec.formulations, spec.kernels, spec.multiclass) == (("c_svc",), ("linear",), multiclass)
    X, labels = sk_load(str(SHIPPED_DATA / "breast_cancer_scale"))
    y = (labels > 0).astype(float) if multiclass == "joint" else np.sign(labels)
    sub = subproblem(solver, X, y, np.full(y.size, 10.0), 1.0, tol=1e-14, max_iter=2)
    solution = spec.solve(sub)
    assert solution.status == "max_iter" and solution.n_iter == 2
    sub.stop[0] = 1
    with pytest.raises(KeyboardInterrupt):
        spec.solve(sub)
