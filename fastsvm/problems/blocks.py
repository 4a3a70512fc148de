"""A linear primal solver's rows in blocks, run by a team (the split of SVM-ALM and NESVM).

A solver's Block holds one block of rows and its per-sample state; each of its methods is one map
over those rows, and what it returns is summed over the blocks (p-vectors, a few scalars). A team
runs a method over all its blocks: ``team.sum(name, *args)`` returns the sum, ``team.each(name,
*args)`` returns nothing. OneBlock is the single machine's team; fastsvm.distributed's WorkerTeam
holds many blocks on Dask workers. A team also has n_rows, n_weights (the columns and the bias
weight), bias and mean_weight (the mean C_i).
"""
import numpy as np


class OneBlock:
    """The single-machine team: one block, its methods called in place (what they return is the
    block's own buffer: read it before the next call)."""

    def __init__(self, block):
        self.block, rows = block, block.rows
        self.n_rows, self.n_weights, self.bias = rows.n_rows, rows.n_weights, rows.bias
        self.mean_weight = float(np.mean(rows.weights))

    def sum(self, name, *args):
        return getattr(self.block, name)(*args)

    def each(self, name, *args):
        getattr(self.block, name)(*args)


def largest_eigenvalue(team, product, iterations, stop):
    """lambda_max of the symmetric operator v -> team.sum(product, v) (A^T D A, D >= 0, summed over
    the blocks) by power iteration from a fixed start: the steps of
    fastsvm._core._margins.largest_eigenvalue, which reads one LabeledRows. From below: callers
    inflate it."""
    v = 1.0 + (np.arange(team.n_weights) % 7) / 10.0
    v /= np.sqrt(float(np.einsum("i,i->", v, v)))
    estimate = 0.0
    for _ in range(iterations):
        if stop is not None and stop[0]:
            raise KeyboardInterrupt
        out = team.sum(product, v)
        estimate = np.sqrt(float(np.einsum("i,i->", out, out)))
        if not np.isfinite(estimate):
            return estimate
        if not estimate > 0:
            return 0.0
        v = out / estimate
    return estimate
