# Projection onto K = {x : a^T x = d, l <= x <= u} (docs/algorithms.md §1) and its HS-Jacobian.
# x(lam) = clip(v - lam a, l, u); the root of g(lam) = a^T x(lam) - d is found by a break-point
# search with selection (expected O(m), no sort), optionally narrowed first from a hint.

cdef enum KnapsackStatus:
    KNAPSACK_OK = 0
    KNAPSACK_INFEASIBLE = 1     # d outside the range of a^T x over the box
    KNAPSACK_BAD_BOUNDS = 2     # l_i > u_i, or a NaN in the input

cdef struct Knapsack:
    const double* a
    const double* lower
    const double* upper
    double d
    int m
    bint unit                   # every a_i is +1 or -1: break points without divisions
    int n_threads               # for the passes over all coordinates

cdef struct KnapsackScratch:
    double* breaks              # 2 m doubles
    int* work                   # m ints

cdef int knapsack_check(Knapsack K) noexcept nogil

cdef int knapsack_project(Knapsack K, const double* v, double lam_hint, double* x, double* lam,
                          int* free_idx, int* n_free, KnapsackScratch S) noexcept nogil

cdef double select_kth(double* arr, Py_ssize_t n, Py_ssize_t k) noexcept nogil

# a row and its key, for ranking rows by qsort with by_key
cdef struct Keyed:
    double key
    Py_ssize_t row

cdef inline int by_key(const void* a, const void* b) noexcept nogil:
    """Ascending key, ties by row (a total order: the same ranking on every platform)."""
    cdef const Keyed* x = <const Keyed*>a
    cdef const Keyed* y = <const Keyed*>b
    if x.key < y.key:
        return -1
    if x.key > y.key:
        return 1
    return (x.row > y.row) - (x.row < y.row)

cdef void hs_jacobian_free(const double* a_free, int n_free, double* r) noexcept nogil


cdef class KnapsackSet:
    """K with its scratch space, checked once, for repeated projections (not thread-safe)."""
    cdef Knapsack K
    cdef KnapsackScratch S
    cdef readonly object a, lower, upper
    cdef double[::1] _breaks
    cdef int[::1] _work
