"""The Crammer-Singer multi-class linear SVM (LIBLINEAR -s 4's problem), all classes at once:

    min_W 1/2 sum_m |w_m|^2 + sum_i C_i max_m (e_i^m + w_m.x_i - w_{y_i}.x_i),

e_i^m = 0 for m = y_i and 1 otherwise, the bias B (-B) a constant feature with one regularized
weight per class. Solved in the dual by the sequential dual method of Keerthi et al. (KDD 2008),
one sample's k variables at a time, the samples in a fresh random order each epoch
(fastsvm._core._crammer_singer). Stops when every sample's KKT violation is at most tol.

This solver takes the joint problem (SOLVER.multiclass == "joint"): the subproblem's y holds class
positions 0..k-1 and its upper C_i; the Solution's w is the (k, n_features) weight matrix and its
rho the k values -B w_b,m, so that class m's score is w_m.x - rho_m.
"""
from dataclasses import dataclass

import numpy as np

from .._core._crammer_singer import CrammerSinger
from .._core._rng import VisitingOrder
from ..errors import FastSVMError
from .base import (LinearConfig, Solution, SolveStatus, Subproblem, checked_arrays, is_milestone, linear_run_settings,
                   LinearSolver)

DEFAULT_TOL = 0.1        # LIBLINEAR's -e for -s 4


@dataclass(frozen=True)
class Config(LinearConfig):
    """max_iter counts epochs."""


def primal_objective(X, codes, upper, W, w_bias, *, bias):
    """1/2 (|W|^2 + |w_bias|^2) + sum_i C_i max_m (e_i^m + s_m - s_{y_i}), s the class scores."""
    scores = np.asarray(X @ W.T) + bias * w_bias
    rows = np.arange(X.shape[0])
    margins = scores - scores[rows, codes][:, None] + 1.0
    margins[rows, codes] = 0.0
    return 0.5 * (float(np.sum(W * W)) + float(w_bias @ w_bias)) + float(upper @ margins.max(axis=1))


def solve(sub: Subproblem) -> Solution:
    """Solve the Crammer-Singer problem by the sequential dual method."""
    X, y, upper = checked_arrays(sub)
    codes = y.astype(np.int64)
    if y.size and (np.any(codes != y) or codes.min() < 0):
        raise FastSVMError("crammer_singer: labels must be class positions 0..k-1")
    n_classes = int(codes.max()) + 1 if codes.size else 1
    _, tol, max_iter, bias = linear_run_settings(SOLVER, sub.params)
    cs = CrammerSinger(X, codes, upper, n_classes, bias=bias)
    order = VisitingOrder(sub.seed, X.shape[0])

    history = []
    status, epoch = SolveStatus.MAX_ITER, 0
    while epoch < max_iter:
        if sub.stop[0]:
            raise KeyboardInterrupt
        met = cs.epoch(order.next())
        epoch += 1
        if not np.isfinite(met):
            raise FastSVMError("crammer_singer: the gradient overflowed; scale the data or lower C")
        # each violation is measured before its own visit; confirm at the final point
        done = met <= tol and cs.violation() <= tol
        if done or epoch == max_iter or is_milestone(epoch):
            history.append({"epoch": epoch, "violation": met})
            if sub.log is not None:
                sub.log(f"crammer_singer: epoch {epoch}  max KKT violation {met:.3e}")
        if done:
            status = SolveStatus.CONVERGED
            break
    W_full = cs.W.T.copy()          # (k, n_features + 1)
    W, w_bias = np.ascontiguousarray(W_full[:, :-1]), W_full[:, -1].copy()
    alpha = cs.alpha
    dual = 0.5 * float(np.sum(W_full * W_full)) + float(alpha.sum() - alpha[np.arange(y.size), codes].sum())
    return Solution(
        coef=alpha[np.arange(y.size), codes].copy(),   # each sample's own-class alpha, in [0, C_i]
        rho=-(w_bias * bias) if bias > 0 else np.zeros(n_classes),
        w=W,
        objective=primal_objective(X, codes, upper, W, w_bias, bias=bias),
        n_iter=epoch,
        stop_measure=cs.violation(),
        status=status,
        history=history,
        dual_objective=dual,
        dual=alpha.copy(),
        details={"bias_weights": w_bias, "tol": tol, "max_iter": max_iter},
    )


class CrammerSingerSolver(LinearSolver):
    name = "crammer_singer"
    default_tol = DEFAULT_TOL
    description = "linear multi-class SVM with all classes in one problem (LIBLINEAR -s 4)"
    stop_measure = "the largest dual KKT violation over samples"
    config = Config
    multiclass = "joint"

    solve = staticmethod(solve)


SOLVER = CrammerSingerSolver()
