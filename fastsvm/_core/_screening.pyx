"""Screening without the GIL. SSsNAL's: the rows held at their bounds for the rest of an inner
solve (hold_rows) and, at its end, those of them that may have had to move (held_misses). SRBO's
along a nu path (srbo_screen) and the greedy mass moves it starts from (smallest_first)."""
from libc.math cimport ceil, fabs, floor, fmax, fmin, INFINITY, sqrt
from libc.stdlib cimport free, malloc, qsort
import numpy as np

from ._knapsack cimport Keyed, by_key, select_kth

from ..errors import FastSVMError


cdef class HeldRows:
    """hold_rows' split: n_rows and n_held, the rows in each part; held_nnz, the stored values of the
    held rows; held_ax = a_held . x_held."""
    cdef readonly Py_ssize_t n_rows, n_held
    cdef readonly double held_nnz, held_ax


def hold_rows(const double[::1] pt, double lam, const double[::1] pt0, double lam0, const double[::1] x,
              *, const double[::1] a, const double[::1] lower, const double[::1] upper, const int[::1] row_nnz,
              double factor, double quantile, int[::1] rows, int[::1] held):
    """Split the rows by how far z = pt - lam a lies beyond its bounds: held (increasing, into
    ``held``) when further than factor x the `quantile` of |z - z0| (z0 = pt0 - lam0 a; taken
    over a sample of at most 4096 rows), the others into ``rows``. Returns a HeldRows; n_held = 0
    when every z stayed put."""
    cdef Py_ssize_t m = pt.shape[0], i, stride, k = 0, n_rows = 0, n_held = 0
    if not (pt0.shape[0] == x.shape[0] == a.shape[0] == lower.shape[0] == upper.shape[0] == row_nnz.shape[0]
            == rows.shape[0] == held.shape[0] == m) or m == 0:
        raise FastSVMError("hold_rows: vectors must have one nonzero length")
    stride = (m + 4095) // 4096
    cdef double[::1] moves = np.empty((m + stride - 1) // stride)
    cdef double threshold, z, held_nnz = 0.0, held_ax = 0.0
    with nogil:
        i = 0
        while i < m:
            moves[k] = fabs((pt[i] - lam * a[i]) - (pt0[i] - lam0 * a[i]))
            k += 1
            i += stride
        threshold = factor * select_kth(&moves[0], k, min(<Py_ssize_t>(quantile * k), k - 1))
        if threshold > 0.0:
            for i in range(m):
                z = pt[i] - lam * a[i]
                if fmax(lower[i] - z, z - upper[i]) > threshold:
                    held[n_held] = <int>i
                    n_held += 1
                    held_nnz += row_nnz[i]
                    held_ax += a[i] * x[i]
                else:
                    rows[n_rows] = <int>i
                    n_rows += 1
    cdef HeldRows out = HeldRows.__new__(HeldRows)
    out.n_rows, out.n_held, out.held_nnz, out.held_ax = n_rows, n_held, held_nnz, held_ax
    return out


def held_misses(const int[::1] held, const double[::1] center, const double[::1] x, const double[::1] Zw,
                const double[::1] c, *, const double[::1] a, const double[::1] lower, const double[::1] upper,
                double sigma, double lam, const double[::1] norms, double slack, int[::1] out):
    """The held rows i not certainly beyond the bound x_i they are held at, into ``out``; their
    number is returned. z_i = center_i - sigma (Zw_i + c_i) - lam a_i must lie beyond it by more
    than slack norms_i."""
    cdef Py_ssize_t j, m = x.shape[0]
    cdef int i, misses = 0
    cdef double z
    if not (center.shape[0] == Zw.shape[0] == c.shape[0] == a.shape[0] == lower.shape[0] == upper.shape[0]
            == norms.shape[0] == m) or out.shape[0] < held.shape[0]:
        raise FastSVMError("held_misses: vectors must have one length")
    for j in range(held.shape[0]):
        if not 0 <= held[j] < m:
            raise FastSVMError("held_misses: row index out of range")
    with nogil:
        for j in range(held.shape[0]):
            i = held[j]
            z = center[i] - sigma * (Zw[i] + c[i]) - lam * a[i]
            out[misses] = i                                   # branch-free append
            if x[i] == lower[i]:
                misses += not lower[i] - z > slack * norms[i]
            else:
                misses += not (x[i] == upper[i] and z - upper[i] > slack * norms[i])
    return misses


cdef double kth_largest(double* values, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """The k-th largest of values[0:n] (reordered); +inf for k <= 0 (no constraint), -inf past n."""
    if k <= 0:
        return INFINITY
    if k > n:
        return -INFINITY
    return select_kth(values, n, n - k)


def srbo_screen(const double[::1] G0, const double[::1] Qdelta, const double[::1] delta, const double[::1] alpha0,
                const double[::1] sqnorm, *, Py_ssize_t k, unsigned char[::1] zero, unsigned char[::1] one):
    """SRBO's screen in one pass without the GIL (fastsvm.problems.nu_screening states it): the
    radius r_safe = G0.delta + delta.Qdelta / 4 + a0's Frank-Wolfe gap (mass 1 on the floor(m)
    smallest G0, the rest on the next, m = e^T a0), the interval ends z_i.c -+ sqrt(r) |z_i| with
    z_i.c = G0_i + Qdelta_i / 2, rho_up / rho_low the k-th largest of the upper / lower ends, and
    zero_i = L_i > rho_up, one_i = U_i < rho_low. Returns (r_safe, screened to 0, screened to 1)."""
    cdef Py_ssize_t l = G0.shape[0], i, whole, below = 0, n_zero = 0, n_one = 0
    if not (Qdelta.shape[0] == delta.shape[0] == alpha0.shape[0] == sqnorm.shape[0] == zero.shape[0]
            == one.shape[0] == l) or l == 0:
        raise FastSVMError("srbo_screen: vectors must have one nonzero length")
    cdef double* ends = <double*>malloc(3 * l * sizeof(double))
    if ends == NULL:
        raise MemoryError("srbo_screen: no memory for the interval ends")
    cdef double* lower = ends
    cdef double* upper = ends + l
    cdef double* scratch = ends + 2 * l
    cdef double r = 0.0, quad = 0.0, mass = 0.0, g_alpha = 0.0, best = 0.0, pivot = 0.0, radius, spread
    cdef double rho_up, rho_low
    with nogil:
        for i in range(l):
            r += G0[i] * delta[i]
            quad += delta[i] * Qdelta[i]
            mass += alpha0[i]
            g_alpha += G0[i] * alpha0[i]
            scratch[i] = G0[i]
        whole = min(<Py_ssize_t>floor(mass), l)
        if whole < l:      # the smallest `whole` G0 summed around their order statistic (ties counted once)
            pivot = select_kth(scratch, l, whole)
            for i in range(l):
                if G0[i] < pivot:
                    best += G0[i]
                    below += 1
            best += (whole - below) * pivot + (mass - whole) * pivot
        else:
            for i in range(l):
                best += G0[i]
        r = fmax(r + 0.25 * quad + fmax(g_alpha - best, 0.0), 0.0)
        radius = sqrt(r)
        for i in range(l):
            spread = radius * sqrt(fmax(sqnorm[i], 0.0))
            lower[i] = (G0[i] + 0.5 * Qdelta[i]) - spread
            upper[i] = (G0[i] + 0.5 * Qdelta[i]) + spread
            scratch[i] = upper[i]
        rho_up = kth_largest(scratch, l, k)
        for i in range(l):
            scratch[i] = lower[i]
        rho_low = kth_largest(scratch, l, k)
        for i in range(l):
            zero[i] = lower[i] > rho_up
            one[i] = upper[i] < rho_low
            n_zero += zero[i]
            n_one += one[i]
    free(ends)
    return r, n_zero, n_one


def smallest_first(const double[::1] key, const double[::1] have, double mass, double[::1] out):
    """out_i = min(have_i, max(mass - sum of have before i, 0)) in the order of ascending key (ties
    by row) over the rows with have_i > 0, 0 elsewhere: mass given out on the smallest keys first
    (SRBO's greedy delta; a nu path's mass moved). Only rows with key at or below a selected
    threshold are sorted when their have holds the mass (a warm nu moves little). Returns the
    mass given."""
    cdef Py_ssize_t l = key.shape[0], i, n = 0, m = 0, few
    if not (have.shape[0] == out.shape[0] == l):
        raise FastSVMError("smallest_first: key, have and out must have one length")
    cdef Keyed* rows = <Keyed*>malloc(max(l, 1) * sizeof(Keyed))
    cdef double* keys = <double*>malloc(max(l, 1) * sizeof(double))
    if rows == NULL or keys == NULL:
        free(rows)
        free(keys)
        raise MemoryError("smallest_first: no memory for the ranking")
    cdef double top = 0.0, held = 0.0, given = 0.0, total = 0.0, threshold
    with nogil:
        for i in range(l):
            out[i] = 0.0
            if have[i] > 0.0:
                keys[n] = key[i]
                rows[n].key, rows[n].row = key[i], i
                n += 1
                top = fmax(top, have[i])
        m = n
        few = <Py_ssize_t>fmin(4.0 * ceil(mass / fmax(top, 1e-300)) + 64.0, <double>n)
        if few < n:                   # the rows at or below the few-th smallest key, if they hold the mass
            threshold = select_kth(keys, n, few)
            m = 0
            for i in range(n):
                if rows[i].key <= threshold:
                    rows[m] = rows[i]
                    held += have[rows[i].row]
                    m += 1
            if not held >= mass:      # back to every row with room
                m = 0
                for i in range(l):
                    if have[i] > 0.0:
                        rows[m].key, rows[m].row = key[i], i
                        m += 1
        qsort(rows, m, sizeof(Keyed), by_key)
        for i in range(m):
            total += have[rows[i].row]
            out[rows[i].row] = fmin(have[rows[i].row], fmax(mass - (total - have[rows[i].row]), 0.0))
            given += out[rows[i].row]
    free(rows)
    free(keys)
    return given
