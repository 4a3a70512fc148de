"""The working set of the kernel front end: the rows U at the kernel cache's first positions
and their variables, with Q_UU products and blocks from the cache, or from K_UU's kept values
when it is numerically sparse (a SparseKernel). The -m budget is shared: what the kept values
and the Newton systems' blocks hold is taken from the cache's."""
from contextlib import contextmanager

import numpy as np

from ..._core._knapsack import KnapsackSet
from ..._core._ssnal_sparse_kernel import SparseKernel, kept_above
from ...heap import release_free_memory
from ...problems.vector import dot
from .config import Config


class WorkingSet:
    """The rows U at cache positions 0 .. L-1 and their variables ("sub" indices): Q_UU products
    and blocks from the cache, the equality constraint restricted to U. budget_bytes: the -m
    budget, shared by the cache, K_UU's kept values and the blocks of the Newton systems."""

    def __init__(self, dual, cache, products, rows, x, *, stop, budget_bytes, rbf=False, config=None):
        n = dual.n
        self.cfg = config = Config() if config is None else config
        self.rbf = rbf          # K > 0 with K_ii = 1: its row sums are a product (row_sums)
        self.dual, self.cache, self.products, self.stop = dual, cache, products, stop
        self.row_at = cache.move_to_front(np.ascontiguousarray(rows, dtype=np.int32))
        self.L = L = rows.shape[0]
        self.rows = self.row_at[:L].astype(np.int64)
        self.rows_i32 = np.ascontiguousarray(self.row_at[:L])
        copies = dual.m // n                             # 1 (C-SVC) or 2 (SVR)
        self.vars = np.concatenate([self.rows + k * n for k in range(copies)])
        self.pos = np.tile(np.arange(L, dtype=np.int32), copies)
        self.a = dual.K.a[self.vars]
        self.c = dual.c[self.vars]
        self.upper = dual.K.upper[self.vars]
        x_u = x[self.vars]
        self.K = KnapsackSet(self.a, dot(self.a, x_u), np.zeros_like(self.upper), self.upper)
        self.seen = np.zeros(L, dtype=bool)              # positions whose column a product used
        # K_UU's kept values when it is numerically sparse (RBF; half the budget at most)
        self.budget = budget_bytes
        self.held = 0                                    # bytes of the budget the kept values hold
        self.sparse = None
        if rbf:
            self.sparse = sparse_kernel(products, self.rows_i32, budget_bytes // 2, config, self.lend)
            self.held = 0 if self.sparse is None else self.sparse.nbytes
        cache.set_budget(budget_bytes - self.held)

    @property
    def available(self):
        """Bytes of the budget a block may take (from the cache's share)."""
        return self.budget - self.held

    def lend(self, nbytes):
        """The cache's share of the budget made nbytes smaller (its least recent columns dropped,
        their pages given back: glibc keeps freed columns resident otherwise)."""
        held_before = self.cache.held_bytes
        self.cache.set_budget(self.budget - self.held - nbytes)
        if self.cache.held_bytes < held_before:
            release_free_memory()

    @contextmanager
    def lent(self, nbytes):
        """nbytes of the cache's share lent while the body holds a block."""
        self.lend(nbytes)
        try:
            yield
        finally:
            self.lend(0)

    def qmul(self, v, idx=None):
        """(Q_UU v) for a vector v over the sub variables, nonzero only on idx (None: anywhere)."""
        if idx is None:
            idx = np.flatnonzero(v)
        if idx.shape[0] == 0:
            return np.zeros(self.a.shape[0])
        beta = np.bincount(self.pos[idx], weights=self.a[idx] * v[idx], minlength=self.L)
        nz = np.flatnonzero(beta).astype(np.int32)
        out = np.zeros(self.L)
        if self.sparse is not None:
            self.sparse.scatter(nz, beta[nz], out)
            return self.a * out[self.pos]
        have = self.cache.cached_mask(nz, self.L)
        first = ~(have | self.seen[nz])
        if np.count_nonzero(first) >= self.cfg.products_min_columns:
            # many columns never used before, most needed once (coordinates switching bounds):
            # computed on the fly by the faster inverted-index product, kept out of the cache
            # until used again (the free set's columns are, at every Newton step)
            far = nz[first]
            self.products.matvec(self.rows_i32, self.rows_i32[far], beta[far], out)
            self.seen[far] = True
            nz, have = nz[~first], have[~first]
        missing = nz[~have]
        if missing.shape[0] >= self.cfg.products_min_columns:
            # many columns to cache: computed a chunk at a time by the inverted-index product on
            # the threads, each chunk used at once (a budget smaller than them all keeps the
            # last ones); one column at a time is slower: each split over the threads repeats the pass
            held = nz[have]    # first: a tight budget would drop them for the new ones
            self.cache.axpy_columns(held, beta[held], self.L, out, self.stop)
            step = max(1, self.cfg.store_values // max(self.L, 1))
            for lo in range(0, missing.shape[0], step):
                part = missing[lo: lo + step]
                self.cache.store_columns(part, self.products.block(self.rows_i32[part], self.rows_i32), self.L)
                self.cache.axpy_columns(part, beta[part], self.L, out, self.stop)
        else:
            self.cache.axpy_columns(nz, beta[nz], self.L, out, self.stop)
        return self.a * out[self.pos]

    def q_product(self, J):
        """v -> Q_JJ v, its |J|^2 kernel values computed at every call by KernelProducts (no
        storage, no cache traffic; SVR: a row's two variables share one value)."""
        positions, inverse = np.unique(self.pos[J], return_inverse=True)
        rows = self.rows_i32[positions]
        aJ = self.a[J]

        def product(v):
            beta = np.bincount(inverse, weights=aJ * v, minlength=positions.shape[0])
            out = np.zeros(positions.shape[0])
            self.products.matvec(rows, rows, beta, out)
            return aJ * out[inverse]

        return product

    def row_sums(self, J):
        """sum_{s in J} |Q_rs| for every r in J, by one product (RBF: |Q_rs| = K_rs)."""
        v = np.zeros(self.a.shape[0])
        v[J] = self.a[J]
        return self.a[J] * self.qmul(v, J)[J]

    def q_block(self, J, dtype=np.float64):
        """Q_JJ = (a_J a_J^T) o K[pos_J, pos_J] (SVR: both variables of a row may be in J): from
        cached columns, or, when many are not cached (a free set on the move), by KernelProducts
        (|J|^2 kernel values instead of |J| L). In float32 (dtype): computed a block of rows at a
        time by KernelProducts, never whole in float64."""
        p = self.pos[J]
        uniq, inv = np.unique(p, return_inverse=True)
        uniq = uniq.astype(np.int32)
        rows = self.rows_i32[uniq]
        if dtype != np.float64:
            Kb = np.empty((uniq.shape[0], uniq.shape[0]), dtype=dtype)
            step = max(1, self.cfg.store_values // max(uniq.shape[0], 1))
            for lo in range(0, uniq.shape[0], step):
                Kb[lo: lo + step] = self.products.block(rows[lo: lo + step], rows)
        elif uniq.shape[0] - np.count_nonzero(self.cache.cached_mask(uniq, self.L)) >= self.cfg.products_min_columns:
            Kb = self.products.block(rows, rows)
        else:
            Kb = self.cache.columns_block(uniq, self.L, self.stop)
        if uniq.shape[0] != p.shape[0] or np.any(uniq != p):
            Kb = Kb[np.ix_(inv, inv)]
        aJ = self.a[J].astype(dtype)
        Kb *= aJ[:, None]        # in place: blocks of order thousands, no temporaries
        Kb *= aJ
        return Kb


def sparse_kernel(products, rows, budget_bytes, config, lend):
    """K[rows][:, rows] as a SparseKernel of its values >= config.sparse_drop / |rows|, when that keeps at
    most config.sparse_max_density of them and fits budget_bytes (judged on config.sparse_sample_rows evenly
    spaced rows first: lend(budget_bytes) then makes room for it); else None. Built a block of rows at a
    time by KernelProducts."""
    L = rows.shape[0]
    if L < config.sparse_min_rows:
        return None
    threshold = config.sparse_drop / L
    max_kept = min(config.sparse_max_density * L * L, budget_bytes / config.sparse_value_bytes)
    sample = np.ascontiguousarray(rows[:: max(1, L // config.sparse_sample_rows)])
    if np.count_nonzero(products.block(sample, rows) >= threshold) * (L / sample.shape[0]) > max_kept:
        return None
    lend(budget_bytes)
    counts, indices, values = [], [], []
    kept = 0
    step = max(1, config.store_values // L)
    for lo in range(0, L, step):
        c, i, v = kept_above(products.block(rows[lo: lo + step], rows), threshold)
        kept += i.shape[0]
        if kept > max_kept:      # the sample misjudged it
            return None
        counts.append(c)
        indices.append(i)
        values.append(v)
    indptr = np.zeros(L + 1, dtype=np.int32)
    np.cumsum(np.concatenate(counts), out=indptr[1:])
    return SparseKernel(indptr, np.concatenate(indices), np.concatenate(values), products.n_threads)
