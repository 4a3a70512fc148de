"""SSsNAL on nonlinear kernels (RBF, polynomial, sigmoid) for C-SVC and epsilon-SVR (seed 000
sections 3 and 4.3-4.4; ALGORITHMS.md sections 0-2). Reached through the ``ssnal`` solver, which
hands every non-linear kernel here.

The dual (P) min 1/2 x^T Q x + c^T x over K = {a^T x = 0, 0 <= x <= u} has m = n variables
(C-SVC, Q = (y y^T) o K) or 2n (epsilon-SVR, Q = [K -K; -K K]); variable r sits on data row
src(r) with sign a_r, Q_rs = a_r a_s k(x_src(r), x_src(s)). Three phases:

1. Warm start. The explicit-feature problem is solved by the linear SSsNAL: random Fourier
   features (option ``rff`` = D, seeded from Subproblem.seed) for the RBF kernel, a Nystroem map
   on D sampled landmarks for the polynomial and sigmoid kernels (random Fourier features only
   approximate shift-invariant kernels). Its dual vector is x^0 -- feasible for (P), which has
   the same constraints -- and its final sigma is sigma_0.

2. The exact gradient grad f(x^0) = Q x^0 + c on all rows (the one product with every support
   vector: KernelProducts, an inverted-index kernel mat-vec that stores nothing), and from it the
   working set U: the rows of the free variables and of the KKT violators (option ``theta``
   adds the variables whose margin grad f_r + b a_r is within theta of a bound's switch; 0 by
   default: rows missed join in the next round at less cost). All other variables are held at
   their bound.

3. Rounds. SSsNAL on the exact kernel restricted to U (the other variables fixed, so the
   equality constraint keeps its value over U): the AL outer loop and semismooth Newton inner
   solves of ALGORITHMS.md section 2 in the kernel form -- the inner iterate is a vector of
   kernel coefficients u (the linear solver's v = Z^T u), so every product Z v becomes Q u.
   Newton directions by Sherman-Morrison-Woodbury on the free set J: a Cholesky factorization
   of I + sigma P_J Q_JJ P_J while Q_JJ fits the cache budget (and |J| <= 4000), CG beyond (on
   cached columns) -- accurate directions: inexact ones cost more Newton steps than CG. CG also
   when Gershgorin bounds the system's condition number by 3 (RBF with a large gamma: K
   diagonally dominant; ~11 products instead of |J|^3 / 3 flops). When K_UU is numerically
   sparse (RBF on unscaled features or with a large gamma: nearly every value underflows and
   nearly every row is a free support vector), it is held as a SparseKernel of its values above
   SPARSE_DROP / |U| instead, and its products and Newton systems (CG) cost the kept values
   (svmguide1: 6.2 -> 0.18 s). Otherwise the kernel columns of U come from the LRU KernelCache
   (-m MB), U at its first positions, so a column is computed on U only; Q u and Q x-hat are
   updated over the coordinates that change (the free set and the projection's switches),
   never recomputed; many new columns at once (a warm start's violators) bypass the cache
   through KernelProducts. Each round starts from the warm start's sigma, raised until the
   first projection's free set is small (<= 500) -- a small sigma keeps a warm start's free
   variables free. After the round the gradient of the rows
   outside U is updated over the coordinates that changed (KernelProducts again), eta is
   computed on the whole problem (ALGORITHMS.md section 0) and, while it exceeds the tolerance,
   the violators outside U join it and the round is repeated (or, when there are none, the next
   round is solved more tightly). A round's target is ROUND_REDUCTION times the whole problem's
   eta at its start, tol / 2 at the least. This active-set layer keeps the method exact: the
   final eta is the full problem's, from a gradient kept on every row.

The sigmoid kernel matrix is indefinite in general and (P) then nonconvex: the method still
reaches a KKT point (as SMO does) while the Newton matrices on the free sets stay positive
definite, and stops with a clear FastSVMError when one is not.

The sigma schedule (next_sigma), eta and b (kkt_residual), the line-search point (line_point),
the Newton-system solver (bordered_solve) and the projection (KnapsackSet) are the linear
solver's; b = lam / sigma from the last projection, as there. Solution.coef is y_i x_i (C-SVC) or
x_i - x_{n+i} (epsilon-SVR), rho = -b, objective = LIBSVM's dual objective, stop_measure = eta.
"""
import math
import time
from dataclasses import asdict, dataclass, replace

import numpy as np

from .._core._cache import KernelCache
from .._core._knapsack import KnapsackSet
from .._core._ssnal import bordered_solve, cholesky_solve, line_point
from .._core._sparse_kernel import SparseKernel, kept_above
from .._core._ssnal_kernel import KernelProducts, cache_axpy, cache_block, cache_store, cached, move_to_front
from ..errors import FastSVMError, ParameterError
from ..kernel_approximation import nystroem_map, random_fourier_map
from ..memory import check_kernel_cache
from . import ssnal
from .ssnal import _dot, _norm
from .base import Kernel, Solution, Subproblem, checked_arrays, solver_config
from .nystroem import dense_as_csr

KERNELS = ssnal.NONLINEAR
DEFAULT_MAX_OUTER = 200      # AL iterations in all (params.max_iter)
MAX_ROUNDS = 50              # working-set rounds
ARMIJO_MU = 1e-4
MAX_BACKTRACKS = 40
LINE_RTOL = 0.2              # the step's slope of psi is at most this fraction of the initial one
LINE_TRIALS = 12
NEWTON_J_MAX = 500           # free set aimed at by the first sigma of a round
SIGMA_STEPS = 8
# a round solves U to this fraction of the whole problem's eta at its start (or to tol / 2, the
# larger): while violators outside U set that eta, the rows joining next move U's solution
# again (mushrooms: 41 -> 23 Newton steps, 0.198 -> 0.163 s with 2 threads)
ROUND_REDUCTION = 0.03
PRODUCTS_MIN_COLUMNS = 64    # uncached columns from which a product bypasses the cache
STORE_VALUES = 1 << 21       # kernel values computed at once for the cache (16 MB)
DENSE_J_MAX = 4000           # Newton systems up to this order (and 8 |J|^2 <= -m) by Cholesky
ALWAYS_DENSE_J = 400         # ... and up to this order whatever the budget
CG_RTOL = 1e-6               # CG Newton directions: inexact ones cost more Newton steps than CG
CG_MAX_ITER = 1000
CG_CONDITION = 3.0           # Newton systems of a block whose condition is bounded by this: by CG
                             # (~11 products to CG_RTOL) whatever their order, not Cholesky
# K_UU held sparse (RBF): the values below SPARSE_DROP / |U| are dropped, so a row loses less than
# SPARSE_DROP (K_ii = 1), far below the float32 rounding (2^-24) of the cached columns the dense
# path reads; Newton systems by CG on the kept values while sigma x SPARSE_DROP stays below CG_RTOL
SPARSE_DROP = 2.0 ** -40
SPARSE_MAX_DENSITY = 1.0 / 32  # held sparse when at most this share of K_UU is kept ...
SPARSE_MIN_ROWS = 2 * ALWAYS_DENSE_J  # ... and U has this many rows (smaller: dense systems anyway)
SPARSE_SAMPLE_ROWS = 128     # rows whose kept share decides, before the whole block is built
SPARSE_VALUE_BYTES = 12      # a kept value and its column (at most half the -m budget in all)


# ---------------------------------------------------------------------------------------------
# the problem

@dataclass
class KernelDual:
    """(P) for a nonlinear kernel: variable r on data row source[r] with sign a_r (= K.a[r])."""

    X: object
    kernel: Kernel
    c: np.ndarray
    K: KnapsackSet
    source: np.ndarray

    @property
    def n(self):
        return self.X.shape[0]

    @property
    def m(self):
        return self.c.shape[0]

    def row_coef(self, x):
        """beta with Q x = a o (K beta)[source]: beta_i = sum over the variables r on row i of a_r x_r."""
        return np.bincount(self.source, weights=self.K.a * x, minlength=self.n)

    def gradient(self, h):
        """grad f = Q x + c from h = K beta(x) (one value per row)."""
        return self.K.a * h[self.source] + self.c

    def objective(self, x, grad):
        """f(x) = 1/2 x^T (grad - c) + c^T x: LIBSVM's obj."""
        return 0.5 * _dot(x, grad - self.c) + _dot(self.c, x)

    def primal_objective(self, x, grad, b):
        """1/2 x^T Q x + sum_r u_r max(0, -(grad_r + b a_r)): hinge / epsilon-insensitive primal
        at the expansion x with bias b."""
        slack = np.maximum(0.0, -(grad + b * self.K.a))
        return 0.5 * _dot(x, grad - self.c) + _dot(self.K.upper, slack)


def kernel_dual(sub: Subproblem) -> KernelDual:
    """The dual of a C-SVC or epsilon-SVR subproblem: c, a and the bounds as the linear solver
    builds them (ssnal.linear_dual), the kernel kept implicit."""
    qp = ssnal.linear_dual(sub)
    X, _, _ = checked_arrays(sub)
    n = X.shape[0]
    source = (np.arange(qp.m) % n).astype(np.int64)
    return KernelDual(X=X, kernel=sub.kernel, c=qp.c, K=qp.K, source=source)


# ---------------------------------------------------------------------------------------------
# warm start

def warm_start(sub: Subproblem, n_features, tol, feature_map="rff"):
    """(x^0, sigma_0, Solution) from the linear SSsNAL on explicit features of sub's kernel:
    random Fourier features for RBF, a Nystroem map on n_features sampled landmarks otherwise.

    The features are computed with sub.n_threads (the same bits for any count); the linear solve
    runs on one thread, whose reductions then do not depend on the thread count either: the
    same seed gives the same x^0, and so the same model, for every n_threads."""
    X, _, _ = checked_arrays(sub)
    k = sub.kernel
    if k.kind == "rbf" and feature_map == "rff":
        D = n_features + n_features % 2
        fmap = random_fourier_map(X.shape[1], D, k.gamma, seed=sub.seed, pairs=True)
    else:
        fmap = nystroem_map(X, k.kind, k.gamma, k.degree, k.coef0, n_components=min(n_features, X.shape[0]),
                            seed=sub.seed, n_threads=sub.n_threads)
    features = fmap.transform(X, sub.n_threads, sub.stop)
    if features.shape[1] == 0:  # a kernel that vanishes on the landmarks
        features = np.zeros((X.shape[0], 1))
    log = None if sub.log is None else (lambda line: sub.log("warm start: " + line))
    linear = Subproblem(
        formulation=sub.formulation, X=dense_as_csr(features), y=sub.y, upper=sub.upper,
        kernel=Kernel(kind="linear"),
        params=replace(sub.params, kernel_type="linear", tol=tol, max_iter=None, options={}),
        seed=sub.seed, stop=sub.stop, log=log, n_threads=1)
    # equal rows have equal features, but merging them would copy the dense features: fresh
    # memory that cost more than the passes saved (a9a: warm start 0.21 -> 0.31 s)
    solution = ssnal.solve(linear, merge=False)
    return np.asarray(solution.dual, dtype=np.float64), float(solution.details["sigma"]), solution


# ---------------------------------------------------------------------------------------------
# the working set

class _WorkingSet:
    """The rows U at cache positions 0 .. L-1 and their variables ("sub" indices): Q_UU products
    and blocks from the cache, the equality constraint restricted to U."""

    def __init__(self, dual, cache, products, rows, x, stop, rbf=False, sparse_budget=0):
        n = dual.n
        self.rbf = rbf          # K > 0 with K_ii = 1: its row sums are a product (row_sums)
        self.dual, self.cache, self.products, self.stop = dual, cache, products, stop
        self.row_at = move_to_front(cache, np.ascontiguousarray(rows, dtype=np.int32))
        self.L = L = rows.shape[0]
        self.rows = self.row_at[:L].astype(np.int64)
        self.rows_i32 = np.ascontiguousarray(self.row_at[:L])
        copies = dual.m // n                             # 1 (C-SVC) or 2 (SVR)
        self.vars = np.concatenate([self.rows + k * n for k in range(copies)])
        self.pos = np.tile(np.arange(L, dtype=np.int32), copies)
        self.a = dual.K.a[self.vars]
        self.c = dual.c[self.vars]
        self.upper = dual.K.upper[self.vars]
        x_u = x[self.vars]
        self.K = KnapsackSet(self.a, _dot(self.a, x_u), np.zeros_like(self.upper), self.upper)
        self.seen = np.zeros(L, dtype=bool)              # positions whose column a product used
        # K_UU's kept values when it is numerically sparse (RBF; sparse_budget bytes at most)
        self.sparse = _sparse_kernel(products, self.rows_i32, sparse_budget) if rbf and sparse_budget else None

    def qmul(self, v, idx=None):
        """(Q_UU v) for a vector v over the sub variables, nonzero only on idx (None: anywhere)."""
        if idx is None:
            idx = np.flatnonzero(v)
        if idx.shape[0] == 0:
            return np.zeros(self.a.shape[0])
        beta = np.bincount(self.pos[idx], weights=self.a[idx] * v[idx], minlength=self.L)
        nz = np.flatnonzero(beta).astype(np.int32)
        out = np.zeros(self.L)
        if self.sparse is not None:
            self.sparse.scatter(nz, beta[nz], out)
            return self.a * out[self.pos]
        have = cached(self.cache, nz, self.L)
        first = ~(have | self.seen[nz])
        if np.count_nonzero(first) >= PRODUCTS_MIN_COLUMNS:
            # many columns never used before, most needed once (coordinates switching bounds):
            # computed on the fly by the faster inverted-index product, kept out of the cache
            # until used again (the free set's columns are, at every Newton step)
            far = nz[first]
            self.products.matvec(self.rows_i32, self.rows_i32[far], beta[far], out)
            self.seen[far] = True
            nz, have = nz[~first], have[~first]
        missing = nz[~have]
        if missing.shape[0] >= PRODUCTS_MIN_COLUMNS:
            # many columns to cache: computed a chunk at a time by the inverted-index product on
            # the threads, each chunk used at once (a budget smaller than them all keeps the
            # last ones); one column at a time, each split over the threads, is 2-3x slower
            held = nz[have]    # first: a tight budget would drop them for the new ones
            cache_axpy(self.cache, held, beta[held], self.L, out, self.stop)
            step = max(1, STORE_VALUES // max(self.L, 1))
            for lo in range(0, missing.shape[0], step):
                part = missing[lo: lo + step]
                cache_store(self.cache, part, self.products.block(self.rows_i32[part], self.rows_i32), self.L)
                cache_axpy(self.cache, part, beta[part], self.L, out, self.stop)
        else:
            cache_axpy(self.cache, nz, beta[nz], self.L, out, self.stop)
        return self.a * out[self.pos]

    def row_sums(self, J):
        """sum_{s in J} |Q_rs| for every r in J, by one product (RBF: |Q_rs| = K_rs)."""
        v = np.zeros(self.a.shape[0])
        v[J] = self.a[J]
        return self.a[J] * self.qmul(v, J)[J]

    def q_block(self, J):
        """Q_JJ = (a_J a_J^T) o K[pos_J, pos_J] (SVR: both variables of a row may be in J): from
        cached columns, or, when many are not cached (a free set on the move), by KernelProducts
        (|J|^2 kernel values instead of |J| L)."""
        p = self.pos[J]
        uniq, inv = np.unique(p, return_inverse=True)
        uniq = uniq.astype(np.int32)
        if uniq.shape[0] - np.count_nonzero(cached(self.cache, uniq, self.L)) >= PRODUCTS_MIN_COLUMNS:
            rows = self.rows_i32[uniq]
            Kb = self.products.block(rows, rows)
        else:
            Kb = cache_block(self.cache, uniq, self.L, self.stop)
        if uniq.shape[0] != p.shape[0] or np.any(uniq != p):
            Kb = Kb[np.ix_(inv, inv)]
        aJ = self.a[J]
        Kb *= aJ[:, None]        # in place: blocks of order thousands, no temporaries
        Kb *= aJ
        return Kb


def _sparse_kernel(products, rows, budget_bytes):
    """K[rows][:, rows] as a SparseKernel of its values >= SPARSE_DROP / |rows|, when that keeps at
    most SPARSE_MAX_DENSITY of them and fits budget_bytes (judged on SPARSE_SAMPLE_ROWS evenly
    spaced rows first); else None. Built a block of rows at a time by KernelProducts."""
    L = rows.shape[0]
    if L < SPARSE_MIN_ROWS:
        return None
    threshold = SPARSE_DROP / L
    max_kept = min(SPARSE_MAX_DENSITY * L * L, budget_bytes / SPARSE_VALUE_BYTES)
    sample = np.ascontiguousarray(rows[:: max(1, L // SPARSE_SAMPLE_ROWS)])
    if np.count_nonzero(products.block(sample, rows) >= threshold) * (L / sample.shape[0]) > max_kept:
        return None
    counts, indices, values = [], [], []
    kept = 0
    step = max(1, STORE_VALUES // L)
    for lo in range(0, L, step):
        c, i, v = kept_above(products.block(rows[lo: lo + step], rows), threshold)
        kept += i.shape[0]
        if kept > max_kept:      # the sample misjudged it
            return None
        counts.append(c)
        indices.append(i)
        values.append(v)
    indptr = np.zeros(L + 1, dtype=np.int32)
    np.cumsum(np.concatenate(counts), out=indptr[1:])
    return SparseKernel(indptr, np.concatenate(indices), np.concatenate(values), products.n_threads)


# ---------------------------------------------------------------------------------------------
# SSsNAL on the working set

class _Counters:
    def __init__(self):
        self.newton = 0
        self.outer = 0
        self.trials = 0
        self.cg = 0
        self.systems = {"dense": 0, "cg": 0, "sparse": 0, "none": 0}


def _newton_direction(ws, J, r, hr, sigma, budget_bytes, counters):
    """(delta, Q delta): the SMW form of (I + sigma Z_J^T P_J Z_J) d = -g with g = Z^T r in the
    coefficient space: delta = -r + sigma E_J P_J z, (I + sigma P_J Q_JJ P_J) z = P_J (Q r)_J.
    The |J| x |J| system by CG on K_UU's kept values when it is held sparse (and |J| exceeds
    ALWAYS_DENSE_J), else by Cholesky (bordered_solve, on I + sigma Q_JJ) while Q_JJ fits the
    cache budget and |J| <= DENSE_J_MAX, unless the system is well conditioned; otherwise by CG
    on the cached columns."""
    k = J.shape[0]
    if k == 0:
        counters.systems["none"] += 1
        return -r, -hr
    aJ = ws.a[J]
    aa = _dot(aJ, aJ)
    t = hr[J] - (_dot(aJ, hr[J]) / aa) * aJ
    fits = 8.0 * k * k <= budget_bytes
    if ws.sparse is not None and k > ALWAYS_DENSE_J and sigma * SPARSE_DROP <= CG_RTOL:
        counters.systems["sparse"] += 1
        z, iterations = ws.sparse.newton_cg(ws.pos[J], aJ, sigma, t, CG_RTOL, CG_MAX_ITER, ws.stop)
        if iterations < 0:
            raise _not_psd()
        counters.cg += iterations
    elif k <= ALWAYS_DENSE_J or (fits and k <= DENSE_J_MAX and not _well_conditioned(ws, J)):
        counters.systems["dense"] += 1
        z = _dense_solve(lambda: ws.q_block(J), t, aJ, aa, sigma)
    else:
        counters.systems["cg"] += 1
        z = _cg(ws, J, aJ, aa, sigma, t, counters)
    z -= (_dot(aJ, z) / aa) * aJ
    delta = -r
    delta[J] += sigma * z
    zfull = np.zeros(r.shape[0])
    zfull[J] = z
    return delta, sigma * ws.qmul(zfull, J) - hr


def _well_conditioned(ws, J):
    """RBF: whether I + sigma P Q_JJ P has a condition number <= CG_CONDITION for every sigma, by
    Gershgorin (Q_JJ's eigenvalues lie within 1 -+ its rows' off-diagonal sums, one product):
    a large gamma makes K diagonally dominant, and CG then needs a few products (on the cached
    columns) where Cholesky needs |J|^3 / 3 flops."""
    if not ws.rbf:
        return False
    radius = np.max(ws.row_sums(J)) - 1.0
    return radius < 1.0 and (1.0 + radius) / (1.0 - radius) <= CG_CONDITION


def _dense_solve(block, t, a, aa, sigma):
    """z with (I + sigma P Q P) z = t, a^T z = 0 (P = I - a a^T / aa, t = P t), Q = block()
    (a new array): bordered_solve on I + sigma Q, or, when that is not positive definite (a
    sigmoid kernel) but the projected matrix may be, Cholesky of I + sigma P Q P."""
    M = block()
    M *= sigma
    M.flat[:: M.shape[0] + 1] += 1.0
    z = t.copy()
    if bordered_solve(M, z, a):
        return z
    z = t.copy()
    if not cholesky_solve(_projected_matrix(block(), a, aa, sigma), z):
        raise _not_psd()
    return z


def _projected_matrix(Q, a, aa, sigma):
    """I + sigma P Q P, P = I - a a^T / aa, in place of Q."""
    Qa = Q @ a
    Q -= (np.outer(Qa, a) + np.outer(a, Qa)) / aa
    Q += (_dot(a, Qa) / (aa * aa)) * np.outer(a, a)
    Q *= sigma
    Q.flat[:: Q.shape[0] + 1] += 1.0
    return Q


def _not_psd():
    return FastSVMError("ssnal: the kernel matrix is not positive semidefinite on the working set (a sigmoid "
                        "kernel usually is not): SSsNAL needs a convex dual; use -s smo")


def _cg(ws, J, aJ, aa, sigma, t, counters):
    """z with (I + sigma P Q_JJ P) z = t by CG to the relative residual CG_RTOL (an inexact
    Newton direction), products from the cached columns (a formed block of order > DENSE_J_MAX
    is read as slowly as the float32 columns, and forming it costs as much again)."""
    full = np.zeros(ws.a.shape[0])

    def apply(v):
        v = v - (_dot(aJ, v) / aa) * aJ
        full[J] = v
        w = ws.qmul(full, J)[J]
        full[J] = 0.0
        return v + sigma * (w - (_dot(aJ, w) / aa) * aJ)

    z = np.zeros_like(t)
    res = t.copy()
    d = res.copy()
    rr = _dot(res, res)
    bound = (CG_RTOL ** 2) * rr
    for _ in range(CG_MAX_ITER):
        if rr <= bound:
            break
        counters.cg += 1
        Hd = apply(d)
        dHd = _dot(d, Hd)
        if not dHd > 0.0:
            raise _not_psd()
        alpha = rr / dHd
        z += alpha * d
        res -= alpha * Hd
        rr_new = _dot(res, res)
        d = res + (rr_new / rr) * d
        rr = rr_new
    return z


class _Inner:
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
        return r, hr, math.sqrt(max(_dot(r, hr), 0.0))

    def step(self, delta, hdelta, r, counters):
        """Move along delta to the minimiser of psi (line_minimum), each trial one projection
        (line_point, with Q delta in place of the linear solver's Z d); Armijo's test (mu = 1e-4)
        is checked there, halving if it fails. Returns alpha (0: no decrease is possible)."""
        ws, sigma = self.ws, self.sigma
        dd, gd = _dot(delta, hdelta), _dot(r, hdelta)
        if dd < 0.0:
            raise _not_psd()
        if not gd < 0.0:   # |grad psi| at rounding level: no step can decrease psi
            return 0.0
        aJ = ws.a[self.J]
        lam_rate = -sigma * _dot(aJ, hdelta[self.J]) / _dot(aJ, aJ) if self.J.shape[0] else 0.0
        pt_new, x_new, free_new, changed = self.buffers

        def trial(alpha):
            """(psi(u + alpha delta) - psi(u), its slope, line_point's result)."""
            counters.trials += 1
            res = line_point(ws.K, self.pt, hdelta, alpha * sigma, self.xh, self.lam, alpha * lam_rate,
                             pt_new, x_new, free_new, changed)
            zdx, s = res[2], res[3]
            return alpha * gd + 0.5 * alpha * alpha * dd - alpha * zdx + s / sigma, gd + alpha * dd - zdx, res

        alpha, (change, _, res) = ssnal.line_minimum(trial, gd, rtol=LINE_RTOL, grow=4.0, max_grow=None,
                                                     max_refine=None, max_trials=LINE_TRIALS)
        for _ in range(MAX_BACKTRACKS):
            if change <= ARMIJO_MU * alpha * gd:
                break
            alpha *= 0.5
            change, _, res = trial(alpha)
        lam, n_free, _, _, n_changed = res
        ch = changed[:n_changed].copy()
        self.hxh += ws.qmul(x_new - self.xh, ch)
        self.u += alpha * delta
        self.hu += alpha * hdelta
        self.pt, self.xh = pt_new.copy(), x_new.copy()
        self.lam, self.J = lam, free_new[:n_free].copy()
        return alpha


def _first_sigma(ws, x, grad, sigma):
    """sigma * 3^k, raised while the first projection has more than NEWTON_J_MAX free variables
    and raising still shrinks that free set by a quarter: a small sigma keeps most of a warm
    start's free variables free (first Newton systems as large as the working set), but a free
    set that stays is the problem's own (large C) and a larger sigma would only make the Newton
    systems worse conditioned."""
    free = ws.K.project(x - sigma * grad)[2].shape[0]
    for _ in range(SIGMA_STEPS):
        if free <= NEWTON_J_MAX or sigma * 3.0 > ssnal.SIGMA_MAX:
            break
        free_up = ws.K.project(x - 3.0 * sigma * grad)[2].shape[0]
        if free_up > 0.75 * free:
            break
        sigma, free = 3.0 * sigma, free_up
    return sigma


def _solve_working_set(ws, x, hx, sigma, target, tol, opts, budget_bytes, counters, stop, log, t0,
                       max_outer, objective):
    """SSsNAL on the working set from x (hx = the sub-problem's Q x, i.e. its gradient minus c)
    until its KKT residual |x - Pi(x - grad)| is <= target or max_outer AL iterations were done
    in all. ``objective`` is f at the start (whole problem; f - f_start = D.(grad_start +
    Q_UU D / 2) over the step D on U, so it stays exact). Returns (x, hx, sigma, lam): lam the
    multiplier of the last projection (NaN if none)."""
    lam = math.nan
    x_start, grad_start, hx_start = x, hx + ws.c, hx
    sigma = _first_sigma(ws, x, hx + ws.c, sigma)
    for k in range(1, max_outer + 1):
        if counters.outer >= max_outer:
            break
        counters.outer += 1
        eps = max(0.1 * tol, 0.5 ** k)
        inner = _Inner(ws, x, hx, sigma, lam * sigma)
        steps = 0
        inner_ok = False
        while True:
            if stop[0]:
                raise KeyboardInterrupt
            r, hr, gnorm = inner.residual()
            inner_ok = gnorm <= eps / math.sqrt(sigma)
            if inner_ok or steps >= opts["max_newton"]:
                break
            delta, hdelta = _newton_direction(ws, inner.J, r, hr, sigma, budget_bytes, counters)
            alpha = inner.step(delta, hdelta, r, counters)
            steps += 1
            counters.newton += 1
            if alpha < 1e-10:
                break
        step = inner.xh - x
        rejected = not inner_ok and _dot(step, hx + ws.c + 0.5 * (inner.hxh - hx)) > 0.0
        if not rejected:   # an inner solve that failed and raised f is no proximal step: retried
            x, hx = inner.xh, inner.hxh                   # with a smaller sigma (next_sigma)
            lam = inner.lam / sigma                       # b of this projection
        grad = hx + ws.c
        eta_u, _ = ssnal.kkt_residual(x, grad, ws.K, hint=lam)
        scale = 1.0 + _norm(x) + _norm(grad)
        r_primal = _norm(step) / sigma / scale
        if log is not None:
            dual = objective + _dot(x - x_start, grad_start + 0.5 * (hx - hx_start))
            log(f"ssnal: iteration {counters.outer}  KKT residual on the {ws.L} working rows {eta_u:.3e} "
                f"(this round stops at {target / scale:.3g})  objective {dual:.10g}  sigma {sigma:.3g}  "
                f"{steps} Newton steps on {inner.J.shape[0]} free variables  {time.perf_counter() - t0:.2f}s"
                + (ssnal.REJECTED_NOTE if rejected else ""))
        if eta_u * scale <= target:
            break
        sigma = ssnal.next_sigma(sigma, steps, inner_ok, opts["sigma_factor"],
                                 r_primal >= ssnal.PRIMAL_LAG * eta_u)
    return x, hx, sigma, lam


# ---------------------------------------------------------------------------------------------
# the method

def _working_rows(dual, x, grad, b, theta, exclude=None):
    """Rows with a free variable, a KKT violator, or a margin grad_r + b a_r within theta of a
    bound's switch (rows in ``exclude`` left out)."""
    margin = grad + b * dual.K.a
    upper = dual.K.upper
    free = (x > 0.0) & (x < upper)
    violating = ((x < upper) & (margin < 0.0)) | ((x > 0.0) & (margin > 0.0))
    pick = free | violating | (np.abs(margin) < theta)
    rows = np.zeros(dual.n, dtype=bool)
    rows[dual.source[pick]] = True
    if exclude is not None:
        rows[exclude] = False
    return np.flatnonzero(rows)


def solve(sub: Subproblem) -> Solution:
    """Solve one C-SVC or epsilon-SVR subproblem with an RBF, polynomial or sigmoid kernel."""
    params = sub.params
    if sub.kernel.kind not in KERNELS:
        raise ParameterError(f"ssnal (kernel) supports the {', '.join(KERNELS)} kernels, not {sub.kernel.kind}")
    if params.loss not in (None, "hinge"):
        raise ParameterError("ssnal solves the hinge-loss (L1) dual only")
    if sub.kernel.kind == "polynomial" and sub.kernel.degree < 0:
        raise ParameterError("degree of polynomial kernel < 0")
    opts = asdict(solver_config(ssnal.SPEC, params, sub.kernel.kind))
    tol = ssnal.DEFAULT_TOL if params.tol is None else float(params.tol)
    max_outer = DEFAULT_MAX_OUTER if params.max_iter is None else int(params.max_iter)
    dual = kernel_dual(sub)
    t0 = time.perf_counter()
    stats = {"kernel_values": 0}
    log = sub.log

    x, sigma0, warm = warm_start(sub, opts["rff"], max(opts["warm_tol"], tol), opts["warm"])
    sigma = sigma0
    times = {"warm_start": time.perf_counter() - t0}
    if log is not None:
        rff = sub.kernel.kind == "rbf" and opts["warm"] == "rff"      # as warm_start chooses
        log(f"ssnal: warm start ({'random Fourier features' if rff else 'Nystroem'}, "
            f"D = {opts['rff']}): {warm.n_iter} iterations, KKT residual {warm.stop_measure:.3e}  {times['warm_start']:.2f}s")

    k = sub.kernel
    threads = max(1, int(sub.n_threads))
    products = KernelProducts(dual.X, k.kind, k.gamma, k.degree, k.coef0, threads, sub.stop)
    budget = int(params.cache_size * (1 << 20))
    check_kernel_cache(params.cache_size, dual.n)
    cache = KernelCache(dual.X, k.kind, k.gamma, k.degree, k.coef0, budget, threads)
    all_rows = np.arange(dual.n, dtype=np.int32)

    # the gradient at x^0 on every row
    beta = dual.row_coef(x)
    support = np.flatnonzero(beta).astype(np.int32)
    h = np.zeros(dual.n)
    products.matvec(all_rows, support, beta[support], h)
    stats["kernel_values"] += dual.n * support.shape[0]
    grad = dual.gradient(h)
    times["gradient"] = time.perf_counter() - t0 - times["warm_start"]

    history = []
    counters = _Counters()
    eta, b = ssnal.kkt_residual(x, grad, dual.K)
    b_last = b
    status = "max_iter"
    in_set = np.zeros(dual.n, dtype=bool)
    ws_rows = np.zeros(0, dtype=np.int64)
    target_scale = 1.0
    rounds = 0
    for rounds in range(1, MAX_ROUNDS + 1):
        scale = 1.0 + _norm(x) + _norm(grad)
        entry = {"round": rounds, "eta": eta, "dual": dual.objective(x, grad),
                 "primal": dual.primal_objective(x, grad, b), "sigma": sigma, "working_set": int(in_set.sum()),
                 "time": time.perf_counter() - t0}
        history.append(entry)
        if log is not None:
            log(f"ssnal: round {rounds} of working rows  KKT residual {eta:.3e} (stops at {tol:g})  "
                f"objective {entry['dual']:.10g}  duality gap {entry['primal'] + entry['dual']:.3e}  "
                f"{entry['working_set']} working rows  {entry['time']:.2f}s")
        if eta <= tol:
            status = "converged"
            break
        if counters.outer >= max_outer:
            break
        if rounds == 1:
            new = _working_rows(dual, x, grad, b, opts["theta"])
        else:
            new = _working_rows(dual, x, grad, b, opts["theta"], exclude=in_set)
            if new.shape[0] == 0:
                target_scale *= 0.1          # no violators outside U: solve U more tightly
        if new.shape[0] == 0 and ws_rows.shape[0] == 0:
            break                            # nothing to work on (eta is rounding-limited)
        in_set[new] = True
        ws_rows = np.concatenate([ws_rows, new])
        # K_UU held sparse may take half the -m budget
        ws = _WorkingSet(dual, cache, products, ws_rows, x, sub.stop, k.kind == "rbf", budget // 2)
        ws_rows = ws.rows
        if log is not None and ws.sparse is not None:
            log(f"ssnal: kernel block of the working rows held sparse: {ws.sparse.nnz} values kept "
                f"({100.0 * ws.sparse.nnz / max(ws.L, 1) ** 2:.2g}%)")
        x_u = x[ws.vars]
        hx = grad[ws.vars] - ws.c
        # each round restarts the AL from the warm start's sigma: new rows make the prox center
        # far from the round's solution, and a large sigma would make psi almost nonsmooth
        t_round = time.perf_counter()
        target = scale * max(0.5 * tol * target_scale, ROUND_REDUCTION * eta)
        x_new, hx_new, sigma, lam = _solve_working_set(
            ws, x_u, hx, sigma0, target, tol, opts, budget, counters, sub.stop, log, t0, max_outer, entry["dual"])
        if not math.isnan(lam):
            b_last = lam
        # the gradient outside U, updated over the rows whose coefficient changed
        x_old_u = x[ws.vars]
        x[ws.vars] = x_new
        d_beta = np.bincount(ws.pos, weights=ws.a * (x_new - x_old_u), minlength=ws.L)
        moved = np.flatnonzero(d_beta)
        grad[ws.vars] = hx_new + ws.c
        t_update = time.perf_counter()
        times["working_set"] = times.get("working_set", 0.0) + t_update - t_round
        outside = np.flatnonzero(~in_set).astype(np.int32)
        if moved.shape[0] and outside.shape[0]:
            h_out = np.zeros(outside.shape[0])
            products.matvec(outside, ws.rows[moved].astype(np.int32), d_beta[moved], h_out)
            stats["kernel_values"] += outside.shape[0] * moved.shape[0]
            out_vars = np.concatenate([outside + kk * dual.n for kk in range(dual.m // dual.n)])
            grad[out_vars] += dual.K.a[out_vars] * np.tile(h_out, dual.m // dual.n)
        eta, b = ssnal.kkt_residual(x, grad, dual.K, hint=b_last)
        times["update"] = times.get("update", 0.0) + time.perf_counter() - t_update

    stats["kernel_values"] += int(cache.n_computed)
    times["total"] = time.perf_counter() - t0
    n = dual.n
    coef = dual.K.a * x if sub.formulation == "c_svc" else x[:n] - x[n:]
    return Solution(
        coef=np.ascontiguousarray(coef, dtype=np.float64),
        rho=-b_last,
        objective=dual.objective(x, grad),
        n_iter=counters.outer,
        stop_measure=eta,
        dual=x,
        status=status,
        history=history,
        details={"newton": counters.newton, "rounds": rounds, "working_set": int(in_set.sum()),
              "trials": counters.trials, "cg": counters.cg, "systems": dict(counters.systems),
              "sigma": sigma, "b_kkt": b, "time": times, "kernel_values": stats["kernel_values"],
              "warm_start": {"iterations": warm.n_iter, "eta": warm.stop_measure}, "tol": tol},
    )
