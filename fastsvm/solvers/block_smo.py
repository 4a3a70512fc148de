"""Blocked working-set SMO (docs/blocked_solver.md): LIBSVM's five formulations and kernels by the
method of ThunderSVM (Wen et al., JMLR 19, 2018) and oneDAL's "thunder" SVC. Each outer step
takes a working set of q variables, forms their kernel rows as one block (BLAS over dense rows),
solves the q-variable subproblem by LIBSVM's SMO and updates the whole gradient once. LIBSVM's dual,
stopping rule (-e: the maximal violating pair's gap) and rho, so -e means what it means in
LIBSVM; not LIBSVM's steps, so not its models bit for bit (smo gives those).
"""
import threading
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np

from .._core._block_smo import BlockSMO
from .._core._kernel_block import KernelRows
from ..csr import is_dense, take_rows, to_csr
from ..errors import DegenerateProblemError, FastSVMError
from ..memory import MB, check_request
from ..parallel import one_blas_thread
from ..problems.libsvm_dual import (FORMULATIONS, KeptRows, dual_problem, libsvm_max_iter, libsvm_rho,
                                    libsvm_statistics, max_violation, scattered, warm_alpha)
from .base import (ChunkSizes, Solution, Solver, Subproblem, checked_libsvm_problem, option, raise_for_status,
                   run_in_chunks, solve_path_warm, solver_config)

KERNELS = ("linear", "polynomial", "rbf", "sigmoid", "precomputed")
WORKING_SET_MAX = 1024   # variables of the default working set at most
WORKING_SET_MIN = 16     # ... and at least, even when -m holds fewer rows
# ... and at most a share of the variables, not below WORKING_SET_SMALL: a block's kernel values
# grow as q^2 while each outer step serves fewer of the l variables (docs/blocked_solver.md)
WORKING_SET_SHARE = 24
WORKING_SET_SMALL = 256
WHOLE_MAX = 2048         # problems of at most this many variables are one working set


@dataclass(frozen=True)
class Config:
    """The blocked solver's knobs (-o name=value)."""

    working_set: int = option(0, "variables per working set (0: every variable up to 2048 whose rows fit in -m, "
                              "else the largest power of 2 up to 1024, and up to l/24 but at least 256, that fits)",
                              low=0)
    inner_ratio: float = option(0.1, "a subproblem is solved until its violation is below max(-e, this x its "
                                "first)", low=0.0, low_open=True, below=1.0)
    dense: str = option("auto", "hold the rows dense, kernel blocks through BLAS (auto: when at least "
                        "dense_fraction of the values are stored and rows hold dense_row_values or more)",
                        choices=("auto", "yes", "no"))
    dense_fraction: float = 0.25
    # fewer stored values a row: the sparse product, one multiply-add per value, beats dgemm's
    # fixed costs per tile
    dense_row_values: float = 64.0
    chunk_seconds: float = 0.5   # aimed wall time between two progress lines


def _data_rows(X, rows, kind, config):
    """The subproblem's rows for KernelRows: CSR, or dense C-ordered rows when dense pays (dense
    input read as it is when it is all of the rows)."""
    if is_dense(X) and rows is not None:
        X, rows = take_rows(X, rows), None
    n, p = (X.shape[0] if rows is None else rows.size), X.shape[1]
    if is_dense(X):
        stored = np.count_nonzero(X)
    else:
        stored = X.nnz if rows is None else int(np.sum(X.indptr[rows + 1] - X.indptr[rows]))
    dense = config.dense == "yes" or (config.dense == "auto" and stored >= config.dense_fraction * n * p
                                      and stored >= config.dense_row_values * n)
    if kind == "precomputed" or not dense:
        return to_csr(X) if is_dense(X) else X if rows is None else X[rows]
    if is_dense(X):
        return X
    check_request(8 * n * p, "the dense rows of the blocked solver", "use -o dense=no")
    return np.ascontiguousarray((X if rows is None else X[rows]).toarray())


def working_set_size(l, n, cache_bytes, requested):
    """(q, slots): the working set's size and the kernel rows held (float32 rows of n values in
    cache_bytes, at least q)."""
    slots = int(min(n, max(cache_bytes // max(4 * n, 1), 1)))
    if requested:
        q = min(int(requested), l)
    elif l <= WHOLE_MAX and n <= slots:
        q = l        # one working set of every variable: the problem solved in one block
    else:
        share = max(l // WORKING_SET_SHARE, WORKING_SET_SMALL)
        q = 1 << max(int(min(l, WORKING_SET_MAX, share, max(slots, WORKING_SET_MIN))).bit_length() - 1, 1)
    return max(q, 2), max(slots, q)


def solve(sub: Subproblem) -> Solution:
    """Solve one subproblem of LIBSVM's formulations to LIBSVM's stopping rule at -e.

    Solution.coef, rho, objective and the statistics are LIBSVM's (fastsvm.problems.libsvm_dual);
    stop_measure is the final maximal violation; details hold the outer steps, the kernel rows
    computed, the working-set size and the seconds of each part. With ``sub.warm`` (a solution at
    other bounds) the solve starts from problems.libsvm_dual.warm_alpha's point.
    """
    X, rows, y, upper_all, tol = checked_libsvm_problem(sub, SOLVER)
    config = solver_config(SOLVER, sub.params, sub.kernel.kind)
    params = sub.params
    n_all = y.shape[0]
    # a sample with C_i = 0 has alpha_i = 0 at every feasible point: left out, exactly
    keep = None
    positive = upper_all > 0
    upper = upper_all
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
    l = p.shape[0]
    k = sub.kernel
    data = _data_rows(X, rows, k.kind, config)
    kernel_rows = KernelRows(data, k.kind, float(k.gamma), int(k.degree), float(k.coef0),
                             n_threads=max(1, int(sub.n_threads)))
    q, slots = working_set_size(l, n, int(params.cache_size * MB), config.working_set)
    check_request(4 * slots * n, f"the blocked solver's kernel rows (-m {params.cache_size:g})", "lower -m")
    index = np.arange(n, dtype=np.int32)
    if regression:
        index = np.concatenate([index, index])
    stop = np.ascontiguousarray(sub.stop, dtype=np.int32) if sub.stop is not None else np.zeros(1, np.int32)
    max_iter = libsvm_max_iter(l) if params.max_iter is None else int(params.max_iter)
    solver = BlockSMO(kernel_rows, index, p, signs, alpha0, C=C, eps=tol, nu=nu_variant, q=q, n_slots=slots,
                      max_iter=max_iter, stop=stop,
                      check_signals=threading.current_thread() is threading.main_thread(),
                      inner_ratio=config.inner_ratio, shrinking=bool(params.shrinking))
    with one_blas_thread() if kernel_rows.dense else nullcontext():   # dgemm runs on our threads, one call each
        raise_for_status(solver.init(), NO_MEMORY, NONFINITE)
        status, history = _iterate(solver, sub.log, config)
    alpha, G = solver.state()
    rho, r = libsvm_rho(alpha, G, signs, C, nu_variant)
    obj = 0.5 * float(alpha @ (G + p))
    if not (np.isfinite(rho) and np.all(np.isfinite(alpha))):
        raise DegenerateProblemError("the blocked solver produced a non-finite rho or alpha (a classification "
                                     "subproblem with one class only, or kernel values / C far too large)")
    solution = Solution(**libsvm_statistics(formulation, alpha, rho, r, obj, signs=signs, upper=upper, kept=kept),
                        n_iter=int(solver.n_inner), stop_measure=max_violation(alpha, G, signs, C, nu_variant),
                        status=status, history=history,
                        details={"outer_steps": int(solver.n_outer), "rows_computed": int(solver.n_rows_computed),
                                 "working_set": int(solver.q), "slots": int(solver.n_slots),
                                 "dense": bool(kernel_rows.dense), "shrinks": int(solver.n_shrinks),
                                 "unshrinks": int(solver.n_unshrinks),
                                 "fewest_active": int(solver.min_active),
                                 "seconds": {"select": solver.seconds_select, "shrink": solver.seconds_shrink,
                                             "unshrink": solver.seconds_unshrink,
                                             "rows": solver.seconds_rows,
                                             "block": solver.seconds_gather,
                                             "subproblems": solver.seconds_inner, "gradient": solver.seconds_update}})
    solution.cache_peak_bytes = solver.slot_bytes
    solution.dual = scattered(alpha, keep, n_all, regression)
    solution.upper = upper_all
    return solution


def solve_path(sub, Cs, state=None):
    """Solver.solve_c_path: the problems with bounds C * sub.upper for C in Cs, each started from the last."""
    return solve_path_warm(lambda problem, C: solve(problem), sub, Cs)


NO_MEMORY = "the blocked solver ran out of kernel-row slots (lower the working set, -o working_set)"
NONFINITE = "a blocked SMO step became NaN or infinite (kernel values or C far too large?)"


def _iterate(solver, log, config):
    """Outer steps in chunks of about config.chunk_seconds, one progress line each."""
    history = []

    def progress(elapsed):
        objective = solver.objective()
        history.append({"outer": solver.n_outer, "iter": solver.n_inner, "max_violation": solver.gap,
                        "objective": objective, "rows": solver.n_rows_computed, "active": solver.l_act,
                        "seconds": elapsed})
        if log is not None:
            log(f"outer {solver.n_outer:6d}  max violation {solver.gap:.3e}  obj {objective:.10g}  "
                f"inner steps {solver.n_inner}  kernel rows {solver.n_rows_computed}  active {solver.l_act}")

    sizes = ChunkSizes(first=2, seconds=config.chunk_seconds, smallest=1, largest=100_000)
    status = run_in_chunks(solver.run, lambda: solver.n_outer, sizes, on_chunk=progress, no_memory=NO_MEMORY,
                           nonfinite=NONFINITE)
    return status, history


class BlockSMOSolver(Solver):
    name = "block_smo"
    formulations = FORMULATIONS
    kernels = KERNELS
    description = "blocked working-set SMO: LIBSVM's problems and stopping rule, kernel rows in blocks (BLAS)"
    stop_measure = "the maximal violating pair's gap m(alpha) - M(alpha)"
    config = Config
    stops_on_signals = True
    limits_blas_itself = True

    solve = staticmethod(solve)

    def reads_dense(self, n_rows, formulation):
        return True

    solve_c_path = staticmethod(solve_path)


SOLVER = BlockSMOSolver()
