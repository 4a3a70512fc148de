"""How many passes a Krylov method needs even when it is told the solution's free set.

For linear C-SVC, the dual's solution x* splits the rows into those at 0, those at C and the free
set J. Told that split, the dual is an equality-constrained quadratic over J alone:

    min 1/2 x_J^T Q_JJ x_J + g_J^T x_J   subject to  a_J^T x_J = d_J,

Q_JJ = Z_J Z_J^T, the bounded rows fixed at x*. This script solves it by projected conjugate
gradients from SSsNAL's own start (x = 0, or the dual coordinate descent epochs SSsNAL begins
with when p > DENSE_P_MAX), and after every 5th iteration measures eta (Niu et al. 2019, eq. 4.1,
fastsvm.solvers.ssnal.kkt_residual) of the whole dual at that iterate projected onto K. It
reports the passes over X spent when eta first reaches each level: a CG iteration reads the rows
of J twice (Z_J^T p, then Z_J of it), counted as SSsNAL counts its own CG products; the start's
epochs count one pass each.

CG is optimal for this system among methods that build on products with Q_JJ, so these passes
are what SSsNAL's Newton systems cost at the least once its free set is right: a floor for any
target on passes, without the work of finding J. It holds where the free rows are independent
(text-like sets: |J| < p). Where |J| exceeds the rank of Z_J (a9a: p = 123) the quadratic has
many minimisers, CG may stop at one outside the bounds, and a level can be "not reached" although
SSsNAL reaches it.

A preconditioner can beat that floor. With --nystroem K the same CG is also run preconditioned by
a randomized rank-K Nyström approximation U diag(lam) U^T of Q_JJ (the top of its spectrum mapped
onto lam_K, the rest left alone), its sketch Q_JJ Omega costing K products, reported as
"CG + sketch" passes: a low-rank preconditioner pays off only when the top of the spectrum stands
well apart from the rest.

    python tools/bound_ssnal_passes.py --synthetic-text 100000 --C 1,32,256
    python tools/bound_ssnal_passes.py --synthetic-text 100000 --C 32 --nystroem 100,400
    python tools/bound_ssnal_passes.py --datasets w8a --C 32
"""
import sys

import numpy as np
import scipy.linalg

from benchlib.data import DATA_DIR, as_pm, load_dataset, load_synthetic
from benchlib.measures import ssnal_subproblem
from benchlib.report import parser
from fastsvm.parallel import one_blas_thread
from fastsvm.solvers import ssnal
from fastsvm.solvers.ssnal.problem import coordinate_start

LEVELS = (1e-3, 1e-6)
CHECK_EVERY = 5


def free_split(x, upper):
    """Masks (at the upper bound, free) of a solution, with a relative margin for rounding; the
    other rows are at 0."""
    margin = 1e-7 * np.maximum(upper, 1.0)
    at_upper = x >= upper - margin
    return at_upper, ~(at_upper | (x <= margin))


def nystroem(product, n, rank, rng):
    """(U, lam): a randomized rank-`rank` Nyström approximation U diag(lam) U^T of the n x n
    positive semidefinite matrix whose products `product` gives, from a Gaussian sketch with a
    small shift that keeps its Cholesky factor defined."""
    omega = np.linalg.qr(rng.standard_normal((n, rank)))[0]
    Y = np.column_stack([product(np.ascontiguousarray(omega[:, i])) for i in range(rank)])
    shift = np.sqrt(n) * np.finfo(float).eps * np.linalg.norm(Y)
    Y += shift * omega
    R = scipy.linalg.cholesky(omega.T @ Y)                      # omega^T Y = R^T R
    U, s, _ = scipy.linalg.svd(scipy.linalg.solve_triangular(R, Y.T, trans="T").T, full_matrices=False)
    return U, np.maximum(s * s - shift, shift)


def cg_passes(qp, x_star, x0, levels, max_iter, rank=0, seed=0):
    """(reached, sketch, |J|, J's share of X) for projected CG on the free set of x_star from x0,
    the bounded rows fixed at x_star, preconditioned by a rank-`rank` Nyström approximation of
    Q_JJ when rank > 0: reached = {level: passes over X}, the sketch's `sketch` passes included;
    levels not reached within max_iter are missing."""
    Z, K = qp.Z, qp.K
    at_upper, free = free_split(x_star, K.upper)
    J = np.flatnonzero(free).astype(np.int32)
    fixed = np.where(at_upper, K.upper, 0.0)
    a = K.a[J]
    aa = float(a @ a)
    share = Z.rows_nnz(J)[0] / qp.nnz
    g = Z.rows_matvec(J, Z.rmatvec(fixed)) + qp.c[J]
    xJ = x0[J].copy()
    xJ += (float(K.d - K.a[~free] @ fixed[~free]) - float(a @ xJ)) / aa * a   # onto a_J^T x_J = d_J

    def project(v):
        return v - (float(a @ v) / aa) * a

    def eta(xJ):
        x = fixed.copy()
        x[J] = xJ
        x = K.project(x)[0]
        return qp.kkt(x)[0]

    def product(v):
        return Z.rows_matvec(J, Z.rows_rmatvec(J, v))

    U, lam, sketch = None, None, 0.0
    if rank > 0:
        U, lam = nystroem(product, J.shape[0], min(rank, J.shape[0]), np.random.default_rng(seed))
        sketch = 2.0 * U.shape[1] * share

    def precondition(r):   # lam_K U diag(lam)^-1 U^T r on U's span, r (in a_J's complement) elsewhere
        if U is None:
            return r
        return project(r + U @ ((lam[-1] / lam - 1.0) * (U.T @ r)))

    r = -project(product(xJ) + g)
    z = precondition(r)
    d, rz = z.copy(), float(r @ z)
    reached, pending = {}, sorted(levels, reverse=True)
    for it in range(1, max_iter + 1):
        qd = product(d)
        alpha = rz / float(d @ qd)
        xJ += alpha * d
        r -= alpha * project(qd)
        z = precondition(r)
        rz, rz_old = float(r @ z), rz
        d = z + (rz / rz_old) * d
        if it % CHECK_EVERY == 0:
            e = eta(xJ)
            while pending and e <= pending[0]:
                reached[pending.pop(0)] = sketch + 2.0 * it * share
            if not pending:
                break
    return reached, sketch, J.shape[0], share


def main(argv=None):
    ap = parser(__doc__)
    ap.add_argument("--data-dir", default=str(DATA_DIR))
    ap.add_argument("--datasets", default="", help="comma-separated names in --data-dir")
    ap.add_argument("--synthetic-text", type=int, metavar="ROWS", help="add a sparse text-like set")
    ap.add_argument("--C", default="1,32,256", help="comma-separated costs")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-iter", type=int, default=5000, help="CG iterations at most")
    ap.add_argument("--nystroem", default="", metavar="RANKS",
                    help="comma-separated ranks of Nyström preconditioners to run CG with as well")
    args = ap.parse_args(argv)
    ranks = [k for k in args.nystroem.split(",") if k]
    if not all(k.isdigit() and int(k) > 0 for k in ranks):
        ap.error(f"--nystroem takes positive ranks separated by commas, not {args.nystroem!r}")
    ranks = [int(k) for k in ranks]
    # as tools/bench_ssnal.py loads them: ijcnn1 trained on train + test
    loaders = [lambda n=n: load_dataset(n, args.data_dir, concatenated={"ijcnn1"})
               for n in args.datasets.split(",") if n]
    if args.synthetic_text:
        loaders.append(lambda: load_synthetic("text", args.synthetic_text))
    nystroem_columns = "".join(f"| CG + rank-{k} Nyström sketch (its passes) " for k in ranks)
    print("| dataset | C | \\|J\\| (share of X) | start (passes) | passes to eta <= 1e-3 / 1e-6: "
          "CG on the known free set " + nystroem_columns + "| SSsNAL's passes 1e-3 / 1e-6 |")
    print("|---|---|---|---|---" + "|---" * len(ranks) + "|---|")
    for load in loaders:
        name, X, labels, *_ = load()
        y = as_pm(labels)
        for C in (float(c) for c in args.C.split(",")):
            sub = ssnal_subproblem(X, y, C, 1e-9, args.threads)
            qp = ssnal.linear_dual(sub)
            with one_blas_thread():
                ref = ssnal.solve(sub, merge=False)
                runs = {tol: ssnal.solve(ssnal_subproblem(X, y, C, tol, args.threads)) for tol in LEVELS}
                x0, epochs = np.zeros(qp.m), 0.0
                if qp.Z.p > ssnal.Config.coordinate_start_p:   # SSsNAL's start on such sets
                    x0, epochs = coordinate_start(qp, sub.seed, sub.stop, None, ssnal.Config())
                start = f"coordinate descent ({epochs:g})" if epochs else "x = 0 (0)"
                floors = [cg_passes(qp, ref.dual, x0, LEVELS, args.max_iter, rank, sub.seed)
                          for rank in [0] + ranks]
            cells = []
            for reached, sketch, size, share in floors:  # noqa: B007 - the last size is printed
                cell = " / ".join(f"{epochs + reached[tol]:.1f}" if tol in reached
                                  else f"> {epochs + sketch + 2 * args.max_iter * share:.0f}" for tol in LEVELS)
                cells.append(cell + (f" ({sketch:.1f})" if sketch else ""))
            ours = " / ".join(f"{runs[tol].details['passes']:.1f}" for tol in LEVELS)
            print(f"| {name} | {C:g} | {size} ({share:.2f}) | {start} | {' | '.join(cells)} | {ours} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
