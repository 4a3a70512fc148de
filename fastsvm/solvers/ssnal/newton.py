"""SSsNAL's Newton systems (I + sigma Z_J^T P_J Z_J) d = -g and their cost model: a dense p x p
Cholesky (the Gram matrix Z_J^T Z_J kept and updated over the rows that joined or left J),
Sherman-Morrison-Woodbury with the |J| x |J| system (bordered by the equality constraint), or
preconditioned CG; the cheapest by estimated flops."""
import math
from dataclasses import dataclass

import numpy as np

from ..._core._linalg import bordered_solve, dense_newton
from ..._core._ssnal_linear import NewtonCG, sorted_changes
from ..._core._status import Status
from ...errors import ParameterError
from ...problems.vector import dot


def lost_definiteness():
    # I + sigma Z_J^T Z_J is positive definite in exact arithmetic: its Cholesky fails only once the
    # values overflowed, the numeric breakdown the trainer reports with its hint (fastsvm-scale)
    return FloatingPointError("ssnal: the Newton matrix lost positive definiteness (non-finite values)")


@dataclass
class System:
    """What a step's Newton system over J tells of Z^T x's change (InnerSolve.accept):
    subtract(out, zd, J_zd, step, dlam) does out -= step Z_J^T Z_J d + dlam Z_J^T a_J, given
    zd = Z d and J's place in zd, for a price of `cost` stored values (a dense system's G d; a CG
    one's from its residual, over the columns J's rows store)."""

    J: np.ndarray         # in Z's rows
    subtract: object
    cost: float


class NewtonSystems:
    """Newton directions for I + sigma Z_J^T P_J Z_J by the cheapest of a dense p x p Cholesky,
    Sherman-Morrison-Woodbury with the |J| x |J| system, or preconditioned CG (estimated flops)."""

    def __init__(self, qp, counters, config):
        self.qp = qp
        self.counters = counters
        self.cfg = config
        self.choice = choice = config.newton_system
        self.gram = None          # (J, Z_J^T Z_J, Z_J^T a_J) of the last dense system
        self.system = None        # System of this step's dense or CG system
        self.H = None             # its Newton matrix, factored in place
        self.block = None         # rows copied dense for BLAS (_dense_gram)
        self.changes = None
        self.cg = None            # NewtonCG, made at the first CG system
        self.cg_J = None          # the free set of the last system, when it was a CG one
        if choice not in ("auto", "dense", "smw", "cg"):
            raise ParameterError(f"ssnal: newton_system must be auto, dense, smw or cg, not {choice!r}")

    def method(self, J):
        Z = self.qp.Z
        p, k = Z.p, J.shape[0]
        if self.choice != "auto":  # a preference: a system too large to form falls back to CG
            fits = {"dense": p <= self.cfg.dense_p_max, "smw": k <= self.cfg.smw_j_max, "cg": True}[self.choice]
            return self.choice if fits else "cg"
        nnz_j = self.nnz_J[0]
        cg_iters = self.cfg.cg_iter_guess if self.cg is None else max(10, self.cg.last_iters)   # as the last system
        costs = {"cg": cg_iters * (2.0 * nnz_j + 6.0 * p + 2.0 * k) + self.cfg.cg_inexact_passes * self.qp.nnz}
        if p <= self.cfg.dense_p_max:
            gram = self._fresh_gram_cost(J)
            if self.gram is not None:  # the kept Gram matrix updated over the rows that changed
                gram = min(gram, self._gram_changes(J)[2])
            costs["dense"] = gram + p ** 3 / (3.0 * self.cfg.blas_speedup) + p * p
        if k <= self.cfg.smw_j_max:
            kern = min(0.5 * k * nnz_j, self._blas_cost(k, nnz_j, k * k * p))
            costs["smw"] = kern + k ** 3 / (3.0 * self.cfg.blas_speedup) + 2.0 * nnz_j + k * k
        return min(costs, key=costs.get)

    def direction(self, J, g, sigma, rtol, kinks=False, *, rows=None):
        """d with (I + sigma Z_J^T P_J Z_J) d = -g (by CG to the relative residual rtol); with
        `kinks`, a CG system's J gains the rows of the last one that left it (with_kinks; rows:
        the solve's rows, when it is restricted to some)."""
        self.system = None
        if J.shape[0] == 0:
            self.counters.systems["none"] += 1
            return -g
        self.nnz_J = self.qp.Z.rows_nnz(J)   # (sum, sum of squares) of the rows' stored values
        self.changes = None       # _gram_changes(J) once made for this step
        method = self.method(J)
        if method == "cg" and kinks and self.cg_J is not None:
            J = self.with_kinks(J, rows)
        self.cg_J = J if method == "cg" else None
        self.counters.systems[method] += 1
        return getattr(self, "_" + method)(J, np.ascontiguousarray(self.qp.K.a[J]), g, sigma, rtol)

    def with_kinks(self, J, rows):
        """J with the rows of the last system's J (a CG one) that are not in it, when at most Config.kink_rows.

        Late in a solve a step often ends a few rows at their bounds, and the next direction,
        without them, moves them back into the box, its step cut short where they re-enter, and J
        alternates between two sets of nearly the same rows. Any such J gives a descent direction;
        with the rows kept, the directions do not alternate (a few rows, not many: when many rows
        leave J it is still being found). Dense systems are left alone: their steps are cheap, and
        kept rows make them take more of them."""
        changed, weights = sorted_changes(J, self.cg_J)     # both increasing
        left = changed[weights < 0]
        if rows is not None:        # rows held at their bound are out of the solve
            at = np.minimum(np.searchsorted(rows, left), rows.shape[0] - 1)
            left = left[rows[at] == left]
        if 0 < left.shape[0] <= self.cfg.kink_rows:
            J = np.insert(J, np.searchsorted(J, left), left)
            self.nnz_J = self.qp.Z.rows_nnz(J)
        return J

    def _gram(self, J, a_J):
        """(G, s) = (Z_J^T Z_J, Z_J^T a_J): the last ones updated over the rows that joined or
        left J when that is cheaper than forming them anew (the free set changes little from
        one Newton step to the next)."""
        Z = self.qp.Z
        fresh = self._fresh_gram_cost(J)
        if self.gram is not None:
            rows, weights, update, blas = self._gram_changes(J)
            if update < fresh:
                self.counters.rows(Z, rows)
                _, G, s = self.gram
                if blas:   # rows full enough that a dense copy and BLAS beat sparse outer products
                    self._dense_gram(rows, self.qp.K.a[rows], G, s, weights)
                elif Z.rows_gram(rows, self.qp.K.a[rows], G, s, weights) is None:
                    raise KeyboardInterrupt
                self.gram = (J.copy(), G, s)
                return G, s
        self.counters.passes += self.nnz_J[0] / self.counters.nnz
        if self._blas(J.shape[0], self.nnz_J[0], 2.0 * J.shape[0] * Z.p * Z.p):
            G, s = np.zeros((Z.p, Z.p)), np.zeros(Z.p)
            self._dense_gram(J, a_J, G, s)
        else:
            gs = Z.rows_gram(J, a_J)
            if gs is None:
                raise KeyboardInterrupt
            G, s = gs
        self.gram = (J.copy(), G, s)
        return G, s

    def _dense_gram(self, rows, a_rows, G, s, weights=None):
        """G += B^T W B and s += B^T W a_rows for B = Z_rows, W = diag(weights) (default: identity),
        the rows copied dense a block at a time into a kept buffer of Config.dense_block_bytes: fresh
        memory for all of them at once can cost more to touch than the products take (many rows of
        few features)."""
        if self.block is None:
            p = self.qp.Z.p
            self.block = np.empty((max(1, self.cfg.dense_block_bytes // (8 * p)), p))
        block = self.block.shape[0]
        for lo in range(0, rows.shape[0], block):
            hi = min(lo + block, rows.shape[0])
            B = self.qp.Z.rows_dense(rows[lo:hi], out=self.block[: hi - lo])
            WB = B if weights is None else B * weights[lo:hi, None]
            G += WB.T @ B
            s += WB.T @ a_rows[lo:hi]

    def _dense(self, J, a_J, g, sigma, rtol):
        """H = I + sigma (G - s s^T / a_J^T a_J), G = Z_J^T Z_J, s = Z_J^T a_J; Cholesky."""
        Z = self.qp.Z
        G, s = self._gram(J, a_J)
        if self.H is None:           # formed and factored in one call, in a kept buffer
            self.H = np.empty((Z.p, Z.p))
        d = np.empty(Z.p)
        if not dense_newton(G, s, dot(a_J, a_J), sigma, g, H=self.H, d=d):
            raise lost_definiteness()

        def subtract(out, zd, J_zd, step, dlam):
            out -= step * (G @ d) + dlam * s
        self.system = System(J, subtract, Z.p * Z.p / self.cfg.blas_speedup)
        return d

    def _smw(self, J, a_J, g, sigma, rtol):
        """d = -g + sigma B^T (I + sigma B B^T)^-1 B g, B = P_J Z_J, B B^T = P_J (Z_J Z_J^T) P_J."""
        Z = self.qp.Z
        self.counters.rows(Z, J)  # the kernel block; the two products below cost as much again
        self.counters.rows(Z, J)
        k = J.shape[0]
        if self._blas(k, self.nnz_J[0], k * k * Z.p):
            B = Z.rows_dense(J)
            Kmat = B @ B.T
        else:
            Kmat = Z.rows_kernel(J)
            if Kmat is None:
                raise KeyboardInterrupt
        z = Z.rows_matvec(J, g)
        Kmat *= sigma
        Kmat.flat[:: k + 1] += 1.0
        if not bordered_solve(Kmat, z, a_J):      # P K P, P = I - a a^T / aa, never formed
            raise lost_definiteness()
        aa = dot(a_J, a_J)
        if aa > 0:
            z -= (dot(a_J, z) / aa) * a_J
        return Z.rows_rmatvec(J, sigma * z) - g

    def _cg(self, J, a_J, g, sigma, rtol):
        """Matrix-free preconditioned CG (cg_tolerance says how exactly)."""
        if self.cg is None:
            self.cg = NewtonCG(self.qp.Z)
        d = np.empty(self.qp.Z.p)
        iters, status = self.cg.solve(J, a_J, sigma, np.ascontiguousarray(-g), d, rtol=rtol,
                                      max_iter=self.cfg.cg_max_iter)
        if status == Status.INTERRUPTED:
            raise KeyboardInterrupt
        self.counters.cg += iters
        self.counters.passes += (2 * iters + 1) * self.nnz_J[0] / self.counters.nnz
        aa = dot(a_J, a_J)

        def subtract(out, zd, J_zd, step, dlam):   # Z_J^T Z_J d = Z_J^T P_J Z_J d + s (a_J^T Z_J d) / aa
            self.cg.add_products(out, -step, -(step * dot(a_J, zd[J_zd]) / aa + dlam))
        self.system = System(J, subtract, self.cg.n_products + J.shape[0])
        return d

    def _fresh_gram_cost(self, J):
        """The cost model's price of forming Z_J^T Z_J anew: sparse outer products or BLAS."""
        k = J.shape[0]
        return min(self.nnz_J[1], self._blas_cost(k, self.nnz_J[0], 2.0 * k * self.qp.Z.p ** 2))

    def _gram_changes(self, J):
        """(rows, weights, price, blas): the rows that joined or left J since the kept Gram matrix
        (sorted_changes) and the price of updating it over them (_update_gram_cost), made once a
        step for both method() and _gram()."""
        if self.changes is None:
            rows, weights = sorted_changes(J, self.gram[0])
            self.changes = (rows, weights) + self._update_gram_cost(rows)
        return self.changes

    def _update_gram_cost(self, rows):
        """The price of updating the kept Gram matrix over `rows` (those that joined or left J),
        and whether BLAS does it."""
        nnz, nnz2 = self.qp.Z.rows_nnz(rows)
        blas = self._blas_cost(rows.shape[0], nnz, 2.0 * rows.shape[0] * self.qp.Z.p ** 2)
        return min(nnz2, blas), blas < nnz2

    def _blas_cost(self, k, nnz, flops):
        """The cost model's price of a product of `flops` over k rows of Z (nnz stored values) by
        BLAS-3, the rows copied dense, when _blas says it is taken; else infinite (the sparse
        loops do it)."""
        if self._blas(k, nnz, flops):
            return k * self.qp.Z.p + flops / self.cfg.dense_rows_speedup
        return math.inf

    def _blas(self, k, nnz, flops):
        """True when a dense copy of k rows of Z (nnz stored values) and BLAS-3 beat the sparse
        loops: rows at least a quarter full and enough work to pay for the copy (<= 400 MB) and
        the call."""
        p = self.qp.Z.p
        return flops >= self.cfg.blas_min_flops and k * p <= 50_000_000 and 4 * nnz >= k * p

