"""LIBSVM's folds: the C library's rand() reproduced (CRand against glibc's own rand() through
ctypes), and fastsvm-train's -v and -b 1 results against svm-train's (Debian's libsvm-tools,
LIBSVM 3.24) on the same files, which holds only if every fold, every fold's row order and every
internal probability fold is LIBSVM's. fastsvm's own seeded folds stay reachable with -R."""
import ctypes
import ctypes.util
import platform
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import shared_file
from fastsvm import Params, fit_model
from fastsvm._core._crand import CRand
from fastsvm.cli.train import main as train_main
from fastsvm.cli.train import parse_args
from fastsvm.tuning.crossval import cross_validation, fold_permutation
from fastsvm.files.datafile import load_svmlight_file
from fastsvm.models.probability import probability_draws
from fastsvm.training.trainer import group_classes

SVM_TRAIN = shutil.which("svm-train")
needs_svm_train = pytest.mark.skipif(SVM_TRAIN is None, reason="LIBSVM's svm-train not installed")
needs_glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc",
                                 reason="CRand reproduces glibc's rand(); this C library's differs")


# ----------------------------------------------------------------------------------------------
# the generator against glibc's rand()
# ----------------------------------------------------------------------------------------------

def glibc_rand():
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.srand.argtypes = [ctypes.c_uint]
    return libc


def glibc_values(seed, count):
    libc = glibc_rand()
    libc.srand(seed)
    return np.array([libc.rand() for _ in range(count)], dtype=np.int64)


def libsvm_shuffle(rows, values):
    """LIBSVM's shuffle written out with given rand() values: swap i with i + rand() % (n - i)."""
    rows = np.array(rows, dtype=np.int64)
    n = rows.size
    for i in range(n):
        j = i + int(values[i]) % (n - i)
        rows[i], rows[j] = rows[j], rows[i]
    return rows


@needs_glibc
@pytest.mark.parametrize("seed", [1, 0, 2, 12345, 2**31 - 1, 2**31, 2**31 + 5, 2**32 - 1])
def test_crand_is_glibc_rand(seed):
    """Seeds above 2^31 go through glibc's signed seeding arithmetic; 0 acts as 1."""
    np.testing.assert_array_equal(CRand(seed).draw(5000), glibc_values(seed, 5000))


@needs_glibc
def test_crand_stream_is_unseeded_rand_by_default():
    """A process that never calls srand draws srand(1)'s stream: CRand() is that stream."""
    script = ("import ctypes, ctypes.util; c = ctypes.CDLL(ctypes.util.find_library('c')); "
              "print(' '.join(str(c.rand()) for _ in range(50)))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    np.testing.assert_array_equal(CRand().draw(50), np.array(out.stdout.split(), dtype=np.int64))


@needs_glibc
def test_permutation_skip_and_copy_follow_the_stream():
    stream, values = CRand(7), glibc_values(7, 3000)
    np.testing.assert_array_equal(stream.permutation(1000), libsvm_shuffle(np.arange(1000), values))
    rows = np.array([5, 9, 2, 40, 7, 11, 3])
    np.testing.assert_array_equal(stream.permutation(rows), libsvm_shuffle(rows, values[1000:]))
    twin = stream.copy()
    stream.skip(993)
    np.testing.assert_array_equal(stream.draw(1000), values[2000:])
    np.testing.assert_array_equal(twin.draw(10), values[1007:1017])  # unmoved by the original


def test_probability_draws_count_what_a_training_consumes(shared):
    """The stream a -b 1 training is handed ends where probability_draws says, where
    cross-validation starts the next fold's stream."""
    for name, svm_type, rows in [("iris.scale", "c_svc", slice(0, 100)),
                                 ("heart_scale", "c_svc", slice(0, 120)),
                                 ("housing_scale", "epsilon_svr", slice(0, 150))]:
        X, y = load_svmlight_file(shared(name))
        X, y = X[rows], y[rows]
        stream = CRand()
        fit_model(X, y, Params(svm_type=svm_type, probability=True, libsvm_folds=True, n_jobs=1),
                  stream=stream)
        expected = CRand()
        expected.skip(probability_draws(svm_type, len(group_classes(y).labels), len(y)))
        np.testing.assert_array_equal(stream.draw(20), expected.draw(20))


# ----------------------------------------------------------------------------------------------
# fastsvm-train against svm-train
# ----------------------------------------------------------------------------------------------

def svm_train(*args, cwd):
    done = subprocess.run([SVM_TRAIN, "-q", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300, check=True)
    return done.stdout


def fastsvm_train(capsys, *args):
    capsys.readouterr()
    train_main(["-q", *map(str, args)])
    return capsys.readouterr().out


CV_CASES = {
    "heart_scale": ("heart_scale", "-v 5"),
    "svmguide1_c2_g2": ("svmguide1", "-v 5 -c 2 -g 2"),
    "dna": ("dna.scale", "-v 5"),
    "housing_epsilon_svr": ("housing_scale", "-s 3 -v 5"),
    "iris_nu_svc": ("iris.scale", "-s 1 -n 0.3 -v 5"),
    "mg_nu_svr": ("mg", "-s 4 -v 5"),
    # glass has a class of 9 rows: some folds test none of it
    "glass_v10": ("glass.scale", "-v 10"),
    "iris_leave_one_out": ("iris.scale", "-v 200"),  # more folds than rows: unstratified
    "heart_v5_b1": ("heart_scale", "-v 5 -b 1"),
    "glass_v10_b1": ("glass.scale", "-v 10 -b 1"),  # multi-class Platt folds, fold by fold
    "housing_v5_b1": ("housing_scale", "-s 3 -v 5 -b 1"),
}


@needs_svm_train
@pytest.mark.parametrize("case", CV_CASES)
def test_cross_validation_lines_equal_svm_trains(case, capsys, tmp_path):
    name, options = CV_CASES[case]
    data = shared_file(name)
    expected = svm_train(*options.split(), data, cwd=tmp_path)
    assert expected.startswith("Cross Validation ")
    assert fastsvm_train(capsys, *options.split(), data) == expected


def probability_lines(path):
    return {line.split()[0]: np.array(line.split()[1:], dtype=float)
            for line in path.read_text().splitlines() if line.startswith(("probA", "probB"))}


PROBABILITY_CASES = {
    "heart_scale": ("heart_scale", ""),
    "iris": ("iris.scale", ""),
    "dna": ("dna.scale", "-c 4"),
    "housing_epsilon_svr": ("housing_scale", "-s 3 -c 10"),
}


@needs_svm_train
@pytest.mark.parametrize("case", PROBABILITY_CASES)
def test_probability_parameters_equal_svm_trains(case, capsys, tmp_path):
    """The pairs' Platt folds are drawn in pair order from one stream, so every probA/probB
    equals svm-train -b 1's to rounding (the folds' decision values may differ from LIBSVM's in
    their last bits, and so may the last digits written)."""
    name, options = PROBABILITY_CASES[case]
    data = shared_file(name)
    svm_train("-b", "1", *options.split(), data, tmp_path / "libsvm.model", cwd=tmp_path)
    fastsvm_train(capsys, "-b", "1", *options.split(), data, tmp_path / "fastsvm.models.model")
    expected = probability_lines(tmp_path / "libsvm.model")
    got = probability_lines(tmp_path / "fastsvm.models.model")
    assert expected.keys() == got.keys() and expected
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-12, atol=0)


# ----------------------------------------------------------------------------------------------
# -R: fastsvm's own seeded folds; threads do not change the draws
# ----------------------------------------------------------------------------------------------

def test_minus_r_seeds_the_folds_instead_of_libsvms_stream():
    params, *_ = parse_args(["heart_scale"])
    assert params.libsvm_folds and params.seed == 0
    params, *_ = parse_args(["-R", "3", "heart_scale"])
    assert not params.libsvm_folds and params.seed == 3


def test_seeded_folds_are_reproducible_and_not_libsvms(shared):
    X, y = load_svmlight_file(shared("heart_scale"))
    libsvm_perm, start = fold_permutation(y, "c_svc", 5, CRand())
    seeded_perm, seeded_start = fold_permutation(y, "c_svc", 5, np.random.default_rng(4))
    np.testing.assert_array_equal(start, seeded_start)  # the same stratified fold sizes
    assert not np.array_equal(libsvm_perm, seeded_perm)
    seeded = Params(seed=4, n_jobs=1)
    first = cross_validation(X, y, seeded, 5)
    np.testing.assert_array_equal(cross_validation(X, y, seeded, 5), first)
    assert not np.array_equal(cross_validation(X, y, Params(libsvm_folds=True, n_jobs=1), 5), first)


def test_threads_do_not_change_libsvms_draws(shared):
    X, y = load_svmlight_file(shared("glass.scale"))
    one = cross_validation(X, y, Params(probability=True, libsvm_folds=True, n_jobs=1), 5)
    three = cross_validation(X, y, Params(probability=True, libsvm_folds=True, n_jobs=3), 5)
    np.testing.assert_array_equal(one, three)
