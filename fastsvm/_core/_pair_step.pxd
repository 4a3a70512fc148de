# LIBSVM's two-variable step (Chang & Lin, "LIBSVM: a library for support vector machines", ACM
# TIST 2011, section 4.1.2; Solver::Solve's update of alpha[i] and alpha[j]), shared by the SMO
# kernels (_smo, _block_smo): the same arithmetic, so the same bits as LIBSVM's.
from libc.math cimport isfinite


cdef inline bint pair_step(double* alpha, int i, int j, double G_i, double G_j, double QD_i, double QD_j,
                           double Q_ij, double C_i, double C_j, bint opposite) noexcept nogil:
    """Move alpha[i], alpha[j] (signs opposite or equal) to the pair's optimum within their box;
    False when the step is not finite. A pair whose curvature is not positive takes 1e-12."""
    cdef double quad, delta, diff, total
    if opposite:
        quad = QD_i + QD_j + 2 * Q_ij
        if quad <= 0:
            quad = 1e-12
        delta = (-G_i - G_j) / quad
        if not isfinite(delta):
            return False
        diff = alpha[i] - alpha[j]
        alpha[i] += delta
        alpha[j] += delta
        if diff > 0:
            if alpha[j] < 0:
                alpha[j] = 0
                alpha[i] = diff
        else:
            if alpha[i] < 0:
                alpha[i] = 0
                alpha[j] = -diff
        if diff > C_i - C_j:
            if alpha[i] > C_i:
                alpha[i] = C_i
                alpha[j] = C_i - diff
        else:
            if alpha[j] > C_j:
                alpha[j] = C_j
                alpha[i] = C_j + diff
        return True
    quad = QD_i + QD_j - 2 * Q_ij
    if quad <= 0:
        quad = 1e-12
    delta = (G_i - G_j) / quad
    if not isfinite(delta):
        return False
    total = alpha[i] + alpha[j]
    alpha[i] -= delta
    alpha[j] += delta
    if total > C_i:
        if alpha[i] > C_i:
            alpha[i] = C_i
            alpha[j] = total - C_i
    else:
        if alpha[j] < 0:
            alpha[j] = 0
            alpha[i] = total
    if total > C_j:
        if alpha[j] > C_j:
            alpha[j] = C_j
            alpha[i] = total - C_j
    else:
        if alpha[i] < 0:
            alpha[i] = 0
            alpha[j] = total
    return True
