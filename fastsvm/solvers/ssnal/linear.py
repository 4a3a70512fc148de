"""SSsNAL's outer loop on the linear-kernel dual (docs/algorithms.md §2): proximal steps
x^{k+1} = Pi_K(y), each an inner semismooth Newton solve (inner.InnerSolve) of min psi_k, some of
its rows held at their bounds (screening), the stopping measure eta tested early or estimated
where that saves a pass over X, and sigma raised between outer iterations (schedule)."""
import math
import time

import numpy as np

from ...errors import FastSVMError, ParameterError
from ...problems.dual import kkt_residual
from ...problems.vector import dot, norm
from ..base import Solution, SolveStatus, Subproblem
from .config import DEFAULT_MAX_OUTER, DEFAULT_TOL
from .inner import InnerSolve
from .newton import NewtonSystems
from .problem import Counters, coordinate_start, linear_dual
from .schedule import REJECTED_NOTE, cg_tolerance, first_sigma, inner_tolerance, next_inner_scale, next_sigma
from .screening import screen, unsure_rows
from .warm_path import path_start, usable


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


def estimated_eta(qp, xp, Zv, hint, error):
    """(eta, b, bound on eta's error) at x = xp with grad f(x) = Z w + c estimated by Z v + c: they
    differ by Z grad psi, of norm about `error` (gain |grad psi|), and the projection in eta is
    non-expansive; the bound is that norm over eta's denominator."""
    grad = Zv + qp.c
    eta, b = kkt_residual(xp, grad, qp.K, hint)
    return eta, b, error / (1.0 + norm(xp) + norm(grad))


class OutOfTime(Exception):
    """LinearRun's deadline passed: the solve ends at its last center."""


class LinearRun:
    """One SSsNAL solve of a DualQP to eta <= tol: the outer iterations' state (center x, w = Z^T x,
    Zw, the inner iterate v and Zv, sigma, eta) and, per outer iteration, its inner solve's."""

    def __init__(self, qp, tol, max_outer, config, stop, *, log, start=None, sigma_scale=1.0, deadline=None):
        """start: None (x = 0) or (x, its work in passes over X), x in (P)'s variables;
        sigma_scale: sigma_0 = this x schedule.first_sigma; deadline: a time.perf_counter() after
        which no Newton step is taken: the result is then the last center (status max_iter)."""
        self.t0 = time.perf_counter()
        self.deadline = deadline
        self.out_of_time = False
        self.qp, self.tol, self.max_outer, self.cfg, self.stop, self.log = qp, tol, max_outer, config, stop, log
        m, p = qp.m, qp.Z.p
        self.counters = Counters(qp.nnz)
        self.newton = NewtonSystems(qp, self.counters, config)
        self.inner = InnerSolve(qp, self.counters, config)
        self.x, self.w, self.Zw = np.zeros(m), np.zeros(p), np.zeros(m)
        if start is not None:
            self.x = qp.K.project(start[0])[0]   # DCD's bias is regularized: a^T x = 0 is restored here
            self.w = qp.Z.rmatvec(self.x)
            self.Zw = qp.Z.matvec(self.w)
            self.counters.passes += 2.0 + start[1] / qp.pass_cost
        self.v, self.Zv = self.w.copy(), self.Zw.copy()
        self.sigma = first_sigma(qp.mean_upper(), config, sigma_scale)
        self.history = []
        self.status = SolveStatus.MAX_ITER
        self.eta = math.inf
        self.b = self.b_kkt = 0.0
        self.estimated = False        # eta (and Zw) of the last outer iteration from Z v, not Z w
        self.dual = qp.objective(self.x, self.w)   # f at the center
        self.outer = 0
        self.inner_scale = 1.0
        self.J_last = None
        self.screen_factor = config.screen_factor
        self.row_norms = qp.row_norms     # else made at the first held-row check
        # the first y = -sigma c: for C-SVC every row ties and the projection frees a whole class (the
        # larger), a free set that says nothing about the solution's; a first step along -grad psi
        # breaks the tie (a Newton step from the tie takes a short step along a direction that
        # reflects the tie, not the solution)
        self.tied_start = config.cold_gradient_step and qp.tied() and start is None
        self.gain = self.step_passes = self.gnorm = self.kkt_est = None

    # ------------------------------------------------------------------ the outer loop

    def run(self):
        for outer in range(1, self.max_outer + 1):
            self.outer = outer
            self.eps = inner_tolerance(outer, self.tol, self.inner_scale)
            try:
                self.solve_inner()
            except OutOfTime:
                self.out_of_time = True
                break
            if self.close_outer():
                self.status = SolveStatus.CONVERGED
                break
        return self.result()

    def solve_inner(self):
        """min psi_k from the current center: Newton steps over all rows or, once some are held,
        over the others; the held rows checked at the end (and the solve resumed with those that
        had to move)."""
        self.inner.start(self.x, self.w, self.v, self.Zv, self.sigma)
        self.cur, self.rows, self.held = self.inner, None, None   # the solve in progress; its rows when restricted
        self.steps = 0
        self.converged = self.early = False
        self.tested = math.inf    # |grad psi| at the last exact eta test of this outer iteration
        self.misses = self.n_held = 0
        self.Zw_center = self.Zw.copy()
        while True:               # a restricted solve, then its held rows checked
            self.newton_steps()
            self.end_solve()
            if self.held is None:
                break
            self.n_held = max(self.n_held, self.held.shape[0])
            if self.early or self.held_rows_settled():
                break

    def newton_steps(self):
        """Newton steps on the solve in progress until |grad psi| <= eps / sqrt(sigma), the step
        limit, a negligible step, or an iterate with eta <= tol (early_eta)."""
        sigma = self.sigma
        while True:
            if self.stop[0]:
                raise KeyboardInterrupt
            if self.deadline is not None and time.perf_counter() > self.deadline:
                raise OutOfTime
            g = self.v - self.cur.ztx
            self.gnorm = gnorm = norm(g)
            if self.steps == 0:
                self.gnorm0 = max(gnorm, 1e-300)
            self.converged = gnorm <= self.eps / math.sqrt(sigma)
            if self.converged or self.steps >= self.cfg.max_newton:
                break
            if self.early_eta(gnorm):
                self.early = True
                break
            if self.newton_step(g, gnorm) < 1e-10:
                break

    def early_eta(self, gnorm):
        """True when the inner iterate x = Pi_K(y) already has eta <= tol (then Zw is its Z w).

        grad f(x) = Z w + c is estimated by Z v + c, which differs by Z grad psi, of norm about
        gain |grad psi|; the projection in eta is non-expansive. Exact test (one pass) when the
        bound holds, or at once when a Newton step costs far more than the test (CG systems: the
        bound is loose by gain, and the test is a small share of a step)."""
        cfg, tol, sigma, cur = self.cfg, self.tol, self.sigma, self.cur
        if not (self.steps > 0 and self.eta <= cfg.early_eta_prev * tol
                and gnorm <= cfg.early_grad * self.eps / math.sqrt(sigma)
                and (gnorm <= 0.1 * self.tested or self.step_passes >= cfg.early_every_step_passes)):
            return False
        hint = cur.lam / sigma
        xp = self.inner.xp
        if self.rows is not None:
            xp = xp.copy()
            xp[self.rows] = cur.xp
        sure = self.step_passes >= cfg.early_step_passes
        if not sure:
            eta_est, _, error = estimated_eta(self.qp, xp, self.Zv, hint, self.gain * gnorm)
            sure = eta_est + error <= tol * (1.0 - error)
        if not sure:
            return False
        self.tested = gnorm
        self.qp.Z.matvec(cur.ztx, out=self.Zw)
        self.counters.passes += 1
        return kkt_residual(xp, self.Zw + self.qp.c, self.qp.K, hint)[0] <= tol

    def newton_step(self, g, gnorm):
        """One Newton step of the solve in progress (direction, line search, Z^T x updated); after
        the first, rows far beyond their bounds are held (screening). Returns the step length."""
        qp, cur, rows, sigma, counters = self.qp, self.cur, self.rows, self.sigma, self.counters
        steps, inner = self.steps, self.inner
        # the first system of an outer iteration on the free set its predecessor ended with:
        # the start point's (a projected gradient step of length sigma from x) is far from
        # the final one, shrunk where the last proximal step is magnified by the larger sigma
        J = cur.J if steps > 0 or self.J_last is None else self.J_last
        gradient_step = steps == 0 and self.outer == 1 and self.tied_start
        if gradient_step:
            J = J[:0]
        J_rows = J        # in cur's rows
        if rows is not None:
            J = rows[J]
        passes_before = counters.passes
        d = self.newton.direction(J, g, sigma, cg_tolerance(gnorm / self.gnorm0, self.cfg.cg_rtol), kinks=steps > 0,
                                  rows=rows)
        zd = cur.qp.Z.matvec(d)
        counters.passes += 1 if rows is None else cur.qp.Z.nnz / qp.nnz
        self.gain = norm(zd) / max(norm(d), 1e-300)   # |Z u| / |u| along the Newton directions
        if steps == 0:
            self.lam_start = inner.lam
        # the gradient step's minimum lies near 1e-3..1e-5: searched from its model's
        alpha, res = cur.search(d, zd, g, model_start=gradient_step)
        system = self.newton.system
        if system is not None and system.J is not J:   # a CG system's J with kink rows
            J_rows = system.J if rows is None else np.searchsorted(rows, system.J).astype(np.int32)
        cur.accept(res, None if system is None else (J_rows, system, alpha * sigma, zd))
        self.step_passes = counters.passes - passes_before
        self.v += alpha * d
        if rows is None:
            self.Zv += alpha * zd
        else:
            self.Zv[rows] += alpha * zd
        self.steps += 1
        counters.newton += 1
        if alpha >= 1e-10 and self.steps == 1:      # inner.pt_new: the start's y, given back by accept()
            restricted, self.held = screen(inner, inner.pt_new, self.lam_start, self.screen_factor, self.cfg)
            if restricted is not None:
                self.cur, self.rows = restricted, restricted.qp.Z.rows
        return alpha

    def end_solve(self):
        """Zw = Z w at the solve's end. grad f(x) = Z w + c takes a pass; far from the end, where
        eta only steers sigma, the estimate from Z v serves when its error bound is small against
        it, and the next outer iteration starts from v (a restricted solve's held rows need the
        pass anyway)."""
        cfg, qp, inner = self.cfg, self.qp, self.inner
        if self.rows is not None:
            inner.absorb(self.cur, self.rows)
        self.estimated = False
        if not self.early and self.held is None and self.steps > 0 and self.eta > cfg.early_eta_prev * self.tol:
            *self.kkt_est, error = estimated_eta(qp, inner.xp, self.Zv, inner.lam / self.sigma, self.gain * self.gnorm)
            self.estimated = (self.kkt_est[0] > cfg.estimated_eta_min * self.tol
                              and error <= cfg.estimated_eta_error * self.kkt_est[0])
        if self.estimated:
            self.Zw[:] = self.Zv
        elif not self.early:       # else Zw is that of the tested iterate
            qp.Z.matvec(inner.ztx, out=self.Zw)
            self.counters.passes += 1

    def held_rows_settled(self):
        """After a restricted solve: True when its held rows may stay held (or its iterate solves
        (P) to tol already: then self.early); else the solve goes on with those that had to move
        among its rows (False)."""
        qp, inner, x, sigma, held = self.qp, self.inner, self.x, self.sigma, self.held
        # the iterate may solve (P) to tol already, whatever the held rows would do in the
        # exact proximal step: eta is the whole problem's, and reopening the solve for held rows
        # that had to move would spend passes on a point that is already good enough
        if (self.eta <= self.cfg.early_eta_prev * self.tol
                and kkt_residual(inner.xp, self.Zw + qp.c, qp.K, inner.lam / sigma)[0] <= self.tol):
            self.early = True
            return True
        if self.row_norms is None:
            self.row_norms = qp.Z.row_norms()
            self.counters.passes += float(np.sum(qp.Z.row_nnz)) / qp.nnz
        unsure = unsure_rows(held, x, inner, self.Zw, qp, sigma=sigma, row_norms=self.row_norms,
                             error=sigma * norm(self.v - inner.ztx))
        if unsure.shape[0] == 0:
            return True
        self.Zv[unsure] = qp.Z.rows_matvec(unsure, self.v)
        self.counters.rows(qp.Z, unsure)
        inner.pt[unsure] = x[unsure] - sigma * (self.Zv[unsure] + qp.c[unsure])
        z = inner.pt[unsure] - inner.lam * qp.K.a[unsure]
        moved = np.count_nonzero(np.clip(z, qp.K.lower[unsure], qp.K.upper[unsure]) != inner.xp[unsure])
        if not moved:
            return True
        # held rows that had to move: the solve goes on with them among its rows
        self.misses += moved
        self.screen_factor *= 2.0  # hold fewer rows from now on
        self.held = held = np.setdiff1d(held, unsure, assume_unique=True).astype(np.int32)
        self.rows = np.union1d(self.rows, unsure).astype(np.int32)
        self.early = False
        try:
            self.cur = inner.restricted(self.rows, qp.K.d - dot(qp.K.a[held], inner.xp[held]))
            self.cur.reproject()
        except FastSVMError:  # rounding left d outside the rows' range: on over all rows
            self.Zv[held] = qp.Z.rows_matvec(held, self.v)
            self.counters.rows(qp.Z, held)
            inner.start(x, self.w, self.v, self.Zv, sigma)
            self.cur, self.rows, self.held = inner, None, None
        return False

    def close_outer(self):
        """The proximal step taken (or rejected), eta at the new center, the history entry, and
        the next sigma; True when the solve is done."""
        qp, inner, cfg, tol, sigma = self.qp, self.inner, self.cfg, self.tol, self.sigma
        # a proximal step never raises f: when an inner solve that stopped short (max_newton) did,
        # x stays and sigma is lowered (an inner solve of many short Newton steps can end far
        # uphill, and the outer iterations after it would spend many passes crawling back)
        f_new = qp.objective(inner.xp, inner.ztx)
        rejected = not (self.converged or self.early) and f_new > self.dual
        if rejected:      # back to the center, whose eta is exact (Zw_center)
            step_norm = 0.0
            self.Zw[:] = self.Zw_center
            self.estimated = False
        else:
            step_norm = norm(inner.xp - self.x)
            self.J_last = inner.J.copy()
            self.x = inner.xp.copy()
            self.w = inner.ztx.copy()
            self.b = inner.lam / sigma
            self.dual = f_new
        grad = self.Zw + qp.c
        self.eta, self.b_kkt = self.kkt_est if self.estimated else kkt_residual(self.x, grad, qp.K, hint=self.b)
        eta = self.eta
        # the AL's primal residual |Q w + c - z| = |x^{k+1} - x^k| / sigma, scaled as eta
        r_primal = step_norm / sigma / (1.0 + norm(self.x) + norm(grad))
        entry = {"iter": self.outer, "sigma": sigma, "newton": self.steps, "free": inner.n_free, "eta": eta,
                 "eta_estimated": self.estimated, "r_primal": r_primal,
                 "primal": qp.primal_objective(self.Zw, self.w, self.b), "dual": self.dual,
                 "passes": qp.passes_over_X(self.counters.passes), "held": self.n_held, "held_misses": self.misses,
                 "rejected": rejected, "time": time.perf_counter() - self.t0}
        self.history.append(entry)
        if self.log is not None:
            self.log(progress_line(entry, tol))
        # an inner solve stopped far from its tolerance (max_newton, no decrease) can leave x with
        # a huge grad f and so a small eta at a poor point: such an x does not end the solve
        if eta <= tol and (self.converged or self.early or self.gnorm <= cfg.early_grad * self.eps / math.sqrt(sigma)):
            return True
        self.sigma = next_sigma(sigma, self.steps, self.converged, cfg, r_primal >= cfg.primal_lag * eta)
        if not rejected:
            self.inner_scale = next_inner_scale(r_primal, eta, cfg)
        if not self.estimated:
            self.v, self.Zv = self.w.copy(), self.Zw.copy()
        return False

    def result(self):
        """The solve's outcome: x, w, b, eta and the work counted."""
        qp, counters = self.qp, self.counters
        x, b, eta, b_kkt = self.x, self.b, self.eta, self.b_kkt
        w = qp.Z.rmatvec(x)  # exact, free of the incremental updates' rounding
        if self.estimated:    # max_outer ran out on an outer iteration whose eta was estimated
            qp.Z.matvec(w, out=self.Zw)
            counters.passes += 1
            eta, b_kkt = kkt_residual(x, self.Zw + qp.c, qp.K, hint=b)
        # the bias: the multiplier of Pi_K(x - grad f(x)) at the returned x (docs/algorithms.md §0)
        # rather than lam / sigma of the last inner projection, whose y carries the inner solve's
        # error sigma Z grad psi; equal at a solution, and short of one the primal objective at
        # (w, b_kkt) is the closer to the optimum (checked with tools/bench_ssnal.py)
        primal = self.history[-1]["primal"] if self.history else math.nan
        if math.isfinite(b_kkt) and self.history:
            b = b_kkt
            primal = qp.primal_objective(self.Zw, w, b)
        return {"x": x, "w": w, "b": b, "eta": eta, "status": self.status, "outer": self.outer,
                "history": self.history, "newton": counters.newton, "passes": qp.passes_over_X(counters.passes + 1),
                "trials": counters.trials, "cg": counters.cg, "systems": dict(counters.systems), "sigma": self.sigma,
                "time": time.perf_counter() - self.t0, "primal_objective": primal, "b_kkt": b_kkt,
                "out_of_time": self.out_of_time}


def solve_linear(sub: Subproblem, config, merge=True, start=None, presolved=None, *, deadline=None) -> Solution:
    """Solve one C-SVC or epsilon-SVR subproblem with a linear kernel by SSsNAL; `merge`: equal
    samples merged (linear_dual; `presolved`: as a path's presolve found them); `start`: a
    Solution of the same problem at other bounds to start from (warm_path.path_start), else x = 0
    or the coordinate-descent start; `deadline`: LinearRun's."""
    params = sub.params
    if params.loss not in (None, "hinge"):
        raise ParameterError("ssnal solves the hinge-loss (L1) dual only")
    tol = DEFAULT_TOL if params.tol is None else float(params.tol)
    max_outer = DEFAULT_MAX_OUTER if params.max_iter is None else int(params.max_iter)
    qp = linear_dual(sub, merge=merge, merge_min_share=config.merge_min_share, presolved=presolved)
    begin, sigma_scale = None, 1.0
    upper = np.asarray(sub.upper, dtype=np.float64)
    if start is not None and usable(start, upper.shape[0]):   # else (another solver's): cold
        begin, sigma_scale = path_start(qp, upper, start), config.path_sigma_scale
    elif qp.samples is not None and qp.Z.p > config.coordinate_start_p:
        begin = coordinate_start(qp, sub.seed, sub.stop, sub.log, config)
    result = LinearRun(qp, tol, max_outer, config, sub.stop, log=sub.log, start=begin, sigma_scale=sigma_scale,
                       deadline=deadline).run()
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
        upper=upper,
        details={k: result[k] for k in ("newton", "passes", "trials", "cg", "systems", "sigma", "time",
                                        "primal_objective", "b_kkt", "out_of_time")}
        | {"tol": tol, "merged_samples": 0 if qp.merged is None else qp.merged.group.shape[0] - qp.Z.n},
    )
