"""The command-line programs end to end, through subprocesses, as a user runs them."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, SHIPPED_DATA, shared_file

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

@pytest.mark.parametrize("solver", ["ssnal", "dcd", "smo", "primal_newton", "l1_cd", "crammer_singer", "nystroem",
                                    "admm"])
def test_main_job_train_and_predict(tmp_path, solver):
    """The README's main job (with -s ssnal), and the same with every other solver at its defaults
    (its own loss: the squared hinge for primal_newton and l1_cd without -L)."""
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


# ---------------------------------------------------------------------------- polish

@pytest.mark.parametrize("program", ["fastsvm-train", "fastsvm-predict", "fastsvm-scale"])
def test_double_dash_help_prints_usage_and_exits_0(program):
    result = run(program, "--help")
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.startswith(f"Usage: {program} ")


def test_dash_h_stays_the_shrinking_flag(tmp_path):
    trained = run("fastsvm-train", "-q", "-h", "0", TRAIN_FILE, tmp_path / "m")
    assert trained.returncode == 0, trained.stderr
    assert (tmp_path / "m").read_text().startswith("svm_type c_svc\n")


def test_usage_lists_every_solvers_options():
    from fastsvm.solvers import SOLVERS
    usage = run("fastsvm-train", "--help").stdout
    for name, spec in SOLVERS.items():
        if not spec.options:
            assert f"\t{name}: none\n" in usage
        for option in spec.options:
            assert f"\t\t{option.name}=" in usage and option.usage() in usage, (name, option.name)


@pytest.mark.parametrize("args, pattern", [
    (["-s", "smo", "-o", "landmarks=3"], r"solver smo: unknown option 'landmarks' \(it takes none\)"),
    (["-s", "dcd", "-o", "rff=3"], r"solver dcd: unknown option 'rff'"),
    (["-s", "ssnal", "-o", "bogus=1"], r"solver ssnal: unknown option 'bogus' \(its options: sigma0, "),
    (["-s", "ssnal", "-o", "rff=64"], r"option 'rff' applies to the rbf, polynomial, sigmoid kernels only, "
                                      r"not linear"),
    (["-s", "ssnal", "-t", "2", "-o", "sigma0=1"], r"option 'sigma0' applies to the linear kernel only"),
    (["-s", "ssnal", "-o", "max_newton=many"], r"solver ssnal: option max_newton=many: expected an integer >= 1"),
    (["-s", "ssnal", "-o", "line_search=wolfe"], r"expected one of armijo, exact"),
    (["-s", "nystroem", "-o", "rtol=1"], r"solver nystroem: option rtol=1: expected a number >= 0 and < 1"),
    (["-s", "nystroem", "-o", "landmarks=0"], r"expected an integer >= 1"),
])
def test_solver_option_errors_name_the_solver_and_its_options(tmp_path, args, pattern):
    result = run("fastsvm-train", *args, TRAIN_FILE, tmp_path / "m")
    assert_clean_failure(result, "fastsvm-train", pattern, usage=True)
    assert not (tmp_path / "m").exists()


def test_solver_options_are_used(tmp_path):
    model = tmp_path / "m"
    trained = run("fastsvm-train", "-q", "-s", "nystroem", "-o", "landmarks=25", "-o", "max_newton=20",
                  TRAIN_FILE, model)
    assert trained.returncode == 0, trained.stderr
    total_sv = int(re.search(r"^total_sv (\d+)$", model.read_text(), re.M).group(1))
    assert 0 < total_sv <= 25


def test_ssnal_progress_line_says_what_a_user_can_act_on(tmp_path):
    result = run("fastsvm-train", "-s", "ssnal", "-e", "1e-4", TRAIN_FILE, tmp_path / "m")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    progress = [line for line in lines if line.startswith("ssnal: iteration ")]
    n_iter = int(re.search(r"optimization finished, #iter = (\d+)", result.stdout).group(1))
    assert len(progress) == n_iter >= 1                  # one line per outer iteration
    for k, line in enumerate(progress, start=1):
        assert line.startswith(f"ssnal: iteration {k}  KKT residual ")
        assert "(stops at 0.0001)" in line and "objective " in line and "duality gap " in line
        assert "Newton steps on" in line and "passes over the data" in line
        assert not any(jargon in line for jargon in ("|J|", " rp ", "held", "eta"))
    last_residual = float(re.search(r"KKT residual (?:about )?(\S+)", progress[-1]).group(1))
    assert last_residual <= 1e-4
    quiet = run("fastsvm-train", "-q", "-s", "ssnal", TRAIN_FILE, tmp_path / "m")
    assert quiet.returncode == 0 and quiet.stdout == ""


SUMMARY = [r"optimization finished, #iter = \d+", r"nu = [0-9.]+", r"obj = (-?[0-9.]+), rho = (-?[0-9.]+)",
           r"nSV = (\d+), nBSV = (\d+)", r"Total nSV = (\d+)"]


def summary(stdout):
    """LIBSVM's summary lines at the end of a binary training's output, parsed."""
    lines = stdout.splitlines()[-len(SUMMARY):]
    matches = [re.fullmatch(pattern, line) for pattern, line in zip(SUMMARY, lines)]
    assert all(matches), lines
    obj, rho = float(matches[2].group(1)), float(matches[2].group(2))
    n_sv, n_bsv = int(matches[3].group(1)), int(matches[3].group(2))
    return obj, rho, n_sv, n_bsv, int(matches[4].group(1))


@pytest.fixture(scope="module")
def smo_linear_objective(tmp_path_factory):
    """obj of LIBSVM's SMO on the linear-kernel C-SVC of TRAIN_FILE."""
    trained = run("fastsvm-train", "-s", "smo", "-t", "0", "-e", "1e-5", TRAIN_FILE,
                  tmp_path_factory.mktemp("smo") / "m")
    return summary(trained.stdout)[0]


@pytest.mark.parametrize("solver", ["smo", "ssnal", "nystroem", "dcd"])
def test_every_solver_prints_libsvms_summary_with_its_meaning(tmp_path, solver, smo_linear_objective):
    """The same lines for every solver: obj is the dual objective (LIBSVM's sign: <= 0), which at
    the optimum is minus the primal; nBSV <= nSV; Total nSV counts the model's support vectors."""
    model = tmp_path / "m"
    result = run("fastsvm-train", "-s", solver, "-t", "0", "-e", "1e-5", TRAIN_FILE, model)
    assert result.returncode == 0, result.stderr
    obj, rho, n_sv, n_bsv, total_sv = summary(result.stdout)
    assert obj < 0 and 0 <= n_bsv <= n_sv
    reference_obj = smo_linear_objective
    if solver == "dcd":
        # no bias by default (LIBLINEAR's problem): rho 0, and its dual optimum is minus its primal one
        primal = float(re.search(r"primal objective (\S+),", result.stdout).group(1))
        assert rho == 0.0 and obj == pytest.approx(-primal, rel=1e-4)
        assert obj <= reference_obj + 1e-6 * abs(reference_obj)  # a bias can only lower the optimum
        assert total_sv == n_sv
    else:
        assert obj == pytest.approx(reference_obj, rel=1e-4)
        written = int(re.search(r"^total_sv (\d+)$", model.read_text(), re.M).group(1))
        assert total_sv == written and (solver == "nystroem" or n_sv == total_sv)


def test_zero_feature_index_names_the_file_line_not_a_python_argument(tmp_path):
    data = tmp_path / "zero.libsvm"
    data.write_text("+1 1:0.5 2:1\n-1 0:0.25 2:3\n")
    for result, prog in ((run("fastsvm-train", "-q", data, tmp_path / "m"), "fastsvm-train"),
                         (run("fastsvm-scale", data), "fastsvm-scale")):
        assert_clean_failure(result, prog, r"zero\.libsvm:2: feature index 0 in '0:0\.25': feature indices "
                                           r"start at 1", usage=False)
        assert "zero_based" not in result.stderr


def test_data_file_given_as_model_file(model_file, tmp_path):
    result = run("fastsvm-predict", model_file, TEST_FILE, tmp_path / "out")   # test and model swapped
    assert_clean_failure(result, "fastsvm-predict", r"breast_cancer_scale\.t:1: this is not a LIBSVM model "
                                                    r"file: the line starts with '[-+]?1'", usage=False)


def test_readme_commands_leave_nothing_untracked(tmp_path):
    """The README's main job, run in a copy of the checkout's layout, writes only files that
    the checkout's .gitignore covers."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout")
    readme = (REPO / "README.md").read_text()
    command = next(line.strip() for line in readme.splitlines() if line.strip().startswith("fastsvm-train -s ssnal"))
    (tmp_path / "data").symlink_to(SHIPPED_DATA)
    for step in command.split("&&"):
        program, *args = step.split()
        assert run(program, *args, cwd=tmp_path).returncode == 0, step
    written = sorted(p.name for p in tmp_path.iterdir() if p.name != "data")
    assert written
    ignored = subprocess.run(["git", "-C", str(REPO), "check-ignore", "--no-index", *written],
                             capture_output=True, text=True).stdout.split()
    assert ignored == written


# ---------------------------------------------------------------------------- one line each

def test_warnings_are_one_line_each(tmp_path):
    result = run("fastsvm-train", "-q", "-M", "1", TRAIN_FILE, tmp_path / "m")
    assert result.returncode == 0
    lines = result.stderr.splitlines()
    assert lines and all(line.startswith("fastsvm-train: warning: ") for line in lines), result.stderr
    assert any("iteration limit" in line for line in lines)
    assert ".py:" not in result.stderr


@pytest.mark.parametrize("label, shown", [("3e9", "3000000000"), ("1e23", r"1e\+23"),
                                          ("-2147483649", "-2147483649")])
def test_label_outside_libsvms_int_fails_at_read_time_with_file_and_line(tmp_path, label, shown):
    data = tmp_path / "d"
    data.write_text("# a comment line\n1 1:1\n\n-1 1:2\n" + label + " 1:3\n")
    result = run("fastsvm-train", data, tmp_path / "m")
    assert_clean_failure(result, "fastsvm-train", rf"d:5: label {shown} is outside LIBSVM's int range",
                         usage=False)
    assert "iter" not in result.stdout          # failed before any training
    assert not (tmp_path / "m").exists()


def test_fractional_labels_truncated_as_libsvm_with_one_warning(tmp_path):
    data = tmp_path / "d"
    data.write_text("1 1:1\n#\n-1.5 1:-2\n2.7 1:3\n-1 1:-1\n")
    result = run("fastsvm-train", "-q", data, tmp_path / "m")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert re.match(r"fastsvm-train: warning: .*d:3: class label -1.5 is not an integer; it is "
                    r"truncated to -1 .*\(and 1 more\)", lines[0]), lines[0]
    labels = next(line for line in (tmp_path / "m").read_text().splitlines() if line.startswith("label"))
    assert sorted(map(int, labels.split()[1:])) == [-1, 1, 2]


def test_fractional_targets_are_fine_for_regression(tmp_path):
    data = tmp_path / "d"
    data.write_text("1.5 1:1\n-1.25 1:-2\n2.7 1:3\n")
    result = run("fastsvm-train", "-q", "-s", "3", data, tmp_path / "m")
    assert result.returncode == 0 and result.stderr == "", result.stderr


def test_no_training_data_names_the_file(tmp_path):
    data = tmp_path / "empty.txt"
    data.write_text("# only a comment\n\n")
    assert_clean_failure(run("fastsvm-train", data, tmp_path / "m"), "fastsvm-train",
                         r"empty\.txt: no training data", usage=False)


def test_numeric_breakdown_is_one_line_with_a_hint(tmp_path):
    # heart_scale x 1e8, classes in blocks: SSsNAL's line search overflows
    from fastsvm.files.datafile import dump_svmlight_file, load_svmlight_file
    X, y = load_svmlight_file(shared_file("heart_scale"))
    order = np.argsort(y, kind="stable")
    data = tmp_path / "huge"
    dump_svmlight_file(X[order] * 1e8, (y[order] > 0).astype(int), data, zero_based=False)
    result = run("fastsvm-train", "-q", "-s", "ssnal", data, tmp_path / "m")
    assert_clean_failure(result, "fastsvm-train", r"did not converge.*non-finite.*fastsvm-scale",
                         usage=False)
    assert not (tmp_path / "m").exists()
