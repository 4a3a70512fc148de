"""The Newton-system pieces of linear-kernel SSsNAL (docs/algorithms.md §2), without the GIL.

Z = S X (m x p) is fastsvm._core._rows.StackedRows. Here: the Newton system
I + sigma Z_J^T P_J Z_J (P_J = I - a_J a_J^T / a_J^T a_J) by matrix-free preconditioned CG (_cg's,
over the operator RowsHessian). The line
search is fastsvm._core._linesearch's, the small dense solves _linalg's, the screening of held rows
_screening's.
"""
from cython.parallel cimport prange
from libc.string cimport memset
import numpy as np

from ._cg cimport CG, Operator, cg_init, cg_parts, cg_solve
from ._csr cimport CSR, ROW_BLOCKS_MAX, row_axpy, row_blocks, row_dot
from ._rows cimport StackedRows
from ._status cimport Status
from ._status import Status as StatusCode

cdef extern from "_vectorized.h":
    # diag[j] = max(1, 1 + sigma (sq[j] - s[j]^2 inv_aa))^(7/8), vectorized
    void damped_diagonal "fastsvm_damped_diagonal"(double* diag, const double* sq, const double* s, int n,
                                                   double sigma, double inv_aa) noexcept nogil

# The O(p) steps of CG are split over the threads when p >= PARALLEL_COLUMNS: done by one thread
# they become a large share of a threaded CG iteration on many columns
cdef int PARALLEL_COLUMNS = 16384
cdef int COLUMN_BLOCK = 4096       # a sum over the columns adds fixed blocks of this many in order
# NewtonCG updates its copy of J's rows while the changes hold this share of J's values
cdef double COPY_CHANGE = 0.25


def sorted_changes(const int[::1] new, const int[::1] old):
    """(rows, weights): the rows of the increasing index array ``new`` missing from ``old``
    (weight +1) and those of ``old`` missing from ``new`` (weight -1), by one merge."""
    cdef Py_ssize_t a = 0, b = 0, n = 0, na = new.shape[0], nb = old.shape[0]
    rows = np.empty(na + nb, dtype=np.int32)
    weights = np.empty(na + nb)
    cdef int[::1] r = rows
    cdef double[::1] w = weights
    with nogil:
        while a < na or b < nb:
            if b == nb or (a < na and new[a] < old[b]):
                r[n] = new[a]
                w[n] = 1.0
                n += 1
                a += 1
            elif a == na or old[b] < new[a]:
                r[n] = old[b]
                w[n] = -1.0
                n += 1
                b += 1
            else:
                a += 1
                b += 1
    return rows[:n], weights[:n]


cdef class RowsHessian(Operator):
    """I + sigma Z^T P Z (P = I - a a^T / aa) for NewtonCG's CG: the k rows of _rows_hessian (the
    live ones) over X.n_cols columns, with its scratch; NewtonCG sets the system before each solve."""
    cdef CSR X
    cdef const int* src
    cdef const double* sgn
    cdef const unsigned char* live
    cdef int k, n_threads, col_threads
    cdef double* acc
    cdef const double* a_rows
    cdef double aa, sigma
    cdef const double* s_a
    cdef double* t
    cdef double* part

    cdef void set_system(self, const int* src, const double* sgn, int k, const unsigned char* live, double* acc,
                         int n_threads, const double* a_rows, double aa, double sigma, const double* s_a, double* t,
                         double* part, int col_threads) noexcept nogil:
        self.src = src
        self.sgn = sgn
        self.k = k
        self.live = live
        self.acc = acc
        self.n_threads = n_threads
        self.a_rows = a_rows
        self.aa = aa
        self.sigma = sigma
        self.s_a = s_a
        self.t = t
        self.part = part
        self.col_threads = col_threads
        self.order = self.X.n_cols

    cdef double apply(self, const double* d, double* out) noexcept nogil:
        return _apply_hessian(self.X, self.src, self.sgn, self.live, self.k, self.acc, self.n_threads, self.a_rows,
                              self.aa, self.sigma, self.s_a, d, self.t, out, self.col_threads, self.part)


cdef class NewtonCG:
    """Solves (I + sigma Z_J^T P_J Z_J) d = rhs by CG from d = 0, for the free sets J of one
    StackedRows Z, its scratch kept from system to system (tens of MB allocated afresh at each
    Newton step cost their page faults). Not thread-safe.

    The preconditioner is the diagonal to the power 7/8. Jacobi's full power scales the columns
    of large norm down as far on the null space of Z_J, where the matrix is the identity, as on
    its range, which spreads the preconditioned spectrum; 7/8 takes fewer CG iterations than the
    full power on systems recorded from text-like solves (chosen with tools/bench_ssnal.py).

    The system is the identity on the columns J's rows do not store. CG runs on a copy of J's
    rows renumbered onto the columns they store, the other columns carried by scalars (CG.off):
    the iterates are those of CG on the whole system, but the rows stream and the vectors are
    shorter. The copy is kept from system to system with the sums the diagonal is made of:
    rows that leave J stay in it, marked dead, and rows that join are appended, while those
    rows hold at most COPY_CHANGE of J's stored values (J changes by a few rows from one Newton
    step to the next in most systems, and making the copy and the diagonal anew costs several CG
    iterations)."""
    cdef StackedRows Z
    cdef double[::1] data        # the copy of the rows, over the copy's columns
    cdef int[::1] indices
    cdef int[::1] indptr
    cdef int[::1] copy_rows      # the row of Z in each row of the copy
    cdef unsigned char[::1] live   # 1 for the copy's rows in J
    cdef unsigned char[::1] seen   # marks over the copy's rows (zero between calls)
    cdef double[::1] a_copy      # a of the live rows, 0 for the dead ones
    cdef int[::1] rowpos         # m entries: a row's place in the copy, -1 if none
    cdef int[::1] colmap         # p entries: a column's number in the copy, -1 if none
    cdef int[::1] columns        # the copy's columns, in the order first met
    cdef double[::1] col_sq      # over the copy's columns: sum of z_jc^2 over the live rows
    cdef double[::1] col_a       # and sum of a_j z_jc
    cdef int k_copy, p_copy      # rows and columns of the copy
    cdef Py_ssize_t nnz_copy     # its stored values, dead rows included
    cdef int[::1] src            # uncopied: J's rows of X and their signs
    cdef double[::1] sgn
    cdef double[::1] vectors     # 7 vectors over the columns, then the partial sums of RowsHessian and CG
    cdef double[::1] acc         # the row blocks' vectors over the columns
    cdef readonly int last_iters   # CG iterations of the last system
    cdef readonly int copies_made, copies_updated   # how the copy was brought to each J
    cdef double[::1] q_products  # the last system's Z_J^T P_J Z_J d, over the copy's columns
    cdef readonly int n_products   # (product_columns) or all of them; its length
    cdef bint product_columns
    cdef RowsHessian hessian

    def __init__(self, StackedRows Z):
        self.Z = Z
        self.colmap = np.full(max(Z.p, 1), -1, dtype=np.int32)
        self.columns = np.empty(max(Z.p, 1), dtype=np.int32)
        self.rowpos = np.full(max(Z.m, 1), -1, dtype=np.int32)
        self.col_sq = np.empty(0)
        self.col_a = np.empty(0)
        self.data = np.empty(1)
        self.indices = np.empty(1, dtype=np.int32)
        self.indptr = np.zeros(2, dtype=np.int32)
        self.copy_rows = np.empty(1, dtype=np.int32)
        self.live = np.empty(1, dtype=np.uint8)
        self.seen = np.zeros(1, dtype=np.uint8)
        self.a_copy = np.empty(1)
        self.k_copy = self.p_copy = 0
        self.nnz_copy = 0
        self.src = np.empty(1, dtype=np.int32)
        self.sgn = np.empty(1)
        self.vectors = np.empty(0)
        self.acc = np.empty(0)
        self.last_iters = 0
        self.copies_made = self.copies_updated = 0
        self.q_products = np.empty(1)
        self.n_products = 0
        self.product_columns = False
        self.hessian = RowsHessian()

    def solve(self, const int[::1] rows, const double[::1] a_rows, double sigma, const double[::1] rhs,
              double[::1] out, *, double rtol, int max_iter, bint compact=True):
        """d into ``out``, for J = rows (distinct) and P_J t = t - a_J (a_J^T t) / (a_J^T a_J).
        Returns (iterations, status), a Status: CONVERGED (residual <= rtol |rhs|), MAX_ITER,
        INTERRUPTED (stop flag) or BREAKDOWN. compact: on the kept copy of the
        rows (else on Z's rows where they lie). Keeps what add_products needs."""
        cdef StackedRows Z = self.Z
        cdef int k = <int>rows.shape[0], p = Z.p, status = Status.CONVERGED, j, c, pc = p, n_rows = k
        cdef int n_threads = Z.n_threads
        Z.check_length(rhs.shape[0], p)
        Z.check_length(out.shape[0], p)
        Z.check_length(a_rows.shape[0], k)
        Z.check_rows(rows)
        self.n_products = 0
        if p == 0:
            return 0, StatusCode.CONVERGED
        cdef bint copy = compact
        cdef Py_ssize_t nnz = int(Z.rows_nnz(rows)[0]) if copy else 0
        if 2 * nnz >= 2 ** 31 - 1:   # int32 indices, dead rows included
            copy = False
        self._reserve_vectors(k, p)
        cdef double* v = &self.vectors[0]
        cdef double* rc = v               # CG's residual, the right-hand side at the start
        cdef double* z = v + p
        cdef double* d = v + 2 * p
        cdef double* hd = v + 3 * p
        cdef double* diag = v + 4 * p
        cdef double* s_a = v + 5 * p
        cdef double* xc = v + 6 * p       # the solution over the copy's columns (else out)
        cdef double* t = v + 7 * p
        cdef double* part = t + ROW_BLOCKS_MAX                  # RowsHessian's partial sums
        cdef double* cg_part = part + (p + COLUMN_BLOCK - 1) // COLUMN_BLOCK   # CG's
        cdef double* sq = z               # the sums the diagonal is made of (the copy's own when copied)
        cdef double aa = 0.0
        cdef const int* colmap = &self.colmap[0]
        cdef const int* columns = &self.columns[0]
        cdef int* src = &self.src[0]
        cdef double* sgn = &self.sgn[0]
        cdef const double* a_ptr = &a_rows[0] if k else NULL
        cdef const unsigned char* live = NULL
        cdef double* q_prod = &self.q_products[0]
        cdef RowsHessian H = self.hessian
        cdef CG cg
        if copy and not (self.k_copy and self._update(rows, a_rows, nnz)):
            self._make_copy(rows, a_rows, nnz)
        if copy:
            n_rows, pc = self.k_copy, self.p_copy
        if self.acc.shape[0] < max(row_blocks(n_rows, pc) * pc, 1):
            self.acc = np.zeros(max(row_blocks(n_rows, pc) * pc, 1))
        cdef int col_threads = 1 if pc < PARALLEL_COLUMNS else n_threads
        cg_init(&cg, pc, xc if copy else &out[0], rc, z, d, hd, cg_part, COLUMN_BLOCK, col_threads)
        cg.diag = diag
        with nogil:
            for j in range(k):
                aa += a_rows[j] * a_rows[j]
            H.X = Z.X
            if copy:
                H.X.data = &self.data[0]
                H.X.indices = &self.indices[0]
                H.X.indptr = &self.indptr[0]
                H.X.n_rows = n_rows
                H.X.n_cols = pc
                src = NULL
                sgn = NULL
                a_ptr = &self.a_copy[0]
                live = &self.live[0]
                sq = &self.col_sq[0]
                s_a = &self.col_a[0]
                for j in range(pc):             # rhs over the copy's columns, and the rest's norm
                    rc[j] = rhs[columns[j]]
                for j in range(p):
                    cg.off += rhs[j] * rhs[j] * (colmap[j] < 0)     # branch-free: the columns interleave
            else:
                for j in range(k):
                    src[j] = Z.source[rows[j]]
                    sgn[j] = Z.sign[rows[j]]
                _diagonal(H.X, src, sgn, k, a_ptr, sq, s_a)
                for j in range(p):
                    rc[j] = rhs[j]
            # the exact diagonal is >= 1; to the power 7/8: see the class's comment
            damped_diagonal(diag, sq, s_a, pc, sigma, 1.0 / aa if aa > 0.0 else 0.0)
            H.set_system(src, sgn, n_rows, live, &self.acc[0], n_threads, a_ptr, aa, sigma, s_a, t, part,
                         col_threads)
            status = cg_solve(&cg, H, rtol, max_iter, Z.stop)
            if copy:
                for j in range(p):
                    out[j] = cg.x_off * rhs[j]
                for j in range(pc):
                    out[columns[j]] = xc[j]
            # Z_J^T P_J Z_J d = (H d - d) / sigma, H d = rhs - r as CG's residual r says
            for j in range(pc):
                c = columns[j] if copy else j
                q_prod[j] = (rhs[c] - rc[j] - out[c]) / sigma
        self.n_products = pc
        self.product_columns = copy
        self.last_iters = cg.iterations
        return cg.iterations, StatusCode(status)

    def add_products(self, double[::1] out, double coef_q, double coef_s):
        """out += coef_q Z_J^T P_J Z_J d + coef_s Z_J^T a_J for the last system's J and solution
        d (the first from CG's residual: no pass over the rows), over the columns J's rows store."""
        self.Z.check_length(out.shape[0], self.Z.p)
        cdef int j, n = self.n_products
        if n == 0:
            return
        cdef const int* columns = &self.columns[0] if self.product_columns else NULL
        cdef const double* q = &self.q_products[0]
        # Z_J^T a_J: the copy's own sums, or the last solve's over all columns (kept in vectors)
        cdef const double* s = &self.col_a[0] if self.product_columns else &self.vectors[5 * self.Z.p]
        with nogil:
            for j in range(n):
                out[columns[j] if columns != NULL else j] += coef_q * q[j] + coef_s * s[j]

    cdef void _reserve_vectors(self, int k, int p):
        if self.q_products.shape[0] < p:
            self.q_products = np.empty(p)
        if self.src.shape[0] < k:
            self.src = np.empty(k + k // 4, dtype=np.int32)
            self.sgn = np.empty(k + k // 4)
        cdef Py_ssize_t n = 7 * p + ROW_BLOCKS_MAX + (p + COLUMN_BLOCK - 1) // COLUMN_BLOCK + cg_parts(p, COLUMN_BLOCK)
        if self.vectors.shape[0] < n:
            self.vectors = np.empty(n)

    cdef bint _update(self, const int[::1] rows, const double[::1] a_rows, Py_ssize_t nnz):
        """Brings the copy to J = rows (nnz stored values) when the rows that join or leave it
        hold at most COPY_CHANGE of nnz and the dead rows would too, within the buffers; else
        False, nothing changed."""
        cdef int k = <int>rows.shape[0], i, j, r, pos, n_join = 0
        cdef Py_ssize_t moved = 0, joined = 0
        cdef CSR X = self.Z.X
        cdef const int* source = &self.Z.source[0]
        cdef int* rowpos = &self.rowpos[0]
        cdef unsigned char* seen = &self.seen[0]
        cdef unsigned char* live = &self.live[0]
        cdef const int* indptr = &self.indptr[0]
        cdef bint fits
        with nogil:
            for i in range(k):
                r = rows[i]
                pos = rowpos[r]
                if pos < 0:
                    n_join += 1
                    joined += X.indptr[source[r] + 1] - X.indptr[source[r]]
                else:
                    seen[pos] = 1
                    if not live[pos]:
                        moved += indptr[pos + 1] - indptr[pos]
            for j in range(self.k_copy):
                if live[j] and not seen[j]:
                    moved += indptr[j + 1] - indptr[j]
            fits = (moved + joined <= COPY_CHANGE * nnz and self.nnz_copy + joined - nnz <= COPY_CHANGE * nnz
                    and self.k_copy + n_join <= self.copy_rows.shape[0]
                    and self.nnz_copy + joined <= self.data.shape[0])
            for j in range(self.k_copy):
                if fits and live[j] and not seen[j]:      # left J
                    self._add_row(j, -1.0)
                    live[j] = 0
                    self.a_copy[j] = 0.0
                seen[j] = 0
            if fits:
                for i in range(k):
                    pos = rowpos[rows[i]]
                    if pos < 0:
                        self._append(rows[i], a_rows[i])
                    elif not live[pos]:                       # back in J
                        live[pos] = 1
                        self.a_copy[pos] = a_rows[i]
                        self._add_row(pos, 1.0)
        if fits:
            self.copies_updated += 1
        return fits

    cdef void _make_copy(self, const int[::1] rows, const double[::1] a_rows, Py_ssize_t nnz):
        """The copy of J = rows (nnz stored values) made anew, in buffers with room to grow."""
        cdef int k = <int>rows.shape[0], i, j
        with nogil:
            for j in range(self.p_copy):
                self.colmap[self.columns[j]] = -1
            for j in range(self.k_copy):
                self.rowpos[self.copy_rows[j]] = -1
        self.k_copy = self.p_copy = 0
        self.nnz_copy = 0
        if self.data.shape[0] < nnz:
            self.data = np.empty(nnz + nnz // 4 + 1)
            self.indices = np.empty(nnz + nnz // 4 + 1, dtype=np.int32)
        if self.copy_rows.shape[0] < k:
            self.copy_rows = np.empty(k + k // 4 + 1, dtype=np.int32)
            self.indptr = np.zeros(k + k // 4 + 2, dtype=np.int32)
            self.live = np.empty(k + k // 4 + 1, dtype=np.uint8)
            self.seen = np.zeros(k + k // 4 + 1, dtype=np.uint8)
            self.a_copy = np.empty(k + k // 4 + 1)
        if self.col_sq.shape[0] < self.Z.p:
            self.col_sq = np.empty(self.Z.p)
            self.col_a = np.empty(self.Z.p)
        with nogil:
            for i in range(k):
                if self.rowpos[rows[i]] < 0:
                    self._append(rows[i], a_rows[i])
        self.copies_made += 1

    cdef void _append(self, int r, double a) noexcept nogil:
        """Row r of Z appended to the copy, live, its new columns numbered as first met."""
        cdef CSR X = self.Z.X
        cdef int i = self.Z.source[r], kk, c, n = self.k_copy
        cdef double sg = self.Z.sign[r]
        cdef Py_ssize_t pos = self.nnz_copy
        for kk in range(X.indptr[i], X.indptr[i + 1]):
            c = X.indices[kk]
            if self.colmap[c] < 0:
                self.colmap[c] = self.p_copy
                self.columns[self.p_copy] = c
                self.col_sq[self.p_copy] = 0.0
                self.col_a[self.p_copy] = 0.0
                self.p_copy += 1
            self.indices[pos] = self.colmap[c]
            self.data[pos] = sg * X.data[kk]
            pos += 1
        self.indptr[n + 1] = <int>pos
        self.nnz_copy = pos
        self.copy_rows[n] = r
        self.rowpos[r] = n
        self.live[n] = 1
        self.a_copy[n] = a
        self.k_copy = n + 1
        self._add_row(n, 1.0)

    cdef void _add_row(self, int j, double weight) noexcept nogil:
        """col_sq += weight z_j^2 and col_a += weight a_j z_j for row j of the copy."""
        cdef int kk, c
        cdef double val, a = weight * self.a_copy[j]
        for kk in range(self.indptr[j], self.indptr[j + 1]):
            c = self.indices[kk]
            val = self.data[kk]
            self.col_sq[c] += weight * val * val
            self.col_a[c] += a * val


cdef void _diagonal(CSR X, const int* src, const double* sgn, int k, const double* a_rows, double* diag,
                    double* s_a) noexcept nogil:
    """diag = sum_j z_jc^2 and s_a = sum_j a_j z_j over all columns, z_j = sgn[j] x_{src[j]}."""
    cdef int j, kk, c
    memset(diag, 0, X.n_cols * sizeof(double))
    memset(s_a, 0, X.n_cols * sizeof(double))
    for j in range(k):
        for kk in range(X.indptr[src[j]], X.indptr[src[j] + 1]):
            c = X.indices[kk]
            diag[c] += X.data[kk] * X.data[kk]
            s_a[c] += a_rows[j] * sgn[j] * X.data[kk]


cdef double _rows_hessian(CSR X, const int* src, const double* sgn, const unsigned char* live, int lo, int hi,
                          const double* a_rows, double sigma, const double* u, double* acc) noexcept nogil:
    """acc += sigma sum_j t_j z_j over j in [lo, hi), z_j = sgn[j] x_{src[j]} (x_j when src is
    NULL), t_j = z_j . u, each row read once for its dot and its update; returns sum_j a_j t_j.
    live: when not NULL, the rows j with live[j] = 0 are left out."""
    cdef int j, i
    cdef double part = 0.0, tj, sg = 1.0
    for j in range(lo, hi):
        if live != NULL and not live[j]:
            continue
        i = j
        if src != NULL:
            i = src[j]
            sg = sgn[j]
        tj = sg * row_dot(X, i, u)
        part += a_rows[j] * tj
        if tj != 0.0:
            row_axpy(X, i, sigma * tj * sg, acc)
    return part


cdef double _combine(double* acc, int n_acc, Py_ssize_t p, const double* u, double at, const double* s_a,
                     double* out, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """out = u - at s_a + the n_acc accumulators (slices of p) over the columns [lo, hi), the
    accumulators zeroed as they are read; returns u.out over those columns."""
    cdef Py_ssize_t c
    cdef int th
    cdef double s, uo = 0.0
    if n_acc == 1:
        for c in range(lo, hi):
            s = u[c] - at * s_a[c] + acc[c]
            acc[c] = 0.0
            out[c] = s
            uo += u[c] * s
    elif n_acc == 2:
        for c in range(lo, hi):
            s = u[c] - at * s_a[c] + acc[c] + acc[p + c]
            acc[c] = 0.0
            acc[p + c] = 0.0
            out[c] = s
            uo += u[c] * s
    else:
        for c in range(lo, hi):
            s = u[c] - at * s_a[c]
            for th in range(n_acc):
                s += acc[th * p + c]
                acc[th * p + c] = 0.0
            out[c] = s
            uo += u[c] * s
    return uo


cdef double _apply_hessian(CSR X, const int* src, const double* sgn, const unsigned char* live, int k, double* acc,
                           int n_threads, const double* a_rows, double aa, double sigma, const double* s_a,
                           const double* u, double* t, double* out, int col_threads, double* part) noexcept nogil:
    """out = u + sigma Z^T P Z u = u + sigma (Z^T t - (a^T t / aa) s_a), t = Z u and s_a = Z^T a,
    for the k rows z_j of _rows_hessian (the live ones); returns u.out. acc (row_blocks(k,
    X.n_cols) vectors of X.n_cols) must be zero and is left zero.

    Each row is read once (_rows_hessian: a threaded pass for X u and another for X^T t read
    the rows twice, and a second thread gains little on that memory traffic). The rows are taken in
    row_blocks(k, X.n_cols) fixed blocks, each summing its updates into its slice of acc and
    its part of a^T t into t[block]; the slices are combined over fixed blocks of COLUMN_BLOCK
    columns (col_threads threads share them), each block's part of u.out in part[block]
    (_combine). All partial sums are added in block order, the blocks chosen by the data alone:
    the same bits for any thread count."""
    cdef int b, lo, size, blocks = row_blocks(k, X.n_cols)
    cdef Py_ssize_t p = X.n_cols, clo, n_cblocks = (p + COLUMN_BLOCK - 1) // COLUMN_BLOCK
    cdef double at = 0.0, uo = 0.0
    if blocks == 1:
        at = _rows_hessian(X, src, sgn, live, 0, k, a_rows, sigma, u, acc)
    else:
        size = (k + blocks - 1) // blocks
        for b in prange(blocks, num_threads=max(1, min(n_threads, blocks)), schedule="static"):
            lo = b * size
            t[b] = _rows_hessian(X, src, sgn, live, lo, min(lo + size, k), a_rows, sigma, u, acc + <Py_ssize_t>b * p)
        for b in range(blocks):
            at += t[b]
    at = at * sigma / aa if aa > 0.0 else 0.0
    for clo in prange(n_cblocks, num_threads=col_threads, schedule="static"):
        part[clo] = _combine(acc, blocks, p, u, at, s_a, out, clo * COLUMN_BLOCK, min((clo + 1) * COLUMN_BLOCK, p))
    for clo in range(n_cblocks):
        uo += part[clo]
    return uo
