"""The nu-SVM path benchmarks' sets and fastsvm side (bench_srbo, srbo_floor): DCDM's nu path,
warm-started, with or without SRBO screening."""
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from fastsvm.csr import to_csr
from fastsvm.files.datafile import load_svmlight_file
from fastsvm.params import Params
from fastsvm.solvers.base import Kernel, Subproblem
from fastsvm.solvers.dcdm import solve_nu_path

GAMMA = 0.5            # RBF sigma = 1
NUS = [round(0.5 + 0.001 * k, 3) for k in range(101)]    # nu = 0.50:0.001:0.60


def gaussian_toy(per_class=1000, seed=0):
    """Two Gaussian classes in the plane, N((1, 1), I) and N((-1, -1), I)."""
    rng = np.random.default_rng(seed)
    A = np.vstack([rng.normal(1.0, 1.0, (per_class, 2)), rng.normal(-1.0, 1.0, (per_class, 2))])
    return sp.csr_matrix(A), np.concatenate([np.ones(per_class), -np.ones(per_class)])


def load(data_dir, name):
    """(CSR X, +-1 labels: +1 the first row's class) of a file in data_dir, or of "gaussian" (gaussian_toy)."""
    if name == "gaussian":
        return gaussian_toy()
    X, labels = load_svmlight_file(str(Path(data_dir) / name))
    return to_csr(X), np.where(labels == labels[0], 1.0, -1.0)


def fastsvm_path(X, y, kind, nus, tol, screening):
    """fastsvm's bias-in-kernel nu-SVC path over nus (solve_nu_path; screening False, True,
    "auto" or a screen function)."""
    params = Params(svm_type="nu_svc", solver="dcdm", kernel_type=kind, gamma=GAMMA, nu=nus[0], tol=tol)
    sub = Subproblem("nu_svc", X, y, np.ones(X.shape[0]), Kernel(kind, gamma=GAMMA), params)
    return solve_nu_path(sub, nus, screening=screening)
