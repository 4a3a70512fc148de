/* SMO's working-set scans for the formulations with one equality constraint (C-SVC, one-class,
 * epsilon-SVR), without branches, four positions at once (an AVX2 clone where the CPU has it).
 * Statuses: 0 at the lower bound, 1 at the upper bound, 2 free; signs y_t = +1 / -1.
 * Both give exactly what one scalar scan in position order gives, ties going to the later
 * position (LIBSVM's >= and <=): every lane keeps its last best and the lanes are combined by
 * value, then by position. */
#ifndef FASTSVM_SELECT_H
#define FASTSVM_SELECT_H
#include <math.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define FASTSVM_SELECT_VECTOR 1
typedef double fastsvm_sel_v4d __attribute__((vector_size(32)));
typedef long long fastsvm_sel_v4l __attribute__((vector_size(32)));
typedef int fastsvm_sel_v4i __attribute__((vector_size(16)));
typedef float fastsvm_sel_v4f __attribute__((vector_size(16)));
typedef unsigned fastsvm_sel_v4u __attribute__((vector_size(16)));
#define FASTSVM_SEL_MASK(m) __builtin_convertvector((m), fastsvm_sel_v4l)
#define FASTSVM_SEL_DOUBLE(i) __builtin_convertvector((i), fastsvm_sel_v4d)
#define FASTSVM_SEL_PICK(m, a, b) \
    ((fastsvm_sel_v4d)(((m) & (fastsvm_sel_v4l)(a)) | (~(m) & (fastsvm_sel_v4l)(b))))

/* four signs or statuses widened to 32 bits by shifts of one broadcast word (the compiler
   scalarises a conversion of byte vectors) */
static inline fastsvm_sel_v4i fastsvm_sel_widen(const signed char *p) {
    unsigned w;
    memcpy(&w, p, 4);
    const fastsvm_sel_v4u words = {w, w, w, w}, up = {24, 16, 8, 0};
    return (fastsvm_sel_v4i)(words << up) >> 24;
}
#endif

/* i of the maximal violating pair: the last position lo <= t < hi in I_up (y_t = +1 below its upper
 * bound, y_t = -1 above its lower bound) with the largest -y_t G_t; -1 if I_up is empty. */
#ifdef FASTSVM_SELECT_VECTOR
__attribute__((target_clones("avx2", "default")))
#endif
static int fastsvm_select_i(const double *G, const signed char *y, const signed char *st, int lo,
                            int hi, double *value) {
    double best = -INFINITY;
    int at = -1, t = lo;
#ifdef FASTSVM_SELECT_VECTOR
    if (hi - lo >= 8) {
        fastsvm_sel_v4d lane_best = {-INFINITY, -INFINITY, -INFINITY, -INFINITY}, g;
        fastsvm_sel_v4l lane_at = {-1, -1, -1, -1}, pos = {lo, lo + 1, lo + 2, lo + 3};
        const fastsvm_sel_v4l four = {4, 4, 4, 4};
        for (; t + 4 <= hi; t += 4) {
            memcpy(&g, G + t, 32);
            fastsvm_sel_v4i yi = fastsvm_sel_widen(y + t);
            fastsvm_sel_v4l in_up = FASTSVM_SEL_MASK(fastsvm_sel_widen(st + t) != ((yi + 1) >> 1));
            fastsvm_sel_v4d v = -FASTSVM_SEL_DOUBLE(yi) * g;
            fastsvm_sel_v4l better = in_up & (v >= lane_best);
            lane_best = FASTSVM_SEL_PICK(better, v, lane_best);
            lane_at = (better & pos) | (~better & lane_at);
            pos += four;
        }
        for (int k = 0; k < 4; k++)
            if (lane_at[k] >= 0 && (lane_best[k] > best || (lane_best[k] == best && lane_at[k] > at))) {
                best = lane_best[k];
                at = (int)lane_at[k];
            }
    }
#endif
    for (; t < hi; t++) {
        if (st[t] != (y[t] + 1) >> 1) {
            double v = -(double)y[t] * G[t];
            if (v >= best) {
                best = v;
                at = t;
            }
        }
    }
    *value = best;
    return at;
}

/* j of the pair by the second-order rule, for i = a with -y_a G_a = ga: over I_low (y_t = +1
 * above its lower bound, y_t = -1 below its upper bound), the last position with grad_diff =
 * ga + y_t G_t > 0 minimising -grad_diff^2 / quad, quad = QD_a + QD_t - 2 y_a y_t Q_a[t] (tau
 * when not positive), -1 if none; *gmax = max y_t G_t over I_low (-inf if empty), *obj_min its
 * objective. two_ya = 2 y_a. */
#ifdef FASTSVM_SELECT_VECTOR
__attribute__((target_clones("avx2", "default")))
#endif
static int fastsvm_select_j(const double *G, const signed char *y, const signed char *st,
                            const double *QD, const float *Q_a, int lo, int hi, double ga,
                            double qd_a, double two_ya, double tau, double *gmax, double *obj_min) {
    double best = INFINITY, top = -INFINITY;
    int at = -1, t = lo;
#ifdef FASTSVM_SELECT_VECTOR
    if (hi - lo >= 8) {
        const fastsvm_sel_v4d inf = {INFINITY, INFINITY, INFINITY, INFINITY};
        const fastsvm_sel_v4d zero = {0.0, 0.0, 0.0, 0.0};
        const fastsvm_sel_v4d taus = {tau, tau, tau, tau};
        const fastsvm_sel_v4l four = {4, 4, 4, 4};
        fastsvm_sel_v4d lane_best = inf, lane_top = -inf, g, qd;
        fastsvm_sel_v4l lane_at = {-1, -1, -1, -1}, pos = {lo, lo + 1, lo + 2, lo + 3};
        fastsvm_sel_v4f qf;
        for (; t + 4 <= hi; t += 4) {
            memcpy(&g, G + t, 32);
            memcpy(&qd, QD + t, 32);
            memcpy(&qf, Q_a + t, 16);
            fastsvm_sel_v4i yi = fastsvm_sel_widen(y + t);
            fastsvm_sel_v4l in_low = FASTSVM_SEL_MASK(fastsvm_sel_widen(st + t) != ((1 - yi) >> 1));
            fastsvm_sel_v4d yd = FASTSVM_SEL_DOUBLE(yi);
            fastsvm_sel_v4d yg = yd * g;
            fastsvm_sel_v4l higher = in_low & (yg > lane_top);
            lane_top = FASTSVM_SEL_PICK(higher, yg, lane_top);
            fastsvm_sel_v4d grad_diff = ga + yg;
            fastsvm_sel_v4d quad = (qd_a + qd) - (two_ya * yd) * __builtin_convertvector(qf, fastsvm_sel_v4d);
            quad = FASTSVM_SEL_PICK(quad > zero, quad, taus);
            fastsvm_sel_v4d obj = -(grad_diff * grad_diff) / quad;
            fastsvm_sel_v4l better = in_low & (grad_diff > zero) & (obj <= lane_best);
            lane_best = FASTSVM_SEL_PICK(better, obj, lane_best);
            lane_at = (better & pos) | (~better & lane_at);
            pos += four;
        }
        for (int k = 0; k < 4; k++) {
            top = lane_top[k] > top ? lane_top[k] : top;
            if (lane_at[k] >= 0 && (lane_best[k] < best || (lane_best[k] == best && lane_at[k] > at))) {
                best = lane_best[k];
                at = (int)lane_at[k];
            }
        }
    }
#endif
    for (; t < hi; t++) {
        if (st[t] != (1 - y[t]) >> 1) {
            double yg = (double)y[t] * G[t];
            double grad_diff = ga + yg;
            if (yg > top)
                top = yg;
            if (grad_diff > 0) {
                double quad = (qd_a + QD[t]) - (two_ya * (double)y[t]) * (double)Q_a[t];
                double obj = -(grad_diff * grad_diff) / (quad > 0 ? quad : tau);
                if (obj <= best) {
                    best = obj;
                    at = t;
                }
            }
        }
    }
    *gmax = top;
    *obj_min = best;
    return at;
}

#endif
