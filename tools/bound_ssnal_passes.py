"""How many passes a Krylov method needs even when it is told the solution's free set.

For linear C-SVC, the dual's solution x* splits the rows into those at 0, those at C and the free
set J. Told that split, the dual is an equality-constrained quadratic over J alone:

    min 1/2 x_J^T Q_JJ x_J + g_J^T x_J   subject to  a_J^T x_J = d_J,

Q_JJ = Z_J Z_J^T, the bounded rows fixed at x*. This script solves it by projected conjugate
gradients from SSsNAL's own start (x = 0, or the dual coordinate descent epochs SSsNAL begins
with when p > DENSE_P_MAX), and after every 5th iteration measures eta (ALGORITHMS.md eq. 4.1,
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

    python tools/bound_ssnal_passes.py --synthetic-text 100000 --C 1,32,256
    python tools/bound_ssnal_passes.py --datasets w8a --C 32
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_ssnal as bench  # noqa: E402  (this script's folder: its loaders and problem set-up)

from fastsvm.parallel import one_blas_thread  # noqa: E402
from fastsvm.solvers import ssnal  # noqa: E402

LEVELS = (1e-3, 1e-6)
CHECK_EVERY = 5


def free_split(x, upper):
    """Masks (at the upper bound, free) of a solution, with a relative margin for rounding; the
    other rows are at 0."""
    margin = 1e-7 * np.maximum(upper, 1.0)
    at_upper = x >= upper - margin
    return at_upper, ~(at_upper | (x <= margin))


def cg_passes(qp, x_star, x0, levels, max_iter):
    """{level: passes over X (CG iterations' products)} for projected CG on the free set of x_star
    from x0, the bounded rows fixed at x_star; levels not reached within max_iter are missing."""
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

    r = -project(Z.rows_matvec(J, Z.rows_rmatvec(J, xJ)) + g)
    d, rr = r.copy(), float(r @ r)
    reached, pending = {}, sorted(levels, reverse=True)
    for it in range(1, max_iter + 1):
        qd = Z.rows_matvec(J, Z.rows_rmatvec(J, d))
        alpha = rr / float(d @ qd)
        xJ += alpha * d
        r -= alpha * project(qd)
        rr, rr_old = float(r @ r), rr
        d = r + (rr / rr_old) * d
        if it % CHECK_EVERY == 0:
            e = eta(xJ)
            while pending and e <= pending[0]:
                reached[pending.pop(0)] = 2.0 * it * share
            if not pending:
                break
    return reached, J.shape[0], share


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=str(bench.REPO.parent / "shared" / "data"))
    ap.add_argument("--datasets", default="", help="comma-separated names in --data-dir")
    ap.add_argument("--synthetic-text", type=int, metavar="ROWS", help="add a sparse text-like set")
    ap.add_argument("--C", default="1,32,256", help="comma-separated costs")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-iter", type=int, default=5000, help="CG iterations at most")
    args = ap.parse_args(argv)
    loaders = [lambda n=n: bench.load_named(args.data_dir, n) for n in args.datasets.split(",") if n]
    if args.synthetic_text:
        loaders.append(lambda: bench.load_synthetic("text", args.synthetic_text))
    print("| dataset | C | \\|J\\| (share of X) | start (passes) | passes to eta <= 1e-3 / 1e-6: CG on the known free set "
          "| SSsNAL's passes 1e-3 / 1e-6 |")
    print("|---|---|---|---|---|---|")
    for load in loaders:
        name, X, labels, *_ = load()
        y = bench.as_pm(labels)
        for C in (float(c) for c in args.C.split(",")):
            sub = bench.subproblem(X, y, C, 1e-9, args.threads)
            qp = ssnal.linear_dual(sub)
            with one_blas_thread():
                ref = ssnal.solve(sub, merge=False)
                runs = {tol: ssnal.solve(bench.subproblem(X, y, C, tol, args.threads)) for tol in LEVELS}
                x0, epochs = np.zeros(qp.m), 0.0
                if qp.Z.p > ssnal.COORDINATE_START_P:   # SSsNAL's start on such sets
                    x0, epochs = ssnal._coordinate_start(qp, sub.seed, sub.stop, None)
                start = f"coordinate descent ({epochs:g})" if epochs else "x = 0 (0)"
                reached, size, share = cg_passes(qp, ref.info["dual"], x0, LEVELS, args.max_iter)
            cells = " / ".join(f"{epochs + reached[tol]:.1f}" if tol in reached
                               else f"> {epochs + 2 * args.max_iter * share:.0f}" for tol in LEVELS)
            ours = " / ".join(f"{runs[tol].info['passes']:.1f}" for tol in LEVELS)
            print(f"| {name} | {C:g} | {size} ({share:.2f}) | {start} | {cells} | {ours} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
