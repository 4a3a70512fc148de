"""Training: data and Params in, a LIBSVM Model out.

Classes are grouped as LIBSVM does (first occurrence; a -1/+1 problem is turned so that +1
comes first), split one-vs-one (LIBSVM-type solvers) or one-vs-rest (LIBLINEAR-type solvers),
the subproblems are solved in threads, and the model is assembled in LIBSVM's layout.
"""
import sys
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from ._core._cache import bytes_to_hold_all
from ._core._crand import CRand
from .columns import columns_to_keep, compressed, first_columns, scattered
from .csr import RowSelection, to_csr
from .errors import DegenerateProblemError, FastSVMError, ParameterError
from .heap import release_free_memory
from .model import Model
from .parallel import effective_n_jobs, one_blas_thread, run_tasks
from .prediction import decision_values
from .probability import density_marks, fold_orders, platt_parameters, svr_probability
from .solvers import Kernel, Solution, Subproblem, get_solver
from .solvers.base import solve_path_cold

# the largest pair's cache peak, as a fraction of its whole kernel matrix, above which the other
# pairs are solved one at a time (with every thread) rather than side by side
MOST_OF_ITS_MATRIX = 0.5
# LIBSVM casts class labels to int
INT_MIN, INT_MAX = -2**31, 2**31 - 1


@dataclass
class Classes:
    """LIBSVM's svm_group_classes: labels in order, and the training rows of each, in order."""

    labels: np.ndarray  # int64, nr_class
    rows: list  # rows[c]: indices of class c in the training data, ascending


def group_classes(y):
    """Integer labels (LIBSVM casts with (int)) ordered by first occurrence; -1/+1 swapped."""
    y_int = np.trunc(np.asarray(y, dtype=np.float64)).astype(np.int64)
    labels, first = np.unique(y_int, return_index=True)
    labels = labels[np.argsort(first, kind="stable")]
    if len(labels) == 2 and labels[0] == -1 and labels[1] == 1:
        labels = labels[::-1]
    rows = [np.flatnonzero(y_int == label) for label in labels]
    return Classes(labels=labels.copy(), rows=rows)


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


def fit_path(X, y, Cs, params, sample_weight=None, log=None, stop=None):
    """One Model per C of ``Cs``, in order: fit_model's model with params.C = C, each subproblem
    (one-vs-one pair, one-vs-rest class, the regression) solved as a path over Cs, every C
    started from the previous one's solution (the solver's SolverSpec.solve_path; a solver
    without one solves them one by one)."""
    Cs = [float(C) for C in np.atleast_1d(np.asarray(Cs, dtype=np.float64))]
    if not Cs or not all(np.isfinite(C) and C > 0 for C in Cs):
        raise ParameterError("a path needs one or more values of C, each finite and > 0")
    if params.svm_type in ("nu_svc", "one_class"):
        raise ParameterError(f"C does not enter the {params.svm_type} problem: a path over C is for "
                             "c_svc, epsilon_svr and nu_svr")
    if params.probability:
        raise ParameterError("probability estimates (-b 1) are not computed along a path")
    return fit_model(X, y, replace(params, C=1.0), sample_weight, log, stop, path=Cs)


def fit_model(X, y, params, sample_weight=None, log=None, stop=None, stream=None, warm=None, path=None):
    """Train a Model on rows X (any matrix fastsvm.csr.to_csr accepts) with labels/targets y.

    The model's support vectors are rows of X read in place (as LIBSVM's model points into its
    problem): X must stay unchanged while the model is used, or use ``model.detached()``.
    ``log`` receives progress and LIBSVM's summary lines when ``params.verbose`` (default: print
    to stdout). For the precomputed kernel X holds [serial number, K(x, x_1), ...] per row,
    column 0 being LIBSVM's index 0. ``stop`` (int32[1]) lets a caller that runs this in a
    thread of its own pass its Ctrl-C flag down to the solvers. ``stream`` (a CRand) is LIBSVM's
    rand() stream, where this training's probability folds are drawn from; with
    ``params.libsvm_folds`` and no stream a fresh one starts, as in a fresh svm-train process.
    ``warm`` (a WarmStart): start from a previous fit's solutions and leave this one's there.
    ``path`` (fit_path's Cs, params.C being 1): a list of models, one per C.
    """
    params.check()
    spec = get_solver(params.solver)
    if params.svm_type not in spec.formulations:
        raise ParameterError(f"solver {spec.name} does not solve {params.svm_type} "
                             f"(it solves: {', '.join(spec.formulations)})")
    X = to_csr(X)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if X.shape[0] != y.shape[0]:
        raise FastSVMError(f"X has {X.shape[0]} rows but y has {y.shape[0]} values")
    if X.shape[0] == 0:
        raise FastSVMError("no training data")
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
    if params.svm_type == "nu_svc":
        _check_nu_feasible(y, weights, params.nu)
    if log is None and params.verbose:
        log = _print_line
    if stream is None and params.libsvm_folds and params.probability:
        stream = CRand()
    # a width far beyond the occurring columns: the solvers work on those, renumbered in order
    # (a feature index of 2**31 - 2 then costs what its value costs)
    columns = columns_to_keep(X) if kernel.kind != "precomputed" else None
    with one_blas_thread():
        trainer = _Trainer(spec, params, kernel, log, stop, stream, warm)
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
    """A path's models are assembled one C at a time, from the one split: the first assembly
    solves every subproblem along the path, the others read their C's solutions."""

    Cs: list
    at: int = 0                  # the position in Cs of the model being assembled
    solved: tuple | None = None  # _solve_all's (solutions, calibrations), a list per C each


class _Trainer:
    """Splits the problem for one solver, runs the pieces, assembles the Model."""

    def __init__(self, spec, params, kernel, log, stop, stream=None, warm=None):
        self.spec = spec
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

    def train_path(self, X, y, weights, Cs):
        """One model per C of Cs (the subproblems' bounds times C)."""
        self.path = _PathRun(list(Cs))
        try:
            models = []
            for at in range(len(Cs)):
                self.path.at = at
                models.append(self.train(X, y, weights))
            return models
        finally:
            self.path = None

    def _solutions(self, problem, name):
        """The problem's solution in a list, or its solutions along the path."""
        try:
            if self.path is None:
                solutions = [self.spec.solve(problem)]
            elif self.spec.solve_path is not None:
                state = self.spec.prepare(problem) if self.spec.prepare is not None else None
                solutions = self.spec.solve_path(problem, self.path.Cs, state)
            else:
                solutions = solve_path_cold(self.spec, problem, self.path.Cs)
        except (FloatingPointError, OverflowError):
            raise _breakdown(self.spec.name, name) from None
        for solution in solutions:
            if not all(np.all(np.isfinite(v)) for v in (solution.coef, solution.rho, solution.w)
                       if v is not None):
                raise _breakdown(self.spec.name, name)   # never a NaN in a model
        return solutions

    # -- running subproblems -------------------------------------------------------------
    def _solve_all(self, problems, names, calibrations=None, keep=None, sizes=None):
        """Solve subproblems in threads; seeds depend on the position only, not on threads.

        ``problems[k]()`` builds subproblem k when its task starts, so that only the running ones
        hold their data. LIBSVM spends its -m budget on the one problem it solves at a time; with
        ``sizes`` (rows per problem) and several threads, the largest problem is solved first,
        alone, with every thread, and the others side by side then share what its kernel cache
        held at most (its solution's ``cache_peak_bytes``; else the -m budget or, when
        smaller, the whole kernel matrix of the largest), so that solving pairs side by side
        holds no more kernel columns than solving them one at a time. When the largest held more
        than half of its whole kernel matrix, the others are solved one at a time too, each with
        every thread: pairs that need most of their columns would each get a fraction of them
        side by side, and every running pair adds its own working state to the caches.
        ``calibrations[k](problem)``, the probability fit of problem k, runs in the same task
        after the solve; (solutions, calibration results or None) are returned. ``keep(k,
        solution)``, when given, is what the task returns of its solution (the rest is freed as
        the task ends). Along a path (train_path) the first call solves each subproblem for
        every C and each call returns its C's solutions; with a WarmStart each subproblem
        starts from the previous fit's solution."""
        if self.path is not None and self.path.solved is not None:
            solutions, calibrated = self.path.solved
            return [s[self.path.at] for s in solutions], calibrated
        n_jobs = effective_n_jobs(self.params.n_jobs)
        seeds = np.random.SeedSequence(self.params.seed).generate_state(max(1, len(problems)))
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
            solutions = self._solutions(problem, names[k])
            calibrated = calibrations[k](problem) if calibrations[k] is not None else None
            lines = []
            if self.log is not None and self.path is None:
                lines = summary_lines(problem, solutions[0])
            elif self.log is not None:
                lines = [f"[C = {C:g}] {line}" for C, solution in zip(self.path.Cs, solutions)
                         for line in summary_lines(replace(problem, upper=problem.upper * C), solution)]
            held = max(solution.cache_peak_bytes for solution in solutions) or None
            if self.warm is not None:
                left[k] = Solution(coef=np.empty(0), rho=solutions[-1].rho, dual=solutions[-1].dual,
                                   upper=solutions[-1].upper)
            if self.path is not None:   # the path's models are built from the rest
                solutions = [replace(solution, dual=None, upper=None) for solution in solutions]
            if keep is not None:
                solutions = [keep(k, solution) for solution in solutions]
            return solutions, calibrated, lines, held

        def run(order, budget, side_by_side):
            running = max(1, min(n_jobs if side_by_side else 1, len(order)))
            inner = max(1, n_jobs // running)
            if len(order) == 1 and self.spec.stops_on_signals:
                # on this thread: a worker's stack and heap cost a small fit 0.1 MB and 0.1 ms
                return [task(order[0], budget, inner)]
            return run_tasks([(lambda k=k: task(k, budget / running, inner)) for k in order],
                             running, self.stop)

        results = [None] * len(problems)
        order = list(range(len(problems)))
        budget = self.params.cache_size
        side_by_side = True
        if sizes and n_jobs > 1 and len(problems) > 1:
            first = int(np.argmax(sizes))
            order.remove(first)
            results[first], = run([first], budget, False)
            held = results[first][3]
            whole = bytes_to_hold_all(max(sizes))
            budget = min(budget, (whole if held is None else held) / 2**20)
            side_by_side = held is None or held <= MOST_OF_ITS_MATRIX * whole
        for k, result in zip(order, run(order, budget, side_by_side)):
            results[k] = result
        if len(problems) > 1:
            # the caches' pages, kept for reuse while the tasks ran, would stay resident amid the
            # pairs' results; after one problem they are left for the next fit to reuse (as
            # LIBSVM's are): given back, every page would fault in again (mg: ~15% of a fit)
            release_free_memory()
        for (solutions, _, lines, _), name in zip(results, names):
            if any(solution.status == "max_iter" for solution in solutions):
                warnings.warn(f"solver {self.spec.name} reached its iteration limit ({name}); "
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

        trainer = _Trainer(self.spec, params, self.kernel, problem.log, self.stop)

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
        if self.spec.multiclass == "ovr":
            model = self._model(_weight_rows([solution.w]), [[1.0]], [solution.rho], None, None,
                                [solution], None)
        else:
            nz = np.flatnonzero(coef != 0)
            model = self._model(RowSelection(X, keep[nz]), coef[nz][None, :], [solution.rho], None, None,
                                [solution], keep[nz] + 1)
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
        classes = group_classes(y)
        box = self._class_box(classes.labels)
        if self.spec.multiclass == "ovr":
            return self._one_vs_rest(X, classes, box, weights)
        if self.spec.multiclass == "joint":
            return self._joint(X, classes, box, weights)
        return self._one_vs_one(X, classes, box, weights)

    def _class_box(self, labels):
        """LIBSVM's weighted_C: C times the -wi weight of each class (nu-SVC's box is 1 and
        LIBSVM ignores class weights there)."""
        if self.params.svm_type == "nu_svc":
            return np.ones(len(labels))
        box = np.full(len(labels), float(self.params.C))
        for label, factor in self.params.class_weight.items():
            hit = np.flatnonzero(labels == int(label))
            if hit.size == 0:
                warnings.warn(f"class label {label} specified in weight is not found", stacklevel=4)
            box[hit] = box[hit] * float(factor) if factor != 0 else 0.0  # also for C = inf
        return box

    def _one_vs_one(self, X, classes, box, weights):
        k = len(classes.labels)
        pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
        # a pair's rows are class i's then class j's rows of positive weight, read in place from
        # X (a solver that needs them copied copies them in its task only, as LIBSVM holds no
        # more than the running pair's)
        kept = [rows[weights[rows] > 0] for rows in classes.rows]

        def pair_rows(i, j):
            return np.concatenate([kept[i], kept[j]])

        def pair_problem(i, j):
            rows = pair_rows(i, j)
            target = np.concatenate([np.ones(kept[i].size), -np.ones(kept[j].size)])
            upper = np.where(target > 0, box[i], box[j]) * weights[rows]
            return self._subproblem(self.params.svm_type, X, target, upper, rows)

        problems = [lambda i=i, j=j: pair_problem(i, j) for i, j in pairs]
        sizes = [kept[i].size + kept[j].size for i, j in pairs]
        calibrations = None
        if self.params.probability:
            orders = fold_orders(sizes, self.params.seed, self.stream)
            calibrations = [self._calibration(order, weights[pair_rows(i, j)], (box[i], box[j]))
                            for order, (i, j) in zip(orders, pairs)]
        names = [f"{classes.labels[i]} vs {classes.labels[j]}" for i, j in pairs]

        def support_only(p, solution):
            # a pair's model part: the data rows of its nonzero coefficients (class i's first),
            # their values, and how many are class i's
            i, j = pairs[p]
            coef = np.asarray(solution.coef, dtype=np.float64)
            nz = np.flatnonzero(coef)
            rows = pair_rows(i, j)[nz].astype(np.int32)
            return replace(solution, coef=(rows, coef[nz], int(np.searchsorted(nz, kept[i].size))))

        solutions, platt = (self._solve_all(problems, names, calibrations, support_only, sizes)
                            if pairs else ([], []))
        # support vectors: rows with a nonzero coefficient in any pair, grouped by class
        is_sv = np.zeros(X.shape[0], dtype=bool)
        for s in solutions:
            is_sv[s.coef[0]] = True
        sv_rows = [r[is_sv[r]] for r in classes.rows]
        del is_sv
        order = np.concatenate(sv_rows)
        position = np.full(X.shape[0], -1, dtype=np.int64)
        position[order] = np.arange(order.size)
        sv_coef = np.zeros((k - 1, order.size))
        start = np.concatenate([[0], np.cumsum([r.size for r in sv_rows])])
        for (i, j), s in zip(pairs, solutions):
            # LIBSVM's layout: pair (i, j) keeps class i's coefficients in row j-1, class j's in row i;
            # class j's side has y = -1, so its zeros are y * 0 = -0.0, which svm-train writes "-0"
            sv_coef[i, start[j]:start[j + 1]] = -0.0
            rows, values, n_i = s.coef
            sv_coef[j - 1, position[rows[:n_i]]] = values[:n_i]
            sv_coef[i, position[rows[n_i:]]] = values[n_i:]
        del position
        if self.log is not None:
            self.log(f"Total nSV = {order.size}")
        n_sv = np.array([r.size for r in sv_rows], dtype=np.int64)
        rho = [s.rho for s in solutions]
        model = self._model(RowSelection(X, order), sv_coef, rho, classes.labels, n_sv, solutions,
                            order + 1)
        if self.params.probability:
            model = replace(model, prob_a=[a for a, _ in platt], prob_b=[b for _, b in platt])
        return model

    def _one_vs_rest(self, X, classes, box, weights):
        """LIBLINEAR's split: k = 2 is one problem for the first label; otherwise class c (box
        C_c) against the rest (box C), with weights held LIBSVM-style as +-1 'support vectors'."""
        k = len(classes.labels)
        keep = np.flatnonzero(weights > 0)
        codes = np.empty(X.shape[0], dtype=np.int64)
        for c, rows in enumerate(classes.rows):
            codes[rows] = c
        codes = codes[keep]
        Xk, wk = (X if keep.size == X.shape[0] else X[keep]), weights[keep]
        positives = [0] if k == 2 else list(range(k))
        problems = []
        for c in positives:
            target = np.where(codes == c, 1.0, -1.0)
            rest = box[1] if k == 2 else float(self.params.C)
            upper = np.where(target > 0, box[c], rest) * wk
            problems.append(lambda target=target, upper=upper: self._subproblem("c_svc", Xk, target, upper))
        names = [f"{classes.labels[c]} vs rest" for c in positives]
        solutions = self._solve_all(problems, names)[0] if k > 1 else []
        if self.log is not None and solutions:
            # LIBSVM's last line: the rows that are support vectors of any of the problems
            is_sv = np.zeros(Xk.shape[0], dtype=bool)
            for s in solutions:
                is_sv |= np.asarray(s.coef) != 0
            self.log(f"Total nSV = {int(np.count_nonzero(is_sv))}")
        return self._weight_model(classes.labels, [s.w for s in solutions], [s.rho for s in solutions],
                                  solutions)

    def _joint(self, X, classes, box, weights):
        """One problem over all classes (a solver with multiclass "joint"): y holds each row's class
        position, the solution's w is one weight row per class and its rho one value per class."""
        if len(classes.labels) == 1:
            return self._weight_model(classes.labels, [], [], [])
        # rows of weight 0 stay (their bound C_i = 0 keeps them out of w): every class then has a
        # row, and the solver sees all k classes
        codes = np.empty(X.shape[0])
        for c, rows in enumerate(classes.rows):
            codes[rows] = c
        upper = box[codes.astype(np.int64)] * weights
        (solution,), _ = self._solve_all([lambda: self._subproblem("c_svc", X, codes, upper)],
                                         ["all classes"])
        W, rho = np.atleast_2d(solution.w), np.atleast_1d(solution.rho)
        if len(classes.labels) == 2:  # one decision, first class against second
            return self._weight_model(classes.labels, [W[0] - W[1]], [rho[0] - rho[1]], [solution])
        return self._weight_model(classes.labels, list(W), list(rho), [solution])

    def _weight_model(self, labels, ws, rhos, solutions):
        """A linear model of one weight row per class (one row for two classes), LIBLINEAR-style:
        the rows are +-1 'support vectors' deciding each pair (i, j) by s_i - s_j."""
        k = len(labels)
        if k == 1:
            return self._model(_weight_rows([]), np.zeros((0, 0)), [], labels,
                               np.zeros(1, dtype=np.int64), [], None)
        if k == 2:
            return self._model(_weight_rows(ws[:1]), [[1.0]], rhos[:1], labels, np.array([1, 0]),
                               solutions, None)
        # pair (i, j) must decide s_i - s_j: weight i gets +1 where it is the first class, -1 second
        sv_coef = np.zeros((k - 1, k))
        for i in range(k):
            for j in range(i + 1, k):
                sv_coef[j - 1, i] = 1.0
                sv_coef[i, j] = -1.0
        rho = [rhos[i] - rhos[j] for i in range(k) for j in range(i + 1, k)]
        return self._model(_weight_rows(ws), sv_coef, rho, labels, np.ones(k, dtype=np.int64),
                           solutions, None)

    # -- assembling ---------------------------------------------------------------------------
    def _model(self, support_vectors, sv_coef, rho, labels, n_sv, solutions, sv_rows):
        kernel = self.kernel
        sv_indices = sv_rows
        if kernel.kind == "precomputed":
            # LIBSVM writes each SV as 0:serial, the serial number held in the data's column 0
            sv_indices = np.rint(support_vectors[:, 0].toarray().ravel()).astype(np.int64)
            support_vectors = sp.csr_matrix((support_vectors.shape[0], 0))
        info = {
            "solver": self.spec.name,
            "n_iter": [s.n_iter for s in solutions],
            "objective": [s.objective for s in solutions],
            "rho": [s.rho for s in solutions],
            "stop_measure": [s.stop_measure for s in solutions],
            "status": [s.status for s in solutions],
            "history": [s.history for s in solutions],
            "support_rows": None if sv_rows is None else np.asarray(sv_rows) - 1,
            "primal_weights": [s.w for s in solutions] if all(s.w is not None for s in solutions) else None,
        }
        return Model(
            svm_type=self.params.svm_type,
            kernel_type=kernel.kind,
            support_vectors=(support_vectors if isinstance(support_vectors, RowSelection)
                             else to_csr(support_vectors)),
            sv_coef=np.asarray(sv_coef, dtype=np.float64),
            rho=np.asarray(rho, dtype=np.float64),
            degree=kernel.degree,
            gamma=kernel.gamma,
            coef0=kernel.coef0,
            labels=labels,
            n_sv=n_sv,
            sv_indices=sv_indices,
            info=info,
        )


def _weight_rows(ws):
    """Weight vectors as CSR rows (the 'support vectors' of a primal linear model)."""
    if not ws:
        return sp.csr_matrix((0, 0))
    return sp.csr_matrix(np.vstack([np.asarray(w, dtype=np.float64) for w in ws]))


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
