"""SSsNAL on the RBF kernel (fastsvm -s ssnal -t 2) side by side with LIBSVM (libsvm-official).

C-SVC with LIBSVM's defaults unless given: C = 1, gamma = 1/n_features of the training file,
-e 1e-3, -m 100 MB. Four configurations per dataset: fastsvm ssnal with n_jobs = 1 and 2, LIBSVM
with OMP_NUM_THREADS = 1 and 2 (libsvm-official computes kernel columns with OpenMP; the variable
must be set before the library loads, so every run is a fresh subprocess). Runs are interleaved
(repeat r of every configuration before repeat r + 1), so a change in the machine's load hits
all four alike; medians are reported.

Each run (tools/bench_smo.py's protocol; benchlib.rbf_child): data loaded before the clock starts, one warm-
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
import json
import os
import statistics
import subprocess
import sys

from benchlib.data import DATA_DIR
from benchlib.kernel_sets import BINARY, load, save
from benchlib.measures import dual_quality
from benchlib.rbf_child import TOOLS, child_command, option
from benchlib.report import machine_line, parser, rule, run_and_report

DATASETS = ("a9a", "w8a", "ijcnn1", "mushrooms")      # the default cells; any binary set of bench_smo may be named
THREADS = (1, 2)
CONFIGS = [(side, k) for side in ("fastsvm", "libsvm") for k in THREADS]
TARGET_RATIO = 0.5          # fastsvm 2 threads / LIBSVM 2 threads
TARGET_ACCURACY_PP = 0.1


# ---------------------------------------------------------------- one measured run (a child process)

def run_child(side, threads, npz, args, gamma):
    cmd, env = child_command(side, threads, npz, args.C, gamma, args.e, args.m, fastsvm_e=args.fastsvm_e,
                             options=args.option)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=TOOLS)
    if out.returncode != 0:
        raise SystemExit(f"bench_ssnal_kernel: {side} ({threads} thread(s)) failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- one dataset (parent)

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
RULE = rule(HEADER)


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


def main(argv=None):
    ap = parser(__doc__)
    ap.add_argument("--data-dir", default=str(DATA_DIR))
    ap.add_argument("--datasets", default=",".join(DATASETS), help=f"comma-separated, from: {', '.join(BINARY)}")
    ap.add_argument("--repeat", type=int, default=3, help="runs per configuration")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--e", type=float, default=1e-3, help="stopping tolerance (-e) of both sides")
    ap.add_argument("--m", type=float, default=100.0, help="kernel cache MB (-m) of both sides")
    ap.add_argument("--fastsvm-e", type=float, default=None,
                    help="fastsvm's tolerance (eta) when it should differ from LIBSVM's -e, e.g. 1e-5: "
                         "about the eta LIBSVM reaches at -e 1e-3")
    ap.add_argument("-o", "--option", type=option, action="append", default=[],
                    help="ssnal option name=value (e.g. rff=512), repeatable")
    ap.add_argument("--eta", action="store_true", help="recompute eta and the dual objective of both sides")
    ap.add_argument("--out", help="write the markdown report here")
    ap.add_argument("--gamma", type=float, help="RBF gamma of both sides (default: 1/n_features)")
    args = ap.parse_args(argv)
    return run_and_report("# SSsNAL (RBF kernel): fastsvm vs LIBSVM", ap, args, BINARY, bench, markdown_row,
                          HEADER, RULE, header_line)


if __name__ == "__main__":
    sys.exit(main())
