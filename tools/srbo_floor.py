"""The floor under SRBO's speed-up along a linear nu path: the path with a perfect screen.

The oracle screen fixes every sample that the path's own optimum (solved to 1e-9 beforehand) holds
at a bound, and costs nothing (no Q delta product, no bounds). A safe screen can only fix a subset
of these samples, and pays for its test, so oracle / warm bounds what any screening rule can give.
Sides, taken in turn (medians of --repeat): warm (no screening), srbo (every nu), auto (the default
policy), oracle. nu = 0.50:0.001:0.60 as tools/bench_srbo.py.

    python tools/srbo_floor.py --datasets gaussian,breast-cancer_scale --tol 1e-3 --repeat 7
"""
import statistics
import time

import numpy as np

from benchlib.data import DATA_DIR
from benchlib.nu_path import NUS, fastsvm_path, load
from benchlib.report import parser as make_parser

SIDES = {"warm": False, "srbo": True, "auto": "auto", "oracle": None}   # oracle: a given screen


def floor_row(X, y, tol, repeat):
    """{side: (median seconds, mean screened share, total sweeps)} of the four sides."""
    reference = fastsvm_path(X, y, "linear", NUS, min(tol, 1e-9), False)
    bounds = {nu: (np.asarray(s.dual) <= 0.0, np.asarray(s.dual) >= 1.0) for nu, s in zip(NUS, reference)}

    def oracle_screen(nu):
        return bounds[round(nu, 3)]

    def run(side):
        start = time.perf_counter()
        path = fastsvm_path(X, y, "linear", NUS, tol, oracle_screen if side == "oracle" else SIDES[side])
        return time.perf_counter() - start, path
    seconds, paths = {side: [] for side in SIDES}, {}
    for _ in range(repeat):
        for side in SIDES:
            elapsed, paths[side] = run(side)
            seconds[side].append(elapsed)
    return {side: (statistics.median(seconds[side]), float(np.mean([s.details["screened"] for s in paths[side]])),
                   sum(s.n_iter for s in paths[side])) for side in SIDES}


def main(argv=None):
    parser = make_parser(__doc__)
    parser.add_argument("--data-dir", default=str(DATA_DIR))
    parser.add_argument("--datasets", default="gaussian,breast-cancer_scale,australian_scale,diabetes_scale")
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    print("| set | rows | " + " | ".join(f"{side} s (x warm, screened, sweeps)" for side in SIDES) + " |")
    print("|---|---|" + "---|" * len(SIDES))
    for name in filter(None, args.datasets.split(",")):
        X, y = load(args.data_dir, name)
        row = floor_row(X, y, args.tol, args.repeat)
        warm = row["warm"][0]
        cells = [f"{s:.3f} ({s / warm:.2f}, {100 * share:.1f}%, {sweeps})" for s, share, sweeps in row.values()]
        print(f"| {name} | {X.shape[0]} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
