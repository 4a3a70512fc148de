"""Kernel SVM training side by side: fastsvm's block_smo and smo, LIBSVM (libsvm-official),
oneDAL's SVC (scikit-learn-intelex) and scikit-learn's SVC, on the same data, one run.

Every side gets the same C, gamma, tolerance (1e-3) and cache (--cache MB), RBF C-SVC, 2 threads
(fastsvm n_jobs=2; LIBSVM and scikit-learn through OMP_NUM_THREADS=2, set before the library
loads; oneDAL uses the machine's two cores). Each run is a fresh subprocess with the data loaded
before the clock starts; the sides of one repeat run one after another, repeat r of every side
before repeat r + 1, so that a change in the machine's load hits them alike. A run reports
training and prediction wall time (prediction: the test rows, through the side's own predict),
test accuracy, support vectors, the dual objective (fastsvm's sides; '-' where a side does not
report it), the peak RSS increase during training (VmHWM reset through /proc/self/clear_refs)
and, for block_smo, where its training time went. The table shows medians over --repeat runs
and the ratios block_smo / oneDAL, block_smo / LIBSVM and block_smo / smo (auto's when there is no
block_smo side: fastsvm.SVC's default); --check adds block_smo's optimum against smo's.

Cells (the kernel-speed table, plus the covtype-like dense rows of tools/make_synthetic.py):
a9a, w8a, ijcnn1 with their .t test files; phishing, mushrooms and letter.scale with seeded 80/20
splits; covtype-like rows (100k and 300k training rows, 20 % more for testing) as dense arrays for
every side. Sparse sets reach every side as CSR (LIBSVM: its own rows).

    pip install ".[bench]"
    python tools/bench_kernel.py --out bench_out/kernel.md
    python tools/bench_kernel.py --cells a9a:1:p,w8a:8:0.125 --sides block_smo,onedal --repeat 3
    python tools/bench_kernel.py --sides block_smo,smo --tol 1e-6 --repeat 1 --check   # the optima
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchlib import running
from benchlib.data import DATA_DIR
from benchlib.peers import libsvm_rbf_parameter
from benchlib.report import parser
from benchlib.running import reset_peak, rss_and_peak

REPO = Path(__file__).resolve().parents[1]

SIDES = ("block_smo", "smo", "libsvm", "onedal", "sklearn")   # and "auto", fastsvm.SVC's default solver
# (dataset, C, gamma): gamma "p" is 1/n_features
CELLS = ("a9a:1:p", "a9a:8:0.03125", "w8a:1:p", "w8a:8:0.125", "phishing:1:p", "mushrooms:1:p",
         "ijcnn1:1:p", "ijcnn1:32:2", "letter.scale:16:1", "covtype100k:1:p", "covtype300k:1:p")
SPLIT_SEED = 0
THREADS = 2


def load(name, data_dir, work_dir):
    """(X_train, y_train, X_test, y_test, dense) of a cell's dataset."""
    from fastsvm import load_svmlight_file
    if name.startswith("covtype"):
        rows = int(name[len("covtype"):].rstrip("k")) * 1000
        path = Path(work_dir) / f"{name}.libsvm"
        if not path.exists():
            subprocess.run([sys.executable, str(REPO / "tools" / "make_synthetic.py"), "covtype", "--rows",
                            str(int(rows * 1.2)), "--out", str(path)], check=True)
        X, y = load_svmlight_file(str(path))
        X = np.ascontiguousarray(X.toarray())
        return X[:rows], y[:rows], X[rows:], y[rows:], True
    data = Path(data_dir)
    train = next(p for p in (data / name, data / f"{name}.xz") if p.exists())
    X, y = load_svmlight_file(str(train))
    test = [p for p in (data / f"{name}.t", data / f"{name}.t.xz") if p.exists()]
    if test:
        Xt, yt = load_svmlight_file(str(test[0]), n_features=X.shape[1])
        return X, y, Xt[:, :X.shape[1]], yt, False
    order = np.random.default_rng(SPLIT_SEED).permutation(X.shape[0])
    cut = int(0.8 * X.shape[0])
    return X[order[:cut]], y[order[:cut]], X[order[cut:]], y[order[cut:]], False


def run_side(side, cell, data_dir, work_dir, cache, tol=1e-3):
    """One training and prediction of ``side`` on ``cell`` in this process: a dict of figures."""
    import time
    name, C, g = cell.split(":")
    X, y, Xt, yt, dense = load(name, data_dir, work_dir)
    C = float(C)
    gamma = 1.0 / X.shape[1] if g == "p" else float(g)
    objective, details, violation = None, None, None
    if side == "libsvm":
        from libsvm import svmutil
        import scipy.sparse as sp
        Xs = sp.csr_matrix(X)
        Xts = sp.csr_matrix(Xt)
        prob = svmutil.svm_problem(y, Xs, isKernel=False)
        param = libsvm_rbf_parameter(C=C, gamma=gamma, e=tol, m=cache)
        base = reset_peak(release_free=False)   # this script's protocol: no trim before the run
        start = time.perf_counter()
        model = svmutil.svm_train(prob, param)
        train = time.perf_counter() - start
        peak = rss_and_peak()[1] - base
        start = time.perf_counter()
        pred, _, _ = svmutil.svm_predict(yt, Xts, model, "-q")
        predict = time.perf_counter() - start
        n_sv = model.get_nr_sv()
    else:
        if side in ("block_smo", "smo", "auto"):
            import fastsvm
            clf = fastsvm.SVC(C=C, gamma=gamma, tol=tol, cache_size=cache, solver=side, n_jobs=THREADS)
        elif side == "onedal":
            from sklearnex.svm import SVC
            clf = SVC(C=C, gamma=gamma, tol=tol, cache_size=cache)
        else:
            from sklearn.svm import SVC
            clf = SVC(C=C, gamma=gamma, tol=tol, cache_size=cache)
        base = reset_peak(release_free=False)
        start = time.perf_counter()
        clf.fit(X, y)
        train = time.perf_counter() - start
        peak = rss_and_peak()[1] - base
        start = time.perf_counter()
        pred = clf.predict(Xt)
        predict = time.perf_counter() - start
        n_sv = int(np.sum(clf.n_support_))
        if side in ("block_smo", "smo", "auto"):
            info = clf.model_.info
            objective = info["objective"][0] if len(info["objective"]) == 1 else None   # binary cells
            violation = max(info["stop_measure"])
            details = info["details"]
    accuracy = 100.0 * float(np.mean(np.asarray(pred) == yt))
    return {"train": train, "predict": predict, "accuracy": accuracy, "n_sv": n_sv, "peak_mb": peak / 2**20,
            "objective": objective, "max_violation": violation, "details": details, "dense": dense}


def subprocess_run(side, cell, args):
    env = dict(os.environ, OMP_NUM_THREADS=str(THREADS))
    cmd = [sys.executable, __file__, "--one", side, cell, "--data-dir", args.data_dir, "--work-dir", args.work_dir,
           "--cache", str(args.cache), "--tol", repr(args.tol), "--warm-each", repr(args.warm_each)]
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout, check=True)
    except subprocess.TimeoutExpired:
        return {"timeout": args.timeout}
    except subprocess.CalledProcessError as err:
        return {"error": (err.stderr or "").strip().splitlines()[-1:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def median(runs, key):
    return running.median(r.get(key) for r in runs)


def fmt(value, spec=".2f"):
    return "-" if value is None else format(value, spec)


def table(results, sides):
    """The medians of every side and the ratios of fastsvm's blocked side (block_smo, else auto)."""
    ours = "block_smo" if "block_smo" in sides else "auto"
    lines = ["| cell | " + " | ".join(f"{s} train s" for s in sides) + f" | {ours} / oneDAL | {ours} / LIBSVM | "
             f"{ours} / smo | " + " | ".join(f"{s} predict s" for s in sides) + " | predict / oneDAL | accuracy % | "
             "nSV | peak MB | block_smo: rows / block / subproblems / gradient s |",
             "|" + "---|" * (6 + 2 * len(sides) + 3)]
    for cell, by_side in results.items():
        train = {s: median(by_side.get(s, []), "train") for s in sides}
        predict = {s: median(by_side.get(s, []), "predict") for s in sides}

        def ratio(other, times=train):
            a, b = times.get(ours), times.get(other)
            return fmt(a / b, ".3f") if a and b else "-"

        acc = " / ".join(fmt(median(by_side.get(s, []), "accuracy")) for s in sides)
        nsv = " / ".join(fmt(median(by_side.get(s, []), "n_sv"), ".0f") for s in sides)
        peak = " / ".join(fmt(median(by_side.get(s, []), "peak_mb"), ".0f") for s in sides)
        parts = "-"
        block_runs = [r for r in by_side.get(ours, []) if r.get("details") and "seconds" in r["details"][0]]
        if block_runs:
            sec = [r["details"][0]["seconds"] for r in block_runs]
            parts = " / ".join(fmt(statistics.median(s.get(k, 0.0) for s in sec))
                               for k in ("rows", "block", "subproblems", "gradient"))
        lines.append(f"| {cell} | " + " | ".join(fmt(train[s]) for s in sides) +
                     f" | {ratio('onedal')} | {ratio('libsvm')} | {ratio('smo')} | " +
                     " | ".join(fmt(predict[s], ".3f") for s in sides) + f" | {ratio('onedal', predict)} | {acc} | "
                     f"{nsv} | {peak} | {parts} |")
    return "\n".join(lines)


def check_table(results, tol):
    """block_smo's optimum against smo's at the same -e: relative dual-objective difference, final violation."""
    lines = [f"| cell (-e {tol:g}) | block_smo objective | smo objective | relative difference | "
             "block_smo max violation |",
             "|---|---|---|---|---|"]
    for cell, by_side in results.items():
        ours, theirs = by_side.get("block_smo", [{}])[0], by_side.get("smo", [{}])[0]
        a, b = ours.get("objective"), theirs.get("objective")
        diff = fmt(abs(a - b) / abs(b), ".2e") if a is not None and b else "-"
        violation = fmt(ours.get("max_violation"), ".2e")
        lines.append(f"| {cell} | {fmt(a, '.10g')} | {fmt(b, '.10g')} | {diff} | {violation} |")
    return "\n".join(lines)


def warm_memory(gib):
    """Touch gib GiB once before the runs: a virtual machine's first use of a page costs far more
    than a later one (the host backs it then), and that cost would fall on whichever side runs first."""
    held = [np.ones(1 << 24) for _ in range(int(8 * gib))]   # 128 MiB each, all held at once
    del held


def main():
    ap = parser(__doc__)
    ap.add_argument("--data-dir", default=str(DATA_DIR))
    ap.add_argument("--work-dir", default=tempfile.gettempdir(), help="where the covtype-like files are made")
    ap.add_argument("--cells", default=",".join(CELLS))
    ap.add_argument("--sides", default=",".join(SIDES))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cache", type=float, default=500, help="kernel cache, MB, every side")
    ap.add_argument("--tol", type=float, default=1e-3, help="-e of every side (1e-6 with --sides block_smo,smo: "
                    "the optimum check, --check)")
    ap.add_argument("--check", action="store_true", help="print, per cell, block_smo's dual objective against smo's "
                    "(relative difference) and its final maximal violation")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per run")
    ap.add_argument("--out", help="also write the table (and the raw runs as JSON beside it, after every cell) here")
    ap.add_argument("--warm-memory", type=float, default=8, help="GiB touched once before the runs (0: none)")
    ap.add_argument("--warm-each", type=float, default=2,
                    help="GiB touched by each run's own process before it trains (0: none): the pages a run "
                    "maps are then ones the host has backed, for every side")
    ap.add_argument("--one", nargs=2, metavar=("SIDE", "CELL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        warm_memory(args.warm_each)
        print(json.dumps(run_side(args.one[0], args.one[1], args.data_dir, args.work_dir, args.cache, args.tol)))
        return
    sides = [s for s in args.sides.split(",") if s]
    warm_memory(args.warm_memory)
    results = {}
    for cell in args.cells.split(","):
        results[cell] = {s: [] for s in sides}
        for rep in range(args.repeat):
            for side in sides:
                run = subprocess_run(side, cell, args)
                results[cell][side].append(run)
                print(f"{cell} {side} repeat {rep + 1}: {run}", file=sys.stderr, flush=True)
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).with_suffix(".json").write_text(json.dumps(results, indent=1))
    text = table(results, sides) + ("\n\n" + check_table(results, args.tol) if args.check else "")
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
        Path(args.out).with_suffix(".json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
