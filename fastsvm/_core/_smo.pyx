"""SMO for LIBSVM's dual problems (Fan, Chen & Lin, JMLR 2005), without the GIL.

    min_a  1/2 a^T Q a + p^T a   s.t.  y^T a = delta,  0 <= a_i <= C_i          (y_i = +1 / -1)

and, for the nu-formulations, also e^T a = const: then both variables of a step share one sign
(the two equality constraints of Solver_NU). Each step picks the maximal violating i and, by the
second-order rule, the j that decreases the objective most; solves the two-variable problem
exactly; and updates the gradient G = Q a + p on the active set. Shrinking moves variables that
are stuck at a bound to the back of the arrays; G_bar = sum_{a_j = C_j} C_j Q_j lets their
gradient be rebuilt when the active set is restored. Columns of Q come from a KernelCache; for
the regression duals (2n variables over n data rows) column i is sign_i sign_t K[index_i, index_t],
built from the cached kernel column of data row index_i.

The run is cut into chunks: ``run(limit)`` returns after iteration ``limit`` with the whole state
kept in the object, so chunking never changes the result.

The conjugate mode (``conjugate=True``, for warm starts: a cold solve keeps LIBSVM's steps) moves
along the pair's direction made Q-conjugate to the last step's (Conjugate SMO: Torres-Barran,
Alaiz & Dorronsoro, "Faster SVM training via conjugate SMO", arXiv:2003.08719), keeping Q d
beside G: one more pass over the active set per step, half to a sixth of the steps at large C.
"""
from cython.parallel cimport prange
from libc.math cimport isfinite, INFINITY
from libc.stdlib cimport calloc, malloc, free
cimport numpy as cnp
import numpy as np

from ._cache cimport KernelCache
from ._pair_step cimport pair_step
from ._kernel cimport gather_signed
from ._select cimport select_i, select_j
from ._status cimport CONVERGED, CHUNK_DONE, MAX_ITER, INTERRUPTED, NONFINITE, NO_MEMORY, poll_stop
from . import _status
from ..errors import FastSVMError

cnp.import_array()


cdef enum:
    AT_LOWER = 0
    AT_UPPER = 1
    FREE = 2
    # The per-step scans over the active set (selection, gradient update) are split among the
    # cache's threads from this many positions on (default of SMO.parallel_scan_min): below, a
    # parallel region costs more than it saves. Every position is computed alone and the parts are
    # combined in order, so the result does not depend on the thread count.
    PARALLEL_SCAN_MIN = 8192
    MAX_PARTS = 64
    # the conjugate mode restarts from a pair step when its direction would span more variables:
    # a larger cap keeps more of the cut in iterations, while the steps' cost grows with the
    # support (measured on warm C paths by tools/bench_path.py)
    SUPPORT_MAX = 32


cdef struct UpScan:
    # maximal -y_t G_t over I_up, per sign: the value and its (last) position, -1 if none
    double gp, gn
    int ip, in_


cdef struct LowScan:
    # max over I_low per sign of y_t G_t, and the second-order best partner of the violator
    double gp2, gn2, obj_min
    int best_j

cdef double TAU = 1e-12  # curvature used when a pair's quad_coef is not positive


cdef class SMO:
    """SMO(cache, p, y, alpha, C, eps, shrinking, nu, svr_rows, max_iter, stop, check_signals, order=None)

    p, alpha, C: float64 of length l; y: +1/-1 (int8) of length l; alpha must be feasible.
    svr_rows = n > 0 for the regression duals: l = 2n and the cache holds the n x n kernel
    (no signs); otherwise the cache holds Q itself over l positions. ``order`` (classification):
    the variable at each of the cache's positions when a previous solve left them permuted (None:
    variable i at position i); what SMO returns is always by variable.
    """

    cdef KernelCache cache
    cdef readonly int l
    cdef readonly int active_size
    cdef readonly long long n_iter
    cdef readonly long long max_iter
    cdef readonly double objective       # tracked step by step, for progress lines
    cdef readonly double gap             # maximal violation seen by the last selection
    cdef readonly int n_unshrink_warnings  # LIBSVM's "using -h 0 may be faster" moments
    cdef public int parallel_scan_min    # scans this long are split among the threads
    cdef int counter
    cdef bint nu, shrinking, unshrink, check_signals
    cdef long long signals_checked_ms   # when Ctrl-C was last polled (monotonic, ms)
    cdef double eps
    cdef int n_data                      # n for the regression duals, 0 otherwise
    cdef double* alpha
    cdef double* G
    cdef double* G_bar
    cdef double* p
    cdef double* C
    cdef double* QD
    cdef signed char* y
    cdef signed char* status
    cdef int* active_set
    cdef int* index                      # regression: position -> data row
    cdef signed char* qsign              # regression: position -> +1 (a) / -1 (a*)
    cdef float* buf0
    cdef float* buf1
    cdef int next_buf
    cdef int buf_var[2]                  # the variable whose column buf0 / buf1 holds, or -1
    cdef int buf_len[2]                  # ... on positions [0, buf_len)
    cdef const int[::1] stop
    # conjugate mode (warm starts): the last unclipped step's direction d, on positions of the
    # active set, with Q d and d^T Q d; its nonzero positions are support[:n_support]
    cdef bint conjugate, has_direction
    cdef double* d
    cdef double* Qd
    cdef double dQd
    cdef int* support
    cdef signed char* in_support
    cdef int n_support

    def __cinit__(self, KernelCache cache, p, y, alpha, C, *, double eps, bint shrinking, bint nu,
                  int svr_rows, long long max_iter, stop, bint check_signals, order=None,
                  bint conjugate=False):
        cdef int l = len(p)
        cdef int i, v
        cdef const double[::1] p_ = np.ascontiguousarray(p, dtype=np.float64)
        cdef const double[::1] a_ = np.ascontiguousarray(alpha, dtype=np.float64)
        cdef const double[::1] c_ = np.ascontiguousarray(C, dtype=np.float64)
        cdef const signed char[::1] y_ = np.ascontiguousarray(y, dtype=np.int8)
        cdef int m = max(l, 1)
        if a_.shape[0] != l or c_.shape[0] != l or y_.shape[0] != l:
            raise ValueError("p, y, alpha and C must have the same length")
        if (svr_rows > 0 and (l != 2 * svr_rows or cache.n != svr_rows)) or (svr_rows == 0 and cache.n != l):
            raise ValueError("kernel cache size does not match the problem")
        self.cache = cache
        self.l = l
        self.eps = eps
        self.shrinking = shrinking
        self.nu = nu
        self.n_data = svr_rows
        self.max_iter = max_iter
        self.check_signals = check_signals
        self.stop = stop
        self.alpha = <double*>malloc(m * sizeof(double))
        self.G = <double*>malloc(m * sizeof(double))
        self.G_bar = <double*>malloc(m * sizeof(double))
        self.p = <double*>malloc(m * sizeof(double))
        self.C = <double*>malloc(m * sizeof(double))
        self.QD = <double*>malloc(m * sizeof(double))
        self.y = <signed char*>malloc(m * sizeof(signed char))
        self.status = <signed char*>malloc(m * sizeof(signed char))
        self.active_set = <int*>malloc(m * sizeof(int))
        if svr_rows > 0:
            self.index = <int*>malloc(m * sizeof(int))
            self.qsign = <signed char*>malloc(m * sizeof(signed char))
            self.buf0 = <float*>malloc(m * sizeof(float))
            self.buf1 = <float*>malloc(m * sizeof(float))
        if (self.alpha == NULL or self.G == NULL or self.G_bar == NULL or self.p == NULL
                or self.C == NULL or self.QD == NULL or self.y == NULL or self.status == NULL
                or self.active_set == NULL or (svr_rows > 0 and (self.index == NULL or self.qsign == NULL
                                                                 or self.buf0 == NULL or self.buf1 == NULL))):
            raise MemoryError("cannot allocate the SMO state")
        self.conjugate = conjugate
        if conjugate:
            self.d = <double*>calloc(m, sizeof(double))
            self.Qd = <double*>malloc(m * sizeof(double))
            self.support = <int*>malloc(m * sizeof(int))
            self.in_support = <signed char*>calloc(m, sizeof(signed char))
            if self.d == NULL or self.Qd == NULL or self.support == NULL or self.in_support == NULL:
                raise MemoryError("cannot allocate the SMO state")
        cdef const int[::1] at = np.arange(l, dtype=np.int32) if order is None else \
            np.ascontiguousarray(order, dtype=np.int32)
        if at.shape[0] != l or (order is not None and (svr_rows > 0 or not np.array_equal(
                np.sort(order), np.arange(l)))):
            raise ValueError("order must be a permutation of the variables (classification only)")
        for i in range(l):
            v = at[i]
            if y_[v] != 1 and y_[v] != -1:
                raise ValueError("SMO signs y must be +1 or -1")
            self.alpha[i] = a_[v]
            self.p[i] = p_[v]
            self.C[i] = c_[v]
            self.y[i] = y_[v]
            self.active_set[i] = v
            self.update_status(i)
            if svr_rows > 0:
                self.index[i] = i % svr_rows
                self.qsign[i] = 1 if i < svr_rows else -1
                self.QD[i] = cache.diagonal(i % svr_rows)
            else:
                self.QD[i] = cache.diagonal(i)
        for i in range(l):
            if not isfinite(self.QD[i]):
                raise FastSVMError("kernel values are not finite (features or gamma far too large?)")
        self.active_size = l
        self.buf_var[0] = self.buf_var[1] = -1
        self.parallel_scan_min = PARALLEL_SCAN_MIN
        self.counter = min(l, 1000) + 1
        self.n_iter = 0
        self.unshrink = False
        self.gap = INFINITY
        self.objective = 0.0

    def __dealloc__(self):
        free(self.alpha)
        free(self.G)
        free(self.G_bar)
        free(self.p)
        free(self.C)
        free(self.QD)
        free(self.y)
        free(self.status)
        free(self.active_set)
        free(self.index)
        free(self.qsign)
        free(self.buf0)
        free(self.buf1)
        free(self.d)
        free(self.Qd)
        free(self.support)
        free(self.in_support)

    # ---- helpers ----

    cdef inline void update_status(self, int i) noexcept nogil:
        if self.alpha[i] >= self.C[i]:
            self.status[i] = AT_UPPER
        elif self.alpha[i] <= 0:
            self.status[i] = AT_LOWER
        else:
            self.status[i] = FREE

    cdef bint interrupted(self) noexcept nogil:
        return poll_stop(self.stop, self.check_signals, &self.signals_checked_ms)

    cdef float* get_q(self, int i, int length) noexcept nogil:
        """Column i of Q on positions [0, length)."""
        cdef float* col
        cdef float* buf
        cdef int parts, b, chunk, lo
        if self.n_data == 0:
            return self.cache.column(i, length)
        # two buffers: a step holds the columns of both of its variables at once; the column of
        # the variable a selection gathered is the step's first, and is not gathered again
        for b in range(2):
            if self.buf_var[b] == i and self.buf_len[b] >= length:
                self.next_buf = 1 - b
                return self.buf0 if b == 0 else self.buf1
        col = self.cache.column(self.index[i], self.n_data)
        if col == NULL:
            return NULL
        buf = self.buf0 if self.next_buf == 0 else self.buf1
        self.buf_var[self.next_buf] = i
        self.buf_len[self.next_buf] = length
        self.next_buf = 1 - self.next_buf
        parts = self.n_parts(length)
        if parts == 1:
            gather_signed(col, self.index, self.qsign, self.qsign[i], buf, length)
        else:
            chunk = (length + parts - 1) // parts
            for b in prange(parts, num_threads=parts, schedule="static"):
                lo = b * chunk
                gather_signed(col, self.index + lo, self.qsign + lo, self.qsign[i], buf + lo,
                              min(chunk, length - lo))
        return buf

    cdef void swap_index(self, int i, int j) noexcept nogil:
        swap_d(self.alpha, i, j)
        swap_d(self.G, i, j)
        swap_d(self.G_bar, i, j)
        swap_d(self.p, i, j)
        swap_d(self.C, i, j)
        swap_d(self.QD, i, j)
        swap_c(self.y, i, j)
        swap_c(self.status, i, j)
        swap_i(self.active_set, i, j)
        if self.n_data > 0:
            swap_i(self.index, i, j)
            swap_c(self.qsign, i, j)
            self.buf_var[0] = self.buf_var[1] = -1     # positions moved: gathered columns too
        else:
            self.cache.swap(i, j)

    # ---- gradient ----

    cdef int init_gradient(self, const double* alpha_b, const double* q_b, const double* g_bar_b,
                           const signed char* upper_b) noexcept nogil:
        """G = Q alpha + p and G_bar = sum over upper-bounded j of C_j Q_j, from a base point
        alpha_b whose Q alpha_b (q_b) and sum over the j with upper_b[j] of alpha_b[j] Q_j
        (g_bar_b) are known (NULL: the zero point), all by variable: a column only where alpha or
        the upper-bound sum differs from the base."""
        cdef int i, j, v, l = self.l
        cdef bint zero = alpha_b == NULL
        cdef float* Q_i
        cdef double d, d_bar, obj = 0.0
        for i in range(l):
            v = self.active_set[i]
            self.G[i] = self.p[i] if zero else self.p[i] + q_b[v]
            self.G_bar[i] = 0.0 if zero else g_bar_b[v]
        for i in range(l):
            v = self.active_set[i]
            d = self.alpha[i] if zero else self.alpha[i] - alpha_b[v]
            d_bar = ((self.C[i] if self.status[i] == AT_UPPER else 0.0)
                     - (alpha_b[v] if not zero and upper_b[v] else 0.0))
            if d == 0.0 and d_bar == 0.0:
                continue
            if self.interrupted():
                return INTERRUPTED
            Q_i = self.get_q(i, l)
            if Q_i == NULL:
                return NO_MEMORY
            if d != 0.0:
                for j in range(l):
                    self.G[j] += d * Q_i[j]
            if d_bar != 0.0:
                for j in range(l):
                    self.G_bar[j] += d_bar * Q_i[j]
        for i in range(l):
            obj += self.alpha[i] * (self.G[i] + self.p[i])
        self.objective = obj / 2
        return 0

    cdef int reconstruct_gradient(self) noexcept nogil:
        """Rebuild G on the shrunk variables from G_bar and the free variables."""
        cdef int i, j, l = self.l, active = self.active_size
        cdef long long nr_free = 0
        cdef float* Q_i
        cdef double a_i
        if active == l:
            return 0
        self.forget_direction()   # Q d is not known on the positions coming back
        for j in range(active, l):
            self.G[j] = self.G_bar[j] + self.p[j]
        for j in range(active):
            if self.status[j] == FREE:
                nr_free += 1
        if 2 * nr_free < active:
            self.n_unshrink_warnings += 1
        # whichever loop touches fewer kernel values
        if nr_free * l > 2 * <long long>active * (l - active):
            for i in range(active, l):
                if self.interrupted():
                    return INTERRUPTED
                Q_i = self.get_q(i, active)
                if Q_i == NULL:
                    return NO_MEMORY
                for j in range(active):
                    if self.status[j] == FREE:
                        self.G[i] += self.alpha[j] * Q_i[j]
        else:
            for i in range(active):
                if self.status[i] != FREE:
                    continue
                if self.interrupted():
                    return INTERRUPTED
                Q_i = self.get_q(i, l)
                if Q_i == NULL:
                    return NO_MEMORY
                a_i = self.alpha[i]
                for j in range(active, l):
                    self.G[j] += a_i * Q_i[j]
        return 0

    # ---- violations, working set, shrinking ----

    cdef void violations(self, double* g) noexcept nogil:
        """g[0..3] = max over the active set of -G (y=+1, below upper), G (y=+1, above lower),
        G (y=-1, above lower), -G (y=-1, below upper): -y_i G_i on I_up and y_i G_i on I_low,
        split by sign."""
        cdef int i
        g[0] = g[1] = g[2] = g[3] = -INFINITY
        for i in range(self.active_size):
            if self.y[i] == 1:
                if self.status[i] != AT_UPPER and -self.G[i] > g[0]:
                    g[0] = -self.G[i]
                if self.status[i] != AT_LOWER and self.G[i] > g[1]:
                    g[1] = self.G[i]
            else:
                if self.status[i] != AT_LOWER and self.G[i] > g[2]:
                    g[2] = self.G[i]
                if self.status[i] != AT_UPPER and -self.G[i] > g[3]:
                    g[3] = -self.G[i]

    cdef double max_violation(self) noexcept nogil:
        """Largest violation of the KKT conditions (of each equality constraint's pair for nu)."""
        cdef double g[4]
        self.violations(g)
        if self.nu:
            return max(g[0] + g[1], g[2] + g[3])
        return max(g[0], g[2]) + max(g[1], g[3])

    cdef int n_parts(self, int count) noexcept nogil:
        """How many threads share a scan over count positions."""
        if count < self.parallel_scan_min:
            return 1
        return min(self.cache.n_threads, <int>MAX_PARTS)

    cdef void scan_up(self, int lo, int hi, UpScan* r) noexcept nogil:
        cdef int t
        cdef const double* G = self.G
        cdef const signed char* y = self.y
        cdef const signed char* st = self.status
        r.gp = r.gn = -INFINITY
        r.ip = r.in_ = -1
        if not self.nu:  # one violator over both signs: kept as the +1 side's
            r.ip = select_i(G, y, st, lo, hi, &r.gp)
            return
        for t in range(lo, hi):
            if y[t] == 1:
                if st[t] != AT_UPPER and -G[t] >= r.gp:
                    r.gp = -G[t]
                    r.ip = t
            else:
                if st[t] != AT_LOWER and G[t] >= r.gn:
                    r.gn = G[t]
                    r.in_ = t

    cdef void scan_low(self, int lo, int hi, int a, double ga, const float* Q_a, int b, double gb,
                       const float* Q_b, LowScan* r) noexcept nogil:
        cdef int j
        cdef double grad_diff, quad, obj
        cdef const double* G = self.G
        cdef const double* QD = self.QD
        cdef const signed char* y = self.y
        cdef const signed char* st = self.status
        r.gp2 = r.gn2 = -INFINITY
        r.obj_min = INFINITY
        r.best_j = -1
        if not self.nu:  # a = b: one partner search over both signs, one max of y_t G_t
            if a < 0:    # I_up empty: nothing violates
                return
            r.best_j = select_j(G, y, st, QD, Q_a, lo, hi, ga, QD[a], 2.0 * y[a], TAU, &r.gp2, &r.obj_min)
            r.gn2 = r.gp2
            return
        for j in range(lo, hi):
            if y[j] == 1:
                if st[j] != AT_LOWER:
                    grad_diff = ga + G[j]
                    if G[j] >= r.gp2:
                        r.gp2 = G[j]
                    if grad_diff > 0:
                        quad = QD[a] + QD[j] - 2.0 * y[a] * Q_a[j]
                        obj = -(grad_diff * grad_diff) / (quad if quad > 0 else TAU)
                        if obj <= r.obj_min:
                            r.best_j = j
                            r.obj_min = obj
            else:
                if st[j] != AT_UPPER:
                    grad_diff = gb - G[j]
                    if -G[j] >= r.gn2:
                        r.gn2 = -G[j]
                    if grad_diff > 0:
                        quad = QD[b] + QD[j] + 2.0 * y[b] * Q_b[j]
                        obj = -(grad_diff * grad_diff) / (quad if quad > 0 else TAU)
                        if obj <= r.obj_min:
                            r.best_j = j
                            r.obj_min = obj

    cdef int select_working_set(self, int* out_i, int* out_j) noexcept nogil:
        """0: pair (i, j) chosen; 1: optimal within eps; -NO_MEMORY.

        i maximizes -y_i G_i over I_up (nu: separately per sign); j in I_low minimizes the
        second-order decrease -(grad_diff^2)/quad_coef among the pairs that violate. Ties go to
        the later position, in one scan or in parts combined in order alike."""
        cdef int c, a, b, n = self.active_size, parts = self.n_parts(self.active_size)
        cdef double ga, gb
        cdef float* Q_a = NULL
        cdef float* Q_b = NULL
        cdef UpScan up
        cdef LowScan low
        cdef UpScan up_part[MAX_PARTS]
        cdef LowScan low_part[MAX_PARTS]
        if parts == 1:
            self.scan_up(0, n, &up)
        else:
            for c in prange(parts, num_threads=parts, schedule="static", chunksize=1):
                self.scan_up(<int>(<long long>n * c // parts), <int>(<long long>n * (c + 1) // parts), &up_part[c])
            up = up_part[0]
            for c in range(1, parts):
                if up_part[c].ip != -1 and up_part[c].gp >= up.gp:
                    up.gp, up.ip = up_part[c].gp, up_part[c].ip
                if up_part[c].in_ != -1 and up_part[c].gn >= up.gn:
                    up.gn, up.in_ = up_part[c].gn, up_part[c].in_
        if self.nu:
            a, ga, b, gb = up.ip, up.gp, up.in_, up.gn
        else:
            # one maximal violator over both signs; on ties the later position, as a single scan
            if up.gp > up.gn or (up.gp == up.gn and up.ip > up.in_):
                a, ga = up.ip, up.gp
            else:
                a, ga = up.in_, up.gn
            b, gb = a, ga
        if a != -1:
            Q_a = self.get_q(a, n)
            if Q_a == NULL:
                return -NO_MEMORY
        if b == a:
            Q_b = Q_a
        elif b != -1:
            Q_b = self.get_q(b, n)
            if Q_b == NULL:
                return -NO_MEMORY
        if parts == 1:
            self.scan_low(0, n, a, ga, Q_a, b, gb, Q_b, &low)
        else:
            for c in prange(parts, num_threads=parts, schedule="static", chunksize=1):
                self.scan_low(<int>(<long long>n * c // parts), <int>(<long long>n * (c + 1) // parts),
                              a, ga, Q_a, b, gb, Q_b, &low_part[c])
            low = low_part[0]
            for c in range(1, parts):
                low.gp2 = max(low.gp2, low_part[c].gp2)
                low.gn2 = max(low.gn2, low_part[c].gn2)
                if low_part[c].best_j != -1 and low_part[c].obj_min <= low.obj_min:
                    low.obj_min, low.best_j = low_part[c].obj_min, low_part[c].best_j
        self.gap = max(ga + low.gp2, gb + low.gn2)
        if self.gap < self.eps or low.best_j == -1:
            return 1
        out_i[0] = a if self.y[low.best_j] == 1 else b
        out_j[0] = low.best_j
        return 0

    cdef bint be_shrunk(self, int i, const double* th) noexcept nogil:
        """th: thresholds for (y=+1 at upper, y=+1 at lower, y=-1 at lower, y=-1 at upper)."""
        if self.status[i] == AT_UPPER:
            return -self.G[i] > (th[0] if self.y[i] == 1 else th[3])
        if self.status[i] == AT_LOWER:
            return self.G[i] > (th[1] if self.y[i] == 1 else th[2])
        return False

    cdef int do_shrinking(self) noexcept nogil:
        cdef double g[4]
        cdef double th[4]
        cdef double gap
        cdef int i, r
        self.forget_direction()   # positions are about to move
        self.violations(g)
        if self.nu:
            gap = max(g[0] + g[1], g[2] + g[3])
            th[0], th[1], th[2], th[3] = g[0], g[1], g[2], g[3]
        else:
            th[0] = th[2] = max(g[0], g[2])
            th[1] = th[3] = max(g[1], g[3])
            gap = th[0] + th[1]
        if not self.unshrink and gap <= self.eps * 10:
            # close to the end: bring every variable back once, shrink again from there
            self.unshrink = True
            r = self.reconstruct_gradient()
            if r != 0:
                return r
            self.active_size = self.l
        i = 0
        while i < self.active_size:
            if self.be_shrunk(i, th):
                self.active_size -= 1
                while self.active_size > i:
                    if not self.be_shrunk(self.active_size, th):
                        self.swap_index(i, self.active_size)
                        break
                    self.active_size -= 1
            i += 1
        return 0

    # ---- the two-variable step ----

    cdef int take_step(self, int i, int j) noexcept nogil:
        cdef float* Q_i = self.get_q(i, self.active_size)
        cdef float* Q_j
        cdef double* alpha = self.alpha
        cdef double* G = self.G
        cdef double C_i = self.C[i], C_j = self.C[j]
        cdef double old_i = alpha[i], old_j = alpha[j]
        cdef double d_i, d_j, q_ij
        cdef bint was_upper_i, was_upper_j
        cdef int k, parts, r
        if Q_i == NULL:
            return NO_MEMORY
        Q_j = self.get_q(j, self.active_size)
        if Q_j == NULL:
            return NO_MEMORY
        q_ij = Q_i[j]
        if not pair_step(alpha, i, j, G[i], G[j], self.QD[i], self.QD[j], q_ij, C_i, C_j,
                         self.y[i] != self.y[j]):
            return NONFINITE

        d_i = alpha[i] - old_i
        d_j = alpha[j] - old_j
        self.objective += (d_i * (G[i] + 0.5 * self.QD[i] * d_i + q_ij * d_j)
                           + d_j * (G[j] + 0.5 * self.QD[j] * d_j))
        parts = self.n_parts(self.active_size)
        if parts == 1:
            for k in range(self.active_size):
                G[k] += Q_i[k] * d_i + Q_j[k] * d_j
        else:
            for k in prange(self.active_size, num_threads=parts, schedule="static"):
                G[k] += Q_i[k] * d_i + Q_j[k] * d_j

        was_upper_i = self.status[i] == AT_UPPER
        was_upper_j = self.status[j] == AT_UPPER
        self.update_status(i)
        self.update_status(j)
        if was_upper_i != (self.status[i] == AT_UPPER):
            r = self.move_g_bar(i, was_upper_i)
            if r != 0:
                return r
        if was_upper_j != (self.status[j] == AT_UPPER):
            r = self.move_g_bar(j, was_upper_j)
            if r != 0:
                return r
        return 0

    cdef int move_g_bar(self, int i, bint was_upper) noexcept nogil:
        """G_bar after variable i left (was_upper) or reached its upper bound."""
        cdef float* Q_i = self.get_q(i, self.l)
        cdef double C_i = self.C[i]
        cdef double* G_bar = self.G_bar
        cdef int k
        if Q_i == NULL:
            return NO_MEMORY
        if was_upper:
            for k in range(self.l):
                G_bar[k] -= C_i * Q_i[k]
        else:
            for k in range(self.l):
                G_bar[k] += C_i * Q_i[k]
        return 0

    # ---- the conjugate step (warm starts) ----

    cdef void forget_direction(self) noexcept nogil:
        cdef int t
        if not self.conjugate:
            return
        for t in range(self.n_support):
            self.d[self.support[t]] = 0.0
            self.in_support[self.support[t]] = 0
        self.n_support = 0
        self.has_direction = False

    cdef inline void add_to_support(self, int k) noexcept nogil:
        if not self.in_support[k]:
            self.in_support[k] = 1
            self.support[self.n_support] = k
            self.n_support += 1

    cdef int conjugate_step(self, int i, int j) noexcept nogil:
        """A step along v = beta d + u, u the pair's direction (y_i at i, -y_j at j) and beta
        making v Q-conjugate to the last direction d, to the minimum along v or the first bound
        it meets. Taken when the last step was not clipped and v is feasible and descends; else
        the pair's own step (take_step), whose direction u becomes d when it is not clipped."""
        cdef int n = self.active_size, t, k, first = -1, r
        cdef float* Q_i = self.get_q(i, n)
        cdef float* Q_j
        cdef double* d = self.d
        cdef double* Qd = self.Qd
        cdef double* alpha = self.alpha
        cdef double y_i = self.y[i], y_j = self.y[j]
        cdef double beta, gv = 0.0, vQv = 0.0, step
        if Q_i == NULL:
            return NO_MEMORY
        Q_j = self.get_q(j, n)
        if Q_j == NULL:
            return NO_MEMORY
        if self.has_direction and self.n_support + (not self.in_support[i]) + (not self.in_support[j]) <= SUPPORT_MAX:
            beta = -(y_i * Qd[i] - y_j * Qd[j]) / self.dQd
            self.add_to_support(i)
            self.add_to_support(j)
            for t in range(self.n_support):
                d[self.support[t]] *= beta
            d[i] += y_i
            d[j] -= y_j
            # d is v now: its slope and curvature from its support (Q v = beta Q d + Q u)
            for t in range(self.n_support):
                k = self.support[t]
                gv += self.G[k] * d[k]
                vQv += d[k] * (beta * Qd[k] + y_i * Q_i[k] - y_j * Q_j[k])
            step = -gv / vQv
            if isfinite(beta) and gv < 0 and vQv > 0:
                for t in range(self.n_support):
                    k = self.support[t]
                    if not 0.0 <= alpha[k] + step * d[k] <= self.C[k]:
                        step, first = (alpha[k] / -d[k] if d[k] < 0 else (self.C[k] - alpha[k]) / d[k]), k
                if step > 0:
                    return self.move_along_direction(i, j, Q_i, Q_j, beta, step, gv, vQv, first)
        self.forget_direction()
        r = self.take_step(i, j)
        if r != 0 or self.status[i] != FREE or self.status[j] != FREE:
            return r
        # an unclipped pair step: u is the next d (take_step may have moved the columns)
        Q_i = self.get_q(i, n)
        if Q_i == NULL:
            return NO_MEMORY
        Q_j = self.get_q(j, n)
        if Q_j == NULL:
            return NO_MEMORY
        self.dQd = self.QD[i] + self.QD[j] - 2.0 * y_i * y_j * Q_i[j]
        if self.dQd > 0:
            self.add_to_support(i)
            self.add_to_support(j)
            d[i], d[j] = y_i, -y_j
            self.start_direction(Q_i, Q_j, y_i, y_j)
            self.has_direction = True
        return 0

    cdef int move_along_direction(self, int i, int j, const float* Q_i, const float* Q_j, double beta,
                                  double step, double gv, double vQv, int first) noexcept nogil:
        """alpha += step d, d = beta d_old + u already, Q d from beta and the pair's columns;
        ``first``: the variable step puts at its bound (-1: none, d stays the direction)."""
        cdef int t, k, r
        cdef double* alpha = self.alpha
        cdef bint was_upper
        self.update_direction(Q_i, Q_j, self.y[i], self.y[j], beta, step)
        self.objective += step * gv + 0.5 * step * step * vQv
        self.dQd = vQv
        for t in range(self.n_support):
            k = self.support[t]
            alpha[k] += self.d[k] * step
            if k == first:
                alpha[k] = self.C[k] if self.d[k] > 0 else 0.0
            if self.status[k] != FREE or not 0.0 < alpha[k] < self.C[k]:
                alpha[k] = min(max(alpha[k], 0.0), self.C[k])
                was_upper = self.status[k] == AT_UPPER
                self.update_status(k)
                if was_upper != (self.status[k] == AT_UPPER):
                    r = self.move_g_bar(k, was_upper)
                    if r != 0:
                        return r
        if first != -1:
            self.forget_direction()
        return 0

    cdef void start_direction(self, const float* Q_i, const float* Q_j, double y_i, double y_j) noexcept nogil:
        """Qd = y_i Q_i - y_j Q_j on the active set: d = u, the pair's direction."""
        cdef int k, n = self.active_size, parts = self.n_parts(self.active_size)
        cdef double* Qd = self.Qd
        if parts == 1:
            for k in range(n):
                Qd[k] = y_i * Q_i[k] - y_j * Q_j[k]
        else:
            for k in prange(n, num_threads=parts, schedule="static"):
                Qd[k] = y_i * Q_i[k] - y_j * Q_j[k]

    cdef void update_direction(self, const float* Q_i, const float* Q_j, double y_i, double y_j, double beta,
                               double step) noexcept nogil:
        """Qd = beta Qd + y_i Q_i - y_j Q_j on the active set, and G += step Qd."""
        cdef int k, n = self.active_size, parts = self.n_parts(self.active_size)
        cdef double* Qd = self.Qd
        cdef double* G = self.G
        if parts == 1:
            for k in range(n):
                Qd[k] = beta * Qd[k] + y_i * Q_i[k] - y_j * Q_j[k]
                G[k] += step * Qd[k]
        else:
            for k in prange(n, num_threads=parts, schedule="static"):
                Qd[k] = beta * Qd[k] + y_i * Q_i[k] - y_j * Q_j[k]
                G[k] += step * Qd[k]

    # ---- the loop ----

    cdef int solve(self, long long limit) noexcept nogil:
        cdef int i = 0, j = 0, r
        while self.n_iter < self.max_iter:
            if self.n_iter >= limit:
                return CHUNK_DONE
            if self.interrupted():
                return INTERRUPTED
            self.counter -= 1
            if self.counter == 0:
                self.counter = min(self.l, 1000)
                if self.shrinking:
                    r = self.do_shrinking()
                    if r != 0:
                        return r
            r = self.select_working_set(&i, &j)
            if r < 0:
                return -r
            if r == 1:
                # optimal on the active set: check again on everything
                r = self.reconstruct_gradient()
                if r != 0:
                    return r
                self.active_size = self.l
                r = self.select_working_set(&i, &j)
                if r < 0:
                    return -r
                if r == 1:
                    return CONVERGED
                self.counter = 1  # shrink at the next iteration
            self.n_iter += 1
            r = self.conjugate_step(i, j) if self.conjugate else self.take_step(i, j)
            if r != 0:
                return r
        if self.active_size < self.l:
            r = self.reconstruct_gradient()
            if r != 0:
                return r
            self.active_size = self.l
        return MAX_ITER

    def init(self):
        """Compute the initial gradient; returns a Status (CONVERGED means ready to run)."""
        cdef int r
        with nogil:
            r = self.init_gradient(NULL, NULL, NULL, NULL)
        return _status.Status(r)

    def init_from(self, alpha_b, q_b, g_bar_b, upper_b):
        """init() from a base point (by variable, before any run) whose products are known:
        alpha_b, q_b = Q alpha_b, g_bar_b = the sum over upper_b's j of alpha_b[j] Q_j (a
        solution's products() scaled with it). Costs a column per position where the start
        differs from the base, instead of one per nonzero alpha."""
        cdef const double[::1] a = np.ascontiguousarray(alpha_b, dtype=np.float64)
        cdef const double[::1] q = np.ascontiguousarray(q_b, dtype=np.float64)
        cdef const double[::1] g = np.ascontiguousarray(g_bar_b, dtype=np.float64)
        cdef const signed char[::1] u = np.ascontiguousarray(upper_b, dtype=np.int8)
        cdef int r
        if a.shape[0] != self.l or q.shape[0] != self.l or g.shape[0] != self.l or u.shape[0] != self.l:
            raise ValueError("the base point's arrays must have length l")
        if self.n_iter != 0 or self.active_size != self.l:
            raise RuntimeError("init_from() starts a fresh solve")
        with nogil:
            r = self.init_gradient(&a[0], &q[0], &g[0], &u[0]) if self.l > 0 else 0
        return _status.Status(r)

    def set_aside(self, const signed char[::1] keep):
        """After init: the variables with keep[v] = 0, each at a bound, leave the active set as
        shrinking moves variables (SRBO's screened samples, fixed for the solve). The final check
        on every variable, as after any shrinking, brings back and moves those it finds wrong."""
        cdef int i = 0
        if keep.shape[0] != self.l:
            raise ValueError("keep must have length l")
        if self.n_iter != 0 or self.active_size != self.l:
            raise RuntimeError("set_aside() comes before run()")
        for i in range(self.l):
            if not keep[self.active_set[i]] and self.status[i] == FREE:
                raise ValueError("only variables at a bound can be set aside")
        i = 0
        while i < self.active_size:
            if not keep[self.active_set[i]]:
                self.active_size -= 1
                while self.active_size > i:
                    if keep[self.active_set[self.active_size]]:
                        self.swap_index(i, self.active_size)
                        break
                    self.active_size -= 1
            i += 1

    def products(self):
        """(Q alpha, G_bar) by variable, once the solve has finished: with result()'s
        alpha, what init_from() reuses at scaled bounds."""
        if self.active_size != self.l:
            raise RuntimeError("the solve has not finished")
        q = np.empty(self.l)
        g_bar = np.empty(self.l)
        cdef double[::1] q_ = q
        cdef double[::1] g_ = g_bar
        cdef int i
        for i in range(self.l):
            q_[self.active_set[i]] = self.G[i] - self.p[i]
            g_[self.active_set[i]] = self.G_bar[i]
        return q, g_bar

    def run(self, long long limit):
        """Iterate until iteration ``limit``, convergence or the cap; returns a Status."""
        cdef int r
        with nogil:
            r = self.solve(limit)
        return _status.Status(r)

    def result(self):
        """After CONVERGED or MAX_ITER: alpha (by variable), rho, r (nu only), LIBSVM's
        objective and the final maximal violation."""
        cdef int i, l = self.l
        cdef double v = 0.0, rho, r = 0.0
        if self.active_size != l:
            raise RuntimeError("the solve has not finished")
        alpha = np.empty(l)
        cdef double[::1] a = alpha
        for i in range(l):
            a[self.active_set[i]] = self.alpha[i]
            v += self.alpha[i] * (self.G[i] + self.p[i])
        if self.nu:
            rho = self.rho_nu(&r)
        else:
            rho = self.rho_c()
        return {"alpha": alpha, "rho": rho, "r": r if self.nu else None, "obj": v / 2,
                "kkt": self.max_violation(), "n_iter": self.n_iter}

    def gradient(self):
        """G by variable (valid on every variable once the solve has finished)."""
        out = np.empty(self.l)
        cdef double[::1] o = out
        cdef int i
        for i in range(self.l):
            o[self.active_set[i]] = self.G[i]
        return out

    # ---- rho ----

    cdef double rho_c(self) noexcept nogil:
        """-b: the average of y_i G_i over free variables, or the middle of the feasible range."""
        cdef int i, nr_free = 0
        cdef double ub = INFINITY, lb = -INFINITY, sum_free = 0.0, yG
        for i in range(self.active_size):
            yG = self.y[i] * self.G[i]
            if self.status[i] == AT_UPPER:
                if self.y[i] == -1:
                    ub = min(ub, yG)
                else:
                    lb = max(lb, yG)
            elif self.status[i] == AT_LOWER:
                if self.y[i] == 1:
                    ub = min(ub, yG)
                else:
                    lb = max(lb, yG)
            else:
                nr_free += 1
                sum_free += yG
        if nr_free > 0:
            return sum_free / nr_free
        return (ub + lb) / 2

    cdef double rho_nu(self, double* r_out) noexcept nogil:
        """Per sign s, r_s = the multiplier of that sign's equality constraint; rho = (r+ - r-)/2
        and r = (r+ + r-)/2."""
        cdef int i, k
        cdef int nr_free[2]
        cdef double ub[2]
        cdef double lb[2]
        cdef double sum_free[2]
        cdef double rs[2]
        for k in range(2):
            nr_free[k] = 0
            ub[k] = INFINITY
            lb[k] = -INFINITY
            sum_free[k] = 0.0
        for i in range(self.active_size):
            k = 0 if self.y[i] == 1 else 1
            if self.status[i] == AT_UPPER:
                lb[k] = max(lb[k], self.G[i])
            elif self.status[i] == AT_LOWER:
                ub[k] = min(ub[k], self.G[i])
            else:
                nr_free[k] += 1
                sum_free[k] += self.G[i]
        for k in range(2):
            rs[k] = sum_free[k] / nr_free[k] if nr_free[k] > 0 else (ub[k] + lb[k]) / 2
        r_out[0] = (rs[0] + rs[1]) / 2
        return (rs[0] - rs[1]) / 2

    # ---- one step, exposed for the tests' NumPy twin ----

    def select_pair(self):
        """The working set the next iteration would use on the current active set: (i, j) as
        original indices, or None when optimal within eps."""
        cdef int i = 0, j = 0, r
        with nogil:
            r = self.select_working_set(&i, &j)
        if r < 0:
            raise MemoryError("kernel cache: out of memory")
        if r == 1:
            return None
        return int(self.active_set[i]), int(self.active_set[j])

    def step(self, int i, int j):
        """Apply one step on the pair of original indices i, j (a conjugate step in the conjugate
        mode; requires no shrinking yet)."""
        cdef int r
        if self.active_size != self.l:
            raise RuntimeError("step() needs the full active set")
        if self.active_set[i] != i or self.active_set[j] != j:
            raise RuntimeError("step() needs positions in their original order")
        with nogil:
            r = self.conjugate_step(i, j) if self.conjugate else self.take_step(i, j)
        if r != 0:
            raise RuntimeError(f"step failed with status {_status.Status(r).name}")

    def alpha_now(self):
        out = np.empty(self.l)
        cdef double[::1] o = out
        cdef int i
        for i in range(self.l):
            o[self.active_set[i]] = self.alpha[i]
        return out


cdef inline void swap_d(double* a, int i, int j) noexcept nogil:
    cdef double t = a[i]
    a[i] = a[j]
    a[j] = t


cdef inline void swap_i(int* a, int i, int j) noexcept nogil:
    cdef int t = a[i]
    a[i] = a[j]
    a[j] = t


cdef inline void swap_c(signed char* a, int i, int j) noexcept nogil:
    cdef signed char t = a[i]
    a[i] = a[j]
    a[j] = t
