"""CSR mat-vecs over rows without the GIL: X v threaded over rows, X^T u over fixed row blocks."""
from cython.parallel cimport prange
from libc.string cimport memset
cimport numpy as cnp
import numpy as np

cnp.import_array()


cdef CSR csr_view(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                  int n_rows, int n_cols) noexcept:
    cdef CSR X
    X.data = &data[0] if data.shape[0] > 0 else NULL
    X.indices = &indices[0] if indices.shape[0] > 0 else NULL
    X.indptr = &indptr[0]
    X.n_rows = n_rows
    X.n_cols = n_cols
    return X


cdef void matvec(CSR X, const double* v, double* out, int n_threads) noexcept nogil:
    """out[i] = x_i . v for every row."""
    cdef int i
    if n_threads <= 1 or X.n_rows < 4096:
        for i in range(X.n_rows):
            out[i] = row_dot(X, i, v)
    else:
        for i in prange(X.n_rows, num_threads=n_threads, schedule="static"):
            out[i] = row_dot(X, i, v)


cdef void rmatvec(CSR X, const double* u, double* out, double* scratch, int n_threads) noexcept nogil:
    """out = X^T u. The rows are summed in row_blocks(n_rows, n_cols) fixed blocks, each into its
    slice of scratch (that many times n_cols doubles), and the slices are added in block order:
    the same result for any thread count."""
    cdef int i, j, b, lo, hi, size
    cdef int blocks = row_blocks(X.n_rows, X.n_cols)
    cdef double* acc
    memset(out, 0, X.n_cols * sizeof(double))
    if blocks == 1:
        for i in range(X.n_rows):
            if u[i] != 0.0:
                row_axpy(X, i, u[i], out)
        return
    size = (X.n_rows + blocks - 1) // blocks
    for b in prange(blocks, num_threads=max(1, min(n_threads, blocks)), schedule="static"):
        acc = scratch + <Py_ssize_t>b * X.n_cols
        memset(acc, 0, X.n_cols * sizeof(double))
        lo = b * size
        hi = min(lo + size, X.n_rows)
        for i in range(lo, hi):
            if u[i] != 0.0:
                row_axpy(X, i, u[i], acc)
    for b in range(blocks):
        acc = scratch + <Py_ssize_t>b * X.n_cols
        for j in range(X.n_cols):
            out[j] += acc[j]


def csr_matvec(X, const double[::1] v, int n_threads=1):
    """X @ v (test and orchestration entry point)."""
    cdef const double[::1] data = X.data
    cdef const int[::1] indices = X.indices
    cdef const int[::1] indptr = X.indptr
    cdef CSR A = csr_view(data, indices, indptr, X.shape[0], X.shape[1])
    if v.shape[0] != A.n_cols:
        raise ValueError(f"vector has length {v.shape[0]}, matrix has {A.n_cols} columns")
    cdef double[::1] out = np.empty(A.n_rows)
    with nogil:
        matvec(A, &v[0] if A.n_cols > 0 else NULL, &out[0] if A.n_rows > 0 else NULL, n_threads)
    return np.asarray(out)


def csr_rmatvec(X, const double[::1] u, int n_threads=1):
    """X.T @ u (test and orchestration entry point)."""
    cdef const double[::1] data = X.data
    cdef const int[::1] indices = X.indices
    cdef const int[::1] indptr = X.indptr
    cdef CSR A = csr_view(data, indices, indptr, X.shape[0], X.shape[1])
    if u.shape[0] != A.n_rows:
        raise ValueError(f"vector has length {u.shape[0]}, matrix has {A.n_rows} rows")
    cdef double[::1] out = np.zeros(A.n_cols)
    cdef double[::1] scratch = np.empty(row_blocks(A.n_rows, A.n_cols) * max(A.n_cols, 1))
    if A.n_rows == 0 or A.n_cols == 0:
        return np.asarray(out)
    with nogil:
        rmatvec(A, &u[0], &out[0], &scratch[0], n_threads)
    return np.asarray(out)
