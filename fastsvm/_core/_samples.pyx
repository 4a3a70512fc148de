"""Samples: the base of the linear kernels' classes (DualCD's, SquaredHingePrimal, L1SquaredHingeCD,
CrammerSinger), so the arrays they all hold are taken from X and checked in one place."""
import numpy as np


cdef class Samples:
    """X: canonical CSR (rows are samples) or CSC (columns are features; rows still samples), with
    int32 indices; upper: C_i >= 0 per sample."""

    def __init__(self, X, upper):
        self.n_rows, self.n_cols = X.shape
        self.X = X
        self.data = X.data
        self.indices = X.indices
        self.indptr = X.indptr
        self.upper = self.per_row(upper, np.float64)

    cdef per_row(self, values, dtype):
        """``values`` as a contiguous array of ``dtype`` with one entry per row of X."""
        array = np.ascontiguousarray(values, dtype=dtype)
        if array.ndim != 1 or array.shape[0] != self.n_rows:
            raise ValueError("y and upper must have one entry per row of X")
        return array
