"""NESVM side by side with its peers, one run, the same data and problems.

C-SVM (hinge, |w|^2 / 2, the bias never penalized: LIBSVM's linear problem): passes over the nonzeros
and seconds until the primal objective is within a relative gap of the optimum F* (1e-2, 1e-3):
  nesvm            the default (backtracking, gap-driven homotopy), run at -e = the gap: its own
                   certificate stops it, so its primal gap is at most the target
  nesvm paper      the same homotopy with the paper's eqs. 33-35 and the global constant L
  nesvm passes to the gap   the plain scheme's measure for nesvm: passes until the first iterate of
                   the run at -e = the gap whose objective is within the gap of F*
  plain scheme     the paper as printed, the calibration of the pass target: constant step 1/L,
                   8 stages of geometric mu 1 -> 1e-4, prox-centre 0, each stage until its relative
                   objective change is below 1e-7 (or --plain-cap passes in all; by default
                   as many as nesvm took at the tightest gap, which decides the pass target)
  ssnal            fastsvm's SSsNAL (linear), tolerances 1e-1, 10^-1.5, ... until the gap is met
  liblinear -s 3   at -B 1 (its bias is penalized: a neighbouring problem, measured against its own
                   optimum), eps 1, 10^-0.5, ... until the gap is met; one thread
  sgd              scikit-learn's SGDClassifier(loss="hinge", alpha = 1 / (C n)), epochs 1, 2, 5,
                   10, ... (tol=None) until the gap is met, if within --sgd-epochs
F* is SSsNAL's primal objective at eta 1e-9. Passes: nesvm and plain count their X w and X^T c
passes; an epoch of coordinate or stochastic descent reads every row twice (2 passes).
LP-SVM (|w|_1): nesvm -o penalty=l1 to a 1e-4 gap against HiGHS (scipy linprog) on the same LP.
LS-SVM: nesvm -L squared_error to 1e-6 against scipy's lsmr on the same least squares (the bias
column scaled by 1e3, so its penalty is ~1e-6 of the others').
Threads: nesvm's seconds per pass for 1 and 2 threads (the same bits) on the largest set.

    python tools/bench_nesvm.py --out bench_out/nesvm.md
    python tools/bench_nesvm.py --datasets a9a --Cs 1 --repeat 1          # a short sanity run
    python tools/bench_nesvm.py --datasets "" --synthetic 1000000 --skip-paper --repeat 1 --sections csvm
"""
import time
import warnings

import numpy as np
import scipy.sparse as sp

from benchlib.data import DATA_DIR, as_pm, benchmark_sets
from benchlib.measures import hinge_primal, ladder_side, optimum
from benchlib.measures import linear_subproblem as subproblem
from benchlib.peers import liblinear_run
from benchlib.report import parser as make_parser
from benchlib.report import write_report
from benchlib.running import timed
from fastsvm._core._losses import smoothed_hinge_loss
from fastsvm._core._margins import LabeledRows, largest_eigenvalue
from fastsvm.solvers import get_solver


# ---------------------------------------------------------------- problems and measures

def accuracy(Xt, yt, w, b):
    return float(np.mean(np.where(Xt @ w + b > 0, 1.0, -1.0) == yt)) if Xt is not None else float("nan")


# ---------------------------------------------------------------- the sides

def nesvm_side(X, y, C, gap, repeat, threads, max_iter=10**6, **options):
    seconds, sol, peak = timed(lambda: get_solver("nesvm").solve(
        subproblem("nesvm", X, y, C, gap, threads, max_iter=max_iter, options=options)), repeat)
    return {"seconds": seconds, "passes": sol.details["passes"], "w": sol.w, "b": -sol.rho, "peak": peak,
            "status": str(sol.status.value), "gap": sol.stop_measure, "history": sol.history,
            "trace": sol.details["trace"]}


def oracle_passes(run, gap, F_star):
    """The passes of ``run`` until its first iterate whose hinge objective is within ``gap`` of F*
    (the plain scheme's measure; nesvm's trace holds every iterate's objective), or None."""
    return next((int(passes) for passes, objective in run["trace"] if (objective - F_star) / F_star <= gap), None)


def plain_scheme(X, y, C, gaps, F_star, cap):
    """The paper as printed (see the module doc): ({gap: passes when first met}, passes used)."""
    rows = LabeledRows(X, y, np.full(X.shape[0], float(C)), bias=1.0)
    rho = rows.row_scales()
    passes = 40
    lam = 1.05 * largest_eigenvalue(rows, C / rho, 20)
    reached, w = {}, np.zeros(rows.n_weights)
    z, coef, g = np.empty(rows.n_rows), np.empty(rows.n_rows), np.empty(rows.n_weights)
    for mu in np.geomspace(1.0, 1e-4, 8):
        L = 1.0 + lam / mu
        total, previous, k = np.zeros_like(w), np.inf, 0
        while passes < cap:
            rows.margins(w, z)
            smooth, hinge = smoothed_hinge_loss(z, rho, rows.weights, mu, coef)
            passes += 2
            value = 0.5 * float(w[:-1] @ w[:-1])
            for target in gaps:
                if target not in reached and (value + hinge - F_star) / F_star <= target:
                    reached[target] = passes
            if len(reached) == len(gaps) or abs(previous - (value + smooth)) <= 1e-7 * abs(value + smooth):
                break
            previous = value + smooth
            rows.rmatvec(coef, g)
            np.negative(g, out=g)
            g[:-1] += w[:-1]
            y_k = w - g / L
            total += 0.5 * (k + 1) * g
            w = (2.0 / (k + 3)) * (-total / L) + ((k + 1) / (k + 3)) * y_k
            k += 1
        if len(reached) == len(gaps) or passes >= cap:
            break
    return reached, passes


def ssnal_run(X, y, C, threads, repeat):
    def run(tol):
        seconds, sol, _ = timed(lambda: get_solver("ssnal").solve(subproblem("ssnal", X, y, C, tol, threads)),
                                repeat)
        w = X.T @ sol.coef
        return seconds, hinge_primal(X, y, C, w, -sol.rho), (w, -sol.rho)
    return run


def sgd_side(X, y, C, gap, F_star, max_epochs):
    from sklearn.linear_model import SGDClassifier
    for epochs in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000):
        if epochs > max_epochs:
            return None
        model = SGDClassifier(loss="hinge", alpha=1.0 / (C * X.shape[0]), max_iter=epochs, tol=None,
                              random_state=0)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
        seconds = time.perf_counter() - start
        w, b = model.coef_[0], float(model.intercept_[0])
        if (hinge_primal(X, y, C, w, b) - F_star) / F_star <= gap:
            return {"seconds": seconds, "passes": 2 * epochs, "w": w, "b": b}
    return None


# ---------------------------------------------------------------- LP-SVM and LS-SVM

def highs_lp_svm(X, y, C, time_limit):
    """min |w|_1 + C sum xi over w = u - v, b = b1 - b2, xi >= 0 (a sparse LP)."""
    from scipy.optimize import linprog
    n, p = X.shape
    YX = sp.diags(y) @ X
    A = sp.hstack([-YX, YX, -y[:, None], y[:, None], -sp.eye(n)], format="csr")
    c = np.concatenate([np.ones(2 * p), [0.0, 0.0], np.full(n, C)])
    start = time.perf_counter()
    result = linprog(c, A_ub=A, b_ub=-np.ones(n), bounds=(0, None), method="highs",
                     options={"time_limit": time_limit})
    return time.perf_counter() - start, (result.fun if result.status == 0 else None)


def lsmr_ls_svm(X, y, C):
    from scipy.sparse.linalg import lsmr
    scale = 1e3
    M = (np.sqrt(2.0 * C) * sp.diags(y) @ sp.hstack([X, np.full((X.shape[0], 1), scale)])).tocsr()
    start = time.perf_counter()
    x = lsmr(M, np.full(X.shape[0], np.sqrt(2.0 * C)), damp=1.0, atol=1e-12, btol=1e-12, maxiter=100000)[0]
    seconds = time.perf_counter() - start
    w, b = x[:-1], x[-1] * scale
    return seconds, 0.5 * float(w @ w) + C * float(((1.0 - y * (X @ w + b)) ** 2).sum())


# ---------------------------------------------------------------- report

def fmt(seconds, passes=None):
    if seconds is None:
        return "-"
    return f"{seconds:.2f} s" + (f" / {passes:g}" if passes is not None else "")


def dataset_rows(name, X, labels, Xt, yt_labels, args):
    y = as_pm(labels)
    yt = np.where(yt_labels == labels[0], 1.0, -1.0) if Xt is not None else None
    out = []
    for C in args.Cs:
        F_star = optimum(X, y, C, args.threads)
        nesvm_runs = {gap: nesvm_side(X, y, C, gap, args.repeat, args.threads) for gap in args.gaps}
        # "auto": the plain scheme runs until it has used as many passes as nesvm did at the tightest
        # gap, enough to tell which needs fewer
        cap = args.plain_cap or 2 + max(run["passes"] for run in nesvm_runs.values())
        plain, plain_passes = ({}, 0) if args.skip_plain else plain_scheme(X, y, C, args.gaps, F_star, cap)
        ll_run, ll_star = liblinear_run(X, labels, C, args.repeat)
        for gap in args.gaps:
            row = {"dataset": name, "C": C, "gap": gap, "F*": F_star}
            nes = nesvm_runs[gap]
            paper = None if args.skip_paper else nesvm_side(X, y, C, gap, 1, args.threads, scheme="paper")
            row["nesvm"] = fmt(nes["seconds"], nes["passes"])
            row["oracle"] = oracle_passes(nes, gap, F_star)
            row["nesvm gap"] = (hinge_primal(X, y, C, nes["w"], nes["b"]) - F_star) / F_star
            row["acc"] = accuracy(Xt, yt, nes["w"], nes["b"])
            row["peak"] = nes["peak"]
            row["paper"] = "-" if paper is None else fmt(paper["seconds"], paper["passes"])
            row["plain"] = (f"{plain[gap]}" if gap in plain else
                            ("-" if args.skip_plain else f"> {plain_passes}"))
            found = ladder_side(ssnal_run(X, y, C, args.threads, args.repeat), gap, F_star, 0.1, 8)
            row["ssnal"] = "-" if found is None else f"{found[1]:.2f} s (eta {found[0]:.1e})"
            found = ladder_side(ll_run, gap, ll_star, 1.0, 10)
            row["liblinear"] = "-" if found is None else f"{found[1]:.2f} s (-e {found[0]:.1e})"
            sgd = sgd_side(X, y, C, gap, F_star, args.sgd_epochs)
            row["sgd"] = "-" if sgd is None else fmt(sgd["seconds"], sgd["passes"])
            out.append(row)
            print(row, flush=True)
    return out


def main(argv=None):
    parser = make_parser(__doc__)
    parser.add_argument("--data-dir", default=str(DATA_DIR))
    parser.add_argument("--datasets", default="a9a,w8a,ijcnn1,phishing")
    parser.add_argument("--synthetic", type=int, default=0, help="rows of the synthetic sets too")
    parser.add_argument("--synthetic-kinds", default="text,covtype", help="which synthetic sets (text, covtype)")
    parser.add_argument("--skip-paper", action="store_true", help="leave out the paper scheme's column")
    parser.add_argument("--Cs", default="1,32")
    parser.add_argument("--gaps", default="1e-2,1e-3")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--plain-cap", type=int, default=0,
                        help="passes the plain scheme may use in all (0: as many as nesvm's most, plus 2)")
    parser.add_argument("--skip-plain", action="store_true")
    parser.add_argument("--sgd-epochs", type=int, default=200)
    parser.add_argument("--lp-time-limit", type=float, default=600.0)
    parser.add_argument("--lp-max-iter", type=int, default=20000, help="nesvm's cap for the LP-SVM")
    parser.add_argument("--sections", default="csvm,lp,ls,threads")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    args.Cs = [float(c) for c in args.Cs.split(",")]
    args.gaps = [float(g) for g in args.gaps.split(",")]
    sections = set(args.sections.split(","))

    sets = benchmark_sets(args.data_dir, args.datasets, args.synthetic, args.synthetic_kinds)

    lines = ["# NESVM side by side", "",
             f"{time.strftime('%Y-%m-%d %H:%M')}; {args.threads} threads for nesvm and ssnal; medians of "
             f"{args.repeat} runs. Cells: seconds / passes over the nonzeros to the relative primal gap.", "",
             "| dataset | C | gap | nesvm | nesvm gap reached | nesvm passes to the gap | paper scheme | "
             "plain scheme passes | ssnal | liblinear -s 3 -B 1 | sgd | test acc. | peak MB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, X, y, Xt, yt in sets if "csvm" in sections else []:
        for r in dataset_rows(name, X, y, Xt, yt, args):
            lines.append(f"| {r['dataset']} | {r['C']:g} | {r['gap']:g} | {r['nesvm']} | {r['nesvm gap']:.1e} | "
                         f"{r['oracle'] if r['oracle'] is not None else '-'} | {r['paper']} | {r['plain']} | "
                         f"{r['ssnal']} | {r['liblinear']} | {r['sgd']} | "
                         f"{100 * r['acc']:.2f}% | {r['peak']:.0f} |")

    lines += ["", "## LP-SVM (penalty l1) to a 1e-4 gap against HiGHS, C = 1", "",
              "| dataset | nesvm s (status, gap) | HiGHS s | objective nesvm / HiGHS | nnz(w) |",
              "|---|---|---|---|---|"]
    for name, X, labels, _, _ in sets if "lp" in sections else []:
        y = as_pm(labels)
        highs_seconds, highs_value = highs_lp_svm(X, y, 1.0, args.lp_time_limit)
        nes = nesvm_side(X, y, 1.0, 1e-4, 1, args.threads, max_iter=args.lp_max_iter, penalty="l1")
        value = float(np.abs(nes["w"]).sum() + np.maximum(0, 1 - y * (X @ nes["w"] + nes["b"])).sum())
        lines.append(f"| {name} | {nes['seconds']:.2f} ({nes['status']}, {nes['gap']:.1e}) | {highs_seconds:.2f}"
                     f"{'' if highs_value else ' (limit)'} | "
                     f"{value:.8g} / {highs_value if highs_value is None else format(highs_value, '.8g')} | "
                     f"{np.count_nonzero(nes['w'])} |")
        print(lines[-1], flush=True)

    lines += ["", "## LS-SVM (squared error) to a 1e-6 gap against lsmr, C = 1", "",
              "| dataset | nesvm s | lsmr s | objective nesvm / lsmr |", "|---|---|---|---|"]
    for name, X, labels, _, _ in sets if "ls" in sections else []:
        y = as_pm(labels)
        ls_problem = subproblem("nesvm", X, y, 1.0, 1e-6, args.threads, loss="squared_error", max_iter=10**6)
        seconds, ls, _ = timed(lambda: get_solver("nesvm").solve(ls_problem), 1)  # noqa: B023 (called here)
        lsmr_seconds, lsmr_value = lsmr_ls_svm(X, y, 1.0)
        lines.append(f"| {name} | {seconds:.2f} | {lsmr_seconds:.2f} | {ls.objective:.10g} / {lsmr_value:.10g} |")
        print(lines[-1], flush=True)

    if "threads" in sections:
        name, X, labels, _, _ = max(sets, key=lambda s: s[1].nnz)
        y = as_pm(labels)
        per_pass = {}
        for threads in (1, 2):
            nes = nesvm_side(X, y, 1.0, 1e-2, args.repeat, threads)
            per_pass[threads] = nes["seconds"] / nes["passes"]
        lines += ["", f"Threads on {name} (C = 1, gap 1e-2): {1e3 * per_pass[1]:.2f} ms per pass on 1 thread, "
                  f"{1e3 * per_pass[2]:.2f} on 2: {per_pass[1] / per_pass[2]:.2f}x"]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
