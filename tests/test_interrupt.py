"""Ctrl-C stops every solver within a second: a real SIGINT sent to fastsvm-train and to a Python
process training through the API, while the solver is busy in its nogil loop and the machine is
busy too; and a SIGINT during start-up ends the program with one line, never a traceback."""
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import fastsvm
from fastsvm.solvers import SOLVERS

BIN = Path(sys.executable).parent

# per solver: options that keep it busy for many seconds on the data below
LONG_RUNS = {
    "dcd": ["-s", "dcd", "-c", "1000", "-e", "1e-12", "-M", "100000000"],
    "smo": ["-s", "smo", "-c", "1000", "-g", "10", "-e", "1e-12"],
    "ssnal": ["-s", "ssnal", "-c", "1000", "-e", "1e-300", "-M", "100000000"],   # -e no solve can reach
    "ssnal_rbf": ["-s", "ssnal", "-t", "2", "-c", "1000", "-e", "1e-300", "-M", "100000000"],
    "nystroem": ["-s", "nystroem", "-c", "1000", "-e", "1e-300", "-M", "100000000", "-o", "landmarks=1000"],
    "primal_newton": ["-s", "primal_newton", "-c", "1e6", "-e", "1e-300", "-M", "100000000"],
    "l1_cd": ["-s", "l1_cd", "-c", "1000", "-e", "1e-300", "-M", "100000000"],
    "crammer_singer": ["-s", "crammer_singer", "-c", "1000", "-e", "1e-300", "-M", "100000000"],
    "admm": ["-s", "admm", "-c", "1000", "-e", "1e-300", "-M", "100000000"],
}
# the target is a second; the bound leaves room for a machine slowed by other work
STOP_BOUND = 2.0


@pytest.fixture(scope="module")
def busy_machine():
    """A child process burning a CPU while the interrupts are sent (threaded loops then wait for
    descheduled threads, the case where a poll by count rather than by time stops late)."""
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    yield
    burner.kill()
    burner.wait()


@pytest.fixture(scope="module")
def hard_problem(tmp_path_factory):
    """Noisy labels on random data: no solver finishes it in under a few seconds."""
    rng = np.random.default_rng(0)
    X = sp.random(6000, 300, density=0.1, random_state=1, format="csr")
    y = np.where(rng.random(6000) < 0.5, 1, -1)
    path = tmp_path_factory.mktemp("interrupt") / "hard.libsvm"
    fastsvm.dump_svmlight_file(X, y, path, zero_based=False)
    return path


def _interrupt_after_first_progress_line(proc):
    """Wait for the solver to talk, let it run a little, send SIGINT; seconds until it exited."""
    first = proc.stdout.readline()
    assert first, "the solver printed no progress"
    time.sleep(0.5)
    assert proc.poll() is None, "finished before it could be interrupted"
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    return time.monotonic() - sent


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("run", sorted(LONG_RUNS))
def test_cli_stops_within_a_second(run, jobs, hard_problem, busy_machine, tmp_path):
    if LONG_RUNS[run][1] not in SOLVERS:
        pytest.skip(f"solver {LONG_RUNS[run][1]} not available")
    model = tmp_path / "m"
    proc = subprocess.Popen([str(BIN / "fastsvm-train"), "-j", jobs, *LONG_RUNS[run], hard_problem, model],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = _interrupt_after_first_progress_line(proc)
    stderr = proc.stderr.read()
    assert proc.returncode == 130, stderr
    assert stderr.strip() == "fastsvm-train: interrupted"
    assert elapsed < STOP_BOUND, f"{run} -j {jobs} took {elapsed:.2f} s to stop"
    assert not model.exists()


def _numpy_loaded(pid):
    """Whether process pid has mapped numpy's core extension: its heavy imports have begun
    (fastsvm-train's only after entry() has installed its Ctrl-C handling)."""
    try:
        return "_multiarray_umath" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def test_ignored_sigint_stays_ignored(hard_problem, tmp_path):
    """Started with SIGINT ignored (a script's background job), fastsvm-train keeps ignoring it, as
    svm-train does: a Ctrl-C at the terminal does not end it, and it writes its model."""
    model = tmp_path / "m"
    proc = subprocess.Popen([str(BIN / "fastsvm-train"), "-s", "dcd", "-c", "1000", "-e", "1e-12", "-M", "3000",
                             hard_problem, model], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert proc.stdout.readline(), "the solver printed no progress"
    assert proc.poll() is None, "finished before the SIGINT"
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert "interrupted" not in stderr and model.is_file()


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.05, 0.1, 0.2])
def test_interrupt_during_start_up_prints_one_line(delay, hard_problem, tmp_path):
    """SIGINT while the imports run (numpy, scipy, the solver) and while the data loads."""
    if not Path("/proc/self/maps").exists():
        pytest.skip("needs /proc to see the imports begin")
    proc = subprocess.Popen([str(BIN / "fastsvm-train"), *LONG_RUNS["smo"], hard_problem, tmp_path / "m"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not _numpy_loaded(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)
    time.sleep(delay)
    assert proc.poll() is None, "exited before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert "Traceback" not in stderr, stderr
    assert stderr.strip() == "fastsvm-train: interrupted"
    assert proc.returncode == 130


# a program run as its console script does, with Ctrl-C delivered the moment module TARGET
# starts to import: deterministic, where a timed SIGINT would land anywhere in the start-up
EARLY_INTERRUPT = """
import os, signal, sys
TARGET = sys.argv.pop(1)
sys.argv[0] = sys.argv.pop(1)
class Hook:
    def find_spec(self, name, path=None, target=None):
        if name == TARGET:
            os.kill(os.getpid(), signal.SIGINT)
sys.meta_path.insert(0, Hook())
module = __import__("fastsvm.cli." + sys.argv[0].split("-")[1], fromlist=["entry"])
sys.exit(module.entry())
"""


@pytest.mark.parametrize("target", [
    "fastsvm.cli.common",   # the program's own modules, before entry(): noted, then ends it
    "datetime",             # inside numpy's C import, which turns the interrupt into an ImportError
    "scipy.sparse",
])
@pytest.mark.parametrize("program", ["fastsvm-train", "fastsvm-predict"])
def test_interrupt_while_modules_import_prints_one_line(program, target, tmp_path):
    data = Path(__file__).resolve().parents[1] / "data" / "breast_cancer_scale"
    driver = tmp_path / "driver.py"
    driver.write_text(EARLY_INTERRUPT)
    args = [str(data), str(tmp_path / "m")] if program == "fastsvm-train" else \
        [str(data), str(tmp_path / "m"), str(tmp_path / "out")]
    # from tmp_path: a checkout's uncompiled fastsvm/ must not shadow the installed package
    proc = subprocess.run([sys.executable, str(driver), target, program, *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip() == f"{program}: interrupted"
    assert proc.returncode == 130


# the same, with Ctrl-C delivered the moment a function named NAME whose caller is CALLER starts:
# inside an import, where an exception is dropped
DROPPED_INTERRUPT = """
import os, signal, sys
NAME, CALLER = sys.argv.pop(1), sys.argv.pop(1)
sys.argv[0] = sys.argv.pop(1)
def profile(frame, event, arg):
    if event == "call" and frame.f_code.co_name == NAME and frame.f_back.f_code.co_name == CALLER:
        sys.setprofile(None)
        os.kill(os.getpid(), signal.SIGINT)
module = __import__("fastsvm.cli." + sys.argv[0].split("-")[1], fromlist=["entry"])
sys.setprofile(profile)
sys.exit(module.entry())
"""


@pytest.mark.parametrize("name, caller", [
    ("register", "_call_with_frames_removed"),   # a Cython module's init: its bare except drops it
    ("cb", "_find_and_load"),                    # importlib's module-lock callback: printed, dropped
])
def test_interrupt_an_import_drops_still_ends_the_program(name, caller, hard_problem, tmp_path):
    driver = tmp_path / "driver.py"
    driver.write_text(DROPPED_INTERRUPT)
    proc = subprocess.run([sys.executable, str(driver), name, caller, "fastsvm-train", *LONG_RUNS["smo"],
                           str(hard_problem), str(tmp_path / "m")], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.stderr.strip() == "fastsvm-train: interrupted"
    assert proc.returncode == 130
    assert not (tmp_path / "m").exists(), "the solver ran to its end"


SCRIPT = """
import sys, fastsvm
X, y = fastsvm.load_svmlight_file(sys.argv[1])
params = fastsvm.Params(solver=sys.argv[2], kernel_type=sys.argv[3], C=1000.0, gamma=10.0,
                        tol=1e-300, max_iter=10**8, verbose=True)
fastsvm.fit_model(X, y, params)
"""


@pytest.mark.parametrize("solver, kernel", [("dcd", "linear"), ("smo", "rbf"), ("ssnal", "linear")])
def test_python_api_raises_keyboard_interrupt(solver, kernel, hard_problem, tmp_path):
    if solver not in SOLVERS:
        pytest.skip(f"solver {solver} not available")
    # run outside the checkout: `python -c` puts the working directory first on sys.path
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(hard_problem), solver, kernel],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    elapsed = _interrupt_after_first_progress_line(proc)
    stderr = proc.stderr.read()
    assert proc.returncode != 0
    assert stderr.rstrip().endswith("KeyboardInterrupt"), stderr[-2000:]
    assert elapsed < 1.0


@pytest.mark.parametrize("block", [1, 7, 1 << 20])
def test_take_rows_equals_fancy_indexing_and_stops_on_the_flag(block, monkeypatch):
    """csr.take_rows gathers X[rows] a block at a time (what a solver's row copy polls Ctrl-C
    between): the same matrix as scipy's indexing, repeated and empty rows included."""
    from fastsvm import csr
    monkeypatch.setattr(csr, "GATHER_BLOCK_VALUES", block)
    X = csr.to_csr(sp.random(300, 40, density=0.1, random_state=3, format="csr"))
    X = csr.to_csr(sp.vstack([sp.csr_matrix((5, 40)), X]))            # empty rows first
    rows = np.random.default_rng(4).integers(0, X.shape[0], size=500)
    rows[:10] = 0
    ours = csr.take_rows(X, rows, np.zeros(1, np.int32))
    theirs = X[rows]
    for name in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(theirs, name))
    assert ours.shape == theirs.shape and ours.indices.dtype == np.int32
    if block < X.nnz:
        with pytest.raises(KeyboardInterrupt):
            csr.take_rows(X, rows, np.ones(1, np.int32))
