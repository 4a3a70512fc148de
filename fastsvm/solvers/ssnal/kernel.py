"""SSsNAL on nonlinear kernels (RBF, polynomial, sigmoid) for C-SVC and epsilon-SVR (Niu et al. 2019
sections 3 and 4.3-4.4; docs/algorithms.md §0-2). Reached through the ``ssnal`` solver, which
hands every non-linear kernel here.

The dual (P) min 1/2 x^T Q x + c^T x over K = {a^T x = 0, 0 <= x <= u} has m = n variables
(C-SVC, Q = (y y^T) o K) or 2n (epsilon-SVR, Q = [K -K; -K K]); variable r sits on data row
src(r) with sign a_r, Q_rs = a_r a_s k(x_src(r), x_src(s)). Three phases:

1. Warm start (warm.py), unless Subproblem.warm holds a solution of the same problem at other
   bounds (a C path: it is scaled into the new box, first_point). The explicit-feature problem
   is solved by the linear SSsNAL: random
   Fourier features (option ``rff`` = D, seeded from Subproblem.seed) for the RBF kernel, a
   Nystroem map on D sampled landmarks for the polynomial and sigmoid kernels (random Fourier
   features only approximate shift-invariant kernels). Its dual vector is x^0 -- feasible for
   (P), which has the same constraints -- and its final sigma is sigma_0.

2. The exact gradient grad f(x^0) = Q x^0 + c on all rows (the one product with every support
   vector: KernelProducts, an inverted-index kernel mat-vec that stores nothing), and from it the
   working set U: the rows of the free variables and of the KKT violators (option ``theta``
   adds the variables whose margin grad f_r + b a_r is within theta of a bound's switch; 0 by
   default: rows missed join in the next round at less cost), Config.kernel_join_max of them at
   most, the largest violations first. All other variables are held where they are.

3. Rounds. SSsNAL on the exact kernel restricted to U (the other variables fixed, so the
   equality constraint keeps its value over U): the AL outer loop and semismooth Newton inner
   solves of docs/algorithms.md §2 in the kernel form (kernel_inner.py) -- the inner iterate is
   a vector of kernel coefficients u (the linear solver's v = Z^T u), so every product Z v
   becomes Q u. Newton directions by Sherman-Morrison-Woodbury on the free set J
   (kernel_newton.py): a Cholesky factorization of I + sigma P_J Q_JJ P_J while Q_JJ fits the
   -m budget (and |J| <= 4000), CG beyond (on a float32 block, or on products computed on the
   fly) -- accurate directions: inexact ones cost more Newton steps than CG. CG also when
   Gershgorin bounds the system's condition number by 3 (RBF with a large gamma: K diagonally
   dominant; ~11 products instead of |J|^3 / 3 flops). The budget is shared: a block, and K_UU's
   kept values below, take their bytes from the cache's share. When K_UU is numerically sparse
   (RBF on unscaled features or with a large gamma: nearly every value underflows and nearly
   every row is a free support vector), it is held as a
   SparseKernel of its values above Config.sparse_drop / |U| instead, and its products and Newton
   systems (CG) cost the kept values, not |U|^2. Otherwise the kernel columns of
   U come from the LRU KernelCache (-m MB), U at its first positions, so a column is computed on
   U only (working_set.py); Q u and Q x-hat are updated over the coordinates that change (the
   free set and the projection's switches), never recomputed; many new columns at once (a warm
   start's violators) bypass the cache through KernelProducts. Each round starts from the warm
   start's sigma (Config.kernel_join_max keeps its free sets Cholesky-sized). After the round the
   gradient of the rows outside U is updated over the coordinates that changed (KernelProducts
   again), eta is
   computed on the whole problem (docs/algorithms.md §0) and, while it exceeds the tolerance,
   the violators outside U join it (again kernel_join_max at most) and the round is repeated
   (or, when there are none, the next round is solved more tightly). A round's target is
   Config.round_reduction times the whole problem's eta at its start, tol / 2 at the least.
   This active-set layer keeps the method exact: the final eta is the full problem's, from a
   gradient kept on every row (recomputed in float64 before the stop below
   Config.exact_gradient_tol, where the float32 columns' rounding reaches eta's scale).

4. Hand-over (handover.py, docs/ssnal.md): where the free sets make the rounds dearer than a
   blocked solve, the solve stops once it has spent Config.handover_share of an estimate of
   one and hands its point (or LIBSVM's cold start) to solver "block_smo"; -o handover=0
   forbids it.

The sigmoid kernel matrix is indefinite in general and (P) then nonconvex: the method still
reaches a KKT point (as SMO does) while the Newton matrices on the free sets stay positive
definite, and stops with a clear FastSVMError when one is not.

Solution.coef is y_i x_i (C-SVC) or x_i - x_{n+i} (epsilon-SVR), rho = -b, objective = LIBSVM's
dual objective, stop_measure = eta.
"""
import math
import time
from dataclasses import dataclass

import numpy as np

from ..._core._cache import KernelCache
from ..._core._ssnal_kernel import KernelProducts
from ...errors import FastSVMError, ParameterError
from ...memory import check_kernel_cache
from ...problems.dual import OverDual, SvmDual, kkt_residual, svm_dual
from ...problems.vector import dot, norm
from ..base import Kernel, Solution, SolveStatus, Subproblem, checked_arrays
from .config import DEFAULT_MAX_OUTER, DEFAULT_TOL, NONLINEAR
from .handover import StepClock, hand_over, handover_budget
from .kernel_inner import KernelCounters, RoundContext, solve_working_set
from .schedule import first_sigma
from .warm import warm_start
from .warm_path import scaled_dual, usable
from .working_set import WorkingSet


@dataclass
class KernelDual(OverDual):
    """(P) for a nonlinear kernel (problems.dual.SvmDual), the kernel kept implicit."""

    X: object
    kernel: Kernel
    dual: SvmDual

    @property
    def n(self):
        return self.X.shape[0]

    @property
    def m(self):
        return self.dual.m

    def row_coef(self, x):
        """beta with Q x = a o (K beta)[source]."""
        return self.dual.row_coef(x)

    def gradient(self, h):
        """grad f = Q x + c from h = K beta(x) (one value per row)."""
        return self.dual.gradient_from_rows(h)

    def objective(self, x, grad):
        """f(x) = 1/2 x^T (grad - c) + c^T x: LIBSVM's obj."""
        return self.dual.objective(x, 0.5 * dot(x, grad - self.c))

    def primal_objective(self, x, grad, b):
        """The hinge / epsilon-insensitive primal at the expansion x with bias b."""
        return self.dual.primal_objective(0.5 * dot(x, grad - self.c), grad, b)


def kernel_dual(sub: Subproblem) -> KernelDual:
    """The dual of a C-SVC or epsilon-SVR subproblem (problems.dual.svm_dual), the kernel kept implicit."""
    X, y, upper = checked_arrays(sub)
    if X.shape[0] == 0:
        raise FastSVMError("ssnal: the subproblem has no samples")
    eps = float(sub.params.epsilon) if sub.formulation == "epsilon_svr" else 0.0
    return KernelDual(X=X, kernel=sub.kernel,
                      dual=svm_dual(sub.formulation, y, upper, eps, n_threads=sub.n_threads))


def working_rows(dual, x, grad, b, theta, *, exclude=None, limit=None):
    """Rows with a free variable, a KKT violator, or a margin grad_r + b a_r within theta of a
    bound's switch (rows in ``exclude`` left out); at most ``limit`` of them, the largest
    violations |x_r - clip(x_r - margin_r, 0, u_r)| (a row's largest) first."""
    margin = grad + b * dual.K.a
    upper = dual.K.upper
    violation = np.abs(x - np.clip(x - margin, 0.0, upper))     # |x - Pi(x - grad)| per variable
    pick = ((x > 0.0) & (x < upper)) | (violation > 0.0) | (np.abs(margin) < theta)
    rows = np.zeros(dual.n, dtype=bool)
    rows[dual.source[pick]] = True
    if exclude is not None:
        rows[exclude] = False
    rows = np.flatnonzero(rows)
    if limit is None or rows.shape[0] <= limit:
        return rows
    row_violation = np.zeros(dual.n)
    np.maximum.at(row_violation, dual.source, violation)
    return np.sort(rows[np.argsort(-row_violation[rows], kind="stable")[:limit]])


def check_kernel_problem(sub):
    """A ParameterError unless the kernel front end solves sub."""
    if sub.kernel.kind not in NONLINEAR:
        raise ParameterError(f"ssnal (kernel) supports the {', '.join(NONLINEAR)} kernels, not {sub.kernel.kind}")
    if sub.params.loss not in (None, "hinge"):
        raise ParameterError("ssnal solves the hinge-loss (L1) dual only")
    if sub.kernel.kind == "polynomial" and sub.kernel.degree < 0:
        raise ParameterError("degree of polynomial kernel < 0")


def update_outside(dual, products, ws, x, grad, *, x_new, hx_new, in_set, stats):
    """x and grad after a round on the working set ws: grad on U from the round, outside U updated
    over the rows whose coefficient changed (one KernelProducts mat-vec)."""
    x_old_u = x[ws.vars]
    x[ws.vars] = x_new
    d_beta = np.bincount(ws.pos, weights=ws.a * (x_new - x_old_u), minlength=ws.L)
    moved = np.flatnonzero(d_beta)
    grad[ws.vars] = hx_new + ws.c
    outside = np.flatnonzero(~in_set).astype(np.int32)
    if moved.shape[0] and outside.shape[0]:
        h_out = np.zeros(outside.shape[0])
        products.matvec(outside, ws.rows[moved].astype(np.int32), d_beta[moved], h_out)
        stats["kernel_values"] += outside.shape[0] * moved.shape[0]
        out_vars = np.concatenate([outside + kk * dual.n for kk in range(dual.m // dual.n)])
        grad[out_vars] += dual.K.a[out_vars] * np.tile(h_out, dual.m // dual.n)


def exact_gradient(dual, products, x, stats):
    """grad f(x) on every row from float64 kernel values (one KernelProducts mat-vec over the
    support)."""
    beta = dual.row_coef(x)
    support = np.flatnonzero(beta).astype(np.int32)
    h = np.zeros(dual.n)
    products.matvec(np.arange(dual.n, dtype=np.int32), support, beta[support], h)
    stats["kernel_values"] += dual.n * support.shape[0]
    return dual.gradient(h)


def first_point(sub, dual, config, tol, deadline=None):
    """(x^0, sigma_0, what it came from): a solution of the same problem at other bounds
    (Subproblem.warm: a C path) scaled into the new box, its sigma_0 scaled alike; else the
    explicit-feature warm start (warm.py), whose iterations stop at ``deadline``."""
    upper = np.asarray(sub.upper, dtype=np.float64)
    previous = sub.warm
    if previous is not None and usable(previous, upper.shape[0]):
        x = dual.K.project(scaled_dual(upper, previous))[0]
        old_sigma0 = previous.details.get("sigma0")
        if old_sigma0 is not None and np.all(previous.upper > 0):
            sigma0 = old_sigma0 * float(np.mean(upper) / np.mean(previous.upper))
        else:     # another solver's solution: the linear solver's first sigma
            sigma0 = first_sigma(float(np.mean(upper)), config)
        return x, sigma0, {"from": "the solution at other bounds"}
    x, sigma0, warm = warm_start(sub, config.rff, max(config.warm_tol, tol), config.warm, deadline)
    rff = sub.kernel.kind == "rbf" and config.warm == "rff"      # as warm_start chooses
    return x, sigma0, {"from": "random Fourier features" if rff else "Nystroem", "iterations": warm.n_iter,
                       "eta": warm.stop_measure, "out_of_time": warm.details["out_of_time"]}


def handed_over(sub, dual, x, reason, when, *, warm, history, details, n_iter):
    """The hand-over's progress line, then block_smo's solution (handover.hand_over) from x when
    ``warm``, else from LIBSVM's cold start."""
    if sub.log is not None:
        free = int(np.count_nonzero((x > 0) & (x < dual.K.upper)))
        sub.log(f"ssnal: handing over to block_smo {when} ({int(np.count_nonzero(x))} support vectors, {free} free): "
                f"{reason}; " + ("from this point" if warm else "from 0") + "; -o handover=0 forbids it")
    return hand_over(sub, x if warm else None, reason, history=history, details=details, n_iter=n_iter)


def solve_kernel(sub: Subproblem, config) -> Solution:
    """Solve one C-SVC or epsilon-SVR subproblem with an RBF, polynomial or sigmoid kernel."""
    params = sub.params
    check_kernel_problem(sub)
    tol = DEFAULT_TOL if params.tol is None else float(params.tol)
    max_outer = DEFAULT_MAX_OUTER if params.max_iter is None else int(params.max_iter)
    dual = kernel_dual(sub)
    t0 = time.perf_counter()
    stats = {"kernel_values": 0}
    log = sub.log

    k = sub.kernel
    threads = max(1, int(sub.n_threads))
    # the budget at its least (no support vector yet) bounds the warm start too
    time_budget = handover_budget(config, t0, dual.X, k, threads, n_variables=dual.K.upper.shape[0], n=dual.n)
    least = math.inf if time_budget is None else time_budget.blocked_seconds()
    if least < config.handover_at_once:
        reason = (f"a blocked solve estimated at {least:.2f}s (under "
                  f"{config.handover_at_once:g}s) leaves the rounds nothing to win")
        return handed_over(sub, dual, np.zeros(dual.n), reason, "at once", warm=False, history=[],
                           details={"rounds": 0, "time": {"total": time.perf_counter() - t0}, "tol": tol}, n_iter=0)
    x, sigma0, started = first_point(sub, dual, config, tol,
                                     None if time_budget is None else time_budget.deadline())
    sigma = sigma0
    times = {"warm_start": time.perf_counter() - t0}
    if log is not None:
        if started.get("out_of_time"):
            log(f"ssnal: warm start ({started['from']}, D = {config.rff}) stopped at the hand-over budget  "
                f"{times['warm_start']:.2f}s")
        elif "iterations" in started:
            log(f"ssnal: warm start ({started['from']}, D = {config.rff}): {started['iterations']} iterations, "
                f"KKT residual {started['eta']:.3e}  {times['warm_start']:.2f}s")
        else:
            log(f"ssnal: warm start from {started['from']}  {times['warm_start']:.2f}s")

    reason = None if time_budget is None else time_budget.reason()
    if time_budget is not None:
        time_budget.support = int(np.count_nonzero(x))
    if reason is not None:
        # before the gradient the point's worth is unknown, and spurious support vectors of the
        # warm start would cost block_smo more rows than its cold start
        times["total"] = time.perf_counter() - t0
        return handed_over(sub, dual, x, reason, "after the warm start", warm=False, history=[],
                           details={"rounds": 0, "time": times, "warm_start": started, "sigma0": sigma0,
                                    "tol": tol},
                           n_iter=0)
    products = KernelProducts(dual.X, k.kind, k.gamma, k.degree, k.coef0, n_threads=threads, stop=sub.stop)
    budget = int(params.cache_size * (1 << 20))
    check_kernel_cache(params.cache_size, dual.n)
    cache = KernelCache(dual.X, k.kind, k.gamma, k.degree, k.coef0, cache_bytes=budget, n_threads=threads)

    grad = exact_gradient(dual, products, x, stats)      # at x^0, on every row
    exact = True
    times["gradient"] = time.perf_counter() - t0 - times["warm_start"]

    history = []
    counters = KernelCounters()
    run = RoundContext(tol=tol, max_outer=max_outer, counters=counters, stop=sub.stop,
                       log=log, t0=t0, budget=time_budget,
                       clock=StepClock(cubic_from=config.always_dense_j))
    eta, b = kkt_residual(x, grad, dual.K)
    b_last = b
    status = SolveStatus.MAX_ITER
    in_set = np.zeros(dual.n, dtype=bool)
    ws_rows = np.zeros(0, dtype=np.int64)
    target_scale = 1.0
    rounds = 0
    for rounds in range(1, config.kernel_max_rounds + 1):
        if eta <= tol < config.exact_gradient_tol and not exact:
            grad = exact_gradient(dual, products, x, stats)
            eta, b = kkt_residual(x, grad, dual.K, hint=b_last)
            exact = True
        scale = 1.0 + norm(x) + norm(grad)
        entry = {"round": rounds, "eta": eta, "dual": dual.objective(x, grad),
                 "primal": dual.primal_objective(x, grad, b), "sigma": sigma, "working_set": int(in_set.sum()),
                 "time": time.perf_counter() - t0}
        history.append(entry)
        if log is not None:
            log(f"ssnal: round {rounds} of working rows  KKT residual {eta:.3e} (stops at {tol:g})  "
                f"objective {entry['dual']:.10g}  duality gap {entry['primal'] + entry['dual']:.3e}  "
                f"{entry['working_set']} working rows  {entry['time']:.2f}s")
        if eta <= tol:
            status = SolveStatus.CONVERGED
            break
        if counters.outer >= max_outer:
            break
        new = working_rows(dual, x, grad, b, config.theta, exclude=in_set, limit=config.kernel_join_max)
        if new.shape[0] == 0 and rounds > 1:
            target_scale *= 0.1              # no violators outside U: solve U more tightly
        if new.shape[0] == 0 and ws_rows.shape[0] == 0:
            break                            # nothing to work on (eta is rounding-limited)
        if time_budget is not None:
            time_budget.support = int(np.count_nonzero(x))
            run.handover = time_budget.reason()
            if run.handover is not None:
                break
        in_set[new] = True
        ws_rows = np.concatenate([ws_rows, new])
        ws = None                # the last round's kept values of K_UU released before the new ones
        ws = WorkingSet(dual, cache, products, ws_rows, x, stop=sub.stop, budget_bytes=budget, rbf=k.kind == "rbf",
                        config=config)
        ws_rows = ws.rows
        if log is not None and ws.sparse is not None:
            log(f"ssnal: kernel block of the working rows held sparse: {ws.sparse.nnz} values kept "
                f"({100.0 * ws.sparse.nnz / max(ws.L, 1) ** 2:.2g}%)")
        x_u = x[ws.vars]
        hx = grad[ws.vars] - ws.c
        # each round restarts the AL from the warm start's sigma: new rows make the prox center
        # far from the round's solution, and a large sigma would make psi almost nonsmooth
        t_round = time.perf_counter()
        target = scale * max(0.5 * tol * target_scale, config.round_reduction * eta)
        x_new, hx_new, sigma, lam = solve_working_set(ws, x_u, hx, sigma0, target, run=run, objective=entry["dual"])
        if not math.isnan(lam):
            b_last = lam
        if run.handover is not None:
            x[ws.vars] = x_new               # feasible: the round keeps a^T x over U
            break
        t_update = time.perf_counter()
        times["working_set"] = times.get("working_set", 0.0) + t_update - t_round
        update_outside(dual, products, ws, x, grad, x_new=x_new, hx_new=hx_new, in_set=in_set, stats=stats)
        exact = False
        eta, b = kkt_residual(x, grad, dual.K, hint=b_last)
        times["update"] = times.get("update", 0.0) + time.perf_counter() - t_update

    stats["kernel_values"] += int(cache.n_computed)
    times["total"] = time.perf_counter() - t0
    details = {"newton": counters.newton, "rounds": rounds, "working_set": int(in_set.sum()),
               "trials": counters.trials, "cg": counters.cg, "systems": dict(counters.systems),
               "sigma": sigma, "b_kkt": b, "time": times, "kernel_values": stats["kernel_values"],
               "warm_start": started, "sigma0": sigma0, "tol": tol}
    if run.handover is not None:
        # a point above LIBSVM's cold start (f(0) = 0; the warm start's at a large gamma) would only
        # give block_smo support vectors to undo; the round's steps lower f from its start's
        return handed_over(sub, dual, x, run.handover, f"at round {rounds}", warm=history[-1]["dual"] < 0.0,
                           history=history, details=details, n_iter=counters.outer)
    n = dual.n
    coef = dual.K.a * x if sub.formulation == "c_svc" else x[:n] - x[n:]
    return Solution(
        coef=np.ascontiguousarray(coef, dtype=np.float64),
        rho=-b_last,
        objective=dual.objective(x, grad),
        n_iter=counters.outer,
        stop_measure=eta,
        dual=x,
        upper=np.asarray(sub.upper, dtype=np.float64),
        status=status,
        history=history,
        details=details,
    )
