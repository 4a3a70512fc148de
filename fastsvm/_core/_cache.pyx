"""LRU cache of kernel columns under a byte budget (LIBSVM's -m), without the GIL.

A column is computed when first asked for, only as far as the length asked (SMO asks for the
active size), and extended later if a longer prefix is needed. When the budget is exhausted the
least recently used columns are dropped. Long columns are computed by several threads; each
entry is computed independently, so the values do not depend on the thread count.

Used by SMO (with signs y for classification, permuted by shrinking) and meant for any kernel
solver that needs columns or blocks Q_JJ of the kernel matrix.
"""
from cython.parallel cimport prange, threadid
from libc.stdlib cimport malloc, calloc, realloc, free
cimport numpy as cnp
import numpy as np

from ._csr cimport csr_view, indices_within, row_dot, row_sqnorm
from ._kernel cimport (PRECOMPUTED, RBF, axpy_float_cols, dot_cols, dot_rows, kernel_from_dot,
                       kernel_params, rbf_block, scatter_row, store_float, unscatter_row)
from ._status cimport Status, stop_flag_set
from ..errors import FastSVMError

cnp.import_array()

cdef extern from "<time.h>" nogil:
    # C11 wall clock (POSIX and Windows alike)
    struct timespec:
        long tv_sec
        long tv_nsec
    int timespec_get(timespec* ts, int base)
    int TIME_UTC

cdef enum:
    # A column is computed by several threads only when long and costly enough: a parallel
    # region (waking a sleeping thread, on a VM a sleeping vCPU) costs more than a few thousand
    # flops. Work of a kernel value ~ stored values of a row + VALUE_COST (exp, bookkeeping).
    PARALLEL_MIN = 1024
    PARALLEL_WORK = 32768
    VALUE_COST = 8
    # The slower way is tried again after REPROBE long columns, then after twice as many while
    # it keeps losing, at most every REPROBE_MAX.
    REPROBE = 32
    REPROBE_MAX = 4096
    # a column is computed in pieces of this many values (RBF: one vectorized exp per piece)
    PIECE = 256
    # dense rows with fewer features are held feature-major: a row-major dot product of so few
    # values would be mostly the sum across its vector's lanes
    NARROW = 8
    STOP_POLL_COLUMNS = 64  # columns between two looks at the stop flag (working-set products)


cdef inline double wall_seconds() noexcept nogil:
    cdef timespec ts
    timespec_get(&ts, TIME_UTC)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef class KernelCache:
    """KernelCache(X, kind, gamma=0.0, degree=3, coef0=0.0, cache_bytes=100 MiB, n_threads=1,
                   sign=None, rows=None, shift=0.0)

    X is canonical CSR (fastsvm.csr.to_csr). ``rows`` (int, default all rows in order) are the
    rows of X the positions start at: a subproblem's rows are read in place, not copied. For the
    precomputed kernel, column 0 of X holds each row's serial number s (1-based) and
    K(x_i, x_j) = X[i, s_j]. ``sign`` (int8, +-1 per position) makes the columns those of
    Q = diag(sign) K diag(sign). ``shift`` is added to every kernel value: K + shift (the nu-SVM
    of docs/algorithms.md §6 puts its bias in the kernel, k + 1).
    """

    def __cinit__(self, X, str kind, double gamma=0.0, int degree=3, double coef0=0.0,
                  *, Py_ssize_t cache_bytes=100 << 20, int n_threads=1, sign=None, rows=None,
                  double shift=0.0):
        cdef const double[::1] data = X.data
        cdef const int[::1] indices = X.indices
        cdef const int[::1] indptr = X.indptr
        cdef int n_cols = X.shape[1]
        cdef int i
        cdef double[::1] sq
        cdef int[::1] ser
        cdef const int[::1] start
        cdef const signed char[::1] sg
        cdef int k
        cdef double* copy
        if cache_bytes <= 0:
            raise FastSVMError("kernel cache size must be positive")
        if rows is None:
            rows = np.arange(X.shape[0], dtype=np.int32)
        rows = np.ascontiguousarray(rows, dtype=np.int32)
        if rows.ndim != 1 or (rows.size and (rows.min() < 0 or rows.max() >= X.shape[0])):
            raise IndexError("kernel cache rows out of range")
        start = rows
        cdef int n = rows.shape[0]
        cdef Py_ssize_t nnz = np.sum(np.diff(X.indptr)[rows]) if n else 0
        self.n = n
        self.n_threads = max(1, n_threads)
        self.parallel_min = max(<int>PARALLEL_MIN,
                                <int>(PARALLEL_WORK / (nnz / max(n, 1) + <double>VALUE_COST)))
        self.kp = kernel_params(kind, gamma, degree, coef0)
        self.shift = shift
        self.X = csr_view(data, indices, indptr, X.shape[0], n_cols)
        sqnorm = np.empty(n)
        sq = sqnorm
        for i in range(n):
            sq[i] = row_sqnorm(self.X, start[i])
        self.sqnorm = &sq[0] if n > 0 else NULL
        self.serial = NULL
        dense_len = max(n_cols, 1)
        serial = None
        if self.kp.kind == PRECOMPUTED:
            serial = _serial_numbers(X, rows)
            ser = serial
            self.serial = &ser[0] if n > 0 else NULL
            if n > 0:
                dense_len = max(dense_len, int(serial.max()) + 1)
        self._keep = (X.data, X.indices, X.indptr, sqnorm, serial)

        self.rows = <int*>malloc(max(n, 1) * sizeof(int))
        self.dense = <double*>calloc(dense_len, sizeof(double))
        # rows with few, mostly nonzero features are held dense, so that a kernel value is a
        # vectorized dot product: feature-major (feature f of position t at xt[f * n + t]; a piece
        # of a column is then a few passes over four rows at a time) where that takes no more
        # memory than row-major or the rows are too short for one dot product to fill vectors;
        # else row-major, read in place where stored whole in X (all n_cols values, in order)
        self.xt = NULL
        self.xd = NULL
        self.xd_copies = NULL
        self.n_dense_copies = 0
        if (self.kp.kind != PRECOMPUTED and n > 0 and n_cols > 0
                and <double>n * n_cols * sizeof(double) <= <double>nnz * (sizeof(double) + sizeof(int))):
            self.n_dense_copies = np.count_nonzero(np.diff(X.indptr)[rows] != n_cols)
            if n_cols < NARROW or <Py_ssize_t>(n - self.n_dense_copies) * n_cols <= n:
                self.xt = <double*>calloc(<Py_ssize_t>n * n_cols, sizeof(double))
                if self.xt == NULL:
                    raise MemoryError("cannot allocate the kernel cache")
                for i in range(n):
                    for k in range(indptr[start[i]], indptr[start[i] + 1]):
                        self.xt[<Py_ssize_t>indices[k] * n + i] = data[k]
            else:
                self.xd = <const double**>malloc(n * sizeof(double*))
                self.xd_copies = <double*>calloc(max(<Py_ssize_t>self.n_dense_copies * n_cols, 1), sizeof(double))
                if self.xd == NULL or self.xd_copies == NULL:
                    raise MemoryError("cannot allocate the kernel cache")
                copy = self.xd_copies
                for i in range(n):
                    if indptr[start[i] + 1] - indptr[start[i]] == n_cols:
                        self.xd[i] = &data[indptr[start[i]]]
                    else:
                        scatter_row(self.X, start[i], copy)
                        self.xd[i] = copy
                        copy += n_cols
        self.scratch = <double*>malloc(self.n_threads * PIECE * sizeof(double))
        self.data = <float**>calloc(max(n, 1), sizeof(float*))
        self.length = <int*>calloc(max(n, 1), sizeof(int))
        self.lru_prev = <int*>malloc((n + 1) * sizeof(int))
        self.lru_next = <int*>malloc((n + 1) * sizeof(int))
        self.sign = NULL
        if sign is not None:
            self.sign = <signed char*>malloc(max(n, 1) * sizeof(signed char))
        if (self.rows == NULL or self.dense == NULL or self.scratch == NULL or self.data == NULL
                or self.length == NULL or self.lru_prev == NULL or self.lru_next == NULL
                or (sign is not None and self.sign == NULL)):
            raise MemoryError("cannot allocate the kernel cache")
        for i in range(n):
            self.rows[i] = start[i]
        if sign is not None:
            sign = np.ascontiguousarray(sign, dtype=np.int8)
            if sign.shape != (n,) or not np.all(np.abs(sign) == 1):
                raise FastSVMError("kernel cache signs must be +1 or -1, one per row")
            sg = sign
            for i in range(n):
                self.sign[i] = sg[i]
        self.lru_prev[n] = n
        self.lru_next[n] = n
        self.header_bytes = <Py_ssize_t>n * (sizeof(float*) + 3 * sizeof(int))
        self.free_floats = self.floats_within(cache_bytes)
        self.capacity_floats = self.free_floats
        self.peak_floats = 0
        self.n_computed = 0
        self.cost_serial = 0.0
        self.cost_parallel = 0.0
        self.n_long = 0
        self.next_probe = REPROBE
        self.probe_interval = REPROBE
        self.parallel_was_winning = True

    def __dealloc__(self):
        cdef int i
        if self.data != NULL:
            for i in range(self.n):
                free(self.data[i])
        free(self.data)
        free(self.length)
        free(self.lru_prev)
        free(self.lru_next)
        free(self.rows)
        free(self.sign)
        free(self.dense)
        free(self.scratch)
        free(self.xt)
        free(self.xd)
        free(self.xd_copies)

    cdef Py_ssize_t floats_within(self, Py_ssize_t cache_bytes) noexcept:
        # LIBSVM's rule: the bookkeeping counts against the budget, but two full columns always fit
        return max((cache_bytes - self.header_bytes) // <Py_ssize_t>sizeof(float), 2 * <Py_ssize_t>self.n)

    def set_budget(self, Py_ssize_t cache_bytes):
        """A new byte budget, counted as cache_bytes is at construction: when it is smaller than
        what is held, the least recently used columns are dropped until the rest fit. A solver
        lends part of -m this way to the blocks it forms, and takes it back after."""
        cdef Py_ssize_t capacity = self.floats_within(cache_bytes)
        cdef Py_ssize_t used = self.capacity_floats - self.free_floats
        while used > capacity and self.lru_next[self.n] != self.n:
            self.drop(self.lru_next[self.n])
            used = self.capacity_floats - self.free_floats
        self.capacity_floats = capacity
        self.free_floats = capacity - used

    @property
    def held_bytes(self):
        """What the cache holds now, counted as its budget is (bookkeeping included)."""
        return int(self.header_bytes + (self.capacity_floats - self.free_floats) * sizeof(float))

    # ---- LRU list ----

    cdef void unlink(self, int i) noexcept nogil:
        self.lru_next[self.lru_prev[i]] = self.lru_next[i]
        self.lru_prev[self.lru_next[i]] = self.lru_prev[i]

    cdef void append(self, int i) noexcept nogil:
        """Make i the most recently used."""
        cdef int last = self.lru_prev[self.n]
        self.lru_prev[i] = last
        self.lru_next[i] = self.n
        self.lru_next[last] = i
        self.lru_prev[self.n] = i

    cdef void drop(self, int i) noexcept nogil:
        self.unlink(i)
        free(self.data[i])
        self.data[i] = NULL
        self.free_floats += self.length[i]
        self.length[i] = 0

    # ---- columns ----

    cdef bint use_threads(self, int count) noexcept nogil:
        """Threads for a column of count values? Yes when long, unless measurements say that
        one thread is currently faster (other processes holding the cores make every parallel
        region wait for a descheduled thread). Only the speed depends on this choice."""
        cdef bint parallel_wins
        if self.n_threads <= 1 or count < self.parallel_min:
            return False
        self.n_long += 1
        if self.cost_parallel == 0.0:
            return True
        if self.cost_serial == 0.0:
            return False
        parallel_wins = self.cost_parallel <= self.cost_serial
        if parallel_wins != self.parallel_was_winning:
            self.parallel_was_winning = parallel_wins
            self.probe_interval = REPROBE
            self.next_probe = self.n_long + REPROBE
        if self.n_long >= self.next_probe:
            self.probe_interval = min(2 * self.probe_interval, <long long>REPROBE_MAX)
            self.next_probe = self.n_long + self.probe_interval
            return not parallel_wins
        return parallel_wins

    cdef void fill_piece(self, const double* x, double x_sqnorm, signed char s_i, int lo, int hi,
                         double* scratch, float* out) noexcept nogil:
        """out[t] = s_i sign_t k(x, row at t) for t in [lo, hi), at most PIECE values; x is the
        column's row, dense over the columns."""
        cdef int t
        cdef const double* sqnorm = self.sqnorm
        if self.serial != NULL:
            for t in range(lo, hi):
                scratch[t - lo] = x[self.serial[t]]   # x is a row of kernel values
        else:
            if self.xt != NULL:
                dot_cols(x, self.xt + lo, self.n, self.X.n_cols, hi - lo, scratch)
            elif self.xd != NULL:
                dot_rows(x, self.xd + lo, hi - lo, self.X.n_cols, scratch)
            else:
                for t in range(lo, hi):
                    scratch[t - lo] = row_dot(self.X, self.rows[t], x)
            if self.kp.kind == RBF:
                rbf_block(self.kp.gamma, x_sqnorm, sqnorm + lo, scratch, hi - lo)
            else:
                for t in range(lo, hi):
                    scratch[t - lo] = kernel_from_dot(self.kp, scratch[t - lo], x_sqnorm, sqnorm[t])
        if self.shift != 0.0:
            for t in range(lo, hi):
                scratch[t - lo] += self.shift
        store_float(scratch, self.sign + lo if self.sign != NULL else NULL, s_i, out + lo, hi - lo)

    cdef void fill(self, int i, int start, int stop, float* out) noexcept nogil:
        """out[t] = sign_i sign_t k(x_row(i), x_row(t)) for t in [start, stop)."""
        cdef const double* x = self.dense
        cdef double x_sqnorm = self.sqnorm[i]
        cdef signed char s_i = self.sign[i] if self.sign != NULL else 1
        cdef int b, f, lo, pieces = (stop - start + PIECE - 1) // PIECE
        cdef double cost, started = 0.0
        cdef bint probe, threads = self.use_threads(stop - start)
        if self.xt != NULL:
            for f in range(self.X.n_cols):
                self.dense[f] = self.xt[<Py_ssize_t>f * self.n + i]
        elif self.xd != NULL:
            x = self.xd[i]
        else:
            scatter_row(self.X, self.rows[i], self.dense)
        if stop - start >= self.parallel_min:
            started = wall_seconds()
        if threads:
            for b in prange(pieces, num_threads=self.n_threads, schedule="guided"):
                lo = start + b * PIECE
                self.fill_piece(x, x_sqnorm, s_i, lo, min(lo + PIECE, stop),
                                self.scratch + threadid() * PIECE, out)
        else:
            for b in range(pieces):
                lo = start + b * PIECE
                self.fill_piece(x, x_sqnorm, s_i, lo, min(lo + PIECE, stop), self.scratch, out)
        if stop - start >= self.parallel_min and self.n_threads > 1:
            # a probe of the losing way replaces its average, which is as old as the last probe
            cost = (wall_seconds() - started) / (stop - start)
            if threads:
                probe = self.cost_serial != 0.0 and not self.parallel_was_winning
                self.cost_parallel = (cost if self.cost_parallel == 0.0 or probe
                                      else 0.875 * self.cost_parallel + 0.125 * cost)
            else:
                probe = self.cost_parallel != 0.0 and self.parallel_was_winning
                self.cost_serial = cost if self.cost_serial == 0.0 or probe else 0.875 * self.cost_serial + 0.125 * cost
        if self.xt == NULL and self.xd == NULL:
            unscatter_row(self.X, self.rows[i], self.dense)
        self.n_computed += stop - start

    cdef float* column(self, int i, int length) noexcept nogil:
        """Column i, valid on positions [0, length); NULL if memory runs out. The pointer stays
        valid until the next column() or swap() call that needs room (the two most recently
        used columns always fit)."""
        cdef int have = self.length[i]
        cdef float* p = self.reserve(i, length)
        if p != NULL and length > have:
            self.fill(i, have, length, p)
        return p

    cdef float* reserve(self, int i, int length) noexcept nogil:
        """Column i made the most recently used and at least `length` long, its values from the
        old length on left for the caller to fill (column(), or values computed elsewhere);
        NULL if memory runs out. Pointer validity as for column()."""
        cdef int have = self.length[i]
        cdef float* p
        if have > 0:
            self.unlink(i)
        if length > have:
            while self.free_floats < length - have and self.lru_next[self.n] != self.n:
                self.drop(self.lru_next[self.n])
            p = <float*>realloc(self.data[i], length * sizeof(float))
            if p == NULL:
                if have > 0:
                    self.append(i)
                return NULL
            self.data[i] = p
            self.free_floats -= length - have
            self.peak_floats = max(self.peak_floats, self.capacity_floats - self.free_floats)
            self.length[i] = length
        self.append(i)
        return self.data[i]

    cdef void swap(self, int i, int j) noexcept nogil:
        """Exchange positions i and j: their rows, signs, cached columns and the two entries of
        every cached column (a column too short to hold both is dropped)."""
        cdef int h, nxt, lo, hi
        cdef float* d
        cdef double* xt_f
        if i == j:
            return
        if self.length[i] > 0:
            self.unlink(i)
        if self.length[j] > 0:
            self.unlink(j)
        self.data[i], self.data[j] = self.data[j], self.data[i]
        self.length[i], self.length[j] = self.length[j], self.length[i]
        if self.length[i] > 0:
            self.append(i)
        if self.length[j] > 0:
            self.append(j)
        self.rows[i], self.rows[j] = self.rows[j], self.rows[i]
        self.sqnorm[i], self.sqnorm[j] = self.sqnorm[j], self.sqnorm[i]
        if self.xt != NULL:
            for h in range(self.X.n_cols):
                xt_f = self.xt + <Py_ssize_t>h * self.n
                xt_f[i], xt_f[j] = xt_f[j], xt_f[i]
        if self.xd != NULL:
            self.xd[i], self.xd[j] = self.xd[j], self.xd[i]
        if self.serial != NULL:
            self.serial[i], self.serial[j] = self.serial[j], self.serial[i]
        if self.sign != NULL:
            self.sign[i], self.sign[j] = self.sign[j], self.sign[i]
        lo = min(i, j)
        hi = max(i, j)
        h = self.lru_next[self.n]
        while h != self.n:
            nxt = self.lru_next[h]
            if self.length[h] > lo:
                if self.length[h] > hi:
                    d = self.data[h]
                    d[lo], d[hi] = d[hi], d[lo]
                else:
                    self.drop(h)
            h = nxt

    cdef double diagonal(self, int i) noexcept nogil:
        """k(x_row(i), x_row(i)) in double precision (signs cancel)."""
        cdef int r = self.rows[i]
        cdef double v
        if self.serial == NULL:
            return kernel_from_dot(self.kp, self.sqnorm[i], self.sqnorm[i], self.sqnorm[i]) + self.shift
        scatter_row(self.X, r, self.dense)
        v = self.dense[self.serial[i]]
        unscatter_row(self.X, r, self.dense)
        return v + self.shift

    cdef int block(self, const int* idx, int m, double* out) noexcept nogil:
        """out (m x m, row-major) = Q[idx, idx] from full cached columns; -1 if memory runs out."""
        cdef int a, b
        cdef float* col
        for a in range(m):
            col = self.column(idx[a], self.n)
            if col == NULL:
                return -1
            for b in range(m):
                out[<Py_ssize_t>a * m + b] = col[idx[b]]
        return 0

    # ---- Python access (tests, inspection) ----

    def get_column(self, int i, length=None):
        """A copy of column i on positions [0, length) (default: all), as float32."""
        cdef int n_len = self.n if length is None else int(length)
        cdef float* col
        if not 0 <= i < self.n or not 0 <= n_len <= self.n:
            raise IndexError("column or length out of range")
        with nogil:
            col = self.column(i, n_len)
        if col == NULL:
            raise MemoryError("kernel cache: out of memory")
        return np.array(<float[:n_len]>col if n_len > 0 else np.empty(0, np.float32), dtype=np.float32)

    def swap_positions(self, int i, int j):
        if not (0 <= i < self.n and 0 <= j < self.n):
            raise IndexError("position out of range")
        self.swap(i, j)

    def get_block(self, idx):
        """Q[idx][:, idx] as float64 (values rounded through float32 like every cached value)."""
        cdef int[::1] ix = np.ascontiguousarray(idx, dtype=np.int32)
        cdef int m = ix.shape[0]
        cdef double[:, ::1] out = np.empty((m, m))
        cdef int status = 0
        if m and (np.min(ix) < 0 or np.max(ix) >= self.n):
            raise IndexError("position out of range")
        if m:
            with nogil:
                status = self.block(&ix[0], m, &out[0, 0])
        if status != 0:
            raise MemoryError("kernel cache: out of memory")
        return np.asarray(out)

    def get_diagonal(self):
        return np.array([self.diagonal(i) for i in range(self.n)])

    def rows_at_positions(self):
        if self.n == 0:
            return np.empty(0, dtype=np.int64)
        return np.asarray(<int[:self.n]>self.rows).astype(np.int64)

    def cached(self):
        """[(position, cached length)] from least to most recently used."""
        out = []
        cdef int h = self.lru_next[self.n]
        while h != self.n:
            out.append((h, self.length[h]))
            h = self.lru_next[h]
        return out

    # ---- the working set of SSsNAL's kernel front end: positions 0 .. length-1 ----

    def move_to_front(self, const int[::1] rows):
        """Swap positions so that data row rows[t] sits at position t (rows distinct); returns
        the data row of every position (int32). Rows already in place cost nothing."""
        cdef int n = self.n, k = <int>rows.shape[0], t, r, p, q
        if k and (np.min(rows) < 0 or np.max(rows) >= n):
            raise FastSVMError("move_to_front: row out of range")
        if k != np.unique(np.asarray(rows)).shape[0]:
            raise FastSVMError("move_to_front: rows must be distinct")
        cdef int[::1] where = np.empty(max(n, 1), dtype=np.int32)
        cdef int[::1] row_at = np.empty(n, dtype=np.int32)
        with nogil:
            for p in range(n):
                where[self.rows[p]] = p
            for t in range(k):
                r = rows[t]
                p = where[r]
                if p != t:
                    q = self.rows[t]
                    self.swap(t, p)
                    where[r] = t
                    where[q] = p
            for p in range(n):
                row_at[p] = self.rows[p]
        return np.asarray(row_at)

    def axpy_columns(self, const int[::1] positions, const double[::1] coef, int length, double[::1] out,
                     const int[::1] stop):
        """out[t] += sum_j coef[j] K(position t, positions[j]) for t < length, from cached columns
        (computed when missing); columns with coef 0 are skipped. KeyboardInterrupt when stopped."""
        cdef int k = <int>positions.shape[0], j, g = 0
        cdef int status = Status.CONVERGED
        cdef float* col
        cdef const float* group[4]           # cached columns, added four at a time (axpy_float_cols)
        cdef double group_coef[4]
        cdef double cj
        self.check_positions(positions, length)
        if coef.shape[0] != k or out.shape[0] < length:
            raise FastSVMError("axpy_columns: coef must match positions and out cover length")
        with nogil:
            for j in range(k):
                if j % STOP_POLL_COLUMNS == STOP_POLL_COLUMNS - 1 and stop_flag_set(stop):
                    status = Status.INTERRUPTED
                    break
                cj = coef[j]
                if cj == 0.0:
                    continue
                if self.length[positions[j]] >= length:
                    # cached: column() only relinks it, so the pointers held stay valid
                    group[g] = self.column(positions[j], length)
                    group_coef[g] = cj
                    g += 1
                    if g == 4:
                        axpy_float_cols(group, group_coef, g, length, &out[0])
                        g = 0
                    continue
                if g:                        # in column order: the held group first
                    axpy_float_cols(group, group_coef, g, length, &out[0])
                    g = 0
                col = self.column(positions[j], length)
                if col == NULL:
                    status = Status.NO_MEMORY
                    break
                axpy_float_cols(<const float**>&col, &cj, 1, length, &out[0])
            if g and status == Status.CONVERGED:
                axpy_float_cols(group, group_coef, g, length, &out[0])
        _raise_for(status)
        return np.asarray(out)

    def store_columns(self, const int[::1] positions, const double[:, ::1] values, int length):
        """Cache the columns at `positions` on [0, length) from values[j, t] = k(position j,
        position t), kernel values computed elsewhere (KernelProducts.block: many new columns at
        once by the inverted index, on the threads) and rounded to float32 as computed ones are;
        the values a column already held are kept."""
        cdef int k = <int>positions.shape[0], j, t, i, have
        cdef int status = Status.CONVERGED
        cdef float* col
        cdef double s_i
        self.check_positions(positions, length)
        if values.shape[0] != k or (k and values.shape[1] < length):
            raise FastSVMError("store_columns: values must have a row of at least length values per position")
        with nogil:
            for j in range(k):
                i = positions[j]
                have = min(self.length[i], length)
                col = self.reserve(i, length)
                if col == NULL:
                    status = Status.NO_MEMORY
                    break
                if self.sign == NULL:
                    for t in range(have, length):
                        col[t] = <float>(values[j, t] + self.shift)
                else:
                    s_i = self.sign[i]
                    for t in range(have, length):
                        col[t] = <float>(s_i * self.sign[t] * (values[j, t] + self.shift))
                self.n_computed += length - have
        _raise_for(status)

    def cached_mask(self, const int[::1] positions, int length):
        """bool mask: whether the column of each position is cached on [0, length)."""
        cdef int k = <int>positions.shape[0], j
        self.check_positions(positions, self.n)
        out = np.empty(k, dtype=np.uint8)
        cdef unsigned char[::1] out_ = out
        for j in range(k):
            out_[j] = self.length[positions[j]] >= length
        return out.view(bool)

    def columns_block(self, const int[::1] positions, int length, const int[::1] stop):
        """K[positions][:, positions] (float64 from the float32 columns), every position < length."""
        cdef int k = <int>positions.shape[0], a, b
        cdef int status = Status.CONVERGED
        cdef float* col
        self.check_positions(positions, length)
        block = np.empty((k, k))
        cdef double[:, ::1] out = block
        with nogil:
            for a in range(k):
                if a % STOP_POLL_COLUMNS == STOP_POLL_COLUMNS - 1 and stop_flag_set(stop):
                    status = Status.INTERRUPTED
                    break
                col = self.column(positions[a], length)
                if col == NULL:
                    status = Status.NO_MEMORY
                    break
                for b in range(k):
                    out[a, b] = col[positions[b]]
        _raise_for(status)
        return block

    cdef void check_positions(self, const int[::1] positions, int length) except *:
        if not 0 <= length <= self.n:
            raise FastSVMError("column length out of range")
        if not indices_within(positions, length):
            raise FastSVMError("position outside the working set")

    @property
    def dense_rows(self):
        """True when the rows are held dense (few, mostly nonzero features)."""
        return self.xt != NULL or self.xd != NULL

    @property
    def feature_major(self):
        """True when the dense rows are held feature-major."""
        return self.xt != NULL

    @property
    def peak_bytes(self):
        """The most this cache has held at once, counted as its budget is (bookkeeping
        included): the budget with which it would have dropped no column."""
        return int(self.header_bytes + self.peak_floats * sizeof(float))


cdef void _raise_for(int status) except *:
    if status == Status.NO_MEMORY:
        raise MemoryError("kernel cache: out of memory")
    if status == Status.INTERRUPTED:
        raise KeyboardInterrupt


def bytes_to_hold_all(Py_ssize_t n):
    """The budget with which a cache of n positions keeps every full column."""
    return n * (n * sizeof(float) + sizeof(float*) + 3 * sizeof(int))


def _serial_numbers(X, rows):
    """Column 0 of a precomputed-kernel matrix at ``rows`` as int32 serial numbers (1-based):
    a row's first stored value when it is in column 0 (indices are sorted), else 0."""
    serial = np.zeros(rows.size)
    first = X.indptr[rows]
    in_col0 = first < X.indptr[rows + 1]
    in_col0[in_col0] = X.indices[first[in_col0]] == 0
    serial[in_col0] = X.data[first[in_col0]]
    if rows.size and (np.any(serial < 1) or np.any(serial != np.round(serial))
                      or np.any(serial > np.iinfo(np.int32).max)):
        raise FastSVMError("precomputed kernel: column 0 must hold each row's serial number (1, 2, ...)")
    return np.ascontiguousarray(serial, dtype=np.int32)
