"""The estimators reach every solver's options (``solver_options``, the dict form of -o name=value)
with the command line's checks and one-line errors, and LinearSVC's threaded solvers take n_jobs."""
import numpy as np
import pytest

from fastsvm import LinearSVC, SVC
from fastsvm.errors import ParameterError
from linear_oracle import load


def breast_cancer():
    return load("breast_cancer_scale")


def test_admm_options_reach_the_solver():
    """mode=converged solves the SVM (SMO's decision values); the paper mode's early stop does not."""
    X, y = breast_cancer()
    exact = SVC(C=1.0, gamma=0.5, solver="smo", tol=1e-6).fit(X, y).decision_function(X)
    converged = SVC(C=1.0, gamma=0.5, solver="admm", tol=1e-6,
                    solver_options={"mode": "converged", "backend": "exact"}).fit(X, y).decision_function(X)
    paper = SVC(C=1.0, gamma=0.5, solver="admm", solver_options={"backend": "exact"}).fit(X, y).decision_function(X)
    assert np.max(np.abs(converged - exact)) <= 1e-3 * np.max(np.abs(exact))
    assert np.max(np.abs(paper - exact)) > 1e-2 * np.max(np.abs(exact))


@pytest.mark.parametrize("options, message", [
    ({"bogus": 1}, r"^solver admm: unknown option 'bogus' \(its options: mode, "),
    ({"mode": "fast"}, r"^solver admm: option mode=fast: expected one of converged, paper$"),
    ({"beta": -1.0}, r"^solver admm: option beta=-1.0: expected a number > 0"),
])
def test_a_bad_option_is_the_command_lines_one_line_error(options, message):
    X, y = breast_cancer()
    with pytest.raises(ParameterError, match=message):
        SVC(solver="admm", solver_options=options).fit(X, y)


def test_a_solver_without_options_refuses_one():
    X, y = breast_cancer()
    with pytest.raises(ParameterError, match=r"^solver smo: unknown option 'rank' \(it takes none\)"):
        SVC(solver="smo", solver_options={"rank": 4}).fit(X, y)


def test_linear_svc_options_reach_the_solver():
    """alm's exact (w, b) step and its default inexact one reach the same optimum; a wrong step name
    is refused as -o refuses it."""
    X, labels = load("heart_scale")
    inexact = LinearSVC(solver="alm", loss="hinge", tol=1e-8, max_iter=100000).fit(X, labels)
    exact = LinearSVC(solver="alm", loss="hinge", tol=1e-8, max_iter=100000,
                      solver_options={"step": "exact"}).fit(X, labels)
    assert exact.model_.info["n_iter"] != inexact.model_.info["n_iter"]
    assert np.allclose(exact.coef_, inexact.coef_, rtol=1e-4, atol=1e-5)
    with pytest.raises(ParameterError, match=r"^solver alm: option step=newton: expected"):
        LinearSVC(solver="alm", solver_options={"step": "newton"}).fit(X, labels)


def test_linear_svc_options_may_not_contradict_its_parameters():
    X, labels = load("heart_scale")
    with pytest.raises(ValueError, match=r"solver_options\['penalty'\] = 'l1' contradicts"):
        LinearSVC(solver="nesvm", penalty="l2", solver_options={"penalty": "l1"}).fit(X, labels)


@pytest.mark.parametrize("solver", ["alm", "nesvm"])
def test_linear_svc_n_jobs_gives_the_same_bits(solver):
    X, labels = load("a1a")
    one = LinearSVC(solver=solver, loss="hinge", n_jobs=1).fit(X, labels)
    two = LinearSVC(solver=solver, loss="hinge", n_jobs=2).fit(X, labels)
    assert np.array_equal(one.coef_, two.coef_) and np.array_equal(one.intercept_, two.intercept_)
