"""Kernel rows in blocks (docs/blocked_solver.md): K[r_j, t] for a block of rows r_1 .. r_m against
all n rows t of the data, or against a list of them (the active rows of a shrunk problem), the
work of a blocked working-set solver's outer step.

The dot products of a block are one matrix product: over dense rows (held n x p, row-major)
dgemm of a tile of data rows with the block's rows; over CSR rows a sparse x dense product, each
data row's stored values scaled into the m dot products of the tile from the block's rows held
feature-major. The data rows are cut into fixed tiles and threads only pick tiles, so a value
has the same bits for any thread count. BLAS is called on one thread per tile (the caller keeps
BLAS single-threaded: our threads or BLAS's, never both). Values are stored as float32, as the
kernel caches store them.
"""
from cython.parallel cimport prange, threadid
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memcpy, memset
from scipy.linalg.cython_blas cimport dgemm
cimport numpy as cnp
import numpy as np
import scipy.sparse as sp

from ._csr cimport csr_view, row_sqnorm
from ._kernel cimport (PRECOMPUTED, RBF, kernel_from_dot, kernel_params, rbf_block, scatter_row,
                       sparse_row_dots, store_transposed, unscatter_row)
from ._status cimport Status, read_flag
from ..errors import FastSVMError

cnp.import_array()

cdef inline int padded(int g) noexcept nogil:
    """The stride of g dot products held side by side: a multiple of 8 (whole vectors), and not of
    64, so that reading one of them from consecutive rows does not map every read to one L1 set."""
    cdef int s = (g + 7) // 8 * 8
    return s + 8 if s % 64 == 0 else s


cdef enum:
    TILE_SPARSE = 64     # data rows per tile of the sparse product (m dot products each)
    TILE_DENSE = 256     # data rows per dgemm call
    GROUP_MAX = 1024     # block rows per pass over the data
    # the block's rows held dense take at most this many doubles (a pass over the data serves
    # fewer rows when the rows are wide)
    WBUF_DOUBLES = 1 << 17


cdef class KernelRows:
    """KernelRows(X, kind, gamma=0.0, degree=3, coef0=0.0, n_threads=1)

    X: canonical CSR (fastsvm.csr.to_csr) or a C-contiguous float64 array (its rows then go
    through dgemm). Precomputed kernel: CSR whose column 0 holds each row's serial number s
    (1-based) and K(x_r, x_t) = X[r, s_t], as LIBSVM's files hold it.
    """

    def __cinit__(self, X, str kind, double gamma=0.0, int degree=3, double coef0=0.0, *, int n_threads=1):
        cdef const double[::1] data
        cdef const int[::1] indices
        cdef const int[::1] indptr
        cdef const double[:, ::1] dense
        cdef double[::1] sq
        cdef int t
        cdef int[::1] ser
        self.kp = kernel_params(kind, gamma, degree, coef0)
        self.n_threads = max(1, n_threads)
        self.serial = NULL
        self.xd = NULL
        if isinstance(X, np.ndarray):
            if self.kp.kind == PRECOMPUTED:
                raise FastSVMError("a precomputed kernel comes as CSR rows with serial numbers")
            dense = X
            self.dense = True
            self.n, self.p = X.shape[0], X.shape[1]
            self.xd = &dense[0, 0] if X.size else NULL
            sqnorm = np.einsum("ij,ij->i", X, X) if X.size else np.zeros(self.n)
            self._keep = (X, sqnorm)
        elif sp.isspmatrix_csr(X) or isinstance(X, sp.csr_array):
            data, indices, indptr = X.data, X.indices, X.indptr
            self.dense = False
            self.n, self.p = X.shape[0], X.shape[1]
            self.X = csr_view(data, indices, indptr, self.n, self.p)
            sqnorm = np.empty(self.n)
            sq = sqnorm
            for t in range(self.n):
                sq[t] = row_sqnorm(self.X, t)
            serial = None
            self.dense_len = max(self.p, 1)
            if self.kp.kind == PRECOMPUTED:
                first = np.asarray(X[:, :1].toarray()).ravel() if self.n else np.zeros(0)
                if self.n and (np.any(first < 1) or np.any(first != np.round(first))
                               or np.any(first > np.iinfo(np.int32).max)):
                    raise FastSVMError("precomputed kernel: column 0 must hold each row's serial number (1, 2, ...)")
                serial = np.ascontiguousarray(first, dtype=np.int32)
                ser = serial
                self.serial = &ser[0] if self.n else NULL
                if self.n:
                    self.dense_len = max(self.dense_len, int(serial.max()) + 1)
            self._keep = (X.data, X.indices, X.indptr, sqnorm, serial)
        else:
            raise FastSVMError("KernelRows takes canonical CSR or a C-contiguous float64 array")
        sq = sqnorm
        self.sqnorm = &sq[0] if self.n else NULL
        # a thread's tile: TILE_DENSE x GROUP_MAX dot products (dense), TILE_SPARSE x GROUP_MAX
        # (sparse), or one scattered row (precomputed)
        if self.kp.kind == PRECOMPUTED:
            self.work_per_thread = self.dense_len
        elif self.dense:
            # ... and a tile's data rows side by side, with their squared norms, when a list is given
            self.work_per_thread = <Py_ssize_t>TILE_DENSE * (GROUP_MAX + self.p + 1)
        else:
            self.work_per_thread = <Py_ssize_t>(TILE_SPARSE + 1) * (GROUP_MAX + 16)
        # tiles are written before they are read (pages touched as far as a block needs them); a
        # precomputed row is scattered into zeros
        if self.kp.kind == PRECOMPUTED:
            self.work = <double*>calloc(self.n_threads * self.work_per_thread, sizeof(double))
        else:
            self.work = <double*>malloc(self.n_threads * self.work_per_thread * sizeof(double))
        self.wbuf_len = max(<Py_ssize_t>WBUF_DOUBLES, <Py_ssize_t>max(self.p, 1))
        self.wbuf = <double*>calloc(self.wbuf_len, sizeof(double))
        if self.work == NULL or self.wbuf == NULL:
            raise MemoryError("cannot allocate the kernel block's buffers")

    def __dealloc__(self):
        free(self.work)
        free(self.wbuf)

    cdef double diagonal(self, int t) noexcept nogil:
        cdef double v
        if self.serial != NULL:
            scatter_row(self.X, t, self.work)
            v = self.work[self.serial[t]]
            unscatter_row(self.X, t, self.work)
            return v
        return kernel_from_dot(self.kp, self.sqnorm[t], self.sqnorm[t], self.sqnorm[t])

    cdef int group_rows(self, int m) noexcept nogil:
        """Block rows one pass over the data serves: as many as the dense buffer holds."""
        return <int>max(<Py_ssize_t>1, min(<Py_ssize_t>min(m, <int>GROUP_MAX),
                                           self.wbuf_len // max(self.p, 1) - 16))

    cdef int compute(self, const int* rows, int m, const int* cols, int n_cols, float** out,
                     const int* stop) noexcept nogil:
        """out[j][i] = K(x_rows[j], x_cols[i]) for i < n_cols (cols NULL: every row, i < n), the
        same bits for a row in any list; INTERRUPTED when *stop is set between passes."""
        cdef int j0, g, gs, j, f, b, tiles, tile
        cdef double* w = self.wbuf
        cdef Py_ssize_t r
        if cols == NULL:
            n_cols = self.n
        if n_cols == 0 or m == 0:
            return Status.CONVERGED
        if self.serial != NULL:
            for j in range(m):
                if stop != NULL and read_flag(stop):
                    return Status.INTERRUPTED
                scatter_row(self.X, rows[j], self.work)
                for b in range(n_cols):
                    out[j][b] = <float>self.work[self.serial[b if cols == NULL else cols[b]]]
                unscatter_row(self.X, rows[j], self.work)
            return Status.CONVERGED
        j0 = 0
        while j0 < m:
            if stop != NULL and read_flag(stop):
                return Status.INTERRUPTED
            g = self.group_rows(m - j0)
            if self.dense:
                # the group's rows, row-major (dgemm's second operand)
                for j in range(g):
                    r = rows[j0 + j]
                    for f in range(self.p):
                        w[<Py_ssize_t>j * self.p + f] = self.xd[r * self.p + f]
                tiles = (n_cols + TILE_DENSE - 1) // TILE_DENSE
                for tile in prange(tiles, num_threads=self.n_threads if tiles > 1 else 1, schedule="dynamic"):
                    self.tile_dense(rows + j0, g, tile * TILE_DENSE, min(n_cols, (tile + 1) * TILE_DENSE),
                                    self.work + threadid() * self.work_per_thread, out + j0, cols)
            else:
                gs = self.hold_feature_major(rows + j0, g)
                tiles = (n_cols + TILE_SPARSE - 1) // TILE_SPARSE
                for tile in prange(tiles, num_threads=self.n_threads if tiles > 1 else 1, schedule="dynamic"):
                    self.tile_sparse(rows + j0, g, gs, tile * TILE_SPARSE, min(n_cols, (tile + 1) * TILE_SPARSE),
                                     self.work + threadid() * self.work_per_thread, out + j0, cols)
            j0 += g
        return Status.CONVERGED

    cdef int hold_feature_major(self, const int* rows, int g) noexcept nogil:
        """The g rows' values in wbuf, feature-major: feature f of row j at wbuf[f * gs + j]; returns gs."""
        cdef int gs = padded(g), j, k
        memset(self.wbuf, 0, <Py_ssize_t>gs * self.p * sizeof(double))
        for j in range(g):
            for k in range(self.X.indptr[rows[j]], self.X.indptr[rows[j] + 1]):
                self.wbuf[<Py_ssize_t>self.X.indices[k] * gs + j] = self.X.data[k]
        return gs

    cdef void tile_sparse(self, const int* rows, int g, int gs, int i0, int i1, double* tile,
                          float** out, const int* at) noexcept nogil:
        """Data rows [i0, i1) (rows at[i0:i1] when ``at`` is given) against the group's g rows (held
        feature-major at stride gs): each data row's g dot products, made kernel values in place,
        then stored at [i0:i1] of the g kernel rows."""
        cdef int i, j, r
        cdef double* v
        cdef double* sqw = tile + <Py_ssize_t>(i1 - i0) * gs   # the group's squared norms
        for j in range(g):
            sqw[j] = self.sqnorm[rows[j]]
        for i in range(i0, i1):
            r = i if at == NULL else at[i]
            v = tile + <Py_ssize_t>(i - i0) * gs
            sparse_row_dots(self.X.data, self.X.indices, self.X.indptr[r], self.X.indptr[r + 1], self.wbuf, gs, gs, v)
            if self.kp.kind == RBF:
                rbf_block(self.kp.gamma, self.sqnorm[r], sqw, v, g)
            else:
                for j in range(g):
                    v[j] = kernel_from_dot(self.kp, v[j], self.sqnorm[r], sqw[j])
        store_transposed(tile, gs, i1 - i0, g, out, i0)

    cdef void tile_dense(self, const int* rows, int g, int i0, int i1, double* tile, float** out,
                         const int* cols) noexcept nogil:
        """Data rows [i0, i1) (rows cols[i0:i1] when given, copied side by side first) against the
        group's g rows by one dgemm: tile[j * nc + (i - i0)]."""
        cdef int nc = i1 - i0, p = self.p, j, i
        cdef double one = 1.0, zero = 0.0
        cdef char trans = b'T', no = b'N'
        cdef const double* x = self.xd + <Py_ssize_t>i0 * p
        cdef const double* sq = self.sqnorm + i0
        cdef double* copy
        if cols != NULL:
            copy = tile + <Py_ssize_t>TILE_DENSE * GROUP_MAX
            for i in range(nc):
                memcpy(copy + <Py_ssize_t>i * p, self.xd + <Py_ssize_t>cols[i0 + i] * p, p * sizeof(double))
                copy[<Py_ssize_t>TILE_DENSE * p + i] = self.sqnorm[cols[i0 + i]]
            x = copy
            sq = copy + <Py_ssize_t>TILE_DENSE * p
        if p > 0:
            dgemm(&trans, &no, &nc, &g, &p, &one, <double*>x, &p, self.wbuf, &p, &zero, tile, &nc)
        else:
            memset(tile, 0, <Py_ssize_t>nc * g * sizeof(double))
        for j in range(g):
            self.finish(rows, j, i0, i1, sq, tile + <Py_ssize_t>j * nc, out[j])

    cdef void finish(self, const int* rows, int j, int i0, int i1, const double* sq, double* col,
                     float* out) noexcept nogil:
        """Dot products col[0 : i1 - i0] of block row j (with the data rows' squared norms sq) made
        kernel values, stored at out[i0:i1]."""
        cdef int i
        cdef double xsq = self.sqnorm[rows[j]]
        if self.kp.kind == RBF:
            rbf_block(self.kp.gamma, xsq, sq, col, i1 - i0)
        else:
            for i in range(i1 - i0):
                col[i] = kernel_from_dot(self.kp, col[i], xsq, sq[i])
        for i in range(i1 - i0):
            out[i0 + i] = <float>col[i]

    # ---- Python access (tests, tools) ----

    def rows(self, rows, cols=None, stop=None):
        """K[rows, :] (K[rows, cols] with a list of columns) as float64, from the float32 values
        every block holds."""
        cdef int[::1] r = np.ascontiguousarray(rows, dtype=np.int32)
        cdef int[::1] c = np.ascontiguousarray(np.arange(0) if cols is None else cols, dtype=np.int32)
        cdef int m = r.shape[0], n_cols = self.n if cols is None else c.shape[0], j, status
        cdef const int[::1] flag = np.zeros(1, np.int32) if stop is None else stop
        for ix in (rows, cols):
            if ix is not None and len(ix) and (np.min(ix) < 0 or np.max(ix) >= self.n):
                raise IndexError("row out of range")
        block = np.empty((m, n_cols), dtype=np.float32)
        if m == 0 or n_cols == 0:
            return block.astype(np.float64)
        cdef float[:, ::1] b = block
        cdef float** out = <float**>malloc(max(m, 1) * sizeof(float*))
        if out == NULL:
            raise MemoryError
        try:
            for j in range(m):
                out[j] = &b[j, 0]
            with nogil:
                status = self.compute(&r[0], m, NULL if cols is None else &c[0], n_cols, out, &flag[0])
        finally:
            free(out)
        if status == Status.INTERRUPTED:
            raise KeyboardInterrupt
        return block.astype(np.float64)

    def diagonals(self):
        return np.array([self.diagonal(t) for t in range(self.n)])
