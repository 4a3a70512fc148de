"""ADMM for the C-SVC dual over one factorization of K~ + beta I (docs/algorithms.md §5, Cipolla & Gondzio 2021).

min 1/2 x^T Y K~ Y x - e^T x  s.t. y^T x = 0 (the x-block), 0 <= z <= C_i (the z-block), x = z:
    once per factor  u = K_beta^-1 e, w1 = e^T u (K_beta = K~ + beta I does not depend on y or C);
    per iteration    q = e + mu + beta z, w2 = u^T (Y q), s = K_beta^-1 (Y q), x = Y (s - (w2/w1) u),
                     z = clip(x - mu/beta, 0, C), mu <- mu - beta (x - z);
    bias             b = w2/w1, the multiplier of y^T x = 0 (rho = -b; the paper prints the other sign).
The model is z's: support vectors z_i > 0, coefficients y_i z_i, predicted with the exact kernel.

Modes (-o mode=): ``paper`` (the default: the fast approximate classifier the solver is for) runs
the paper's 10 iterations from zero at its beta (1e2 below 1e5 rows, also below the paper's
smallest size of 1e4; 1e3 below 1e6; 1e4 beyond): an early-stopped classifier that does not change
with C above ~0.2 (every row a support vector) and that a coarse K~ (the hierarchical factor cut to
fit -m) barely moves; ``converged`` (the SVM asked for, on K~) iterates until eta (docs/algorithms.md §0), one
K~ product per check, is below -e, from the previous C's point clipped to the new box along a
path: LIBSVM's model with the exact factor, but about as slow as LIBSVM on large sets, and its
iterates stopped early (-M) need not be good classifiers.
The hierarchical factor's leaf_size and rank, unless given, are chosen to fit -m
(fastsvm.kernels.hodlr.fitting_shape) and said in the log; a shape given that does not fit is refused.
The factor (fastsvm.kernels.factor: exact, nystroem or hodlr) is built by prepare and serves every
C of solve_path and, through the trainer (Solver.shares_prepared_state), every one-vs-rest class;
multi-class models are one-vs-rest, written in LIBSVM's layout (fastsvm.training.multiclass.kernel_ovr_layout).
"""
import time
from dataclasses import dataclass

import numpy as np

from ..errors import FastSVMError, NotPositiveDefiniteError, ParameterError
from ..kernels.factor import factor_kernel
from ..memory import MB
from ..parallel import one_blas_thread
from ..problems.dual import svm_dual
from .base import (Solution, Solver, SolveStatus, checked_rows, next_milestone, option, solve_path_warm,
                   solver_config)

DEFAULT_TOL = 1e-5
# O(1) for a Gaussian kernel: chosen from a sweep of beta with tools/bench_admm.py, where it takes
# the fewest iterations or close to them across C and gamma
CONVERGED_BETA = 1.0
PAPER_ITERATIONS = 10
LARGE_BACKEND = "hodlr"     # backend=auto's choice when the exact factor does not fit in -m
BETA_RAISES = 3             # a default beta whose K~ + beta I is not positive definite is raised 10x, this often
CONVERGED_ITERATIONS = 100_000


@dataclass(frozen=True)
class Config:
    """ADMM's knobs: its -o options, then two internal ones."""

    mode: str = option("paper", "paper: the paper's beta and 10 iterations (-M) from zero, a fast early-stopped "
                       "classifier; converged: iterate to eta <= -e (the SVM asked for, LIBSVM's time)",
                       choices=("converged", "paper"))
    beta: float | None = option(None, f"the penalty beta of K~ + beta I; default {CONVERGED_BETA:g} "
                                "(converged), by rows as the paper (paper)", kind=float, low=0.0, low_open=True)
    backend: str = option("auto", "K~ + beta I: exact Cholesky (n x n in -m), nystroem (Woodbury), hodlr "
                          f"(hierarchical); auto: exact when n x n fits in -m, else {LARGE_BACKEND}",
                          choices=("auto", "exact", "nystroem", "hodlr"))
    approx_tol: float = option(1e-2, "hodlr: relative tolerance of the low-rank blocks", low=0.0, low_open=True)
    rank: int | None = option(None, "hodlr: largest rank of an off-diagonal block (0: the dense leaves alone); "
                              "default 100, or the largest that fits in -m over leaf sizes 512 .. 32",
                              kind=int, low=0)
    leaf_size: int | None = option(None, "hodlr: rows of the largest dense leaf block; default 512, or the one of "
                                   "512 .. 32 at which the largest rank fits in -m (the larger on a tie)",
                                   kind=int, low=1)
    landmarks: int | None = option(None, "nystroem: landmarks, by default min(rows, 500, what fits in -m)",
                                   kind=int, low=1)
    large_backend: str = LARGE_BACKEND   # what backend=auto takes when the exact factor does not fit
    check_every: int = 10             # iterations between two eta checks (converged mode)


def paper_beta(n):
    """The paper's beta by problem size (it has none below 1e4 rows: its smallest is used)."""
    return 1e2 if n < 100_000 else 1e3 if n < 1_000_000 else 1e4


@dataclass
class Factorization:
    """What every C and every one-vs-rest class share: the factor and u = K_beta^-1 e."""

    factor: object
    u: np.ndarray
    w1: float
    mode: str


def prepare(sub):
    """Solver.prepare: K~ + beta I over the subproblem's rows, factored once."""
    # LAPACK on one thread: the same bits for any -j, and no spinning BLAS threads on a busy machine
    with one_blas_thread():
        return _prepare(sub)


def _prepare(sub):
    config = solver_config(SOLVER, sub.params, sub.kernel.kind)
    X = sub.x_rows()
    n = X.shape[0]
    beta = config.beta if config.beta is not None else (
        paper_beta(n) if config.mode == "paper" else CONVERGED_BETA)
    memory_limit = float(sub.params.cache_size) * MB
    backend = config.backend
    if backend == "auto":
        backend = "exact" if 8.0 * n * n <= memory_limit else config.large_backend
    started = time.perf_counter()
    compressed = None
    for attempt in range(BETA_RAISES + 1):
        try:
            if compressed is not None:    # a raised beta refactors the same compression
                factor = compressed.refactor(beta)
                break
            factor = factor_kernel(X, sub.kernel, beta, backend, tol=config.approx_tol, max_rank=config.rank,
                                   leaf_size=config.leaf_size, n_landmarks=config.landmarks, seed=sub.seed,
                                   n_threads=sub.n_threads, stop=sub.stop, log=sub.log, memory_limit=memory_limit)
            break
        except NotPositiveDefiniteError as error:
            # an approximate K~ need not be PSD: a default beta is raised (docs/algorithms.md §5),
            # one the user chose is theirs to change
            if config.beta is not None or attempt == BETA_RAISES:
                raise
            compressed = getattr(error, "compressed", None)
            beta *= 10.0
            if sub.log is not None:
                sub.log(f"admm: {error}; trying beta = {beta:g}")
    u = factor.solve(np.ones(n))
    w1 = float(u.sum())
    if not (np.all(np.isfinite(u)) and w1 > 0):
        raise ParameterError(f"admm: K~ + beta I is not positive definite at beta = {beta:g} (raise -o beta)")
    if sub.log is not None:
        sub.log(f"admm: {factor.backend} factor, beta {beta:g}, {factor.nbytes / MB:.1f} MB  "
                f"time {time.perf_counter() - started:.2f}s")
    return Factorization(factor=factor, u=u, w1=w1, mode=config.mode)


def solve(sub):
    """One C-SVC subproblem (labels +1/-1, bounds sub.upper) from its own factorization."""
    return solve_path(sub, [1.0])[0]


def solve_path(sub, Cs, state=None):
    """Solver.solve_c_path: bounds C * sub.upper for C in Cs over one factorization (``state`` from
    prepare, or built here); converged mode starts each C from the last, paper mode from zero."""
    state = prepare(sub) if state is None else state
    if state.factor.n != sub.y.shape[0]:
        raise ParameterError(f"admm: a factorization of {state.factor.n} rows for {sub.y.shape[0]}")
    if state.mode == "paper":
        return [_solve(sub, state, C, warm=None) for C in Cs]
    return solve_path_warm(lambda problem, C: _solve(problem, state, 1.0, problem.warm), sub, Cs)


def _start(warm, upper):
    """(z, mu) from a warm Solution of the same rows (z clipped to the new box), else zeros."""
    n = upper.shape[0]
    z, mu = np.zeros(n), np.zeros(n)
    if warm is not None and warm.dual is not None and np.shape(warm.dual) == (n,):
        z = np.clip(np.asarray(warm.dual, dtype=np.float64), 0.0, upper)
        old_mu = warm.details.get("mu") if warm.details else None
        if old_mu is not None and np.shape(old_mu) == (n,):
            mu = np.array(old_mu, dtype=np.float64)
    return z, mu


def _solve(sub, state, C, warm):
    with one_blas_thread():
        return _iterate(sub, state, C, warm)


def _iterate(sub, state, C, warm):
    _, _, y, upper = checked_rows(sub)
    if sub.formulation != "c_svc":
        raise ParameterError(f"admm solves c_svc, not {sub.formulation}")
    if not np.all(np.abs(y) == 1.0):
        raise ParameterError("admm solves binary problems: labels must be +1 or -1")
    upper = upper * C
    config = solver_config(SOLVER, sub.params, sub.kernel.kind)
    params = sub.params
    tol = DEFAULT_TOL if params.tol is None else float(params.tol)
    paper = state.mode == "paper"
    max_iter = int(params.max_iter) if params.max_iter is not None else (
        PAPER_ITERATIONS if paper else CONVERGED_ITERATIONS)
    factor, u, w1 = state.factor, state.u, state.w1
    beta = factor.beta
    dual = svm_dual("c_svc", y, upper)
    z, mu = (np.zeros(y.shape[0]), np.zeros(y.shape[0])) if paper else _start(warm, upper)
    started = time.perf_counter()
    history, milestone = [], 1
    eta, b, r_pri, r_dual = np.inf, 0.0, np.inf, np.inf
    status = SolveStatus.MAX_ITER
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        q = 1.0 + mu + beta * z
        yq = y * q
        b = float(u @ yq) / w1                   # w2 / w1
        x = y * (factor.solve(yq) - b * u)
        z_old = z
        z = np.clip(x - mu / beta, 0.0, upper)
        mu -= beta * (x - z)
        r_pri, r_dual = float(np.linalg.norm(x - z)), beta * float(np.linalg.norm(z - z_old))
        if sub.stop[0]:
            raise KeyboardInterrupt
        if not np.isfinite(b) or not np.isfinite(r_pri):
            raise FastSVMError("admm: the iteration became non-finite (kernel values or C far too large?)")
        checked = not paper and (n_iter % config.check_every == 0 or n_iter == max_iter)
        if checked:
            eta, objective = _certificate(factor, dual, y, z, b)
            if eta <= tol:
                status = SolveStatus.CONVERGED
        if n_iter == milestone or status == SolveStatus.CONVERGED:
            milestone = next_milestone(n_iter)
            history.append({"iter": n_iter, "primal_residual": r_pri, "dual_residual": r_dual,
                            "eta": eta if checked else None, "seconds": time.perf_counter() - started})
            if sub.log is not None:
                sub.log(f"admm: iter {n_iter:7d}  |x - z| {r_pri:.3e}  beta |dz| {r_dual:.3e}"
                        + (f"  eta {eta:.3e}" if checked else ""))
        if status == SolveStatus.CONVERGED:
            break
    seconds = time.perf_counter() - started
    if status != SolveStatus.CONVERGED:    # else eta and the objective are z's already
        eta, objective = _certificate(factor, dual, y, z, b)
    if paper:
        status = SolveStatus.CONVERGED   # the paper's fixed iterations are its whole method
    if sub.log is not None:
        sub.log(f"admm: {n_iter} iterations  obj {objective:.10g}  eta {eta:.3e}  b {b:.6g}  "
                f"SVs {np.count_nonzero(z)}  time {seconds:.2f}s")
    timings = dict(factor.timings, iterations=seconds)
    return Solution(coef=y * z, rho=-b, objective=objective, n_iter=n_iter, stop_measure=eta, status=status,
                    history=history, n_bounded_sv=int(np.count_nonzero((z > 0) & (z >= upper))),
                    cache_peak_bytes=int(factor.nbytes), dual=z, upper=upper,
                    details={"mu": mu, "beta": beta, "backend": factor.backend, "mode": state.mode,
                             "timings": timings, "factor_bytes": int(factor.nbytes),
                             "residuals": (r_pri, r_dual)})


def _certificate(factor, dual, y, z, b):
    """(eta of docs/algorithms.md §0, the dual objective) at z on K~: one product with K~."""
    yz = y * z
    h = factor.matvec(yz)
    grad = y * h - 1.0
    eta, _ = dual.eta(z, grad, hint=b)
    return float(eta), float(0.5 * (yz @ h) - z.sum())


class ADMM(Solver):
    name = "admm"
    formulations = ("c_svc",)
    kernels = ("rbf",)
    multiclass = "ovr"
    default_tol = DEFAULT_TOL
    description = ("ADMM over one factorization of K + beta I (exact, nystroem or hodlr), reused for every C "
                   "and class; rbf exp(-g|u-v|^2), the paper's h is g = 1/(2h^2)")
    config = Config
    stop_measure = "eta, the relative KKT residual (converged mode)"
    shares_prepared_state = True

    solve = staticmethod(solve)
    prepare = staticmethod(prepare)
    solve_c_path = staticmethod(solve_path)


SOLVER = ADMM()
