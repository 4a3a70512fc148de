"""SVM-ALM side by side with LIBLINEAR, one run, the same data and problems.

The Lp-loss SVM, 1/2 |w|^2 + C sum max(0, 1 - y (x.w + b))^p with the bias never penalized:
passes over the nonzeros and seconds until the primal objective is within a relative gap of the
optimum F* (1e-2, 1e-3, 1e-4). alm (the default: inexact step, mu from the data) runs once per cell,
to -e the smallest gap or --max-passes: its iterates do not depend on -e, so its trace (objective and
duality gap at every certificate, with the seconds since the solve began) gives what a run at any
-e would have done, at the time it would have stopped:
  alm certified    -e = the gap: its own certificate stops it, so its primal gap is at most the target
  alm ladder       -e 1, 10^-0.5, ... until the primal gap is met: LIBLINEAR's protocol (its -e bounds
                   a gradient norm, ours a duality gap: neither is the primal gap, so both are given
                   the coarsest tolerance that meets it); the ratio to LIBLINEAR is this one
  alm oracle       the first certificate within the gap (a stop that knows F*: no -e does better)
  alm exact        the exact (CG) step, one run, capped at --exact-max-iter iterations
  liblinear        p = 1: -s 3 -B 1; p = 2: -s 2 -B 1 -R (the same problem) and -s 1 -B 1; eps 1,
                   10^-0.5, ... until the gap is met (a penalized bias is measured against its own
                   problem's optimum); one thread
F*: p = 1 SSsNAL at eta 1e-9 (LIBSVM's linear problem), p = 2 LIBLINEAR -s 2 -R at -e 1e-6, other p
alm's own run taken to a 1e-8 duality gap (certified: the dual bound is independent of the primal);
when --max-passes stops it first, F* is its best dual bound (which overstates every gap) if the
run's duality gap is within 1e-3, else unknown: only the certified column is filled then.
A cell alm did not reach within --max-passes reads "> s / passes" (the run's length).
Time per pass: alm p = 2 for a fixed number of iterations on the synthetic text set of 125k, 250k,
500k and 1M rows, and the log-log slope; threads: seconds per pass on 1 and 2 threads (same bits).

    python tools/bench_alm.py --out bench_out/alm.md
    python tools/bench_alm.py --datasets a9a --ps 1,2 --Cs 1 --repeat 1       # a short sanity run
    python tools/bench_alm.py --datasets "" --synthetic 1000000 --sections table,scaling
"""
import sys
import time

import numpy as np

from benchlib.data import DATA_DIR, as_pm, benchmark_sets, load_synthetic
from benchlib.measures import hinge_primal, ladder_side, optimum
from benchlib.peers import liblinear_run
from benchlib.report import parser as make_parser
from benchlib.report import write_report
from benchlib.running import timed
from fastsvm.params import Params
from fastsvm.solvers import get_solver
from fastsvm.solvers.base import Kernel, Subproblem


def alm_side(X, y, C, p, gap, repeat, threads, max_iter=10**6, **options):
    params = Params(solver="alm", kernel_type="linear", C=C, tol=gap, max_iter=max_iter,
                    options={"p": p, **options})
    sub = Subproblem("c_svc", X, y, np.full(X.shape[0], float(C)), Kernel("linear"), params, n_threads=threads)
    seconds, sol, peak = timed(lambda: get_solver("alm").solve(sub), repeat)
    return {"seconds": seconds, "passes": sol.details["passes"], "iterations": sol.n_iter, "w": sol.w,
            "b": -sol.rho, "peak": peak, "status": sol.status.value, "trace": sol.details["trace"]}


def traced(X, y, C, p, tol, repeat, threads, max_passes):
    """alm run to -e tol or max_passes, repeat times: its trace (passes, seconds, objective, gap) with
    each row's seconds the median over the runs of the time a run stopping there takes (the trace's
    clock starts inside the solve: the set-up before it and the return after the last row are added)."""
    # a whole number of certificate periods (5 iterations, 11 passes): the last row ends the run
    runs = [alm_side(X, y, C, p, tol, 1, threads, max_iter=5 * max(1, int(max_passes / 11)))
            for _ in range(repeat)]
    rows = min(len(run["trace"]) for run in runs)
    seconds = np.median([run["trace"][:rows, 1] + run["seconds"] - run["trace"][-1, 1] for run in runs], axis=0)
    trace = runs[-1]["trace"][:rows].copy()
    trace[:, 1] = seconds
    return trace, runs[-1]


def first_row(trace, mask):
    """The first trace row where mask holds, or None."""
    hits = np.flatnonzero(mask)
    return trace[hits[0]] if hits.size else None


def alm_cells(trace, gap, F_star):
    """(certified, ladder, oracle) rows of the trace for a relative primal gap: the first certificate
    at -e gap; ladder_side's pick of the -e whose stop meets the gap, (-e, seconds, row), each -e's
    run read from the trace; the first row that meets it. Without F* only the first."""
    certified = first_row(trace, trace[:, 3] <= gap)
    if not F_star:
        return certified, None, None

    def stopped_at(tol):
        row = first_row(trace, trace[:, 3] <= tol)
        return (np.inf, np.inf, None) if row is None else (row[1], row[2], row)
    ladder = ladder_side(stopped_at, gap, F_star, 1.0, 12)
    return certified, ladder, first_row(trace, (trace[:, 2] - F_star) / F_star <= gap)


def reference(X, y, C, p, threads, runs, trace):
    """F* and how it was found: SSsNAL's for p = 1, LIBLINEAR -s 2 -R's own optimum (the same
    problem) for p = 2, else alm's own run (traced to 1e-8): its best primal when it certified
    1e-8, else its best dual bound."""
    if p == 1.0:
        return optimum(X, y, C, threads), "SSsNAL"
    if p == 2.0:
        return runs[0][2], "LIBLINEAR -s 2 -R"
    if trace[-1, 3] <= 1e-8:
        return float(trace[:, 2].min()), "alm at 1e-8"
    if trace[-1, 3] <= 1e-3:
        return float(np.max(trace[:, 2] * (1.0 - trace[:, 3]))), f"alm's dual bound (gap {trace[-1, 3]:.1e})"
    return None, f"none: alm's duality gap is still {trace[-1, 3]:.1e}"


def liblinear_runs(X, labels, C, p, repeat):
    """[(label, run, own optimum)] of LIBLINEAR's solvers of this loss (benchlib.peers.liblinear_run)."""
    solvers = [("-s 3", 3, True)] if p == 1.0 else ([("-s 2 -R", 2, False), ("-s 1", 1, True)] if p == 2.0 else [])
    return [(label, *liblinear_run(X, labels, C, repeat, solver=solver, p=p, regularized_bias=regularized))
            for label, solver, regularized in solvers]


def progress(line):
    """A line on stderr while a cell is measured (a 1M-row cell takes tens of minutes)."""
    print(line, file=sys.stderr, flush=True)


def cell(row, length, extra=""):
    """seconds / passes of a trace row, or > the run's length when it was not reached."""
    return f"> {length[1]:.1f} / {int(length[0])}" if row is None else f"{row[1]:.3f} / {int(row[0])}{extra}"


def table(sets, args):
    lines = ["| dataset | p | C | gap | alm certified s / passes | alm ladder s / passes | alm oracle s / passes | "
             "alm exact s / passes | liblinear s | alm ladder / liblinear | test acc. | peak MB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, X, labels, Xt, yt_labels in sets:
        y = as_pm(labels)
        yt = np.where(yt_labels == labels[0], 1.0, -1.0) if Xt is not None else None
        for p in args.ps:
            for C in args.Cs:
                started = time.perf_counter()
                runs = liblinear_runs(X, labels, C, p, args.repeat)
                own_reference = p not in (1.0, 2.0)
                trace, alm = traced(X, y, C, p, 1e-8 if own_reference else min(args.gaps), args.repeat,
                                    args.threads, args.max_passes)
                F_star, source = reference(X, y, C, p, args.threads, runs, trace)
                check = abs(hinge_primal(X, y, C, alm["w"], alm["b"], p) - trace[-1, 2]) / trace[-1, 2]
                known = f"{F_star:.12g}" if F_star else "unknown"
                progress(f"{name} p {p:g} C {C:g}: F* {known} ({source}), alm {trace[-1, 1]:.1f} s "
                         f"{int(trace[-1, 0])} passes to gap {trace[-1, 3]:.1e} (its objective recomputed: "
                         f"{check:.1e} off), after {time.perf_counter() - started:.0f} s")
                acc = (float(np.mean(np.where(Xt @ alm["w"] + alm["b"] > 0, 1.0, -1.0) == yt))
                       if Xt is not None else float("nan"))
                length = trace[-1]
                for gap in args.gaps:
                    certified, ladder, oracle = alm_cells(trace, gap, F_star)
                    exact = alm_side(X, y, C, p, gap, 1, args.threads, max_iter=args.exact_max_iter, step="exact")
                    found = [(label, ladder_side(run, gap, own_star, 1.0, 12)) for label, run, own_star in runs]
                    peers = [(label, None if cell is None else cell[1]) for label, cell in found]
                    best = min((s for _, s in peers if s is not None), default=None)
                    peer_text = "; ".join(f"{label} {'-' if s is None else f'{s:.3f}'}" for label, s in peers) or "-"
                    # without F* no -e is known to reach the gap: no ratio, not a lower bound
                    ratio = (f"{ladder[1] / best:.2f}x" if ladder else f"> {length[1] / best:.0f}x") \
                        if best and F_star else "-"
                    reached = ("" if certified is None or not F_star else
                               f" (gap {(certified[2] - F_star) / F_star:.1e})")
                    rung = None if ladder is None else ladder[2]
                    rung_text = "" if ladder is None else f" (-e {ladder[0]:.1e})"
                    lines.append(
                        f"| {name} | {p:g} | {C:g} | {gap:g} | {cell(certified, length, reached)} | "
                        f"{cell(rung, length, rung_text) if F_star else '-'} | "
                        f"{cell(oracle, length) if F_star else '-'} | {exact['seconds']:.3f} / {exact['passes']}"
                        f"{'' if exact['status'] == 'converged' else ' (capped)'} | "
                        f"{peer_text} | {ratio} | {100 * acc:.2f}% | {alm['peak']:.0f} |")
                    print(lines[-1], flush=True)
    return lines


def scaling(rows_list, args):
    """Seconds per pass of alm p = 2 against n, and 1 vs 2 threads on the largest."""
    lines, points = ["", "| rows | ms per pass (2 threads) |", "|---|---|"], []
    for rows in rows_list:
        _, X, labels, _, _, _ = load_synthetic("text", rows)
        y = as_pm(labels)
        run = alm_side(X, y, 1.0, 2.0, 1e-12, args.repeat, args.threads, max_iter=args.scaling_iterations)
        points.append((rows, run["seconds"] / run["passes"]))
        lines.append(f"| {rows} | {1e3 * points[-1][1]:.2f} |")
        print(lines[-1], flush=True)
    if len(points) > 1:
        slope = np.polyfit(np.log([r for r, _ in points]), np.log([t for _, t in points]), 1)[0]
        lines.append(f"\nlog-log slope of time per pass against n: {slope:.3f}")
    per_pass = {}
    for threads in (1, 2):
        run = alm_side(X, y, 1.0, 2.0, 1e-12, args.repeat, threads, max_iter=args.scaling_iterations)
        per_pass[threads] = run["seconds"] / run["passes"]
    lines.append(f"\nThreads on {rows_list[-1]} rows: {1e3 * per_pass[1]:.2f} ms per pass on 1 thread, "
                 f"{1e3 * per_pass[2]:.2f} on 2: {per_pass[1] / per_pass[2]:.2f}x")
    return lines


def main(argv=None):
    parser = make_parser(__doc__)
    parser.add_argument("--data-dir", default=str(DATA_DIR))
    parser.add_argument("--datasets", default="a9a,w8a,ijcnn1,phishing")
    parser.add_argument("--synthetic", type=int, default=0, help="rows of the synthetic sets too")
    parser.add_argument("--synthetic-kinds", default="text,covtype")
    parser.add_argument("--ps", default="1,1.5,2")
    parser.add_argument("--Cs", default="1,32")
    parser.add_argument("--gaps", default="1e-2,1e-3,1e-4")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--scaling-rows", default="125000,250000,500000,1000000")
    parser.add_argument("--scaling-iterations", type=int, default=50)
    parser.add_argument("--max-passes", type=float, default=1e6, help="alm's run per cell stops here")
    parser.add_argument("--exact-max-iter", type=int, default=2000, help="the exact step's iteration cap")
    parser.add_argument("--sections", default="table,scaling")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    args.ps = [float(v) for v in args.ps.split(",")]
    args.Cs = [float(v) for v in args.Cs.split(",")]
    args.gaps = [float(v) for v in args.gaps.split(",")]
    sections = set(args.sections.split(","))

    sets = benchmark_sets(args.data_dir, args.datasets, args.synthetic, args.synthetic_kinds)

    lines = ["# SVM-ALM side by side", "",
             f"{time.strftime('%Y-%m-%d %H:%M')}; {args.threads} threads for alm; medians of {args.repeat} runs "
             "(alm exact: one). Cells: seconds / passes over the nonzeros to the relative primal gap; test "
             "accuracy at alm's last iterate.", ""]
    if "table" in sections:
        lines += table(sets, args)
    if "scaling" in sections:
        lines += scaling([int(r) for r in args.scaling_rows.split(",")], args)
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
