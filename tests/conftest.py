"""Shared fixtures. Real LIBSVM datasets come from ../shared/data next to the checkout (or
$FASTSVM_SHARED_DATA); tests that need them skip cleanly when it is absent."""
import contextlib
import ctypes
import os
import signal
import threading
import time
from pathlib import Path

import pytest

# a suite started with SIGINT ignored (a background job) would pass that on to the programs it
# runs, which then keep ignoring Ctrl-C: with a handler here they start with the default
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("FASTSVM_SHARED_DATA", REPO.parent / "shared" / "data"))
SHIPPED_DATA = REPO / "data"


def shared_file(name):
    """Path of a shared dataset, or skip the test when it is not there."""
    path = SHARED_DATA / name
    if not path.is_file():
        pytest.skip(f"shared dataset {name} not available ({SHARED_DATA})")
    return path


def read_shared(name, n=None):
    """(canonical CSR rows, float64 labels) of a shared LIBSVM file, its first n rows when given."""
    import numpy as np
    from sklearn.datasets import load_svmlight_file
    from fastsvm.csr import to_csr
    X, y = load_svmlight_file(str(shared_file(name)), zero_based=False)
    if n is not None:
        X, y = X[:n], y[:n]
    return to_csr(X), np.asarray(y, dtype=np.float64)


@pytest.fixture(scope="module")
def heart():
    """heart_scale with labels +1/-1."""
    import numpy as np
    X, y = read_shared("heart_scale")
    return X, np.where(y > 0, 1.0, -1.0)


@pytest.fixture(scope="module")
def housing():
    return read_shared("housing_scale")


def stops_within_a_second(solve, sub, after=0.3):
    """Sets sub's stop flag ``after`` seconds into solve(sub): it must raise KeyboardInterrupt within
    a second of that (the solvers' Ctrl-C contract)."""
    timer = threading.Timer(after, lambda: sub.stop.__setitem__(0, 1))
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            solve(sub)
    finally:
        timer.cancel()
    assert time.monotonic() - started < after + 1.0


def shared_files():
    """Every LIBSVM-format file listed in the shared MANIFEST (empty when absent)."""
    manifest = SHARED_DATA / "MANIFEST.tsv"
    if not manifest.is_file():
        return []
    rows = manifest.read_text().splitlines()[1:]
    return [row.split("\t")[0] for row in rows if row.strip()]


@pytest.fixture
def shared():
    return shared_file


@contextlib.contextmanager
def libsvm_one_thread():
    """LIBSVM's wheel runs its kernel and prediction loops with OpenMP; on one thread its sums
    follow fastsvm's order and a busy machine does not turn every barrier into a wait. The
    pool size is a setting of the shared libgomp."""
    try:
        gomp = ctypes.CDLL("libgomp.so.1")
    except OSError:
        yield
        return
    before = gomp.omp_get_max_threads()
    gomp.omp_set_num_threads(1)
    try:
        yield
    finally:
        gomp.omp_set_num_threads(before)


def solver_like(solver, **attributes):
    """A copy of a registered Solver with some attributes replaced (e.g. solve=a spy), for tests
    that install it under a name of SOLVERS."""
    import copy
    clone = copy.copy(solver)
    for name, value in attributes.items():
        setattr(clone, name, value)
    return clone
