"""Dense solves of the Newton systems, without the GIL: Cholesky (LAPACK's dpotrf / dpotrs,
SciPy's, from Cython; denormals flushed), the bordered system of a projected matrix, the dense
p x p SSsNAL Newton matrix formed and factored in one call, and the operator of a projected
float32 block for the shared CG (systems too large to factor)."""
from cython.parallel cimport prange
from libc.math cimport INFINITY, fabs
from scipy.linalg.cython_lapack cimport dpotrf, dpotrs
import numpy as np

from ._cg cimport Operator
from ..errors import FastSVMError


cdef extern from "_fpmode.h":
    unsigned int flush_denormals "fastsvm_flush_denormals"() noexcept nogil
    void restore_fp_mode "fastsvm_restore_fp_mode"(unsigned int mode) noexcept nogil


cdef bint cholesky_in_place(double[:, ::1] H, double[::1] rhs) noexcept nogil:
    # LAPACK on the row-major buffer: its column-major lower triangle is our upper one (H is
    # symmetric), so H = U^T U with U in the upper triangle; denormals flushed (_fpmode.h)
    cdef int n = <int>H.shape[0], one = 1, info = 0, i
    cdef char uplo = b'L'
    cdef unsigned int mode
    if n == 0:
        return True
    mode = flush_denormals()
    dpotrf(&uplo, &n, &H[0, 0], &n, &info)
    if info == 0:
        dpotrs(&uplo, &n, &one, &H[0, 0], &n, &rhs[0], &n, &info)
    restore_fp_mode(mode)
    if info != 0:
        return False
    for i in range(n):                          # a NaN pivot passes dpotrf's test
        if not fabs(rhs[i]) < INFINITY:
            return False
    return info == 0


def bordered_solve(double[:, ::1] M, double[::1] t, const double[::1] a):
    """z with P M z = P t and a^T z = 0 (P = I - a a^T / a^T a), in place of t, for a symmetric
    positive definite M (overwritten by its Cholesky factor): z = M^-1 (t + mu a), mu =
    -a^T M^-1 t / a^T M^-1 a. This is the solution of (I + sigma P K P) z = P t for M = I +
    sigma K (the SMW Newton systems: P K P and its three outer products are never formed).
    Returns False when M is not numerically positive definite."""
    cdef Py_ssize_t n = M.shape[0], i
    if M.shape[1] != n or t.shape[0] != n or a.shape[0] != n:
        raise FastSVMError("bordered_solve: M must be square and t, a match it")
    cdef double[::1] w = np.array(a, dtype=np.float64)
    cdef int n_ = <int>n, one = 1, info = 0
    cdef char uplo = b'L'
    cdef double aw = 0.0, at = 0.0, mu
    cdef bint ok
    cdef unsigned int mode
    if n == 0:
        return True
    with nogil:
        ok = cholesky_in_place(M, t)
        if ok:
            mode = flush_denormals()
            dpotrs(&uplo, &n_, &one, &M[0, 0], &n_, &w[0], &n_, &info)
            restore_fp_mode(mode)
            for i in range(n):
                aw += a[i] * w[i]
                at += a[i] * t[i]
            ok = info == 0 and aw == aw          # aw is > 0 for a != 0: M^-1 is positive definite
            if ok and aw > 0.0:
                mu = -at / aw
                for i in range(n):
                    t[i] += mu * w[i]
    return ok


def dense_newton(const double[:, ::1] G, const double[::1] s, double aa, double sigma,
                 const double[::1] g, *, double[:, ::1] H, double[::1] d):
    """d = -H^-1 g for H = I + sigma (G - s s^T / aa) (G = Z_J^T Z_J, s = Z_J^T a_J; no s term
    when aa = 0), H formed in the given buffer and factored there by cholesky_solve. Returns
    False when H is not numerically positive definite."""
    cdef Py_ssize_t p = G.shape[0], i, j
    if G.shape[1] != p or s.shape[0] != p or g.shape[0] != p or H.shape[0] != p or H.shape[1] != p \
            or d.shape[0] != p:
        raise FastSVMError("dense_newton: G, H must be p x p and s, g, d of length p")
    cdef double scale = 1.0 / aa if aa > 0.0 else 0.0
    cdef bint ok
    with nogil:
        for i in range(p):
            for j in range(p):
                H[i, j] = sigma * (G[i, j] - scale * s[i] * s[j])
            H[i, i] += 1.0
            d[i] = -g[i]
        ok = cholesky_in_place(H, d)
    return ok


def cholesky_solve(double[:, ::1] H, double[::1] rhs):
    """Solve H d = rhs for a symmetric positive definite H, in place: H is overwritten by its
    Cholesky factor (upper triangle, H = U^T U) and rhs by d. Returns False when H is not
    numerically positive definite. LAPACK (dpotrf, dpotrs: SciPy's) without the GIL, on one BLAS
    thread, as fit_model runs the solvers: its blocked factorization beats a plain loop on all but
    the smallest orders."""
    if H.shape[1] != H.shape[0] or rhs.shape[0] != H.shape[0]:
        raise FastSVMError("cholesky_solve: H must be square and rhs match it")
    cdef bint ok
    with nogil:
        ok = cholesky_in_place(H, rhs)
    return ok


cdef class ProjectedBlock(Operator):
    """ProjectedBlock(Q, a, sigma, n_threads=1): H = I + sigma P Q P, P = I - a a^T / a^T a, for
    the shared CG without the GIL; Q a symmetric float32 block (C order, kept by reference).
    Each product reads Q once, its rows split over the threads, each row summed in order (in
    float64): the same bits for any thread count."""
    cdef const float[:, ::1] Q
    cdef const double[::1] a
    cdef double[::1] v
    cdef double aa, sigma
    cdef int threads

    def __init__(self, Q, a, double sigma, int n_threads=1):
        self.Q = Q
        self.a = np.ascontiguousarray(a, dtype=np.float64)
        k = self.a.shape[0]
        if self.Q.shape[0] != k or self.Q.shape[1] != k:
            raise FastSVMError("ProjectedBlock: Q must be square, of a's length")
        self.aa = float(np.dot(self.a, self.a))
        if not self.aa > 0.0:
            raise FastSVMError("ProjectedBlock: a must not be zero")
        self.v = np.empty(k)
        self.sigma = sigma
        self.threads = max(1, n_threads)
        self.order = k
        self.poll_values = k * k

    cdef double apply(self, const double* d, double* hd) noexcept nogil:
        cdef Py_ssize_t i, j, k = self.order
        cdef const double* a = &self.a[0]
        cdef double* v = &self.v[0]
        cdef const float* row
        cdef double ad = 0.0, aw = 0.0, dhd = 0.0, w
        for i in range(k):
            ad = ad + a[i] * d[i]
        ad = ad / self.aa
        for i in range(k):
            v[i] = d[i] - ad * a[i]
        for i in prange(k, num_threads=self.threads, schedule="static"):
            row = &self.Q[i, 0]
            w = 0.0
            for j in range(k):
                w = w + row[j] * v[j]
            hd[i] = w
        for i in range(k):
            aw = aw + a[i] * hd[i]
        aw = aw / self.aa
        for i in range(k):
            hd[i] = v[i] + self.sigma * (hd[i] - aw * a[i])
            dhd = dhd + d[i] * hd[i]
        return dhd
