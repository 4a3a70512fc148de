"""fastsvm's LIBSVM reader against scikit-learn's load_svmlight_file, side by side in one run.

For each file and each reader: the median wall time of --repeats loads and the peak memory of
one load, every measurement in a fresh subprocess (peak = peak RSS after the load minus the RSS
after the imports: VmHWM with the high-water mark reset first on Linux, else ru_maxrss), plus
--tracemalloc for the Python-allocator view. The final CSR bytes (data + indices + indptr +
labels) are fastsvm's (int32 indices); scikit-learn's own result has int64 indices. A parity
column loads both in one process and compares every array.

Files: the largest shared datasets (.xz ones decompressed once into --work-dir, so both
readers parse the same plain text) and a synthetic text-like file of --synthetic-mb MB,
generated on demand into --work-dir (default bench_out/, not committed).

  python tools/bench_parser.py --out bench_out/parser.md
  python tools/bench_parser.py --synthetic-mb 20 --repeats 1 --files a9a   # quick check
"""
import argparse
import gc
import json
import lzma
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchlib.report import parser as make_parser
from benchlib.report import write_text

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = Path(os.environ.get("FASTSVM_SHARED_DATA", REPO.parent / "shared" / "data"))
DEFAULT_FILES = ["a9a", "w8a", "phishing", "ijcnn1.xz", "ijcnn1.t.xz", "letter.scale"]


# ---------------------------------------------------------------- child: one measured load

def _reset_peak():
    """Make the peak-RSS counter start from the current RSS (Linux >= 4.0); False where
    unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_rss():
    """Peak resident bytes of this process image: VmHWM where /proc has it (ru_maxrss would
    also count the parent's RSS inherited at exec), else ru_maxrss."""
    import resource

    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024   # kB on Linux


def child(reader, path, n_jobs, trace):
    import tracemalloc

    import numpy as np

    if reader == "fastsvm":
        from fastsvm.files.datafile import load_svmlight_file

        def load(p):
            return load_svmlight_file(p, n_jobs=n_jobs)
    else:
        from sklearn.datasets import load_svmlight_file as load
    gc.collect()
    reset = _reset_peak()
    base = _peak_rss()
    if trace:
        tracemalloc.start()
    t0 = time.perf_counter()
    X, y = load(path)
    seconds = time.perf_counter() - t0
    traced = tracemalloc.get_traced_memory()[1] if trace else None
    peak = _peak_rss() - base
    nbytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes + np.asarray(y).nbytes
    print(json.dumps({"seconds": seconds, "peak": peak, "traced": traced, "csr": nbytes,
                      "rows": X.shape[0], "cols": X.shape[1], "nnz": int(X.nnz), "reset": reset}))


def parity(path):
    import numpy as np
    from sklearn.datasets import load_svmlight_file as sk_load

    from fastsvm.files.datafile import load_svmlight_file

    X, y = load_svmlight_file(path)
    Xr, yr = sk_load(path)
    same = (X.shape == Xr.shape and np.array_equal(X.indptr, Xr.indptr)
            and np.array_equal(X.indices, Xr.indices)
            and X.data.tobytes() == Xr.data.tobytes() and y.tobytes() == yr.tobytes())
    print(json.dumps({"same": bool(same)}))


def _run_child(*args):
    out = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True,
                         cwd=REPO)
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- parent

def prepare_files(names, work, synthetic_mb):
    """[(label, plain-text path)]: shared files (xz decompressed once) and the synthetic file."""
    files = []
    for name in names:
        src = SHARED / name
        if not src.is_file():
            print(f"skipping {name}: not in {SHARED}", file=sys.stderr)
            continue
        if name.endswith(".xz"):
            plain = work / name[:-3]
            if not plain.is_file():
                with lzma.open(src) as f_in, open(f"{plain}.part", "wb") as f_out:
                    shutil.copyfileobj(f_in, f_out, 1 << 20)
                os.replace(f"{plain}.part", plain)
            files.append((name[:-3], plain))
        else:
            files.append((name, src))
    if synthetic_mb > 0:
        path = work / f"synthetic_text_{synthetic_mb:g}mb.libsvm"
        if not path.is_file():   # in a subprocess, so this process stays small
            print(f"generating {path} ...", file=sys.stderr)
            subprocess.run([sys.executable, str(HERE / "make_synthetic.py"), "text", "--seed", "0",
                            "--target-mb", str(synthetic_mb), "--out", str(path)], check=True)
        files.append((f"synthetic text ({synthetic_mb:g} MB target)", path))
    return files


def measure(path, reader, repeats, n_jobs, trace):
    args = ["--child", reader, str(path), "--n-jobs", str(n_jobs)]
    runs = [_run_child(*args) for _ in range(repeats)]
    result = dict(runs[0])
    result["seconds"] = statistics.median(r["seconds"] for r in runs)
    result["peak"] = statistics.median(r["peak"] for r in runs)
    if trace:
        result["traced"] = _run_child(*args, "--trace")["traced"]
    return result


def table(rows, trace):
    mb = 1e6
    head = ["file", "text MB", "rows", "nnz", "fastsvm s", "sklearn s", "speed-up",
            "CSR MB", "fastsvm peak MB", "peak / CSR", "sklearn peak MB", "sklearn peak / its CSR"]
    if trace:
        head += ["fastsvm traced / CSR", "sklearn traced / its CSR"]
    head.append("identical")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, size, fast, sk, same in rows:
        cells = [label, f"{size / mb:.1f}", f"{fast['rows']}", f"{fast['nnz']}",
                 f"{fast['seconds']:.3f}", f"{sk['seconds']:.3f}", f"{sk['seconds'] / fast['seconds']:.1f}x",
                 f"{fast['csr'] / mb:.1f}", f"{fast['peak'] / mb:.1f}", f"{fast['peak'] / fast['csr']:.2f}",
                 f"{sk['peak'] / mb:.1f}", f"{sk['peak'] / sk['csr']:.2f}"]
        if trace:
            cells += [f"{fast['traced'] / fast['csr']:.2f}", f"{sk['traced'] / sk['csr']:.2f}"]
        cells.append("yes" if same else ("NO" if same is not None else "-"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = make_parser(__doc__)
    ap.add_argument("--files", nargs="*", default=DEFAULT_FILES, help="shared dataset names")
    ap.add_argument("--synthetic-mb", type=float, default=300, help="synthetic file size (0: none)")
    ap.add_argument("--repeats", type=int, default=5, help="timed loads per reader and file")
    ap.add_argument("--n-jobs", type=int, default=0, help="fastsvm parsing threads (0: all cores)")
    ap.add_argument("--tracemalloc", action="store_true",
                    help="also measure tracemalloc peaks (slow for scikit-learn on large files)")
    ap.add_argument("--no-parity", action="store_true", help="skip the identical-result check")
    ap.add_argument("--work-dir", default=str(REPO / "bench_out"))
    ap.add_argument("--out", default=None, help="also write the markdown report here")
    ap.add_argument("--child", nargs=2, metavar=("READER", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--parity", metavar="PATH", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child[0], args.child[1], args.n_jobs or None, args.trace)
    if args.parity:
        return parity(args.parity)

    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for label, path in prepare_files(args.files, work, args.synthetic_mb):
        print(f"measuring {label} ...", file=sys.stderr)
        fast = measure(path, "fastsvm", args.repeats, args.n_jobs, args.tracemalloc)
        sk = measure(path, "sklearn", args.repeats, args.n_jobs, args.tracemalloc)
        same = None if args.no_parity else _run_child("--parity", str(path))["same"]
        rows.append((label, path.stat().st_size, fast, sk, same))

    import numpy
    import sklearn

    import fastsvm

    report = "\n".join([
        "# LIBSVM reader: fastsvm vs scikit-learn",
        "",
        f"{time.strftime('%Y-%m-%d %H:%M')}, {platform.machine()} with {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, numpy {numpy.__version__}, scikit-learn {sklearn.__version__}, "
        f"fastsvm {fastsvm.__version__} (n_jobs={args.n_jobs or 'all'}). Median of {args.repeats} loads, "
        "each in a fresh process; peak = extra resident memory of one load (peak RSS over the "
        "post-import baseline); CSR = fastsvm's final data + indices + indptr + labels.",
        "",
        table(rows, args.tracemalloc),
        "",
    ])
    print(report)
    if args.out:
        write_text(args.out, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
