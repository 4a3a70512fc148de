"""Two-coordinate steps for the linear nu-SVM and one-class duals (docs/algorithms.md §6), without
the GIL:

    min_alpha  1/2 |Z^T alpha|^2   s.t.  e^T alpha = const,  0 <= alpha_i <= u_i,   z_i = s_i [x_i, B]

(s_i = y_i and B = 1 for the bias-in-kernel nu-SVM, s_i = 1 and B = 0 for one-class). w = Z^T alpha is
kept up to date, so a step on the pair (i, j) along e_i - e_j costs a few passes over rows i and j:
G_i = z_i.w and G_j afresh, z_i.z_j by merging the two rows' sorted indices, and w += t (z_i - z_j).
No single coordinate can move once e^T alpha = const holds (the paper's update stalls there): the
pair moves mass from j, whose gradient is larger, to i.

With shrinking, pair_sweeps works between two full gradients on a working set (the rows a step can
move): sweeps over it, or when it is small SMO on its own Q (second-order pairs, Q's columns
computed as the steps need them, w moved once at the end), so that the full G = Z w -- a pass over
every row, the cost of a sweep -- is computed once per round, not once per handful of pair steps.
"""
from cython.parallel cimport prange
from libc.math cimport fmin, isfinite, INFINITY
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort

from ._csr cimport CSR, csr_view, row_dot, row_axpy
from ._knapsack cimport Keyed, by_key
from ._rng cimport draw_below, rng_state
from ._status cimport CHUNK_DONE, CONVERGED, INTERRUPTED, NONFINITE, stop_requested
from . import _status
from ..errors import FastSVMError

cdef enum:
    POLL_PAIRS = 4096      # pairs between two looks at the stop flag
    PARALLEL_ROWS = 4096   # fewer rows than this: the gradients on one thread
    # a working set of at most this many rows is solved by SMO on its own Q (k^2 doubles at most;
    # the passes read hardly depend on it near this size: tools/bench_srbo.py)
    WS_SMO_ROWS = 128
    # the working set's sweeps stop (every row back) once they have read this many passes over
    # the active rows' stored values: at most that much work between two full gradients
    WS_READ_PASSES = 2

cdef double TAU = 1e-12    # the curvature floor of a step (LIBSVM's tau): rows z_i = z_j still move


cdef void shuffle_ranked(Keyed* items, Py_ssize_t n, uint64_t* state) noexcept nogil:
    """Fisher-Yates over items[0:n]."""
    cdef Py_ssize_t i, j
    cdef Keyed t
    for i in range(n - 1):
        j = i + draw_below(state, <int>(n - i))
        t = items[i]
        items[i] = items[j]
        items[j] = t


cdef inline Py_ssize_t every_row(int* act, const int[::1] active, Py_ssize_t m) noexcept nogil:
    """act[0:m] = active (the working set back to every active row); m."""
    cdef Py_ssize_t k
    for k in range(m):
        act[k] = active[k]
    return m


cdef inline double row_pair_dot(CSR X, int i, int j) noexcept nogil:
    """x_i . x_j by merging the rows' sorted column indices."""
    cdef int a = X.indptr[i], a_end = X.indptr[i + 1], b = X.indptr[j], b_end = X.indptr[j + 1]
    cdef double s = 0.0
    while a < a_end and b < b_end:
        if X.indices[a] == X.indices[b]:
            s += X.data[a] * X.data[b]
            a += 1
            b += 1
        elif X.indices[a] < X.indices[b]:
            a += 1
        else:
            b += 1
    return s


cdef int steps_on_pairs(CSR A, const double* sign, double bias, double* alpha, double* w, const double* upper,
                        const double* sqnorm, const Keyed* up, const Keyed* low, Py_ssize_t m,
                        const int[::1] stop, Py_ssize_t* steps, double* decrease, Py_ssize_t* reads) noexcept nogil:
    """One exact step on each pair (up[k].row, low[k].row) from the current w; a Status. reads +=
    the stored values read: nnz_i + nnz_j for a pair's two gradients, three times that for a step
    (the gradients, z_i.z_j and the two updates of w)."""
    cdef int p = A.n_cols, i, j, nnz_ij
    cdef Py_ssize_t k
    cdef double gi, gj, quad, t, room
    for k in range(m):
        if k % POLL_PAIRS == POLL_PAIRS - 1 and stop_requested(stop):
            return INTERRUPTED
        i, j = up[k].row, low[k].row
        room = fmin(upper[i] - alpha[i], alpha[j])
        if i == j or not room > 0.0:
            continue
        gi = sign[i] * (row_dot(A, i, w) + bias * w[p])
        gj = sign[j] * (row_dot(A, j, w) + bias * w[p])
        nnz_ij = A.indptr[i + 1] - A.indptr[i] + A.indptr[j + 1] - A.indptr[j]
        reads[0] += nnz_ij
        if not gj > gi:
            continue
        reads[0] += 2 * nnz_ij
        quad = sqnorm[i] + sqnorm[j] - 2.0 * sign[i] * sign[j] * (row_pair_dot(A, i, j) + bias * bias)
        if quad < TAU:
            quad = TAU
        t = (gj - gi) / quad
        if not isfinite(t):
            return NONFINITE
        if t >= room:          # a bound reached exactly, not within rounding
            t = room
            alpha[i] = upper[i] if upper[i] - alpha[i] == room else alpha[i] + t
            alpha[j] = 0.0 if alpha[j] == room else alpha[j] - t
        else:
            alpha[i] += t
            alpha[j] -= t
        row_axpy(A, i, t * sign[i], w)
        row_axpy(A, j, -t * sign[j], w)
        w[p] += t * bias * (sign[i] - sign[j])
        decrease[0] += t * (gj - gi) - 0.5 * t * t * quad
        steps[0] += 1
    return CONVERGED


cdef inline double* ws_column(CSR A, const double* sign, double bias, const int* ws, Py_ssize_t k, Py_ssize_t c,
                              double* Q, unsigned char* known, double* dense, Py_ssize_t* reads) noexcept nogil:
    """Column c of the working set's Q, Q_ab = s_a s_b (x_a.x_b + B^2), computed on first use: row
    ws[c] scattered into ``dense`` (zero again after), dotted with every working-set row."""
    cdef double* col = Q + c * k
    cdef int r = ws[c], q
    cdef Py_ssize_t a
    if known[c]:
        return col
    for q in range(A.indptr[r], A.indptr[r + 1]):
        dense[A.indices[q]] = A.data[q]
    for a in range(k):
        col[a] = sign[r] * sign[ws[a]] * (row_dot(A, ws[a], dense) + bias * bias)
        reads[0] += A.indptr[ws[a] + 1] - A.indptr[ws[a]]
    for q in range(A.indptr[r], A.indptr[r + 1]):
        dense[A.indices[q]] = 0.0
    reads[0] += A.indptr[r + 1] - A.indptr[r]
    known[c] = 1
    return col


cdef int working_set_smo(CSR A, const double* sign, double bias, double* alpha, double* w, const double* upper,
                         const double* sqnorm, const int* ws, Py_ssize_t k, const double* G, double* Q,
                         unsigned char* known, double* dense, double* g, double* a0, double tol,
                         Py_ssize_t max_steps, Py_ssize_t* steps, double* decrease, Py_ssize_t* reads) noexcept nogil:
    """SMO on the rows ws[0:k] with every other alpha fixed, from G (current on them): the pair of
    the largest G over a > 0 (j) and, among a < u with G below it, the largest second-order
    decrease (G_j - G_i)^2 / |z_i - z_j|^2 (i; LIBSVM's WSS2), one exact step, G on the set kept
    from Q's columns (k flops a column: reads += 2 k a step), until the set's gap is <= tol or
    max_steps; then w += the moved rows (one row_axpy each). A Status."""
    cdef int p = A.n_cols, r
    cdef Py_ssize_t a, c, i, j
    cdef double top, quad, t, room, gi, gj, d, best, score
    cdef double* Qi
    cdef double* Qj
    for a in range(k):
        g[a] = G[ws[a]]
        a0[a] = alpha[ws[a]]
        known[a] = 0
    for _ in range(max_steps):
        top, j = -INFINITY, -1
        for c in range(k):
            if alpha[ws[c]] > 0.0 and g[c] > top:
                top, j = g[c], c
        if j < 0:
            break
        Qj = ws_column(A, sign, bias, ws, k, j, Q, known, dense, reads)
        best, i = 0.0, -1
        for c in range(k):
            if alpha[ws[c]] < upper[ws[c]] and g[c] < top - tol:
                quad = sqnorm[ws[c]] + Qj[j] - 2.0 * Qj[c]
                if quad < TAU:
                    quad = TAU
                score = (top - g[c]) * (top - g[c]) / quad
                if score > best or i < 0:
                    best, i = score, c
        if i < 0:                      # no G below top - tol on a < u: the set's gap is <= tol
            break
        Qi = ws_column(A, sign, bias, ws, k, i, Q, known, dense, reads)
        gi, gj = g[i], g[j]
        quad = Qi[i] + Qj[j] - 2.0 * Qi[j]
        if quad < TAU:
            quad = TAU
        t = (gj - gi) / quad
        if not isfinite(t):
            return NONFINITE
        room = fmin(upper[ws[i]] - alpha[ws[i]], alpha[ws[j]])
        if t >= room:                  # a bound reached exactly, not within rounding
            t = room
            alpha[ws[i]] = upper[ws[i]] if upper[ws[i]] - alpha[ws[i]] == room else alpha[ws[i]] + t
            alpha[ws[j]] = 0.0 if alpha[ws[j]] == room else alpha[ws[j]] - t
        else:
            alpha[ws[i]] += t
            alpha[ws[j]] -= t
        for c in range(k):
            g[c] += t * (Qi[c] - Qj[c])
        reads[0] += 2 * k
        decrease[0] += t * (gj - gi) - 0.5 * t * t * quad
        steps[0] += 1
    for a in range(k):
        r = ws[a]
        d = alpha[r] - a0[a]
        if d != 0.0:
            row_axpy(A, r, d * sign[r], w)
            w[p] += d * bias * sign[r]
            reads[0] += A.indptr[r + 1] - A.indptr[r]
    return CONVERGED


cdef class PairSteps:
    """What pair_steps did: its Status, the steps taken, the objective's decrease and the stored
    values of X read."""
    cdef readonly object status
    cdef readonly Py_ssize_t steps, reads
    cdef readonly double decrease


cdef class PairSweeps:
    """What pair_sweeps did: its Status, the full sweeps and the working-set rounds taken, the last
    full sweep's gap, the steps taken, the rows the working set left out and the stored values of X
    read."""
    cdef readonly object status
    cdef readonly long sweeps, rounds
    cdef readonly double gap
    cdef readonly Py_ssize_t steps, left_out, reads


def pair_steps(X, const double[::1] sign, double bias, double[::1] alpha, double[::1] w,
               *, const double[::1] upper, const double[::1] sqnorm, const int[::1] up, const int[::1] low,
               const int[::1] stop):
    """For k = 0, 1, ...: one exact step on the pair (up[k], low[k]) from the current w: mass
    moves from low[k] to up[k] when G_low > G_up, as far as the curvature |z_i - z_j|^2 and the
    box allow. alpha and w (n_cols + 1 entries, the last one B's weight) in place; sqnorm[i] =
    |z_i|^2. Returns a PairSteps."""
    cdef Py_ssize_t n = alpha.shape[0]
    if not (sign.shape[0] == upper.shape[0] == sqnorm.shape[0] == n == X.shape[0]):
        raise FastSVMError("pair_steps: sign, alpha, upper and sqnorm need one entry per row")
    if w.shape[0] != X.shape[1] + 1:
        raise FastSVMError(f"pair_steps: w has {w.shape[0]} entries, expected {X.shape[1] + 1}")
    if up.shape[0] != low.shape[0]:
        raise FastSVMError("pair_steps: up and low must pair up")
    cdef const double[::1] data = X.data
    cdef const int[::1] indices = X.indices
    cdef const int[::1] indptr = X.indptr
    cdef CSR A = csr_view(data, indices, indptr, X.shape[0], X.shape[1])
    cdef Py_ssize_t k, m = up.shape[0], steps = 0, reads = 0
    cdef double decrease = 0.0
    cdef int status
    for k in range(m):
        if up[k] < 0 or up[k] >= n or low[k] < 0 or low[k] >= n:
            raise FastSVMError("pair_steps: a pair names a row out of range")
    cdef Keyed* pairs = <Keyed*>malloc(2 * max(m, 1) * sizeof(Keyed))
    if pairs == NULL:
        raise MemoryError("pair_steps: no memory for the pairs")
    for k in range(m):
        pairs[k].row, pairs[m + k].row = up[k], low[k]
    with nogil:
        status = steps_on_pairs(A, &sign[0], bias, &alpha[0], &w[0], &upper[0], &sqnorm[0], pairs, pairs + m, m,
                                stop, &steps, &decrease, &reads)
    free(pairs)
    cdef PairSteps out = PairSteps.__new__(PairSteps)
    out.status, out.steps, out.decrease, out.reads = _status.Status(status), steps, decrease, reads
    return out


def pair_sweeps(X, const double[::1] sign, double bias, double[::1] alpha, double[::1] w, *, const double[::1] upper,
                const double[::1] sqnorm, const int[::1] active, double[::1] G, double tol, long max_sweeps,
                int passes, int n_threads, const int[::1] stop, object seed=None, bint shrinking=False,
                bint g_current=False):
    """Up to max_sweeps sweeps over the rows ``active`` (the others' alpha stays as it is: a reduced
    problem). A sweep computes G = Z w on them and stops (CONVERGED, G current) when
    max_{a_i > 0} G_i - min_{a_i < u_i} G_i <= tol over them; else it ranks the rows that can
    gain -- a_i < u_i with G_i below the largest, by G ascending, and a_j > 0 with G_j above the
    smallest, by G descending -- and takes ``passes`` passes of pair_steps' steps over the k-th of
    one with the k-th of the other (fewer when a pass moves nothing). With a ``seed`` the two lists
    are shuffled instead of ranked (random pairs, LIBLINEAR's cheap way; the same pairs for a
    seed). ``shrinking``: after a sweep the work goes on over its working set, the rows a step
    can move -- all but those at 0 with G above the largest G over a > 0 and those at u with G
    below the smallest over a < u -- by sweeps over the set alone (G computed there only; the set
    shrinks again by the same rule at each), or, once it has at most WS_SMO_ROWS rows, by SMO on
    it (working_set_smo); when the set meets tol, or after SMO, or once the set's sweeps have read
    WS_READ_PASSES passes, every row comes back: the next sweep computes G on all of them and only
    a gap <= tol over all stops. Only sweeps over every row count toward max_sweeps. ``g_current``:
    G is Z w on every active row already (the last look of a chunk): the first sweep starts from
    it. Returns a PairSweeps (its rounds: the sweeps over a set and the SMO runs): CHUNK_DONE
    after max_sweeps; G and the gap are over every active row at every return but an interrupted
    one. The reads (a measure of the work that no load on the machine changes) count nnz_i for each
    G_i computed, pair_steps' and working_set_smo's reads, and the stored values of the rows
    whose Q column SMO computes."""
    cdef Py_ssize_t n = alpha.shape[0]
    if not (sign.shape[0] == upper.shape[0] == sqnorm.shape[0] == G.shape[0] == n == X.shape[0]):
        raise FastSVMError("pair_sweeps: sign, alpha, upper, sqnorm and G need one entry per row")
    cdef Py_ssize_t m = active.shape[0], k
    for k in range(m):
        if active[k] < 0 or active[k] >= n:
            raise FastSVMError("pair_sweeps: an active row out of range")
    if w.shape[0] != X.shape[1] + 1:
        raise FastSVMError(f"pair_sweeps: w has {w.shape[0]} entries, expected {X.shape[1] + 1}")
    cdef const double[::1] data = X.data
    cdef const int[::1] indices = X.indices
    cdef const int[::1] indptr = X.indptr
    cdef CSR A = csr_view(data, indices, indptr, X.shape[0], X.shape[1])
    cdef int p = A.n_cols, threads, i
    cdef Py_ssize_t m_up, m_low, steps = 0, before, m_act = m, left_out = 0, reads = 0, full_reads = 0
    cdef Py_ssize_t ws_reads = 0, ws_max = min(m, <Py_ssize_t>WS_SMO_ROWS) if shrinking else 0
    cdef long sweeps = 0, rounds = 0
    cdef int status = CHUNK_DONE, code = CONVERGED, _pass
    cdef double top, bottom, gap = INFINITY, decrease = 0.0
    cdef Keyed* ranked = <Keyed*>malloc(2 * max(m, 1) * sizeof(Keyed))
    cdef int* act = <int*>malloc(max(m, 1) * sizeof(int))
    # the working set's Q (its columns as SMO needs them), G, start and a scatter row
    cdef double* ws_q = <double*>malloc(max(ws_max * (ws_max + 2), 1) * sizeof(double))
    cdef unsigned char* known = <unsigned char*>malloc(max(ws_max, 1))
    cdef double* dense = <double*>calloc(p + 1, sizeof(double)) if ws_max else NULL
    if ranked == NULL or act == NULL or ws_q == NULL or known == NULL or (ws_max and dense == NULL):
        free(ranked)
        free(act)
        free(ws_q)
        free(known)
        free(dense)
        raise MemoryError("pair_sweeps: no memory for the ranking")
    cdef Keyed* up = ranked
    cdef Keyed* low = ranked + m
    cdef bint shuffled = seed is not None, last_look, full
    cdef uint64_t state = rng_state(seed) if shuffled else 1
    with nogil:
        for k in range(m):
            act[k] = active[k]
            full_reads += A.indptr[active[k] + 1] - A.indptr[active[k]]
        while True:
            if stop_requested(stop):
                status = INTERRUPTED
                break
            # only a sweep over every row may end the call: the last of the chunk, or after the
            # working set met tol
            full = m_act == m
            last_look = full and sweeps >= max_sweeps
            if g_current:                  # the caller's G is Z w on every active row already
                g_current = False
            else:
                threads = n_threads if m_act >= PARALLEL_ROWS and n_threads > 1 else 1
                for k in prange(m_act, num_threads=threads, schedule="static"):
                    G[act[k]] = sign[act[k]] * (row_dot(A, act[k], &w[0]) + bias * w[p])
                for k in range(m_act):
                    reads += A.indptr[act[k] + 1] - A.indptr[act[k]]
            top, bottom = -INFINITY, INFINITY
            for k in range(m_act):
                i = act[k]
                if alpha[i] > 0.0 and G[i] > top:
                    top = G[i]
                if alpha[i] < upper[i] and G[i] < bottom:
                    bottom = G[i]
            gap = top - bottom if top > -INFINITY and bottom < INFINITY else 0.0
            if gap <= tol and not full:    # every row back: the stop is decided over all
                m_act = every_row(act, active, m)
                continue
            if gap <= tol:
                status = CONVERGED
                break
            if last_look:                  # G is current at every return but an interrupted one
                break
            if shrinking:                  # the working set: the rows a step can move now
                left_out = m_act
                m_act = 0
                for k in range(left_out):
                    i = act[k]
                    if not ((alpha[i] <= 0.0 and G[i] > top) or (alpha[i] >= upper[i] and G[i] < bottom)):
                        act[m_act] = i
                        m_act += 1
                left_out = m - m_act
                if full:
                    ws_reads = reads
                elif m_act <= ws_max:      # small: SMO on it, then every row again
                    before = steps
                    code = working_set_smo(A, &sign[0], bias, &alpha[0], &w[0], &upper[0], &sqnorm[0], act, m_act,
                                           &G[0], ws_q, known, dense, ws_q + m_act * m_act,
                                           ws_q + m_act * m_act + m_act, tol,
                                           100 * m_act + WS_READ_PASSES * full_reads // (2 * m_act) + 1, &steps,
                                           &decrease, &reads)
                    rounds += 1
                    if code != CONVERGED:
                        status = code
                        break
                    m_act = every_row(act, active, m)
                    continue
            m_up = m_low = 0
            for k in range(m_act):
                i = act[k]
                if alpha[i] < upper[i] and G[i] < top:
                    up[m_up].key, up[m_up].row = G[i], i
                    m_up += 1
                if alpha[i] > 0.0 and G[i] > bottom:
                    low[m_low].key, low[m_low].row = -G[i], i
                    m_low += 1
            if shuffled:
                shuffle_ranked(up, m_up, &state)
                shuffle_ranked(low, m_low, &state)
            else:
                qsort(up, m_up, sizeof(Keyed), by_key)
                qsort(low, m_low, sizeof(Keyed), by_key)
            for _pass in range(passes):
                before = steps
                code = steps_on_pairs(A, &sign[0], bias, &alpha[0], &w[0], &upper[0], &sqnorm[0], up, low,
                                      min(m_up, m_low), stop, &steps, &decrease, &reads)
                if code != CONVERGED or steps == before:
                    break
            if full:
                sweeps += 1
            else:
                rounds += 1
            if code != CONVERGED:
                status = code
                break
            if not full and reads - ws_reads >= WS_READ_PASSES * full_reads:
                m_act = every_row(act, active, m)   # the set's sweeps have read their share
    free(ranked)
    free(act)
    free(ws_q)
    free(known)
    free(dense)
    cdef PairSweeps out = PairSweeps.__new__(PairSweeps)
    out.status, out.sweeps, out.gap, out.steps = _status.Status(status), sweeps, gap, steps
    out.left_out, out.reads, out.rounds = left_out, reads, rounds
    return out


def held_kkt(X, const double[::1] sign, double bias, const double[::1] alpha, const double[::1] w,
             *, const double[::1] upper, const int[::1] held, double[::1] G, double tol, unsigned char[::1] wrong):
    """The full KKT check after a reduced solve whose G is current on the rows it swept: G_i = z_i.w
    on the rows ``held`` at a bound (alpha_i = 0 or u_i), then top = max_{a_i > 0} G_i and bottom =
    min_{a_i < u_i} G_i over every row, and wrong_i (held rows only; others untouched) when a held
    row breaks KKT: a_i = 0 with G_i < top - tol, or a_i = u_i with G_i > bottom + tol. Returns
    (top, bottom, number wrong); top - bottom is the full problem's gap."""
    cdef Py_ssize_t n = alpha.shape[0], m = held.shape[0], k
    if not (sign.shape[0] == upper.shape[0] == G.shape[0] == wrong.shape[0] == n == X.shape[0]):
        raise FastSVMError("held_kkt: sign, alpha, upper, G and wrong need one entry per row")
    if w.shape[0] != X.shape[1] + 1:
        raise FastSVMError(f"held_kkt: w has {w.shape[0]} entries, expected {X.shape[1] + 1}")
    for k in range(m):
        if held[k] < 0 or held[k] >= n:
            raise FastSVMError("held_kkt: a held row out of range")
    cdef const double[::1] data = X.data
    cdef const int[::1] indices = X.indices
    cdef const int[::1] indptr = X.indptr
    cdef CSR A = csr_view(data, indices, indptr, X.shape[0], X.shape[1])
    cdef int p = A.n_cols, i
    cdef Py_ssize_t n_wrong = 0
    cdef double top = -INFINITY, bottom = INFINITY
    with nogil:
        for k in range(m):
            i = held[k]
            G[i] = sign[i] * (row_dot(A, i, &w[0]) + bias * w[p])
        for k in range(n):
            if alpha[k] > 0.0 and G[k] > top:
                top = G[k]
            if alpha[k] < upper[k] and G[k] < bottom:
                bottom = G[k]
        for k in range(m):
            i = held[k]
            wrong[i] = (alpha[i] <= 0.0 and G[i] < top - tol) or (alpha[i] >= upper[i] and G[i] > bottom + tol)
            n_wrong += wrong[i]
    return top, bottom, n_wrong
