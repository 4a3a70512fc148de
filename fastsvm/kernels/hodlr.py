"""A hierarchical (HODLR) approximation K~ of a kernel matrix, with (K~ + beta I)^-1 and K~ products.

Rows are ordered by a cluster tree of recursive balanced bisection (each node split at the median
of its points' projection on a direction: the principal one, or the line between 2-means centres),
so that every node is a contiguous range of the order. For a node with children 1 and 2,

    A = K~(node) + beta I = [[A_1, U V^T], [V U^T, A_2]] = D + W C W^T,
    W = blockdiag(U, V),  C = [[0, I], [I, 0]],

where U V^T ~ K(I_1, I_2) comes from partially pivoted ACA (fastsvm._core._hodlr_blocks) at a relative
tolerance (its stopping test also checked at |I_1| + |I_2| random entries of the block), and the
leaves keep their kernel blocks dense. By Woodbury
A^-1 = (I - W~ S^-1 W^T) D^-1, with W~ = D^-1 W and the 2r x 2r core S = C + W^T W~. Applying
D^-1 is the children's own solves, so the factorization walks the tree children first: each leaf
is factored by Cholesky and each node's core is built from its transformed bases W~, and every
step is applied to the bases of all ancestors over its rows (the recursive Sherman-Morrison-
Woodbury scheme). A solve repeats the same steps on the right-hand side:
O(n (leaf + r levels)) per column.

Positive definiteness: with D positive definite, A is positive definite exactly when S has r
positive and r negative eigenvalues (Sylvester's inertia on [[D, W], [W^T, -C]]); a leaf whose
Cholesky fails or a core of another inertia stops the factorization with a FastSVMError.

Each leaf's n_i x n_i array holds both the kernel block (strict upper triangle, diagonal kept
apart) and its Cholesky factor (lower triangle): one array serves the solve and the product.
"""
import functools
import time

import numpy as np
import scipy.linalg as sla
from scipy.linalg import blas

from .._core._hodlr_blocks import aca, kernel_block
from .._core._kernel import row_sqnorms
from ..csr import to_csr
from ..errors import FastSVMError, NotPositiveDefiniteError, ParameterError
from ..parallel import one_blas_thread, run_tasks

KERNELS = ("linear", "polynomial", "rbf", "sigmoid")
SPLITS = ("pca", "2means")
POWER_STEPS = 20        # power iterations for a node's principal direction
LLOYD_STEPS = 10        # Lloyd iterations for a node's 2-means centres
CORE_RTOL = 1e-12       # a core eigenvalue below this fraction of the largest counts as zero
MB = 1 << 20
LEAF_SIZE = 512         # the default shape (the paper-mode runs' leaves and rank), taken whenever it fits the limit
MAX_RANK = 100
SMALLEST_LEAF = 32      # a chosen shape's smallest leaf: below it the tree's nodes cost more than their rows


def _direction(Xs, split, rng):
    """The direction a node's points (CSR rows Xs) are projected on, and their projections."""
    mean = np.asarray(Xs.mean(axis=0)).ravel()
    if split == "pca":
        v = rng.standard_normal(Xs.shape[1])
        for _ in range(POWER_STEPS):
            t = Xs @ v - mean @ v
            v = Xs.T @ t
            norm = np.linalg.norm(v)
            if norm == 0.0:          # all points equal: any order is a split
                break
            v /= norm
        return Xs @ v - mean @ v
    # 2-means, started from the point farthest from the mean and the point farthest from that
    sq = np.asarray(Xs.multiply(Xs).sum(axis=1)).ravel()
    c1 = Xs[int(np.argmax(sq - 2.0 * (Xs @ mean)))].toarray().ravel()
    c2 = Xs[int(np.argmax(sq - 2.0 * (Xs @ c1)))].toarray().ravel()
    for _ in range(LLOYD_STEPS):
        score = Xs @ (c2 - c1)           # > (|c2|^2 - |c1|^2) / 2: nearer to c2
        near2 = score > 0.5 * (c2 @ c2 - c1 @ c1)
        if near2.all() or not near2.any():
            break
        c1 = np.asarray(Xs[~near2].mean(axis=0)).ravel()
        c2 = np.asarray(Xs[near2].mean(axis=0)).ravel()
    return Xs @ (c2 - c1)


def cluster_tree(X, leaf_size, split="pca", seed=0):
    """The cluster order of X's rows and the tree over it: (perm, lo, hi, left, right), node 0 the
    root, nodes in breadth-first order, node k holding perm[lo[k]:hi[k]], left/right = -1 at a
    leaf. A node of more than leaf_size points is split in two halves ((m + 1) // 2 first)."""
    n = X.shape[0]
    rng = np.random.default_rng(seed)
    perm = np.arange(n, dtype=np.int32)
    lo, hi, left, right = [0], [n], [-1], [-1]
    k = 0
    while k < len(lo):
        a, b = lo[k], hi[k]
        if b - a > leaf_size:
            idx = perm[a:b]
            proj = _direction(X[idx], split, rng)
            perm[a:b] = idx[np.argsort(proj, kind="stable")]
            mid = a + (b - a + 1) // 2
            left[k], right[k] = len(lo), len(lo) + 1
            lo += [a, mid]
            hi += [mid, b]
            left += [-1, -1]
            right += [-1, -1]
        k += 1
    return perm, np.array(lo), np.array(hi), np.array(left), np.array(right)


def estimate_bytes(n, leaf_size, max_rank):
    """What HODLRFactor holds at most for n rows: the leaves (n x leaf_size doubles), per level
    the bases U, V and their transforms (2 n max_rank doubles), and the ACA work space
    (n max_rank doubles)."""
    levels = max(0, int(np.ceil(np.log2(max(n, 1) / max(leaf_size, 1)))))
    return 8 * (n * min(leaf_size, n) + levels * 2 * n * max_rank + n * max_rank)


def fitting_shape(n, memory_limit, leaf_size=None, max_rank=None):
    """(leaf_size, max_rank, chosen) for n rows: the ones given, each missing one chosen so that
    estimate_bytes fits memory_limit (bytes, None: no limit). LEAF_SIZE and MAX_RANK when they
    fit; else the largest rank (<= MAX_RANK) over the leaf sizes LEAF_SIZE, LEAF_SIZE / 2, ...,
    SMALLEST_LEAF, the larger leaf on a tie: a rank capped below what the tolerance asks leaves a
    coupling that can make K~ + beta I indefinite, so the budget goes to the rank first. chosen
    names what was chosen ("" when nothing was). Raises FastSVMError when nothing fits; a shape
    given in full is checked by HODLRFactor."""
    if leaf_size is not None and max_rank is not None:
        return leaf_size, max_rank, ""
    leaves = [leaf_size] if leaf_size is not None else [LEAF_SIZE >> k for k in range(6)
                                                         if LEAF_SIZE >> k >= SMALLEST_LEAF]
    fits = []
    for leaf in leaves:
        if max_rank is not None:
            rank = max_rank
        elif memory_limit is None:
            rank = MAX_RANK
        else:   # estimate_bytes is affine in the rank
            base = estimate_bytes(n, leaf, 0)
            per_rank = estimate_bytes(n, leaf, 1) - base
            rank = MAX_RANK if per_rank == 0 else min(MAX_RANK, int((memory_limit - base) // per_rank))
        if rank >= 0 and (memory_limit is None or estimate_bytes(n, leaf, rank) <= memory_limit):
            fits.append((rank, leaf))
    if not fits:
        rank = 0 if max_rank is None else max_rank
        given = " or ".join(name for name, value in (("leaf_size", leaf_size), ("max_rank", max_rank))
                            if value is not None)
        raise FastSVMError(f"the hierarchical approximation of {n} rows needs at least "
                           f"{estimate_bytes(n, leaves[-1], rank) / MB:.2f} MB (leaf_size {leaves[-1]}, max_rank "
                           f"{rank}), more than the limit of {memory_limit / MB:.2f} MB; "
                           + (f"lower {given} or raise the limit" if given else "raise the limit"))
    rank, leaf = max(fits)
    chosen = " and ".join(name for name, given in (("leaf_size", leaf_size), ("max_rank", max_rank))
                          if given is None)
    return leaf, rank, chosen


class HODLRFactor:
    """K~ + beta I for the kernel matrix of X's rows, compressed and factored once.

    X : anything fastsvm.csr.to_csr takes; kernel : fastsvm.solvers.base.Kernel (kind, gamma,
    degree, coef0), linear, polynomial, rbf or sigmoid; beta > 0. tol : relative Frobenius
    tolerance of each off-diagonal block; max_rank : at most this many crosses per block (0: the
    dense leaves alone); leaf_size : the largest leaf (max_rank and leaf_size: None, chosen by
    fitting_shape to fit memory_limit; a shape over the limit is refused); seed : the clustering's start vectors and
    ACA's sampled entries; n_threads : threads over the independent nodes of a level (each node's
    kernel values and BLAS calls run on one); stop : int32[1], set on Ctrl-C (KeyboardInterrupt);
    log : called with one line per phase; memory_limit : bytes, or None; split : "pca" or
    "2means", the direction each node is split along.

    Attributes: n, beta, backend = "hodlr", nbytes, timings ({"clustering", "compression",
    "factorization"} -> seconds), perm (the cluster order: position k holds row perm[k]), ranks
    (the off-diagonal ranks, node by node breadth-first), levels. refactor(beta) factors the same
    K~ at another beta (a NotPositiveDefiniteError carries the refused factor as .compressed).
    """

    backend = "hodlr"

    def __init__(self, X, kernel, beta, *, tol=1e-2, max_rank=None, leaf_size=None, seed=0, n_threads=1,
                 stop=None, log=None, memory_limit=None, split="pca"):
        kind = kernel.kind
        if kind not in KERNELS:
            raise ParameterError(f"the hierarchical approximation supports the {', '.join(KERNELS)} kernels, "
                                 f"not {kind!r}")
        if not (np.isfinite(beta) and beta > 0):
            raise ParameterError(f"beta must be finite and > 0, not {beta!r}")
        if not (np.isfinite(tol) and tol >= 0):
            raise ParameterError(f"the approximation tolerance must be finite and >= 0, not {tol!r}")
        if max_rank is not None and (int(max_rank) != max_rank or max_rank < 0):
            raise ParameterError(f"max_rank must be an integer >= 0, not {max_rank!r}")
        if leaf_size is not None and (int(leaf_size) != leaf_size or leaf_size < 1):
            raise ParameterError(f"leaf_size must be an integer >= 1, not {leaf_size!r}")
        if split not in SPLITS:
            raise ParameterError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
        X = to_csr(X)
        if X.shape[0] == 0:
            raise FastSVMError("the hierarchical approximation needs at least one row")
        self.n = X.shape[0]
        self.beta = float(beta)
        self._log = log or (lambda line: None)
        leaf_size, max_rank, chosen = fitting_shape(self.n, memory_limit, leaf_size, max_rank)
        self.tol, self.max_rank, self.leaf_size = float(tol), int(max_rank), int(leaf_size)
        need = estimate_bytes(self.n, self.leaf_size, self.max_rank)
        if memory_limit is not None and need > memory_limit:
            raise FastSVMError(f"the hierarchical approximation of {self.n} rows needs up to {need / MB:.2f} MB "
                               f"(leaf_size {self.leaf_size}, max_rank {self.max_rank}), more than the limit of "
                               f"{memory_limit / MB:.2f} MB; lower leaf_size or max_rank, or raise the limit")
        if chosen and memory_limit is not None:
            self._log(f"hodlr shape: leaf_size {self.leaf_size}, max_rank {self.max_rank} ({chosen} chosen to fit "
                      f"the limit of {memory_limit / MB:.2f} MB; up to {need / MB:.2f} MB)")
        self._kernel = (kind, float(kernel.gamma), int(kernel.degree), float(kernel.coef0))
        self._threads = max(1, int(n_threads))
        self._stop = np.zeros(1, dtype=np.int32) if stop is None else stop
        self.timings = {}
        with self._blas():
            self._build(X, split, seed)

    @staticmethod
    def _blas():
        # BLAS on the calling thread: the leaves and cores are small (leaf_size), and a threaded
        # OpenBLAS on a busy machine runs their Cholesky and eigh slower, not faster (its threads
        # wait for cores the other threads hold)
        return one_blas_thread()

    # ------------------------------------------------------------------------------ building

    def _build(self, X, split, seed):
        started = time.perf_counter()
        self.perm, self._lo, self._hi, self._left, self._right = cluster_tree(X, self.leaf_size, split, seed)
        self._parent = np.full(len(self._lo), -1)
        inner = np.flatnonzero(self._left >= 0)
        self._parent[self._left[inner]] = inner
        self._parent[self._right[inner]] = inner
        self.levels = self._depth(len(self._lo) - 1)
        self._order = self._waves()
        self._phase("clustering", started, f"{self.levels} levels, {int(np.sum(self._left < 0))} leaves")
        self._check(self._stop)
        started = time.perf_counter()
        self._compress(X, seed)
        self._phase("compression", started, f"ranks {min(self.ranks, default=0)}..{max(self.ranks, default=0)}")
        self._factor_timed()

    def _factor_timed(self):
        started = time.perf_counter()
        try:
            self._factor()
        except NotPositiveDefiniteError as error:
            # the compression does not depend on beta: kept for refactor at a larger one
            error.compressed = self
            raise
        self._phase("factorization", started, "")

    def refactor(self, beta):
        """The same K~ factored again at another beta: the leaves' kernel blocks rebuilt from their
        stored triangle and diagonal, the compression (beta-free, most of the build) reused. Also
        after a failed factorization (NotPositiveDefiniteError.compressed is this object)."""
        if not (np.isfinite(beta) and beta > 0):
            raise ParameterError(f"beta must be finite and > 0, not {beta!r}")
        for k in np.flatnonzero(self._left < 0):
            K = np.triu(self._leaf[k], 1)     # a factored (or failed) leaf keeps the kernel in this triangle
            K += K.T
            K[np.diag_indices_from(K)] = self._diag[k]
            self._leaf[k] = K
        self.beta = float(beta)
        with self._blas():
            self._factor_timed()
        return self

    def _depth(self, node):
        d = 0
        while self._parent[node] >= 0:
            node, d = self._parent[node], d + 1
        return d

    @staticmethod
    def _check(stop):
        if stop[0]:
            raise KeyboardInterrupt

    def _phase(self, name, started, detail):
        self.timings[name] = time.perf_counter() - started
        held = f", {self.nbytes / MB:.1f} MB held" if name != "clustering" else ""
        self._log(f"hodlr {name}: {self.timings[name]:.2f} s{held}" + (f"; {detail}" if detail else ""))

    def _compress(self, X, seed):
        """Dense leaves (kernel block, symmetric, diagonal kept apart) and ACA bases of every node,
        the nodes of a level in threads, each single-threaded: ACA's two short OpenMP regions per
        cross cost more than they save on a busy machine (each waits for every thread to be
        scheduled)."""
        n_nodes = len(self._lo)
        self._leaf, self._diag = [None] * n_nodes, [None] * n_nodes
        self._U, self._V = [None] * n_nodes, [None] * n_nodes
        sq = row_sqnorms(X)
        for wave in self._order:
            self._each(functools.partial(self._compress_node, X, sq, seed), wave)
        self.ranks = [self._U[k].shape[1] for k in range(n_nodes) if self._left[k] >= 0]

    def _compress_node(self, X, sq, seed, k):
        self._check(self._stop)
        kind, gamma, degree, coef0 = self._kernel
        a, b = self._lo[k], self._hi[k]
        if self._left[k] < 0:
            idx = self.perm[a:b]
            block = np.empty((b - a, b - a))
            kernel_block(X, idx, idx, kind, gamma, degree=degree, coef0=coef0, sqnorms=sq, out=block, n_threads=1,
                         stop=self._stop)
            self._diag[k] = block.diagonal().copy()
            self._leaf[k] = block
            return
        mid = self._hi[self._left[k]]
        m, p = mid - a, b - mid
        # the entries ACA's stopping test is checked at: as many as one cross costs
        draw = np.random.default_rng([seed, k])
        s_rows = draw.integers(0, m, m + p, dtype=np.int32)
        s_cols = draw.integers(0, p, m + p, dtype=np.int32)
        work = np.empty(self.max_rank * (m + p))
        r = aca(X, self.perm[a:mid], self.perm[mid:b], kind, gamma, degree=degree, coef0=coef0, sqnorms=sq,
                tol=self.tol, max_rank=self.max_rank, work=work, sample_rows=s_rows, sample_cols=s_cols, n_threads=1,
                stop=self._stop)
        self._U[k] = work[:r * m].reshape(r, m).T.copy()       # copies: work is max_rank wide
        self._V[k] = work[self.max_rank * m:self.max_rank * m + r * p].reshape(r, p).T.copy()

    def _slices(self, node):
        """(ancestor, 'U' or 'V', row slice) of every ancestor basis over node's rows."""
        a, b = self._lo[node], self._hi[node]
        out = []
        p = self._parent[node]
        while p >= 0:
            mid = self._hi[self._left[p]]
            if a < mid:
                out.append((p, 0, slice(a - self._lo[p], b - self._lo[p])))
            else:
                out.append((p, 1, slice(a - mid, b - mid)))
            p = self._parent[p]
        return out

    def _waves(self):
        """The nodes by depth, deepest first: a wave's nodes hold disjoint rows and their children
        are in earlier waves, so its steps are independent (run in threads, the same bits)."""
        depth = np.array([self._depth(k) for k in range(len(self._lo))])
        return [np.flatnonzero(depth == d) for d in range(int(depth.max()), -1, -1)]

    def _each(self, step, nodes):
        """step(k) for every node of a wave: in threads when asked for and worth it."""
        if self._threads > 1 and len(nodes) > 1:
            run_tasks([functools.partial(step, k) for k in nodes], self._threads, self._stop)
            return
        for k in nodes:
            step(k)

    def _factor(self):
        """Leaves by Cholesky, nodes by their Woodbury cores, children first; each step also
        applied to the ancestors' bases over its rows, so that at a node W~ = D^-1 W."""
        n_nodes = len(self._lo)
        self._Ut = [None if u is None else u.copy() for u in self._U]
        self._Vt = [None if v is None else v.copy() for v in self._V]
        self._core = [None] * n_nodes
        for wave in self._order:
            self._each(self._factor_node, wave)

    def _factor_node(self, k):
        self._check(self._stop)
        if self._left[k] < 0:
            self._factor_leaf(k)
        else:
            self._factor_core(k)
        parts = self._slices(k)
        if not parts:
            return
        bases = [(self._Ut if side == 0 else self._Vt)[p] for p, side, _ in parts]
        Z = np.hstack([B[rows] for B, (_, _, rows) in zip(bases, parts)])
        Z = self._apply_step(k, Z)
        at = 0
        for B, (_, _, rows) in zip(bases, parts):
            B[rows] = Z[:, at:at + B.shape[1]]
            at += B.shape[1]

    def _factor_leaf(self, k):
        block = self._leaf[k].T        # the same symmetric values, Fortran order: LAPACK works in place
        self._leaf[k] = block          # its strict upper triangle stays the kernel's, factored or not (refactor)
        block[np.diag_indices_from(block)] += self.beta
        try:
            factor, _ = sla.cho_factor(block, lower=True, overwrite_a=True, check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            raise NotPositiveDefiniteError(self._not_pd(k, "its dense leaf block: the kernel itself is indefinite")) \
                from None
        self._leaf[k] = factor

    def _factor_core(self, k):
        U, V, Ut, Vt = self._U[k], self._V[k], self._Ut[k], self._Vt[k]
        r = U.shape[1]
        if r == 0:
            self._core[k] = np.zeros((0, 0))
            return
        S = np.block([[U.T @ Ut, np.eye(r)], [np.eye(r), V.T @ Vt]])
        lam, Q = np.linalg.eigh(0.5 * (S + S.T))
        small = CORE_RTOL * np.abs(lam).max()
        if not (np.isfinite(lam).all() and np.sum(lam > small) == r and np.sum(lam < -small) == r):
            raise NotPositiveDefiniteError(self._not_pd(k, "its low-rank coupling"))
        self._core[k] = (Q / lam) @ Q.T

    def _not_pd(self, k, what):
        fix = ("raise beta" if self._left[k] < 0 else
               f"tighten tol (now {self.tol:g}), raise max_rank (now {self.max_rank}) or raise beta")
        return (f"K~ + beta I is not positive definite at rows {self._lo[k]}..{self._hi[k] - 1} of the cluster "
                f"order ({what}); {fix} (now {self.beta:g})")

    def _apply_step(self, k, Z):
        """Z (rows of node k) <- the node's factorization step: a leaf's Cholesky solve, or the
        Woodbury correction (I - W~ S^-1 W^T) Z."""
        if self._left[k] < 0:
            return sla.cho_solve((self._leaf[k], True), Z, check_finite=False)
        r = self._U[k].shape[1]
        if r == 0:
            return Z
        m = self._U[k].shape[0]
        T = self._core[k] @ np.vstack([self._U[k].T @ Z[:m], self._V[k].T @ Z[m:]])
        Z[:m] -= self._Ut[k] @ T[:r]
        Z[m:] -= self._Vt[k] @ T[r:]
        return Z

    # ------------------------------------------------------------------------------ use

    @property
    def nbytes(self):
        held = self.perm.nbytes
        for name in ("_leaf", "_diag", "_U", "_V", "_Ut", "_Vt", "_core"):
            held += sum(a.nbytes for a in getattr(self, name, ()) if a is not None)
        return held

    def _columns(self, B):
        B = np.asarray(B, dtype=np.float64)
        if B.ndim not in (1, 2) or B.shape[0] != self.n:
            raise FastSVMError(f"expected a vector of {self.n} values or an ({self.n}, k) block, got shape "
                               f"{B.shape}")
        return B.reshape(self.n, -1)[self.perm]     # a copy, in the cluster order

    def _original(self, Y, shape):
        out = np.empty_like(Y)
        out[self.perm] = Y
        return out.reshape(shape)

    def solve(self, B):
        """(K~ + beta I)^-1 B for a vector (n,) or a block (n, k), rows in the original order."""
        Y = self._columns(B)
        def step(k):
            Y[self._lo[k]:self._hi[k]] = self._apply_step(k, Y[self._lo[k]:self._hi[k]])

        with self._blas():
            for wave in self._order:
                self._each(step, wave)
        return self._original(Y, np.shape(B))

    def matvec(self, V):
        """K~ V for a vector (n,) or a block (n, k), rows in the original order."""
        Z = self._columns(V)
        Y = np.zeros_like(Z)
        with self._blas():
            for k in range(len(self._lo)):
                a, b = self._lo[k], self._hi[k]
                if self._left[k] < 0:
                    # symm reads the upper triangle (the kernel); the diagonal holds the factor's
                    F = self._leaf[k]
                    Y[a:b] += blas.dsymm(1.0, F, Z[a:b], lower=0) + (self._diag[k] - F.diagonal())[:, None] * Z[a:b]
                    continue
                mid = self._hi[self._left[k]]
                U, W = self._U[k], self._V[k]
                Y[a:mid] += U @ (W.T @ Z[mid:b])
                Y[mid:b] += W @ (U.T @ Z[a:mid])
        return self._original(Y, np.shape(V))

    def leaf_blocks(self):
        """[(lo, hi, K(I, I))] of every leaf in the cluster order (tests, reports: a copy each)."""
        out = []
        for k in np.flatnonzero(self._left < 0):
            F = self._leaf[k]
            K = np.triu(F, 1)
            out.append((int(self._lo[k]), int(self._hi[k]), K + K.T + np.diag(self._diag[k])))
        return out

    def coupling_blocks(self):
        """[(lo, mid, hi, U, V)] of every node: K~(lo:mid, mid:hi) = U V^T in the cluster order."""
        return [(int(self._lo[k]), int(self._hi[self._left[k]]), int(self._hi[k]), self._U[k], self._V[k])
                for k in np.flatnonzero(self._left >= 0)]
