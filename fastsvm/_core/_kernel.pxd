# Kernel values between CSR rows. Every kernel is a function of the dot product and the two
# squared norms, so one sparse dot product per pair serves all of them.
from libc.math cimport exp

from ._csr cimport CSR

cdef enum KernelKind:
    LINEAR = 0
    POLYNOMIAL = 1
    RBF = 2
    SIGMOID = 3
    PRECOMPUTED = 4

cdef struct KernelParams:
    int kind
    double gamma
    double coef0
    int degree

cdef KernelParams kernel_params(str kind, double gamma, int degree, double coef0) except *

cdef double powi(double base, int times) noexcept nogil

cdef inline double exp_neg_inline(double t) noexcept nogil:
    # exp(-max(t, 0)): rounding can make a squared distance slightly negative; the kernel is at
    # most 1. 0 from 708 on, as exp_neg_block (no denormals). Inline, as a call through the
    # module's C API costs a tenth of an RBF column.
    if t >= 708.0:
        return 0.0
    return exp(-t) if t > 0 else 1.0

cdef inline double kernel_from_dot(KernelParams k, double dot, double sqnorm_x, double sqnorm_z) noexcept nogil:
    if k.kind == RBF:
        return exp_neg_inline(k.gamma * (sqnorm_x + sqnorm_z - 2.0 * dot))
    if k.kind == POLYNOMIAL:
        return powi(k.gamma * dot + k.coef0, k.degree)
    if k.kind == SIGMOID:
        return tanh_(k.gamma * dot + k.coef0)
    return dot

cdef extern from "_vectorized.h":
    # v[i] = exp(-max(v[i], 0)) over a block, vectorized: RBF kernel values in bulk
    void exp_neg_block "fastsvm_exp_neg_block"(double* v, int n) noexcept nogil
    # v[t] = scale cos v[t], sin_out[t] = scale sin v[t] (sin_out may be NULL), |v[t]| <= SINCOS_MAX
    double SINCOS_MAX "FASTSVM_SINCOS_MAX"
    void cos_sin_block "fastsvm_cos_sin_block"(double* v, double* sin_out, double scale, int n) noexcept nogil
    # out[t] = x . row t in a fixed order (the same bits for any thread count), rows held
    # row-major (a pointer each) or feature-major (feature f of row t at cols[f * stride + t])
    void dot_rows "fastsvm_dot_rows"(const double* x, const double** rows, int count, int n,
                                     double* out) noexcept nogil
    # out[t] += sum_j c[j] cols[j][t] over k <= 4 float32 columns, in order
    void axpy_float_cols "fastsvm_axpy_float_cols"(const float** cols, const double* c, int k, int n,
                                                   double* out) noexcept nogil
    # out[t] = sum_j v[j] cols[slot[j] * stride + t] (a sparse row's features held densely)
    void dot_slots "fastsvm_dot_slots"(const double* v, const int* slot, int k, const double* cols,
                                       Py_ssize_t stride, int count, double* out) noexcept nogil
    # the same over float32 columns (values float32 holds exactly), summed in double
    void dot_slots_f32 "fastsvm_dot_slots_f32"(const double* v, const int* slot, int k, const float* cols,
                                               Py_ssize_t stride, int count, double* out) noexcept nogil
    # out[t] = sum_j cols[slot[j] * stride + t] over 0/1 byte columns (binary rows and columns)
    void count_slots "fastsvm_count_slots"(const int* slot, int k, const unsigned char* cols, Py_ssize_t stride,
                                           int count, double* out) noexcept nogil
    # out[j] = sum_k data[k] wt[indices[k] * stride + j], j < g: a CSR row against g rows held
    # feature-major; _exact: no FMA (span_dot's bits)
    void sparse_row_dots "fastsvm_sparse_row_dots"(const double* data, const int* indices, int lo, int hi,
                                                   const double* wt, Py_ssize_t stride, int g,
                                                   double* out) noexcept nogil
    void sparse_row_dots_exact "fastsvm_sparse_row_dots_exact"(const double* data, const int* indices, int lo,
                                                               int hi, const double* wt, Py_ssize_t stride, int g,
                                                               double* out) noexcept nogil
    # sum_t c[t] k[t] in a fixed order of 32 lanes (the same bits everywhere)
    double weighted_sum "fastsvm_weighted_sum"(const double* c, const double* k, int n) noexcept nogil
    # out[j][i0 + r] = float32 of tile[r * gs + j], r < nr, j < g (a tile of kernel values stored by row)
    void store_transposed "fastsvm_store_transposed"(const double* tile, int gs, int nr, int g, float** out,
                                                     int i0) noexcept nogil
    void dot_cols "fastsvm_dot_cols"(const double* x, const double* cols, Py_ssize_t stride, int p,
                                     int count, double* out) noexcept nogil
    # v[t] = exp(-gamma (xsq + sq[t] - 2 v[t])); out[t] = float32 of v[t], negated where sign[t] != s
    void rbf_block "fastsvm_rbf_block"(double gamma, double xsq, const double* sq, double* v,
                                       int n) noexcept nogil
    # v[t] = table[xsq + sq[t] - 2 v[t]] (binary rows: integer squared distances, table[k] = exp(-gamma k))
    void rbf_table_block "fastsvm_rbf_table_block"(const double* table, double xsq, const double* sq, double* v,
                                                   int n) noexcept nogil
    void store_float "fastsvm_store_float"(const double* v, const signed char* sign, signed char s,
                                           float* out, int n) noexcept nogil
    # out[t] = col[index[t]], negated where sign[t] != s
    void gather_signed "fastsvm_gather_signed"(const float* col, const int* index,
                                               const signed char* sign, signed char s, float* out,
                                               int n) noexcept nogil

cdef double exp_neg(double t) noexcept nogil   # exp_neg_inline, kept exported for built modules
cdef double tanh_(double t) noexcept nogil

cdef void kernel_row(KernelParams k, CSR Z, const double* z_sqnorm, const double* x_dense,
                     double x_sqnorm, double* out, int n_threads) noexcept nogil

cdef void scatter_row(CSR X, int i, double* dense) noexcept nogil
cdef void unscatter_row(CSR X, int i, double* dense) noexcept nogil
