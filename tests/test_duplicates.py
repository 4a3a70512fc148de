"""equal_row_groups (fastsvm._core._duplicates) against a NumPy twin that compares dense rows."""
import numpy as np
import pytest
import scipy.sparse as sp

from fastsvm._core._duplicates import equal_row_groups
from fastsvm.csr import to_csr
from fastsvm.errors import FastSVMError


def np_groups(X, keys):
    """(group, first) by comparing every row, as dense values and keys, with the first rows
    of the groups found so far."""
    rows = np.hstack([X.toarray(), keys])
    group, first = np.empty(X.shape[0], dtype=np.int32), []
    for i, row in enumerate(rows):
        match = [g for g, f in enumerate(first) if np.array_equal(rows[f], row)]
        group[i] = match[0] if match else len(first)
        if not match:
            first.append(i)
    return group, np.array(first, dtype=np.int32)


def planted(rng, m, p, density, n_distinct):
    """m rows drawn from n_distinct random sparse rows (binary or real), with random keys."""
    base = sp.random(n_distinct, p, density=density, random_state=rng, format="csr")
    if rng.random() < 0.5:
        base.data[:] = 1.0        # binary data: the same value in every column
    pick = rng.integers(0, n_distinct, m)
    keys = np.column_stack([rng.choice([-1.0, 1.0], n_distinct), rng.choice([1.0, 2.5], n_distinct)])[pick]
    keys[rng.random(m) < 0.1, 0] *= -1.0     # some equal rows with another label
    return to_csr(base[pick]), np.ascontiguousarray(keys)


@pytest.mark.parametrize("seed", range(6))
def test_groups_against_numpy_twin(seed):
    rng = np.random.default_rng(seed)
    X, keys = planted(rng, m=300, p=int(rng.integers(1, 40)), density=float(rng.uniform(0.0, 0.5)),
                      n_distinct=int(rng.integers(1, 120)))
    sq_norms = np.full(X.shape[0], np.nan)
    group, first = equal_row_groups(X, keys, sq_norms)
    want_group, want_first = np_groups(X, keys)
    np.testing.assert_array_equal(group, want_group)
    np.testing.assert_array_equal(first, want_first)
    np.testing.assert_allclose(sq_norms, np.sum(X.toarray() ** 2, axis=1), rtol=1e-14)


def test_rows_that_differ_in_one_place_stay_apart():
    """A value, a column, a key or a row length apart: never merged. Empty rows and rows
    with no keys are equal among themselves."""
    X = to_csr(sp.csr_matrix(np.array([[1.0, 0, 2], [1.0, 0, 2.0000000001], [1.0, 2, 0], [1.0, 0, 2],
                                       [0, 0, 0], [1.0, 0, 0], [0, 0, 0], [1.0, 0, 2]])))
    keys = np.array([[1.0], [1.0], [1.0], [1.0], [1.0], [1.0], [1.0], [-1.0]])
    group, first = equal_row_groups(X, keys)
    np.testing.assert_array_equal(group, [0, 1, 2, 0, 3, 4, 3, 5])
    np.testing.assert_array_equal(first, [0, 1, 2, 4, 5, 7])
    group, first = equal_row_groups(X, np.zeros((8, 0)))
    np.testing.assert_array_equal(group, [0, 1, 2, 0, 3, 4, 3, 0])


def test_a_stored_zero_only_misses_a_merge():
    """An explicit zero makes a row look different (the hash sees the stored pairs): the rows
    stay apart, which costs a merge and never merges unequal rows."""
    X = sp.csr_matrix((np.array([1.0, 1.0, 0.0]), np.array([0, 0, 1], dtype=np.int32),
                       np.array([0, 1, 3], dtype=np.int32)), shape=(2, 2))
    group, first = equal_row_groups(X, np.ones((2, 1)))
    np.testing.assert_array_equal(group, [0, 1])


def test_hash_collisions_are_resolved_by_comparison():
    """Many rows, all distinct, with the same row sums, lengths and binary values (the case a
    linear hash cannot tell apart): every row its own group."""
    rng = np.random.default_rng(0)
    cols = np.array([rng.permutation(64)[:8] for _ in range(5000)])
    X = to_csr(sp.csr_matrix((np.ones(cols.size), np.sort(cols, axis=1).ravel(), np.arange(0, cols.size + 1, 8)),
                             shape=(5000, 64)))
    unique = np.unique(X.toarray(), axis=0).shape[0]
    group, first = equal_row_groups(X, np.ones((5000, 1)))
    assert first.shape[0] == unique and group.max() == unique - 1


def test_empty_matrix_and_key_mismatch():
    group, first = equal_row_groups(to_csr(sp.csr_matrix((0, 3))), np.zeros((0, 2)))
    assert group.shape == (0,) and first.shape == (0,)
    with pytest.raises(FastSVMError, match="one row of keys"):
        equal_row_groups(to_csr(sp.eye(3, format="csr")), np.zeros((2, 1)))
    with pytest.raises(FastSVMError, match="one squared norm"):
        equal_row_groups(to_csr(sp.eye(3, format="csr")), np.zeros((3, 1)), np.zeros(2))
