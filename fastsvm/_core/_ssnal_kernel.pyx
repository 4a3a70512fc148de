"""The kernel work of SSsNAL on nonlinear kernels (fastsvm.solvers.ssnal.kernel), without the GIL.

KernelProducts: out[r] += sum_j coef[j] k(x_{rows[r]}, x_{cols[j]}) for many rows at once (the
gradient Q x of the whole problem, and its updates on the rows outside the working set), without
storing the kernel block. The rows X[cols] are transposed into an inverted index (feature ->
(column, value)); the dot products of one row with every column are then accumulated by walking the
lists of the row's stored features: sum over its features of the list lengths instead of one sparse
dot per pair, with sequential memory access. A feature stored in a quarter of the columns or more is
kept as a dense vector over the columns instead, and a row's dense features are summed sixteen
columns at a time in registers (dot_slots: one load and one multiply-add per value and feature, with
AVX-512 clones). When float32 holds every value of X exactly (binary and small-integer features),
the dense vectors are float32, widened as they are read (dot_slots_f32): the same sums from half the
bytes. When every value is 1 (binary features), they are bytes and the dot products counts
(count_slots). For the RBF kernel the exponentials are computed in a vectorized pass (with AVX2 and
AVX-512 clones where the CPU has them); binary rows' squared distances are integers, and their
kernel values are looked up in a table of exp(-gamma k) instead, the same bits (rbf_table_block: a
lookup costs less than an exponential). Each row is summed by one thread in a fixed order, so the
result does not depend on the thread count.

The working set's products with, blocks of and new values for cached kernel columns are
KernelCache's own methods (fastsvm._core._cache).
"""
from cython.parallel cimport prange, threadid
cimport numpy as cnp
import numpy as np

from ._status cimport stop_requested
from ._csr cimport CSR, csr_view
from ._kernel cimport (KernelParams, PRECOMPUTED, RBF, count_slots, dot_rows, dot_slots,
                       dot_slots_f32, exp_neg_block, kernel_params, kernel_from_dot, rbf_block,
                       rbf_table_block)
from ._kernel import row_sqnorms
from ..errors import FastSVMError

cnp.import_array()


cdef enum:
    BLOCK_EVALUATIONS = 20000000   # kernel values between two looks at the stop flag
    DENSE_FRACTION = 4             # a feature in >= 1/4 of the columns is indexed densely,
    DENSE_FRACTION_NARROW = 8      # in >= 1/8 when the dense vectors are float32 (cheaper to read)
    DENSE_FRACTION_BINARY = 32     # in >= 1/32 when they are bytes


cdef class KernelProducts:
    """KernelProducts(X, kind, gamma=0.0, degree=3, coef0=0.0, n_threads=1, stop=None)

    Kernel-matrix products and blocks over the rows of the canonical CSR X (fastsvm.csr.to_csr)
    for the linear, polynomial, RBF and sigmoid kernels. ``stop`` (int32[1]) interrupts them."""
    cdef CSR X
    cdef KernelParams kp
    cdef readonly int n_threads
    cdef const double[::1] sqnorm
    cdef int max_row_nnz
    cdef readonly bint narrow       # every value of X exactly a float32: float32 dense vectors
    cdef readonly bint binary       # every value 1, at most 255 per row: byte dense vectors
    cdef const double[::1] rbf_table  # every value 1 and RBF: exp(-gamma k) for every squared distance k
    cdef const int[::1] stop
    cdef object _keep

    def __init__(self, X, str kind, double gamma=0.0, int degree=3, double coef0=0.0,
                 *, int n_threads=1, stop=None):
        cdef const double[::1] data = X.data
        cdef const int[::1] indices = X.indices
        cdef const int[::1] indptr = X.indptr
        self._keep = (X, data, indices, indptr)
        self.X = csr_view(data, indices, indptr, X.shape[0], X.shape[1])
        self.kp = kernel_params(kind, gamma, degree, coef0)
        if self.kp.kind == PRECOMPUTED:
            raise FastSVMError("KernelProducts does not take precomputed kernels")
        self.sqnorm = row_sqnorms(X)
        self.max_row_nnz = int(np.max(np.diff(X.indptr))) if X.shape[0] else 0
        self.narrow, ones = _value_kinds(self.X)
        self.binary = ones and self.max_row_nnz <= 255
        # rows whose values are all 1 have the squared distances |x|^2 + |z|^2 - 2 x.z = the integers
        # 0 .. 2 max_row_nnz (exact whatever the index): their kernel values are looked up (the
        # exponentials cost as much as the counts)
        self.rbf_table = exp_neg(gamma * np.arange(2 * self.max_row_nnz + 1.0)) \
            if ones and self.kp.kind == RBF else np.empty(0)
        self.n_threads = max(1, n_threads)
        self.stop = np.zeros(1, dtype=np.int32) if stop is None else stop

    def matvec(self, const int[::1] rows, const int[::1] cols, const double[::1] coef, double[::1] out):
        """out[r] += sum_j coef[j] k(x_{rows[r]}, x_{cols[j]}); KeyboardInterrupt when stopped."""
        if coef.shape[0] != cols.shape[0] or out.shape[0] != rows.shape[0]:
            raise FastSVMError("matvec: coef must match cols and out must match rows")
        self._run(rows, cols, &coef[0] if coef.shape[0] else NULL, &out[0] if out.shape[0] else NULL)
        return np.asarray(out)

    def block(self, const int[::1] rows, const int[::1] cols):
        """K(x_rows, x_cols) as a dense float64 array (len(rows) x len(cols))."""
        out = np.zeros((rows.shape[0], cols.shape[0]))
        cdef double[:, ::1] out_ = out
        self._run(rows, cols, NULL, &out_[0, 0] if out.size else NULL)
        return out

    cdef void _run(self, const int[::1] rows, const int[::1] cols, const double* coef, double* out) except *:
        """With coef: out[r] += sum_j coef[j] k(r, j); without: out[r * n_cols + j] = k(r, j)."""
        cdef int n_rows = <int>rows.shape[0], n_cols = <int>cols.shape[0]
        _check_rows(rows, self.X.n_rows)
        _check_rows(cols, self.X.n_rows)
        if n_rows == 0 or n_cols == 0:
            return
        cdef int p = self.X.n_cols, threads = min(self.n_threads, n_rows), k, j
        # the inverted index of X[cols]: features stored in at least 1/DENSE_FRACTION of the
        # columns as dense vectors over the columns (dot_slots), the others as
        # lists of (column, value)
        cdef int fraction = (DENSE_FRACTION_BINARY if self.binary else
                             DENSE_FRACTION_NARROW if self.narrow else DENSE_FRACTION)
        cdef int[::1] count = np.zeros(p + 1, dtype=np.int32)
        with nogil:
            for j in range(n_cols):
                for k in range(self.X.indptr[cols[j]], self.X.indptr[cols[j] + 1]):
                    count[self.X.indices[k]] += 1
        counts = np.asarray(count)[:p]
        is_dense = counts * fraction >= n_cols
        slot_ = np.full(p, -1, dtype=np.int32)
        slot_[is_dense] = np.arange(int(is_dense.sum()), dtype=np.int32)
        cdef int[::1] slot = slot_
        cdef int[::1] start = np.zeros(p + 1, dtype=np.int32)
        np.cumsum(np.where(is_dense, 0, counts), out=np.asarray(start)[1:])
        cdef Py_ssize_t n_sparse = start[p]
        cdef int[::1] owner = np.empty(max(n_sparse, 1), dtype=np.int32)
        cdef double[::1] value = np.empty(max(n_sparse, 1))
        cdef Py_ssize_t n_dense = max(int(is_dense.sum()) * n_cols, 1)
        # one buffer, typed by what holds the values exactly: bytes, float32 or float64
        dense_ = np.zeros(n_dense, dtype=np.uint8 if self.binary else np.float32 if self.narrow else np.float64)
        cdef char* dense_p = <char*>cnp.PyArray_DATA(dense_)
        cdef unsigned char* dense8_p = <unsigned char*>dense_p if self.binary else NULL
        cdef float* dense32_p = <float*>dense_p if self.narrow and not self.binary else NULL
        cdef double* dense64_p = <double*>dense_p if not self.narrow else NULL
        cdef double[::1] col_sqnorm = np.empty(n_cols)
        cdef double[::1] scratch = np.empty(<Py_ssize_t>threads * n_cols)
        cdef int row_room = max(1, self.max_row_nnz)
        cdef double[::1] row_value = np.empty(threads * row_room)
        cdef int[::1] row_slot = np.empty(threads * row_room, dtype=np.int32)
        cdef int block = max(16, min(n_rows, BLOCK_EVALUATIONS // n_cols))
        cdef int lo = 0, hi
        cdef bint interrupted = False
        cdef _Inverted inv
        inv.n_cols = n_cols
        inv.slot = &slot[0]
        inv.dense = dense64_p
        inv.dense32 = dense32_p
        inv.dense8 = dense8_p
        inv.start = &start[0]
        inv.owner = &owner[0]
        inv.value = &value[0]
        inv.sqnorm = &col_sqnorm[0]
        inv.rbf_table = &self.rbf_table[0] if self.rbf_table.shape[0] else NULL
        inv.coef = coef
        inv.scratch = &scratch[0]
        inv.row_room = row_room
        inv.row_value = &row_value[0]
        inv.row_slot = &row_slot[0]
        with nogil:
            _invert(self.X, &cols[0], n_cols, &slot[0], &start[0], &owner[0], &value[0], dense64_p,
                    dense32_p, dense8_p)
            for j in range(n_cols):
                col_sqnorm[j] = self.sqnorm[cols[j]]
            while lo < n_rows:
                interrupted = stop_requested(self.stop)
                if interrupted:
                    break
                hi = min(lo + block, n_rows)
                _rows(self.kp, self.X, &self.sqnorm[0], &rows[0], lo, hi, inv, out, threads)
                lo = hi
        if interrupted:
            raise KeyboardInterrupt


cdef (bint, bint) _value_kinds(CSR X) noexcept:
    """(every stored value exactly a float32, every stored value 1), in one pass without a copy."""
    cdef Py_ssize_t k, nnz = X.indptr[X.n_rows]
    cdef bint narrow = True, ones = True
    cdef double v
    with nogil:
        for k in range(nnz):
            v = X.data[k]
            ones = ones and v == 1.0
            if <double><float>v != v:
                narrow = False
                break
    return narrow, ones and narrow


cdef void _check_rows(const int[::1] rows, int n) except *:
    if rows.shape[0] and (np.min(rows) < 0 or np.max(rows) >= n):
        raise FastSVMError("matvec: row index out of range")


cdef void _invert(CSR X, const int* cols, int n_cols, const int* slot, int* start, int* owner, double* value,
                  double* dense, float* dense32, unsigned char* dense8) noexcept nogil:
    """Fill the index: dense[slot[f] * n_cols + j] for the dense features (in dense8 as 1, or in
    dense32, when that one is not NULL); the list of a sparse feature f is
    owner/value[start[f]:start[f+1]], column numbers j ascending (start holds the list starts on
    entry and is restored on exit)."""
    cdef int j, k, f, p = X.n_cols
    for j in range(n_cols):
        for k in range(X.indptr[cols[j]], X.indptr[cols[j] + 1]):
            f = X.indices[k]
            if slot[f] >= 0:
                if dense8 != NULL:
                    dense8[<Py_ssize_t>slot[f] * n_cols + j] = 1
                elif dense32 != NULL:
                    dense32[<Py_ssize_t>slot[f] * n_cols + j] = <float>X.data[k]
                else:
                    dense[<Py_ssize_t>slot[f] * n_cols + j] = X.data[k]
            else:
                owner[start[f]] = j
                value[start[f]] = X.data[k]
                start[f] += 1
    for f in range(p, 0, -1):      # start[f] now holds the end of list f: shift back
        start[f] = start[f - 1]
    start[0] = 0


cdef struct _Inverted:
    # the inverted index of the columns X[cols] and what the kernel needs of them
    int n_cols
    const int* slot              # feature -> its row of dense, or -1
    const double* dense          # the dense features' vectors (NULL when narrow)
    const float* dense32         # the same in float32 when KernelProducts.narrow, else NULL
    const unsigned char* dense8  # as bytes when KernelProducts.binary, else NULL
    const int* start
    const int* owner
    const double* value
    const double* sqnorm
    const double* rbf_table      # KernelProducts.rbf_table, or NULL
    const double* coef
    double* scratch              # per thread: n_cols values at scratch[thread n_cols:]
    int row_room                 # per thread: the row's dense features (value, slot) in
    double* row_value            # row_value / row_slot[thread * row_room:]
    int* row_slot


cdef inline void _row_values(KernelParams kp, CSR X, int i, double sq, _Inverted inv, int tid,
                             double* value) noexcept nogil:
    """value[j] = k(x_i, x_{cols[j]}) (sq = |x_i|^2): the dot products of the row's dense-indexed
    features a register block at a time (dot_slots), the lists of its other features added,
    then the kernel of each in place."""
    cdef int k, t, f, n = inv.n_cols, n_dense = 0
    cdef double v
    cdef double* dv = inv.row_value + <Py_ssize_t>tid * inv.row_room
    cdef int* ds = inv.row_slot + <Py_ssize_t>tid * inv.row_room
    for k in range(X.indptr[i], X.indptr[i + 1]):
        f = X.indices[k]
        if inv.slot[f] >= 0:
            dv[n_dense] = X.data[k]
            ds[n_dense] = inv.slot[f]
            n_dense += 1
    if inv.dense8 != NULL:
        count_slots(ds, n_dense, inv.dense8, n, n, value)
    elif inv.dense32 != NULL:
        dot_slots_f32(dv, ds, n_dense, inv.dense32, n, n, value)
    else:
        dot_slots(dv, ds, n_dense, inv.dense, n, n, value)
    for k in range(X.indptr[i], X.indptr[i + 1]):
        f = X.indices[k]
        if inv.slot[f] < 0:
            v = X.data[k]
            for t in range(inv.start[f], inv.start[f + 1]):
                value[inv.owner[t]] += v * inv.value[t]
    if inv.rbf_table != NULL:
        rbf_table_block(inv.rbf_table, sq, inv.sqnorm, value, n)
    elif kp.kind == RBF:    # the exponentials in one vectorized pass
        rbf_block(kp.gamma, sq, inv.sqnorm, value, n)
    else:
        for t in range(n):
            value[t] = kernel_from_dot(kp, value[t], sq, inv.sqnorm[t])


cdef inline void _row(KernelParams kp, CSR X, int i, double sq, _Inverted inv, int tid, int r,
                      double* out) noexcept nogil:
    """Row r of the result (row i of X) by thread tid: with inv.coef, out[r] += the kernel
    values . coef (in the thread's scratch); without, the values themselves in out[r * n_cols:]."""
    cdef int n = inv.n_cols
    cdef double* scratch = inv.scratch + <Py_ssize_t>tid * n
    cdef double s
    if inv.coef != NULL:
        _row_values(kp, X, i, sq, inv, tid, scratch)
        dot_rows(inv.coef, <const double**>&scratch, 1, n, &s)   # one row: the coef dot
        out[r] += s
    else:
        _row_values(kp, X, i, sq, inv, tid, out + <Py_ssize_t>r * n)


cdef void _rows(KernelParams kp, CSR X, const double* sqnorm, const int* rows, int lo, int hi,
                _Inverted inv, double* out, int threads) noexcept nogil:
    """Rows [lo, hi) of the result, on the threads."""
    cdef int r
    if threads <= 1 or hi - lo < 2:
        for r in range(lo, hi):
            _row(kp, X, rows[r], sqnorm[rows[r]], inv, 0, r, out)
        return
    for r in prange(lo, hi, num_threads=threads, schedule="dynamic", chunksize=4):
        _row(kp, X, rows[r], sqnorm[rows[r]], inv, threadid(), r, out)


def exp_neg(values):
    """exp(-max(v, 0)) elementwise by the vectorized routine of the RBF products (KernelProducts'
    table for binary rows, and tests)."""
    out = np.array(values, dtype=np.float64).ravel()
    cdef double[::1] v = out
    with nogil:
        exp_neg_block(&v[0] if v.shape[0] else NULL, <int>v.shape[0])
    return out
