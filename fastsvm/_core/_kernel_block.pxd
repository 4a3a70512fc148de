# Kernel rows in blocks: K[r, t] for a set of rows r against every row t of one data matrix (or
# a list of them), dense rows through BLAS (dgemm), CSR rows through a sparse x dense block product.
from ._csr cimport CSR
from ._kernel cimport KernelParams


cdef class KernelRows:
    cdef readonly int n               # data rows (the columns t of a kernel row)
    cdef readonly int p               # features
    cdef readonly int n_threads
    cdef readonly bint dense          # rows held dense, row-major: products through dgemm
    cdef KernelParams kp
    cdef CSR X                        # the CSR rows (dense is False), or precomputed values
    cdef const double* xd             # n x p, row-major (dense is True)
    cdef double* sqnorm               # |x_t|^2
    cdef int* serial                  # precomputed kernel: row t's serial number, else NULL
    cdef int dense_len                # length of a scattered row (precomputed: max serial + 1)
    cdef double* work                 # per-thread tiles of dot products
    cdef Py_ssize_t work_per_thread
    cdef double* wbuf                 # the block's rows, dense (feature-major for CSR)
    cdef Py_ssize_t wbuf_len
    cdef object _keep                 # the arrays the pointers above read

    cdef double diagonal(self, int t) noexcept nogil
    cdef int compute(self, const int* rows, int m, const int* cols, int n_cols, float** out,
                     const int* stop) noexcept nogil
    cdef int group_rows(self, int m) noexcept nogil
    cdef int hold_feature_major(self, const int* rows, int g) noexcept nogil
    cdef void tile_sparse(self, const int* rows, int g, int gs, int i0, int i1, double* tile,
                          float** out, const int* at) noexcept nogil
    cdef void tile_dense(self, const int* rows, int g, int i0, int i1, double* tile, float** out,
                         const int* cols) noexcept nogil
    cdef void finish(self, const int* rows, int g, int i0, int i1, const double* sq, double* col,
                     float* out) noexcept nogil
