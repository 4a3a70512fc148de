"""Model files: byte-for-byte LIBSVM compatibility both ways, LIBLINEAR files, strict errors,
atomic writes."""
import os
import re

import numpy as np
import pytest
import scipy.sparse as sp

from fastsvm.csr import to_csr
from fastsvm.errors import FileFormatError
from fastsvm.models.model import Model
from fastsvm.files import atomic, modelfile
from fastsvm.files.modelfile import load_model, save_model
from fastsvm.models.prediction import decision_values, predict
# the LIBSVM oracle and its trained models are shared with the prediction tests
from test_predict import (LIBSVM_CASES, assert_close, libsvm_cases,  # noqa: F401
                          libsvm_predict, read_data)

svmutil = pytest.importorskip("libsvm.svmutil")


# ----------------------------------------------------------------------------------------------
# LIBSVM files both ways
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(LIBSVM_CASES))
def test_libsvm_file_round_trips_byte_for_byte(libsvm_cases, name, tmp_path):
    case = libsvm_cases.get(name) or pytest.skip("data not available")
    model = load_model(case.path)
    assert model.svm_type == ("c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr")[case.svm_type]
    out = tmp_path / "again.model"
    save_model(model, out)
    assert out.read_bytes() == case.path.read_bytes()


def test_crlf_file_reads_the_same(libsvm_cases, tmp_path):
    case = libsvm_cases.get("nu_svc_poly_iris") or pytest.skip("data not available")
    crlf = tmp_path / "crlf.model"
    crlf.write_bytes(case.path.read_bytes().replace(b"\n", b"\r\n"))
    out = tmp_path / "lf.model"
    save_model(load_model(crlf), out)
    assert out.read_bytes() == case.path.read_bytes()


def test_libsvm_predicts_what_fastsvm_wrote(libsvm_cases, tmp_path):
    """A model fastsvm wrote (here: loaded and written again, with the file removed in between)
    loads in svm_load_model and LIBSVM predicts what fastsvm predicts."""
    for name in ("c_svc_rbf_dna", "nu_svc_poly_iris", "one_class_rbf_heart", "nu_svr_poly_housing"):
        case = libsvm_cases.get(name)
        if case is None:
            continue
        model = load_model(case.path)
        out = tmp_path / f"{name}.model"
        save_model(model, out)
        labels, dec, _, _ = libsvm_predict(out, case.X)
        assert_close(decision_values(model, case.X), dec)
        assert_close(predict(model, case.X), labels)


def hand_built_linear_model(rng, n_features=30):
    # weights with at most 8 significant digits survive LIBSVM's %.8g for SV values unchanged
    w = np.round(rng.normal(size=n_features), 6)
    w[rng.random(n_features) < 0.3] = 0.0
    return Model("c_svc", "linear", sp.csr_matrix(w[None, :]), sv_coef=[[1.0]], rho=[0.25],
                 labels=[1, -1], n_sv=[1, 0])


def test_hand_built_linear_model_in_libsvm(tmp_path):
    rng = np.random.default_rng(3)
    model = hand_built_linear_model(rng)
    path = tmp_path / "w.model"
    save_model(model, path)
    text = path.read_text()
    assert text.startswith("svm_type c_svc\nkernel_type linear\nnr_class 2\ntotal_sv 1\nrho 0.25\n"
                           "label 1 -1\nnr_sv 1 0\nSV\n1 ")
    X = to_csr(sp.random(200, 35, density=0.3, random_state=rng))
    labels, dec, _, _ = libsvm_predict(path, X)
    assert_close(decision_values(model, X), dec)
    np.testing.assert_array_equal(predict(model, X), labels)


def test_formats_of_every_field(tmp_path):
    """%.17g for header reals and coefficients, %.8g for feature values, %d for integers, a
    space after every number of an SV line, explicit zeros kept."""
    sv = sp.csr_matrix((np.array([1 / 3, 0.0, -2.5e-7]), np.array([0, 4, 9]), np.array([0, 2, 3])),
                       shape=(2, 10))
    model = Model("nu_svr", "polynomial", sv, sv_coef=[[0.1, -1 / 7]], rho=[-0.0], degree=2,
                  gamma=1 / 3, coef0=1e-20, prob_a=[2 / 3])
    path = tmp_path / "m.model"
    save_model(model, path)
    assert path.read_text() == (
        "svm_type nu_svr\nkernel_type polynomial\ndegree 2\ngamma 0.33333333333333331\n"
        "coef0 9.9999999999999995e-21\nnr_class 2\ntotal_sv 2\nrho -0\nprobA 0.66666666666666663\n"
        "SV\n0.10000000000000001 1:0.33333333 5:0 \n-0.14285714285714285 10:-2.5e-07 \n")
    again = load_model(path)
    assert again.support_vectors.nnz == 3  # the explicit zero survives
    save_model(again, tmp_path / "m2.model")
    assert (tmp_path / "m2.model").read_bytes() == path.read_bytes()


def test_precomputed_serial_numbers(tmp_path):
    model = Model("c_svc", "precomputed", sp.csr_matrix((3, 0)), sv_coef=[[0.5, -0.25, -0.25]],
                  rho=[0.1], labels=[2, 4], n_sv=[1, 2], sv_indices=[7, 2, 11])
    path = tmp_path / "p.model"
    save_model(model, path)
    assert path.read_text().endswith("SV\n0.5 0:7 \n-0.25 0:2 \n-0.25 0:11 \n")
    again = load_model(path)
    np.testing.assert_array_equal(again.sv_indices, [7, 2, 11])
    X = sp.csr_matrix(np.arange(24, dtype=float).reshape(2, 12))
    labels, dec, _, _ = libsvm_predict(path, X.toarray(), precomputed=True)
    assert_close(decision_values(again, X), dec)
    np.testing.assert_array_equal(predict(again, X), labels)


# ----------------------------------------------------------------------------------------------
# LIBLINEAR files
# ----------------------------------------------------------------------------------------------

LIBLINEAR_CASES = {
    "binary_l2_dual": ("heart_scale", None, "-s 1"),
    "binary_lr_bias": ("heart_scale", None, "-s 0 -B 1"),
    "ovr_l2_iris": ("iris.scale", None, "-s 2"),
    "ovr_l1_bias_dna": ("dna.scale", 600, "-s 3 -B 1"),
    "crammer_singer_iris": ("iris.scale", None, "-s 4"),
    "svr_bias_housing": ("housing_scale", None, "-s 11 -B 1"),
    "svr_housing": ("housing_scale", None, "-s 12"),
    "one_class_heart": ("heart_scale", None, "-s 21"),
    "single_class_iris": ("iris.scale", "class1", "-s 1"),
}


def liblinearutil():
    """liblinear-official's Python interface; the test that needs it skips without it."""
    return pytest.importorskip("liblinear.liblinearutil")


def liblinear_predict(m, X):
    labels, _, dec = liblinearutil().predict([], X, m, "-q")
    return np.array(labels), np.array(dec)


@pytest.mark.parametrize("name", list(LIBLINEAR_CASES))
def test_liblinear_model_predicts_as_liblinear(name, tmp_path):
    data, rows, options = LIBLINEAR_CASES[name]
    y, x = read_data(data, rows)
    # all-zero rows: without a bias every score ties, and LIBLINEAR picks its first label
    X = to_csr(sp.vstack([x, sp.csr_matrix((2, x.shape[1]))]))
    m = liblinearutil().train(y, x, options + " -q")
    path = tmp_path / "linear.model"
    liblinearutil().save_model(str(path), m)
    model = load_model(path)
    assert model.kernel_type == "linear"
    labels, dec = liblinear_predict(m, X)
    ours = decision_values(model, X)
    if model.nr_class == 1:  # LIBLINEAR's single weight vector only ever picks the one label
        assert ours.shape == (X.shape[0], 0)
        np.testing.assert_array_equal(predict(model, X), labels)
    elif model.nr_class > 2 or "-s 4" in options:
        k = model.nr_class
        order = [list(m.get_labels()).index(c) for c in model.labels]
        pairs = [dec[:, order[i]] - dec[:, order[j]] for i in range(k) for j in range(i + 1, k)]
        assert_close(ours, np.stack(pairs, axis=1))
        np.testing.assert_array_equal(predict(model, X), labels)
    elif model.svm_type == "epsilon_svr":
        assert_close(ours, dec)
        assert_close(predict(model, X), labels)
    else:
        assert_close(ours, dec)
        np.testing.assert_array_equal(predict(model, X), labels)

    # the same model as a LIBSVM file, predicted by LIBSVM (the file's feature values carry 8 digits)
    as_libsvm = tmp_path / "as_libsvm.model"
    save_model(model, as_libsvm)
    lib_labels, lib_dec, _, _ = libsvm_predict(as_libsvm, X)
    if model.svm_type == "epsilon_svr":
        assert_close(lib_labels, labels, rtol=1e-6)
    else:
        np.testing.assert_array_equal(lib_labels, labels)
    assert_close(lib_dec, ours, rtol=1e-6)


def test_liblinear_multiclass_layout(tmp_path):
    """k weight vectors become k support vectors in reverse label order, +1 / -1 coefficients."""
    path = tmp_path / "ll.model"
    path.write_text("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 3\nlabel 4 5 6\nnr_feature 2\n"
                    "bias 2\nw\n1 2 3 \n0 0 5 \n0.5 0.25 0.125 \n")
    model = load_model(path)
    np.testing.assert_array_equal(model.labels, [6, 5, 4])
    np.testing.assert_array_equal(model.support_vectors.toarray(), [[3, 5], [2, 0], [1, 0]])
    np.testing.assert_array_equal(model.sv_coef, [[1, -1, -1], [1, 1, -1]])
    # scores s = w.x + 2 * bias weight: offsets 1, 0.5, 0.25 for labels 4, 5, 6
    np.testing.assert_array_equal(model.rho, [0.5 - 0.25, 1 - 0.25, 1 - 0.5])
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]))
    s = X.toarray() @ np.array([[1, 2, 3], [0, 0, 5]]) + np.array([1, 0.5, 0.25])
    np.testing.assert_array_equal(predict(model, X), np.array([4, 5, 6])[np.argmax(s, axis=1)])


# ----------------------------------------------------------------------------------------------
# strict reading
# ----------------------------------------------------------------------------------------------

VALID = """svm_type c_svc
kernel_type rbf
gamma 0.5
nr_class 3
total_sv 4
rho 0.5 0.25 -1.5
label 1 2 3
nr_sv 2 1 1
SV
1 0.5 1:0.5 3:-1 
-1 0 2:1 
0.5 -0.25 1:1 
-0.5 -0.5 4:2 
"""


def edit(text, line, new):
    """Replace (new is a str), delete (None) or insert before (a tuple) a 1-based line."""
    lines = text.split("\n")
    if new is None:
        del lines[line - 1]
    elif isinstance(new, tuple):
        lines[line - 1:line - 1] = list(new)
    else:
        lines[line - 1] = new
    return "\n".join(lines)


MALFORMED = [
    # (name, text, line of the error, what the message says)
    ("unknown key", edit(VALID, 3, ("foo 1",)), 3, "unknown key 'foo'"),
    ("unknown svm_type", edit(VALID, 1, "svm_type c_svm"), 1, "unknown svm_type 'c_svm'"),
    ("wrong rho count", edit(VALID, 6, "rho 0.5 0.25"), 6, "'rho' needs 3 values, found 2"),
    ("non-numeric gamma", edit(VALID, 3, "gamma abc"), 3, "'abc' is not a number"),
    ("nan", edit(VALID, 3, "gamma nan"), 3, "'nan' is not a number"),
    ("inf", edit(VALID, 6, "rho 0.5 inf -1.5"), 6, "'inf' is not a number"),
    ("overflow", edit(VALID, 10, "1e999 0.5 1:0.5 3:-1 "), 10, "'1e999' is not finite"),
    ("negative count", edit(VALID, 5, "total_sv -4"), 5, "not a non-negative integer"),
    ("nr_sv mismatch", edit(VALID, 8, "nr_sv 2 1 2"), 8, "nr_sv adds up to 5, total_sv is 4"),
    ("labels count", edit(VALID, 7, "label 1 2"), 7, "'label' needs 3 values, found 2"),
    ("bad pair", edit(VALID, 11, "-1 0 2:x "), 11, "'2:x' is not an index:value pair"),
    ("missing coefficient", edit(VALID, 12, "0.5 1:1 "), 12, "coefficient '1:1' is not a number"),
    ("unsorted", edit(VALID, 10, "1 0.5 3:0.5 1:-1 "), 10, "feature indices must increase"),
    ("index zero", edit(VALID, 13, "-0.5 -0.5 0:2 "), 13, "feature index 0"),
    ("missing SV", VALID.split("SV\n")[0], 8, "file ends inside the header"),
    ("truncated", edit(VALID, 13, None), 12, "file ends after 3 of 4 support vectors"),
    ("empty SV line", edit(VALID, 11, ""), 11, "expected 2 coefficients"),
    ("trailing text", VALID + "1 1 1:1\n", 14, "unexpected text after the last line"),
    ("duplicate key", edit(VALID, 4, ("gamma 0.5",)), 4, "'gamma' given twice"),
    ("rho before nr_class", edit(edit(VALID, 6, None), 4, ("rho 0.5 0.25 -1.5",)), 4,
     "'rho' must come after 'nr_class'"),
    ("missing gamma", edit(VALID, 3, None), 8, "no 'gamma' (needed by the rbf kernel)"),
    ("SV with text", edit(VALID, 9, "SV 1"), 9, "unexpected text after 'SV'"),
    ("nr_class zero", edit(VALID, 4, "nr_class 0"), 4, "not a positive integer"),
    ("single class with SVs", "svm_type c_svc\nkernel_type linear\nnr_class 1\ntotal_sv 1\nrho\n"
     "label 3\nnr_sv 1\nSV\n1:1 \n", 4, "a single-class model has no support vectors"),
    ("float count", edit(VALID, 5, "total_sv 4.0"), 5, "'4.0' is not a non-negative integer"),
    ("non-ascii", edit(VALID, 1, "svm_type c_svc\u00e9"), 1, "non-ASCII"),
    ("empty file", "", 1, "file ends inside the header"),
    ("label in one-class", "svm_type one_class\nkernel_type linear\nnr_class 2\ntotal_sv 0\nrho 0\n"
     "label 1 2\nSV\n", 6, "'label' belongs to classification models only"),
    ("one-class nr_class", "svm_type one_class\nkernel_type linear\nnr_class 3\ntotal_sv 0\nrho 0\nSV\n",
     3, "nr_class of a one_class model must be 2"),
    ("liblinear weight count",
     "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias -1\nw\n0.5 \n1 2 \n", 8,
     "a weight line needs 1 value, found 2"),
    ("liblinear unknown solver", "solver_type FOO\nnr_class 2\nnr_feature 1\nbias -1\nw\n1 \n", 1,
     "unknown solver_type 'FOO'"),
    ("liblinear missing label", "solver_type L2R_LR\nnr_class 2\nnr_feature 1\nbias -1\nw\n1 \n", 5,
     "no 'label'"),
    ("liblinear truncated", "solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 3\nbias 1\nw\n1 \n2 \n",
     7, "file ends after 2 of 4 weight lines"),
    ("huge counts", edit(edit(VALID, 5, "total_sv 2000000000"), 8, "nr_sv 1999999996 2 2"), 13,
     "file ends after 4 of 2000000000 support vectors"),
    ("liblinear huge nr_feature",
     "solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 2000000000\nbias -1\nw\n1 \n", 6,
     "file ends after 1 of 2000000000 weight lines"),
    # found by the fuzz probe: the number pattern took minutes to reject this (backtracking)
    ("long run of digits", edit(VALID, 10, "9" * 30000 + "s 0.5 1:0.5 "), 10, "is not a number"),
    ("duplicate labels", edit(VALID, 7, "label 1 2 1"), 7, "'label' value 1 is given twice"),
    ("liblinear duplicate labels",
     "solver_type L2R_LR\nnr_class 2\nlabel 1 1\nnr_feature 1\nbias -1\nw\n1 \n", 3,
     "'label' value 1 is given twice"),
    # a binary model's SV lines go to the data parser first, which sorts a data file's indices
    ("unsorted, binary",
     "svm_type c_svc\nkernel_type linear\nnr_class 2\ntotal_sv 2\nrho 0\nlabel 1 -1\nnr_sv 1 1\nSV\n"
     "1 3:0.5 1:1 \n-1 1:1 \n", 9, "feature indices must increase"),
    ("precomputed with features",
     "svm_type one_class\nkernel_type precomputed\nnr_class 2\ntotal_sv 1\nrho 0\nSV\n1 1:0.5 \n", 7,
     "'0:serial' only"),
]


@pytest.mark.parametrize("name,text,line,message", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_model_file(tmp_path, name, text, line, message):
    path = tmp_path / "bad.model"
    path.write_bytes(text.encode("utf-8"))
    with pytest.raises(FileFormatError) as info:
        load_model(path)
    error = str(info.value)
    assert "\n" not in error
    assert error.startswith(f"{path}:{line}: "), error
    assert message in error, error
    assert info.value.line == line


def test_the_valid_base_file_loads(tmp_path):
    path = tmp_path / "ok.model"
    path.write_text(VALID)
    model = load_model(path)
    assert model.n_sv.tolist() == [2, 1, 1] and model.support_vectors.shape == (4, 4)
    save_model(model, tmp_path / "again.model")
    assert (tmp_path / "again.model").read_text() == VALID


def test_corrupted_files_raise_only_file_format_errors(tmp_path):
    """Random edits of a valid file either still parse or stop with FileFormatError, never
    anything else (no IndexError, ValueError, ... from deep inside)."""
    rng = np.random.default_rng(4)
    alphabet = list(" \t\r\n:.-+e0123456789x") + ["nan", "SV", "rho", "1:", "\n\n"]
    path = tmp_path / "fuzz.model"
    errors = 0
    for _ in range(600):
        text = VALID
        for _ in range(rng.integers(1, 4)):
            pos = int(rng.integers(0, len(text)))
            op = rng.integers(0, 3)
            if op == 0:
                text = text[:pos] + text[pos + 1:]
            elif op == 1:
                text = text[:pos] + str(rng.choice(alphabet)) + text[pos:]
            else:
                text = text[:pos] + str(rng.choice(alphabet)) + text[pos + 1:]
        path.write_text(text)
        try:
            load_model(path)
        except FileFormatError as e:
            assert re.match(rf"{re.escape(str(path))}:\d+: \S", str(e)) and "\n" not in str(e)
            errors += 1
    assert errors > 300  # most edits break the file


# ----------------------------------------------------------------------------------------------
# atomic writes
# ----------------------------------------------------------------------------------------------

def small_model():
    return Model("epsilon_svr", "linear", sp.csr_matrix(np.array([[1.0, 2.0]])), sv_coef=[[1.0]],
                 rho=[0.5])


@pytest.mark.parametrize("failure", ["writer", "fsync", "replace"])
def test_failed_save_leaves_old_file_and_no_temp(tmp_path, monkeypatch, failure):
    path = tmp_path / "model"
    path.write_bytes(b"previous contents\n")

    def half_then_fail(model, f):
        f.write("svm_type epsilon_svr\n")
        raise RuntimeError("disk on fire")

    def fail(*args):
        raise OSError("disk on fire")

    if failure == "writer":
        monkeypatch.setattr(modelfile, "_write_model", half_then_fail)
    else:
        monkeypatch.setattr(atomic.os, failure, fail)
    with pytest.raises((RuntimeError, OSError), match="disk on fire"):
        save_model(small_model(), path)
    assert path.read_bytes() == b"previous contents\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_save_replaces_file_with_normal_permissions(tmp_path):
    path = tmp_path / "model"
    path.write_bytes(b"previous contents\n")
    save_model(small_model(), path)
    assert path.read_text().startswith("svm_type epsilon_svr\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_save_to_a_pipe_writes_through_it(tmp_path):
    # svm-train writes a model to /dev/null or a FIFO in place; a rename over the path would put a
    # regular file there (run as root, over /dev/null itself)
    import stat
    import threading
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    save_model(small_model(), fifo)
    reader.join(timeout=10)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    expected = tmp_path / "model"
    save_model(small_model(), expected)
    assert received == [expected.read_bytes()]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model", "pipe"]


def test_sigkill_during_saves_leaves_whole_models_and_the_next_save_cleans_up(tmp_path):
    """Kill a saving child at random points; the model is always whole (one of the two models
    written), and one clean save removes the temporary files the kills left,
    but not a fresh one (a save still running) nor files not of save_model's pattern."""
    import signal
    import time
    rng = np.random.default_rng(37)
    models = [Model("epsilon_svr", "linear", sp.random(3000, 20, density=0.5, format="csr", random_state=s),
                    sv_coef=[np.full(3000, s + 1.0)], rho=[s]) for s in range(2)]
    path = tmp_path / "model"
    texts = set()
    for model in models:
        save_model(model, path)
        texts.add(path.read_bytes())
    for kill in range(20):
        ready_read, ready_write = os.pipe()
        pid = os.fork()
        if pid == 0:   # the child saves the two models in turn until it is killed
            os.close(ready_read)
            os.write(ready_write, b"x")
            try:
                while True:
                    for model in models:
                        save_model(model, path)
            finally:
                os._exit(1)
        os.close(ready_write)
        os.read(ready_read, 1)
        os.close(ready_read)
        time.sleep(rng.uniform(0.0, 0.15))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        assert path.read_bytes() in texts, f"kill {kill}: the model file is not whole"
    left = [p for p in tmp_path.iterdir() if p.name != "model"]
    assert left, "no kill landed inside a save: the test did not test anything"
    assert all(re.fullmatch(r"\.model\.[0-9a-f]{12}\.tmp", p.name) for p in left)
    old = time.time() - 2 * atomic.STALE_TEMPORARY_SECONDS
    for p in left:
        os.utime(p, (old, old))
    running = tmp_path / ".model.0123456789ab.tmp"     # a save going on right now
    running.write_bytes(b"partial")
    others = [tmp_path / ".model.xyz.tmp", tmp_path / ".other.0123456789ab.tmp", tmp_path / "model.tmp"]
    for p in others:
        p.write_bytes(b"not ours")
        os.utime(p, (old, old))
    save_model(models[0], path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["model", running.name] + [p.name for p in others])
    assert load_model(path).support_vectors.shape == (3000, 20)


def test_save_syncs_the_directory_after_the_rename(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync

    def fsync(fd):
        synced.append(os.path.isdir(f"/proc/self/fd/{fd}") and os.path.exists(tmp_path / "model"))
        real_fsync(fd)

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    save_model(small_model(), tmp_path / "model")
    assert synced == [False, True]   # the file's data, then the directory holding the new name
