"""K~ + beta I factored once, solved many times: the one interface ADMM's x-step stands on.

factor_kernel(X, kernel, beta, backend, ...) returns an object with
    n, beta, backend, nbytes (what it holds), timings (phase -> seconds),
    solve(B) = (K~ + beta I)^-1 B and matvec(V) = K~ V, for (n,) or (n, k), original row order.

Backends:
    exact     K~ = K, the dense kernel, K + beta I by Cholesky (n x n doubles: small n only);
    nystroem  K~ = Phi Phi^T from fastsvm.kernels.approximation's Nystroem map (m landmarks),
              (Phi Phi^T + beta I)^-1 by Woodbury with the r x r core beta I + Phi^T Phi;
    hodlr     fastsvm.kernels.hodlr.HODLRFactor (hierarchical; imported when asked for).
K~ does not depend on the labels: one factor serves every C and every one-vs-rest class.
"""
import time

import numpy as np
import scipy.linalg as sla
from scipy.linalg.blas import dtrmm

from .._core._features import landmark_kernel
from ..csr import to_csr
from ..errors import FastSVMError, NotPositiveDefiniteError, ParameterError
from .approximation import nystroem_map, sample_landmarks
from ..memory import MB, check_request

BACKENDS = ("exact", "nystroem", "hodlr")
DEFAULT_LANDMARKS = 500
CHOLESKY_BLOCK = 512          # columns of one panel of the exact factorization
POLL_FLOPS = 2e9              # multiply-adds between two looks at the stop flag (a fraction of a second)


def _stop_flag(stop):
    return np.zeros(1, dtype=np.int32) if stop is None else stop


def _check_memory(n_bytes, memory_limit, what, hint):
    """One line when ``what`` would hold more than memory_limit bytes (-m) or than the machine has."""
    if memory_limit is not None and n_bytes > memory_limit:
        raise FastSVMError(f"{what} would hold {n_bytes / MB:.0f} MB, more than -m {memory_limit / MB:g} "
                           f"allows; {hint}")
    check_request(n_bytes, what, hint)


def _not_positive_definite(backend, beta):
    return NotPositiveDefiniteError(f"admm: K + beta I is not positive definite with the {backend} backend at "
                        f"beta = {beta:g} (raise -o beta)")


class ExactFactor:
    """The dense kernel K over X's rows, K + beta I = L L^T by Cholesky, held in one n x n array."""

    backend = "exact"

    def __init__(self, X, kernel, beta, *, n_threads=1, stop=None, log=None, memory_limit=None):
        X = to_csr(X)
        n = X.shape[0]
        self.n, self.beta = n, float(beta)
        self.nbytes = 8 * n * n
        _check_memory(self.nbytes, memory_limit, f"the exact kernel factor of {n} rows",
                      "raise -m or use -o backend=nystroem")
        self.timings = {}
        started = time.perf_counter()
        K = np.empty((n, n))
        landmark_kernel(X, X, kernel.kind, float(kernel.gamma), int(kernel.degree), coef0=float(kernel.coef0), out=K,
                        n_threads=max(1, int(n_threads)), stop=_stop_flag(stop))
        self.timings["kernel"] = time.perf_counter() - started
        K.flat[::n + 1] += self.beta
        started = time.perf_counter()
        # K.T is K (symmetric) in Fortran order: factored in place, no copy
        self._lower = K.T
        if not cholesky_in_place(self._lower, _stop_flag(stop)):
            raise _not_positive_definite(self.backend, beta)
        self.timings["factorization"] = time.perf_counter() - started
        if log is not None:
            log(f"admm: exact factor of {n} rows ({self.nbytes / MB:.1f} MB)  kernel "
                f"{self.timings['kernel']:.2f}s  Cholesky {self.timings['factorization']:.2f}s")

    def solve(self, B):
        return sla.cho_solve((self._lower, True), B, check_finite=False)

    def matvec(self, V):
        V = np.asarray(V, dtype=np.float64)
        W = V.reshape(self.n, -1)
        # K V = L (L^T V) - beta V: the factor's triangle, the other half of the array is stale
        out = dtrmm(1.0, self._lower, dtrmm(1.0, self._lower, W, lower=1, trans_a=1), lower=1) - self.beta * W
        return out.reshape(V.shape)


def cholesky_in_place(A, stop, block=CHOLESKY_BLOCK):
    """A (Fortran-ordered, symmetric positive definite) -> its Cholesky factor L in its lower
    triangle (the upper one is left stale), left-looking by panels of ``block`` columns so that
    stop[0] is seen between BLAS calls of about POLL_FLOPS (one LAPACK call cannot be stopped).
    False when A is not positive definite; KeyboardInterrupt on stop[0]."""
    n = A.shape[0]
    for j in range(0, n, block):
        e = min(j + block, n)
        rows = max(block, int(POLL_FLOPS / max(1, j * (e - j))))
        for r in range(j, n, rows):
            if j:
                A[r:r + rows, j:e] -= A[r:r + rows, :j] @ A[j:e, :j].T
            if stop[0]:
                raise KeyboardInterrupt
        diagonal, info = sla.lapack.dpotrf(A[j:e, j:e], lower=1, clean=0, overwrite_a=0)
        if info != 0:
            return False
        A[j:e, j:e] = diagonal
        if e < n:   # the panel below: A[e:, j:e] L_jj^-T
            A[e:, j:e] = sla.solve_triangular(diagonal, A[e:, j:e].T, lower=True, check_finite=False).T
    return True


class NystroemFactor:
    """K~ = Phi Phi^T (Phi: n x r Nystroem features on m landmarks); (Phi Phi^T + beta I)^-1 =
    (I - Phi (beta I + Phi^T Phi)^-1 Phi^T) / beta."""

    backend = "nystroem"

    def __init__(self, X, kernel, beta, *, n_landmarks=None, seed=0, n_threads=1, stop=None, log=None,
                 memory_limit=None):
        X = to_csr(X)
        n = X.shape[0]
        if n_landmarks is None:   # min(n, 500), fewer when the n x m features and m x m core would not fit in -m
            fits = DEFAULT_LANDMARKS if memory_limit is None else int(memory_limit // (8 * (n + DEFAULT_LANDMARKS)))
            n_landmarks = max(1, min(DEFAULT_LANDMARKS, fits))
        m = min(n, int(n_landmarks))
        self.n, self.beta = n, float(beta)
        _check_memory(8 * (n + m) * m, memory_limit, f"the Nystroem factor of {n} rows and {m} landmarks",
                      "raise -m or lower -o landmarks")
        self.timings = {}
        started = time.perf_counter()
        landmarks = np.sort(sample_landmarks(n, m, seed))
        fmap = nystroem_map(X, kernel.kind, kernel.gamma, kernel.degree, kernel.coef0, landmarks=landmarks,
                            n_threads=n_threads)
        self.features = fmap.transform(X, n_threads, _stop_flag(stop))
        self.timings["features"] = time.perf_counter() - started
        started = time.perf_counter()
        core = self.features.T @ self.features
        core.flat[::core.shape[0] + 1] += self.beta
        try:
            self._core = sla.cho_factor(core, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            raise _not_positive_definite(self.backend, beta) from None
        self.timings["factorization"] = time.perf_counter() - started
        self.nbytes = self.features.nbytes + core.nbytes
        self.rank = self.features.shape[1]
        if log is not None:
            log(f"admm: Nystroem factor of {n} rows, {m} landmarks, rank {self.rank} "
                f"({self.nbytes / MB:.1f} MB)  features {self.timings['features']:.2f}s  "
                f"core {self.timings['factorization']:.2f}s")

    def solve(self, B):
        B = np.asarray(B, dtype=np.float64)
        if self.rank == 0:
            return B / self.beta
        inner = sla.cho_solve(self._core, self.features.T @ B, check_finite=False)
        return (B - self.features @ inner) / self.beta

    def matvec(self, V):
        return self.features @ (self.features.T @ np.asarray(V, dtype=np.float64))


def factor_kernel(X, kernel, beta, backend, *, tol=1e-2, max_rank=None, leaf_size=None, n_landmarks=None,
                  seed=0, n_threads=1, stop=None, log=None, memory_limit=None):
    """K~ + beta I of ``kernel`` (a fastsvm.solvers.Kernel) over the rows of X, factored by
    ``backend`` (BACKENDS). tol, max_rank and leaf_size are the hierarchical backend's (max_rank
    and leaf_size by default 100 and 512, or chosen to fit memory_limit: fastsvm.kernels.hodlr.fitting_shape);
    n_landmarks (default min(n, 500)) and seed the Nystroem backend's. memory_limit: bytes the
    factor may hold (-m), None: the machine's. Raises KeyboardInterrupt on stop[0]."""
    if not (np.isfinite(beta) and beta > 0):
        raise ParameterError(f"admm: beta must be finite and > 0, not {beta!r}")
    if backend == "exact":
        return ExactFactor(X, kernel, beta, n_threads=n_threads, stop=stop, log=log, memory_limit=memory_limit)
    if backend == "nystroem":
        return NystroemFactor(X, kernel, beta, n_landmarks=n_landmarks, seed=seed, n_threads=n_threads,
                              stop=stop, log=log, memory_limit=memory_limit)
    if backend == "hodlr":
        from .hodlr import HODLRFactor   # the hierarchical matrix package, loaded only when used

        return HODLRFactor(to_csr(X), kernel, beta, tol=tol, max_rank=max_rank, leaf_size=leaf_size, seed=seed,
                           n_threads=n_threads, stop=_stop_flag(stop), log=log, memory_limit=memory_limit)
    raise ParameterError(f"admm: unknown backend {backend!r} (one of {', '.join(BACKENDS)})")
