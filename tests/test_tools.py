"""tools/: every script answers --help with a usage line and its docstring, the scripts share
their pieces through tools/benchlib (no sys.path edits, no script importing another), and
benchlib's pure pieces work on tiny inputs. No benchmark is run."""
import ast
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

TOOLS = Path(__file__).resolve().parents[1] / "tools"
SOURCES = sorted(TOOLS.rglob("*.py"))
SCRIPTS = sorted(p for p in TOOLS.glob("*.py") if 'if __name__ == "__main__":' in p.read_text())


@pytest.fixture(scope="module")
def helps():
    """{script name: (exit status, stdout)} of every script's --help, run side by side."""
    running = {p.name: subprocess.Popen([sys.executable, str(p), "--help"], stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True) for p in SCRIPTS}
    return {name: (proc.wait(timeout=120), proc.stdout.read()) for name, proc in running.items()}


@pytest.fixture
def benchlib(monkeypatch):
    """The benchlib package, imported as the scripts import it (tools/ first on the path)."""
    monkeypatch.syspath_prepend(str(TOOLS))
    import benchlib.data
    import benchlib.kernel_sets
    import benchlib.measures
    import benchlib.report
    import benchlib.running
    return benchlib


def test_the_scripts_are_found():
    assert len(SCRIPTS) >= 20
    assert (TOOLS / "benchlib" / "__init__.py").is_file()


@pytest.mark.parametrize("script", [p.name for p in SCRIPTS])
def test_help_prints_usage_and_the_docstring(helps, script):
    status, out = helps[script]
    assert status == 0, out
    assert out.startswith(f"usage: {script}")
    doc = ast.get_docstring(ast.parse((TOOLS / script).read_text()))
    assert doc and f"python tools/{script}" in doc          # how to run it
    assert doc.splitlines()[0].strip() in out               # what it measures, in --help


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(TOOLS)))
def test_no_file_edits_sys_path(path):
    assert "sys" + ".path" not in path.read_text()


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(TOOLS)))
def test_no_file_imports_a_script(path):
    scripts = {p.stem for p in SCRIPTS} | {"memory"}
    imported = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module.split(".")[0])
    assert not imported & scripts


def test_split_rows_is_seeded_disjoint_and_sorted(benchlib):
    train, test = benchlib.data.split_rows(10)
    assert (len(train), len(test)) == (8, 2)
    assert sorted(np.concatenate([train, test]).tolist()) == list(range(10))
    assert list(train) == sorted(train) and list(test) == sorted(test)
    again = benchlib.data.split_rows(10)
    assert all(np.array_equal(a, b) for a, b in zip((train, test), again))
    perm = np.random.default_rng(0).permutation(10)
    unsorted = benchlib.data.split_rows(10, sort=False)
    assert np.array_equal(unsorted[1], perm[:2]) and np.array_equal(unsorted[0], perm[2:])


def test_split_keeps_rows_with_their_labels(benchlib):
    X = sp.csr_matrix(np.arange(10.0)[:, None])
    X_train, y_train, X_test, y_test = benchlib.data.split(X, np.arange(10.0))
    assert np.array_equal(X_train.toarray().ravel(), y_train)
    assert np.array_equal(X_test.toarray().ravel(), y_test)


def test_load_dataset_test_file_widened_concatenated_or_split(benchlib, tmp_path):
    (tmp_path / "tiny").write_text("".join(f"{1 if i % 2 else -1} 1:{i} 2:1\n" for i in range(10)))
    (tmp_path / "tiny.t").write_text("1 3:1\n-1 1:2\n")
    name, X, y, Xt, yt, how = benchlib.data.load_dataset("tiny", tmp_path)
    assert (name, X.shape, Xt.shape, how) == ("tiny", (10, 3), (2, 3), "test file")
    name, X, y, Xt, yt, how = benchlib.data.load_dataset("tiny", tmp_path, concatenated={"tiny"})
    assert (name, X.shape, how) == ("tiny (train+test)", (12, 3), "training rows") and Xt is X
    (tmp_path / "tiny.t").unlink()
    name, X, y, Xt, yt, how = benchlib.data.load_dataset("tiny", tmp_path, split_label="80/20 split, seed 0")
    assert (X.shape[0], Xt.shape[0], how) == (8, 2, "80/20 split, seed 0")
    with pytest.raises(SystemExit):
        benchlib.data.load_dataset("missing", tmp_path)


def test_as_pm_and_saved_problem(benchlib, tmp_path):
    labels = np.array([3.0, 1.0, 3.0, 2.0])
    assert benchlib.data.as_pm(labels).tolist() == [1.0, -1.0, 1.0, -1.0]
    X = sp.csr_matrix(np.eye(4))
    benchlib.data.save_problem(tmp_path / "p.npz", X, labels)
    X2, y2 = benchlib.data.load_problem(tmp_path / "p.npz")
    assert (X2 != X).nnz == 0 and np.array_equal(y2, labels)


def test_warm_up_rows_take_a_quarter_of_each_class(benchlib):
    y = np.array([1.0] * 8 + [-1.0] * 4)
    assert benchlib.kernel_sets.warm_up_rows(y, "binary").tolist() == [0, 1, 8]
    assert benchlib.kernel_sets.warm_up_rows(np.zeros(8), "regression").tolist() == [0, 1]


def test_median_skips_missing_values(benchlib):
    assert benchlib.running.median([3.0, None, 1.0, 2.0]) == 2.0
    assert benchlib.running.median([None]) is None


def test_ladder_side_takes_the_first_tolerance_that_meets_the_gap(benchlib):
    def run(tol):        # the objective's relative excess over F* = 1 is the tolerance itself
        return 2 * tol, 1.0 + tol, f"run at {tol:g}"
    tol, seconds, result = benchlib.measures.ladder_side(run, 0.05, 1.0, 1.0, 5)   # 1, 10^-0.5, 0.1, 10^-1.5
    assert math.isclose(tol, 10**-1.5) and math.isclose(seconds, 2 * 10**-1.5) and result == run(tol)[2]
    assert benchlib.measures.ladder_side(run, 1e-9, 1.0, 1.0, 5) is None


def test_hinge_primal(benchlib):
    X = sp.csr_matrix(np.array([[1.0], [-1.0]]))
    y = np.array([1.0, -1.0])
    # w = 0.5, b = 0: margins 0.5 each, losses 0.5 each
    assert math.isclose(benchlib.measures.hinge_primal(X, y, 2.0, np.array([0.5]), 0.0), 0.125 + 2.0)
    assert math.isclose(benchlib.measures.hinge_primal(X, y, 2.0, np.array([0.5]), 0.0, p=2.0), 0.125 + 1.0)


def test_report_pieces(benchlib, tmp_path, capsys):
    header = "| a | b | c |"
    assert benchlib.report.rule(header) == "|---|---|---|"
    assert math.isclose(benchlib.report.geometric_mean([1.0, 4.0]), 2.0)
    out = tmp_path / "sub" / "report.md"
    benchlib.report.write_report(["# title", "", header], out)
    assert out.read_text() == "# title\n\n| a | b | c |\n"
    assert capsys.readouterr().out == "# title\n\n| a | b | c |\n\n"
    doc = "Doc.\n\n    python tools/x.py --out r.md\n"
    assert "\n    python tools/x.py --out r.md\n" in benchlib.report.parser(doc).format_help()   # kept as written
