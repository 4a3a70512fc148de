"""NESVM (Zhou et al. 2010; docs/algorithms.md §3): linear SVMs in the primal by Nesterov smoothing.

The paper's three models over A = diag(y) [X, B 1], the bias b (w's last entry) never penalized:
    C-SVM   1/2 |w|^2 + sum_i C_i max(0, 1 - a_i.w)       (penalty l2, loss hinge)
    LP-SVM  |w|_1     + sum_i C_i max(0, 1 - a_i.w)       (penalty l1, loss hinge: sparse w)
    LS-SVM  1/2 |w|^2 + sum_i C_i (1 - a_i.w)^2           (penalty l2, loss squared_error)
and, as scikit-learn's LinearSVC defaults to it, the squared hinge max(0, 1 - a_i.w)^2 with either
penalty (smooth already: one stage, no mu).

The hinge is smoothed with the row's own scale rho_i = |a_i|_inf (fastsvm._core._losses), and the
smoothing mu is halved stage by stage (homotopy), each stage warm-started from the last, until the
duality gap of the problem itself -- not of the smoothed one -- is at most -e times the objective.
A stage ends when its own (smoothed) gap is a small share of the true one: the smoothing, not the
stage's inexactness, is then what is left to remove.

Two schemes run a stage (option scheme):
    backtracking  accelerated gradient (FISTA) with a local Lipschitz estimate (shrunk by 0.9
                  after each step, doubled when a step fails the sufficient-decrease test) and
                  function-value restarts; the l1 penalty by its prox (soft thresholding: exact
                  zeros). The default: the local curvature of a small-mu hinge is a small share of
                  the global bound, so it takes longer steps and fewer passes (tools/bench_nesvm.py).
    paper         the paper's eqs. 33-35 with the global L = 1 + lambda_max(A^T diag(C/rho) A) / mu
                  (1/mu more for the Huber-smoothed l1), prox-centre = the warm start.
Every iteration costs one A w and one A^T c pass (fastsvm._core._margins); the dual point comes
from the gradient's own product, so the certificate is nearly free. The per-row arithmetic is a
Block's (rows, margins of the iterates in named slots, the certificate) and the stages run over a
team of blocks (fastsvm.problems.blocks): one on a single machine, many on Dask workers for
fastsvm.distributed.fit_linear, the driver holding only w's, p-vectors and scalars.

The LP-SVM is a linear program, and first-order steps reach its vertex slowly (the gap stalls near
1e-4 at small mu). So once the homotopy's gap is below 0.3 (option finish), the homotopy's point
names a working set -- rows near or inside the margin, features near the dual bound -- and an
interior-point method (fastsvm.problems.hinge_lp) solves the LP on it; rows and features that
break the whole problem's optimality conditions join and it solves again. The certificate on
the whole problem decides, as everywhere: if it cannot meet -e, the homotopy goes on.
"""
import time
from dataclasses import dataclass

import numpy as np

from .._core._losses import alpha_sums, huber_norm, smoothed_hinge_loss, squared_error_loss
from .._core._margins import LabeledRows
from ..errors import FastSVMError
from ..problems.blocks import OneBlock, largest_eigenvalue
from ..problems.hinge_lp import interior_point
from ..problems.linear_dual import balance_rows, balance_sums, balance_team
from ..problems.vector import dot
from .base import (LinearConfig, Solution, SolveStatus, Subproblem, checked_binary_arrays, linear_run_settings,
                   LinearSolver, option)

DEFAULT_TOL = 1e-3       # relative duality gap
MAX_DOUBLINGS = 100      # a local Lipschitz estimate 2^100 times too small is not one: values overflowed
OVERFLOW = "nesvm: the objective overflowed; scale the data (fastsvm-scale) or lower C"
MODELS = {("l2", "hinge"): "C-SVM", ("l1", "hinge"): "LP-SVM", ("l2", "squared_error"): "LS-SVM",
          ("l2", "squared_hinge"): "L2-loss SVM", ("l1", "squared_hinge"): "L1-regularized L2-loss SVM"}


@dataclass(frozen=True)
class Config(LinearConfig):
    """max_iter counts gradient evaluations over all stages."""

    max_iter: int = 100000
    penalty: str = option("l2", "the penalty on w: l2 (C-SVM, LS-SVM) or l1 (LP-SVM, sparse w)",
                          choices=("l2", "l1"))
    scheme: str = option("backtracking", "how a stage runs: backtracking (local Lipschitz "
                         "estimate, restarts) or paper (eqs. 33-35, the global constant)",
                         choices=("backtracking", "paper"))
    mu: float = option(0.0, "a fixed smoothing: solve the smoothed problem itself (the paper's "
                       "setting); 0: the homotopy down to the hinge optimum", low=0.0)
    mu_start: float = option(0.0, "the homotopy's first smoothing (0: min(1, 2 sqrt(g)), sized from the "
                             "gap g it must reach: -e, or the LP-SVM finish's 0.3)", low=0.0)
    mu_shrink: float = option(0.5, "the smoothing's factor from one stage to the next", low=0.0,
                              low_open=True, below=1.0)
    stage_share: float = 0.5      # a stage ends when its smoothed gap <= this share of the true gap
    power_steps: int = 20         # power-iteration steps for lambda_max(A^T D A)
    lipschitz_safety: float = 1.05   # power iteration approaches lambda_max from below
    lipschitz_decay: float = 0.9     # backtracking: L shrinks by this factor after each success
    certify_every: int = 5           # iterations between two dual points: their projection is O(n) work
                                     # on one thread, and a late stop costs at most this many steps
    finish: str = option("interior", "how the LP-SVM ends: interior (once the homotopy's gap is "
                         "below 0.3, an interior-point solve of the LP on its working set of rows "
                         "and features, grown until the whole problem's optimality conditions "
                         "hold) or none (the homotopy alone)", choices=("interior", "none"))
    finish_gap: float = 0.3          # the homotopy's gap that hands the LP-SVM to the interior point
    working_band: float = 0.2        # the working set's rows: margin < 1 + band
    feature_band: float = 0.5        # its features: |A^T alpha| > 1 - band (a feature costs little)
    max_working_features: int = 4000  # the interior point's dense normal matrix is this square
    idle_margin: float = 1e-4        # features with |A^T lambda| below 1 - this leave the working set


SLOTS = ("z0", "z1", "z2")    # the blocks' margin buffers a Point can name (three points at most in use)


def free_slot(*taken):
    """The first margin slot none of the points in use names."""
    return next(slot for slot in SLOTS if slot not in taken)


class Block:
    """One block of rows and its per-sample state: the smoothing scales rho, the loss gradient's row
    coefficients coef, the margins of the iterates in named slots (a Point names its slot: roles
    change by renaming, not by copying n-vectors), and the certificate's dual point. NESVM's
    per-row arithmetic, one method per map over the rows; what a method returns is summed over the
    blocks (p-vectors, a few scalars). The single-machine solve is one block
    (fastsvm.problems.blocks.OneBlock), fastsvm.distributed's holds many on the workers, and both
    run the homotopy below."""

    def __init__(self, X, y, upper, bias, loss, *, n_threads=1):
        self.rows = LabeledRows(X, y, upper, bias=bias, n_threads=n_threads)
        self.loss_name, self.C, self.y, n = loss, self.rows.weights, self.rows.labels, self.rows.n_rows
        self.rho = self.rows.row_scales()
        self.coef, self.certificate = np.empty(n), np.empty(n)
        self.product, self.slots = np.empty(self.rows.n_weights), {}
        if loss == "squared_error":
            # shifting every alpha_i (C_i > 0) by the same multiple of y_i keeps its dual feasible
            self.kept_labels = np.where(self.C > 0, self.y, 0.0)

    def slot(self, name):
        if name not in self.slots:
            self.slots[name] = np.empty(self.rows.n_rows)
        return self.slots[name]

    def curvature_product(self, v):
        """A^T D A v, D = diag(C_i / rho_i) for the hinge (the smoothed loss's curvature times mu;
        0 where rho_i = 0), diag(2 C_i) for the squared losses: the power iteration's few steps."""
        z = self.rows.margins(v, np.empty(self.rows.n_rows))
        if self.loss_name == "hinge":
            z *= np.where(self.rho > 0, self.C / np.where(self.rho > 0, self.rho, 1.0), 0.0)
        else:
            z *= 2.0 * self.C
        return self.rows.rmatvec(z, np.empty(self.rows.n_weights))

    def shift_product(self):
        """(A^T of the kept labels, their count): the squared error's balancing move."""
        product = self.rows.rmatvec(self.kept_labels, np.empty(self.rows.n_weights))
        return np.append(product, float(np.count_nonzero(self.C > 0)))

    def start(self, slot):
        """The start point w = 0: its margins."""
        self.slot(slot)[:] = 0.0

    def margins(self, w, slot):
        self.rows.margins(w, self.slot(slot))

    def extrapolate(self, new, old, beta, out):
        """Margins new + beta (new - old) into slot out (which may be old)."""
        z = self.slot(out)
        np.subtract(self.slots[new], self.slots[old], out=z)
        z *= beta
        z += self.slots[new]

    def loss(self, slot, mu):
        """(smoothed loss, true loss) at the slot's margins; the loss gradient's row coefficients
        (the gradient is -A^T coef) left in coef."""
        z = self.slots[slot]
        if self.loss_name == "hinge":
            return np.array(smoothed_hinge_loss(z, self.rho, self.C, mu, self.coef, n_threads=self.rows.n_threads))
        value = squared_error_loss(z, self.C, self.coef, self.rows.n_threads, self.loss_name == "squared_hinge")
        return np.array([value, value])

    def gradient(self):
        """A^T coef."""
        return self.rows.rmatvec(self.coef, self.product)

    def loss_and_gradient(self, slot, mu):
        """loss then gradient, their results in one vector: one round trip for a team on workers."""
        return np.concatenate((self.loss(slot, mu), self.gradient()))

    def take_certificate(self):
        np.copyto(self.certificate, self.coef)

    def shift_certificate(self, shift):
        self.certificate -= shift * self.kept_labels

    def balance_sums(self, sign):
        return np.array(balance_sums(self.rows, self.certificate, sign, self.upper_bound()))

    def balance(self, sign, use_inside, ratio):
        return balance_rows(self.rows, self.certificate, sign, self.upper_bound(), use_inside, ratio=ratio)

    def upper_bound(self):
        return self.C if self.loss_name == "hinge" else None

    def scale_certificate(self, scale):
        self.certificate /= scale

    def certificate_sums(self):
        """(sum alpha, y^T alpha, sum rho alpha^2 / C, sum alpha^2 / C) at the certificate."""
        return alpha_sums(self.certificate, self.y, self.C, self.rho, self.rows.n_threads)

    def dual_coef(self):
        return self.y * self.certificate


class Objective:
    """One model's smoothed objective, gradient, proximal step and duality gap over a team of
    Blocks: the driver's side, holding w's (n_cols + 1 entries, the bias weight last), scalars
    and the p-vectors the blocks sum."""

    def __init__(self, team, penalty, loss):
        self.team, self.penalty, self.loss = team, penalty, loss
        self.p, self.bias = team.n_weights - 1, team.bias
        self.free_bias = team.bias != 0.0
        self.product = None     # A^T coef of the last gradient
        self.ahead = None       # A^T coef fetched with the last loss, for the gradient that follows
        self.passes = 0
        self.trace = []     # (passes, true objective) per iterate: tools measure passes to a gap by it
        if loss == "squared_error":
            sums = team.sum("shift_product")
            self.shift_product, self.n_kept = sums[:-1], int(sums[-1])

    # -- the primal --------------------------------------------------------------------------

    def margins(self, w, slot):
        self.passes += 1
        self.team.each("margins", w, slot)

    def loss_at(self, slot, mu, with_gradient=False):
        """(smoothed loss, true loss) at the margins in slot; the loss gradient's row coefficients
        (-A^T coef) are left on the blocks. with_gradient: A^T coef comes in the same call, for
        the gradient to be asked next (counted then)."""
        if not with_gradient:
            smooth, true = self.team.sum("loss", slot, mu)
            return float(smooth), float(true)
        sums = self.team.sum("loss_and_gradient", slot, mu)
        self.ahead = sums[2:]
        return float(sums[0]), float(sums[1])

    def penalty_value(self, w, mu, smoothed):
        """The penalty at w: |w|^2 / 2, |w|_1, or its Huber smoothing (the paper scheme's l1)."""
        if self.penalty == "l2":
            return 0.5 * dot(w[:-1], w[:-1])
        if smoothed:
            return huber_norm(np.ascontiguousarray(w[:-1]), mu, np.empty(self.p))
        return float(np.abs(w[:-1]).sum())

    def gradient(self, w, mu, smoothed, out):
        """The gradient of the smooth part at the point whose loss_at was last called."""
        self.passes += 1
        self.product = self.team.sum("gradient") if self.ahead is None else self.ahead
        self.ahead = None
        np.negative(self.product, out=out)
        if self.penalty == "l2":
            out[:-1] += w[:-1]
        elif smoothed:
            grad = np.empty(self.p)
            huber_norm(np.ascontiguousarray(w[:-1]), mu, grad)
            out[:-1] += grad
        if not self.free_bias:
            out[-1] = 0.0
        return out

    def step(self, w, g, L):
        """The (proximal) gradient step from w with step 1/L: soft thresholding for the l1 penalty."""
        w_new = w - g / L
        if self.penalty == "l1":
            head = w_new[:-1]
            np.copyto(head, np.sign(head) * np.maximum(np.abs(head) - 1.0 / L, 0.0))
        return w_new

    # -- the dual ----------------------------------------------------------------------------

    def dual_point(self):
        """The dual point of the last gradient (alpha its row coefficients, the blocks'
        certificate; v = X^T y alpha) made feasible: y^T alpha = 0 when the bias is free,
        |v|_inf <= 1 for the l1 penalty. v returned."""
        v = self.product[:-1]
        s = float(self.product[-1]) / self.bias if self.free_bias else 0.0   # y^T alpha
        self.team.each("take_certificate")
        if s != 0.0:
            if self.loss == "squared_error":
                shift = s / max(self.n_kept, 1)
                self.team.each("shift_certificate", shift)
                v = v - shift * self.shift_product[:-1]
            else:
                v = balance_team(self.team, v, s)
        if self.penalty == "l1":
            scale = float(np.abs(v).max(initial=0.0))
            if scale > 1.0:
                self.team.each("scale_certificate", scale)
                v = v / scale
        return v

    def dual_values(self, v, mu, smoothed_penalty):
        """(D, D_mu) at the feasible dual point (the blocks' certificate alpha, v): the dual
        objective of the problem and of the smoothed one, sum alpha minus the conjugates of the
        loss (the smoothed hinge's mu rho alpha^2 / 2C, the squared losses' alpha^2 / 4C) and of
        the penalty (|v|^2 / 2; 0 for l1, mu |v|^2 / 2 for its Huber smoothing)."""
        total, _, scaled_squares, squares = (float(s) for s in self.team.sum("certificate_sums"))
        loss = 0.0 if self.loss == "hinge" else 0.25 * squares
        loss_smooth = 0.5 * mu * scaled_squares if self.loss == "hinge" else loss
        penalty = 0.5 * dot(v, v) if self.penalty == "l2" else 0.0
        penalty_smooth = 0.5 * mu * dot(v, v) if smoothed_penalty else penalty
        return total - loss - penalty, total - loss_smooth - penalty_smooth


@dataclass
class Point:
    """An iterate: w, the blocks' slot of its margins A w, and its objective values."""

    w: np.ndarray
    slot: str
    smooth: float = np.inf     # the differentiable part of the smoothed objective
    value: float = np.inf      # the smoothed objective F_mu(w): smooth + |w|_1 when l1 goes by its prox
    true: float = np.inf       # the objective F(w) itself

    def copy(self):
        """w copied; the margins' slot shared (neither is changed in place)."""
        return Point(self.w.copy(), self.slot, self.smooth, self.value, self.true)


def evaluate(objective, point, mu, smoothed_penalty, with_gradient=False):
    """Point's objective values at smoothing mu; the loss gradient's row coefficients of point are
    left on the blocks (with_gradient: and the gradient's product fetched with them)."""
    loss_smooth, loss_true = objective.loss_at(point.slot, mu, with_gradient)
    exact_penalty = objective.penalty_value(point.w, mu, False)
    if objective.penalty == "l1" and not smoothed_penalty:      # by its prox: not in the smooth part
        point.smooth = loss_smooth
        point.value = loss_smooth + exact_penalty
    else:
        penalty = objective.penalty_value(point.w, mu, True) if smoothed_penalty else exact_penalty
        point.smooth = point.value = loss_smooth + penalty
    point.true = loss_true + exact_penalty
    objective.trace.append((objective.passes, point.true))
    return point


class Stage:
    """One smoothing level's run: iterations until the gap meets tol (``met``) or, in a homotopy,
    the smoothed problem's gap is a small share of the true one (the next stage's turn). A fixed
    stage (a fixed mu, or a loss that needs no smoothing) meets tol on its own gap."""

    def __init__(self, objective, config, mu, L, stop, *, fixed):
        self.objective, self.config, self.mu, self.L, self.stop = objective, config, mu, L, stop
        self.fixed = fixed
        self.smoothed_penalty = config.scheme == "paper" and objective.penalty == "l1"
        self.gap = self.smooth_gap = np.inf
        self.met = False
        self.calls = 0

    def certify(self, point, tol):
        """The relative gaps of point against the last gradient's dual point (left on the blocks:
        the solution's coefficients), every config.certify_every calls (the first included); True
        when the run stops here."""
        self.calls += 1
        if (self.calls - 1) % self.config.certify_every:
            return False
        obj = self.objective
        v = obj.dual_point()
        dual, dual_smooth = obj.dual_values(v, self.mu, self.smoothed_penalty)
        scale = max(abs(point.true), 1e-300)
        self.gap = (point.true - dual) / scale
        self.smooth_gap = (point.value - dual_smooth) / scale
        self.met = (self.smooth_gap if self.fixed else self.gap) <= tol
        return self.met or (not self.fixed and self.smooth_gap <= self.config.stage_share * self.gap)

    def run_backtracking(self, x, tol, budget):
        """FISTA with a local Lipschitz estimate and function-value restarts, from x. Three margin
        slots: x's, the extrapolated point's (at first x's own), and the trial step's."""
        obj, mu, team = self.objective, self.mu, self.objective.team
        g = np.empty_like(x.w)
        extra, t, steps = x.copy(), 1.0, 0
        while steps < budget:
            if self.stop[0]:
                raise KeyboardInterrupt
            evaluate(obj, extra, mu, False, with_gradient=True)
            obj.gradient(extra.w, mu, False, g)
            steps += 1
            if self.certify(x, tol):
                break
            for _ in range(MAX_DOUBLINGS):
                new = Point(obj.step(extra.w, g, self.L), free_slot(x.slot, extra.slot))
                obj.margins(new.w, new.slot)
                evaluate(obj, new, mu, False)
                d = new.w - extra.w
                bound = extra.smooth + dot(g, d) + 0.5 * self.L * dot(d, d)
                if new.smooth <= bound + 1e-12 * abs(extra.smooth) or not np.isfinite(new.smooth):
                    break
                self.L *= 2.0
            else:
                raise FastSVMError(OVERFLOW)   # no step decreases: non-finite values on the way
            if not np.isfinite(new.smooth):
                raise FastSVMError(OVERFLOW)
            if new.value > x.value:
                # the momentum overshot: take the step, restart the momentum from it
                x, t, extra = new, 1.0, new.copy()
                continue
            t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
            beta = (t - 1.0) / t_new
            extra = Point(new.w + beta * (new.w - x.w), x.slot)    # x's margins are not needed again
            team.each("extrapolate", new.slot, x.slot, beta, extra.slot)
            x, t = new, t_new
            self.L = max(self.L * self.config.lipschitz_decay, 1e-12)
        return x, steps

    def run_paper(self, x, tol, budget):
        """Eqs. 33-35: constant L, the gradients accumulated about the prox-centre x."""
        obj, mu = self.objective, self.mu
        centre, total = x.w.copy(), np.zeros_like(x.w)
        w = Point(x.w.copy(), x.slot)
        g = np.empty_like(x.w)
        best, steps = x, 0
        while steps < budget:
            if self.stop[0]:
                raise KeyboardInterrupt
            evaluate(obj, w, mu, self.smoothed_penalty, with_gradient=True)
            if not np.isfinite(w.smooth):
                raise FastSVMError(OVERFLOW)
            obj.gradient(w.w, mu, self.smoothed_penalty, g)
            if w.true <= best.true:
                best = w.copy()
            if self.certify(best, tol):
                break
            y_k = w.w - g / self.L
            total += 0.5 * (steps + 1) * g
            z_k = centre - total / self.L
            w = Point((2.0 / (steps + 3)) * z_k + ((steps + 1) / (steps + 3)) * y_k, free_slot(best.slot))
            obj.margins(w.w, w.slot)
            steps += 1
        return best, steps


def interior_finish(objective, block, X, x, mu, *, tol, config, stop, log):
    """The LP-SVM solved exactly from the homotopy's point x (its certificate on the one block): an
    interior-point solve on the rows near or inside the margin and the features near the dual
    bound, repeated with the rows and features that break the whole problem's optimality
    conditions until none does, once more without the features the dual holds inside its bound;
    then the sparsest w (the smallest weights zeroed) that the certificate accepts, the block's
    certificate its dual point. (Point, gap, rounds), or None when the last round cannot certify
    tol (the homotopy goes on from x, its certificate kept). Single machine: it reads the rows."""
    rows, y, C = block.rows, block.y, block.C
    p = objective.p
    v = rows.rmatvec(block.certificate, np.empty(p + 1))[:p]
    in_rows = (block.slots[x.slot] < 1.0 + config.working_band) & (C > 0)
    in_cols = (x.w[:p] != 0) | (np.abs(v) >= 1.0 - config.feature_band)
    lam, w, z_slot = np.zeros(rows.n_rows), np.zeros(p + 1), free_slot(x.slot)
    pruned = False
    for round_ in range(1, 11):
        if np.count_nonzero(in_cols) + 1 > config.max_working_features:
            return None
        r, f = np.flatnonzero(in_rows), np.flatnonzero(in_cols)
        try:
            w_f, b, lam_r, iterations, measure = interior_point(
                X[r][:, f], y[r], C[r], rows.bias, min(1e-8, 1e-2 * tol), stop=stop)
        except np.linalg.LinAlgError:
            return None
        w[:] = 0.0
        w[f], w[p] = w_f, b
        lam[:] = 0.0
        lam[r] = np.clip(lam_r, 0.0, C[r])
        objective.margins(w, z_slot)
        z = block.slots[z_slot]
        objective.passes += 1
        objective.product = rows.rmatvec(lam, block.product)
        v = objective.product[:p]
        new_rows = (z < 1.0 - 1e-6) & ~in_rows & (C > 0)
        new_cols = (np.abs(v) > 1.0 + 1e-6) & ~in_cols
        # once: features the dual holds strictly inside its bound leave, and the LP is solved
        # without them -- near-flat directions leave such weights small but not zero
        joins = new_rows.any() or new_cols.any()
        trusted = measure <= 0.1 * config.idle_margin     # lambda accurate enough to tell
        idle = in_cols & (np.abs(v) < 1.0 - config.idle_margin) & (not joins and not pruned and trusted)
        if log is not None:
            log(f"nesvm: interior-point finish {round_}: {r.size} rows, {f.size} features, {iterations} "
                f"iterations (measure {measure:.1e}); {np.count_nonzero(new_rows)} rows and "
                f"{np.count_nonzero(new_cols)} features join, {np.count_nonzero(idle)} leave")
        if not joins and not idle.any():
            break
        pruned |= bool(idle.any())
        in_rows |= new_rows
        in_cols = (in_cols | new_cols) & ~idle
    kept = block.certificate.copy()
    np.copyto(block.coef, lam)
    v = objective.dual_point()
    dual = objective.dual_values(v, mu, False)[0]
    largest = float(np.abs(w[:p]).max(initial=0.0))
    for share in (1e-3, 1e-4, 1e-6, 0.0):     # the sparsest w the certificate accepts
        small = np.abs(w[:p]) <= share * largest
        small &= w[:p] != 0.0
        point = Point(w.copy(), z_slot)
        if small.any():                        # else w itself, whose margins are known
            point.w[:p][small] = 0.0
            point.slot = free_slot(x.slot, z_slot)
            objective.margins(point.w, point.slot)
        evaluate(objective, point, mu, False)
        gap = (point.true - dual) / max(abs(point.true), 1e-300)
        if gap <= tol:
            return point, gap, round_
    np.copyto(block.certificate, kept)
    return None


def lipschitz_bound(objective, config, stop):
    """lambda_max(A^T D A) inflated, D = diag(C_i / rho_i) for the hinge (the smoothed loss's
    curvature times mu), diag(2 C_i) for the squared losses (Block.curvature_product)."""
    lam = largest_eigenvalue(objective.team, "curvature_product", config.power_steps, stop)
    objective.passes += 2 * config.power_steps
    if not np.isfinite(lam):
        raise FastSVMError(OVERFLOW)
    return config.lipschitz_safety * lam


def first_smoothing(tol):
    """The homotopy's first mu for a relative gap tol: min(1, 2 sqrt(tol)). A stage at a large mu
    is cheap but its optimum is far from the hinge's, so a first mu sized from tol reaches the
    certified stop in fewer passes than mu = 1 first (tools/bench_nesvm.py)."""
    return min(1.0, 2.0 * float(np.sqrt(tol)))


def model_of(config, params):
    loss = params.loss or "hinge"
    if (config.penalty, loss) not in MODELS:
        raise FastSVMError(f"nesvm: penalty {config.penalty} with loss {loss} is not one of its models "
                           "(l2 or l1 with hinge or squared_hinge; l2 with squared_error: LS-SVM)")
    return config.penalty, loss


def solve(sub: Subproblem) -> Solution:
    """One binary problem by smoothing and homotopy; the returned w is certified by its gap."""
    # overflow is caught where it matters (OVERFLOW); NumPy's warnings on the way would be noise
    with np.errstate(over="ignore", invalid="ignore"):
        return solve_binary(sub)


def homotopy(team, penalty, loss, config, tol, *, max_iter, stop, log=None, name="nesvm", finish=None):
    """NESVM's stages over a team of Blocks (OneBlock, or fastsvm.distributed's): only w's, the
    summed p-vectors and scalars pass between the driver and the blocks; the certificate's dual
    point stays on the blocks. finish(objective, x, mu): the LP-SVM's interior-point finish
    (single machine), or None. A dict of w (bias weight last), the objective, smoothed objective,
    gap, iterations, status, history, passes, trace, the last mu and the finish's rounds."""
    objective = Objective(team, penalty, loss)
    started = time.perf_counter()

    curvature = lipschitz_bound(objective, config, stop)
    smoothing = loss == "hinge"
    fixed = not smoothing or config.mu > 0
    finishing = finish is not None and not fixed
    # a finished LP-SVM's homotopy only has to reach the finish's gap: its first mu is sized from
    # that: the smaller mu -e would give costs many more passes, and the finish makes them up
    first = first_smoothing(max(tol, config.finish_gap) if finishing else tol)
    mu = (config.mu or config.mu_start or first) if smoothing else 1.0
    x = Point(np.zeros(team.n_weights), SLOTS[0])
    team.each("start", x.slot)
    evaluate(objective, x, mu, False)
    team.each("take_certificate")      # the start's coefficients, should no stage certify
    L = None
    history, steps, status = [], 0, SolveStatus.MAX_ITER
    gap = np.inf
    rounds = 0
    while steps < max_iter:
        global_L = (1.0 / mu if penalty == "l1" and config.scheme == "paper" else 0.0) + \
            (1.0 if penalty == "l2" else 0.0) + curvature / (mu if smoothing else 1.0)
        stage = Stage(objective, config, mu, global_L if (L is None or config.scheme == "paper") else L, stop,
                      fixed=fixed)
        evaluate(objective, x, mu, stage.smoothed_penalty)
        run = stage.run_paper if config.scheme == "paper" else stage.run_backtracking
        x, taken = run(x, tol, max_iter - steps)
        steps += taken
        gap = stage.smooth_gap if fixed else stage.gap
        history.append({"stage": len(history) + 1, "mu": mu, "iterations": taken, "passes": objective.passes,
                        "objective": x.true, "gap": gap, "lipschitz": stage.L,
                        "seconds": time.perf_counter() - started})
        if log is not None:
            log(f"{name}: stage {len(history)}  mu {mu:.3g}  iterations {taken}  passes {objective.passes}  "
                f"objective {x.true:.10g}  relative gap {gap:.3e}")
        if stage.met:
            status = SolveStatus.CONVERGED
            break
        if finishing and gap <= config.finish_gap:
            finishing = False     # one attempt: if it cannot certify tol, the homotopy goes on
            finished = finish(objective, x, mu)
            if finished is not None:
                x, gap, rounds = finished
                status = SolveStatus.CONVERGED
                break
        if fixed:
            continue
        mu *= config.mu_shrink
        L = stage.L / config.mu_shrink     # the smoothed loss's curvature grows as 1/mu
    if log is not None:
        log(f"{name}: {status.value} after {steps} iterations ({objective.passes} passes), "
            f"objective {x.true:.10g}, relative duality gap {gap:.3e}")
    return {"w": x.w, "objective": x.true, "smoothed_objective": x.value, "gap": gap, "n_iter": steps,
            "status": status, "history": history, "passes": objective.passes, "trace": objective.trace, "mu": mu,
            "finish_rounds": rounds}


def solve_binary(sub):
    X, y, upper = checked_binary_arrays(sub, "nesvm")
    params = sub.params
    config, tol, max_iter, bias = linear_run_settings(SOLVER, params, bias_by_default=True)
    penalty, loss = model_of(config, params)
    block = Block(X, y, upper, bias, loss, n_threads=sub.n_threads)
    finish = None
    if penalty == "l1" and loss == "hinge" and config.finish == "interior":
        def finish(objective, x, mu):
            return interior_finish(objective, block, X, x, mu, tol=tol, config=config, stop=sub.stop, log=sub.log)
    run = homotopy(OneBlock(block), penalty, loss, config, tol, max_iter=max_iter, stop=sub.stop, log=sub.log,
                   finish=finish)
    w = run["w"]
    return Solution(
        coef=block.dual_coef(),
        rho=-(float(w[-1]) * bias),
        w=np.ascontiguousarray(w[:-1]),
        objective=run["objective"],
        n_iter=run["n_iter"],
        stop_measure=run["gap"],
        status=run["status"],
        history=run["history"],
        details={"passes": run["passes"], "model": MODELS[(penalty, loss)], "bias_weight": float(w[-1]),
                 "smoothed_objective": run["smoothed_objective"], "finish_rounds": run["finish_rounds"],
                 "mu": run["mu"], "tol": tol, "max_iter": max_iter, "trace": np.array(run["trace"])},
    )


class NESVM(LinearSolver):
    name = "nesvm"
    default_tol = DEFAULT_TOL
    description = ("linear SVMs in the primal by Nesterov smoothing with a mu homotopy (NESVM): "
                   "C-SVM, LP-SVM (-o penalty=l1), LS-SVM (-L squared_error), squared hinge "
                   "(-L squared_hinge); the bias is never penalized")
    stop_measure = "the relative duality gap"
    config = Config

    solve = staticmethod(solve)


SOLVER = NESVM()
