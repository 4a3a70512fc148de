"""The command-line programs end to end, through subprocesses, as a user runs them."""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import SHIPPED_DATA, shared_file

BIN = Path(sys.executable).parent
TRAIN_FILE = SHIPPED_DATA / "breast_cancer_scale"
TEST_FILE = SHIPPED_DATA / "breast_cancer_scale.t"


def run(program, *args, cwd=None):
    return subprocess.run([str(BIN / program), *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def assert_clean_failure(result, prog, pattern, usage):
    """Non-zero exit; the first stderr line names the program and the problem; no traceback;
    the usage text follows only for usage errors."""
    assert result.returncode != 0
    lines = result.stderr.splitlines()
    assert lines, "no error message"
    assert lines[0].startswith(prog + ": "), lines[0]
    assert re.search(pattern, lines[0]), lines[0]
    assert "Traceback" not in result.stderr
    if usage:
        assert any(line.startswith("Usage:") for line in lines[1:])
    else:
        assert len(lines) == 1, result.stderr


# ---------------------------------------------------------------------------- train + predict

@pytest.mark.parametrize("solver", ["ssnal", "dcd", "smo"])
def test_main_job_train_and_predict(tmp_path, solver):
    """The README's main job (with -s ssnal), and the same with the other solvers."""
    model = tmp_path / "bc.model"
    out = tmp_path / "bc.out"
    trained = run("fastsvm-train", "-s", solver, TRAIN_FILE, model)
    assert trained.returncode == 0, trained.stderr
    assert "optimization finished" in trained.stdout
    predicted = run("fastsvm-predict", TEST_FILE, model, out)
    assert predicted.returncode == 0, predicted.stderr
    m = re.fullmatch(r"Accuracy = ([0-9.]+)% \((\d+)/(\d+)\) \(classification\)\n", predicted.stdout)
    assert m, predicted.stdout
    correct, total = int(m.group(2)), int(m.group(3))
    assert total == 171 and correct / total > 0.9
    assert float(m.group(1)) == pytest.approx(100 * correct / total, rel=1e-5)
    labels = np.loadtxt(out)
    assert labels.shape == (171,) and set(np.unique(labels)) <= {-1.0, 1.0}


def test_model_file_is_read_by_libsvm(tmp_path):
    svmutil = pytest.importorskip("libsvm.svmutil")
    model = tmp_path / "bc.model"
    out = tmp_path / "bc.out"
    assert run("fastsvm-train", "-q", "-s", "dcd", "-B", "1", TRAIN_FILE, model).returncode == 0
    assert run("fastsvm-predict", "-q", TEST_FILE, model, out).returncode == 0
    y, x = svmutil.svm_read_problem(str(TEST_FILE))
    libsvm_labels, _, _ = svmutil.svm_predict(y, x, svmutil.svm_load_model(str(model)), "-q")
    np.testing.assert_array_equal(np.loadtxt(out), libsvm_labels)


def test_default_model_file_name_and_quiet(tmp_path):
    trained = run("fastsvm-train", "-q", "-s", "dcd", TRAIN_FILE, cwd=tmp_path)
    assert trained.returncode == 0 and trained.stdout == "" and trained.stderr == ""
    assert (tmp_path / "breast_cancer_scale.model").read_text().startswith("svm_type c_svc\n")


def test_cross_validation_prints_libsvm_line():
    result = run("fastsvm-train", "-s", "dcd", "-v", "5", "-q", TRAIN_FILE)
    assert result.returncode == 0, result.stderr
    m = re.fullmatch(r"Cross Validation Accuracy = ([0-9.]+)%\n", result.stdout)
    assert m and float(m.group(1)) > 90


def test_a9a_dcd_model_predicted_identically_by_libsvm(tmp_path):
    svmutil = pytest.importorskip("libsvm.svmutil")
    train, test = shared_file("a9a"), shared_file("a9a.t")
    model, out = tmp_path / "a9a.model", tmp_path / "a9a.out"
    assert run("fastsvm-train", "-q", "-s", "dcd", train, model).returncode == 0
    predicted = run("fastsvm-predict", test, model, out)
    assert predicted.returncode == 0
    accuracy = float(re.match(r"Accuracy = ([0-9.]+)%", predicted.stdout).group(1))
    assert 84.0 < accuracy < 86.0
    y, x = svmutil.svm_read_problem(str(test))
    libsvm_labels, _, _ = svmutil.svm_predict(y, x, svmutil.svm_load_model(str(model)), "-q")
    np.testing.assert_array_equal(np.loadtxt(out), libsvm_labels)


# ---------------------------------------------------------------------------- misuse

@pytest.fixture
def bad_data(tmp_path):
    path = tmp_path / "bad.libsvm"
    path.write_text("+1 1:0.5 2:1\n-1 1:abc\n")
    return path


@pytest.mark.parametrize("args, pattern", [
    ([], r"no training file"),
    (["-z", "1", TRAIN_FILE], r"unknown option: -z"),
    (["-c", "abc", TRAIN_FILE], r"invalid value for -c: 'abc'"),
    (["-t", "7", TRAIN_FILE], r"invalid value for -t"),
    (["-s", "9", TRAIN_FILE], r"invalid value for -s"),
    (["-s", "nosuchsolver", TRAIN_FILE], r"invalid value for -s: 'nosuchsolver'"),
    (["-v", "1", TRAIN_FILE], r"n must >= 2"),
    (["-h", "2", TRAIN_FILE], r"invalid value for -h"),
    (["-wx", "3", TRAIN_FILE], r"invalid value for -wx"),
    (["-c", "-1", TRAIN_FILE], r"C <= 0"),
    (["-n", "1.5", "-s", "1", TRAIN_FILE], r"nu <= 0 or nu > 1"),
    (["-c"], r"option -c needs a value"),
    (["-s", "dcd", TRAIN_FILE, "m", "extra"], r"unexpected argument: extra"),
])
def test_train_usage_errors(args, pattern):
    assert_clean_failure(run("fastsvm-train", *args), "fastsvm-train", pattern, usage=True)


def test_train_missing_file(tmp_path):
    result = run("fastsvm-train", "-s", "dcd", tmp_path / "nope.libsvm", tmp_path / "m")
    assert_clean_failure(result, "fastsvm-train", r"nope\.libsvm", usage=False)


def test_train_malformed_file_names_file_and_line(bad_data, tmp_path):
    result = run("fastsvm-train", "-s", "dcd", bad_data, tmp_path / "m")
    assert_clean_failure(result, "fastsvm-train", r"bad\.libsvm:2: ", usage=False)
    assert not (tmp_path / "m").exists()


def test_train_solver_cannot_do_formulation(tmp_path):
    result = run("fastsvm-train", "-s", "dcd", "-s", "3", TRAIN_FILE, tmp_path / "m")
    assert_clean_failure(result, "fastsvm-train", r"solver dcd does not solve epsilon_svr", usage=False)


def test_train_solver_cannot_do_kernel(tmp_path):
    result = run("fastsvm-train", "-s", "dcd", "-t", "2", TRAIN_FILE, tmp_path / "m")
    assert_clean_failure(result, "fastsvm-train", r"does not support the rbf kernel", usage=False)


def test_train_unwritable_model_path(tmp_path):
    result = run("fastsvm-train", "-q", "-s", "dcd", TRAIN_FILE, tmp_path / "no" / "dir" / "m")
    assert_clean_failure(result, "fastsvm-train", r"no.dir", usage=False)


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "bc.model"
    assert run("fastsvm-train", "-q", "-s", "dcd", TRAIN_FILE, path).returncode == 0
    return path


def test_predict_usage_errors(model_file, tmp_path):
    out = tmp_path / "out"
    assert_clean_failure(run("fastsvm-predict"), "fastsvm-predict", r"expected test_file", usage=True)
    assert_clean_failure(run("fastsvm-predict", TEST_FILE, model_file), "fastsvm-predict",
                         r"expected test_file", usage=True)
    assert_clean_failure(run("fastsvm-predict", "-b", "2", TEST_FILE, model_file, out),
                         "fastsvm-predict", r"invalid value for -b", usage=True)
    assert_clean_failure(run("fastsvm-predict", "-x", TEST_FILE, model_file, out),
                         "fastsvm-predict", r"unknown option: -x", usage=True)


def test_predict_bad_files(model_file, bad_data, tmp_path):
    out = tmp_path / "out"
    assert_clean_failure(run("fastsvm-predict", TEST_FILE, tmp_path / "missing.model", out),
                         "fastsvm-predict", r"missing\.model", usage=False)
    broken = tmp_path / "broken.model"
    broken.write_text(model_file.read_text().replace("nr_class 2", "nr_class two"))
    assert_clean_failure(run("fastsvm-predict", TEST_FILE, broken, out),
                         "fastsvm-predict", r"broken\.model:\d+: ", usage=False)
    assert_clean_failure(run("fastsvm-predict", bad_data, model_file, out),
                         "fastsvm-predict", r"bad\.libsvm:2: ", usage=False)
    assert_clean_failure(run("fastsvm-predict", "-b", "1", TEST_FILE, model_file, out),
                         "fastsvm-predict", r"does not support probability", usage=False)


# ---------------------------------------------------------------------------- scale

def test_scale_matches_svm_scale_rules(tmp_path):
    data = tmp_path / "d"
    data.write_text("1 1:2 3:10\n-1 1:4 2:5\n1 1:3 2:5 3:0\n")
    result = run("fastsvm-scale", data)
    assert result.returncode == 0, result.stderr
    # feature 1 spans [2, 4]; 2 spans [0, 5] (missing = 0); 3 spans [0, 10]; 0 maps to -1
    assert result.stdout.splitlines() == [
        "1 1:-1 2:-1 3:1 ",
        "-1 1:1 2:1 3:-1 ",
        "1 2:1 3:-1 ",
    ]
    lower0 = run("fastsvm-scale", "-l", "0", "-y", "0", "1", data)
    assert lower0.stdout.splitlines() == ["1 3:1 ", "0 1:1 2:1 ", "1 1:0.5 2:1 "]


def test_scale_save_then_restore_gives_same_output(tmp_path):
    data = tmp_path / "d"
    data.write_text("3 1:2 3:10\n-1 1:4 2:5 4:7\n1 1:3 2:5 3:0\n")
    params = tmp_path / "range"
    first = run("fastsvm-scale", "-l", "0", "-u", "2", "-y", "-1", "1", "-s", params, data)
    assert first.returncode == 0, first.stderr
    assert params.read_text().splitlines()[:3] == ["y", "-1 1", "-1 3"]
    again = run("fastsvm-scale", "-r", params, data)
    assert again.returncode == 0 and again.stdout == first.stdout


def test_scale_misuse(tmp_path, bad_data):
    data = tmp_path / "d"
    data.write_text("1 1:2\n")
    assert_clean_failure(run("fastsvm-scale", "-l", "1", "-u", "0", data), "fastsvm-scale",
                         r"inconsistent lower/upper", usage=True)
    assert_clean_failure(run("fastsvm-scale", "-s", "a", "-r", "b", data), "fastsvm-scale",
                         r"cannot use -r and -s", usage=True)
    assert_clean_failure(run("fastsvm-scale", "-q", data), "fastsvm-scale", r"unknown option", usage=True)
    assert_clean_failure(run("fastsvm-scale", tmp_path / "none"), "fastsvm-scale", r"none", usage=False)
    assert_clean_failure(run("fastsvm-scale", bad_data), "fastsvm-scale", r"bad\.libsvm:2: ", usage=False)
    broken = tmp_path / "range"
    broken.write_text("x\n-1 1\n1 0 abc\n")
    assert_clean_failure(run("fastsvm-scale", "-r", broken, data), "fastsvm-scale", r"range:3: ",
                         usage=False)
