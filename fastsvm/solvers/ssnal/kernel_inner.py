"""The kernel front end's AL solve on one working set: semismooth Newton steps in kernel
coefficients (KernelInner), the linear solver's sigma schedule and line search."""
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..._core._linesearch import line_point
from ...problems.dual import kkt_residual
from ...problems.vector import dot, norm
from .handover import HandoverBudget, StepClock
from .kernel_newton import newton_direction, not_psd
from .linesearch import line_minimum
from .schedule import REJECTED_NOTE, next_sigma


class KernelCounters:
    def __init__(self):
        self.newton = 0
        self.outer = 0
        self.trials = 0
        self.cg = 0
        self.systems = {"dense": 0, "block": 0, "products": 0, "sparse": 0, "none": 0}


class KernelInner:
    """One semismooth Newton solve of min psi_k over the working set, in kernel coefficients:
    u (with hu = Q u), the projection xh = Pi_K(y), y = x^k - sigma (Q u + c), with hxh = Q xh."""

    def __init__(self, ws, x, hx, sigma, lam_hint):
        self.ws = ws
        m = x.shape[0]
        self.sigma = sigma
        self.u, self.hu = x.copy(), hx.copy()
        self.pt = x - sigma * (hx + ws.c)
        xh, self.lam, J = ws.K.project(self.pt, lam_hint)
        self.xh, self.J = xh.copy(), J.copy()
        changed = np.flatnonzero(self.xh != x)
        self.hxh = hx + ws.qmul(self.xh - x, changed)
        self.buffers = (np.empty(m), np.empty(m), np.empty(m, dtype=np.int32), np.empty(m, dtype=np.int32))

    def residual(self):
        """(r, Q r, |grad psi|): r = u - xh, grad psi = Z^T r in the linear solver's terms."""
        r = self.u - self.xh
        hr = self.hu - self.hxh
        return r, hr, math.sqrt(max(dot(r, hr), 0.0))

    def step(self, delta, hdelta, r, counters):
        """Move along delta to the minimiser of psi (line_minimum), each trial one projection
        (line_point, with Q delta in place of the linear solver's Z d); Armijo's test (mu = 1e-4)
        is checked there, halving if it fails. Returns alpha (0: no decrease is possible)."""
        ws, sigma, cfg = self.ws, self.sigma, self.ws.cfg
        dd, gd = dot(delta, hdelta), dot(r, hdelta)
        if dd < 0.0:
            raise not_psd()
        if not gd < 0.0:   # |grad psi| at rounding level: no step can decrease psi
            return 0.0
        aJ = ws.a[self.J]
        lam_rate = -sigma * dot(aJ, hdelta[self.J]) / dot(aJ, aJ) if self.J.shape[0] else 0.0
        pt_new, x_new, free_new, changed = self.buffers

        def trial(alpha):
            """(psi(u + alpha delta) - psi(u), its slope, line_point's result)."""
            counters.trials += 1
            res = line_point(ws.K, self.pt, hdelta, alpha * sigma, self.xh, lam0=self.lam, lam_shift=alpha * lam_rate,
                             pt=pt_new, x=x_new, free=free_new, changed=changed)
            zdx, s = res.zdx, res.s
            return alpha * gd + 0.5 * alpha * alpha * dd - alpha * zdx + s / sigma, gd + alpha * dd - zdx, res

        alpha, (change, _, res) = line_minimum(trial, gd, rtol=cfg.kernel_line_rtol, grow=4.0, max_grow=None,
                                               max_refine=None, max_trials=cfg.kernel_line_trials)
        for _ in range(cfg.kernel_max_backtracks):
            if change <= cfg.armijo_mu * alpha * gd:
                break
            alpha *= 0.5
            change, _, res = trial(alpha)
        lam, n_free, n_changed = res.lam, res.n_free, res.n_changed
        ch = changed[:n_changed].copy()
        self.hxh += ws.qmul(x_new - self.xh, ch)
        self.u += alpha * delta
        self.hu += alpha * hdelta
        self.pt, self.xh = pt_new.copy(), x_new.copy()
        self.lam, self.J = lam, free_new[:n_free].copy()
        return alpha


@dataclass
class RoundContext:
    """What every round's solve_working_set shares: the tolerance, the AL iterations allowed in
    all, the work counters, the stop flag, the log and the start time; the hand-over's budget
    (None: forbidden) and, once it is spent, why (``handover``)."""

    tol: float
    max_outer: int
    counters: KernelCounters
    stop: np.ndarray
    log: object
    t0: float
    budget: HandoverBudget | None = None
    handover: str | None = None
    clock: StepClock = field(default_factory=lambda: StepClock(cubic_from=0))


def solve_working_set(ws, x, hx, sigma, target, *, run, objective):
    """SSsNAL on the working set from x (hx = the sub-problem's Q x, i.e. its gradient minus c)
    until its KKT residual |x - Pi(x - grad)| is <= target or max_outer AL iterations were done
    in all. ``objective`` is f at the start (whole problem; f - f_start = D.(grad_start +
    Q_UU D / 2) over the step D on U, so it stays exact). Returns (x, hx, sigma, lam): lam the
    multiplier of the last projection (NaN if none). When the hand-over's budget (run.budget)
    would be passed by the next Newton step, run.handover says why and x is the last AL iterate."""
    tol, max_outer, counters, stop, log, cfg = run.tol, run.max_outer, run.counters, run.stop, run.log, ws.cfg
    lam = math.nan
    x_start, grad_start, hx_start = x, hx + ws.c, hx
    for k in range(1, max_outer + 1):
        if counters.outer >= max_outer:
            break
        counters.outer += 1
        eps = max(0.1 * tol, 0.5 ** k)
        inner = KernelInner(ws, x, hx, sigma, lam * sigma)
        steps = 0
        inner_ok = False
        while True:
            if stop[0]:
                raise KeyboardInterrupt
            r, hr, gnorm = inner.residual()
            inner_ok = gnorm <= eps / math.sqrt(sigma)
            if inner_ok or steps >= cfg.max_newton:
                break
            free = inner.J.shape[0]
            if run.budget is not None:
                run.handover = run.budget.reason(run.clock.predict(free), free)
                if run.handover is not None:
                    return x, hx, sigma, lam
            t_step = time.perf_counter()
            delta, hdelta = newton_direction(ws, inner.J, r, hr, sigma, counters=counters)
            alpha = inner.step(delta, hdelta, r, counters)
            run.clock.record(time.perf_counter() - t_step, free)
            steps += 1
            counters.newton += 1
            if alpha < 1e-10:
                break
        step = inner.xh - x
        rejected = not inner_ok and dot(step, hx + ws.c + 0.5 * (inner.hxh - hx)) > 0.0
        if not rejected:   # an inner solve that failed and raised f is no proximal step: retried
            x, hx = inner.xh, inner.hxh                   # with a smaller sigma (next_sigma)
            lam = inner.lam / sigma                       # b of this projection
        grad = hx + ws.c
        eta_u, _ = kkt_residual(x, grad, ws.K, hint=lam)
        scale = 1.0 + norm(x) + norm(grad)
        r_primal = norm(step) / sigma / scale
        if log is not None:
            dual = objective + dot(x - x_start, grad_start + 0.5 * (hx - hx_start))
            log(f"ssnal: iteration {counters.outer}  KKT residual on the {ws.L} working rows {eta_u:.3e} "
                f"(this round stops at {target / scale:.3g})  objective {dual:.10g}  sigma {sigma:.3g}  "
                f"{steps} Newton steps on {inner.J.shape[0]} free variables  {time.perf_counter() - run.t0:.2f}s"
                + (REJECTED_NOTE if rejected else ""))
        if eta_u * scale <= target:
            break
        sigma = next_sigma(sigma, steps, inner_ok, cfg, r_primal >= cfg.primal_lag * eta_u)
    return x, hx, sigma, lam
