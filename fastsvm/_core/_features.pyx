# Explicit feature maps of CSR rows without the GIL: random Fourier features (a sparse row times a
# dense frequency matrix, then cos / sin) and the kernel rows K(x, L) against Nystrom landmarks
# (the shared kernel arithmetic, threaded over rows). Rows are independent and each is computed by
# one thread in a fixed order, so every thread count gives the same bits.
from cython.parallel cimport prange, threadid
from libc.math cimport cos, fabs, sin
cimport numpy as cnp
import numpy as np

from ._status cimport stop_requested
from ._csr cimport CSR, csr_view, row_sqnorm
from ._kernel cimport (SINCOS_MAX, KernelParams, cos_sin_block, kernel_params, kernel_row, scatter_row,
                       unscatter_row)
from ._kernel import row_sqnorms

cnp.import_array()

# Rows per nogil block are chosen so that a block is about this many multiply-adds: the stop flag
# and Ctrl-C are looked at between blocks (a fraction of a second apart).
cdef enum:
    BLOCK_WORK = 20000000


cdef inline const double* cdptr(const double[::1] a) noexcept:
    return &a[0] if a.shape[0] > 0 else NULL


cdef int _block_rows(double work_per_row, int n_rows, int n_threads):
    return <int>min(max(BLOCK_WORK / max(work_per_row, 1.0), 4.0 * n_threads), <double>max(n_rows, 1))


# ---------------------------------------------------------------------------------------------
# random Fourier features

cdef void fourier_row(CSR X, int i, const double* W, int F, const double* offset, double scale,
                      bint pairs, double* out) noexcept nogil:
    """out = scale cos(W^T x_i + offset) (F values), or with pairs scale [cos(W^T x_i), sin(W^T x_i)]
    (2F values). W is p x F row-major: each stored value of x_i adds one contiguous row of W."""
    cdef int j, k
    cdef double v, z, big
    cdef const double* w
    for j in range(F):
        out[j] = 0.0 if pairs else offset[j]
    for k in range(X.indptr[i], X.indptr[i + 1]):
        v = X.data[k]
        w = W + <Py_ssize_t>X.indices[k] * F
        for j in range(F):
            out[j] += v * w[j]
    big = 0.0
    for j in range(F):
        big = max(big, fabs(out[j]))
    if big <= SINCOS_MAX:      # the vectorized pair (random features' arguments are far below)
        cos_sin_block(out, out + F if pairs else NULL, scale, F)
    elif pairs:
        for j in range(F):
            z = out[j]
            out[j] = scale * cos(z)
            out[F + j] = scale * sin(z)
    else:
        for j in range(F):
            out[j] = scale * cos(out[j])


def fourier_features(X, const double[:, ::1] W not None, const double[::1] offset not None, double scale,
                     bint pairs, *, double[:, ::1] out not None, int n_threads=1, const int[::1] stop=None):
    """Fill out (n x F, or n x 2F with pairs) with the random Fourier features of the rows of the
    canonical CSR X against the frequencies W (p x F) and offsets (F; ignored with pairs).
    Raises KeyboardInterrupt when ``stop[0]`` is set or on Ctrl-C (checked between row blocks)."""
    cdef const double[::1] data = X.data
    cdef const int[::1] indices = X.indices
    cdef const int[::1] indptr = X.indptr
    cdef int F = W.shape[1]
    cdef int width = 2 * F if pairs else F
    if stop is None:
        stop = np.zeros(1, dtype=np.int32)
    if out.shape[0] != X.shape[0] or out.shape[1] != width:
        raise ValueError(f"output must be {X.shape[0]} x {width}")
    if not pairs and offset.shape[0] != F:
        raise ValueError(f"{offset.shape[0]} offsets for {F} frequencies")
    if X.nnz > 0 and int(X.indices.max()) >= W.shape[0]:
        raise ValueError(f"X has a value in column {int(X.indices.max())}, the map has "
                         f"{W.shape[0]} rows of frequencies")
    cdef CSR A = csr_view(data, indices, indptr, X.shape[0], X.shape[1])
    if A.n_rows == 0 or F == 0:
        return
    n_threads = max(1, min(n_threads, A.n_rows))
    cdef int block = _block_rows((<double>A.indptr[A.n_rows] / A.n_rows + 1.0) * F, A.n_rows, n_threads)
    cdef int i, lo = 0, hi
    cdef bint interrupted = False
    cdef const double* Wp = &W[0, 0] if W.shape[0] > 0 else NULL  # no stored values then
    cdef const double* bp = cdptr(offset)
    with nogil:
        while lo < A.n_rows and not interrupted:
            hi = min(lo + block, A.n_rows)
            if n_threads == 1:
                for i in range(lo, hi):
                    fourier_row(A, i, Wp, F, bp, scale, pairs, &out[i, 0])
            else:
                for i in prange(lo, hi, num_threads=n_threads, schedule="static"):
                    fourier_row(A, i, Wp, F, bp, scale, pairs, &out[i, 0])
            lo = hi
            if lo < A.n_rows:
                interrupted = stop_requested(stop)
    if interrupted:
        raise KeyboardInterrupt


# ---------------------------------------------------------------------------------------------
# kernel rows against landmarks

cdef void kernel_block(KernelParams k, CSR X, CSR L, const double* l_sqnorm, int lo, int hi,
                       double* dense, int width, double[:, ::1] out, int n_threads) noexcept nogil:
    """out[i] = (k(x_i, l_1), ..., k(x_i, l_m)) for rows lo .. hi-1; thread t scatters its rows into
    the t-th slice of dense (width values each)."""
    cdef int i
    cdef double* buf
    if n_threads <= 1:
        for i in range(lo, hi):
            scatter_row(X, i, dense)
            kernel_row(k, L, l_sqnorm, dense, row_sqnorm(X, i), &out[i, 0], 1)
            unscatter_row(X, i, dense)
        return
    for i in prange(lo, hi, num_threads=n_threads, schedule="dynamic", chunksize=8):
        buf = dense + <Py_ssize_t>threadid() * width
        scatter_row(X, i, buf)
        kernel_row(k, L, l_sqnorm, buf, row_sqnorm(X, i), &out[i, 0], 1)
        unscatter_row(X, i, buf)


def landmark_kernel(X, L, str kind, double gamma, int degree, *, double coef0, double[:, ::1] out not None,
                    int n_threads=1, const int[::1] stop=None):
    """Fill out (n x m) with K(X, L) for canonical CSR X (n rows) and landmarks L (m rows),
    threaded over the rows of X. Columns beyond either matrix's width count as zeros. Raises
    KeyboardInterrupt when ``stop[0]`` is set or on Ctrl-C (checked between row blocks)."""
    cdef KernelParams kp = kernel_params(kind, gamma, degree, coef0)
    cdef int width = max(X.shape[1], L.shape[1], 1)
    cdef const double[::1] xd = X.data
    cdef const int[::1] xi = X.indices
    cdef const int[::1] xp = X.indptr
    cdef const double[::1] ld = L.data
    cdef const int[::1] li = L.indices
    cdef const int[::1] lp = L.indptr
    if stop is None:
        stop = np.zeros(1, dtype=np.int32)
    if out.shape[0] != X.shape[0] or out.shape[1] != L.shape[0]:
        raise ValueError(f"output must be {X.shape[0]} x {L.shape[0]}")
    cdef CSR A = csr_view(xd, xi, xp, X.shape[0], width)
    cdef CSR B = csr_view(ld, li, lp, L.shape[0], width)
    if A.n_rows == 0 or B.n_rows == 0:
        return
    n_threads = max(1, min(n_threads, A.n_rows))
    cdef double[::1] lsq = row_sqnorms(L)
    cdef double[::1] dense = np.zeros(<Py_ssize_t>n_threads * width)
    cdef int block = _block_rows(<double>B.indptr[B.n_rows] + B.n_rows, A.n_rows, n_threads)
    cdef int lo = 0, hi
    cdef bint interrupted = False
    with nogil:
        while lo < A.n_rows and not interrupted:
            hi = min(lo + block, A.n_rows)
            kernel_block(kp, A, B, &lsq[0], lo, hi, &dense[0], width, out, n_threads)
            lo = hi
            if lo < A.n_rows:
                interrupted = stop_requested(stop)
    if interrupted:
        raise KeyboardInterrupt
