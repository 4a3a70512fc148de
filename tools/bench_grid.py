"""fastsvm-grid against LIBSVM's grid.py and scikit-learn's GridSearchCV on the same cells, side by
side in one run.

Three sides per dataset, each a fresh process timed from start to end (start-up, reading the data
and the whole grid, as a user waits for it), with --jobs workers:
  fastsvm   fastsvm-grid -j JOBS of this checkout (per gamma, one cross validation whose folds are
            trained as warm C paths, folds in JOBS threads);
  grid.py   LIBSVM's grid.py as Debian's libsvm-tools installs it (svm-grid), driving LIBSVM's own
            svm-train (-svmtrain, found on PATH) with JOBS local workers: grid.py has no option for
            its worker count (a module variable, nr_local_worker), so the script loads svm-grid as
            a module, sets it and calls its find_parameters; -gnuplot null -out null;
  sklearn   GridSearchCV(sklearn.svm.SVC(cache_size=100), n_jobs=JOBS, cv=StratifiedKFold(folds))
            over the same (C, gamma) cells, data read by sklearn's load_svmlight_file.
fastsvm-grid and grid.py use svm-train's folds (the same in both: their rates can agree to the
last digit); GridSearchCV uses its own folds and reports the mean of the per-fold accuracies,
so its best cell may differ where the rates are close. Runs are interleaved (repeat r of every
side before repeat r + 1); the table shows median seconds, the time ratio fastsvm / side
(target <= 0.2), and each side's best cell (log2 C, log2 gamma) and rate. svm-train and
GridSearchCV's workers run with OMP_NUM_THREADS=1: JOBS workers use JOBS cores, as fastsvm does.

A side still running after --timeout seconds is stopped with all its processes: its time is then
a lower bound ("> T") and the ratio an upper bound ("< r"). grid.py's cells finished by then (its
.out file) are still compared with fastsvm-grid's: the count of cells with the same rate, and the
largest difference of the others in held-out rows.

Datasets are LIBSVM files in --data-dir (default ../shared/data); NAME:ROWS takes the first ROWS
rows (written to a temporary file, which every side reads).

    python tools/bench_grid.py --out bench_out/grid.md
    python tools/bench_grid.py --datasets heart_scale --log2c -5,15,4 --log2g 3,-15,-4 --repeat 1
"""
import lzma
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib.data import DATA_DIR
from benchlib.report import parser as make_parser
from benchlib.report import write_report
from fastsvm.cli.grid import read_resume   # grid.py's .out file

REPO = Path(__file__).resolve().parents[1]   # the checkout whose fastsvm-grid is timed

DATASETS = "heart_scale,svmguide1,a9a:10000,mushrooms"
TARGET = 0.2

FASTSVM = "import sys; sys.argv[0] = 'fastsvm-grid'; from fastsvm.cli.grid import entry; entry()"
GRID_PY = """\
import importlib.machinery, importlib.util, sys
path, jobs, data, *options = sys.argv[1:]
loader = importlib.machinery.SourceFileLoader("libsvm_grid", path)
grid = importlib.util.module_from_spec(importlib.util.spec_from_loader("libsvm_grid", loader))
loader.exec_module(grid)
grid.nr_local_worker = int(jobs)
grid.find_parameters(data, options)
"""
SKLEARN = """\
import math, sys

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC
data, folds, jobs, log2c, log2g = sys.argv[1:]
def exponents(text):
    begin, end, step = map(float, text.split(","))
    values = []
    while (begin <= end) if step > 0 else (begin >= end):
        values.append(begin)
        begin += step
    return values
X, y = load_svmlight_file(data)
X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)   # what SVC accepts
cs, gs = exponents(log2c), exponents(log2g)
search = GridSearchCV(SVC(cache_size=100), {"C": [2.0 ** c for c in cs], "gamma": [2.0 ** g for g in gs]},
                      cv=StratifiedKFold(int(folds)), n_jobs=int(jobs)).fit(X, y)
best = search.best_params_
print(math.log2(best["C"]), math.log2(best["gamma"]), 100 * search.best_score_)
"""


def dataset_file(data_dir, spec, workdir):
    """The path of dataset NAME or NAME:ROWS (first ROWS rows), decompressed when .xz."""
    name, _, rows = spec.partition(":")
    path = Path(data_dir) / name
    if not path.is_file() and (Path(data_dir) / (name + ".xz")).is_file():
        path = Path(data_dir) / (name + ".xz")
    if not path.is_file():
        raise SystemExit(f"bench_grid: dataset {name} not found in {data_dir}")
    if not rows and path.suffix != ".xz":
        return path
    target = Path(workdir) / spec.replace(":", "_")
    with (lzma.open(path, "rt") if path.suffix == ".xz" else open(path)) as f, open(target, "w") as out:
        for k, line in enumerate(f):
            if rows and k >= int(rows):
                break
            out.write(line)
    return target


def grid_best(stdout):
    """(log2 C, log2 gamma, rate) from grid.py's final line ``best_c best_g best_rate``."""
    import math
    c, g, rate = (float(x) for x in stdout.strip().splitlines()[-1].split())
    return math.log2(c), math.log2(g), rate


def out_file(workdir, side):
    """Where a grid side writes its .out file (grid.py writes a line per finished cell)."""
    return Path(workdir) / f"{side}.out"


def sides(data, args, workdir):
    """{side: (command, parse)} for one dataset."""
    grid_options = ["-log2c", args.log2c, "-log2g", args.log2g, "-v", str(args.folds)]
    fastsvm = [sys.executable, "-c", FASTSVM, *grid_options, "-out", str(out_file(workdir, "fastsvm")),
               "-png", "null", "-j", str(args.jobs), str(data)]
    libsvm = [sys.executable, "-c", GRID_PY, args.svm_grid, str(args.jobs), str(data), *grid_options,
              "-out", str(out_file(workdir, "grid.py")), "-svmtrain", args.svm_train, "-gnuplot", "null"]
    sklearn = [sys.executable, "-c", SKLEARN, str(data), str(args.folds), str(args.jobs), args.log2c, args.log2g]

    def sklearn_best(stdout):
        c, g, rate = (float(x) for x in stdout.split())
        return c, g, rate

    return {"fastsvm": (fastsvm, grid_best), "grid.py": (libsvm, grid_best), "sklearn": (sklearn, sklearn_best)}


def run_side(command, parse, workdir, timeout):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
               OMP_NUM_THREADS="1")
    start = time.perf_counter()
    # a session of its own: on timeout, its workers (svm-train, joblib's) are stopped with it
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=workdir,
                               env=env, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return None, "timed out"
    seconds = time.perf_counter() - start
    if process.returncode != 0:
        return None, (stderr.strip().splitlines() or ["failed"])[-1]
    return seconds, parse(stdout)


def compare_cells(ours, theirs, n_rows):
    """'same rate in S of N cells done' and the largest other difference in held-out rows."""
    done = [cell for cell in theirs if cell in ours]
    differing = [abs(ours[cell] - theirs[cell]) for cell in done if ours[cell] != theirs[cell]]
    text = f"same rate in {len(done) - len(differing)} of {len(done)} cells done"
    if differing:
        text += f", the others differ by <= {max(differing) * n_rows / 100:.1f} rows"
    return text


def bench(spec, args):
    with tempfile.TemporaryDirectory(prefix="bench_grid_") as workdir:
        data = dataset_file(args.data_dir, spec, workdir)
        n_rows = sum(1 for line in open(data) if line.strip())
        commands = sides(data, args, workdir)
        seconds = {side: [] for side in commands}
        best = {}
        for _ in range(args.repeat):
            for side, (command, parse) in commands.items():
                if side in best and isinstance(best[side], str):
                    continue   # failed or timed out once: not run again
                elapsed, found = run_side(command, parse, workdir, args.timeout)
                best[side] = found
                if elapsed is not None:
                    seconds[side].append(elapsed)
        cells = {side: read_resume(out_file(workdir, side)) if out_file(workdir, side).is_file() else {}
                 for side in ("fastsvm", "grid.py")}
    rows = []
    ours = statistics.median(seconds["fastsvm"]) if seconds["fastsvm"] else None
    for side in commands:
        cells_note = compare_cells(cells["fastsvm"], cells[side], n_rows) if side == "grid.py" else ""
        if not seconds[side]:
            bound = best[side] == "timed out" and ours is not None
            took, ratio = (f"> {args.timeout:.0f}", f"< {ours / args.timeout:.3f}") if bound else (best[side], "")
            rows.append(f"| {spec} | {side} | {took} | {ratio} | | | | {cells_note} |")
            continue
        median = statistics.median(seconds[side])
        ratio = f"{ours / median:.3f}" if ours is not None else ""
        c, g, rate = best[side]
        rows.append(f"| {spec} | {side} | {median:.2f} | {ratio} | {c:g} | {g:g} | {rate:.4f} | {cells_note} |")
    return rows


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--datasets", default=DATASETS)
    parser.add_argument("--data-dir", default=str(DATA_DIR))
    parser.add_argument("--log2c", default="-5,15,2")
    parser.add_argument("--log2g", default="3,-15,-2")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=7200.0)
    parser.add_argument("--svm-grid", default=shutil.which("svm-grid"))
    parser.add_argument("--svm-train", default=shutil.which("svm-train"))
    parser.add_argument("--out")
    args = parser.parse_args()
    if not args.svm_grid or not args.svm_train:
        raise SystemExit("bench_grid: svm-grid / svm-train not found (Debian's libsvm-tools)")
    lines = [f"# fastsvm-grid vs grid.py (svm-train) vs GridSearchCV(SVC): {args.jobs} workers each",
             "",
             f"Grid: log2 C = {args.log2c}, log2 gamma = {args.log2g}, {args.folds}-fold; median of {args.repeat} "
             f"run(s), whole process wall time; ratio = fastsvm / side (target <= {TARGET}).",
             "",
             "| dataset | side | seconds | ratio | best log2 C | best log2 gamma | best rate % | cells vs fastsvm |",
             "|---|---|---|---|---|---|---|---|"]
    for spec in args.datasets.split(","):
        lines += bench(spec, args)
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
