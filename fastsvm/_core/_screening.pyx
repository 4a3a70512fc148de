"""SSsNAL's screening, without the GIL: the rows held at their bounds for the rest of an inner
solve (hold_rows) and, at its end, those of them that may have had to move (held_misses)."""
from libc.math cimport fabs, fmax
import numpy as np

from ._knapsack cimport select_kth

from ..errors import FastSVMError


def hold_rows(const double[::1] pt, double lam, const double[::1] pt0, double lam0, const double[::1] x,
              const double[::1] a, const double[::1] lower, const double[::1] upper, const int[::1] row_nnz,
              double factor, double quantile, int[::1] rows, int[::1] held):
    """Split the rows by how far z = pt - lam a lies beyond its bounds: held (increasing, into
    ``held``) when further than factor x the `quantile` of |z - z0| (z0 = pt0 - lam0 a; taken
    over a sample of at most 4096 rows), the others into ``rows``. Returns (n_rows, n_held,
    stored values of the held rows, a_held . x_held); n_held = 0 when every z stayed put."""
    cdef Py_ssize_t m = pt.shape[0], i, stride, k = 0, n_rows = 0, n_held = 0
    if not (pt0.shape[0] == x.shape[0] == a.shape[0] == lower.shape[0] == upper.shape[0] == row_nnz.shape[0]
            == rows.shape[0] == held.shape[0] == m) or m == 0:
        raise FastSVMError("hold_rows: vectors must have one nonzero length")
    stride = (m + 4095) // 4096
    cdef double[::1] moves = np.empty((m + stride - 1) // stride)
    cdef double threshold, z, held_nnz = 0.0, held_ax = 0.0
    with nogil:
        i = 0
        while i < m:
            moves[k] = fabs((pt[i] - lam * a[i]) - (pt0[i] - lam0 * a[i]))
            k += 1
            i += stride
        threshold = factor * select_kth(&moves[0], k, min(<Py_ssize_t>(quantile * k), k - 1))
        if threshold > 0.0:
            for i in range(m):
                z = pt[i] - lam * a[i]
                if fmax(lower[i] - z, z - upper[i]) > threshold:
                    held[n_held] = <int>i
                    n_held += 1
                    held_nnz += row_nnz[i]
                    held_ax += a[i] * x[i]
                else:
                    rows[n_rows] = <int>i
                    n_rows += 1
    return n_rows, n_held, held_nnz, held_ax


def held_misses(const int[::1] held, const double[::1] center, const double[::1] x, const double[::1] Zw,
                const double[::1] c, const double[::1] a, const double[::1] lower, const double[::1] upper,
                double sigma, double lam, const double[::1] norms, double slack, int[::1] out):
    """The held rows i not certainly beyond the bound x_i they are held at, into ``out``; their
    number is returned. z_i = center_i - sigma (Zw_i + c_i) - lam a_i must lie beyond it by more
    than slack norms_i."""
    cdef Py_ssize_t j, m = x.shape[0]
    cdef int i, misses = 0
    cdef double z
    if not (center.shape[0] == Zw.shape[0] == c.shape[0] == a.shape[0] == lower.shape[0] == upper.shape[0]
            == norms.shape[0] == m) or out.shape[0] < held.shape[0]:
        raise FastSVMError("held_misses: vectors must have one length")
    for j in range(held.shape[0]):
        if not 0 <= held[j] < m:
            raise FastSVMError("held_misses: row index out of range")
    with nogil:
        for j in range(held.shape[0]):
            i = held[j]
            z = center[i] - sigma * (Zw[i] + c[i]) - lam * a[i]
            out[misses] = i                                   # branch-free append
            if x[i] == lower[i]:
                misses += not lower[i] - z > slack * norms[i]
            else:
                misses += not (x[i] == upper[i] and z - upper[i] > slack * norms[i])
    return misses
