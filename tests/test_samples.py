"""_core._samples.Samples, the base of the linear kernels' classes: the per-row arrays are checked
against X's rows in one place, for every kernel built on it."""
import numpy as np
import pytest
import scipy.sparse as sp

from fastsvm._core._crammer_singer import CrammerSinger
from fastsvm._core._dcd import DualCD
from fastsvm._core._l1_cd import L1SquaredHingeCD
from fastsvm._core._primal_newton import SquaredHingePrimal
from fastsvm._core._samples import Samples
from fastsvm.csr import to_csr

ROWS, COLS = 6, 4


def _csc(X):
    X = sp.csc_matrix(X)
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    return X


BUILDERS = {
    "dcd": lambda X, y, upper: DualCD(to_csr(X), y, upper, np.zeros(np.shape(upper)[0]), bias=1.0),
    "primal_newton": lambda X, y, upper: SquaredHingePrimal(to_csr(X), y, upper, bias=1.0),
    "l1_cd": lambda X, y, upper: L1SquaredHingeCD(_csc(X), y, upper),
    "crammer_singer": lambda X, y, upper: CrammerSinger(to_csr(X), (y > 0).astype(np.int32), upper, 2),
}


@pytest.mark.parametrize("name", BUILDERS)
def test_per_row_arrays_are_checked_against_the_rows(name):
    X = np.arange(ROWS * COLS, dtype=float).reshape(ROWS, COLS) % 3
    y = np.where(np.arange(ROWS) % 2, 1.0, -1.0)
    upper = np.ones(ROWS)
    kernel = BUILDERS[name](X, y, upper)
    assert isinstance(kernel, Samples) and (kernel.n_rows, kernel.n_cols) == (ROWS, COLS)
    for bad_y, bad_upper in ((y[:-1], upper), (y, upper[:-1]), (y, np.ones((ROWS, 1)))):
        with pytest.raises(ValueError, match="one entry per row of X"):
            BUILDERS[name](X, bad_y, bad_upper)
