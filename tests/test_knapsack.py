"""The knapsack projection and its HS-Jacobian against pure-NumPy twins (bisection over the
sorted break points, a dense Jacobian matrix, finite differences)."""
import numpy as np
import pytest

from fastsvm._core._knapsack import check_knapsack, hs_jacobian_apply, kth_smallest, project
from fastsvm.errors import FastSVMError


def twin_project(v, a, d, lower, upper):
    """Pi_K(v) by bisection over the sorted break points and the exact root on the linear piece
    found. When g vanishes on a whole interval [lam1, lam2] (no coordinate free there) lam is its
    midpoint, or its finite end (the convention of the Cython kernel)."""
    v, a, lower, upper = (np.asarray(z, dtype=float) for z in (v, a, lower, upper))
    nz = a != 0
    with np.errstate(invalid="ignore", divide="ignore"):
        bp = np.concatenate([(v[nz] - lower[nz]) / a[nz], (v[nz] - upper[nz]) / a[nz]])
    bp = np.unique(bp[np.isfinite(bp)])
    finite = lambda z: np.where(np.isfinite(z), np.abs(z), 0.0)  # noqa: E731
    tol = 1e-12 * (1.0 + abs(d) + np.sum(np.abs(a) * (finite(lower) + finite(upper) + np.abs(v))))

    def g(lam):
        return a @ np.clip(v - lam * a, lower, upper) - d

    def piece_root(left, right):
        """g on [left, right] (no break point inside) is const - lam * slope: its root, clamped,
        or None when g is flat there."""
        if np.isfinite(left) and np.isfinite(right):
            probe = 0.5 * (left + right)
        else:
            probe = left + 1.0 if np.isfinite(left) else right - 1.0 if np.isfinite(right) else 0.0
        t = v - probe * a
        slope = np.sum(a[(t > lower) & (t < upper) & nz] ** 2)
        if slope == 0:
            return None
        return min(max((g(probe) + probe * slope) / slope, left), right)

    def bisect(pred):
        """First index of bp where pred holds (pred is monotone: False ... False True ... True)."""
        lo, hi = -1, len(bp)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if pred(bp[mid]) else (mid, hi)
        return hi

    edge = lambda i: bp[i] if 0 <= i < len(bp) else (-np.inf if i < 0 else np.inf)  # noqa: E731
    i1 = bisect(lambda t: g(t) <= tol)               # the smallest root lies in piece i1
    lam1 = piece_root(edge(i1 - 1), edge(i1))
    if lam1 is None:                                 # g == 0 on the whole piece
        lam1 = edge(i1 - 1)
    i2 = bisect(lambda t: g(t) < -tol)               # the largest root lies in piece i2
    lam2 = piece_root(edge(i2 - 1), edge(i2))
    if lam2 is None:
        lam2 = edge(i2)
    if lam2 - lam1 <= 1e-12 * (1.0 + abs(lam1)):
        lam = lam1
    elif np.isfinite(lam1) and np.isfinite(lam2):
        lam = 0.5 * (lam1 + lam2)
    else:
        lam = lam1 if np.isfinite(lam1) else lam2 if np.isfinite(lam2) else 0.0
    t = v - lam * a
    return np.clip(t, lower, upper), lam, np.flatnonzero((t > lower) & (t < upper))


def twin_jacobian(a, free, m):
    """The HS-Jacobian as a dense matrix (Theorem 2)."""
    theta = np.zeros(m)
    theta[free] = 1.0
    ta = theta * a
    V = np.diag(theta)
    if ta @ ta > 0:
        V -= np.outer(ta, ta) / (ta @ ta)
    return V


def random_problem(rng, m, unit=True, zero_a=0.0):
    a = np.where(rng.random(m) < 0.4, -1.0, 1.0)
    if not unit:
        a *= rng.uniform(0.1, 3.0, m)
    if zero_a:
        a[rng.random(m) < zero_a] = 0.0
    lower = rng.uniform(-1, 0.5, m)
    upper = lower + rng.uniform(0.1, 2.0, m)
    x0 = rng.uniform(lower, upper)  # d from a feasible point keeps K non-empty
    d = a @ x0
    v = rng.normal(scale=2.0, size=m)
    return v, a, d, lower, upper


def assert_same(v, a, d, lower, upper, *, rtol=1e-9, **kw):
    x, lam, free = project(v, a, d, lower, upper, **kw)
    x2, lam2, free2 = twin_project(v, a, d, lower, upper)
    scale = 1.0 + np.abs(x2).max()
    np.testing.assert_allclose(x, x2, rtol=0, atol=rtol * scale)
    assert abs(lam - lam2) <= rtol * (1.0 + abs(lam2)) * 10, (lam, lam2)
    np.testing.assert_array_equal(free, free2)
    assert abs(a @ x - d) <= 1e-9 * (1.0 + np.abs(a * x).sum())
    assert free.dtype == np.int32
    return x, lam, free


@pytest.mark.parametrize("m", [1, 2, 3, 7, 50, 1000, 20000])
@pytest.mark.parametrize("unit", [True, False])
def test_random_against_twin(m, unit):
    rng = np.random.default_rng(m + 1000 * unit)
    for _ in range(5 if m < 1000 else 2):
        assert_same(*random_problem(rng, m, unit=unit))


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("hint_shift", [None, 0.0, 1e-3, -0.5])
def test_threaded_passes_against_twin(n_threads, hint_shift):
    """Above PARALLEL_M (32768) coordinates the passes of the hint's Newton steps and the one
    writing x split the coordinates into blocks, one a thread, and join the blocks' free lists:
    the result is the twin's, with or without a hint, for every thread count."""
    rng = np.random.default_rng(77)
    v, a, d, lower, upper = random_problem(rng, 70001, unit=hint_shift is None)
    lam_hint = np.nan
    if hint_shift is not None:
        lam_hint = project(v, a, d, lower, upper)[1] + hint_shift
    assert_same(v, a, d, lower, upper, lam_hint=lam_hint, n_threads=n_threads)


def test_zero_entries_of_a_just_clip():
    rng = np.random.default_rng(1)
    v, a, d, lower, upper = random_problem(rng, 500, unit=False, zero_a=0.3)
    x, lam, free = assert_same(v, a, d, lower, upper)
    z = a == 0
    np.testing.assert_array_equal(x[z], np.clip(v[z], lower[z], upper[z]))


@pytest.mark.parametrize("hint_shift", [0.0, 1e-9, 1e-3, 0.5, -3.0, 1e6, -1e6])
def test_hint_does_not_change_the_result(hint_shift):
    rng = np.random.default_rng(2)
    v, a, d, lower, upper = random_problem(rng, 3000)
    x, lam, free = project(v, a, d, lower, upper)
    x2, lam2, free2 = project(v, a, d, lower, upper, lam_hint=lam + hint_shift)
    np.testing.assert_allclose(x2, x, atol=1e-12)
    assert abs(lam2 - lam) <= 1e-12 * (1 + abs(lam))
    np.testing.assert_array_equal(free, free2)


def test_many_equal_break_points():
    rng = np.random.default_rng(3)
    m = 4000
    a = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    v = rng.integers(-3, 4, m).astype(float)  # seven distinct values: massive ties
    lower, upper = np.zeros(m), np.ones(m)
    for d in (0.0, 3.0, -17.0, 0.5):
        assert_same(v, a, d, lower, upper)
    v = np.full(m, 0.25)
    assert_same(v, np.ones(m), 0.3 * m, lower, upper)
    assert_same(v, a, a.sum() * 0.1, lower, upper)


def test_everything_at_a_bound_and_empty_free_set():
    m = 100
    a = np.ones(m)
    lower, upper = np.zeros(m), np.full(m, 2.0)
    v = np.linspace(-5, 5, m)
    # d at the top of the range: every coordinate at its upper bound, lam from a flat piece
    x, lam, free = assert_same(v, a, 2.0 * m, lower, upper)
    np.testing.assert_array_equal(x, upper)
    assert free.size == 0
    assert lam <= v.min() - 2.0
    # d at the bottom
    x, lam, free = assert_same(v, a, 0.0, lower, upper)
    np.testing.assert_array_equal(x, lower)
    assert free.size == 0 and lam >= v.max()
    # a flat root between two groups of break points: the midpoint
    v = np.array([0.0, 0.0, 10.0, 10.0])
    a = np.array([1.0, 1.0, 1.0, 1.0])
    x, lam, free = project(v, a, 2.0, np.zeros(4), np.ones(4))
    np.testing.assert_allclose(x, [0, 0, 1, 1])
    assert free.size == 0
    assert lam == pytest.approx(4.5)  # flat between break points 0 and 9
    assert_same(v, a, 2.0, np.zeros(4), np.ones(4))


@pytest.mark.parametrize("scale", [1e12, 1e-12])
def test_extreme_scales(scale):
    rng = np.random.default_rng(4)
    v, a, d, lower, upper = random_problem(rng, 2000)
    x, lam, free = project(v, a, d, lower, upper)
    xs, lams, frees = assert_same(v * scale, a, d * scale, lower * scale, upper * scale)
    np.testing.assert_allclose(xs / scale, x, atol=1e-9 * np.abs(x).max())
    assert lams / scale == pytest.approx(lam, rel=1e-9, abs=1e-12)
    np.testing.assert_array_equal(free, frees)


def test_single_coordinate():
    x, lam, free = project([5.0], [2.0], 3.0, [0.0], [10.0])
    assert x[0] == pytest.approx(1.5) and free.tolist() == [0]
    assert lam == pytest.approx((5.0 - 1.5) / 2.0)
    x, lam, free = project([5.0], [-1.0], -10.0, [0.0], [10.0])  # at the upper bound
    assert x[0] == 10.0 and free.size == 0
    with pytest.raises(FastSVMError, match="empty"):
        project([5.0], [1.0], 11.0, [0.0], [10.0])


def test_infinite_upper_bounds():
    rng = np.random.default_rng(5)
    m = 3000
    a = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    v = rng.normal(size=m)
    lower, upper = np.zeros(m), np.full(m, np.inf)
    for d in (0.0, 5.0, -40.0):
        x, lam, free = assert_same(v, a, d, lower, upper)
        assert np.all(np.isfinite(x))
    # every bound infinite: the projection onto a hyperplane
    x, lam, free = assert_same(v, a, 3.0, np.full(m, -np.inf), upper)
    np.testing.assert_allclose(x, v - (a @ v - 3.0) / m * a, atol=1e-12)
    assert free.size == m


def test_infeasible_and_malformed_sets_raise():
    m = 10
    lower, upper = np.zeros(m), np.ones(m)
    with pytest.raises(FastSVMError, match="empty"):
        project(np.zeros(m), np.ones(m), 10.5, lower, upper)
    with pytest.raises(FastSVMError, match="empty"):
        project(np.zeros(m), np.ones(m), -0.1, lower, upper)
    with pytest.raises(FastSVMError, match="empty"):
        check_knapsack(np.zeros(m), 1.0, lower, upper)
    with pytest.raises(FastSVMError, match="lower bound exceeds"):
        project(np.zeros(m), np.ones(m), 1.0, upper, lower)
    with pytest.raises(FastSVMError, match="NaN"):
        project(np.full(m, np.nan), np.ones(m), 1.0, lower, upper)
    with pytest.raises(FastSVMError, match="NaN"):
        project(np.full(m, np.inf), np.ones(m), 1.0, lower, upper)
    with pytest.raises(FastSVMError, match="length"):
        project(np.zeros(m - 1), np.ones(m), 1.0, lower, upper)
    check_knapsack(np.ones(m), 10.0, lower, upper)  # the edge of the range is feasible
    x, lam, free = project(np.zeros(m), np.ones(m), 10.0, lower, upper)
    np.testing.assert_array_equal(x, upper)


@pytest.mark.parametrize("seed", range(4))
def test_hs_jacobian_against_dense_twin(seed):
    rng = np.random.default_rng(10 + seed)
    v, a, d, lower, upper = random_problem(rng, 60, unit=seed % 2 == 0, zero_a=0.1 * (seed // 2))
    x, lam, free = project(v, a, d, lower, upper)
    V = twin_jacobian(a, free, len(v))
    for _ in range(3):
        r = rng.normal(size=len(v))
        np.testing.assert_allclose(hs_jacobian_apply(a, free, r), V @ r, atol=1e-12)
    # V is the derivative of the projection away from kinks
    r = rng.normal(size=len(v))
    eps = 1e-7
    x_eps, _, free_eps = project(v + eps * r, a, d, lower, upper, lam_hint=lam)
    np.testing.assert_array_equal(free_eps, free)
    np.testing.assert_allclose((x_eps - x) / eps, V @ r, atol=1e-6)


def test_hs_jacobian_empty_free_set_is_zero():
    a = np.ones(5)
    np.testing.assert_array_equal(hs_jacobian_apply(a, np.array([], dtype=np.int32), np.arange(5.0)), 0.0)
    # a free set where a vanishes: V = Diag(theta)
    a = np.array([0.0, 1.0, 0.0])
    np.testing.assert_array_equal(hs_jacobian_apply(a, [0, 2], np.array([1.0, 2.0, 3.0])), [1.0, 0.0, 3.0])


@pytest.mark.parametrize("pattern", ["random", "sorted", "reversed", "equal", "organ", "few", "killer"])
def test_selection_matches_partition(pattern):
    rng = np.random.default_rng(7)
    n = 5001
    values = {
        "random": rng.normal(size=n),
        "sorted": np.arange(n, dtype=float),
        "reversed": np.arange(n, 0, -1, dtype=float),
        "equal": np.full(n, 3.0),
        "organ": np.concatenate([np.arange(n // 2), np.arange(n - n // 2, 0, -1)]).astype(float),
        "few": rng.integers(0, 3, n).astype(float),
        # median-of-three adversary: middle and ends small, forcing lopsided partitions
        "killer": np.array([(i % 2) * n + i if i % 2 else i for i in range(n)], dtype=float),
    }[pattern]
    for k in (0, 1, n // 2, n - 2, n - 1):
        assert kth_smallest(values, k) == np.partition(values, k)[k]
