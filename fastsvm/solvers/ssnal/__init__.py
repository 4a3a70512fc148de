"""SSsNAL: a sparse semismooth Newton augmented Lagrangian method on the SVM dual (Niu et al. 2019;
docs/algorithms.md §0-2).

The dual (P) min 1/2 x^T Q x + c^T x over K = {a^T x = d, 0 <= x <= u} (fastsvm.problems.dual)
has, for a linear kernel, Q = Z Z^T with Z = diag(y) X (C-SVC) or [X; -X] (epsilon-SVR), never
formed. The augmented Lagrangian method on the restricted dual is a proximal point method on (P):
outer iteration k minimises the strongly convex p-dimensional

    psi_k(v) = 1/2 |v|^2 + (|y|^2 - dist(y, K)^2) / (2 sigma_k),   y = x^k - sigma_k (Z v + c),
    grad psi_k(v) = v - Z^T Pi_K(y),

by semismooth Newton steps (I + sigma Z_J^T P_J Z_J) d = -grad, J the free set of the projection,
then sets x^{k+1} = Pi_K(y) and b = lam / sigma. Each Newton step costs one pass over X for Z d
(the line search then only projects) and a pass over the rows whose x changed for Z^T x; each
outer iteration one more pass for grad f(x) = Z Z^T x + c, shared by the stopping test eta and
the next warm start v = Z^T x^{k+1}.

The package, by concern (choices beyond the paper, chosen with tools/bench_ssnal.py and
tools/bench_ssnal_kernel.py, are described where they are made):
- config: the -o options and every tuning knob (Config);
- problem: (P) for a linear kernel (DualQP over StackedRows), equal samples merged
  (problems.presolve), the dual coordinate descent start of problems with many features;
- schedule: sigma_0 and its growth, the inner and the CG tolerances;
- newton: the Newton systems (dense Cholesky, SMW, CG) and their cost model;
- inner, linesearch: one inner solve, Z^T Pi_K(y) kept up to date, the step length;
- screening: rows held at their bounds during an inner solve, and their check;
- linear: the outer loop and the linear front end (solve_linear);
- warm, warm_path: the kernel front end's explicit-feature warm start; a path's warm start
  (a solution at other bounds scaled into the new box);
- kernel, kernel_inner, kernel_newton, working_set: the kernel front end (RBF, polynomial,
  sigmoid).
The O(nnz) and O(m) work is done by fastsvm._core._ssnal_linear, _ssnal_kernel and _knapsack.
"""
import dataclasses

from ...errors import ParameterError
from ...problems.dual import kkt_residual
from ...problems.presolve import merge_equal_samples
from ..base import Solution, Solver, Subproblem, checked_arrays, solve_path_warm, solver_config
from .config import DEFAULT_TOL, NONLINEAR, Config
from .kernel import solve_kernel
from .linear import solve_linear
from .problem import linear_dual, primal_objective

__all__ = ["SOLVER", "Config", "solve", "solve_path", "linear_dual", "kkt_residual", "primal_objective"]


def solve(sub: Subproblem, merge=True) -> Solution:
    """Solve one C-SVC or epsilon-SVR subproblem by SSsNAL (RBF, polynomial and sigmoid kernels:
    the kernel front end); `merge`: equal samples merged (linear_dual). A subproblem with a warm
    Solution (Subproblem.warm, of the same problem at other bounds) starts from it."""
    kind = sub.kernel.kind
    if kind not in ("linear",) + NONLINEAR:
        raise ParameterError(f"ssnal supports the linear, rbf, polynomial and sigmoid kernels (got {kind})")
    config = solver_config(SOLVER, sub.params, kind)
    if kind != "linear":
        return solve_kernel(sub, config)
    return solve_linear(sub, config, merge=merge, start=sub.warm)


def prepare(sub: Subproblem):
    """What a path over C reuses: for a linear kernel, the equal samples found once
    (problems.presolve.Merged at sub's bounds; a uniform C keeps the groups); else None."""
    if sub.kernel.kind != "linear":
        return None
    config = solver_config(SOLVER, sub.params, "linear")
    X, y, upper = checked_arrays(sub)
    return merge_equal_samples(X, y, upper, config.merge_min_share, sub.stop)


def solve_path(sub: Subproblem, Cs, state=None) -> list:
    """The problems with bounds C * sub.upper for each C of Cs in order (C > 0), each warm-started
    from the last one's solution (warm_path.scaled_dual); linear ones on the presolve of
    prepare(sub) (`state`, made here when None)."""
    config = solver_config(SOLVER, sub.params, sub.kernel.kind)
    if sub.kernel.kind != "linear":
        return solve_path_warm(lambda problem, C: solve_kernel(problem, config), sub, Cs)
    presolved = prepare(sub) if state is None else state

    def solve_one(problem, C):
        # the presolve's work counted once, by the first problem (the one started from sub.warm)
        passes = presolved.passes if problem.warm is sub.warm else 0.0
        scaled = dataclasses.replace(presolved, upper=presolved.upper * C, passes=passes)
        return solve_linear(dataclasses.replace(problem, warm=None), config, start=problem.warm, presolved=scaled)

    return solve_path_warm(solve_one, sub, Cs)


class SSsNAL(Solver):
    name = "ssnal"
    formulations = ("c_svc", "epsilon_svr")
    kernels = ("linear",) + NONLINEAR
    default_kernel = "linear"
    default_tol = DEFAULT_TOL
    description = "semismooth Newton augmented Lagrangian: C-SVC and epsilon-SVR to high accuracy"
    config = Config
    stop_measure = "eta, the relative KKT residual of docs/algorithms.md §0"

    solve = staticmethod(solve)
    prepare = staticmethod(prepare)
    solve_c_path = staticmethod(solve_path)


SOLVER = SSsNAL()
