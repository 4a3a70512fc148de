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

from ._cg cimport CG, Operator, cg_init, cg_parts, cg_solve
from ._status cimport Status
from ._csr cimport CSR, csr_view, row_axpy, row_dot, indices_within
from ..errors import FastSVMError

cnp.import_array()


cdef enum:
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


cdef class KernelHessian(Operator):
    """I + sigma P Q P for newton_cg's CG, Q = (a a^T) o K[positions][:, positions]: hd = P d +
    sigma P (a o K (a o P d)) (d stays in range(P) up to rounding), returning d.hd."""
    cdef CSR K
    cdef const int* positions
    cdef const double* a
    cdef double aa, sigma
    cdef double* beta            # n zeros, left zero
    cdef int threads

    cdef double apply(self, const double* d, double* hd) noexcept nogil:
        cdef Py_ssize_t i, k = self.order
        cdef const int* positions = self.positions
        cdef const double* a = self.a
        cdef double* beta = self.beta
        cdef double ad = 0.0, aw = 0.0, dhd = 0.0, sigma = self.sigma
        cdef CSR K = self.K
        for i in range(k):
            ad = ad + a[i] * d[i]
        ad = ad / self.aa
        for i in range(k):
            hd[i] = d[i] - ad * a[i]
            beta[positions[i]] += a[i] * hd[i]
        for i in prange(k, num_threads=self.threads, schedule="static"):
            hd[i] = hd[i] + sigma * a[i] * row_dot(K, positions[i], beta)
        for i in range(k):
            beta[positions[i]] = 0.0
        for i in range(k):
            aw = aw + a[i] * hd[i]
        aw = aw / self.aa
        for i in range(k):
            hd[i] = hd[i] - aw * a[i]
            dhd = dhd + d[i] * hd[i]
        return dhd


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

    @property
    def nbytes(self):
        """Bytes of the kept values, their columns and the row pointers."""
        return sum(int(a.nbytes) for a in self._keep)

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
                  double rtol, *, int max_iter, const int[::1] stop):
        """(z, iterations, status): CG (_cg's) on (I + sigma P Q P) z = t, Q = (a a^T) o K[positions][:, positions],
        P = I - a a^T / a^T a, t = P t, to the relative residual rtol. Positions may repeat
        (epsilon-SVR: both variables of a row). status: a _status.Status -- CONVERGED, MAX_ITER,
        or BREAKDOWN when CG met a direction d with d^T H d <= 0 (H not positive definite).
        KeyboardInterrupt when stopped."""
        cdef Py_ssize_t k = positions.shape[0], i
        if a.shape[0] != k or t.shape[0] != k or not indices_within(positions, self.n):
            raise FastSVMError("newton_cg: positions outside K, or a / t of the wrong length")
        z_ = np.zeros(k)
        if k == 0:
            return z_, 0, Status.CONVERGED
        cdef double[::1] z = z_
        cdef double[::1] res = np.array(t, dtype=np.float64)
        cdef double[::1] d = np.empty(k)
        cdef double[::1] hd = np.empty(k)
        cdef double[::1] part = np.empty(cg_parts(k, k))
        cdef double[::1] beta = np.zeros(self.n)          # a o d summed on the positions
        cdef KernelHessian H = KernelHessian()
        cdef CG cg
        cdef Status status
        H.K = self.K
        H.positions = &positions[0]
        H.a = &a[0]
        H.sigma = sigma
        H.beta = &beta[0]
        H.order = k
        H.threads = self.n_threads
        cg_init(&cg, k, &z[0], &res[0], &res[0], &d[0], &hd[0], &part[0], k, 1)   # one block: sums in order
        with nogil:
            for i in range(k):
                H.aa = H.aa + a[i] * a[i]
                H.poll_values += self.K.indptr[positions[i] + 1] - self.K.indptr[positions[i]]
            if H.poll_values < PARALLEL_MIN_VALUES:
                H.threads = 1
            status = <Status>cg_solve(&cg, H, rtol, max_iter, stop)
        if status == Status.INTERRUPTED:
            raise KeyboardInterrupt
        return z_, cg.iterations, status
