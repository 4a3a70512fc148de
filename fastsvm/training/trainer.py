"""Training: data and Params in, a LIBSVM Model out.

The data and parameters are checked here; classes are split as the solver splits them
(fastsvm.training.multiclass: one-vs-one, one-vs-rest or one joint problem), the subproblems are solved in
threads within the -m budget (fastsvm.training.schedule), with their probability fits, and the model is
assembled in LIBSVM's layout (fastsvm.training.multiclass).
"""
import sys
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from .._core._cache import bytes_to_hold_all
from .._core._crand import CRand
from ..models.columns import columns_to_keep, compressed, first_columns, scattered
from ..csr import RowSelection, is_dense, to_csr, to_rows
from ..errors import DegenerateProblemError, FastSVMError, ParameterError
from .multiclass import SPLITS, Layout, assembled_model, class_box, group_classes, weight_rows
from ..parallel import one_blas_thread
from ..models.prediction import decision_values
from ..models.probability import density_marks, fold_orders, platt_parameters, svr_probability
from .schedule import run_within_budget
from ..solvers import Kernel, Solution, Subproblem, get_solver
from ..solvers.base import FIT, Path, takes_dense

# LIBSVM casts class labels to int
INT_MIN, INT_MAX = -2**31, 2**31 - 1


def check_class_labels(y, where=None):
    """Class labels as LIBSVM reads them: each cast to int, so a label outside int's range fails
    and a fractional one is truncated, with one warning naming the first. ``where(row)`` names
    a row's place for the messages (the CLI gives file:line); by default its 1-based row.
    Returns the truncated labels."""
    where = where or (lambda row: f"training row {row + 1}")
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    truncated = np.trunc(y)
    outside = np.flatnonzero(~((truncated >= INT_MIN) & (truncated <= INT_MAX)))
    if outside.size:
        row = int(outside[0])
        raise FastSVMError(f"{where(row)}: label {_shortest(y[row])} is outside LIBSVM's int range "
                           f"[{INT_MIN}, {INT_MAX}]")
    fractional = np.flatnonzero(truncated != y)
    if fractional.size:
        row = int(fractional[0])
        more = f" (and {fractional.size - 1} more)" if fractional.size > 1 else ""
        warnings.warn(f"{where(row)}: class label {_shortest(y[row])} is not an integer; it is truncated "
                      f"to {truncated[row]:.0f} as LIBSVM does{more}", UserWarning, stacklevel=2)
    return truncated


def _shortest(value):
    """A label as the file most likely wrote it (3e9 -> 3000000000, 1e23 -> 1e+23)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def resolve_kernel(params, spec, n_features):
    """The kernel the solver will use: gamma None means LIBSVM's default, 1/n_features."""
    kind = params.kernel_type or spec.default_kernel
    if kind not in spec.kernels:
        raise ParameterError(f"solver {spec.name} does not support the {kind} kernel "
                             f"(it supports: {', '.join(spec.kernels)})")
    gamma = params.gamma
    if gamma is None:
        gamma = 1.0 / n_features if n_features > 0 else 0.0
    return Kernel(kind=kind, gamma=float(gamma), degree=int(params.degree), coef0=float(params.coef0))


@dataclass
class WarmStart:
    """What one fit leaves for the next fit on the same rows to start from (the estimators'
    warm_start=True): per subproblem, in the trainer's order, a Solution holding only what a warm
    start reads (dual, upper). A fit given one starts from its solutions when there is one per
    subproblem, and leaves its own there."""

    solutions: list = field(default_factory=list)


def fit_path(X, y, Cs, params, sample_weight=None, *, log=None, stop=None):
    """Train one model per value of C, each started from the last one's solution.

    The model of each C is fit_model's with params.C = C: each subproblem (one-vs-one pair,
    one-vs-rest class, the regression) is solved as a path over Cs, every C started from the
    previous one's solution (the solver's Solver.solve_c_path; a solver without one solves
    them one by one). For c_svc, epsilon_svr and nu_svr, without probability estimates.

    The model's support vectors are rows of X read in place (as LIBSVM's model points into its
    problem): X must stay unchanged while the model is used, or use ``model.detached()``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The training rows, anything ``fastsvm.csr.to_rows`` accepts (a dense array reaches a
        solver that reads dense rows as it is). Column j is LIBSVM feature index j + 1. For the
        precomputed kernel, each row holds [serial number, K(x, x_1), ...], column 0 being
        LIBSVM's index 0.
    y : array-like of shape (n_samples,)
        Class labels (cast to int as LIBSVM does: a fractional label is truncated with a
        warning) or regression targets.
    Cs : array-like of float
        The values of C, each finite and > 0, in the order the models are wanted.
    params : Params
        The problem, kernel, solver and their settings (its C is not used).
    sample_weight : array-like of shape (n_samples,), default=None
        Per-sample weights, rescaling C per sample (a weight of 0 leaves the sample out).
        None: every weight is 1.
    log : callable, default=None
        ``log(line)`` receives the progress and LIBSVM's summary lines when
        ``params.verbose`` (None: they are printed to stdout).
    stop : ndarray of shape (1,), dtype=int32, default=None
        A flag the solvers poll: set to 1 (e.g. by a Ctrl-C handler of a caller that runs this
        in a thread of its own), the training raises KeyboardInterrupt.

    Returns
    -------
    models : list of Model
        One model per C, in the order of Cs.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> import fastsvm
    >>> X, y = make_classification(n_samples=100, n_features=4, random_state=0)
    >>> models = fastsvm.fit_path(X, y, [0.1, 1.0, 10.0], fastsvm.Params())
    >>> len(models)
    3
    >>> [int(model.n_sv.sum()) > 0 for model in models]
    [True, True, True]
    """
    Cs = [float(C) for C in np.atleast_1d(np.asarray(Cs, dtype=np.float64))]
    if not Cs or not all(np.isfinite(C) and C > 0 for C in Cs):
        raise ParameterError("a path needs one or more values of C, each finite and > 0")
    if params.svm_type in ("nu_svc", "one_class"):
        raise ParameterError(f"C does not enter the {params.svm_type} problem: a path over C is for "
                             "c_svc, epsilon_svr and nu_svr")
    if params.probability:
        raise ParameterError("probability estimates (-b 1) are not computed along a path")
    return fit_model(X, y, replace(params, C=1.0), sample_weight, log, stop=stop, path=_PathRun(Cs))


def fit_nu_path(X, y, nus, params, sample_weight=None, *, log=None, stop=None):
    """Train one model per value of nu (nu_svc or one_class), along an increasing grid.

    The model of each nu is fit_model's with params.nu = nu, each subproblem solved along the
    grid by the solver's solve_nu_path (dcdm: warm starts and SRBO screening; its
    Solution.details per nu in model.info["details"]), else one by one. Without probability
    estimates.

    The model's support vectors are rows of X read in place (as LIBSVM's model points into its
    problem): X must stay unchanged while the model is used, or use ``model.detached()``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The training rows, anything ``fastsvm.csr.to_rows`` accepts (a dense array reaches a
        solver that reads dense rows as it is). Column j is LIBSVM feature index j + 1. For the
        precomputed kernel, each row holds [serial number, K(x, x_1), ...], column 0 being
        LIBSVM's index 0.
    y : array-like of shape (n_samples,)
        Class labels (cast to int as LIBSVM does: a fractional label is truncated with a
        warning) or regression targets.
    nus : array-like of float
        The values of nu, increasing, each in (0, 1].
    params : Params
        The problem (svm_type 'nu_svc' or 'one_class'), kernel, solver and their settings (its
        nu is not used).
    sample_weight : array-like of shape (n_samples,), default=None
        Per-sample weights, rescaling C per sample (a weight of 0 leaves the sample out).
        None: every weight is 1.
    log : callable, default=None
        ``log(line)`` receives the progress and LIBSVM's summary lines when
        ``params.verbose`` (None: they are printed to stdout).
    stop : ndarray of shape (1,), dtype=int32, default=None
        A flag the solvers poll: set to 1 (e.g. by a Ctrl-C handler of a caller that runs this
        in a thread of its own), the training raises KeyboardInterrupt.

    Returns
    -------
    models : list of Model
        One model per nu, in the order of nus.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> import fastsvm
    >>> X, y = make_classification(n_samples=100, n_features=4, random_state=0)
    >>> models = fastsvm.fit_nu_path(X, y, [0.2, 0.4], fastsvm.Params(svm_type="nu_svc"))
    >>> [model.svm_type for model in models]
    ['nu_svc', 'nu_svc']
    """
    nus = [float(nu) for nu in np.atleast_1d(np.asarray(nus, dtype=np.float64))]
    if not nus or any(not 0 < nu <= 1 for nu in nus) or any(b <= a for a, b in zip(nus, nus[1:])):
        raise ParameterError("a nu path needs increasing values in (0, 1]")
    if params.svm_type not in ("nu_svc", "one_class"):
        raise ParameterError(f"nu does not enter the {params.svm_type} problem: a path over nu is for nu_svc "
                             "and one_class")
    if params.probability:
        raise ParameterError("probability estimates (-b 1) are not computed along a path")
    return fit_model(X, y, replace(params, nu=max(nus)), sample_weight, log, stop=stop, path=_PathRun(nus, over="nu"))


def fit_model(X, y, params, sample_weight=None, log=None, *, stop=None, stream=None, warm=None, path=None):
    """Train a model: what svm-train does, with the solver ``params.solver``.

    The data and parameters are checked, the classes split as the solver splits them
    (one-vs-one, one-vs-rest or one joint problem) and the subproblems solved in threads,
    with their probability fits when ``params.probability``.

    The model's support vectors are rows of X read in place (as LIBSVM's model points into its
    problem): X must stay unchanged while the model is used, or use ``model.detached()``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The training rows, anything ``fastsvm.csr.to_rows`` accepts (a dense array reaches a
        solver that reads dense rows as it is). Column j is LIBSVM feature index j + 1. For the
        precomputed kernel, each row holds [serial number, K(x, x_1), ...], column 0 being
        LIBSVM's index 0.
    y : array-like of shape (n_samples,)
        Class labels (cast to int as LIBSVM does: a fractional label is truncated with a
        warning) or regression targets.
    params : Params
        The problem, kernel, solver and their settings.
    sample_weight : array-like of shape (n_samples,), default=None
        Per-sample weights, rescaling C per sample (a weight of 0 leaves the sample out).
        None: every weight is 1.
    log : callable, default=None
        ``log(line)`` receives the progress and LIBSVM's summary lines when
        ``params.verbose`` (None: they are printed to stdout).
    stop : ndarray of shape (1,), dtype=int32, default=None
        A flag the solvers poll: set to 1 (e.g. by a Ctrl-C handler of a caller that runs this
        in a thread of its own), the training raises KeyboardInterrupt.
    stream : fastsvm._core._crand.CRand, default=None
        LIBSVM's rand() stream, where this training's probability folds are drawn from; with
        ``params.libsvm_folds`` and no stream a fresh one starts, as in a fresh svm-train
        process.
    warm : fastsvm.training.trainer.WarmStart, default=None
        Start from a previous fit's solutions (when it holds one per subproblem) and leave
        this one's there.
    path : object, default=None
        fit_path's and fit_nu_path's run over their values (params.C being 1 for a path over
        C): a list of models is then returned, one per value. Call those functions instead.

    Returns
    -------
    model : Model
        The trained model in LIBSVM's layout (a list of them with ``path``); ``model.info``
        holds the solver's statistics.

    Raises
    ------
    FastSVMError
        For data the problem cannot take (rows and labels of different lengths, values that
        are not finite); ParameterError, one kind of it, for parameters the solver cannot take.

    See Also
    --------
    fit_path : One model per C, each warm-started from the last.
    grid_search : Cross-validate a grid of C and gamma.
    SVC : The scikit-learn estimator over this function.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_classification
    >>> import fastsvm
    >>> X, y = make_classification(n_samples=100, n_features=4, random_state=0)
    >>> model = fastsvm.fit_model(X, y, fastsvm.Params(C=1.0, kernel_type="rbf", gamma=0.25))
    >>> model.svm_type, model.nr_class
    ('c_svc', 2)
    >>> bool(np.mean(fastsvm.predict(model, X) == y) > 0.9)
    True
    >>> lines = []
    >>> _ = fastsvm.fit_model(X, y, fastsvm.Params(verbose=True), log=lines.append)
    >>> lines[-1].startswith("Total nSV")
    True
    """
    params.check()
    spec = get_solver(params.solver)
    if params.svm_type not in spec.formulations:
        raise ParameterError(f"solver {spec.name} does not solve {params.svm_type} "
                             f"(it solves: {', '.join(spec.formulations)})")
    X = to_rows(X)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if X.shape[0] != y.shape[0]:
        raise FastSVMError(f"X has {X.shape[0]} rows but y has {y.shape[0]} values")
    if X.shape[0] == 0:
        raise FastSVMError("no training data")
    if is_dense(X) and ((params.kernel_type or spec.default_kernel) == "precomputed"
                        or not takes_dense(spec, X.shape[0], params.svm_type)):
        X = to_csr(X)   # once, not once per subproblem
    if not np.all(np.isfinite(y)):
        raise FastSVMError("labels contain NaN or infinity")
    if params.svm_type in ("c_svc", "nu_svc"):
        y = check_class_labels(y)
    weights = _sample_weights(sample_weight, X.shape[0])
    kernel = resolve_kernel(params, spec, X.shape[1])
    if kernel.kind == "precomputed":
        # serial, then k(x, x_1..x_n): all LIBSVM reads (the cache's dense row is this wide)
        X = first_columns(X, max(X.shape[0], _check_precomputed(X)) + 1)
    if params.probability and spec.multiclass != "ovo" and params.svm_type in ("c_svc", "nu_svc"):
        raise ParameterError(f"probability estimates (-b 1) need a one-vs-one solver such as smo "
                             f"(solver {spec.name} does not split classes one-vs-one)")
    if params.svm_type == "nu_svc" and not spec.bias_in_kernel:
        _check_nu_feasible(y, weights, params.nu)
    if log is None and params.verbose:
        log = _print_line
    if stream is None and params.libsvm_folds and params.probability:
        stream = CRand()
    # a width far beyond the occurring columns: the solvers work on those, renumbered in order
    # (a feature index of 2**31 - 2 then costs what its value costs)
    columns = columns_to_keep(X) if kernel.kind != "precomputed" and not is_dense(X) else None
    with nullcontext() if spec.limits_blas_itself else one_blas_thread():
        trainer = _Trainer(spec, params, kernel, log, stop, stream=stream, warm=warm)
        if path is None:
            if columns is None:
                return trainer.train(X, y, weights)
            return _widened(trainer.train(compressed(X, columns), y, weights), X, columns)
        models = trainer.train_path(X if columns is None else compressed(X, columns), y, weights, path)
        return models if columns is None else [_widened(model, X, columns) for model in models]


def _widened(model, X, columns):
    """A model trained on X's renumbered columns, as trained on X: support vectors are rows of
    X itself, weight vectors go back to their columns (stored sparse)."""
    svs = model.support_vectors
    if isinstance(svs, RowSelection):
        svs = RowSelection(X, svs.rows)
    else:
        svs = scattered(svs, columns, X.shape[1])
    info = dict(model.info)
    if info["primal_weights"] is not None:
        info["primal_weights"] = [scattered(w, columns, X.shape[1]) for w in info["primal_weights"]]
    return replace(model, support_vectors=svs, info=info)


def _breakdown(solver, problem):
    return FastSVMError(f"solver {solver} did not converge ({problem}): its steps became "
                        "non-finite; scale the data (fastsvm-scale) and try again")


def _print_line(line):
    # one write per line, so lines from threads solving pairs side by side do not interleave
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _sample_weights(sample_weight, n):
    if sample_weight is None:
        return np.ones(n)
    w = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
    if w.shape != (n,):
        raise FastSVMError(f"sample_weight has {w.size} values for {n} rows")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise FastSVMError("sample weights must be finite and non-negative")
    return w


def _check_nu_feasible(y, weights, nu):
    """svm_check_parameter's test for nu-SVC, on every pair of classes (weights summed)."""
    mass = [weights[rows].sum() for rows in group_classes(y).rows]
    for i in range(len(mass)):
        for j in range(i + 1, len(mass)):
            if nu * (mass[i] + mass[j]) / 2 > min(mass[i], mass[j]):
                raise ParameterError("specified nu is infeasible")


def _check_precomputed(X):
    """The largest serial number, once each is checked."""
    serial = X[:, 0].toarray().ravel()
    if np.any(serial < 1) or np.any(serial != np.round(serial)) or np.any(serial > X.shape[1] - 1):
        raise FastSVMError("precomputed kernel: column 0 must hold each row's serial number "
                           "1..n with the kernel values in columns 1..n")
    return int(serial.max())


@dataclass
class _PathRun:
    """A path's models are assembled one value (of C, or of nu) at a time, from the one split: the
    first assembly solves every subproblem along the path, the others read their value's solutions."""

    values: list
    over: str = "C"
    at: int = 0                  # the position in values of the model being assembled
    solved: tuple | None = None  # _solve_all's (solutions, calibrations), a list per C each
    split: object = None         # classification's split of the classes: one for every value


class _Trainer:
    """Splits the problem for one solver, runs the pieces, assembles the Model."""

    def __init__(self, solver, params, kernel, log, stop, *, stream=None, warm=None):
        self.solver = solver
        self.params = params
        self.kernel = kernel
        self.log = log
        self.stop = np.zeros(1, dtype=np.int32) if stop is None else stop
        self.stream = stream  # LIBSVM's rand(), for the probability folds; None: seeded
        self.warm = warm      # a WarmStart, or None
        self.path = None      # a _PathRun while train_path runs

    def train(self, X, y, weights):
        if self.params.svm_type in ("c_svc", "nu_svc"):
            return self.classification(X, y, weights)
        return self.single(X, y, weights)

    def train_path(self, X, y, weights, path):
        """One model per value of the _PathRun ``path``: C (the subproblems' bounds times C) or nu."""
        self.path = path
        try:
            models = []
            for at in range(len(path.values)):
                self.path.at = at
                models.append(self.train(X, y, weights))
            return models
        finally:
            self.path = None

    def _solutions(self, problem, name, shared=None):
        """The problem's solutions along the fit's Path (one value for a single fit); ``shared``: a
        SharedPreparation the problem's solver reads instead of preparing its own."""
        path = FIT if self.path is None else Path(tuple(self.path.values), self.path.over)
        try:
            solutions = self.solver.solve_path(problem, path, None if shared is None else shared.state(problem))
        except (FloatingPointError, OverflowError):
            raise _breakdown(self.solver.name, name) from None
        for solution in solutions:
            if not all(np.all(np.isfinite(v)) for v in (solution.coef, solution.rho, solution.w)
                       if v is not None):
                raise _breakdown(self.solver.name, name)   # never a NaN in a model
        return solutions

    # -- running subproblems -------------------------------------------------------------
    def _solve_all(self, problems, names, calibrations=None, keep=None, sizes=None, *, shared=None):
        """Solve subproblems in threads (fastsvm.training.schedule.run_within_budget, the -m budget
        shared between them; with ``sizes``, rows per problem, the largest first); seeds depend
        on the position only, not on threads.

        ``problems[k]()`` builds subproblem k when its task starts, so that only the running ones
        hold their data. ``calibrations[k](problem)``, the probability fit of problem k, runs in
        the same task after the solve; (solutions, calibration results or None) are returned.
        ``keep(k, solution)``, when given, is what the task returns of its solution (the rest is
        freed as the task ends). Along a path (train_path) the first call solves each subproblem
        for every C and each call returns its C's solutions; with a WarmStart each subproblem
        starts from the previous fit's solution. ``shared``: one solver state (Solver.prepare)
        for every subproblem, a SharedPreparation, or None."""
        if self.path is not None and self.path.solved is not None:
            solutions, calibrated = self.path.solved
            return [s[self.path.at] for s in solutions], calibrated
        seeds = np.random.SeedSequence(self.params.seed).generate_state(max(1, len(problems)))
        if shared is not None:
            shared.seed = int(seeds[0])   # whichever task builds it: the same state for any -j
        calibrations = calibrations or [None] * len(problems)
        starts = self.warm.solutions if self.warm is not None else []
        starts = starts if len(starts) == len(problems) else [None] * len(problems)
        left = [None] * len(problems)

        def task(k, budget, inner):
            problem = problems[k]()
            problem.params = replace(self.params, cache_size=budget)
            problem.seed = int(seeds[k])
            problem.stop = self.stop
            problem.n_threads = inner
            problem.warm = starts[k]
            if self.log is not None:
                prefix = f"[{names[k]}] " if len(problems) > 1 else ""
                problem.log = (lambda line, p=prefix: self.log(p + line))
            solutions = self._solutions(problem, names[k], shared)
            calibrated = calibrations[k](problem) if calibrations[k] is not None else None
            lines = []
            if self.log is not None and self.path is None:
                lines = summary_lines(problem, solutions[0])
            elif self.log is not None:
                over = self.path.over
                lines = [f"[{over} = {v:g}] {line}" for v, solution in zip(self.path.values, solutions)
                         for line in summary_lines(replace(problem, upper=problem.upper * v) if over == "C"
                                                   else problem, solution)]
            held = max(solution.cache_peak_bytes for solution in solutions) or None
            if self.warm is not None:
                left[k] = Solution(coef=np.empty(0), rho=solutions[-1].rho, dual=solutions[-1].dual,
                                   upper=solutions[-1].upper)
            if self.path is not None:   # the path's models are built from the rest
                solutions = [replace(solution, dual=None, upper=None) for solution in solutions]
            if keep is not None:
                solutions = [keep(k, solution) for solution in solutions]
            return (solutions, calibrated, lines), held

        most_bytes = [bytes_to_hold_all(n) for n in sizes] if sizes else None
        results = run_within_budget([partial(task, k) for k in range(len(problems))], self.params.n_jobs,
                                    self.params.cache_size, self.stop, most_bytes,
                                    checks_signals=self.solver.stops_on_signals)
        for (solutions, _, lines), name in zip(results, names):
            if any(solution.status == "max_iter" for solution in solutions):
                warnings.warn(f"solver {self.solver.name} reached its iteration limit ({name}); "
                              "the model may not be optimal", RuntimeWarning, stacklevel=3)
            for line in lines:
                self.log(line)
        if self.warm is not None:
            self.warm.solutions = left
        if self.path is not None:
            self.path.solved = [r[0] for r in results], [r[1] for r in results]
            return self._solve_all(problems, names)
        return [r[0][0] for r in results], [r[1] for r in results]

    def _subproblem(self, formulation, X, y, upper, rows=None):
        return Subproblem(formulation=formulation, X=X, y=y, upper=upper,
                          kernel=self.kernel, params=self.params, rows=rows)

    def _model(self, layout, solutions):
        return assembled_model(layout, solutions, self.params.svm_type, self.kernel, self.solver.name)

    # -- probability ----------------------------------------------------------------------
    def _calibration(self, order, weights, box=None):
        """The probability fit of a subproblem, run in its task, its folds cut from the row order
        ``order``: Platt's (A, B) for a one-vs-one pair whose bounds are box = (C+, C-), else
        the SVR Laplace scale."""
        def calibrate(problem):
            fit = self._fold_fitter(problem, weights, box)
            if box is None:
                return svr_probability(problem.y, fit, order, problem.log)
            return platt_parameters(problem.y, fit, order, problem.log)

        return calibrate

    def _fold_fitter(self, problem, weights, box=None):
        """fit(train, test): decision values of the problem's rows ``test`` by a model trained,
        probability off, on its rows ``train`` -- the training inside LIBSVM's probability
        cross-validation. ``box`` = (C+, C-) of a one-vs-one pair, LIBSVM's weights of +1/-1."""
        params = replace(problem.params, probability=False, verbose=False, n_jobs=problem.n_threads,
                         kernel_type=self.kernel.kind, gamma=self.kernel.gamma)
        if box is not None:
            params.C, params.class_weight = 1.0, {1: box[0], -1: box[1]}

        trainer = _Trainer(self.solver, params, self.kernel, problem.log, self.stop)

        def fit(train, test):
            # a fold is trained as it comes, without the whole problem's checks (as LIBSVM)
            try:
                model = trainer.train(problem.x_rows(train), problem.y[train], weights[train])
            except DegenerateProblemError:
                return np.full(len(test), np.nan)  # LIBSVM's NaN values: Platt keeps its prior
            dec = decision_values(model, problem.x_rows(test), n_jobs=problem.n_threads)[:, 0]
            return dec * model.labels[0] if model.is_classification else dec  # as +1 vs -1

        return fit

    # -- regression and one-class ----------------------------------------------------------
    def single(self, X, y, weights):
        keep = np.flatnonzero(weights > 0)
        rows = None if keep.size == X.shape[0] else keep   # read in place, not copied
        wk = weights if rows is None else weights[keep]
        if self.params.svm_type == "one_class":
            target, upper = np.ones(len(keep)), wk.copy()
        else:
            target, upper = (y if rows is None else y[keep]), self.params.C * wk
        calibrations = None
        if self.params.probability and self.params.svm_type != "one_class":
            order, = fold_orders([keep.size], self.params.seed, self.stream)
            calibrations = [self._calibration(order, wk)]
        (solution,), (sigma,) = self._solve_all(
            [lambda: self._subproblem(self.params.svm_type, X, target, upper, rows)],
            [self.params.svm_type], calibrations)
        coef = np.asarray(solution.coef, dtype=np.float64)
        if self.solver.multiclass == "ovr":
            layout = Layout(weight_rows([solution.w]), [[1.0]], [solution.rho])
        else:
            nz = np.flatnonzero(coef != 0)
            layout = Layout(RowSelection(X, keep[nz]), coef[nz][None, :], [solution.rho], sv_rows=keep[nz] + 1)
        model = self._model(layout, [solution])
        if sigma is not None:
            model = replace(model, prob_a=[sigma])
        if self.params.probability and self.params.svm_type == "one_class":
            Xk = X if rows is None else X[keep]
            marks = density_marks(decision_values(model, Xk, n_jobs=self.params.n_jobs)[:, 0])
            if marks is None:
                warnings.warn("number of positive or negative decision values < 5; too few to "
                              "do a probability estimation", RuntimeWarning, stacklevel=3)
            model = replace(model, prob_density_marks=marks)
        return model

    # -- classification -----------------------------------------------------------------
    def classification(self, X, y, weights):
        """The classes split as the solver splits them (fastsvm.training.multiclass), its subproblems
        solved, their solutions assembled."""
        split = self.path.split if self.path is not None else None
        if split is None:   # along a path, params.C is 1 at every value: one split serves them all
            classes = group_classes(y)
            box = class_box(classes.labels, self.params)
            split = SPLITS[self.solver.multiclass](X, classes, box, weights, self.params)
            if self.path is not None:
                self.path.split = split
        problems = [lambda p=p: self._subproblem(split.formulation, *split.data(p))
                    for p in range(len(split.names))]
        calibrations = None
        if self.params.probability:   # one-vs-one only: fit_model refuses the others
            orders = fold_orders(split.sizes, self.params.seed, self.stream)
            calibrations = [self._calibration(order, *split.fold_data(p)) for p, order in enumerate(orders)]
        shared = None
        if getattr(split, "shares_rows", False) and len(problems) > 1:
            shared = self.solver.shared_preparation(self.params.cache_size)
        solutions, platt = (self._solve_all(problems, split.names, calibrations, split.support_only, split.sizes,
                                            shared=shared)
                            if problems else ([], []))
        model = self._model(split.layout(solutions, self.log), solutions)
        if self.params.probability:
            model = replace(model, prob_a=[a for a, _ in platt], prob_b=[b for _, b in platt])
        return model


def summary_lines(problem, solution):
    """The lines LIBSVM prints after each solve (the solve_* functions and svm_train_one).

    A solver's own nu and nBSV (Solution.nu, n_bounded_sv) are used as given; otherwise they are
    counted from the coefficients and the problem's bounds. The nu formulations print C = 1/r
    (nu-SVC) or epsilon = -r (nu-SVR) from the solution's margin scale r."""
    coef = np.abs(np.asarray(solution.coef, dtype=np.float64))
    upper = np.asarray(problem.upper, dtype=np.float64)
    lines = [f"optimization finished, #iter = {solution.n_iter}"]
    uniform = upper.size > 0 and np.all(upper == upper[0])
    r = solution.margin_scale
    if solution.nu is not None:
        lines.append(f"nu = {solution.nu:f}")
    elif problem.formulation in ("c_svc", "epsilon_svr") and uniform:  # LIBSVM: only when Cp == Cn
        lines.append(f"nu = {coef.sum() / (upper[0] * coef.size):f}")
    elif r is not None and problem.formulation == "nu_svc":
        lines.append(f"C = {1 / r:f}")
    elif r is not None and problem.formulation == "nu_svr":
        lines.append(f"epsilon = {-r:f}")
    # LIBSVM prints the dual objective (a solver whose objective is the primal one reports it apart);
    # a joint multi-class solution has one rho per class
    rho = " ".join(f"{r:f}" for r in np.atleast_1d(solution.rho))
    objective = solution.objective if solution.dual_objective is None else solution.dual_objective
    lines.append(f"obj = {objective:f}, rho = {rho}")
    n_sv = int(np.count_nonzero(coef))
    n_bsv = solution.n_bounded_sv
    if n_bsv is None:
        n_bsv = int(np.count_nonzero((coef > 0) & (coef >= upper)))
    lines.append(f"nSV = {n_sv}, nBSV = {n_bsv}")
    return lines
