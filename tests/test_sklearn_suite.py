"""scikit-learn's own SVM tests (from the installed wheel) pass against fastsvm's estimators,
but for the allow-list of tests/sklearn_swap.py.

They run in a pytest of their own with the sklearn_swap plugin, so that the swap of sklearn.svm's
classes does not reach this session, whose tests use sklearn.svm as their oracle.
"""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.mark.skipif(importlib.util.find_spec("sklearn.svm.tests") is None,
                    reason="this scikit-learn wheel ships no tests (sklearn.svm.tests)")
def test_sklearn_svm_suite_passes(tmp_path):
    path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path)
    env.pop("PYTEST_ADDOPTS", None)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--pyargs", "sklearn.svm.tests", "-p", "sklearn_swap",
         "-q", "-rfE", "-p", "no:cacheprovider", "-o", "addopts="],
        cwd=tmp_path, env=env, capture_output=True, text=True)
    lines = run.stdout.splitlines()
    summary = [line for line in lines if line.startswith(("FAILED", "ERROR", "sklearn_swap:"))]
    assert run.returncode == 0, "\n".join(summary + lines[-1:] + run.stderr.splitlines()[-5:])
    assert " passed" in lines[-1]


def test_an_allow_list_entry_that_matches_no_test_fails_the_run(tmp_path):
    """A run of the plugin over a test that is on no list: every entry is unused, so it fails."""
    (tmp_path / "test_other.py").write_text("def test_other():\n    pass\n")
    path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path)
    env.pop("PYTEST_ADDOPTS", None)
    run = subprocess.run([sys.executable, "-m", "pytest", "test_other.py", "-p", "sklearn_swap", "-q",
                          "-p", "no:cacheprovider", "-o", "addopts="],
                         cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 1, run.stdout
    assert "1 passed" in run.stdout and "sklearn_swap: allow-list entry matches no test" in run.stdout
