"""Primal Newton-CG for the L2-regularized squared-hinge SVM: LIBLINEAR -s 2's problem

    min_w 1/2 |w|^2 + sum_i C_i max(0, 1 - y_i (w.x_i + w_b B))^2,

the bias B (-B) a constant feature whose weight is regularized like the others. f is once
differentiable with a piecewise-constant generalized Hessian I + 2 X_I^T C_I X_I on the active rows
I (Keerthi & DeCoste 2005; Lin, Weng, Keerthi 2008): each Newton step solves that system by
conjugate gradients, to a relative residual that shrinks with |grad f|, then backtracks along the
step (Armijo). Function, gradient and Hessian products are CSR passes in fastsvm._core._primal_newton.
Stops as LIBLINEAR: |grad f(w)| <= tol * max(min(#pos, #neg), 1) / n * |grad f(0)|.
"""
from dataclasses import dataclass

import numpy as np

from .._core._cg import conjugate_gradient
from .._core._primal_newton import SquaredHingePrimal
from .._core._status import Status
from ..errors import FastSVMError
from .base import (LinearConfig, Solution, SolveStatus, Subproblem, checked_binary_squared_hinge, linear_run_settings,
                   LinearSolver)

DEFAULT_TOL = 0.01       # LIBLINEAR's -e for its primal solvers


@dataclass(frozen=True)
class Config(LinearConfig):
    """max_iter counts Newton iterations."""

    cg_forcing: float = 0.1   # CG stops at |r| <= min(cg_forcing, sqrt(|g| / |g0|)) |g|
    armijo: float = 0.01      # sufficient decrease along the step
    max_halvings: int = 30


def matvec_dot(a, b):
    """a . b by BLAS, as this solver's CG has always summed."""
    return float(a @ b)


def newton_direction(hess_vec, grad, rtol, max_steps, stop):
    """d approximately solving H d = -grad by _core's CG, and the CG steps taken. H >= I here: CG
    breaks down only on non-finite values, which the objective's check after reports."""
    d, steps, status = conjugate_gradient(hess_vec, -grad, rtol, max_steps, stop, dot=matvec_dot)
    if status == Status.INTERRUPTED:
        raise KeyboardInterrupt
    return d, steps


def solve(sub: Subproblem) -> Solution:
    """Solve one binary primal L2-loss SVM by Newton-CG."""
    X, y, upper = checked_binary_squared_hinge(sub, "primal_newton")
    config, tol, max_iter, bias = linear_run_settings(SOLVER, sub.params)
    problem = SquaredHingePrimal(X, y, upper, bias=bias)

    w = np.zeros(problem.n_weights)
    f, g = problem.fun_grad(w)
    g0_norm = float(np.linalg.norm(g))
    n_pos, n_neg = int(np.count_nonzero(y > 0)), int(np.count_nonzero(y < 0))
    threshold = tol * max(min(n_pos, n_neg), 1) / max(y.size, 1) * g0_norm
    history = []
    status, n_iter = SolveStatus.MAX_ITER, 0
    g_norm = g0_norm
    while n_iter < max_iter:
        if g_norm <= threshold:
            status = SolveStatus.CONVERGED
            break
        rtol = min(config.cg_forcing, np.sqrt(g_norm / g0_norm))
        d, cg_steps = newton_direction(problem.hess_vec, g, rtol, problem.n_weights, sub.stop)
        slope = float(g @ d)
        step = 1.0
        for _ in range(config.max_halvings):
            f_new, g_new = problem.fun_grad(w + step * d)
            if f_new <= f + config.armijo * step * slope:
                break
            step *= 0.5
        else:
            # no decrease left at machine precision: w is as good as this arithmetic gets
            problem.fun_grad(w)
            status = SolveStatus.LINE_SEARCH_FAILED
            break
        w += step * d
        f, g = f_new, g_new
        if not np.isfinite(f):
            raise FastSVMError("primal_newton: the objective overflowed; scale the data or lower C")
        g_norm = float(np.linalg.norm(g))
        n_iter += 1
        history.append({"iteration": n_iter, "objective": f, "grad_norm": g_norm, "cg_steps": cg_steps,
                        "step": step, "active": int(np.count_nonzero(problem.active))})
        if sub.log is not None:
            sub.log(f"primal_newton: iter {n_iter}  f {f:.10g}  |grad| {g_norm:.3e}  CG {cg_steps}  "
                    f"step {step:g}")
    else:
        if g_norm <= threshold:
            status = SolveStatus.CONVERGED
    w_bias = float(w[-1])
    return Solution(
        coef=problem.dual_coef,
        rho=-(w_bias * bias) if bias > 0 else 0.0,
        w=np.ascontiguousarray(w[:-1]),
        objective=f,
        n_iter=n_iter,
        stop_measure=g_norm,
        status=status,
        history=history,
        details={"bias_weight": w_bias, "tol": tol, "max_iter": max_iter, "grad_norm_at_zero": g0_norm},
    )


class PrimalNewton(LinearSolver):
    name = "primal_newton"
    default_tol = DEFAULT_TOL
    description = "linear SVM, squared hinge (-L 2), by Newton's method in the primal (LIBLINEAR -s 2)"
    stop_measure = "the gradient norm |grad f(w)|"
    config = Config

    solve = staticmethod(solve)


SOLVER = PrimalNewton()
