"""What every solver takes and returns. A solver solves one binary (or regression, or one-class)
subproblem; fastsvm.training.trainer splits multi-class data and assembles the model."""
import dataclasses
import threading
import time
from dataclasses import dataclass, field
from enum import Enum
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from .._core._status import Status
from ..csr import take_rows, to_csr, to_rows
from ..errors import FastSVMError, ParameterError
from ..params import Params


@dataclass(frozen=True)
class Kernel:
    """k(x, z): linear x.z, polynomial (gamma x.z + coef0)^degree, rbf exp(-gamma |x - z|^2),
    sigmoid tanh(gamma x.z + coef0), precomputed (X holds the kernel values)."""

    kind: str
    gamma: float = 0.0
    degree: int = 3
    coef0: float = 0.0


@dataclass
class Subproblem:
    """One problem of docs/algorithms.md §0 for one solver call.

    X : canonical CSR (fastsvm.csr.to_csr): the subproblem's rows, or the data they are taken
        from when ``rows`` is given; for a solver whose Solver.reads_dense, possibly the dense
        layout of fastsvm.csr.to_rows.
    rows : the subproblem's rows of X in order, or None (all of X). A one-vs-one pair names its
        rows instead of copying them; solvers that cannot read rows in place (SMO's kernel
        cache can) get the copy from checked_arrays.
    y : +1/-1 for classification, targets for regression, ones for one-class.
    upper : per-sample upper bound C_i (C x class weight x sample weight).
    stop : int32[1]; the main thread sets stop[0] = 1 on Ctrl-C and the solver must return (by
        raising KeyboardInterrupt) within a second.
    log : called with one line of progress per outer iteration when verbose, else None.
    """

    formulation: str
    X: sp.csr_matrix
    y: np.ndarray
    upper: np.ndarray
    kernel: Kernel
    params: Params
    seed: int = 0
    stop: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int32))
    log: Callable[[str], None] | None = None
    n_threads: int = 1
    rows: np.ndarray | None = None
    # a solution of the same problem at other bounds (a path's previous C, warm_start=True):
    # solvers that can, start from it; the result must not depend on it beyond the tolerance
    warm: "Solution | None" = None

    def x_rows(self, positions=None):
        """The subproblem's rows (those at ``positions`` of them) as CSR: a copy, unless all
        of X."""
        if self.rows is None:
            return self.X if positions is None else self.X[positions]
        return self.X[self.rows if positions is None else self.rows[positions]]


def checked_arrays(sub):
    """(X, y, upper) of a subproblem as canonical arrays, with the checks every solver needs:
    matching lengths, finite labels/targets, finite non-negative bounds."""
    X, rows, y, upper = checked_rows(sub)
    return (X if rows is None else take_rows(X, rows, sub.stop)), y, upper


def checked_rows(sub, infinite_bounds=False, dense=False):
    """(X, rows, y, upper): checked_arrays for a solver that reads the rows in place (rows None:
    all of X). ``infinite_bounds``: the solver takes C_i = inf (the hard margin) as LIBSVM does;
    ``dense``: it reads dense rows too (X is then either layout of fastsvm.csr.to_rows)."""
    X = to_rows(sub.X) if dense else to_csr(sub.X)
    rows = None
    if sub.rows is not None:
        rows = np.asarray(sub.rows, dtype=np.int64).ravel()
        if rows.size and (rows.min() < 0 or rows.max() >= X.shape[0]):
            raise FastSVMError(f"subproblem rows out of range for X with {X.shape[0]} rows")
    n = X.shape[0] if rows is None else rows.size
    y = np.asarray(sub.y, dtype=np.float64).ravel()
    upper = np.asarray(sub.upper, dtype=np.float64).ravel()
    if y.shape[0] != n or upper.shape[0] != n:
        raise FastSVMError(f"X has {n} rows but y has {y.shape[0]} and upper {upper.shape[0]} entries")
    if not np.all(np.isfinite(y)):
        raise FastSVMError("labels or targets contain NaN or infinity")
    if np.any(np.isnan(upper)) or np.any(upper < 0):
        raise FastSVMError("per-sample bounds C_i must be >= 0")
    if not infinite_bounds and np.any(np.isinf(upper)):
        raise FastSVMError("C = inf (the hard margin) is solved by solver smo only")
    return X, rows, y, upper


def takes_dense(spec, n_rows, formulation):
    """Whether ``spec`` reads the dense rows of a problem of n_rows rows as they are."""
    return spec.reads_dense(n_rows, formulation)


def checked_libsvm_problem(sub, spec):
    """(X, rows, y, upper, tol): checked_rows for a solver of LIBSVM's formulations (C_i = inf
    allowed, LIBSVM's hard margin) and LIBSVM's checks of -e, -n and -m."""
    if sub.formulation not in spec.formulations:
        raise ParameterError(f"{spec.name} does not solve {sub.formulation!r} "
                             f"(it solves: {', '.join(spec.formulations)})")
    if sub.kernel.kind not in spec.kernels:
        raise ParameterError(f"{spec.name} does not support the {sub.kernel.kind!r} kernel")
    X, rows, y, upper = checked_rows(sub, infinite_bounds=True, dense=takes_dense(spec, sub.y.shape[0],
                                                                                  sub.formulation))
    params = sub.params
    tol = spec.default_tol if params.tol is None else float(params.tol)
    if not tol > 0:
        raise ParameterError("eps <= 0")
    if sub.formulation in ("nu_svc", "one_class", "nu_svr") and not 0 < params.nu <= 1:
        raise ParameterError("nu <= 0 or nu > 1")
    if params.cache_size <= 0:
        raise ParameterError("cache_size <= 0")
    return X, rows, y, upper, tol


def checked_binary_arrays(sub, solver_name):
    """checked_arrays for a solver of binary problems (labels +1/-1)."""
    X, y, upper = checked_arrays(sub)
    if not np.all(np.abs(y) == 1.0):
        raise FastSVMError(f"{solver_name} solves binary problems: labels must be +1 or -1")
    return X, y, upper


def checked_binary_squared_hinge(sub, solver_name):
    """checked_arrays for a linear solver of the binary squared-hinge problem (labels +1/-1)."""
    X, y, upper = checked_binary_arrays(sub, solver_name)
    if sub.params.loss not in (None, "squared_hinge"):
        raise FastSVMError(f"{solver_name} solves the squared hinge loss only (-L squared_hinge, "
                           "loss=\"squared_hinge\")")
    return X, y, upper


@dataclass(frozen=True)
class LinearConfig:
    """The knob every linear solver has (each solver's Config extends it)."""

    max_iter: int = 1000   # iterations (epochs, Newton steps) when Params.max_iter is None


def linear_run_settings(spec, params, bias_by_default=False):
    """(config, tol, max_iter, B) of a linear solver's run: its config (solver_config), its
    defaults where Params leaves None, and the bias feature's value from LIBLINEAR's -B (0 when
    there is none: the bias-free problem). ``bias_by_default``: no -B means B = 1 (the primal
    solvers whose bias is never penalized: LIBSVM's problem; -B 0 drops it)."""
    config = solver_config(spec, params, "linear")
    tol = spec.default_tol if params.tol is None else float(params.tol)
    max_iter = config.max_iter if params.max_iter is None else int(params.max_iter)
    bias = float(params.bias) if params.bias >= 0 else (1.0 if bias_by_default else 0.0)
    return config, tol, max_iter, bias


def is_milestone(epoch):
    """True at epochs 1, 2, 5, 10, 20, 50, ...: where epoch-by-epoch solvers record and log
    progress (a dozen lines for thousands of epochs)."""
    while epoch >= 10 and epoch % 10 == 0:
        epoch //= 10
    return epoch in (1, 2, 5)


@dataclass(frozen=True)
class ChunkSizes:
    """How run_in_chunks sizes a resumable loop's chunks: the first one, the seconds each should
    take, and the bounds [smallest, largest] of a chunk."""
    first: int
    seconds: float
    smallest: int
    largest: int


def run_in_chunks(run, counter, sizes, *, on_chunk, no_memory, nonfinite):
    """Drive a resumable Cython loop to its end and return its SolveStatus: ``run(limit)`` goes on
    until ``counter()`` reaches limit (Status.CHUNK_DONE) or the loop ends; chunks are sized to take
    about sizes.seconds each (from sizes.first, within [sizes.smallest, sizes.largest]),
    ``on_chunk(elapsed)`` is called after each (progress, history). An interrupted loop raises
    KeyboardInterrupt, one out of memory MemoryError(no_memory), one whose steps became non-finite
    FastSVMError(nonfinite)."""
    chunk = sizes.first
    while True:
        start = time.perf_counter()
        status = run(counter() + chunk)
        elapsed = time.perf_counter() - start
        on_chunk(elapsed)
        raise_for_status(status, no_memory, nonfinite)
        if status != Status.CHUNK_DONE:
            return SolveStatus.MAX_ITER if status == Status.MAX_ITER else SolveStatus.CONVERGED
        chunk = int(min(max(chunk * sizes.seconds / max(elapsed, 1e-4), sizes.smallest), sizes.largest))


def raise_for_status(status, no_memory, nonfinite):
    """run_in_chunks's exceptions for a Cython loop's Status (nothing for the others)."""
    if status == Status.INTERRUPTED:
        raise KeyboardInterrupt
    if status == Status.NO_MEMORY:
        raise MemoryError(no_memory)
    if status == Status.NONFINITE:
        raise FastSVMError(nonfinite)


def next_milestone(epoch):
    """The first epoch after `epoch` at which progress is recorded: 1, 2, 5, 10, 20, 50, 100, ...
    (a dozen lines for thousands of epochs, the same lines on every run)."""
    scale = 1
    while True:
        for step in (1, 2, 5):
            if step * scale > epoch:
                return step * scale
        scale *= 10


class SolveStatus(str, Enum):
    """How a solve ended (a str, so it compares equal to "converged" / "max_iter")."""

    CONVERGED = "converged"
    MAX_ITER = "max_iter"
    LINE_SEARCH_FAILED = "line_search_failed"   # no decrease left at machine precision
    PRECISION_FLOOR = "precision_floor"         # the stopping measure is down to the rounding of its terms


@dataclass
class Solution:
    """coef[i] is y_i alpha_i (alpha_i - alpha_i^* for regression); the decision value is
    sum_i coef[i] k(x_i, x) - rho. ``w`` is the primal weight vector for linear solvers (then
    decision = w.x - rho).

    objective : what the solver minimizes, at the end (LIBSVM's dual objective for dual solvers).
    dual_objective : LIBSVM's dual objective where ``objective`` is a primal one (None: objective is).
    stop_measure : the solver's final stopping measure; its Solver.stop_measure names it.
    margin_scale : r of the nu formulations (LIBSVM rescales nu-SVC by 1/r; nu-SVR's epsilon is -r).
    nu, n_bounded_sv : the solver's own figures for LIBSVM's summary lines where counting them
        from coef and the bounds would not give them (None: the trainer counts).
    cache_peak_bytes : the most the kernel cache held (0: the solver keeps none).
    dual : the solver's own dual point (what a warm start of the same solver reads), or None.
    upper : the per-sample bounds C_i it was solved at (a warm start at other bounds scales
        ``dual`` by new / old), or None.
    details : solver-specific diagnostics for tools and tests; the trainer never reads them.
    """

    coef: np.ndarray
    rho: float
    w: np.ndarray | None = None
    objective: float = float("nan")
    dual_objective: float | None = None
    n_iter: int = 0
    stop_measure: float = float("nan")
    status: SolveStatus = SolveStatus.CONVERGED
    history: list = field(default_factory=list)
    margin_scale: float | None = None
    nu: float | None = None
    n_bounded_sv: int | None = None
    cache_peak_bytes: int = 0
    dual: np.ndarray | None = None
    upper: np.ndarray | None = None
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class SolverOption:
    """One -o name=value a solver takes (params.options in Python): its type, its default (None:
    chosen at solve time, as ``meaning`` says), what it sets, and the values it accepts --
    ``choices``, or a range: >= ``low`` (> when ``low_open``), < ``below``. ``kernels``: the
    kernels it applies to (empty: every kernel)."""

    name: str
    kind: type  # int, float or str
    default: object
    meaning: str
    choices: tuple = ()
    low: float | None = None
    low_open: bool = False
    below: float | None = None
    kernels: tuple = ()

    def limits(self):
        """Its range as conditions, e.g. ['> 0', '< 1'] (none when any value of its type will do)."""
        return ([] if self.low is None else [f"{'>' if self.low_open else '>='} {self.low:g}"]) + \
               ([] if self.below is None else [f"< {self.below:g}"])

    def accepted(self):
        """The values it takes, in words (for an error)."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        what = {int: "an integer", float: "a number"}.get(self.kind, "a word")
        return " ".join([what, " and ".join(self.limits())]).strip()

    def usage(self):
        """Its line in the usage text: name=placeholder : meaning; range; default; kernels."""
        placeholder = "|".join(self.choices) or {int: "n", float: "x"}.get(self.kind, "word")
        parts = [f"{self.name}={placeholder} : {self.meaning}"]
        if self.limits():
            parts.append(" and ".join(f"{placeholder} {limit}" for limit in self.limits()))
        if self.default is not None:
            parts.append(f"default {self.default:g}" if self.kind is float else f"default {self.default}")
        if self.kernels:
            parts.append(f"{', '.join(self.kernels)} kernel{'s' * (len(self.kernels) > 1)} only")
        return "; ".join(parts)

    def parse(self, solver, value):
        """``value`` (a string from -o, or already typed) as this option's type, checked."""
        try:
            typed = self.kind(value)
        except (TypeError, ValueError):
            typed = None
        if typed is None or (self.kind is float and typed != typed) or \
                (self.choices and typed not in self.choices) or \
                (self.low is not None and (typed <= self.low if self.low_open else typed < self.low)) or \
                (self.below is not None and not typed < self.below):
            raise ParameterError(f"solver {solver}: option {self.name}={value}: expected {self.accepted()}")
        return typed


def option(default, meaning, kind=None, **schema):
    """A config field that -o name=value (Params.options) may set: ``schema`` holds SolverOption's
    choices / low / low_open / below / kernels; ``kind`` defaults to the type of ``default``."""
    kind = kind or type(default)
    return field(default=default, metadata={"option": (kind, meaning, schema)})


def options_of(config):
    """The SolverOptions a config dataclass declares (its fields made with ``option``), in order."""
    if config is None:
        return ()
    return tuple(SolverOption(f.name, f.metadata["option"][0], f.default, f.metadata["option"][1],
                              **f.metadata["option"][2])
                 for f in dataclasses.fields(config) if "option" in f.metadata)


def solver_config(spec, params, kernel):
    """The solver's config for one run: ``params.config`` (a Python caller's instance of
    spec.config, tests' way to set internal knobs) or the defaults, with the -o options of
    ``params.options`` applied and checked (solver_options)."""
    base = params.config if getattr(params, "config", None) is not None else spec.config()
    if not isinstance(base, spec.config):
        raise ParameterError(f"solver {spec.name}: config must be a {spec.config.__name__}")
    given = params.options or {}
    checked = solver_options(spec, given, kernel)
    return dataclasses.replace(base, **{name: value for name, value in checked.items() if name in given})


def solver_options(spec, given, kernel):
    """The options ``spec`` takes for ``kernel``, typed and checked: every declared option that
    applies to the kernel, given or at its default. An option the solver does not have, or
    does not have for this kernel, is a ParameterError that names the solver and its options."""
    declared = {option.name: option for option in spec.options}
    for name in given or {}:
        if name not in declared:
            known = f"its options: {', '.join(declared)}" if declared else "it takes none"
            raise ParameterError(f"solver {spec.name}: unknown option {name!r} ({known})")
        kernels = declared[name].kernels
        if kernels and kernel not in kernels:
            raise ParameterError(f"solver {spec.name}: option {name!r} applies to the {', '.join(kernels)} "
                                 f"kernel{'s' * (len(kernels) > 1)} only, not {kernel}")
    return {option.name: (option.parse(spec.name, given[option.name]) if option.name in (given or {})
                          else option.default)
            for option in spec.options if not option.kernels or kernel in option.kernels}


@dataclass(frozen=True)
class Path:
    """The values one subproblem is solved at, in order: its bounds C * upper for each C
    (over "C"), or each nu (over "nu"). A single fit is the path of one value, C = 1."""

    values: tuple = (1.0,)
    over: str = "C"


FIT = Path()


class Solver:
    """A registered solver: its name on the command line (-s NAME) and in Python (solver=NAME),
    what it solves, and how it solves a subproblem along a Path.

    A solver module defines one subclass, sets the class attributes that differ from these
    defaults and overrides ``solve``; every other method has a default that a solver overrides
    with what it does better (a warm path over C, state reused across problems, a nu path). The
    trainer calls ``solve_path`` only.

    multiclass : "ovo" (LIBSVM), "ovr" (LIBLINEAR) or "joint" (one problem over all classes).
    config : a frozen dataclass of the solver's knobs; its ``option`` fields are what -o sets.
    stop_measure : what Solution.stop_measure is, in words (e.g. "eta, the relative KKT residual").
    stops_on_signals : on the main thread its loops stop on Ctrl-C by themselves (not only
        through Subproblem.stop), so a single problem needs no worker thread.
    bias_in_kernel : its nu_svc is the nu-SVM with the bias in the kernel (docs/algorithms.md
        §6), feasible for every nu in (0, 1]: LIBSVM's test of nu against the class sizes does
        not apply.
    shares_prepared_state : prepare's state depends on the rows and kernel only, not on the labels
        or bounds, and may be read by several threads: the trainer builds one for all subproblems
        on the same rows (one-vs-rest classes).
    limits_blas_itself : its solve limits BLAS to one thread itself where it calls BLAS, so the
        trainer does not around it (the limit's first use scans the process's libraries).
    """

    name = ""
    formulations = ()
    kernels = ()
    multiclass = "ovo"
    default_kernel = "rbf"
    default_tol = 1e-3
    description = ""
    config = None
    stop_measure = "the maximal KKT violation"
    stops_on_signals = False
    bias_in_kernel = False
    shares_prepared_state = False
    limits_blas_itself = False

    def solve(self, problem: Subproblem) -> Solution:
        """The subproblem's solution, started from problem.warm where the solver can."""
        raise NotImplementedError

    def reads_dense(self, n_rows, formulation):
        """Whether solve reads the dense rows (fastsvm.csr.to_rows) of a problem of n_rows rows as
        they are; the trainer hands every other solver dense input as CSR."""
        return False

    def prepare(self, problem):
        """State that solve_c_path reuses across problems on the same rows and kernel (a kernel
        cache, a factorization), or None."""
        return None

    def shared_preparation(self, budget):
        """One prepare for every subproblem on the same rows (a SharedPreparation), where its state
        depends on the rows and kernel only (shares_prepared_state), else None."""
        return SharedPreparation(self.prepare, budget) if self.shares_prepared_state else None

    def solve_path(self, problem, path=FIT, state=None):
        """[Solution per value of ``path``], in order; ``state``: prepare's, shared by the trainer
        across subproblems (shares_prepared_state), else None."""
        if path.over == "nu":
            return self.solve_nu_path(problem, path.values)
        if path == FIT and state is None:
            return [self.solve(problem)]
        return self.solve_c_path(problem, path.values, state)

    def solve_c_path(self, problem, Cs, state=None):
        """The problems with bounds C * problem.upper for each C of Cs, in order: by default each
        solved from scratch (solve_path_cold); a solver that can starts each from the last."""
        return solve_path_cold(self, problem, Cs)

    def solve_nu_path(self, problem, nus):
        """The problems of an increasing nu grid (nu_svc, one_class), in order: by default each
        solved on its own."""
        return [self.solve(dataclasses.replace(problem, params=dataclasses.replace(problem.params, nu=nu)))
                for nu in nus]

    @property
    def options(self):
        """SolverOption per -o name=value the solver takes (its config's option fields)."""
        return options_of(self.config)


class SharedPreparation:
    """One Solver.prepare for every subproblem on the same rows (a solver whose state does not
    depend on the labels: Solver.shares_prepared_state), built by the first task that asks, under a
    lock, with the whole -m budget (the one state is all the tasks hold of it) and the first
    subproblem's seed."""

    def __init__(self, prepare, budget):
        self.prepare, self.budget = prepare, budget
        self.lock = threading.Lock()
        self.value = None
        self.seed = 0

    def state(self, problem):
        with self.lock:
            if self.value is None:
                self.value = self.prepare(dataclasses.replace(problem, seed=self.seed,
                                                  params=dataclasses.replace(problem.params, cache_size=self.budget)))
            return self.value


class LinearSolver(Solver):
    """A solver of LIBLINEAR's linear C-SVC problems: one-vs-rest, the linear kernel only."""

    formulations = ("c_svc",)
    kernels = ("linear",)
    multiclass = "ovr"
    default_kernel = "linear"


def solve_path_cold(spec, sub, Cs):
    """The problems of a C path solved one by one, from scratch: what solve_path is measured
    against, and the path of a solver that has none."""
    return [spec.solve(dataclasses.replace(sub, upper=np.asarray(sub.upper, dtype=np.float64) * C, warm=None))
            for C in Cs]


def solve_path_warm(solve_one, sub, Cs):
    """The problems of a C path solved in order by ``solve_one(subproblem, C)``, each started from
    the previous solution (the first from sub.warm): a solve_path built on a solver's warm start."""
    upper = np.asarray(sub.upper, dtype=np.float64)
    solutions = []
    warm = sub.warm
    for C in Cs:
        warm = solve_one(dataclasses.replace(sub, upper=upper * C, warm=warm), C)
        solutions.append(warm)
    return solutions
