"""The thread count changes the speed, never the bits: every solver writes the same model file
for -j 1, 2 and 3. The reductions of the threaded kernels (X^T u, the SSsNAL Hessian, CG's
dot products, the knapsack passes) sum fixed blocks in a fixed order; this holds them to it on
data large enough for the threaded paths (a9a: 32,561 rows, w8a: 49,749 rows, beyond the
knapsack's 32,768 and the row blocks' 2 x 2,048)."""
import pytest

import fastsvm
from conftest import shared_file

THREADS = (1, 2, 3)

# (dataset, Params fields): the SSsNAL cases differed at 1e-12 between -j 1 and -j 2 before
CASES = {
    "ssnal-a9a": ("a9a", dict(solver="ssnal")),
    "ssnal-w8a": ("w8a", dict(solver="ssnal")),
    "ssnal-svr-abalone": ("abalone_scale", dict(solver="ssnal", svm_type="epsilon_svr")),
    "ssnal-rbf-a1a": ("a1a", dict(solver="ssnal", kernel_type="rbf")),
    "dcd-a9a": ("a9a", dict(solver="dcd")),
    "l1_cd-a9a": ("a9a", dict(solver="l1_cd")),
    "primal_newton-a9a": ("a9a", dict(solver="primal_newton")),
    "crammer_singer-dna": ("dna.scale", dict(solver="crammer_singer")),
    "smo-a1a": ("a1a", dict(solver="smo")),
    "smo-probability-a1a": ("a1a", dict(solver="smo", probability=True)),
}
SLOW_CASES = {
    "nystroem-a9a": ("a9a", dict(solver="nystroem")),
    "smo-letter": ("letter.scale", dict(solver="smo")),
}


def model_bytes(X, y, fields, n_jobs, path):
    model = fastsvm.fit_model(X, y, fastsvm.Params(n_jobs=n_jobs, **fields))
    fastsvm.save_model(model, path)
    return path.read_bytes()


def check_same_bits(dataset, fields, tmp_path):
    X, y = fastsvm.load_svmlight_file(shared_file(dataset))
    files = {j: model_bytes(X, y, fields, j, tmp_path / f"model.{j}") for j in THREADS}
    assert files[1], "empty model file"
    for j in THREADS[1:]:
        assert files[j] == files[1], f"-j {j} wrote another model than -j 1"


@pytest.mark.parametrize("case", sorted(CASES))
def test_model_file_does_not_depend_on_thread_count(case, tmp_path):
    check_same_bits(*CASES[case], tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(SLOW_CASES))
def test_model_file_does_not_depend_on_thread_count_slow(case, tmp_path):
    check_same_bits(*SLOW_CASES[case], tmp_path)
