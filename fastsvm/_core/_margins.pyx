"""A = diag(y) [X, B 1]: the labelled rows of a linear primal problem (docs/algorithms.md §3 and
4), with a bias column of value B (0: none) whose weight is the last entry of every w. Its two
mat-vecs run without the GIL over the threads and give the same bits for any thread count:

    margins  z = A w       rows over the threads, each row alone
    rmatvec  A^T c         fixed row blocks summed in their order (fastsvm._core._csr.rmatvec)

One pass over the stored values each; the primal solvers count their work in these passes.
"""
from cython.parallel cimport prange
from libc.math cimport fabs, sqrt
cimport numpy as cnp
import numpy as np

from ._csr cimport CSR, csr_view, rmatvec, row_axpy, row_blocks, row_dot
from ._samples cimport Samples

from ..errors import FastSVMError

cnp.import_array()

cdef int PARALLEL_ROWS = 4096      # fewer rows than this: one thread


cdef class LabeledRows(Samples):
    """X: canonical CSR; y: +1/-1 per row; upper: C_i >= 0 per row (held for the solvers, unused
    here); bias: B. Vectors of weights have n_cols + 1 entries. Not thread-safe: one per solve."""

    cdef const double[::1] y
    cdef CSR A
    cdef readonly double bias
    cdef readonly int n_threads
    cdef readonly int n_weights
    cdef double[::1] signed      # n doubles: y_i c_i for rmatvec
    cdef double[::1] acc         # the row blocks' accumulators

    def __init__(self, X, y, upper, double bias=1.0, int n_threads=1):
        super().__init__(X, upper)
        self.y = self.per_row(y, np.float64)
        self.A = csr_view(self.data, self.indices, self.indptr, self.n_rows, self.n_cols)
        self.bias = bias
        self.n_threads = max(1, n_threads)
        self.n_weights = self.n_cols + 1
        self.signed = np.zeros(max(self.n_rows, 1))
        self.acc = np.zeros(max(row_blocks(self.n_rows, self.n_cols) * self.n_cols, 1))

    cdef void check(self, Py_ssize_t got, Py_ssize_t want, str what) except *:
        if got != want:
            raise FastSVMError(f"{what} has {got} entries, expected {want}")

    @property
    def labels(self):
        return np.asarray(self.y)

    @property
    def weights(self):
        """C_i per row."""
        return np.asarray(self.upper)

    def margins(self, const double[::1] w, double[::1] out):
        """out = A w: y_i (x_i.w[:p] + B w[p]) for every row."""
        self.check(w.shape[0], self.n_weights, "w")
        self.check(out.shape[0], self.n_rows, "out")
        cdef int i, p = self.n_cols, threads = self.n_threads if self.n_rows >= PARALLEL_ROWS else 1
        cdef double offset = self.bias * w[p]
        if self.n_rows == 0:
            return np.asarray(out)
        with nogil:
            for i in prange(self.A.n_rows, num_threads=threads, schedule="static"):
                out[i] = self.y[i] * (row_dot(self.A, i, &w[0]) + offset)
        return np.asarray(out)

    def rmatvec(self, const double[::1] c, double[::1] out):
        """out = A^T c: sum_i c_i y_i [x_i, B]."""
        self.check(c.shape[0], self.n_rows, "c")
        self.check(out.shape[0], self.n_weights, "out")
        cdef int i, p = self.n_cols, threads = self.n_threads if self.n_rows >= PARALLEL_ROWS else 1
        cdef double total = 0.0
        with nogil:
            for i in prange(self.A.n_rows, num_threads=threads, schedule="static"):
                self.signed[i] = self.y[i] * c[i]
            for i in range(self.A.n_rows):
                total += self.signed[i]
            if self.n_rows > 0 and p > 0:
                rmatvec(self.A, &self.signed[0], &out[0], &self.acc[0], self.n_threads)
            elif p > 0:
                for i in range(p):
                    out[i] = 0.0
            out[p] = self.bias * total
        return np.asarray(out)

    def rows_rmatvec(self, const cnp.int64_t[::1] rows, const double[::1] c, double[::1] out):
        """out = sum_k c_k y_r [x_r, B] over r = rows[k]: a few rows on one thread, reading only
        them; a sixteenth of the rows or more scattered into one threaded rmatvec pass (chosen by
        the count alone, so the bits do not depend on the threads)."""
        self.check(c.shape[0], rows.shape[0], "c")
        self.check(out.shape[0], self.n_weights, "out")
        cdef Py_ssize_t k
        cdef int r, p = self.n_cols
        cdef double[::1] full
        for k in range(rows.shape[0]):
            if not 0 <= rows[k] < self.n_rows:
                raise FastSVMError(f"row {rows[k]} outside the {self.n_rows} rows")
        if rows.shape[0] * 16 >= self.n_rows >= PARALLEL_ROWS:
            full = np.zeros(self.n_rows)
            for k in range(rows.shape[0]):
                full[rows[k]] += c[k]
            return self.rmatvec(full, out)
        with nogil:
            for r in range(p + 1):
                out[r] = 0.0
            for k in range(rows.shape[0]):
                r = <int>rows[k]
                row_axpy(self.A, r, c[k] * self.y[r], &out[0])
                out[p] += c[k] * self.y[r] * self.bias
        return np.asarray(out)

    def row_scales(self):
        """rho_i = |[x_i, B]|_inf: the scale of row i's hinge smoothing (0 for an empty row
        without a bias)."""
        out = np.empty(self.n_rows)
        cdef double[::1] out_ = out
        cdef int i, k
        cdef double top
        with nogil:
            for i in range(self.n_rows):
                top = fabs(self.bias)
                for k in range(self.A.indptr[i], self.A.indptr[i + 1]):
                    top = max(top, fabs(self.A.data[k]))
                out_[i] = top
        return out


def largest_eigenvalue(LabeledRows rows, const double[::1] d, int iterations=30, stop=None):
    """An estimate of lambda_max(A^T D A), D = diag(d) >= 0, by power iteration from a fixed start
    (the same bits every run); it approaches from below, so callers inflate it. 2 passes a step."""
    if d.shape[0] != rows.n_rows:
        raise FastSVMError(f"d has {d.shape[0]} entries, expected {rows.n_rows}")
    v = 1.0 + (np.arange(rows.n_weights) % 7) / 10.0
    v /= sqrt(float(np.einsum("i,i->", v, v)))
    z = np.empty(rows.n_rows)
    out = np.empty(rows.n_weights)
    d_ = np.asarray(d)
    estimate = 0.0
    for _ in range(iterations):
        if stop is not None and stop[0]:
            raise KeyboardInterrupt
        rows.margins(v, z)
        z *= d_
        rows.rmatvec(z, out)
        # not np.linalg.norm: a threaded BLAS call would leave its threads spinning on the cores
        # the next pass's OpenMP threads need
        estimate = sqrt(float(np.einsum("i,i->", out, out)))
        if not np.isfinite(estimate):
            return estimate        # overflowed: the caller says so
        if not estimate > 0:
            return 0.0
        v = out / estimate
    return estimate
