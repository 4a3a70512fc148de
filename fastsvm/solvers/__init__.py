"""Solver registry: each solver module exposes SPEC (a SolverSpec); -s NAME / solver=NAME look here."""
from ..errors import ParameterError
from . import dcd, nystroem, smo, ssnal
from . import crammer_singer, l1_cd, primal_newton
from .base import Kernel, Solution, SolverSpec, Subproblem

SOLVERS = {spec.name: spec for spec in (dcd.SPEC, smo.SPEC, ssnal.SPEC, nystroem.SPEC)}
SOLVERS.update({spec.name: spec for spec in (primal_newton.SPEC, l1_cd.SPEC, crammer_singer.SPEC)})


def get_solver(name):
    try:
        return SOLVERS[name]
    except KeyError:
        raise ParameterError(f"unknown solver {name!r} (available: {', '.join(sorted(SOLVERS))})") from None


__all__ = ["SOLVERS", "get_solver", "Kernel", "Solution", "SolverSpec", "Subproblem"]
