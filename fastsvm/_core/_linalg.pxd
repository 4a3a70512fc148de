# Small dense solves (fastsvm._core._linalg): the nogil Cholesky solve other kernels may call.

cdef bint cholesky_in_place(double[:, ::1] H, double[::1] rhs) noexcept nogil
