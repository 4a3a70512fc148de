# Row access to a CSR matrix without copying: every sweep in fastsvm is written against this.
# Indices and indptr are int32 (matrices with >= 2**31 stored values are refused in Python).

cdef struct CSR:
    const double* data
    const int* indices
    const int* indptr
    int n_rows
    int n_cols


cdef CSR csr_view(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                  int n_rows, int n_cols) noexcept

cdef inline double span_dot(const double* data, const int* indices, int lo, int hi,
                            const double* v) noexcept nogil:
    """The stored values data[lo:hi] (in columns indices[lo:hi]) dotted with a dense v."""
    cdef int k
    cdef double s = 0.0
    for k in range(lo, hi):
        s += data[k] * v[indices[k]]
    return s

cdef inline double span_sqnorm(const double* data, int lo, int hi) noexcept nogil:
    cdef int k
    cdef double s = 0.0
    for k in range(lo, hi):
        s += data[k] * data[k]
    return s

cdef inline double row_dot(CSR X, int i, const double* v) noexcept nogil:
    """x_i . v for a dense v of length X.n_cols."""
    return span_dot(X.data, X.indices, X.indptr[i], X.indptr[i + 1], v)

cdef inline void row_axpy(CSR X, int i, double a, double* v) noexcept nogil:
    """v += a * x_i for a dense v of length X.n_cols."""
    cdef int k
    for k in range(X.indptr[i], X.indptr[i + 1]):
        v[X.indices[k]] += a * X.data[k]

cdef inline double row_sqnorm(CSR X, int i) noexcept nogil:
    return span_sqnorm(X.data, X.indptr[i], X.indptr[i + 1])

cdef inline bint indices_within(const int[::1] idx, int hi) noexcept nogil:
    """All of idx in [0, hi): a C loop, where np.min and np.max on a memoryview each pay NumPy's
    call overhead (checks made at every Newton step of the SSsNAL solvers)."""
    cdef Py_ssize_t j
    cdef bint bad = False
    for j in range(idx.shape[0]):
        bad |= (idx[j] < 0) | (idx[j] >= hi)
    return not bad

cdef enum:
    # A sum of rows into a vector (X^T u and its kin) is split into fixed blocks of rows, each
    # block summed alone and the blocks added in their order; threads only choose who sums a
    # block, so the bits do not depend on the thread count.
    BLOCK_ROWS_MIN = 2048       # rows of a block at least
    ROW_BLOCKS_MAX = 6          # shared evenly by 1, 2, 3 or 6 threads
    BLOCK_DOUBLES = 1 << 22     # the blocks' accumulators: at most 32 MiB beyond two of them

cdef inline int row_blocks(Py_ssize_t n_rows, Py_ssize_t n_cols) noexcept nogil:
    """The number of blocks a sum over n_rows rows of n_cols columns is split into: chosen by
    the data alone, never by the thread count."""
    cdef Py_ssize_t blocks = min(n_rows // BLOCK_ROWS_MIN, <Py_ssize_t>ROW_BLOCKS_MAX)
    blocks = min(blocks, max(<Py_ssize_t>2, BLOCK_DOUBLES // max(n_cols, <Py_ssize_t>1)))
    return <int>max(blocks, <Py_ssize_t>1)

cdef void matvec(CSR X, const double* v, double* out, int n_threads) noexcept nogil
cdef void rmatvec(CSR X, const double* u, double* out, double* scratch, int n_threads) noexcept nogil
