"""The kernel work of SSsNAL on nonlinear kernels (fastsvm.solvers.ssnal_kernel), without the GIL.

KernelProducts: out[r] += sum_j coef[j] k(x_{rows[r]}, x_{cols[j]}) for many rows at once (the
gradient Q x of the whole problem, and its updates on the rows outside the working set), without
storing the kernel block. The rows X[cols] are transposed into an inverted index (feature ->
(column, value)); the dot products of one row with every column are then accumulated by walking
the lists of the row's stored features: sum over its features of the list lengths instead of
one sparse dot per pair, with sequential memory access. Each row is summed by one thread in a
fixed order, so the result does not depend on the thread count.

cache_axpy / cache_block: products with and blocks of the kernel columns of a KernelCache whose
positions 0 .. length-1 hold the working set (move_to_front arranges that).
"""
from cpython.exc cimport PyErr_CheckSignals
from cython.parallel cimport prange, threadid
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset
cimport numpy as cnp
import numpy as np

from ._cache cimport KernelCache
from ._csr cimport CSR, csr_view
from ._kernel cimport KernelParams, PRECOMPUTED, kernel_params, kernel_from_dot
from ._kernel import row_sqnorms
from ..errors import FastSVMError

cnp.import_array()

cdef enum:
    BLOCK_EVALUATIONS = 20000000   # kernel values between two looks at the stop flag
    STOP_POLL_COLUMNS = 64         # cached columns between two looks at the stop flag


cdef bint _interrupted(const int[::1] stop) noexcept nogil:
    """The caller's stop flag, or (main thread) a pending Ctrl-C."""
    if stop[0] != 0:
        return True
    with gil:
        try:
            PyErr_CheckSignals()
        except KeyboardInterrupt:
            return True
    return False


cdef class KernelProducts:
    """KernelProducts(X, kind, gamma=0.0, degree=3, coef0=0.0, n_threads=1, stop=None)

    Kernel-matrix products over the rows of the canonical CSR X (fastsvm.csr.to_csr) for the
    linear, polynomial, RBF and sigmoid kernels. ``stop`` (int32[1]) interrupts matvec."""
    cdef CSR X
    cdef KernelParams kp
    cdef readonly int n_threads
    cdef const double[::1] sqnorm
    cdef const int[::1] stop
    cdef object _keep

    def __init__(self, X, str kind, double gamma=0.0, int degree=3, double coef0=0.0,
                 int n_threads=1, stop=None):
        cdef const double[::1] data = X.data
        cdef const int[::1] indices = X.indices
        cdef const int[::1] indptr = X.indptr
        self._keep = (X, data, indices, indptr)
        self.X = csr_view(data, indices, indptr, X.shape[0], X.shape[1])
        self.kp = kernel_params(kind, gamma, degree, coef0)
        if self.kp.kind == PRECOMPUTED:
            raise FastSVMError("KernelProducts does not take precomputed kernels")
        self.sqnorm = row_sqnorms(X)
        self.n_threads = max(1, n_threads)
        self.stop = np.zeros(1, dtype=np.int32) if stop is None else stop

    def matvec(self, const int[::1] rows, const int[::1] cols, const double[::1] coef, double[::1] out):
        """out[r] += sum_j coef[j] k(x_{rows[r]}, x_{cols[j]}); KeyboardInterrupt when stopped."""
        cdef int n_rows = <int>rows.shape[0], n_cols = <int>cols.shape[0]
        if coef.shape[0] != n_cols or out.shape[0] != n_rows:
            raise FastSVMError("matvec: coef must match cols and out must match rows")
        _check_rows(rows, self.X.n_rows)
        _check_rows(cols, self.X.n_rows)
        if n_rows == 0 or n_cols == 0:
            return np.asarray(out)
        cdef int p = self.X.n_cols, threads = min(self.n_threads, n_rows)
        cdef Py_ssize_t nnz = 0
        cdef int j
        for j in range(n_cols):
            nnz += self.X.indptr[cols[j] + 1] - self.X.indptr[cols[j]]
        # the inverted index of X[cols] and one dot-product accumulator per thread
        cdef int[::1] start = np.zeros(p + 1, dtype=np.int32)
        cdef int[::1] owner = np.empty(max(nnz, 1), dtype=np.int32)
        cdef double[::1] value = np.empty(max(nnz, 1))
        cdef double[::1] col_sqnorm = np.empty(n_cols)
        cdef double[::1] acc = np.empty(<Py_ssize_t>threads * n_cols)
        cdef int block = max(16, min(n_rows, BLOCK_EVALUATIONS // n_cols))
        cdef int lo = 0, hi
        cdef bint interrupted = False
        cdef _Inverted inv
        inv.n_cols = n_cols
        inv.start = &start[0]
        inv.owner = &owner[0]
        inv.value = &value[0]
        inv.sqnorm = &col_sqnorm[0]
        inv.coef = &coef[0]
        with nogil:
            _invert(self.X, &cols[0], n_cols, &start[0], &owner[0], &value[0])
            for j in range(n_cols):
                col_sqnorm[j] = self.sqnorm[cols[j]]
            while lo < n_rows:
                interrupted = _interrupted(self.stop)
                if interrupted:
                    break
                hi = min(lo + block, n_rows)
                _rows_times(self.kp, self.X, &self.sqnorm[0], &rows[0], lo, hi, inv, &acc[0], &out[0], threads)
                lo = hi
        if interrupted:
            raise KeyboardInterrupt
        return np.asarray(out)


cdef void _check_rows(const int[::1] rows, int n) except *:
    if rows.shape[0] and (np.min(rows) < 0 or np.max(rows) >= n):
        raise FastSVMError("matvec: row index out of range")


cdef void _invert(CSR X, const int* cols, int n_cols, int* start, int* owner, double* value) noexcept nogil:
    """Counting sort of the stored values of rows X[cols] by feature: the list of feature f is
    owner/value[start[f]:start[f+1]] (column numbers j ascending)."""
    cdef int j, k, f, p = X.n_cols
    for j in range(n_cols):
        for k in range(X.indptr[cols[j]], X.indptr[cols[j] + 1]):
            start[X.indices[k] + 1] += 1
    for f in range(p):
        start[f + 1] += start[f]
    for j in range(n_cols):
        for k in range(X.indptr[cols[j]], X.indptr[cols[j] + 1]):
            f = X.indices[k]
            owner[start[f]] = j
            value[start[f]] = X.data[k]
            start[f] += 1
    for f in range(p, 0, -1):      # start[f] now holds the end of list f: shift back
        start[f] = start[f - 1]
    start[0] = 0


cdef struct _Inverted:
    # the inverted index of the columns X[cols] and what the kernel needs of them
    int n_cols
    const int* start
    const int* owner
    const double* value
    const double* sqnorm
    const double* coef


cdef inline double _row_times(KernelParams kp, CSR X, int i, double sq, _Inverted inv,
                              double* acc) noexcept nogil:
    """sum_j coef[j] k(x_i, x_{cols[j]}) (sq = |x_i|^2; acc: n_cols scratch)."""
    cdef int k, t, f
    cdef double v, s = 0.0
    memset(acc, 0, inv.n_cols * sizeof(double))
    for k in range(X.indptr[i], X.indptr[i + 1]):
        f = X.indices[k]
        v = X.data[k]
        for t in range(inv.start[f], inv.start[f + 1]):
            acc[inv.owner[t]] += v * inv.value[t]
    for t in range(inv.n_cols):
        s += inv.coef[t] * kernel_from_dot(kp, acc[t], sq, inv.sqnorm[t])
    return s


cdef void _rows_times(KernelParams kp, CSR X, const double* sqnorm, const int* rows, int lo, int hi,
                      _Inverted inv, double* acc, double* out, int threads) noexcept nogil:
    cdef int r
    if threads <= 1 or hi - lo < 2:
        for r in range(lo, hi):
            out[r] += _row_times(kp, X, rows[r], sqnorm[rows[r]], inv, acc)
        return
    for r in prange(lo, hi, num_threads=threads, schedule="dynamic", chunksize=4):
        out[r] += _row_times(kp, X, rows[r], sqnorm[rows[r]], inv,
                             acc + <Py_ssize_t>threadid() * inv.n_cols)


# ---------------------------------------------------------------------------------------------
# the working set's kernel columns, from a KernelCache

def move_to_front(KernelCache cache, const int[::1] rows):
    """Swap cache positions so that data row rows[t] sits at position t (rows distinct); returns
    the data row of every position (int32). Rows already in place cost nothing."""
    cdef int n = cache.n, k = <int>rows.shape[0], t, r, p, q
    if k and (np.min(rows) < 0 or np.max(rows) >= n):
        raise FastSVMError("move_to_front: row out of range")
    if k != np.unique(np.asarray(rows)).shape[0]:
        raise FastSVMError("move_to_front: rows must be distinct")
    cdef int[::1] where = np.empty(max(n, 1), dtype=np.int32)
    cdef int[::1] row_at = np.empty(n, dtype=np.int32)
    with nogil:
        for p in range(n):
            where[cache.rows[p]] = p
        for t in range(k):
            r = rows[t]
            p = where[r]
            if p != t:
                q = cache.rows[t]
                cache.swap(t, p)
                where[r] = t
                where[q] = p
        for p in range(n):
            row_at[p] = cache.rows[p]
    return np.asarray(row_at)


def cache_axpy(KernelCache cache, const int[::1] positions, const double[::1] coef, int length,
               double[::1] out, const int[::1] stop):
    """out[t] += sum_j coef[j] K(position t, positions[j]) for t < length, from cached columns
    (computed when missing); columns with coef 0 are skipped. KeyboardInterrupt when stopped."""
    cdef int k = <int>positions.shape[0], j, t, status = 0
    cdef float* col
    cdef double cj
    _check_positions(cache, positions, length)
    if coef.shape[0] != k or out.shape[0] < length:
        raise FastSVMError("cache_axpy: coef must match positions and out cover length")
    with nogil:
        for j in range(k):
            if j % STOP_POLL_COLUMNS == STOP_POLL_COLUMNS - 1 and stop[0]:
                status = 2
                break
            cj = coef[j]
            if cj == 0.0:
                continue
            col = cache.column(positions[j], length)
            if col == NULL:
                status = 1
                break
            for t in range(length):
                out[t] += cj * col[t]
    _raise_for(status)
    return np.asarray(out)


def cached(KernelCache cache, const int[::1] positions, int length):
    """uint8 mask: whether the column of each position is cached on [0, length)."""
    cdef int k = <int>positions.shape[0], j
    _check_positions(cache, positions, cache.n)
    out = np.empty(k, dtype=np.uint8)
    cdef unsigned char[::1] out_ = out
    for j in range(k):
        out_[j] = cache.length[positions[j]] >= length
    return out.view(bool)


def cache_block(KernelCache cache, const int[::1] positions, int length, const int[::1] stop):
    """K[positions][:, positions] (float64 from the float32 columns), every position < length."""
    cdef int k = <int>positions.shape[0], a, b, status = 0
    cdef float* col
    _check_positions(cache, positions, length)
    block = np.empty((k, k))
    cdef double[:, ::1] out = block
    with nogil:
        for a in range(k):
            if a % STOP_POLL_COLUMNS == STOP_POLL_COLUMNS - 1 and stop[0]:
                status = 2
                break
            col = cache.column(positions[a], length)
            if col == NULL:
                status = 1
                break
            for b in range(k):
                out[a, b] = col[positions[b]]
    _raise_for(status)
    return block


cdef void _check_positions(KernelCache cache, const int[::1] positions, int length) except *:
    if not 0 <= length <= cache.n:
        raise FastSVMError("column length out of range")
    if positions.shape[0] and (np.min(positions) < 0 or np.max(positions) >= length):
        raise FastSVMError("position outside the working set")


cdef void _raise_for(int status) except *:
    if status == 1:
        raise MemoryError("kernel cache: out of memory")
    if status == 2:
        raise KeyboardInterrupt
