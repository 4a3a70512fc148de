"""fastsvm's SMO (-s 0 / -s 3, RBF kernel) side by side with LIBSVM (libsvm-official), one run.

Both sides get the same -c -g -e -m (LIBSVM's defaults unless given: C = 1, gamma = 1/n_features
of the training file, e = 1e-3, m = 100 MB; epsilon-SVR with p = 0.1). Every dataset is trained in
four configurations: fastsvm with n_jobs = 1 and 2, LIBSVM with OMP_NUM_THREADS = 1 and 2
(libsvm-official computes kernel columns with OpenMP; the variable has to be set before the library
loads, so every run is a fresh subprocess with its environment set). Runs are interleaved
(repeat r of every configuration before repeat r + 1) so that a change in the machine's load
hits all four alike.

Each run: the data is loaded (and handed to LIBSVM as its svm_problem) and a warm-up training on
the first quarter of every class, at most 600 rows (regression: of the rows, at most 1200) is
done before the clock starts, so that neither side counts the first touch of its
code pages or the start of its threads; wall time of training only (on the sets not marked
slow, the median of TRAININGS trainings in the run: one of a few ms measures mostly the
machine's moment); peak RSS increase during the first
training (free heap pages given back to the system, so that neither side's run is served
uncounted by pages the warm-up left, then VmHWM reset through /proc/self/clear_refs, minus the
RSS at that moment);
then test accuracy (MSE for regression), the number of support vectors and fastsvm's SMO iterations
(summed over the pairs: a refactoring must leave them unchanged). The table shows
medians over --repeat runs (--repeat-slow for the large binary sets), the ratios fastsvm /
LIBSVM-with-one-thread for both fastsvm thread counts, and the targets: time <= 1.0x
(1 thread) and <= 0.6x (2 threads) of LIBSVM with one thread, peak memory <= LIBSVM's + 10 %
(same thread count), test accuracy within 0.1 percentage point (MSE within 1 %).

Datasets (from --data-dir): a9a, w8a, ijcnn1 (+ their .t test files), mushrooms and phishing
(seeded 80/20 splits), letter.scale and satimage.scale (seeded 80/20 splits: only the standard
training files are shared, 15000 and 4435 rows), pendigits (+ pendigits.t), abalone_scale and mg
(epsilon-SVR, seeded 80/20 splits). --quick trains on seeded subsets (QUICK_TRAIN rows, tested on
QUICK_TEST rows) with one run each, to check the script in seconds: its pairs are tiny (letter:
325 pairs of ~150 rows), so fixed per-pair costs weigh far more than on the full sets, and its
2-thread times mostly measure thread hand-offs and the machine's load.

Memory: both sides point into the training data (LIBSVM's model into its svm_problem, fastsvm's
into the training CSR) and keep one coefficient matrix; LIBSVM keeps every pair's dual vector
until the model is built, fastsvm only a pair's nonzero coefficients. With 2 threads fastsvm
solves the largest pair alone first and lets the others share what its cache held at most (or
solves them one at a time, with both threads, when it held most of its kernel matrix: pendigits).

    python tools/bench_smo.py --out bench_out/smo.md
    python tools/bench_smo.py --quick --datasets a9a,letter.scale,abalone_scale
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchlib.data import DATA_DIR
from benchlib.kernel_sets import DATASETS, QUICK_TEST, QUICK_TRAIN, load, load_saved, save, warm_up_rows
from benchlib.peers import libsvm_rbf_parameter
from benchlib.report import machine_line, parser, rule, run_and_report
from benchlib.running import reset_peak, rss_and_peak

REPO = Path(__file__).resolve().parents[1]   # the children's working folder
THREADS = (1, 2)
TRAININGS = 5                    # timed trainings per run on the sets not marked slow
TARGET_TIME = {1: 1.0, 2: 0.6}   # fastsvm with k threads / LIBSVM with one thread
TARGET_MEMORY = 1.10             # fastsvm's peak / LIBSVM's peak
TARGET_ACCURACY_PP = 0.1         # percentage points
TARGET_MSE_REL = 0.01


# ---------------------------------------------------------------- one measured run (child)

def child(args):
    """Train one side once on the saved problem; print JSON (seconds, extra peak bytes, metric,
    number of support vectors, fastsvm's SMO iterations)."""
    import gc
    X, y, Xt, yt = load_saved(args.child)
    svm_type = 3 if args.task == "regression" else 0
    if args.side == "libsvm":
        from libsvm.svmutil import svm_predict, svm_problem, svm_train
        problem = svm_problem(y, X)
        param = libsvm_rbf_parameter(svm_type=svm_type, C=args.C, gamma=args.gamma, e=args.e, m=args.m)

        def train(rows=None):
            return svm_train(problem if rows is None else svm_problem(y[rows], X[rows]), param)

        def predict(model):
            return np.asarray(svm_predict(yt, Xt, model, "-q")[0]), model.get_nr_sv()

        def iterations(model):
            return None   # LIBSVM prints its count, it does not return it
    else:
        from fastsvm import Params, fit_model
        from fastsvm import predict as fastsvm_predict
        from fastsvm.csr import to_csr
        X = to_csr(X)
        params = Params(svm_type="epsilon_svr" if svm_type == 3 else "c_svc", solver="smo",
                        kernel_type="rbf", C=args.C, gamma=args.gamma, tol=args.e, cache_size=args.m,
                        n_jobs=args.threads)

        def train(rows=None):
            return fit_model(X, y, params) if rows is None else fit_model(X[rows], y[rows], params)

        def predict(model):
            return fastsvm_predict(model, Xt), model.support_vectors.shape[0]

        def iterations(model):
            return int(sum(model.info["n_iter"]))
    train(warm_up_rows(y, args.task))
    gc.collect()
    base = reset_peak()
    peak, times = None, []
    for _ in range(args.trainings):   # the peak of the first; the median time
        start = time.perf_counter()
        model = train()
        times.append(time.perf_counter() - start)
        peak = rss_and_peak()[1] - base if peak is None else peak
    seconds = statistics.median(times)
    pred, n_sv = predict(model)
    metric = float(np.mean((pred - yt) ** 2)) if svm_type == 3 else float(np.mean(pred == yt))
    print(json.dumps({"seconds": seconds, "peak": max(peak, 0), "metric": metric, "n_sv": int(n_sv),
                      "n_iter": iterations(model)}))


def run_child(side, threads, npz, task, args, gamma, trainings=1):
    cmd = [sys.executable, __file__, "--child", npz, "--side", side, "--threads", str(threads),
           "--task", task, "--C", repr(args.C), "--gamma", repr(gamma), "--e", repr(args.e),
           "--m", repr(args.m), "--trainings", str(trainings)]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)
    if out.returncode != 0:
        raise SystemExit(f"bench_smo: {side} ({threads} thread(s)) failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- one dataset (parent)

CONFIGS = [(side, k) for side in ("fastsvm", "libsvm") for k in THREADS]


def bench(name, args, tmpdir):
    X, y, Xt, yt, how, gamma = load(args.data_dir, name, args.quick)
    task = DATASETS[name].task
    npz = os.path.join(tmpdir, f"{name}.npz")
    save(npz, X, y, Xt, yt)
    repeat = args.repeat_slow if DATASETS[name].slow and not args.quick else args.repeat
    runs = {config: [] for config in CONFIGS}
    # a short training is timed several times in its process (median): one run of a few ms
    # measures mostly the machine's moment
    trainings = 1 if DATASETS[name].slow or args.quick else TRAININGS
    for _ in range(repeat):
        for side, k in CONFIGS:
            runs[side, k].append(run_child(side, k, npz, task, args, gamma, trainings))
    result = {config: {"seconds": statistics.median(r["seconds"] for r in rs),
                       "peak": statistics.median(r["peak"] for r in rs),
                       "metric": rs[0]["metric"], "n_sv": rs[0]["n_sv"], "n_iter": rs[0]["n_iter"]}
              for config, rs in runs.items()}
    n_classes = len(np.unique(y)) if task != "regression" else None
    return {"name": name, "task": task, "n": X.shape[0], "n_test": Xt.shape[0], "p": X.shape[1],
            "classes": n_classes, "how": how, "gamma": gamma, "repeat": repeat, "runs": result}


# ---------------------------------------------------------------- report

HEADER = ("| dataset | train / test rows | γ | fastsvm s (1 / 2 thr) | LIBSVM s (1 / 2 thr) "
          "| ratio vs LIBSVM 1 thr (fastsvm 1 / 2 thr) | peak MB fastsvm (1 / 2 thr) "
          "| peak MB LIBSVM (1 / 2 thr) "
          "| test acc. or MSE (fastsvm / LIBSVM) | nSV (fastsvm / LIBSVM) | fastsvm SMO iterations (1 / 2 thr) "
          "| targets met |")
RULE = rule(HEADER)


def _ok(flag):
    return "yes" if flag else "**no**"


def targets(row):
    """{target: met?} for one dataset."""
    r = row["runs"]
    lib1 = r["libsvm", 1]["seconds"]
    met = {f"time {k} thr": r["fastsvm", k]["seconds"] <= TARGET_TIME[k] * lib1 for k in THREADS}
    met["memory"] = all(r["fastsvm", k]["peak"] <= TARGET_MEMORY * r["libsvm", k]["peak"] for k in THREADS)
    a, b = r["fastsvm", 1]["metric"], r["libsvm", 1]["metric"]
    if row["task"] == "regression":
        met["MSE"] = abs(a - b) <= TARGET_MSE_REL * b
    else:
        met["accuracy"] = abs(a - b) * 100 <= TARGET_ACCURACY_PP
    return met


def markdown_row(row):
    r = row["runs"]
    mb = 2**20
    lib1 = r["libsvm", 1]["seconds"]
    metric = ((lambda v: f"{v:.4g}") if row["task"] == "regression" else (lambda v: f"{100 * v:.2f}%"))
    missed = [t for t, ok in targets(row).items() if not ok]
    kind = {"binary": "", "multiclass": f", {row['classes']} classes", "regression": ", ε-SVR"}[row["task"]]
    return (f"| {row['name']}{kind} | {row['n']} / {row['n_test']} | {row['gamma']:.4g} "
            f"| {r['fastsvm', 1]['seconds']:.3f} / {r['fastsvm', 2]['seconds']:.3f} "
            f"| {r['libsvm', 1]['seconds']:.3f} / {r['libsvm', 2]['seconds']:.3f} "
            f"| {r['fastsvm', 1]['seconds'] / lib1:.2f} / {r['fastsvm', 2]['seconds'] / lib1:.2f} "
            f"| {r['fastsvm', 1]['peak'] / mb:.1f} / {r['fastsvm', 2]['peak'] / mb:.1f} "
            f"| {r['libsvm', 1]['peak'] / mb:.1f} / {r['libsvm', 2]['peak'] / mb:.1f} "
            f"| {metric(r['fastsvm', 1]['metric'])} / {metric(r['libsvm', 1]['metric'])} "
            f"| {r['fastsvm', 1]['n_sv']} / {r['libsvm', 1]['n_sv']} "
            f"| {r['fastsvm', 1]['n_iter']} / {r['fastsvm', 2]['n_iter']} "
            f"| {'all' if not missed else 'missed: ' + ', '.join(missed)} |")


def header_line(args, load_before):
    import fastsvm

    mode = f"quick mode ({QUICK_TRAIN} training / {QUICK_TEST} test rows per set), " if args.quick else ""
    return (f"{machine_line(load_before)}; "
            f"Python {platform.python_version()}, numpy {np.__version__}, fastsvm {fastsvm.__version__} "
            f"(smo). {mode}RBF kernel, -c {args.C:g} -e {args.e:g} "
            f"-m {args.m:g}, γ = 1/n_features (column γ), ε-SVR -p 0.1; median of --repeat "
            f"{args.repeat} runs (slow sets: {args.repeat_slow}), each a fresh process; wall time of "
            "training only; peak = extra resident memory during training. Targets: time <= "
            f"{TARGET_TIME[1]:g}x (1 thread) / {TARGET_TIME[2]:g}x (2 threads) of LIBSVM with 1 thread, "
            f"peak <= {TARGET_MEMORY:g}x LIBSVM's at the same thread count, accuracy within "
            f"{TARGET_ACCURACY_PP:g} pp (MSE within {100 * TARGET_MSE_REL:g} %).")


def main(argv=None):
    ap = parser(__doc__)
    ap.add_argument("--data-dir", default=str(DATA_DIR))
    ap.add_argument("--datasets", default=",".join(DATASETS),
                    help=f"comma-separated, from: {', '.join(DATASETS)}")
    ap.add_argument("--repeat", type=int, default=None,
                    help="runs per configuration (default 3; 1 with --quick)")
    ap.add_argument("--repeat-slow", type=int, default=1, help="runs per configuration on a9a, w8a, ijcnn1")
    ap.add_argument("--quick", action="store_true", help=f"train on {QUICK_TRAIN}-row subsets, one run each")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--e", type=float, default=1e-3, help="stopping tolerance (-e)")
    ap.add_argument("--m", type=float, default=100.0, help="kernel cache MB (-m)")
    ap.add_argument("--out", help="write the markdown report here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--side", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--task", help=argparse.SUPPRESS)
    ap.add_argument("--gamma", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--trainings", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args)
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    return run_and_report("# SMO: fastsvm vs LIBSVM", ap, args, DATASETS, bench, markdown_row,
                          HEADER, RULE, header_line)


if __name__ == "__main__":
    sys.exit(main())
