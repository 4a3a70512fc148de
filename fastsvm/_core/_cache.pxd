# Kernel columns on demand, kept in a least-recently-used cache bounded by a byte budget.
#
# Column i holds K(row(i), row(t)) for positions t in [0, length), times sign(i) sign(t) when
# signs are given (Q = diag(y) K diag(y) for classification). Positions start as the given data
# rows (default: all, in order) and can be permuted with swap() (SMO's shrinking moves the
# active set to the front), so a column only needs computing up to the active size. Values
# are stored as float32, as LIBSVM stores them: twice the columns fit in the budget.
cimport cython
from ._csr cimport CSR
from ._kernel cimport KernelParams


@cython.final
cdef class KernelCache:
    cdef readonly int n               # positions (= columns that can be cached)
    cdef readonly int n_threads
    cdef readonly int parallel_min   # columns at least this long may be computed by threads
    cdef KernelParams kp
    cdef double shift                 # added to every kernel value
    cdef CSR X
    cdef object _keep                 # the arrays the raw pointers below point into
    cdef double* sqnorm               # position -> |x|^2 of its row
    cdef int* serial                  # precomputed: position -> column of X holding K(., x); else NULL
    cdef int* rows                    # position -> data row
    cdef signed char* sign            # position -> +1 / -1, or NULL (all +1)
    cdef double* dense                # the row being expanded, scattered
    cdef double* scratch              # PIECE values per thread: a piece of a column before float32
    # dense rows (else both NULL): feature-major, feature f of position t at xt[f * n + t], or
    # row-major, xd[t] pointing into X (a row stored whole) or into xd_copies
    cdef double* xt
    cdef const double** xd
    cdef double* xd_copies
    cdef readonly int n_dense_copies  # rows not stored whole in X (copied, either way)
    # LRU storage: a circular doubly linked list over positions, sentinel n, oldest first
    cdef float** data
    cdef int* length
    cdef int* lru_prev
    cdef int* lru_next
    cdef Py_ssize_t free_floats
    cdef Py_ssize_t capacity_floats  # free_floats when empty
    cdef Py_ssize_t header_bytes      # the LRU bookkeeping, counted against the budget
    cdef Py_ssize_t peak_floats       # most column values held at once
    cdef readonly long long n_computed  # kernel values computed so far (statistics)
    # seconds per kernel value of long columns computed by one thread and by n_threads
    # (moving averages): a busy machine can make a parallel region slower than one thread
    cdef readonly double cost_serial
    cdef readonly double cost_parallel
    cdef long long n_long
    cdef long long next_probe         # when to try the slower way again (interval doubles)
    cdef long long probe_interval
    cdef bint parallel_was_winning

    cdef void unlink(self, int i) noexcept nogil
    cdef void append(self, int i) noexcept nogil
    cdef void drop(self, int i) noexcept nogil
    cdef Py_ssize_t floats_within(self, Py_ssize_t cache_bytes) noexcept
    cdef bint use_threads(self, int count) noexcept nogil
    cdef void fill_piece(self, const double* x, double x_sqnorm, signed char s_i, int lo, int hi,
                         double* scratch, float* out) noexcept nogil
    cdef void fill(self, int i, int start, int stop, float* out) noexcept nogil
    cdef float* column(self, int i, int length) noexcept nogil
    cdef float* reserve(self, int i, int length) noexcept nogil
    cdef void swap(self, int i, int j) noexcept nogil
    cdef double diagonal(self, int i) noexcept nogil
    cdef int block(self, const int* idx, int m, double* out) noexcept nogil
    cdef void check_positions(self, const int[::1] positions, int length) except *
