"""Same results check for a refactor of SSsNAL: 25 solves (linear a9a, w8a, phishing, mushrooms at
C = 1, 32 and tol 1e-3, 1e-6; abalone epsilon-SVR; the kernel front end on mushrooms, a1a and
svmguide1, whose Newton systems go to the sparse-kernel CG; a polynomial kernel; Nystroem; a
text-like set whose Newton systems go to CG; five kernel solves whose Newton systems are forced
to the coefficient CG by the Config), one line each: outer iterations, Newton steps,
passes, trials, CG iterations, kernel values, the systems chosen, objective, rho and a hash of the
coefficients. Run it with the interpreter of the install before and after the change and diff
the outputs without the times (the last field, t=):

    /path/to/venv-before/bin/python tools/check_same_ssnal.py > before.txt
    python tools/check_same_ssnal.py > after.txt
    diff <(sed 's/ t=.*//' before.txt) <(sed 's/ t=.*//' after.txt)

--threads N solves with N threads (the bits must not depend on it either).
"""
import functools
import hashlib
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from benchlib.data import DATA_DIR
from benchlib.report import parser as make_parser
from benchlib.synthetic import text_like_blocks
from fastsvm.csr import to_csr
from fastsvm.files.datafile import load_svmlight_file
from fastsvm.params import Params
from fastsvm.solvers import get_solver
from fastsvm.solvers.base import Kernel, Subproblem
from fastsvm.solvers.ssnal import Config

DATA = DATA_DIR
LINEAR = Kernel("linear")


def read(name, data_dir):
    X, y = load_svmlight_file(str(data_dir / name), zero_based=False)
    return to_csr(X), np.asarray(y, dtype=np.float64)


def digest(values):
    return hashlib.sha1(np.ascontiguousarray(values, dtype=np.float64).tobytes()).hexdigest()[:10]


# the kernel front end's Newton systems on its cached columns (kernel_newton.coefficient_cg):
# small dense limits and no sparse K_UU
COEFFICIENT_CG = {"dense_j_max": 60, "always_dense_j": 30, "sparse_min_rows": 10**9}


def solve(name, X, y, C, tol, formulation="c_svc", kernel=LINEAR, solver="ssnal", threads=1, **knobs):
    if formulation == "c_svc":
        y = np.where(y == y[0], 1.0, -1.0)
    params = Params(svm_type=formulation, solver=solver, C=C, tol=tol, epsilon=0.1,
                    config=Config(**knobs) if knobs else None)
    sub = Subproblem(formulation, X, y, np.full(len(y), C), kernel, params, n_threads=threads)
    start = time.perf_counter()
    solution = get_solver(solver).solve(sub)
    seconds = time.perf_counter() - start
    details = solution.details.get("linear", solution.details)
    counts = {key: details[key] for key in ("newton", "passes", "trials", "cg", "rounds", "kernel_values")
              if key in details}
    print(f"{name:10s} {formulation:11s} {kernel.kind:6s} C={C:<5g} tol={tol:g} outer={solution.n_iter} {counts} "
          f"{knobs or ''} sys={details.get('systems')} obj={solution.objective!r} rho={solution.rho!r} "
          f"coef={digest(solution.coef)} t={seconds:.3f}", flush=True)


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    data_dir = args.data_dir
    run = functools.partial(solve, threads=args.threads)
    for name in ("a9a", "w8a", "phishing", "mushrooms"):
        X, y = read(name, data_dir)
        for C in (1, 32):
            for tol in (1e-3, 1e-6):
                run(name, X, y, C, tol)
    X, y = read("abalone_scale", data_dir)
    for tol in (1e-3, 1e-6):
        run("abalone", X, y, 1.0, tol, formulation="epsilon_svr")
    X, y = read("mushrooms", data_dir)
    run("mushrooms", X, y, 1.0, 1e-3, kernel=Kernel("rbf", gamma=1 / 112))
    X, y = read("a1a", data_dir)
    run("a1a", X, y, 1.0, 1e-3, kernel=Kernel("rbf", gamma=1 / 119))
    run("a1a", X, y, 1.0, 1e-3, kernel=Kernel("polynomial", gamma=1 / 119, degree=3, coef0=0.0))
    run("a1a", X, y, 1.0, 1e-3, kernel=Kernel("rbf", gamma=1 / 119), solver="nystroem")
    X, y = read("svmguide1", data_dir)
    run("svmguide1", X, y, 1.0, 1e-3, kernel=Kernel("rbf", gamma=1 / 4))
    blocks = list(text_like_blocks(4000, seed=0, part="train"))
    X = to_csr(sp.vstack([block[0] for block in blocks], format="csr"))
    y = np.concatenate([block[1] for block in blocks]).astype(np.float64)
    run("text4k", X, y, 1.0, 1e-3)
    run("text4k", X, y, 32.0, 1e-6)
    X, y = read("a1a", data_dir)
    for C in (1.0, 32.0):
        run("a1a", X, y, C, 1e-3, kernel=Kernel("rbf", gamma=1 / 119), **COEFFICIENT_CG)
    run("a1a", X, y, 1.0, 1e-3, kernel=Kernel("rbf", gamma=2.0), always_dense_j=30, sparse_min_rows=10**9)
    X, y = read("mushrooms", data_dir)
    run("mushrooms", X, y, 1.0, 1e-3, kernel=Kernel("rbf", gamma=1 / 112), dense_j_max=100, always_dense_j=50,
        sparse_min_rows=10**9)
    X, y = read("svmguide1", data_dir)
    run("svmguide1", X, y, 1.0, 1e-3, kernel=Kernel("rbf", gamma=1 / 4), always_dense_j=100)


if __name__ == "__main__":
    main()
