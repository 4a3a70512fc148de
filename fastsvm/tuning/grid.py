"""Parameter search by cross validation over a grid of (C, gamma), or (nu, gamma) for nu-SVC and
one-class, reusing work across the grid.

Every cell is scored on one fold split (fastsvm.tuning.crossval's, LIBSVM's or seeded). The cells on one
gamma are one cross validation in which each fold is trained as a path over the grid's C, each C
warm-started from the last on shared state (fastsvm.training.trainer.fit_path: the solver's Solver.prepare
and solve_c_path, e.g. SMO's kernel cache; a solver with none solves them one by one), or over nu
(fit_nu_path: solve_nu_path, dcdm's SRBO screening). The folds of every gamma are independent
tasks run side by side in n_jobs threads; a training's result does not depend on its threads,
so the table is the same for any n_jobs. Gamma does not enter a linear or precomputed kernel:
their grid solves one row and copies it.
"""
import dataclasses
from dataclasses import dataclass

import numpy as np

from .crossval import fold_tasks
from ..csr import to_rows
from ..errors import ParameterError
from ..parallel import effective_n_jobs, run_tasks
from ..params import Params
from ..solvers import get_solver
from ..training.trainer import fit_model

REGRESSION = ("epsilon_svr", "nu_svr")
NU_TYPES = ("nu_svc", "one_class")   # C does not enter their problems


@dataclass
class GridResult:
    """A grid search's table and best cell, as grid_search returns it.

    Parameters
    ----------
    axis : {'C', 'nu'}
        The parameter along ``values``.
    values : list of float
        The grid's values of C (or nu), in the order given; [None]: that axis was not
        searched (the params' own C or nu).
    gammas : list of float
        The grid's values of gamma, in the order given; [None]: not searched (the params' own).
    rates : ndarray of shape (len(gammas), len(values))
        rates[g, v], the cross-validation score of cell (values[v], gammas[g]).
    measure : {'accuracy', 'mean squared error'}
        What rates holds: the accuracy in percent, or the mean squared error for regression.
    best_value : float or None
        The best cell's C (nu): the highest accuracy (lowest error), ties going to the
        smallest C (nu), then the smallest gamma.
    best_gamma : float or None
        The best cell's gamma.
    best_rate : float
        The best cell's score.
    params : Params
        The search's Params; ``params_of(value, gamma)`` gives a cell's.
    model : Model, default=None
        The best cell's model trained on all the data (None with refit=False).

    Attributes
    ----------
    cells : list of dict
        The table as rows ``{axis: value, "gamma": gamma, "rate": rate}``, gamma by gamma.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> import fastsvm
    >>> X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    >>> result = fastsvm.grid_search(X, y, Cs=[0.5, 2.0], gammas=[0.1, 1.0], folds=3, refit=False)
    >>> result.axis, result.measure, result.rates.shape
    ('C', 'accuracy', (2, 2))
    >>> sorted(result.cells[0])
    ['C', 'gamma', 'rate']
    >>> result.params_of(2.0, 0.1).C
    2.0
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


def grid_search(X, y, Cs=None, gammas=None, nus=None, *, folds=5, params=None, n_jobs=None, refit=True,
                sample_weight=None, on_gamma=None, progress=None, client=None):
    """Cross-validate every cell of a grid of (C, gamma), or (nu, gamma), as LIBSVM's grid.py does.

    For nu-SVC and one-class, C does not enter the problem: every C of a gamma gets that
    gamma's one cross validation (as grid.py's cells would).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The rows, as fit_model takes them.
    y : array-like of shape (n_samples,)
        Class labels or regression targets.
    Cs : array-like of float, default=None
        The grid's values of C, each finite and > 0. None: not searched (params.C).
    gammas : array-like of float, default=None
        The grid's values of gamma, each finite and > 0. None: not searched (params.gamma).
    nus : array-like of float, default=None
        The grid's values of nu in (0, 1], for nu_svc and one_class, in place of Cs.
    folds : int, default=5
        Number of cross-validation folds, at least 2.
    params : Params, default=None
        Everything else: svm type, solver, kernel, tolerance, and the folds
        (``libsvm_folds``: svm-train's; else drawn from ``seed``). None: ``Params()``.
    n_jobs : int, default=None
        Threads. None: params.n_jobs; the table does not depend on it.
    refit : bool, default=True
        Train the best cell's model on all the data (GridResult.model).
    sample_weight : array-like of shape (n_samples,), default=None
        Per-sample weights, as fit_model's.
    on_gamma : callable, default=None
        ``on_gamma(k, rates)`` is called as gammas[k]'s row of the table is done, in the
        order of gammas.
    progress : callable, default=None
        ``progress(done, total)`` is called as each of the grid's trainings (a fold along its
        path) is done.
    client : dask.distributed.Client, default=None
        Run the trainings on the client's workers, the data scattered to each once
        (fastsvm.distributed), with the same table.

    Returns
    -------
    result : GridResult
        The table, the best cell and (with refit) its model.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> import fastsvm
    >>> X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    >>> result = fastsvm.grid_search(X, y, Cs=[0.5, 2.0], gammas=[0.1, 1.0], folds=3)
    >>> result.rates.shape
    (2, 2)
    >>> result.best_value in (0.5, 2.0), result.best_gamma in (0.1, 1.0)
    (True, True)
    >>> result.model.svm_type
    'c_svc'
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
    X = to_rows(X)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if X.shape[0] != y.shape[0]:
        raise ParameterError(f"X has {X.shape[0]} rows but y has {y.shape[0]} values")
    # gamma does not enter a linear or precomputed kernel: one row serves every gamma
    kernel = params.kernel_type or get_solver(params.solver).default_kernel
    distinct = gammas[:1] if kernel in ("linear", "precomputed") else gammas
    n_jobs = effective_n_jobs(params.n_jobs)
    per_row = min(folds, len(y)) * (len(values) if params.probability else 1)
    threads = max(1, n_jobs // (per_row * len(distinct)))   # each training's share of n_jobs
    stop = np.zeros(1, dtype=np.int32)
    rows = [_Row(X, y, cell_params(params, axis, None, g), axis, values, folds=folds, sample_weight=sample_weight,
                 stop=stop, threads=threads)
            for g in distinct]
    rates = np.empty((len(gammas), len(values)))
    table_rows = [[k] for k in range(len(rows))] if len(rows) > 1 else [list(range(len(gammas)))]

    def row_done(r, row):
        for k in table_rows[r]:
            rates[k] = row
            if on_gamma is not None:
                on_gamma(k, row.copy())

    if client is not None:
        from ..distributed import run_fold_tasks
        specs = [spec for row in rows for spec in row.specs]
        _run(rows, n_jobs, stop, row_done, progress,
             runner=lambda tasks, n_jobs, stop, done: run_fold_tasks(client, X, y, sample_weight, specs, stop=stop,
                                                                     on_done=done))
    else:
        _run(rows, n_jobs, stop, row_done, progress)
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


class _Row:
    """One gamma's cells as fold tasks (fastsvm.tuning.crossval.fold_tasks): one cross validation whose
    folds are trained along the path of values, or, where a path does not apply, one per cell."""

    def __init__(self, X, y, params, axis, values, *, folds, sample_weight, stop, threads):
        self.y, self.svm_type, self.width = y, params.svm_type, len(values)
        self.units = []   # (tasks, assemble, the table's columns of each of its target's rows)
        self.specs = []   # per task, what rebuilds it elsewhere: fold_tasks' arguments and its index

        def unit(unit_params, columns, **path):
            tasks, assemble = fold_tasks(X, y, unit_params, folds, sample_weight, stop=stop, threads=threads,
                                         **path)
            self.units.append((tasks, assemble, columns))
            self.specs.extend((unit_params, folds, path, f, threads) for f in range(len(tasks)))

        if values == [None] or (axis == "C" and params.svm_type in NU_TYPES):
            unit(params, [list(range(len(values)))])
        elif params.probability:   # -b 1's models are not fitted along a path: each cell on its own
            for j, v in enumerate(values):
                unit(cell_params(params, axis, v, None), [[j]])
        else:
            path = sorted(set(values))   # increasing: each value warm-starts the next
            unit(params, [[j for j, v in enumerate(values) if v == p] for p in path],
                 **{"nus" if axis == "nu" else "Cs": path})

    def tasks(self):
        return [task for tasks, _, _ in self.units for task in tasks]

    def rates(self, results):
        """The row of the table from its tasks' results, in the order of tasks()."""
        row = np.empty(self.width)
        at = 0
        for tasks, assemble, columns in self.units:
            scores = np.atleast_1d(score(assemble(results[at:at + len(tasks)]), self.y, self.svm_type))
            at += len(tasks)
            for value_score, cols in zip(scores, columns):
                row[cols] = value_score
        return row


def _run(rows, n_jobs, stop, row_done, progress=None, *, runner=run_tasks):
    """Every fold task of every row side by side in n_jobs threads (or by ``runner``, run_tasks'
    stand-in); row_done(r, rates) as row r's tasks are done, rows in order; progress(done, total)
    after each task."""
    tasks = [row.tasks() for row in rows]
    ends = np.cumsum([len(t) for t in tasks])
    results = []

    def done(k, result):
        results.append(result)
        if progress is not None:
            progress(k + 1, int(ends[-1]))
        r = int(np.searchsorted(ends, k + 1))
        if k + 1 == ends[r]:
            row_done(r, rows[r].rates(results[ends[r] - len(tasks[r]):]))

    runner([task for row_tasks in tasks for task in row_tasks], n_jobs, stop, done)


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
