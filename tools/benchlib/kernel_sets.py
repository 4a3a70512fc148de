"""The named RBF benchmark sets (bench_smo, bench_ssnal_kernel, bench_ssnal_grid): their files,
task, test split and the warm-up rows trained before the clock starts."""
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from benchlib.data import split_rows

QUICK_TRAIN = 2000
QUICK_TEST = 2000
# the warm-up problem: a quarter of each class (of the rows, for regression), at most these many
# rows, so that both sides run their parallel loops before the clock starts (fastsvm's need
# columns of ~1000+ kernel values, LIBSVM's run at any size) without pre-touching the memory
# of the whole problem
WARM_UP_ROWS = 1200      # regression
WARM_UP_PER_CLASS = 600  # classification
SPLIT_SEED = 0


@dataclass(frozen=True)
class Dataset:
    train: str
    test: str | None      # None: seeded 80/20 split of the training file
    task: str             # "binary", "multiclass" or "regression"
    slow: bool = False    # timed --repeat-slow times


DATASETS = {
    "a9a": Dataset("a9a", "a9a.t", "binary", slow=True),
    "w8a": Dataset("w8a", "w8a.t", "binary", slow=True),
    "ijcnn1": Dataset("ijcnn1.xz", "ijcnn1.t.xz", "binary", slow=True),
    "mushrooms": Dataset("mushrooms", None, "binary"),
    "phishing": Dataset("phishing", None, "binary"),
    "svmguide1": Dataset("svmguide1", "svmguide1.t", "binary"),     # unscaled features
    "letter.scale": Dataset("letter.scale", None, "multiclass"),
    "pendigits": Dataset("pendigits", "pendigits.t", "multiclass"),
    "satimage.scale": Dataset("satimage.scale", None, "multiclass"),
    "abalone_scale": Dataset("abalone_scale", None, "regression"),
    "mg": Dataset("mg", None, "regression"),
}
BINARY = tuple(name for name, spec in DATASETS.items() if spec.task == "binary")


def _read(path, n_features=None):
    from fastsvm.files.datafile import load_svmlight_file
    X, y = load_svmlight_file(str(path), zero_based=False, n_features=n_features)
    return X, np.asarray(y, dtype=np.float64)


def _subset(n, size, rng):
    return np.sort(rng.choice(n, size, replace=False)) if size < n else np.arange(n)


def load(data_dir, name, quick):
    """(X, y, Xt, yt, how the test set was made, gamma): gamma = 1/n_features of the training
    file, LIBSVM's default, kept for the quick subsets."""
    spec = DATASETS[name]
    X, y = _read(Path(data_dir) / spec.train)
    gamma = 1.0 / X.shape[1]
    if spec.test is not None:
        Xt, yt = _read(Path(data_dir) / spec.test)
        n = max(X.shape[1], Xt.shape[1])   # a test file may use fewer (or more) feature columns
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n))
        Xt = sp.csr_matrix((Xt.data, Xt.indices, Xt.indptr), shape=(Xt.shape[0], n))
        how = f"test file {spec.test}"
    else:
        train, test = split_rows(X.shape[0], seed=SPLIT_SEED)
        X, y, Xt, yt = X[train], y[train], X[test], y[test]
        how = f"80/20 split (seed {SPLIT_SEED})"
    if quick:
        rng = np.random.default_rng(SPLIT_SEED + 1)
        train, test = _subset(X.shape[0], QUICK_TRAIN, rng), _subset(Xt.shape[0], QUICK_TEST, rng)
        X, y, Xt, yt = X[train], y[train], Xt[test], yt[test]
        how += ", quick subsets"
    return X, y, Xt, yt, how, gamma


def save(path, X, y, Xt, yt):
    """The training and test parts to an .npz for the child processes (load_saved)."""
    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=np.array(X.shape), y=y,
             t_data=Xt.data, t_indices=Xt.indices, t_indptr=Xt.indptr, t_shape=np.array(Xt.shape), yt=yt)


def load_saved(path):
    """(X, y, Xt, yt) of save's file, as scipy CSR matrices."""
    npz = np.load(path)
    X = sp.csr_matrix((npz["data"], npz["indices"], npz["indptr"]), shape=tuple(npz["shape"]))
    Xt = sp.csr_matrix((npz["t_data"], npz["t_indices"], npz["t_indptr"]), shape=tuple(npz["t_shape"]))
    return X, npz["y"], Xt, npz["yt"]


def warm_up_rows(y, task):
    """The rows of the warm-up training: the first quarter of every class (of the data for
    regression), capped."""
    if task == "regression":
        return np.arange(max(1, min(WARM_UP_ROWS, y.shape[0] // 4)))
    classes = [np.flatnonzero(y == label) for label in np.unique(y)]
    return np.sort(np.concatenate([rows[:max(1, min(WARM_UP_PER_CLASS, rows.size // 4))] for rows in classes]))
