/* Flush-to-zero and denormals-are-zero for the calling thread, around a dense factorization.
 * A Newton matrix I + sigma K whose kernel values span hundreds of decades (RBF on unscaled
 * data) fills its Cholesky factor with denormal numbers, each operation on which costs many
 * normal ones (the x86 microcode assist); below 2^-1022 they cannot change
 * a factor whose diagonal is >= 1. The caller's mode is restored afterwards. */
#ifndef FASTSVM_FPMODE_H
#define FASTSVM_FPMODE_H
#if defined(__x86_64__) || defined(__SSE2__)
#include <xmmintrin.h>
static inline unsigned int fastsvm_flush_denormals(void) {
    unsigned int mode = _mm_getcsr();
    _mm_setcsr(mode | 0x8040);          /* FTZ (bit 15) and DAZ (bit 6) */
    return mode;
}
static inline void fastsvm_restore_fp_mode(unsigned int mode) { _mm_setcsr(mode); }
#else
static inline unsigned int fastsvm_flush_denormals(void) { return 0; }
static inline void fastsvm_restore_fp_mode(unsigned int mode) { (void)mode; }
#endif
#endif
