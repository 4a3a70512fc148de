"""The LP-SVM as the linear program it is, solved by a primal-dual interior-point method.

    min |w|_1 + sum_i c_i xi_i   s.t.  a_i.w + y_i B b + xi_i >= 1,  xi >= 0,   a_i = y_i x_i,

w = u - v with u, v >= 0, b free (B the bias column's value, 0: no bias) and the surplus t >= 0
of each row. Its dual is the SVM's: max sum lambda, 0 <= lambda <= c, |A^T lambda|_inf <= 1,
y^T lambda = 0. Mehrotra's predictor-corrector; every Newton system is reduced to the normal
equations in (w, b) -- one dense (p+1)-square Cholesky of M^T diag(1/Delta) M + diag(1/E) per
iteration, M = diag(y) [X, B 1] -- so it is meant for the working sets of few features that the
NESVM homotopy hands it (fastsvm.solvers.nesvm). The per-row and per-feature eliminations are
exact scalar formulas; the rounding left near the end of the path (the normal matrix's
condition grows as 1/mu^2) is why the best iterate is kept and returned.
"""
import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

STEP_SHARE = 0.995      # of the largest step that keeps the iterate interior


def _max_step(x, dx):
    falling = dx < 0
    return min(1.0, float((-x[falling] / dx[falling]).min(initial=np.inf)))


def interior_point(X, y, c, bias, tol=1e-8, *, max_iter=100, stop=None):
    """(w, b, lambda, iterations, measure) of the LP above for CSR X (n x p), labels y = +-1 and
    costs c > 0; measure is the largest of the relative gap and the scaled residuals at the best
    iterate (tol ends the run)."""
    n, p = X.shape
    columns = [X] + ([sp.csr_matrix(np.full((n, 1), float(bias)))] if bias else [])
    M = (sp.diags(y) @ sp.hstack(columns, format="csr")).tocsr()
    MT = M.T.tocsr()
    free = M.shape[1] - p     # 1: the bias weight, unpenalized and unbounded
    u, v, xi, t = np.ones(p), np.ones(p), np.ones(n), np.ones(n)
    su, sv = np.ones(p), np.ones(p)
    lam = 0.5 * c
    sxi, st = c - lam, lam.copy()
    b = 0.0
    best, scale = None, 1.0 + float(c.max(initial=0.0))
    iterations = 0
    while iterations < max_iter:
        if stop is not None and stop[0]:
            raise KeyboardInterrupt
        wb = np.concatenate([u - v, [b] * free])
        rp = 1.0 - (M @ wb + xi - t)
        Ml = MT @ lam
        ru, rv = 1.0 - Ml[:p] - su, 1.0 + Ml[:p] - sv
        rxi, rt = c - lam - sxi, lam - st
        rb = -Ml[p:]
        primal, dual = u.sum() + v.sum() + float(c @ xi), float(lam.sum())
        gap = float(u @ su + v @ sv + xi @ sxi + t @ st)
        measure = max(abs(primal - dual) / max(1.0, abs(primal)), float(np.abs(rp).max(initial=0.0)),
                      max(np.abs(r).max(initial=0.0) for r in (ru, rv, rxi, rt, rb)) / scale)
        if best is None or measure < best[0]:
            best = (measure, u - v, b, lam.copy())
        elif best[0] < 1e-4 and measure > 100.0 * best[0]:
            break     # rounding has taken over: the best iterate is the answer
        if measure <= tol:
            break
        iterations += 1
        newton = _Newton(M, MT, (u, v, xi, t), (su, sv, sxi, st), (rp, ru, rv, rxi, rt, rb))
        xs, ss = newton.xs, newton.ss
        dx, _, _, ds = newton.direction([-x * s for x, s in zip(xs, ss)])
        a_p, a_d = _steps(xs, ss, dx, ds)
        affine = sum(float((x + a_p * d) @ (s + a_d * e)) for x, d, s, e in zip(xs, dx, ss, ds))
        target = (affine / gap) ** 3 * gap / (2 * p + 2 * n)
        dx, db, dlam, ds = newton.direction([target - x * s - d * e for x, s, d, e in zip(xs, ss, dx, ds)])
        a_p, a_d = (STEP_SHARE * a for a in _steps(xs, ss, dx, ds))
        for x, d in zip(xs, dx):
            x += a_p * d
        for s, e in zip(ss, ds):
            s += a_d * e
        if free:
            b += a_p * float(db[0])
        lam += a_d * dlam
    measure, w, b, lam = best
    return w, b, lam, iterations, measure


class _Newton:
    """The Newton systems of one iterate: primal blocks xs = (u, v, xi, t), their dual slacks ss,
    the residuals (rp, ru, rv, rxi, rt, rb); the normal matrix factored once for both steps."""

    def __init__(self, M, MT, xs, ss, residuals):
        self.M, self.MT, self.xs, self.ss, self.residuals = M, MT, xs, ss, residuals
        self.p = xs[0].size
        self.D = [x / s for x, s in zip(xs, ss)]
        Du, Dv, Dxi, Dt = self.D
        self.E, self.inv_delta = Du + Dv, 1.0 / (Dxi + Dt)
        H = (MT @ sp.diags(self.inv_delta) @ M).toarray()
        H[np.arange(self.p), np.arange(self.p)] += 1.0 / self.E
        self.factor = _cholesky(H)

    def direction(self, targets):
        """(dx, db, dlam, ds) for complementarity targets: s dx + x ds = target per pair."""
        M, MT, p = self.M, self.MT, self.p
        rp, ru, rv, rxi, rt, rb = self.residuals
        (Du, Dv, Dxi, Dt), (su, sv, sxi, st) = self.D, self.ss
        rcu, rcv, rcxi, rct = targets
        g = (rcu / su - Du * ru) - (rcv / sv - Dv * rv)         # dw = g + E (M^T dlam)
        f = (rcxi / sxi - Dxi * rxi) - (rct / st - Dt * rt)     # dxi - dt = f + Delta dlam
        rhs = MT @ (self.inv_delta * (rp - f))
        rhs[:p] += g / self.E
        rhs[p:] -= rb
        dwb = sla.cho_solve(self.factor, rhs)
        dlam = self.inv_delta * (rp - f - M @ dwb)
        Mdl = MT @ dlam
        ds = (ru - Mdl[:p], rv + Mdl[:p], rxi - dlam, rt + dlam)
        dx = [r / s - d * e for r, s, d, e in zip(targets, self.ss, self.D, ds)]
        return dx, dwb[p:], dlam, ds


def _steps(xs, ss, dx, ds):
    """The largest primal and dual steps (at most 1) that keep every block nonnegative."""
    return (min(_max_step(x, d) for x, d in zip(xs, dx)), min(_max_step(s, d) for s, d in zip(ss, ds)))


def _cholesky(H):
    """H's Cholesky factor, the diagonal lifted by the least multiple of its largest entry that
    makes it succeed (H is positive definite in exact arithmetic, barely so late in the path)."""
    top = float(np.abs(np.diag(H)).max(initial=1.0))
    for lift in (1e-15, 1e-12, 1e-9, 1e-6, 1e-3):
        try:
            return sla.cho_factor(H + lift * top * np.eye(H.shape[0]))
        except np.linalg.LinAlgError:
            continue
    raise np.linalg.LinAlgError("the interior-point normal equations are not positive definite")
