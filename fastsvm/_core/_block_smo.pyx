"""Blocked working-set SMO for LIBSVM's dual problems, without the GIL (docs/blocked_solver.md).

    min_a  1/2 a^T Q a + p^T a   s.t.  y^T a = delta,  0 <= a_i <= C_i,   Q_st = y_s y_t K[r_s, r_t]

(and e^T a fixed too for the nu formulations), variable t on data row r_t: the regression duals
have two variables per row. The method of ThunderSVM (Wen, Shi, Li, He & Chen, JMLR 19, 2018):
each outer step picks a working set W of up to q variables, the most violating of I_up and of
I_low alternately, keeping the half picked last time; forms the q x q block of Q from the kernel
values among W's data rows (fastsvm._core._kernel_block); solves the subproblem on W by LIBSVM's
SMO (second-order pair selection, Fan, Chen & Lin, JMLR 6, 2005) until its violation falls below
max(eps, inner_ratio x its first violation); and updates the gradient with one product of the
kernel rows of the variables that moved, formed only then where not held in a slot (least
recently used dropped first, within -m): a working-set member that does not move costs no row.
It stops by LIBSVM's rule, on the whole problem: the maximal violating pair's gap below eps.
Shrinking as LIBSVM's (-h): variables at a bound that cannot be in a violating pair leave the
problem; the held rows keep only the active rows' values; the shrunk variables' gradient is
brought up to date, and checked, when the active problem is solved.

A step's values are computed in a fixed order (tiles of fixed size, summed in working-set order):
the same bits for any thread count.
"""
from cython.parallel cimport prange, threadid
from libc.math cimport isfinite, INFINITY
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memcpy, memset
cimport numpy as cnp
import numpy as np

from ._kernel_block cimport KernelRows
from ._pair_step cimport pair_step
from ._kernel cimport axpy_float_cols
from ._select cimport select_i, select_j
from ._status cimport CONVERGED, CHUNK_DONE, MAX_ITER, INTERRUPTED, NONFINITE, NO_MEMORY, poll_stop
from . import _status

cnp.import_array()

cdef extern from *:
    """
    #include <stdlib.h>
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    /* Memory on 2 MiB boundaries, transparent huge pages asked for (Linux): a block's values go to
       hundreds of kernel rows at once, each on pages of its own; with 4 KiB pages nearly every
       store would miss the TLB. */
    static void *fastsvm_huge_pages_alloc(size_t bytes) {
        void *p = NULL;
        if (posix_memalign(&p, (size_t)1 << 21, bytes) != 0)
            return NULL;
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        madvise(p, bytes, MADV_HUGEPAGE);
    #endif
        return p;
    }
    """
    void* huge_pages_alloc "fastsvm_huge_pages_alloc"(size_t nbytes) noexcept nogil


cdef extern from "<time.h>" nogil:
    struct timespec:
        long tv_sec
        long tv_nsec
    int clock_gettime(int clk_id, timespec* ts)
    int CLOCK_MONOTONIC

cdef enum:
    AT_LOWER = 0          # statuses of the working set's variables (_select.h)
    AT_UPPER = 1
    FREE = 2
    INNER_POLL = 4096     # inner steps between two looks at the stop flag
    GRAD_TILE = 4096      # gradient entries per tile of the update product
    INNER_STEPS = 100     # inner steps per working-set variable at most (one subproblem)
    PROCEED = -1          # select(): a working set is ready

# variables are shrunk only when at least this share of the active ones can go at once: each
# shrinking moves every held kernel row onto the new active rows
cdef double SHRINK_SHARE = 0.6

cdef double TAU = 1e-12   # curvature used when a pair's quad_coef is not positive


cdef inline double now_seconds() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef inline bint better(double ka, int ia, double kb, int ib) noexcept nogil:
    return ka > kb or (ka == kb and ia < ib)


cdef void heap_offer(double* key, int* idx, int* size, int cap, double k, int i) noexcept nogil:
    """Keep the cap best (key, index) pairs seen (largest key, then smallest index) in a heap
    whose root is the worst of them."""
    cdef int pos, parent
    if size[0] < cap:
        pos = size[0]
        size[0] += 1
        while pos > 0:
            parent = (pos - 1) // 2
            if not better(key[parent], idx[parent], k, i):
                break
            key[pos] = key[parent]
            idx[pos] = idx[parent]
            pos = parent
        key[pos] = k
        idx[pos] = i
        return
    if cap == 0 or not better(k, i, key[0], idx[0]):
        return
    sift_down(key, idx, size[0], 0, k, i)


cdef void sift_down(double* key, int* idx, int size, int pos, double k, int i) noexcept nogil:
    cdef int child
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and better(key[child], idx[child], key[child + 1], idx[child + 1]):
            child += 1
        if not better(k, i, key[child], idx[child]):
            break
        key[pos] = key[child]
        idx[pos] = idx[child]
        pos = child
    key[pos] = k
    idx[pos] = i


cdef void heap_sort_best_first(double* key, int* idx, int size) noexcept nogil:
    """The heap's pairs in place, best first."""
    cdef int end
    cdef double k
    cdef int i
    for end in range(size - 1, 0, -1):
        k = key[end]
        i = idx[end]
        key[end] = key[0]
        idx[end] = idx[0]
        sift_down(key, idx, end, 0, k, i)


cdef class BlockSMO:
    """BlockSMO(rows, index, p, y, alpha, C, eps, nu, q, n_slots, max_iter, stop, check_signals, inner_ratio=0.1)

    rows: the KernelRows of the data; index: the data row of each of the l variables (int32);
    p, alpha, C: float64 of length l; y: +1/-1 (int8); alpha feasible. q: working-set size;
    n_slots (>= q): kernel rows held, n float32 values each. max_iter: inner steps at most.
    """

    cdef KernelRows K
    cdef readonly int l, n, q, n_slots, ws_size
    cdef readonly long long n_outer, n_inner, n_rows_computed, max_iter
    cdef readonly double gap
    # wall seconds spent selecting, forming kernel rows, the blocks of Q, in the subproblems, updating
    # the gradient
    cdef readonly double seconds_select, seconds_rows, seconds_gather, seconds_inner, seconds_update
    cdef readonly double seconds_shrink, seconds_unshrink    # (apart from select's)
    cdef readonly long long min_active
    # shrinking (LIBSVM's, Chang & Lin 2011 section 5.1): the active variables, ascending, and the
    # data rows with an active variable; held kernel rows hold their values at the active rows only
    cdef readonly int l_act, n_act
    cdef readonly long long n_shrinks, n_unshrinks
    cdef int* act
    cdef int* act_rows
    cdef int* row_at                     # a data row's position among the active rows, or -1
    # scratch: the new active rows' old positions (shrink); a data row's among the inactive ones,
    # or -1 (unshrink)
    cdef int* col_at
    cdef int* inactive_rows
    cdef double* alpha_base              # alpha and G when the shrinking from the whole problem began
    cdef double* G_base
    cdef bint shrinking
    cdef bint nu, check_signals
    cdef double eps, inner_ratio
    cdef long long signals_checked_ms
    cdef double* alpha
    cdef double* G
    cdef double* p
    cdef double* C
    cdef double* QD
    cdef signed char* y
    cdef int* index
    cdef int* ws
    cdef int n_new_last
    cdef unsigned char* in_ws
    cdef float* slot_data
    cdef void* slot_memory
    cdef Py_ssize_t stride               # floats from one slot's row to the next
    cdef int* slot_row
    cdef int* row_slot
    cdef long long* slot_stamp
    cdef double* key_a
    cdef int* idx_a
    cdef double* key_b
    cdef int* idx_b
    cdef float* Qw                       # the block of Q: +-1 times float32 kernel values, exact in float32
    cdef double* la
    cdef double* lg
    # the working set's signs, statuses, diagonal of Q and bounds, side by side for the scans
    cdef signed char* ly
    cdef signed char* lst
    cdef double* lqd
    cdef double* lc
    cdef int* ws_at                      # a working-set variable's data row among the working set's
    cdef int* row_pos                    # a data row's position among the working set's, or the moved ones
    cdef float* among                    # K among the working set's data rows
    cdef int* moved_rows                 # the data rows whose variables moved in a subproblem
    cdef unsigned char* row_mark         # scratch marks by data row (distinct rows of a batch)
    cdef int* new_rows
    cdef float** new_ptr
    cdef const float** move_row
    cdef double* move_coef
    cdef double* u
    cdef double* tile_buf
    cdef const float** tile_ptr
    cdef int n_threads
    cdef const int[::1] stop
    cdef object _keep

    def __cinit__(self, KernelRows rows, index, p, y, alpha, *, C, double eps, bint nu, int q, int n_slots,
                  long long max_iter, const int[::1] stop, bint check_signals, double inner_ratio=0.1,
                  bint shrinking=True):
        cdef const int[::1] ix = np.ascontiguousarray(index, dtype=np.int32)
        cdef const double[::1] p_ = np.ascontiguousarray(p, dtype=np.float64)
        cdef const double[::1] a_ = np.ascontiguousarray(alpha, dtype=np.float64)
        cdef const double[::1] c_ = np.ascontiguousarray(C, dtype=np.float64)
        cdef const signed char[::1] y_ = np.ascontiguousarray(y, dtype=np.int8)
        cdef int l = ix.shape[0], t
        if p_.shape[0] != l or a_.shape[0] != l or c_.shape[0] != l or y_.shape[0] != l:
            raise ValueError("index, p, y, alpha and C must have one entry per variable")
        if l and (np.min(ix) < 0 or np.max(ix) >= rows.n):
            raise ValueError("variable rows out of range")
        self.K = rows
        self.l = l
        self.n = rows.n
        self.q = max(2, min(q, l))
        self.n_slots = max(self.q, min(n_slots, self.n))
        self.eps = eps
        self.nu = nu
        self.max_iter = max_iter
        self.stop = stop
        self.check_signals = check_signals
        self.inner_ratio = inner_ratio
        self.shrinking = shrinking
        self.n_threads = rows.n_threads
        cdef int m = max(l, 1), w = self.q
        self.alpha = <double*>malloc(m * sizeof(double))
        self.G = <double*>malloc(m * sizeof(double))
        self.p = <double*>malloc(m * sizeof(double))
        self.C = <double*>malloc(m * sizeof(double))
        self.QD = <double*>malloc(m * sizeof(double))
        self.y = <signed char*>malloc(m * sizeof(signed char))
        self.index = <int*>malloc(m * sizeof(int))
        self.in_ws = <unsigned char*>calloc(m, sizeof(unsigned char))
        self.ws = <int*>malloc(w * sizeof(int))
        # rows start on cache lines (whole vectors in the gradient update), on huge pages
        self.stride = (self.n + 15) // 16 * 16
        self.slot_memory = huge_pages_alloc(max(<Py_ssize_t>self.n_slots * self.stride, 16) * sizeof(float))
        self.slot_data = <float*>self.slot_memory
        self.slot_row = <int*>malloc(self.n_slots * sizeof(int))
        self.slot_stamp = <long long*>calloc(self.n_slots, sizeof(long long))
        self.row_slot = <int*>malloc(max(self.n, 1) * sizeof(int))
        cdef int keys = max(w, self.n_slots)
        self.key_a = <double*>malloc(keys * sizeof(double))
        self.idx_a = <int*>malloc(keys * sizeof(int))
        self.key_b = <double*>malloc(keys * sizeof(double))
        self.idx_b = <int*>malloc(keys * sizeof(int))
        self.Qw = <float*>malloc(<Py_ssize_t>w * w * sizeof(float))
        self.la = <double*>malloc(w * sizeof(double))
        self.lg = <double*>malloc(w * sizeof(double))
        self.ly = <signed char*>malloc(w * sizeof(signed char))
        self.lst = <signed char*>malloc(w * sizeof(signed char))
        self.lqd = <double*>malloc(w * sizeof(double))
        self.lc = <double*>malloc(w * sizeof(double))
        self.ws_at = <int*>malloc(w * sizeof(int))
        self.row_pos = <int*>malloc(max(self.n, 1) * sizeof(int))
        self.among = <float*>malloc(<Py_ssize_t>w * w * sizeof(float))
        self.moved_rows = <int*>malloc(w * sizeof(int))
        self.row_mark = <unsigned char*>calloc(max(self.n, 1), sizeof(unsigned char))
        self.new_rows = <int*>malloc(keys * sizeof(int))
        self.new_ptr = <float**>malloc(keys * sizeof(float*))
        self.move_row = <const float**>malloc(keys * sizeof(float*))
        self.move_coef = <double*>malloc(keys * sizeof(double))
        self.u = <double*>malloc(max(self.n, 1) * sizeof(double))
        self.act = <int*>malloc(m * sizeof(int))
        self.act_rows = <int*>malloc(max(self.n, 1) * sizeof(int))
        self.row_at = <int*>malloc(max(self.n, 1) * sizeof(int))
        self.col_at = <int*>malloc(max(self.n, 1) * sizeof(int))
        self.inactive_rows = <int*>malloc(max(self.n, 1) * sizeof(int))
        self.alpha_base = <double*>malloc(m * sizeof(double))
        self.G_base = <double*>malloc(m * sizeof(double))
        self.tile_buf = <double*>malloc(<Py_ssize_t>self.n_threads * GRAD_TILE * sizeof(double))
        self.tile_ptr = <const float**>malloc(self.n_threads * 4 * sizeof(float*))
        if (self.alpha == NULL or self.G == NULL or self.p == NULL or self.C == NULL or self.QD == NULL
                or self.y == NULL or self.index == NULL or self.in_ws == NULL or self.ws == NULL
                or self.slot_data == NULL or self.slot_row == NULL or self.slot_stamp == NULL
                or self.row_slot == NULL or self.key_a == NULL or self.idx_a == NULL or self.key_b == NULL
                or self.idx_b == NULL or self.Qw == NULL or self.la == NULL or self.lg == NULL
                or self.ly == NULL or self.lst == NULL or self.lqd == NULL or self.lc == NULL
                or self.ws_at == NULL
                or self.row_mark == NULL or self.moved_rows == NULL
                or self.row_pos == NULL or self.among == NULL
                or self.new_rows == NULL or self.new_ptr == NULL
                or self.move_row == NULL or self.move_coef == NULL or self.u == NULL
                or self.act == NULL or self.act_rows == NULL or self.row_at == NULL or self.col_at == NULL
                or self.inactive_rows == NULL or self.alpha_base == NULL or self.G_base == NULL
                or self.tile_buf == NULL or self.tile_ptr == NULL):
            raise MemoryError("cannot allocate the blocked solver's buffers (lower -m or the working set)")
        for t in range(l):
            self.alpha[t] = a_[t]
            self.p[t] = p_[t]
            self.C[t] = c_[t]
            self.y[t] = y_[t]
            self.index[t] = ix[t]
            self.QD[t] = rows.diagonal(ix[t])
        for t in range(self.n_slots):
            self.slot_row[t] = -1
        for t in range(self.n):
            self.row_slot[t] = -1
        self.activate_all()
        self.min_active = l
        self.ws_size = 0
        self.n_new_last = 0
        self.gap = INFINITY

    def __dealloc__(self):
        free(self.alpha)
        free(self.G)
        free(self.p)
        free(self.C)
        free(self.QD)
        free(self.y)
        free(self.index)
        free(self.in_ws)
        free(self.ws)
        free(self.slot_memory)
        free(self.slot_row)
        free(self.slot_stamp)
        free(self.row_slot)
        free(self.key_a)
        free(self.idx_a)
        free(self.key_b)
        free(self.idx_b)
        free(self.Qw)
        free(self.la)
        free(self.lg)
        free(self.ly)
        free(self.lst)
        free(self.lqd)
        free(self.lc)
        free(self.ws_at)
        free(self.moved_rows)
        free(self.row_pos)
        free(self.among)
        free(self.row_mark)
        free(self.new_rows)
        free(self.new_ptr)
        free(self.move_row)
        free(self.move_coef)
        free(self.u)
        free(self.act)
        free(self.act_rows)
        free(self.row_at)
        free(self.col_at)
        free(self.inactive_rows)
        free(self.alpha_base)
        free(self.G_base)
        free(self.tile_buf)
        free(self.tile_ptr)

    # ---- status ----

    cdef inline bint is_upper(self, int t) noexcept nogil:
        return self.alpha[t] >= self.C[t]

    cdef inline bint is_lower(self, int t) noexcept nogil:
        return self.alpha[t] <= 0

    cdef bint interrupted(self) noexcept nogil:
        return poll_stop(self.stop, self.check_signals, &self.signals_checked_ms)

    # ---- rows ----

    cdef int rows_for(self, const int* data_rows, int m) noexcept nogil:
        """Put the kernel rows of data_rows (distinct) in slots, computing those not held (the
        least recently used slots not among them are reused); stamps them as used now."""
        cdef long long now = self.n_outer + 2   # init's rows carry stamp 1
        cdef int j, s, n_new = 0, size = 0, r
        cdef double t0
        for j in range(m):
            s = self.row_slot[data_rows[j]]
            if s >= 0:
                self.slot_stamp[s] = now
            else:
                self.new_rows[n_new] = data_rows[j]
                n_new += 1
        if n_new == 0:
            return CONVERGED
        # the n_new oldest slots not stamped now (free slots have stamp 0 and come first)
        for s in range(self.n_slots):
            if self.slot_stamp[s] != now:
                heap_offer(self.key_b, self.idx_b, &size, n_new,
                           -<double>self.slot_stamp[s] + (0.5 if self.slot_row[s] < 0 else 0.0), s)
        if size < n_new:
            return NO_MEMORY
        heap_sort_best_first(self.key_b, self.idx_b, size)
        for j in range(n_new):
            s = self.idx_b[j]
            if self.slot_row[s] >= 0:
                self.row_slot[self.slot_row[s]] = -1
            self.slot_row[s] = self.new_rows[j]
            self.row_slot[self.new_rows[j]] = s
            self.slot_stamp[s] = now
            self.new_ptr[j] = self.slot_data + <Py_ssize_t>s * self.stride
        t0 = now_seconds()
        r = self.K.compute(self.new_rows, n_new, NULL if self.n_act == self.n else self.act_rows, self.n_act,
                           self.new_ptr, &self.stop[0])
        self.seconds_rows += now_seconds() - t0
        if r != CONVERGED:
            for j in range(n_new):   # half-computed rows are not kept
                s = self.idx_b[j]
                self.row_slot[self.slot_row[s]] = -1
                self.slot_row[s] = -1
                self.slot_stamp[s] = 0
            return r
        self.n_rows_computed += n_new
        return CONVERGED

    cdef void add_rows_product(self, int k, int n_cols, const int* at) noexcept nogil:
        """G_t += y_t sum_j move_coef[j] K[row j, r_t] over the k rows in move_row (held at n_cols
        positions), summed in their order, four at a time, in tiles of fixed size, for the
        variables whose data row r_t is at position at[r_t] >= 0 (at NULL: every row, in order)."""
        cdef int tiles = (n_cols + GRAD_TILE - 1) // GRAD_TILE, tile, lo, hi, j, g, c, th, t, pos
        cdef double* acc
        cdef const float** ptr
        for tile in prange(tiles, num_threads=self.n_threads if tiles > 1 else 1, schedule="static"):
            th = threadid()
            acc = self.tile_buf + <Py_ssize_t>th * GRAD_TILE
            ptr = self.tile_ptr + th * 4
            lo = tile * GRAD_TILE
            hi = min(lo + GRAD_TILE, n_cols)
            memset(acc, 0, (hi - lo) * sizeof(double))
            j = 0
            while j < k:
                g = min(4, k - j)
                for c in range(g):
                    ptr[c] = self.move_row[j + c] + lo
                axpy_float_cols(ptr, self.move_coef + j, g, hi - lo, acc)
                j = j + g
            for c in range(lo, hi):
                self.u[c] = acc[c - lo]
        if at == NULL and self.l == self.n:
            for t in prange(self.l, num_threads=self.n_threads if self.l >= 8 * GRAD_TILE else 1,
                            schedule="static"):
                self.G[t] += self.y[t] * self.u[self.index[t]]
        elif at == NULL:
            for t in range(self.l):
                self.G[t] += self.y[t] * self.u[self.index[t]]
        else:
            for t in range(self.l):
                pos = at[self.index[t]]
                if pos >= 0:
                    self.G[t] += self.y[t] * self.u[pos]

    cdef int init_gradient(self) noexcept nogil:
        """G = p + Q alpha; the last batch's rows stay in their slots."""
        cdef int t, s
        for t in range(self.l):
            self.G[t] = self.p[t]
        s = self.gradient_from_alpha(NULL, self.n, NULL, NULL, &self.stop[0])
        for t in range(self.l):
            if not isfinite(self.G[t]):
                return NONFINITE
        return s

    cdef int gradient_from_alpha(self, const int* cols, int n_cols, const int* at, const double* base,
                                 const int* stop) noexcept nogil:
        """G_t += (Q (alpha - base))_t (base NULL: 0) for the variables on data rows cols[:n_cols]
        (at: their positions; NULL: every row): the rows of the nonzero alpha - base in batches of
        n_slots rows, each batch's coefficients summed in variable order. The batches' rows are
        left in slots, valid as kernel rows only when cols is NULL."""
        cdef int t, s, k, r, v0 = 0
        cdef double d
        while True:
            k = 0
            while v0 < self.l and k < self.n_slots:
                if self.alpha[v0] != (0.0 if base == NULL else base[v0]) and not self.row_mark[self.index[v0]]:
                    self.row_mark[self.index[v0]] = 1
                    self.idx_a[k] = self.index[v0]
                    k += 1
                v0 += 1
            if k == 0:
                break
            for s in range(k):
                if self.slot_row[s] >= 0:
                    self.row_slot[self.slot_row[s]] = -1
                self.slot_row[s] = self.idx_a[s]
                self.row_slot[self.idx_a[s]] = s
                self.slot_stamp[s] = 1
                self.new_ptr[s] = self.slot_data + <Py_ssize_t>s * self.stride
                self.move_row[s] = self.new_ptr[s]
                self.move_coef[s] = 0.0
            r = self.K.compute(self.idx_a, k, cols, n_cols, self.new_ptr, stop)
            if r != CONVERGED:
                for s in range(k):
                    self.row_slot[self.slot_row[s]] = -1
                    self.slot_row[s] = -1
                    self.slot_stamp[s] = 0
                for t in range(self.l):
                    self.row_mark[self.index[t]] = 0
                return r
            if cols == NULL:
                self.n_rows_computed += k
            for t in range(self.l):
                d = self.alpha[t] - (0.0 if base == NULL else base[t])
                if d != 0.0 and self.row_mark[self.index[t]] == 1:
                    self.move_coef[self.row_slot[self.index[t]]] += self.y[t] * d
            self.add_rows_product(k, n_cols, at)
            for s in range(k):
                self.row_mark[self.idx_a[s]] = 2      # done: later batches skip its variables
            if stop != NULL and self.interrupted():
                for t in range(self.l):
                    self.row_mark[self.index[t]] = 0
                return INTERRUPTED
        for t in range(self.l):
            self.row_mark[self.index[t]] = 0
        return CONVERGED

    # ---- shrinking ----

    cdef void activate_all(self) noexcept nogil:
        cdef int t
        for t in range(self.l):
            self.act[t] = t
        for t in range(self.n):
            self.act_rows[t] = t
            self.row_at[t] = t
        self.l_act = self.l
        self.n_act = self.n

    cdef void drop_slots(self) noexcept nogil:
        cdef int s
        for s in range(self.n_slots):
            if self.slot_row[s] >= 0:
                self.row_slot[self.slot_row[s]] = -1
            self.slot_row[s] = -1
            self.slot_stamp[s] = 0

    cdef bint shrinkable(self, int t, double kmax, double kmin) noexcept nogil:
        """LIBSVM's be_shrunk: t at a bound, where it can only be a pair's i (j) and its -y G is
        below (above) every j's (i's): it takes no step while that holds."""
        cdef double key = -self.y[t] * self.G[t]
        cdef bint only_up
        if self.is_lower(t):
            only_up = self.y[t] > 0
        elif self.is_upper(t):
            only_up = self.y[t] < 0
        else:
            return False
        return key < kmin if only_up else key > kmax

    cdef void shrink(self, double kmax_p, double kmax_n, double kmin_p, double kmin_n) noexcept nogil:
        """Drop the shrinkable active variables (not in the working set) when they are at least
        SHRINK_SHARE of the active ones; the held kernel rows move onto the new active rows."""
        cdef int a, t, count = 0, l_new = 0, n_new = 0, s, r
        cdef double kmax = max(kmax_p, kmax_n), kmin = min(kmin_p, kmin_n)
        for a in range(self.l_act):
            t = self.act[a]
            if not self.in_ws[t] and (self.shrinkable(t, kmax_p, kmin_p) if self.nu and self.y[t] > 0 else
                                      self.shrinkable(t, kmax_n, kmin_n) if self.nu else
                                      self.shrinkable(t, kmax, kmin)):
                self.in_ws[t] = 2      # marked for dropping (not in the working set)
                count += 1
        if count == 0 or count < SHRINK_SHARE * self.l_act:
            for a in range(self.l_act):
                if self.in_ws[self.act[a]] == 2:
                    self.in_ws[self.act[a]] = 0
            return
        if self.l_act == self.l:
            # the shrunk variables' gradient is brought up to date from here (unshrink)
            memcpy(self.alpha_base, self.alpha, self.l * sizeof(double))
            memcpy(self.G_base, self.G, self.l * sizeof(double))
        for a in range(self.l_act):
            t = self.act[a]
            if self.in_ws[t] == 2:
                self.in_ws[t] = 0
            else:
                self.act[l_new] = t
                l_new += 1
                self.row_mark[self.index[t]] = 1
        # the rows that keep an active variable, and where their values are in a held row now
        for a in range(self.n_act):
            r = self.act_rows[a]
            if self.row_mark[r]:
                self.row_mark[r] = 0
                self.col_at[n_new] = a
                self.act_rows[n_new] = r
                self.row_at[r] = n_new
                n_new += 1
            else:
                self.row_at[r] = -1
                if self.row_slot[r] >= 0:
                    s = self.row_slot[r]
                    self.row_slot[r] = -1
                    self.slot_row[s] = -1
                    self.slot_stamp[s] = 0
        for s in prange(self.n_slots, num_threads=self.n_threads, schedule="static"):
            if self.slot_row[s] >= 0:
                self.move_onto(self.slot_data + <Py_ssize_t>s * self.stride, n_new)
        self.l_act = l_new
        self.n_act = n_new
        self.n_shrinks += 1
        self.min_active = min(self.min_active, l_new)

    cdef void move_onto(self, float* row, int n_new) noexcept nogil:
        """A held row's values moved onto the new active rows (positions only decrease)."""
        cdef int a
        for a in range(n_new):
            row[a] = row[self.col_at[a]]

    cdef int unshrink(self, const int* stop) noexcept nogil:
        """G of the variables on inactive rows, from their G when shrinking began and the kernel
        rows of the alpha's that moved since, at those rows; then every variable active again, and
        the held rows dropped."""
        cdef int r, t, m = 0
        cdef double t0 = now_seconds()
        if self.l_act == self.l:
            return CONVERGED
        for r in range(self.n):
            if self.row_at[r] < 0:
                self.col_at[r] = m
                self.inactive_rows[m] = r
                m += 1
            else:
                self.col_at[r] = -1
        for t in range(self.l):
            if self.col_at[self.index[t]] >= 0:
                self.G[t] = self.G_base[t]
        self.drop_slots()
        r = self.gradient_from_alpha(self.inactive_rows, m, self.col_at, self.alpha_base, stop)
        self.drop_slots()
        if r != CONVERGED:
            return r          # still shrunk: a later unshrink starts again from G_base
        self.activate_all()
        self.n_unshrinks += 1
        self.seconds_unshrink += now_seconds() - t0
        return CONVERGED

    # ---- the working set ----

    cdef double scan_gap(self, double* kmax_p, double* kmax_n, double* kmin_p, double* kmin_n) noexcept nogil:
        """The maximal violation over the active variables, from the largest -y G over I_up and the
        smallest over I_low of each sign."""
        cdef int a, t
        cdef double key
        cdef double gmax_p = -INFINITY, gmax_n = -INFINITY, gmin_p = INFINITY, gmin_n = INFINITY
        cdef bint up, low
        for a in range(self.l_act):
            t = self.act[a]
            key = -self.y[t] * self.G[t]
            up = (self.y[t] > 0 and not self.is_upper(t)) or (self.y[t] < 0 and not self.is_lower(t))
            low = (self.y[t] > 0 and not self.is_lower(t)) or (self.y[t] < 0 and not self.is_upper(t))
            if up:
                if self.y[t] > 0:
                    gmax_p = max(gmax_p, key)
                else:
                    gmax_n = max(gmax_n, key)
            if low:
                if self.y[t] > 0:
                    gmin_p = min(gmin_p, key)
                else:
                    gmin_n = min(gmin_n, key)
        kmax_p[0], kmax_n[0], kmin_p[0], kmin_n[0] = gmax_p, gmax_n, gmin_p, gmin_n
        if self.nu:
            return max(gmax_p - gmin_p, gmax_n - gmin_n)
        return max(gmax_p, gmax_n) - min(gmin_p, gmin_n)

    cdef int select(self) noexcept nogil:
        """The maximal violation (self.gap) and, unless it is below eps over the whole problem
        (returns CONVERGED), the next working set (returns PROCEED): the half picked last time
        kept, the rest the most violating of I_up (largest -y G) and of I_low (smallest -y G) in
        turn (per sign for the nu formulations). Shrinks; unshrinks to check an active problem
        solved to eps on the whole problem (and goes on from there when it is not)."""
        cdef int a, kept, w, r
        cdef double kmax_p, kmax_n, kmin_p, kmin_n, t0 = now_seconds(), unshrink0 = self.seconds_unshrink
        self.gap = self.scan_gap(&kmax_p, &kmax_n, &kmin_p, &kmin_n)
        if self.gap != self.gap:
            return NONFINITE
        if self.l_act < self.l and not self.gap >= self.eps:
            r = self.unshrink(&self.stop[0])
            if r != CONVERGED:
                return r
            self.gap = self.scan_gap(&kmax_p, &kmax_n, &kmin_p, &kmin_n)
        if self.gap >= self.eps and self.shrinking:
            self.shrink(kmax_p, kmax_n, kmin_p, kmin_n)
        self.seconds_shrink += now_seconds() - t0 - (self.seconds_unshrink - unshrink0)
        if not self.gap >= self.eps:   # LIBSVM: stop when Gmax + Gmax2 < eps (or nothing to pick)
            return CONVERGED
        # keep the last selection's new members (at most q / 2), in their order
        kept = min(self.n_new_last, self.q // 2)
        for a in range(self.ws_size - self.n_new_last):
            self.in_ws[self.ws[a]] = 0
        for a in range(self.n_new_last - kept):
            self.in_ws[self.ws[self.ws_size - self.n_new_last + kept + a]] = 0
        for a in range(kept):
            self.ws[a] = self.ws[self.ws_size - self.n_new_last + a]
        if self.nu:
            # both of a step's variables share a sign: each sign's own violators
            w = self.pick(1, kept, kept + (self.q - kept) // 2)
            w = self.pick(-1, w, self.q)
            w = self.pick(1, w, self.q)
        else:
            w = self.pick(0, kept, self.q)
        self.n_new_last = w - kept
        self.ws_size = w
        return PROCEED

    cdef int pick(self, int sign, int w, int limit) noexcept nogil:
        """Add to ws[w:limit] the variables (of one sign, 0: both) not in it, the most violating of
        I_up and of I_low in turn; returns the new size."""
        cdef int a, t, need = limit - w, n_up = 0, n_low = 0, pu = 0, pl = 0
        cdef double key
        if need <= 0:
            return w
        for a in range(self.l_act):
            t = self.act[a]
            if self.in_ws[t] or (sign != 0 and self.y[t] != sign):
                continue
            key = -self.y[t] * self.G[t]
            if (self.y[t] > 0 and not self.is_upper(t)) or (self.y[t] < 0 and not self.is_lower(t)):
                heap_offer(self.key_a, self.idx_a, &n_up, need, key, t)
            if (self.y[t] > 0 and not self.is_lower(t)) or (self.y[t] < 0 and not self.is_upper(t)):
                heap_offer(self.key_b, self.idx_b, &n_low, need, -key, t)
        heap_sort_best_first(self.key_a, self.idx_a, n_up)
        heap_sort_best_first(self.key_b, self.idx_b, n_low)
        while w < limit and (pu < n_up or pl < n_low):
            while pu < n_up and self.in_ws[self.idx_a[pu]]:
                pu += 1
            if pu < n_up:
                self.ws[w] = self.idx_a[pu]
                self.in_ws[self.idx_a[pu]] = 1
                w += 1
                pu += 1
            if w == limit:
                break
            while pl < n_low and self.in_ws[self.idx_b[pl]]:
                pl += 1
            if pl < n_low:
                self.ws[w] = self.idx_b[pl]
                self.in_ws[self.idx_b[pl]] = 1
                w += 1
                pl += 1
        return w

    # ---- the subproblem on the working set ----

    cdef int load_block(self) noexcept nogil:
        """The working set's block of Q, from the kernel values among its data rows (m x m of
        them: their full rows are formed only for the variables that move), and its alpha and G."""
        cdef int w = self.ws_size, a, m = 0, r, v
        for a in range(w):
            v = self.index[self.ws[a]]
            if not self.row_mark[v]:          # a regression row's two variables share its row
                self.row_mark[v] = 1
                self.row_pos[v] = m
                self.idx_a[m] = v
                self.new_ptr[m] = self.among + <Py_ssize_t>m * w
                m += 1
        for a in range(m):
            self.row_mark[self.idx_a[a]] = 0
        r = self.K.compute(self.idx_a, m, self.idx_a, m, self.new_ptr, &self.stop[0])
        if r != CONVERGED:
            return r
        for a in range(w):
            v = self.ws[a]
            self.ws_at[a] = self.row_pos[self.index[v]]
            self.la[a] = self.alpha[v]
            self.lg[a] = self.G[v]
            self.ly[a] = self.y[v]
            self.lqd[a] = self.QD[v]
            self.lc[a] = self.C[v]
            self.set_status(a)
        for a in prange(w, num_threads=self.n_threads if w >= 128 else 1, schedule="static"):
            self.among_row(a)
        return CONVERGED

    cdef void among_row(self, int a) noexcept nogil:
        """Row a of the block Qw from the kernel values among the working set's data rows."""
        cdef int w = self.ws_size, b
        cdef const float* row = self.among + <Py_ssize_t>self.ws_at[a] * w
        cdef float* out = self.Qw + <Py_ssize_t>a * w
        cdef int ya = self.ly[a]
        for b in range(w):
            out[b] = (ya * self.ly[b]) * row[self.ws_at[b]]

    cdef inline void set_status(self, int a) noexcept nogil:
        self.lst[a] = AT_LOWER if self.la[a] <= 0 else AT_UPPER if self.la[a] >= self.lc[a] else FREE

    cdef inline bint local_upper(self, int a) noexcept nogil:
        return self.lst[a] == AT_UPPER

    cdef inline bint local_lower(self, int a) noexcept nogil:
        return self.lst[a] == AT_LOWER

    cdef double local_select(self, int* out_i, int* out_j) noexcept nogil:
        """LIBSVM's second-order pair on the working set (Solver / Solver_NU); returns the
        subproblem's maximal violation (-1 when no pair can move)."""
        cdef int w = self.ws_size, t, j, ip = -1, in_ = -1, i, best = -1
        cdef double gp = -INFINITY, gn = -INFINITY, gp2 = -INFINITY, gn2 = -INFINITY
        cdef double grad_diff, quad, obj, obj_min = INFINITY, g_i
        cdef const float* Q_p
        cdef const float* Q_n
        cdef signed char yt
        if not self.nu:
            # one equality constraint: LIBSVM's i (the largest -y G over I_up), then its j
            i = select_i(self.lg, self.ly, self.lst, 0, w, &g_i)
            if i < 0:
                return -1.0
            best = select_j(self.lg, self.ly, self.lst, self.lqd, self.Qw + <Py_ssize_t>i * w, 0, w, g_i,
                            self.lqd[i], 2.0 * self.ly[i], TAU, &gp2, &obj_min)
            out_i[0] = i
            out_j[0] = best
            return g_i + gp2 if best >= 0 else -1.0
        for t in range(w):
            yt = self.ly[t]
            if yt > 0:
                if not self.local_upper(t) and -self.lg[t] >= gp:
                    gp = -self.lg[t]
                    ip = t
            else:
                if not self.local_lower(t) and self.lg[t] >= gn:
                    gn = self.lg[t]
                    in_ = t
        Q_p = self.Qw + <Py_ssize_t>ip * w if ip >= 0 else NULL
        Q_n = self.Qw + <Py_ssize_t>in_ * w if in_ >= 0 else NULL
        for j in range(w):
            yt = self.ly[j]
            if yt > 0:
                if not self.local_lower(j):
                    grad_diff = gp + self.lg[j]
                    if self.lg[j] >= gp2:
                        gp2 = self.lg[j]
                    if ip >= 0 and grad_diff > 0:
                        quad = self.lqd[ip] + self.lqd[j] - 2.0 * Q_p[j]
                        obj = -(grad_diff * grad_diff) / (quad if quad > 0 else TAU)
                        if obj <= obj_min:
                            best = j
                            obj_min = obj
            else:
                if not self.local_upper(j):
                    grad_diff = gn - self.lg[j]
                    if -self.lg[j] >= gn2:
                        gn2 = -self.lg[j]
                    if in_ >= 0 and grad_diff > 0:
                        quad = self.lqd[in_] + self.lqd[j] - 2.0 * Q_n[j]
                        obj = -(grad_diff * grad_diff) / (quad if quad > 0 else TAU)
                        if obj <= obj_min:
                            best = j
                            obj_min = obj
        if best < 0:
            return -1.0
        out_i[0] = ip if self.ly[best] > 0 else in_
        out_j[0] = best
        return max(gp + gp2, gn + gn2)

    cdef int local_step(self, int i, int j) noexcept nogil:
        """LIBSVM's two-variable step on working-set members i and j, and the subproblem's G."""
        cdef int w = self.ws_size, k
        cdef const float* Q_i = self.Qw + <Py_ssize_t>i * w
        cdef const float* Q_j = self.Qw + <Py_ssize_t>j * w
        cdef double* a = self.la
        cdef double* G = self.lg
        cdef double old_i = a[i], old_j = a[j], d_i, d_j
        if not pair_step(a, i, j, G[i], G[j], self.lqd[i], self.lqd[j], Q_i[j], self.lc[i], self.lc[j],
                         self.ly[i] != self.ly[j]):
            return NONFINITE
        self.set_status(i)
        self.set_status(j)

        d_i = a[i] - old_i
        d_j = a[j] - old_j
        for k in range(w):
            G[k] += Q_i[k] * d_i + Q_j[k] * d_j
        return CONVERGED

    cdef int solve_block(self) noexcept nogil:
        """SMO on the working set until its violation is below max(eps, inner_ratio x the first), or
        below eps when the working set holds every variable (the problem solved in one step)."""
        cdef int i = 0, j = 0, r
        cdef long long steps = 0, cap = <long long>INNER_STEPS * self.ws_size
        cdef double local_gap, local_eps = self.eps
        while steps < cap and self.n_inner < self.max_iter:
            local_gap = self.local_select(&i, &j)
            if steps == 0 and self.ws_size < self.l_act:
                local_eps = max(self.eps, self.inner_ratio * local_gap)   # else: the whole problem
            if local_gap < local_eps:
                break
            r = self.local_step(i, j)
            if r != CONVERGED:
                return r
            steps += 1
            self.n_inner += 1
            if steps % INNER_POLL == 0 and self.interrupted():
                return INTERRUPTED
        return CONVERGED

    cdef int update_gradient(self) noexcept nogil:
        """alpha on the working set from the subproblem's, and G of every variable from the
        kernel rows of the data rows that moved (formed now where not held; one coefficient per
        data row, summed in working-set order)."""
        cdef int w = self.ws_size, a, k = 0, v, r
        cdef double d
        for a in range(w):
            d = self.la[a] - self.alpha[self.ws[a]]
            if d == 0.0:
                continue
            v = self.index[self.ws[a]]
            if not self.row_mark[v]:
                self.row_mark[v] = 1
                self.row_pos[v] = k
                self.moved_rows[k] = v
                self.move_coef[k] = 0.0
                k += 1
            self.move_coef[self.row_pos[v]] += self.y[self.ws[a]] * d
        for a in range(k):
            self.row_mark[self.moved_rows[a]] = 0
        if k == 0:
            return MAX_ITER      # nothing moved: the subproblem is at its precision floor
        r = self.rows_for(self.moved_rows, k)
        if r != CONVERGED:
            return r             # alpha and G as they were: the subproblem's steps are dropped
        for a in range(w):
            self.alpha[self.ws[a]] = self.la[a]
        for a in range(k):
            self.move_row[a] = self.slot_data + <Py_ssize_t>self.row_slot[self.moved_rows[a]] * self.stride
        self.add_rows_product(k, self.n_act, NULL if self.n_act == self.n else self.row_at)
        return CONVERGED

    cdef int solve(self, long long limit) noexcept nogil:
        cdef int r
        cdef double t0, t1, shrink0, rows0
        while self.n_inner < self.max_iter:
            if self.n_outer >= limit:
                return CHUNK_DONE
            if self.interrupted():
                return INTERRUPTED
            t0 = now_seconds()
            shrink0 = self.seconds_shrink + self.seconds_unshrink
            r = self.select()
            t1 = now_seconds()
            self.seconds_select += t1 - t0 - (self.seconds_shrink + self.seconds_unshrink - shrink0)
            if r != PROCEED:
                return r
            r = self.load_block()
            t0 = now_seconds()
            self.seconds_gather += t0 - t1
            if r != CONVERGED:
                return r
            r = self.solve_block()
            t1 = now_seconds()
            self.seconds_inner += t1 - t0
            if r != CONVERGED:
                return r
            rows0 = self.seconds_rows
            r = self.update_gradient()
            self.seconds_update += now_seconds() - t1 - (self.seconds_rows - rows0)
            self.n_outer += 1
            if r != CONVERGED:
                return r
        return MAX_ITER

    # ---- Python ----

    def init(self):
        """Compute the initial gradient; returns a Status (CONVERGED: ready to run)."""
        cdef int r
        with nogil:
            r = self.init_gradient()
        return _status.Status(r)

    def run(self, long long limit):
        """Outer steps until step ``limit``, convergence or the cap; returns a Status."""
        cdef int r
        with nogil:
            r = self.solve(limit)
        return _status.Status(r)

    def objective(self):
        """LIBSVM's dual objective 1/2 a^T (G + p) at the current point (from the last gradient
        of the variables shrunk: exact once every variable is active)."""
        cdef double v = 0.0
        cdef int t
        for t in range(self.l):
            v += self.alpha[t] * (self.G[t] + self.p[t])
        return v / 2

    def state(self):
        """(alpha, G) as arrays by variable (the gradient of every variable: shrunk ones first
        brought up to date)."""
        cdef int r
        with nogil:
            r = self.unshrink(NULL)
        if r != CONVERGED:
            raise MemoryError("cannot bring the shrunk variables' gradient up to date")
        alpha = np.empty(self.l)
        G = np.empty(self.l)
        cdef double[::1] a = alpha
        cdef double[::1] g = G
        cdef int t
        for t in range(self.l):
            a[t] = self.alpha[t]
            g[t] = self.G[t]
        return alpha, G

    def working_set(self):
        return np.array([self.ws[a] for a in range(self.ws_size)], dtype=np.int64)

    @property
    def slot_bytes(self):
        return int(self.n_slots) * int(self.stride) * 4
