"""Data-parallel SVM-ALM or NESVM (--solver) on Dask (fastsvm.distributed.fit_linear) side by side
with the local threaded solve, one run, the same problem: the synthetic text set (tools/make_synthetic.py) split
by rows in --blocks CSR blocks over a LocalCluster of --workers worker processes (loopback), each
worker one thread; the local solve on --threads threads.

Reported: the optimum each reaches (objective, duality gap; their relative difference),
iterations, seconds per iteration, and the distributed run's bytes per iteration (what the driver
sends and receives, all workers; per worker) beside the blocks' own size (nnz): O(p), not O(nnz).

    python tools/bench_distributed.py                         # 1M rows, 8 blocks, 2 workers
    python tools/bench_distributed.py --rows 100000 --out bench_out/distributed.md
    python tools/bench_distributed.py --solver nesvm --p 1 --tol 1e-3    # NESVM's C-SVM (p 2: squared hinge)
"""
import time

import numpy as np

from benchlib.data import as_pm, load_synthetic
from benchlib.report import parser as make_parser
from benchlib.report import write_text
from fastsvm.params import Params
from fastsvm.solvers import get_solver
from fastsvm.solvers.base import Kernel, Subproblem


TITLE = {"alm": "SVM-ALM", "nesvm": "NESVM"}


def loss_and_options(solver, p):
    """fit_linear's loss and options for the loss power p: alm's -o p=, nesvm's hinge (1) or squared hinge (2)."""
    if solver == "alm":
        return "hinge", {"p": p}
    if p not in (1.0, 2.0):
        raise SystemExit("--solver nesvm runs p = 1 (hinge) or 2 (squared hinge)")
    return ("hinge" if p == 1.0 else "squared_hinge"), {}


def local_run(X, y, C, solver, p, tol, threads, max_iter):
    loss, options = loss_and_options(solver, p)
    params = Params(solver=solver, kernel_type="linear", C=C, tol=tol, max_iter=max_iter, loss=loss, options=options)
    sub = Subproblem("c_svc", X, y, np.full(X.shape[0], float(C)), Kernel("linear"), params, n_threads=threads,
                     log=lambda line: print("  local", line, flush=True))
    started = time.perf_counter()
    sol = get_solver(solver).solve(sub)
    seconds = time.perf_counter() - started
    return {"objective": sol.objective, "gap": sol.stop_measure, "iterations": sol.n_iter,
            "seconds": seconds, "per_iteration": seconds / max(sol.n_iter, 1)}


def distributed_run(X, y, C, solver, p, tol, n_blocks, n_workers, max_iter):
    from dask.distributed import Client, LocalCluster

    from fastsvm.distributed import fit_linear
    bounds = np.linspace(0, X.shape[0], n_blocks + 1).astype(int)
    blocks = [X[a:b] for a, b in zip(bounds, bounds[1:])]
    labels = [y[a:b] for a, b in zip(bounds, bounds[1:])]
    with LocalCluster(n_workers=n_workers, processes=True, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        started = time.perf_counter()
        loss, options = loss_and_options(solver, p)
        fit = fit_linear(client, blocks, labels, C=C, solver=solver, tol=tol, max_iter=max_iter, loss=loss,
                         options=options, log=lambda line: print("  ", line, flush=True))
        seconds = time.perf_counter() - started
    return {"objective": fit.objective, "gap": fit.gap, "iterations": fit.n_iter, "seconds": seconds,
            "per_iteration": fit.seconds_per_iteration, "bytes": fit.bytes_per_iteration,
            "bytes_worker": fit.bytes_per_worker_iteration, "setup_bytes": fit.setup_bytes}


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--solver", choices=sorted(TITLE), default="alm")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2, help="the local solve's threads")
    parser.add_argument("--C", type=float, default=0.01,
                        help="0.01: about 1,100 iterations to a 1e-6 gap on the text set at 100k rows, 10,175 at 1M")
    parser.add_argument("--p", type=float, default=2.0)
    parser.add_argument("--tol", type=float, default=1e-6, help="the relative duality gap of both runs")
    parser.add_argument("--max-iter", type=int, default=100000)
    parser.add_argument("--out", help="also write the report here (markdown)")
    args = parser.parse_args()

    name, X, y, *_ = load_synthetic("text", args.rows)
    y = as_pm(y)
    n_weights = X.shape[1] + 1
    local = local_run(X, y, args.C, args.solver, args.p, args.tol, args.threads, args.max_iter)
    remote = distributed_run(X, y, args.C, args.solver, args.p, args.tol, args.blocks, args.workers, args.max_iter)
    difference = abs(remote["objective"] - local["objective"]) / abs(local["objective"])
    lines = [
        f"# Data-parallel {TITLE[args.solver]} on Dask: {name}, {X.shape[0]} rows, {X.shape[1]} columns, nnz {X.nnz}",
        "",
        f"C = {args.C:g}, p = {args.p:g}, both runs to a relative duality gap of {args.tol:g}; distributed: "
        f"{args.blocks} blocks over {args.workers} worker processes (1 thread each, loopback); local: "
        f"{args.threads} threads.",
        "",
        "| run | objective | gap | iterations | seconds | s / iteration | bytes / iteration | "
        "bytes / iteration / worker |",
        "|---|---|---|---|---|---|---|---|",
        f"| local threaded | {local['objective']:.12g} | {local['gap']:.2e} | {local['iterations']} | "
        f"{local['seconds']:.2f} | {local['per_iteration'] * 1e3:.2f} ms | - | - |",
        f"| distributed | {remote['objective']:.12g} | {remote['gap']:.2e} | {remote['iterations']} | "
        f"{remote['seconds']:.2f} | {remote['per_iteration'] * 1e3:.2f} ms | {remote['bytes']:.0f} | "
        f"{remote['bytes_worker']:.0f} |",
        "",
        f"Relative difference of the optima: {difference:.2e}. Traffic per iteration and worker: "
        f"{remote['bytes_worker'] / (8 * n_weights):.2f} p-vectors of 8 (p + 1) = {8 * n_weights} bytes; "
        f"the blocks' values and indices are {12 * X.nnz} bytes (nnz x 12), "
        f"{remote['setup_bytes']} bytes sent once to place them.",
        "Distributed seconds include starting the actors, placing the blocks and the power iteration; "
        "seconds per iteration are counted from the first iteration.",
    ]
    report = "\n".join(lines)
    print(report)
    if args.out:
        write_text(args.out, report + "\n")


if __name__ == "__main__":
    main()
