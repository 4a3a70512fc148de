"""SMO, LIBSVM's solver, for all five LIBSVM formulations and kernels (svm-train -s 0..4).

This module builds each formulation's dual as LIBSVM does (linear term p, signs y, bounds C_i,
initial feasible alpha), runs fastsvm._core._smo in chunks (one progress line each), and turns
the result back into LIBSVM's coefficients, rho, objective and summary statistics.

Per-sample bounds generalise LIBSVM's Cp/Cn as scikit-learn's LIBSVM fork does: ``upper`` is the
box of every sample (C x class weight x sample weight for C-SVC and the SVRs; the weights alone
for nu-SVC and one-class, whose LIBSVM box is 1), and the nu-formulations' equality constraints
become sum_i alpha_i = nu sum_i C_i (LIBSVM: nu l for bounds of 1).
"""
import dataclasses
import threading
from dataclasses import dataclass

import numpy as np

from .._core._cache import KernelCache
from .._core._smo import SMO
from ..errors import DegenerateProblemError, FastSVMError
from ..memory import check_kernel_cache
from ..problems.libsvm_dual import (FORMULATIONS, SUM_RTOL, KeptRows, dual_problem, libsvm_max_iter, libsvm_statistics,
                                    scattered, warm_alpha)
from .base import (ChunkSizes, Solution, Solver, Subproblem, checked_libsvm_problem, raise_for_status, run_in_chunks,
                   solve_path_warm, solver_config)

KERNELS = ("linear", "polynomial", "rbf", "sigmoid", "precomputed")
DEFAULT_TOL = 1e-3


@dataclass(frozen=True)
class Config:
    """SMO's knobs (none is an -o option: LIBSVM's own options set the rest)."""

    chunk_seconds: float = 0.5   # aimed wall time of one chunk, i.e. between two progress lines
    first_chunk: int = 200       # iterations of the first chunk; later chunks are sized from its speed
    # scans of the active set this long are split among the threads (None: the kernel's default)
    parallel_scan_min: int | None = None
    # a warm start (a C path's later problems, warm_start) steps along Q-conjugate directions:
    # fewer iterations at large C; a cold solve is LIBSVM's, step for step
    conjugate: bool = True


@dataclasses.dataclass
class KernelColumns:
    """What the problems of a path share (SOLVER.prepare): the kernel cache of their rows with
    C_i > 0 (Q's columns do not depend on C), in the order of positions the last solve's shrinking
    left, and the last solution's products (Q alpha and G_bar do not change when alpha and C scale
    together)."""

    cache: KernelCache | None = None
    positive: np.ndarray | None = None   # the rows with C_i > 0 it holds
    signs: np.ndarray | None = None      # its signs (classification), or None
    solution: Solution | None = None     # the last solution, whose products follow
    alpha: np.ndarray | None = None      # its alpha over SMO's variables, its bounds and products
    bounds: np.ndarray | None = None
    q_alpha: np.ndarray | None = None
    g_bar: np.ndarray | None = None

    def take(self, positive, signs):
        """The cache, when it serves these rows and signs (None else); it is held by the caller
        until given back."""
        cache, self.cache = self.cache, None
        if cache is None or not np.array_equal(positive, self.positive) or \
                (signs is None) != (self.signs is None) or \
                (signs is not None and not np.array_equal(signs, self.signs)):
            return None
        return cache

    def give_back(self, cache, positive, signs):
        self.cache, self.positive, self.signs = cache, positive, signs

    def keep_products(self, solution, alpha, bounds, smo):
        self.solution, self.alpha, self.bounds = solution, alpha, bounds
        self.q_alpha, self.g_bar = smo.products()

    def base_point(self, warm, C):
        """The point SMO.init_from starts from when ``warm`` is the last solution and the bounds
        C are its bounds scaled by one factor s (a C path): (s alpha with bounded entries at C,
        s Q alpha, s G_bar, which entries were bounded); else None."""
        if warm is None or warm is not self.solution or self.bounds.shape != C.shape or C.shape[0] == 0:
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            s = C[0] / self.bounds[0]
            if not (np.isfinite(s) and s > 0):
                return None
            scaled = s * self.bounds
            if not np.all((C == scaled) | (np.abs(C - scaled) <= SUM_RTOL * np.abs(scaled))):
                return None
        bounded = self.alpha >= self.bounds
        return np.where(bounded, C, s * self.alpha), s * self.q_alpha, s * self.g_bar, bounded


def variable_order(cache, rows, cold):
    """The variable at each of a reused cache's positions (``rows``: each variable's data row, None:
    the identity), as the last solve's shrinking left them; a cold start first puts them back in
    order (and gets None) so that it is LIBSVM's solve, bit for bit."""
    data_rows = np.arange(cache.n, dtype=np.int32) if rows is None else np.asarray(rows, dtype=np.int32)
    if cold:
        cache.move_to_front(data_rows)
        return None
    variable = np.empty(int(data_rows.max()) + 1, dtype=np.int32)
    variable[data_rows] = np.arange(data_rows.shape[0], dtype=np.int32)
    return variable[cache.rows_at_positions()]


def prepare(sub):
    """Solver.prepare: the path's shared kernel cache (built by its first solve)."""
    return KernelColumns()


def _check(sub):
    """(X, rows, y, upper, tol, config): the subproblem's arrays and settings, checked."""
    return (*checked_libsvm_problem(sub, SOLVER), solver_config(SOLVER, sub.params, sub.kernel.kind))


def solve(sub: Subproblem) -> Solution:
    """Solve one subproblem exactly as LIBSVM's svm_train_one does.

    Solution.coef is y_i alpha_i (alpha_i - alpha_i^* for regression; nu-SVC rescaled by 1/r as
    LIBSVM does), rho and objective are LIBSVM's, stop_measure the final maximal violation, with
    what LIBSVM prints: nu (C-SVC when all bounds are equal, epsilon-SVR), n_bounded_sv and the
    margin scale r (nu formulations); details["h0_warnings"] counts the times LIBSVM would print
    "using -h 0 may be faster". Solution.dual is alpha ([a, a*] for regression) over all rows.
    status "max_iter" means the iteration cap (LIBSVM's max(10^7, 100 l) unless params.max_iter)
    was reached; the caller warns. With ``sub.warm`` SMO starts from warm_alpha's point and, by
    default (Config.conjugate), steps along Q-conjugate directions: not LIBSVM's steps then.
    """
    return _solve(sub, None)


def solve_path(sub, Cs, state=None):
    """Solver.solve_c_path: the problems with bounds C * sub.upper for C in Cs, in order, each started
    from the previous solution (the first from sub.warm) on one kernel cache (``state``, from
    prepare)."""
    columns = prepare(sub) if state is None else state
    X, rows, y, upper, tol, config = _check(sub)   # once: the path's problems differ in their bounds only
    return solve_path_warm(lambda problem, C: _solve(problem, columns, (X, rows, y, upper * C, tol, config)),
                           sub, Cs)


def _solve(sub, columns, checked=None):
    """solve(sub), on the kernel cache ``columns`` (KernelColumns) holds when it serves sub;
    ``checked``: _check(sub), when the caller has it."""
    X, rows, y, upper_all, tol, config = _check(sub) if checked is None else checked
    params = sub.params
    n_all = y.shape[0]
    upper = upper_all
    # a sample with C_i = 0 has alpha_i = 0 at every feasible point; leaving it out is exact and
    # spares SMO pairs that cannot move
    keep = None
    positive = upper > 0
    if not np.all(positive):
        keep = np.flatnonzero(positive)
        rows = keep if rows is None else rows[keep]
        y, upper = y[keep], upper[keep]
    n = y.shape[0]
    if n == 0:
        raise FastSVMError("no training samples with a positive bound C_i")
    formulation = sub.formulation
    p, signs, alpha0, C, nu_variant, regression = dual_problem(
        formulation, y, upper, float(params.nu), float(params.epsilon))
    kept = KeptRows(keep, n_all)
    start = warm_alpha(sub.warm, C, signs, alpha0, nu_variant or formulation == "one_class", regression=regression,
                       kept=kept)
    if start is not None:
        alpha0 = start
    cache_signs = None if regression else signs
    cache = columns.take(positive, cache_signs) if columns is not None else None
    base = columns.base_point(sub.warm, C) if cache is not None else None
    order = variable_order(cache, rows, start is None) if cache is not None and not regression else None
    if cache is None:
        k = sub.kernel
        check_kernel_cache(params.cache_size, n)
        cache = KernelCache(X, k.kind, float(k.gamma), int(k.degree), float(k.coef0),
                            cache_bytes=int(params.cache_size * (1 << 20)), n_threads=max(1, int(sub.n_threads)),
                            sign=cache_signs, rows=rows)
    l = p.shape[0]
    max_iter = libsvm_max_iter(l) if params.max_iter is None else int(params.max_iter)
    stop = np.ascontiguousarray(sub.stop, dtype=np.int32) if sub.stop is not None else np.zeros(1, np.int32)
    in_main = threading.current_thread() is threading.main_thread()
    smo = SMO(cache, p, signs, alpha0, C, eps=tol, shrinking=bool(params.shrinking), nu=nu_variant,
              svr_rows=n if regression else 0, max_iter=max_iter, stop=stop, check_signals=in_main, order=order,
              conjugate=config.conjugate and start is not None)
    if config.parallel_scan_min is not None:
        smo.parallel_scan_min = config.parallel_scan_min
    del p, alpha0   # SMO holds its own copies: their memory serves the cache's columns

    raise_for_status(smo.init() if base is None else smo.init_from(*base), NO_MEMORY, NONFINITE)
    status, history = _iterate(smo, sub.log, config)
    res = smo.result()
    if columns is not None:
        columns.give_back(cache, positive, cache_signs)
    if not (np.isfinite(res["rho"]) and np.all(np.isfinite(res["alpha"]))):
        raise DegenerateProblemError("SMO produced a non-finite rho or alpha (a classification subproblem "
                           "with one class only, or kernel values / C far too large)")
    solution = Solution(**libsvm_statistics(formulation, res["alpha"], res["rho"], res["r"], res["obj"], signs=signs,
                                            upper=upper, kept=kept),
                        n_iter=int(res["n_iter"]), stop_measure=float(res["kkt"]), status=status, history=history,
                        details={"h0_warnings": smo.n_unshrink_warnings})
    solution.cache_peak_bytes = cache.peak_bytes
    solution.dual = scattered(res["alpha"], keep, n_all, regression)
    solution.upper = upper_all
    if columns is not None:
        columns.keep_products(solution, res["alpha"], C, smo)
    return solution


NO_MEMORY = "SMO: cannot allocate a kernel column (lower -m / cache_size?)"
NONFINITE = "SMO step became NaN or infinite (kernel values or C far too large?)"


def _iterate(smo, log, config):
    """Run in chunks of iterations (the state stays in ``smo``), one progress line per chunk."""
    history = []

    def progress(elapsed):
        history.append({"iter": smo.n_iter, "max_violation": smo.gap, "objective": smo.objective,
                        "active": smo.active_size, "seconds": elapsed})
        if log is not None:
            log(f"iter {smo.n_iter:9d}  max violation {smo.gap:.3e}  obj {smo.objective:.10g}  "
                f"active {smo.active_size}/{smo.l}")

    sizes = ChunkSizes(first=config.first_chunk, seconds=config.chunk_seconds, smallest=100, largest=10_000_000)
    status = run_in_chunks(smo.run, lambda: smo.n_iter, sizes, on_chunk=progress, no_memory=NO_MEMORY,
                           nonfinite=NONFINITE)
    return status, history


class SMOSolver(Solver):
    name = "smo"
    formulations = FORMULATIONS
    kernels = KERNELS
    default_tol = DEFAULT_TOL
    description = "LIBSVM's solver and models: every SVM type and kernel (the default)"
    stop_measure = "the maximal violating pair's gap m(alpha) - M(alpha)"
    config = Config
    stops_on_signals = True
    limits_blas_itself = True   # no BLAS call

    solve = staticmethod(solve)
    prepare = staticmethod(prepare)
    solve_c_path = staticmethod(solve_path)


SOLVER = SMOSolver()
