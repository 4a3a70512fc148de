"""The primal L2-regularized squared-hinge SVM (LIBLINEAR -s 2's problem) over CSR, without the GIL:

    f(w) = 1/2 |w|^2 + sum_i C_i max(0, 1 - y_i (x_i.w + B w_b))^2

its gradient, and products with its generalized Hessian I + 2 sum_{i active} C_i x_i x_i^T (rows with
a positive slack at the point of the last gradient). The bias is LIBLINEAR's -B: a constant feature of
value B whose weight w_b is the last entry of w (B = 0 is the bias-free problem). The Newton-CG
iteration itself runs in fastsvm.solvers.primal_newton, one call here per function or mat-vec.
"""
from libc.math cimport isfinite
cimport numpy as cnp
import numpy as np

from ._csr cimport CSR, csr_view, row_dot, row_axpy
from ._samples cimport Samples

cnp.import_array()


cdef double fun_grad(CSR X, const double* y, const double* upper, double B, const double* w,
                     double* coef, double* grad) noexcept nogil:
    """f(w); grad = w + X_B^T coef with coef_i = -2 C_i y_i slack_i (0 off the active rows). coef is
    kept: 2 C_i on the active rows is the Hessian's weight (hess_vec reads |coef| > 0 as active)."""
    cdef int i, j, p = X.n_cols
    cdef double slack, loss = 0.0, reg = 0.0
    for j in range(p + 1):
        grad[j] = w[j]
        reg += w[j] * w[j]
    for i in range(X.n_rows):
        slack = 1.0 - y[i] * (row_dot(X, i, w) + B * w[p])
        if slack > 0.0 and upper[i] > 0.0:
            loss += upper[i] * slack * slack
            coef[i] = -2.0 * upper[i] * y[i] * slack
            row_axpy(X, i, coef[i], grad)
            grad[p] += coef[i] * B
        else:
            coef[i] = 0.0
    return 0.5 * reg + loss


cdef void hess_vec(CSR X, const double* upper, const double* coef, double B, const double* s,
                   double* out) noexcept nogil:
    """out = s + 2 sum_{i active} C_i x_i (x_i.s), x_i with its bias feature."""
    cdef int i, j, p = X.n_cols
    cdef double t
    for j in range(p + 1):
        out[j] = s[j]
    for i in range(X.n_rows):
        if coef[i] != 0.0:
            t = 2.0 * upper[i] * (row_dot(X, i, s) + B * s[p])
            row_axpy(X, i, t, out)
            out[p] += t * B


cdef class SquaredHingePrimal(Samples):
    """f, its gradient and generalized-Hessian products for one binary problem.

    X: canonical CSR; y: +1/-1; upper: C_i >= 0; bias: B (0 for none). Vectors w have
    X.shape[1] + 1 entries, the last one weighing the bias feature. hess_vec uses the active rows
    of the last fun_grad call.
    """
    cdef const double[::1] y
    cdef double[::1] coef
    cdef CSR A
    cdef readonly double bias
    cdef readonly int n_weights

    def __init__(self, X, y, upper, double bias=0.0):
        super().__init__(X, upper)
        self.y = self.per_row(y, np.float64)
        n, p = self.n_rows, self.n_cols
        self.coef = np.zeros(n)
        self.A = csr_view(self.data, self.indices, self.indptr, n, p)
        self.bias = bias
        self.n_weights = p + 1

    def _vector(self, v):
        v = np.ascontiguousarray(v, dtype=np.float64)
        if v.shape != (self.n_weights,):
            raise ValueError(f"vector has shape {v.shape}, expected ({self.n_weights},)")
        return v

    def fun_grad(self, w):
        """(f(w), grad f(w)); f is inf when it overflows."""
        cdef const double[::1] wv = self._vector(w)
        cdef double[::1] grad = np.empty(self.n_weights)
        cdef double f
        cdef const double* yp = &self.y[0] if self.A.n_rows > 0 else NULL
        cdef const double* up = &self.upper[0] if self.A.n_rows > 0 else NULL
        cdef double* cp = &self.coef[0] if self.A.n_rows > 0 else NULL
        with nogil:
            f = fun_grad(self.A, yp, up, self.bias, &wv[0], cp, &grad[0])
        return (f if isfinite(f) else np.inf), np.asarray(grad)

    def hess_vec(self, s):
        """(I + 2 sum_{active} C_i x_i x_i^T) s at the point of the last fun_grad."""
        cdef const double[::1] sv = self._vector(s)
        cdef double[::1] out = np.empty(self.n_weights)
        cdef const double* up = &self.upper[0] if self.A.n_rows > 0 else NULL
        cdef const double* cp = &self.coef[0] if self.A.n_rows > 0 else NULL
        with nogil:
            hess_vec(self.A, up, cp, self.bias, &sv[0], &out[0])
        return np.asarray(out)

    @property
    def dual_coef(self):
        """y_i alpha_i = 2 C_i y_i slack_i at the last fun_grad point: at the optimum w is
        sum_i alpha_i y_i x_i, these alpha being the solution of LIBLINEAR -s 1's dual."""
        return -np.asarray(self.coef)

    @property
    def active(self):
        """Rows with a positive slack at the last fun_grad point."""
        return np.asarray(self.coef) != 0.0
