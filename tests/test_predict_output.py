"""fastsvm-predict writes what LIBSVM's svm-predict writes, byte for byte: the output file (%.17g
predictions; -b 1's %d label header and %g rows) and the printed lines (Accuracy, Mean squared
error, Squared correlation coefficient, the probability notices).

The oracle is Debian's svm-predict (LIBSVM 3.24; the tests skip without it), run on the same model
file as fastsvm-predict: models trained by LIBSVM's svm-train and by fastsvm-train. LIBSVM 3.24
and 3.37 write the same formats except for one-class -b 1, which 3.24 refuses and 3.37 writes as
"label normal outlier" rows; that case is checked against libsvm-official (3.37)'s own values.
"""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SHIPPED_DATA, shared_file

BIN = Path(sys.executable).parent
SVM_TRAIN = shutil.which("svm-train")
SVM_PREDICT = shutil.which("svm-predict")
needs_libsvm_tools = pytest.mark.skipif(SVM_TRAIN is None or SVM_PREDICT is None,
                                        reason="LIBSVM's svm-train / svm-predict not installed")

BIG_LABELS = {"+1": "1234567", "-1": "1000003"}  # %g would write 1.23457e+06 and 1e+06


def run(program, *args):
    path = program if Path(program).is_absolute() else str(BIN / program)
    result = subprocess.run([path, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, (program, args, result.stderr)
    return result


def big_label_data(tmp_path):
    """The shipped breast cancer set with its labels +1/-1 renamed to integers >= 10^6."""
    path = tmp_path / "big_labels"
    lines = (SHIPPED_DATA / "breast_cancer_scale").read_text().splitlines()
    path.write_text("".join(BIG_LABELS[line.split(" ", 1)[0]] + " " + line.split(" ", 1)[1] + "\n"
                            for line in lines))
    return path


# (data set, svm-train options): C-SVC (RBF, linear and polynomial kernels), multi-class,
# epsilon-SVR, nu-SVR, and -b 1 models of each kind (binary, multi-class, regression)
CASES = {
    "c_svc": ("heart_scale", ()),
    "multiclass": ("iris.scale", ()),
    "linear_kernel": ("heart_scale", ("-t", "0")),
    "polynomial_kernel": ("iris.scale", ("-t", "1", "-g", "0.5", "-r", "1")),
    "epsilon_svr": ("housing_scale", ("-s", "3")),
    "nu_svr": ("housing_scale", ("-s", "4", "-c", "10")),
    "c_svc_probability": ("heart_scale", ("-b", "1")),
    "multiclass_probability": ("iris.scale", ("-b", "1")),
    "epsilon_svr_probability": ("housing_scale", ("-s", "3", "-b", "1")),
    "big_labels": (None, ()),
}


@needs_libsvm_tools
@pytest.mark.parametrize("trainer", ["svm-train", "fastsvm-train"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_output_file_and_lines_identical_to_svm_predict(tmp_path, case, trainer):
    name, options = CASES[case]
    data = big_label_data(tmp_path) if name is None else shared_file(name)
    model = tmp_path / "model"
    run(SVM_TRAIN if trainer == "svm-train" else "fastsvm-train", "-q", *options, data, model)
    for probability in (("0", "1") if "-b" in options else ("0",)):
        ours = run("fastsvm-predict", "-b", probability, data, model, tmp_path / "ours")
        theirs = run(SVM_PREDICT, "-b", probability, data, model, tmp_path / "theirs")
        assert (tmp_path / "ours").read_bytes() == (tmp_path / "theirs").read_bytes(), (case, probability)
        assert ours.stdout == theirs.stdout, (case, probability)


def test_label_of_a_million_is_written_whole(tmp_path):
    """An integer label >= 10^6 comes out as written in the data, not as %g's 1.23457e+06."""
    data = big_label_data(tmp_path)
    model, out = tmp_path / "model", tmp_path / "out"
    run("fastsvm-train", "-q", data, model)
    run("fastsvm-predict", "-q", data, model, out)
    written = out.read_text().splitlines()
    assert len(written) == len(data.read_text().splitlines())
    assert set(written) == set(BIG_LABELS.values())


def test_one_class_probability_rows_as_libsvm_337_writes_them(tmp_path):
    """One-class -b 1 (LIBSVM >= 3.30): a 'label normal outlier' header, then each row's label
    and P(normal), P(outlier) with %g, the values libsvm-official's own svm_predict gives."""
    svmutil = pytest.importorskip("libsvm.svmutil")
    data = shared_file("heart_scale")
    y, x = svmutil.svm_read_problem(str(data))
    model = tmp_path / "model"
    svmutil.svm_save_model(str(model), svmutil.svm_train(y, x, "-s 2 -n 0.3 -b 1 -q"))
    labels, _, probabilities = svmutil.svm_predict(y, x, svmutil.svm_load_model(str(model)), "-b 1 -q")
    run("fastsvm-predict", "-b", "1", data, model, tmp_path / "ours")
    expected = ["label normal outlier"] + ["%g %g %g" % (label, *p) for label, p in zip(labels, probabilities)]
    assert (tmp_path / "ours").read_text().splitlines() == expected
