"""One-vs-one pairs solved side by side by SMO: they share what one pair's cache held (or, when it held
most of its kernel matrix, are solved one at a time), a pair reads its
rows in place, and what a pair holds exists only while it is being solved (LIBSVM holds no more
than the running pair's)."""
import gc
import threading

import numpy as np
import pytest

from fastsvm.params import Params
from fastsvm.solvers import SOLVERS, smo
from fastsvm.solvers.base import Subproblem
from fastsvm._core._cache import bytes_to_hold_all
from fastsvm.training.schedule import MOST_OF_ITS_MATRIX
from fastsvm.training.trainer import fit_model
from conftest import solver_like


def _four_classes(spread):
    rng = np.random.default_rng(0)
    centers = rng.normal(scale=spread, size=(4, 5))
    y = np.repeat(np.arange(4.0), 60)
    return centers[y.astype(int)] + rng.normal(size=(y.size, 5)), y


@pytest.fixture(scope="module")
def four_classes():
    return _four_classes(3.0)


@pytest.mark.parametrize("cache_mb", [0.01, 12.0])
@pytest.mark.parametrize("n_jobs, running", [(1, 1), (2, 2), (4, 4), (8, 5)])
@pytest.mark.parametrize("spread", [3.0, 0.1])
def test_pairs_side_by_side_share_what_one_pair_held(monkeypatch, n_jobs, running, cache_mb, spread):
    # one thread: LIBSVM's -m for every pair. Several: the largest pair (the first of equals)
    # alone with -m, then the others side by side share what its cache held at most -- or, when
    # it held most of its whole kernel matrix (overlapping classes: every row a support vector,
    # every column used), they are solved one at a time with that budget and every thread
    X, y = _four_classes(spread)
    budgets, caches, threads = [], [], []
    original = smo.KernelCache

    def recording(X, kind, gamma, degree, coef0, *, cache_bytes, n_threads, **options):
        budgets.append(cache_bytes)
        threads.append(n_threads)
        caches.append(original(X, kind, gamma, degree, coef0, cache_bytes=cache_bytes, n_threads=n_threads, **options))
        return caches[-1]

    monkeypatch.setattr(smo, "KernelCache", recording)
    model = fit_model(X, y, Params(cache_size=cache_mb, n_jobs=n_jobs))
    assert len(budgets) == 6  # 4 classes: 6 pairs of 120 rows
    assert budgets[0] == int(cache_mb * (1 << 20))
    held = caches[0].peak_bytes
    assert 0 < held <= max(budgets[0], 120 * 20 + 2 * 120 * 4)   # LIBSVM's floor: two columns
    one_at_a_time = held > MOST_OF_ITS_MATRIX * bytes_to_hold_all(120)
    if cache_mb == 12.0:   # both regimes are met: few columns used (spread out), all (overlapping)
        assert one_at_a_time == (spread < 1.0)
    if n_jobs > 1 and one_at_a_time:
        running = 1
    shared = cache_mb if n_jobs == 1 else min(cache_mb, held / 2**20) / running
    assert budgets[1:] == [int(shared * (1 << 20))] * 5
    assert threads == [n_jobs] + [n_jobs // running] * 5
    assert all(c.peak_bytes <= max(b, 120 * 20 + 2 * 120 * 4) for b, c in zip(budgets, caches))
    reference = fit_model(X, y, Params(cache_size=cache_mb, n_jobs=1))
    np.testing.assert_array_equal(model.sv_coef, reference.sv_coef)


def test_a_pair_holds_its_data_only_while_it_is_solved(monkeypatch, four_classes):
    X, y = four_classes
    alive = []
    lock = threading.Lock()
    original = smo.solve

    def counting(sub):
        with lock:  # subproblems alive now (earlier tests' garbage collected): the running pairs' only
            gc.collect()
            alive.append(sum(isinstance(o, Subproblem) for o in gc.get_objects()))
        return original(sub)

    monkeypatch.setitem(SOLVERS, "smo", solver_like(smo.SOLVER, solve=counting))
    fit_model(X, y, Params(n_jobs=1))
    assert alive == [1] * 6


def test_a_pair_reads_its_rows_of_the_training_data_in_place(monkeypatch, four_classes):
    X, y = four_classes
    seen = []
    original = smo.solve

    def spying(sub):
        seen.append((sub.X, sub.rows))
        return original(sub)

    monkeypatch.setitem(SOLVERS, "smo", solver_like(smo.SOLVER, solve=spying))
    fit_model(X, y, Params(n_jobs=1))
    first = seen[0][0]
    for data, rows in seen:
        assert data is first and data.shape[0] == y.size   # one CSR of all rows, not copies
        assert rows.size == 120 and np.unique(y[rows]).size == 2
