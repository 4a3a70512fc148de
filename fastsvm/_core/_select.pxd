# SMO's working-set scans for one equality constraint (C-SVC, one-class, epsilon-SVR), branch-free
# and vectorized in _select.h; shared by _smo and _block_smo: the same pair as their scalar loops.
cdef extern from "_select.h":
    int select_i "fastsvm_select_i"(const double* G, const signed char* y, const signed char* st,
                                    int lo, int hi, double* value) noexcept nogil
    int select_j "fastsvm_select_j"(const double* G, const signed char* y, const signed char* st,
                                    const double* QD, const float* Q_a, int lo, int hi, double ga,
                                    double qd_a, double two_ya, double tau, double* gmax,
                                    double* obj_min) noexcept nogil
