"""Coordinate descent with one-variable Newton steps (CDN; Yuan, Chang, Hsieh, Lin 2010) for the
L1-regularized squared-hinge SVM: LIBLINEAR -s 5's problem

    min_w |w|_1 + sum_i C_i max(0, 1 - y_i (w.x_i + w_b B))^2,

the bias B (-B) a constant feature whose weight is penalized like the others. The columns are
swept in a fresh random order each epoch by fastsvm._core._l1_cd over a CSC copy of X. Stops as
LIBLINEAR: the 1-norm of the min-norm subgradient at most tol times its value at w = 0.
"""
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._core._l1_cd import L1SquaredHingeCD
from .._core._rng import VisitingOrder
from ..errors import FastSVMError
from .base import (LinearConfig, Solution, SolveStatus, Subproblem, checked_binary_squared_hinge, is_milestone,
                   linear_run_settings, LinearSolver)

DEFAULT_TOL = 0.01       # LIBLINEAR's -e for -s 5


@dataclass(frozen=True)
class Config(LinearConfig):
    """max_iter counts epochs."""


def columns_with_bias(X, bias):
    """X as canonical CSC (int32 indices, sorted), with a last column of value `bias` when > 0."""
    if bias > 0:
        X = sp.hstack([X, np.full((X.shape[0], 1), bias)], format="csr")
    X = sp.csc_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.sort_indices()
    if X.nnz >= 2**31:
        raise FastSVMError("l1_cd: X has too many stored values for 32-bit indices")
    X.indices = X.indices.astype(np.int32, copy=False)
    X.indptr = X.indptr.astype(np.int32, copy=False)
    return X


def objective(X, y, upper, w):
    """|w|_1 + sum_i C_i max(0, 1 - y_i x_i.w)^2, X holding the bias column if any."""
    slack = np.maximum(0.0, 1.0 - y * (X @ w))
    return float(np.abs(w).sum() + upper @ (slack * slack))


def solve(sub: Subproblem) -> Solution:
    """Solve one binary L1-regularized squared-hinge SVM by CDN."""
    X, y, upper = checked_binary_squared_hinge(sub, "l1_cd")
    _, tol, max_iter, bias = linear_run_settings(SOLVER, sub.params)
    columns = columns_with_bias(X, bias)
    cd = L1SquaredHingeCD(columns, y, upper)
    order = VisitingOrder(sub.seed, columns.shape[1])

    initial = float(cd.violations().sum())
    threshold = tol * initial
    history = []
    status, epoch = SolveStatus.MAX_ITER, 0
    while epoch < max_iter:
        if sub.stop[0]:
            raise KeyboardInterrupt
        met, largest = cd.epoch(order.next())
        epoch += 1
        if not np.isfinite(met):
            raise FastSVMError("l1_cd: the gradient overflowed; scale the data or lower C")
        # the sweep measures each violation before its own step; confirm at the final w
        done = met <= threshold and cd.violations().sum() <= threshold
        if done or epoch == max_iter or is_milestone(epoch):
            history.append({"epoch": epoch, "violation_sum": met, "violation_max": largest,
                            "nonzeros": int(np.count_nonzero(cd.w))})
            if sub.log is not None:
                sub.log(f"l1_cd: epoch {epoch}  subgradient 1-norm {met:.3e}  max {largest:.3e}  "
                        f"nnz(w) {history[-1]['nonzeros']}")
        if done:
            status = SolveStatus.CONVERGED
            break
    w_full = cd.w.copy()
    w, w_bias = (w_full[:-1], float(w_full[-1])) if bias > 0 else (w_full, 0.0)
    return Solution(
        coef=2.0 * upper * y * np.maximum(cd.b, 0.0),   # y_i times the loss' multiplier 2 C_i slack_i
        rho=-(w_bias * bias) if bias > 0 else 0.0,
        w=np.ascontiguousarray(w),
        objective=objective(columns, y, upper, w_full),
        n_iter=epoch,
        stop_measure=float(cd.violations().max(initial=0.0)),
        status=status,
        history=history,
        details={"bias_weight": w_bias, "tol": tol, "max_iter": max_iter,
              "violation_sum_at_zero": initial},
    )


class L1CD(LinearSolver):
    name = "l1_cd"
    default_tol = DEFAULT_TOL
    description = "L1-regularized linear SVM, squared hinge (-L 2), sparse weights (LIBLINEAR -s 5)"
    stop_measure = "the largest minimum-norm subgradient entry"
    config = Config

    solve = staticmethod(solve)


SOLVER = L1CD()
