"""Newton directions of the kernel front end, in kernel coefficients: the Sherman-Morrison-
Woodbury form of the linear solver's system, its |J| x |J| part by Cholesky (bordered by the
equality constraint), or by the shared CG on a formed float32 block (a ProjectedBlock, without the
GIL), on products computed on the fly or on K_UU's kept values (system_method picks by cost and
memory)."""
import numpy as np

from ..._core._cg import conjugate_gradient
from ..._core._linalg import ProjectedBlock, bordered_solve, cholesky_solve
from ..._core._status import Status
from ...errors import FastSVMError
from ...problems.vector import dot


def newton_direction(ws, J, r, hr, sigma, *, counters):
    """(delta, Q delta): the SMW form of (I + sigma Z_J^T P_J Z_J) d = -g with g = Z^T r in the
    coefficient space: delta = -r + sigma E_J P_J z, (I + sigma P_J Q_JJ P_J) z = P_J (Q r)_J,
    the |J| x |J| system solved as system_method picks, a block's bytes lent by the cache."""
    k = J.shape[0]
    if k == 0:
        counters.systems["none"] += 1
        return -r, -hr
    aJ = ws.a[J]
    aa = dot(aJ, aJ)
    t = hr[J] - (dot(aJ, hr[J]) / aa) * aJ
    method = system_method(ws, J, sigma)
    counters.systems[method] += 1
    if method == "sparse":
        z, iterations, status = ws.sparse.newton_cg(ws.pos[J], aJ, sigma, t, ws.cfg.kernel_cg_rtol,
                                                    max_iter=ws.cfg.kernel_cg_max_iter, stop=ws.stop)
        counters.cg += iterations
        if status == Status.BREAKDOWN:
            raise not_psd()
    elif method == "dense":
        with ws.lent(8 * k * k):
            z = dense_solve(lambda: ws.q_block(J), t, aJ, aa, sigma)
    elif method == "block":
        with ws.lent(4 * k * k):
            operator = ProjectedBlock(ws.q_block(J, np.float32), aJ, sigma, ws.products.n_threads)
            z = coefficient_cg(operator, ws, t, counters)
            del operator                     # the block freed before the cache takes its share back
    else:
        z = coefficient_cg(projected(ws.q_product(J), aJ, aa, sigma), ws, t, counters)
    z -= (dot(aJ, z) / aa) * aJ
    delta = -r
    delta[J] += sigma * z
    zfull = np.zeros(r.shape[0])
    zfull[J] = z
    return delta, sigma * ws.qmul(zfull, J) - hr


def system_method(ws, J, sigma):
    """How the Newton system of order k = |J| is solved, by what it costs and what of the -m
    budget is available (ws.available: what the kept values of K_UU do not hold):
    - "sparse": CG on K_UU's kept values, when it is held sparse (k > Config.always_dense_j);
    - "dense": Cholesky (k^3 / 3 flops) of the float64 block (8 k^2 bytes within the -m budget),
      up to Config.dense_j_max, unless the system is well conditioned (Gershgorin);
    - "block": CG on Q_JJ formed once in float32 (k^2 kernel values, 4 k^2 bytes within the budget),
      each product k^2 reads -- a well-conditioned system (~11 products) or one too large for
      Cholesky;
    - "products": CG with each product's k^2 kernel values computed on the fly (KernelProducts),
      where no block fits. Not the cached columns: they hold |U| >= k values each, so where the
      block does not fit they do not either, and every product would recompute the evicted ones
      (k |U| values a product, against k^2 on the fly)."""
    k = J.shape[0]
    cfg = ws.cfg
    if ws.sparse is not None and k > cfg.always_dense_j and sigma * cfg.sparse_drop <= cfg.kernel_cg_rtol:
        return "sparse"
    if k <= cfg.always_dense_j:
        return "dense"
    if 8.0 * k * k <= ws.available and k <= cfg.dense_j_max and not well_conditioned(ws, J):
        return "dense"
    if 4.0 * k * k <= ws.available:
        return "block"
    return "products"


def well_conditioned(ws, J):
    """RBF: whether I + sigma P Q_JJ P has a condition number <= Config.cg_condition for every sigma, by
    Gershgorin (Q_JJ's eigenvalues lie within 1 -+ its rows' off-diagonal sums, one product):
    a large gamma makes K diagonally dominant, and CG then needs a few products (on the float32
    block) where Cholesky needs |J|^3 / 3 flops."""
    if not ws.rbf:
        return False
    radius = np.max(ws.row_sums(J)) - 1.0
    return radius < 1.0 and (1.0 + radius) / (1.0 - radius) <= ws.cfg.cg_condition


def dense_solve(block, t, a, aa, sigma):
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
    if not cholesky_solve(projected_matrix(block(), a, aa, sigma), z):
        raise not_psd()
    return z


def projected_matrix(Q, a, aa, sigma):
    """I + sigma P Q P, P = I - a a^T / aa, in place of Q."""
    Qa = Q @ a
    Q -= (np.outer(Qa, a) + np.outer(a, Qa)) / aa
    Q += (dot(a, Qa) / (aa * aa)) * np.outer(a, a)
    Q *= sigma
    Q.flat[:: Q.shape[0] + 1] += 1.0
    return Q


def not_psd():
    return FastSVMError("ssnal: the kernel matrix is not positive semidefinite on the working set (a sigmoid "
                        "kernel usually is not): SSsNAL needs a convex dual; use -s smo")


def projected(product, aJ, aa, sigma):
    """v -> (I + sigma P Q_JJ P) v from product(v) = Q_JJ v, P = I - aJ aJ^T / aa."""

    def apply(v):
        v = v - (dot(aJ, v) / aa) * aJ
        w = product(v)
        return v + sigma * (w - (dot(aJ, w) / aa) * aJ)

    return apply


def coefficient_cg(operator, ws, t, counters):
    """z with (I + sigma P Q_JJ P) z = t by the shared CG to the relative residual
    Config.kernel_cg_rtol (an inexact Newton direction): operator a ProjectedBlock (driven
    without the GIL) or a callable (products computed on the fly, each product without it)."""
    z, iterations, status = conjugate_gradient(operator, t, ws.cfg.kernel_cg_rtol, ws.cfg.kernel_cg_max_iter,
                                               ws.stop, dot=dot)
    counters.cg += iterations
    if status == Status.BREAKDOWN:
        raise not_psd()
    if status == Status.INTERRUPTED:
        raise KeyboardInterrupt
    return z
