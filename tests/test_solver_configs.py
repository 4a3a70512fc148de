"""The typed configs of smo, dcd, primal_newton, l1_cd and crammer_singer: a knob set through
Params(config=...) reaches the solve, a config of another solver is refused in one line, and every
solve reports its status as a SolveStatus."""
import dataclasses

import numpy as np
import pytest

from fastsvm.csr import to_csr
from fastsvm.errors import ParameterError
from fastsvm.params import Params
from fastsvm.solvers import crammer_singer, dcd, l1_cd, primal_newton, smo
from fastsvm.solvers.base import Kernel, SolveStatus, Subproblem

LINEAR = (dcd, primal_newton, l1_cd, crammer_singer)


def _problem(module, params, C=10.0):
    """A small noisy binary problem (class positions for crammer_singer); at C = 10 no solver
    reaches tol = 1e-12 in two iterations."""
    rng = np.random.default_rng(3)
    X = to_csr(rng.normal(size=(300, 8)))
    y = np.where(X @ np.ones(8) + rng.normal(scale=2.0, size=300) > 0, 1.0, -1.0)
    if module is crammer_singer:
        y = (y > 0).astype(float)
    kernel = Kernel("rbf", gamma=0.1) if module is smo else Kernel("linear")
    return Subproblem("c_svc", X, y, np.full(300, C), kernel, params)


@pytest.mark.parametrize("module", LINEAR, ids=lambda m: m.SOLVER.name)
def test_linear_iteration_cap_comes_from_the_config(module):
    default = module.solve(_problem(module, Params(tol=1e-12, loss="squared_hinge")))
    capped = module.solve(_problem(module, Params(tol=1e-12, loss="squared_hinge",
                                                  config=module.Config(max_iter=2))))
    assert default.n_iter > 2
    assert capped.n_iter == 2 and capped.status is SolveStatus.MAX_ITER
    # Params.max_iter (-M) still wins over the config's default
    explicit = module.solve(_problem(module, Params(tol=1e-12, loss="squared_hinge", max_iter=3,
                                                    config=module.Config(max_iter=2))))
    assert explicit.n_iter == 3


@pytest.mark.parametrize("module", (smo, *LINEAR), ids=lambda m: m.SOLVER.name)
def test_status_is_a_solve_status_and_foreign_configs_are_refused(module):
    solution = module.solve(_problem(module, Params(loss="squared_hinge"), C=0.1))
    assert isinstance(solution.status, SolveStatus) and solution.status is SolveStatus.CONVERGED
    assert module.SOLVER.config is module.Config
    other = dcd if module is not dcd else smo
    with pytest.raises(ParameterError, match=f"config must be a {module.Config.__name__}"):
        module.solve(_problem(module, Params(loss="squared_hinge", config=other.Config())))


def test_smo_chunking_knobs_change_the_chunks_not_the_result():
    lines, one_chunk_lines = [], []
    sub = _problem(smo, Params(tol=1e-6, config=smo.Config(first_chunk=5, chunk_seconds=1e-9)))
    sub.log = lines.append
    chunked = smo.solve(sub)
    whole = dataclasses.replace(sub, params=Params(tol=1e-6, config=smo.Config(first_chunk=10**9)),
                                log=one_chunk_lines.append)
    single = smo.solve(whole)
    assert len(lines) > 2 and len(one_chunk_lines) == 1
    np.testing.assert_array_equal(chunked.coef, single.coef)
    assert chunked.n_iter == single.n_iter and chunked.rho == single.rho


def test_primal_newton_line_search_knobs_are_used():
    default = primal_newton.solve(_problem(primal_newton, Params(tol=1e-6)))
    # a sufficient decrease no step can meet: the first line search fails
    strict = primal_newton.solve(_problem(primal_newton, Params(
        tol=1e-6, config=primal_newton.Config(armijo=10.0, max_halvings=3))))
    assert default.status is SolveStatus.CONVERGED
    assert strict.status is SolveStatus.LINE_SEARCH_FAILED and strict.n_iter == 0
