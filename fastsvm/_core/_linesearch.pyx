"""The line search of SSsNAL's Newton steps (docs/algorithms.md §2), O(m) and O(|J|) per trial:
the point and its knapsack projection at a step (line_point), which rows moved off the system's
prediction (off_system_moves) and the scalars of the search along d (search_scalars).
"""
from libc.math cimport NAN

from ._csr cimport indices_within
from ._knapsack cimport KNAPSACK_OK, KnapsackSet, knapsack_project

from ..errors import FastSVMError


cdef class LinePoint:
    """line_point's scalars: lam, the multiplier of x = Pi_K(pt); n_free, the size of x's free set;
    zdx = zd.dx; s = r.dx - |dx|^2 / 2; n_changed, the rows with dx != 0."""
    cdef readonly double lam, zdx, s
    cdef readonly int n_free, n_changed


cdef class SearchScalars:
    """The line search's constants over the free set J: dd = d.d, gd = g.d, aa = a_J.a_J and
    az = a_J.zd_J."""
    cdef readonly double dd, gd, aa, az


def line_point(KnapsackSet K, const double[::1] pt0, const double[::1] zd, double step,
               const double[::1] x0, *, double lam0, double lam_shift, double[::1] pt, double[::1] x,
               int[::1] free, int[::1] changed):
    """The point of the line search at step alpha (step = alpha sigma), in one O(m) pass after
    the projection: pt = pt0 - step zd, x = Pi_K(pt) (lam0 is the multiplier of x0 = Pi_K(pt0);
    lam0 + lam_shift, the hint, is exact while the free set stays). Returns a LinePoint
    (lam, n_free, zdx = zd.dx, s, n_changed) with dx = x - x0, r = pt0 - lam0 a - x0 (zero on the
    free set of x0) and s = r.dx - |dx|^2 / 2, from which

        psi(v + alpha d) - psi(v) = alpha g.d + alpha^2 |d|^2 / 2 - alpha zd.dx + s / sigma,
        d/dalpha psi(v + alpha d) = g.d + alpha |d|^2 - zd.dx.

    Every term is small where it should be: no difference of two large values of
    |pt|^2 - dist(pt, K)^2 (a^T dx = 0 removes lam0 a from pt0 - x0). The rows with dx != 0 are
    listed in ``changed``; their number is n_changed."""
    cdef int m = K.K.m, i, n_free = 0, n_changed = 0, status
    if not (pt0.shape[0] == zd.shape[0] == x0.shape[0] == pt.shape[0] == x.shape[0] == free.shape[0]
            == changed.shape[0] == m):
        raise FastSVMError("line_point: vectors must have length m")
    cdef double lam = NAN, zdx = 0.0, s = 0.0, dx
    with nogil:
        for i in range(m):
            pt[i] = pt0[i] - step * zd[i]
        status = knapsack_project(K.K, &pt[0], lam0 + lam_shift, &x[0], &lam, &free[0], &n_free, K.S)
        if status == KNAPSACK_OK:
            for i in range(m):
                dx = x[i] - x0[i]
                zdx += zd[i] * dx
                s += dx * (pt0[i] - lam0 * K.K.a[i] - x0[i] - 0.5 * dx)
                changed[n_changed] = i                      # branch-free append
                n_changed += dx != 0.0
    if status != KNAPSACK_OK:
        raise FloatingPointError("the line search produced a non-finite point")
    cdef LinePoint out = LinePoint.__new__(LinePoint)
    out.lam, out.n_free, out.zdx, out.s, out.n_changed = lam, n_free, zdx, s, n_changed
    return out


def off_system_moves(const int[::1] changed, const int[::1] J, const int[::1] free_old, const int[::1] free_new,
                     const double[::1] x_new, *, const double[::1] x_old, const double[::1] zd, const double[::1] a,
                     double step, double dlam, signed char[::1] mark, int[::1] rows, double[::1] coef):
    """The rows whose move the Newton system over J does not predict, and what they add:

        Z^T (x_new - x_old) = sum_{r in J} z_r delta_r + sum_j z_{rows[j]} coef[j],

    delta_r = -step zd_r - dlam a_r being the move of a row free before and after (x = pt - lam a,
    pt moved by -step zd; step = alpha sigma, dlam the change of lam). Returns how many rows
    are listed. The first sum is -step G d - dlam s from the system's G = Z_J^T Z_J and
    s = Z_J^T a_J, so only the listed rows are read: the changed rows outside J or not free
    before and after, and J's rows that did not move as predicted.

    ``changed``: the rows with x_new != x_old; ``mark``: m zero bytes (left zero)."""
    cdef Py_ssize_t m = x_new.shape[0], j, n = 0
    cdef int r
    cdef signed char f
    if not (x_old.shape[0] == zd.shape[0] == a.shape[0] == mark.shape[0] == rows.shape[0] == coef.shape[0] == m):
        raise FastSVMError("off_system_moves: vectors must have length m")
    if not (indices_within(changed, <int>m) and indices_within(J, <int>m) and indices_within(free_old, <int>m)
            and indices_within(free_new, <int>m)):
        raise FastSVMError("off_system_moves: row index out of range")
    with nogil:
        for j in range(free_old.shape[0]):
            mark[free_old[j]] |= 1
        for j in range(free_new.shape[0]):
            mark[free_new[j]] |= 2
        for j in range(J.shape[0]):
            mark[J[j]] |= 4
        for j in range(changed.shape[0]):   # bit 8: listed or seen
            r = changed[j]
            f = mark[r]
            if f & 8 == 0 and f & 7 != 7:
                rows[n] = r
                coef[n] = x_new[r] - x_old[r] + (step * zd[r] + dlam * a[r] if f & 4 else 0.0)
                n += 1
            mark[r] = f | 8
        for j in range(J.shape[0]):         # J's rows that did not move: the prediction undone
            r = J[j]
            f = mark[r]
            if f & 8 == 0 and f & 3 != 3:
                rows[n] = r
                coef[n] = step * zd[r] + dlam * a[r]
                n += 1
            mark[r] = f | 8
        for j in range(changed.shape[0]):
            mark[changed[j]] = 0
        for j in range(free_old.shape[0]):
            mark[free_old[j]] = 0
        for j in range(free_new.shape[0]):
            mark[free_new[j]] = 0
        for j in range(J.shape[0]):
            mark[J[j]] = 0
    return n


def search_scalars(const double[::1] d, const double[::1] g, const double[::1] zd,
                   const double[::1] a, const int[::1] free):
    """The line search's constants for the free set J, a SearchScalars."""
    if d.shape[0] != g.shape[0] or zd.shape[0] != a.shape[0]:
        raise FastSVMError("search_scalars: d, g and zd, a must match")
    cdef Py_ssize_t i, j, m = a.shape[0]
    cdef double dd = 0.0, gd = 0.0, aa = 0.0, az = 0.0
    for j in range(free.shape[0]):
        if not 0 <= free[j] < m:
            raise FastSVMError("search_scalars: free index out of range")
    with nogil:
        for i in range(d.shape[0]):
            dd += d[i] * d[i]
            gd += g[i] * d[i]
        for j in range(free.shape[0]):
            aa += a[free[j]] * a[free[j]]
            az += a[free[j]] * zd[free[j]]
    cdef SearchScalars out = SearchScalars.__new__(SearchScalars)
    out.dd, out.gd, out.aa, out.az = dd, gd, aa, az
    return out
