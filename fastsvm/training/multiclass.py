"""Classes into subproblems and solutions into a LIBSVM Model.

Classes are grouped as LIBSVM does (first occurrence; a -1/+1 problem is turned so that +1 comes
first) and split one-vs-one (LIBSVM-type solvers), one-vs-rest (LIBLINEAR-type solvers) or into
one joint problem (Crammer-Singer); each split names its subproblems' data and assembles their
solutions in LIBSVM's model layout. fastsvm.training.trainer runs the subproblems.

A split has ``names`` (one per subproblem; none when there is nothing to solve), ``formulation``,
``data(p)`` = (X, target, upper, rows) of subproblem p, ``sizes`` (rows per subproblem) and
``support_only(p, solution)`` (what a task keeps of a solution) or None, and
``layout(solutions, log)``; a one-vs-one split also has ``fold_data(p)`` for probability fits.
"""
import warnings
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from ..csr import RowSelection, to_csr
from ..models.model import Model


@dataclass
class Classes:
    """LIBSVM's svm_group_classes: labels in order, and the training rows of each, in order."""

    labels: np.ndarray  # int64, nr_class
    rows: list  # rows[c]: indices of class c in the training data, ascending


def group_classes(y):
    """Integer labels (LIBSVM casts with (int)) ordered by first occurrence; -1/+1 swapped."""
    y_int = np.trunc(np.asarray(y, dtype=np.float64)).astype(np.int64)
    labels, first = np.unique(y_int, return_index=True)
    labels = labels[np.argsort(first, kind="stable")]
    if len(labels) == 2 and labels[0] == -1 and labels[1] == 1:
        labels = labels[::-1]
    rows = [np.flatnonzero(y_int == label) for label in labels]
    return Classes(labels=labels.copy(), rows=rows)


def class_box(labels, params):
    """LIBSVM's weighted_C: C times the -wi weight of each class (nu-SVC's box is 1 and LIBSVM
    ignores class weights there)."""
    if params.svm_type == "nu_svc":
        return np.ones(len(labels))
    box = np.full(len(labels), float(params.C))
    for label, factor in params.class_weight.items():
        hit = np.flatnonzero(labels == int(label))
        if hit.size == 0:
            warnings.warn(f"class label {label} specified in weight is not found", stacklevel=4)
        box[hit] = box[hit] * float(factor) if factor != 0 else 0.0  # also for C = inf
    return box


@dataclass
class Layout:
    """A model's parts in LIBSVM's layout (svm_model's SV, sv_coef, rho, label, nSV, sv_indices)."""

    support_vectors: object            # a RowSelection of the training rows, or CSR / dense rows
    sv_coef: object                    # (nr_class - 1) x n_SV
    rho: list
    labels: np.ndarray | None = None   # classification only
    n_sv: np.ndarray | None = None     # per class; classification only
    sv_rows: np.ndarray | None = None  # 1-based training rows of the SVs; None for weight rows


def assembled_model(layout, solutions, svm_type, kernel, solver):
    """The Model of a layout, with the kernel and, in its info, the solutions' records."""
    support_vectors, sv_indices = layout.support_vectors, layout.sv_rows
    if kernel.kind == "precomputed":
        # LIBSVM writes each SV as 0:serial, the serial number held in the data's column 0
        sv_indices = np.rint(support_vectors[:, 0].toarray().ravel()).astype(np.int64)
        support_vectors = sp.csr_matrix((support_vectors.shape[0], 0))
    info = {
        "solver": solver,
        "n_iter": [s.n_iter for s in solutions],
        "objective": [s.objective for s in solutions],
        "rho": [s.rho for s in solutions],
        "stop_measure": [s.stop_measure for s in solutions],
        "status": [s.status for s in solutions],
        "history": [s.history for s in solutions],
        "details": [s.details for s in solutions],
        "support_rows": None if layout.sv_rows is None else np.asarray(layout.sv_rows) - 1,
        "primal_weights": [s.w for s in solutions] if all(s.w is not None for s in solutions) else None,
    }
    return Model(
        svm_type=svm_type,
        kernel_type=kernel.kind,
        support_vectors=(support_vectors if isinstance(support_vectors, RowSelection)
                         else to_csr(support_vectors)),
        sv_coef=np.asarray(layout.sv_coef, dtype=np.float64),
        rho=np.asarray(layout.rho, dtype=np.float64),
        degree=kernel.degree,
        gamma=kernel.gamma,
        coef0=kernel.coef0,
        labels=layout.labels,
        n_sv=layout.n_sv,
        sv_indices=sv_indices,
        info=info,
    )


def weight_rows(ws):
    """Weight vectors as CSR rows (the 'support vectors' of a primal linear model)."""
    if not ws:
        return sp.csr_matrix((0, 0))
    return sp.csr_matrix(np.vstack([np.asarray(w, dtype=np.float64) for w in ws]))


def weight_layout(labels, ws, rhos):
    """A linear model of one weight row per class (one row for two classes), LIBLINEAR-style:
    the rows are +-1 'support vectors' deciding each pair (i, j) by s_i - s_j."""
    k = len(labels)
    if k == 1:
        return Layout(weight_rows([]), np.zeros((0, 0)), [], labels, np.zeros(1, dtype=np.int64))
    if k == 2:
        return Layout(weight_rows(ws[:1]), [[1.0]], rhos[:1], labels, np.array([1, 0]))
    # pair (i, j) must decide s_i - s_j: weight i gets +1 where it is the first class, -1 second
    sv_coef = np.zeros((k - 1, k))
    for i in range(k):
        for j in range(i + 1, k):
            sv_coef[j - 1, i] = 1.0
            sv_coef[i, j] = -1.0
    rho = [rhos[i] - rhos[j] for i in range(k) for j in range(i + 1, k)]
    return Layout(weight_rows(ws), sv_coef, rho, labels, np.ones(k, dtype=np.int64))


class OneVsOne:
    """LIBSVM's split: a problem per pair of classes i < j, its rows class i's (+1) then class j's
    (-1) rows of positive weight, read in place from X (a solver that needs them copied copies
    them in its task only, as LIBSVM holds no more than the running pair's)."""

    def __init__(self, X, classes, box, weights, params):
        self.X, self.classes, self.box, self.weights = X, classes, box, weights
        self.formulation = params.svm_type
        k = len(classes.labels)
        self.pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
        self.kept = [rows[weights[rows] > 0] for rows in classes.rows]
        self.names = [f"{classes.labels[i]} vs {classes.labels[j]}" for i, j in self.pairs]
        self.sizes = [self.kept[i].size + self.kept[j].size for i, j in self.pairs]

    def rows(self, p):
        i, j = self.pairs[p]
        return np.concatenate([self.kept[i], self.kept[j]])

    def data(self, p):
        """(X, target, upper, rows) of pair p."""
        i, j = self.pairs[p]
        rows = self.rows(p)
        target = np.concatenate([np.ones(self.kept[i].size), -np.ones(self.kept[j].size)])
        upper = np.where(target > 0, self.box[i], self.box[j]) * self.weights[rows]
        return self.X, target, upper, rows

    def fold_data(self, p):
        """(sample weights, (C+, C-)) of pair p, for its probability folds."""
        i, j = self.pairs[p]
        return self.weights[self.rows(p)], (self.box[i], self.box[j])

    def support_only(self, p, solution):
        """What a pair's task keeps of its solution: the data rows of its nonzero coefficients
        (class i's first), their values, and how many are class i's."""
        i, _ = self.pairs[p]
        coef = np.asarray(solution.coef, dtype=np.float64)
        nz = np.flatnonzero(coef)
        rows = self.rows(p)[nz].astype(np.int32)
        return replace(solution, coef=(rows, coef[nz], int(np.searchsorted(nz, self.kept[i].size))))

    def layout(self, solutions, log=None):
        """The pairs' kept solutions in LIBSVM's layout; "Total nSV" goes to ``log``."""
        X, classes = self.X, self.classes
        # support vectors: rows with a nonzero coefficient in any pair, grouped by class
        is_sv = np.zeros(X.shape[0], dtype=bool)
        for s in solutions:
            is_sv[s.coef[0]] = True
        sv_rows = [r[is_sv[r]] for r in classes.rows]
        del is_sv
        order = np.concatenate(sv_rows)
        position = np.full(X.shape[0], -1, dtype=np.int64)
        position[order] = np.arange(order.size)
        sv_coef = np.zeros((len(classes.labels) - 1, order.size))
        start = np.concatenate([[0], np.cumsum([r.size for r in sv_rows])])
        for (i, j), s in zip(self.pairs, solutions):
            # LIBSVM's layout: pair (i, j) keeps class i's coefficients in row j-1, class j's in row i;
            # class j's side has y = -1, so its zeros are y * 0 = -0.0, which svm-train writes "-0"
            sv_coef[i, start[j]:start[j + 1]] = -0.0
            rows, values, n_i = s.coef
            sv_coef[j - 1, position[rows[:n_i]]] = values[:n_i]
            sv_coef[i, position[rows[n_i:]]] = values[n_i:]
        del position
        if log is not None:
            log(f"Total nSV = {order.size}")
        n_sv = np.array([r.size for r in sv_rows], dtype=np.int64)
        return Layout(RowSelection(X, order), sv_coef, [s.rho for s in solutions], classes.labels, n_sv,
                      order + 1)


class OneVsRest:
    """LIBLINEAR's split: k = 2 is one problem for the first label; otherwise class c (box C_c)
    against the rest (box C); the weights are held LIBSVM-style as +-1 'support vectors', or a
    kernel solver's expansions as kernel_ovr_layout lays them out. Every problem has the same
    rows (``shares_rows``): what a solver prepares from the rows alone serves them all."""

    formulation = "c_svc"
    sizes = None
    support_only = None
    shares_rows = True

    def __init__(self, X, classes, box, weights, params):
        k = len(classes.labels)
        self.labels, self.box, self.base = classes.labels, box, X
        self.keep_rows = np.flatnonzero(weights > 0)
        codes = np.empty(X.shape[0], dtype=np.int64)
        for c, rows in enumerate(classes.rows):
            codes[rows] = c
        self.codes = codes[self.keep_rows]
        self.X = X if self.keep_rows.size == X.shape[0] else X[self.keep_rows]
        self.weights = weights[self.keep_rows]
        self.positives = [] if k == 1 else [0] if k == 2 else list(range(k))
        self.rest = box[1] if k == 2 else float(params.C)
        self.names = [f"{classes.labels[c]} vs rest" for c in self.positives]

    def data(self, p):
        """(X, target, upper, rows) of class positives[p] against the rest."""
        c = self.positives[p]
        target = np.where(self.codes == c, 1.0, -1.0)
        upper = np.where(target > 0, self.box[c], self.rest) * self.weights
        return self.X, target, upper, None

    def layout(self, solutions, log=None):
        """The weight rows; LIBSVM's last line, the rows that are support vectors of any of the
        problems, goes to ``log``."""
        if log is not None and solutions:
            is_sv = np.zeros(self.X.shape[0], dtype=bool)
            for s in solutions:
                is_sv |= np.asarray(s.coef) != 0
            log(f"Total nSV = {int(np.count_nonzero(is_sv))}")
        if solutions and solutions[0].w is None:
            return kernel_ovr_layout(self.base, self.keep_rows, self.codes, self.labels, solutions)
        return weight_layout(self.labels, [s.w for s in solutions], [s.rho for s in solutions])


def kernel_ovr_layout(X, rows, codes, labels, solutions):
    """Kernel expansions f_c = sum_s coef_c[s] k(x_s, .) - rho_c over X's ``rows`` (one solution
    for two classes, class ``codes[s]`` of each row, else one per class) in LIBSVM's one-vs-one
    layout, so that LIBSVM's votes pick argmax_c f_c: pair (i, j) must decide f_i - f_j, which
    needs every support vector, and reads only classes i's and j's. So each class holds a copy
    of all U support vectors (rows with a coefficient in any problem): class i's copy carries
    coef_i - coef_j for its pairs (i, j), j > i, and zeros for its pairs (h, i), h < i; rho of
    (i, j) is rho_i - rho_j. The model holds k |U| vectors (two classes: U, grouped by class)."""
    k = len(labels)
    coefs = np.vstack([np.asarray(s.coef, dtype=np.float64) for s in solutions])
    support = np.flatnonzero(np.any(coefs != 0, axis=0))
    if k == 2:
        order = np.concatenate([support[codes[support] == 0], support[codes[support] == 1]])
        n_sv = np.array([np.count_nonzero(codes[support] == c) for c in range(2)], dtype=np.int64)
        return Layout(RowSelection(X, rows[order]), coefs[:, order], [solutions[0].rho], labels, n_sv,
                      rows[order] + 1)
    u = support.size
    sv_coef = np.zeros((k - 1, k * u))
    for i in range(k):
        for j in range(i + 1, k):
            sv_coef[j - 1, i * u:(i + 1) * u] = coefs[i, support] - coefs[j, support]
    rho = [solutions[i].rho - solutions[j].rho for i in range(k) for j in range(i + 1, k)]
    held = np.tile(rows[support], k)
    return Layout(RowSelection(X, held), sv_coef, rho, labels, np.full(k, u, dtype=np.int64), held + 1)


class Joint:
    """One problem over all classes (a solver with multiclass "joint"): y holds each row's class
    position, the solution's w is one weight row per class and its rho one value per class."""

    formulation = "c_svc"
    sizes = None
    support_only = None

    def __init__(self, X, classes, box, weights, params):
        self.X, self.labels = X, classes.labels
        self.names = ["all classes"] if len(classes.labels) > 1 else []
        # rows of weight 0 stay (their bound C_i = 0 keeps them out of w): every class then has a
        # row, and the solver sees all k classes
        self.codes = np.empty(X.shape[0])
        for c, rows in enumerate(classes.rows):
            self.codes[rows] = c
        self.upper = box[self.codes.astype(np.int64)] * weights

    def data(self, p):
        """(X, target, upper, rows) of the one problem."""
        return self.X, self.codes, self.upper, None

    def layout(self, solutions, log=None):
        """The one solution's weight rows (none for a single class)."""
        if not solutions:
            return weight_layout(self.labels, [], [])
        W, rho = np.atleast_2d(solutions[0].w), np.atleast_1d(solutions[0].rho)
        if len(self.labels) == 2:  # one decision, first class against second
            return weight_layout(self.labels, [W[0] - W[1]], [rho[0] - rho[1]])
        return weight_layout(self.labels, list(W), list(rho))


SPLITS = {"ovo": OneVsOne, "ovr": OneVsRest, "joint": Joint}
