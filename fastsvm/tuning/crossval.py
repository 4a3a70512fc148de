"""n-fold cross-validation as svm-train -v does it: LIBSVM's stratified folds, drawn from LIBSVM's
stream (the C library's rand(), in svm-train's order) or from a seed, each fold trained in its own
thread."""
import dataclasses

import numpy as np

from .._core._crand import CRand
from ..csr import to_rows
from ..errors import ParameterError
from .metrics import squared_correlation
from ..parallel import effective_n_jobs, run_tasks
from ..models.prediction import predict, predict_many, predict_probability
from ..models.probability import probability_draws
from ..training.multiclass import group_classes
from ..training.trainer import fit_model, fit_nu_path, fit_path


def fold_permutation(y, svm_type, n_folds, rng):
    """LIBSVM's fold layout: (perm, fold_start); fold f holds rows perm[fold_start[f]:fold_start[f+1]].

    Classification folds are stratified: each class is shuffled and dealt to the folds in equal
    shares; otherwise the rows are shuffled and cut into equal pieces. ``rng.permutation(rows)``
    shuffles: a CRand draws LIBSVM's folds, a numpy Generator fastsvm's seeded ones.
    """
    n = len(y)
    if svm_type in ("c_svc", "nu_svc") and n_folds < n:
        classes = group_classes(y)
        counts = np.array([r.size for r in classes.rows])
        shuffled = [rng.permutation(r) for r in classes.rows]
        folds = [[] for _ in range(n_folds)]
        for rows, count in zip(shuffled, counts):
            for f in range(n_folds):
                folds[f].append(rows[f * count // n_folds:(f + 1) * count // n_folds])
        perm = np.concatenate([np.concatenate(parts) for parts in folds])
        sizes = [sum(p.size for p in parts) for parts in folds]
    else:
        perm = rng.permutation(n)
        sizes = [(f + 1) * n // n_folds - f * n // n_folds for f in range(n_folds)]
    fold_start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return perm, fold_start


def cross_validation(X, y, params, n_folds, sample_weight=None, *, nus=None, Cs=None):
    """Predicted label/value of every row by the model trained without its fold; with ``nus`` (an
    increasing grid), one row of them per nu, each fold trained along the grid (fit_nu_path); with
    ``Cs``, one row per C, each fold trained as a warm C path (fit_path: the solver's solve_path)."""
    n_jobs = effective_n_jobs(params.n_jobs)
    stop = np.zeros(1, dtype=np.int32)
    tasks, assemble = fold_tasks(X, y, params, n_folds, sample_weight, nus=nus, Cs=Cs, stop=stop,
                                 threads=max(1, n_jobs // max(1, min(int(n_folds), len(y)))))
    return assemble(run_tasks(tasks, n_jobs, stop))


def fold_tasks(X, y, params, n_folds, sample_weight=None, *, nus=None, Cs=None, stop=None, threads=1):
    """cross_validation's folds as independent tasks: (tasks, assemble), each task training one
    fold (with ``threads`` threads) and returning its rows' predictions, assemble(results) the
    predictions of every row. A caller runs them with others (fastsvm.tuning.grid: every fold of every
    gamma side by side); ``stop`` is the flag its run_tasks sets on Ctrl-C."""
    if nus is not None and Cs is not None:
        raise ParameterError("cross validation along a path: over nu or over C, not both")
    X = to_rows(X)
    y = np.asarray(y, dtype=np.float64)
    n_folds = min(int(n_folds), len(y))  # more folds than rows: leave-one-out, as LIBSVM
    stream = CRand() if params.libsvm_folds else None  # a fresh svm-train process's
    rng = stream if stream is not None else np.random.default_rng(params.seed)
    perm, fold_start = fold_permutation(y, params.svm_type, n_folds, rng)
    inner = dataclasses.replace(params, n_jobs=threads, verbose=False)
    stop = np.zeros(1, dtype=np.int32) if stop is None else stop
    weights = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, np.float64)
    path = nus if nus is not None else Cs

    def training_rows(f):
        # in perm's order, as LIBSVM hands them to training (SMO's path and the labels' order)
        return np.concatenate([perm[:fold_start[f]], perm[fold_start[f + 1]:]])

    # LIBSVM trains the folds one after another, each -b 1 fit drawing from the stream where the
    # previous fold's ended: each fold is handed a copy of the stream at its start
    fold_streams = [None] * n_folds
    if stream is not None and params.probability:
        for f in range(n_folds):
            train = training_rows(f)
            fold_streams[f] = stream.copy()
            stream.skip(probability_draws(params.svm_type, len(group_classes(y[train]).labels),
                                          np.count_nonzero(weights[train] > 0)))

    def fold(f):
        test, train = perm[fold_start[f]:fold_start[f + 1]], training_rows(f)
        if path is not None:
            fit = fit_nu_path if nus is not None else fit_path
            models = fit(X[train], y[train], path, inner, sample_weight=weights[train], stop=stop)
            return test, np.array(predict_many(models, X[test], n_jobs=inner.n_jobs))
        model = fit_model(X[train], y[train], inner, sample_weight=weights[train], stop=stop,
                          stream=fold_streams[f])
        if inner.probability and inner.svm_type in ("c_svc", "nu_svc"):
            # LIBSVM labels by the largest probability here, not by the votes
            return test, predict_probability(model, X[test], n_jobs=inner.n_jobs)[0]
        return test, predict(model, X[test], n_jobs=inner.n_jobs)

    def assemble(results):
        target = np.empty(len(y) if path is None else (len(path), len(y)))
        for test, predicted in results:
            target[..., test] = predicted
        return target

    return [(lambda f=f: fold(f)) for f in range(n_folds)], assemble


def report(y, target, svm_type):
    """svm-train -v's result lines."""
    y = np.asarray(y, dtype=np.float64)
    if svm_type in ("epsilon_svr", "nu_svr"):
        return [f"Cross Validation Mean squared error = {np.mean((target - y) ** 2):g}",
                f"Cross Validation Squared correlation coefficient = {squared_correlation(target, y):g}"]
    return [f"Cross Validation Accuracy = {100.0 * np.count_nonzero(target == y) / len(y):g}%"]
