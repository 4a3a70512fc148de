# What every linear kernel holds of its training data: X (canonical CSR, or CSC for column sweeps)
# kept alive with views of its three arrays, and per-row arrays checked against its rows.

cdef class Samples:
    cdef object X
    cdef const double[::1] data
    cdef const int[::1] indices
    cdef const int[::1] indptr
    cdef const double[::1] upper      # C_i, one per row
    cdef readonly int n_rows
    cdef readonly int n_cols
    cdef per_row(self, values, dtype)
