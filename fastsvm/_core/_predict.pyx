# Decision values of a LIBSVM model for the rows of a CSR matrix, threaded over rows.
#
# Each row is scattered into its thread's dense buffer, its kernel values against every support
# vector are formed from the dot product in index order (as LIBSVM forms them), and the weighted
# sums are taken in the order svm_predict_values takes them (class i's coefficients, then class j's,
# then minus rho). RBF models that are not one-vs-one (regression, whose values svm-predict writes
# with all 17 digits, and one-class) also sum |x - z|^2 term by term as LIBSVM does: their values
# then have the bits of LIBSVM's (built, as its Makefile does, without OpenMP or FMA contraction).
# Classifiers keep |x|^2 + |z|^2 - 2 x.z, a dot product instead of a merge of two index sets, where
# only a sign (and %g probabilities) is written. Rows are independent: any thread count gives the
# same bits.
#
# Models whose support vectors fit a dense table take their kernel values in blocks (all but the
# term-by-term RBF ones): the support vectors held feature-major, a tile of rows against a chunk of
# them at a time, each row's stored values scaling lines of the table
# (fastsvm_sparse_row_dots_exact) -- the same products summed in the same order as the dot product
# above, without FMA: the same bits, vectorized. Dense rows (a C-ordered float64 array) take a tile's
# dot products from the table a chunk of support vectors at a time by dgemm (docs/blocked_solver.md):
# BLAS's sums, not LIBSVM's bits; the caller keeps BLAS on one thread, as our threads call it. Their
# columns that are mostly zeros (one-hot features) add their parts by each row's nonzeros instead.
# Support vectors whose stored values are all 1 are also held as bytes: a binary row's dot products
# are then counts of common features and, for RBF, its kernel values lookups in a table of the
# exponentials at each integer squared distance -- exact integers, the same bits.
# Each chunk's kernel values go into the sums while they are in cache. A classifier's decision
# values sum their terms chunk by chunk in weighted_sum's fixed lanes (only their signs, and %g
# probabilities, are written); regression and one-class models in LIBSVM's one sum, in order.
from cpython.exc cimport PyErr_CheckSignals
from cython.parallel cimport prange, threadid
from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer
from libc.string cimport memcpy, memset
cimport numpy as cnp
import numpy as np

from ._csr cimport CSR, csr_view, row_sqnorm, span_dot, span_sqnorm
from ._kernel cimport (KernelParams, PRECOMPUTED, RBF, count_slots, exp_neg_block, exp_neg_inline, kernel_params,
                       kernel_from_dot, rbf_block, rbf_table_block, sparse_row_dots, sparse_row_dots_exact, scatter_row,
                       unscatter_row, weighted_sum)
from ..csr import row_spans

cnp.import_array()

# Rows per nogil block are chosen so that one block is about this many multiply-adds: small
# enough to notice Ctrl-C within a fraction of a second, large enough to keep the threads busy.
cdef enum:
    BLOCK_WORK = 20000000
    TILE_ROWS = 32        # rows against one chunk of support vectors
    SV_CHUNK = 512        # support vectors of a chunk: its table lines stay in L2 over a tile
    TABLE_MAX_BYTES = 1 << 28   # the feature-major table of the support vectors at most
    DENSE_ROWS = 256      # dense rows per dgemm tile: each chunk of the table read once for them
    DENSE_WORK = DENSE_ROWS * (SV_CHUNK + 1)   # doubles of a thread's buffer: dot products, squared norms

# a column of dense rows with fewer nonzeros than this share goes by its nonzeros, not through dgemm
SPARSE_SHARE = 0.5


ctypedef void (*dgemm_t)(char* transa, char* transb, int* m, int* n, int* k, double* alpha, double* a, int* lda,
                         double* b, int* ldb, double* beta, double* c, int* ldc) noexcept nogil

cdef dgemm_t _dgemm = NULL


cdef dgemm_t blas_dgemm():
    """scipy's dgemm, looked up on first use: the commands that never predict dense rows do not load
    scipy.linalg (tests/test_startup.py)."""
    global _dgemm
    if _dgemm == NULL:
        from scipy.linalg import cython_blas
        capsule = cython_blas.__pyx_capi__["dgemm"]
        _dgemm = <dgemm_t>PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule))
    return _dgemm


cdef struct Machine:
    KernelParams kernel
    # support vector s: the values sv_data[sv_start[s]:sv_stop[s]] in columns sv_indices[...]
    # (read in place from the training data when the model's SVs are a RowSelection)
    const double* sv_data
    const int* sv_indices
    const int* sv_start
    const int* sv_stop
    int n_sv
    int sv_cols                 # no columns for the precomputed kernel
    const double* sv_sqnorm
    const cnp.int64_t* serial   # precomputed kernel: the column of x holding k(x, sv_s)
    const double* coef          # (nr_class - 1) x n_sv, row-major, LIBSVM's sv_coef layout
    const double* rho
    const int* start            # one-vs-one: class c owns support vectors start[c] .. start[c+1]-1
    int nr_class
    bint one_vs_one
    bint term_by_term           # RBF: |x - z|^2 summed as LIBSVM sums it (see the top)
    const double* table         # feature f of support vector s at table[f * stride + s], or NULL
    Py_ssize_t stride
    # every support vector's values 1: the table as bytes (binary rows' dot products are counts)
    const unsigned char* table8
    Py_ssize_t stride8
    double max_sv_sqnorm
    const double* rbf_table     # RBF over binary rows: rbf_table[d] = k at squared distance d < rbf_table_len
    int rbf_table_len
    bint kernel_values          # a row's output is its kernel values, not its decisions
    dgemm_t dgemm               # BLAS's, set by compute_dense


cdef inline double squared_distance(const double* x_data, const int* x_indices, int x_lo, int x_hi,
                                    const double* z_data, const int* z_indices, int z_lo,
                                    int z_hi) noexcept nogil:
    """|x - z|^2 term by term over the union of the two sorted index sets, in index order: the
    arithmetic of LIBSVM's prediction-time RBF kernel, whose decision values (written with
    %.17g by svm-predict) then come out with the same bits, where |x|^2 + |z|^2 - 2 x.z would
    differ in the last digits (a merge of the two index sets costs more than a dot product)."""
    cdef double s = 0.0, d
    while x_lo < x_hi and z_lo < z_hi:
        if x_indices[x_lo] == z_indices[z_lo]:
            d = x_data[x_lo] - z_data[z_lo]
            s += d * d
            x_lo += 1
            z_lo += 1
        elif x_indices[x_lo] > z_indices[z_lo]:
            s += z_data[z_lo] * z_data[z_lo]
            z_lo += 1
        else:
            s += x_data[x_lo] * x_data[x_lo]
            x_lo += 1
    while x_lo < x_hi:
        s += x_data[x_lo] * x_data[x_lo]
        x_lo += 1
    while z_lo < z_hi:
        s += z_data[z_lo] * z_data[z_lo]
        z_lo += 1
    return s


cdef void kernel_values(const Machine* m, CSR X, int i, const double* x_dense, int width,
                        double* kvalue) noexcept nogil:
    """k(x_i, sv_s) for every support vector s; x_dense holds row i scattered."""
    cdef int s
    cdef cnp.int64_t c
    if m.kernel.kind == PRECOMPUTED:
        for s in range(m.n_sv):
            c = m.serial[s]
            kvalue[s] = x_dense[c] if 0 <= c < width else 0.0
    elif m.term_by_term:
        for s in range(m.n_sv):
            kvalue[s] = exp_neg_inline(m.kernel.gamma * squared_distance(
                X.data, X.indices, X.indptr[i], X.indptr[i + 1],
                m.sv_data, m.sv_indices, m.sv_start[s], m.sv_stop[s]))
    else:
        for s in range(m.n_sv):
            kvalue[s] = span_dot(m.sv_data, m.sv_indices, m.sv_start[s], m.sv_stop[s], x_dense)
        kernel_from_dots(m, kvalue, row_sqnorm(X, i))


cdef inline void kernel_from_dots_at(const Machine* m, double* kv, double x_sqnorm, int c0, int g) noexcept nogil:
    """kv[s] = k(x, sv_(c0+s)) for s < g from kv[s] = x . sv_(c0+s): the RBF's exponentials in one
    vectorized block."""
    cdef int s
    if m.kernel.kind == RBF:
        rbf_block(m.kernel.gamma, x_sqnorm, m.sv_sqnorm + c0, kv, g)
    else:
        for s in range(g):
            kv[s] = kernel_from_dot(m.kernel, kv[s], x_sqnorm, m.sv_sqnorm[c0 + s])


cdef inline void kernel_from_dots(const Machine* m, double* kv, double x_sqnorm) noexcept nogil:
    kernel_from_dots_at(m, kv, x_sqnorm, 0, m.n_sv)


cdef void add_chunk(const Machine* m, const double* kv, int c0, int c1, double* acc) noexcept nogil:
    """acc[p] += support vectors c0 .. c1-1's part of decision p's sum (kv[s - c0] = k(x, sv_s)):
    a classifier's in weighted_sum's fixed lanes, a regression or one-class model's one sum in
    order (LIBSVM's, carried from chunk to chunk)."""
    cdef int a, b, p = 0, lo, hi, t
    cdef Py_ssize_t l = m.n_sv
    cdef double s
    if not m.one_vs_one:
        s = acc[0]
        for t in range(c1 - c0):
            s += m.coef[c0 + t] * kv[t]
        acc[0] = s
        return
    for a in range(m.nr_class):
        for b in range(a + 1, m.nr_class):
            lo, hi = max(m.start[a], c0), min(m.start[a + 1], c1)   # class a's, coefficients in row b - 1
            if lo < hi:
                acc[p] += weighted_sum(m.coef + (b - 1) * l + lo, kv + lo - c0, hi - lo)
            lo, hi = max(m.start[b], c0), min(m.start[b + 1], c1)   # class b's, in row a
            if lo < hi:
                acc[p] += weighted_sum(m.coef + a * l + lo, kv + lo - c0, hi - lo)
            p += 1


cdef inline void start_sums(const Machine* m, double* out, int n_dec) noexcept nogil:
    if not m.kernel_values:
        memset(out, 0, <size_t>n_dec * sizeof(double))


cdef inline void finish_sums(const Machine* m, double* out, int n_dec) noexcept nogil:
    cdef int q
    if not m.kernel_values:
        for q in range(n_dec):
            out[q] -= m.rho[q]


cdef inline void take_chunk(const Machine* m, const double* kv, int c0, int g, double* out) noexcept nogil:
    """A chunk's kernel values into a row's output: its sums, or the values themselves."""
    if m.kernel_values:
        memcpy(out + c0, kv, <size_t>g * sizeof(double))
    else:
        add_chunk(m, kv, c0, c0 + g, out)


cdef void combine(const Machine* m, const double* kvalue, double* out, int n_dec) noexcept nogil:
    """out[p] for every pair p (one-vs-one) or out[0] (regression, one-class) from a row's kernel
    values, chunk by chunk as the tiles sum them (the same bits); the kernel values themselves
    for a Machine of kernel_values."""
    cdef int c0 = 0, g
    start_sums(m, out, n_dec)
    while c0 < m.n_sv:
        g = min(<int>SV_CHUNK, m.n_sv - c0)
        take_chunk(m, kvalue + c0, c0, g, out)
        c0 += g
    finish_sums(m, out, n_dec)


cdef void decision_row(const Machine* m, CSR X, int i, double* dense, int width, double* kvalue,
                       double* out, int n_dec) noexcept nogil:
    scatter_row(X, i, dense)
    kernel_values(m, X, i, dense, width, kvalue)
    unscatter_row(X, i, dense)
    combine(m, kvalue, out, n_dec)


cdef inline bint all_ones(const double* data, int lo, int hi) noexcept nogil:
    cdef int k
    for k in range(lo, hi):
        if data[k] != 1.0:
            return False
    return True


cdef void decision_tile(const Machine* m, CSR X, int lo, int hi, double* kv, double* out,
                        int n_dec) noexcept nogil:
    """Rows lo .. hi-1 (at most TILE_ROWS) from the support vectors' table, a chunk of them at a
    time (the chunk's lines stay in cache over the tile): each row's dot products with the chunk
    (in kv, whole vectors of 8), made kernel values and taken into the row's output at once.
    Binary rows against binary support vectors count their common features from the byte table
    and, for RBF, look their kernel values up (exact integers and the same exponentials: the
    same bits)."""
    cdef int r, i, c0, g, k, rows = hi - lo
    cdef int top[TILE_ROWS]
    cdef double sq[TILE_ROWS]
    cdef bint counts[TILE_ROWS]
    cdef bint looks_up[TILE_ROWS]
    for r in range(rows):
        i = lo + r
        # the row's features the table holds (indices are sorted)
        k = X.indptr[i + 1]
        while k > X.indptr[i] and X.indices[k - 1] >= m.sv_cols:
            k -= 1
        top[r] = k
        sq[r] = row_sqnorm(X, i)
        counts[r] = (m.table8 != NULL and k - X.indptr[i] <= 255
                     and all_ones(X.data, X.indptr[i], X.indptr[i + 1]))
        looks_up[r] = counts[r] and m.rbf_table != NULL and sq[r] + m.max_sv_sqnorm < m.rbf_table_len
        start_sums(m, out + <Py_ssize_t>i * n_dec, n_dec)
    c0 = 0
    while c0 < m.n_sv:
        g = min(<int>SV_CHUNK, m.n_sv - c0)
        for r in range(rows):
            i = lo + r
            if counts[r]:
                count_slots(X.indices + X.indptr[i], top[r] - X.indptr[i], m.table8 + c0, m.stride8, g, kv)
            else:
                sparse_row_dots_exact(X.data, X.indices, X.indptr[i], top[r], m.table + c0, m.stride, g, kv)
            if looks_up[r]:
                rbf_table_block(m.rbf_table, sq[r], m.sv_sqnorm + c0, kv, g)
            else:
                kernel_from_dots_at(m, kv, sq[r], c0, g)
            take_chunk(m, kv, c0, g, out + <Py_ssize_t>i * n_dec)
        c0 += g
    for r in range(rows):
        finish_sums(m, out + <Py_ssize_t>(lo + r) * n_dec, n_dec)


cdef void decision_tiles(const Machine* m, CSR X, int lo, int hi, double* kvalue, double* out, int n_dec,
                         int n_threads) noexcept nogil:
    """Rows lo .. hi-1 by tiles of TILE_ROWS; thread t uses the t-th SV_CHUNK of kvalue."""
    cdef int tile, t, tiles = (hi - lo + TILE_ROWS - 1) // TILE_ROWS
    for tile in prange(tiles, num_threads=max(1, min(n_threads, tiles)), schedule="dynamic"):
        t = threadid()
        decision_tile(m, X, lo + tile * TILE_ROWS, min(hi, lo + (tile + 1) * TILE_ROWS),
                      kvalue + <Py_ssize_t>t * SV_CHUNK, out, n_dec)


cdef struct Columns:
    # the columns of dense rows split by their share of nonzeros: the dense ones' dot products by
    # dgemm, the sparse ones' by each row's nonzeros scaling lines of the table (docs/blocked_solver.md)
    const double* table    # the dense columns' lines of the support vectors' table, at m.stride
    const int* dense
    int n_dense
    const int* sparse      # none: every column of the table through dgemm, straight from the rows
    int n_sparse


cdef void decision_tile_dense(const Machine* m, const Columns* cs, const double* X, int p, int lo, int hi,
                              double* work, int* iwork, double* out, int n_dec) noexcept nogil:
    """Dense rows lo .. hi-1 (at most DENSE_ROWS, p values each), a chunk of SV_CHUNK support
    vectors at a time: the chunk's dot products by one dgemm from the table (plus, for the sparse
    columns, the rows' nonzeros scaling the table's lines), made kernel values and added to each
    decision's sum (in chunk order: the same bits for any thread count)."""
    cdef int r, f, c0, g, rows = hi - lo, k = min(p, m.sv_cols), kd = cs.n_dense
    cdef int lda = <int>m.stride, ldc = SV_CHUNK
    cdef double one = 1.0, zero = 0.0, t, v
    cdef char no = b'N'
    cdef const double* x
    cdef double* kbuf = work                                  # rows x SV_CHUNK dot products
    cdef double* sq = work + <Py_ssize_t>DENSE_ROWS * SV_CHUNK  # the rows' squared norms
    cdef double* xd = sq + DENSE_ROWS                         # the rows' dense columns, side by side
    cdef double* nz_value = xd + <Py_ssize_t>DENSE_ROWS * kd  # the rows' nonzeros in sparse columns
    cdef int* nz_start = iwork                                # row r's: nz_start[r] .. nz_start[r+1]-1
    cdef int* nz_column = iwork + DENSE_ROWS + 1
    nz_start[0] = 0
    for r in range(rows):
        x = X + <Py_ssize_t>(lo + r) * p
        t = 0.0
        for f in range(p):
            t += x[f] * x[f]
        sq[r] = t
        nz_start[r + 1] = nz_start[r]
        if cs.n_sparse > 0:
            for f in range(kd):
                xd[<Py_ssize_t>r * kd + f] = x[cs.dense[f]]
            for f in range(cs.n_sparse):
                v = x[cs.sparse[f]]
                if v != 0.0:
                    nz_column[nz_start[r + 1]] = cs.sparse[f]
                    nz_value[nz_start[r + 1]] = v
                    nz_start[r + 1] += 1
        start_sums(m, out + <Py_ssize_t>(lo + r) * n_dec, n_dec)
    c0 = 0
    while c0 < m.n_sv:
        g = min(<int>SV_CHUNK, m.n_sv - c0)
        if cs.n_sparse > 0:
            for r in range(rows):
                sparse_row_dots(nz_value, nz_column, nz_start[r], nz_start[r + 1], m.table + c0, m.stride, g,
                                kbuf + <Py_ssize_t>r * ldc)
            if kd > 0:
                m.dgemm(&no, &no, &g, &rows, &kd, &one, <double*>(cs.table + c0), &lda, xd, &kd, &one, kbuf, &ldc)
        elif k > 0:
            # column-major: kbuf^T (g x rows) = table[:, c0:c0+g]^T (g x k) . X[lo:hi, :k]^T (k x rows)
            m.dgemm(&no, &no, &g, &rows, &k, &one, <double*>(m.table + c0), &lda,
                    <double*>(X + <Py_ssize_t>lo * p), &p, &zero, kbuf, &ldc)
        else:
            memset(kbuf, 0, <size_t>rows * ldc * sizeof(double))
        for r in range(rows):
            kernel_from_dots_at(m, kbuf + <Py_ssize_t>r * ldc, sq[r], c0, g)
            add_chunk(m, kbuf + <Py_ssize_t>r * ldc, c0, c0 + g, out + <Py_ssize_t>(lo + r) * n_dec)
        c0 += g
    for r in range(rows):
        finish_sums(m, out + <Py_ssize_t>(lo + r) * n_dec, n_dec)


cdef void decision_tiles_dense(const Machine* m, const Columns* cs, const double* X, int p, int lo, int hi,
                               double* work, Py_ssize_t work_len, int* iwork, Py_ssize_t iwork_len,
                               double* out, int n_dec, int n_threads) noexcept nogil:
    """Rows lo .. hi-1 by tiles of DENSE_ROWS; thread t uses the t-th work_len of ``work`` and
    iwork_len of ``iwork``."""
    cdef int tile, t, tiles = (hi - lo + DENSE_ROWS - 1) // DENSE_ROWS
    for tile in prange(tiles, num_threads=max(1, min(n_threads, tiles)), schedule="dynamic"):
        t = threadid()
        decision_tile_dense(m, cs, X, p, lo + tile * DENSE_ROWS, min(hi, lo + (tile + 1) * DENSE_ROWS),
                            work + t * work_len, iwork + t * iwork_len, out, n_dec)


cdef void decision_block(const Machine* m, CSR X, int lo, int hi, double* dense, int width,
                         double* kvalue, double* out, int n_dec, int n_threads) noexcept nogil:
    """Rows lo .. hi-1 into out (row-major, n_dec per row); thread t uses the t-th slice of the
    dense and kernel-value buffers."""
    cdef int i, t
    cdef Py_ssize_t l = max(m.n_sv, 1)
    if n_threads <= 1:
        for i in range(lo, hi):
            decision_row(m, X, i, dense, width, kvalue, out + <Py_ssize_t>i * n_dec, n_dec)
        return
    for i in prange(lo, hi, num_threads=n_threads, schedule="dynamic", chunksize=16):
        t = threadid()
        decision_row(m, X, i, dense + <Py_ssize_t>t * width, width, kvalue + t * l,
                     out + <Py_ssize_t>i * n_dec, n_dec)


cdef inline const double* dptr(const double[::1] a) noexcept:
    return &a[0] if a.shape[0] > 0 else NULL


cdef class DecisionFunction:
    """A model's support vectors and coefficients, held for nogil evaluation.

    sv : the support vectors, canonical CSR or a fastsvm.csr.RowSelection; coef : (nr_class - 1, n_sv) C-contiguous;
    rho : one value per classifier; start : (nr_class + 1,) int32 class boundaries among the
    support vectors (one-vs-one only); serial : int64 column of x holding k(x, sv_s)
    (precomputed kernel only). tiles : kernel values in tiles from a feature-major table of the
    support vectors where it fits (the same bits; not for the term-by-term RBF); False: row by row.
    ``reads_dense``: the table is held, so compute_dense can take dense rows. kernel_values :
    compute() writes each row's kernel values k(x, sv_s), one column per support vector, with
    the bits the decision values are summed from (several models' shared block, predict_many).
    """

    cdef Machine m
    cdef readonly int n_dec
    cdef double sv_nnz  # stored values of the support vectors
    cdef object _keep   # the arrays the Machine's pointers point into
    cdef object table   # m.table's array, or None

    def __init__(self, sv, coef, rho, start, serial, *, str kind, double gamma, int degree,
                 double coef0, bint one_vs_one, bint tiles=True, bint kernel_values=False):
        coef = np.ascontiguousarray(coef, dtype=np.float64)
        rho = np.ascontiguousarray(rho, dtype=np.float64)
        start = np.ascontiguousarray(start, dtype=np.int32)
        serial = np.ascontiguousarray(serial, dtype=np.int64)
        base, sv_start, sv_stop = row_spans(sv)
        sv_start = np.ascontiguousarray(sv_start, dtype=np.int32)
        sv_stop = np.ascontiguousarray(sv_stop, dtype=np.int32)
        sqnorm = np.empty(sv_start.shape[0])
        self._keep = (base, sv_start, sv_stop, coef, rho, start, serial, sqnorm)
        cdef const double[::1] sv_data = base.data
        cdef const int[::1] sv_indices = base.indices
        cdef const int[::1] start_at = sv_start
        cdef const int[::1] stop_at = sv_stop
        cdef const double[::1] coef_flat = coef.reshape(-1)
        cdef const double[::1] rho_v = rho
        cdef double[::1] sqnorm_v = sqnorm
        cdef const int[::1] start_v = start
        cdef const cnp.int64_t[::1] serial_v = serial
        nr_class = start.shape[0] - 1 if one_vs_one else 2
        if one_vs_one and (nr_class < 1 or start[nr_class] != sv.shape[0]):
            raise ValueError("class boundaries do not cover the support vectors")
        if coef.size != (nr_class - 1) * sv.shape[0]:
            raise ValueError("coefficients do not match the support vectors")
        self.n_dec = nr_class * (nr_class - 1) // 2 if one_vs_one else 1
        if rho.shape[0] != self.n_dec:
            raise ValueError("rho does not match the number of classifiers")
        self.m.kernel_values = kernel_values
        if kernel_values:
            self.n_dec = sv.shape[0]
        if kind == "precomputed" and serial.shape[0] != sv.shape[0]:
            raise ValueError("a precomputed kernel needs one serial number per support vector")
        self.m.kernel = kernel_params(kind, gamma, degree, coef0)
        self.m.sv_data = dptr(sv_data)
        self.m.sv_indices = &sv_indices[0] if sv_indices.shape[0] > 0 else NULL
        self.m.sv_start = &start_at[0] if start_at.shape[0] > 0 else NULL
        self.m.sv_stop = &stop_at[0] if stop_at.shape[0] > 0 else NULL
        self.m.n_sv = sv.shape[0]
        self.m.sv_cols = sv.shape[1]
        self.m.sv_sqnorm = dptr(sqnorm_v)
        self.m.serial = &serial_v[0] if serial_v.shape[0] > 0 else NULL
        self.m.coef = dptr(coef_flat)
        self.m.rho = dptr(rho_v)
        self.m.start = &start_v[0] if start_v.shape[0] > 0 else NULL
        self.m.nr_class = nr_class
        self.m.one_vs_one = one_vs_one
        self.m.term_by_term = kind == "rbf" and not one_vs_one
        cdef int k
        cdef bint binary = True
        self.sv_nnz = 0.0
        for k in range(self.m.n_sv):
            sqnorm_v[k] = span_sqnorm(self.m.sv_data, start_at[k], stop_at[k])
            self.sv_nnz += stop_at[k] - start_at[k]
            binary = binary and all_ones(self.m.sv_data, start_at[k], stop_at[k])
        self.m.table = NULL
        self.m.stride = 0
        self.m.table8 = NULL
        self.m.rbf_table = NULL
        self.m.rbf_table_len = 0
        cdef Py_ssize_t stride = (self.m.n_sv + 7) // 8 * 8 + 8
        cdef double[:, ::1] table_v
        cdef int t
        if (tiles and kind != "precomputed" and self.m.n_sv > 0 and self.m.sv_cols > 0
                and <double>self.m.sv_cols * stride * sizeof(double) <= TABLE_MAX_BYTES):
            table = np.zeros((self.m.sv_cols, stride))
            table_v = table
            for k in range(self.m.n_sv):
                for t in range(start_at[k], stop_at[k]):
                    table_v[sv_indices[t], k] = sv_data[t]
            self.m.table = &table_v[0, 0]
            self.m.stride = stride
            self.table = table
            self._keep = self._keep + (table,)
            if binary:
                self.hold_binary(table, sqnorm)

    cdef hold_binary(self, table, sqnorm):
        """The byte table of binary support vectors, and for RBF their kernel values at every
        squared distance a binary row of at most 256 values can have."""
        cdef Py_ssize_t stride8 = (self.m.n_sv + 31) // 32 * 32 + 32
        table8 = np.zeros((self.m.sv_cols, stride8), dtype=np.uint8)
        table8[:, :self.m.n_sv] = table[:, :self.m.n_sv]
        cdef const unsigned char[:, ::1] table8_v = table8
        self.m.table8 = &table8_v[0, 0]
        self.m.stride8 = stride8
        self.m.max_sv_sqnorm = np.max(sqnorm)
        self._keep = self._keep + (table8,)
        if self.m.kernel.kind != RBF:
            return
        cdef double[::1] rbf = self.m.kernel.gamma * np.arange(self.m.max_sv_sqnorm + 257.0)
        exp_neg_block(&rbf[0], rbf.shape[0])
        self.m.rbf_table = &rbf[0]
        self.m.rbf_table_len = rbf.shape[0]
        self._keep = self._keep + (rbf.base,)

    def compute(self, X, double[:, ::1] out, int n_threads=1):
        """Fill out (n_rows x n_dec) with the decision values of the rows of the canonical CSR X.
        Features beyond either side's width count as zeros. Raises KeyboardInterrupt between
        blocks of rows on Ctrl-C."""
        cdef const double[::1] data = X.data
        cdef const int[::1] indices = X.indices
        cdef const int[::1] indptr = X.indptr
        cdef CSR A = csr_view(data, indices, indptr, X.shape[0], X.shape[1])
        if out.shape[0] != A.n_rows or out.shape[1] != self.n_dec:
            raise ValueError("output has the wrong shape")
        if A.n_rows == 0 or self.n_dec == 0:
            return
        n_threads = max(1, min(n_threads, A.n_rows))
        cdef int width = max(A.n_cols, self.m.sv_cols, 1)
        cdef bint tiles = self.m.table != NULL and not self.m.term_by_term
        cdef double[::1] dense = np.zeros(1 if tiles else <Py_ssize_t>n_threads * width)
        cdef Py_ssize_t per_thread = SV_CHUNK if tiles else max(self.m.n_sv, 1)
        cdef double[::1] kvalue = np.empty(<Py_ssize_t>n_threads * per_thread)
        # multiply-adds per row: kernel values, pairwise sums, the row's own entries
        cdef double work = (<double>self.sv_nnz
                            + <double>self.m.n_sv * max(self.m.nr_class - 1, 1)
                            + <double>A.indptr[A.n_rows] / A.n_rows + 1.0)
        cdef int block = <int>min(max(BLOCK_WORK / work, 4.0 * n_threads), <double>A.n_rows)
        cdef int lo = 0, hi
        with nogil:
            while lo < A.n_rows:
                hi = min(lo + block, A.n_rows)
                if tiles:
                    decision_tiles(&self.m, A, lo, hi, &kvalue[0], &out[0, 0], self.n_dec, n_threads)
                else:
                    decision_block(&self.m, A, lo, hi, &dense[0], width, &kvalue[0], &out[0, 0],
                                   self.n_dec, n_threads)
                lo = hi
                if lo < A.n_rows:
                    with gil:
                        PyErr_CheckSignals()

    @property
    def reads_dense(self):
        return self.m.table != NULL

    def compute_dense(self, const double[:, ::1] X, double[:, ::1] out, int n_threads=1,
                      double sparse_share=SPARSE_SHARE):
        """compute() for the rows of a dense C-ordered X (reads_dense models only): BLAS's dot
        products, so values within rounding of compute()'s on the same rows as CSR. The columns
        with fewer nonzeros among X's rows than ``sparse_share`` add their parts by nonzeros
        (0: every column through dgemm)."""
        if self.m.table == NULL or self.m.kernel_values:
            raise ValueError("this model holds no table of its support vectors: predict CSR rows")
        if out.shape[0] != X.shape[0] or out.shape[1] != self.n_dec:
            raise ValueError("output has the wrong shape")
        cdef int n = X.shape[0], p = X.shape[1]
        if n == 0 or self.n_dec == 0:
            return
        self.m.dgemm = blas_dgemm()
        n_threads = max(1, min(n_threads, (n + DENSE_ROWS - 1) // DENSE_ROWS))
        cdef int k = min(p, self.m.sv_cols)
        share = np.count_nonzero(np.asarray(X)[:, :k], axis=0) / n
        sparse = np.ascontiguousarray(np.flatnonzero(share < sparse_share), dtype=np.int32)
        dense = np.ascontiguousarray(np.flatnonzero(share >= sparse_share), dtype=np.int32)
        cdef const int[::1] sparse_v = sparse
        cdef const int[::1] dense_v = dense
        cdef double[:, ::1] table_v
        cdef Columns cs
        cs.table, cs.dense, cs.n_dense, cs.sparse, cs.n_sparse = self.m.table, NULL, k, NULL, 0
        if sparse.shape[0] > 0:
            cs.n_sparse, cs.sparse = sparse.shape[0], &sparse_v[0]
            cs.n_dense = dense.shape[0]
            if cs.n_dense > 0:
                dense_lines = np.ascontiguousarray(self.table[dense])
                table_v = dense_lines
                cs.table, cs.dense = &table_v[0, 0], &dense_v[0]
        # a thread's buffers: dot products, squared norms, the rows' dense columns and nonzeros
        cdef Py_ssize_t work_len = DENSE_WORK + <Py_ssize_t>DENSE_ROWS * k
        cdef Py_ssize_t iwork_len = DENSE_ROWS * (cs.n_sparse + 1) + 1
        cdef double[::1] kvalue = np.empty(n_threads * work_len)
        cdef int[::1] iwork = np.empty(n_threads * iwork_len, dtype=np.int32)
        cdef double work = <double>self.m.n_sv * (p + max(self.m.nr_class - 1, 1)) + p + 1.0
        cdef int block = <int>min(max(BLOCK_WORK / work, 4.0 * DENSE_ROWS * n_threads), <double>n)
        cdef int lo = 0, hi
        cdef const double* xp = &X[0, 0] if p > 0 else NULL
        with nogil:
            while lo < n:
                hi = min(lo + block, n)
                decision_tiles_dense(&self.m, &cs, xp, p, lo, hi, &kvalue[0], work_len, &iwork[0], iwork_len,
                                     &out[0, 0], self.n_dec, n_threads)
                lo = hi
                if lo < n:
                    with gil:
                        PyErr_CheckSignals()

    def compute_from_kernel(self, const double[:, ::1] K, const int[::1] columns, double[:, ::1] out,
                            int n_threads=1):
        """Fill out (n_rows x n_dec) from kernel values computed already: K[i, columns[s]] =
        k(x_i, sv_s), a block several models trained on the same rows share (fastsvm.prediction's
        predict_many). The same sums as compute(), so the same bits when K holds its values."""
        if columns.shape[0] != self.m.n_sv:
            raise ValueError("one column of K per support vector")
        if out.shape[0] != K.shape[0] or out.shape[1] != self.n_dec:
            raise ValueError("output has the wrong shape")
        cdef int s
        for s in range(columns.shape[0]):
            if not 0 <= columns[s] < K.shape[1]:
                raise ValueError("a support vector's column lies outside K")
        if K.shape[0] == 0 or self.n_dec == 0:
            return
        n_threads = max(1, min(n_threads, K.shape[0]))
        cdef Py_ssize_t l = max(self.m.n_sv, 1)
        cdef double[::1] kvalue = np.empty(<Py_ssize_t>n_threads * l)
        cdef int i, t
        with nogil:
            for i in prange(K.shape[0], num_threads=n_threads, schedule="static"):
                t = threadid()
                for s in range(self.m.n_sv):
                    kvalue[t * l + s] = K[i, columns[s]]
                combine(&self.m, &kvalue[t * l], &out[i, 0], self.n_dec)
