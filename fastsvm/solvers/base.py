"""What every solver takes and returns. A solver solves one binary (or regression, or one-class)
subproblem; fastsvm.train splits multi-class data and assembles the model."""
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ..params import Params


@dataclass(frozen=True)
class Kernel:
    """k(x, z): linear x.z, polynomial (gamma x.z + coef0)^degree, rbf exp(-gamma |x - z|^2),
    sigmoid tanh(gamma x.z + coef0), precomputed (X holds the kernel values)."""

    kind: str
    gamma: float = 0.0
    degree: int = 3
    coef0: float = 0.0


@dataclass
class Subproblem:
    """One problem of ALGORITHMS.md section 0 for one solver call.

    X : canonical CSR (fastsvm.csr.to_csr), the rows of this subproblem only.
    y : +1/-1 for classification, targets for regression, ones for one-class.
    upper : per-sample upper bound C_i (C x class weight x sample weight).
    stop : int32[1]; the main thread sets stop[0] = 1 on Ctrl-C and the solver must return (by
        raising KeyboardInterrupt) within a second.
    log : called with one line of progress per outer iteration when verbose, else None.
    """

    formulation: str
    X: sp.csr_matrix
    y: np.ndarray
    upper: np.ndarray
    kernel: Kernel
    params: Params
    seed: int = 0
    stop: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int32))
    log: Callable[[str], None] | None = None
    n_threads: int = 1


@dataclass
class Solution:
    """coef[i] is y_i alpha_i (alpha_i - alpha_i^* for regression); the decision value is
    sum_i coef[i] k(x_i, x) - rho. ``w`` is the primal weight vector for linear solvers (then
    decision = w.x - rho). ``kkt`` is the solver's final stopping measure."""

    coef: np.ndarray
    rho: float
    w: np.ndarray | None = None
    objective: float = float("nan")
    n_iter: int = 0
    kkt: float = float("nan")
    status: str = "converged"  # or "max_iter"
    history: list = field(default_factory=list)
    info: dict = field(default_factory=dict)


@dataclass(frozen=True)
class SolverSpec:
    """A registered solver: its name on the command line (-s NAME) and in Python (solver=NAME),
    what it can solve, and how multi-class problems are split for it."""

    name: str
    solve: Callable[[Subproblem], Solution]
    formulations: tuple
    kernels: tuple
    multiclass: str  # "ovo" (LIBSVM) or "ovr" (LIBLINEAR)
    default_kernel: str
    default_tol: float
    description: str = ""
