"""The figures svm-train -v and svm-predict report, apart from plain accuracy and mean squared error."""
import numpy as np


def squared_correlation(v, y):
    """LIBSVM's squared correlation coefficient (nan when a side is constant, as LIBSVM's 0/0)."""
    n = len(y)
    sv, sy, svv, syy, svy = v.sum(), y.sum(), v @ v, y @ y, v @ y
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(((n * svy - sv * sy) ** 2) / ((n * svv - sv * sv) * (n * syy - sy * sy)))
