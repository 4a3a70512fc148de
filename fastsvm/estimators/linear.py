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
    """Linear support vector classification (LIBLINEAR's linear SVMs).

    Same parameters and attributes as ``sklearn.svm.LinearSVC``: penalty l2 with the hinge loss
    (dual, solver ``dcd``) or the squared hinge (dual ``dcd`` or primal ``primal_newton``), penalty
    l1 with the squared hinge (primal, ``l1_cd``), one-vs-rest, or ``multi_class="crammer_singer"``
    (``crammer_singer``, all classes jointly). The intercept is LIBLINEAR's regularized bias feature
    of value ``intercept_scaling``. ``solver="nesvm"`` (Nesterov smoothing, one-vs-rest) solves
    either penalty with the hinge or squared hinge, and penalty l2 with ``loss="squared_error"``
    (the LS-SVM), with an unpenalized intercept as LIBSVM's; ``tol`` is then its relative duality
    gap and ``max_iter`` counts gradient steps. ``solver="alm"`` (augmented Lagrange multipliers,
    one-vs-rest) solves penalty l2 with the loss max(0, 1 - y f)^p for any ``p`` >= 1 (None: 1 for
    the hinge, 2 for the squared hinge), the intercept unpenalized; ``tol`` is its relative
    duality gap and ``max_iter`` counts multiplier steps. ``solver="auto"`` picks the solver of
    the problem those arguments set; a named solver settles ``dual="auto"`` and must solve that
    problem. The trained LIBSVM-format model is ``model_`` (``fastsvm.save_model(clf.model_,
    path)`` writes it).
    ``solver_options``: the solver's options as a dict (what ``-o name=value`` sets; ``fastsvm-train``
    lists them), e.g. ``{"step": "exact"}`` for ``alm``; ``n_jobs``: threads of the threaded solvers
    and of one-vs-rest (None: all cores; the model's bits do not depend on it).
    ``warm_start=True``: a refit (e.g. after set_params(C=...)) starts from the previous fit's
    solution where the solver can (dcd), as scikit-learn's linear models do.
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

