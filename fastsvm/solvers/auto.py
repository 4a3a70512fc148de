"""solver="auto" (-s auto): each subproblem of LIBSVM's formulations goes to the solver that
tools/bench_kernel.py finds the quicker at its size: block_smo from BLOCKED_FROM dual variables on
(its outer steps' fixed costs are then paid back), smo below. Both give LIBSVM's optimum at -e; only
smo takes LIBSVM's steps.
"""
from dataclasses import replace

from ..csr import is_dense, to_csr
from ..problems.libsvm_dual import FORMULATIONS
from . import get_solver
from .base import Solver

# dual variables from which block_smo is taken: where its outer steps' fixed costs are measured to
# be paid back (tools/bench_kernel.py; the figures are in the commit that set it)
BLOCKED_FROM = 6000


def blocked(n_rows, formulation):
    """Whether a subproblem of n_rows rows goes to block_smo."""
    return (2 * n_rows if formulation in ("epsilon_svr", "nu_svr") else n_rows) >= BLOCKED_FROM


def pick(sub):
    """The Solver that solves ``sub``."""
    return get_solver("block_smo" if blocked(sub.y.shape[0], sub.formulation) else "smo")


def _for(spec, sub):
    """sub as ``spec`` reads it: dense rows made CSR (the subproblem's only: a smaller pair of a
    training whose largest subproblem is blocked) for a solver that reads CSR."""
    if spec.reads_dense(sub.y.shape[0], sub.formulation) or not is_dense(sub.X):
        return sub
    X = sub.X if sub.rows is None else sub.X[sub.rows]
    return replace(sub, X=to_csr(X), rows=None)


def solve(sub):
    spec = pick(sub)
    return spec.solve(_for(spec, sub))


def solve_path(sub, Cs, state=None):
    spec = pick(sub)
    return spec.solve_c_path(_for(spec, sub), Cs)


class Auto(Solver):
    name = "auto"
    formulations = FORMULATIONS
    kernels = ("linear", "polynomial", "rbf", "sigmoid", "precomputed")
    description = f"block_smo for subproblems of {BLOCKED_FROM} dual variables and more, smo below"
    stop_measure = "the maximal violating pair's gap m(alpha) - M(alpha)"
    stops_on_signals = True
    limits_blas_itself = True   # smo or block_smo

    solve = staticmethod(solve)

    def reads_dense(self, n_rows, formulation):
        # dense rows are kept where the whole training (its largest subproblem) is blocked
        return blocked(n_rows, formulation)

    solve_c_path = staticmethod(solve_path)


SOLVER = Auto()
