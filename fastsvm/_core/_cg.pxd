# The one preconditioned conjugate gradient of fastsvm (SSsNAL's Newton systems; SVM-ALM's exact
# step and ADMM's solves next), in reverse communication: a CG state advanced by nogil steps, its
# products H d asked of the caller. cg_solve drives it for a Cython Operator without the GIL;
# conjugate_gradient (the .pyx) drives it for a Python callable as well.

cdef class Operator:
    """A symmetric operator H for cg_solve, applied without the GIL."""
    cdef readonly Py_ssize_t order  # the length of the vectors it applies to
    # the values one product reads: after STOP_POLL_VALUES of them the driver also looks for
    # Ctrl-C (taking the GIL); 0: it reads the stop flag only
    cdef Py_ssize_t poll_values
    cdef bint preconditions       # precondition() is the preconditioner (else CG.diag or none)
    cdef double apply(self, const double* d, double* out) noexcept nogil
    cdef void precondition(self, const double* r, double* z) noexcept nogil


cdef struct CG:
    Py_ssize_t n
    double* x             # the solution (zero at the start)
    double* r             # the residual: the right-hand side at the start, overwritten
    double* z             # M^-1 r; r itself when there is no preconditioner
    double* d             # the search direction
    double* hd            # H d, written by the caller
    const double* diag    # a diagonal preconditioner M, or NULL
    double* part          # 2 per block of the reductions
    Py_ssize_t block      # the sums over the vectors add blocks of this many in order, each in order:
    int threads           # the same bits for any thread count (the blocks shared by the threads)
    # an identity block beside the system with right-hand side of squared norm `off`, carried by
    # scalars (every CG vector is a multiple of that right-hand side there): x_off, r_off, d_off
    double off, x_off, r_off, d_off
    double rr, rz, bound, alpha, beta, rr_next, rz_next
    int iterations, max_iter


cdef enum:
    CG_CONTINUE = -1      # not a Status: the step wants the next product H d


# A driver: cg_init (then diag, off), the right-hand side in r, cg_start_sums, cg_begin; then while
# cg_check says CG_CONTINUE: hd = H d, cg_move(d.hd), cg_turn. cg_solve is that loop for an Operator.
cdef Py_ssize_t cg_parts(Py_ssize_t n, Py_ssize_t block) noexcept nogil
cdef void cg_init(CG* s, Py_ssize_t n, double* x, double* r, double* z, double* d, double* hd,
                  double* part, Py_ssize_t block, int threads) noexcept nogil
cdef void cg_start_sums(CG* s, double* rr, double* rz) noexcept nogil
cdef void cg_begin(CG* s, double rr, double rz, double rtol, int max_iter) noexcept nogil
cdef int cg_check(CG* s) noexcept nogil
cdef int cg_move(CG* s, double dhd, bint reduce) noexcept nogil
cdef void cg_turn(CG* s) noexcept nogil
cdef int cg_solve(CG* s, Operator op, double rtol, int max_iter, const int[::1] stop) noexcept nogil
