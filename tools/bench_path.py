"""A grid of C solved as a path (each C warm-started from the last, on shared state) against the
same problems solved one by one from scratch, side by side in one run.

For each case (solver on a dataset, binary C-SVC, bounds C_i = C) the grid C = 2^-3 ... 2^6 is
solved by the solver's Solver.solve_c_path (with Solver.prepare's state; a solver without
a path of its own is solved cold both ways and the table says so) and by solve_path_cold, in the same
process, path then cold in every repeat. Reported per case: median wall time of the path and of
the cold total (the ratio's target is <= 0.5), the largest relative difference of the dual
objectives of path and cold at any C (target <= 1e-6: the tolerances are tight so that both
reach the optimum), and the iteration totals (SMO iterations, DCD epochs, SSsNAL's outer
iterations).

Cases: SSsNAL linear on a9a and w8a, SMO RBF on a9a (gamma = 1/123) and mushrooms
(gamma = 1/112), DCD (hinge, bias 1) on w8a. A case's solver may name its kernel
(ssnal/rbf:mushrooms: SSsNAL's kernel front end, gamma = 1/n_features). --rows N trains on the
first N rows of each set instead (to check the script quickly).

    python tools/bench_path.py --repeat 3 --out bench_out/path.md
    python tools/bench_path.py --cases smo:mushrooms,dcd:w8a --rows 2000 --repeat 1
    python tools/bench_path.py --cases ssnal/rbf:mushrooms,ssnal/rbf:a1a --tol-ssnal 1e-3
"""
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from benchlib.data import DATA_DIR, as_pm, find, read_svmlight
from benchlib.report import parser, rule, write_report
from fastsvm.csr import to_csr
from fastsvm.params import Params
from fastsvm.solvers import get_solver
from fastsvm.solvers.base import Kernel, Solver, Subproblem, solve_path_cold

GRID = [2.0 ** k for k in range(-3, 7)]
CASES = "ssnal:a9a,ssnal:w8a,smo:a9a,smo:mushrooms,dcd:w8a"
KERNEL = {"smo": "rbf", "dcd": "linear", "ssnal": "linear"}
TARGET_TIME = 0.5
TARGET_OBJECTIVE = 1e-6


def load(data_dir, name, rows):
    """(X, +-1 labels: +1 the first row's class) of NAME or NAME.xz, its first rows only if given."""
    X, y = read_svmlight(find(data_dir, name) or Path(data_dir) / name)
    y = as_pm(y)
    return (X, y) if rows is None else (to_csr(X[:rows]), y[:rows])


def subproblem(solver, kind, X, y, tol, cache_mb):
    kernel = Kernel(kind, gamma=1.0 / X.shape[1])
    params = Params(svm_type="c_svc", solver=solver, kernel_type=kernel.kind, gamma=kernel.gamma, tol=tol,
                    cache_size=cache_mb, bias=1.0 if solver == "dcd" else -1.0, max_iter=10**7 if solver == "dcd"
                    else None)
    return Subproblem("c_svc", X, y, np.ones(X.shape[0]), kernel, params)


def dual_objective(solution):
    return solution.objective if solution.dual_objective is None else solution.dual_objective


def timed(solve):
    start = time.perf_counter()
    solutions = solve()
    return time.perf_counter() - start, solutions


def bench(case, args):
    solver, name = case.split(":")
    solver, _, kind = solver.partition("/")
    spec = get_solver(solver)
    X, y = load(args.data_dir, name, args.rows)
    sub = subproblem(solver, kind or KERNEL[solver], X, y, getattr(args, f"tol_{solver}"), args.m)

    has_path = type(spec).solve_c_path is not Solver.solve_c_path

    def path():
        return spec.solve_c_path(sub, GRID, spec.prepare(sub))

    path_times, cold_times = [], []
    for _ in range(args.repeat):
        seconds, path_solutions = timed(path)
        path_times.append(seconds)
        seconds, cold_solutions = timed(lambda: solve_path_cold(spec, sub, GRID))
        cold_times.append(seconds)
        print(f"  {case}: path {path_times[-1]:.2f} s, cold {cold_times[-1]:.2f} s", file=sys.stderr, flush=True)
    gaps = [abs(dual_objective(p) - dual_objective(c)) / max(1.0, abs(dual_objective(c)))
            for p, c in zip(path_solutions, cold_solutions)]
    return {"case": case, "n": X.shape[0], "kernel": sub.kernel.kind, "gamma": sub.kernel.gamma,
            "has_path": has_path, "tol": sub.params.tol,
            "path": statistics.median(path_times), "cold": statistics.median(cold_times),
            "gap": max(gaps), "iter_path": sum(s.n_iter for s in path_solutions),
            "iter_cold": sum(s.n_iter for s in cold_solutions),
            "converged": all(s.status == "converged" for s in path_solutions + cold_solutions)}


HEADER = ("| case | rows | kernel | tol | path s | cold total s | path / cold | max rel. dual objective "
          "difference | iterations path / cold | all converged | targets met |")
RULE = rule(HEADER)


def markdown_row(row):
    ratio = row["path"] / row["cold"]
    kernel = f"RBF γ = {row['gamma']:.4g}" if row["kernel"] == "rbf" else row["kernel"]
    missed = [what for what, ok in (("time", ratio <= TARGET_TIME), ("objective", row["gap"] <= TARGET_OBJECTIVE))
              if not ok]
    how = "" if row["has_path"] else " (no solve_path: cold both ways)"
    return (f"| {row['case']}{how} | {row['n']} | {kernel} | {row['tol']:g} | {row['path']:.2f} | {row['cold']:.2f} "
            f"| {ratio:.2f} | {row['gap']:.1e} | {row['iter_path']} / {row['iter_cold']} "
            f"| {'yes' if row['converged'] else '**no**'} "
            f"| {'all' if not missed else 'missed: ' + ', '.join(missed)} |")


def main(argv=None):
    ap = parser(__doc__)
    ap.add_argument("--data-dir", default=str(DATA_DIR))
    ap.add_argument("--cases", default=CASES, help="comma-separated solver:dataset")
    ap.add_argument("--rows", type=int, help="the first N rows of each set only")
    ap.add_argument("--repeat", type=int, default=3, help="runs of path and cold per case (median)")
    ap.add_argument("--tol-smo", type=float, default=1e-5, help="SMO's maximal violation")
    ap.add_argument("--tol-dcd", type=float, default=1e-3, help="DCD's projected-gradient violation")
    ap.add_argument("--tol-ssnal", type=float, default=1e-6, help="SSsNAL's relative KKT residual")
    ap.add_argument("--m", type=float, default=100.0, help="kernel cache MB (-m), both ways")
    ap.add_argument("--out", help="write the markdown report here")
    args = ap.parse_args(argv)
    load_before = os.getloadavg()[0]
    rows = [bench(case, args) for case in args.cases.split(",") if case]
    lines = [f"{time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}, {os.cpu_count()} cores, load average "
             f"{load_before:.2f} before / {os.getloadavg()[0]:.2f} after; C = 2^-3 ... 2^6 (10 values), "
             f"median of {args.repeat} runs of each way, path then cold in every run, -m {args.m:g}. "
             f"Targets: path <= {TARGET_TIME:g}x cold total, dual objectives within {TARGET_OBJECTIVE:g} "
             "relative.", "", HEADER, RULE, *map(markdown_row, rows)]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
