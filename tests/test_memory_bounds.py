"""Memory follows the data, not its largest feature index: a file or model holding one value at
index 2**31 - 2 trains, predicts and scales in a few tens of MB, the
renumbering to occurring columns gives the model the plain path gives, and what still cannot
fit is one line naming the option that changes it."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import scipy.sparse as sp

from fastsvm.models.columns import columns_to_keep, compressed, first_columns, scattered
from fastsvm.files.datafile import load_svmlight_file
from fastsvm.files.modelfile import save_model
from fastsvm.params import Params
from fastsvm.models.prediction import decision_values
from fastsvm.files.scaling import fit_scaling
from fastsvm.training.trainer import fit_model

BIN = Path(sys.executable).parent
SHIPPED = Path(__file__).resolve().parents[1] / "data" / "breast_cancer_scale"
HUGE = 2147483646                       # the largest index a LIBSVM int holds, less one
PEAK_MB = 100                           # each program's peak memory bound
ADDRESS_LIMIT = 3 << 30                 # a 16 GiB request fails at once under this limit

# every solver that trains a two-class problem, with the options it needs
SOLVERS = {
    "smo": [],
    "dcd": ["-s", "dcd"],
    "ssnal": ["-s", "ssnal"],
    "ssnal-rbf": ["-s", "ssnal", "-t", "2"],
    "nystroem": ["-s", "nystroem"],
    "primal_newton": ["-s", "primal_newton"],
    "l1_cd": ["-s", "l1_cd"],
    "crammer_singer": ["-s", "crammer_singer"],
    "admm": ["-s", "admm"],
}


# Runs a command under an address-space limit and writes its peak RSS (KB): the command is
# forked from this small process, as a child forked from pytest itself would count pytest's
# own pages in its peak
LAUNCHER = """
import os, resource, subprocess, sys
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
child = subprocess.Popen(sys.argv[3:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[2], "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


def run_measured(command, tmp_path):
    """(exit code, stdout, stderr, peak RSS in MB) of one command run under ADDRESS_LIMIT."""
    peak = tmp_path / "peak_kb"
    done = subprocess.run([sys.executable, "-c", LAUNCHER, str(ADDRESS_LIMIT), str(peak),
                           *map(str, command)], capture_output=True, text=True,
                          env={**os.environ, "OMP_NUM_THREADS": "2"})
    return done.returncode, done.stdout, done.stderr, int(peak.read_text()) / 1024


def fastsvm(program, *args):
    return [BIN / f"fastsvm-{program}", *args]


@pytest.fixture
def huge_file(tmp_path):
    path = tmp_path / "huge_index"
    path.write_text(f"1 {HUGE}:1\n-1 1:1\n")
    return path


def assert_bounded(result, what):
    code, _, err, peak = result
    assert code == 0, f"{what}: {err}"
    assert peak <= PEAK_MB, f"{what}: peak {peak:.0f} MB"


def predicts_as_libsvm(data, model, tmp_path, what):
    """fastsvm-predict within the bound, its output file that of svm-predict (when installed)."""
    output, theirs = tmp_path / "predicted", tmp_path / "libsvm_predicted"
    result = run_measured(fastsvm("predict", data, model, output), tmp_path)
    assert_bounded(result, what)
    assert result[1].startswith("Accuracy = ")
    if shutil.which("svm-predict") is None:
        pytest.skip("LIBSVM's svm-predict is not installed")
    subprocess.run(["svm-predict", data, model, theirs], check=True, capture_output=True)
    assert output.read_text() == theirs.read_text()


@pytest.mark.parametrize("solver", SOLVERS)
def test_huge_index_trains_and_predicts_in_bounded_memory(solver, huge_file, tmp_path):
    model = tmp_path / "model"
    assert_bounded(run_measured(fastsvm("train", "-q", *SOLVERS[solver], huge_file, model), tmp_path),
                   f"fastsvm-train {solver}")
    assert f"{HUGE}:" in model.read_text()  # the support vector or weight keeps its index
    predicts_as_libsvm(huge_file, model, tmp_path, f"fastsvm-predict {solver}")


def test_huge_support_vector_index_predicts_in_bounded_memory(huge_file, tmp_path):
    """A 115-byte model whose second support vector sits at index 2**31 - 1."""
    model = tmp_path / "model"
    model.write_text("svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 2\nrho 0\n"
                     "label 1 -1\nnr_sv 1 1\nSV\n1 1:1\n-1 2147483647:1\n")
    predicts_as_libsvm(huge_file, model, tmp_path, "fastsvm-predict")


def test_huge_index_scales_in_bounded_memory(huge_file, tmp_path):
    params = tmp_path / "params"
    result = run_measured(fastsvm("scale", "-s", params, huge_file), tmp_path)
    assert_bounded(result, "fastsvm-scale")
    # svm-scale's rules: a feature missing from a row is 0 there, so both vary over [0, 1],
    # and 0 is written as the lower limit -1
    assert result[1].splitlines() == [f"1 1:-1 {HUGE}:1 ", f"-1 1:1 {HUGE}:-1 "]
    assert params.read_text().splitlines()[2:] == ["1 0 1", f"{HUGE} 0 1"]
    restored = run_measured(fastsvm("scale", "-r", params, huge_file), tmp_path)
    assert_bounded(restored, "fastsvm-scale -r")
    assert restored[1] == result[1]


def test_scale_matches_svm_scale_on_a_wide_sparse_file(tmp_path):
    """Index 10**7 (which svm-scale holds in two 80 MB arrays), with -l 0 and y scaling."""
    if shutil.which("svm-scale") is None:
        pytest.skip("LIBSVM's svm-scale is not installed")
    path = tmp_path / "wide"
    path.write_text("3 2:0.5 10000000:-2\n1 2:1.5 7:4\n-2 7:1 10000000:3\n")
    args = ["-l", "0", "-y", "-1", "1", path]
    result = run_measured(fastsvm("scale", *args), tmp_path)
    assert_bounded(result, "fastsvm-scale")
    theirs = subprocess.run(["svm-scale", *map(str, args)], check=True, capture_output=True, text=True)
    assert result[1] == theirs.stdout


def test_over_limit_kernel_cache_is_one_line(tmp_path):
    """30,000 rows whose whole kernel matrix (3.4 GB) fits the -m 4000 budget but not the
    process's address space: one line naming -m, before any work."""
    path = tmp_path / "rows"
    rng = np.random.default_rng(0)
    path.write_text("".join(f"{1 if v > 0 else -1} 1:{v:.3f}\n" for v in rng.standard_normal(30000)))
    code, out, err, _ = run_measured(fastsvm("train", "-m", "4000", path, tmp_path / "model"), tmp_path)
    assert code == 1 and out == ""
    assert len(err.splitlines()) == 1 and "-m" in err and "kernel cache" in err


def random_wide(seed=0, width=10**6):
    rng = np.random.default_rng(seed)
    X = sp.random(40, width, density=3e-5, format="csr", random_state=rng)
    X.data = np.round(rng.standard_normal(X.nnz), 2)
    X.sum_duplicates()
    return X


def test_compressed_then_scattered_is_the_matrix():
    X = random_wide()
    columns = columns_to_keep(X)
    assert np.array_equal(columns, np.unique(X.indices))
    narrow = compressed(X, columns)
    assert narrow.shape == (X.shape[0], columns.size) and narrow.has_sorted_indices
    assert np.array_equal(narrow.toarray(), X[:, columns].toarray())
    assert (scattered(narrow, columns, X.shape[1]) != X).nnz == 0
    assert (scattered(narrow.toarray(), columns, X.shape[1]) != X).nnz == 0


def test_first_columns_is_a_column_slice():
    X = random_wide(1)
    for width in (0, 1, 5000, 654321, X.shape[1], 2 * X.shape[1]):
        assert (first_columns(X, width) != X[:, :width]).nnz == 0


def test_feature_ranges_match_a_column_by_column_reference():
    """fit_scaling over the stored values grouped by column = min/max of every dense column that
    holds a value (a missing entry counting as 0)."""
    X = random_wide(2, width=3000)
    scaling = fit_scaling(X, np.zeros(X.shape[0]))
    dense = X.toarray()
    held = np.flatnonzero(np.diff(X.tocsc().indptr))
    assert np.array_equal(scaling.index, held + 1)
    assert np.array_equal(scaling.feature_min, dense[:, held].min(axis=0))
    assert np.array_equal(scaling.feature_max, dense[:, held].max(axis=0))


def spread(X, factor=1000):
    """X with feature index i moved to i * factor (zero-based column c to (c + 1) * factor - 1)."""
    X = X.tocsr(copy=True)
    X.indices = ((X.indices.astype(np.int64) + 1) * factor - 1).astype(np.int32)
    X.resize((X.shape[0], X.shape[1] * factor))
    return X


def model_text(model, path):
    save_model(model, path)
    return path.read_text()


@pytest.mark.parametrize("solver", sorted({args[1] if args else "smo" for args in SOLVERS.values()}))
def test_renumbered_columns_give_the_plain_model(solver, tmp_path):
    """Trained on the same data with its indices multiplied by 1000 (renumbered to the 10
    occurring columns), the model file is the plain one with its indices multiplied by 1000,
    and its decision values on the spread data have the plain model's bits."""
    X, y = load_svmlight_file(SHIPPED, zero_based=False)
    wide = spread(X)
    assert columns_to_keep(X) is None and columns_to_keep(wide).size == X.shape[1]  # the two paths
    params = Params(solver=solver, gamma=0.1, n_jobs=1, verbose=False)
    plain, renumbered = fit_model(X, y, params), fit_model(wide, y, params)
    expected = re.sub(r"(\d+):", lambda m: f"{int(m.group(1)) * 1000}:",
                      model_text(plain, tmp_path / "plain").split("SV\n", 1)[1])
    header, body = model_text(renumbered, tmp_path / "renumbered").split("SV\n", 1)
    assert header == model_text(plain, tmp_path / "plain").split("SV\n", 1)[0]
    assert body == expected
    assert np.array_equal(decision_values(renumbered, wide, n_jobs=1), decision_values(plain, X, n_jobs=1))


@pytest.mark.slow
def test_renumbered_columns_give_the_plain_model_on_a9a(shared, tmp_path):
    X, y = load_svmlight_file(shared("a9a"), zero_based=False)
    params = Params(solver="dcd", n_jobs=1, verbose=False)
    plain, renumbered = fit_model(X, y, params), fit_model(spread(X), y, params)
    expected = re.sub(r"(\d+):", lambda m: f"{int(m.group(1)) * 1000}:", model_text(plain, tmp_path / "a"))
    assert model_text(renumbered, tmp_path / "b") == expected
