"""The one seeded generator as Python sweeps use it (_core._rng.VisitingOrder) against its NumPy
twin: xorshift64* seeded by splitmix64, Fisher-Yates front to back, each order a shuffle of the last."""
import numpy as np
import pytest

from fastsvm._core._rng import VisitingOrder
from test_dcd import TwinRNG


def twin_orders(seed, n, count):
    rng, order, out = TwinRNG(seed), list(range(n)), []
    for _ in range(count):
        for i in range(n - 1):
            j = i + rng.below(n - i)
            order[i], order[j] = order[j], order[i]
        out.append(list(order))
    return out


@pytest.mark.parametrize("seed, n", [(0, 1), (1, 2), (7, 13), (2**64 + 5, 100), (-3, 50)])
def test_visiting_orders_equal_the_twin(seed, n):
    orders = VisitingOrder(seed, n)
    for expected in twin_orders(seed, n, 4):
        got = orders.next()
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, expected)


def test_visiting_orders_are_permutations_and_depend_on_the_seed():
    a, b = VisitingOrder(1, 1000).next().copy(), VisitingOrder(2, 1000).next().copy()
    np.testing.assert_array_equal(np.sort(a), np.arange(1000))
    assert not np.array_equal(a, b)
    assert VisitingOrder(0, 0).next().shape == (0,)
    with pytest.raises(ValueError):
        VisitingOrder(0, -1)
