"""Z = S X: some rows of a CSR matrix X, each signed (and repeated), never materialised -- the
linear SSsNAL's data (docs/algorithms.md §2) and what its Newton systems read.

Row r of Z is sign[r] times row source[r] of X. C-SVC: source = 0..n-1, sign = y (Z = diag(y) X);
epsilon-SVR: source = [0..n-1, 0..n-1], sign = [+1, -1] (Z = [X; -X]). Here: products with Z, Z^T
and with the rows of a subset, the Gram matrix Z_J^T Z_J and the kernel block Z_J Z_J^T, without
the GIL; the fields and the nogil row products are declared in _rows.pxd for NewtonCG (_ssnal_linear).
"""
from cython.parallel cimport prange
from libc.math cimport fabs, sqrt
from libc.string cimport memset
import numpy as np

from ._csr cimport csr_view, indices_within, matvec, rmatvec, row_axpy, row_blocks, row_dot, row_sqnorm
from ._status cimport stop_flag_set

from ..errors import FastSVMError

cdef int PARALLEL_ROWS = 2048      # fewer rows than this: one thread
cdef int STOP_POLL_ROWS = 4096     # rows between two looks at the stop flag in long loops


cdef class StackedRows:
    """Z = S X as above, with the scratch its products need. Not thread-safe: one per solve."""

    def __init__(self, X, source, sign, int n_threads=1, stop=None):
        cdef const double[::1] data = X.data
        cdef const int[::1] indices = X.indices
        cdef const int[::1] indptr = X.indptr
        self.keep = (X, data, indices, indptr)
        self.X = csr_view(data, indices, indptr, X.shape[0], X.shape[1])
        self.source = np.ascontiguousarray(source, dtype=np.int32)
        self.sign = np.ascontiguousarray(sign, dtype=np.float64)
        if self.source.shape[0] != self.sign.shape[0]:
            raise FastSVMError("source and sign must have one length")
        if self.source.shape[0] and (np.min(self.source) < 0 or np.max(self.source) >= X.shape[0]):
            raise FastSVMError("source indexes a row outside X")
        self.m = <int>self.source.shape[0]
        self.n = X.shape[0]
        self.p = X.shape[1]
        self.n_threads = max(1, n_threads)
        self.row_nnz = np.diff(np.asarray(indptr))[np.asarray(self.source)]
        self.xn = np.zeros(max(self.n, 1))
        self.acc = np.zeros(max(max(row_blocks(self.n, self.p), row_blocks(self.m, self.p)) * self.p, 1))
        self.stop = np.zeros(1, dtype=np.int32) if stop is None else stop

    # -- whole-matrix products ---------------------------------------------------------------

    def matvec(self, const double[::1] v, double[::1] out=None):
        """Z v (length m)."""
        self.check_length(v.shape[0], self.p)
        if out is None:
            out = np.empty(self.m)
        cdef int r
        with nogil:
            matvec(self.X, &v[0] if self.p else NULL, &self.xn[0], self.n_threads)
            for r in range(self.m):
                out[r] = self.sign[r] * self.xn[self.source[r]]
        return np.asarray(out)

    def rmatvec(self, const double[::1] u, double[::1] out=None):
        """Z^T u (length p)."""
        self.check_length(u.shape[0], self.m)
        if out is None:
            out = np.empty(self.p)
        cdef int r
        if self.p == 0:
            return np.asarray(out)
        with nogil:
            memset(&self.xn[0], 0, self.n * sizeof(double))
            for r in range(self.m):
                self.xn[self.source[r]] += self.sign[r] * u[r]
            rmatvec(self.X, &self.xn[0], &out[0], &self.acc[0], self.n_threads)
        return np.asarray(out)

    def row_norms(self):
        """|z_r| for every row r of Z."""
        out = np.empty(self.m)
        cdef double[::1] out_ = out
        cdef int r
        with nogil:
            for r in range(self.m):
                out_[r] = fabs(self.sign[r]) * sqrt(row_sqnorm(self.X, self.source[r]))
        return out

    # -- products with the rows of a subset (the free set) ------------------------------------

    def rows_nnz(self, const int[::1] rows):
        """(sum, sum of squares) of the numbers of stored values of the given rows (the costs
        of sparse products and of sparse outer products over them)."""
        self.check_rows(rows)
        cdef Py_ssize_t j
        cdef double total = 0.0, squares = 0.0, c
        with nogil:
            for j in range(rows.shape[0]):
                c = self.X.indptr[self.source[rows[j]] + 1] - self.X.indptr[self.source[rows[j]]]
                total += c
                squares += c * c
        return total, squares

    def rows_matvec(self, const int[::1] rows, const double[::1] v, double[::1] out=None):
        """(Z_rows v)[j] = z_{rows[j]} . v."""
        self.check_length(v.shape[0], self.p)
        self.check_rows(rows)
        if out is None:
            out = np.empty(rows.shape[0])
        with nogil:
            self.rows_matvec_nogil(&rows[0] if rows.shape[0] else NULL, <int>rows.shape[0], &v[0] if self.p else NULL,
                                   &out[0] if rows.shape[0] else NULL)
        return np.asarray(out)

    def rows_rmatvec(self, const int[::1] rows, const double[::1] coef, double[::1] out=None,
                     bint accumulate=False):
        """Z_rows^T coef (length p); added to ``out`` when ``accumulate``."""
        self.check_length(coef.shape[0], rows.shape[0])
        self.check_rows(rows)
        if out is None:
            out = np.zeros(self.p)
            accumulate = True
        if self.p == 0:
            return np.asarray(out)
        with nogil:
            if not accumulate:
                memset(&out[0], 0, self.p * sizeof(double))
            self.rows_rmatvec_nogil(&rows[0] if rows.shape[0] else NULL, <int>rows.shape[0],
                                    &coef[0] if rows.shape[0] else NULL, &out[0])
        return np.asarray(out)

    def rows_rmatvec_diff(self, const int[::1] rows, const double[::1] x_new, const double[::1] x_old,
                          double[::1] out):
        """out += Z_rows^T (x_new - x_old)[rows]: Z^T x kept current over the rows that changed."""
        self.check_length(x_new.shape[0], self.m)
        self.check_length(x_old.shape[0], self.m)
        self.check_length(out.shape[0], self.p)
        self.check_rows(rows)
        cdef int k = <int>rows.shape[0], j
        cdef double[::1] coef = np.empty(max(k, 1))
        if self.p == 0 or k == 0:
            return np.asarray(out)
        with nogil:
            for j in range(k):
                coef[j] = x_new[rows[j]] - x_old[rows[j]]
            self.rows_rmatvec_nogil(&rows[0], k, &coef[0], &out[0])
        return np.asarray(out)

    def rows_gram(self, const int[::1] rows, const double[::1] a_rows, G=None, s=None, weights=None):
        """(G, s): G = Z_rows^T W Z_rows (p x p, dense) and s = Z_rows^T W a_rows, W = diag(weights)
        (default: identity), by accumulating the outer products of the sparse rows (cost: sum of
        nnz(z_j)^2); added to G and s when they are given (a Gram matrix kept up to date as rows
        join and leave). None when stopped."""
        cdef int k = <int>rows.shape[0]
        self.check_length(a_rows.shape[0], k)
        self.check_rows(rows)
        if G is None:
            G = np.zeros((self.p, self.p))
            s = np.zeros(self.p)
        cdef double[:, ::1] G_ = G
        cdef double[::1] s_ = s
        cdef const double[::1] w_
        cdef const double* w = NULL
        if G_.shape[0] != self.p or G_.shape[1] != self.p or s_.shape[0] != self.p:
            raise FastSVMError("G must be p x p and s of length p")
        if weights is not None:
            w_ = np.ascontiguousarray(weights, dtype=np.float64)
            self.check_length(w_.shape[0], k)
            if k:
                w = &w_[0]
        cdef int status = 0
        if self.p == 0:
            return G, s
        with nogil:
            status = self.rows_gram_nogil(&rows[0] if k else NULL, k, &a_rows[0] if k else NULL, w, &G_[0, 0], &s_[0])
        if status:
            return None
        return G, s

    def rows_dense(self, const int[::1] rows, double[:, ::1] out=None):
        """Z_rows as a dense (len(rows) x p) array (for BLAS when the rows are dense)."""
        self.check_rows(rows)
        cdef int k = <int>rows.shape[0], j, kk, r
        if out is None:
            out = np.zeros((k, self.p))
        elif out.shape[0] != k or out.shape[1] != self.p:
            raise FastSVMError("output block has the wrong shape")
        else:
            out[:, :] = 0.0
        with nogil:
            for j in range(k):
                r = rows[j]
                for kk in range(self.X.indptr[self.source[r]], self.X.indptr[self.source[r] + 1]):
                    out[j, self.X.indices[kk]] = self.sign[r] * self.X.data[kk]
        return np.asarray(out)

    def rows_kernel(self, const int[::1] rows):
        """Z_rows Z_rows^T (dense, symmetric) by sparse dot products with one scattered row
        (cost: about len(rows) * nnz(Z_rows) / 2); None when stopped."""
        self.check_rows(rows)
        cdef int k = <int>rows.shape[0]
        Kmat = np.zeros((k, k))
        cdef double[:, ::1] K_ = Kmat
        cdef double[::1] dense = np.zeros(max(self.p, 1))
        cdef int status = 0
        if k == 0:
            return Kmat
        with nogil:
            status = self.rows_kernel_nogil(&rows[0], k, &dense[0], &K_[0, 0])
        if status:
            return None
        return Kmat

    # -- nogil kernels ------------------------------------------------------------------------

    cdef void rows_matvec_nogil(self, const int* rows, int k, const double* v, double* out) noexcept nogil:
        cdef int j
        if self.n_threads <= 1 or k < PARALLEL_ROWS:
            for j in range(k):
                out[j] = self.sign[rows[j]] * row_dot(self.X, self.source[rows[j]], v)
        else:
            for j in prange(k, num_threads=self.n_threads, schedule="static"):
                out[j] = self.sign[rows[j]] * row_dot(self.X, self.source[rows[j]], v)

    cdef void rows_rmatvec_nogil(self, const int* rows, int k, const double* coef, double* out) noexcept nogil:
        """out += sum_j coef[j] z_{rows[j]}, the rows summed in row_blocks(k, p) fixed blocks, each
        into its slice of acc, the slices added in block order (the same for any thread count)."""
        cdef int j, b, c, lo, hi, size, r
        cdef int blocks = row_blocks(k, self.p)
        cdef double* acc
        if blocks == 1:
            for j in range(k):
                r = rows[j]
                if coef[j] != 0.0:
                    row_axpy(self.X, self.source[r], coef[j] * self.sign[r], out)
            return
        size = (k + blocks - 1) // blocks
        for b in prange(blocks, num_threads=min(self.n_threads, blocks), schedule="static"):
            acc = &self.acc[0] + <Py_ssize_t>b * self.p
            memset(acc, 0, self.p * sizeof(double))
            lo = b * size
            hi = min(lo + size, k)
            for j in range(lo, hi):
                r = rows[j]
                if coef[j] != 0.0:
                    row_axpy(self.X, self.source[r], coef[j] * self.sign[r], acc)
        for b in range(blocks):
            acc = &self.acc[0] + <Py_ssize_t>b * self.p
            for c in range(self.p):
                out[c] += acc[c]

    cdef int rows_gram_nogil(self, const int* rows, int k, const double* a_rows, const double* weights,
                             double* G, double* s) noexcept nogil:
        """Upper triangle by sparse outer products (column indices are sorted), then mirrored."""
        cdef int j, kk, ll, r, i, lo, hi, ci, c
        cdef double xv, sg, sg2
        cdef Py_ssize_t p = self.p
        for j in range(k):
            if j % STOP_POLL_ROWS == 0 and stop_flag_set(self.stop):
                return 1
            r = rows[j]
            i = self.source[r]
            sg = self.sign[r] * (weights[j] if weights != NULL else 1.0)
            sg2 = self.sign[r] * sg
            lo = self.X.indptr[i]
            hi = self.X.indptr[i + 1]
            for kk in range(lo, hi):
                ci = self.X.indices[kk]
                xv = self.X.data[kk]
                s[ci] += a_rows[j] * sg * xv
                xv *= sg2
                for ll in range(kk, hi):
                    G[ci * p + self.X.indices[ll]] += xv * self.X.data[ll]
        for ci in range(p):
            for c in range(ci + 1, p):
                G[c * p + ci] = G[ci * p + c]
        return 0

    cdef int rows_kernel_nogil(self, const int* rows, int k, double* dense, double* K) noexcept nogil:
        cdef int i, j, kk, ri
        cdef double v
        for i in range(k):
            if i % 256 == 0 and stop_flag_set(self.stop):
                return 1
            ri = self.source[rows[i]]
            for kk in range(self.X.indptr[ri], self.X.indptr[ri + 1]):
                dense[self.X.indices[kk]] = self.X.data[kk]
            for j in range(i, k):
                v = self.sign[rows[i]] * self.sign[rows[j]] * row_dot(self.X, self.source[rows[j]], dense)
                K[<Py_ssize_t>i * k + j] = v
                K[<Py_ssize_t>j * k + i] = v
            for kk in range(self.X.indptr[ri], self.X.indptr[ri + 1]):
                dense[self.X.indices[kk]] = 0.0
        return 0

    cdef void check_length(self, Py_ssize_t got, Py_ssize_t want) except *:
        if got != want:
            raise FastSVMError(f"vector has length {got}, expected {want}")

    cdef void check_rows(self, const int[::1] rows) except *:
        if not indices_within(rows, self.m):   # at every Newton step: a C loop, not np.min/np.max
            raise FastSVMError("row index out of range")
