"""The sequential dual method (Keerthi, Sundararajan, Chang, Hsieh, Lin, KDD 2008) for the
Crammer-Singer multi-class SVM (LIBLINEAR -s 4's problem), over CSR rows, without the GIL.

Dual, with e_i^m = 0 if m = y_i else 1, C_i^m = C_i if m = y_i else 0 and w_m = sum_i alpha_i^m x_i:

    min 1/2 sum_m |w_m|^2 + sum_i sum_m e_i^m alpha_i^m   s.t.  sum_m alpha_i^m = 0,  alpha_i^m <= C_i^m.

A visit of sample i minimizes over its k variables alone (A = |x_i|^2):
    min 1/2 A sum_m (alpha^m)^2 + sum_m b_m alpha^m,  b_m = G_m - A alpha_i^m,  G_m = w_m.x_i + e_i^m,
whose solution is alpha^m = (min(beta, b_m + A C^m) - b_m) / A with beta the root of the increasing
piecewise-linear sum_m min(beta, b_m + A C^m) = sum_m b_m. A bias B is a constant feature whose
weights (one per class) are the last row of W. W is held feature-major: W[j, m].
"""
from libc.math cimport fmax, fmin, INFINITY
cimport numpy as cnp
import numpy as np

from ._csr cimport CSR, csr_view
from ._samples cimport Samples
from ._kernel import row_sqnorms

cnp.import_array()

cdef const double SKIP_BELOW = 1.0e-12   # a sample whose violation is below this is left as it is


cdef void solve_subproblem(int k, double A, const double* b, const double* upper, double* alpha,
                           double* sorted_bound) noexcept nogil:
    """alpha = argmin 1/2 A |alpha|^2 + b.alpha s.t. sum alpha = 0, alpha <= upper (A > 0,
    sum upper >= 0). sorted_bound: k doubles of scratch."""
    cdef int m, r, s
    cdef double total = 0.0, tail = 0.0, beta, t
    for m in range(k):
        total += b[m]
        sorted_bound[m] = b[m] + A * upper[m]
    for m in range(1, k):                       # insertion sort, descending (k is small)
        t = sorted_bound[m]
        s = m - 1
        while s >= 0 and sorted_bound[s] < t:
            sorted_bound[s + 1] = sorted_bound[s]
            s -= 1
        sorted_bound[s + 1] = t
    for m in range(1, k):
        tail += sorted_bound[m]
    # the r largest bounds are cut at beta, the rest kept: beta = (total - sum of the rest) / r
    beta = total - tail
    r = 1
    while r < k and beta < sorted_bound[r] * r:
        tail -= sorted_bound[r]
        r += 1
        beta = total - tail
    beta /= r
    for m in range(k):
        # at the bound exactly, not (b + A C - b) / A rounded: the KKT test tells bound from free
        alpha[m] = upper[m] if beta >= b[m] + A * upper[m] else (beta - b[m]) / A


cdef inline double sample_violation(int k, const double* G, const double* alpha, double upper_y,
                                    int y) noexcept nogil:
    """max_m G_m - min over alpha^m below its bound of G_m (0 at a KKT point)."""
    cdef int m
    cdef double top = -INFINITY, low = INFINITY
    for m in range(k):
        top = fmax(top, G[m])
        if alpha[m] < (upper_y if m == y else 0.0):
            low = fmin(low, G[m])
    return top - low if low < INFINITY else 0.0


cdef struct Problem:
    CSR X
    const int* y          # class codes 0..k-1
    const double* upper   # C_i
    const double* sqnorm  # |x_i|^2 + B^2
    double bias
    int k


cdef void gradient(const Problem* P, const double* W, int i, double* G) noexcept nogil:
    """G_m = w_m.x_i + e_i^m."""
    cdef int m, t, j, k = P.k
    cdef double v
    for m in range(k):
        G[m] = 0.0 if m == P.y[i] else 1.0
    for t in range(P.X.indptr[i], P.X.indptr[i + 1]):
        j = P.X.indices[t]
        v = P.X.data[t]
        for m in range(k):
            G[m] += W[<Py_ssize_t>j * k + m] * v
    for m in range(k):
        G[m] += W[<Py_ssize_t>P.X.n_cols * k + m] * P.bias


cdef double sweep(const Problem* P, double* W, double* alpha, const int* order, int n_order,
                  double* scratch) noexcept nogil:
    """Visit the samples in order; return the largest violation met (before each visit).
    scratch: 4 k doubles."""
    cdef int k = P.k, m, t, i, j, pos
    cdef double* G = scratch
    cdef double* b = scratch + k
    cdef double* new_alpha = scratch + 2 * k
    cdef double* bound = scratch + 3 * k
    cdef double* a
    cdef double A, viol, largest = 0.0
    for pos in range(n_order):
        i = order[pos]
        A = P.sqnorm[i]
        if A <= 0.0:
            continue                           # x_i = 0: w does not depend on alpha_i
        a = alpha + <Py_ssize_t>i * k
        gradient(P, W, i, G)
        viol = sample_violation(k, G, a, P.upper[i], P.y[i])
        largest = fmax(largest, viol)
        if viol <= SKIP_BELOW:
            continue
        for m in range(k):
            b[m] = G[m] - A * a[m]
            bound[m] = 0.0
        bound[P.y[i]] = P.upper[i]
        solve_subproblem(k, A, b, bound, new_alpha, G)     # G is free now: the sort's scratch
        for m in range(k):
            b[m] = new_alpha[m] - a[m]                     # b now holds the change of alpha_i
            a[m] = new_alpha[m]
        for t in range(P.X.indptr[i], P.X.indptr[i + 1]):
            j = P.X.indices[t]
            for m in range(k):
                W[<Py_ssize_t>j * k + m] += b[m] * P.X.data[t]
        for m in range(k):
            W[<Py_ssize_t>P.X.n_cols * k + m] += b[m] * P.bias
    return largest


cdef double max_violation(const Problem* P, const double* W, const double* alpha, double* G) noexcept nogil:
    """The largest sample violation at the current (W, alpha), without moving. G: k doubles."""
    cdef int i
    cdef double largest = 0.0
    for i in range(P.X.n_rows):
        if P.sqnorm[i] > 0.0:
            gradient(P, W, i, G)
            largest = fmax(largest, sample_violation(P.k, G, alpha + <Py_ssize_t>i * P.k,
                                                     P.upper[i], P.y[i]))
    return largest


def subproblem(double A, b, upper):
    """The per-sample solve, for tests: argmin 1/2 A |a|^2 + b.a s.t. sum a = 0, a <= upper."""
    cdef const double[::1] bv = np.ascontiguousarray(b, dtype=np.float64)
    cdef const double[::1] uv = np.ascontiguousarray(upper, dtype=np.float64)
    cdef int k = bv.shape[0]
    if uv.shape[0] != k or k < 1:
        raise ValueError("b and upper must have the same positive length")
    if not A > 0 or not np.sum(uv) >= 0:
        raise ValueError("need A > 0 and sum(upper) >= 0")
    cdef double[::1] out = np.empty(k)
    cdef double[::1] scratch = np.empty(k)
    with nogil:
        solve_subproblem(k, A, &bv[0], &uv[0], &out[0], &scratch[0])
    return np.asarray(out)


cdef class CrammerSinger(Samples):
    """Sequential dual method state: X canonical CSR, y class codes 0..k-1, upper C_i >= 0, bias B
    (0 for none). epoch(order) visits the samples in order."""
    cdef const int[::1] y
    cdef double[::1] sqnorm, W_, alpha_, scratch
    cdef Problem P

    def __init__(self, X, y, upper, int n_classes, double bias=0.0):
        super().__init__(X, upper)
        self.y = self.per_row(y, np.int32)
        n, p = self.n_rows, self.n_cols
        if n_classes < 1 or (n > 0 and not (0 <= np.min(self.y) and np.max(self.y) < n_classes)):
            raise ValueError("class codes must lie in [0, n_classes)")
        self.P.X = csr_view(self.data, self.indices, self.indptr, n, p)
        self.sqnorm = row_sqnorms(X) + bias * bias
        self.W_ = np.zeros((p + 1) * n_classes)
        self.alpha_ = np.zeros(max(n, 1) * n_classes)
        self.scratch = np.empty(4 * n_classes)
        self.P.y = &self.y[0] if n > 0 else NULL
        self.P.upper = &self.upper[0] if n > 0 else NULL
        self.P.sqnorm = &self.sqnorm[0] if n > 0 else NULL
        self.P.bias = bias
        self.P.k = n_classes

    def epoch(self, const int[::1] order):
        """One pass over the samples in `order`; returns the largest violation met."""
        cdef double largest
        if order.shape[0] and not (0 <= np.min(order) and np.max(order) < self.P.X.n_rows):
            raise ValueError("sample index out of range")
        with nogil:
            largest = sweep(&self.P, &self.W_[0], &self.alpha_[0], &order[0] if order.shape[0] else NULL,
                            order.shape[0], &self.scratch[0])
        return largest

    def violation(self):
        """The largest sample violation at the current point."""
        cdef double largest
        with nogil:
            largest = max_violation(&self.P, &self.W_[0], &self.alpha_[0], &self.scratch[0])
        return largest

    @property
    def W(self):
        """(n_features + 1, k): w_m in column m, the bias feature's weights in the last row."""
        return np.asarray(self.W_).reshape(-1, self.P.k)

    @property
    def alpha(self):
        """(n_samples, k)."""
        return np.asarray(self.alpha_)[:self.P.X.n_rows * self.P.k].reshape(-1, self.P.k)
