"""Seeded synthetic datasets (nothing here is real data): the generators tools/make_synthetic.py
writes to LIBSVM files and the benchmarks make in memory.

Each generator yields (X csr float64, y int +-1) blocks of BLOCK_ROWS rows; the same seed gives
the same rows, and the "test" part is drawn from the same hidden model with its own stream.
"""
import os

import numpy as np
import scipy.sparse as sp

from fastsvm.files.datafile import format_rows

BLOCK_ROWS = 50_000          # rows generated and formatted at a time (fixes the random streams)
VALUE_FORMAT = "%.6g"        # the precision of typical published LIBSVM files


def _streams(seed, part):
    """Independent generators for the hidden model and for each part's rows."""
    model, train, test = np.random.SeedSequence(seed).spawn(3)
    return np.random.default_rng(model), {"train": train, "test": test}[part]


def _block_rngs(rows_seq, n_rows):
    """(rows in block, generator) for consecutive blocks; n_rows None = unbounded."""
    b = 0
    while n_rows is None or b * BLOCK_ROWS < n_rows:
        size = BLOCK_ROWS if n_rows is None else min(BLOCK_ROWS, n_rows - b * BLOCK_ROWS)
        yield size, np.random.default_rng(rows_seq.spawn(1)[0])
        b += 1


def text_like_blocks(n_rows=1_000_000, *, n_features=100_000, mean_nnz=40, zipf=1.1, model_density=0.1,
                     noise=0.3, seed=0, part="train"):
    """Yield (X csr float64, y int +-1) blocks of sparse text-like rows.

    Each row draws a lognormal number of tokens (mean ``mean_nnz``) from a Zipf(``zipf``)
    distribution over features; repeated tokens become counts; values are (1 + log tf) * idf,
    normalised to unit L2 norm. The hidden model w has ``model_density`` of its entries
    N(0, 1); y = sign(x.w + noise * sqrt(model_density) * N(0, 1)), noise relative to the
    typical margin of a unit-norm row. ``n_rows=None`` yields blocks forever.
    """
    model_rng, rows_seq = _streams(seed, part)
    freq = 1.0 / np.arange(1, n_features + 1) ** zipf
    freq /= freq.sum()
    cdf = np.cumsum(freq)
    cdf[-1] = 1.0
    idf = np.log(1.0 / freq)
    w = model_rng.standard_normal(n_features) * (model_rng.random(n_features) < model_density)
    sigma = 0.8
    for size, rng in _block_rngs(rows_seq, n_rows):
        draws = np.maximum(1, np.rint(rng.lognormal(np.log(mean_nnz) - sigma**2 / 2, sigma, size))).astype(np.int64)
        rows = np.repeat(np.arange(size, dtype=np.int64), draws)
        feats = np.searchsorted(cdf, rng.random(rows.size), side="right")
        keys, tf = np.unique(rows * n_features + feats, return_counts=True)
        row_of, col = np.divmod(keys, n_features)
        values = (1.0 + np.log(tf)) * idf[col]
        values /= np.sqrt(np.bincount(row_of, weights=values**2, minlength=size))[row_of]
        indptr = np.concatenate([[0], np.cumsum(np.bincount(row_of, minlength=size))])
        X = sp.csr_matrix((values, col.astype(np.int32), indptr.astype(np.int32)), shape=(size, n_features))
        score = X @ w + noise * np.sqrt(model_density) * rng.standard_normal(size)
        yield X, np.where(score >= 0, 1, -1)


# covtype-like continuous measurements: (name, generator, lower, upper) scaled to [0, 1]
_CONTINUOUS = [
    ("elevation", lambda r, n: r.normal(2950, 280, n), 1850, 3860),
    ("aspect", lambda r, n: r.uniform(0, 360, n), 0, 360),
    ("slope", lambda r, n: r.gamma(3.0, 4.7, n), 0, 66),
    ("hydrology_h", lambda r, n: r.exponential(270, n), 0, 1400),
    ("hydrology_v", lambda r, n: r.normal(46, 58, n), -175, 600),
    ("roadways_h", lambda r, n: r.exponential(2350, n), 0, 7120),
    ("hillshade_9am", lambda r, n: r.normal(212, 27, n), 0, 255),
    ("hillshade_noon", lambda r, n: r.normal(223, 20, n), 0, 255),
    ("hillshade_3pm", lambda r, n: r.normal(143, 38, n), 0, 255),
    ("fire_points_h", lambda r, n: r.exponential(1980, n), 0, 7175),
]


def covtype_like_blocks(n_rows=2_000_000, *, noise=0.25, seed=0, part="train"):
    """Yield (X csr float64 with 54 columns, y int +-1) blocks of dense covtype-like rows.

    The soil type depends on the elevation band, and y follows a nonlinear rule of elevation,
    slope x hillshade, distance to water and soil/wilderness effects, plus N(0, noise) noise,
    so a linear model does clearly worse than an RBF kernel.
    """
    model_rng, rows_seq = _streams(seed, part)
    soil_effect = model_rng.normal(0, 0.6, 40)
    wild_effect = model_rng.normal(0, 0.4, 4)
    soil_by_band = model_rng.dirichlet(np.full(40, 0.3), size=8)   # P(soil | elevation band)
    for size, rng in _block_rngs(rows_seq, n_rows):
        cont = np.empty((size, len(_CONTINUOUS)))
        for j, (_, draw, lo, hi) in enumerate(_CONTINUOUS):
            cont[:, j] = (np.clip(draw(rng, size), lo, hi) - lo) / (hi - lo)
        wild = rng.choice(4, size, p=[0.45, 0.05, 0.44, 0.06])
        band = np.minimum((cont[:, 0] * 8).astype(np.int64), 7)
        soil = (rng.random(size)[:, None] > np.cumsum(soil_by_band[band], axis=1)).sum(axis=1)
        soil = np.minimum(soil, 39)
        dense = np.zeros((size, 54))
        dense[:, :10] = np.round(cont, 6)
        dense[np.arange(size), 10 + wild] = 1.0
        dense[np.arange(size), 14 + soil] = 1.0
        e, s, water, noon = cont[:, 0], cont[:, 2], cont[:, 3], cont[:, 7]
        f = (np.sin(9.0 * e) + 3.0 * (e - 0.55) ** 2 - 2.5 * s * noon + 1.5 * np.sqrt(water)
             + soil_effect[soil] + wild_effect[wild] + 0.2 + noise * rng.standard_normal(size))
        yield sp.csr_matrix(dense), np.where(f >= 0, 1, -1)


def moons_blocks(n_rows=50_000, *, noise=0.3, seed=0, part="train"):
    """Yield (X csr float64 with 2 columns, y int +-1) blocks of the two-moons problem: label +1
    on the upper half circle (cos t, sin t), label -1 on the lower one (1 - cos t, 1/2 - sin t),
    t uniform on [0, pi], each point moved by N(0, noise^2 I)."""
    _, rows_seq = _streams(seed, part)
    for size, rng in _block_rngs(rows_seq, n_rows):
        upper = rng.random(size) < 0.5
        t = np.pi * rng.random(size)
        points = np.where(upper[:, None], np.c_[np.cos(t), np.sin(t)], np.c_[1.0 - np.cos(t), 0.5 - np.sin(t)])
        points += noise * rng.standard_normal((size, 2))
        yield sp.csr_matrix(points), np.where(upper, 1, -1)


def write_libsvm(path, blocks, target_bytes=None):
    """Write blocks of (X, y) as one-based LIBSVM text; stop after target_bytes when given.
    Written to a temporary name and renamed, so a file that exists is complete.
    Returns (rows, stored values, bytes)."""
    n_rows = nnz = size = 0
    tmp = f"{path}.part"
    with open(tmp, "wb") as out:
        for X, y in blocks:
            text = format_rows(X, y, zero_based=False, value_format=VALUE_FORMAT)
            out.write(text)
            n_rows, nnz, size = n_rows + X.shape[0], nnz + X.nnz, size + len(text)
            if target_bytes is not None and size >= target_bytes:
                break
    os.replace(tmp, path)
    return n_rows, nnz, size
