"""One semismooth Newton solve of min psi_k (SSsNAL's inner problem, linear kernel): the
projection y -> Pi_K(y), Z^T Pi_K(y) kept up to date over the rows that change, and the step
length (linesearch.line_minimum, Armijo)."""
import math

import numpy as np

from ..._core._linesearch import line_point, off_system_moves, search_scalars
from ...problems.vector import dot
from .linesearch import line_minimum
from .problem import RowSubset


class InnerSolve:
    """One semismooth Newton solve of min psi_k: its state and buffers (reused across outer
    iterations; the *_new buffers hold the line search's trial point until it is accepted)."""

    def __init__(self, qp, counters, config):
        m = qp.m
        self.qp = qp
        self.counters = counters
        self.cfg = config
        self.line_search = config.line_search
        self.pt, self.pt_new = np.empty(m), np.empty(m)       # y = x^k - sigma (Z v + c)
        self.xp, self.x_new = np.empty(m), np.empty(m)        # Pi_K(y)
        self.free, self.free_new = np.empty(m, dtype=np.int32), np.empty(m, dtype=np.int32)
        self.changed = np.empty(m, dtype=np.int32)            # rows where x_new != xp
        self.off_rows, self.off_coef = np.empty(m, dtype=np.int32), np.empty(m)  # off_system_moves'
        self.mark = np.zeros(m, dtype=np.int8)
        self.n_free = 0
        self.lam = math.nan                                   # multiplier of Pi_K(y)
        self.sigma = math.nan
        self.lam_rate = 0.0
        self.ztx = np.zeros(qp.Z.p)                           # Z^T Pi_K(y)

    @property
    def J(self):
        return self.free[: self.n_free]

    def start(self, x, w, v, Zv, sigma):
        """Project y(v) for the new center x (w = Z^T x) and sigma; Z^T Pi_K(y) from w over the
        rows that changed. The multiplier is sigma b: the last one rescaled is the hint."""
        qp = self.qp
        np.multiply(Zv + qp.c, -sigma, out=self.pt)
        self.pt += x
        hint = self.lam * sigma / self.sigma
        _, self.lam, J = qp.K.project(self.pt, hint, x=self.xp, free=self.free)
        self.sigma = sigma
        self.n_free = J.shape[0]
        self.ztx[:] = w
        self._update_ztx(np.flatnonzero(self.xp != x).astype(np.int32), self.xp, x)

    def restricted(self, rows, d):
        """This solve continued on the rows `rows` (increasing; the free set among them) while the
        others stay at their current x: a new InnerSolve over K_A = {a_A^T x_A = d, l_A <= x_A <= u_A}
        (d = the constraint's d - a^T x over the others), with Z^T x (the others' part included)
        carried over."""
        inner = InnerSolve(self.qp.restricted(rows, d), self.counters, self.cfg)
        inner.pt[:] = self.pt[rows]
        inner.xp[:] = self.xp[rows]
        J = np.searchsorted(rows, self.J).astype(np.int32)
        inner.free[: J.shape[0]] = J
        inner.n_free = J.shape[0]
        inner.lam, inner.sigma = self.lam, self.sigma
        inner.ztx[:] = self.ztx
        return inner

    def reproject(self):
        """Pi_K(y) anew after y changed on some rows; Z^T Pi_K(y) updated over the rows whose x
        changed."""
        x_old = self.xp.copy()
        _, self.lam, J = self.qp.K.project(self.pt, self.lam, x=self.xp, free=self.free)
        self.n_free = J.shape[0]
        self._update_ztx(np.flatnonzero(self.xp != x_old).astype(np.int32), self.xp, x_old)

    def absorb(self, inner, rows):
        """Take back the state of `inner`, restricted to `rows` by restricted()."""
        self.pt[rows] = inner.pt
        self.xp[rows] = inner.xp
        self.ztx[:] = inner.ztx
        self.lam = inner.lam
        self.n_free = inner.n_free
        self.free[: self.n_free] = rows[inner.J]

    def _update_ztx(self, changed, x_new, x_old, work=None):
        """ztx += Z^T (x_new - x_old), over the changed rows (`work`: their stored values, when
        known) or, when they are many, in full."""
        qp, Z = self.qp, self.qp.Z
        if work is None:
            work = Z.rows_nnz(changed)[0]
        if work < 0.5 * qp.nnz or isinstance(Z, RowSubset):
            Z.rows_rmatvec_diff(changed, x_new, x_old, self.ztx)
            self.counters.passes += work / qp.nnz
        else:
            Z.rmatvec(x_new, out=self.ztx)
            self.counters.passes += 1

    def _update_from_system(self, res, changed, changed_work, J, system, *, step, zd):
        """ztx += Z^T (x_new - x_old) as -step Z_J^T Z_J d - dlam s (the system's) plus the rows
        off_system_moves lists, when they cost less than the changed rows (changed_work stored
        values); False (nothing done) otherwise."""
        Z, dlam = self.qp.Z, res.lam - self.lam
        n = off_system_moves(changed, J, self.J, self.free_new[: res.n_free], self.x_new, x_old=self.xp, zd=zd,
                             a=self.qp.K.a, step=step, dlam=dlam, mark=self.mark, rows=self.off_rows,
                             coef=self.off_coef)
        rows = self.off_rows[:n]
        work = Z.rows_nnz(rows)[0]
        if work + system.cost >= changed_work:
            return False
        system.subtract(self.ztx, zd, J, step, dlam)
        Z.rows_rmatvec(rows, self.off_coef[:n], self.ztx, accumulate=True)
        self.counters.passes += work / self.qp.nnz
        return True

    def trial(self, zd, alpha):
        """Project y(v + alpha d) into the *_new buffers; line_point's LinePoint."""
        self.counters.trials += 1
        return line_point(self.qp.K, self.pt, zd, alpha * self.sigma, self.xp, lam0=self.lam,
                          lam_shift=alpha * self.lam_rate, pt=self.pt_new, x=self.x_new, free=self.free_new,
                          changed=self.changed)

    def accept(self, res, system=None):
        """Make the trial point current; Z^T Pi_K(y) updated over the rows whose x changed, or,
        given the step's Newton system (its J in this solve's rows, _System, alpha sigma, Z d),
        from it and the rows whose move it does not predict, when those hold fewer stored values
        (most changed rows are free before and after, and the system already holds their move)."""
        changed = self.changed[: res.n_changed]
        work = self.qp.Z.rows_nnz(changed)[0]
        predicted = False
        if system is not None:
            J, newton_system, step, zd = system
            predicted = self._update_from_system(res, changed, work, J, newton_system, step=step, zd=zd)
        if not predicted:
            self._update_ztx(changed, self.x_new, self.xp, work)
        self.pt, self.pt_new = self.pt_new, self.pt
        self.xp, self.x_new = self.x_new, self.xp
        self.free, self.free_new = self.free_new, self.free
        self.lam, self.n_free = res.lam, res.n_free

    def search(self, d, zd, g, model_start=False):
        """The step: Armijo backtracking (mu = 1e-4, halving from a start step), or with
        line_search='exact' first the minimiser of psi along d (psi is convex and its slope
        monotone along d; searched from that start), kept if it passes the same Armijo test. The
        start is 1 (the Newton step) or, with `model_start`, the minimiser of psi's quadratic
        model along d on the current free set. Returns (alpha, trial) with the trial in the *_new
        buffers."""
        sigma = self.sigma
        scalars = search_scalars(d, g, zd, self.qp.K.a, self.J)
        dd, gd, aa, az = scalars.dd, scalars.gd, scalars.aa, scalars.az
        start = 1.0
        if model_start:
            zd_J = zd[self.J]
            curv = dd + sigma * (dot(zd_J, zd_J) - (az * az / aa if aa > 0 else 0.0))
            start = -gd / max(curv, 1e-300)
        # d lam / d alpha while the free set stays: the projection's hint at each trial
        self.lam_rate = -sigma * az / aa if aa > 0 else 0.0

        def trial(alpha):  # (psi(v + alpha d) - psi(v), its slope d/dalpha, line_point's result)
            res = self.trial(zd, alpha)
            return (alpha * gd + 0.5 * alpha * alpha * dd - alpha * res.zdx + res.s / sigma,
                    gd + alpha * dd - res.zdx, res)

        if self.line_search == "exact":
            alpha, (change, _, res) = line_minimum(trial, gd, rtol=self.cfg.exact_slope, start=start)
            if change <= self.cfg.armijo_mu * alpha * gd:
                return alpha, res
        alpha = start
        for _ in range(self.cfg.max_halvings):
            change, _, res = trial(alpha)
            if change <= self.cfg.armijo_mu * alpha * gd:
                return alpha, res
            alpha *= 0.5
        return alpha * 2.0, res  # no measurable decrease: a negligible step, the caller stops

