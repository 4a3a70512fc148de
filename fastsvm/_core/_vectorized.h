/* Loops written so that the compiler vectorizes them, shared by the Cython modules through
 * _kernel.pxd: the RBF kernel's exponentials (or, for binary rows, a table of them) and the
 * random features' cos / sin over a block of values (libm's are one call per value and do not
 * vectorize), dense dot products (those over float32 and byte columns in intrinsics, chosen at
 * run time), axpy, float32 stores and gathers, and the CG preconditioner of linear SSsNAL. */
#ifndef FASTSVM_VECTORIZED_H
#define FASTSVM_VECTORIZED_H
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <math.h>
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#include <immintrin.h>          /* the intrinsics of the versions chosen at run time */
#endif

/* v[i] = exp(-max(v[i], 0)) for RBF kernel values, written so that the compiler vectorizes
   it: k = round(x / ln 2) by the 1.5 * 2^52 trick, r = x - k ln 2 in two parts (|r| <= ln2 / 2),
   exp(r) by its Taylor polynomial of degree 13 (truncation < 2e-17 relative), times 2^k from
   the exponent bits. Arguments of 708 and above give 0, where libm's exp gives denormal
   numbers (from 708.4): every operation a denormal enters costs many normal ones, and no
   double computation with kernel values <= 1 can tell them from 0. Within 1 ulp of libm's exp
   below (tests/test_ssnal_kernel.py); the same bits for any thread count (a CPU with FMA may
   round the polynomial differently from one without: the AVX-512 clone below does). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
/* the clamps are branches unless the compiler may ignore NaN and FP traps here; AVX2 and
   AVX-512 clones (chosen at load time where the CPU has them) compute four or eight values at
   once; the AVX-512 one contracts to FMA (fewer instructions per kernel value), so its
   last bits may differ from the others', the same on one machine for every thread count */
__attribute__((optimize("no-trapping-math", "finite-math-only", "no-signed-zeros"),
               target_clones("avx512f", "avx2", "default")))
#elif defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-trapping-math", "finite-math-only", "no-signed-zeros")))
#endif
static inline void fastsvm_exp_neg_block(double *v, int n) {
    const double magic = 6755399441055744.0;
    int64_t magic_bits;
    memcpy(&magic_bits, &magic, sizeof magic_bits);
    /* eight values at a time, the last few through a padded copy: every value goes through the
       same vector code, so its bits do not depend on its place in the block */
    double tail[8];
    const int body = n - n % 8;
    for (int i0 = 0; i0 < n; i0 += 8) {
        double *w = v + i0;
        if (i0 == body) {
            memset(tail, 0, sizeof tail);
            memcpy(tail, w, (size_t)(n - body) * sizeof(double));
            w = tail;
        }
        for (int i = 0; i < 8; i++) {
            double x = -w[i];
            x = x > 0.0 ? 0.0 : x;
            x = x < -708.0 ? -708.0 : x;
            double kd = x * 1.4426950408889634 + magic;
            int64_t k_bits;
            memcpy(&k_bits, &kd, sizeof k_bits);
            double k = kd - magic;
            double r = (x - k * 0.6931471803691238) - k * 1.9082149292705877e-10;
            double p = 1.0 / 6227020800.0;
            p = p * r + 1.0 / 479001600.0;
            p = p * r + 1.0 / 39916800.0;
            p = p * r + 1.0 / 3628800.0;
            p = p * r + 1.0 / 362880.0;
            p = p * r + 1.0 / 40320.0;
            p = p * r + 1.0 / 5040.0;
            p = p * r + 1.0 / 720.0;
            p = p * r + 1.0 / 120.0;
            p = p * r + 1.0 / 24.0;
            p = p * r + 1.0 / 6.0;
            p = p * r + 0.5;
            p = p * r + 1.0;
            p = p * r + 1.0;
            int64_t scale_bits = (k_bits - magic_bits + 1023) << 52;
            double scale;
            memcpy(&scale, &scale_bits, sizeof scale);
            w[i] = x > -708.0 ? p * scale : 0.0;
        }
        if (w == tail)
            memcpy(v + body, tail, (size_t)(n - body) * sizeof(double));
    }
}

/* (sin z, cos z) for |z| <= FASTSVM_SINCOS_MAX, written so that the compiler vectorizes the
   loops that call it: n = round(z 2/pi) by the 1.5 * 2^52 trick, r = z - n pi/2 in three parts
   (the first two hold 33 bits, so n times them is exact for |n| < 2^20), sin r and cos r by
   their Taylor polynomials on |r| <= pi/4 (to r^17 and r^18: truncation < 5e-17), the quadrant
   n mod 4 picking and negating them. Random-Fourier-feature arguments are far below the limit;
   callers use libm for larger ones. */
#define FASTSVM_SINCOS_MAX 1.0e6
static inline void fastsvm_sincos1(double z, double *sz, double *cz) {
    const double magic = 6755399441055744.0;
    double nd = z * 0.63661977236758134308 + magic;
    int64_t n_bits;
    memcpy(&n_bits, &nd, sizeof n_bits);
    double n = nd - magic;
    double r = ((z - n * 1.57079632673412561417) - n * 6.07710050630396597660e-11)
               - n * 2.02226624871116645580e-21;
    double r2 = r * r;
    double sp = 1.0 / 355687428096000.0;
    sp = sp * r2 - 1.0 / 1307674368000.0;
    sp = sp * r2 + 1.0 / 6227020800.0;
    sp = sp * r2 - 1.0 / 39916800.0;
    sp = sp * r2 + 1.0 / 362880.0;
    sp = sp * r2 - 1.0 / 5040.0;
    sp = sp * r2 + 1.0 / 120.0;
    sp = sp * r2 - 1.0 / 6.0;
    double sr = r + r * r2 * sp;
    double cp = -1.0 / 6402373705728000.0;
    cp = cp * r2 + 1.0 / 20922789888000.0;
    cp = cp * r2 - 1.0 / 87178291200.0;
    cp = cp * r2 + 1.0 / 479001600.0;
    cp = cp * r2 - 1.0 / 3628800.0;
    cp = cp * r2 + 1.0 / 40320.0;
    cp = cp * r2 - 1.0 / 720.0;
    cp = cp * r2 + 1.0 / 24.0;
    cp = cp * r2 - 0.5;
    double cr = 1.0 + r2 * cp;
    int64_t q = n_bits & 3;
    double s1 = (q & 1) ? cr : sr, c1 = (q & 1) ? sr : cr;
    *sz = (q & 2) ? -s1 : s1;
    *cz = ((q + 1) & 2) ? -c1 : c1;
}

/* v[t] = scale cos v[t], and with sin_out sin_out[t] = scale sin v[t] (|v[t]| <= FASTSVM_SINCOS_MAX) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static inline void fastsvm_cos_sin_block(double *restrict v, double *restrict sin_out, double scale, int n) {
    double sz, cz;
    if (sin_out == NULL) {
        for (int t = 0; t < n; t++) {
            fastsvm_sincos1(v[t], &sz, &cz);
            v[t] = scale * cz;
        }
    } else {
        for (int t = 0; t < n; t++) {
            fastsvm_sincos1(v[t], &sz, &cz);
            v[t] = scale * cz;
            sin_out[t] = scale * sz;
        }
    }
}

/* v[t] = exp(-gamma (xsq + sq[t] - 2 v[t])): RBF kernel values from dot products */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static inline void fastsvm_rbf_block(double gamma, double xsq, const double *restrict sq,
                                     double *restrict v, int n) {
    for (int t = 0; t < n; t++)
        v[t] = gamma * (xsq + sq[t] - 2.0 * v[t]);
    fastsvm_exp_neg_block(v, n);
}

/* v[t] = table[xsq + sq[t] - 2 v[t]], table[k] = exp(-gamma k): RBF kernel values of binary rows
   from their counts, whose squared distances are integers below the table's length (a gather
   instead of an exponential: the same bits as fastsvm_rbf_block). AVX2 gathers chosen at run
   time (the compiler does not gather by itself), a portable loop otherwise. */
static inline void fastsvm_rbf_table_tail(const double *table, double xsq, const double *sq, double *v,
                                          int t, int n) {
    for (; t < n; t++)
        v[t] = table[(int)(xsq + sq[t] - 2.0 * v[t])];
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target("avx2")))
static void fastsvm_rbf_table_avx2(const double *restrict table, double xsq, const double *restrict sq,
                                   double *restrict v, int n) {
    const __m256d x = _mm256_set1_pd(xsq), two = _mm256_set1_pd(2.0);
    int t = 0;
    for (; t + 4 <= n; t += 4) {
        __m256d d = _mm256_sub_pd(_mm256_add_pd(x, _mm256_loadu_pd(sq + t)),
                                  _mm256_mul_pd(two, _mm256_loadu_pd(v + t)));
        _mm256_storeu_pd(v + t, _mm256_i32gather_pd(table, _mm256_cvttpd_epi32(d), 8));
    }
    fastsvm_rbf_table_tail(table, xsq, sq, v, t, n);
}
#endif

static inline void fastsvm_rbf_table_block(const double *restrict table, double xsq, const double *restrict sq,
                                           double *restrict v, int n) {
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    if (__builtin_cpu_supports("avx2")) {
        fastsvm_rbf_table_avx2(table, xsq, sq, v, n);
        return;
    }
#endif
    fastsvm_rbf_table_tail(table, xsq, sq, v, 0, n);
}

/* out[t] = v[t] as float32, negated where sign[t] != s (sign NULL: all equal) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static inline void fastsvm_store_float(const double *restrict v, const signed char *restrict sign,
                                       signed char s, float *restrict out, int n) {
    if (sign == NULL) {
        for (int t = 0; t < n; t++)
            out[t] = (float)v[t];
    } else {
        for (int t = 0; t < n; t++)
            out[t] = (float)(sign[t] == s ? v[t] : -v[t]);
    }
}

/* out[t] = col[index[t]], negated where sign[t] != s: the regression dual's column of Q
   gathered from a kernel column (AVX2: eight loads per gather instruction) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static inline void fastsvm_gather_signed(const float *restrict col, const int *restrict index,
                                         const signed char *restrict sign, signed char s,
                                         float *restrict out, int n) {
    for (int t = 0; t < n; t++) {
        float v = col[index[t]];
        out[t] = sign[t] == s ? v : -v;
    }
}

/* out[t] = sum_j v[j] cols[slot[j] * stride + t] for t < count, summed over j in order: the
   dense-indexed features of one sparse row against many columns. Sixteen outputs are kept in
   registers across the features (one load and one multiply-add per value and feature) instead
   of a pass over out per feature (two loads and a store). */
#if defined(__GNUC__) && !defined(__clang__)
typedef double fastsvm_v4d __attribute__((vector_size(32)));   /* four doubles */
#if defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static inline void fastsvm_dot_slots(const double *restrict v, const int *restrict slot, int k,
                                     const double *restrict cols, ptrdiff_t stride, int count,
                                     double *restrict out) {
    int t = 0;
    for (; t + 16 <= count; t += 16) {
        fastsvm_v4d s0 = {0.0, 0.0, 0.0, 0.0}, s1 = s0, s2 = s0, s3 = s0, c0, c1, c2, c3;
        for (int j = 0; j < k; j++) {
            const double *c = cols + slot[j] * stride + t;
            const fastsvm_v4d a = {v[j], v[j], v[j], v[j]};
            memcpy(&c0, c, sizeof c0);
            memcpy(&c1, c + 4, sizeof c1);
            memcpy(&c2, c + 8, sizeof c2);
            memcpy(&c3, c + 12, sizeof c3);
            s0 += a * c0;
            s1 += a * c1;
            s2 += a * c2;
            s3 += a * c3;
        }
        memcpy(out + t, &s0, sizeof s0);
        memcpy(out + t + 4, &s1, sizeof s1);
        memcpy(out + t + 8, &s2, sizeof s2);
        memcpy(out + t + 12, &s3, sizeof s3);
    }
    for (; t < count; t++) {
        double s = 0.0;
        for (int j = 0; j < k; j++)
            s += v[j] * cols[slot[j] * stride + t];
        out[t] = s;
    }
}
#else
static inline void fastsvm_dot_slots(const double *v, const int *slot, int k, const double *cols,
                                     ptrdiff_t stride, int count, double *out) {
    for (int t = 0; t < count; t++) {
        double s = 0.0;
        for (int j = 0; j < k; j++)
            s += v[j] * cols[slot[j] * stride + t];
        out[t] = s;
    }
}
#endif

/* dot_slots over float32 columns whose values float32 holds exactly (binary and small-integer
   features), read with half the bytes (the loop is bound by memory traffic). The
   product of two float32 values is exact in double, so with or without FMA the sums have
   dot_slots' bits. Written with intrinsics and chosen at run time: GCC's vector-type
   conversions split the widening in halves. */
static inline void fastsvm_dot_slots_f32_tail(const double *v, const int *slot, int k, const float *cols,
                                              ptrdiff_t stride, int t, int count, double *out) {
    for (; t < count; t++) {
        double s = 0.0;
        for (int j = 0; j < k; j++)
            s += v[j] * (double)cols[slot[j] * stride + t];
        out[t] = s;
    }
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target("avx512f")))
static void fastsvm_dot_slots_f32_avx512(const double *restrict v, const int *restrict slot, int k,
                                         const float *restrict cols, ptrdiff_t stride, int count,
                                         double *restrict out) {
    int t = 0;
    for (; t + 32 <= count; t += 32) {
        __m512d s0 = _mm512_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
        for (int j = 0; j < k; j++) {
            const float *c = cols + slot[j] * stride + t;
            const __m512d a = _mm512_set1_pd(v[j]);
            s0 = _mm512_fmadd_pd(a, _mm512_cvtps_pd(_mm256_loadu_ps(c)), s0);
            s1 = _mm512_fmadd_pd(a, _mm512_cvtps_pd(_mm256_loadu_ps(c + 8)), s1);
            s2 = _mm512_fmadd_pd(a, _mm512_cvtps_pd(_mm256_loadu_ps(c + 16)), s2);
            s3 = _mm512_fmadd_pd(a, _mm512_cvtps_pd(_mm256_loadu_ps(c + 24)), s3);
        }
        _mm512_storeu_pd(out + t, s0);
        _mm512_storeu_pd(out + t + 8, s1);
        _mm512_storeu_pd(out + t + 16, s2);
        _mm512_storeu_pd(out + t + 24, s3);
    }
    fastsvm_dot_slots_f32_tail(v, slot, k, cols, stride, t, count, out);
}

__attribute__((target("avx2")))
static void fastsvm_dot_slots_f32_avx2(const double *restrict v, const int *restrict slot, int k,
                                       const float *restrict cols, ptrdiff_t stride, int count,
                                       double *restrict out) {
    int t = 0;
    for (; t + 16 <= count; t += 16) {
        __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
        for (int j = 0; j < k; j++) {
            const float *c = cols + slot[j] * stride + t;
            const __m256d a = _mm256_set1_pd(v[j]);
            s0 = _mm256_add_pd(s0, _mm256_mul_pd(a, _mm256_cvtps_pd(_mm_loadu_ps(c))));
            s1 = _mm256_add_pd(s1, _mm256_mul_pd(a, _mm256_cvtps_pd(_mm_loadu_ps(c + 4))));
            s2 = _mm256_add_pd(s2, _mm256_mul_pd(a, _mm256_cvtps_pd(_mm_loadu_ps(c + 8))));
            s3 = _mm256_add_pd(s3, _mm256_mul_pd(a, _mm256_cvtps_pd(_mm_loadu_ps(c + 12))));
        }
        _mm256_storeu_pd(out + t, s0);
        _mm256_storeu_pd(out + t + 4, s1);
        _mm256_storeu_pd(out + t + 8, s2);
        _mm256_storeu_pd(out + t + 12, s3);
    }
    fastsvm_dot_slots_f32_tail(v, slot, k, cols, stride, t, count, out);
}
#endif

static inline void fastsvm_dot_slots_f32(const double *restrict v, const int *restrict slot, int k,
                                         const float *restrict cols, ptrdiff_t stride, int count,
                                         double *restrict out) {
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    if (__builtin_cpu_supports("avx512f")) {
        fastsvm_dot_slots_f32_avx512(v, slot, k, cols, stride, count, out);
        return;
    }
    if (__builtin_cpu_supports("avx2")) {
        fastsvm_dot_slots_f32_avx2(v, slot, k, cols, stride, count, out);
        return;
    }
#endif
    fastsvm_dot_slots_f32_tail(v, slot, k, cols, stride, 0, count, out);
}

/* out[t] = sum_j cols[slot[j] * stride + t] for t < count over 0/1 byte columns: dot_slots
   for binary rows against binary columns (every stored value 1), as byte counts (a row has
   at most 255 such features). Exact integers, so dot_slots' bits, with an eighth of the bytes
   and 32 columns per add (AVX2, chosen at run time; a portable loop otherwise). */
static inline void fastsvm_count_slots_tail(const int *slot, int k, const unsigned char *cols,
                                            ptrdiff_t stride, int t, int count, double *out) {
    for (; t < count; t++) {
        int s = 0;
        for (int j = 0; j < k; j++)
            s += cols[slot[j] * stride + t];
        out[t] = (double)s;
    }
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target("avx2")))
static void fastsvm_count_slots_avx2(const int *restrict slot, int k, const unsigned char *restrict cols,
                                     ptrdiff_t stride, int count, double *restrict out) {
    int t = 0;
    for (; t + 32 <= count; t += 32) {
        __m256i s = _mm256_setzero_si256();
        for (int j = 0; j < k; j++)
            s = _mm256_add_epi8(s, _mm256_loadu_si256((const __m256i *)(cols + slot[j] * stride + t)));
        __m128i lo = _mm256_castsi256_si128(s), hi = _mm256_extracti128_si256(s, 1);
        _mm256_storeu_pd(out + t, _mm256_cvtepi32_pd(_mm_cvtepu8_epi32(lo)));
        _mm256_storeu_pd(out + t + 4, _mm256_cvtepi32_pd(_mm_cvtepu8_epi32(_mm_srli_si128(lo, 4))));
        _mm256_storeu_pd(out + t + 8, _mm256_cvtepi32_pd(_mm_cvtepu8_epi32(_mm_srli_si128(lo, 8))));
        _mm256_storeu_pd(out + t + 12, _mm256_cvtepi32_pd(_mm_cvtepu8_epi32(_mm_srli_si128(lo, 12))));
        _mm256_storeu_pd(out + t + 16, _mm256_cvtepi32_pd(_mm_cvtepu8_epi32(hi)));
        _mm256_storeu_pd(out + t + 20, _mm256_cvtepi32_pd(_mm_cvtepu8_epi32(_mm_srli_si128(hi, 4))));
        _mm256_storeu_pd(out + t + 24, _mm256_cvtepi32_pd(_mm_cvtepu8_epi32(_mm_srli_si128(hi, 8))));
        _mm256_storeu_pd(out + t + 28, _mm256_cvtepi32_pd(_mm_cvtepu8_epi32(_mm_srli_si128(hi, 12))));
    }
    fastsvm_count_slots_tail(slot, k, cols, stride, t, count, out);
}
#endif

static inline void fastsvm_count_slots(const int *restrict slot, int k, const unsigned char *restrict cols,
                                       ptrdiff_t stride, int count, double *restrict out) {
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    if (__builtin_cpu_supports("avx2")) {
        fastsvm_count_slots_avx2(slot, k, cols, stride, count, out);
        return;
    }
#endif
    fastsvm_count_slots_tail(slot, k, cols, stride, 0, count, out);
}

/* out[t] += c[0] cols[0][t] + ... + c[k-1] cols[k-1][t] for t < n (1 <= k <= 4; float32
   columns, double sums), added in column order: the same bits as k single-column passes, with
   one load and store of out instead of k */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static inline void fastsvm_axpy_float_cols(const float *const *cols, const double *c, int k, int n,
                                           double *restrict out) {
    const float *restrict a = cols[0];
    const double ca = c[0];
    if (k == 1) {
        for (int t = 0; t < n; t++)
            out[t] += ca * a[t];
    } else if (k == 2) {
        const float *restrict b = cols[1];
        const double cb = c[1];
        for (int t = 0; t < n; t++)
            out[t] = (out[t] + ca * a[t]) + cb * b[t];
    } else if (k == 3) {
        const float *restrict b = cols[1], *restrict d = cols[2];
        const double cb = c[1], cd = c[2];
        for (int t = 0; t < n; t++)
            out[t] = ((out[t] + ca * a[t]) + cb * b[t]) + cd * d[t];
    } else {
        const float *restrict b = cols[1], *restrict d = cols[2], *restrict e = cols[3];
        const double cb = c[1], cd = c[2], ce = c[3];
        for (int t = 0; t < n; t++)
            out[t] = (((out[t] + ca * a[t]) + cb * b[t]) + cd * d[t]) + ce * e[t];
    }
}

/* sum_i a[i] b[i] in four interleaved partial sums (a fixed order: the same bits everywhere) */
static inline double fastsvm_dot4(const double *a, const double *b, int n) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++)
        s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

/* out[t] = x . rows[t] (n values each) for t < count, each as fastsvm_dot4 sums it (the same
   bits: the four partial sums held in one vector, no fused multiply-add, which neither the
   baseline x86-64 nor the AVX2 clone has): one call per block of a kernel column, with an AVX2
   clone where the CPU has it */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
static inline void fastsvm_dot_rows(const double *x, const double *const *rows, int count, int n, double *out) {
    for (int t = 0; t < count; t++) {
        const double *b = rows[t];
        fastsvm_v4d s = {0.0, 0.0, 0.0, 0.0}, va, vb;
        int i = 0;
        for (; i + 4 <= n; i += 4) {
            memcpy(&va, x + i, sizeof va);
            memcpy(&vb, b + i, sizeof vb);
            s += va * vb;
        }
        double s0 = s[0];
        for (; i < n; i++)
            s0 += x[i] * b[i];
        out[t] = (s0 + s[1]) + (s[2] + s[3]);
    }
}
#else
static inline void fastsvm_dot_rows(const double *x, const double *const *rows, int count, int n, double *out) {
    for (int t = 0; t < count; t++)
        out[t] = fastsvm_dot4(x, rows[t], n);
}
#endif

/* out[t] = sum_f x[f] cols[f * stride + t] for t < count: a block of kernel values of rows
   held feature-major (column f of every row at cols + f * stride), four rows per vector. Each
   value is summed over the features in order, as a sparse dot product over the same row is. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static inline void fastsvm_dot_cols(const double *restrict x, const double *restrict cols,
                                    ptrdiff_t stride, int p, int count, double *restrict out) {
    int f = 0;
    for (int t = 0; t < count; t++)
        out[t] = 0.0;
    for (; f + 4 <= p; f += 4) {   /* four features per pass over out */
        const double a0 = x[f], a1 = x[f + 1], a2 = x[f + 2], a3 = x[f + 3];
        const double *restrict c0 = cols + f * stride, *restrict c1 = c0 + stride;
        const double *restrict c2 = c1 + stride, *restrict c3 = c2 + stride;
        for (int t = 0; t < count; t++)
            out[t] = (((out[t] + a0 * c0[t]) + a1 * c1[t]) + a2 * c2[t]) + a3 * c3[t];
    }
    for (; f < p; f++) {
        const double a = x[f];
        const double *restrict c = cols + f * stride;
        for (int t = 0; t < count; t++)
            out[t] += a * c[t];
    }
}

/* diag[j] = h^(7/8), h = max(1, 1 + sigma (sq[j] - s[j]^2 inv_aa)): the damped diagonal
   preconditioner of NewtonCG (_ssnal.pyx), whose CG systems each need it anew. The clamp is a
   branch, and the loop scalar, unless NaN and FP traps may be ignored here;
   sqrt is correctly rounded in every clone (the AVX-512 one may contract h to an FMA). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((optimize("no-trapping-math", "finite-math-only", "no-signed-zeros"),
               target_clones("avx512f", "avx2", "default")))
#elif defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-trapping-math", "finite-math-only", "no-signed-zeros")))
#endif
static inline void fastsvm_damped_diagonal(double *restrict diag, const double *restrict sq, const double *restrict s,
                                           int n, double sigma, double inv_aa) {
    for (int j = 0; j < n; j++) {
        double h = 1.0 + sigma * (sq[j] - s[j] * s[j] * inv_aa);
        h = h > 1.0 ? h : 1.0;
        diag[j] = h / sqrt(sqrt(sqrt(h)));
    }
}

/* out[j] = sum_k data[k] wt[indices[k] stride + j] for j < g (g rounded up to 8 must fit in the
   stride): one CSR row's dot products with g rows held feature-major (a kernel block's sparse x
   dense product). The outputs are taken 64 (then 32, 8) at a time and kept in registers over the row's
   stored values: one load and one multiply-add per value and output. Each output sums the row's
   products in index order: the same bits for any g and any split of the outputs. The _exact
   version rounds each product and each sum apart (no FMA), as a sparse dot product does: the bits
   of fastsvm._core._csr's span_dot, which also sums the products of the common features in index
   order (the terms it skips are zeros here). */
typedef double fastsvm_v8d __attribute__((vector_size(64)));
#define FASTSVM_SPARSE_ROW_DOTS(NAME)                                                                \
    static void NAME(const double *restrict data, const int *restrict indices, int lo, int hi,      \
                     const double *restrict wt, ptrdiff_t stride, int g, double *restrict out) {     \
        int j = 0;                                                                                   \
        for (; j + 64 <= g; j += 64) {                                                               \
            fastsvm_v8d a[8] = {{0}};                                                                \
            for (int k = lo; k < hi; k++) {                                                          \
                const double v = data[k];                                                            \
                const double *w = wt + (size_t)indices[k] * stride + j;                              \
                for (int c = 0; c < 8; c++) {                                                        \
                    fastsvm_v8d x;                                                                   \
                    memcpy(&x, w + 8 * c, sizeof x);                                                 \
                    a[c] += x * v;                                                                   \
                }                                                                                    \
            }                                                                                        \
            memcpy(out + j, a, sizeof a);                                                            \
        }                                                                                            \
        for (; j + 32 <= g; j += 32) {   /* the rest: four chains, then one */                      \
            fastsvm_v8d a[4] = {{0}};                                                                \
            for (int k = lo; k < hi; k++) {                                                          \
                const double v = data[k];                                                            \
                const double *w = wt + (size_t)indices[k] * stride + j;                              \
                for (int c = 0; c < 4; c++) {                                                        \
                    fastsvm_v8d x;                                                                   \
                    memcpy(&x, w + 8 * c, sizeof x);                                                 \
                    a[c] += x * v;                                                                   \
                }                                                                                    \
            }                                                                                        \
            memcpy(out + j, a, sizeof a);                                                            \
        }                                                                                            \
        for (; j < g; j += 8) {                                                                      \
            fastsvm_v8d a = {0};                                                                     \
            for (int k = lo; k < hi; k++) {                                                          \
                fastsvm_v8d x;                                                                       \
                memcpy(&x, wt + (size_t)indices[k] * stride + j, sizeof x);                          \
                a += x * data[k];                                                                    \
            }                                                                                        \
            memcpy(out + j, &a, sizeof a);                                                           \
        }                                                                                            \
    }
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
FASTSVM_SPARSE_ROW_DOTS(fastsvm_sparse_row_dots)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
FASTSVM_SPARSE_ROW_DOTS(fastsvm_sparse_row_dots_exact)

/* sum of c[t] k[t] over t < n in 32 lanes (lane l sums the terms t = l mod 32 of the whole blocks of
   32, in order), the lanes added in a fixed tree, then the last terms in order: one fixed order, so
   the same bits for any thread count and on any CPU (no FMA), without one chain of dependent
   additions. A classifier's decision values, whose signs are what is written. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static double fastsvm_weighted_sum(const double *restrict c, const double *restrict k, int n) {
    fastsvm_v8d a[4] = {{0}};
    int t = 0;
    for (; t + 32 <= n; t += 32) {
        for (int v = 0; v < 4; v++) {
            fastsvm_v8d x, y;
            memcpy(&x, c + t + 8 * v, sizeof x);
            memcpy(&y, k + t + 8 * v, sizeof y);
            a[v] += x * y;
        }
    }
    fastsvm_v8d s = (a[0] + a[1]) + (a[2] + a[3]);
    double r = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (; t < n; t++)
        r += c[t] * k[t];
    return r;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

/* out[j][i0 + r] = (float)tile[r gs + j] for r < nr, j < g: a tile of kernel values held one data
   row after another, stored into the g kernel rows. AVX-512 (chosen at run time): 8 x 8 blocks
   transposed in registers, 8 floats a store; else 16 rows at a time, the writes within a few
   cache lines. The same bits either way (one rounding to float). */
static inline void fastsvm_store_transposed_tail(const double *tile, int gs, int r0, int r1, int j0, int j1,
                                                 float **out, int i0) {
    for (int j = j0; j < j1; j++)
        for (int r = r0; r < r1; r++)
            out[j][i0 + r] = (float)tile[(size_t)r * gs + j];
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target("avx512f")))
static void fastsvm_store_transposed_avx512(const double *tile, int gs, int nr, int g, float **out, int i0) {
    /* for each 8 kernel rows, the tile's rows in order: a kernel row's lines are written one after another */
    int r8 = nr / 8 * 8, g8 = g / 8 * 8;
    for (int j0 = 0; j0 < g8; j0 += 8) {
        for (int r0 = 0; r0 < r8; r0 += 8) {
            const double *t = tile + (size_t)r0 * gs + j0;
            __m512d a0 = _mm512_loadu_pd(t), a1 = _mm512_loadu_pd(t + gs), a2 = _mm512_loadu_pd(t + 2 * (size_t)gs),
                    a3 = _mm512_loadu_pd(t + 3 * (size_t)gs), a4 = _mm512_loadu_pd(t + 4 * (size_t)gs),
                    a5 = _mm512_loadu_pd(t + 5 * (size_t)gs), a6 = _mm512_loadu_pd(t + 6 * (size_t)gs),
                    a7 = _mm512_loadu_pd(t + 7 * (size_t)gs);
            /* pairs of rows interleaved, then 128-bit lanes gathered twice: column c of the block */
            __m512d t0 = _mm512_unpacklo_pd(a0, a1), t1 = _mm512_unpackhi_pd(a0, a1);
            __m512d t2 = _mm512_unpacklo_pd(a2, a3), t3 = _mm512_unpackhi_pd(a2, a3);
            __m512d t4 = _mm512_unpacklo_pd(a4, a5), t5 = _mm512_unpackhi_pd(a4, a5);
            __m512d t6 = _mm512_unpacklo_pd(a6, a7), t7 = _mm512_unpackhi_pd(a6, a7);
            __m512d u0 = _mm512_shuffle_f64x2(t0, t2, 0x88), u1 = _mm512_shuffle_f64x2(t1, t3, 0x88);
            __m512d u2 = _mm512_shuffle_f64x2(t0, t2, 0xDD), u3 = _mm512_shuffle_f64x2(t1, t3, 0xDD);
            __m512d u4 = _mm512_shuffle_f64x2(t4, t6, 0x88), u5 = _mm512_shuffle_f64x2(t5, t7, 0x88);
            __m512d u6 = _mm512_shuffle_f64x2(t4, t6, 0xDD), u7 = _mm512_shuffle_f64x2(t5, t7, 0xDD);
            _mm256_storeu_ps(out[j0 + 0] + i0 + r0, _mm512_cvtpd_ps(_mm512_shuffle_f64x2(u0, u4, 0x88)));
            _mm256_storeu_ps(out[j0 + 4] + i0 + r0, _mm512_cvtpd_ps(_mm512_shuffle_f64x2(u0, u4, 0xDD)));
            _mm256_storeu_ps(out[j0 + 1] + i0 + r0, _mm512_cvtpd_ps(_mm512_shuffle_f64x2(u1, u5, 0x88)));
            _mm256_storeu_ps(out[j0 + 5] + i0 + r0, _mm512_cvtpd_ps(_mm512_shuffle_f64x2(u1, u5, 0xDD)));
            _mm256_storeu_ps(out[j0 + 2] + i0 + r0, _mm512_cvtpd_ps(_mm512_shuffle_f64x2(u2, u6, 0x88)));
            _mm256_storeu_ps(out[j0 + 6] + i0 + r0, _mm512_cvtpd_ps(_mm512_shuffle_f64x2(u2, u6, 0xDD)));
            _mm256_storeu_ps(out[j0 + 3] + i0 + r0, _mm512_cvtpd_ps(_mm512_shuffle_f64x2(u3, u7, 0x88)));
            _mm256_storeu_ps(out[j0 + 7] + i0 + r0, _mm512_cvtpd_ps(_mm512_shuffle_f64x2(u3, u7, 0xDD)));
        }
    }
    fastsvm_store_transposed_tail(tile, gs, 0, r8, g8, g, out, i0);
    fastsvm_store_transposed_tail(tile, gs, r8, nr, 0, g, out, i0);
}
#endif

static inline void fastsvm_store_transposed(const double *tile, int gs, int nr, int g, float **out, int i0) {
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    if (__builtin_cpu_supports("avx512f")) {
        fastsvm_store_transposed_avx512(tile, gs, nr, g, out, i0);
        return;
    }
#endif
    for (int j0 = 0; j0 < g; j0 += 16) {
        int jn = g - j0 < 16 ? g - j0 : 16;
        for (int r = 0; r < nr; r++) {
            const double *src = tile + (size_t)r * gs + j0;
            for (int jj = 0; jj < jn; jj++)
                out[j0 + jj][i0 + r] = (float)src[jj];
        }
    }
}

#endif
