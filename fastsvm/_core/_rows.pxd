# StackedRows (Z = S X: some rows of X, signed): its fields and nogil row products, for the
# kernels that build on it (NewtonCG in _ssnal_linear).
from ._csr cimport CSR


cdef class StackedRows:
    cdef CSR X
    cdef const int[::1] source
    cdef const double[::1] sign
    cdef readonly int m, n, p
    cdef readonly int n_threads
    cdef readonly object row_nnz      # stored values of each row of Z (for pass counting)
    cdef double[::1] xn               # n doubles
    cdef double[::1] acc              # the row blocks' accumulators, p doubles each
    cdef const int[::1] stop          # the caller's stop flag
    cdef object keep                  # the arrays X's view points into

    cdef void rows_matvec_nogil(self, const int* rows, int k, const double* v, double* out) noexcept nogil
    cdef void rows_rmatvec_nogil(self, const int* rows, int k, const double* coef, double* out) noexcept nogil
    cdef int rows_gram_nogil(self, const int* rows, int k, const double* a_rows, const double* weights,
                             double* G, double* s) noexcept nogil
    cdef int rows_kernel_nogil(self, const int* rows, int k, double* dense, double* K) noexcept nogil
    cdef void check_length(self, Py_ssize_t got, Py_ssize_t want) except *
    cdef void check_rows(self, const int[::1] rows) except *
