"""Coordinate descent with one-variable Newton steps (CDN; Yuan, Chang, Hsieh, Lin 2010) for the
L1-regularized squared-hinge SVM (LIBLINEAR -s 5's problem), over CSC columns, without the GIL:

    min_w |w|_1 + sum_i C_i max(0, b_i)^2,   b_i = 1 - y_i x_i.w.

The bias, when there is one, is a column of X (the caller appends it). b is kept up to date, so a
coordinate step costs passes over column j only: the loss' derivative G and generalized second
derivative H along e_j, the Newton direction of the piecewise-quadratic model G d + H d^2 / 2 +
|w_j + d|, and a backtracking (Armijo) search on the true objective along it.
"""
from libc.math cimport fabs, fmax
cimport numpy as cnp
import numpy as np

from ._samples cimport Samples

cnp.import_array()

cdef const double ARMIJO = 0.01       # sufficient decrease, relative to the model's predicted decrease
cdef const double H_FLOOR = 1.0e-12   # a column with no active row still gets a finite Newton step
cdef enum:
    MAX_HALVINGS = 20


cdef struct Columns:
    const double* data
    const int* indices
    const int* indptr     # column j's rows are indices[indptr[j]:indptr[j + 1]]
    int n_cols


cdef inline void derivatives(Columns X, int j, const double* y, const double* upper, const double* b,
                             double* G, double* H) noexcept nogil:
    """The loss' first and generalized second derivative along e_j."""
    cdef int k, i
    cdef double g = 0.0, h = 0.0, v
    for k in range(X.indptr[j], X.indptr[j + 1]):
        i = X.indices[k]
        if b[i] > 0.0:
            v = X.data[k]
            g -= 2.0 * upper[i] * y[i] * v * b[i]
            h += 2.0 * upper[i] * v * v
    G[0] = g
    H[0] = fmax(h, H_FLOOR)


cdef inline double violation(double G, double wj) noexcept nogil:
    """|min-norm subgradient| of |w_j| + loss along e_j."""
    if wj > 0.0:
        return fabs(G + 1.0)
    if wj < 0.0:
        return fabs(G - 1.0)
    if G + 1.0 < 0.0:
        return -(G + 1.0)
    if G - 1.0 > 0.0:
        return G - 1.0
    return 0.0


cdef inline double newton_direction(double G, double H, double wj) noexcept nogil:
    """argmin_d G d + H d^2 / 2 + |w_j + d|."""
    if G + 1.0 <= H * wj:
        return -(G + 1.0) / H
    if G - 1.0 >= H * wj:
        return -(G - 1.0) / H
    return -wj


cdef double cdn_step(Columns X, int j, const double* y, const double* upper, const double* curvature,
                     double* b, double* w, double* viol) noexcept nogil:
    """One CDN step on w_j (b follows); returns the change of w_j (0 when the search fails).
    curvature[j] = 2 sum_i C_i x_ij^2 bounds the loss' second derivative along e_j everywhere."""
    cdef double G, H, d, lam, decrease, change, b_new, shift
    cdef int k, i, _halving
    derivatives(X, j, y, upper, b, &G, &H)
    viol[0] = violation(G, w[j])
    d = newton_direction(G, H, w[j])
    if d == 0.0:          # no absolute floor on d: a feature of large scale takes tiny steps
        return 0.0
    decrease = G * d + fabs(w[j] + d) - fabs(w[j])   # < 0: the model's predicted change
    lam = 1.0
    for _halving in range(MAX_HALVINGS):
        change = fabs(w[j] + lam * d) - fabs(w[j])
        # the quadratic upper bound of the loss accepts most steps without a pass over column j
        if change + lam * d * G + 0.5 * curvature[j] * lam * lam * d * d <= ARMIJO * lam * decrease:
            break
        for k in range(X.indptr[j], X.indptr[j + 1]):
            i = X.indices[k]
            shift = -lam * d * y[i] * X.data[k]
            b_new = b[i] + shift
            if b_new > 0.0 and b[i] > 0.0:
                change += upper[i] * shift * (b_new + b[i])   # no cancellation in b_new^2 - b^2
            else:
                change += upper[i] * (fmax(b_new, 0.0) * fmax(b_new, 0.0) - fmax(b[i], 0.0) * fmax(b[i], 0.0))
        if change <= ARMIJO * lam * decrease:
            break
        lam *= 0.5
    else:
        return 0.0
    d *= lam
    for k in range(X.indptr[j], X.indptr[j + 1]):
        b[X.indices[k]] -= d * y[X.indices[k]] * X.data[k]
    w[j] += d
    return d


cdef class L1SquaredHingeCD(Samples):
    """CDN state for one binary problem: X canonical CSC (its last column the bias feature when
    there is one), y +1/-1, upper C_i >= 0. epoch(order) runs one pass over the columns in order."""
    cdef const double[::1] y
    cdef double[::1] w_, b_, curvature
    cdef Columns cols

    def __init__(self, X, y, upper):
        super().__init__(X, upper)
        self.y = self.per_row(y, np.float64)
        n, p = self.n_rows, self.n_cols
        self.w_ = np.zeros(p)
        sq = X.copy()
        sq.data = np.asarray(X.data) ** 2
        self.curvature = 2.0 * np.asarray(sq.T @ self.upper, dtype=np.float64).ravel()
        self.b_ = np.ones(n)
        self.cols.data = &self.data[0] if self.data.shape[0] > 0 else NULL
        self.cols.indices = &self.indices[0] if self.indices.shape[0] > 0 else NULL
        self.cols.indptr = &self.indptr[0]
        self.cols.n_cols = p

    def epoch(self, const int[::1] order):
        """One pass over the columns in `order`; returns (sum, max) of the violations met."""
        cdef double total = 0.0, largest = 0.0, v
        cdef Py_ssize_t t
        cdef int j
        cdef const double* yp = &self.y[0] if self.y.shape[0] > 0 else NULL
        cdef const double* up = &self.upper[0] if self.y.shape[0] > 0 else NULL
        cdef double* bp = &self.b_[0] if self.y.shape[0] > 0 else NULL
        for t in range(order.shape[0]):
            if not 0 <= order[t] < self.cols.n_cols:
                raise ValueError("column index out of range")
        with nogil:
            for t in range(order.shape[0]):
                j = order[t]
                cdn_step(self.cols, j, yp, up, &self.curvature[0], bp, &self.w_[0], &v)
                total += v
                largest = fmax(largest, v)
        return total, largest

    def step(self, int j):
        """One CDN step on w_j; returns (change of w_j, violation before it)."""
        cdef double v, d
        if not 0 <= j < self.cols.n_cols:
            raise ValueError("column index out of range")
        d = cdn_step(self.cols, j, &self.y[0], &self.upper[0], &self.curvature[0], &self.b_[0],
                     &self.w_[0], &v)
        return d, v

    def violations(self):
        """|min-norm subgradient| of the objective, per weight, at the current w."""
        cdef double[::1] out = np.empty(self.cols.n_cols)
        cdef double G, H
        cdef int j
        cdef const double* yp = &self.y[0] if self.y.shape[0] > 0 else NULL
        cdef const double* up = &self.upper[0] if self.y.shape[0] > 0 else NULL
        cdef const double* bp = &self.b_[0] if self.y.shape[0] > 0 else NULL
        with nogil:
            for j in range(self.cols.n_cols):
                derivatives(self.cols, j, yp, up, bp, &G, &H)
                out[j] = violation(G, self.w_[j])
        return np.asarray(out)

    @property
    def w(self):
        return np.asarray(self.w_)

    @property
    def b(self):
        """1 - y_i x_i.w per row."""
        return np.asarray(self.b_)
