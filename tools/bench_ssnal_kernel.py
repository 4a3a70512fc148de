"""SSsNAL on the RBF kernel (fastsvm -s ssnal -t 2) side by side with LIBSVM (libsvm-official).

C-SVC with LIBSVM's defaults unless given: C = 1, gamma = 1/n_features of the training file,
-e 1e-3, -m 100 MB. Four configurations per dataset: fastsvm ssnal with n_jobs = 1 and 2, LIBSVM
with OMP_NUM_THREADS = 1 and 2 (libsvm-official computes kernel columns with OpenMP; the variable
must be set before the library loads, so every run is a fresh subprocess). Runs are interleaved
(repeat r of every configuration before repeat r + 1), so a change in the machine's load hits
all four alike; medians are reported.

Each run (tools/bench_smo.py's protocol and helpers): data loaded before the clock starts, one warm-
up training on a few rows (for ssnal also one of block_smo, which it may hand over to), wall time of
training only, peak RSS increase during training, then test accuracy and the number of support
vectors. Both sides stop at -e 1e-3, which means different things: SSsNAL's eta (Niu et al. 2019 eq. 4.1,
relative KKT residual) and LIBSVM's maximal violating pair. With --eta the parent also computes eta
of LIBSVM's solution (its dual vector from sv_coef / sv_indices, the gradient by fastsvm's kernel
products), so the accuracies reached can be compared; the objectives are printed too. --fastsvm-e
sets SSsNAL's tolerance alone (e.g. 1e-5, about the eta LIBSVM's -e 1e-3 reaches).

Datasets (from --data-dir): a9a, w8a, ijcnn1 (train files; test on the .t files) and mushrooms
(seeded 80/20 split) by default; the other binary sets of tools/bench_smo.py by name (e.g.
svmguide1, unscaled), and --gamma for a gamma other than LIBSVM's default. The target: fastsvm with 2 threads
in <= 0.5x LIBSVM's time with 2 threads,
test accuracy within 0.1 percentage point.

    python tools/bench_ssnal_kernel.py --out bench_out/ssnal_kernel.md
    python tools/bench_ssnal_kernel.py --datasets mushrooms,a9a --repeat 1 --eta
"""
import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))

from bench_smo import DATASETS as KNOWN, _warm_up_rows, load, machine_line, run_and_report, save  # noqa: E402
from memory import reset_peak, rss_and_peak  # noqa: E402

DATASETS = ("a9a", "w8a", "ijcnn1", "mushrooms")      # the issue's; any binary set of bench_smo may be named
BINARY = tuple(name for name, spec in KNOWN.items() if spec.task == "binary")
THREADS = (1, 2)
CONFIGS = [(side, k) for side in ("fastsvm", "libsvm") for k in THREADS]
TARGET_RATIO = 0.5          # fastsvm 2 threads / LIBSVM 2 threads
TARGET_ACCURACY_PP = 0.1


# ---------------------------------------------------------------- one measured run (child)

def child(args):
    """Train one side once on the saved problem; print JSON (seconds, extra peak bytes, test
    accuracy, nSV, objective, the dual as (rows, coefficients), rho, eta)."""
    import gc
    npz = np.load(args.child)
    X = sp.csr_matrix((npz["data"], npz["indices"], npz["indptr"]), shape=tuple(npz["shape"]))
    Xt = sp.csr_matrix((npz["t_data"], npz["t_indices"], npz["t_indptr"]), shape=tuple(npz["t_shape"]))
    y, yt = npz["y"], npz["yt"]
    del npz
    if args.side == "libsvm":
        from libsvm.svmutil import svm_parameter, svm_predict, svm_problem, svm_train
        problem = svm_problem(y, X)
        param = svm_parameter(f"-s 0 -t 2 -c {args.C!r} -g {args.gamma!r} -e {args.e!r} -m {args.m!r} -q")

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
    warm_rows = _warm_up_rows(y, "binary")
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
    """(command, environment) of one measured run in a fresh process: side "fastsvm" (its
    solver by name) or "libsvm", OMP_NUM_THREADS set before LIBSVM loads."""
    cmd = [sys.executable, __file__, "--child", npz, "--side", side, "--threads", str(threads),
           "--solver", solver, "--C", repr(C), "--gamma", repr(gamma), "--e", repr(e), "--m", repr(m)]
    if fastsvm_e:
        cmd += ["--fastsvm-e", repr(fastsvm_e)]
    for name, value in options:
        cmd += ["-o", f"{name}={value}"]
    return cmd, {**os.environ, "OMP_NUM_THREADS": str(threads)}


def run_child(side, threads, npz, args, gamma):
    cmd, env = child_command(side, threads, npz, args.C, gamma, args.e, args.m, fastsvm_e=args.fastsvm_e,
                             options=args.option)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)
    if out.returncode != 0:
        raise SystemExit(f"bench_ssnal_kernel: {side} ({threads} thread(s)) failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- one dataset (parent)

def dual_quality(X, y, C, gamma, run):
    """(dual objective, eta) of a run's solution, both sides measured alike: coef_i = s_i x_i on
    its rows (s_i = +1 for the model's first label), the gradient Q x - e by kernel products over
    all rows, eta by the linear solver's kkt_residual."""
    from fastsvm._core._knapsack import KnapsackSet
    from fastsvm._core._ssnal_kernel import KernelProducts
    from fastsvm.csr import to_csr
    from fastsvm.solvers.ssnal import kkt_residual
    X = to_csr(X)
    n = X.shape[0]
    s = np.where(y == run["label"], 1.0, -1.0)
    rows = np.asarray(run["rows"], dtype=np.int32)
    beta = np.zeros(n)
    beta[rows] = run["coef"]
    x = s * beta
    h = np.zeros(n)
    KernelProducts(X, "rbf", gamma, n_threads=os.cpu_count() or 1).matvec(
        np.arange(n, dtype=np.int32), rows, beta[rows], h)
    grad = s * h - 1.0
    eta, _ = kkt_residual(x, grad, KnapsackSet(s, 0.0, np.zeros(n), np.full(n, C)))
    return 0.5 * float(x @ (grad + 1.0)) - float(x.sum()), eta


def bench(name, args, tmpdir):
    X, y, Xt, yt, how, gamma = load(args.data_dir, name, False)
    gamma = args.gamma or gamma
    npz = os.path.join(tmpdir, f"{name}.npz")
    save(npz, X, y, Xt, yt)
    runs = {config: [] for config in CONFIGS}
    for _ in range(args.repeat):
        for side, k in CONFIGS:
            runs[side, k].append(run_child(side, k, npz, args, gamma))
    result = {config: {"seconds": statistics.median(r["seconds"] for r in rs),
                       "peak": statistics.median(r["peak"] for r in rs), "metric": rs[0]["metric"],
                       "n_sv": rs[0]["n_sv"], "eta": rs[0]["eta"], "first": rs[0]}
              for config, rs in runs.items()}
    if args.eta:
        for side in ("fastsvm", "libsvm"):
            obj, eta = dual_quality(X, y, args.C, gamma, result[side, 1]["first"])
            result[side, 1]["objective"], result[side, 1]["eta"] = obj, eta
    for r in result.values():
        del r["first"]
    return {"name": name, "n": X.shape[0], "n_test": Xt.shape[0], "p": X.shape[1], "how": how,
            "gamma": gamma, "repeat": args.repeat, "runs": result}


# ---------------------------------------------------------------- report

HEADER = ("| dataset | train / test rows | fastsvm s (1 / 2 thr) | LIBSVM s (1 / 2 thr) "
          "| ratio fastsvm / LIBSVM (1 thr / 2 thr) | peak MB fastsvm (1 / 2 thr) | peak MB LIBSVM (1 / 2 thr) "
          "| test acc. fastsvm / LIBSVM | nSV fastsvm / LIBSVM | eta fastsvm / LIBSVM | dual obj. fastsvm / LIBSVM "
          "| targets |")
RULE = "|" + "---|" * (HEADER.count(" | ") + 1)


def markdown_row(row):
    r = row["runs"]
    mb = 2**20
    f1, f2, l1, l2 = (r["fastsvm", 1], r["fastsvm", 2], r["libsvm", 1], r["libsvm", 2])
    ratio2 = f2["seconds"] / l2["seconds"]
    acc_ok = abs(f1["metric"] - l1["metric"]) * 100 <= TARGET_ACCURACY_PP
    missed = ([] if ratio2 <= TARGET_RATIO else ["time"]) + ([] if acc_ok else ["accuracy"])
    obj = (f"{f1['objective']:.8g} / {l1['objective']:.8g}" if "objective" in f1 else "-")
    return (f"| {row['name']} | {row['n']} / {row['n_test']} "
            f"| {f1['seconds']:.2f} / {f2['seconds']:.2f} | {l1['seconds']:.2f} / {l2['seconds']:.2f} "
            f"| {f1['seconds'] / l1['seconds']:.2f} / {ratio2:.2f} "
            f"| {f1['peak'] / mb:.0f} / {f2['peak'] / mb:.0f} | {l1['peak'] / mb:.0f} / {l2['peak'] / mb:.0f} "
            f"| {100 * f1['metric']:.2f}% / {100 * l1['metric']:.2f}% | {f1['n_sv']} / {l1['n_sv']} "
            f"| {f1['eta']:.2e} / {l1['eta']:.2e} | {obj} "
            f"| {'met' if not missed else 'missed: ' + ', '.join(missed)} |")


def header_line(args, load_before):
    options = ", ".join(f"{k}={v}" for k, v in args.option) or "defaults"
    return (f"{machine_line(load_before)}. C-SVC, RBF kernel, -c {args.C:g} -e {args.e:g} -m {args.m:g}"
            + (f" (fastsvm -e {args.fastsvm_e:g})" if args.fastsvm_e else "") + ", "
            f"gamma = {args.gamma or '1/n_features'}; fastsvm -s ssnal (options: {options}). "
            f"Median of {args.repeat} runs, "
            "each a fresh process; wall time of training only; peak = extra resident memory during "
            f"training. Target: fastsvm 2 threads <= {TARGET_RATIO:g}x LIBSVM 2 threads, accuracy within "
            f"{TARGET_ACCURACY_PP:g} pp. eta: relative KKT residual (Niu et al. 2019 eq. 4.1)"
            + (" of both solutions, recomputed here." if args.eta else " reported by SSsNAL."))


def _option(text):
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError("options are name=value")
    return name, value


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--datasets", default=",".join(DATASETS), help=f"comma-separated, from: {', '.join(BINARY)}")
    ap.add_argument("--repeat", type=int, default=3, help="runs per configuration")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--e", type=float, default=1e-3, help="stopping tolerance (-e) of both sides")
    ap.add_argument("--m", type=float, default=100.0, help="kernel cache MB (-m) of both sides")
    ap.add_argument("--fastsvm-e", type=float, default=None,
                    help="fastsvm's tolerance (eta) when it should differ from LIBSVM's -e, e.g. 1e-5: "
                         "about the eta LIBSVM reaches at -e 1e-3")
    ap.add_argument("-o", "--option", type=_option, action="append", default=[],
                    help="ssnal option name=value (e.g. rff=512), repeatable")
    ap.add_argument("--eta", action="store_true", help="recompute eta and the dual objective of both sides")
    ap.add_argument("--out", help="write the markdown report here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--side", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--solver", default="ssnal", help=argparse.SUPPRESS)   # fastsvm's side
    ap.add_argument("--gamma", type=float, help="RBF gamma of both sides (default: 1/n_features)")
    args = ap.parse_args(argv)
    if args.child:
        return child(args)
    return run_and_report("# SSsNAL (RBF kernel): fastsvm vs LIBSVM", ap, args, BINARY, bench, markdown_row,
                          HEADER, RULE, header_line)


if __name__ == "__main__":
    sys.exit(main())
