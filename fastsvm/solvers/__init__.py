"""Solver registry: -s NAME / solver=NAME look here. Each solver module exposes SOLVER (an
instance of its Solver subclass) and is imported on first look-up, so naming solvers costs no
solver's imports."""
import importlib
from collections.abc import MutableMapping

from ..errors import ParameterError
from .base import Kernel, Solution, Solver, Subproblem


class SolverRegistry(MutableMapping):
    """name -> Solver; a name maps to its module until its SOLVER is first asked for."""

    def __init__(self, modules):
        self._modules = dict(modules)
        self._specs = {}

    def __getitem__(self, name):
        if name not in self._specs:
            module = self._modules[name]  # KeyError: not a solver
            self._specs[name] = importlib.import_module(f"{__name__}.{module}").SOLVER
        return self._specs[name]

    def __setitem__(self, name, spec):
        self._modules.setdefault(name, None)
        self._specs[name] = spec

    def __delitem__(self, name):
        del self._modules[name]
        self._specs.pop(name, None)

    def __iter__(self):
        return iter(self._modules)

    def __len__(self):
        return len(self._modules)


SOLVERS = SolverRegistry({name: name for name in ("dcd", "smo", "ssnal", "nystroem", "primal_newton", "l1_cd",
                                                  "crammer_singer", "nesvm", "alm", "dcdm", "admm", "block_smo",
                                                  "auto")})


def get_solver(name):
    try:
        return SOLVERS[name]
    except KeyError:
        raise ParameterError(f"unknown solver {name!r} (available: {', '.join(sorted(SOLVERS))})") from None


__all__ = ["SOLVERS", "get_solver", "Kernel", "Solution", "Solver", "Subproblem"]
