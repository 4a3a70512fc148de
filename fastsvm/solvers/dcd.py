"""Dual coordinate descent for linear C-SVC (Hsieh et al. 2008): LIBLINEAR's -s 3 (hinge, L1 loss)
and -s 1 (squared hinge, L2 loss) dual solvers, with the same problem, bias and stopping rule.

Problem: min_w 1/2 |w|^2 + sum_i C_i loss(y_i (w.x_i + w_b B)), where the bias B (LIBLINEAR's -B,
when >= 0) is a constant feature whose weight w_b is regularized like any other weight.
The sweep runs in fastsvm._core._dcd in chunks; this module checks the input, turns C_i into the
dual's bounds, logs progress between chunks and builds the Solution.
"""
import time
from dataclasses import dataclass

import numpy as np

from .._core._csr import csr_matvec
from .._core._dcd import DualCD
from .._core._status import Status
from ..errors import FastSVMError
from ..problems.vector import dot
from .base import (LinearConfig, Solution, SolveStatus, Subproblem, checked_binary_arrays, linear_run_settings,
                   LinearSolver, next_milestone, solve_path_warm)

DEFAULT_TOL = 0.1        # LIBLINEAR's -e for the dual SVC solvers
CHUNK_WORK = 1 << 23     # stored values visited per call into the sweep: a call is short, so Ctrl-C is seen promptly


@dataclass(frozen=True)
class Config(LinearConfig):
    """max_iter counts epochs."""

    chunk_work: int = CHUNK_WORK   # stored values visited per call into the sweep
    log_interval: float = 5.0      # seconds: slow runs also log between milestone epochs


def dual_bounds(upper, loss):
    """The dual's box bound U_i and diagonal D_ii for per-sample costs C_i > 0."""
    if loss == "hinge":
        return upper, np.zeros_like(upper)
    if loss == "squared_hinge":
        return np.full_like(upper, np.inf), 0.5 / upper
    raise FastSVMError(f"unknown loss {loss!r} (use hinge or squared_hinge)")


def primal_objective(X, y, upper, w, w_bias, *, bias, loss, n_threads=1):
    """1/2 (|w|^2 + w_bias^2) + sum_i C_i loss(y_i (w.x_i + w_bias B))."""
    margins = y * (csr_matvec(X, np.ascontiguousarray(w), n_threads) + w_bias * bias)
    slack = np.maximum(0.0, 1.0 - margins)
    losses = slack if loss == "hinge" else slack * slack
    return 0.5 * (dot(w, w) + w_bias * w_bias) + dot(upper, losses)


def dual_objective(alpha, w_full, diag):
    """1/2 alpha^T (Q + D) alpha - e^T alpha, with Q alpha read off w = sum_i alpha_i y_i x_i."""
    return 0.5 * dot(w_full, w_full) + 0.5 * dot(diag * alpha, alpha) - float(alpha.sum())


def warm_alpha(warm, upper, U, keep):
    """DCD's start from ``warm``, a Solution of the same rows at other bounds: alpha_i C_i / C_i_old
    on the rows ``keep`` (mask), clipped into [0, U_i] (the dual has no equality constraint, so
    that point is feasible); None (start from zero) when there is no warm point or it does not
    fit these rows."""
    if warm is None or warm.dual is None or warm.upper is None:
        return None
    old_alpha = np.asarray(warm.dual, dtype=np.float64).ravel()
    old_upper = np.asarray(warm.upper, dtype=np.float64).ravel()
    if old_alpha.shape != keep.shape or old_upper.shape != keep.shape or \
            not (np.all(np.isfinite(old_alpha)) and np.all(old_upper >= 0)):
        return None
    old_alpha, old_upper = old_alpha[keep], old_upper[keep]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(old_upper > 0, upper / old_upper, 1.0)
    return np.clip(old_alpha * ratio, 0.0, U)


def solve(sub: Subproblem) -> Solution:
    """Solve one binary linear C-SVC subproblem by dual coordinate descent."""
    params = sub.params
    X, y, upper = checked_binary_arrays(sub, "dcd")
    config, tol, max_iter, bias = linear_run_settings(SOLVER, params)  # B = 0: the bias-free problem
    loss = params.loss or "hinge"

    # A sample with C_i = 0 has alpha_i = 0 at every feasible point; leaving it out keeps the PG
    # test meaningful (with U_i = 0 LIBLINEAR would keep seeing PG = -1 and never stop).
    keep = upper > 0
    if not keep.all():
        X_run, y_run, c_run = X[keep], y[keep], upper[keep]
    else:
        X_run, y_run, c_run = X, y, upper
    U, D = dual_bounds(c_run, loss)
    cd = DualCD(X_run, y_run, U, D, bias=bias, seed=sub.seed, shrinking=params.shrinking,
                alpha=warm_alpha(sub.warm, c_run, U, keep))

    n_run = X_run.shape[0]
    history = []

    def record():
        entry = {"epoch": cd.epoch, "violation": cd.violation, "active": cd.active_size,
                 "dual_objective": dual_objective(cd.alpha, cd.w, D)}
        history.append(entry)
        if sub.log is not None:
            sub.log(f"dcd: epoch {entry['epoch']}  PG violation {entry['violation']:.3e}  "
                    f"active {entry['active']}/{n_run}  dual objective {entry['dual_objective']:.10g}")

    last_time = time.monotonic()
    while True:
        milestone = next_milestone(cd.epoch)
        status = cd.run(tol, max_iter, milestone - cd.epoch, config.chunk_work, sub.stop)
        if status == Status.INTERRUPTED or sub.stop[0]:
            raise KeyboardInterrupt
        if status == Status.NONFINITE:
            raise FastSVMError("dcd: the gradient overflowed; scale the data or lower C")
        done = status != Status.CHUNK_DONE
        new_epoch = cd.epoch > (history[-1]["epoch"] if history else 0)
        if new_epoch and (done or cd.epoch >= milestone or time.monotonic() - last_time >= config.log_interval):
            record()
            last_time = time.monotonic()
        if done:
            break

    w_full = cd.w.copy()
    w, w_bias = w_full[:-1], float(w_full[-1])
    alpha = np.zeros(X.shape[0])
    alpha[keep] = cd.alpha
    objective = primal_objective(X_run, y_run, c_run, w, w_bias, bias=bias, loss=loss, n_threads=sub.n_threads)
    solve_status = SolveStatus.CONVERGED if status == Status.CONVERGED else SolveStatus.MAX_ITER
    if sub.log is not None:
        sub.log(f"dcd: {solve_status.value} after {cd.epoch} epochs, primal objective {objective:.10g}, "
                f"nSV = {int(np.count_nonzero(alpha))}")
    return Solution(
        coef=y * alpha,
        rho=-(w_bias * bias) if bias > 0 else 0.0,
        w=np.ascontiguousarray(w),
        objective=objective,
        n_iter=cd.epoch,
        stop_measure=cd.violation,
        status=solve_status,
        history=history,
        dual_objective=dual_objective(cd.alpha, w_full, D),
        dual=alpha,
        upper=upper,
        details={"bias_weight": w_bias, "tol": tol, "max_iter": max_iter},
    )


def solve_path(sub, Cs, state=None):
    """Solver.solve_c_path: the problems with bounds C * sub.upper for C in Cs, in order, each started
    from the previous solution (the first from sub.warm). DCD shares no state between them."""
    return solve_path_warm(lambda problem, C: solve(problem), sub, Cs)


class DCD(LinearSolver):
    name = "dcd"
    default_tol = DEFAULT_TOL
    description = "linear SVM by dual coordinate descent, for large sparse data (LIBLINEAR -s 1, -s 3)"
    stop_measure = "the largest projected-gradient violation (LIBLINEAR's)"
    config = Config

    solve = staticmethod(solve)
    solve_c_path = staticmethod(solve_path)


SOLVER = DCD()
