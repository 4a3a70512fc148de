"""Failures to converge as a user meets them: an iteration limit is
scikit-learn's ConvergenceWarning from every estimator; a numeric breakdown is one clear error
with a hint, never a traceback from a kernel and never a NaN in a model."""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import fastsvm
from fastsvm.files.datafile import load_svmlight_file
from fastsvm.errors import FastSVMError
from fastsvm.params import Params
from fastsvm.training.trainer import fit_model

from conftest import SHIPPED_DATA, shared_file

ITERATION_LIMITED = [
    ("SVC", {}), ("SVC", {"kernel": "linear", "solver": "ssnal"}), ("SVC", {"solver": "ssnal"}),
    ("NuSVC", {"nu": 0.3}), ("SVR", {}), ("SVR", {"kernel": "linear", "solver": "ssnal"}),
    ("NuSVR", {}), ("OneClassSVM", {}),
    ("LinearSVC", {"dual": True}), ("LinearSVC", {"dual": False}),
    ("LinearSVC", {"penalty": "l1", "dual": False}), ("LinearSVC", {"multi_class": "crammer_singer"}),
]


@pytest.fixture(scope="module")
def data():
    return load_svmlight_file(SHIPPED_DATA / "breast_cancer_scale")


@pytest.mark.parametrize("name, options", ITERATION_LIMITED,
                         ids=[f"{n}-{'-'.join(map(str, o.values())) or 'default'}" for n, o in ITERATION_LIMITED])
def test_every_estimator_warns_convergence_warning_at_its_iteration_limit(data, name, options):
    X, y = data
    estimator = getattr(fastsvm, name)(max_iter=1, **options)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X) if name == "OneClassSVM" else estimator.fit(X, y)
    categories = [w.category for w in caught]
    assert ConvergenceWarning in categories, [str(w.message) for w in caught]
    assert RuntimeWarning not in categories   # the solver-level warning is not passed on as well


@pytest.fixture(scope="module")
def overflowing():
    """heart_scale x 1e8, classes in blocks: SSsNAL's line search leaves the doubles."""
    X, y = load_svmlight_file(shared_file("heart_scale"))
    order = np.argsort(y, kind="stable")
    return X[order] * 1e8, (y[order] > 0).astype(np.float64)


def test_numeric_breakdown_is_a_clear_error_with_a_hint(overflowing):
    X, y = overflowing
    with pytest.raises(FastSVMError, match=r"^solver ssnal did not converge .*non-finite.*"
                                           r"scale the data \(fastsvm-scale\)") as info:
        fastsvm.SVC(kernel="linear", solver="ssnal").fit(X, y)
    assert "\n" not in str(info.value)


def test_a_non_finite_solution_never_becomes_a_model(monkeypatch, data):
    # any solver: a solution with a NaN (here a solver made to return one) is refused
    from conftest import solver_like
    from fastsvm import solvers
    from fastsvm.training import trainer as train
    spec = solvers.get_solver("smo")

    def poisoned(problem):
        solution = spec.solve(problem)
        solution.coef[0] = np.nan
        return solution

    monkeypatch.setattr(train, "get_solver", lambda name: solver_like(spec, solve=poisoned))
    X, y = data
    with pytest.raises(FastSVMError, match="solver smo did not converge"):
        fit_model(X, y, Params(svm_type="c_svc", solver="smo"))


def test_class_labels_outside_libsvms_int_are_refused_by_fit_model(data):
    X, y = data
    y = y.copy()
    y[4] = 3e9
    with pytest.raises(FastSVMError, match=r"training row 5: label 3000000000 is outside LIBSVM's int"):
        fit_model(X, y, Params(svm_type="c_svc"))
    fit_model(X, y, Params(svm_type="epsilon_svr"))   # a regression target may be anything finite


def test_fractional_class_labels_warn_once_and_train_as_libsvm_truncates(data):
    X, y = data
    fractional = np.where(y > 0, 1.75, -1.0)
    with pytest.warns(UserWarning, match=r"class label 1.75 is not an integer; it is truncated to 1") as caught:
        model = fit_model(X, fractional, Params(svm_type="c_svc"))
    assert len(caught) == 1
    whole = fit_model(X, np.where(y > 0, 1.0, -1.0), Params(svm_type="c_svc"))
    assert model.labels.tolist() == whole.labels.tolist()
    np.testing.assert_array_equal(model.sv_coef, whole.sv_coef)
