"""ADMM (-s admm) side by side with LIBSVM, SMO and SSsNAL, one run, the same data and problems.

C-SVC, RBF kernel, per set its gamma (a9a 0.5, w8a 0.5, ijcnn1 50: the paper's h = 1, 1, 0.1;
moons 50) and the C grid (0.1, 1, 10); training files, accuracy on the .t files (moons: 50,000
training and 10,000 test rows of tools/make_synthetic.py's moons, seed 0, made in memory); every
side at -m --m MB but the first:
  admm defaults    fastsvm.SVC(solver="admm", gamma=, C=) and nothing else (its -m 200, tol 1e-3):
                   the default mode and the hierarchical shape chosen to fit, one fit per C
  admm paper       the paper's beta and 10 iterations, the hierarchical factor (tol 1e-2, leaf 512,
                   rank 100): the whole C grid through one fastsvm.fit_path (one factorization)
  admm converged   backend auto (the exact factor when n x n fits in -m, else hodlr), its default
                   beta (raised 10x when K~ + beta I is not positive definite), to eta <= --admm-e
                   or --max-iter iterations, the C grid through one fit_path (warm starts)
  libsvm           libsvm-official (svmutil) -s 0 -t 2 -e --e -m --m, one fit per C
  smo, ssnal       fastsvm -s smo / -s ssnal at -e --e, one fit per C (fastsvm.fit_model)
Reported per side and C: training seconds (the ADMM path's factor once, its phases from the
factor's timings -- clustering, compression, factorization -- and each C's iteration seconds),
prediction seconds apart (the exact kernel over the test file), peak RSS growth of the fit (MB),
test accuracy, and the ratio of training time to LIBSVM's (one C to one fit; the grid to three).
Training time is the median of --repeat runs, the other figures are the last run's; every side first
trains once, untimed, on the first 1000 rows.

    python tools/bench_admm.py --out bench_out/admm.md
    python tools/bench_admm.py --datasets a9a,ijcnn1 --repeat 1          # the short run
    python tools/bench_admm.py --datasets moons --Cs 1 --sides libsvm,defaults,smo --repeat 1
"""
import ctypes
import time

import numpy as np

from benchlib.data import DATA_DIR, load_dataset
from benchlib.peers import libsvm_rbf_parameter
from benchlib.report import parser as make_parser
from benchlib.report import write_report
from benchlib.running import timed
from benchlib.synthetic import moons_blocks
from fastsvm.models.prediction import predict
from fastsvm.params import Params
from fastsvm.training.trainer import fit_model, fit_path

GAMMAS = {"a9a": 0.5, "w8a": 0.5, "ijcnn1": 50.0, "moons": 50.0}
MOONS_ROWS = (50_000, 10_000)      # training and test rows of the moons set
PAPER = {"mode": "paper", "backend": "hodlr", "approx_tol": 1e-2, "leaf_size": 512, "rank": 100}
# the targets: training time / LIBSVM's (one C, the 3-C grid), accuracy for converged mode
TARGETS = {"a9a": (1.0, 0.35), "w8a": (2.0, None), "ijcnn1": (0.15, None)}
CONVERGED_TARGET = (0.5, 0.3)      # ijcnn1: within 0.5 pp of LIBSVM's accuracy at <= 0.3x its time
DEFAULTS_TARGET = (1.0, 0.1)       # moons: SVC(solver="admm") within 1 pp of LIBSVM's accuracy at <= 0.1x its time
WARM_ROWS = 1000                   # every side first trains once on these rows, untimed (libraries loaded)


def omp_threads(n):
    """LIBSVM's OpenMP pool to n threads: a setting of the shared libgomp, which fastsvm has loaded
    already (so OMP_NUM_THREADS would come too late); fastsvm names its thread counts itself.
    On a busy machine a pool larger than needed turns every barrier into a wait."""
    try:
        ctypes.CDLL("libgomp.so.1").omp_set_num_threads(int(n))
    except OSError:
        pass


def accuracy(labels, truth):
    return 100.0 * float(np.mean(np.asarray(labels) == truth))


def predicted(model_predict, yt):
    """(seconds, test accuracy in %) of one prediction of the test file."""
    started = time.perf_counter()
    labels = model_predict()
    return time.perf_counter() - started, accuracy(labels, yt)


def libsvm_side(X, y, Xt, yt, C, gamma, args):
    from libsvm.svmutil import svm_predict, svm_problem, svm_train
    problem = svm_problem(y, X)
    param = libsvm_rbf_parameter(C=C, gamma=gamma, e=args.e, m=args.m)
    svm_train(svm_problem(y[:WARM_ROWS], X[:WARM_ROWS]), param)
    seconds, model, peak = timed(lambda: svm_train(problem, param), args.repeat)
    pred_s, acc = predicted(lambda: svm_predict(yt, Xt, model, "-q")[0], yt)
    return {"seconds": seconds, "predict": pred_s, "peak": peak, "acc": acc, "n_sv": model.get_nr_sv(), "note": ""}


def fastsvm_side(X, y, Xt, yt, C, gamma, solver, args):
    params = Params(solver=solver, kernel_type="rbf", gamma=gamma, C=C, tol=args.e, cache_size=args.m,
                    n_jobs=args.threads)
    fit_model(X[:WARM_ROWS], y[:WARM_ROWS], params)
    seconds, model, peak = timed(lambda: fit_model(X, y, params), args.repeat)
    pred_s, acc = predicted(lambda: predict(model, Xt), yt)
    return {"seconds": seconds, "predict": pred_s, "peak": peak, "acc": acc, "n_sv": model.support_vectors.shape[0],
            "note": f"eta {model.info['stop_measure'][0]:.1e}" if solver == "ssnal" else ""}


def defaults_side(X, y, Xt, yt, C, gamma, args):
    """fastsvm.SVC(solver="admm") with every default but gamma and C: what a user gets."""
    from fastsvm.estimators import SVC

    def fit():
        started = time.process_time()
        return SVC(solver="admm", gamma=gamma, C=C).fit(X, y), time.process_time() - started

    fit_rows = min(WARM_ROWS, X.shape[0])
    SVC(solver="admm", gamma=gamma, C=C).fit(X[:fit_rows], y[:fit_rows])
    seconds, (estimator, cpu), peak = timed(fit, args.repeat)
    pred_s, acc = predicted(lambda: estimator.predict(Xt), yt)
    details = estimator.model_.info["details"][0]
    return {"seconds": seconds, "predict": pred_s, "peak": peak, "acc": acc,
            "n_sv": estimator.support_vectors_.shape[0],
            "note": f"{details['mode']}, {details['backend']}, beta {details['beta']:g}, "
                    f"{estimator.model_.info['n_iter'][0]} it., CPU {cpu:.2f}s"}


def moons():
    """(label, X, y, Xt, yt) of the moons set, made as tools/make_synthetic.py writes it."""
    import scipy.sparse as sp

    def part(rows, name):
        blocks = list(moons_blocks(rows, seed=0, part=name))
        return sp.vstack([X for X, _ in blocks]).tocsr(), np.concatenate([y for _, y in blocks]).astype(np.float64)

    return ("moons", *part(MOONS_ROWS[0], "train"), *part(MOONS_ROWS[1], "test"))


def admm_path(X, y, Xt, yt, Cs, gamma, options, args):
    """The C grid through one fit_path: (seconds of the whole path, factor timings, per-C rows)."""
    params = Params(solver="admm", kernel_type="rbf", gamma=gamma, tol=args.admm_e, cache_size=args.m,
                    n_jobs=args.threads, max_iter=None if options.get("mode") == "paper" else args.max_iter,
                    options=options)
    fit_path(X[:WARM_ROWS], y[:WARM_ROWS], Cs, params)
    seconds, models, peak = timed(lambda: fit_path(X, y, Cs, params), args.repeat)
    rows, factor_timings = [], None
    for model in models:
        details = model.info["details"][0]
        timings = dict(details["timings"])
        iterations = timings.pop("iterations")
        factor_timings = timings
        pred_s, acc = predicted(lambda m=model: predict(m, Xt), yt)
        note = (f"{details['backend']}, beta {details['beta']:g}, {model.info['n_iter'][0]} it., "
                f"eta {details_eta(model):.1e}"
                + ("" if details["mode"] == "paper" else f", {model.info['status'][0].value}"))
        rows.append({"seconds": iterations, "predict": pred_s, "peak": peak, "acc": acc,
                     "n_sv": model.support_vectors.shape[0], "note": note})
    return seconds, factor_timings, rows


def details_eta(model):
    return float(model.info["stop_measure"][0])


def one_set(name, args):
    label, X, y, Xt, yt = moons() if name == "moons" else load_dataset(name, args.data_dir, sort_split=False)[:5]
    gamma = GAMMAS.get(name, args.gamma)
    if args.test_rows and args.test_rows < Xt.shape[0]:
        # prediction costs n_SV x n_test kernel values (paper mode: every training row is an SV)
        keep = np.sort(np.random.default_rng(0).choice(Xt.shape[0], args.test_rows, replace=False))
        Xt, yt = Xt[keep], yt[keep]
    lines = ["", f"## {label}: {X.shape[0]} x {X.shape[1]} training rows, {Xt.shape[0]} test rows, gamma {gamma:g}",
             "", "| side | C | train s | ratio to LIBSVM | predict s | peak MB | test acc. % | nSV | notes |",
             "|---|---|---|---|---|---|---|---|---|"]

    def row(side, C, r, libsvm_s):
        ratio = f"{r['seconds'] / libsvm_s:.2f}x" if libsvm_s else "-"
        lines.append(f"| {side} | {C:g} | {r['seconds']:.2f} | {ratio} | {r['predict']:.2f} | {r['peak']:.0f} | "
                     f"{r['acc']:.2f} | {r['n_sv']} | {r['note']} |")
        print(lines[-1], flush=True)

    libsvm = {}
    if "libsvm" in args.sides:
        for C in args.Cs:
            libsvm[C] = libsvm_side(X, y, Xt, yt, C, gamma, args)
            row("libsvm", C, libsvm[C], None)
    grid_libsvm = sum(r["seconds"] for r in libsvm.values()) if len(libsvm) == len(args.Cs) else None
    summary = []
    if "defaults" in args.sides:
        for C in args.Cs:
            r = defaults_side(X, y, Xt, yt, C, gamma, args)
            row("admm defaults", C, r, libsvm.get(C, {}).get("seconds"))
            if C in libsvm:
                summary.append(f"- admm defaults, C {C:g}: {r['seconds'] / libsvm[C]['seconds']:.3f}x LIBSVM's time, "
                               f"{r['acc'] - libsvm[C]['acc']:+.2f} pp its accuracy")
    for mode in ("paper", "converged"):
        if mode not in args.sides:
            continue
        options = PAPER if mode == "paper" else {"mode": "converged"}
        seconds, phases, rows = admm_path(X, y, Xt, yt, args.Cs, gamma, options, args)
        for C, r in zip(args.Cs, rows):
            row(f"admm {mode}", C, r, libsvm.get(C, {}).get("seconds"))
        factor_s = sum(phases.values())
        phase_text = ", ".join(f"{k} {v:.2f}s" for k, v in phases.items())
        grid_ratio = f" = {seconds / grid_libsvm:.2f}x the {len(libsvm)} LIBSVM fits" if grid_libsvm else ""
        grid_cell = f"{seconds / grid_libsvm:.2f}x" if grid_libsvm else "-"
        lines.append(f"| admm {mode} grid | all | {seconds:.2f} | {grid_cell} | | | | | "
                     f"factor once: {phase_text} |")
        print(lines[-1], flush=True)
        # one C alone: the path less the other Cs' iterations (the factor and the fit's overhead once)
        iterations = sum(r["seconds"] for r in rows)
        alone = {C: seconds - iterations + r["seconds"] for C, r in zip(args.Cs, rows)}
        summary.append(f"- admm {mode}: factor {factor_s:.2f}s ({phase_text}); the {len(args.Cs)}-C path "
                       f"{seconds:.2f}s{grid_ratio}; one C alone (the path less the other Cs' iterations): "
                       + ", ".join(f"C {C:g} {alone[C]:.2f}s"
                                   + (f" ({alone[C] / libsvm[C]['seconds']:.2f}x)" if C in libsvm else "")
                                   for C in args.Cs))
    for solver in ("smo", "ssnal"):
        if solver in args.sides:
            for C in args.peer_Cs:
                row(solver, C, fastsvm_side(X, y, Xt, yt, C, gamma, solver, args), libsvm.get(C, {}).get("seconds"))
    target = TARGETS.get(name)
    if name == "moons":
        summary.append(f"- target: admm defaults within {DEFAULTS_TARGET[0]} pp of LIBSVM's accuracy at <= "
                       f"{DEFAULTS_TARGET[1]}x its time")
    if target:
        summary.append(f"- targets: one C <= {target[0]}x LIBSVM"
                       + (f", the grid <= {target[1]}x three LIBSVM fits" if target[1] else "")
                       + (f"; converged within {CONVERGED_TARGET[0]} pp of LIBSVM's accuracy at <= "
                          f"{CONVERGED_TARGET[1]}x its time" if name == "ijcnn1" else ""))
    return lines + [""] + summary


def main(argv=None):
    parser = make_parser(__doc__)
    parser.add_argument("--data-dir", default=str(DATA_DIR))
    parser.add_argument("--datasets", default="a9a,w8a,ijcnn1")
    parser.add_argument("--gamma", type=float, default=0.5, help="gamma of a set not in " + ", ".join(GAMMAS))
    parser.add_argument("--Cs", default="0.1,1,10")
    parser.add_argument("--sides", default="libsvm,paper,converged,smo,ssnal", help="of libsvm, defaults, paper, "
                        "converged, smo, ssnal")
    parser.add_argument("--peer-Cs", help="the Cs of smo and ssnal (default --Cs)")
    parser.add_argument("--e", type=float, default=1e-3, help="-e of LIBSVM, smo and ssnal")
    parser.add_argument("--admm-e", type=float, default=1e-3, help="converged mode's eta")
    parser.add_argument("--max-iter", type=int, default=5000, help="converged mode's iteration cap")
    parser.add_argument("--m", type=float, default=2000.0, help="-m MB, every side")
    parser.add_argument("--threads", type=int, default=1, help="fastsvm's -j (LIBSVM: OMP_NUM_THREADS)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--test-rows", type=int, default=0, help="accuracy on this many test rows (seeded "
                        "sample; 0: all)")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    args.Cs = [float(v) for v in args.Cs.split(",")]
    args.peer_Cs = args.Cs if args.peer_Cs is None else [float(v) for v in args.peer_Cs.split(",")]
    args.sides = set(args.sides.split(","))
    omp_threads(args.threads)
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    lines = ["# ADMM side by side", "",
             f"{time.strftime('%Y-%m-%d %H:%M')}; load average before {load}; fastsvm -j {args.threads}; "
             f"-m {args.m:g}; training time the median of {args.repeat} run(s); admm converged -e {args.admm_e:g}, "
             f"others -e {args.e:g}."
             + (f" Test accuracy on a seeded sample of {args.test_rows} test rows." if args.test_rows else "")]
    for name in filter(None, args.datasets.split(",")):
        lines += one_set(name, args)
    with open("/proc/loadavg") as f:
        lines += ["", f"load average after: {' '.join(f.read().split()[:3])}"]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
