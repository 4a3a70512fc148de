"""LinearSVC: scikit-learn's LinearSVC parameters, solved by fastsvm's linear solvers (LIBLINEAR's
-s 1/-s 3 dual, -s 2 primal, -s 5 L1-regularized and -s 4 Crammer-Singer problems)."""
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin, SparseCoefMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from ..params import Params
from ..training.trainer import fit_model
from ._common import class_weights_by_code, seed_from, warm_start_of

# (penalty, loss, dual) -> the fastsvm solver of that problem (LIBLINEAR's -s 3, -s 1, -s 2, -s 5)
SOLVER_OF = {
    ("l2", "hinge", True): "dcd",
    ("l2", "squared_hinge", True): "dcd",
    ("l2", "squared_hinge", False): "primal_newton",
    ("l1", "squared_hinge", False): "l1_cd",
}
JOINT_SOLVER = "crammer_singer"
# solves every (penalty, loss) of SOLVER_OF in the primal, and the squared error (LS-SVM), with an
# unpenalized intercept (LIBSVM's problem), when named
SMOOTHING_SOLVER = "nesvm"
# the Lp-loss SVM (any power p >= 1 of the hinge, penalty l2) by augmented Lagrange multipliers,
# the intercept unpenalized, when named
MULTIPLIER_SOLVER = "alm"
# the message scikit-learn's LinearSVC gives (its tests match it)
NOT_CONVERGED = "Liblinear failed to converge, increase the number of iterations."


def pick_dual(dual, penalty, loss, n_samples, n_features):
    """dual="auto": the dual when there are fewer samples than features and the dual solves this
    (penalty, loss), else the primal when it does; otherwise the only formulation there is."""
    if dual != "auto":
        return bool(dual)
    preferred = n_samples < n_features
    return preferred if (penalty, loss, preferred) in SOLVER_OF else not preferred


def pick_solver(multi_class, penalty, loss, dual):
    """The solver for these LinearSVC arguments, or ValueError naming the unsupported set."""
    if multi_class == "crammer_singer":
        return JOINT_SOLVER  # penalty, loss and dual do not apply to it
    if (penalty, loss, dual) in SOLVER_OF:
        return SOLVER_OF[(penalty, loss, dual)]
    if (penalty, loss, not dual) in SOLVER_OF:
        why = f"penalty='{penalty}' with loss='{loss}' is not supported when dual={dual}"
    else:
        why = f"penalty='{penalty}' with loss='{loss}' is not supported"
    raise ValueError(f"Unsupported set of arguments: {why}, Parameters: penalty={penalty!r}, "
                     f"loss={loss!r}, dual={dual!r}")


def merged_options(given, implied):
    """The solver options a user gave, with those the estimator's own parameters imply; the same
    option set two ways must agree."""
    options = dict(given or {})
    for name, value in implied.items():
        if name in options and options[name] != value:
            raise ValueError(f"solver_options[{name!r}] = {options[name]!r} contradicts the estimator's "
                             f"parameters, which set it to {value!r}")
        options[name] = value
    return options

class LinearSVC(SparseCoefMixin, LinearClassifierMixin, ClassifierMixin, BaseEstimator):
    """Linear support vector classification (LIBLINEAR's linear SVMs), with sklearn.svm.LinearSVC's API.

    The parameters and fitted attributes are scikit-learn's: penalty l2 with the hinge loss (dual,
    solver ``dcd``) or the squared hinge (dual ``dcd`` or primal ``primal_newton``), penalty l1
    with the squared hinge (primal, ``l1_cd``), one-vs-rest, or ``multi_class="crammer_singer"``
    (``crammer_singer``, all classes jointly). The intercept is LIBLINEAR's regularized bias
    feature of value ``intercept_scaling``. Two more solvers are fastsvm's own, one-vs-rest with an
    unpenalized intercept, as LIBSVM's: ``solver="nesvm"`` (Nesterov smoothing) solves either
    penalty with the hinge or the squared hinge, and penalty l2 with ``loss="squared_error"`` (the
    LS-SVM); ``solver="alm"`` (augmented Lagrange multipliers) solves penalty l2 with the loss
    max(0, 1 - y f)^p for any ``p`` >= 1. docs/guide.md ("Which solver") says which to choose.

    Parameters
    ----------
    penalty : {'l1', 'l2'}, default='l2'
        The norm of the penalty on the weights: 'l2' as in SVC, 'l1' for sparse weights.
    loss : {'hinge', 'squared_hinge', 'squared_error'}, default='squared_hinge'
        The loss: 'hinge' is the standard SVM loss, 'squared_hinge' its square, 'squared_error'
        the LS-SVM's (solver='nesvm' only).
    dual : 'auto' or bool, default='auto'
        Solve the dual (True) or the primal (False) problem. 'auto' takes the dual when there
        are fewer samples than features and the dual solves this (penalty, loss), else the
        primal when it does, else the only formulation there is; a named LIBLINEAR solver
        settles it (dcd: the dual).
    tol : float, default=1e-4
        Tolerance of the stopping criterion; for solver='nesvm' and 'alm', the relative duality
        gap.
    C : float, default=1.0
        Regularization parameter. The strength of the regularization is inversely proportional
        to C. Must be strictly positive.
    multi_class : {'ovr', 'crammer_singer'}, default='ovr'
        With more than two classes: 'ovr' trains one-vs-rest classifiers, 'crammer_singer'
        optimizes a joint objective over all classes (penalty, loss and dual do not apply to
        it).
    fit_intercept : bool, default=True
        Whether to fit an intercept. Without it the data are expected to be centered.
    intercept_scaling : float, default=1
        The value of the synthetic feature appended to every sample, whose weight is the
        intercept (LIBLINEAR's -B): the intercept is regularized as the other weights are, less
        so for a larger value. With solver='nesvm' and 'alm' the intercept is not penalized.
    class_weight : dict or 'balanced', default=None
        Set the parameter C of class i to class_weight[i] * C. None: every class has weight one.
        'balanced' uses the weights n_samples / (n_classes * np.bincount(y)).
    verbose : int, default=0
        Print the solver's progress to stdout when non-zero.
    random_state : int, RandomState instance or None, default=None
        Seed of the solvers' random choices (e.g. dcd's order of the coordinates). None means
        seed 0: a fit is deterministic.
    max_iter : int, default=1000
        The maximum number of iterations; for solver='nesvm' it counts gradient steps, for
        'alm' multiplier steps. A fit that uses them all warns (ConvergenceWarning).
    solver : {'auto', 'dcd', 'primal_newton', 'l1_cd', 'crammer_singer', 'nesvm', 'alm'}, default='auto'
        The fastsvm solver (``fastsvm.solvers.SOLVERS``). 'auto' picks the one of the problem
        that penalty, loss, dual and multi_class set; a named solver must solve that problem.
    warm_start : bool, default=False
        When True, a refit on the same rows (e.g. after ``set_params(C=...)``) starts from the
        previous fit's solution where the solver can (dcd), as scikit-learn's linear models do.
    p : float, default=None
        The power p >= 1 of the loss max(0, 1 - y f)^p, for solver='alm' only. None: 1 for
        loss='hinge', 2 for loss='squared_hinge'.
    solver_options : dict, default=None
        The solver's options, ``{name: value}``: what ``-o name=value`` sets on the command
        line, with the same names and checks (e.g. ``{"step": "exact"}`` for alm).
        ``fastsvm-train`` without arguments lists every solver's options. An option the other
        parameters also set must agree with them.
    n_jobs : int, default=None
        Threads of the threaded solvers and of one-vs-rest. None means all cores; the model does
        not depend on it.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) if n_classes == 2 else (n_classes, n_features)
        Weights of the features (one row per class with one-vs-rest or crammer_singer).
    intercept_ : ndarray of shape (1,) if n_classes == 2 else (n_classes,)
        Constants in the decision function; 0.0 with fit_intercept=False.
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen during fit; defined only when X has feature names that are
        all strings.
    n_iter_ : int
        The largest number of iterations run over the classes.
    model_ : fastsvm.Model
        The trained model in LIBSVM's format (its weight vectors held as support vectors):
        ``fastsvm.save_model(clf.model_, path)`` writes it.

    See Also
    --------
    SVC : Kernel classification.
    sklearn.svm.LinearSVC : scikit-learn's own, over LIBLINEAR.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from fastsvm import LinearSVC
    >>> X, y = make_classification(n_samples=100, n_features=4, random_state=0)
    >>> clf = LinearSVC(C=1.0).fit(X, y)
    >>> clf.coef_.shape, clf.intercept_.shape
    ((1, 4), (1,))
    >>> bool(clf.score(X, y) > 0.9)
    True

    The Lp-loss SVM of solver 'alm', with one of its options:

    >>> clf = LinearSVC(solver="alm", p=1.5, solver_options={"step": "exact"}).fit(X, y)
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    _parameter_constraints: dict = {
        "penalty": [StrOptions({"l1", "l2"})],
        "loss": [StrOptions({"hinge", "squared_hinge", "squared_error"})],
        "dual": ["boolean", StrOptions({"auto"})],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "multi_class": [StrOptions({"ovr", "crammer_singer"})],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [None, dict, StrOptions({"balanced"})],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"auto", *SOLVER_OF.values(), JOINT_SOLVER, SMOOTHING_SOLVER, MULTIPLIER_SOLVER})],
        "warm_start": ["boolean"],
        "p": [None, Interval(Real, 1.0, None, closed="left")],
        "solver_options": [None, dict],
        "n_jobs": [None, Integral],
    }

    def __init__(self, penalty="l2", loss="squared_hinge", *, dual="auto", tol=1e-4, C=1.0,
                 multi_class="ovr", fit_intercept=True, intercept_scaling=1, class_weight=None,
                 verbose=0, random_state=None, max_iter=1000, solver="auto", warm_start=False, p=None,
                 solver_options=None, n_jobs=None):
        self.penalty = penalty
        self.loss = loss
        self.dual = dual
        self.tol = tol
        self.C = C
        self.multi_class = multi_class
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.verbose = verbose
        self.random_state = random_state
        self.max_iter = max_iter
        self.solver = solver
        self.warm_start = warm_start
        self.p = p
        self.solver_options = solver_options
        self.n_jobs = n_jobs

    def fit(self, X, y, sample_weight=None):
        """Fit the model to the training data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training vectors.
        y : array-like of shape (n_samples,)
            Class labels, two classes or more.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights: they rescale C per sample.

        Returns
        -------
        self : object
            The fitted estimator.

        Examples
        --------
        >>> import numpy as np
        >>> from fastsvm import LinearSVC
        >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0], [3.0, 1.0]])
        >>> clf = LinearSVC(penalty="l1", dual=False).fit(X, [0, 0, 1, 1], sample_weight=[1, 1, 2, 2])
        >>> clf.predict([[0.0, 0.5], [3.0, 0.5]])
        array([0, 1])
        """
        self._validate_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
                             order="C")
        check_classification_targets(y)
        solver, options, bias = self._solver_options(X.shape)
        options = merged_options(self.solver_options, options)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError("This solver needs samples of at least 2 classes in the data, but "
                             f"the data contains only one class: {self.classes_[0]!r}")
        sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        params = Params(svm_type="c_svc", solver=solver, kernel_type="linear", C=float(self.C),
                        tol=float(self.tol), loss=self.loss, max_iter=int(self.max_iter), bias=bias,
                        options=options,
                        class_weight=class_weights_by_code(self.class_weight, self.classes_, codes),
                        seed=seed_from(self.random_state), n_jobs=self.n_jobs, verbose=bool(self.verbose))
        # binary: label 1 (the second class) must be the model's first label, LIBSVM's +1 side
        labels = np.where(codes == 1, 1, -1) if len(self.classes_) == 2 else codes
        if len(self.classes_) == 2 and params.class_weight:
            params.class_weight = {(1 if code == 1 else -1): w for code, w in params.class_weight.items()}
        with warnings.catch_warnings():
            # said once below, in scikit-learn's words and category
            warnings.filterwarnings("ignore", message="solver .* reached its iteration limit",
                                    category=RuntimeWarning)
            self.model_ = fit_model(X, labels, params, sample_weight=sample_weight, warm=warm_start_of(self))
        self._set_linear_attributes()
        self.n_iter_ = int(max(self.model_.info["n_iter"]))
        # scikit-learn's rule: a run that used every iteration it had is reported, even when its
        # last one met the tolerance; so is one that stopped short of it (a failed line search)
        if (any(status != "converged" for status in self.model_.info["status"])
                or self.n_iter_ >= self.max_iter):
            warnings.warn(NOT_CONVERGED, ConvergenceWarning, stacklevel=2)
        return self

    def _solver_options(self, shape):
        """(solver, its -o options, -B) for these arguments. nesvm and alm, when named, take penalty,
        loss (and alm's p) as they are and never penalize the intercept (bias 0: none); the other
        solvers are LIBLINEAR's, picked by (penalty, loss, dual), the intercept a penalized feature."""
        if self.p is not None and self.solver != MULTIPLIER_SOLVER:
            raise ValueError(f"p (the loss power) applies to solver='alm' only, not solver={self.solver!r}")
        if self.solver in (SMOOTHING_SOLVER, MULTIPLIER_SOLVER) and self.multi_class != "ovr":
            raise ValueError(f"solver={self.solver!r} trains one-vs-rest only, not multi_class={self.multi_class!r}")
        if self.solver == MULTIPLIER_SOLVER:
            if self.penalty != "l2" or (self.p is None and self.loss == "squared_error"):
                raise ValueError(f"Unsupported set of arguments: penalty={self.penalty!r} with loss={self.loss!r} "
                                 "is not supported by solver='alm' (penalty l2, loss hinge or squared_hinge, any p)")
            return MULTIPLIER_SOLVER, ({} if self.p is None else {"p": float(self.p)}), \
                float(self.intercept_scaling) if self.fit_intercept else 0.0
        if self.solver == SMOOTHING_SOLVER:
            if (self.penalty, self.loss) == ("l1", "squared_error"):
                raise ValueError("Unsupported set of arguments: penalty='l1' with loss='squared_error' "
                                 "is not supported by solver='nesvm'")
            return SMOOTHING_SOLVER, {"penalty": self.penalty}, \
                float(self.intercept_scaling) if self.fit_intercept else 0.0
        if self.loss == "squared_error":
            raise ValueError("loss='squared_error' (the LS-SVM) is solved by solver='nesvm' only")
        dual = self.dual
        if dual == "auto" and self.solver in SOLVER_OF.values():
            dual = self.solver == "dcd"  # a named solver settles the formulation
        dual = pick_dual(dual, self.penalty, self.loss, *shape)
        solver = pick_solver(self.multi_class, self.penalty, self.loss, dual)
        if self.solver not in ("auto", solver):
            raise ValueError(f"solver={self.solver!r} does not solve this problem (penalty="
                             f"{self.penalty!r}, loss={self.loss!r}, dual={dual!r}, multi_class="
                             f"{self.multi_class!r}); its solver is {solver!r}")
        return solver, {}, float(self.intercept_scaling) if self.fit_intercept else -1.0

    def _set_linear_attributes(self):
        """coef_/intercept_ from the model's weight vectors (decision = w.x - rho per class)."""
        model = self.model_
        W = model.support_vectors.toarray()
        n_features = self.n_features_in_
        W = np.pad(W, ((0, 0), (0, max(0, n_features - W.shape[1]))))[:, :n_features]
        if len(self.classes_) == 2:
            sign = 1.0 if model.labels[0] == 1 else -1.0
            self.coef_ = sign * W[:1]
            self.intercept_ = -sign * model.rho[:1]
        else:
            # one rho per class: one per one-vs-rest problem, or all of the joint problem's
            rho = np.concatenate([np.atleast_1d(r) for r in model.info["rho"]]).astype(np.float64)
            order = np.argsort(model.labels)  # model label c is the code of class c
            self.coef_ = W[order]
            self.intercept_ = -rho[order]
        self.coef_ = np.ascontiguousarray(self.coef_)
        # scikit-learn's LinearSVC holds a plain 0.0 when there is no intercept
        self.intercept_ = np.asarray(self.intercept_, dtype=np.float64) if self.fit_intercept else 0.0

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

