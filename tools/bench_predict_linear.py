"""Prediction time of a large linear-kernel model: through its weight vectors (fastsvm's path for
linear models), through every support vector (the old path, LIBSVM's sums: ``exact=True``), and
LIBSVM's own svm-predict on the same model file and rows.

The model is either built directly (--svs N: N dense support vectors, the shape of a
2,000,000 x 50 SSsNAL fit with many SVs) or trained by SSsNAL (--train ROWS: a dense synthetic
set, labels from a hidden linear model with 10 % of them flipped, so many rows end up as SVs).
The support-vector paths take minutes on 200,000 rows; they are timed on --slow-rows rows and
scaled to --rows (a row's cost does not depend on the others). Medians of --repeat runs (the
old path: one run).

    python tools/bench_predict_linear.py                      # 114,787 SVs x 50, 200,000 rows
    python tools/bench_predict_linear.py --train 2000000      # SSsNAL on 2M x 50 first
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchlib.report import parser as make_parser
from fastsvm.csr import to_csr
from fastsvm.files.datafile import format_rows
from fastsvm.models.model import Model
from fastsvm.files.modelfile import save_model
from fastsvm.params import Params
from fastsvm.models.prediction import decision_values, predict
from fastsvm.training.trainer import fit_model


def hidden_linear_rows(rng, n_rows, n_features, w):
    X = rng.normal(size=(n_rows, n_features))
    y = np.where(X @ w > 0, 1.0, -1.0)
    flip = rng.random(n_rows) < 0.1
    y[flip] = -y[flip]
    return to_csr(X), y


def built_model(rng, n_sv, n_features):
    sv = to_csr(rng.normal(size=(n_sv, n_features)))
    half = n_sv // 2
    coef = np.concatenate([rng.uniform(0, 1, half), -rng.uniform(0, 1, n_sv - half)])
    return Model("c_svc", "linear", sv, sv_coef=coef[None, :], rho=[0.1], labels=[1, -1],
                 n_sv=[half, n_sv - half])


def median_time(run, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def write_rows(path, X):
    """One-based LIBSVM text, in blocks of rows to bound memory."""
    with open(path, "wb") as f:
        for lo in range(0, X.shape[0], 50_000):
            block = X[lo:lo + 50_000]
            f.write(format_rows(block, np.ones(block.shape[0], dtype=np.int64), zero_based=False))


def main(argv=None):
    parser = make_parser(__doc__)
    parser.add_argument("--svs", type=int, default=114_787)
    parser.add_argument("--train", type=int, default=0, metavar="ROWS")
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--slow-rows", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("-j", "--n-jobs", type=int, default=os.cpu_count())
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    w = rng.normal(size=args.features)
    if args.train:
        X_train, y_train = hidden_linear_rows(rng, args.train, args.features, w)
        start = time.perf_counter()
        model = fit_model(X_train, y_train, Params(solver="ssnal", kernel_type="linear",
                                                   n_jobs=args.n_jobs)).detached()
        print(f"SSsNAL on {args.train} x {args.features}: {time.perf_counter() - start:.1f} s")
    else:
        model = built_model(rng, args.svs, args.features)
    n_sv = model.support_vectors.shape[0]
    X, _ = hidden_linear_rows(rng, args.rows, args.features, w)
    slow = X[:args.slow_rows]
    scale = args.rows / slow.shape[0]
    print(f"model: {n_sv} SVs x {args.features} features; {args.rows} rows; -j {args.n_jobs}")

    start = time.perf_counter()
    predict(model, X, n_jobs=args.n_jobs)
    first = time.perf_counter() - start
    new = median_time(lambda: predict(model, X, n_jobs=args.n_jobs), args.repeat)
    start = time.perf_counter()
    exact = decision_values(model, slow, n_jobs=args.n_jobs, exact=True)
    old = time.perf_counter() - start   # once: minutes
    gap = np.abs(decision_values(model, slow) - exact).max() / np.abs(exact).max()
    print(f"weights (new):          {new * 1e3:10.1f} ms  (first call, forming w: {first * 1e3:.1f} ms)")
    print(f"support vectors (old):  {old * scale:10.1f} s   ({old:.2f} s on {slow.shape[0]} rows, scaled)")
    print(f"max |new - old| / max |old| decision value on those rows: {gap:.3g}")

    svm_predict = shutil.which("svm-predict")
    if svm_predict is None:
        print("svm-predict: not installed")
        return
    with tempfile.TemporaryDirectory() as tmp:
        model_path, rows_path = os.path.join(tmp, "model"), os.path.join(tmp, "rows")
        save_model(model, model_path)
        write_rows(rows_path, slow)
        empty_path = os.path.join(tmp, "empty")
        open(empty_path, "w").close()

        def svm_predict_time(path):
            command = [svm_predict, path, model_path, os.path.join(tmp, "out")]
            return median_time(lambda: subprocess.run(command, check=True, capture_output=True),
                               max(1, args.repeat // 2))

        # reading the model is paid once, not once per --slow-rows rows
        loading = svm_predict_time(empty_path)
        theirs = svm_predict_time(rows_path)
        write_rows(rows_path, X)
        cli = [os.path.join(os.path.dirname(sys.executable), "fastsvm-predict"), "-q", rows_path,
               model_path, os.path.join(tmp, "ours")]
        ours = median_time(lambda: subprocess.run(cli, check=True), max(1, args.repeat // 2))
    print(f"svm-predict (LIBSVM):   {loading + (theirs - loading) * scale:10.1f} s   ({theirs:.2f} s on "
          f"{slow.shape[0]} rows, of which {loading:.2f} s reading the model; scaled; one thread)")
    print(f"fastsvm-predict (CLI):  {ours:10.2f} s   (all {args.rows} rows, "
          "file reading and writing included)")


if __name__ == "__main__":
    main()
