"""The one preconditioned conjugate gradient of fastsvm, without the GIL.

CG on H x = b (H symmetric positive definite) from x = 0, preconditioned by M^-1 (a diagonal M, an
Operator's own preconditioner, or none), until |r| <= rtol |b| (CONVERGED), max_iter iterations
(MAX_ITER), a direction with d^T H d <= 0 (BREAKDOWN: H is not positive definite) or the stop flag
(INTERRUPTED). The state (struct CG, _cg.pxd) is advanced in reverse communication -- cg_check,
then the caller's product H d, then cg_move and cg_turn -- so that one set of recurrences serves
a Cython Operator driven without the GIL (cg_solve) and a Python callable driven from Python
(conjugate_gradient), whose product needs the GIL at every iteration anyway.

The sums over the vectors are added in fixed blocks of CG.block entries, each block in order and
the blocks in order (their vector steps shared by the threads): the bits do not depend on the
thread count. conjugate_gradient takes the caller's dot instead when given (SSsNAL's kernel front
end sums with problems.vector.dot, and its results are kept to the bit).
"""
from cython.parallel cimport prange
import numpy as np

from ._status cimport Status, stop_flag_set, stop_requested
from ._status import Status as StatusCode

cdef enum:
    STOP_POLL_VALUES = 1 << 22    # values read by the products between two looks for Ctrl-C


cdef class Operator:
    """Base of the nogil operators of cg_solve: apply(d, out) writes out = H d and returns d.out;
    precondition(r, z) writes z = M^-1 r when the preconditions flag is set."""

    cdef double apply(self, const double* d, double* out) noexcept nogil:
        return 0.0

    cdef void precondition(self, const double* r, double* z) noexcept nogil:
        pass


cdef Py_ssize_t cg_parts(Py_ssize_t n, Py_ssize_t block) noexcept nogil:
    """The doubles CG.part needs."""
    return 2 * ((n + block - 1) // block) if n > 0 else 2


cdef void cg_init(CG* s, Py_ssize_t n, double* x, double* r, double* z, double* d, double* hd,
                  double* part, Py_ssize_t block, int threads) noexcept nogil:
    """A state over these vectors (z may be r: no preconditioner), without a diagonal
    preconditioner or an identity block (set diag and off after)."""
    s.n = n
    s.x = x
    s.r = r
    s.z = z
    s.d = d
    s.hd = hd
    s.part = part
    s.diag = NULL
    s.block = max(block, 1)
    s.threads = max(threads, 1)
    s.off = 0.0


cdef void cg_start_sums(CG* s, double* rr, double* rz) noexcept nogil:
    """x = 0, z = r / diag (with diag; z is already M^-1 r otherwise), d = z; rr = off + r.r and
    rz = off + r.z, summed in order. r holds the right-hand side."""
    cdef Py_ssize_t c
    cdef double a = s.off, b = s.off
    cdef double* x = s.x
    cdef const double* r = s.r
    cdef double* z = s.z
    cdef double* d = s.d
    cdef const double* diag = s.diag
    for c in range(s.n):
        x[c] = 0.0
        a += r[c] * r[c]
    if diag != NULL:
        for c in range(s.n):
            z[c] = r[c] / diag[c]
    for c in range(s.n):
        d[c] = z[c]
        b += r[c] * z[c]
    rr[0] = a
    rz[0] = b


cdef void cg_begin(CG* s, double rr, double rz, double rtol, int max_iter) noexcept nogil:
    """The first residual's r.r and r.z, and the stopping rule: r.r <= rtol^2 (its first r.r)."""
    s.rr = rr
    s.rz = rz
    s.bound = rtol * rtol * rr
    s.max_iter = max_iter
    s.iterations = 0
    s.x_off = 0.0
    s.r_off = 1.0
    s.d_off = 1.0


cdef int cg_check(CG* s) noexcept nogil:
    """CONVERGED, MAX_ITER, or CG_CONTINUE: the caller writes hd = H d and calls cg_move."""
    if s.rr <= s.bound:
        return Status.CONVERGED
    if s.iterations >= s.max_iter:
        return Status.MAX_ITER
    return CG_CONTINUE


ctypedef void (*BlockStep)(CG* s, Py_ssize_t lo, Py_ssize_t hi, double* part) noexcept nogil


cdef void _over_blocks(CG* s, BlockStep step) noexcept nogil:
    """step on each block of s.block entries (its sums into its two doubles of s.part), the
    blocks shared by s.threads threads."""
    cdef Py_ssize_t lo, cb, n = s.n, size = s.block, n_blocks = (s.n + s.block - 1) // s.block
    if s.threads > 1 and n_blocks > 1:
        for cb in prange(n_blocks, num_threads=s.threads, schedule="static"):
            lo = cb * size
            step(s, lo, min(lo + size, n), s.part + 2 * cb)
    else:
        for cb in range(n_blocks):
            step(s, cb * size, min(cb * size + size, n), s.part + 2 * cb)


cdef void _move_block(CG* s, Py_ssize_t lo, Py_ssize_t hi, double* part) noexcept nogil:
    """x += alpha d, r -= alpha hd, z = r / diag over [lo, hi); r.r and r.z there into part."""
    cdef Py_ssize_t c
    cdef double alpha = s.alpha, a = 0.0, b = 0.0
    cdef double* x = s.x
    cdef double* r = s.r
    cdef double* z = s.z
    cdef const double* d = s.d
    cdef const double* hd = s.hd
    cdef const double* diag = s.diag
    if diag == NULL:
        for c in range(lo, hi):
            x[c] += alpha * d[c]
            r[c] -= alpha * hd[c]
            a += r[c] * r[c]
        b = a
    else:
        for c in range(lo, hi):
            x[c] += alpha * d[c]
            r[c] -= alpha * hd[c]
            z[c] = r[c] / diag[c]
            a += r[c] * r[c]
            b += r[c] * z[c]
    part[0] = a
    part[1] = b


cdef void _sums_block(CG* s, Py_ssize_t lo, Py_ssize_t hi, double* part) noexcept nogil:
    """r.r and r.z over [lo, hi) into part."""
    cdef Py_ssize_t c
    cdef double a = 0.0, b = 0.0
    cdef const double* r = s.r
    cdef const double* z = s.z
    for c in range(lo, hi):
        a += r[c] * r[c]
        b += r[c] * z[c]
    part[0] = a
    part[1] = b


cdef void _direction_block(CG* s, Py_ssize_t lo, Py_ssize_t hi, double* part) noexcept nogil:
    """d = z + beta d over [lo, hi)."""
    cdef Py_ssize_t c
    cdef double beta = s.beta
    cdef double* d = s.d
    cdef const double* z = s.z
    for c in range(lo, hi):
        d[c] = z[c] + beta * d[c]


cdef void _add_parts(CG* s) noexcept nogil:
    """rr_next, rz_next: the identity block's part, then the blocks' in block order."""
    cdef Py_ssize_t cb, n_blocks = (s.n + s.block - 1) // s.block
    cdef double rr = 0.0
    if s.off != 0.0:
        rr = s.r_off * s.r_off * s.off
    s.rr_next = rr
    s.rz_next = rr
    for cb in range(n_blocks):
        s.rr_next += s.part[2 * cb]
        s.rz_next += s.part[2 * cb + 1]


cdef int cg_move(CG* s, double dhd, bint reduce) noexcept nogil:
    """After hd = H d and dhd = d.hd: BREAKDOWN when d^T H d <= 0, else the step along d
    (x, r and z; with reduce, the next r.r and r.z into rr_next, rz_next) and CG_CONTINUE.
    Without reduce the caller sets rr_next and rz_next (and, with an Operator's preconditioner,
    z) before cg_turn."""
    if s.off != 0.0:
        dhd = dhd + s.d_off * s.d_off * s.off
    if not dhd > 0.0:
        return Status.BREAKDOWN
    s.alpha = s.rz / dhd
    s.x_off += s.alpha * s.d_off
    s.r_off -= s.alpha * s.d_off
    _over_blocks(s, _move_block)
    if reduce:
        _add_parts(s)
    return CG_CONTINUE


cdef void cg_turn(CG* s) noexcept nogil:
    """The iteration counted and, unless the new residual meets the stopping rule, the next
    direction d = z + beta d."""
    s.iterations += 1
    s.rr = s.rr_next
    if s.rr <= s.bound:
        return
    s.beta = s.rz_next / s.rz
    s.rz = s.rz_next
    s.d_off = s.r_off + s.beta * s.d_off
    _over_blocks(s, _direction_block)


cdef int cg_solve(CG* s, Operator op, double rtol, int max_iter, const int[::1] stop) noexcept nogil:
    """CG on op's H from the right-hand side in s.r, to the end: a Status. The stop flag is read
    at every iteration and Ctrl-C looked for every STOP_POLL_VALUES values of op's products."""
    cdef double rr, rz
    cdef int status
    cdef Py_ssize_t polled = 0
    cdef bint own = op.preconditions
    if own:
        op.precondition(s.r, s.z)
    cg_start_sums(s, &rr, &rz)
    cg_begin(s, rr, rz, rtol, max_iter)
    while True:
        status = cg_check(s)
        if status != CG_CONTINUE:
            return status
        if stop_flag_set(stop):
            return Status.INTERRUPTED
        if op.poll_values > 0:
            polled += op.poll_values
            if polled >= STOP_POLL_VALUES:
                polled = 0
                if stop_requested(stop):
                    return Status.INTERRUPTED
        status = cg_move(s, op.apply(s.d, s.hd), not own)
        if status != CG_CONTINUE:
            return status
        if own:
            op.precondition(s.r, s.z)
            _over_blocks(s, _sums_block)
            _add_parts(s)
        cg_turn(s)


cdef double _dot(const double* a, const double* b, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef double s = 0.0
    for i in range(n):
        s += a[i] * b[i]
    return s


cdef class DenseOperator(Operator):
    """H a dense symmetric matrix (C order), preconditioned by a dense M^-1 when given: a nogil
    operator for small systems and for the tests of cg_solve."""
    cdef const double[:, ::1] H
    cdef const double[:, ::1] inverse

    def __init__(self, H, inverse_preconditioner=None):
        self.H = np.ascontiguousarray(H, dtype=np.float64)
        if self.H.shape[0] != self.H.shape[1]:
            raise ValueError("DenseOperator: H must be square")
        self.preconditions = inverse_preconditioner is not None
        if self.preconditions:
            self.inverse = np.ascontiguousarray(inverse_preconditioner, dtype=np.float64)
            if self.inverse.shape[0] != self.H.shape[0] or self.inverse.shape[1] != self.H.shape[0]:
                raise ValueError("DenseOperator: the preconditioner's shape differs from H's")
        self.order = self.H.shape[0]
        self.poll_values = self.order * self.order

    cdef double apply(self, const double* d, double* out) noexcept nogil:
        """out_i = sum_j H_ij d_j, each in order; returns d.out in order."""
        cdef Py_ssize_t i, n = self.H.shape[0]
        for i in range(n):
            out[i] = _dot(&self.H[i, 0], d, n)
        return _dot(d, out, n)

    cdef void precondition(self, const double* r, double* z) noexcept nogil:
        cdef Py_ssize_t i, n = self.H.shape[0]
        for i in range(n):
            z[i] = _dot(&self.inverse[i, 0], r, n)


def conjugate_gradient(operator, rhs, double rtol, int max_iter, stop=None, *, diag=None, dot=None,
                       Py_ssize_t block=4096, int threads=1):
    """(x, iterations, status): CG on H x = rhs from x = 0 to |r| <= rtol |rhs|, status a Status
    (CONVERGED, MAX_ITER, BREAKDOWN or INTERRUPTED, the stop flag -- an int32[1] -- set).

    operator: an Operator (driven without the GIL), or a callable returning H v for a vector v
    (driven from Python; dot(a, b), when given, sums its vector products in place of the state's
    blocks). diag: a diagonal preconditioner M (positive). block, threads: the sums' blocks and
    the threads sharing them."""
    b = np.ascontiguousarray(rhs, dtype=np.float64)
    cdef Py_ssize_t n = b.shape[0]
    cdef bint native = isinstance(operator, Operator)
    if not native and not callable(operator):
        raise TypeError("conjugate_gradient: operator must be an Operator or a callable")
    if native and (<Operator>operator).preconditions and diag is not None:
        raise ValueError("conjugate_gradient: the operator preconditions itself; diag must be None")
    if native and (<Operator>operator).order != n:
        raise ValueError("conjugate_gradient: rhs's length differs from the operator's order")
    cdef const int[::1] flag = np.zeros(1, dtype=np.int32) if stop is None else stop
    x_ = np.zeros(n)
    r_ = b.copy()
    d_ = np.zeros(n)
    hd_ = np.zeros(n)
    preconditioned = diag is not None or (native and (<Operator>operator).preconditions)
    z_ = np.zeros(n) if preconditioned else r_
    part_ = np.zeros(cg_parts(n, max(block, 1)))
    cdef double[::1] x = x_, r = r_, z = z_, d = d_, hd = hd_, part = part_
    cdef const double[::1] m
    cdef CG s
    cdef int status
    cdef double rr, rz
    if n == 0:
        return x_, 0, StatusCode.CONVERGED
    cg_init(&s, n, &x[0], &r[0], &z[0], &d[0], &hd[0], &part[0], block, threads)
    if diag is not None:
        m = np.ascontiguousarray(diag, dtype=np.float64)
        if m.shape[0] != n:
            raise ValueError("conjugate_gradient: diag's length differs from rhs's")
        s.diag = &m[0]
    if native:
        with nogil:
            status = cg_solve(&s, <Operator>operator, rtol, max_iter, flag)
        return x_, s.iterations, StatusCode(status)
    cg_start_sums(&s, &rr, &rz)
    if dot is not None:
        rr = dot(r_, r_)
        rz = dot(r_, z_) if preconditioned else rr
    cg_begin(&s, rr, rz, rtol, max_iter)
    while True:
        status = cg_check(&s)
        if status != CG_CONTINUE:
            break
        if stop_flag_set(flag):
            status = Status.INTERRUPTED
            break
        hd_[:] = operator(d_)
        status = cg_move(&s, _dot(&d[0], &hd[0], n) if dot is None else dot(d_, hd_), dot is None)
        if status != CG_CONTINUE:
            break
        if dot is not None:
            s.rr_next = dot(r_, r_)
            s.rz_next = dot(r_, z_) if preconditioned else s.rr_next
        cg_turn(&s)
    return x_, s.iterations, StatusCode(status)
