"""SVM-ALM (seed 002; ALGORITHMS.md section 4): the Lp-loss linear SVM in the primal by augmented
Lagrange multipliers.

    min  1/2 |w|^2 + sum_i C_i max(0, 1 - a_i.w)^p,   p >= 1,   a_i = y_i [x_i, B]

(w's last entry the bias weight, never penalized; -B 0 drops it). The margins' shortfalls
s = 1 - A w are split off as variables with multipliers nu (nu_i = y_i lambda_i of the paper) and
a penalty mu, and each iteration is one alternation (ADMM):

    s   <- the prox of gamma_i max(0, .)^p at 1 - A w - nu / mu,  gamma_i = C_i / mu
           (closed forms for p = 1, 2; Newton in a bracket else: fastsvm._core._losses)
    w   <- argmin |w_head|^2 / mu + |A w - (1 - s - nu / mu)|^2
           inexact: one gradient step with the exact line search (two passes, A w kept updated);
           exact: conjugate gradients from the last w
    nu  <- nu + mu (A w - 1 + s)

so an iteration is two mat-vecs (fastsvm._core._margins) and one fused pass of per-sample updates
(fastsvm._core._losses.multiplier_step: the last step's margins and multipliers, the next prox). A growing
mu freezes the iterates short of the optimum (one alternation per multiplier step), so mu stays
fixed, chosen from the data (option mu to set it, mu_growth for the paper's schedule). The dual
point alpha = -nu (in [0, C] for p = 1, >= 0 else; y^T alpha = 0 restored) certifies the stop:
the relative duality gap (P(w) - D(alpha)) / P(w) <= -e, looked at every few iterations.
"""
import time
from dataclasses import dataclass

import numpy as np

from .._core._cg import conjugate_gradient
from .._core._losses import multiplier_step, power_hinge_conjugate_sum, power_hinge_loss
from .._core._margins import LabeledRows, largest_eigenvalue
from ..errors import FastSVMError
from ..problems.linear_dual import balance_labels
from ..problems.vector import dot
from .base import (LinearConfig, Solution, SolveStatus, checked_binary_arrays, is_milestone, linear_run_settings,
                   linear_spec, option)

DEFAULT_TOL = 1e-3       # relative duality gap
POWER_OF_LOSS = {"hinge": 1.0, "squared_hinge": 2.0}


@dataclass(frozen=True)
class Config(LinearConfig):
    """max_iter counts multiplier steps."""

    max_iter: int = 100000
    p: float = option(0.0, "the loss power p >= 1 of max(0, 1 - y f)^p (0: from -L, 1 for hinge, 2 for "
                      "squared_hinge)", low=0.0)
    step: str = option("inexact", "the (w, b) step: inexact (one gradient step with the exact line "
                       "search) or exact (conjugate gradients)", choices=("inexact", "exact"))
    mu: float = option(0.0, "the penalty mu, fixed (0: chosen from the data)", low=0.0)
    mu_growth: float = option(1.0, "mu's factor per iteration (the paper grows it; above 1 the "
                              "iterates can freeze short of the optimum)", low=1.0)
    certify_every: int = 5        # iterations between two duality gaps (one more pass each)
    power_steps: int = 5          # power iteration for lambda_max(A^T A), the data's scale for mu (a
                                  # scale: settled to 4 digits after 3 steps on a9a, w8a, ijcnn1, phishing)
    cg_rtol: float = 1e-3         # the exact step's residual relative to its right-hand side (a correction:
                                  # it shrinks as the iterates converge)
    cg_max_iter: int = 500


class Certificate:
    """The primal objective at margins z and the dual objective at the multipliers' dual point."""

    def __init__(self, rows, p):
        self.rows, self.p = rows, p
        self.C = rows.weights
        self.product = np.empty(rows.n_weights)
        self.free_bias = rows.bias != 0.0

    def primal(self, w, z):
        head = w[:-1]
        return 0.5 * dot(head, head) + power_hinge_loss(z, self.C, self.p, self.rows.n_threads)

    def dual(self, nu):
        """D(alpha) at alpha = -nu made feasible (the box for p = 1, y^T alpha = 0)."""
        alpha = np.maximum(-nu, 0.0)
        if self.p == 1.0:
            np.minimum(alpha, self.C, out=alpha)
        self.rows.rmatvec(alpha, self.product)
        v = self.product[:-1]
        excess = float(self.product[-1]) / self.rows.bias if self.free_bias else 0.0
        if excess != 0.0:
            v = v.copy()
            balance_labels(self.rows, alpha, v, excess, self.C if self.p == 1.0 else None)
        conjugate = power_hinge_conjugate_sum(alpha, self.C, self.p, self.rows.n_threads)
        value = float(alpha.sum()) - 0.5 * dot(v, v) - conjugate
        return value, alpha


def data_penalty(rows, p, config, stop):
    """mu from the data: mean(C) n / lambda_max(A^T A), a third of it for p > 1. Measured against
    fixed mu from 0.01 to 30 (iterations to a 1e-6 gap on heart_scale, a1a and phishing, C = 1
    and 32): within 2x of the best fixed mu's count for p = 1, within 3x for p = 2; the best mu
    grows about as C."""
    lam = largest_eigenvalue(rows, np.ones(rows.n_rows), config.power_steps, stop)
    if not np.isfinite(lam):
        raise FastSVMError("alm: the data overflowed; scale the data (fastsvm-scale)")
    scale = float(np.mean(rows.weights)) * rows.n_rows / lam if lam > 0 else 1.0
    return scale * (1.0 if p == 1.0 else 1.0 / 3.0)


class Steps:
    """The (w, b) step of the iteration, inexact or exact: w moved in place, and the step's move of
    the margins A w left as step * q (the multiplier update applies it)."""

    def __init__(self, rows, config):
        self.rows, self.config = rows, config
        self.g, self.q = np.empty(rows.n_weights), np.empty(rows.n_rows)
        if config.step == "exact":     # the CG products' buffers
            self.margins, self.product = np.empty(rows.n_rows), np.empty(rows.n_weights)
        self.passes = 0

    def inexact(self, w, res, mu, stop):
        """One steepest-descent step with the exact line search on |w_head|^2 / mu + |A w - target|^2,
        res = A w - target: the step length."""
        g, q = self.g, self.q
        self.rows.rmatvec(res, g)
        g[:-1] += w[:-1] / mu
        if self.rows.bias == 0.0:
            g[-1] = 0.0
        self.rows.margins(g, q)
        self.passes += 2
        head = g[:-1]
        denominator = dot(q, q) + dot(head, head) / mu
        step = dot(g, g) / denominator if denominator > 0.0 else 0.0
        w -= step * g
        return step

    def exact(self, w, res, mu, stop):
        """CG on (A^T A + D / mu) dw = -A^T res - D w / mu, D = diag(1, .., 1, 0) (the bias
        unpenalized; 1 there too when there is no bias column, whose weight then stays 0): step 1."""
        rows = self.rows
        scale = np.full(rows.n_weights, 1.0 / mu)
        if rows.bias != 0.0:
            scale[-1] = 0.0
        margins, product = self.margins, self.product

        def normal_product(d):
            rows.margins(d, margins)
            rows.rmatvec(margins, product)
            self.passes += 2
            return product + scale * d
        rhs = -rows.rmatvec(res, np.empty(rows.n_weights)) - scale * w
        dw = conjugate_gradient(normal_product, rhs, self.config.cg_rtol, self.config.cg_max_iter, stop=stop)[0]
        w += dw
        rows.margins(dw, self.q)          # the margins move by A dw: step 1 along q = -A dw
        np.negative(self.q, out=self.q)
        self.passes += 2
        return 1.0


def solve_binary(sub):
    X, y, upper = checked_binary_arrays(sub, "alm")
    params = sub.params
    config, tol, max_iter, bias = linear_run_settings(SPEC, params, bias_by_default=True)
    p = config.p or POWER_OF_LOSS.get(params.loss or "hinge")
    if p is None:
        raise FastSVMError(f"alm: loss {params.loss} is not an Lp hinge (hinge, squared_hinge, or -o p=)")
    if p < 1.0:
        raise FastSVMError(f"alm: the loss power p must be >= 1, got {p:g}")
    rows = LabeledRows(X, y, upper, bias=bias, n_threads=sub.n_threads)
    certificate, steps = Certificate(rows, p), Steps(rows, config)
    started = time.perf_counter()
    mu = config.mu or data_penalty(rows, p, config, sub.stop)
    steps.passes += 2 * config.power_steps

    n = rows.n_rows
    w, z, nu = np.zeros(rows.n_weights), np.zeros(n), np.zeros(n)
    s, res = np.zeros(n), np.empty(n)
    history, status, gap, objective = [], SolveStatus.MAX_ITER, np.inf, np.inf
    alpha = np.zeros(n)
    step_of = steps.exact if config.step == "exact" else steps.inexact
    multiplier_step(z, steps.q, 0.0, nu, s, res, upper, mu, mu, p, False, rows.n_threads)
    iteration = 0
    for iteration in range(1, max_iter + 1):
        if sub.stop[0]:
            raise KeyboardInterrupt
        step = step_of(w, res, mu, sub.stop)
        mu_next = mu * config.mu_growth
        multiplier_step(z, steps.q, step, nu, s, res, upper, mu, mu_next, p, True, rows.n_threads)
        if iteration % config.certify_every == 0 or iteration == 1:
            objective = certificate.primal(w, z)
            dual, alpha = certificate.dual(nu)
            steps.passes += 1
            gap = (objective - dual) / max(abs(objective), 1e-300)
            if not np.isfinite(objective):
                raise FastSVMError("alm: the objective overflowed; scale the data (fastsvm-scale) or lower C")
            if is_milestone(iteration // config.certify_every or 1) or gap <= tol:
                history.append({"iteration": iteration, "passes": steps.passes, "objective": objective,
                                "gap": gap, "mu": mu, "seconds": time.perf_counter() - started})
                if sub.log is not None:
                    sub.log(f"alm: iteration {iteration}  passes {steps.passes}  objective {objective:.10g}  "
                            f"relative gap {gap:.3e}  mu {mu:.3g}")
            if gap <= tol:
                status = SolveStatus.CONVERGED
                break
        mu = mu_next
    if sub.log is not None:
        sub.log(f"alm: {status.value} after {iteration} iterations ({steps.passes} passes), objective "
                f"{objective:.10g}, relative duality gap {gap:.3e}")
    return Solution(coef=y * alpha, rho=-(float(w[-1]) * bias), w=np.ascontiguousarray(w[:-1]),
                    objective=objective, n_iter=iteration, stop_measure=gap, status=status, history=history,
                    details={"passes": steps.passes, "p": p, "mu": mu, "step": config.step, "tol": tol,
                             "bias_weight": float(w[-1])})


def solve(sub):
    with np.errstate(over="ignore", invalid="ignore"):
        return solve_binary(sub)


SPEC = linear_spec("alm", solve, Config, DEFAULT_TOL, stop_measure="the relative duality gap",
                   description="the Lp-loss linear SVM (p >= 1: -o p=, or -L hinge / squared_hinge) in the primal "
                               "by augmented Lagrange multipliers (SVM-ALM); the bias is never penalized")
