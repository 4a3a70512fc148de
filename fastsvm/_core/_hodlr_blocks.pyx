# The nogil work of the hierarchical (HODLR) kernel approximation (fastsvm.hodlr): kernel blocks
# between row sets of a CSR X (the dense leaves) and the partially pivoted adaptive cross
# approximation (ACA) of an off-diagonal block K(I, J) ~ U V^T. Every kernel value is computed
# alone, from one sparse dot product, so threads only choose who computes it: the same bits for
# any thread count. The dense linear algebra (Cholesky, Woodbury cores) stays in SciPy. Memoryviews
# only, no NumPy C API.
from cython.parallel cimport prange, threadid
from libc.math cimport fabs
import numpy as np

from ._status cimport CONVERGED, INTERRUPTED, stop_requested
from ._csr cimport CSR, csr_view, row_dot
from ._kernel cimport KernelParams, kernel_from_dot, kernel_params, scatter_row, unscatter_row

# Kernel values computed between two looks at the stop flag (a few milliseconds of work)
cdef enum:
    POLL_VALUES = 1 << 20
    PARALLEL_MIN = 1024      # values of one ACA row or column below which threads do not pay

# A residual entry below this fraction of the block's largest kernel value counts as zero: the
# cross through it would divide by rounding noise.
cdef double ZERO_PIVOT = 1e-13


cdef CSR _view(X, int n_cols):
    cdef const double[::1] data = X.data
    cdef const int[::1] indices = X.indices
    cdef const int[::1] indptr = X.indptr
    return csr_view(data, indices, indptr, X.shape[0], n_cols)


cdef bint _within(const int[::1] idx, int n):
    return idx.shape[0] == 0 or (np.min(idx) >= 0 and np.max(idx) < n)


cdef void values_against(KernelParams k, CSR X, const double* sq, int a, const double* dense,
                         const int* idx, int count, double* out, int n_threads) noexcept nogil:
    """out[t] = k(x_a, x_idx[t]); x_a is already scattered into dense."""
    cdef int t
    if n_threads <= 1 or count < PARALLEL_MIN:
        for t in range(count):
            out[t] = kernel_from_dot(k, row_dot(X, idx[t], dense), sq[a], sq[idx[t]])
    else:
        for t in prange(count, num_threads=n_threads, schedule="static"):
            out[t] = kernel_from_dot(k, row_dot(X, idx[t], dense), sq[a], sq[idx[t]])


cdef void block_rows(KernelParams k, CSR X, const double* sq, const int* rows, const int* cols,
                     int n_cols, int lo, int hi, bint upper, double* dense, int width, double* out,
                     int n_threads) noexcept nogil:
    """Rows lo..hi-1 of out (row-major, n_cols wide) = k(x_rows[a], x_cols[b]); with upper only
    b >= a (the block is symmetric: rows is cols). Thread t scatters into slice t of dense."""
    cdef int a, b0
    cdef double* buf
    if n_threads <= 1:
        for a in range(lo, hi):
            b0 = a if upper else 0
            scatter_row(X, rows[a], dense)
            values_against(k, X, sq, rows[a], dense, cols + b0, n_cols - b0,
                           out + <Py_ssize_t>a * n_cols + b0, 1)
            unscatter_row(X, rows[a], dense)
        return
    for a in prange(lo, hi, num_threads=n_threads, schedule="dynamic", chunksize=4):
        b0 = a if upper else 0
        buf = dense + <Py_ssize_t>threadid() * width
        scatter_row(X, rows[a], buf)
        values_against(k, X, sq, rows[a], buf, cols + b0, n_cols - b0,
                       out + <Py_ssize_t>a * n_cols + b0, 1)
        unscatter_row(X, rows[a], buf)


def kernel_block(X, const int[::1] rows not None, const int[::1] cols not None, str kind, double gamma,
                 *, int degree, double coef0, const double[::1] sqnorms not None, double[:, ::1] out not None,
                 int n_threads=1, const int[::1] stop=None):
    """out[a, b] = k(x_rows[a], x_cols[b]) for a canonical CSR X with row squared norms sqnorms.
    When rows and cols are the same array the block is computed as symmetric: the upper triangle,
    mirrored (exactly symmetric, half the work). Raises KeyboardInterrupt when stop[0] is set or
    on Ctrl-C (looked at between row blocks)."""
    cdef KernelParams kp = kernel_params(kind, gamma, degree, coef0)
    cdef int m = rows.shape[0], p = cols.shape[0]
    cdef int width = max(X.shape[1], 1)
    cdef CSR A = _view(X, width)
    cdef bint upper = rows.shape[0] > 0 and &rows[0] == &cols[0]
    cdef int a, b, lo = 0, hi, block
    cdef bint interrupted = False
    if stop is None:
        stop = np.zeros(1, dtype=np.int32)
    if out.shape[0] != m or out.shape[1] != p:
        raise ValueError(f"output must be {m} x {p}")
    if sqnorms.shape[0] != A.n_rows:
        raise ValueError(f"{sqnorms.shape[0]} squared norms for {A.n_rows} rows")
    if m == 0 or p == 0:
        return
    if not (_within(rows, A.n_rows) and _within(cols, A.n_rows)):
        raise ValueError("row indices out of range")
    n_threads = max(1, min(n_threads, m))
    cdef double[::1] dense = np.zeros(<Py_ssize_t>n_threads * width)
    block = max(1, min(m, POLL_VALUES // p))
    with nogil:
        while lo < m and not interrupted:
            hi = min(lo + block, m)
            block_rows(kp, A, &sqnorms[0], &rows[0], &cols[0], p, lo, hi, upper, &dense[0], width,
                       &out[0, 0], n_threads)
            lo = hi
            interrupted = stop_requested(stop)
        if upper and not interrupted:
            for a in range(m):
                for b in range(a):
                    out[a, b] = out[b, a]
    if interrupted:
        raise KeyboardInterrupt


cdef int argmax_free(const double* v, const unsigned char* used, int n) noexcept nogil:
    """The first index of the largest |v[t]| with used[t] == 0, or -1 when all are used."""
    cdef int t, best = -1
    cdef double top = -1.0
    for t in range(n):
        if not used[t] and fabs(v[t]) > top:
            top = fabs(v[t])
            best = t
    return best


cdef double dot(const double* a, const double* b, int n) noexcept nogil:
    cdef int t
    cdef double s = 0.0
    for t in range(n):
        s += a[t] * b[t]
    return s


cdef int sampled_pivot(const int* s_row, const double* s_res, int S, const unsigned char* row_used,
                       double floor) noexcept nogil:
    """The row of the largest |sampled residual| above floor among the unused rows, or -1."""
    cdef int s, best = -1
    cdef double top = floor
    for s in range(S):
        if not row_used[s_row[s]] and fabs(s_res[s]) > top:
            top = fabs(s_res[s])
            best = s_row[s]
    return best


cdef double residual_line(KernelParams k, CSR X, const double* sq, int pivot, const int* others, int count,
                          double* dense, const double* coef, int coef_stride, const double* bases, int r,
                          double* out, double scale, int n_threads) noexcept nogil:
    """One line of the residual of ACA's block: out[t] = k(pivot, others[t]) - sum_l coef[l *
    coef_stride] bases[l * count + t] over the r crosses so far (a pivot row against the columns,
    or a pivot column against the rows). Returns scale raised to the largest |kernel value| seen."""
    cdef int l, t
    cdef double a
    scatter_row(X, pivot, dense)
    values_against(k, X, sq, pivot, dense, others, count, out, n_threads)
    unscatter_row(X, pivot, dense)
    for t in range(count):
        scale = max(scale, fabs(out[t]))
    for l in range(r):
        a = coef[<Py_ssize_t>l * coef_stride]
        for t in range(count):
            out[t] -= a * bases[<Py_ssize_t>l * count + t]
    return scale


cdef int aca_run(KernelParams k, CSR X, const double* sq, const int* rows, int m, const int* cols,
                 int p, double tol, int max_rank, double* Ut, double* Vt, const int* s_row,
                 const int* s_col, double* s_res, int S, unsigned char* row_used,
                 unsigned char* col_used, double* dense, int n_threads, const int[::1] stop,
                 int* rank) noexcept nogil:
    """Partially pivoted ACA of K(rows, cols): rank[0] crosses u_l v_l^T, u_l = Ut[l] (m values),
    v_l = Vt[l] (p values). Pivots: row 0 first, then the largest |u| among the rows not used yet;
    the column of each cross is the largest |residual row| among the columns not used yet.

    Stops at max_rank, or when |u_r| |v_r| <= tol |S_r|_F (|S_r|_F the running Frobenius norm of
    the approximation) and the residual at S sampled entries (s_row[s], s_col[s]) agrees: its
    Frobenius estimate (m p / S) sum R_s^2 <= tol^2 |S_r|_F^2. The last cross alone misjudges
    blocks whose residual is many small pieces (duplicate or clustered rows, common in sparse binary data): the
    samples see them. When they disagree, or a pivot row's residual is zero, the next pivot row is
    the unused one of the largest sampled residual; none left: stop. S = 0 is the plain ACA."""
    cdef int i = 0, j, l, s, t, r = 0
    cdef double delta, nu, nv, cross, est, norm2 = 0.0, scale = 0.0
    cdef double area = <double>m * <double>p / max(S, 1)
    cdef double* u
    cdef double* v
    rank[0] = 0
    for s in range(S):
        scatter_row(X, rows[s_row[s]], dense)
        s_res[s] = kernel_from_dot(k, row_dot(X, cols[s_col[s]], dense), sq[rows[s_row[s]]], sq[cols[s_col[s]]])
        unscatter_row(X, rows[s_row[s]], dense)
        scale = max(scale, fabs(s_res[s]))
    while r < max_rank:
        if stop_requested(stop):
            return INTERRUPTED
        row_used[i] = 1
        u = Ut + <Py_ssize_t>r * m
        v = Vt + <Py_ssize_t>r * p
        scale = residual_line(k, X, sq, rows[i], cols, p, dense, Ut + i, m, Vt, r, v, scale, n_threads)
        j = argmax_free(v, col_used, p)
        if j < 0 or fabs(v[j]) <= ZERO_PIVOT * scale:
            # this row is already approximated: go where the samples still see a residual
            i = sampled_pivot(s_row, s_res, S, row_used, ZERO_PIVOT * scale)
            if i < 0:
                break
            continue
        col_used[j] = 1
        delta = v[j]
        for t in range(p):
            v[t] /= delta
        scale = residual_line(k, X, sq, cols[j], rows, m, dense, Vt + j, p, Ut, r, u, scale, n_threads)
        nu = dot(u, u, m)
        nv = dot(v, v, p)
        cross = 0.0
        for l in range(r):
            cross += dot(Ut + <Py_ssize_t>l * m, u, m) * dot(Vt + <Py_ssize_t>l * p, v, p)
        norm2 += 2.0 * cross + nu * nv
        est = 0.0
        for s in range(S):
            s_res[s] -= u[s_row[s]] * v[s_col[s]]
            est += s_res[s] * s_res[s]
        r += 1
        rank[0] = r
        if nu * nv <= tol * tol * norm2:
            if area * est <= tol * tol * norm2:
                break
            i = sampled_pivot(s_row, s_res, S, row_used, ZERO_PIVOT * scale)
        else:
            i = argmax_free(u, row_used, m)
        if i < 0:
            break
    return CONVERGED


def aca(X, const int[::1] rows not None, const int[::1] cols not None, str kind, double gamma, *, int degree,
        double coef0, const double[::1] sqnorms not None, double tol, int max_rank, double[::1] work not None,
        const int[::1] sample_rows not None, const int[::1] sample_cols not None, int n_threads=1,
        const int[::1] stop=None):
    """K(rows, cols) ~ U V^T by partially pivoted ACA (aca_run) at relative Frobenius tolerance
    tol and at most max_rank crosses, for a canonical CSR X with row squared norms sqnorms, its
    stopping test checked at the entries (rows[sample_rows[s]], cols[sample_cols[s]]) (none: the
    plain ACA).

    work holds at least max_rank * (len(rows) + len(cols)) doubles: Ut = the first max_rank * m
    as (max_rank, m), Vt the next max_rank * p as (max_rank, p). Returns the rank r; U = Ut[:r].T,
    V = Vt[:r].T. Raises KeyboardInterrupt when stop[0] is set or on Ctrl-C (looked at per cross)."""
    cdef KernelParams kp = kernel_params(kind, gamma, degree, coef0)
    cdef int m = rows.shape[0], p = cols.shape[0], S = sample_rows.shape[0]
    cdef int width = max(X.shape[1], 1)
    cdef CSR A = _view(X, width)
    cdef int status, rank = 0, cap
    if stop is None:
        stop = np.zeros(1, dtype=np.int32)
    if sqnorms.shape[0] != A.n_rows:
        raise ValueError(f"{sqnorms.shape[0]} squared norms for {A.n_rows} rows")
    if max_rank < 0 or work.shape[0] < <Py_ssize_t>max_rank * (m + p):
        raise ValueError(f"work must hold max_rank * {m + p} doubles")
    if sample_cols.shape[0] != S or not (_within(sample_rows, m) and _within(sample_cols, p)):
        raise ValueError("sample positions must pair up and lie within the block")
    if m == 0 or p == 0 or max_rank == 0:
        return 0
    if not (_within(rows, A.n_rows) and _within(cols, A.n_rows)):
        raise ValueError("row indices out of range")
    cdef unsigned char[::1] row_used = np.zeros(m, dtype=np.uint8)
    cdef unsigned char[::1] col_used = np.zeros(p, dtype=np.uint8)
    cdef double[::1] dense = np.zeros(width)
    cdef double[::1] s_res = np.zeros(max(S, 1))
    cap = min(max_rank, m, p)
    with nogil:
        status = aca_run(kp, A, &sqnorms[0], &rows[0], m, &cols[0], p, tol, cap, &work[0],
                         &work[0] + <Py_ssize_t>max_rank * m, &sample_rows[0] if S > 0 else NULL,
                         &sample_cols[0] if S > 0 else NULL, &s_res[0], S, &row_used[0], &col_used[0],
                         &dense[0], max(n_threads, 1), stop, &rank)
    if status == INTERRUPTED:
        raise KeyboardInterrupt
    return rank
