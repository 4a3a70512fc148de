"""RandomFourierFeatures and Nystroem: scikit-learn's RBFSampler and Nystroem transformers over
fastsvm's feature maps (fastsvm.kernels.approximation); each class's docstring gives its
parameters and fitted attributes."""
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
        """Apply the feature map to X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples, with the number of features seen in fit.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            phi(X), dense float64.

        Examples
        --------
        >>> import numpy as np
        >>> from fastsvm import Nystroem, RandomFourierFeatures
        >>> X = np.random.RandomState(0).rand(20, 3)
        >>> RandomFourierFeatures(n_components=8, random_state=0).fit(X).transform(X).shape
        (20, 8)
        >>> Nystroem(n_components=5, random_state=0).fit(X).transform(X[:4]).dtype
        dtype('float64')
        """
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
    """Random Fourier features of the RBF kernel, with sklearn.kernel_approximation.RBFSampler's API.

    The map phi(x) = sqrt(2 / n_components) cos(x @ random_weights_ + random_offset_)
    approximates the kernel exp(-gamma |x - z|^2) by phi(x) . phi(z). Its randomness is drawn
    as scikit-learn draws it from an int ``random_state``, so with the same seed it computes
    scikit-learn's map. The output is float64. Use it in front of a linear model, e.g.
    ``make_pipeline(RandomFourierFeatures(gamma=0.1, n_components=500), LinearSVC())``.

    Parameters
    ----------
    gamma : 'scale' or float, default=1.0
        Parameter of the RBF kernel exp(-gamma |x - z|^2). 'scale' is 1 / (n_features *
        X.var()) (1 for a constant X).
    n_components : int, default=100
        Number of Monte Carlo samples per original feature: the dimension of the output.
    random_state : int, RandomState instance or None, default=None
        Seed of the random weights and offsets. None means seed 0: the map is deterministic.
    n_jobs : int, default=None
        Threads of transform. None means all cores.

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_features, n_components)
        The random frequencies, drawn from N(0, 2 gamma).
    random_offset_ : ndarray of shape (n_components,)
        The random offsets, drawn uniformly from [0, 2 pi).
    map_ : fastsvm.kernels.approximation.FourierMap
        The fitted feature map.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen during fit; defined only when X has feature names that are
        all strings.

    See Also
    --------
    Nystroem : Approximate a kernel map from a subset of the training data.
    sklearn.kernel_approximation.RBFSampler : scikit-learn's own.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.pipeline import make_pipeline
    >>> from fastsvm import LinearSVC, RandomFourierFeatures
    >>> X, y = make_classification(n_samples=100, n_features=4, random_state=0)
    >>> features = RandomFourierFeatures(gamma=0.5, n_components=50, random_state=0)
    >>> features.fit_transform(X).shape
    (100, 50)
    >>> clf = make_pipeline(features, LinearSVC()).fit(X, y)
    >>> bool(clf.score(X, y) > 0.8)
    True
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
        """Draw the frequencies and offsets for X's number of features.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; only its number of features is used (and its variance for
            gamma='scale').
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            The fitted transformer.

        Examples
        --------
        >>> import numpy as np
        >>> from fastsvm import RandomFourierFeatures
        >>> X = np.zeros((5, 3))
        >>> RandomFourierFeatures(n_components=10, random_state=0).fit(X).random_weights_.shape
        (3, 10)
        """
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
    """Nystroem features of a kernel, with sklearn.kernel_approximation.Nystroem's API.

    The map phi(x) = K(x, components_) @ normalization_.T, with normalization_ = K(L, L)^-1/2
    over the landmarks L (eigenvalues below 1e-12 of the largest cut), approximates the kernel
    by phi(x) . phi(z). The landmarks are drawn as scikit-learn draws them from an int
    ``random_state``, so with the same seed it computes scikit-learn's map. The output is
    float64.

    Parameters
    ----------
    kernel : {'rbf', 'poly', 'polynomial', 'sigmoid', 'linear'}, default='rbf'
        The kernel to approximate.
    gamma : float, default=None
        Kernel coefficient of 'rbf', 'poly' and 'sigmoid'. None: 1 / n_features, as
        scikit-learn's pairwise kernels default it.
    coef0 : float, default=None
        Independent term of 'poly' and 'sigmoid'. None: 1.
    degree : int, default=None
        Degree of 'poly'. None: 3.
    n_components : int, default=100
        Number of landmarks, the dimension of the output; at most n_samples (a larger value
        warns and is cut).
    random_state : int, RandomState instance or None, default=None
        Seed of the choice of landmarks. None means seed 0: the map is deterministic.
    n_jobs : int, default=None
        Threads of fit and transform. None means all cores.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The landmarks, rows of the training X (CSR when X was sparse).
    component_indices_ : ndarray of shape (n_components,)
        Indices of the landmarks in the training rows.
    normalization_ : ndarray of shape (n_components, n_components)
        K(L, L)^-1/2, the normalization of the map.
    map_ : fastsvm.kernels.approximation.NystroemMap
        The fitted feature map.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen during fit; defined only when X has feature names that are
        all strings.

    See Also
    --------
    RandomFourierFeatures : Approximate the RBF kernel by random Fourier features.
    sklearn.kernel_approximation.Nystroem : scikit-learn's own.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.pipeline import make_pipeline
    >>> from fastsvm import LinearSVC, Nystroem
    >>> X, y = make_classification(n_samples=100, n_features=4, random_state=0)
    >>> features = Nystroem(kernel="rbf", gamma=0.5, n_components=30, random_state=0)
    >>> features.fit_transform(X).shape
    (100, 30)
    >>> clf = make_pipeline(features, LinearSVC()).fit(X, y)
    >>> bool(clf.score(X, y) > 0.8)
    True
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
        """Sample the landmarks from X's rows and factor the kernel matrix between them.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, whose rows the landmarks are drawn from.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            The fitted transformer.

        Examples
        --------
        >>> import numpy as np
        >>> from fastsvm import Nystroem
        >>> X = np.random.RandomState(0).rand(20, 3)
        >>> features = Nystroem(kernel="poly", degree=2, n_components=6, random_state=0).fit(X)
        >>> features.components_.shape, features.normalization_.shape
        ((6, 3), (6, 6))
        """
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
