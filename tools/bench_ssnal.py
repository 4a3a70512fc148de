"""SSsNAL (fastsvm -s ssnal, linear kernel) side by side with LIBSVM -t 0 and liblinear -s 3.

For each dataset and C (linear C-SVC, unregularized bias):

* SSsNAL to eta <= 1e-3 and to eta <= 1e-6, eta the KKT residual of Niu et al. 2019 eq. 4.1
  (fastsvm.solvers.ssnal.kkt_residual): median time of --repeat runs, outer iterations, Newton
  steps, equivalent passes over the stored values (mat-vecs counted), test accuracy.
* LIBSVM (libsvm-official) -s 0 -t 0 -c C -e 1e-3, once, in a subprocess killed after
  --libsvm-timeout seconds: its time, and the eta of its dual vector (from sv_coef/sv_indices)
  under the same eta function. LIBSVM's -e bounds its maximal violating pair, not eta.
* liblinear (liblinear-official) -s 3 -B 1 with eps = 0.1, 0.01, ... until its solution is as
  accurate as SSsNAL's at each eta level. liblinear regularizes the bias (its problem differs
  slightly: this is the comparison users make) and its Python interface does not expose
  its dual vector, so accuracy is measured on the primal side of our problem: the relative gap
  (P(w, b) - D*) / |D*|, P the C-SVC primal with unregularized bias at the solver's (w, b) and D*
  the best dual objective known (SSsNAL's at eta <= 1e-6). The eps reached (or "not reached",
  with the best gap), its median time and epochs are reported.
* Where liblinear stops at its epoch cap (300) short of a level, LIBLINEAR's algorithm is run on
  without the cap (fastsvm's DualCD: -s 3 -B 1, shrinking, one thread), its gap looked at every 10
  epochs (untimed), for at most --dcd-epochs: the epochs it needs, its time, and liblinear's time
  at those epochs estimated from liblinear's own time per epoch in its capped run.
* Extra peak memory of each side while training (fresh subprocess: peak RSS minus RSS after
  loading the CSR data), unless --no-memory.

Datasets: names in --data-dir (a9a, w8a, ijcnn1, phishing by default; ijcnn1 is train + test
concatenated, 141,691 rows, accuracy then measured on those rows; otherwise NAME.t is the test
split, else a seeded 80/20 split), --file PATH [--test-file PATH] (e.g. sets written by
tools/make_synthetic.py), --synthetic-text ROWS / --synthetic-covtype ROWS (generated in memory).

    python tools/bench_ssnal.py --out bench_out/ssnal.md
    python tools/bench_ssnal.py --datasets a9a,ijcnn1 --C 1 --repeat 1 --no-memory --libsvm-timeout 60
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchlib.data import DATA_DIR, as_pm, load_dataset, load_file, load_problem, load_synthetic, save_problem
from benchlib.measures import ssnal_subproblem as subproblem
from benchlib.peers import liblinear_train as _liblinear_train
from benchlib.report import geometric_mean, parser, write_text
from benchlib.running import one_thread_env, reset_peak, rss_and_peak
from fastsvm.parallel import one_blas_thread
from fastsvm.solvers.ssnal import linear_dual, primal_objective, solve

DEFAULT_DATASETS = "a9a,w8a,ijcnn1,phishing"
CONCATENATED = {"ijcnn1"}           # trained on train + test: the larger problem
ETA_LEVELS = (1e-3, 1e-6)
LIBLINEAR_EPS = (0.1, 0.01, 1e-3, 1e-4, 1e-5, 1e-6)


# ---------------------------------------------------------------- data

def load_named(data_dir, name):
    """load_dataset's record of a named set, ijcnn1 trained (and tested) on train + test."""
    return load_dataset(name, data_dir, concatenated=CONCATENATED)


# ---------------------------------------------------------------- the three solvers

def ssnal_train(X, y, C, tol, threads):
    """(seconds, solution)."""
    sub = subproblem(X, y, C, tol, threads)
    with one_blas_thread():   # as fit_model runs every solver
        start = time.perf_counter()
        sol = solve(sub)
        return time.perf_counter() - start, sol


def liblinear_train(prob, labels, C, eps):
    """(seconds, w, b, epochs) of liblinear -s 3 -B 1 with +1 = the class of the first row."""
    return _liblinear_train(prob, labels, solver_type=3, C=C, eps=eps, bias=1)


def dcd_reach(X, y, C, targets, max_epochs, primal, chunk=10):
    """LIBLINEAR's -s 3 -B 1 without its epoch cap (fastsvm's DualCD, seeded): for each target
    gap, (epochs, seconds) of the first look at which the gap on our problem is at most the
    target, or None when max_epochs pass first or it converges to its own problem (whose bias is
    regularized) short of it; then the epochs run and the best gap seen."""
    from fastsvm._core._dcd import DualCD
    from fastsvm._core._status import Status
    from fastsvm.solvers.dcd import dual_bounds
    cd = DualCD(X, y, *dual_bounds(np.full(X.shape[0], float(C)), "hinge"), bias=1.0, seed=0, shrinking=True)
    found, seconds, best = [None] * len(targets), 0.0, math.inf
    while cd.epoch < max_epochs and None in found:
        start = time.perf_counter()
        status = cd.run(0.0, max_epochs, chunk, 1 << 62)
        seconds += time.perf_counter() - start
        w = cd.w
        gap = primal(np.ascontiguousarray(w[:-1]), float(w[-1]))
        best = min(best, gap)
        for i, target in enumerate(targets):
            if found[i] is None and gap <= target:
                found[i] = (cd.epoch, seconds)
        if status != Status.CHUNK_DONE:
            break
    return found, cd.epoch, best


def libsvm_worker(args):
    """In a subprocess: train LIBSVM once, save its dual vector and b, print time and memory."""
    import gc
    from libsvm import svmutil
    X, y = load_problem(args.worker)
    gc.collect()
    loaded = reset_peak()
    start = time.perf_counter()
    model = svmutil.svm_train(y, X, f"-s 0 -t 0 -c {args.worker_C} -e 1e-3 -q")
    seconds = time.perf_counter() - start
    _, peak = rss_and_peak()
    coef = np.zeros(X.shape[0])
    coef[np.array(model.get_sv_indices(), dtype=np.int64) - 1] = np.array(model.get_sv_coef())[:, 0]
    b = -model.rho[0]
    if model.get_labels()[0] != 1:
        coef, b = -coef, -b
    np.save(args.worker + ".dual.npy", coef * y)
    print(json.dumps({"seconds": seconds, "b": b, "extra_peak": max(peak - loaded, 0)}))


def libsvm_run(npz, C, timeout):
    """(seconds, dual x, b, extra peak MB) or None after the timeout."""
    cmd = [sys.executable, __file__, "--worker", npz, "--side", "libsvm", "--worker-C", repr(C)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=timeout,
                             env=one_thread_env())
    except subprocess.TimeoutExpired:
        return None
    res = json.loads(out.stdout.strip().splitlines()[-1])
    return res["seconds"], np.load(npz + ".dual.npy"), res["b"], res["extra_peak"] / 2**20


# ---------------------------------------------------------------- memory, in fresh processes

def memory_worker(args):
    """Train SSsNAL or liblinear once on the saved problem; print the extra peak RSS."""
    import gc
    from liblinear import liblinearutil
    X, y = load_problem(args.worker)
    gc.collect()
    loaded = reset_peak()
    if args.side == "liblinear":
        liblinear_train(liblinearutil.problem(y, X), y, args.worker_C, args.worker_eps)
    else:
        ssnal_train(X, y, args.worker_C, args.worker_eps, 1)
    _, peak = rss_and_peak()
    print(json.dumps({"extra_peak": max(peak - loaded, 0)}))


def peak_extra_mb(npz, side, C, eps):
    cmd = [sys.executable, __file__, "--worker", npz, "--side", side, "--worker-C", repr(C), "--worker-eps", repr(eps)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=one_thread_env())
    return json.loads(out.stdout.strip().splitlines()[-1])["extra_peak"] / 2**20


# ---------------------------------------------------------------- one comparison

def accuracy(Xt, yt_pm, w, b):
    return float(np.mean(np.where(Xt @ w + b > 0, 1.0, -1.0) == yt_pm))


def compare(name, X, labels, Xt, yt, split, C, args, tmpdir):
    y = as_pm(labels)
    yt_pm = np.where(yt == labels[0], 1.0, -1.0)
    qp = linear_dual(subproblem(X, y, C, 1e-3))
    row = {"dataset": name, "n": X.shape[0], "p": X.shape[1], "nnz": X.nnz, "split": split, "C": C}

    def primal(w, b):
        return primal_objective(qp, qp.Z.matvec(np.ascontiguousarray(w)), w, b)

    # SSsNAL at both levels; the 1e-6 run gives the reference dual objective D*
    for tol in ETA_LEVELS:
        runs = [ssnal_train(X, y, C, tol, args.threads) for _ in range(args.repeat)]
        sol = runs[0][1]
        row[tol] = {"time": statistics.median(r[0] for r in runs), "eta": sol.stop_measure, "outer": sol.n_iter,
                    "newton": sol.details["newton"], "passes": sol.details["passes"], "status": sol.status,
                    "acc": accuracy(Xt, yt_pm, sol.w, -sol.rho), "primal": primal(sol.w, -sol.rho),
                    "dual": -sol.objective}
    d_star = max(row[tol]["dual"] for tol in ETA_LEVELS)
    for tol in ETA_LEVELS:
        row[tol]["gap"] = (row[tol]["primal"] - d_star) / abs(d_star)

    npz = os.path.join(tmpdir, "problem.npz")
    save_problem(npz, X, y)

    row["libsvm"] = "skipped" if args.no_libsvm else None
    if not args.no_libsvm:
        res = libsvm_run(npz, C, args.libsvm_timeout)
        if res is not None:
            seconds, x_lib, b_lib, mem = res
            eta_lib, _ = qp.kkt(x_lib)
            w_lib = qp.Z.rmatvec(x_lib)
            row["libsvm"] = {"time": seconds, "eta": eta_lib, "acc": accuracy(Xt, yt_pm, w_lib, b_lib), "mem": mem,
                             "gap": (primal(w_lib, b_lib) - d_star) / abs(d_star)}

    row["liblinear"] = {}
    if not args.no_liblinear:
        from liblinear.liblinearutil import problem
        prob = problem(y, X)
        prob.set_bias(1)
        tried = []
        for eps in LIBLINEAR_EPS:
            runs = [liblinear_train(prob, y, C, eps) for _ in range(args.repeat)]
            _, w, b, epochs = runs[0]
            gap = (primal(w, b) - d_star) / abs(d_star)
            tried.append({"eps": eps, "time": statistics.median(r[0] for r in runs), "epochs": epochs, "gap": gap,
                          "acc": accuracy(Xt, yt_pm, w, b)})
            if gap <= row[ETA_LEVELS[-1]]["gap"]:
                break
        for tol in ETA_LEVELS:
            hit = next((t for t in tried if t["gap"] <= row[tol]["gap"]), None)
            row["liblinear"][tol] = hit if hit is not None else {**min(tried, key=lambda t: t["gap"]), "missed": True}
        row["liblinear"]["default"] = tried[0]

    missed = [tol for tol in ETA_LEVELS if row["liblinear"].get(tol, {}).get("missed")]
    if missed and args.dcd_epochs > 0:
        found, epochs, best = dcd_reach(X, y, C, [row[tol]["gap"] for tol in missed], args.dcd_epochs,
                                        lambda w, b: (primal(w, b) - d_star) / abs(d_star))
        for tol, hit in zip(missed, found):
            capped = row["liblinear"][tol]
            per_epoch = capped["time"] / max(capped["epochs"], 1)   # liblinear's, in its capped run
            capped["uncapped"] = ({"epochs": epochs, "best_gap": best, "estimate": per_epoch * epochs} if hit is None
                                  else {"epochs": hit[0], "dcd_time": hit[1], "estimate": per_epoch * hit[0]})

    row["mem"] = {"ssnal": math.nan, "liblinear": math.nan}
    if not args.no_memory:
        row["mem"]["ssnal"] = peak_extra_mb(npz, "ssnal", C, ETA_LEVELS[0])
        if not args.no_liblinear:
            row["mem"]["liblinear"] = peak_extra_mb(npz, "liblinear", C, row["liblinear"][ETA_LEVELS[0]]["eps"])
    return row


# ---------------------------------------------------------------- report

HEADER = ("| dataset | n × p (nnz) | C | SSsNAL s to η≤1e-3 / 1e-6 | outer, Newton (1e-3 / 1e-6) "
          "| passes (1e-3 / 1e-6) | rel. gap (1e-3 / 1e-6) | LIBSVM -e 1e-3: s, η | liblinear -e 0.1: s, epochs, gap "
          "| liblinear: -e, s, epochs (1e-3 / 1e-6 level) "
          "| not reached by liblinear: its algorithm uncapped: epochs, s; liblinear est. s (1e-3 / 1e-6 level) "
          "| ratio vs LIBSVM | ratio vs liblinear (1e-3 / 1e-6) "
          "| ratio vs the uncapped run, est. liblinear (1e-3 / 1e-6) | test acc (SSsNAL / LIBSVM / liblinear) "
          "| extra peak MB (SSsNAL / LIBSVM / liblinear) |")


def _ll_cell(hit):
    if hit is None:
        return "–"
    missed = f" (not reached: best gap {hit['gap']:.1e})" if hit.get("missed") else ""
    return f"{hit['eps']:g}, {hit['time']:.3f}, {hit['epochs']}{missed}"


def _uncapped_cells(r, tol):
    """(the uncapped run's cell, the ratio cell) for one level; '–' where liblinear reached it."""
    hit = r["liblinear"].get(tol, {})
    if not hit.get("missed") or "uncapped" not in hit:
        return "–", "–"
    run = hit["uncapped"]
    if "dcd_time" not in run:   # liblinear's time exceeds the estimate at the epochs run
        return (f"not in {run['epochs']} epochs (best gap {run['best_gap']:.1e})",
                f"–, < {r[tol]['time'] / run['estimate']:.2g}")
    return (f"{run['epochs']}, {run['dcd_time']:.2f}; {run['estimate']:.2f}",
            f"{r[tol]['time'] / run['dcd_time']:.2g}, {r[tol]['time'] / run['estimate']:.2g}")


def markdown_row(r, timeout):
    s3, s6 = r[1e-3], r[1e-6]
    lib = r["libsvm"]
    if lib == "skipped":
        lib, lib_cell, lib_ratio = None, "–", "–"
    else:
        lib_cell = f"{lib['time']:.2f}, {lib['eta']:.1e}" if lib else f"> {timeout:g} (killed)"
        lib_ratio = f"{s3['time'] / lib['time']:.3f}" if lib else f"< {s3['time'] / timeout:.3f}"
    ll = r["liblinear"]
    if ll:
        default = ll["default"]
        ll_default = f"{default['time']:.3f}, {default['epochs']}, {default['gap']:.1e}"
        ll_cell = f"{_ll_cell(ll[1e-3])} / {_ll_cell(ll[1e-6])}"
        ll_ratio = f"**{s3['time'] / ll[1e-3]['time']:.2f}** / **{s6['time'] / ll[1e-6]['time']:.2f}**"
        ll_acc = f"{100 * ll[1e-3]['acc']:.2f}%"
        cells = [_uncapped_cells(r, tol) for tol in ETA_LEVELS]
        un_cell, un_ratio = " / ".join(c[0] for c in cells), " / ".join(c[1] for c in cells)
    else:
        ll_default, ll_cell, ll_ratio, ll_acc, un_cell, un_ratio = "–", "–", "–", "–", "–", "–"
    lib_acc = f"{100 * lib['acc']:.2f}%" if lib else "–"
    lib_mem = f"{lib['mem']:.1f}" if lib else "–"
    return (f"| {r['dataset']} | {r['n']} × {r['p']} ({r['nnz']}) | {r['C']:g} "
            f"| {s3['time']:.3f} / {s6['time']:.3f} | {s3['outer']}, {s3['newton']} / {s6['outer']}, {s6['newton']} "
            f"| {s3['passes']:.1f} / {s6['passes']:.1f} | {s3['gap']:.1e} / {s6['gap']:.1e} | {lib_cell} "
            f"| {ll_default} | {ll_cell} | {un_cell} | {lib_ratio} | {ll_ratio} | {un_ratio} "
            f"| {100 * s3['acc']:.2f}% / {lib_acc} / {ll_acc} "
            f"| {r['mem']['ssnal']:.1f} / {lib_mem} / {r['mem']['liblinear']:.1f} |")


def main(argv=None):
    ap = parser(__doc__)
    ap.add_argument("--data-dir", default=str(DATA_DIR))
    ap.add_argument("--datasets", default=DEFAULT_DATASETS, help="comma-separated names in --data-dir")
    ap.add_argument("--C", default="1,32,256", help="comma-separated costs")
    ap.add_argument("--file", action="append", default=[], help="a LIBSVM training file to add (repeatable)")
    ap.add_argument("--test-file", action="append", default=[], help="the test file of each --file, in order")
    ap.add_argument("--synthetic-text", type=int, metavar="ROWS", help="add a sparse text-like set")
    ap.add_argument("--synthetic-covtype", type=int, metavar="ROWS", help="add a dense covtype-like set")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of SSsNAL and liblinear (median)")
    ap.add_argument("--threads", type=int, default=1, help="SSsNAL threads (the peers use one)")
    ap.add_argument("--libsvm-timeout", type=float, default=600.0, help="seconds before LIBSVM is killed")
    ap.add_argument("--no-libsvm", action="store_true")
    ap.add_argument("--no-liblinear", action="store_true")
    ap.add_argument("--no-memory", action="store_true", help="skip the subprocess memory runs")
    ap.add_argument("--dcd-epochs", type=int, default=3000,
                    help="epochs of LIBLINEAR's algorithm run on where liblinear stops short (0: none)")
    ap.add_argument("--out", help="write the markdown table here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--side", help=argparse.SUPPRESS)
    ap.add_argument("--worker-C", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--worker-eps", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return libsvm_worker(args) if args.side == "libsvm" else memory_worker(args)

    loaders = [lambda n=n: load_named(args.data_dir, n) for n in args.datasets.split(",") if n]
    tests = args.test_file + [None] * (len(args.file) - len(args.test_file))
    loaders += [lambda f=f, t=t: load_file(f, t) for f, t in zip(args.file, tests)]
    if args.synthetic_text:
        loaders.append(lambda: load_synthetic("text", args.synthetic_text))
    if args.synthetic_covtype:
        loaders.append(lambda: load_synthetic("covtype", args.synthetic_covtype))
    costs = [float(c) for c in args.C.split(",")]

    rows = []
    print(HEADER, flush=True)
    with tempfile.TemporaryDirectory() as tmpdir:
        for load in loaders:
            name, X, labels, Xt, yt, split = load()
            for C in costs:
                row = compare(name, X, labels, Xt, yt, split, C, args, tmpdir)
                rows.append(row)
                print(markdown_row(row, args.libsvm_timeout), flush=True)
    if args.out:
        ll_ratios = [r[1e-3]["time"] / r["liblinear"][1e-3]["time"] for r in rows if r["liblinear"]]
        lines = [
            "# SSsNAL vs LIBSVM -t 0 and liblinear -s 3 -B 1 (linear C-SVC)",
            "",
            f"Median of {args.repeat} runs (LIBSVM: one run, killed after {args.libsvm_timeout:g} s). "
            f"SSsNAL with {args.threads} thread(s). η = KKT residual of Niu et al. 2019 eq. 4.1 under fastsvm's eta "
            "function. liblinear regularizes the bias and does not expose its dual vector: its accuracy is the "
            "relative primal gap (P(w, b) - D*) / |D*| on the unregularized-bias problem, and it is run at "
            f"-e {', '.join(f'{e:g}' for e in LIBLINEAR_EPS)} until that gap is at most SSsNAL's at each η level. "
            "Passes: SSsNAL's mat-vecs in units of one pass over the stored values; epochs: liblinear's outer "
            "iterations (each at most one pass; it stops after 300). Where it stops short of a level, LIBLINEAR's "
            "algorithm is run on without the cap (fastsvm's DualCD, -s 3 -B 1, shrinking, one thread; its gap looked "
            "at every 10 epochs, untimed): its epochs and time to the gap, and liblinear's time at those epochs "
            "estimated from its own time per epoch. Ratios: SSsNAL time / peer time (< 1: SSsNAL faster); "
            "vs LIBSVM at η ≤ 1e-3. Extra peak memory: peak RSS during training minus RSS after loading, "
            "fresh process.",
            "",
            HEADER,
            "|" + "---|" * HEADER.count(" | ") + "---|",
            *(markdown_row(r, args.libsvm_timeout) for r in rows),
            "",
            (f"Geometric mean time ratio vs liblinear at η ≤ 1e-3: {geometric_mean(ll_ratios):.2f}"
             if ll_ratios else ""),
            f"Machine: {os.uname().nodename}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}.",
        ]
        write_text(args.out, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
