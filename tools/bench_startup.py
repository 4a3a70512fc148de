"""Start-up and grid-search cost against LIBSVM, side by side in one run.

1. Start-up: wall time of ``fastsvm-train -q`` on a one-row file, against ``svm-train -q`` and
   against a bare ``python -c pass`` of the interpreter fastsvm-train runs on (medians).
2. LIBSVM's grid.py (Debian's ``svm-grid``) driving ``svm-train`` and then ``fastsvm-train`` on the
   same data and ranges: wall time (median), best cell, and whether every cell's CV rate agrees.

    python tools/bench_startup.py [--repeat 5] [--grid-repeat 1] [DATASET ...]

DATASET is a path or a name in ../shared/data (default: heart_scale svmguide1); each may carry
grid.py options after a colon, e.g. ``svmguide1:-log2c 1,5,2``. Needs svm-train and svm-grid
(apt-get install libsvm-tools).
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib.report import parser as make_parser

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
CELL = re.compile(r"^\[local\] (\S+) (\S+) (\S+)")  # grid.py's line per cell: log2c log2g rate


def wall(command, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interpreter_of(program):
    """The Python a console script runs on (its #! line)."""
    first = Path(program).read_text().splitlines()[0]
    return first[2:].strip() if first.startswith("#!") else sys.executable


def startup(fastsvm_train, svm_train, repeat, workdir):
    one_row = workdir / "one_row"
    one_row.write_text("+1 1:0.5\n")
    model = str(workdir / "one_row.model")
    python = interpreter_of(fastsvm_train)
    rows = [("python -c pass", wall([python, "-c", "pass"], repeat)),
            ("svm-train -q", wall([svm_train, "-q", str(one_row), model], repeat)),
            ("fastsvm-train -q", wall([fastsvm_train, "-q", str(one_row), model], repeat))]
    print(f"start-up, one-row file, median of {repeat}")
    print(f"{'command':20s} {'seconds':>8s}")
    for name, seconds in rows:
        print(f"{name:20s} {seconds:8.3f}")
    print(f"fastsvm-train above bare Python: {rows[2][1] - rows[0][1]:.3f} s\n")


def grid(dataset, options, trainer, svm_grid, repeat, workdir):
    """(median seconds, best line, {(log2c, log2g): rate}) of grid.py with this trainer."""
    times, output = [], ""
    for _ in range(repeat):
        start = time.perf_counter()
        result = subprocess.run([svm_grid, "-svmtrain", trainer, "-gnuplot", "null", "-out", "null",
                                 *options, str(dataset)], capture_output=True, text=True, cwd=workdir,
                                check=True)
        times.append(time.perf_counter() - start)
        output = result.stdout
    cells = {m.group(1, 2): m.group(3) for m in map(CELL.match, output.splitlines()) if m}
    best = output.strip().splitlines()[-1]
    return statistics.median(times), best, cells


def main():
    parser = make_parser(__doc__)
    parser.add_argument("datasets", nargs="*", default=["heart_scale", "svmguide1"])
    parser.add_argument("--repeat", type=int, default=7, help="runs per start-up figure")
    parser.add_argument("--grid-repeat", type=int, default=1, help="runs per grid figure")
    args = parser.parse_args()
    svm_train, svm_grid = shutil.which("svm-train"), shutil.which("svm-grid")
    fastsvm_train = shutil.which("fastsvm-train") or str(Path(sys.executable).parent / "fastsvm-train")
    if not (svm_train and svm_grid and os.path.exists(fastsvm_train)):
        sys.exit("needs svm-train and svm-grid (apt-get install libsvm-tools) and fastsvm-train")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        startup(fastsvm_train, svm_train, args.repeat, workdir)
        print(f"svm-grid, median of {args.grid_repeat}: seconds; best = c g rate; cells whose CV rate is the same")
        print(f"{'data':12s} {'LIBSVM s':>9s} {'fastsvm s':>9s} {'ratio':>6s}  {'LIBSVM best':28s} "
              f"{'fastsvm best':28s} cells equal")
        for item in args.datasets:
            name, _, extra = item.partition(":")
            dataset = Path(name) if Path(name).exists() else SHARED / name
            ours = grid(dataset, extra.split(), fastsvm_train, svm_grid, args.grid_repeat, workdir)
            theirs = grid(dataset, extra.split(), svm_train, svm_grid, args.grid_repeat, workdir)
            same = sum(ours[2].get(cell) == rate for cell, rate in theirs[2].items())
            print(f"{dataset.name:12s} {theirs[0]:9.2f} {ours[0]:9.2f} {ours[0] / theirs[0]:6.2f}  "
                  f"{theirs[1]:28s} {ours[1]:28s} {same}/{len(theirs[2])}")


if __name__ == "__main__":
    main()
