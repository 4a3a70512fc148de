"""Two-coordinate steps for the linear nu-SVM and one-class duals (ALGORITHMS.md section 6), without
the GIL:

    min_alpha  1/2 |Z^T alpha|^2   s.t.  e^T alpha = const,  0 <= alpha_i <= u_i,   z_i = s_i [x_i, B]

(s_i = y_i and B = 1 for the bias-in-kernel nu-SVM, s_i = 1 and B = 0 for one-class). w = Z^T alpha is
kept up to date, so a step on the pair (i, j) along e_i - e_j costs a few passes over rows i and j:
G_i = z_i.w and G_j afresh, z_i.z_j by merging the two rows' sorted indices, and w += t (z_i - z_j).
No single coordinate can move once e^T alpha = const holds (the paper's update stalls there): the
pair moves mass from j, whose gradient is larger, to i.
"""
from libc.math cimport fmin, isfinite
cimport numpy as cnp

from ._csr cimport CSR, csr_view, row_dot, row_axpy
from ._status cimport CONVERGED, INTERRUPTED, NONFINITE, stop_requested
from . import _status
from ..errors import FastSVMError

cnp.import_array()

cdef enum:
    POLL_PAIRS = 4096      # pairs between two looks at the stop flag

cdef double TAU = 1e-12    # the curvature floor of a step (LIBSVM's tau): rows z_i = z_j still move


cdef inline double row_pair_dot(CSR X, int i, int j) noexcept nogil:
    """x_i . x_j by merging the rows' sorted column indices."""
    cdef int a = X.indptr[i], a_end = X.indptr[i + 1], b = X.indptr[j], b_end = X.indptr[j + 1]
    cdef double s = 0.0
    while a < a_end and b < b_end:
        if X.indices[a] == X.indices[b]:
            s += X.data[a] * X.data[b]
            a += 1
            b += 1
        elif X.indices[a] < X.indices[b]:
            a += 1
        else:
            b += 1
    return s


def pair_steps(X, const double[::1] sign, double bias, double[::1] alpha, double[::1] w,
               const double[::1] upper, const double[::1] sqnorm, const int[::1] up, const int[::1] low,
               const int[::1] stop):
    """For k = 0, 1, ...: one exact step on the pair (up[k], low[k]) from the current w: mass
    moves from low[k] to up[k] when G_low > G_up, as far as the curvature |z_i - z_j|^2 and the
    box allow. alpha and w (n_cols + 1 entries, the last one B's weight) in place; sqnorm[i] =
    |z_i|^2. Returns (status, steps taken, objective decrease)."""
    cdef Py_ssize_t n = alpha.shape[0]
    if not (sign.shape[0] == upper.shape[0] == sqnorm.shape[0] == n == X.shape[0]):
        raise FastSVMError("pair_steps: sign, alpha, upper and sqnorm need one entry per row")
    if w.shape[0] != X.shape[1] + 1:
        raise FastSVMError(f"pair_steps: w has {w.shape[0]} entries, expected {X.shape[1] + 1}")
    if up.shape[0] != low.shape[0]:
        raise FastSVMError("pair_steps: up and low must pair up")
    cdef const double[::1] data = X.data
    cdef const int[::1] indices = X.indices
    cdef const int[::1] indptr = X.indptr
    cdef CSR A = csr_view(data, indices, indptr, X.shape[0], X.shape[1])
    cdef int p = A.n_cols, i, j
    cdef Py_ssize_t k, m = up.shape[0], steps = 0
    cdef double gi, gj, quad, t, room, decrease = 0.0
    cdef int status = CONVERGED
    for k in range(m):
        if up[k] < 0 or up[k] >= n or low[k] < 0 or low[k] >= n:
            raise FastSVMError("pair_steps: a pair names a row out of range")
    with nogil:
        for k in range(m):
            if k % POLL_PAIRS == POLL_PAIRS - 1 and stop_requested(stop):
                status = INTERRUPTED
                break
            i, j = up[k], low[k]
            room = fmin(upper[i] - alpha[i], alpha[j])
            if i == j or not room > 0.0:
                continue
            gi = sign[i] * (row_dot(A, i, &w[0]) + bias * w[p])
            gj = sign[j] * (row_dot(A, j, &w[0]) + bias * w[p])
            if not gj > gi:
                continue
            quad = sqnorm[i] + sqnorm[j] - 2.0 * sign[i] * sign[j] * (row_pair_dot(A, i, j) + bias * bias)
            if quad < TAU:
                quad = TAU
            t = (gj - gi) / quad
            if not isfinite(t):
                status = NONFINITE
                break
            if t >= room:          # a bound reached exactly, not within rounding
                t = room
                alpha[i] = upper[i] if upper[i] - alpha[i] == room else alpha[i] + t
                alpha[j] = 0.0 if alpha[j] == room else alpha[j] - t
            else:
                alpha[i] += t
                alpha[j] -= t
            row_axpy(A, i, t * sign[i], &w[0])
            row_axpy(A, j, -t * sign[j], &w[0])
            w[p] += t * bias * (sign[i] - sign[j])
            decrease += t * (gj - gi) - 0.5 * t * t * quad
            steps += 1
    return _status.Status(status), steps, decrease
