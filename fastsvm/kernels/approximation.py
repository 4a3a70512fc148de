"""Explicit feature maps phi with phi(x) . phi(z) ~ k(x, z): a linear method on phi(X) then
approximates the kernel machine.

Random Fourier features (Rahimi & Recht 2008), RBF kernel k(x, z) = exp(-gamma |x - z|^2):
frequencies omega_j ~ N(0, 2 gamma I) and offsets b_j ~ U[0, 2 pi), phi(x) = sqrt(2/D) cos(W^T x + b)
(D features), or with ``pairs`` D/2 frequencies and phi(x) = sqrt(2/D) [cos(W^T x), sin(W^T x)],
which has the same expectation and a smaller variance for the RBF kernel (Sutherland & Schneider
2015). Both are drawn as scikit-learn's RBFSampler draws them, so the same seed gives its map.

Nystroem (Williams & Seeger 2001), any fastsvm kernel: landmarks L (m rows of the data),
K(L, L) = U diag(lam) U^T, eigenvalues below ``rtol * max(lam)`` (and negative ones) cut,
phi(x) = K(x, L) U_r diag(lam_r)^-1/2, so phi(X) phi(X)^T = K(X, L) K(L, L)^+ K(L, X).
With ``symmetric`` the map is rotated back by U_r^T (m features, scikit-learn's Nystroem).

The nogil row work is in fastsvm._core._features; everything here is orchestration.
"""
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from .._core._features import fourier_features, landmark_kernel
from .._core._kernel import kernel_matrix
from ..csr import to_csr
from ..errors import FastSVMError, ParameterError

EIG_RTOL = 1e-12           # eigenvalues of K(L, L) below this fraction of the largest are cut
BLOCK_VALUES = 1 << 22     # K(x, L) values held at once by NystroemMap.transform (32 MB)
NYSTROEM_KERNELS = ("linear", "polynomial", "rbf", "sigmoid")


def _stop_flag(stop):
    return np.zeros(1, dtype=np.int32) if stop is None else stop


def _check_width(X, n_features, what):
    """Refuse rows with values in columns the map knows nothing about (zero columns are fine)."""
    if X.nnz > 0 and int(X.indices.max()) >= n_features:
        raise FastSVMError(f"X has values in feature {int(X.indices.max()) + 1}, but the {what} "
                           f"was built for {n_features} features")


# ---------------------------------------------------------------------------------------------
# random Fourier features

@dataclass(frozen=True)
class FourierMap:
    """phi(x) = scale cos(W^T x + offset), or scale [cos(W^T x), sin(W^T x)] with ``pairs``.

    weights : (n_features, F) frequencies; offset : (F,) phases (empty with pairs);
    n_components = F, or 2F with pairs; scale = sqrt(2 / n_components)."""

    gamma: float
    weights: np.ndarray
    offset: np.ndarray
    pairs: bool = False

    @property
    def n_features(self):
        return self.weights.shape[0]

    @property
    def n_components(self):
        return self.weights.shape[1] * (2 if self.pairs else 1)

    def transform(self, X, n_threads=1, stop=None):
        """phi of every row of X (anything fastsvm.csr.to_csr takes): dense (n, n_components).
        Raises KeyboardInterrupt when stop[0] is set (int32[1]) or on Ctrl-C."""
        X = to_csr(X)
        _check_width(X, self.n_features, "random Fourier map")
        out = np.empty((X.shape[0], self.n_components))
        scale = np.sqrt(2.0 / self.n_components) if self.n_components else 0.0
        fourier_features(X, np.ascontiguousarray(self.weights, dtype=np.float64),
                         np.ascontiguousarray(self.offset, dtype=np.float64), scale, self.pairs, out=out,
                         n_threads=n_threads, stop=_stop_flag(stop))
        return out


def random_fourier_map(n_features, n_components, gamma, seed=0, pairs=False):
    """A FourierMap for the RBF kernel exp(-gamma |x - z|^2) on n_features features.

    Drawn from numpy's RandomState(seed) in scikit-learn's order (weights, then offsets), so
    without pairs it is the map of RBFSampler(gamma, n_components, random_state=seed)."""
    n_features, n_components = int(n_features), int(n_components)
    if n_components < 1 or n_features < 0:
        raise ParameterError("random Fourier features: n_components must be >= 1")
    if not gamma >= 0 or not np.isfinite(gamma):
        raise ParameterError("random Fourier features: gamma must be finite and >= 0")
    if pairs and n_components % 2:
        raise ParameterError("random Fourier features: cos/sin pairs need an even n_components")
    n_freq = n_components // 2 if pairs else n_components
    rng = np.random.RandomState(seed)
    weights = np.sqrt(2.0 * gamma) * rng.normal(size=(n_features, n_freq))
    offset = np.empty(0) if pairs else rng.uniform(0.0, 2.0 * np.pi, size=n_freq)
    return FourierMap(gamma=float(gamma), weights=weights, offset=offset, pairs=bool(pairs))


# ---------------------------------------------------------------------------------------------
# Nystroem

@dataclass(frozen=True)
class NystroemMap:
    """phi(x) = K(x, L) @ normalization for landmarks L and a fastsvm kernel.

    landmarks : canonical CSR (m, p); indices : their rows in the data the map was built on;
    normalization : (m, r) = U_r diag(lam_r)^-1/2, or (m, m) U_r diag(lam_r)^-1/2 U_r^T when
    symmetric; eigenvalues : the r kept eigenvalues of K(L, L), largest first."""

    kind: str
    gamma: float
    degree: int
    coef0: float
    landmarks: sp.csr_matrix
    indices: np.ndarray
    normalization: np.ndarray
    eigenvalues: np.ndarray

    @property
    def n_components(self):
        return self.normalization.shape[1]

    def kernel_rows(self, X, n_threads=1, stop=None):
        """K(X, L), dense (n, m), threaded over the rows of X."""
        X = to_csr(X)
        out = np.empty((X.shape[0], self.landmarks.shape[0]))
        landmark_kernel(X, self.landmarks, self.kind, self.gamma, self.degree, coef0=self.coef0, out=out,
                        n_threads=n_threads, stop=_stop_flag(stop))
        return out

    def transform(self, X, n_threads=1, stop=None):
        """phi of every row of X: dense (n, n_components), computed in blocks of rows so that
        K(x, L) is never held for all rows at once. Raises KeyboardInterrupt on stop / Ctrl-C."""
        X = to_csr(X)
        n, m = X.shape[0], self.landmarks.shape[0]
        out = np.empty((n, self.n_components))
        block = max(1, BLOCK_VALUES // max(m, 1))  # independent of the thread count: same bits
        stop = _stop_flag(stop)
        for lo in range(0, n, block):
            hi = min(lo + block, n)
            np.matmul(self.kernel_rows(X[lo:hi], n_threads, stop), self.normalization, out=out[lo:hi])
            if stop[0]:          # the product above holds no poll: look between the blocks
                raise KeyboardInterrupt
        return out


def sample_landmarks(n_samples, n_landmarks, seed=0):
    """n_landmarks distinct rows out of n_samples, uniformly: the first of RandomState(seed)'s
    permutation (scikit-learn's Nystroem draws the same)."""
    if not 1 <= n_landmarks <= n_samples:
        raise ParameterError(f"Nystroem: cannot take {n_landmarks} landmarks out of {n_samples} samples")
    return np.random.RandomState(seed).permutation(n_samples)[:n_landmarks].astype(np.int64)


def nystroem_map(X, kind, gamma=0.0, degree=3, coef0=0.0, *, landmarks=None, n_components=None,
                 seed=0, symmetric=False, rtol=EIG_RTOL, n_threads=1):
    """The NystroemMap of kernel ``kind`` on rows ``landmarks`` of X (indices), or on
    ``n_components`` rows sampled with ``seed`` (sample_landmarks) when landmarks is None."""
    if kind not in NYSTROEM_KERNELS:
        raise ParameterError(f"Nystroem supports the {', '.join(NYSTROEM_KERNELS)} kernels, not {kind!r}")
    if kind == "polynomial" and degree < 0:
        raise ParameterError("degree of polynomial kernel < 0")
    if not (np.isfinite(gamma) and np.isfinite(coef0)):
        raise ParameterError("Nystroem: gamma and coef0 must be finite")
    if not 0 <= rtol < 1:
        raise ParameterError("Nystroem: rtol must be in [0, 1)")
    X = to_csr(X)
    if landmarks is None:
        landmarks = sample_landmarks(X.shape[0], int(n_components), seed)
    indices = np.asarray(landmarks, dtype=np.int64).reshape(-1)
    if indices.size == 0 or indices.min() < 0 or indices.max() >= X.shape[0]:
        raise ParameterError(f"Nystroem: landmark rows must be within 0..{X.shape[0] - 1}")
    L = to_csr(X[indices])
    K = kernel_matrix(L, L, kind, float(gamma), int(degree), coef0=float(coef0), n_threads=n_threads)
    K = 0.5 * (K + K.T)  # exact symmetry for eigh (the kernel rows agree to rounding)
    lam, U = sla.eigh(K, check_finite=False)
    lam, U = lam[::-1], U[:, ::-1]
    keep = lam > rtol * lam[0] if lam[0] > 0 else np.zeros(lam.shape, dtype=bool)
    lam, U = lam[keep], U[:, keep]
    normalization = U / np.sqrt(lam)
    if symmetric:
        normalization = normalization @ U.T
    return NystroemMap(kind=kind, gamma=float(gamma), degree=int(degree), coef0=float(coef0),
                       landmarks=L, indices=indices, normalization=np.ascontiguousarray(normalization),
                       eigenvalues=lam.copy())
