# Per-sample losses of the linear primal solvers over margins z_i = y_i (x_i.w + B b), without the
# GIL: the value summed over the samples (in fixed chunks of rows, so the bits do not depend on the
# thread count) and the coefficient of each row in the gradient's X^T product.

cdef enum:
    LOSS_CHUNK = 8192      # rows summed alone before the chunks are added in their order

cdef void smoothed_hinge(const double* z, const double* rho, const double* weight, double mu,
                         Py_ssize_t n, double* alpha, double* sums, int n_threads) noexcept nogil
cdef void squared_error(const double* z, const double* weight, Py_ssize_t n, bint hinged, double* alpha,
                        double* sums, int n_threads) noexcept nogil
cdef double huber(const double* w, Py_ssize_t p, double mu, double* grad) noexcept nogil
cdef void dual_sums(const double* alpha, const double* y, const double* weight, const double* rho, Py_ssize_t n,
                    double* sums, int n_threads) noexcept nogil
