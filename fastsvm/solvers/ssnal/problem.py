"""The dual (P) of a linear-kernel subproblem as SSsNAL sees it: Q = Z Z^T with Z the rows of X
signed and scaled (StackedRows, never formed), equal samples merged (problems.presolve), and
the coordinate-descent start for problems whose Newton systems go to CG."""
import math
from dataclasses import dataclass

import numpy as np

from ..._core._dcd import DualCD
from ..._core._status import Status
from ..._core._rows import StackedRows
from ...errors import FastSVMError
from ...problems.dual import CHUNK_WORK, OverDual, SvmDual, check_formulation, coordinate_dual_objective, svm_dual
from ...problems.presolve import EqualSamples, merge_equal_samples
from ...problems.vector import dot
from ..base import Subproblem, checked_arrays


@dataclass
class DualQP(OverDual):
    """(P) of docs/algorithms.md §0 for a linear kernel: Q = Z Z^T, K = {a^T x = d, l <= x <= u}."""

    Z: StackedRows
    dual: SvmDual
    nnz: int              # stored values of Z's rows: the cost of one pass
    merged: EqualSamples | None = None   # when equal samples were merged
    samples: tuple | None = None  # C-SVC: the subproblem's (X, labels, bounds) before merging
    pass_cost: float = 1.0        # a pass over Z in passes over the subproblem's X
    presolve_passes: float = 0.0  # the work of finding and merging them, in those passes
    row_norms: np.ndarray | None = None  # |z_r|, when the presolve's pass gave them

    @property
    def m(self):
        return self.Z.m

    def passes_over_X(self, passes):
        """Work counted in passes over Z, in passes over the subproblem's X (presolve included)."""
        return self.presolve_passes + self.pass_cost * passes

    def mean_upper(self):
        """The mean bound over the original samples (copies counted)."""
        if self.merged is None:
            return float(np.mean(self.K.upper))
        weight = self.merged.row_weight(self.m)
        return float(dot(weight, self.K.upper) / dot(weight, weight))

    def tied(self):
        """True when every original sample has the same c (C-SVC: x = 0 ties all rows)."""
        c = self.c if self.merged is None else self.c / self.merged.row_weight(self.m)
        return self.m > 0 and float(np.ptp(c)) == 0.0

    def gradient(self, x, w=None):
        """grad f(x) = Z Z^T x + c (w = Z^T x when known)."""
        if w is None:
            w = self.Z.rmatvec(x)
        return self.Z.matvec(w) + self.c

    def objective(self, x, w=None):
        """f(x) = 1/2 |Z^T x|^2 + c^T x: LIBSVM's "obj" for the same problem."""
        if w is None:
            w = self.Z.rmatvec(x)
        return self.dual.objective(x, 0.5 * dot(w, w))

    def kkt(self, x, grad=None):
        """(eta, b) at x: kkt_residual with grad f(x) computed here."""
        if grad is None:
            grad = self.gradient(x)
        return self.dual.eta(x, grad)

    def primal_objective(self, Zw, w, b):
        """The C-SVC / epsilon-SVR primal at (w, b) (SvmDual.primal_objective), Zw = Z w."""
        return self.dual.primal_objective(0.5 * dot(w, w), Zw + self.c, b)

    def restricted(self, rows, d):
        """(P) over the rows `rows` of Z (increasing) with the others fixed (SvmDual.restricted);
        its work counted in passes over the whole of X."""
        return DualQP(Z=RowSubset(self.Z, rows), dual=self.dual.restricted(rows, d), nnz=self.nnz)


def primal_objective(qp, Zw, w, b):
    """1/2 |w|^2 + sum_i u_i max(0, -(Z w + c)_i - b a_i): the C-SVC / epsilon-SVR primal
    (hinge / epsilon-insensitive loss) at (w, b), the lower bounds being 0."""
    return qp.primal_objective(Zw, w, b)


def linear_dual(sub: Subproblem, merge=False, merge_min_share=0.05, presolved=None) -> DualQP:
    """The dual of a C-SVC or epsilon-SVR subproblem with a linear kernel; with `merge`, equal
    samples merged (EqualSamples) when that saves merge_min_share of the stored values, or as
    `presolved` says (merge_equal_samples of the same rows at sub's bounds: a path's, made once)."""
    X, y, upper = checked_arrays(sub)
    n, nnz = X.shape[0], max(X.nnz, 1)
    if n == 0:
        raise FastSVMError("ssnal: the subproblem has no samples")
    eps = float(sub.params.epsilon) if sub.formulation == "epsilon_svr" else 0.0
    check_formulation(sub.formulation, y, eps)
    samples = (X, y, upper) if sub.formulation == "c_svc" else None
    merged, presolve, scale, sq_norms = None, 0.0, np.ones(n), None
    if merge or presolved is not None:
        kept = presolved if presolved is not None else merge_equal_samples(X, y, upper, merge_min_share, sub.stop)
        X, y, upper, sq_norms, merged, presolve = kept.X, kept.y, kept.upper, kept.sq_norms, kept.merged, kept.passes
        if merged is not None:
            scale = merged.scale
            n = X.shape[0]
    dual = svm_dual(sub.formulation, y, upper, eps, scale, n_threads=sub.n_threads)
    Z = StackedRows(X, dual.source, dual.K.a, n_threads=sub.n_threads, stop=sub.stop)
    pass_nnz = max(X.nnz, 1)     # of the merged rows, when merged
    row_norms = None if sq_norms is None else np.abs(dual.K.a) * np.sqrt(sq_norms)[dual.source]
    return DualQP(Z=Z, dual=dual, nnz=pass_nnz, merged=merged, samples=samples,
                  pass_cost=pass_nnz / nnz, presolve_passes=presolve, row_norms=row_norms)


class RowSubset:
    """Z_A, the rows A (increasing indices into Z) of a StackedRows: the products an inner solve
    restricted to A takes. Its work is counted in passes over the whole of X."""

    def __init__(self, Z, rows):
        self.Z, self.rows = Z, rows
        self.m, self.p = rows.shape[0], Z.p
        self.nnz = Z.rows_nnz(rows)[0]

    def matvec(self, v, out=None):
        return self.Z.rows_matvec(self.rows, v, out)

    def rows_nnz(self, rows):
        return self.Z.rows_nnz(self.rows[rows])

    def rows_rmatvec(self, rows, coef, out, accumulate=False):
        return self.Z.rows_rmatvec(self.rows[rows], coef, out, accumulate=accumulate)

    def rows_rmatvec_diff(self, rows, x_new, x_old, out):
        return self.rows_rmatvec(rows, x_new[rows] - x_old[rows], out, accumulate=True)


class Counters:
    """Work done, in passes over the stored values of X."""

    def __init__(self, nnz):
        self.nnz = nnz
        self.passes = 0.0
        self.newton = 0
        self.trials = 0
        self.cg = 0
        self.systems = {"dense": 0, "smw": 0, "cg": 0, "none": 0}

    def rows(self, Z, rows):
        self.passes += Z.rows_nnz(rows)[0] / self.nnz


def coordinate_start(qp, seed, stop, log, config):
    """(x, passes): a start for the C-SVC dual from epochs of dual coordinate descent (LIBLINEAR's
    -s 3 with -B 1, fastsvm._core._dcd) over the subproblem's samples, in qp's variables (a
    merged row takes sqrt(copies) x the copies' mean), and their work in passes over X (one an
    epoch).

    Where the Newton systems go to CG (many features) a Newton step costs several passes, and on
    text-like data the first outer iterations spend most of them finding the free set from x = 0;
    a few epochs find much of it. The epochs go on while each gains at most config.coordinate_rate
    of the one before in DCD's dual objective: past that they crawl, and an epoch (rows in random
    order, one thread) takes the time of several passes of the Newton steps' products.
    Deterministic: one thread, the order seeded."""
    X, labels, upper = qp.samples
    diag = np.zeros_like(upper)
    dcd = DualCD(X, labels, upper, diag, bias=1.0, seed=seed, shrinking=False)
    last_gain = math.inf
    objective = 0.0           # DCD's dual objective, to be maximised
    while dcd.epoch < config.coordinate_max_epochs:
        status = dcd.run(0.0, dcd.epoch + 1, 1, CHUNK_WORK, stop)
        if status == Status.INTERRUPTED or stop[0]:
            raise KeyboardInterrupt
        if status == Status.NONFINITE:
            raise FastSVMError("ssnal: the gradient overflowed; scale the data or lower C")
        if dcd.in_epoch:
            continue
        gain = -coordinate_dual_objective(dcd.alpha, dcd.w, diag) - objective
        objective += gain
        if status == Status.CONVERGED or gain > config.coordinate_rate * last_gain:
            break
        last_gain = gain
    x = dcd.alpha
    if qp.merged is not None:
        x = qp.merged.merged_point(x)
    if log is not None:
        log(f"ssnal: start from {dcd.epoch} epochs of dual coordinate descent, its dual objective {objective:.10g}")
    return np.ascontiguousarray(x, dtype=np.float64), float(dcd.epoch)
