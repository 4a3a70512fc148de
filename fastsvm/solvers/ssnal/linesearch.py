"""The step length along a Newton direction: the minimiser of a convex function along a line,
from its slope (the linear and the kernel SSsNAL's line searches)."""
import math


def line_minimum(trial, slope0, rtol=0.2, grow=2.0, max_grow=6, *, max_refine=10, max_trials=None, start=1.0):
    """alpha > 0 near the minimiser of a convex function along a line, from its slope (the linear
    and the kernel SSsNAL's line searches). trial(alpha) returns a tuple (value change, slope,
    ...) and the slope is non-decreasing with slope(0) = slope0 < 0.

    From alpha = start (1: the Newton step) the step is multiplied by `grow` (at most `max_grow` times)
    while the slope is still below -rtol |slope0|; the bracketed root of the slope is then
    narrowed by the Illinois variant of regula falsi (at most `max_refine` trials) until
    |slope| <= rtol |slope0|. `max_trials` bounds the trials of both phases together; None: no
    bound. Returns (alpha, trial(alpha)), alpha the last trial."""
    inf = math.inf
    max_grow = inf if max_grow is None else max_grow
    max_refine = inf if max_refine is None else max_refine
    max_trials = inf if max_trials is None else max_trials
    lo, s_lo = 0.0, slope0
    hi = start
    out = trial(hi)
    s_hi = out[1]
    tries, grown, refined = 1, 0, 0
    while s_hi < -rtol * abs(slope0) and grown < max_grow and tries < max_trials:
        lo, s_lo = hi, s_hi
        hi *= grow
        out = trial(hi)
        s_hi = out[1]
        grown += 1
        tries += 1
    alpha, s_alpha, side = hi, s_hi, 0
    while (abs(s_alpha) > rtol * abs(slope0) and s_hi > 0.0 and refined < max_refine
           and tries < max_trials):
        alpha = lo + (hi - lo) * (-s_lo) / (s_hi - s_lo)
        out = trial(alpha)
        s_alpha = out[1]
        refined += 1
        tries += 1
        if s_alpha < 0.0:
            lo, s_lo = alpha, s_alpha
            if side < 0:          # the same end twice: halve the other end's slope
                s_hi *= 0.5
            side = -1
        else:
            hi, s_hi = alpha, s_alpha
            if side > 0:
                s_lo *= 0.5
            side = 1
    return alpha, out
