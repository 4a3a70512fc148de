"""Pieces every fastsvm estimator shares: seeds, class weights, warm starts, the fitted Model."""
import numbers

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_class_weight

from ..training.trainer import WarmStart


def seed_from(random_state):
    """An int seed: fastsvm is deterministic, so None means a fixed seed (0), not entropy."""
    if random_state is None:
        return 0
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def class_weights_by_code(class_weight, classes, y_codes):
    """{code: weight} for fit_model from scikit-learn's class_weight (dict keyed by class, or
    'balanced')."""
    if class_weight is None:
        return {}
    weights = compute_class_weight(class_weight, classes=classes, y=classes[y_codes])
    return {code: float(w) for code, w in enumerate(weights) if w != 1.0}


# scikit-learn's wording (its LIBSVM fork's), which its users and tests match
ALL_MASKED = "Invalid input - all samples have zero or negative weights."
ONE_CLASS_LEFT = "Invalid input - all samples with positive weights belong to the same class."


def positive_weights(sample_weight, n_samples):
    """Per-sample weights (1 when None) with those <= 0 set to 0: scikit-learn's LIBSVM leaves
    those samples out, and so does fastsvm.training.trainer for a weight of 0."""
    if sample_weight is None:
        return np.ones(n_samples)
    weights = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
    if weights.shape != (n_samples,):
        raise ValueError(f"sample_weight has {weights.size} values for {n_samples} samples")
    if not np.all(np.isfinite(weights)):
        raise ValueError("sample_weight contains NaN or infinity")
    return np.where(weights > 0, weights, 0.0)


def warm_start_of(estimator):
    """The WarmStart an estimator's fit starts from and leaves its solutions in (fit_model's
    ``warm``): kept on the estimator while its warm_start is True, dropped when it is not."""
    previous = getattr(estimator, "_warm_solutions", None)
    estimator._warm_solutions = (previous or WarmStart()) if estimator.warm_start else None
    return estimator._warm_solutions
