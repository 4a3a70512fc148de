"""The kernel front end's warm start: the linear SSsNAL on explicit features of the kernel
(random Fourier features for RBF, a Nystroem map otherwise)."""
from dataclasses import replace

import numpy as np

from ...csr import dense_as_csr
from ...kernels.approximation import nystroem_map, random_fourier_map
from ..base import Kernel, Subproblem, checked_arrays
from .config import Config
from .linear import solve_linear


def warm_start(sub: Subproblem, n_features, tol, feature_map="rff", deadline=None):
    """(x^0, sigma_0, Solution) from the linear SSsNAL on explicit features of sub's kernel:
    random Fourier features for RBF, a Nystroem map on n_features sampled landmarks otherwise;
    no iteration of the linear solve begins after ``deadline`` (time.perf_counter()).

    The features are computed with sub.n_threads (the same bits for any count); the linear solve
    runs on one thread, whose reductions then do not depend on the thread count either: the
    same seed gives the same x^0, and so the same model, for every n_threads."""
    X, _, _ = checked_arrays(sub)
    k = sub.kernel
    if k.kind == "rbf" and feature_map == "rff":
        D = n_features + n_features % 2
        fmap = random_fourier_map(X.shape[1], D, k.gamma, seed=sub.seed, pairs=True)
    else:
        fmap = nystroem_map(X, k.kind, k.gamma, k.degree, k.coef0, n_components=min(n_features, X.shape[0]),
                            seed=sub.seed, n_threads=sub.n_threads)
    features = fmap.transform(X, sub.n_threads, sub.stop)
    if features.shape[1] == 0:  # a kernel that vanishes on the landmarks
        features = np.zeros((X.shape[0], 1))
    log = None if sub.log is None else (lambda line: sub.log("warm start: " + line))
    linear = Subproblem(
        formulation=sub.formulation, X=dense_as_csr(features), y=sub.y, upper=sub.upper,
        kernel=Kernel(kind="linear"),
        params=replace(sub.params, kernel_type="linear", tol=tol, max_iter=None, options={}),
        seed=sub.seed, stop=sub.stop, log=log, n_threads=1)
    # equal rows have equal features, but merging them would copy the dense features: fresh
    # memory that costs more than the passes saved
    # the linear solve takes none of the kernel's -o options (options={} above): the Config as given
    config = Config() if sub.params.config is None else sub.params.config
    solution = solve_linear(linear, config, merge=False, deadline=deadline)
    return np.asarray(solution.dual, dtype=np.float64), float(solution.details["sigma"]), solution
