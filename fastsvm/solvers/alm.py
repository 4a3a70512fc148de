"""SVM-ALM (Nie et al. 2014; docs/algorithms.md §4): the Lp-loss linear SVM in the primal by augmented
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
from .._core._margins import LabeledRows
from ..errors import FastSVMError
from ..problems.blocks import OneBlock, largest_eigenvalue
from ..problems.linear_dual import balance_rows, balance_sums, balance_team
from ..problems.vector import dot
from .base import (LinearConfig, Solution, SolveStatus, checked_binary_arrays, is_milestone, linear_run_settings,
                   LinearSolver, option)

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
    power_steps: int = 5          # power iteration for lambda_max(A^T A), the data's scale for mu (only
                                  # a scale: a few steps settle its leading digits)
    cg_rtol: float = 1e-3         # the exact step's residual relative to its right-hand side (a correction:
                                  # it shrinks as the iterates converge)
    cg_max_iter: int = 500


class Block:
    """One block of rows and its per-sample state (margins z = A w, multipliers nu, the split s,
    the residual res, the step's margin move q, the dual point alpha): ALM's per-sample arithmetic,
    one method per map over the rows. What a method returns is summed over the blocks (p-vectors,
    a few scalars): the single-machine solve is one block (fastsvm.problems.blocks.OneBlock),
    fastsvm.distributed's holds many on the workers, and both run the iteration below (iterate)."""

    def __init__(self, X, y, upper, bias, p, *, n_threads=1):
        self.rows = LabeledRows(X, y, upper, bias=bias, n_threads=n_threads)
        self.p, self.C, n = p, self.rows.weights, self.rows.n_rows
        self.z, self.nu, self.s, self.res = np.zeros(n), np.zeros(n), np.zeros(n), np.empty(n)
        self.q, self.margin_buffer, self.alpha = np.empty(n), np.empty(n), np.zeros(n)
        self.g, self.product = np.empty(self.rows.n_weights), np.empty(self.rows.n_weights)

    def normal_product(self, v):
        """A^T A v."""
        self.rows.margins(v, self.margin_buffer)
        return self.rows.rmatvec(self.margin_buffer, self.product)

    def start(self, mu):
        multiplier_step(self.z, self.q, 0.0, self.nu, self.s, res=self.res, weight=self.C, mu=mu, mu_next=mu, p=self.p,
                        update=False, n_threads=self.rows.n_threads)

    def gradient(self):
        """A^T res."""
        return self.rows.rmatvec(self.res, self.g)

    def direction(self, g):
        """q = A g kept for the multiplier step: |q|^2."""
        self.rows.margins(g, self.q)
        return dot(self.q, self.q)

    def move(self, dw):
        """The exact step's margin move: q = -A dw (the multiplier step takes step 1 along it)."""
        self.rows.margins(dw, self.q)
        np.negative(self.q, out=self.q)

    def advance(self, step, mu, mu_next):
        multiplier_step(self.z, self.q, step, self.nu, self.s, res=self.res, weight=self.C, mu=mu, mu_next=mu_next,
                        p=self.p, update=True, n_threads=self.rows.n_threads)

    def loss(self):
        """sum_i C_i max(0, 1 - z_i)^p."""
        return power_hinge_loss(self.z, self.C, self.p, self.rows.n_threads)

    def dual_product(self):
        """alpha = -nu made feasible for its box (p = 1) or alpha >= 0: A^T alpha."""
        np.maximum(-self.nu, 0.0, out=self.alpha)
        if self.p == 1.0:
            np.minimum(self.alpha, self.C, out=self.alpha)
        return self.rows.rmatvec(self.alpha, self.product)

    def balance_sums(self, sign):
        return np.array(balance_sums(self.rows, self.alpha, sign, self.upper_bound()))

    def balance(self, sign, use_inside, ratio):
        return balance_rows(self.rows, self.alpha, sign, self.upper_bound(), use_inside, ratio=ratio)

    def upper_bound(self):
        return self.C if self.p == 1.0 else None

    def dual_sums(self):
        """(sum alpha, the loss's conjugate sum at alpha)."""
        return np.array([float(self.alpha.sum()),
                         power_hinge_conjugate_sum(self.alpha, self.C, self.p, self.rows.n_threads)])

    def coef(self):
        return self.rows.labels * self.alpha


def data_penalty(team, p, config, stop):
    """mu from the data: mean(C) n / lambda_max(A^T A), a third of it for p > 1. Chosen against a
    sweep of fixed mu with tools/bench_alm.py: its iterations stay near the best fixed mu's, and
    the best mu grows about as C, as this one does."""
    lam = largest_eigenvalue(team, "normal_product", config.power_steps, stop)
    if not np.isfinite(lam):
        raise FastSVMError("alm: the data overflowed; scale the data (fastsvm-scale)")
    scale = team.mean_weight * team.n_rows / lam if lam > 0 else 1.0
    return scale * (1.0 if p == 1.0 else 1.0 / 3.0)


def dual_value(team):
    """D(alpha) at the blocks' alpha = -nu made feasible (the box for p = 1, y^T alpha = 0 by
    fastsvm.problems.linear_dual's balancing over the blocks)."""
    product = team.sum("dual_product")
    v = product[:-1]
    excess = float(product[-1]) / team.bias if team.bias != 0.0 else 0.0
    if excess != 0.0:
        v = balance_team(team, v, excess)
    total, conjugate = team.sum("dual_sums")
    return float(total) - 0.5 * dot(v, v) - float(conjugate)


def inexact_step(team, w, mu, stop):
    """One steepest-descent step with the exact line search on |w_head|^2 / mu + |A w - target|^2
    (res = A w - target on the blocks): the step length; 2 passes."""
    g = team.sum("gradient")
    g[:-1] += w[:-1] / mu
    if team.bias == 0.0:
        g[-1] = 0.0
    qq = team.sum("direction", g)
    head = g[:-1]
    denominator = qq + dot(head, head) / mu
    step = dot(g, g) / denominator if denominator > 0.0 else 0.0
    w -= step * g
    return step, 2


def exact_step(team, w, mu, stop, config):
    """CG on (A^T A + D / mu) dw = -A^T res - D w / mu, D = diag(1, .., 1, 0) (the bias
    unpenalized; 1 there too when there is no bias column, whose weight then stays 0): step 1."""
    scale = np.full(team.n_weights, 1.0 / mu)
    if team.bias != 0.0:
        scale[-1] = 0.0
    products = [0]

    def normal_product(d):
        products[0] += 1
        return team.sum("normal_product", d) + scale * d
    rhs = -team.sum("gradient") - scale * w
    dw = conjugate_gradient(normal_product, rhs, config.cg_rtol, config.cg_max_iter, stop=stop)[0]
    w += dw
    team.each("move", dw)
    return 1.0, 2 * products[0] + 2


def iterate(team, p, config, tol, max_iter, *, stop, log=None, name="alm"):
    """The ALM iteration over a team of blocks (OneBlock, or fastsvm.distributed's): only w, the
    summed p-vectors and scalars pass between the driver and the blocks. A dict of w (bias weight
    last), the objective, gap, iterations, status, history, passes, mu and the trace: (passes,
    seconds, objective, relative gap) at every certificate, from which tools read the time any -e
    would have taken (the iterates do not depend on -e)."""
    started = time.perf_counter()
    mu = config.mu or data_penalty(team, p, config, stop)
    passes = 2 * config.power_steps
    w = np.zeros(team.n_weights)
    history, trace, status, gap, objective = [], [], SolveStatus.MAX_ITER, np.inf, np.inf
    team.each("start", mu)
    iteration = 0
    for iteration in range(1, max_iter + 1):
        if stop[0]:
            raise KeyboardInterrupt
        if config.step == "exact":
            step, used = exact_step(team, w, mu, stop, config)
        else:
            step, used = inexact_step(team, w, mu, stop)
        passes += used
        mu_next = mu * config.mu_growth
        team.each("advance", step, mu, mu_next)
        if iteration % config.certify_every == 0 or iteration == 1:
            head = w[:-1]
            objective = 0.5 * dot(head, head) + float(team.sum("loss"))
            dual = dual_value(team)
            passes += 1
            gap = (objective - dual) / max(abs(objective), 1e-300)
            trace.append((passes, time.perf_counter() - started, objective, gap))
            if not np.isfinite(objective):
                raise FastSVMError(f"{name}: the objective overflowed; scale the data (fastsvm-scale) or lower C")
            if is_milestone(iteration // config.certify_every or 1) or gap <= tol:
                history.append({"iteration": iteration, "passes": passes, "objective": objective,
                                "gap": gap, "mu": mu, "seconds": time.perf_counter() - started})
                if log is not None:
                    log(f"{name}: iteration {iteration}  passes {passes}  objective {objective:.10g}  "
                        f"relative gap {gap:.3e}  mu {mu:.3g}")
            if gap <= tol:
                status = SolveStatus.CONVERGED
                break
        mu = mu_next
    if log is not None:
        log(f"{name}: {status.value} after {iteration} iterations ({passes} passes), objective "
            f"{objective:.10g}, relative duality gap {gap:.3e}")
    return {"w": w, "objective": objective, "gap": gap, "n_iter": iteration, "status": status,
            "history": history, "passes": passes, "mu": mu, "trace": trace}


def loss_power(params, config):
    """p from -o p= or the loss's name, checked."""
    p = config.p or POWER_OF_LOSS.get(params.loss or "hinge")
    if p is None:
        raise FastSVMError(f"alm: loss {params.loss} is not an Lp hinge (hinge, squared_hinge, or -o p=)")
    if p < 1.0:
        raise FastSVMError(f"alm: the loss power p must be >= 1, got {p:g}")
    return p


def solve_binary(sub):
    X, y, upper = checked_binary_arrays(sub, "alm")
    params = sub.params
    config, tol, max_iter, bias = linear_run_settings(SOLVER, params, bias_by_default=True)
    p = loss_power(params, config)
    block = Block(X, y, upper, bias, p, n_threads=sub.n_threads)
    run = iterate(OneBlock(block), p, config, tol, max_iter, stop=sub.stop, log=sub.log)
    w = run["w"]
    return Solution(coef=block.coef(), rho=-(float(w[-1]) * bias), w=np.ascontiguousarray(w[:-1]),
                    objective=run["objective"], n_iter=run["n_iter"], stop_measure=run["gap"],
                    status=run["status"], history=run["history"],
                    details={"passes": run["passes"], "p": p, "mu": run["mu"], "step": config.step, "tol": tol,
                             "bias_weight": float(w[-1]), "trace": np.array(run["trace"])})


def solve(sub):
    with np.errstate(over="ignore", invalid="ignore"):
        return solve_binary(sub)


class ALM(LinearSolver):
    name = "alm"
    default_tol = DEFAULT_TOL
    description = ("the Lp-loss linear SVM (p >= 1: -o p=, or -L hinge / squared_hinge) in the primal "
                   "by augmented Lagrange multipliers (SVM-ALM); the bias is never penalized")
    stop_measure = "the relative duality gap"
    config = Config

    solve = staticmethod(solve)


SOLVER = ALM()
