"""DCDM's nu path with SRBO screening side by side with its peers, one run, the same problems.

The bias-in-kernel nu-SVM along nu = 0.50:0.001:0.60 (101 values), the same -e for every side:
  srbo          fastsvm's path, warm-started, with SRBO screening (linear kernel)
  warm          the same path without screening
  cold peer     each nu solved from scratch by the oracle solver of the same problem: liblinear-official
                -s 21 on z_i = y_i [x_i, 1] (linear), LIBSVM's one-class on the precomputed
                Q = (y y^T) o (K + 1) (RBF, the small sets only: Q is held whole)
Cells: seconds (median of --repeat runs), the share of samples screened (mean over the path), the
largest relative difference of the path's objectives from the peer's, and peak memory.

The same -e is not the same accuracy: ours is the absolute gap max G - min G, LIBLINEAR -s 21 stops
sooner for it. So the linear rows are also run by the ladder protocol of bench_nesvm / bench_alm
(--ladder-gap, default 1e-6): each side (srbo path, liblinear cold x101) gets the coarsest -e of
1, 10^-0.5, 10^-1, ... at which every nu's objective is within the relative gap of F*(nu), F* from
one tight unscreened path (-e 1e-10). nu in the trivial region (F* = 0: w* = 0) are left out of
that measure (any tiny F is infinitely far from 0 relatively).

    python tools/bench_srbo.py --out bench_out/srbo.md
    python tools/bench_srbo.py --datasets gaussian,breast-cancer_scale --kernels linear --repeat 1
"""
import statistics
import time

import numpy as np
import scipy.sparse as sp

from benchlib.data import DATA_DIR
from benchlib.measures import ladder_side
from benchlib.nu_path import GAMMA, NUS, fastsvm_path, load
from benchlib.report import parser as make_parser
from benchlib.report import write_report
from benchlib.running import timed

RBF_MAX_ROWS = 3000    # LIBSVM's precomputed Q is held whole


def path_ladder(run, F_star, gap, steps=14):
    """ladder_side over a path: (tol, seconds, objectives) of the coarsest -e on the ladder whose
    objectives are all within ``gap`` of F* (relative; F* = 0, the trivial region, left out), or None. ``run(tol)``
    returns (seconds, objectives)."""
    F_star = np.asarray(F_star)
    kept = F_star > 1e-12 * F_star.max()     # the trivial region: F* is rounding there (1e-26..1e-32)

    def excess(tol):
        seconds, values = run(tol)
        worst = float(np.max((np.asarray(values)[kept] - F_star[kept]) / F_star[kept]))
        return seconds, 1.0 + worst, values         # ladder_side compares (objective - 1) / 1 with the gap
    return ladder_side(excess, gap, 1.0, 1.0, steps)


def liblinear_cold(X, y, nus, tol):
    from liblinear.liblinearutil import parameter, problem, train
    Z = sp.csr_matrix(sp.diags(y) @ sp.hstack([X, np.ones((X.shape[0], 1))]).tocsr())
    prob = problem(np.ones(Z.shape[0]), Z)
    values = []
    for nu in nus:
        w = np.asarray(train(prob, parameter(f"-s 21 -n {nu} -e {tol} -q")).get_decfun()[0])
        values.append(0.5 * w @ w / Z.shape[0] ** 2)
    return values


def libsvm_cold(X, y, nus, tol):
    from libsvm.svmutil import svm_parameter, svm_problem, svm_train
    A = X.toarray()
    sq = (A * A).sum(axis=1)
    Q = np.outer(y, y) * (np.exp(-GAMMA * np.maximum(sq[:, None] + sq[None, :] - 2 * A @ A.T, 0.0)) + 1.0)
    l = Q.shape[0]
    prob = svm_problem(np.ones(l), np.hstack([np.arange(1, l + 1)[:, None], Q]), isKernel=True)
    values = []
    for nu in nus:
        model = svm_train(prob, svm_parameter(f"-s 2 -t 4 -n {nu} -e {tol} -q"))
        alpha = np.zeros(l)
        alpha[np.asarray(model.get_sv_indices()) - 1] = np.asarray(model.get_sv_coef()).ravel()
        values.append(0.5 * alpha @ Q @ alpha / l**2)
    return values


def ladder_row(name, X, y, nus, args):
    """A markdown row of the ladder protocol for the linear kernel."""
    F_star = [s.details["objective"] for s in fastsvm_path(X, y, "linear", nus, 1e-10, False)]
    def ours_at(tol):
        return timed_values(lambda: fastsvm_path(X, y, "linear", nus, tol, "auto"), args.repeat)

    def theirs_at(tol):
        return timed(lambda: liblinear_cold(X, y, nus, tol), 1)[:2]

    def cell(found):
        return "- | -" if found is None else f"{found[0]:.1e} | {found[1]:.3f}"

    ours, theirs = path_ladder(ours_at, F_star, args.ladder_gap), path_ladder(theirs_at, F_star, args.ladder_gap)
    warm_s = timed(lambda: fastsvm_path(X, y, "linear", nus, ours[0], False), args.repeat)[0] if ours else None
    ratio = f"{ours[1] / theirs[1]:.2f}" if ours and theirs else "-"
    warm = "-" if warm_s is None else f"{warm_s:.3f}"
    return f"| {name} | {X.shape[0]} | {cell(ours)} | {warm} | {cell(theirs)} | {ratio} |"


def timed_alternating(runs, repeat):
    """timed() of each of ``runs``, their repeats taken in turn (a, b, a, b, ...): on a shared,
    loaded machine the ratio of their medians then sees the same load."""
    results = [[] for _ in runs]
    for _ in range(repeat):
        for run, result in zip(runs, results):
            result.append(timed(run, 1))
    return [(statistics.median(r[0] for r in result), result[-1][1], result[-1][2]) for result in results]


def timed_values(run, repeat):
    """(median seconds, the path's objectives) of ``run``."""
    seconds, path, _ = timed(run, repeat)
    return seconds, [s.details["objective"] for s in path]


def main(argv=None):
    parser = make_parser(__doc__)
    parser.add_argument("--data-dir", default=str(DATA_DIR))
    parser.add_argument("--datasets", default="gaussian,breast-cancer_scale,australian_scale,diabetes_scale,"
                                              "phishing,a9a")
    parser.add_argument("--kernels", default="linear,rbf")
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ladder-gap", type=float, default=1e-6, help="0: no ladder rows")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    nus = NUS
    ladders = []
    lines = ["# DCDM's nu path with SRBO side by side", "",
             f"{time.strftime('%Y-%m-%d %H:%M')}; nu = 0.50:0.001:0.60 (101 values), -e {args.tol:g} for every side, "
             f"medians of {args.repeat} runs (srbo and warm taken in turn), one thread.", "",
             "| set | kernel | rows | srbo s | warm s | cold peer s | srbo / warm | path / cold | screened | "
             "max rel. F diff. | peak MB |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in filter(None, args.datasets.split(",")):
        X, y = load(args.data_dir, name)
        for kind in args.kernels.split(","):
            if kind == "rbf" and X.shape[0] > RBF_MAX_ROWS:
                continue
            (srbo_s, srbo, peak), (warm_s, _, _) = timed_alternating(
                [lambda: fastsvm_path(X, y, kind, nus, args.tol, "auto"),  # noqa: B023
                 lambda: fastsvm_path(X, y, kind, nus, args.tol, False)], args.repeat)  # noqa: B023
            peer = liblinear_cold if kind == "linear" else libsvm_cold
            cold_s, cold, _ = timed(lambda: peer(X, y, nus, args.tol), 1)  # noqa: B023
            ours = [s.details["objective"] for s in srbo]
            # the trivial region (w* = 0) left out: both sides' F there is -e's residue (1e-15..1e-11), no scale
            kept = np.asarray(cold) > 1e-6 * max(cold)
            diff = float(np.max(np.abs(np.asarray(ours) - cold)[kept] / np.asarray(cold)[kept]))
            screened = np.mean([s.details["screened"] for s in srbo])
            lines.append(f"| {name} | {kind} | {X.shape[0]} | {srbo_s:.3f} | {warm_s:.3f} | {cold_s:.3f} | "
                         f"{srbo_s / warm_s:.2f} | {srbo_s / cold_s:.2f} | {100 * screened:.1f}% | {diff:.1e} | "
                         f"{peak:.0f} |")
            print(lines[-1], flush=True)
            if kind == "linear" and args.ladder_gap > 0:
                ladders.append(ladder_row(name, X, y, nus, args))
                print(ladders[-1], flush=True)
    if ladders:
        lines += ["", f"Linear, the ladder protocol: the coarsest -e on 1, 10^-0.5, ... with every nu's objective "
                      f"within {args.ladder_gap:g} (relative) of F*(nu); medians of {args.repeat} runs (peer: 1).", "",
                  "| set | rows | srbo -e | srbo s | warm s at srbo's -e | liblinear -e | liblinear s | path / cold |",
                  "|---|---|---|---|---|---|---|---|"] + ladders
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
