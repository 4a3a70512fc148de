"""Reductions over the vectors of a solve: einsum's own loop, not BLAS -- a threaded BLAS dot
costs milliseconds of thread hand-off on a busy machine and buys nothing at these sizes."""
import math

import numpy as np


def dot(a, b):
    """a . b as a Python float."""
    return float(np.einsum("i,i->", a, b))


def norm(a):
    """|a|, the Euclidean norm."""
    return math.sqrt(dot(a, a))
