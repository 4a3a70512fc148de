"""Euclidean projection onto K = {x : a^T x = d, l <= x <= u} by break-point search, and the
HS-Jacobian of that projection (docs/algorithms.md §1; Niu et al. 2019 §3.2).

x(lam) = clip(v - lam a, l, u) and g(lam) = a^T x(lam) - d is continuous, non-increasing and
piecewise linear with break points (v_i - u_i)/a_i and (v_i - l_i)/a_i. The root is bracketed by
medians of the break points still inside the bracket (three-way quickselect, deterministic pivots
with a median-of-medians fallback, so O(m) even on adversarial input), then read off the linear
piece. A hint (the previous multiplier, or else the median break point of a small sample) comes
first: Newton steps on g from it, each verified by the branch-free pass writing x, end at the root
as soon as one starts on the root's linear piece (two passes over the data when consecutive
projections are close, a few more when the hint is off by many break points, where one
classifying pass would cost as much as several of these). Only after NEWTON_PASSES does the
break-point search take over, on the bracket found; there regula falsi pivots evaluated on the
undecided coordinates only shrink the bracket before the median pivots must.
"""
from cython.parallel cimport prange
from libc.math cimport INFINITY, NAN, fabs, fmax, fmin, isnan
from libc.string cimport memmove
import numpy as np

from ..errors import FastSVMError

cdef int HINT_EVALUATIONS = 5
cdef int NEWTON_PASSES = 6         # safeguarded Newton steps before the classifying pass
cdef int SAMPLE_SIZE = 64
cdef double NEWTON_ACCEPT = 1e-13  # |g| / sum |a_i x_i| at which a Newton step from the hint is the root

cdef double MARGIN = 0.01          # regula falsi margin, relative to the bracket width

cdef enum:
    PIVOT_SECANT = 0
    PIVOT_MEDIAN = 1
cdef Py_ssize_t SMALL_SELECT = 16
cdef int PARALLEL_M = 32768        # fewer coordinates: the passes over them run on one thread
cdef enum:
    MAX_BLOCKS = 64               # blocks of coordinates of the passes (each of >= PARALLEL_M / 2)


# ---------------------------------------------------------------------------------------------
# selection

cdef inline void _swap(double* arr, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    cdef double t = arr[i]
    arr[i] = arr[j]
    arr[j] = t


cdef inline void _insertion_sort(double* arr, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef double t
    for i in range(lo + 1, hi):
        t = arr[i]
        j = i - 1
        while j >= lo and arr[j] > t:
            arr[j + 1] = arr[j]
            j -= 1
        arr[j + 1] = t


cdef inline double _median3(double a, double b, double c) noexcept nogil:
    if a < b:
        if b < c:
            return b
        return c if a < c else a
    if a < c:
        return a
    return c if b < c else b


cdef double _median_of_medians(double* arr, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """A pivot guaranteed to have >= 30% of arr[lo:hi] on each side: medians of groups of five,
    gathered at the front, then their median by select_kth (recursion on n/5 elements)."""
    cdef Py_ssize_t start, end, n_groups = 0
    for start in range(lo, hi, 5):
        end = min(start + 5, hi)
        _insertion_sort(arr, start, end)
        _swap(arr, lo + n_groups, start + (end - start - 1) // 2)
        n_groups += 1
    return select_kth(arr + lo, n_groups, (n_groups - 1) // 2)


cdef double select_kth(double* arr, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """The k-th smallest of arr[0:n] (0-based); arr is reordered. Three-way partitions make runs
    of equal values cost two passes; median-of-three pivots switch to median-of-medians once the
    partition count exceeds 2 log2(n), bounding the worst case at O(n) without randomness."""
    cdef Py_ssize_t lo = 0, hi = n, lt, gt, i
    cdef int budget = 4
    cdef Py_ssize_t size = n
    cdef double pivot, t
    while size > 1:
        budget += 2
        size >>= 1
    while hi - lo > SMALL_SELECT:
        if budget > 0:
            budget -= 1
            pivot = _median3(arr[lo], arr[lo + (hi - lo) // 2], arr[hi - 1])
        else:
            pivot = _median_of_medians(arr, lo, hi)
        # three-way by two branch-free passes (a compare per element, no mispredicted jump on
        # random data): < pivot to the front, then, if k lies beyond them, == pivot next
        lt = lo
        for i in range(lo, hi):
            t = arr[i]
            arr[i] = arr[lt]
            arr[lt] = t
            lt += t < pivot
        gt = lt
        if k >= lt:
            for i in range(lt, hi):
                t = arr[i]
                arr[i] = arr[gt]
                arr[gt] = t
                gt += t <= pivot
        if k < lt:
            hi = lt
        elif k >= gt:
            lo = gt
        else:
            return pivot
    _insertion_sort(arr, lo, hi)
    return arr[k]


# ---------------------------------------------------------------------------------------------
# projection

cdef inline void _breaks(Knapsack K, const double* v, int i, double* lo, double* hi) noexcept nogil:
    """The two break points of coordinate i (a_i != 0): x_i is at one bound for lam <= lo, at
    the other for lam >= hi, and v_i - lam a_i in between."""
    cdef double ai = K.a[i], p, q
    if K.unit:
        p = ai * (v[i] - K.upper[i])
        q = ai * (v[i] - K.lower[i])
    else:
        p = (v[i] - K.upper[i]) / ai
        q = (v[i] - K.lower[i]) / ai
    lo[0] = p if p < q else q
    hi[0] = q if p < q else p


cdef inline double _left_value(Knapsack K, int i) noexcept nogil:
    """x_i for lam below both break points."""
    return K.upper[i] if K.a[i] > 0 else K.lower[i]


cdef inline double _right_value(Knapsack K, int i) noexcept nogil:
    """x_i for lam above both break points."""
    return K.lower[i] if K.a[i] > 0 else K.upper[i]


cdef inline double _fixed_value(Knapsack K, int i, bint right) noexcept nogil:
    """x_i on the right (lam >= both break points) or left side, as a select: the lower bound
    when a_i > 0 on the right or a_i < 0 on the left."""
    return K.lower[i] if (K.a[i] > 0) == right else K.upper[i]


cdef inline double _clip(double t, double lo, double hi) noexcept nogil:
    """Written as two selects, which compile to maxsd/minsd (fmin/fmax would be libm calls)."""
    t = lo if t < lo else t
    return hi if t > hi else t


cdef struct _Sums:
    double fixed         # sum of a_i x_i over coordinates at a bound across the bracket, minus d
    double free_const    # sum of a_i v_i over coordinates free across the bracket
    double free_slope    # sum of a_i^2 over the same


cdef inline bint _undecided(Knapsack K, const double* v, int i, double lam_l, double lam_r,
                            _Sums* acc) noexcept nogil:
    """Add coordinate i to the sums when its state is the same for every lam in the bracket;
    True when a break point lies strictly inside (it stays on the work list)."""
    cdef double lo, hi, ai = K.a[i]
    _breaks(K, v, i, &lo, &hi)
    if hi > lam_l and lo < lam_r:        # rare once the bracket is narrow
        if lo <= lam_l and hi >= lam_r:
            acc.free_const += ai * v[i]
            acc.free_slope += ai * ai
            return False
        return True
    acc.fixed += ai * _fixed_value(K, i, hi <= lam_l)
    return False


cdef inline void _update_bracket(double t, double g, double* lam_l, double* g_l, double* lam_r,
                                 double* g_r) noexcept nogil:
    """Narrow [lam_l, lam_r] with the value g = g(t) (g is non-increasing; t inside the bracket)."""
    if g > 0.0:
        if t > lam_l[0]:
            lam_l[0] = t
            g_l[0] = g
    elif g < 0.0:
        if t < lam_r[0]:
            lam_r[0] = t
            g_r[0] = g
    else:
        lam_l[0] = lam_r[0] = t
        g_l[0] = g_r[0] = 0.0


cdef void _pass_span(Knapsack K, const double* v, double lam, double* x, int* free_idx, int lo, int hi,
                     int* n_free, double* sums) noexcept nogil:
    """One pass of _output over the coordinates [lo, hi), x and their free list (from free_idx,
    counted in n_free) written unless x is NULL; sums = (g + d, slope, scale - |d|) over them."""
    cdef int i, nw = 0
    cdef double g = 0.0, s = 0.0, scale = 0.0, ai, t, c
    cdef bint inside
    for i in range(lo, hi):
        ai = K.a[i]
        t = v[i] - lam * ai
        c = _clip(t, K.lower[i], K.upper[i])
        inside = (t > K.lower[i]) & (t < K.upper[i])
        if x != NULL:
            x[i] = c
            free_idx[nw] = i                           # branch-free append
            nw += inside
        s += (ai * ai) * inside
        g += ai * c
        scale += fabs(ai * c)
    if x != NULL:
        n_free[0] = nw
    sums[0] = g
    sums[1] = s
    sums[2] = scale


cdef double _output(Knapsack K, const double* v, double lam, double* x, int* free_idx, int* n_free,
                    double* slope, double* mag) noexcept nogil:
    """x = x(lam) and its free set (not written when x is NULL); returns g(lam), with the slope of
    g there (sum of a_i^2 over coordinates strictly between their bounds) and the scale
    |d| + sum |a_i x_i| of the rounding in g. The coordinates are taken in _blocks(K) fixed
    blocks (shared by the threads), each listing its free ones in its part of free_idx; the
    lists are then moved together and the sums added in block order: the same bits for any
    thread count."""
    cdef int n = _blocks(K), th, lo, block = (K.m + n - 1) // n, nw = 0
    cdef int counts[MAX_BLOCKS]
    cdef double sums[3 * MAX_BLOCKS]
    cdef double g = -K.d, s = 0.0, scale = fabs(K.d)
    if n == 1:
        _pass_span(K, v, lam, x, free_idx, 0, K.m, counts, sums)
    else:
        for th in prange(n, num_threads=min(K.n_threads, n), schedule="static"):
            lo = th * block
            _pass_span(K, v, lam, x, NULL if x == NULL else free_idx + lo, lo, min(lo + block, K.m), counts + th,
                       sums + 3 * th)
    for th in range(n):
        if x != NULL:
            if th > 0:
                memmove(free_idx + nw, free_idx + th * block, counts[th] * sizeof(int))
            nw += counts[th]
        g += sums[3 * th]
        s += sums[3 * th + 1]
        scale += sums[3 * th + 2]
    if x != NULL:
        n_free[0] = nw
    slope[0] = s
    mag[0] = scale
    return g


cdef inline double _g_and_slope(Knapsack K, const double* v, double lam, double* slope) noexcept nogil:
    """g(lam) and the magnitude of its slope there: _output without writing x."""
    cdef double mag
    return _output(K, v, lam, NULL, NULL, NULL, slope, &mag)


cdef inline int _blocks(Knapsack K) noexcept nogil:
    # the blocks of the passes over all coordinates, by their number alone (never by the thread
    # count, so the sums keep their bits): one below PARALLEL_M coordinates
    return 1 if K.m < PARALLEL_M else min(K.m // (PARALLEL_M // 2), MAX_BLOCKS)


cdef double _sample_median(Knapsack K, const double* v, double* breaks) noexcept nogil:
    """Median of the finite break points of at most SAMPLE_SIZE evenly spaced coordinates: a
    starting point for the bracketing when no hint is given (NaN when there is none)."""
    cdef int i = 0, nb = 0, stride = K.m // SAMPLE_SIZE + 1
    cdef double lo, hi
    while i < K.m:
        if K.a[i] != 0.0:
            _breaks(K, v, i, &lo, &hi)
            if lo - lo == 0.0:
                breaks[nb] = lo
                nb += 1
            if hi - hi == 0.0:
                breaks[nb] = hi
                nb += 1
        i += stride
    if nb == 0:
        return NAN
    return select_kth(breaks, nb, nb // 2)


cdef int knapsack_check(Knapsack K) noexcept nogil:
    """KNAPSACK_BAD_BOUNDS if some l_i > u_i (or a bound or a_i is NaN); KNAPSACK_INFEASIBLE if d
    lies outside [min, max] of a^T x over the box (with a relative rounding allowance)."""
    cdef int i
    cdef double lo_sum = 0.0, hi_sum = 0.0, scale = fabs(K.d), ai, s, t
    for i in range(K.m):
        ai = K.a[i]
        if isnan(ai) or isnan(K.lower[i]) or isnan(K.upper[i]) or K.lower[i] > K.upper[i]:
            return KNAPSACK_BAD_BOUNDS
        if ai == 0.0:
            continue
        s = ai * _right_value(K, i)       # the smaller of a_i l_i, a_i u_i
        t = ai * _left_value(K, i)
        lo_sum += s
        hi_sum += t
        scale += fabs(s) if fabs(s) < INFINITY else 0.0
        scale += fabs(t) if fabs(t) < INFINITY else 0.0
    if K.d < lo_sum - 1e-12 * scale or K.d > hi_sum + 1e-12 * scale:
        return KNAPSACK_INFEASIBLE
    return KNAPSACK_OK


cdef int _classify(Knapsack K, const double* v, double lam_l, double lam_r, _Sums* acc,
                   int* work) noexcept nogil:
    """One pass: coordinates whose state is the same across [lam_l, lam_r] go into the sums, the
    others (a break point strictly inside) into the work list. Returns its length, -1 on NaN."""
    cdef int i, nw = 0
    acc.fixed = -K.d
    acc.free_const = 0.0
    acc.free_slope = 0.0
    for i in range(K.m):
        if v[i] - v[i] != 0.0:
            return -1
        if K.a[i] != 0.0:
            work[nw] = i
            nw += _undecided(K, v, i, lam_l, lam_r, acc)
    return nw


cdef int _refilter(Knapsack K, const double* v, int* work, int nw, double lam_l, double lam_r,
                   _Sums* acc) noexcept nogil:
    """Move the work-list coordinates whose state is now fixed across the bracket into the sums."""
    cdef int it, i, kept = 0
    for it in range(nw):
        i = work[it]
        work[kept] = i
        kept += _undecided(K, v, i, lam_l, lam_r, acc)
    return kept


cdef int _finish(Knapsack K, const double* v, int nw, _Sums* acc, double lam_l, double g_l,
                 double lam_r, double g_r, double* x, double* lam, int* free_idx, int* n_free,
                 KnapsackScratch S) noexcept nogil:
    """Steps 3-5 of knapsack_project: from a bracket whose undecided coordinates are on the work
    list (S.work[:nw]) and the others in the sums, the root, x and the free set."""
    cdef int i, it, nb, pivot = PIVOT_SECANT
    cdef double t, t_lo, t_hi, g, g_hi, margin = MARGIN, lo, hi, ai, root, flat_l, flat_r, slope
    cdef double mag = fabs(K.d)
    cdef bint captured
    cdef double* breaks = S.breaks
    cdef int* work = S.work

    # 3. shrink the bracket until no break point is left inside. A round evaluates g on the
    #    work list only (the sums carry the rest) at two pivots in one pass: either the regula
    #    falsi point +- a margin (no selection; the margin shrinks while the root keeps falling
    #    between the two), or, when that did not halve the work list, the median break point,
    #    which always halves the break points inside. So every other round at least halves them.
    while nw > 0:
        if pivot == PIVOT_SECANT and lam_l > -INFINITY and lam_r < INFINITY:
            t = lam_l + (lam_r - lam_l) * (g_l / (g_l - g_r))
            margin *= lam_r - lam_l
            t_lo = fmax(t - margin, lam_l)
            t_hi = fmin(t + margin, lam_r)
        else:
            pivot = PIVOT_MEDIAN
            nb = 0
            for it in range(nw):
                _breaks(K, v, work[it], &lo, &hi)
                if lam_l < lo < lam_r:
                    breaks[nb] = lo
                    nb += 1
                if lam_l < hi < lam_r:
                    breaks[nb] = hi
                    nb += 1
            t_lo = t_hi = select_kth(breaks, nb, nb // 2)
        g = acc.fixed + acc.free_const - t_lo * acc.free_slope
        g_hi = acc.fixed + acc.free_const - t_hi * acc.free_slope
        for it in range(nw):
            i = work[it]
            ai = K.a[i]
            g += ai * _clip(v[i] - t_lo * ai, K.lower[i], K.upper[i])
            g_hi += ai * _clip(v[i] - t_hi * ai, K.lower[i], K.upper[i])
        _update_bracket(t_hi, g_hi, &lam_l, &g_l, &lam_r, &g_r)
        _update_bracket(t_lo, g, &lam_l, &g_l, &lam_r, &g_r)
        captured = lam_l == t_lo and lam_r == t_hi
        nb = nw
        nw = _refilter(K, v, work, nw, lam_l, lam_r, acc)
        if pivot == PIVOT_SECANT and 2 * nw > nb:
            pivot = PIVOT_MEDIAN
        else:
            pivot = PIVOT_SECANT
        margin = MARGIN if captured else fmin(10.0 * MARGIN, 0.25)

    # 4. the root on the remaining linear piece
    g = acc.fixed + acc.free_const
    if acc.free_slope > 0.0:
        root = _clip(g / acc.free_slope, lam_l, lam_r)
    else:
        # g is flat here: zero if K is feasible; take the midpoint of the whole flat piece
        flat_l = -INFINITY
        flat_r = INFINITY
        for i in range(K.m):
            ai = K.a[i]
            if ai == 0.0:
                continue
            _breaks(K, v, i, &lo, &hi)
            if hi <= lam_l:
                mag += fabs(ai * _right_value(K, i))
                if hi > flat_l:
                    flat_l = hi
            else:
                mag += fabs(ai * _left_value(K, i))
                if lo < flat_r:
                    flat_r = lo
        if fabs(g) > 1e-9 * (1.0 + mag):
            return KNAPSACK_INFEASIBLE
        if flat_l > -INFINITY and flat_r < INFINITY:
            root = 0.5 * (flat_l + flat_r)
        elif flat_l > -INFINITY:
            root = flat_l
        elif flat_r < INFINITY:
            root = flat_r
        else:
            root = 0.0
    lam[0] = root

    # 5. x and the free set
    _output(K, v, root, x, free_idx, n_free, &slope, &mag)
    return KNAPSACK_OK


cdef int knapsack_project(Knapsack K, const double* v, double lam_hint, double* x, double* lam,
                          int* free_idx, int* n_free, KnapsackScratch S) noexcept nogil:
    """x = Pi_K(v), the multiplier lam (x = clip(v - lam a, l, u)) and the free set
    J = {i : l_i < v_i - lam a_i < u_i} in increasing order. K must have passed knapsack_check.
    When g is flat at its root (no coordinate free) lam is the midpoint of the flat piece, so the
    result does not depend on the hint."""
    cdef int nw, side = 0
    cdef double lam_l = -INFINITY, lam_r = INFINITY, g_l = NAN, g_r = NAN
    cdef double t, g, slope, step, r, mag = fabs(K.d)
    cdef _Sums acc

    # 1. from a hint (or the median break point of a sample), safeguarded Newton steps on g,
    #    each verified by the pass that writes x: a step from a point on the root's linear piece
    #    is exact, and from a close hint few pieces lie in between. A step leaving the bracket
    #    is replaced by regula falsi (Illinois: the end kept twice has its value halved). These
    #    passes are branch-free; the classifying pass of step 2 costs several of them, so it
    #    only comes after NEWTON_PASSES, on the bracket found (closed by doubled steps if need be).
    t = lam_hint if not isnan(lam_hint) else _sample_median(K, v, S.breaks)
    if not isnan(t):
        g = _g_and_slope(K, v, t, &slope)
        if g - g != 0.0:
            return KNAPSACK_BAD_BOUNDS
        _update_bracket(t, g, &lam_l, &g_l, &lam_r, &g_r)
        for _ in range(NEWTON_PASSES):
            if g == 0.0 or slope == 0.0:
                break
            r = t + g / slope
            if lam_l > -INFINITY and lam_r < INFINITY and not (lam_l < r < lam_r):
                r = lam_l + (lam_r - lam_l) * (g_l / (g_l - g_r))
            g = _output(K, v, r, x, free_idx, n_free, &slope, &mag)
            if fabs(g) <= NEWTON_ACCEPT * mag and slope > 0.0:
                lam[0] = r
                return KNAPSACK_OK
            _update_bracket(r, g, &lam_l, &g_l, &lam_r, &g_r)
            if g > 0.0:
                if side > 0 and g_r < 0.0:
                    g_r *= 0.5
                side = 1
            elif g < 0.0:
                if side < 0 and g_l > 0.0:
                    g_l *= 0.5
                side = -1
            t = r
        step = 0.0
        for _ in range(HINT_EVALUATIONS):       # close an open bracket by doubled steps
            if g == 0.0 or slope == 0.0 or (lam_l > -INFINITY and lam_r < INFINITY):
                break
            step = fmax(2.0 * fabs(g) / slope, fmax(2.0 * step, 1e-12 * (1.0 + fabs(t))))
            t = t + step if g > 0.0 else t - step
            g = _g_and_slope(K, v, t, &slope)
            _update_bracket(t, g, &lam_l, &g_l, &lam_r, &g_r)

    # 2. one pass: coordinates whose state is the same across the bracket go into the sums,
    #    the others into the work list; 3-5: the root on the work list, x
    nw = _classify(K, v, lam_l, lam_r, &acc, S.work)
    if nw < 0:
        return KNAPSACK_BAD_BOUNDS
    return _finish(K, v, nw, &acc, lam_l, g_l, lam_r, g_r, x, lam, free_idx, n_free, S)


cdef void hs_jacobian_free(const double* a_free, int n_free, double* r) noexcept nogil:
    """r <- V_JJ r in place for a vector r on the free set J, V_JJ = I - a_J a_J^T / (a_J^T a_J)
    (the identity when a_J = 0). Off J the HS-Jacobian is zero."""
    cdef int j
    cdef double aa = 0.0, ar = 0.0
    for j in range(n_free):
        aa += a_free[j] * a_free[j]
        ar += a_free[j] * r[j]
    if aa == 0.0:
        return
    ar /= aa
    for j in range(n_free):
        r[j] -= ar * a_free[j]


# ---------------------------------------------------------------------------------------------
# Python entry points

def _raise_for(int status):
    if status == KNAPSACK_BAD_BOUNDS:
        raise FastSVMError("projection onto {a^T x = d, l <= x <= u}: a lower bound exceeds its upper bound, "
                           "or the input holds NaN/infinity")
    if status == KNAPSACK_INFEASIBLE:
        raise FastSVMError("projection onto {a^T x = d, l <= x <= u}: the set is empty "
                           "(a^T x cannot equal d within the bounds)")


cdef class KnapsackSet:
    """K = {x : a^T x = d, lower <= x <= upper}, checked on construction (FastSVMError when empty
    or malformed), projected onto repeatedly without allocation."""

    def __init__(self, a, double d, lower, upper, int n_threads=1):
        self.a, self.lower, self.upper = (np.ascontiguousarray(z, dtype=np.float64) for z in (a, lower, upper))
        cdef const double[::1] a_ = self.a
        cdef const double[::1] lower_ = self.lower
        cdef const double[::1] upper_ = self.upper
        cdef Py_ssize_t m = a_.shape[0]
        if self.a.ndim != 1 or lower_.shape[0] != m or upper_.shape[0] != m:
            raise FastSVMError(f"a, lower and upper must be vectors of one length "
                               f"({m}, {lower_.shape[0]}, {upper_.shape[0]})")
        if m == 0 or m >= 2 ** 30:
            raise FastSVMError(f"cannot project a vector of length {m}")
        self._breaks = np.empty(2 * m)
        self._work = np.empty(m, dtype=np.int32)
        self.K.a = &a_[0]
        self.K.lower = &lower_[0]
        self.K.upper = &upper_[0]
        self.K.d = d
        self.K.m = <int>m
        self.K.unit = bool(np.all(np.abs(self.a) == 1.0))
        self.K.n_threads = max(1, n_threads)
        self.S.breaks = &self._breaks[0]
        self.S.work = &self._work[0]
        cdef int status
        with nogil:
            status = knapsack_check(self.K)
        _raise_for(status)

    @property
    def m(self):
        return self.K.m

    @property
    def n_threads(self):
        return self.K.n_threads

    @property
    def d(self):
        return self.K.d

    def project(self, v, double lam_hint=NAN, double[::1] x=None, int[::1] free=None):
        """(x, lam, free): x = Pi_K(v) = clip(v - lam a, lower, upper) and the increasing int32
        indices with lower < v - lam a < upper. ``x`` and ``free`` may be given as output
        buffers of length m (then ``free`` is returned as a view of its first |J| entries)."""
        cdef const double[::1] v_ = np.ascontiguousarray(v, dtype=np.float64)
        if v_.shape[0] != self.K.m:
            raise FastSVMError(f"v has length {v_.shape[0]}, the constraint has {self.K.m}")
        if x is None:
            x = np.empty(self.K.m)
        if free is None:
            free = np.empty(self.K.m, dtype=np.int32)
        if x.shape[0] != self.K.m or free.shape[0] != self.K.m:
            raise FastSVMError("output buffers must have length m")
        cdef double lam = NAN
        cdef int n_free = 0, status
        with nogil:
            status = knapsack_project(self.K, &v_[0], lam_hint, &x[0], &lam, &free[0], &n_free, self.S)
        _raise_for(status)
        return np.asarray(x), lam, np.asarray(free)[:n_free]


def check_knapsack(a, double d, lower, upper):
    """Raise FastSVMError when K = {a^T x = d, lower <= x <= upper} is empty or malformed."""
    KnapsackSet(a, d, lower, upper)


def project(v, a, double d, lower, upper, *, double lam_hint=NAN, int n_threads=1):
    """Pi_K(v) for K = {x : a^T x = d, lower <= x <= upper}.

    Returns (x, lam, free) with x = clip(v - lam a, lower, upper) and free the increasing int32
    indices with lower < v - lam a < upper. Raises FastSVMError for an empty or malformed K.
    """
    x, lam, free = KnapsackSet(a, d, lower, upper, n_threads).project(v, lam_hint)
    return x, lam, free.copy()


def hs_jacobian_apply(a, free, r):
    """V r for the HS-Jacobian V = Diag(theta) - (theta a)(theta a)^T / (a_J^T a_J) of the
    projection whose free set is ``free`` (theta its indicator); V = 0 when free is empty."""
    cdef const double[::1] a_ = np.ascontiguousarray(a, dtype=np.float64)
    r = np.ascontiguousarray(r, dtype=np.float64)
    free = np.asarray(free, dtype=np.intp)
    out = np.zeros_like(r)
    cdef double[::1] a_free = np.ascontiguousarray(np.asarray(a_)[free])
    cdef double[::1] r_free = np.ascontiguousarray(r[free])
    cdef int n = <int>a_free.shape[0]
    if n > 0:
        with nogil:
            hs_jacobian_free(&a_free[0], n, &r_free[0])
    out[free] = r_free
    return out


def kth_smallest(values, Py_ssize_t k):
    """The k-th smallest value (0-based) by the solver's selection routine (for tests)."""
    cdef double[::1] arr = np.array(values, dtype=np.float64)
    if not 0 <= k < arr.shape[0]:
        raise FastSVMError(f"k = {k} out of range for {arr.shape[0]} values")
    cdef double out
    with nogil:
        out = select_kth(&arr[0], arr.shape[0], k)
    return out
