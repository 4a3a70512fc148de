"""Kernel rows over CSR: k(x, z_j) for one row x (scattered into a dense buffer) against every
row z_j of a CSR matrix, threaded over j. Used by prediction and by the kernel solvers' caches."""
from cython.parallel cimport prange
from libc.math cimport tanh
cimport numpy as cnp
import numpy as np

from ._csr cimport CSR, csr_view, row_dot, row_sqnorm

cnp.import_array()

_KINDS = {"linear": LINEAR, "polynomial": POLYNOMIAL, "rbf": RBF, "sigmoid": SIGMOID,
          "precomputed": PRECOMPUTED}


cdef KernelParams kernel_params(str kind, double gamma, int degree, double coef0) except *:
    cdef KernelParams k
    k.kind = _KINDS[kind]
    k.gamma = gamma
    k.degree = degree
    k.coef0 = coef0
    return k


cdef double powi(double base, int times) noexcept nogil:
    """base ** times by repeated squaring (LIBSVM's polynomial kernel uses the same)."""
    cdef double tmp = base, ret = 1.0
    cdef int t = times
    while t > 0:
        if t % 2 == 1:
            ret *= tmp
        tmp *= tmp
        t //= 2
    return ret


cdef double exp_neg(double t) noexcept nogil:
    return exp_neg_inline(t)


cdef double tanh_(double t) noexcept nogil:
    return tanh(t)


cdef void scatter_row(CSR X, int i, double* dense) noexcept nogil:
    cdef int k
    for k in range(X.indptr[i], X.indptr[i + 1]):
        dense[X.indices[k]] = X.data[k]


cdef void unscatter_row(CSR X, int i, double* dense) noexcept nogil:
    cdef int k
    for k in range(X.indptr[i], X.indptr[i + 1]):
        dense[X.indices[k]] = 0.0


cdef void kernel_row(KernelParams k, CSR Z, const double* z_sqnorm, const double* x_dense,
                     double x_sqnorm, double* out, int n_threads) noexcept nogil:
    """out[j] = k(x, z_j) for every row j of Z. x_dense must cover Z.n_cols columns."""
    cdef int j
    if n_threads <= 1 or Z.n_rows < 2048:
        for j in range(Z.n_rows):
            out[j] = kernel_from_dot(k, row_dot(Z, j, x_dense), x_sqnorm, z_sqnorm[j])
    else:
        for j in prange(Z.n_rows, num_threads=n_threads, schedule="static"):
            out[j] = kernel_from_dot(k, row_dot(Z, j, x_dense), x_sqnorm, z_sqnorm[j])


def row_sqnorms(X):
    """Squared norm of every row of a canonical CSR matrix."""
    cdef const double[::1] data = X.data
    cdef const int[::1] indices = X.indices
    cdef const int[::1] indptr = X.indptr
    cdef CSR A = csr_view(data, indices, indptr, X.shape[0], X.shape[1])
    cdef double[::1] out = np.empty(A.n_rows)
    cdef int i
    with nogil:
        for i in range(A.n_rows):
            out[i] = row_sqnorm(A, i)
    return np.asarray(out)


def kernel_matrix(X, Z, str kind, double gamma=0.0, int degree=3, *, double coef0=0.0, int n_threads=1):
    """Dense K[i, j] = k(x_i, z_j) (tests, small problems, Nystrom). X and Z canonical CSR;
    columns beyond either matrix's width count as zeros."""
    cdef KernelParams kp = kernel_params(kind, gamma, degree, coef0)
    cdef int n_cols = max(X.shape[1], Z.shape[1])
    cdef const double[::1] xd = X.data
    cdef const int[::1] xi = X.indices
    cdef const int[::1] xp = X.indptr
    cdef const double[::1] zd = Z.data
    cdef const int[::1] zi = Z.indices
    cdef const int[::1] zp = Z.indptr
    cdef CSR A = csr_view(xd, xi, xp, X.shape[0], n_cols)
    cdef CSR B = csr_view(zd, zi, zp, Z.shape[0], n_cols)
    cdef double[::1] zsq = row_sqnorms(Z)
    cdef double[:, ::1] K = np.empty((A.n_rows, B.n_rows))
    cdef double[::1] dense = np.zeros(max(n_cols, 1))
    cdef int i
    if B.n_rows == 0:
        return np.asarray(K)
    with nogil:
        for i in range(A.n_rows):
            scatter_row(A, i, &dense[0])
            kernel_row(kp, B, &zsq[0], &dense[0], row_sqnorm(A, i), &K[i, 0], n_threads)
            unscatter_row(A, i, &dense[0])
    return np.asarray(K)
