"""Benchmark data: LIBSVM files by name, their test split, synthetic sets, saved problems."""
import lzma
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from fastsvm.csr import to_csr

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = REPO.parent / "shared" / "data"     # the default --data-dir of every script


def read_svmlight(path, n_features=None):
    """(CSR X, float labels) of a one-based LIBSVM file, plain or .xz."""
    from fastsvm.files.datafile import load_svmlight_file
    path = str(path)
    with (lzma.open(path) if path.endswith(".xz") else open(path, "rb")) as f:
        X, y = load_svmlight_file(f, zero_based=False, n_features=n_features)
    return to_csr(X), np.asarray(y, dtype=float)


def widen(X, n_features):
    """X with n_features columns (a test file may use fewer feature columns than its training file)."""
    return to_csr(sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features)))


def split_rows(n_rows, *, seed=0, test_fraction=0.2, sort=True):
    """(training rows, test rows) of a seeded split, each in row order unless sort is False."""
    perm = np.random.default_rng(seed).permutation(n_rows)
    n_test = int(round(test_fraction * n_rows))
    test, train = perm[:n_test], perm[n_test:]
    return (np.sort(train), np.sort(test)) if sort else (train, test)


def split(X, y, *, seed=0, test_fraction=0.2, sort=True):
    """(X, y, X_test, y_test) of a seeded split (split_rows)."""
    train, test = split_rows(X.shape[0], seed=seed, test_fraction=test_fraction, sort=sort)
    return X[train], y[train], X[test], y[test]


def find(data_dir, name):
    """The path of NAME or NAME.xz in data_dir, or None."""
    for candidate in (name, name + ".xz"):
        if (Path(data_dir) / candidate).is_file():
            return Path(data_dir) / candidate
    return None


def load_dataset(name, data_dir, *, concatenated=(), sort_split=True, split_label="80/20 split"):
    """(label, X, y, X_test, y_test, how the test set was made) of a named set in data_dir.

    NAME.t (or NAME.t.xz) is the test split when present, else a seeded 80/20 split (sort_split:
    its rows in file order) described by split_label. A name in ``concatenated`` is trained on its
    training and test rows together and tested on those same rows."""
    path = find(data_dir, name)
    if path is None:
        raise SystemExit(f"{Path(sys.argv[0]).stem}: {name} not found in {data_dir}")
    X, y = read_svmlight(path)
    test_path = find(data_dir, name + ".t")
    if test_path is None:
        return (name, *split(X, y, sort=sort_split), split_label)
    Xt, yt = read_svmlight(test_path)
    n = max(X.shape[1], Xt.shape[1])
    X, Xt = widen(X, n), widen(Xt, n)
    if name in concatenated:
        X, y = to_csr(sp.vstack([X, Xt], format="csr")), np.concatenate([y, yt])
        return f"{name} (train+test)", X, y, X, y, "training rows"
    return name, X, y, Xt, yt, "test file"


def load_file(path, test_path=None, *, sort_split=True, split_label="80/20 split"):
    """load_dataset's record of a LIBSVM file given by path (and its test file, if any)."""
    X, y = read_svmlight(path)
    if test_path:
        Xt, yt = read_svmlight(test_path)
        n = max(X.shape[1], Xt.shape[1])
        return Path(path).name, widen(X, n), y, widen(Xt, n), yt, "test file"
    return (Path(path).name, *split(X, y, sort=sort_split), split_label)


def load_synthetic(kind, rows, seed=0):
    """load_dataset's record of a synthetic set ("text", "covtype"; benchlib.synthetic) made in
    memory: ROWS training rows and a test part of ROWS / 5 from the same hidden model."""
    from benchlib import synthetic
    blocks_of = {"text": synthetic.text_like_blocks, "covtype": synthetic.covtype_like_blocks}[kind]
    parts = []
    for part, n in (("train", rows), ("test", max(rows // 5, 1))):
        blocks = list(blocks_of(n, seed=seed, part=part))
        parts.append(to_csr(sp.vstack([b[0] for b in blocks], format="csr")))
        parts.append(np.concatenate([b[1] for b in blocks]).astype(float))
    return (f"synthetic {kind} {rows}", *parts, "generated test part")


def as_pm(labels):
    """+1 for the class of the first row (LIBSVM's and liblinear's first label), -1 otherwise."""
    return np.where(labels == labels[0], 1.0, -1.0)


def save_problem(path, X, y, **arrays):
    """X (CSR) and y to an .npz for a child process, with any further arrays by name."""
    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=np.array(X.shape), y=y, **arrays)


def load_problem(path, label_key="y"):
    """(scipy CSR X, the labels under label_key) of save_problem's file."""
    data = np.load(path)
    X = sp.csr_matrix((data["data"], data["indices"], data["indptr"]), shape=tuple(data["shape"]))
    return X, data[label_key]


def benchmark_sets(data_dir, names, synthetic_rows, synthetic_kinds):
    """[(label, X, labels, X_test, test labels)] of the linear benchmarks' sets (bench_nesvm,
    bench_alm): the named sets (their test file, else a seeded unsorted 80/20 split; ijcnn1: train
    and test together, split 80/20 again) and, with synthetic_rows, the synthetic kinds."""
    sets = []
    for name in filter(None, names.split(",")):
        if name == "ijcnn1":
            _, X, y, Xt, yt, _ = load_dataset("ijcnn1", data_dir, sort_split=False)
            X, y = to_csr(sp.vstack([X, Xt], format="csr")), np.concatenate([y, yt])
            perm = np.random.default_rng(0).permutation(X.shape[0])
            cut = X.shape[0] // 5
            sets.append(("ijcnn1 (train+test)", X[perm[cut:]], y[perm[cut:]], X[perm[:cut]], y[perm[:cut]]))
        else:
            label, X, y, Xt, yt, _ = load_dataset(name, data_dir, sort_split=False)
            sets.append((label, X, y, Xt, yt))
    for kind in filter(None, synthetic_kinds.split(",")) if synthetic_rows else []:
        label, X, y, Xt, yt, _ = load_synthetic(kind, synthetic_rows)
        sets.append((label, X, y, Xt, yt))
    return sets
