"""NESVM (seed 001; ALGORITHMS.md section 3): linear SVMs in the primal by Nesterov smoothing.

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
                  zeros). The default: the local curvature of a small-mu hinge is 1-5 % of the
                  global bound, so it takes 4-9x fewer passes (tools/bench_nesvm.py).
    paper         the paper's eqs. 33-35 with the global L = 1 + lambda_max(A^T diag(C/rho) A) / mu
                  (1/mu more for the Huber-smoothed l1), prox-centre = the warm start.
Every iteration costs one A w and one A^T c pass (fastsvm._core._margins); the dual point comes
from the gradient's own product, so the certificate is nearly free.

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
from .._core._margins import LabeledRows, largest_eigenvalue
from ..errors import FastSVMError
from ..problems.hinge_lp import interior_point
from ..problems.linear_dual import balance_labels
from ..problems.vector import dot
from .base import (LinearConfig, Solution, SolveStatus, Subproblem, checked_binary_arrays, linear_run_settings,
                   linear_spec, option)

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
    mu_start: float = option(0.0, "the homotopy's first smoothing (0: min(1, 2 sqrt(-e)), sized from the "
                             "requested gap)", low=0.0)
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


class Objective:
    """One model's smoothed objective, gradient, proximal step and duality gap over LabeledRows.
    Vectors w have n_cols + 1 entries, the bias weight last."""

    def __init__(self, rows, penalty, loss):
        self.rows, self.penalty, self.loss = rows, penalty, loss
        self.C = rows.weights
        self.y = rows.labels
        self.n, self.p = rows.n_rows, rows.n_cols
        self.rho = rows.row_scales()
        self.coef = np.empty(self.n)          # the loss gradient's row coefficients
        self.product = np.empty(self.p + 1)   # A^T coef
        self.free_bias = rows.bias != 0.0
        self.passes = 0
        self.trace = []     # (passes, true objective) per iterate: tools measure passes to a gap by it
        if loss == "squared_error":
            # shifting every alpha_i (C_i > 0) by the same multiple of y_i moves X^T (y alpha) by this
            self.kept_labels = np.where(self.C > 0, self.y, 0.0)
            self.n_kept = int(np.count_nonzero(self.C > 0))
            self.shift_product = rows.rmatvec(self.kept_labels, np.empty(self.p + 1))

    # -- the primal --------------------------------------------------------------------------

    def margins(self, w, out):
        self.passes += 1
        return self.rows.margins(w, out)

    def loss_at(self, z, mu):
        """(smoothed loss, true loss) at margins z; the row coefficients of the loss gradient
        (-A^T coef) are left in self.coef."""
        if self.loss == "hinge":
            return smoothed_hinge_loss(z, self.rho, self.C, mu, self.coef, self.rows.n_threads)
        value = squared_error_loss(z, self.C, self.coef, self.rows.n_threads, self.loss == "squared_hinge")
        return value, value

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
        self.rows.rmatvec(self.coef, self.product)
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
        """The dual point of the last gradient (alpha its row coefficients, v = X^T y alpha) made
        feasible: y^T alpha = 0 when the bias is free, |v|_inf <= 1 for the l1 penalty. Copies
        only what it changes."""
        alpha, v = self.coef, self.product[:-1]
        s = float(self.product[-1]) / self.rows.bias if self.free_bias else 0.0   # y^T alpha
        if s != 0.0:
            alpha, v = alpha.copy(), v.copy()
            if self.loss == "squared_error":
                shift = s / max(self.n_kept, 1)
                alpha -= shift * self.kept_labels
                v -= shift * self.shift_product[:-1]
            else:
                balance_labels(self.rows, alpha, v, s, self.C if self.loss == "hinge" else None)
        if self.penalty == "l1":
            scale = float(np.abs(v).max(initial=0.0))
            if scale > 1.0:
                alpha, v = alpha / scale, v / scale
        return alpha, v

    def dual_values(self, alpha, v, mu, smoothed_penalty):
        """(D, D_mu) at the feasible dual point (alpha, v): the dual objective of the problem and
        of the smoothed one, sum alpha minus the conjugates of the loss (the smoothed hinge's
        mu rho alpha^2 / 2C, the squared losses' alpha^2 / 4C) and of the penalty (|v|^2 / 2; 0 for
        l1, mu |v|^2 / 2 for its Huber smoothing)."""
        total, _, scaled_squares, squares = alpha_sums(alpha, self.y, self.C, self.rho, self.rows.n_threads)
        loss = 0.0 if self.loss == "hinge" else 0.25 * squares
        loss_smooth = 0.5 * mu * scaled_squares if self.loss == "hinge" else loss
        penalty = 0.5 * dot(v, v) if self.penalty == "l2" else 0.0
        penalty_smooth = 0.5 * mu * dot(v, v) if smoothed_penalty else penalty
        return total - loss - penalty, total - loss_smooth - penalty_smooth


@dataclass
class Point:
    """An iterate with its margins A w and its objective values."""

    w: np.ndarray
    z: np.ndarray
    smooth: float = np.inf     # the differentiable part of the smoothed objective
    value: float = np.inf      # the smoothed objective F_mu(w): smooth + |w|_1 when l1 goes by its prox
    true: float = np.inf       # the objective F(w) itself

    def copy(self):
        return Point(self.w.copy(), self.z.copy(), self.smooth, self.value, self.true)


def evaluate(objective, point, mu, smoothed_penalty):
    """Point's objective values at smoothing mu; the loss gradient's row coefficients of point are
    left in objective.coef."""
    loss_smooth, loss_true = objective.loss_at(point.z, mu)
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

    def __init__(self, objective, config, mu, L, stop, fixed):
        self.objective, self.config, self.mu, self.L, self.stop = objective, config, mu, L, stop
        self.fixed = fixed
        self.smoothed_penalty = config.scheme == "paper" and objective.penalty == "l1"
        self.gap = self.smooth_gap = np.inf
        self.met = False
        self.calls = 0

    def certify(self, point, tol):
        """The relative gaps of point against the last gradient's dual point, every
        config.certify_every calls (the first included); True when the run stops here."""
        self.calls += 1
        if (self.calls - 1) % self.config.certify_every:
            return False
        obj = self.objective
        alpha, v = obj.dual_point()
        self.alpha = alpha.copy()     # the certificate's dual point: the solution's coefficients
        dual, dual_smooth = obj.dual_values(alpha, v, self.mu, self.smoothed_penalty)
        scale = max(abs(point.true), 1e-300)
        self.gap = (point.true - dual) / scale
        self.smooth_gap = (point.value - dual_smooth) / scale
        self.met = (self.smooth_gap if self.fixed else self.gap) <= tol
        return self.met or (not self.fixed and self.smooth_gap <= self.config.stage_share * self.gap)

    def run_backtracking(self, x, tol, budget):
        """FISTA with a local Lipschitz estimate and function-value restarts, from x."""
        obj, mu = self.objective, self.mu
        g = np.empty_like(x.w)
        extra, t, steps = x.copy(), 1.0, 0
        while steps < budget:
            if self.stop[0]:
                raise KeyboardInterrupt
            evaluate(obj, extra, mu, False)
            obj.gradient(extra.w, mu, False, g)
            steps += 1
            if self.certify(x, tol):
                break
            for _ in range(MAX_DOUBLINGS):
                new = Point(obj.step(extra.w, g, self.L), np.empty_like(x.z))
                obj.margins(new.w, new.z)
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
            extra = Point(new.w + beta * (new.w - x.w), new.z + beta * (new.z - x.z))
            x, t = new, t_new
            self.L = max(self.L * self.config.lipschitz_decay, 1e-12)
        return x, steps

    def run_paper(self, x, tol, budget):
        """Eqs. 33-35: constant L, the gradients accumulated about the prox-centre x."""
        obj, mu = self.objective, self.mu
        centre, total = x.w.copy(), np.zeros_like(x.w)
        w = Point(x.w.copy(), x.z.copy())
        g = np.empty_like(x.w)
        best, steps = x, 0
        while steps < budget:
            if self.stop[0]:
                raise KeyboardInterrupt
            evaluate(obj, w, mu, self.smoothed_penalty)
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
            w = Point((2.0 / (steps + 3)) * z_k + ((steps + 1) / (steps + 3)) * y_k, np.empty_like(x.z))
            obj.margins(w.w, w.z)
            steps += 1
        return best, steps


def interior_finish(objective, X, x, alpha, mu, tol, config, stop, log):
    """The LP-SVM solved exactly from the homotopy's point x (certificate alpha): an interior-point
    solve on the rows near or inside the margin and the features near the dual bound, repeated
    with the rows and features that break the whole problem's optimality conditions until none
    does, once more without the features the dual holds inside its bound; then the sparsest w
    (the smallest weights zeroed) that the certificate accepts. (Point, alpha, gap, rounds), or
    None when the last round cannot certify tol (the homotopy goes on)."""
    rows, y, C = objective.rows, objective.y, objective.C
    p = objective.p
    v = rows.rmatvec(alpha, np.empty(p + 1))[:p]
    in_rows = (x.z < 1.0 + config.working_band) & (C > 0)
    in_cols = (x.w[:p] != 0) | (np.abs(v) >= 1.0 - config.feature_band)
    lam, w, z = np.zeros(objective.n), np.zeros(p + 1), np.empty(objective.n)
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
        objective.margins(w, z)
        objective.passes += 1
        v = rows.rmatvec(lam, objective.product)[:p]
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
    np.copyto(objective.coef, lam)
    certificate, v = objective.dual_point()
    certificate = certificate.copy()
    dual = objective.dual_values(certificate, v, mu, False)[0]
    largest = float(np.abs(w[:p]).max(initial=0.0))
    for share in (1e-3, 1e-4, 1e-6, 0.0):     # the sparsest w the certificate accepts
        small = np.abs(w[:p]) <= share * largest
        small &= w[:p] != 0.0
        point = Point(w.copy(), z.copy())
        if small.any():                        # else w itself, whose margins z are known
            point.w[:p][small] = 0.0
            objective.margins(point.w, point.z)
        evaluate(objective, point, mu, False)
        gap = (point.true - dual) / max(abs(point.true), 1e-300)
        if gap <= tol:
            return point, certificate, gap, round_
    return None


def lipschitz_bound(objective, config, stop):
    """lambda_max(A^T D A) inflated, D = diag(C_i / rho_i) for the hinge (the smoothed loss's
    curvature times mu), diag(2 C_i) for the squared losses."""
    if objective.loss != "hinge":
        d = 2.0 * objective.C
    else:
        d = np.where(objective.rho > 0, objective.C / np.where(objective.rho > 0, objective.rho, 1.0), 0.0)
    lam = largest_eigenvalue(objective.rows, np.ascontiguousarray(d), config.power_steps, stop)
    objective.passes += 2 * config.power_steps
    if not np.isfinite(lam):
        raise FastSVMError(OVERFLOW)
    return config.lipschitz_safety * lam


def first_smoothing(tol):
    """The homotopy's first mu for a relative gap tol: min(1, 2 sqrt(tol)). A stage at a large mu
    is cheap but its optimum is far from the hinge's: against mu = 1 first, the certified stop
    comes after 1.0-1.8x fewer passes on a9a, w8a, ijcnn1 and phishing (C = 1 and 32, -e 1e-2
    and 1e-3) and 2.3x fewer on 1M covtype-like rows at C = 32, -e 1e-2 (811 against 1,878)."""
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


def solve_binary(sub):
    X, y, upper = checked_binary_arrays(sub, "nesvm")
    params = sub.params
    config, tol, max_iter, bias = linear_run_settings(SPEC, params, bias_by_default=True)
    penalty, loss = model_of(config, params)
    rows = LabeledRows(X, y, upper, bias=bias, n_threads=sub.n_threads)
    objective = Objective(rows, penalty, loss)
    started = time.perf_counter()

    curvature = lipschitz_bound(objective, config, sub.stop)
    smoothing = loss == "hinge"
    fixed = not smoothing or config.mu > 0
    mu = (config.mu or config.mu_start or first_smoothing(tol)) if smoothing else 1.0
    x = Point(np.zeros(rows.n_weights), np.zeros(rows.n_rows))
    evaluate(objective, x, mu, False)
    L = None
    history, steps, status = [], 0, SolveStatus.MAX_ITER
    gap, alpha = np.inf, objective.coef.copy()
    finishing = penalty == "l1" and loss == "hinge" and config.finish == "interior" and not fixed
    finish = None
    while steps < max_iter:
        global_L = (1.0 / mu if penalty == "l1" and config.scheme == "paper" else 0.0) + \
            (1.0 if penalty == "l2" else 0.0) + curvature / (mu if smoothing else 1.0)
        stage = Stage(objective, config, mu, global_L if (L is None or config.scheme == "paper") else L, sub.stop,
                      fixed)
        evaluate(objective, x, mu, stage.smoothed_penalty)
        run = stage.run_paper if config.scheme == "paper" else stage.run_backtracking
        x, taken = run(x, tol, max_iter - steps)
        alpha = stage.alpha
        steps += taken
        gap = stage.smooth_gap if fixed else stage.gap
        history.append({"stage": len(history) + 1, "mu": mu, "iterations": taken, "passes": objective.passes,
                        "objective": x.true, "gap": gap, "lipschitz": stage.L,
                        "seconds": time.perf_counter() - started})
        if sub.log is not None:
            sub.log(f"nesvm: stage {len(history)}  mu {mu:.3g}  iterations {taken}  passes {objective.passes}  "
                    f"objective {x.true:.10g}  relative gap {gap:.3e}")
        if stage.met:
            status = SolveStatus.CONVERGED
            break
        if finishing and gap <= config.finish_gap:
            finishing = False     # one attempt: if it cannot certify tol, the homotopy goes on
            finish = interior_finish(objective, X, x, alpha, mu, tol, config, sub.stop, sub.log)
            if finish is not None:
                x, alpha, gap, _ = finish
                status = SolveStatus.CONVERGED
                break
        if fixed:
            continue
        mu *= config.mu_shrink
        L = stage.L / config.mu_shrink     # the smoothed loss's curvature grows as 1/mu
    w = x.w
    if sub.log is not None:
        sub.log(f"nesvm: {status.value} after {steps} iterations ({objective.passes} passes), "
                f"objective {x.true:.10g}, relative duality gap {gap:.3e}")
    return Solution(
        coef=y * alpha,
        rho=-(float(w[-1]) * bias),
        w=np.ascontiguousarray(w[:-1]),
        objective=x.true,
        n_iter=steps,
        stop_measure=gap,
        status=status,
        history=history,
        details={"passes": objective.passes, "model": MODELS[(penalty, loss)], "bias_weight": float(w[-1]),
                 "smoothed_objective": x.value, "finish_rounds": 0 if finish is None else finish[3],
                 "mu": mu, "tol": tol, "max_iter": max_iter, "trace": np.array(objective.trace)},
    )


SPEC = linear_spec("nesvm", solve, Config, DEFAULT_TOL, stop_measure="the relative duality gap",
                   description="linear SVMs in the primal by Nesterov smoothing with a mu homotopy (NESVM): "
                               "C-SVM, LP-SVM (-o penalty=l1), LS-SVM (-L squared_error), squared hinge "
                               "(-L squared_hinge); the bias is never penalized")
