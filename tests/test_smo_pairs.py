"""One-vs-one pairs solved side by side by SMO: they share LIBSVM's -m budget, a pair reads its
rows in place, and what a pair holds exists only while it is being solved (LIBSVM holds no more
than the running pair's)."""
import dataclasses
import gc
import threading

import numpy as np
import pytest

from fastsvm.params import Params
from fastsvm.solvers import SOLVERS, smo
from fastsvm.solvers.base import Subproblem
from fastsvm.train import fit_model


@pytest.fixture(scope="module")
def four_classes():
    rng = np.random.default_rng(0)
    centers = rng.normal(scale=3.0, size=(4, 5))
    y = np.repeat(np.arange(4.0), 60)
    return centers[y.astype(int)] + rng.normal(size=(y.size, 5)), y


@pytest.mark.parametrize("cache_mb", [0.01, 12.0])
@pytest.mark.parametrize("n_jobs, running", [(1, 1), (2, 2), (4, 4), (8, 6)])
def test_pairs_side_by_side_share_the_cache_budget(monkeypatch, four_classes, n_jobs, running, cache_mb):
    # together they hold no more than -m, nor more than LIBSVM's cache can for one pair (its
    # whole kernel matrix: 120 rows here, 57.6 kB of float32 values and 2.4 kB of bookkeeping)
    X, y = four_classes
    budgets = []
    original = smo.KernelCache

    def recording(X, kind, gamma, degree, coef0, cache_bytes, *args):
        budgets.append(cache_bytes)
        return original(X, kind, gamma, degree, coef0, cache_bytes, *args)

    monkeypatch.setattr(smo, "KernelCache", recording)
    model = fit_model(X, y, Params(cache_size=cache_mb, n_jobs=n_jobs))
    assert len(budgets) == 6  # 4 classes: 6 pairs, at most 6 at a time
    whole = 120 * 120 * 4 + 120 * 20
    expected = cache_mb * (1 << 20) if running == 1 else min(cache_mb * (1 << 20), whole)
    assert budgets == [int(expected / running)] * 6
    reference = fit_model(X, y, Params(cache_size=cache_mb, n_jobs=1))
    np.testing.assert_array_equal(model.sv_coef, reference.sv_coef)


def test_a_pair_holds_its_data_only_while_it_is_solved(monkeypatch, four_classes):
    X, y = four_classes
    alive = []
    lock = threading.Lock()
    original = smo.solve

    def counting(sub):
        with lock:  # subproblems alive now: the running pairs' only
            alive.append(sum(isinstance(o, Subproblem) for o in gc.get_objects()))
        return original(sub)

    monkeypatch.setitem(SOLVERS, "smo", dataclasses.replace(smo.SPEC, solve=counting))
    fit_model(X, y, Params(n_jobs=1))
    assert alive == [1] * 6


def test_a_pair_reads_its_rows_of_the_training_data_in_place(monkeypatch, four_classes):
    X, y = four_classes
    seen = []
    original = smo.solve

    def spying(sub):
        seen.append((sub.X, sub.rows))
        return original(sub)

    monkeypatch.setitem(SOLVERS, "smo", dataclasses.replace(smo.SPEC, solve=spying))
    fit_model(X, y, Params(n_jobs=1))
    first = seen[0][0]
    for data, rows in seen:
        assert data is first and data.shape[0] == y.size   # one CSR of all rows, not copies
        assert rows.size == 120 and np.unique(y[rows]).size == 2
