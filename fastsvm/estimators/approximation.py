"""RandomFourierFeatures and Nystroem: scikit-learn's RBFSampler and Nystroem transformers over
fastsvm's feature maps (fastsvm.kernels.approximation), with the same parameters and fitted
attributes, plus ``n_jobs`` threads for the nogil transforms.

Both draw their randomness as scikit-learn does from an int ``random_state`` (None means 0:
fastsvm is deterministic), so with the same seed they compute scikit-learn's maps. The output is
float64. Use them in front of a linear model, e.g.
``make_pipeline(fastsvm.RandomFourierFeatures(gamma=0.1, n_components=500), fastsvm.LinearSVC())``.
"""
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..kernels.approximation import nystroem_map, random_fourier_map
from ..parallel import effective_n_jobs
from ._common import seed_from

# scikit-learn's kernel names -> fastsvm's, and the parameters each kernel takes
KERNELS = {"rbf": "rbf", "poly": "polynomial", "polynomial": "polynomial", "sigmoid": "sigmoid",
           "linear": "linear"}
KERNEL_PARAMS = {"rbf": ("gamma",), "polynomial": ("gamma", "degree", "coef0"),
                 "sigmoid": ("gamma", "coef0"), "linear": ()}


class _FeatureMap(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """What the two share: the fitted map in ``map_``, threads, dense float64 output."""

    def transform(self, X):
        """phi(X): dense (n_samples, n_components)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, order="C", reset=False)
        return self.map_.transform(X, n_threads=effective_n_jobs(self.n_jobs))

    def _validated(self, X):
        return validate_data(self, X, accept_sparse="csr", dtype=np.float64, order="C")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags


class RandomFourierFeatures(_FeatureMap):
    """Random Fourier features of the RBF kernel exp(-gamma |x - z|^2) (scikit-learn's
    RBFSampler): phi(x) = sqrt(2 / n_components) cos(x @ random_weights_ + random_offset_).

    gamma : float or 'scale' (1 / (n_features X.var())); n_components : output dimension;
    random_state : int seed (None = 0); n_jobs : threads (None = all cores).
    Attributes: random_weights_ (n_features, n_components), random_offset_ (n_components,),
    map_ (the fastsvm.kernels.approximation.FourierMap), n_features_in_.
    """

    _parameter_constraints: dict = {
        "gamma": [StrOptions({"scale"}), Interval(Real, 0.0, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [None, Integral],
    }

    def __init__(self, *, gamma=1.0, n_components=100, random_state=None, n_jobs=None):
        self.gamma = gamma
        self.n_components = n_components
        self.random_state = random_state
        self.n_jobs = n_jobs

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Draw the frequencies and offsets for X's number of features."""
        X = self._validated(X)
        gamma = self.gamma
        if gamma == "scale":
            var = X.multiply(X).mean() - X.mean() ** 2 if sp.issparse(X) else X.var()
            gamma = 1.0 / (X.shape[1] * var) if var != 0 else 1.0
        self.map_ = random_fourier_map(X.shape[1], self.n_components, float(gamma),
                                       seed=seed_from(self.random_state))
        self.random_weights_ = self.map_.weights
        self.random_offset_ = self.map_.offset
        self._n_features_out = self.n_components
        return self


class Nystroem(_FeatureMap):
    """Nystroem features of a fastsvm kernel (scikit-learn's Nystroem):
    phi(x) = K(x, components_) @ normalization_.T, normalization_ = K(L, L)^-1/2 (eigenvalues
    below 1e-12 of the largest cut).

    kernel : 'rbf', 'poly' / 'polynomial', 'sigmoid' or 'linear'; gamma (None: 1/n_features),
    coef0 (None: 1) and degree (None: 3) as scikit-learn's pairwise kernels default them;
    n_components : landmarks (at most n_samples); random_state : int seed (None = 0);
    n_jobs : threads (None = all cores).
    Attributes: components_ (the landmarks, as X was: dense or CSR), component_indices_,
    normalization_ (n_components, n_components), map_ (the NystroemMap), n_features_in_.
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNELS))],
        "gamma": [Interval(Real, 0, None, closed="left"), None],
        "coef0": [Interval(Real, None, None, closed="neither"), None],
        "degree": [Interval(Integral, 0, None, closed="left"), None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [None, Integral],
    }

    def __init__(self, kernel="rbf", *, gamma=None, coef0=None, degree=None, n_components=100,
                 random_state=None, n_jobs=None):
        self.kernel = kernel
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.n_components = n_components
        self.random_state = random_state
        self.n_jobs = n_jobs

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Sample the landmarks from X's rows and factor the kernel matrix between them."""
        X = self._validated(X)
        n_components = self.n_components
        if n_components > X.shape[0]:
            warnings.warn("n_components > n_samples. This is not possible.\nn_components was set "
                          "to n_samples, which results in inefficient evaluation of the full kernel.",
                          stacklevel=2)
            n_components = X.shape[0]
        kind = KERNELS[self.kernel]
        given = {name: getattr(self, name) for name in KERNEL_PARAMS[kind]}
        self.map_ = nystroem_map(
            X, kind,
            gamma=1.0 / X.shape[1] if given.get("gamma") is None else float(given["gamma"]),
            degree=3 if given.get("degree") is None else int(given["degree"]),
            coef0=1.0 if given.get("coef0") is None else float(given["coef0"]),
            n_components=n_components, seed=seed_from(self.random_state), symmetric=True,
            n_threads=effective_n_jobs(self.n_jobs))
        self.component_indices_ = self.map_.indices
        self.components_ = X[self.component_indices_]
        self.normalization_ = self.map_.normalization.T
        self._n_features_out = n_components
        return self
