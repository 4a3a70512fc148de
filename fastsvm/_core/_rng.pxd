# The one seeded generator of the nogil kernels: splitmix64 turns a seed into a state, xorshift64*
# draws from it (small, fast, the same stream on every platform). Each run holds its own state, so
# threads never share one. LIBSVM's glibc rand() (_crand) is the only other generator: it
# reproduces svm-train's folds.
from libc.stdint cimport uint32_t, uint64_t


cdef inline uint64_t splitmix64(uint64_t x) noexcept nogil:
    x += 0x9E3779B97F4A7C15ULL
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL
    return x ^ (x >> 31)


cdef inline uint64_t rng_state(object seed):
    """The state a seed (any Python integer, reduced mod 2^64) starts from; never 0, which
    xorshift cannot leave."""
    cdef uint64_t state = splitmix64(<uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF))
    return state if state != 0 else 1


cdef inline uint32_t next_u32(uint64_t* state) noexcept nogil:
    cdef uint64_t x = state[0]
    x ^= x >> 12
    x ^= x << 25
    x ^= x >> 27
    state[0] = x
    return <uint32_t>((x * 0x2545F4914F6CDD1DULL) >> 32)


cdef inline int draw_below(uint64_t* state, int bound) noexcept nogil:
    """Uniform-enough integer in [0, bound) by multiply-shift (no modulo; bias < bound / 2^32)."""
    return <int>((<uint64_t>next_u32(state) * <uint64_t>bound) >> 32)


cdef inline void shuffle(int* index, int n, uint64_t* state) noexcept nogil:
    """Fisher-Yates over index[0:n], front to back."""
    cdef int i, j, t
    for i in range(n - 1):
        j = i + draw_below(state, n - i)
        t = index[i]
        index[i] = index[j]
        index[j] = t
