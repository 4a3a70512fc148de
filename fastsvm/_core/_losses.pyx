"""Per-sample losses over margins z_i = y_i (x_i.w + B b) for the linear primal solvers (NESVM,
docs/algorithms.md §3; SVM-ALM, §4), without the GIL.

Each loss writes the per-row quantity the gradient's X^T product needs and sums its value over the
rows in fixed chunks of LOSS_CHUNK rows, the chunks added in their order: threads only choose who
sums a chunk, so the sums have the same bits for any thread count.
"""
from cython.parallel cimport prange
from libc.math cimport NAN, fabs, pow, sqrt
from libc.stdlib cimport free, malloc
import numpy as np

from ..errors import FastSVMError


cdef inline Py_ssize_t chunk_count(Py_ssize_t n) noexcept nogil:
    return (n + LOSS_CHUNK - 1) // LOSS_CHUNK


cdef inline double* chunk_parts(Py_ssize_t chunks, int width, double* sums) noexcept nogil:
    """The buffer of the chunks' partial sums, width per chunk (add_chunks frees it); NULL, with
    NaN in the sums, when it cannot be had."""
    cdef double* part = <double*>malloc(max(width * chunks, 1) * sizeof(double))
    cdef int k
    if part == NULL:
        for k in range(width):
            sums[k] = NAN
    return part


cdef inline void add_chunks(double* part, Py_ssize_t chunks, int width, double* sums) noexcept nogil:
    """sums[k] = the chunks' partial sums part[width c + k] added in chunk order; part is freed."""
    cdef Py_ssize_t c
    cdef int k
    for k in range(width):
        sums[k] = 0.0
    for c in range(chunks):
        for k in range(width):
            sums[k] += part[width * c + k]
    free(part)


cdef void smoothed_hinge(const double* z, const double* rho, const double* weight, double mu,
                         Py_ssize_t n, double* alpha, double* sums, int n_threads) noexcept nogil:
    """Nesterov's smoothed hinge with the row's own scale: m = 1 - z_i, u_i = clip(m / (mu rho_i),
    0, 1), h = u_i m - mu rho_i u_i^2 / 2, so 0 <= max(0, m) - h <= mu rho_i / 2. A row with
    rho_i = 0 is all zeros: its loss is the constant 1, u_i = 1. alpha_i = weight_i u_i (the
    gradient is -A^T alpha, and alpha is the dual point), sums[0] = sum_i weight_i h, sums[1] =
    sum_i weight_i max(0, m) (the hinge itself, at no extra cost). NaN in the sums when the chunk
    buffer cannot be had."""
    cdef Py_ssize_t chunks = chunk_count(n), c, i, lo, hi
    cdef double* part = chunk_parts(chunks, 2, sums)
    cdef double m, ui, scale, s_smooth, s_hinge
    if part == NULL:
        return
    for c in prange(chunks, num_threads=max(1, min(n_threads, chunks)), schedule="static"):
        lo = c * LOSS_CHUNK
        hi = min(lo + LOSS_CHUNK, n)
        s_smooth = 0.0
        s_hinge = 0.0
        for i in range(lo, hi):
            m = 1.0 - z[i]
            scale = mu * rho[i]
            if scale > 0.0:
                ui = min(max(m / scale, 0.0), 1.0)
            else:
                ui = 1.0
            alpha[i] = weight[i] * ui
            s_smooth = s_smooth + weight[i] * (ui * m - 0.5 * scale * ui * ui)
            s_hinge = s_hinge + weight[i] * max(m, 0.0)
        part[2 * c] = s_smooth
        part[2 * c + 1] = s_hinge
    add_chunks(part, chunks, 2, sums)


cdef void squared_error(const double* z, const double* weight, Py_ssize_t n, bint hinged, double* alpha,
                        double* sums, int n_threads) noexcept nogil:
    """The squared error on +-1 targets (LS-SVM), r_i = 1 - z_i, or when ``hinged`` the squared hinge,
    r_i = max(0, 1 - z_i): sums[0] = sum_i weight_i r_i^2, alpha_i = 2 weight_i r_i (the gradient is
    -A^T alpha, and alpha is the dual point)."""
    cdef Py_ssize_t chunks = chunk_count(n), c, i, lo, hi
    cdef double* part = chunk_parts(chunks, 1, sums)
    cdef double r, s
    if part == NULL:
        return
    for c in prange(chunks, num_threads=max(1, min(n_threads, chunks)), schedule="static"):
        lo = c * LOSS_CHUNK
        hi = min(lo + LOSS_CHUNK, n)
        s = 0.0
        for i in range(lo, hi):
            r = 1.0 - z[i]
            if hinged and r < 0.0:
                r = 0.0
            alpha[i] = 2.0 * weight[i] * r
            s = s + weight[i] * r * r
        part[c] = s
    add_chunks(part, chunks, 1, sums)


cdef void dual_sums(const double* alpha, const double* y, const double* weight, const double* rho, Py_ssize_t n,
                    double* sums, int n_threads) noexcept nogil:
    """What a dual objective needs of alpha beyond X^T (y alpha): sums[0] = sum alpha_i, sums[1] =
    y^T alpha, sums[2] = sum rho_i alpha_i^2 / C_i (the smoothed hinge's dual term / mu * 2), sums[3]
    = sum alpha_i^2 / C_i (the squared error's, times 4); rows with C_i = 0 add nothing to the last
    two. rho may be NULL (sums[2] = 0)."""
    cdef Py_ssize_t chunks = chunk_count(n), c, i, lo, hi
    cdef double* part = chunk_parts(chunks, 4, sums)
    cdef double a, q, s0, s1, s2, s3
    if part == NULL:
        return
    for c in prange(chunks, num_threads=max(1, min(n_threads, chunks)), schedule="static"):
        lo = c * LOSS_CHUNK
        hi = min(lo + LOSS_CHUNK, n)
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for i in range(lo, hi):
            a = alpha[i]
            s0 = s0 + a
            s1 = s1 + y[i] * a
            if weight[i] > 0.0:
                q = a * a / weight[i]
                s3 = s3 + q
                if rho != NULL:
                    s2 = s2 + rho[i] * q
        part[4 * c] = s0
        part[4 * c + 1] = s1
        part[4 * c + 2] = s2
        part[4 * c + 3] = s3
    add_chunks(part, chunks, 4, sums)


cdef double huber(const double* w, Py_ssize_t p, double mu, double* grad) noexcept nogil:
    """The smoothed l1 norm sum_j l_mu(w_j): w_j^2 / (2 mu) where |w_j| <= mu, else |w_j| - mu / 2;
    grad_j = clip(w_j / mu, -1, 1)."""
    cdef Py_ssize_t j
    cdef double a, total = 0.0
    for j in range(p):
        a = fabs(w[j])
        if a <= mu:
            total += 0.5 * w[j] * w[j] / mu
            grad[j] = w[j] / mu
        else:
            total += a - 0.5 * mu
            grad[j] = 1.0 if w[j] > 0.0 else -1.0
    return total


cdef double power_hinge_prox_one(double r, double gamma, double p, double guess) noexcept nogil:
    """argmin_s gamma max(0, s)^p + (s - r)^2 / 2 (SVM-ALM's e-update in s = y_i e_i): r itself
    when r <= 0; closed forms for p = 1, 1.5 and 2; else the root of p gamma s^(p-1) + s - r on (0, r],
    increasing in s, by Newton's method kept inside a shrinking bracket (bisection when a step
    leaves it: the derivative is unbounded at 0 for p < 2), to the last bit, from ``guess`` when it
    lies inside (SVM-ALM's last s: a few steps then)."""
    cdef double lo, hi, s, f, step, power
    cdef int _
    if r <= 0.0 or gamma <= 0.0:
        return r
    if p == 1.0:
        return r - gamma if r > gamma else 0.0
    if p == 2.0:
        return r / (1.0 + 2.0 * gamma)
    if p == 1.5:      # s = t^2: t^2 + 1.5 gamma t - r = 0
        s = 0.75 * gamma
        s = r / (s + sqrt(s * s + r))
        return s * s
    lo = 0.0
    hi = r
    s = guess
    if not (lo < s < hi):
        # the root is below both r and (r / (p gamma))^(1 / (p - 1)), where one term alone reaches r
        s = min(r, pow(r / (p * gamma), 1.0 / (p - 1.0)))
        if not (lo < s < hi):
            s = 0.5 * r
    for _ in range(200):
        power = p * gamma * pow(s, p - 1.0)
        f = power + s - r
        if f > 0.0:
            hi = s
        elif f < 0.0:
            lo = s
        else:
            return s
        step = f / ((p - 1.0) * power / s + 1.0)
        if s - step <= lo or s - step >= hi:
            step = s - 0.5 * (lo + hi)
        s -= step
        if fabs(step) <= 2.3e-16 * s or hi - lo <= 4.5e-16 * hi:
            break
    return s


cdef void power_hinge_prox_rows(const double* r, const double* gamma, double p, Py_ssize_t n, double* s,
                                int n_threads) noexcept nogil:
    cdef Py_ssize_t i
    for i in prange(n, num_threads=max(1, n_threads if n >= LOSS_CHUNK else 1), schedule="static"):
        s[i] = power_hinge_prox_one(r[i], gamma[i], p, -1.0)


cdef void multiplier_rows(double* z, const double* q, double step, double* nu, double* s, double* res,
                          const double* weight, double mu, double mu_next, double p, Py_ssize_t n,
                          bint update, int n_threads) noexcept nogil:
    """SVM-ALM's per-sample updates in margin space, fused into one pass: when ``update``, the end
    of an iteration -- the margins moved by the (w, b) step, z -= step q, and the multipliers,
    nu += mu (z - 1 + s) -- then the next one's start at penalty mu_next: s = the prox of
    C_i / mu_next max(0, .)^p at 1 - z - nu / mu_next, and res = z - 1 + s + nu / mu_next (the
    residual whose A^T product is the (w, b) step's gradient)."""
    cdef Py_ssize_t i
    cdef double shifted
    for i in prange(n, num_threads=max(1, n_threads if n >= LOSS_CHUNK else 1), schedule="static"):
        if update:
            z[i] = z[i] - step * q[i]
            nu[i] = nu[i] + mu * (z[i] - 1.0 + s[i])
        shifted = nu[i] / mu_next
        s[i] = power_hinge_prox_one(1.0 - z[i] - shifted, weight[i] / mu_next, p, s[i])
        res[i] = z[i] - 1.0 + s[i] + shifted


cdef void power_hinge(const double* z, const double* weight, double p, Py_ssize_t n, double* sums,
                      int n_threads) noexcept nogil:
    """sums[0] = sum_i weight_i max(0, 1 - z_i)^p."""
    cdef Py_ssize_t chunks = chunk_count(n), c, i, lo, hi
    cdef double* part = chunk_parts(chunks, 1, sums)
    cdef double m, total
    if part == NULL:
        return
    for c in prange(chunks, num_threads=max(1, min(n_threads, chunks)), schedule="static"):
        lo = c * LOSS_CHUNK
        hi = min(lo + LOSS_CHUNK, n)
        total = 0.0
        for i in range(lo, hi):
            m = 1.0 - z[i]
            if m > 0.0:
                total = total + weight[i] * (m if p == 1.0 else (m * m if p == 2.0 else pow(m, p)))
        part[c] = total
    add_chunks(part, chunks, 1, sums)


cdef void power_hinge_conjugate(const double* alpha, const double* weight, double p, Py_ssize_t n, double* sums,
                                int n_threads) noexcept nogil:
    """sums[0] = sum_i C_i l*(alpha_i / C_i), l* the conjugate of max(0, s)^p at a >= 0: 0 for p = 1
    (alpha in [0, C]), (p - 1) (a / p)^(p / (p - 1)) else (a^2 / 4 at p = 2); rows with C_i = 0 add 0."""
    cdef Py_ssize_t chunks = chunk_count(n), c, i, lo, hi
    cdef double* part = chunk_parts(chunks, 1, sums)
    cdef double a, total
    if part == NULL:
        return
    for c in prange(chunks, num_threads=max(1, min(n_threads, chunks)), schedule="static"):
        lo = c * LOSS_CHUNK
        hi = min(lo + LOSS_CHUNK, n)
        total = 0.0
        if p != 1.0:
            for i in range(lo, hi):
                if weight[i] > 0.0 and alpha[i] > 0.0:
                    a = alpha[i] / weight[i]
                    total = total + weight[i] * (0.25 * a * a if p == 2.0
                                                 else (p - 1.0) * pow(a / p, p / (p - 1.0)))
        part[c] = total
    add_chunks(part, chunks, 1, sums)


# ---------------------------------------------------------------- Python entry points

def _rows_like(z, name, arrays):
    for other_name, other in arrays:
        if other.shape[0] != z.shape[0]:
            raise FastSVMError(f"{other_name} has {other.shape[0]} entries, {name} has {z.shape[0]}")


def smoothed_hinge_loss(const double[::1] z, const double[::1] rho, const double[::1] weight, double mu,
                        double[::1] alpha, *, int n_threads=1):
    """(sum_i weight_i h_mu(z_i), sum_i weight_i hinge(z_i)), alpha = weight u written in place."""
    _rows_like(z, "z", [("rho", rho), ("weight", weight), ("alpha", alpha)])
    if not mu > 0:
        raise FastSVMError("the smoothing parameter mu must be > 0")
    cdef double sums[2]
    cdef Py_ssize_t n = z.shape[0]
    if n == 0:
        return 0.0, 0.0
    with nogil:
        smoothed_hinge(&z[0], &rho[0], &weight[0], mu, n, &alpha[0], sums, n_threads)
    return sums[0], sums[1]


def squared_error_loss(const double[::1] z, const double[::1] weight, double[::1] alpha, int n_threads=1,
                       bint hinged=False):
    """sum_i weight_i r_i^2, alpha = 2 weight r written in place; r = 1 - z, or max(0, 1 - z) when
    ``hinged`` (the squared hinge)."""
    _rows_like(z, "z", [("weight", weight), ("alpha", alpha)])
    cdef double sums[1]
    cdef Py_ssize_t n = z.shape[0]
    if n == 0:
        return 0.0
    with nogil:
        squared_error(&z[0], &weight[0], n, hinged, &alpha[0], sums, n_threads)
    return sums[0]


def huber_norm(const double[::1] w, double mu, double[::1] grad):
    """The Huber-smoothed l1 norm of w, its gradient written in place."""
    _rows_like(w, "w", [("grad", grad)])
    if not mu > 0:
        raise FastSVMError("the smoothing parameter mu must be > 0")
    cdef double total
    with nogil:
        total = huber(&w[0] if w.shape[0] else NULL, w.shape[0], mu, &grad[0] if w.shape[0] else NULL)
    return total


def alpha_sums(const double[::1] alpha, const double[::1] y, const double[::1] weight, rho=None, int n_threads=1):
    """The array [sum alpha, y^T alpha, sum rho alpha^2 / C, sum alpha^2 / C] over the rows with C > 0
    for the last two (rho None: the third is 0): partial sums that a team of workers adds up."""
    _rows_like(alpha, "alpha", [("y", y), ("weight", weight)])
    cdef const double[::1] rho_view
    cdef const double* rho_ptr = NULL
    if rho is not None:
        rho_view = rho
        _rows_like(alpha, "alpha", [("rho", rho_view)])
        if rho_view.shape[0]:
            rho_ptr = &rho_view[0]
    cdef double sums[4]
    cdef Py_ssize_t n = alpha.shape[0]
    if n == 0:
        return np.zeros(4)
    with nogil:
        dual_sums(&alpha[0], &y[0], &weight[0], rho_ptr, n, sums, n_threads)
    return np.array([sums[0], sums[1], sums[2], sums[3]])


def _power(double p):
    if not p >= 1.0:
        raise FastSVMError(f"the loss power p must be >= 1, got {p}")


def power_hinge_prox(const double[::1] r, const double[::1] gamma, double p, double[::1] out, int n_threads=1):
    """out_i = argmin_s gamma_i max(0, s)^p + (s - r_i)^2 / 2 (SVM-ALM's e-update), in place."""
    _rows_like(r, "r", [("gamma", gamma), ("out", out)])
    _power(p)
    if r.shape[0]:
        with nogil:
            power_hinge_prox_rows(&r[0], &gamma[0], p, r.shape[0], &out[0], n_threads)


def power_hinge_loss(const double[::1] z, const double[::1] weight, double p, int n_threads=1):
    """sum_i weight_i max(0, 1 - z_i)^p."""
    _rows_like(z, "z", [("weight", weight)])
    _power(p)
    cdef double sums[1]
    if z.shape[0] == 0:
        return 0.0
    with nogil:
        power_hinge(&z[0], &weight[0], p, z.shape[0], sums, n_threads)
    return sums[0]


def power_hinge_conjugate_sum(const double[::1] alpha, const double[::1] weight, double p, int n_threads=1):
    """sum_i C_i l*(alpha_i / C_i): the loss term of the Lp-hinge SVM's dual at alpha >= 0."""
    _rows_like(alpha, "alpha", [("weight", weight)])
    _power(p)
    cdef double sums[1]
    if alpha.shape[0] == 0:
        return 0.0
    with nogil:
        power_hinge_conjugate(&alpha[0], &weight[0], p, alpha.shape[0], sums, n_threads)
    return sums[0]


def multiplier_step(double[::1] z, const double[::1] q, double step, double[::1] nu, double[::1] s,
                    *, double[::1] res, const double[::1] weight, double mu, double mu_next, double p,
                    bint update=True, int n_threads=1):
    """SVM-ALM's per-sample updates, in place (multiplier_rows): with ``update``, z -= step q and
    nu += mu (z - 1 + s) first; then, at mu_next, s = prox and res = z - 1 + s + nu / mu_next."""
    _rows_like(z, "z", [("q", q), ("nu", nu), ("s", s), ("res", res), ("weight", weight)])
    _power(p)
    if not (mu > 0 and mu_next > 0):
        raise FastSVMError("the penalty mu must be > 0")
    if z.shape[0]:
        with nogil:
            multiplier_rows(&z[0], &q[0], step, &nu[0], &s[0], &res[0], &weight[0], mu, mu_next, p, z.shape[0],
                            update, n_threads)
