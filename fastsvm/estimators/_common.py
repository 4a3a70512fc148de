"""Pieces every fastsvm estimator shares: seeds, class weights, the fitted Model."""
import numbers

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_class_weight


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
