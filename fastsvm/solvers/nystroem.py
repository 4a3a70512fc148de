"""Nystroem approximation as a solver: a kernel SVM trained as a linear one on Nystroem features,
returned as an ordinary kernel model on the landmarks.

For one subproblem: m landmarks are sampled from its rows (seeded), phi(x) = K(x, L) T with
T = U_r diag(lam_r)^-1/2 from K(L, L) (fastsvm.kernels.approximation), and the explicit problem
on phi(X) -- same formulation, per-sample bounds and tolerance, LIBSVM's unregularized bias -- is
solved by the registered ``ssnal`` solver. Its weights w give the decision value

    f(x) = phi(x) . w - rho = K(x, L) (T w) - rho,

a kernel expansion on the landmarks with coefficients beta = T w. The Solution puts beta on the
landmark rows and zeros elsewhere, so fastsvm.training.trainer assembles a LIBSVM model whose support
vectors are the landmarks (binary, regression and one-vs-one alike): fastsvm-predict and
LIBSVM's svm-predict then compute exactly the approximate model's predictions.

Options (params.options, -o name=value): ``landmarks`` (m, default min(n, 500)), ``rtol`` (the
eigenvalue cut, relative to the largest; default 1e-12), and the linear ssnal's options, passed on
(declared in Config below).
"""
import time
from dataclasses import fields, make_dataclass, replace

import numpy as np

from ..csr import dense_as_csr
from ..errors import ParameterError
from ..kernels.approximation import EIG_RTOL, nystroem_map, sample_landmarks
from . import get_solver
from .base import Kernel, Solution, Solver, Subproblem, checked_arrays, option, solver_config

DEFAULT_LANDMARKS = 500
OWN_OPTIONS = ("landmarks", "rtol")


def _linear_ssnal_fields():
    """The linear ssnal's options, for any kernel here: passed on to the solve on the features."""
    for f in fields(get_solver("ssnal").config):
        if "option" not in f.metadata:   # an internal knob, not an option
            continue
        kind, meaning, schema = f.metadata["option"]
        if "linear" in schema.get("kernels", ("linear",)):
            schema = {key: value for key, value in schema.items() if key != "kernels"}
            yield f.name, f.type, option(f.default, meaning, kind=kind, **schema)


# its own options, then the linear ssnal's
Config = make_dataclass("Config", [
    ("landmarks", "int | None", option(None, f"landmarks sampled, by default min(rows, {DEFAULT_LANDMARKS})",
                                       kind=int, low=1)),
    ("rtol", float, option(EIG_RTOL, "eigenvalues of K(L, L) kept: those above rtol times the largest",
                           low=0.0, below=1.0)),
    *_linear_ssnal_fields()], frozen=True)


def solve(sub: Subproblem) -> Solution:
    """Solve one C-SVC or epsilon-SVR subproblem on Nystroem features of its kernel."""
    params = sub.params
    if sub.formulation not in SOLVER.formulations:
        raise ParameterError(f"nystroem solves {' and '.join(SOLVER.formulations)}, not {sub.formulation}")
    config = solver_config(SOLVER, params, sub.kernel.kind)
    landmarks, rtol = config.landmarks, config.rtol
    ssnal_options = {name: getattr(config, name) for name in params.options or {} if name not in OWN_OPTIONS}
    X, y, upper = checked_arrays(sub)
    n = X.shape[0]
    m = min(n, DEFAULT_LANDMARKS if landmarks is None else landmarks)
    k = sub.kernel
    log = sub.log

    t0 = time.perf_counter()
    rows = np.sort(sample_landmarks(n, m, sub.seed))  # in row order: the model keeps data order
    fmap = nystroem_map(X, k.kind, k.gamma, k.degree, k.coef0, landmarks=rows, rtol=rtol,
                        n_threads=sub.n_threads)
    if log is not None:
        lam = fmap.eigenvalues
        log(f"nystroem: {m} landmarks, rank {fmap.n_components}"
            + (f" (eigenvalues {lam[-1]:.3g} .. {lam[0]:.3g})" if lam.size else "")
            + f"  time {time.perf_counter() - t0:.2f}s")
    if sub.stop[0]:
        raise KeyboardInterrupt

    t1 = time.perf_counter()
    features = fmap.transform(X, sub.n_threads, sub.stop)
    if fmap.n_components == 0:  # a kernel that vanishes on the landmarks: a bias-only model
        features = np.zeros((n, 1))
    if log is not None:
        log(f"nystroem: features {n} x {features.shape[1]}  time {time.perf_counter() - t1:.2f}s")

    linear = Subproblem(
        formulation=sub.formulation, X=dense_as_csr(features), y=y, upper=upper, kernel=Kernel(kind="linear"),
        params=replace(params, solver="ssnal", kernel_type="linear", options=ssnal_options, config=None),
        seed=sub.seed, stop=sub.stop, log=log, n_threads=sub.n_threads)
    del features
    solution = get_solver("ssnal").solve(linear)

    beta = fmap.normalization @ solution.w[: fmap.n_components]
    coef = np.zeros(n)
    coef[rows] = beta
    if log is not None:
        log(f"nystroem: expansion on {np.count_nonzero(beta)} landmarks  "
            f"total time {time.perf_counter() - t0:.2f}s")
    dual = np.abs(np.asarray(solution.coef, dtype=np.float64))
    return Solution(
        coef=coef,
        rho=solution.rho,
        objective=solution.objective,
        n_iter=solution.n_iter,
        stop_measure=solution.stop_measure,
        status=solution.status,
        history=solution.history,
        # LIBSVM's summary: nu is the explicit problem's; nSV counts the model's support vectors
        # (landmarks with a coefficient) and nBSV those of them whose row is at its bound there
        nu=float(dual.sum() / (upper.sum() or 1.0)),
        n_bounded_sv=int(np.count_nonzero((coef != 0) & (dual > 0) & (dual >= upper))),
        details={"landmarks": rows, "rank": fmap.n_components, "eigenvalues": fmap.eigenvalues,
              "feature_weights": solution.w, "feature_dual": solution.coef,
              "linear": solution.details},
    )


class NystroemSolver(Solver):
    name = "nystroem"
    formulations = ("c_svc", "epsilon_svr")
    kernels = ("rbf", "polynomial", "sigmoid", "linear")
    default_tol = get_solver("ssnal").default_tol
    description = "kernel SVM on a low-rank kernel approximation (-o landmarks=m): fast, approximate"
    config = Config
    stop_measure = "eta of the linear problem on the Nystroem features"

    solve = staticmethod(solve)


SOLVER = NystroemSolver()
