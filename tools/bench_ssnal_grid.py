"""SSsNAL on the RBF kernel across the (C, gamma) grid users tune over, side by side
with fastsvm's SMO, its blocked solver (block_smo) and LIBSVM (libsvm-official), one run.

Cells: binary C-SVC, RBF kernel, on each dataset (a9a, w8a, ijcnn1 tested on their .t files;
mushrooms, phishing on bench_smo's seeded 80/20 split) for every gamma in --gammas (default
1/n_features, 0.05, 0.5) and C in --Cs (default 0.1, 1, 10). Four sides per cell (--sides: some
of them), each with 2 threads and the same -e and -m: fastsvm -s ssnal (--ssnal-option: its -o
options), fastsvm -s smo and -s block_smo (n_jobs = 2) and LIBSVM (OMP_NUM_THREADS = 2, set
before the library loads). Every run is a fresh process measured by
benchlib.rbf_child, as tools/bench_ssnal_kernel.py's runs (bench_smo's protocol: data loaded and a warm-up training
on a few rows before the clock starts; wall time of training only; peak = extra resident memory
during training; test accuracy). Runs are interleaved (repeat r of every side before
repeat r + 1) and the table shows medians. A run that passes --timeout seconds is killed and
reported as timed out (that side is not run again in the cell); the grid goes on. The limit
covers the run's whole process (loading, warm-up, training).

For every solution the script recomputes, from the returned dual vector, the dual objective and
eta (docs/algorithms.md §0: relative KKT residual) with fastsvm's kernel products
(benchlib.measures.dual_quality), so the stopping rules' accuracies can be compared.

Targets per cell: SSsNAL <= 0.5x LIBSVM's time and <= 1.0x SMO's, test accuracy
within 0.1 pp of LIBSVM's, SSsNAL's peak <= LIBSVM's peak + the -m budget; and SSsNAL
<= 1.5x block_smo's time (where its free sets make Newton steps dear, it hands over to block_smo).

--check trains one quick cell and holds the recomputed eta and objective against a pure-NumPy
twin (dense kernel, projection by bisection) and SSsNAL's own reported eta: the script's
arithmetic checked in seconds.

    python tools/bench_ssnal_grid.py --out bench_out/ssnal_grid.md --json bench_out/ssnal_grid.json
    python tools/bench_ssnal_grid.py --datasets mushrooms,phishing --repeat 1
    python tools/bench_ssnal_grid.py --quick --datasets mushrooms --gammas 0.05 --Cs 1
    python tools/bench_ssnal_grid.py --datasets w8a --gammas 0.1 --Cs 4 --sides ssnal,block_smo --repeat 1
    python tools/bench_ssnal_grid.py --datasets w8a --sides ssnal --ssnal-option handover=0 --timeout 120
    python tools/bench_ssnal_grid.py --check
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

from benchlib.data import DATA_DIR
from benchlib.kernel_sets import QUICK_TEST, QUICK_TRAIN, load, save
from benchlib.measures import dual_quality
from benchlib.rbf_child import TOOLS, child_command
from benchlib.rbf_child import option as option_of
from benchlib.report import machine_line, parser, rule, run_and_report

DATASETS = ("a9a", "w8a", "ijcnn1", "mushrooms", "phishing")
GAMMAS = "1/n,0.05,0.5"       # "1/n": 1/n_features of the training file, LIBSVM's default
CS = "0.1,1,10"
THREADS = 2
SIDES = (("fastsvm", "ssnal"), ("fastsvm", "smo"), ("fastsvm", "block_smo"),
         ("libsvm", "libsvm"))   # (child side, solver = column)
TARGET_VS_LIBSVM = 0.5        # SSsNAL time / LIBSVM time
TARGET_VS_SMO = 1.0           # SSsNAL time / SMO time
TARGET_VS_BLOCKED = 1.5       # SSsNAL time / block_smo time
TARGET_ACCURACY_PP = 0.1
MB = 2**20


# ---------------------------------------------------------------- runs (parent)

def run_side(side, solver, npz, C, gamma, args):
    """One measured run: the child's JSON record, or {"status": "timeout" | "failed", ...}."""
    cmd, env = child_command(side, THREADS, npz, C, gamma, args.e, args.m, solver=solver,   # LIBSVM ignores it
                             fastsvm_e=args.ssnal_e if solver == "ssnal" else None,
                             options=args.ssnal_option if solver == "ssnal" else ())
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=TOOLS, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout"}
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[-1]
        return {"status": "failed", "error": last}
    return {"status": "ok", **json.loads(out.stdout.strip().splitlines()[-1])}


def bench_cell(X, y, npz, gamma, C, args):
    """{column: summary} of one (gamma, C) cell: medians of the runs, the recomputed dual
    objective and eta of the first run's solution."""
    runs = {name: [] for _, name in SIDES if name in args.sides}
    for _ in range(args.repeat):
        for side, name in SIDES:
            if name not in runs:
                continue
            if runs[name] and runs[name][-1]["status"] != "ok":
                continue    # a side that timed out or failed is not run again in this cell
            runs[name].append(run_side(side, name, npz, C, gamma, args))
            r = runs[name][-1]
            print(f"  gamma {gamma:.4g} C {C:g} {name}: "
                  + (f"{r['seconds']:.2f} s" if r["status"] == "ok" else r["status"] + " " + r.get("error", "")),
                  file=sys.stderr, flush=True)
    cell = {name: {"status": "not run"} for _, name in SIDES if name not in runs}
    for name, rs in runs.items():
        ok = [r for r in rs if r["status"] == "ok"]
        if len(ok) < len(rs):
            cell[name] = {"status": rs[-1]["status"], "error": rs[-1].get("error", "")}
            continue
        first = ok[0]
        objective, eta = dual_quality(X, y, C, gamma, first)
        cell[name] = {"status": "ok", "seconds": statistics.median(r["seconds"] for r in ok),
                      "peak": statistics.median(r["peak"] for r in ok), "accuracy": first["metric"],
                      "n_sv": first["n_sv"], "objective": objective, "eta": eta,
                      "own_stop_measure": first["eta"]}
    return cell


def positive_values(text, allow_default=False):
    """A comma-separated list of positive numbers (argparse type); "1/n" (allow_default) stands
    for 1/n_features and becomes None."""
    values = []
    for item in (part.strip() for part in text.split(",")):
        if allow_default and item == "1/n":
            values.append(None)
            continue
        try:
            value = float(item)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {item!r}") from None
        if not (value > 0 and math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"not a positive number: {item!r}")
        values.append(value)
    return values


def sides_of(text):
    """A comma-separated list of side names (argparse type)."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    known = [name for _, name in SIDES]
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"sides are some of {', '.join(known)} (got {text!r})")
    return names


def shown(values):
    return ", ".join("1/n" if v is None else f"{v:g}" for v in values)


def bench(name, args, tmpdir):
    X, y, Xt, yt, how, default_gamma = load(args.data_dir, name, args.quick)   # 1/n_features of the file
    npz = os.path.join(tmpdir, f"{name}.npz")
    save(npz, X, y, Xt, yt)
    print(f"{name}:", file=sys.stderr, flush=True)
    cells = []
    for gamma in (default_gamma if g is None else g for g in args.gammas):
        for C in args.Cs:
            cells.append({"gamma": gamma, "C": C, "sides": bench_cell(X, y, npz, gamma, C, args)})
    row = {"name": name, "n": X.shape[0], "n_test": Xt.shape[0], "how": how, "cells": cells}
    if args.json:
        append_json(args.json, row)
    return row


def append_json(path, row):
    """Each dataset's results as one JSON line, appended as it completes (a later solver run can
    be compared cell by cell)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps(row) + "\n")


# ---------------------------------------------------------------- report

SIDE_NAMES = "SSsNAL / SMO / block_smo / LIBSVM"
HEADER = (f"| dataset | γ | C | s {SIDE_NAMES} | SSsNAL / LIBSVM | SSsNAL / SMO | SSsNAL / block_smo "
          f"| test acc. {SIDE_NAMES} | Δacc. SSsNAL − LIBSVM (pp) | peak MB {SIDE_NAMES} "
          f"| η {SIDE_NAMES} | dual obj. {SIDE_NAMES} | dual obj. rel. diff. SSsNAL − LIBSVM "
          f"| nSV {SIDE_NAMES} "
          "| targets |")
RULE = rule(HEADER)


def targets(cell, m):
    """{target: True / False / None (not measurable: a side timed out, failed or was not run)} of
    one cell."""
    s, smo, blocked, lib = (cell[name] for _, name in SIDES)
    ok = {name: cell[name]["status"] == "ok" for _, name in SIDES}
    if s["status"] == "not run":
        return {"vs LIBSVM": None, "vs SMO": None, "vs block_smo": None, "accuracy": None, "memory": None}
    if not ok["ssnal"]:
        return {"vs LIBSVM": False, "vs SMO": False, "vs block_smo": False, "accuracy": False, "memory": False}
    return {"vs LIBSVM": s["seconds"] <= TARGET_VS_LIBSVM * lib["seconds"] if ok["libsvm"] else None,
            "vs SMO": s["seconds"] <= TARGET_VS_SMO * smo["seconds"] if ok["smo"] else None,
            "vs block_smo": s["seconds"] <= TARGET_VS_BLOCKED * blocked["seconds"] if ok["block_smo"] else None,
            "accuracy": (abs(s["accuracy"] - lib["accuracy"]) * 100 <= TARGET_ACCURACY_PP + 1e-9
                         if ok["libsvm"] else None),
            "memory": s["peak"] <= lib["peak"] + m * MB if ok["libsvm"] else None}


def _each(cell, fmt):
    return " / ".join(fmt(cell[name]) if cell[name]["status"] == "ok" else cell[name]["status"]
                      for _, name in SIDES)


def _ratio(cell, a, b):
    if cell[a]["status"] != "ok" or cell[b]["status"] != "ok":
        return "-"
    return f"{cell[a]['seconds'] / cell[b]['seconds']:.2f}"


def cell_line(name, c, args):
    cell = c["sides"]
    met = targets(cell, args.m)
    missed = [t for t, v in met.items() if v is False]
    unknown = [t for t, v in met.items() if v is None]
    verdict = ("all met" if not missed and not unknown else
               ", ".join((["missed: " + ", ".join(missed)] if missed else [])
                         + (["not measured: " + ", ".join(unknown)] if unknown else [])))
    s, lib = cell["ssnal"], cell["libsvm"]
    both = s["status"] == "ok" and lib["status"] == "ok"
    dacc = f"{100 * (s['accuracy'] - lib['accuracy']):+.2f}" if both else "-"
    dobj = f"{(s['objective'] - lib['objective']) / abs(lib['objective']):.1e}" if both else "-"
    if cell["ssnal"]["status"] == "timeout":
        verdict += f" (SSsNAL > {args.timeout:g} s)"
    return (f"| {name} | {c['gamma']:.4g} | {c['C']:g} "
            f"| {_each(cell, lambda r: format(r['seconds'], '.2f'))} "
            f"| {_ratio(cell, 'ssnal', 'libsvm')} | {_ratio(cell, 'ssnal', 'smo')} "
            f"| {_ratio(cell, 'ssnal', 'block_smo')} "
            f"| {_each(cell, lambda r: format(100 * r['accuracy'], '.2f') + '%')} | {dacc} "
            f"| {_each(cell, lambda r: format(r['peak'] / MB, '.0f'))} "
            f"| {_each(cell, lambda r: format(r['eta'], '.1e'))} "
            f"| {_each(cell, lambda r: format(r['objective'], '.7g'))} | {dobj} "
            f"| {_each(cell, lambda r: str(r['n_sv']))} | {verdict} |")


def markdown_rows(row, args):
    return "\n".join(cell_line(row["name"], c, args) for c in row["cells"])


def header_line(args, load_before):
    mode = f"quick mode ({QUICK_TRAIN} training / {QUICK_TEST} test rows per set), " if args.quick else ""
    options = " ".join(f"-o {name}={value}" for name, value in args.ssnal_option)
    return (f"{machine_line(load_before)}. {mode}C-SVC, RBF kernel, -e {args.e:g} -m {args.m:g} for every side"
            + (f" (SSsNAL -e {args.ssnal_e:g})" if args.ssnal_e else "")
            + (f" (SSsNAL {options})" if options else "") + ", "
            f"{THREADS} threads each (fastsvm n_jobs, LIBSVM OMP_NUM_THREADS); γ in {shown(args.gammas)} "
            f"(1/n = 1/n_features), C in {shown(args.Cs)}. Median of {args.repeat} run(s), interleaved, each a "
            f"fresh process; per-run limit {args.timeout:g} s. Wall time of training only; peak = extra "
            "resident memory during training; η (relative KKT residual, docs/algorithms.md §0) and the dual "
            "objective recomputed here from each returned dual vector. Targets: SSsNAL <= "
            f"{TARGET_VS_LIBSVM:g}x LIBSVM, <= {TARGET_VS_SMO:g}x SMO and <= {TARGET_VS_BLOCKED:g}x block_smo "
            "in time, accuracy within "
            f"{TARGET_ACCURACY_PP:g} pp of LIBSVM, peak <= LIBSVM's + -m.")


# ---------------------------------------------------------------- --check

def numpy_quality(X, y, C, gamma, run):
    """Pure-NumPy twin of dual_quality: dense RBF kernel, the projection onto
    {y'x = 0, 0 <= x <= C} by bisection on its multiplier."""
    A = X.toarray()
    sq = np.einsum("ij,ij->i", A, A)
    K = np.exp(-gamma * np.maximum(sq[:, None] + sq[None, :] - 2.0 * A @ A.T, 0.0))
    s = np.where(y == run["label"], 1.0, -1.0)
    x = np.zeros(y.shape[0])
    x[np.asarray(run["rows"], dtype=np.int64)] = s[run["rows"]] * np.asarray(run["coef"])
    grad = s * (K @ (s * x)) - 1.0
    z = x - grad

    def excess(lam):
        return s @ np.clip(z - lam * s, 0.0, C)     # decreasing in lam

    lo, hi = -1.0, 1.0
    while excess(lo) < 0:
        lo *= 2
    while excess(hi) > 0:
        hi *= 2
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
    projected = np.clip(z - 0.5 * (lo + hi) * s, 0.0, C)
    eta = np.linalg.norm(x - projected) / (1.0 + np.linalg.norm(x) + np.linalg.norm(grad))
    return 0.5 * float(x @ (grad + 1.0)) - float(x.sum()), eta


def check(args, tmpdir):
    """Exit status 0 when the recomputed (objective, eta) of each side's solution on one quick
    cell equals the NumPy twin's, and SSsNAL's recomputed eta equals the eta it reports."""
    X, y, Xt, yt, _, _ = load(args.data_dir, "mushrooms", True)
    npz = os.path.join(tmpdir, "check.npz")
    save(npz, X, y, Xt, yt)
    gamma, C, failures = 0.05, 1.0, []
    for side, name in SIDES:
        if name not in args.sides:
            continue
        run = run_side(side, name, npz, C, gamma, args)
        if run["status"] != "ok":
            failures.append(f"{name}: {run['status']} {run.get('error', '')}")
            continue
        objective, eta = dual_quality(X, y, C, gamma, run)
        twin_objective, twin_eta = numpy_quality(X, y, C, gamma, run)
        print(f"{name}: objective {objective:.12g} (twin {twin_objective:.12g}), eta {eta:.6e} "
              f"(twin {twin_eta:.6e}, solver's own stop measure {run['eta']:.6e})")
        if not math.isclose(objective, twin_objective, rel_tol=1e-9):
            failures.append(f"{name}: objective differs from the twin's")
        if not math.isclose(eta, twin_eta, rel_tol=1e-6, abs_tol=1e-12):
            failures.append(f"{name}: eta differs from the twin's")
        if name == "ssnal" and not math.isclose(eta, run["eta"], rel_tol=1e-3, abs_tol=1e-12):
            failures.append("ssnal: recomputed eta differs from the eta SSsNAL reports")
    print("check: " + ("passed" if not failures else "FAILED: " + "; ".join(failures)))
    return 1 if failures else 0


def main(argv=None):
    import tempfile
    ap = parser(__doc__)
    ap.add_argument("--data-dir", default=str(DATA_DIR))
    ap.add_argument("--datasets", default=",".join(DATASETS), help=f"comma-separated, from: {', '.join(DATASETS)}")
    ap.add_argument("--gammas", default=GAMMAS, type=lambda text: positive_values(text, allow_default=True),
                    help="comma-separated; 1/n = 1/n_features (default %(default)s)")
    ap.add_argument("--Cs", default=CS, type=positive_values, help="comma-separated (default %(default)s)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per side and cell (medians)")
    ap.add_argument("--e", type=float, default=1e-3, help="stopping tolerance (-e) of every side")
    ap.add_argument("--ssnal-e", type=float, default=None,
                    help="SSsNAL's tolerance (eta) alone, e.g. to reach the eta SMO and LIBSVM reach at -e")
    ap.add_argument("--sides", default=",".join(name for _, name in SIDES), type=sides_of,
                    help="comma-separated sides to run (default %(default)s)")
    ap.add_argument("--ssnal-option", type=option_of, action="append", default=[],
                    help="an -o name=value of the ssnal side (e.g. handover=0), repeatable")
    ap.add_argument("--m", type=float, default=100.0, help="kernel cache MB (-m) of every side")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds after which a run is killed")
    ap.add_argument("--quick", action="store_true", help=f"train on seeded {QUICK_TRAIN}-row subsets")
    ap.add_argument("--check", action="store_true", help="check the eta / objective recomputation on one quick cell")
    ap.add_argument("--out", help="write the markdown report here")
    ap.add_argument("--json", help="append each dataset's raw results here, one JSON line per dataset")
    args = ap.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory() as tmpdir:
            return check(args, tmpdir)
    return run_and_report("# SSsNAL (RBF) across the (C, γ) grid: SSsNAL vs SMO vs LIBSVM", ap, args, DATASETS,
                          bench, lambda row: markdown_rows(row, args), HEADER, RULE, header_line)


if __name__ == "__main__":
    sys.exit(main())
