"""SSsNAL: a sparse semismooth Newton augmented Lagrangian method on the SVM dual (seed 000;
ALGORITHMS.md sections 0-2), linear kernel, in feature space.

The dual (P) min 1/2 x^T Q x + c^T x over K = {a^T x = d, 0 <= x <= u} has Q = Z Z^T with
Z = diag(y) X (C-SVC) or [X; -X] (epsilon-SVR), never formed. The augmented Lagrangian method on
the restricted dual is a proximal point method on (P): outer iteration k minimises the strongly
convex p-dimensional

    psi_k(v) = 1/2 |v|^2 + (|y|^2 - dist(y, K)^2) / (2 sigma_k),   y = x^k - sigma_k (Z v + c),
    grad psi_k(v) = v - Z^T Pi_K(y),

by semismooth Newton steps (I + sigma Z_J^T P_J Z_J) d = -grad, J the free set of the projection,
then sets x^{k+1} = Pi_K(y) and b = lam / sigma. Each Newton step costs one pass over X for Z d
(the line search then only projects) and a pass over the rows whose x changed for Z^T x; each
outer iteration one more pass for grad f(x) = Z Z^T x + c, shared by the stopping test eta and
the next warm start v = Z^T x^{k+1}.

Choices made here beyond the paper (measured on a9a, w8a, ijcnn1, phishing, mushrooms and the
synthetic sets of tools/make_synthetic.py; see tools/bench_ssnal.py):
- the step is the minimiser of psi along d (psi is convex, its slope along d monotone and cheap:
  one projection per trial), kept when it passes the Armijo test (mu = 1e-4), else Armijo
  halving from 1 (line_search='armijo' uses halving alone);
- sigma_0 is the mean upper bound (C for C-SVC): sigma maps Z v + c, of order 1 (margins), to
  steps of x, of order C; with sigma_0 = 1 a large C spent its first outer iterations on small
  proximal steps;
- sigma grows by a factor that shrinks as the inner solves get harder, only while the AL's
  primal residual |x^{k+1} - x^k| / sigma is not far below eta; it halves after a stalled solve;
- the first Newton system of an outer iteration uses the free set the previous one ended with;
- the inner stop is |grad psi| <= eps_k / sqrt(sigma_k), eps_k = max(tol / 10, 2^-k) as in
  ALGORITHMS.md, scaled down (to 1e-3 at most) while eta sits well above the primal residual:
  then the inexact inner solves, not the outer iteration, limit eta;
- dense Newton systems are factored by LAPACK from Cython without the GIL (the SMW ones with
  the equality constraint's projection as a border, bordered_solve) and dense Gram blocks go to
  BLAS only when large (the rows copied dense a block at a time): waking OpenBLAS's threads for
  small products cost more than the products on a busy machine; CG directions are inexact
  (cg_tolerance);
- the p x p Gram matrix Z_J^T Z_J of the dense systems is kept and updated over the rows that
  joined or left J when that is cheaper than forming it anew (J changes little between
  Newton steps); it also updates Z^T Pi_K(y) after the step: the rows of J free before and
  after moved as the system predicts, by -alpha sigma Z_J d - dlam a_J, so their part is
  -alpha sigma G d - dlam Z_J^T a_J and only the other changed rows are read (_Inner.accept);
- after the first Newton step of an outer iteration, rows far beyond their bounds are held there
  and the inner solve goes on over the others (_screen); the held rows are checked at its end and
  any that had to move rejoin the solve, so each outer iteration solves the whole psi_k (unless
  its iterate already has eta <= tol: then it is the last);
- near the end of an outer iteration its inner iterates are tested for eta <= tol (one pass, or a
  bound from an estimate), after every step when the steps cost several passes (CG systems);
- far from the end an outer iteration's eta comes from Z v + c, known without the pass for
  grad f(x), when the error bound is small against it (ESTIMATED_ETA_ERROR); the solve stops
  only on an exact eta;
- an outer step whose inner solve stopped short (max_newton) at a larger f is rejected: x stays
  and sigma is lowered (an exact proximal step never raises f);
- equal samples are merged into one row scaled by sqrt(copies) before the solve (EqualSamples):
  the same steps over fewer rows;
- C-SVC with more features than DENSE_P_MAX (its Newton systems by CG, several passes a step)
  starts from epochs of dual coordinate descent while they converge fast (_coordinate_start):
  the first outer iterations from x = 0 spent most of their CG passes finding the free set.
This module orchestrates; fastsvm._core._ssnal and _knapsack do the O(nnz) and O(m) work.
"""
import math
import time
from dataclasses import asdict, dataclass

import numpy as np

from .._core._dcd import DualCD
from .._core._status import Status
from .._core._duplicates import equal_row_groups
from .._core._knapsack import KnapsackSet
from .._core._ssnal import (NewtonCG, StackedRows, bordered_solve, dense_newton, held_misses, hold_rows, line_point,
                             off_system_moves, search_scalars, sorted_changes)
from ..errors import FastSVMError, ParameterError
from .base import Solution, SolverSpec, Subproblem, checked_arrays, option, solver_config
from .dcd import CHUNK_WORK, dual_objective

DEFAULT_TOL = 1e-3
PRIMAL_LAG = 0.1           # sigma grows while the AL primal residual is >= this fraction of eta
INNER_SCALE_MIN = 1e-3     # the inner tolerance is tightened at most this much (see _ssnal)
DEFAULT_MAX_OUTER = 200
MAX_NEWTON = 50            # Newton steps per outer iteration
ARMIJO_MU = 1e-4
MAX_HALVINGS = 40
SIGMA0 = 1.0               # sigma_0 = SIGMA0 x the mean upper bound (C): sigma scales as x / (Z v + c)
SIGMA_FACTOR = 3.0
SIGMA_MIN, SIGMA_MAX = 1e-6, 1e10
DENSE_P_MAX = 2000         # largest p for which the p x p Newton system may be formed (LAPACK
                           # cannot be interrupted: ~0.3 s at most)
SMW_J_MAX = 2000           # largest free set for which the |J| x |J| system may be formed
BLAS_SPEEDUP = 8.0         # Cholesky flops per sparse scalar flop (cost model of the systems)
DENSE_ROWS_SPEEDUP = 50.0  # products of rows copied dense (_blas), per sparse flop: one core's dgemm
                           # runs ~100 Gflop/s, the sparse loops ~1-2 (random Fourier features)
CG_ITER_GUESS = 25
CG_MAX_ITER = 500
CG_RTOL = 0.3              # loosest relative residual of the CG Newton directions
CG_INEXACT_PASSES = 3.0    # the extra Newton steps an inexact CG direction costs, in passes over X
                           # (w8a: 47 -> 35 Newton steps, 68 -> 47 passes, faster, when its p = 300
                           # systems are all dense instead of mostly CG; a step is one pass for
                           # Z d plus line-search projections and updates worth a few more)
KINK_ROWS = 3              # a CG system keeps the rows that left the last one's J when at most this
                           # many did (see _Newton._with_kinks)
DENSE_BLOCK_BYTES = 1 << 18  # rows copied dense a block at a time (L2-resident)
BLAS_MIN_FLOPS = 1e6       # below this a dense copy of the rows and a BLAS call cost more than they save
EXACT_SLOPE = 0.2          # line_search='exact' stops once |slope| <= this fraction of slope(0)
EARLY_GRAD = 100.0         # inner iterates with |grad psi| <= this x its tolerance may be tested for eta,
EARLY_ETA_PREV = 10.0      # when the last outer iteration's eta was <= this x tol (the estimate costs
                           # a projection: not worth it in the outer iterations far from the end)
ESTIMATED_ETA_MIN = 2.0    # an outer iteration's eta is estimated from Z v (no pass) while the last one's
ESTIMATED_ETA_ERROR = 0.25  # was above EARLY_ETA_PREV x tol, the estimate above ESTIMATED_ETA_MIN x tol and
                           # its error bound gain |grad psi| below ESTIMATED_ETA_ERROR x it: 24 bench solves
                           # 611 -> 587 passes, 23 on the same paths; the estimates within 7% of eta (bounds
                           # <= 0.21); heart_scale's and mushrooms' bounds are 1.4-2.5, their errors 30-50%
SCREEN_FACTOR = 1.0        # rows are held at their bound for an inner solve beyond this many first
SCREEN_QUANTILE = 0.99     # moves (that quantile over the rows): see _screen
SCREEN_MIN_SHARE = 0.3
MERGE_MIN_SHARE = 0.05     # equal samples are merged when that removes this share of the stored values
COLD_GRADIENT_STEP = True  # the first step from x = 0 is along -grad psi when all rows tie there (C-SVC)
EARLY_STEP_PASSES = 2.0    # Newton steps costing this many passes (CG systems) make the exact eta test,
                           # one pass, worth making without the estimate's bound
EARLY_EVERY_STEP_PASSES = 5.0  # and this many, worth making after every step, not only once |grad psi|
                               # fell tenfold since the last test (text 100k C = 32: 745 -> 722
                               # passes; text-like 20k C = 1: 201 -> 187)
COORDINATE_START_P = DENSE_P_MAX  # C-SVC with more features than this (Newton systems by CG) starts
                                 # from dual coordinate descent epochs (_coordinate_start)
COORDINATE_RATE = 0.6      # those epochs go on while each gains at most this share of the one before
COORDINATE_MAX_EPOCHS = 50
# explicit features of the kernel warm start (ssnal_kernel): random Fourier features (RBF) or
# Nystroem landmarks. The warm start costs ~ n D^2 per Newton system; with 128 instead of 256 its
# x^0 is rougher but the rounds on the exact kernel make up for it (mushrooms 0.30 -> 0.20 s, a9a,
# w8a and ijcnn1 no slower)
KERNEL_FEATURES = 128
KERNEL_WARM_TOL = 1e-4     # eta of the explicit-feature problem: it is only an approximation
KERNEL_THETA = 0.0         # margin band around a bound's switch that joins the working set
WARM_MAPS = ("rff", "nystroem")
NONLINEAR = ("rbf", "polynomial", "sigmoid")  # the kernels of ssnal_kernel
REJECTED_NOTE = "  (Newton steps did not converge: step undone, sigma lowered)"  # ends a progress line
@dataclass(frozen=True)
class Config:
    """-o name=value, for the linear solver here and the kernel one (ssnal_kernel)."""

    sigma0: float | None = option(None, "first proximal parameter sigma, by default the mean C", kind=float,
                                  low=0.0, low_open=True, kernels=("linear",))
    sigma_factor: float = option(SIGMA_FACTOR, "growth of sigma between outer iterations", low=1.0)
    line_search: str = option("exact", "Newton step length rule", choices=("armijo", "exact"),
                              kernels=("linear",))
    newton_system: str = option("auto", "how each Newton system is solved",
                                choices=("auto", "dense", "smw", "cg"), kernels=("linear",))
    max_newton: int = option(MAX_NEWTON, "Newton steps per outer iteration", low=1)
    rff: int = option(KERNEL_FEATURES, "explicit features of the warm start", low=1, kernels=NONLINEAR)
    warm: str = option("rff", "warm start's features: random Fourier (rbf only) or Nystroem",
                       choices=WARM_MAPS, kernels=NONLINEAR)
    warm_tol: float = option(KERNEL_WARM_TOL, "KKT tolerance of the warm start", low=0.0,
                             low_open=True, kernels=NONLINEAR)
    theta: float = option(KERNEL_THETA, "margin band whose rows join the working set", low=0.0,
                          kernels=NONLINEAR)


# ---------------------------------------------------------------------------------------------
# the problem

def _dot(a, b):
    # einsum's own loop: a threaded BLAS dot costs milliseconds of thread hand-off on a busy machine
    return float(np.einsum("i,i->", a, b))


def _norm(a):
    return math.sqrt(_dot(a, a))


@dataclass
class EqualSamples:
    """Equal samples (same features, label or target, bound) of a subproblem merged into one row
    each: k copies of a sample become one row of Z, a, c and bounds scaled by sqrt(k). In the
    variable u = sqrt(k) x_copy the merged dual is the original restricted to equal copies, with
    the same Euclidean metric, objective, projections and eta; SSsNAL never leaves that subspace
    (from x = 0 every copy has the same y and so the same Pi_K(y)), so it takes the same steps
    over fewer rows (phishing: 8844 -> 5109 rows)."""

    group: np.ndarray     # the merged sample of each original sample
    scale: np.ndarray     # sqrt(copies) of each merged sample

    def row_weight(self, m):
        """sqrt(copies) of each of the m rows of Z (two per sample for epsilon-SVR)."""
        return np.tile(self.scale, m // self.scale.shape[0])

    def expand(self, x):
        """The dual of the original problem: every copy takes x / sqrt(k) of its merged row."""
        per_copy = x.reshape(-1, self.scale.shape[0]) / self.scale
        return np.ascontiguousarray(per_copy[:, self.group].ravel())


@dataclass
class DualQP:
    """(P) of ALGORITHMS.md section 0 for a linear kernel: Q = Z Z^T, K = {a^T x = d, l <= x <= u}."""

    Z: StackedRows
    c: np.ndarray
    K: KnapsackSet
    nnz: int              # stored values of Z's rows: the cost of one pass
    merged: EqualSamples | None = None   # when equal samples were merged
    samples: tuple | None = None  # C-SVC: the subproblem's (X, labels, bounds) before merging
    pass_cost: float = 1.0        # a pass over Z in passes over the subproblem's X
    presolve_passes: float = 0.0  # the work of finding and merging them, in those passes
    row_norms: np.ndarray | None = None  # |z_r|, when the presolve's pass gave them

    def passes_over_X(self, passes):
        """Work counted in passes over Z, in passes over the subproblem's X (presolve included)."""
        return self.presolve_passes + self.pass_cost * passes

    def mean_upper(self):
        """The mean bound over the original samples (copies counted)."""
        if self.merged is None:
            return float(np.mean(self.K.upper))
        weight = self.merged.row_weight(self.m)
        return float(_dot(weight, self.K.upper) / _dot(weight, weight))

    def tied(self):
        """True when every original sample has the same c (C-SVC: x = 0 ties all rows)."""
        c = self.c if self.merged is None else self.c / self.merged.row_weight(self.m)
        return self.m > 0 and float(np.ptp(c)) == 0.0

    @property
    def m(self):
        return self.Z.m

    def gradient(self, x, w=None):
        """grad f(x) = Z Z^T x + c (w = Z^T x when known)."""
        if w is None:
            w = self.Z.rmatvec(x)
        return self.Z.matvec(w) + self.c

    def objective(self, x, w=None):
        """f(x) = 1/2 |Z^T x|^2 + c^T x: LIBSVM's "obj" for the same problem."""
        if w is None:
            w = self.Z.rmatvec(x)
        return 0.5 * _dot(w, w) + _dot(self.c, x)

    def kkt(self, x, grad=None):
        """(eta, b) at x: kkt_residual with grad f(x) computed here."""
        if grad is None:
            grad = self.gradient(x)
        return kkt_residual(x, grad, self.K)


def kkt_residual(x, grad, K, hint=math.nan):
    """eta(x) = |x - Pi_K(x - grad)| / (1 + |x| + |grad|) (seed 000 eq. 4.1) for grad = grad f(x),
    and the multiplier lam of that projection, which is the bias b at a solution.

    K is a KnapsackSet; hint, a guess of b, speeds up the projection. eta = 0 exactly at the
    solutions of (P)."""
    x = np.asarray(x, dtype=np.float64)
    grad = np.asarray(grad, dtype=np.float64)
    projected, lam, _ = K.project(x - grad, hint)
    eta = _norm(x - projected) / (1.0 + _norm(x) + _norm(grad))
    return eta, lam


def linear_dual(sub: Subproblem, merge=False) -> DualQP:
    """The dual of a C-SVC or epsilon-SVR subproblem with a linear kernel; with `merge`, equal
    samples merged (EqualSamples) when that saves MERGE_MIN_SHARE of the stored values."""
    X, y, upper = checked_arrays(sub)
    n, nnz = X.shape[0], max(X.nnz, 1)
    if n == 0:
        raise FastSVMError("ssnal: the subproblem has no samples")
    if sub.formulation == "c_svc":
        if not np.all(np.abs(y) == 1.0):
            raise FastSVMError("ssnal c_svc: labels must be +1 or -1")
    elif sub.formulation == "epsilon_svr":
        eps = float(sub.params.epsilon)
        if not eps >= 0:
            raise ParameterError("p < 0")
    else:
        raise ParameterError(f"ssnal solves c_svc and epsilon_svr, not {sub.formulation}")
    samples = (X, y, upper) if sub.formulation == "c_svc" else None
    merged, presolve, scale, sq_norms = None, 0.0, np.ones(n), None
    if merge:
        sq_norms = np.empty(n)
        group, first = equal_row_groups(X, np.ascontiguousarray(np.column_stack([y, upper])), sq_norms)
        presolve = 1.0
        row_nnz = np.diff(X.indptr)
        kept = int(np.sum(row_nnz[first]))
        if first.shape[0] < n and kept <= (1.0 - MERGE_MIN_SHARE) * X.nnz:
            X, y, upper, sq_norms = X[first], y[first], upper[first], sq_norms[first]
            scale = np.sqrt(np.bincount(group, minlength=first.shape[0]).astype(np.float64))
            merged = EqualSamples(group=group, scale=scale)
            presolve += kept / nnz
            n = X.shape[0]
    rows = np.arange(n, dtype=np.int32)
    if sub.formulation == "c_svc":
        source, sign, c, bound = rows, y * scale, -scale, upper * scale
    else:
        source = np.concatenate([rows, rows])
        sign = np.concatenate([scale, -scale])
        c = np.concatenate([(eps - y) * scale, (eps + y) * scale])
        bound = np.concatenate([upper * scale, upper * scale])
    Z = StackedRows(X, source, sign, n_threads=sub.n_threads, stop=sub.stop)
    K = KnapsackSet(sign, 0.0, np.zeros_like(bound), bound, n_threads=sub.n_threads)
    pass_nnz = max(X.nnz, 1)     # of the merged rows, when merged
    row_norms = None if sq_norms is None else np.abs(sign) * np.sqrt(sq_norms)[source]
    return DualQP(Z=Z, c=np.ascontiguousarray(c), K=K, nnz=pass_nnz, merged=merged, samples=samples,
                  pass_cost=pass_nnz / nnz, presolve_passes=presolve, row_norms=row_norms)


def primal_objective(qp, Zw, w, b):
    """1/2 |w|^2 + sum_i u_i max(0, -(Z w + c)_i - b a_i): the C-SVC / epsilon-SVR primal
    (hinge / epsilon-insensitive loss) at (w, b), the lower bounds being 0."""
    slack = np.maximum(0.0, -(Zw + qp.c) - b * qp.K.a)
    return 0.5 * _dot(w, w) + _dot(qp.K.upper, slack)


class _RowSubset:
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


# ---------------------------------------------------------------------------------------------
# the method

class _Counters:
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


def _lost_definiteness():
    return FastSVMError("ssnal: the Newton matrix lost positive definiteness (non-finite data?)")


@dataclass
class _System:
    """What a step's Newton system over J tells of Z^T x's change (_Inner.accept):
    subtract(out, zd, J_zd, step, dlam) does out -= step Z_J^T Z_J d + dlam Z_J^T a_J, given
    zd = Z d and J's place in zd, for a price of `cost` stored values (a dense system's G d; a CG
    one's from its residual, over the columns J's rows store)."""

    J: np.ndarray         # in Z's rows
    subtract: object
    cost: float


class _Newton:
    """Newton directions for I + sigma Z_J^T P_J Z_J by the cheapest of a dense p x p Cholesky,
    Sherman-Morrison-Woodbury with the |J| x |J| system, or preconditioned CG (estimated flops)."""

    def __init__(self, qp, counters, choice="auto"):
        self.qp = qp
        self.counters = counters
        self.choice = choice
        self.gram = None          # (J, Z_J^T Z_J, Z_J^T a_J) of the last dense system
        self.system = None        # _System of this step's dense or CG system
        self.H = None             # its Newton matrix, factored in place
        self.block = None         # rows copied dense for BLAS (_dense_gram)
        self.changes = None
        self.cg = None            # NewtonCG, made at the first CG system
        self.cg_J = None          # the free set of the last system, when it was a CG one
        if choice not in ("auto", "dense", "smw", "cg"):
            raise ParameterError(f"ssnal: newton_system must be auto, dense, smw or cg, not {choice!r}")

    def method(self, J):
        Z = self.qp.Z
        p, k = Z.p, J.shape[0]
        if self.choice != "auto":  # a preference: a system too large to form falls back to CG
            fits = {"dense": p <= DENSE_P_MAX, "smw": k <= SMW_J_MAX, "cg": True}[self.choice]
            return self.choice if fits else "cg"
        nnz_j = self.nnz_J[0]
        cg_iters = CG_ITER_GUESS if self.cg is None else max(10, self.cg.last_iters)   # as the last system
        costs = {"cg": cg_iters * (2.0 * nnz_j + 6.0 * p + 2.0 * k) + CG_INEXACT_PASSES * self.qp.nnz}
        if p <= DENSE_P_MAX:
            gram = self._fresh_gram_cost(J)
            if self.gram is not None:  # the kept Gram matrix updated over the rows that changed
                gram = min(gram, self._gram_changes(J)[2])
            costs["dense"] = gram + p ** 3 / (3.0 * BLAS_SPEEDUP) + p * p
        if k <= SMW_J_MAX:
            kern = min(0.5 * k * nnz_j, self._blas_cost(k, nnz_j, k * k * p))
            costs["smw"] = kern + k ** 3 / (3.0 * BLAS_SPEEDUP) + 2.0 * nnz_j + k * k
        return min(costs, key=costs.get)

    def direction(self, J, g, sigma, rtol, kinks=False, rows=None):
        """d with (I + sigma Z_J^T P_J Z_J) d = -g (by CG to the relative residual rtol); with
        `kinks`, a CG system's J gains the rows of the last one that left it (_with_kinks; rows:
        the solve's rows, when it is restricted to some)."""
        self.system = None
        if J.shape[0] == 0:
            self.counters.systems["none"] += 1
            return -g
        self.nnz_J = self.qp.Z.rows_nnz(J)   # (sum, sum of squares) of the rows' stored values
        self.changes = None       # _gram_changes(J) once made for this step
        method = self.method(J)
        if method == "cg" and kinks and self.cg_J is not None:
            J = self._with_kinks(J, rows)
        self.cg_J = J if method == "cg" else None
        self.counters.systems[method] += 1
        return getattr(self, "_" + method)(J, np.ascontiguousarray(self.qp.K.a[J]), g, sigma, rtol)

    def _with_kinks(self, J, rows):
        """J with the rows of the last system's J (a CG one) that are not in it, when at most KINK_ROWS.

        Late in a solve a step often ends a few rows at their bounds, and the next direction,
        without them, moves them back into the box, its step cut short where they re-enter (text
        100k C = 1: alpha 0.03..0.4 after 20-40 CG iterations, J alternating 16333 <-> 16340).
        Any such J gives a descent direction; with the rows kept, the directions no longer
        alternate (16 text-like solves to eta <= 1e-6: 10% fewer passes in all, -39%..+31% each; a few
        rows, not many: when many rows leave J it is still being found). Dense systems are left
        alone: their steps are cheap and w8a C = 1 took 78 -> 124 of them."""
        changed, weights = sorted_changes(J, self.cg_J)     # both increasing
        left = changed[weights < 0]
        if rows is not None:        # rows held at their bound are out of the solve
            at = np.minimum(np.searchsorted(rows, left), rows.shape[0] - 1)
            left = left[rows[at] == left]
        if 0 < left.shape[0] <= KINK_ROWS:
            J = np.insert(J, np.searchsorted(J, left), left)
            self.nnz_J = self.qp.Z.rows_nnz(J)
        return J

    def _gram(self, J, a_J):
        """(G, s) = (Z_J^T Z_J, Z_J^T a_J): the last ones updated over the rows that joined or
        left J when that is cheaper than forming them anew (the free set changes little from
        one Newton step to the next)."""
        Z = self.qp.Z
        fresh = self._fresh_gram_cost(J)
        if self.gram is not None:
            rows, weights, update, blas = self._gram_changes(J)
            if update < fresh:
                self.counters.rows(Z, rows)
                _, G, s = self.gram
                if blas:   # phishing, 200 rows 44% full: 49 us against 68 by sparse outer products
                    self._dense_gram(rows, self.qp.K.a[rows], G, s, weights)
                elif Z.rows_gram(rows, self.qp.K.a[rows], G, s, weights) is None:
                    raise KeyboardInterrupt
                self.gram = (J.copy(), G, s)
                return G, s
        self.counters.passes += self.nnz_J[0] / self.counters.nnz
        if self._blas(J.shape[0], self.nnz_J[0], 2.0 * J.shape[0] * Z.p * Z.p):
            G, s = np.zeros((Z.p, Z.p)), np.zeros(Z.p)
            self._dense_gram(J, a_J, G, s)
        else:
            gs = Z.rows_gram(J, a_J)
            if gs is None:
                raise KeyboardInterrupt
            G, s = gs
        self.gram = (J.copy(), G, s)
        return G, s

    def _dense_gram(self, rows, a_rows, G, s, weights=None):
        """G += B^T W B and s += B^T W a_rows for B = Z_rows, W = diag(weights) (default: identity),
        the rows copied dense a block at a time into a kept buffer of DENSE_BLOCK_BYTES: fresh
        memory for all of them at once cost more than the products (ijcnn1: 72k x 22, 12.7 MB,
        ~10 ms to touch on this VM against ~2 ms for the products)."""
        if self.block is None:
            p = self.qp.Z.p
            self.block = np.empty((max(1, DENSE_BLOCK_BYTES // (8 * p)), p))
        block = self.block.shape[0]
        for lo in range(0, rows.shape[0], block):
            hi = min(lo + block, rows.shape[0])
            B = self.qp.Z.rows_dense(rows[lo:hi], out=self.block[: hi - lo])
            WB = B if weights is None else B * weights[lo:hi, None]
            G += WB.T @ B
            s += WB.T @ a_rows[lo:hi]

    def _dense(self, J, a_J, g, sigma, rtol):
        """H = I + sigma (G - s s^T / a_J^T a_J), G = Z_J^T Z_J, s = Z_J^T a_J; Cholesky."""
        Z = self.qp.Z
        G, s = self._gram(J, a_J)
        if self.H is None:           # formed and factored in one call, in a kept buffer
            self.H = np.empty((Z.p, Z.p))
        d = np.empty(Z.p)
        if not dense_newton(G, s, _dot(a_J, a_J), sigma, g, self.H, d):
            raise _lost_definiteness()

        def subtract(out, zd, J_zd, step, dlam):
            out -= step * (G @ d) + dlam * s
        self.system = _System(J, subtract, Z.p * Z.p / BLAS_SPEEDUP)
        return d

    def _smw(self, J, a_J, g, sigma, rtol):
        """d = -g + sigma B^T (I + sigma B B^T)^-1 B g, B = P_J Z_J, B B^T = P_J (Z_J Z_J^T) P_J."""
        Z = self.qp.Z
        self.counters.rows(Z, J)  # the kernel block; the two products below cost as much again
        self.counters.rows(Z, J)
        k = J.shape[0]
        if self._blas(k, self.nnz_J[0], k * k * Z.p):
            B = Z.rows_dense(J)
            Kmat = B @ B.T
        else:
            Kmat = Z.rows_kernel(J)
            if Kmat is None:
                raise KeyboardInterrupt
        z = Z.rows_matvec(J, g)
        Kmat *= sigma
        Kmat.flat[:: k + 1] += 1.0
        if not bordered_solve(Kmat, z, a_J):      # P K P, P = I - a a^T / aa, never formed
            raise _lost_definiteness()
        aa = _dot(a_J, a_J)
        if aa > 0:
            z -= (_dot(a_J, z) / aa) * a_J
        return Z.rows_rmatvec(J, sigma * z) - g

    def _cg(self, J, a_J, g, sigma, rtol):
        """Matrix-free preconditioned CG (cg_tolerance says how exactly)."""
        if self.cg is None:
            self.cg = NewtonCG(self.qp.Z)
        d = np.empty(self.qp.Z.p)
        iters, status = self.cg.solve(J, a_J, sigma, np.ascontiguousarray(-g), d, rtol, CG_MAX_ITER)
        if status == "interrupted":
            raise KeyboardInterrupt
        self.counters.cg += iters
        self.counters.passes += (2 * iters + 1) * self.nnz_J[0] / self.counters.nnz
        aa = _dot(a_J, a_J)

        def subtract(out, zd, J_zd, step, dlam):   # Z_J^T Z_J d = Z_J^T P_J Z_J d + s (a_J^T Z_J d) / aa
            self.cg.add_products(out, -step, -(step * _dot(a_J, zd[J_zd]) / aa + dlam))
        self.system = _System(J, subtract, self.cg.n_products + J.shape[0])
        return d

    def _fresh_gram_cost(self, J):
        """The cost model's price of forming Z_J^T Z_J anew: sparse outer products or BLAS."""
        k = J.shape[0]
        return min(self.nnz_J[1], self._blas_cost(k, self.nnz_J[0], 2.0 * k * self.qp.Z.p ** 2))

    def _gram_changes(self, J):
        """(rows, weights, price, blas): the rows that joined or left J since the kept Gram matrix
        (sorted_changes) and the price of updating it over them (_update_gram_cost), made once a
        step for both method() and _gram()."""
        if self.changes is None:
            rows, weights = sorted_changes(J, self.gram[0])
            self.changes = (rows, weights) + self._update_gram_cost(rows)
        return self.changes

    def _update_gram_cost(self, rows):
        """The price of updating the kept Gram matrix over `rows` (those that joined or left J),
        and whether BLAS does it."""
        nnz, nnz2 = self.qp.Z.rows_nnz(rows)
        blas = self._blas_cost(rows.shape[0], nnz, 2.0 * rows.shape[0] * self.qp.Z.p ** 2)
        return min(nnz2, blas), blas < nnz2

    def _blas_cost(self, k, nnz, flops):
        """The cost model's price of a product of `flops` over k rows of Z (nnz stored values) by
        BLAS-3, the rows copied dense, when _blas says it is taken; else infinite (the sparse
        loops do it)."""
        if self._blas(k, nnz, flops):
            return k * self.qp.Z.p + flops / DENSE_ROWS_SPEEDUP
        return math.inf

    def _blas(self, k, nnz, flops):
        """True when a dense copy of k rows of Z (nnz stored values) and BLAS-3 beat the sparse
        loops: rows at least a quarter full and enough work to pay for the copy (<= 400 MB) and
        the call."""
        p = self.qp.Z.p
        return flops >= BLAS_MIN_FLOPS and k * p <= 50_000_000 and 4 * nnz >= k * p


class _Inner:
    """One semismooth Newton solve of min psi_k: its state and buffers (reused across outer
    iterations; the *_new buffers hold the line search's trial point until it is accepted)."""

    def __init__(self, qp, counters, line_search):
        m = qp.m
        self.qp = qp
        self.counters = counters
        self.line_search = line_search
        self.pt, self.pt_new = np.empty(m), np.empty(m)       # y = x^k - sigma (Z v + c)
        self.xp, self.x_new = np.empty(m), np.empty(m)        # Pi_K(y)
        self.free, self.free_new = np.empty(m, dtype=np.int32), np.empty(m, dtype=np.int32)
        self.changed = np.empty(m, dtype=np.int32)            # rows where x_new != xp
        self.off_rows, self.off_coef = np.empty(m, dtype=np.int32), np.empty(m)  # off_system_moves'
        self.mark = np.zeros(m, dtype=np.int8)
        self.n_free = 0
        self.lam = math.nan                                   # multiplier of Pi_K(y)
        self.sigma = math.nan
        self.lam_rate = 0.0
        self.ztx = np.zeros(qp.Z.p)                           # Z^T Pi_K(y)

    @property
    def J(self):
        return self.free[: self.n_free]

    def start(self, x, w, v, Zv, sigma):
        """Project y(v) for the new center x (w = Z^T x) and sigma; Z^T Pi_K(y) from w over the
        rows that changed. The multiplier is sigma b: the last one rescaled is the hint."""
        qp = self.qp
        np.multiply(Zv + qp.c, -sigma, out=self.pt)
        self.pt += x
        hint = self.lam * sigma / self.sigma
        _, self.lam, J = qp.K.project(self.pt, hint, x=self.xp, free=self.free)
        self.sigma = sigma
        self.n_free = J.shape[0]
        self.ztx[:] = w
        self._update_ztx(np.flatnonzero(self.xp != x).astype(np.int32), self.xp, x)

    def restricted(self, rows, d):
        """This solve continued on the rows `rows` (increasing; the free set among them) while the
        others stay at their current x: a new _Inner over K_A = {a_A^T x_A = d, l_A <= x_A <= u_A}
        (d = the constraint's d - a^T x over the others), with Z^T x (the others' part included)
        carried over."""
        qp, K = self.qp, self.qp.K
        K_A = KnapsackSet(K.a[rows], d, K.lower[rows], K.upper[rows], n_threads=K.n_threads)
        inner = _Inner(DualQP(Z=_RowSubset(qp.Z, rows), c=qp.c[rows], K=K_A, nnz=qp.nnz),
                       self.counters, self.line_search)
        inner.pt[:] = self.pt[rows]
        inner.xp[:] = self.xp[rows]
        J = np.searchsorted(rows, self.J).astype(np.int32)
        inner.free[: J.shape[0]] = J
        inner.n_free = J.shape[0]
        inner.lam, inner.sigma = self.lam, self.sigma
        inner.ztx[:] = self.ztx
        return inner

    def reproject(self):
        """Pi_K(y) anew after y changed on some rows; Z^T Pi_K(y) updated over the rows whose x
        changed."""
        x_old = self.xp.copy()
        _, self.lam, J = self.qp.K.project(self.pt, self.lam, x=self.xp, free=self.free)
        self.n_free = J.shape[0]
        self._update_ztx(np.flatnonzero(self.xp != x_old).astype(np.int32), self.xp, x_old)

    def absorb(self, inner, rows):
        """Take back the state of `inner`, restricted to `rows` by restricted()."""
        self.pt[rows] = inner.pt
        self.xp[rows] = inner.xp
        self.ztx[:] = inner.ztx
        self.lam = inner.lam
        self.n_free = inner.n_free
        self.free[: self.n_free] = rows[inner.J]

    def _update_ztx(self, changed, x_new, x_old, work=None):
        """ztx += Z^T (x_new - x_old), over the changed rows (`work`: their stored values, when
        known) or, when they are many, in full."""
        qp, Z = self.qp, self.qp.Z
        if work is None:
            work = Z.rows_nnz(changed)[0]
        if work < 0.5 * qp.nnz or isinstance(Z, _RowSubset):
            Z.rows_rmatvec_diff(changed, x_new, x_old, self.ztx)
            self.counters.passes += work / qp.nnz
        else:
            Z.rmatvec(x_new, out=self.ztx)
            self.counters.passes += 1

    def _update_from_system(self, res, changed, changed_work, J, system, step, zd):
        """ztx += Z^T (x_new - x_old) as -step Z_J^T Z_J d - dlam s (the system's) plus the rows
        off_system_moves lists, when they cost less than the changed rows (changed_work stored
        values); False (nothing done) otherwise."""
        Z, dlam = self.qp.Z, res[0] - self.lam
        n = off_system_moves(changed, J, self.J, self.free_new[: res[1]], self.x_new, self.xp, zd, self.qp.K.a,
                             step, dlam, self.mark, self.off_rows, self.off_coef)
        rows = self.off_rows[:n]
        work = Z.rows_nnz(rows)[0]
        if work + system.cost >= changed_work:
            return False
        system.subtract(self.ztx, zd, J, step, dlam)
        Z.rows_rmatvec(rows, self.off_coef[:n], self.ztx, accumulate=True)
        self.counters.passes += work / self.qp.nnz
        return True

    def trial(self, zd, alpha):
        """Project y(v + alpha d) into the *_new buffers; line_point's (lam, n_free, zd.dx, s,
        n_changed)."""
        self.counters.trials += 1
        return line_point(self.qp.K, self.pt, zd, alpha * self.sigma, self.xp, self.lam,
                          alpha * self.lam_rate, self.pt_new, self.x_new, self.free_new, self.changed)

    def accept(self, res, system=None):
        """Make the trial point current; Z^T Pi_K(y) updated over the rows whose x changed, or,
        given the step's Newton system (its J in this solve's rows, _System, alpha sigma, Z d),
        from it and the rows whose move it does not predict, when those hold fewer stored values
        (most changed rows are free before and after: ijcnn1 C = 1 to 1e-3, 3.6 -> 1.9 passes of
        updates)."""
        changed = self.changed[: res[4]]
        work = self.qp.Z.rows_nnz(changed)[0]
        if system is None or not self._update_from_system(res, changed, work, *system):
            self._update_ztx(changed, self.x_new, self.xp, work)
        self.pt, self.pt_new = self.pt_new, self.pt
        self.xp, self.x_new = self.x_new, self.xp
        self.free, self.free_new = self.free_new, self.free
        self.lam, self.n_free = res[0], res[1]

    def search(self, d, zd, g, model_start=False):
        """The step: Armijo backtracking (mu = 1e-4, halving from a start step), or with
        line_search='exact' first the minimiser of psi along d (psi is convex and its slope
        monotone along d; searched from that start), kept if it passes the same Armijo test. The
        start is 1 (the Newton step) or, with `model_start`, the minimiser of psi's quadratic
        model along d on the current free set. Returns (alpha, trial) with the trial in the *_new
        buffers."""
        sigma = self.sigma
        dd, gd, aa, az = search_scalars(d, g, zd, self.qp.K.a, self.J)
        start = 1.0
        if model_start:
            zd_J = zd[self.J]
            curv = dd + sigma * (_dot(zd_J, zd_J) - (az * az / aa if aa > 0 else 0.0))
            start = -gd / max(curv, 1e-300)
        # d lam / d alpha while the free set stays: the projection's hint at each trial
        self.lam_rate = -sigma * az / aa if aa > 0 else 0.0

        def trial(alpha):  # (psi(v + alpha d) - psi(v), its slope d/dalpha, line_point's result)
            res = self.trial(zd, alpha)
            return (alpha * gd + 0.5 * alpha * alpha * dd - alpha * res[2] + res[3] / sigma,
                    gd + alpha * dd - res[2], res)

        if self.line_search == "exact":
            alpha, (change, _, res) = line_minimum(trial, gd, start=start)
            if change <= ARMIJO_MU * alpha * gd:
                return alpha, res
        alpha = start
        for _ in range(MAX_HALVINGS):
            change, _, res = trial(alpha)
            if change <= ARMIJO_MU * alpha * gd:
                return alpha, res
            alpha *= 0.5
        return alpha * 2.0, res  # no measurable decrease: a negligible step, the caller stops


def line_minimum(trial, slope0, rtol=EXACT_SLOPE, grow=2.0, max_grow=6, max_refine=10, max_trials=None, start=1.0):
    """alpha > 0 near the minimiser of a convex function along a line, from its slope (the linear
    and the kernel SSsNAL's line searches). trial(alpha) returns a tuple (value change, slope,
    ...) and the slope is non-decreasing with slope(0) = slope0 < 0.

    From alpha = start (1: the Newton step) the step is multiplied by `grow` (at most `max_grow` times)
    while the slope is still below -rtol |slope0|; the bracketed root of the slope is then
    narrowed by the Illinois variant of regula falsi (at most `max_refine` trials) until
    |slope| <= rtol |slope0|. `max_trials` bounds the trials of both phases together; None: no
    bound. Returns (alpha, trial(alpha)), alpha the last trial."""
    inf = math.inf
    max_grow = inf if max_grow is None else max_grow
    max_refine = inf if max_refine is None else max_refine
    max_trials = inf if max_trials is None else max_trials
    lo, s_lo = 0.0, slope0
    hi = start
    out = trial(hi)
    s_hi = out[1]
    tries, grown, refined = 1, 0, 0
    while s_hi < -rtol * abs(slope0) and grown < max_grow and tries < max_trials:
        lo, s_lo = hi, s_hi
        hi *= grow
        out = trial(hi)
        s_hi = out[1]
        grown += 1
        tries += 1
    alpha, s_alpha, side = hi, s_hi, 0
    while (abs(s_alpha) > rtol * abs(slope0) and s_hi > 0.0 and refined < max_refine
           and tries < max_trials):
        alpha = lo + (hi - lo) * (-s_lo) / (s_hi - s_lo)
        out = trial(alpha)
        s_alpha = out[1]
        refined += 1
        tries += 1
        if s_alpha < 0.0:
            lo, s_lo = alpha, s_alpha
            if side < 0:          # the same end twice: halve the other end's slope
                s_hi *= 0.5
            side = -1
        else:
            hi, s_hi = alpha, s_alpha
            if side > 0:
                s_lo *= 0.5
            side = 1
    return alpha, out


def cg_tolerance(progress):
    """Relative residual for a CG Newton direction: CG_RTOL, tightening with the inner solve's
    progress = |grad| / |grad at its start| (inexact Newton, Eisenstat-Walker style; the
    exponent was chosen on text-like data, where CG carries the cost: exact directions cost
    more CG iterations than the Newton steps they save)."""
    return min(CG_RTOL, progress ** 0.25)


def next_sigma(sigma, steps, converged, factor, lagging=True):
    """The penalty of the next outer iteration: raised while the AL's primal residual lags
    (`lagging`: a larger sigma speeds the outer convergence), by `factor` when the inner solve
    was easy, by less when it needed many Newton steps; kept when the primal side is ahead;
    lowered when the inner solve stalled (a large sigma makes psi_k closer to the nonsmooth
    primal); within bounds."""
    if not converged:
        change = 0.5
    elif not lagging:
        change = 1.0
    elif steps <= 5:
        change = 2.0 * factor
    elif steps <= 12:
        change = factor
    elif steps <= 25:
        change = math.sqrt(factor)
    else:
        change = 1.0
    return min(max(sigma * change, SIGMA_MIN), SIGMA_MAX)


def solve(sub: Subproblem, merge=True) -> Solution:
    """Solve one C-SVC or epsilon-SVR subproblem by SSsNAL (RBF, polynomial and sigmoid kernels:
    fastsvm.solvers.ssnal_kernel); `merge`: equal samples merged (linear_dual)."""
    params = sub.params
    if sub.kernel.kind in ("rbf", "polynomial", "sigmoid"):
        from . import ssnal_kernel  # here: it imports this module
        return ssnal_kernel.solve(sub)
    if sub.kernel.kind != "linear":
        raise ParameterError(f"ssnal supports the linear, rbf, polynomial and sigmoid kernels (got {sub.kernel.kind})")
    if params.loss not in (None, "hinge"):
        raise ParameterError("ssnal solves the hinge-loss (L1) dual only")
    opts = asdict(solver_config(SPEC, params, "linear"))
    tol = DEFAULT_TOL if params.tol is None else float(params.tol)
    max_outer = DEFAULT_MAX_OUTER if params.max_iter is None else int(params.max_iter)
    qp = linear_dual(sub, merge=merge)
    start = None
    if qp.samples is not None and qp.Z.p > COORDINATE_START_P:
        start = _coordinate_start(qp, sub.seed, sub.stop, sub.log)
    result = _ssnal(qp, tol, max_outer, opts, sub.stop, sub.log, start)
    x, w, b = result["x"], result["w"], result["b"]
    objective = qp.objective(x, w)
    coef = np.sign(qp.K.a) * x if sub.formulation == "c_svc" else x   # C-SVC: a = y (scaled when merged)
    if qp.merged is not None:
        coef, x = qp.merged.expand(coef), qp.merged.expand(x)
    if sub.formulation == "epsilon_svr":
        n = coef.shape[0] // 2
        coef = coef[:n] - coef[n:]
    return Solution(
        coef=np.ascontiguousarray(coef, dtype=np.float64),
        rho=-b,
        w=w,
        objective=objective,
        n_iter=result["outer"],
        stop_measure=result["eta"],
        status=result["status"],
        history=result["history"],
        dual=x,
        details={k: result[k] for k in ("newton", "passes", "trials", "cg", "systems", "sigma", "time",
                                     "primal_objective", "b_kkt")}
        | {"tol": tol, "merged_samples": 0 if qp.merged is None else qp.merged.group.shape[0] - qp.Z.n},
    )


def _coordinate_start(qp, seed, stop, log):
    """(x, passes): a start for the C-SVC dual from epochs of dual coordinate descent (LIBLINEAR's
    -s 3 with -B 1, fastsvm._core._dcd) over the subproblem's samples, in qp's variables (a
    merged row takes sqrt(copies) x the copies' mean), and their work in passes over X (one an
    epoch).

    Where the Newton systems go to CG (many features) a Newton step costs several passes, and on
    text-like data the first outer iterations spent most of them finding the free set from x = 0;
    a few epochs find much of it. The epochs go on while each gains at most COORDINATE_RATE of the
    one before in DCD's dual objective: past that they crawl, and an epoch (rows in random order,
    one thread) takes the time of ~5 passes of the Newton steps' products (text-like 100k rows:
    10 epochs at C = 1, 2 at C = 32 and 256). Deterministic: one thread, the order seeded."""
    X, labels, upper = qp.samples
    diag = np.zeros_like(upper)
    dcd = DualCD(X, labels, upper, diag, bias=1.0, seed=seed, shrinking=False)
    last_gain = math.inf
    objective = 0.0           # DCD's dual objective, to be maximised
    while dcd.epoch < COORDINATE_MAX_EPOCHS:
        status = dcd.run(0.0, dcd.epoch + 1, 1, CHUNK_WORK, stop)
        if status == Status.INTERRUPTED or stop[0]:
            raise KeyboardInterrupt
        if status == Status.NONFINITE:
            raise FastSVMError("ssnal: the gradient overflowed; scale the data or lower C")
        if dcd.in_epoch:
            continue
        gain = -dual_objective(dcd.alpha, dcd.w, diag) - objective
        objective += gain
        if status == Status.CONVERGED or gain > COORDINATE_RATE * last_gain:
            break
        last_gain = gain
    x = dcd.alpha
    if qp.merged is not None:    # u = sqrt(k) x_copy with x_copy the copies' mean
        x = np.bincount(qp.merged.group, weights=x, minlength=qp.m) / qp.merged.scale
    if log is not None:
        log(f"ssnal: start from {dcd.epoch} epochs of dual coordinate descent, its dual objective {objective:.10g}")
    return np.ascontiguousarray(x, dtype=np.float64), float(dcd.epoch)


def progress_line(entry, tol):
    """One outer iteration for the user: how far from done (the KKT residual against -e, 'about'
    when estimated), the objective as LIBSVM prints it and the duality gap, and where the time goes
    (Newton steps and the free variables their systems have, rows skipped as settled at a bound
    and those that were not, passes over the data)."""
    return (f"ssnal: iteration {entry['iter']}  KKT residual {'about ' if entry['eta_estimated'] else ''}"
            f"{entry['eta']:.3e} (stops at {tol:g})  objective {entry['dual']:.10g}  "
            f"duality gap {entry['primal'] + entry['dual']:.3e}  sigma {entry['sigma']:.3g}  "
            f"{entry['newton']} Newton steps on {entry['free']} free variables  "
            f"{entry['held']} rows skipped as settled ({entry['held_misses']} were not)  "
            f"{entry['passes']:.1f} passes over the data  {entry['time']:.2f}s"
            + (REJECTED_NOTE if entry["rejected"] else ""))


def _estimated_eta(qp, xp, Zv, hint, error):
    """(eta, b, bound on eta's error) at x = xp with grad f(x) = Z w + c estimated by Z v + c: they
    differ by Z grad psi, of norm about `error` (gain |grad psi|), and the projection in eta is
    non-expansive; the bound is that norm over eta's denominator."""
    grad = Zv + qp.c
    eta, b = kkt_residual(xp, grad, qp.K, hint)
    return eta, b, error / (1.0 + _norm(xp) + _norm(grad))


def _screen(inner, pt_start, lam_start, factor):
    """(rows, held) after the first Newton step of an inner solve: the rows it continues on and
    the rows held at their bound for its remaining steps (see hold_rows), or (None, None).

    A row is held when its projection argument z = y - lam a lies further beyond its bound than
    `factor` times the first step's move of z on most rows (its SCREEN_QUANTILE): after the first
    outer iteration an inner solve changes x on a few per cent of the rows (a9a, w8a, phishing),
    and the later steps move z less than the first. Holding only pays when the held rows carry
    SCREEN_MIN_SHARE of the stored values: each later step then costs a pass over the others.
    The caller checks the held rows at the end (held_misses) and, if some had to move, goes on
    with them among the rows."""
    qp, K = inner.qp, inner.qp.K
    rows, held = np.empty(qp.m, dtype=np.int32), np.empty(qp.m, dtype=np.int32)
    n_rows, n_held, held_nnz, held_ax = hold_rows(inner.pt, inner.lam, pt_start, lam_start, inner.xp, K.a, K.lower,
                                                  K.upper, qp.Z.row_nnz, factor, SCREEN_QUANTILE, rows, held)
    if n_held == 0 or held_nnz < SCREEN_MIN_SHARE * qp.nnz:
        return None, None
    try:
        return inner.restricted(rows[:n_rows], K.d - held_ax), held[:n_held]
    except FastSVMError:  # rounding put d just outside what the rows' bounds allow: hold none
        return None, None


def _ssnal(qp, tol, max_outer, opts, stop, log, start=None):
    """start: None (x = 0) or (x, its work in passes over X), x in (P)'s variables."""
    t0 = time.perf_counter()
    m, p = qp.m, qp.Z.p
    counters = _Counters(qp.nnz)
    newton = _Newton(qp, counters, opts["newton_system"])
    inner = _Inner(qp, counters, opts["line_search"])
    x = np.zeros(m)
    w = np.zeros(p)
    Zw = np.zeros(m)
    if start is not None:
        x = qp.K.project(start[0])[0]   # DCD's bias is regularized: a^T x = 0 is restored here
        w = qp.Z.rmatvec(x)
        Zw = qp.Z.matvec(w)
        counters.passes += 2.0 + start[1] / qp.pass_cost
    v, Zv = w.copy(), Zw.copy()
    sigma = opts["sigma0"]
    if sigma is None:
        sigma = min(max(SIGMA0 * qp.mean_upper(), SIGMA_MIN), SIGMA_MAX)
    history = []
    status = "max_iter"
    eta = math.inf
    b = b_kkt = 0.0
    estimated = False         # eta (and Zw) of the last outer iteration from Z v, not Z w
    dual = qp.objective(x, w)   # f at the center
    outer = 0
    inner_scale = 1.0
    J_last = None
    screen_factor = SCREEN_FACTOR
    row_norms = qp.row_norms     # else made at the first held-row check
    # the first y = -sigma c: for C-SVC every row ties and the projection frees a whole class (the
    # larger), a free set that says nothing about the solution's; a first step along -grad psi
    # breaks the tie (w8a C = 32: 47 -> 38 passes; the first Newton step's alpha was 0.03)
    tied_start = COLD_GRADIENT_STEP and qp.tied() and start is None
    for outer in range(1, max_outer + 1):
        eps = inner_scale * max(0.1 * tol, 0.5 ** outer)
        inner.start(x, w, v, Zv, sigma)
        cur, rows, held = inner, None, None   # the solve in progress; its rows when restricted
        steps = 0
        converged = early = False
        tested = math.inf         # |grad psi| at the last exact eta test of this outer iteration
        misses = n_held = 0
        Zw_center = Zw.copy()
        while True:               # a restricted solve, then its held rows checked
            while True:
                if stop[0]:
                    raise KeyboardInterrupt
                g = v - cur.ztx
                gnorm = _norm(g)
                if steps == 0:
                    gnorm0 = max(gnorm, 1e-300)
                converged = gnorm <= eps / math.sqrt(sigma)
                if converged or steps >= opts["max_newton"]:
                    break
                if (steps > 0 and eta <= EARLY_ETA_PREV * tol and gnorm <= EARLY_GRAD * eps / math.sqrt(sigma)
                        and (gnorm <= 0.1 * tested or step_passes >= EARLY_EVERY_STEP_PASSES)):
                    # the iterate x = Pi_K(y) may already have eta <= tol: grad f(x) = Z w + c is
                    # estimated by Z v + c, which differs by Z grad psi, of norm about gain |grad psi|;
                    # the projection in eta is non-expansive. Exact test (one pass) when the bound
                    # holds, or at once when a Newton step costs far more than the test (CG systems:
                    # the bound is loose by gain; text 100k C = 1: 153 -> 142 passes to 1e-3)
                    hint = cur.lam / sigma
                    xp = inner.xp
                    if rows is not None:
                        xp = xp.copy()
                        xp[rows] = cur.xp
                    sure = step_passes >= EARLY_STEP_PASSES
                    if not sure:
                        eta_est, _, error = _estimated_eta(qp, xp, Zv, hint, gain * gnorm)
                        sure = eta_est + error <= tol * (1.0 - error)
                    if sure:
                        tested = gnorm
                        qp.Z.matvec(cur.ztx, out=Zw)
                        counters.passes += 1
                        if kkt_residual(xp, Zw + qp.c, qp.K, hint)[0] <= tol:
                            early = True
                            break
                # the first system of an outer iteration on the free set its predecessor ended with:
                # the start point's (a projected gradient step of length sigma from x) is far from
                # the final one, shrunk where the last proximal step is magnified by the larger sigma
                J = cur.J if steps > 0 or J_last is None else J_last
                gradient_step = steps == 0 and outer == 1 and tied_start
                if gradient_step:
                    J = J[:0]
                J_rows = J        # in cur's rows
                if rows is not None:
                    J = rows[J]
                passes_before = counters.passes
                d = newton.direction(J, g, sigma, cg_tolerance(gnorm / gnorm0), kinks=steps > 0, rows=rows)
                zd = cur.qp.Z.matvec(d)
                counters.passes += 1 if rows is None else cur.qp.Z.nnz / qp.nnz
                gain = _norm(zd) / max(_norm(d), 1e-300)   # |Z u| / |u| along the Newton directions
                if steps == 0:
                    lam_start = inner.lam
                # the gradient step's minimum lies near 1e-3..1e-5: searched from its model's
                alpha, res = cur.search(d, zd, g, model_start=gradient_step)
                system = newton.system
                if system is not None and system.J is not J:   # a CG system's J with kink rows
                    J_rows = system.J if rows is None else np.searchsorted(rows, system.J).astype(np.int32)
                cur.accept(res, None if system is None else (J_rows, system, alpha * sigma, zd))
                step_passes = counters.passes - passes_before
                v += alpha * d
                if rows is None:
                    Zv += alpha * zd
                else:
                    Zv[rows] += alpha * zd
                steps += 1
                counters.newton += 1
                if alpha < 1e-10:
                    break
                if steps == 1:      # inner.pt_new: the start's y, given back by accept()
                    restricted, held = _screen(inner, inner.pt_new, lam_start, screen_factor)
                    if restricted is not None:
                        cur, rows = restricted, restricted.qp.Z.rows
            if rows is not None:
                inner.absorb(cur, rows)
            # grad f(x) = Z w + c takes a pass; far from the end, where eta only steers sigma,
            # the estimate from Z v serves when its error bound is small against it, and the next
            # outer iteration starts from v (a restricted solve's held rows need the pass anyway)
            estimated = False
            if not early and held is None and steps > 0 and eta > EARLY_ETA_PREV * tol:
                *kkt_est, error = _estimated_eta(qp, inner.xp, Zv, inner.lam / sigma, gain * gnorm)
                estimated = kkt_est[0] > ESTIMATED_ETA_MIN * tol and error <= ESTIMATED_ETA_ERROR * kkt_est[0]
            if estimated:
                Zw[:] = Zv
            elif not early:       # else Zw is that of the tested iterate
                qp.Z.matvec(inner.ztx, out=Zw)
                counters.passes += 1
            if held is None:
                break
            n_held = max(n_held, held.shape[0])
            if early:
                break
            # the iterate may solve (P) to tol already, whatever the held rows would do in the
            # exact proximal step: eta is the whole problem's (text 100k, held rows that had to
            # move reopened the solve: C = 32 816 -> 745 passes, C = 256 1731 -> 1593)
            if eta <= EARLY_ETA_PREV * tol and kkt_residual(inner.xp, Zw + qp.c, qp.K, inner.lam / sigma)[0] <= tol:
                early = True
                break
            # Zw differs from Z v by Z grad psi: a held row is certain when its z from Zw lies
            # beyond its bound by more than sigma |z_r| |grad psi|; the others are looked at exactly
            if row_norms is None:
                row_norms = qp.Z.row_norms()
                counters.passes += float(np.sum(qp.Z.row_nnz)) / qp.nnz
            unsure = np.empty(held.shape[0], dtype=np.int32)
            unsure = unsure[: held_misses(held, x, inner.xp, Zw, qp.c, qp.K.a, qp.K.lower, qp.K.upper, sigma,
                                          inner.lam, row_norms, sigma * _norm(v - inner.ztx), unsure)]
            if unsure.shape[0] == 0:
                break
            Zv[unsure] = qp.Z.rows_matvec(unsure, v)
            counters.rows(qp.Z, unsure)
            inner.pt[unsure] = x[unsure] - sigma * (Zv[unsure] + qp.c[unsure])
            z = inner.pt[unsure] - inner.lam * qp.K.a[unsure]
            moved = np.count_nonzero(np.clip(z, qp.K.lower[unsure], qp.K.upper[unsure]) != inner.xp[unsure])
            if not moved:
                break
            # held rows that had to move: the solve goes on with them among its rows
            misses += moved
            screen_factor *= 2.0  # hold fewer rows from now on
            held = np.setdiff1d(held, unsure, assume_unique=True).astype(np.int32)
            rows = np.union1d(rows, unsure).astype(np.int32)
            early = False
            try:
                cur = inner.restricted(rows, qp.K.d - _dot(qp.K.a[held], inner.xp[held]))
                cur.reproject()
            except FastSVMError:  # rounding left d outside the rows' range: on over all rows
                Zv[held] = qp.Z.rows_matvec(held, v)
                counters.rows(qp.Z, held)
                inner.start(x, w, v, Zv, sigma)
                cur, rows, held = inner, None, None
        # a proximal step never raises f: when an inner solve that stopped short (max_newton) did,
        # x stays and sigma is lowered (covtype-like C = 32, tol 1e-6: after held rows joined, 50
        # Newton steps of alpha ~ 1e-3 ended at dual -2.7e9, and the next 10 outer iterations
        # crawled back: 518 passes instead of 35)
        f_new = qp.objective(inner.xp, inner.ztx)
        rejected = not (converged or early) and f_new > dual
        if rejected:      # back to the center, whose eta is exact (Zw_center)
            step_norm = 0.0
            Zw[:] = Zw_center
            estimated = False
        else:
            step_norm = _norm(inner.xp - x)
            J_last = inner.J.copy()
            x = inner.xp.copy()
            w = inner.ztx.copy()
            b = inner.lam / sigma
            dual = f_new
        grad = Zw + qp.c
        eta, b_kkt = kkt_est if estimated else kkt_residual(x, grad, qp.K, hint=b)
        # the AL's primal residual |Q w + c - z| = |x^{k+1} - x^k| / sigma, scaled as eta
        r_primal = step_norm / sigma / (1.0 + _norm(x) + _norm(grad))
        primal = primal_objective(qp, Zw, w, b)
        entry = {"iter": outer, "sigma": sigma, "newton": steps, "free": inner.n_free, "eta": eta,
                 "eta_estimated": estimated, "r_primal": r_primal, "primal": primal, "dual": dual,
                 "passes": qp.passes_over_X(counters.passes), "held": n_held, "held_misses": misses,
                 "rejected": rejected, "time": time.perf_counter() - t0}
        history.append(entry)
        if log is not None:
            log(progress_line(entry, tol))
        # an inner solve stopped far from its tolerance (max_newton, no decrease) can leave x with
        # a huge grad f and so a small eta at a poor point: such an x does not end the solve
        if eta <= tol and (converged or early or gnorm <= EARLY_GRAD * eps / math.sqrt(sigma)):
            status = "converged"
            break
        sigma = next_sigma(sigma, steps, converged, opts["sigma_factor"], r_primal >= PRIMAL_LAG * eta)
        # eta well above the AL's primal residual: x hardly moves, the inexact inner solves
        # limit eta (the error Z grad psi enters grad f); the next ones are solved tighter
        if not rejected:
            inner_scale = min(1.0, max(INNER_SCALE_MIN, r_primal / eta)) if eta > 0 else 1.0
        if not estimated:
            v, Zv = w.copy(), Zw.copy()
    w = qp.Z.rmatvec(x)  # exact, free of the incremental updates' rounding
    if estimated:         # max_outer ran out on an outer iteration whose eta was estimated
        qp.Z.matvec(w, out=Zw)
        counters.passes += 1
        eta, b_kkt = kkt_residual(x, Zw + qp.c, qp.K, hint=b)
    # the bias: the multiplier of Pi_K(x - grad f(x)) at the returned x (ALGORITHMS.md section 0)
    # rather than lam / sigma of the last inner projection, whose y carries the inner solve's
    # error sigma Z grad psi; equal at a solution, and the primal objective at (w, b_kkt) was
    # as good or better on every benchmark set (ijcnn1 C=256: relative gap 1.8e-3 -> 6.1e-4)
    primal = history[-1]["primal"] if history else math.nan
    if math.isfinite(b_kkt) and history:
        b = b_kkt
        primal = primal_objective(qp, Zw, w, b)
    return {"x": x, "w": w, "b": b, "eta": eta, "status": status, "outer": outer, "history": history,
            "newton": counters.newton, "passes": qp.passes_over_X(counters.passes + 1), "trials": counters.trials,
            "cg": counters.cg, "systems": dict(counters.systems), "sigma": sigma,
            "time": time.perf_counter() - t0, "primal_objective": primal,
            "b_kkt": b_kkt}


SPEC = SolverSpec(
    name="ssnal",
    solve=solve,
    formulations=("c_svc", "epsilon_svr"),
    kernels=("linear", "rbf", "polynomial", "sigmoid"),
    multiclass="ovo",
    default_kernel="linear",
    default_tol=DEFAULT_TOL,
    description="semismooth Newton augmented Lagrangian: C-SVC and epsilon-SVR to high accuracy",
    config=Config,
    stop_measure="eta, the relative KKT residual of ALGORITHMS.md section 0",
)
