"""The working set's RBF kernel block held sparse, for SSsNAL on nonlinear kernels
(fastsvm.solvers.ssnal.working_set), without the GIL.

RBF values of rows far apart underflow: on unscaled features or with a large gamma almost every
value of K_UU is below 1e-16, almost every row is a free support vector, and the dense Newton
systems of order |J| cost |J|^3 flops for a matrix that is nearly the identity. SparseKernel
keeps the values of K_UU at or above a threshold as a CSR matrix over the working set's positions
(kept_above builds it from dense row blocks); its products (scatter) and the CG solve of the
Newton system (newton_cg) then cost the kept values. The caller picks the threshold so that the
values dropped from a row sum to less than the float32 rounding of the cached columns the dense
path would use.
"""
from cython.parallel cimport prange
cimport numpy as cnp
import numpy as np

from ._status cimport Status, stop_requested
from ._csr cimport CSR, csr_view, row_axpy, row_dot, indices_within
from ..errors import FastSVMError

cnp.import_array()


cdef enum:
    STOP_POLL_VALUES = 1 << 22      # kept values read between two looks at the stop flag
    PARALLEL_MIN_VALUES = 1 << 15   # a product over fewer values stays on one thread


def kept_above(const double[:, ::1] block, double threshold):
    """(counts, indices, values) of the entries >= threshold of each row of block: counts per row
    (int32), their columns (int32) and values, row by row, columns ascending."""
    cdef Py_ssize_t rows = block.shape[0], cols = block.shape[1], i, j, total = 0, k = 0
    counts = np.zeros(rows, dtype=np.int32)
    cdef int[::1] count = counts
    with nogil:
        for i in range(rows):
            for j in range(cols):
                if block[i, j] >= threshold:
                    count[i] += 1
            total += count[i]
    indices = np.empty(total, dtype=np.int32)
    values = np.empty(total)
    cdef int[::1] idx = indices
    cdef double[::1] val = values
    with nogil:
        for i in range(rows):
            for j in range(cols):
                if block[i, j] >= threshold:
                    idx[k] = <int>j
                    val[k] = block[i, j]
                    k += 1
    return counts, indices, values


cdef class SparseKernel:
    """K over positions 0 .. n-1 (symmetric, as built), its kept values in CSR."""
    cdef CSR K
    cdef readonly int n
    cdef readonly Py_ssize_t nnz
    cdef readonly int n_threads
    cdef object _keep

    def __init__(self, indptr, indices, data, int n_threads=1):
        indptr = np.ascontiguousarray(indptr, dtype=np.int32)
        indices = np.ascontiguousarray(indices, dtype=np.int32)
        data = np.ascontiguousarray(data, dtype=np.float64)
        n = indptr.shape[0] - 1
        if n < 0 or indptr[0] != 0 or indptr[n] != indices.shape[0] or data.shape[0] != indices.shape[0] \
                or np.any(np.diff(indptr) < 0) or not indices_within(indices, n):
            raise FastSVMError("SparseKernel: not a square CSR matrix")
        self._keep = (indptr, indices, data)
        self.K = csr_view(data, indices, indptr, n, n)
        self.n = n
        self.nnz = indices.shape[0]
        self.n_threads = max(1, n_threads)

    def scatter(self, const int[::1] positions, const double[::1] coef, double[::1] out):
        """out += sum_j coef[j] K[positions[j], :] (= the columns', K symmetric)."""
        cdef Py_ssize_t k = positions.shape[0], j
        if coef.shape[0] != k or out.shape[0] != self.n or not indices_within(positions, self.n):
            raise FastSVMError("scatter: positions outside K, or coef / out of the wrong length")
        with nogil:
            for j in range(k):
                if coef[j] != 0.0:
                    row_axpy(self.K, positions[j], coef[j], &out[0])
        return np.asarray(out)

    def newton_cg(self, const int[::1] positions, const double[::1] a, double sigma, const double[::1] t,
                  double rtol, int max_iter, const int[::1] stop):
        """(z, iterations, status): CG on (I + sigma P Q P) z = t, Q = (a a^T) o K[positions][:, positions],
        P = I - a a^T / a^T a, t = P t, to the relative residual rtol. Positions may repeat
        (epsilon-SVR: both variables of a row). status: a _status.Status -- CONVERGED, MAX_ITER,
        or BREAKDOWN when CG met a direction d with d^T H d <= 0 (H not positive definite).
        KeyboardInterrupt when stopped."""
        cdef Py_ssize_t k = positions.shape[0], i
        if a.shape[0] != k or t.shape[0] != k or not indices_within(positions, self.n):
            raise FastSVMError("newton_cg: positions outside K, or a / t of the wrong length")
        z_ = np.zeros(k)
        cdef double[::1] z = z_
        if k == 0:
            return z_, 0, Status.CONVERGED
        cdef double[::1] res = np.array(t, dtype=np.float64)
        cdef double[::1] d = np.array(t, dtype=np.float64)
        cdef double[::1] hd = np.empty(k)
        cdef double[::1] beta = np.zeros(self.n)          # a o d summed on the positions
        cdef double aa = 0.0, rr = 0.0, bound, rr_new, dhd, step, ad, aw
        cdef int it = 0, threads = self.n_threads
        cdef Status status = Status.CONVERGED
        cdef Py_ssize_t values = 0, polled = 0
        with nogil:
            for i in range(k):
                aa = aa + a[i] * a[i]
                rr = rr + res[i] * res[i]
                values += self.K.indptr[positions[i] + 1] - self.K.indptr[positions[i]]
            if values < PARALLEL_MIN_VALUES:
                threads = 1
            bound = rtol * rtol * rr
            while rr > bound:
                if it >= max_iter:
                    status = Status.MAX_ITER
                    break
                polled += values
                if polled >= STOP_POLL_VALUES:
                    polled = 0
                    if stop_requested(stop):
                        status = Status.INTERRUPTED
                        break
                it += 1
                # hd = P d + sigma P (a o K (a o P d)); d stays in range(P) up to rounding
                ad = 0.0
                for i in range(k):
                    ad = ad + a[i] * d[i]
                ad = ad / aa
                for i in range(k):
                    hd[i] = d[i] - ad * a[i]
                    beta[positions[i]] += a[i] * hd[i]
                for i in prange(k, num_threads=threads, schedule="static"):
                    hd[i] = hd[i] + sigma * a[i] * row_dot(self.K, positions[i], &beta[0])
                for i in range(k):
                    beta[positions[i]] = 0.0
                aw = 0.0
                for i in range(k):
                    aw = aw + a[i] * hd[i]
                aw = aw / aa
                dhd = 0.0
                for i in range(k):
                    hd[i] = hd[i] - aw * a[i]
                    dhd = dhd + d[i] * hd[i]
                if not dhd > 0.0:
                    status = Status.BREAKDOWN
                    break
                step = rr / dhd
                rr_new = 0.0
                for i in range(k):
                    z[i] += step * d[i]
                    res[i] -= step * hd[i]
                    rr_new = rr_new + res[i] * res[i]
                for i in range(k):
                    d[i] = res[i] + (rr_new / rr) * d[i]
                rr = rr_new
        if status == Status.INTERRUPTED:
            raise KeyboardInterrupt
        return z_, it, status
