# Decision values of a linear-kernel model through its weight vectors: decision p of row x is
# x . w_p - rho_p, with w_p = sum_i coef_{p,i} sv_i formed once per model (fastsvm.model), so a
# row costs its own stored values per decision instead of a pass over every support vector.
#
# W is held dense (n_dec x width, when that is not much larger than its stored values) or as
# CSR with sorted indices (a model whose largest feature index is huge). Either way the products
# x_k w_p[j_k] are summed in the row's index order, so both layouts give the same values, and rows
# are independent: any thread count gives the same bits.
from cpython.exc cimport PyErr_CheckSignals
from cython.parallel cimport prange

import numpy as np

from ._csr cimport CSR, csr_view

# Rows per nogil block: about this many multiply-adds, so Ctrl-C is noticed within a fraction
# of a second (as in _predict).
cdef enum:
    BLOCK_WORK = 20000000


cdef struct Weights:
    const double* dense        # n_dec x width, row-major (NULL when held sparse)
    const double* data         # CSR: w_p's values data[indptr[p]:indptr[p+1]] ...
    const int* indices         # ... in the sorted columns indices[...]
    const int* indptr
    const double* rho
    int n_dec
    int width


cdef inline double sparse_dot(CSR X, int i, const double* w_data, const int* w_indices, int lo,
                              int hi) noexcept nogil:
    """x_i . w for w stored in sorted columns w_indices[lo:hi]: each of the row's (sorted)
    indices is found by bisection above the previous one, so a sparse row against a long w
    costs nnz(x) log nnz(w), in the row's index order."""
    cdef int k, a, b, mid, j
    cdef double s = 0.0
    for k in range(X.indptr[i], X.indptr[i + 1]):
        j = X.indices[k]
        a = lo
        b = hi
        while a < b:
            mid = a + (b - a) // 2
            if w_indices[mid] < j:
                a = mid + 1
            else:
                b = mid
        if a == hi:
            break
        if w_indices[a] == j:
            s += X.data[k] * w_data[a]
        lo = a
    return s


cdef inline double dense_dot(CSR X, int i, const double* w, int width) noexcept nogil:
    """x_i . w for a dense w; the row's columns at or beyond width count as zeros."""
    cdef int k
    cdef double s = 0.0
    for k in range(X.indptr[i], X.indptr[i + 1]):
        if X.indices[k] >= width:
            break
        s += X.data[k] * w[X.indices[k]]
    return s


cdef void decision_row(const Weights* w, CSR X, int i, double* out) noexcept nogil:
    cdef int p
    for p in range(w.n_dec):
        if w.dense != NULL:
            out[p] = dense_dot(X, i, w.dense + <Py_ssize_t>p * w.width, w.width) - w.rho[p]
        else:
            out[p] = sparse_dot(X, i, w.data, w.indices, w.indptr[p], w.indptr[p + 1]) - w.rho[p]


cdef void decision_block(const Weights* w, CSR X, int lo, int hi, double* out,
                         int n_threads) noexcept nogil:
    cdef int i
    if n_threads <= 1:
        for i in range(lo, hi):
            decision_row(w, X, i, out + <Py_ssize_t>i * w.n_dec)
        return
    for i in prange(lo, hi, num_threads=n_threads, schedule="static"):
        decision_row(w, X, i, out + <Py_ssize_t>i * w.n_dec)


cdef class LinearDecisionFunction:
    """Weight vectors and offsets of a linear model, held for nogil evaluation.

    W : canonical CSR (n_dec x width), row p holding w_p; rho : (n_dec,); dense : hold W as a
    dense n_dec x width array (faster per row; the caller chooses it when W is not much sparser
    than that).
    """

    cdef Weights w
    cdef readonly int n_dec
    cdef readonly bint dense
    cdef object _keep   # the arrays the Weights' pointers point into

    def __init__(self, W, rho, bint dense):
        rho = np.ascontiguousarray(rho, dtype=np.float64).reshape(-1)
        if rho.shape[0] != W.shape[0]:
            raise ValueError("rho does not match the number of weight vectors")
        data = np.ascontiguousarray(W.data, dtype=np.float64)
        indices = np.ascontiguousarray(W.indices, dtype=np.int32)
        indptr = np.ascontiguousarray(W.indptr, dtype=np.int32)
        dense = dense and W.shape[1] > 0 and W.shape[0] > 0
        full = np.ascontiguousarray(W.toarray()).reshape(-1) if dense else np.zeros(0)
        self._keep = (data, indices, indptr, rho, full)
        cdef const double[::1] data_v = data
        cdef const int[::1] indices_v = indices
        cdef const int[::1] indptr_v = indptr
        cdef const double[::1] rho_v = rho
        cdef const double[::1] full_v = full
        self.n_dec = W.shape[0]
        self.dense = dense
        self.w.n_dec = W.shape[0]
        self.w.width = W.shape[1]
        self.w.dense = &full_v[0] if full_v.shape[0] > 0 else NULL
        self.w.data = &data_v[0] if data_v.shape[0] > 0 else NULL
        self.w.indices = &indices_v[0] if indices_v.shape[0] > 0 else NULL
        self.w.indptr = &indptr_v[0]
        self.w.rho = &rho_v[0] if rho_v.shape[0] > 0 else NULL

    def compute(self, X, double[:, ::1] out, int n_threads=1):
        """Fill out (n_rows x n_dec) with the decision values of the rows of the canonical CSR X
        (columns beyond the model's width count as zeros). Raises KeyboardInterrupt between
        blocks of rows on Ctrl-C."""
        # the view points into X's own arrays, which X keeps alive for this call
        cdef CSR A = csr_view(X.data, X.indices, X.indptr, X.shape[0], X.shape[1])
        if out.shape[0] != A.n_rows or out.shape[1] != self.n_dec:
            raise ValueError("output has the wrong shape")
        if A.n_rows == 0 or self.n_dec == 0:
            return
        n_threads = max(1, min(n_threads, A.n_rows))
        cdef double work = self.n_dec * (<double>A.indptr[A.n_rows] / A.n_rows + 1.0)
        cdef int block = <int>min(max(BLOCK_WORK / work, 4.0 * n_threads), <double>A.n_rows)
        cdef int lo, hi
        for lo in range(0, A.n_rows, block):
            hi = min(lo + block, A.n_rows)
            with nogil:
                decision_block(&self.w, A, lo, hi, &out[0, 0], n_threads)
            PyErr_CheckSignals()
