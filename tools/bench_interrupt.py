"""Ctrl-C latency of every solver through fastsvm-train, at -j 1 and -j 2, on a busy machine.

For each solver: start a long run (the options of tests/test_interrupt.py), wait for its first
progress line, let it run a random 0.3-1.5 s more, send SIGINT and time the exit; a process
burning a CPU runs alongside the whole time. Prints the median and the largest latency of
``--repeats`` runs per case (target: <= 1 s), and checks each run ended as it should (exit 130,
one stderr line).

    python tools/bench_interrupt.py [--repeats 3] [--solvers smo,dcd]
"""
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from benchlib.report import parser as make_parser
import fastsvm

BIN = Path(sys.executable).parent
LONG_RUNS = {
    "dcd": ["-s", "dcd", "-c", "1000", "-e", "1e-12", "-M", "100000000"],
    "smo": ["-s", "smo", "-c", "1000", "-g", "10", "-e", "1e-12"],
    "ssnal": ["-s", "ssnal", "-c", "1000", "-e", "1e-300", "-M", "100000000"],
    "ssnal_rbf": ["-s", "ssnal", "-t", "2", "-c", "1000", "-e", "1e-300", "-M", "100000000"],
    "nystroem": ["-s", "nystroem", "-c", "1000", "-e", "1e-300", "-M", "100000000", "-o", "landmarks=1000"],
    "primal_newton": ["-s", "primal_newton", "-c", "1e6", "-e", "1e-300", "-M", "100000000"],
    "l1_cd": ["-s", "l1_cd", "-c", "1000", "-e", "1e-300", "-M", "100000000"],
    "crammer_singer": ["-s", "crammer_singer", "-c", "1000", "-e", "1e-300", "-M", "100000000"],
}


def hard_problem(folder):
    rng = np.random.default_rng(0)
    X = sp.random(6000, 300, density=0.1, random_state=1, format="csr")
    y = np.where(rng.random(6000) < 0.5, 1, -1)
    path = folder / "hard.libsvm"
    fastsvm.dump_svmlight_file(X, y, path, zero_based=False)
    return path


def one_interrupt(args, data, model, wait):
    # SIGINT's default in the child: started from a background job it would inherit SIG_IGN and keep it
    proc = subprocess.Popen([str(BIN / "fastsvm-train"), *args, str(data), str(model)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    if not proc.stdout.readline():
        proc.kill()
        raise SystemExit(f"{args}: no progress line")
    time.sleep(wait)
    if proc.poll() is not None:
        raise SystemExit(f"{args}: finished before the interrupt")
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    latency = time.monotonic() - sent
    stderr = proc.stderr.read().strip()
    clean = proc.returncode == 130 and stderr == "fastsvm-train: interrupted"
    return latency, clean


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--solvers", default=",".join(LONG_RUNS))
    opts = parser.parse_args()
    rng = random.Random(37)
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        with tempfile.TemporaryDirectory() as tmp:
            data = hard_problem(Path(tmp))
            print(f"{'solver':16s} {'-j':>3s} {'median s':>9s} {'max s':>7s}  clean")
            for name in opts.solvers.split(","):
                for jobs in ("1", "2"):
                    runs = [one_interrupt(["-j", jobs, *LONG_RUNS[name]], data, Path(tmp) / "m",
                                          rng.uniform(0.3, 1.5)) for _ in range(opts.repeats)]
                    latencies = [latency for latency, _ in runs]
                    print(f"{name:16s} {jobs:>3s} {statistics.median(latencies):9.3f} {max(latencies):7.3f}  "
                          f"{sum(clean for _, clean in runs)}/{len(runs)}", flush=True)
    finally:
        burner.kill()


if __name__ == "__main__":
    main()
