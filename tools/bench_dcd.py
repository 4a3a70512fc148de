"""fastsvm's DCD against liblinear-official, side by side, on the same data, C and loss.

For each dataset and loss: liblinear (-s 3 hinge / -s 1 squared hinge) is run at -e EPS and its
primal objective P_ll is computed here from its w (1/2 |w|^2 + C sum loss, bias weight included).
fastsvm then runs at EPS, EPS/2^(1/4), EPS/2^(2/4), ... until the median objective of its timed
runs (seeds 0..R-1) is <= the median P_ll of liblinear's runs; that eps and its median time are
reported, so both sides are timed to the same objective. liblinear 2.50 stops its dual solvers
after 300 epochs (-s 1 then switches to its primal Newton solver): the epochs column shows it.
Also: test accuracy of both, and the peak memory each needs beyond the loaded data (each side
trained once in a fresh subprocess: peak RSS during training, liblinear's copy of the data
included, minus RSS after loading).

Datasets: names in --data-dir (a9a, w8a, ijcnn1, phishing by default; NAME.t / NAME.t.xz is the
test split when present, else a seeded 80/20 split), --file PATH [--test-file PATH], and
--synthetic ROWS (sparse text-like rows from tools/make_synthetic.py, generated in memory).

    python tools/bench_dcd.py --repeat 5 --out bench_out/dcd.md
    python tools/bench_dcd.py --datasets a9a --loss hinge --repeat 3        # a short sanity run
    python tools/bench_dcd.py --datasets "" --synthetic 1000000 --out bench_out/dcd_synth.md
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

from benchlib.data import DATA_DIR, as_pm, load_dataset, load_problem, load_synthetic, save_problem
from benchlib.data import load_file as _load_file
from benchlib.peers import liblinear_problem
from benchlib.peers import liblinear_train as _liblinear_train
from benchlib.report import geometric_mean, parser, write_text
from benchlib.running import one_thread_env, reset_peak, rss_and_peak, run_json
from fastsvm.params import Params
from fastsvm.solvers.base import Kernel, Subproblem
from fastsvm.solvers.dcd import primal_objective, solve

LIBLINEAR_TYPE = {"hinge": 3, "squared_hinge": 1}
DEFAULT_DATASETS = "a9a,w8a,ijcnn1,phishing"
LADDER = 2 ** 0.25       # fastsvm tries eps, eps / LADDER, eps / LADDER^2, ...
LADDER_STEPS = 16         # down to eps / 16


# ---------------------------------------------------------------- data

SPLIT = {"sort_split": False, "split_label": "80/20 split, seed 0"}   # this script's seeded split


def load_named(data_dir, name):
    return load_dataset(name, data_dir, **SPLIT)


def load_file(path, test_path):
    return _load_file(path, test_path, **SPLIT)


# ---------------------------------------------------------------- the two solvers

def liblinear_train(prob, labels, loss, C, eps, bias):
    """(seconds, w, w_bias, epochs) of liblinear -s 3 (hinge) or -s 1 (squared hinge), +1 = the
    class of the first row."""
    return _liblinear_train(prob, labels, solver_type=LIBLINEAR_TYPE[loss], C=C, eps=eps, bias=bias)


def fastsvm_train(X, y, loss, C, eps, bias, seed):
    """(seconds, w, w_bias, objective, epochs)."""
    params = Params(solver="dcd", loss=loss, C=C, tol=eps, bias=bias)
    sub = Subproblem("c_svc", X, y, np.full(len(y), C), Kernel("linear"), params, seed=seed)
    start = time.perf_counter()
    sol = solve(sub)
    seconds = time.perf_counter() - start
    B = max(bias, 0.0)
    return seconds, sol.w, (-sol.rho / B if B > 0 else 0.0), sol.objective, sol.n_iter


def accuracy(Xt, yt_pm, w, w_bias, bias):
    decision = Xt @ w + w_bias * max(bias, 0.0)
    return float(np.mean(np.where(decision > 0, 1.0, -1.0) == yt_pm))


# ---------------------------------------------------------------- memory, in fresh processes

def memory_worker(args):
    """Load the saved problem, reset the RSS high-water mark, train once, print the extra peak."""
    import gc
    from liblinear import liblinearutil  # noqa: F401  (imported before the baseline, like fastsvm)
    X, labels = load_problem(args.memory_worker)
    gc.collect()
    loaded = reset_peak()
    if args.side == "liblinear":
        liblinear_train(liblinear_problem(X, labels, args.bias), labels, args.loss, args.C, args.eps, args.bias)
    else:
        fastsvm_train(X, as_pm(labels), args.loss, args.C, args.eps, args.bias, 0)
    _, peak = rss_and_peak()
    print(json.dumps({"extra_peak": max(peak - loaded, 0)}))


def peak_extra_mb(npz, side, loss, C, eps, bias):
    cmd = [sys.executable, __file__, "--memory-worker", npz, "--side", side, "--loss", loss,
           "-c", repr(C), "-e", repr(eps), "-B", repr(bias)]
    return run_json(cmd, env=one_thread_env())["extra_peak"] / 2**20


# ---------------------------------------------------------------- one comparison

def compare(name, X, labels, Xt, yt, split, loss, C, eps, bias, repeat, memory, tmpdir):
    y = as_pm(labels)
    yt_pm = np.where(yt == labels[0], 1.0, -1.0)
    upper = np.full(len(y), C)
    B = max(bias, 0.0)

    prob = liblinear_problem(X, labels, bias)
    ll_runs = [liblinear_train(prob, labels, loss, C, eps, bias) for _ in range(repeat)]
    ll_obj = [primal_objective(X, y, upper, w, wb, bias=B, loss=loss) for _, w, wb, _ in ll_runs]
    target = statistics.median(ll_obj)
    ll_time = statistics.median(r[0] for r in ll_runs)
    _, w_ll, wb_ll, ll_epochs = ll_runs[0]

    for step in range(LADDER_STEPS + 1):
        fs_eps = eps / LADDER**step
        fs_runs = [fastsvm_train(X, y, loss, C, fs_eps, bias, seed) for seed in range(repeat)]
        fs_obj = statistics.median(r[3] for r in fs_runs)
        if fs_obj <= target:
            break
    fs_time = statistics.median(r[0] for r in fs_runs)
    _, w_fs, wb_fs, _, epochs = fs_runs[0]

    row = {
        "dataset": name, "loss": loss, "n": X.shape[0], "p": X.shape[1], "nnz": X.nnz, "split": split,
        "C": C, "bias": bias, "ll_eps": eps, "ll_time": ll_time, "ll_obj": target, "ll_epochs": ll_epochs,
        "fs_eps": fs_eps, "fs_time": fs_time, "fs_obj": fs_obj, "fs_epochs": epochs,
        "reached": fs_obj <= target, "ratio": fs_time / ll_time,
        "ll_acc": accuracy(Xt, yt_pm, w_ll, wb_ll, bias), "fs_acc": accuracy(Xt, yt_pm, w_fs, wb_fs, bias),
        "ll_mem": float("nan"), "fs_mem": float("nan"),
    }
    if memory:
        npz = os.path.join(tmpdir, "problem.npz")
        save_problem(npz, X, labels)
        row["ll_mem"] = peak_extra_mb(npz, "liblinear", loss, C, eps, bias)
        row["fs_mem"] = peak_extra_mb(npz, "fastsvm", loss, C, fs_eps, bias)
    return row


HEADER = ("| dataset | loss | n × p (nnz) | C, -B | liblinear -e | liblinear s | liblinear objective "
          "| fastsvm -e | fastsvm s | fastsvm objective | epochs (ll / fs) | time ratio | test acc (ll / fs) "
          "| extra peak MB (ll / fs) |")


def markdown_row(r):
    reached = "" if r["reached"] else " (not reached)"
    return (f"| {r['dataset']} | {r['loss']} | {r['n']} × {r['p']} ({r['nnz']}) | {r['C']:g}, {r['bias']:g} "
            f"| {r['ll_eps']:g} | {r['ll_time']:.3f} | {r['ll_obj']:.8g} | {r['fs_eps']:.3g} "
            f"| {r['fs_time']:.3f} | {r['fs_obj']:.8g}{reached} | {r['ll_epochs']} / {r['fs_epochs']} "
            f"| **{r['ratio']:.2f}** "
            f"| {100 * r['ll_acc']:.2f}% / {100 * r['fs_acc']:.2f}% | {r['ll_mem']:.1f} / {r['fs_mem']:.1f} |")


def main(argv=None):
    ap = parser(__doc__)
    ap.add_argument("--data-dir", default=str(DATA_DIR))
    ap.add_argument("--datasets", default=DEFAULT_DATASETS, help="comma-separated names in --data-dir")
    ap.add_argument("--file", help="a LIBSVM training file to add")
    ap.add_argument("--test-file", help="its test file (else an 80/20 split)")
    ap.add_argument("--synthetic", type=int, metavar="ROWS", help="add a synthetic text-like set of ROWS rows")
    ap.add_argument("--loss", choices=["hinge", "squared_hinge", "both"], default="both")
    ap.add_argument("-c", dest="C", type=float, default=1.0)
    ap.add_argument("-e", dest="eps", type=float, default=0.1, help="liblinear's -e (default 0.1)")
    ap.add_argument("-B", dest="bias", type=float, default=1.0, help="bias feature (-1: none; default 1)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per side (median)")
    ap.add_argument("--no-memory", action="store_true", help="skip the subprocess memory runs")
    ap.add_argument("--out", help="write the markdown table here")
    ap.add_argument("--memory-worker", help=argparse.SUPPRESS)
    ap.add_argument("--side", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.memory_worker:
        return memory_worker(args)

    loaders = [lambda n=n: load_named(args.data_dir, n) for n in args.datasets.split(",") if n]
    if args.file:
        loaders.append(lambda: load_file(args.file, args.test_file))
    if args.synthetic:
        loaders.append(lambda: load_synthetic("text", args.synthetic))
    losses = ["hinge", "squared_hinge"] if args.loss == "both" else [args.loss]

    rows = []
    print(HEADER, flush=True)
    with tempfile.TemporaryDirectory() as tmpdir:
        for load in loaders:
            name, X, labels, Xt, yt, split = load()
            for loss in losses:
                row = compare(name, X, labels, Xt, yt, split, loss, args.C, args.eps, args.bias,
                              args.repeat, not args.no_memory, tmpdir)
                rows.append(row)
                print(markdown_row(row), flush=True)
    if args.out:
        ratios = [r["ratio"] for r in rows]
        lines = [
            "# fastsvm DCD vs liblinear-official (same data, C, loss and bias; time to the same objective)",
            "",
            f"Median of {args.repeat} runs each. liblinear at -e {args.eps:g}; fastsvm at the largest eps in "
            f"{args.eps:g}/2^(k/4) for which the median objective of its runs (seeds 0..{args.repeat - 1}) "
            "reaches liblinear's median primal objective. Ratio = fastsvm time / liblinear time (< 1: fastsvm "
            "faster). Extra peak memory = peak RSS while training (liblinear: including its copy of the data) "
            "minus RSS after loading the CSR data, in a fresh process.",
            "",
            HEADER,
            "|" + "---|" * HEADER.count(" | ") + "---|",
            *map(markdown_row, rows),
            "",
            f"Geometric mean time ratio: {geometric_mean(ratios):.2f}" if ratios else "",
            f"Machine: {os.uname().nodename}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}.",
        ]
        write_text(args.out, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
