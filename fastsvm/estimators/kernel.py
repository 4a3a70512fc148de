"""SVC, NuSVC, SVR, NuSVR, OneClassSVM: scikit-learn's kernel SVMs over fastsvm's solvers.

Each class's docstring gives its parameters (those of ``sklearn.svm``, plus ``solver``,
``solver_options``, ``n_jobs`` and ``warm_start``) and its fitted attributes.

Classes are trained in sorted order (scikit-learn's ``classes_``), so the one-vs-one pairs and
the rows of ``dual_coef_`` line up with scikit-learn's: LIBSVM orders labels by first
occurrence, so the rows are handed to it grouped by class when the first occurrences are not
already sorted (each pair's subproblem, rows of class i then of class j in their original order,
is the same either way).
"""
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils import deprecated
from sklearn.utils._param_validation import Hidden, Interval, Options, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.fixes import parse_version
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import _ovr_decision_function, check_classification_targets
from sklearn.utils.validation import (_num_samples, check_consistent_length, check_is_fitted,
                                      validate_data)

from ..csr import to_csr
from ..params import Params
from ..models.prediction import decision_values, predict, predict_probability
from ..solvers import get_solver
from ..training.trainer import fit_model
from ._common import ALL_MASKED, ONE_CLASS_LEFT, class_weights_by_code, positive_weights, seed_from, warm_start_of

# scikit-learn's kernel names -> LIBSVM's
KERNELS = {"linear": "linear", "poly": "polynomial", "rbf": "rbf", "sigmoid": "sigmoid",
           "precomputed": "precomputed"}
_ITERATION_LIMIT = r"solver \S+ reached its iteration limit"
# scikit-learn 1.9 deprecates SVC's and NuSVC's probability (removal in 1.11): the default
# becomes the string "deprecated" and any value given warns; before 1.9 it is a plain boolean
PROBABILITY_DEPRECATED = parse_version(sklearn.__version__).release >= (1, 9)
PROBABILITY_DEFAULT = "deprecated" if PROBABILITY_DEPRECATED else False
# scikit-learn's wording, which its users and tests match
NOT_FINITE = ("The dual coefficients or intercepts are not finite: the input data may contain "
              "large values and need to be preprocessed")


class _KernelSVM(BaseEstimator):
    """What the five share: parameters to Params, fit, the LIBSVM-layout attributes, decision
    values. Subclasses set ``_svm_type`` and add the targets' handling."""

    _svm_type = None
    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNELS)), callable],
        "degree": [Interval(Integral, 0, None, closed="left")],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0.0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "shrinking": ["boolean"],
        "cache_size": [Interval(Real, 0, None, closed="neither")],
        "verbose": ["verbose"],
        # -1: LIBSVM's own cap; 0 (no iteration at all) is refused
        "max_iter": [Options(Integral, {-1}), Interval(Integral, 1, None, closed="left")],
        "solver": [str],
        "solver_options": [None, dict],
        "n_jobs": [None, Integral],
        "warm_start": ["boolean"],
    }
    _C = {"C": [Interval(Real, 0.0, None, closed="right")]}
    _NU = {"nu": [Interval(Real, 0.0, 1.0, closed="right")]}

    # -- fitting -------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the SVM model to the training data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or (n_samples, n_samples)
            Training vectors; for kernel='precomputed', the Gram matrix (n_samples, n_samples);
            for a callable kernel, anything it reads.
        y : array-like of shape (n_samples,)
            Target values: class labels for classification, real numbers for regression.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights. They rescale C per sample; a sample of weight <= 0 is left
            out, as in scikit-learn.

        Returns
        -------
        self : object
            The fitted estimator.

        Examples
        --------
        >>> import numpy as np
        >>> from fastsvm import SVC, SVR
        >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0], [3.0, 1.0]])
        >>> clf = SVC(kernel="linear").fit(X, [0, 0, 1, 1])
        >>> clf.support_vectors_.shape[1]
        2
        >>> reg = SVR(kernel="linear").fit(X, [0.0, 1.0, 2.0, 3.0], sample_weight=[1, 1, 1, 0])
        >>> reg.n_features_in_
        2
        """
        self._check_solver()
        if self.kernel == "precomputed" and sp.issparse(X):
            raise TypeError("Sparse precomputed kernels are not supported.")
        if callable(self.kernel):  # the kernel gets X as given
            check_consistent_length(X, y)
            y = np.asarray(y)
        else:
            X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, order="C")
            if self.kernel != "precomputed":
                _check_finite_kernel(X)
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"Precomputed matrix must be a square matrix. Input is a "
                             f"{X.shape[0]}x{X.shape[1]} matrix.")
        self._warn_probability()
        sample_weight = positive_weights(sample_weight, _num_samples(X))
        targets = self._encode_targets(y, sample_weight)
        if callable(self.kernel):
            self._X_fit = X
        self._gamma = self._gamma_value(X)  # scikit-learn's name for the gamma in use
        rows = self._kernel_rows(X, serial=True)
        order = self._row_order(targets)
        if order is not None:
            rows, targets, sample_weight = rows[order], targets[order], sample_weight[order]
        with warnings.catch_warnings():
            # reported below as scikit-learn does, with fit_status_
            warnings.filterwarnings("ignore", message=_ITERATION_LIMIT, category=RuntimeWarning)
            # the estimator keeps its model, the caller keeps X and may change it: own copies
            self.model_ = fit_model(rows, targets, self._params(targets), sample_weight=sample_weight,
                                    warm=warm_start_of(self)).detached()
        support = np.asarray(self.model_.info["support_rows"], dtype=np.int64)
        self.support_ = (support if order is None else order[support]).astype(np.int32)
        self._set_attributes(X)
        return self

    def _check_solver(self):
        spec = get_solver(self.solver)
        if spec.multiclass != "ovo" and set(spec.kernels) <= {"linear"}:
            raise ValueError(f"solver {spec.name!r} trains linear one-vs-rest models without support "
                             f"vectors: use fastsvm.LinearSVC(solver={spec.name!r}) instead")

    def _encode_targets(self, y, sample_weight):
        if not np.any(sample_weight > 0):
            raise ValueError(ALL_MASKED)
        return np.asarray(y, dtype=np.float64)

    def _warn_probability(self):
        """SVC and NuSVC warn as scikit-learn >= 1.9 does."""

    def _wants_probability(self):
        return False

    def _row_order(self, targets):
        """Permutation of the training rows handed to LIBSVM, None for as they are."""
        return None

    def _params(self, targets):
        own = {name: float(getattr(self, name)) for name in ("C", "nu", "epsilon") if hasattr(self, name)}
        return Params(
            svm_type=self._svm_type, solver=self.solver,
            kernel_type="precomputed" if callable(self.kernel) else KERNELS[self.kernel],
            degree=int(self.degree), gamma=self._gamma, coef0=float(self.coef0),
            cache_size=float(self.cache_size), tol=float(self.tol), shrinking=bool(self.shrinking),
            probability=self._wants_probability(),
            class_weight=self._class_weight_by_code(targets),
            max_iter=None if self.max_iter == -1 else int(self.max_iter),
            seed=seed_from(getattr(self, "random_state", None)), n_jobs=self.n_jobs,
            verbose=bool(self.verbose), options=dict(self.solver_options or {}), **own)

    def _class_weight_by_code(self, targets):
        return {}

    def _gamma_value(self, X):
        """scikit-learn's gamma: 'scale' = 1 / (n_features Var[X]) (1 for constant X)."""
        if callable(self.kernel) or self.kernel == "precomputed":
            return None
        if self.gamma == "auto":
            return 1.0 / X.shape[1]
        if self.gamma == "scale":
            with np.errstate(over="ignore", invalid="ignore"):
                var = X.multiply(X).mean() - X.mean() ** 2 if sp.issparse(X) else X.var()
            if not np.isfinite(var):  # gamma would underflow to 0 and the kernel turn NaN
                raise ValueError(f"{NOT_FINITE} (the variance of X overflows float64).")
            return 1.0 / (X.shape[1] * var) if var != 0 else 1.0
        return float(self.gamma)

    def _set_attributes(self, X):
        """scikit-learn's fitted attributes, from the model in LIBSVM's layout."""
        model = self.model_
        info = model.info
        self.shape_fit_ = X.shape if hasattr(X, "shape") else (_num_samples(X),)
        if callable(self.kernel) or self.kernel == "precomputed":
            self.support_vectors_ = np.empty((0, 0))
        elif sp.issparse(X):
            self.support_vectors_ = sp.csr_matrix(X[self.support_])
        else:
            self.support_vectors_ = X[self.support_]
        sign = self._sign()
        dual_coef = sign * model.sv_coef
        self.dual_coef_ = sp.csr_matrix(dual_coef) if sp.issparse(X) else dual_coef
        self.intercept_ = -sign * model.rho
        self.fit_status_ = int(any(status == "max_iter" for status in info["status"]))
        if self.fit_status_:
            warnings.warn(f"Solver terminated early (max_iter={self.max_iter}).  Consider "
                          "pre-processing your data with StandardScaler or MinMaxScaler.",
                          ConvergenceWarning, stacklevel=3)
        n_sv = model.n_sv if model.n_sv is not None else [model.support_vectors.shape[0]]
        self.n_support_ = np.asarray(n_sv, dtype=np.int32)
        self.n_iter_ = int(info["n_iter"][0])

    def _sign(self):
        """scikit-learn flips binary classifiers so that positive means classes_[1]."""
        return 1.0

    # -- prediction ----------------------------------------------------------------------------
    def _kernel_rows(self, X, serial=False):
        """The rows fastsvm's model reads: X itself, or for a precomputed (or callable) kernel
        [serial number, k(x, x_1), ..., k(x, x_n)] with the 1-based serial numbers of the
        training rows at fit time (0 at predict time, where column 0 is not read)."""
        if callable(self.kernel):
            K = self.kernel(X, self._X_fit)
            K = np.asarray(K.toarray() if sp.issparse(K) else K, dtype=np.float64)
            expected = (_num_samples(X), _num_samples(self._X_fit))
            if K.shape != expected:
                raise ValueError(f"the kernel returned a {'x'.join(map(str, K.shape))} matrix for "
                                 f"{expected[0]} samples against {expected[1]} training samples")
            X = K
        elif self.kernel != "precomputed":
            return X
        first = np.arange(1.0, X.shape[0] + 1) if serial else np.zeros(X.shape[0])
        return to_csr(np.hstack([first[:, None], X]))

    def _validated_rows(self, X):
        check_is_fitted(self)
        if self.kernel == "precomputed" and sp.issparse(X):
            raise TypeError("Sparse precomputed kernels are not supported.")
        if not callable(self.kernel):
            X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, order="C", reset=False)
        return self._kernel_rows(X)

    def _decision_values(self, X):
        """LIBSVM's decision values (n_samples x n_pairs), pairs in sorted class order."""
        rows = self._validated_rows(X)
        return decision_values(self.model_, rows, n_jobs=self.n_jobs)

    @property
    def coef_(self):
        """Primal weights (linear kernel only): one row per pair or per model."""
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        dual = self.dual_coef_.toarray() if sp.issparse(self.dual_coef_) else self.dual_coef_
        sv = self.support_vectors_
        if dual.shape[0] == 1:
            rows = [dual[0] @ sv]
        else:
            rows = _pair_weights(dual, self.n_support_, sv)
        coef = np.vstack([np.asarray(r).reshape(1, -1) for r in rows])
        if sp.issparse(sv):
            return sp.csr_matrix(coef)
        coef.flags.writeable = False
        return coef

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.sparse = self.kernel != "precomputed"
        return tags


def _check_finite_kernel(X):
    """Rows whose squared norm overflows float64 make the kernel values inf or NaN."""
    with np.errstate(over="ignore"):
        sq_norms = np.asarray(X.multiply(X).sum(axis=1)) if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
    if not np.all(np.isfinite(sq_norms)):
        raise ValueError(f"{NOT_FINITE} (squared norms of rows of X overflow float64).")


def _pair_weights(dual, n_support, sv):
    """w of each one-vs-one pair (i, j) from LIBSVM's coefficient layout: class i's
    coefficients for the pair are in row j - 1, class j's in row i."""
    start = np.concatenate([[0], np.cumsum(n_support)])
    rows = []
    for i in range(len(n_support)):
        for j in range(i + 1, len(n_support)):
            si, sj = slice(start[i], start[i + 1]), slice(start[j], start[j + 1])
            rows.append(dual[j - 1, si] @ sv[si] + dual[i, sj] @ sv[sj])
    return rows


def _integer_labels(classes):
    """The classes as LIBSVM's integer labels, or None when they are not all integers."""
    if classes.dtype.kind not in "iuf":
        return None
    if not np.all((np.mod(classes, 1) == 0) & (np.abs(classes) < 2.0**62)):
        return None
    return classes.astype(np.int64)


class _KernelClassifier(ClassifierMixin, _KernelSVM):
    """SVC and NuSVC: sorted classes, one-vs-one, votes, 'ovr'-shaped decision function."""

    _parameter_constraints: dict = {
        **_KernelSVM._parameter_constraints,
        "probability": ["boolean", Hidden(StrOptions({"deprecated"}))],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "random_state": ["random_state"],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
        "break_ties": ["boolean"],
    }

    def _encode_targets(self, y, sample_weight):
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"The number of classes has to be greater than one; got "
                             f"{len(self.classes_)} class")
        weighted = np.bincount(codes, weights=sample_weight, minlength=len(self.classes_)) > 0
        if not weighted.any():
            raise ValueError(ALL_MASKED)
        if np.count_nonzero(weighted) == 1:  # LIBSVM's nu-SVC finds nu infeasible first
            raise ValueError(ONE_CLASS_LEFT if self._svm_type == "c_svc" else
                             "specified nu is infeasible: all samples with positive weights belong "
                             "to the same class")
        if not weighted.all() and self._svm_type == "c_svc":
            raise ValueError(f"every sample of class {self.classes_[~weighted][0]} has weight <= 0: "
                             "each class needs a sample of positive weight")
        # nu-SVC: fastsvm.training.trainer finds nu infeasible for a class without weight, as LIBSVM
        self.class_weight_ = compute_class_weight(self.class_weight, classes=self.classes_, y=y)
        return codes.astype(np.float64)

    def _warn_probability(self):
        if PROBABILITY_DEPRECATED and not isinstance(self.probability, str):
            name = type(self).__name__
            warnings.warn(f"The `probability` parameter of {name} is deprecated since scikit-learn "
                          f"1.9 and goes in 1.11: use CalibratedClassifierCV({name}(), "
                          f"ensemble=False) instead of {name}(probability=True).",
                          FutureWarning, stacklevel=3)

    def _wants_probability(self):
        return not isinstance(self.probability, str) and bool(self.probability)

    def _class_weight_by_code(self, codes):
        return class_weights_by_code(self.class_weight, self.classes_, codes.astype(np.intp))

    def _row_order(self, codes):
        # LIBSVM takes the classes in order of first occurrence
        first = np.unique(codes, return_index=True)[1]
        if np.all(np.diff(first) > 0):
            return None
        return np.argsort(codes, kind="stable")

    def _set_attributes(self, X):
        super()._set_attributes(X)
        self.n_iter_ = np.asarray(self.model_.info["n_iter"], dtype=np.int32)  # one per pair
        model = self.model_
        self._probA = model.prob_a if model.prob_a is not None else np.empty(0)
        self._probB = model.prob_b if model.prob_b is not None else np.empty(0)
        labels = _integer_labels(self.classes_)
        if labels is not None:  # the model file then holds the classes themselves, not codes
            model.labels = labels

    def _sign(self):
        return -1.0 if len(self.classes_) == 2 else 1.0

    def decision_function(self, X):
        """Evaluate the decision function on the samples in X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples; for kernel='precomputed', their kernel values against the training
            samples, (n_samples, n_samples_train).

        Returns
        -------
        dec : ndarray of shape (n_samples,), (n_samples, n_classes) or (n_samples, n_classes * (n_classes - 1) / 2)
            Two classes: (n_samples,), positive for ``classes_[1]``. More: with
            decision_function_shape='ovr', scikit-learn's monotone transform of the one-vs-one
            votes, (n_samples, n_classes); with 'ovo', the one-vs-one values, one column per
            pair (0, 1), (0, 2), ..., (1, 2), ... of ``classes_``.

        Examples
        --------
        >>> from sklearn.datasets import make_classification
        >>> from fastsvm import SVC
        >>> X, y = make_classification(n_samples=120, n_features=4, n_informative=3, n_redundant=0,
        ...                            n_classes=4, random_state=0)
        >>> SVC().fit(X, y).decision_function(X[:2]).shape
        (2, 4)
        >>> SVC(decision_function_shape="ovo").fit(X, y).decision_function(X[:2]).shape
        (2, 6)
        >>> SVC().fit(X, y == 0).decision_function(X[:2]).shape
        (2,)
        """
        dec = self._decision_values(X)
        if len(self.classes_) == 2:
            return -dec[:, 0]
        if self.decision_function_shape == "ovr":
            return _ovr_decision_function(dec < 0, -dec, len(self.classes_))
        return dec

    def predict(self, X):
        """Perform classification on the samples in X.

        The class of a sample is the one the one-vs-one pairs vote for most (on a tie, the first
        of the tied classes), or with break_ties the argmax of the 'ovr' decision function.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples; for kernel='precomputed', their kernel values against the training
            samples, (n_samples, n_samples_train).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The class labels, elements of ``classes_``.

        Examples
        --------
        >>> import numpy as np
        >>> from fastsvm import NuSVC
        >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [3.0, 3.0], [3.0, 4.0]])
        >>> NuSVC(nu=0.5).fit(X, ["a", "a", "b", "b"]).predict([[0.0, 0.5], [3.0, 3.5]])
        array(['a', 'b'], dtype='<U1')
        """
        check_is_fitted(self)
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")
        if self.break_ties and len(self.classes_) > 2:
            return self.classes_[np.argmax(self.decision_function(X), axis=1)]
        rows = self._validated_rows(X)
        labels = predict(self.model_, rows, n_jobs=self.n_jobs)
        return self.classes_[np.searchsorted(self.model_.labels, labels.astype(np.int64))]

    def _check_proba(self):
        if not self._wants_probability():
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    @available_if(_check_proba)
    def predict_proba(self, X):
        """Compute the probabilities of the classes for the samples in X.

        LIBSVM's probability model: Platt's sigmoid on each pair's decision values, the pairs'
        estimates coupled into one distribution. It needs probability=True at fit time.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples; for kernel='precomputed', their kernel values against the training
            samples, (n_samples, n_samples_train).

        Returns
        -------
        T : ndarray of shape (n_samples, n_classes)
            The probability of each class, columns in the order of ``classes_``.

        Examples
        --------
        >>> import warnings
        >>> import numpy as np
        >>> from sklearn.datasets import make_classification
        >>> from fastsvm import SVC
        >>> X, y = make_classification(n_samples=100, n_features=4, random_state=0)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", FutureWarning)  # scikit-learn >= 1.9 deprecates probability
        ...     clf = SVC(probability=True, random_state=0).fit(X, y)
        >>> proba = clf.predict_proba(X[:3])
        >>> proba.shape
        (3, 2)
        >>> bool(np.allclose(proba.sum(axis=1), 1.0))
        True
        """
        rows = self._validated_rows(X)
        if self.model_.prob_a is None:
            raise NotFittedError("predict_proba is not available when fitted with probability=False")
        return predict_probability(self.model_, rows, n_jobs=self.n_jobs)[1]

    @available_if(_check_proba)
    def predict_log_proba(self, X):
        """Compute the log-probabilities of the classes for the samples in X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples; for kernel='precomputed', their kernel values against the training
            samples, (n_samples, n_samples_train).

        Returns
        -------
        T : ndarray of shape (n_samples, n_classes)
            The logarithm of predict_proba(X), columns in the order of ``classes_``.

        Examples
        --------
        >>> import warnings
        >>> import numpy as np
        >>> from sklearn.datasets import make_classification
        >>> from fastsvm import SVC
        >>> X, y = make_classification(n_samples=100, n_features=4, random_state=0)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", FutureWarning)  # scikit-learn >= 1.9 deprecates probability
        ...     clf = SVC(probability=True, random_state=0).fit(X, y)
        >>> bool(np.allclose(np.exp(clf.predict_log_proba(X[:3])), clf.predict_proba(X[:3])))
        True
        """
        return np.log(self.predict_proba(X))

    def _platt_a(self):
        """Platt's A per pair (empty without probability=True)."""
        return self._probA

    def _platt_b(self):
        """Platt's B per pair (empty without probability=True)."""
        return self._probB

    if PROBABILITY_DEPRECATED:  # they go with probability in scikit-learn 1.11
        probA_ = deprecated("Attribute `probA_` was deprecated in scikit-learn 1.9 with the "
                            "probability parameter and goes in 1.11.")(property(_platt_a))
        probB_ = deprecated("Attribute `probB_` was deprecated in scikit-learn 1.9 with the "
                            "probability parameter and goes in 1.11.")(property(_platt_b))
    else:
        probA_ = property(_platt_a)
        probB_ = property(_platt_b)


class SVC(_KernelClassifier):
    """C-support vector classification (LIBSVM's -s 0), with sklearn.svm.SVC's API.

    The parameters and fitted attributes are scikit-learn's; fastsvm adds ``solver``,
    ``solver_options``, ``n_jobs`` and ``warm_start``. Multi-class problems are trained one-vs-one,
    the classes in sorted order (``classes_``), so the pairs and the rows of ``dual_coef_`` line up
    with scikit-learn's.

    Parameters
    ----------
    C : float, default=1.0
        Regularization parameter. The strength of the regularization is inversely proportional
        to C. Must be strictly positive. The penalty is a squared l2 penalty.
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'} or callable, default='rbf'
        The kernel. 'precomputed': X is the Gram matrix, (n_samples, n_samples) at fit time and
        (n_samples_test, n_samples_train) at predict time. A callable ``kernel(A, B)`` returns
        the matrix of kernel values between the rows of A and of B; it gets X as given.
    degree : int, default=3
        Degree of the polynomial kernel ('poly'). Must be non-negative. Ignored by the other
        kernels.
    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient of 'rbf', 'poly' and 'sigmoid': 'scale' is 1 / (n_features *
        X.var()), 'auto' is 1 / n_features, a float must be non-negative.
    coef0 : float, default=0.0
        Independent term of the kernel function, used by 'poly' and 'sigmoid' only.
    shrinking : bool, default=True
        Whether to use LIBSVM's shrinking heuristic.
    probability : bool, default='deprecated' (False before scikit-learn 1.9)
        Whether to fit LIBSVM's probability model (Platt's sigmoids on the pairs' decision
        values, by an internal 5-fold cross-validation at fit time), which predict_proba needs.
        It needs a one-vs-one solver. As in scikit-learn 1.9, which deprecates it (removal in
        1.11), giving any value warns: ``CalibratedClassifierCV(estimator, ensemble=False)``
        replaces it.
    tol : float, default=1e-3
        Tolerance of the stopping criterion.
    cache_size : float, default=200
        Size of the kernel cache, in MB.
    class_weight : dict or 'balanced', default=None
        Set the parameter C of class i to class_weight[i] * C. None: every class has weight one.
        'balanced' uses the weights n_samples / (n_classes * np.bincount(y)).
    verbose : bool, default=False
        Print the solver's progress and LIBSVM's summary lines to stdout.
    max_iter : int, default=-1
        Hard limit on the solver's iterations, or -1 for LIBSVM's own cap. A fit that reaches it
        sets ``fit_status_`` to 1 and warns (ConvergenceWarning).
    decision_function_shape : {'ovo', 'ovr'}, default='ovr'
        Shape of decision_function with more than two classes: 'ovr' gives (n_samples,
        n_classes), a monotone transform of the one-vs-one votes, as scikit-learn's other
        classifiers; 'ovo' gives LIBSVM's one-vs-one values, (n_samples, n_classes * (n_classes
        - 1) / 2). Training is one-vs-one either way.
    break_ties : bool, default=False
        With decision_function_shape='ovr' and more than two classes, predict breaks ties by the
        decision function's values; otherwise the first of the tied classes is returned.
    random_state : int, RandomState instance or None, default=None
        Seed of the probability model's cross-validation folds and of randomized solvers. None
        means seed 0: a fit is deterministic.
    solver : str, default='auto'
        The fastsvm solver: a name in ``fastsvm.solvers.SOLVERS`` that solves this problem, here
        'auto', 'smo', 'block_smo', 'ssnal', 'nystroem' and 'admm'. 'auto' runs block_smo on
        subproblems of 6000 dual variables and more, smo (LIBSVM's own solver) below.
        docs/guide.md ("Which solver") says which to choose; the linear one-vs-rest solvers
        belong to LinearSVC.
    solver_options : dict, default=None
        The solver's options, ``{name: value}``: what ``-o name=value`` sets on the command
        line, with the same names and checks (e.g. ``{"working_set": 256}`` for block_smo).
        ``fastsvm-train`` without arguments lists every solver's options.
    n_jobs : int, default=None
        Threads for the one-vs-one pairs and the kernel rows, in fit and predict. None means all
        cores.
    warm_start : bool, default=False
        When True, a refit on the same rows (e.g. after ``set_params(C=...)``) starts from the
        previous fit's solution where the solver can; otherwise every fit starts afresh.

    Attributes
    ----------
    class_weight_ : ndarray of shape (n_classes,)
        Multipliers of C for each class, computed from class_weight.
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    coef_ : ndarray of shape (n_classes * (n_classes - 1) / 2, n_features)
        Weights of the features in the primal problem, one row per one-vs-one pair (one row for
        two classes). Linear kernel only; read-only, and sparse when X was.
    dual_coef_ : ndarray of shape (n_classes - 1, n_SV)
        Dual coefficients of the support vectors in the decision function, in LIBSVM's
        one-vs-one layout, multiplied by their targets.
    fit_status_ : int
        0 if the solver converged, 1 if it stopped at max_iter (with a warning).
    intercept_ : ndarray of shape (n_classes * (n_classes - 1) / 2,)
        Constants in the decision function, one per one-vs-one pair.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen during fit; defined only when X has feature names that are
        all strings.
    n_iter_ : ndarray of shape (n_classes * (n_classes - 1) / 2,)
        Number of iterations of the solver, one per one-vs-one pair.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training rows.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The support vectors (CSR when X was sparse; empty for a precomputed or callable kernel).
    n_support_ : ndarray of shape (n_classes,), dtype=int32
        Number of support vectors of each class.
    probA_ : ndarray of shape (n_classes * (n_classes - 1) / 2,)
        Platt's parameter A of each pair with probability=True (empty otherwise); deprecated
        with probability from scikit-learn 1.9.
    probB_ : ndarray of shape (n_classes * (n_classes - 1) / 2,)
        Platt's parameter B of each pair, as probA_.
    shape_fit_ : tuple of int of shape (n_dimensions_of_X,)
        Dimensions of the training X.
    model_ : fastsvm.Model
        The trained LIBSVM model: ``fastsvm.save_model(est.model_, path)`` writes a model file
        LIBSVM's own tools read.

    See Also
    --------
    NuSVC : The same classifier, its number of support vectors set by nu.
    LinearSVC : Linear classification, for many samples.
    sklearn.svm.SVC : scikit-learn's own, over its fork of LIBSVM.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from fastsvm import SVC
    >>> X, y = make_classification(n_samples=100, n_features=4, random_state=0)
    >>> clf = SVC(kernel="rbf", C=1.0).fit(X, y)
    >>> clf.predict(X[:4]).shape
    (4,)
    >>> bool(clf.score(X, y) > 0.9)
    True
    >>> clf.dual_coef_.shape == (1, clf.n_support_.sum())
    True

    A named solver and one of its options, and the trained LIBSVM model written to a file:

    >>> import os, tempfile
    >>> import fastsvm
    >>> clf = SVC(solver="block_smo", solver_options={"working_set": 256}).fit(X, y)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "svc.model")
    ...     fastsvm.save_model(clf.model_, path)
    ...     fastsvm.load_model(path).svm_type
    'c_svc'
    """

    _svm_type = "c_svc"
    _parameter_constraints: dict = {**_KernelClassifier._parameter_constraints, **_KernelSVM._C}

    def __init__(self, *, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
                 probability=PROBABILITY_DEFAULT, tol=1e-3, cache_size=200, class_weight=None, verbose=False,
                 max_iter=-1, decision_function_shape="ovr", break_ties=False, random_state=None,
                 solver="auto", solver_options=None, n_jobs=None,
                 warm_start=False):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.solver = solver
        self.solver_options = solver_options
        self.n_jobs = n_jobs
        self.warm_start = warm_start


class NuSVC(_KernelClassifier):
    """nu-support vector classification (LIBSVM's -s 1), with sklearn.svm.NuSVC's API.

    Like SVC, with the parameter nu in place of C: it bounds the fractions of margin
    errors and of support vectors. fastsvm adds ``solver``, ``solver_options``, ``n_jobs`` and
    ``warm_start``.

    Parameters
    ----------
    nu : float, default=0.5
        An upper bound on the fraction of margin errors and a lower bound on the fraction of
        support vectors. Must be in (0, 1].
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'} or callable, default='rbf'
        The kernel. 'precomputed': X is the Gram matrix, (n_samples, n_samples) at fit time and
        (n_samples_test, n_samples_train) at predict time. A callable ``kernel(A, B)`` returns
        the matrix of kernel values between the rows of A and of B; it gets X as given.
    degree : int, default=3
        Degree of the polynomial kernel ('poly'). Must be non-negative. Ignored by the other
        kernels.
    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient of 'rbf', 'poly' and 'sigmoid': 'scale' is 1 / (n_features *
        X.var()), 'auto' is 1 / n_features, a float must be non-negative.
    coef0 : float, default=0.0
        Independent term of the kernel function, used by 'poly' and 'sigmoid' only.
    shrinking : bool, default=True
        Whether to use LIBSVM's shrinking heuristic.
    probability : bool, default='deprecated' (False before scikit-learn 1.9)
        Whether to fit LIBSVM's probability model (Platt's sigmoids on the pairs' decision
        values, by an internal 5-fold cross-validation at fit time), which predict_proba needs.
        It needs a one-vs-one solver. As in scikit-learn 1.9, which deprecates it (removal in
        1.11), giving any value warns: ``CalibratedClassifierCV(estimator, ensemble=False)``
        replaces it.
    tol : float, default=1e-3
        Tolerance of the stopping criterion.
    cache_size : float, default=200
        Size of the kernel cache, in MB.
    class_weight : dict or 'balanced', default=None
        Class weights as in SVC. As in LIBSVM, they do not change a nu-SVC fit: only
        ``class_weight_`` reports them.
    verbose : bool, default=False
        Print the solver's progress and LIBSVM's summary lines to stdout.
    max_iter : int, default=-1
        Hard limit on the solver's iterations, or -1 for LIBSVM's own cap. A fit that reaches it
        sets ``fit_status_`` to 1 and warns (ConvergenceWarning).
    decision_function_shape : {'ovo', 'ovr'}, default='ovr'
        Shape of decision_function with more than two classes: 'ovr' gives (n_samples,
        n_classes), a monotone transform of the one-vs-one votes, as scikit-learn's other
        classifiers; 'ovo' gives LIBSVM's one-vs-one values, (n_samples, n_classes * (n_classes
        - 1) / 2). Training is one-vs-one either way.
    break_ties : bool, default=False
        With decision_function_shape='ovr' and more than two classes, predict breaks ties by the
        decision function's values; otherwise the first of the tied classes is returned.
    random_state : int, RandomState instance or None, default=None
        Seed of the probability model's cross-validation folds and of randomized solvers. None
        means seed 0: a fit is deterministic.
    solver : str, default='auto'
        The fastsvm solver: a name in ``fastsvm.solvers.SOLVERS`` that solves this problem, here
        'auto', 'smo', 'block_smo' and 'dcdm' (its bias in the kernel). 'auto' runs block_smo on
        subproblems of 6000 dual variables and more, smo (LIBSVM's own solver) below.
        docs/guide.md ("Which solver") says which to choose; the linear one-vs-rest solvers
        belong to LinearSVC.
    solver_options : dict, default=None
        The solver's options, ``{name: value}``: what ``-o name=value`` sets on the command
        line, with the same names and checks (e.g. ``{"working_set": 256}`` for block_smo).
        ``fastsvm-train`` without arguments lists every solver's options.
    n_jobs : int, default=None
        Threads for the one-vs-one pairs and the kernel rows, in fit and predict. None means all
        cores.
    warm_start : bool, default=False
        When True, a refit on the same rows (e.g. after ``set_params(C=...)``) starts from the
        previous fit's solution where the solver can; otherwise every fit starts afresh.

    Attributes
    ----------
    class_weight_ : ndarray of shape (n_classes,)
        Multipliers of C for each class, computed from class_weight.
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    coef_ : ndarray of shape (n_classes * (n_classes - 1) / 2, n_features)
        Weights of the features in the primal problem, one row per one-vs-one pair (one row for
        two classes). Linear kernel only; read-only, and sparse when X was.
    dual_coef_ : ndarray of shape (n_classes - 1, n_SV)
        Dual coefficients of the support vectors in the decision function, in LIBSVM's
        one-vs-one layout, multiplied by their targets.
    fit_status_ : int
        0 if the solver converged, 1 if it stopped at max_iter (with a warning).
    intercept_ : ndarray of shape (n_classes * (n_classes - 1) / 2,)
        Constants in the decision function, one per one-vs-one pair.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen during fit; defined only when X has feature names that are
        all strings.
    n_iter_ : ndarray of shape (n_classes * (n_classes - 1) / 2,)
        Number of iterations of the solver, one per one-vs-one pair.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training rows.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The support vectors (CSR when X was sparse; empty for a precomputed or callable kernel).
    n_support_ : ndarray of shape (n_classes,), dtype=int32
        Number of support vectors of each class.
    probA_ : ndarray of shape (n_classes * (n_classes - 1) / 2,)
        Platt's parameter A of each pair with probability=True (empty otherwise); deprecated
        with probability from scikit-learn 1.9.
    probB_ : ndarray of shape (n_classes * (n_classes - 1) / 2,)
        Platt's parameter B of each pair, as probA_.
    shape_fit_ : tuple of int of shape (n_dimensions_of_X,)
        Dimensions of the training X.
    model_ : fastsvm.Model
        The trained LIBSVM model: ``fastsvm.save_model(est.model_, path)`` writes a model file
        LIBSVM's own tools read.

    See Also
    --------
    SVC : The same classifier with the parameter C.
    sklearn.svm.NuSVC : scikit-learn's own, over its fork of LIBSVM.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from fastsvm import NuSVC
    >>> X, y = make_classification(n_samples=100, n_features=4, random_state=0)
    >>> clf = NuSVC(nu=0.3).fit(X, y)
    >>> clf.predict(X[:4]).shape
    (4,)
    >>> bool(clf.score(X, y) > 0.9)
    True
    >>> clf.dual_coef_.shape == (1, clf.n_support_.sum())
    True
    """

    _svm_type = "nu_svc"
    _parameter_constraints: dict = {**_KernelClassifier._parameter_constraints, **_KernelSVM._NU}

    def __init__(self, *, nu=0.5, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
                 probability=PROBABILITY_DEFAULT, tol=1e-3, cache_size=200, class_weight=None, verbose=False,
                 max_iter=-1, decision_function_shape="ovr", break_ties=False, random_state=None,
                 solver="auto", solver_options=None, n_jobs=None,
                 warm_start=False):
        self.nu = nu
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.solver = solver
        self.solver_options = solver_options
        self.n_jobs = n_jobs
        self.warm_start = warm_start


class _KernelRegressor(RegressorMixin, _KernelSVM):
    def predict(self, X):
        """Perform regression on the samples in X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples; for kernel='precomputed', their kernel values against the training
            samples, (n_samples, n_samples_train).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predicted values.

        Examples
        --------
        >>> import numpy as np
        >>> from fastsvm import SVR
        >>> X = np.linspace(0.0, 1.0, 20).reshape(-1, 1)
        >>> reg = SVR(kernel="linear", C=10.0, epsilon=0.01).fit(X, 2.0 * X.ravel())
        >>> np.round(reg.predict([[0.5]]), 1)
        array([1.])
        """
        return self._decision_values(X)[:, 0]


class SVR(_KernelRegressor):
    """epsilon-support vector regression (LIBSVM's -s 3), with sklearn.svm.SVR's API.

    The parameters and fitted attributes are scikit-learn's; fastsvm adds ``solver``,
    ``solver_options``, ``n_jobs`` and ``warm_start``.

    Parameters
    ----------
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'} or callable, default='rbf'
        The kernel. 'precomputed': X is the Gram matrix, (n_samples, n_samples) at fit time and
        (n_samples_test, n_samples_train) at predict time. A callable ``kernel(A, B)`` returns
        the matrix of kernel values between the rows of A and of B; it gets X as given.
    degree : int, default=3
        Degree of the polynomial kernel ('poly'). Must be non-negative. Ignored by the other
        kernels.
    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient of 'rbf', 'poly' and 'sigmoid': 'scale' is 1 / (n_features *
        X.var()), 'auto' is 1 / n_features, a float must be non-negative.
    coef0 : float, default=0.0
        Independent term of the kernel function, used by 'poly' and 'sigmoid' only.
    tol : float, default=1e-3
        Tolerance of the stopping criterion.
    C : float, default=1.0
        Regularization parameter. The strength of the regularization is inversely proportional
        to C. Must be strictly positive. The penalty is a squared l2 penalty.
    epsilon : float, default=0.1
        Epsilon of the epsilon-SVR model: the width of the tube within which no penalty is
        associated with the training loss. Must be non-negative.
    shrinking : bool, default=True
        Whether to use LIBSVM's shrinking heuristic.
    cache_size : float, default=200
        Size of the kernel cache, in MB.
    verbose : bool, default=False
        Print the solver's progress and LIBSVM's summary lines to stdout.
    max_iter : int, default=-1
        Hard limit on the solver's iterations, or -1 for LIBSVM's own cap. A fit that reaches it
        sets ``fit_status_`` to 1 and warns (ConvergenceWarning).
    solver : str, default='auto'
        The fastsvm solver: a name in ``fastsvm.solvers.SOLVERS`` that solves this problem, here
        'auto', 'smo', 'block_smo', 'ssnal' and 'nystroem'. 'auto' runs block_smo on subproblems
        of 6000 dual variables and more, smo (LIBSVM's own solver) below. docs/guide.md ("Which
        solver") says which to choose; the linear one-vs-rest solvers belong to LinearSVC.
    solver_options : dict, default=None
        The solver's options, ``{name: value}``: what ``-o name=value`` sets on the command
        line, with the same names and checks (e.g. ``{"working_set": 256}`` for block_smo).
        ``fastsvm-train`` without arguments lists every solver's options.
    n_jobs : int, default=None
        Threads for the one-vs-one pairs and the kernel rows, in fit and predict. None means all
        cores.
    warm_start : bool, default=False
        When True, a refit on the same rows (e.g. after ``set_params(C=...)``) starts from the
        previous fit's solution where the solver can; otherwise every fit starts afresh.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        Weights of the features in the primal problem. Linear kernel only; read-only, and sparse
        when X was.
    dual_coef_ : ndarray of shape (1, n_SV)
        Coefficients of the support vectors in the decision function.
    fit_status_ : int
        0 if the solver converged, 1 if it stopped at max_iter (with a warning).
    intercept_ : ndarray of shape (1,)
        Constant in the decision function.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen during fit; defined only when X has feature names that are
        all strings.
    n_iter_ : int
        Number of iterations of the solver.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training rows.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The support vectors (CSR when X was sparse; empty for a precomputed or callable kernel).
    n_support_ : ndarray of shape (1,), dtype=int32
        Number of support vectors.
    shape_fit_ : tuple of int of shape (n_dimensions_of_X,)
        Dimensions of the training X.
    model_ : fastsvm.Model
        The trained LIBSVM model: ``fastsvm.save_model(est.model_, path)`` writes a model file
        LIBSVM's own tools read.

    See Also
    --------
    NuSVR : The same regression, its number of support vectors set by nu.
    sklearn.svm.SVR : scikit-learn's own, over its fork of LIBSVM.

    Examples
    --------
    >>> import numpy as np
    >>> from fastsvm import SVR
    >>> rng = np.random.RandomState(0)
    >>> X = np.sort(5 * rng.rand(40, 1), axis=0)
    >>> y = np.sin(X).ravel()
    >>> reg = SVR(C=1.0, epsilon=0.1).fit(X, y)
    >>> bool(np.abs(reg.predict(X) - y).max() < 0.2)
    True
    >>> reg.dual_coef_.shape == (1, reg.n_support_[0])
    True
    """

    _svm_type = "epsilon_svr"
    _parameter_constraints: dict = {**_KernelSVM._parameter_constraints, **_KernelSVM._C,
                                    "epsilon": [Interval(Real, 0.0, None, closed="left")]}

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, C=1.0,
                 epsilon=0.1, shrinking=True, cache_size=200, verbose=False, max_iter=-1,
                 solver="auto", solver_options=None, n_jobs=None,
                 warm_start=False):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.C = C
        self.epsilon = epsilon
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.solver = solver
        self.solver_options = solver_options
        self.n_jobs = n_jobs
        self.warm_start = warm_start


class NuSVR(_KernelRegressor):
    """nu-support vector regression (LIBSVM's -s 4), with sklearn.svm.NuSVR's API.

    Like SVR, with the parameter nu in place of epsilon: it bounds the fractions of
    training errors and of support vectors. fastsvm adds ``solver``, ``solver_options``, ``n_jobs``
    and ``warm_start``.

    Parameters
    ----------
    nu : float, default=0.5
        An upper bound on the fraction of training errors and a lower bound on the fraction of
        support vectors. Must be in (0, 1].
    C : float, default=1.0
        Penalty parameter C of the error term. Must be strictly positive and finite.
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'} or callable, default='rbf'
        The kernel. 'precomputed': X is the Gram matrix, (n_samples, n_samples) at fit time and
        (n_samples_test, n_samples_train) at predict time. A callable ``kernel(A, B)`` returns
        the matrix of kernel values between the rows of A and of B; it gets X as given.
    degree : int, default=3
        Degree of the polynomial kernel ('poly'). Must be non-negative. Ignored by the other
        kernels.
    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient of 'rbf', 'poly' and 'sigmoid': 'scale' is 1 / (n_features *
        X.var()), 'auto' is 1 / n_features, a float must be non-negative.
    coef0 : float, default=0.0
        Independent term of the kernel function, used by 'poly' and 'sigmoid' only.
    shrinking : bool, default=True
        Whether to use LIBSVM's shrinking heuristic.
    tol : float, default=1e-3
        Tolerance of the stopping criterion.
    cache_size : float, default=200
        Size of the kernel cache, in MB.
    verbose : bool, default=False
        Print the solver's progress and LIBSVM's summary lines to stdout.
    max_iter : int, default=-1
        Hard limit on the solver's iterations, or -1 for LIBSVM's own cap. A fit that reaches it
        sets ``fit_status_`` to 1 and warns (ConvergenceWarning).
    solver : str, default='auto'
        The fastsvm solver: a name in ``fastsvm.solvers.SOLVERS`` that solves this problem, here
        'auto', 'smo' and 'block_smo'. 'auto' runs block_smo on subproblems of 6000 dual
        variables and more, smo (LIBSVM's own solver) below. docs/guide.md ("Which solver") says
        which to choose; the linear one-vs-rest solvers belong to LinearSVC.
    solver_options : dict, default=None
        The solver's options, ``{name: value}``: what ``-o name=value`` sets on the command
        line, with the same names and checks (e.g. ``{"working_set": 256}`` for block_smo).
        ``fastsvm-train`` without arguments lists every solver's options.
    n_jobs : int, default=None
        Threads for the one-vs-one pairs and the kernel rows, in fit and predict. None means all
        cores.
    warm_start : bool, default=False
        When True, a refit on the same rows (e.g. after ``set_params(C=...)``) starts from the
        previous fit's solution where the solver can; otherwise every fit starts afresh.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        Weights of the features in the primal problem. Linear kernel only; read-only, and sparse
        when X was.
    dual_coef_ : ndarray of shape (1, n_SV)
        Coefficients of the support vectors in the decision function.
    fit_status_ : int
        0 if the solver converged, 1 if it stopped at max_iter (with a warning).
    intercept_ : ndarray of shape (1,)
        Constant in the decision function.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen during fit; defined only when X has feature names that are
        all strings.
    n_iter_ : int
        Number of iterations of the solver.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training rows.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The support vectors (CSR when X was sparse; empty for a precomputed or callable kernel).
    n_support_ : ndarray of shape (1,), dtype=int32
        Number of support vectors.
    shape_fit_ : tuple of int of shape (n_dimensions_of_X,)
        Dimensions of the training X.
    model_ : fastsvm.Model
        The trained LIBSVM model: ``fastsvm.save_model(est.model_, path)`` writes a model file
        LIBSVM's own tools read.

    See Also
    --------
    SVR : The same regression with the parameter epsilon.
    sklearn.svm.NuSVR : scikit-learn's own, over its fork of LIBSVM.

    Examples
    --------
    >>> import numpy as np
    >>> from fastsvm import NuSVR
    >>> rng = np.random.RandomState(0)
    >>> X = np.sort(5 * rng.rand(40, 1), axis=0)
    >>> y = np.sin(X).ravel()
    >>> reg = NuSVR(nu=0.5, C=1.0).fit(X, y)
    >>> bool(np.abs(reg.predict(X) - y).max() < 0.2)
    True
    >>> reg.dual_coef_.shape == (1, reg.n_support_[0])
    True
    """

    _svm_type = "nu_svr"
    _parameter_constraints: dict = {**_KernelSVM._parameter_constraints, **_KernelSVM._C,
                                    **_KernelSVM._NU}

    def __init__(self, *, nu=0.5, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, tol=1e-3, cache_size=200, verbose=False, max_iter=-1,
                 solver="auto", solver_options=None, n_jobs=None,
                 warm_start=False):
        self.nu = nu
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.tol = tol
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.solver = solver
        self.solver_options = solver_options
        self.n_jobs = n_jobs
        self.warm_start = warm_start


class OneClassSVM(OutlierMixin, _KernelSVM):
    """One-class SVM (LIBSVM's -s 2), with sklearn.svm.OneClassSVM's API: unsupervised outlier detection.

    It estimates the support of a distribution: predict gives +1 for inliers and -1 for
    outliers. The parameters and fitted attributes are scikit-learn's; fastsvm adds ``solver``,
    ``solver_options``, ``n_jobs`` and ``warm_start``.

    Parameters
    ----------
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'} or callable, default='rbf'
        The kernel. 'precomputed': X is the Gram matrix, (n_samples, n_samples) at fit time and
        (n_samples_test, n_samples_train) at predict time. A callable ``kernel(A, B)`` returns
        the matrix of kernel values between the rows of A and of B; it gets X as given.
    degree : int, default=3
        Degree of the polynomial kernel ('poly'). Must be non-negative. Ignored by the other
        kernels.
    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient of 'rbf', 'poly' and 'sigmoid': 'scale' is 1 / (n_features *
        X.var()), 'auto' is 1 / n_features, a float must be non-negative.
    coef0 : float, default=0.0
        Independent term of the kernel function, used by 'poly' and 'sigmoid' only.
    tol : float, default=1e-3
        Tolerance of the stopping criterion.
    nu : float, default=0.5
        An upper bound on the fraction of training errors (outliers) and a lower bound on the
        fraction of support vectors. Must be in (0, 1].
    shrinking : bool, default=True
        Whether to use LIBSVM's shrinking heuristic.
    cache_size : float, default=200
        Size of the kernel cache, in MB.
    verbose : bool, default=False
        Print the solver's progress and LIBSVM's summary lines to stdout.
    max_iter : int, default=-1
        Hard limit on the solver's iterations, or -1 for LIBSVM's own cap. A fit that reaches it
        sets ``fit_status_`` to 1 and warns (ConvergenceWarning).
    solver : str, default='auto'
        The fastsvm solver: a name in ``fastsvm.solvers.SOLVERS`` that solves this problem, here
        'auto', 'smo', 'block_smo' and 'dcdm'. 'auto' runs block_smo on subproblems of 6000 dual
        variables and more, smo (LIBSVM's own solver) below. docs/guide.md ("Which solver") says
        which to choose; the linear one-vs-rest solvers belong to LinearSVC.
    solver_options : dict, default=None
        The solver's options, ``{name: value}``: what ``-o name=value`` sets on the command
        line, with the same names and checks (e.g. ``{"working_set": 256}`` for block_smo).
        ``fastsvm-train`` without arguments lists every solver's options.
    n_jobs : int, default=None
        Threads for the one-vs-one pairs and the kernel rows, in fit and predict. None means all
        cores.
    warm_start : bool, default=False
        When True, a refit on the same rows (e.g. after ``set_params(C=...)``) starts from the
        previous fit's solution where the solver can; otherwise every fit starts afresh.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        Weights of the features in the primal problem. Linear kernel only; read-only, and sparse
        when X was.
    dual_coef_ : ndarray of shape (1, n_SV)
        Coefficients of the support vectors in the decision function.
    fit_status_ : int
        0 if the solver converged, 1 if it stopped at max_iter (with a warning).
    intercept_ : ndarray of shape (1,)
        Constant in the decision function.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen during fit; defined only when X has feature names that are
        all strings.
    n_iter_ : int
        Number of iterations of the solver.
    offset_ : ndarray of shape (1,)
        The offset that turns the raw scores into the decision function: decision_function =
        score_samples - offset_. It equals -intercept_.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training rows.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The support vectors (CSR when X was sparse; empty for a precomputed or callable kernel).
    n_support_ : ndarray of shape (1,), dtype=int32
        Number of support vectors.
    shape_fit_ : tuple of int of shape (n_dimensions_of_X,)
        Dimensions of the training X.
    model_ : fastsvm.Model
        The trained LIBSVM model: ``fastsvm.save_model(est.model_, path)`` writes a model file
        LIBSVM's own tools read.

    See Also
    --------
    sklearn.svm.OneClassSVM : scikit-learn's own, over its fork of LIBSVM.

    Examples
    --------
    >>> import numpy as np
    >>> from fastsvm import OneClassSVM
    >>> X = 0.3 * np.random.RandomState(0).randn(100, 2)
    >>> detector = OneClassSVM(nu=0.1, gamma=0.5).fit(X)
    >>> detector.predict([[0.0, 0.0], [4.0, 4.0]])
    array([ 1, -1])
    >>> bool(0.8 < np.mean(detector.predict(X) == 1) < 1.0)
    True
    """

    _svm_type = "one_class"
    _parameter_constraints: dict = {**_KernelSVM._parameter_constraints, **_KernelSVM._NU}

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, nu=0.5,
                 shrinking=True, cache_size=200, verbose=False, max_iter=-1, solver="auto",
                 solver_options=None, n_jobs=None, warm_start=False):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.nu = nu
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.solver = solver
        self.solver_options = solver_options
        self.n_jobs = n_jobs
        self.warm_start = warm_start

    def fit(self, X, y=None, sample_weight=None):
        """Detect the soft boundary of the set of samples X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The training samples; for kernel='precomputed', the Gram matrix (n_samples,
            n_samples).
        y : None
            Ignored; present for API consistency.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights. They rescale C per sample; a sample of weight <= 0 is left out.

        Returns
        -------
        self : object
            The fitted estimator.

        Examples
        --------
        >>> import numpy as np
        >>> from fastsvm import OneClassSVM
        >>> X = np.random.RandomState(0).randn(50, 2)
        >>> detector = OneClassSVM(nu=0.2).fit(X)
        >>> detector.offset_.shape
        (1,)
        """
        super().fit(X, np.ones(_num_samples(X)), sample_weight=sample_weight)
        self.offset_ = -self.intercept_
        return self

    def decision_function(self, X):
        """Signed distance to the separating hyperplane: positive for inliers.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples; for kernel='precomputed', their kernel values against the training
            samples, (n_samples, n_samples_train).

        Returns
        -------
        dec : ndarray of shape (n_samples,)
            The decision function of each sample: positive inside the boundary, negative
            outside.

        Examples
        --------
        >>> import numpy as np
        >>> from fastsvm import OneClassSVM
        >>> X = 0.3 * np.random.RandomState(0).randn(100, 2)
        >>> detector = OneClassSVM(nu=0.1, gamma=0.5).fit(X)
        >>> detector.decision_function([[0.0, 0.0], [4.0, 4.0]]) > 0
        array([ True, False])
        """
        return self._decision_values(X)[:, 0]

    def score_samples(self, X):
        """Raw scoring function of the samples: the decision function before its offset.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples; for kernel='precomputed', their kernel values against the training
            samples, (n_samples, n_samples_train).

        Returns
        -------
        score_samples : ndarray of shape (n_samples,)
            ``decision_function(X) + offset_``.

        Examples
        --------
        >>> import numpy as np
        >>> from fastsvm import OneClassSVM
        >>> X = 0.3 * np.random.RandomState(0).randn(100, 2)
        >>> detector = OneClassSVM(nu=0.1, gamma=0.5).fit(X)
        >>> scores = detector.score_samples(X[:3])
        >>> bool(np.allclose(scores - detector.offset_, detector.decision_function(X[:3])))
        True
        """
        return self.decision_function(X) + self.offset_

    def predict(self, X):
        """Perform outlier detection on the samples in X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples; for kernel='precomputed', their kernel values against the training
            samples, (n_samples, n_samples_train).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            +1 for an inlier, -1 for an outlier.

        Examples
        --------
        >>> import numpy as np
        >>> from fastsvm import OneClassSVM
        >>> X = 0.3 * np.random.RandomState(0).randn(100, 2)
        >>> OneClassSVM(nu=0.1, gamma=0.5).fit(X).predict([[0.0, 0.0], [4.0, 4.0]])
        array([ 1, -1])
        """
        rows = self._validated_rows(X)
        return predict(self.model_, rows, n_jobs=self.n_jobs).astype(np.intp)
