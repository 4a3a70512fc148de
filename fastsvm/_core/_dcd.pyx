"""Dual coordinate descent for linear C-SVC (Hsieh et al. 2008, LIBLINEAR -s 1 / -s 3), without the GIL.

    min_alpha  1/2 alpha^T (Q + D) alpha - e^T alpha   s.t.  0 <= alpha_i <= U_i,   Q_ij = y_i y_j x_i.x_j

L1 loss: U_i = C_i, D_ii = 0; L2 loss: U_i = inf, D_ii = 1/(2 C_i). w = sum_i alpha_i y_i x_i is kept
up to date, so one coordinate step costs two passes over row i. A bias is LIBLINEAR's -B: a constant
feature of value B appended to every row, held as the last entry of w (B = 0 is the bias-free problem).

A run is cut into chunks: `DualCD.run` returns to Python after a number of epochs or a budget of work,
possibly in the middle of an epoch, with the whole state (alpha, w, visiting order, active set,
shrinking thresholds, RNG) kept in the object, so the chunking never changes the result.
"""
from libc.math cimport fabs, fmax, fmin, isfinite, INFINITY
from libc.stdint cimport uint64_t
cimport numpy as cnp
import numpy as np

from ._csr cimport CSR, csr_view, row_dot, row_axpy
from ._rng cimport rng_state, shuffle
from ._samples cimport Samples
from ._status cimport Status, CONVERGED, CHUNK_DONE, MAX_ITER, INTERRUPTED, NONFINITE, stop_flag_set
from . import _status
from ._kernel import row_sqnorms
from ..errors import FastSVMError

cnp.import_array()

cdef extern from *:
    """
    /* Rows are visited in random order: when X is far larger than the caches their values and
       indices are asked for PREFETCH_AHEAD rows ahead (the hardware prefetcher cannot guess the
       next row). */
    static inline void fastsvm_dcd_prefetch_row(const double *data, const int *indices, int lo, int hi) {
        const char *d = (const char *)(data + lo), *d_end = (const char *)(data + hi);
        const char *x = (const char *)(indices + lo), *x_end = (const char *)(indices + hi);
        for (; d < d_end; d += 64) __builtin_prefetch(d, 0, 0);
        for (; x < x_end; x += 64) __builtin_prefetch(x, 0, 0);
    }
    """
    void prefetch_row "fastsvm_dcd_prefetch_row"(const double* data, const int* indices, int lo, int hi) noexcept nogil

cdef enum:
    PREFETCH_AHEAD = 4
    # prefetches pay only on data larger than the caches; on data that fits they are extra work
    # (chosen with tools/bench_dcd.py)
    PREFETCH_MIN_BYTES = 16 << 20


# ---- the sweep ----

cdef struct Problem:
    CSR X
    const double* y       # +1 / -1
    const double* upper   # U_i
    const double* diag    # D_ii
    const double* qd      # x_i.x_i + B^2 + D_ii
    double bias           # B, 0 when there is no bias feature
    bint prefetch         # X's values and indices exceed PREFETCH_MIN_BYTES


cdef struct State:
    double* alpha
    double* w             # X.n_cols + 1 entries, the last one weighs the bias feature
    int* index            # visiting order; index[0:active] is the active set
    int active
    int pos               # next position in index within the current epoch
    bint in_epoch         # an epoch is under way (shuffled, extremes being collected)
    double pg_max_old     # shrinking thresholds from the previous epoch
    double pg_min_old
    double pg_max_new     # extremes of the projected gradient in the current epoch
    double pg_min_new
    double violation      # stopping measure of the last completed epoch
    long epoch            # completed epochs
    uint64_t rng


cdef inline double epoch_violation(double pg_max, double pg_min) noexcept nogil:
    """LIBLINEAR's test: PGmax - PGmin <= eps and |PGmax|, |PGmin| <= eps, as one number. An epoch
    that visited nothing (everything shrunk) saw no violation."""
    if pg_max < pg_min:
        return 0.0
    return fmax(pg_max - pg_min, fmax(fabs(pg_max), fabs(pg_min)))


cdef enum EpochEnd:
    EPOCH_DONE
    OUT_OF_BUDGET
    OVERFLOW


cdef EpochEnd sweep_epoch(const Problem* P, State* S, bint shrinking, long budget, long* work) noexcept nogil:
    """Visit the active coordinates from S.pos to the end of the epoch, or until `work` reaches
    `budget`. The state is worked on in locals (stores through w and alpha cannot then alias it)
    and written back once."""
    cdef CSR X = P.X
    cdef const double* y = P.y
    cdef const double* upper = P.upper
    cdef const double* diag = P.diag
    cdef const double* qd = P.qd
    cdef double B = P.bias
    cdef double* alpha = S.alpha
    cdef double* w = S.w
    cdef int* index = S.index
    cdef int active = S.active, pos = S.pos
    cdef double pg_max = S.pg_max_new, pg_min = S.pg_min_new
    cdef double pg_max_old = S.pg_max_old, pg_min_old = S.pg_min_old
    cdef double w_bias = w[X.n_cols]
    cdef long done = work[0]
    cdef EpochEnd end = EPOCH_DONE
    cdef int i, t
    cdef double G, PG, a_old, a_new, d, U, yi
    while pos < active:
        if done >= budget:
            end = OUT_OF_BUDGET                  # resumes here, in the middle of the epoch
            break
        i = index[pos]
        if P.prefetch and pos + PREFETCH_AHEAD < active:
            t = index[pos + PREFETCH_AHEAD]
            prefetch_row(X.data, X.indices, X.indptr[t], X.indptr[t + 1])
        yi = y[i]
        G = yi * (row_dot(X, i, w) + B * w_bias) - 1.0 + alpha[i] * diag[i]
        done += X.indptr[i + 1] - X.indptr[i] + 1
        if not isfinite(G):
            end = OVERFLOW
            break
        U = upper[i]
        PG = 0.0
        if alpha[i] == 0.0:
            if shrinking and G > pg_max_old:
                active -= 1                      # shrink: the slot is refilled from the end
                t = index[pos]
                index[pos] = index[active]
                index[active] = t
                continue
            if G < 0.0:
                PG = G
        elif alpha[i] == U:
            if shrinking and G < pg_min_old:
                active -= 1
                t = index[pos]
                index[pos] = index[active]
                index[active] = t
                continue
            if G > 0.0:
                PG = G
        else:
            PG = G
        pg_max = fmax(pg_max, PG)
        pg_min = fmin(pg_min, PG)
        if fabs(PG) > 1.0e-12:
            a_old = alpha[i]
            a_new = fmin(fmax(a_old - G / qd[i], 0.0), U)
            alpha[i] = a_new
            d = (a_new - a_old) * yi
            row_axpy(X, i, d, w)
            w_bias += d * B
        pos += 1
    w[X.n_cols] = w_bias
    S.active = active
    S.pos = pos
    S.pg_max_new = pg_max
    S.pg_min_new = pg_min
    work[0] = done
    return end


cdef Status sweep(const Problem* P, State* S, double eps, long max_epochs, long chunk_epochs,
                  long budget, bint shrinking, const int[::1] stop) noexcept nogil:
    """Run epochs until convergence, max_epochs, chunk_epochs epochs in this call, or about
    `budget` units of work (one unit per stored value visited, plus one per coordinate)."""
    cdef long work = 0, epochs_done = 0
    cdef EpochEnd end
    while True:
        if not S.in_epoch:
            if S.epoch >= max_epochs:
                return MAX_ITER
            if stop_flag_set(stop):
                return INTERRUPTED
            shuffle(S.index, S.active, &S.rng)
            S.pg_max_new = -INFINITY
            S.pg_min_new = INFINITY
            S.pos = 0
            S.in_epoch = True
        end = sweep_epoch(P, S, shrinking, budget, &work)
        if end == OUT_OF_BUDGET:
            return CHUNK_DONE
        if end == OVERFLOW:
            return NONFINITE
        S.in_epoch = False
        S.epoch += 1
        epochs_done += 1
        S.violation = epoch_violation(S.pg_max_new, S.pg_min_new)
        if S.violation <= eps:
            if S.active == P.X.n_rows:
                return CONVERGED
            S.active = P.X.n_rows                  # shrunk too early? re-check all before stopping
            S.pg_max_old = INFINITY
            S.pg_min_old = -INFINITY
        else:
            S.pg_max_old = S.pg_max_new if S.pg_max_new > 0.0 else INFINITY
            S.pg_min_old = S.pg_min_new if S.pg_min_new < 0.0 else -INFINITY
        if epochs_done >= chunk_epochs or work >= budget:
            return CHUNK_DONE


cdef class DualCD(Samples):
    """One DCD run on a binary problem: build it, call run() until it returns something other
    than CHUNK_DONE, read alpha and w.

    X: canonical CSR (fastsvm.csr.to_csr); y: +1/-1 (float64); upper: U_i (may be inf); diag: D_ii;
    bias: the value B of the appended constant feature (0 for none); seed: any integer; prefetch:
    whether rows are prefetched ahead of the random visiting order (None: when X exceeds
    PREFETCH_MIN_BYTES); the results are the same either way. alpha: the starting point (a warm
    start, within [0, U]; None: zero), w is built from it.
    """
    cdef const double[::1] y, diag
    cdef double[::1] qd, alpha_, w_
    cdef int[::1] index_
    cdef Problem P
    cdef State S
    cdef readonly bint shrinking

    def __init__(self, X, y, upper, diag, double bias=0.0, *, seed=0, bint shrinking=True, prefetch=None,
                 alpha=None):
        Samples.__init__(self, X, upper)
        n, p = X.shape
        self.y = self.per_row(y, np.float64)
        self.diag = self.per_row(diag, np.float64)
        self.qd = row_sqnorms(X) + bias * bias + np.asarray(self.diag)
        if not np.all(np.isfinite(self.qd)):
            raise FastSVMError("dcd: a squared row norm overflows; scale the data")
        self.alpha_ = np.zeros(n)
        self.w_ = np.zeros(p + 1)
        if alpha is not None:
            self.start_from(alpha, bias)
        self.index_ = np.arange(n, dtype=np.int32)
        self.shrinking = shrinking

        self.P.X = csr_view(self.data, self.indices, self.indptr, n, p)
        self.P.y = &self.y[0] if n > 0 else NULL
        self.P.upper = &self.upper[0] if n > 0 else NULL
        self.P.diag = &self.diag[0] if n > 0 else NULL
        self.P.qd = &self.qd[0] if n > 0 else NULL
        self.P.bias = bias
        if prefetch is None:
            prefetch = X.nnz * (sizeof(double) + sizeof(int)) > PREFETCH_MIN_BYTES
        self.P.prefetch = prefetch

        self.S.alpha = &self.alpha_[0] if n > 0 else NULL
        self.S.w = &self.w_[0]
        self.S.index = &self.index_[0] if n > 0 else NULL
        self.S.active = n
        self.S.pos = 0
        self.S.in_epoch = False
        self.S.pg_max_old = INFINITY
        self.S.pg_min_old = -INFINITY
        self.S.pg_max_new = -INFINITY
        self.S.pg_min_new = INFINITY
        self.S.violation = INFINITY
        self.S.epoch = 0
        self.S.rng = rng_state(seed)

    cdef start_from(self, alpha, double bias):
        """alpha = the given start and w = sum_i alpha_i y_i [x_i, B] (rows in order)."""
        cdef const double[::1] start = np.ascontiguousarray(alpha, dtype=np.float64)
        cdef int i, n = self.alpha_.shape[0]
        cdef double d
        cdef CSR X = csr_view(self.data, self.indices, self.indptr, n, self.w_.shape[0] - 1)
        if start.shape[0] != n:
            raise ValueError("alpha must have one entry per row of X")
        for i in range(n):
            if not (0.0 <= start[i] <= self.upper[i]):
                raise ValueError("alpha must lie within [0, upper]")
            self.alpha_[i] = start[i]
            d = start[i] * self.y[i]
            if d != 0.0:
                row_axpy(X, i, d, &self.w_[0])
                self.w_[X.n_cols] += d * bias

    def run(self, double eps, long max_epochs, long chunk_epochs=10, long budget=1 << 23, stop=None):
        """Continue the run; return a Status. `stop` is an int32[1] array polled at every epoch."""
        cdef const int[::1] flag = np.zeros(1, dtype=np.int32) if stop is None else stop
        cdef Status status
        with nogil:
            status = sweep(&self.P, &self.S, eps, max_epochs, max(chunk_epochs, 1), max(budget, 1),
                           self.shrinking, flag)
        return _status.Status(status)

    @property
    def alpha(self):
        return np.asarray(self.alpha_)

    @property
    def w(self):
        """Weights of the features followed by the weight of the bias feature."""
        return np.asarray(self.w_)

    @property
    def index(self):
        """Visiting order of the current (or last) epoch; its first active_size entries are active."""
        return np.asarray(self.index_)

    @property
    def active_size(self):
        return self.S.active

    @property
    def epoch(self):
        return self.S.epoch

    @property
    def violation(self):
        """max(PGmax - PGmin, |PGmax|, |PGmin|) of the last completed epoch (inf before the first)."""
        return self.S.violation

    @property
    def in_epoch(self):
        """True when the last run() stopped in the middle of an epoch."""
        return self.S.in_epoch
