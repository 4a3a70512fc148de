"""DCDM (Yang et al. 2024; docs/algorithms.md §6): the nu-SVM with its bias in the kernel, and one-class SVM,
by dual descent on coordinate pairs.

    min_a  1/2 a^T Q a   s.t.  e^T a = nu sum_i u_i,   0 <= a_i <= u_i

    nu-SVM     Q = (y y^T) o (K + 1): the paper's problem, not LIBSVM's nu-SVC (b is penalized);
               LIBSVM's one-class on this Q is the same problem. -o bias=none drops the + 1 (the
               authors' RBF runs had no bias).
    one-class  Q = K: LIBSVM's one-class SVM.

u_i is the sample's weight (1 without weights): LIBSVM's scale. The paper's is a / sum(u) (nu-SVM)
or a / (nu sum(u)) (one-class); Solution.details gives F and rho there. The paper's one-coordinate
update stalls once e^T a = nu sum(u) (no single coordinate can move), so every step moves a pair
along e_i - e_j:
    linear kernel  sweeps over ranked pairs with w = Z^T a kept (fastsvm._core._nu_pair_sweeps): one pass
                   ranks the gradients G = Z w, then the smallest G below its bound is paired with
                   the largest above 0, the second with the second, ..., each step from fresh G;
                   with shrinking (-h 1) the work between two full sweeps goes on over a working
                   set (the rows at a bound beyond the sweep's extremes left out): its own sweeps,
                   or SMO on its Q once small; the stop is decided over every row
    other kernels  LIBSVM's maximal-violating / second-order pair on the kernel cache, whose
                   columns carry the signs y and the + 1 (fastsvm._core._smo)
Both stop when max_{a_i > 0} G_i - min_{a_i < u_i} G_i <= -e. The margin rho is the multiplier of
e^T a: G_i = rho where 0 < a_i < u_i. w* = 0 (F* = 0, at small nu where the classes overlap) makes
rho = 0 and no classifier: an error for one problem, a model without support vectors inside a path.

solve_nu_path solves an increasing nu grid, each nu from the last optimum plus the greedy delta;
on the linear kernel SRBO (fastsvm.problems.nu_screening) fixes the samples it proves to be at a
bound, the sweeps run over the rest, and the full KKT check follows every reduced solve.
"""
import dataclasses
import threading
import time
from dataclasses import dataclass

import numpy as np

from .._core._cache import KernelCache
from .._core._kernel import kernel_matrix, row_sqnorms
from .._core._margins import LabeledRows
from .._core._nu_pair_sweeps import held_kkt, pair_sweeps
from .._core._smo import SMO
from .._core._status import Status
from ..csr import take_rows
from ..errors import DegenerateProblemError, FastSVMError, ParameterError
from ..memory import check_kernel_cache
from ..problems.nu_screening import moved_to_sum, screen
from ..problems.vector import dot
from .base import Solution, Solver, SolveStatus, checked_arrays, next_milestone, option, solver_config

FORMULATIONS = ("nu_svc", "one_class")
KERNELS = ("linear", "polynomial", "rbf", "sigmoid", "precomputed")
DEFAULT_TOL = 1e-3
# passes over one sweep's ranked pairs before the gradients are ranked again (each step reads its
# pair's gradients afresh): re-ranking after every pass costs more sweeps to reach a tight -e
# (chosen with tools/bench_srbo.py)
PAIR_PASSES = 4
# a gap within this many units in the last place of max |G| is rounding: at an -e below it the sweeps
# would sit at one ulp of G for ever; they stop there instead
# (status line_search_failed: no decrease left at machine precision)
FLOOR_ULPS = 2
# screening="auto" screens a nu only where it is predicted to pay, and probes now and then to
# measure the share again: SCREEN_PROBE nu after a probe that predicts no gain, then twice as far
# each time (a probe costs a screen, so probes at every few nu slow a path where nothing pays).
# Kernels: while the last screen fixed KERNEL_SCREEN_SHARE or more (SMO's shrinking already drops
# most of what SRBO would fix, and Q delta in double precision costs a kernel row per moved alpha: a
# screen that fixes a small share costs more than it saves). Linear: while the last share times the
# mean passes over X's nonzeros of the path's warm nu so far (details "passes"), the passes
# screening saves, is LINEAR_SCREEN_PASSES or more (screening costs about that: Q delta, the screen,
# the held rows' check). With pair_sweeps' working sets a warm nu reads only a few passes, so
# screening seldom pays there (-h 0, a pass per sweep, still gains from it)
KERNEL_SCREEN_SHARE = 0.3
LINEAR_SCREEN_PASSES = 2.0
SCREEN_PROBE = 10


@dataclass(frozen=True)
class Config:
    bias: str = option("in_kernel", "nu-SVM: the bias as k + 1 (in_kernel) or none", choices=("in_kernel", "none"))
    pairs: str = option("ranked", "how a sweep pairs the samples: ranked (the k-th smallest gradient with the k-th "
                        "largest) or random (shuffled: cheaper sweeps, more of them; -R seeds them)",
                        choices=("ranked", "random"), kernels=("linear",))
    delta: str = option("greedy", "how a nu path moves the last optimum to the next nu for SRBO: greedy (the "
                        "new mass on the smallest gradients) or exact (the point of the smallest screening "
                        "ball: a problem as large as the nu's own)", choices=("greedy", "exact"))
    max_iter: int = 1_000_000     # linear: sweeps (one pass each); other kernels: pair steps, x 100 l
    chunk_seconds: float = 0.5    # other kernels: wall time between two progress lines


def _problem(sub, config):
    """(X, signs, upper, total, shift) of the subproblem's dual."""
    X, y, upper = checked_arrays(sub)
    nu = float(sub.params.nu)
    if not 0 < nu <= 1:
        raise ParameterError("nu <= 0 or nu > 1")
    if sub.formulation == "nu_svc":
        if not np.all(np.abs(y) == 1.0):
            raise FastSVMError("dcdm: the nu-SVM is binary: labels must be +1 or -1")
        signs, shift = y, (1.0 if config.bias == "in_kernel" else 0.0)
    else:
        signs, shift = np.ones(y.shape[0]), 0.0
    if not upper.sum() > 0:
        raise FastSVMError("no training samples with a positive weight")
    return X, signs, upper, nu * float(upper.sum()), shift


def _margin(G, alpha, upper):
    """rho: the mean of G over the free a_i, else the middle of the interval KKT leaves."""
    free = (alpha > 0) & (alpha < upper)
    if free.any():
        return float(G[free].mean())
    above = G[alpha >= upper]
    below = G[alpha <= 0]
    hi = below.min() if below.size else np.inf
    lo = above.max() if above.size else -np.inf
    return float(0.5 * (hi + lo)) if np.isfinite(hi) and np.isfinite(lo) else float(hi if np.isfinite(hi) else lo)


def _linear_rows(sub, X, signs, upper, shift):
    """(rows, |z_i|^2) of the linear dual, z_i = s_i [x_i, sqrt(shift)]."""
    rows = LabeledRows(X, signs, upper, bias=float(np.sqrt(shift)), n_threads=sub.n_threads)
    return rows, row_sqnorms(X) + shift


def _solve_linear(sub, X, rows, sqnorm, tol, *, max_iter, alpha0, active=None, random_pairs=False, offset=None,
                  w0=None):
    """Pair sweeps from alpha0 (fastsvm._core._nu_pair_sweeps.pair_sweeps), in chunks that end at the
    milestone sweeps (a progress line each), over the rows ``active`` (None: all; the others stay
    at alpha0: SRBO's reduced problem); w = Z^T alpha + offset (the exact delta's problem), or w0
    when given (a path's w kept up to date across its nu: a full pass saved per nu; its rounding
    is that of the steps). A chunk starts from the last one's G (its last look). (alpha, G, w,
    sweeps, gap, status, history, reads): reads, the stored values of X read (pair_sweeps' count,
    plus X's nnz for each w computed afresh)."""
    upper, signs = rows.weights, rows.labels
    alpha = alpha0.copy()
    w, G = np.empty(rows.n_weights), np.empty(rows.n_rows)
    stop = np.ascontiguousarray(sub.stop, dtype=np.int32)
    status, history, sweeps, steps, reads = SolveStatus.MAX_ITER, [], 0, 0, 0
    started = time.perf_counter()
    active = np.arange(rows.n_rows, dtype=np.int32) if active is None else active
    exact, g_current = True, False

    def exact_w():
        nonlocal reads
        reads += int(X.indptr[-1])
        rows.rmatvec(alpha, w)
        if offset is not None:
            w[:] += offset
    if w0 is None:
        exact_w()
    else:
        w[:] = w0
    while True:
        chunk = max(min(next_milestone(sweeps), max_iter) - sweeps, 0)
        seed = sub.seed * 1_000_003 + sweeps if random_pairs else None
        swept = pair_sweeps(X, signs, rows.bias, alpha, w, upper=upper, sqnorm=sqnorm, active=active, G=G, tol=tol,
                            max_sweeps=chunk, passes=PAIR_PASSES, n_threads=rows.n_threads, stop=stop, seed=seed,
                            shrinking=bool(sub.params.shrinking), g_current=g_current)
        code, done, gap = swept.status, swept.sweeps, swept.gap
        g_current = code == Status.CHUNK_DONE     # the last look's G: the next chunk starts from it
        sweeps, steps, reads = sweeps + done, steps + swept.steps, reads + swept.reads
        if code == Status.INTERRUPTED:
            raise KeyboardInterrupt
        if code == Status.NONFINITE:
            raise FastSVMError("dcdm: a step became NaN or infinite (kernel values far too large?)")
        if code == Status.CONVERGED and exact:
            status = SolveStatus.CONVERGED
            break
        if code == Status.CONVERGED:      # again from w recomputed: the steps' rounding out of it
            exact_w()
            exact = True
            continue
        exact = done == 0
        if sweeps >= max_iter:
            break
        floor = FLOOR_ULPS * float(np.spacing(np.abs(G[active]).max(initial=0.0)))
        if gap <= floor:                  # -e below what double precision resolves in G: the sweeps would spin
            status = SolveStatus.PRECISION_FLOOR
            if sub.log is not None:
                sub.log(f"dcdm: max violation {gap:.3e} is at the rounding floor of the gradients ({floor:.1e}); "
                        f"-e {tol:g} cannot be met, stopped after {sweeps} sweeps")
            break
        history.append({"iter": sweeps, "max_violation": gap, "steps": steps, "reads": reads,
                        "seconds": time.perf_counter() - started})
        if sub.log is not None:
            sub.log(f"dcdm: sweep {sweeps}  max violation {gap:.3e}  pair steps {steps}")
    return alpha, G, w, sweeps, gap, status, history, reads


def _solve_kernel(sub, X, signs, upper, shift, *, tol, max_iter, alpha0, config, base=None, keep=None,
                  linear_term=None):
    """SMO from alpha0 on a kernel cache whose columns carry the signs and the shift. ``base``: a
    point whose products are known (the last nu's (alpha, Q alpha, G_bar, bounded)): the start's
    gradient then costs a column where alpha0 differs from it, not one per nonzero alpha0. ``keep``:
    the variables SMO works on (the others, at their bounds, are set aside until its final check).
    ``linear_term``: p of min 1/2 a^T Q a + p^T a (the exact delta's problem; G is then Q a + p).
    (alpha, G, objective, steps, gap, status, history, this point's base)."""
    params, k = sub.params, sub.kernel
    n = upper.shape[0]
    check_kernel_cache(params.cache_size, n)
    cache = KernelCache(X, k.kind, float(k.gamma), int(k.degree), float(k.coef0),
                        cache_bytes=int(params.cache_size * (1 << 20)), n_threads=max(1, int(sub.n_threads)),
                        sign=np.where(signs > 0, 1, -1).astype(np.int8), rows=None, shift=shift)
    stop = np.ascontiguousarray(sub.stop, dtype=np.int32)
    in_main = threading.current_thread() is threading.main_thread()
    p = np.zeros(n) if linear_term is None else linear_term
    smo = SMO(cache, p, np.ones(n, dtype=np.int8), alpha0, upper, eps=tol, shrinking=bool(params.shrinking), nu=False,
              svr_rows=0, max_iter=max_iter, stop=stop, check_signals=in_main, order=None)
    code, history, chunk = (smo.init() if base is None else smo.init_from(*base)), [], 200
    if keep is not None and code == Status.CONVERGED:
        smo.set_aside(keep.astype(np.int8))
    while code == Status.CONVERGED or code == Status.CHUNK_DONE:
        started = time.perf_counter()
        code = smo.run(smo.n_iter + chunk)
        elapsed = time.perf_counter() - started
        history.append({"iter": smo.n_iter, "max_violation": smo.gap, "seconds": elapsed})
        if sub.log is not None:
            sub.log(f"dcdm: pair step {smo.n_iter}  max violation {smo.gap:.3e}")
        if code != Status.CHUNK_DONE:
            break
        chunk = int(min(max(chunk * config.chunk_seconds / max(elapsed, 1e-4), 100), 10_000_000))
    if code == Status.INTERRUPTED:
        raise KeyboardInterrupt
    if code == Status.NO_MEMORY:
        raise MemoryError("dcdm: cannot allocate a kernel column (lower -m / cache_size?)")
    if code == Status.NONFINITE:
        raise FastSVMError("dcdm: a step became NaN or infinite (kernel values far too large?)")
    res = smo.result()
    status = SolveStatus.MAX_ITER if code == Status.MAX_ITER else SolveStatus.CONVERGED
    q_alpha, g_bar = smo.products()
    return (res["alpha"], q_alpha + p, float(res["obj"]), int(res["n_iter"]), float(res["kkt"]), status, history,
            (res["alpha"], q_alpha, g_bar, res["alpha"] >= upper))


def _greedy_start(upper, total):
    """a_i = min(u_i, what is left of total), in order (LIBSVM's one-class start: few columns)."""
    return np.minimum(upper, np.maximum(total - (np.cumsum(upper) - upper), 0.0))


def solve(sub):
    config = solver_config(SOLVER, sub.params, sub.kernel.kind)
    X, signs, upper, total, shift = _problem(sub, config)
    tol = DEFAULT_TOL if sub.params.tol is None else float(sub.params.tol)
    if not tol > 0:
        raise ParameterError("eps <= 0")
    n = upper.shape[0]
    nu = float(sub.params.nu)
    if sub.kernel.kind == "linear":
        rows, sqnorm = _linear_rows(sub, X, signs, upper, shift)
        # the paper's start nu u (one pass for w, where the greedy start's mass sits on the first rows)
        alpha, G, w, n_iter, gap, status, history, _ = _solve_linear(sub, X, rows, sqnorm, tol,
                                                                     max_iter=_max_iter(sub, config), alpha0=nu * upper,
                                                                     random_pairs=config.pairs == "random")
        objective = 0.5 * dot(w, w)
    else:
        alpha, G, objective, n_iter, gap, status, history, _ = _solve_kernel(sub, X, signs, upper, shift, tol=tol,
                                                                             max_iter=_max_iter(sub, config, n),
                                                                             alpha0=_greedy_start(upper, total),
                                                                             config=config)
    return _solution(sub, alpha, G, objective, n_iter, gap=gap, status=status, history=history, signs=signs,
                     upper=upper, shift=shift, tol=tol)


def _max_iter(sub, config, n=None):
    """-M, else sweeps (linear) or LIBSVM's cap on pair steps, max(10^7, 100 l) (other kernels)."""
    if sub.params.max_iter is not None:
        return int(sub.params.max_iter)
    return config.max_iter if n is None else max(10_000_000, 100 * n)


def _solution(sub, alpha, G, objective, n_iter, *, gap, status, history, signs, upper, shift, tol, in_path=False):
    """The Solution of a solved dual: LIBSVM's one-class as is, the nu-SVM scaled to margin 1. The
    nu-SVM's trivial region (w = 0) is an error, or ``in_path`` a Solution with no support vector
    and details["trivial"]."""
    nu = float(sub.params.nu)
    rho = _margin(G, alpha, upper)
    scale = float(upper.sum()) * (1.0 if sub.formulation == "nu_svc" else nu)   # to the paper's a
    details = {"objective": objective / scale**2, "rho": rho / scale, "max_violation": gap}
    if sub.formulation == "one_class":
        return Solution(coef=alpha, rho=rho, objective=objective, n_iter=n_iter, stop_measure=gap, status=status,
                        history=history, dual=alpha, upper=upper, details=details)
    details["trivial"] = not rho > tol   # G = rho on the free a_i, and G is known to tol: w = 0
    if details["trivial"] and in_path:
        return Solution(coef=np.zeros_like(alpha), rho=0.0, objective=0.0, n_iter=n_iter, stop_measure=gap,
                        status=status, history=history, dual=alpha, upper=upper, details=details)
    if details["trivial"]:
        raise DegenerateProblemError(f"nu-SVM: nu = {nu:g} is in the trivial region (w = 0: the classes overlap "
                                     "at this nu); raise nu")
    # the classifier scaled to a margin of 1 (LIBSVM's nu-SVC does the same: C = 1/rho); rho carries
    # the bias sum_i a_i y_i (times the kernel's + 1)
    coef = signs * alpha / rho
    return Solution(coef=coef, rho=-shift * float(coef.sum()), objective=objective / rho**2, n_iter=n_iter,
                    stop_measure=gap, status=status, history=history, margin_scale=rho,
                    n_bounded_sv=int(np.count_nonzero(alpha >= upper)), dual=alpha, upper=upper, details=details)


def solve_nu_path(sub, nus, screening="auto"):
    """The problems of an increasing nu grid in order, each started from the last one's optimum
    moved to the new e^T a (the greedy delta). With ``screening`` (unit weights, not a precomputed
    kernel) SRBO fixes the samples it proves to be at a bound and the rest is solved as a reduced
    problem -- the sweeps restricted to it (linear), SMO with them set aside (other kernels) --
    followed by the full KKT check, which frees and solves again any sample it finds wrong.
    screening: True (every nu), False, or "auto": a nu is screened where the last screen predicts
    a gain (see KERNEL_SCREEN_SHARE, LINEAR_SCREEN_PASSES), and at probes SCREEN_PROBE, 2 SCREEN_PROBE,
    4 SCREEN_PROBE, ... nu apart (details "screening" says whether a nu was, the progress line why not).
    A callable ``screening(nu) -> (zero, one)`` replaces SRBO's test at every nu after the first by
    the given masks at no cost (a bound on what any screen can give; the full check still corrects it).
    [Solution per nu], each with details "seconds", "screened" (the share of samples SRBO fixed)
    and "violations" (screened samples the full check sent back, or all of a screen that leaves the
    nu's mass no room: 0 when the screening is safe);
    linear: "passes", the stored values of X the nu's sweeps, w updates and checks read, over X's nnz."""
    nus = [float(nu) for nu in nus]
    if not nus or any(not 0 < nu <= 1 for nu in nus) or any(b <= a for a, b in zip(nus, nus[1:])):
        raise ParameterError("a nu path needs increasing values in (0, 1]")
    config = solver_config(SOLVER, sub.params, sub.kernel.kind)
    X, signs, upper, _, shift = _problem(dataclasses.replace(sub, params=dataclasses.replace(sub.params, nu=nus[0])),
                                         config)
    tol = DEFAULT_TOL if sub.params.tol is None else float(sub.params.tol)
    l = upper.shape[0]
    linear = sub.kernel.kind == "linear"
    given_screen = screening if callable(screening) else None
    if given_screen is None and screening not in (True, False, "auto"):
        raise ParameterError(f"screening must be True, False, 'auto' or a callable, not {screening!r}")
    adaptive = screening == "auto"
    screening = bool(screening) and bool(np.all(upper == 1.0)) and sub.kernel.kind != "precomputed"
    if linear:
        rows, sqnorm = _linear_rows(sub, X, signs, upper, shift)
    else:
        k = sub.kernel                     # Q_ii = k(x_i, x_i) + shift, as the solver's cache computes it
        sqnorm = KernelCache(X, k.kind, float(k.gamma), int(k.degree), float(k.coef0), cache_bytes=1 << 20,
                             n_threads=1, sign=None, rows=None, shift=shift).get_diagonal()
    solutions, alpha, G, base, w, last_share, warm_work, warm_nus = [], None, None, None, None, 1.0, 0.0, 0
    next_probe, probe_gap = 1, SCREEN_PROBE

    def predicted_gain():
        """Why a nu is not screened under "auto", or None when screening it pays."""
        work = warm_work / warm_nus if warm_nus else np.inf
        if linear and last_share * work < LINEAR_SCREEN_PASSES:
            return f"last share {100 * last_share:.1f}% x {work:.1f} passes < {LINEAR_SCREEN_PASSES:g} passes"
        if not linear and last_share < KERNEL_SCREEN_SHARE:
            return f"last share {100 * last_share:.1f}% < {100 * KERNEL_SCREEN_SHARE:.0f}%"
        return None
    for step, nu in enumerate(nus):
        problem = dataclasses.replace(sub, params=dataclasses.replace(sub.params, nu=nu))
        started = time.perf_counter()
        total = nu * float(upper.sum())
        zero = one = np.zeros(l, dtype=bool)
        reads = 0
        if alpha is None:
            start = nu * upper if linear else _greedy_start(upper, total)
        else:                              # the last optimum, the new mass on the smallest gradients
            start = moved_to_sum(alpha, G, total, upper)
        if alpha is not None and config.delta == "exact":
            start = _exact_start(problem, X, signs, upper, shift, tol=tol, config=config,
                                 rows=rows if linear else None, sqnorm=sqnorm, alpha0=alpha, G0=G, start=start)
        skipped = predicted_gain() if adaptive and alpha is not None and step < next_probe else None
        screen_now = screening and alpha is not None and skipped is None
        unfit = 0
        if screen_now:
            if given_screen is not None:
                zero, one = (np.asarray(mask) for mask in given_screen(nu))
                if zero.dtype != bool or one.dtype != bool or zero.shape != (l,) or one.shape != (l,):
                    raise ParameterError(f"a given screen returns two boolean masks of {l} samples (at nu = {nu:g})")
            else:
                delta = start - alpha
                if linear:                 # Z^T delta over the moved rows, then Z (Z^T delta) over all
                    moved = np.flatnonzero(delta)
                    Q_delta = _linear_products(rows, delta, moved)
                    reads += _stored(X, moved) + int(X.indptr[-1])
                else:
                    Q_delta = _kernel_products(X, sub.kernel, signs, shift, delta)
                zero, one, _ = screen(G, Q_delta, delta, alpha, sqnorm, nu1=nu)
            if not np.count_nonzero(one) <= total <= l - np.count_nonzero(zero):
                # the nu's mass does not fit the samples left free: a wrong screen (never SRBO's), dropped
                unfit, zero, one = int(np.count_nonzero(zero | one)), np.zeros(l, dtype=bool), np.zeros(l, dtype=bool)
            start[zero], start[one] = 0.0, 1.0
            start = moved_to_sum(start, G, total, upper, free=~(zero | one))
        if linear:
            if w is not None:              # w moved with alpha: a pass over the rows that changed
                changed = np.flatnonzero(start != alpha)
                reads += _stored(X, changed)
                w = w + rows.rows_rmatvec(changed.astype(np.int64), start[changed] - alpha[changed],
                                          np.empty(rows.n_weights))
            alpha, G, w, n_iter, gap, status, history, violations, read = _solve_linear_screened(
                problem, X, rows, sqnorm, tol, max_iter=_max_iter(problem, config), start=start, zero=zero, one=one,
                random_pairs=config.pairs == "random", w0=w)
            reads += read
            violations += unfit
            objective = 0.5 * dot(w, w)
        else:
            alpha, G, objective, n_iter, gap, status, history, base = _solve_kernel(
                problem, X, signs, upper, shift, tol=tol, max_iter=_max_iter(problem, config, l), alpha0=start,
                config=config, base=base, keep=~(zero | one) if screen_now else None)
            violations = unfit + int(np.count_nonzero(zero & (alpha > 0)) + np.count_nonzero(one & (alpha < 1)))
        screened = int(np.count_nonzero(zero) + np.count_nonzero(one))
        passes = reads / max(int(X.indptr[-1]), 1)
        if step > 0:                       # linear: passes over X's nonzeros, kernels: sweeps
            warm_work, warm_nus = warm_work + (passes if linear else n_iter), warm_nus + 1
        if screen_now:
            last_share = screened / l
            if predicted_gain() is None:   # the next nu is screened too
                next_probe, probe_gap = step + 1, SCREEN_PROBE
            else:
                next_probe, probe_gap = step + probe_gap, 2 * probe_gap
        solution = _solution(problem, alpha, G, objective, n_iter, gap=gap, status=status, history=history,
                             signs=signs, upper=upper, shift=shift, tol=tol, in_path=True)
        solution.details.update(seconds=time.perf_counter() - started, screened=screened / l, violations=violations,
                                screening=screen_now)
        if linear:
            solution.details["passes"] = passes
        solutions.append(solution)
        if sub.log is not None:
            sub.log(f"dcdm: nu = {nu:g}  {n_iter} iterations  " +
                    (f"screening skipped ({skipped})  " if skipped and screening else
                     f"screened {100 * screened / l:.1f}%  ") +
                    f"{solution.details['seconds']:.3f} s" +
                    (f"  ({violations} unsafe, solved again)" if violations else "") +
                    ("  trivial region: w = 0, no classifier" if solution.details.get("trivial") else ""))
    return solutions


def _exact_start(sub, X, signs, upper, shift, *, tol, config, rows, sqnorm, alpha0, G0, start):
    """a0 + delta* for the exact bi-level delta: the point of A_nu1 whose screening ball is the
    smallest, min_g |Z^T (g + a0)|^2 over g in A_nu1 -- the nu problem with w offset by Z^T a0
    (linear) or the linear term Q a0 (other kernels), started from the greedy point."""
    if rows is not None:
        offset = rows.rmatvec(alpha0, np.empty(rows.n_weights))
        return _solve_linear(sub, X, rows, sqnorm, tol, max_iter=_max_iter(sub, config), alpha0=start, offset=offset)[0]
    return _solve_kernel(sub, X, signs, upper, shift, tol=tol, max_iter=_max_iter(sub, config, upper.shape[0]),
                         alpha0=start, config=config, linear_term=G0)[0]


def _stored(X, rows):
    """The stored values of X's rows ``rows``."""
    return int(np.sum(X.indptr[rows + 1] - X.indptr[rows]))


def _linear_products(rows, delta, moved):
    """Q delta = Z (Z^T delta), delta sparse: nonzero at ``moved`` only."""
    w_delta = rows.rows_rmatvec(moved.astype(np.int64), delta[moved], np.empty(rows.n_weights))
    return rows.margins(w_delta, np.empty(rows.n_rows))


def _kernel_products(X, kernel, signs, shift, delta):
    """Q delta = s o ((K + shift) (s o delta)) in double precision, from the kernel rows of delta's
    few nonzeros (the cache's columns are float32: the screening bounds want more)."""
    moved = np.flatnonzero(delta)
    K = kernel_matrix(take_rows(X, moved), X, kernel.kind, float(kernel.gamma), int(kernel.degree),
                      coef0=float(kernel.coef0))
    return signs * ((signs[moved] * delta[moved]) @ (K + shift))


def _solve_linear_screened(sub, X, rows, sqnorm, tol, *, max_iter, start, zero, one, random_pairs, w0=None):
    """The sweeps over the samples not screened (zero, one: fixed at 0 and 1 in start), then the
    full KKT check (their gradients from the final w, the gap over all samples); a screened sample
    it finds wrong (none, when the screening is safe) is freed and the sweeps go on from there.
    w0: w at start, if known. (alpha, G, w, sweeps, gap, status, history, violations, stored values
    of X read)."""
    screened = zero | one
    alpha, w, violations, sweeps, reads = start, w0, 0, 0, 0
    wrong = np.zeros(rows.n_rows, dtype=bool)
    while True:
        held = np.flatnonzero(screened).astype(np.int32)
        active = None if not held.size else np.flatnonzero(~screened).astype(np.int32)
        alpha, G, w, n_iter, gap, status, history, read = _solve_linear(sub, X, rows, sqnorm, tol, max_iter=max_iter,
                                                                        alpha0=alpha, active=active,
                                                                        random_pairs=random_pairs, w0=w)
        sweeps, reads = sweeps + n_iter, reads + read
        if active is None:
            return alpha, G, w, sweeps, gap, status, history, violations, reads
        top, bottom, n_wrong = held_kkt(X, rows.labels, rows.bias, alpha, w, upper=rows.weights, held=held, G=G,
                                        tol=tol, wrong=wrong.view(np.uint8))
        reads += _stored(X, held)
        if not n_wrong and top - bottom <= tol:
            return alpha, G, w, sweeps, top - bottom, status, history, violations, reads
        violations += n_wrong
        # free the wrong ones, or all of them when the reduced optimum is not the full one
        screened &= ~wrong if n_wrong else np.zeros_like(screened)
        wrong[:] = False


class DCDM(Solver):
    name = "dcdm"
    formulations = FORMULATIONS
    kernels = KERNELS
    default_tol = DEFAULT_TOL
    description = ("the nu-SVM with its bias in the kernel (-s 1: not LIBSVM's nu-SVC; b is penalized) and one-class "
                   "SVM (-s 2) by dual descent on coordinate pairs")
    stop_measure = "the maximal violating pair's gap max G - min G"
    config = Config
    stops_on_signals = True
    bias_in_kernel = True

    solve = staticmethod(solve)
    solve_nu_path = staticmethod(solve_nu_path)


SOLVER = DCDM()
