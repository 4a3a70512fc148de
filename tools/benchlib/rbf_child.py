"""One measured RBF C-SVC training in a fresh process: fastsvm (a solver by name) or LIBSVM
(libsvm-official), on a problem benchlib.kernel_sets.save wrote.

The data is loaded and a warm-up training on a few rows (benchlib.kernel_sets.warm_up_rows; for
ssnal also one of block_smo, which it may hand over to) is done before the clock starts; then
one training, its wall time, the peak RSS increase during it (benchlib.running.reset_peak),
test accuracy, and the dual as (rows, coefficients), rho, eta and the first label, printed as
one JSON line. Run through child_command, which sets OMP_NUM_THREADS before LIBSVM loads:

    python -m benchlib.rbf_child PROBLEM.npz --side libsvm --threads 2 --C 1 --gamma 0.1 --e 1e-3 --m 100
"""
import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

from benchlib.kernel_sets import load_saved, warm_up_rows
from benchlib.peers import libsvm_rbf_parameter
from benchlib.running import one_thread_env, reset_peak, rss_and_peak

TOOLS = Path(__file__).resolve().parents[1]     # the children's working folder: benchlib importable


def child(args):
    """Train one side once on the saved problem; print JSON (seconds, extra peak bytes, test
    accuracy, nSV, the dual as (rows, coefficients), rho, eta, the first label)."""
    import gc
    X, y, Xt, yt = load_saved(args.problem)
    if args.side == "libsvm":
        from libsvm.svmutil import svm_predict, svm_problem, svm_train
        problem = svm_problem(y, X)
        param = libsvm_rbf_parameter(C=args.C, gamma=args.gamma, e=args.e, m=args.m)

        def train(rows=None):
            return svm_train(problem if rows is None else svm_problem(y[rows], X[rows]), param)

        def predict(model):
            return np.asarray(svm_predict(yt, Xt, model, "-q")[0])

        def summary(model):
            rows = np.asarray(model.get_sv_indices(), dtype=np.int64) - 1
            coef = np.asarray(model.get_sv_coef(), dtype=np.float64).ravel()
            return rows, coef, float(model.rho[0]), float("nan"), float(model.get_labels()[0])
    else:
        from fastsvm import Params, fit_model
        from fastsvm import predict as fastsvm_predict
        from fastsvm.csr import to_csr
        X = to_csr(X)
        params = Params(svm_type="c_svc", solver=args.solver, kernel_type="rbf", C=args.C, gamma=args.gamma,
                        tol=args.fastsvm_e or args.e, cache_size=args.m, n_jobs=args.threads,
                        options=dict(args.option))

        def train(rows=None):
            return fit_model(X, y, params) if rows is None else fit_model(X[rows], y[rows], params)

        def predict(model):
            return fastsvm_predict(model, Xt)

        def summary(model):
            rows = np.asarray(model.info["support_rows"], dtype=np.int64)
            return (rows, model.sv_coef[0], float(model.rho[0]), float(model.info["stop_measure"][0]),
                    float(model.labels[0]))
    warm_rows = warm_up_rows(y, "binary")
    train(warm_rows)
    if args.side != "libsvm" and args.solver == "ssnal":
        # the solver ssnal may hand over to, warmed as that side's own run warms it
        fit_model(X[warm_rows], y[warm_rows], dataclasses.replace(params, solver="block_smo", options={}))
    gc.collect()
    base = reset_peak()
    start = time.perf_counter()
    model = train()
    seconds = time.perf_counter() - start
    peak = rss_and_peak()[1] - base
    accuracy = float(np.mean(predict(model) == yt))
    rows, coef, rho, eta, label = summary(model)
    print(json.dumps({"seconds": seconds, "peak": max(peak, 0), "metric": accuracy, "n_sv": int(rows.shape[0]),
                      "rows": rows.tolist(), "coef": np.asarray(coef).tolist(), "rho": rho, "eta": eta,
                      "label": label}))


def child_command(side, threads, npz, C, gamma, e, m, solver="ssnal", fastsvm_e=None, options=()):
    """(command, environment) of one measured run in a fresh process, to be run with cwd=TOOLS:
    side "fastsvm" (its solver by name) or "libsvm", OMP_NUM_THREADS set before LIBSVM loads."""
    cmd = [sys.executable, "-m", "benchlib.rbf_child", npz, "--side", side, "--threads", str(threads),
           "--solver", solver, "--C", repr(C), "--gamma", repr(gamma), "--e", repr(e), "--m", repr(m)]
    if fastsvm_e:
        cmd += ["--fastsvm-e", repr(fastsvm_e)]
    for name, value in options:
        cmd += ["-o", f"{name}={value}"]
    return cmd, one_thread_env(threads)


def option(text):
    """name=value (argparse type)."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError("options are name=value")
    return name, value


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("problem", help="the .npz benchlib.kernel_sets.save wrote")
    ap.add_argument("--side", choices=["fastsvm", "libsvm"], required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--solver", default="ssnal", help="fastsvm's solver")
    ap.add_argument("--C", type=float, required=True)
    ap.add_argument("--gamma", type=float, required=True)
    ap.add_argument("--e", type=float, required=True)
    ap.add_argument("--m", type=float, required=True)
    ap.add_argument("--fastsvm-e", type=float, default=None)
    ap.add_argument("-o", "--option", type=option, action="append", default=[])
    child(ap.parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
