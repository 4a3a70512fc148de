"""The kernel front end's hand-over to the blocked solver (solver "block_smo", docs/ssnal.md).

Where the free sets grow to thousands of variables (RBF with a large gamma or C: nearly every
support vector free), a Newton step costs a Cholesky of order |J| or a CG on |J|^2 kernel values,
and the rounds cost more than LIBSVM's method on the whole problem. The solve then stops and
hands its current point to block_smo as a warm start; the time it spends before is bounded by a
share (Config.handover_share) of an estimate of the blocked solve:

    blocked seconds ~ Config.handover_rows x max(|supp x|, min(n, Config.handover_min_rows))
                      x (the measured seconds of one kernel row of n values as block_smo forms
                         them: KernelRows on a few rows),

since the blocked solve forms at least one kernel row per support vector (more where -m holds
fewer rows than it needs) and, however few they are, the rows of its first working sets. The
warm start stops at the share of the least estimate (no support vector yet); the check is made
after it, at the start of each round and before each Newton step (whose cost is predicted from
the last step's, grown as |J|^3: Cholesky's flops). Smaller problems than
Config.handover_min_variables never hand over: they are cheap either way, and keep
the method's own stopping rule (eta) and its deterministic path. A blocked solve whose least
estimate is under Config.handover_at_once seconds is handed over at once, before the warm start:
the warm start's features and the first gradient would be a large share of it.
"""
import dataclasses
import math
import time
from dataclasses import dataclass

import numpy as np

from ..._core._kernel_block import KernelRows
from .. import get_solver
from ..base import Solution

BLOCKED_SOLVER = "block_smo"


@dataclass
class HandoverBudget:
    """When the solve stops and hands over: the clock's start, the measured seconds of one of
    block_smo's kernel rows, the estimate's rows per support vector and the share of it the
    solve may spend."""

    start: float
    row_seconds: float
    rows_per_support: float
    min_rows: int
    share: float
    support: int = 0          # |supp x| at the last round's start

    def rows(self):
        return max(self.support, self.min_rows, 1)

    def blocked_seconds(self):
        """The estimate of the blocked solve from the current support."""
        return self.rows_per_support * self.rows() * self.row_seconds

    def deadline(self):
        """The time.perf_counter() at which the share of the current estimate is spent."""
        return self.start + self.share * self.blocked_seconds()

    def reason(self, next_step=0.0, free=0):
        """Why the solve hands over now (one line), or None: the time spent, plus ``next_step``
        predicted seconds of the next Newton step on ``free`` variables, past the share."""
        spent = time.perf_counter() - self.start
        blocked = self.blocked_seconds()
        if spent + next_step <= self.share * blocked:
            return None
        step = (f" and the next Newton step on {free} free variables would take ~{next_step:.2f}s"
                if next_step > 0.0 else "")
        return (f"{spent:.2f}s spent{step}, past {self.share:g} of a blocked solve estimated at {blocked:.2f}s ("
                f"{self.rows_per_support:g} x {self.rows()} kernel rows of {self.row_seconds * 1e3:.3g} ms)")


def handover_budget(config, start, X, kernel, n_threads, *, n_variables, n):
    """The budget of a solve that may hand over (Config.handover, and n_variables is
    Config.handover_min_variables or more), else None: block_smo's kernel rows timed on
    Config.handover_probe_rows rows of X (the fastest of four blocks); no support vector yet."""
    if not config.handover or n_variables < config.handover_min_variables:
        return None
    probe = KernelRows(X, kernel.kind, float(kernel.gamma), int(kernel.degree), float(kernel.coef0),
                       n_threads=n_threads)
    rows = np.arange(min(config.handover_probe_rows, X.shape[0]), dtype=np.int32)
    row_seconds = math.inf
    for _ in range(4):       # the fastest of four: the first calls also pay for the threads' start and pages
        t0 = time.perf_counter()
        probe.rows(rows)
        row_seconds = min(row_seconds, (time.perf_counter() - t0) / max(rows.shape[0], 1))
    return HandoverBudget(start=start, row_seconds=row_seconds, rows_per_support=config.handover_rows,
                          min_rows=min(n, config.handover_min_rows), share=config.handover_share)


class StepClock:
    """The last Newton step's seconds and order, to predict the next one's: grown as |J|^3
    (Cholesky's flops) from an order of at least ``cubic_from`` (below it the step's O(|U|) work
    outweighs the factorization's)."""

    def __init__(self, cubic_from):
        self.cubic_from = cubic_from
        self.seconds = 0.0
        self.free = 0

    def predict(self, free):
        base = max(self.free, self.cubic_from)
        return self.seconds * max(free / base, 1.0) ** 3

    def record(self, seconds, free):
        self.seconds, self.free = seconds, free


def hand_over(sub, x, reason, history, details, *, n_iter):
    """block_smo's solve of ``sub`` from the feasible point x (ssnal's dual variables are
    LIBSVM's alpha: C-SVC's x_i, epsilon-SVR's (a, a*)), or from LIBSVM's cold start 0 when x is
    None, as ssnal's Solution: block_smo's coefficients, rho, objective, stop measure (the maximal
    violating pair's gap) and status; ``history``, ``details`` and ``n_iter`` those of the rounds
    solved before."""
    warm = None if x is None else Solution(coef=np.zeros(0), rho=0.0, dual=x,
                                           upper=np.asarray(sub.upper, dtype=np.float64))
    # block_smo's own options and iteration cap (ssnal's -o options and max_iter are not its)
    params = dataclasses.replace(sub.params, solver=BLOCKED_SOLVER, options={}, config=None, max_iter=None)
    t0 = time.perf_counter()
    blocked = get_solver(BLOCKED_SOLVER).solve(dataclasses.replace(sub, params=params, warm=warm))
    details = {**details, "handover": {"reason": reason, "solver": BLOCKED_SOLVER, "warm": x is not None,
                                       "seconds": time.perf_counter() - t0, "n_iter": blocked.n_iter,
                                       "stop_measure": "the maximal violating pair's gap",
                                       "history": blocked.history, "details": blocked.details}}
    return dataclasses.replace(blocked, n_iter=n_iter + blocked.n_iter, history=history, details=details)
