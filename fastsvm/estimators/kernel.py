"""SVC, NuSVC, SVR, NuSVR, OneClassSVM: scikit-learn's kernel SVMs over fastsvm's solvers.

The parameters and fitted attributes are those of ``sklearn.svm`` (LIBSVM inside), plus
``solver`` (a name in ``fastsvm.solvers.SOLVERS``), ``solver_options`` (that solver's options as a
dict, what ``-o name=value`` sets on the command line: ``fastsvm-train`` lists them), ``n_jobs``
(threads for the one-vs-one pairs and the kernel rows; None = all cores) and ``warm_start``
(scikit-learn's meaning: a refit, e.g. after set_params(C=...), starts from the previous fit's
solution). The trained LIBSVM model is ``model_``, so ``fastsvm.save_model(est.model_, path)``
writes a file LIBSVM's own tools read.

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
        """Fit the SVM on X (n_samples x n_features, or the n_samples x n_samples Gram matrix
        for kernel='precomputed'; anything the callable kernel reads) and y; sample_weight
        rescales C per sample, and a sample of weight <= 0 is left out, as in scikit-learn."""
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
        """Binary: (n_samples,), positive for classes_[1]. Otherwise the one-vs-one values
        (n_samples, n_pairs), or with decision_function_shape='ovr' scikit-learn's monotone
        transform of the votes (n_samples, n_classes)."""
        dec = self._decision_values(X)
        if len(self.classes_) == 2:
            return -dec[:, 0]
        if self.decision_function_shape == "ovr":
            return _ovr_decision_function(dec < 0, -dec, len(self.classes_))
        return dec

    def predict(self, X):
        """Class labels by one-vs-one votes (ties: the first class), or with break_ties the
        argmax of the 'ovr' decision function."""
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
        """Class probabilities (columns in classes_ order): LIBSVM's Platt sigmoids per pair,
        coupled pairwise. Needs probability=True at fit time."""
        rows = self._validated_rows(X)
        if self.model_.prob_a is None:
            raise NotFittedError("predict_proba is not available when fitted with probability=False")
        return predict_probability(self.model_, rows, n_jobs=self.n_jobs)[1]

    @available_if(_check_proba)
    def predict_log_proba(self, X):
        """Logarithm of predict_proba."""
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
    """C-support vector classification (LIBSVM -s 0), ``sklearn.svm.SVC``'s API."""

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
    """nu-support vector classification (LIBSVM -s 1), ``sklearn.svm.NuSVC``'s API. As in
    LIBSVM, class_weight does not change the fit (only class_weight_ reports it)."""

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
        """Predicted values."""
        return self._decision_values(X)[:, 0]


class SVR(_KernelRegressor):
    """epsilon-support vector regression (LIBSVM -s 3), ``sklearn.svm.SVR``'s API."""

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
    """nu-support vector regression (LIBSVM -s 4), ``sklearn.svm.NuSVR``'s API."""

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
    """One-class SVM (LIBSVM -s 2), ``sklearn.svm.OneClassSVM``'s API: +1 inliers, -1 outliers."""

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
        """Detect the soft boundary of the set of samples X (y is ignored)."""
        super().fit(X, np.ones(_num_samples(X)), sample_weight=sample_weight)
        self.offset_ = -self.intercept_
        return self

    def decision_function(self, X):
        """Signed distance to the boundary: positive for inliers."""
        return self._decision_values(X)[:, 0]

    def score_samples(self, X):
        """The unshifted decision function: decision_function(X) + offset_."""
        return self.decision_function(X) + self.offset_

    def predict(self, X):
        """+1 for inliers, -1 for outliers."""
        rows = self._validated_rows(X)
        return predict(self.model_, rows, n_jobs=self.n_jobs).astype(np.intp)
