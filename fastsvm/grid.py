"""Parameter search by cross validation over a grid of (C, gamma), or (nu, gamma) for nu-SVC and
one-class, reusing work across the grid.

Every cell is scored on one fold split (fastsvm.crossval's, LIBSVM's or seeded). The cells on one
gamma are one cross validation in which each fold is trained as a path over the grid's C, each C
warm-started from the last on shared state (fastsvm.train.fit_path: the solver's SolverSpec.prepare
and solve_path, e.g. SMO's kernel cache; a solver with none solves them one by one), or over nu
(fit_nu_path: solve_nu_path, dcdm's SRBO screening). The folds run in threads; every training
inside a fold runs on one thread, so the table is the same for any n_jobs.
"""
import dataclasses
from dataclasses import dataclass

import numpy as np

from .crossval import cross_validation
from .csr import to_csr
from .errors import ParameterError
from .params import Params
from .train import fit_model

REGRESSION = ("epsilon_svr", "nu_svr")
NU_TYPES = ("nu_svc", "one_class")   # C does not enter their problems


@dataclass
class GridResult:
    """A grid search's table and best cell.

    axis : "C" or "nu", the parameter along ``values``.
    values, gammas : the grid's values in the order given; [None]: that axis was not searched
        (the params' own C or nu, gamma).
    rates : rates[g, v], the cross-validation score of cell (values[v], gammas[g]): accuracy in
        percent, or the mean squared error for regression (``measure`` says which).
    best_value, best_gamma, best_rate : the best cell: the highest accuracy (lowest error), ties
        going to the smallest C (nu), then the smallest gamma.
    model : the best cell's model trained on all the data (None with refit=False).
    params : the search's Params; ``params_of(value, gamma)`` gives a cell's.
    """

    axis: str
    values: list
    gammas: list
    rates: np.ndarray
    measure: str
    best_value: float | None
    best_gamma: float | None
    best_rate: float
    params: Params
    model: object = None

    @property
    def cells(self):
        """The table as rows {axis: value, "gamma": gamma, "rate": rate}, gamma by gamma."""
        return [{self.axis: v, "gamma": g, "rate": float(self.rates[i, j])}
                for i, g in enumerate(self.gammas) for j, v in enumerate(self.values)]

    def params_of(self, value, gamma):
        """The Params of cell (value, gamma): the search's with that C (nu) and gamma."""
        return cell_params(self.params, self.axis, value, gamma)


def cell_params(params, axis, value, gamma):
    """``params`` with C (or nu) = value and gamma = gamma, None keeping the params' own."""
    changes = {}
    if value is not None:
        changes[axis] = float(value)
    if gamma is not None:
        changes["gamma"] = float(gamma)
    return dataclasses.replace(params, **changes)


def score(target, y, svm_type):
    """svm-train -v's figure: accuracy in percent, or the mean squared error for regression;
    ``target`` holds one row of predictions per cell."""
    if svm_type in REGRESSION:
        return np.mean((target - y) ** 2, axis=-1)
    return 100.0 * np.count_nonzero(target == y, axis=-1) / y.shape[0]


def grid_search(X, y, Cs=None, gammas=None, nus=None, folds=5, params=None, n_jobs=None, refit=True,
                sample_weight=None, on_gamma=None):
    """Cross-validate every cell of the grid Cs x gammas (nus x gammas for nu-SVC / one-class)
    and return a GridResult: the table, the best cell and (``refit``) its model on all the data.

    ``params`` (a fastsvm.Params) sets everything else: svm type, solver, kernel, tolerance, and
    the folds (``libsvm_folds``: svm-train's; else drawn from ``seed``). Cs, gammas or nus None:
    that axis is not searched. For nu-SVC and one-class, C does not enter the problem: every C
    of a gamma gets that gamma's one cross validation (as grid.py's cells would). ``n_jobs``:
    threads (None: params.n_jobs); the table does not depend on it. ``on_gamma(k, rates)`` is
    called as gammas[k]'s row of the table is done, in the order of gammas.
    """
    params = Params() if params is None else params
    params = dataclasses.replace(params, verbose=False, n_jobs=params.n_jobs if n_jobs is None else n_jobs)
    params.check()
    if Cs is not None and nus is not None:
        raise ParameterError("a grid searches C or nu, not both")
    if nus is not None and params.svm_type not in NU_TYPES:
        raise ParameterError(f"nu does not enter the {params.svm_type} problem: a nu grid is for nu_svc and "
                             "one_class")
    if params.probability and params.svm_type in NU_TYPES and nus is not None:
        raise ParameterError("probability estimates (-b 1) are not computed along a nu grid")
    folds = int(folds)
    if folds < 2:
        raise ParameterError("n-fold cross validation: n must >= 2")
    axis = "nu" if nus is not None else "C"
    values = _axis("C", Cs, np.inf) if nus is None else _axis("nu", nus, 1.0)
    gammas = _axis("gamma", gammas, np.inf)
    X = to_csr(X)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if X.shape[0] != y.shape[0]:
        raise ParameterError(f"X has {X.shape[0]} rows but y has {y.shape[0]} values")
    rates = np.empty((len(gammas), len(values)))
    for k, gamma in enumerate(gammas):
        rates[k] = _row(X, y, cell_params(params, axis, None, gamma), axis, values, folds, sample_weight)
        if on_gamma is not None:
            on_gamma(k, rates[k].copy())
    measure = "mean squared error" if params.svm_type in REGRESSION else "accuracy"
    best_value, best_gamma, best_rate = _best(values, gammas, rates, params.svm_type in REGRESSION)
    result = GridResult(axis, values, gammas, rates, measure, best_value, best_gamma, best_rate, params)
    if refit:
        result.model = fit_model(X, y, result.params_of(best_value, best_gamma), sample_weight)
    return result


def _axis(name, values, largest):
    """An axis's values as floats, checked ([None]: not searched)."""
    if values is None:
        return [None]
    values = [float(v) for v in np.atleast_1d(np.asarray(values, dtype=np.float64))]
    if not values or not all(0 < v <= largest and np.isfinite(v) for v in values):
        bound = "<= 1" if largest == 1.0 else "finite"
        raise ParameterError(f"a grid of {name} needs one or more values, each > 0 and {bound}")
    return values


def _row(X, y, params, axis, values, folds, sample_weight):
    """The rates of one gamma's cells: one cross validation, each fold along the path of values."""
    if values == [None] or (axis == "C" and params.svm_type in NU_TYPES):
        target = cross_validation(X, y, params, folds, sample_weight)
        return np.full(len(values), score(target, y, params.svm_type))
    if params.probability:   # -b 1's models are not fitted along a path: each cell on its own
        return np.array([score(cross_validation(X, y, cell_params(params, axis, v, None), folds, sample_weight),
                               y, params.svm_type) for v in values])
    path = sorted(set(values))   # increasing: each value warm-starts the next
    if axis == "nu":
        targets = cross_validation(X, y, params, folds, sample_weight, nus=path)
    else:
        targets = cross_validation(X, y, params, folds, sample_weight, Cs=path)
    rates = score(targets, y, params.svm_type)
    return np.array([rates[path.index(v)] for v in values])


def _best(values, gammas, rates, lowest):
    """(value, gamma, rate) of the best cell; ties to the smallest value, then the smallest gamma."""
    order = sorted(((v if v is not None else 0.0, g if g is not None else 0.0, j, i)
                    for i, g in enumerate(gammas) for j, v in enumerate(values)))
    best = None
    for _, _, j, i in order:
        rate = rates[i, j]
        if best is None or (rate < best[2] if lowest else rate > best[2]):
            best = (values[j], gammas[i], float(rate))
    return best
