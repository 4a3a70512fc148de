"""Start-up cost: grid.py and easy.py start fastsvm-train once per grid cell, so a command may
import only what it runs. Each check runs a fresh interpreter and holds the modules it loaded to
a list."""
import subprocess
import sys

import pytest

# third-party top-level packages a command may load, besides what numpy and scipy.sparse load
# themselves where they find it installed (scipy: Cython.Shadow; numpy.f2py: charset_normalizer)
ALLOWED_PACKAGES = {"fastsvm", "numpy", "scipy", "threadpoolctl"}
# modules the plain commands must not load: each costs tens of milliseconds and none is used
HEAVY = ("sklearn", "scipy.linalg", "scipy.optimize", "scipy.sparse.linalg", "fastsvm.estimators",
         "fastsvm.kernels.approximation", "fastsvm.solvers.ssnal", "fastsvm.problems",
         "fastsvm.solvers.nystroem", "fastsvm.solvers.dcd", "fastsvm.tuning.crossval")
# ... but for LIBSVM's dual of every formulation, which smo builds its problem from (numpy alone)
USED_BY_SMO = {"fastsvm.problems", "fastsvm.problems.libsvm_dual"}


def imported_modules(code, tmp_path):
    """Names of the modules a fresh interpreter holds after running ``code``, beyond its own
    start (sys.modules, which also sees importlib.import_module's loads)."""
    def run(source, name):
        listing = tmp_path / name
        prologue = ("import atexit, sys\n"
                    f"atexit.register(lambda: open({str(listing)!r}, 'w').write('\\n'.join(sys.modules)))\n")
        # from tmp_path: "-c" puts the working directory first on sys.path, and a checkout's
        # fastsvm/ (without its compiled modules) would shadow the installed package
        subprocess.run([sys.executable, "-c", prologue + source], capture_output=True, check=True,
                       cwd=tmp_path)
        return set(listing.read_text().split())
    return run(code, "modules") - run("pass", "baseline")


def third_party(modules):
    """Public top-level packages outside the standard library (the private helper modules that
    compiled extensions and an editable install register are left out)."""
    tops = {m.split(".")[0] for m in modules if not m.startswith("_")}
    return tops - set(sys.stdlib_module_names) - {"cython_runtime"}


def test_import_fastsvm_loads_only_fastsvm(tmp_path):
    modules = imported_modules("import fastsvm", tmp_path)
    assert third_party(modules) == {"fastsvm"}
    assert {m for m in modules if m.startswith("fastsvm")} == {"fastsvm"}


def test_public_names_load_on_first_use(tmp_path):
    modules = imported_modules("import fastsvm; fastsvm.load_model", tmp_path)
    assert "fastsvm.files.modelfile" in modules
    assert not {"fastsvm.training.trainer", "fastsvm.solvers", "sklearn"} & modules


@pytest.mark.parametrize("command", [
    ["fastsvm.cli.train", "-q", "{data}", "{model}"],
    ["fastsvm.cli.predict", "-q", "{data}", "{shipped_model}", "{out}"],
    ["fastsvm.cli.scale", "{data}"],
])
def test_commands_load_only_what_they_run(command, tmp_path):
    data = tmp_path / "one"
    data.write_text("+1 1:0.5 2:1\n-1 1:-0.5\n")
    shipped_model = tmp_path / "shipped.model"
    subprocess.run([sys.executable, "-c", "import sys; from fastsvm.cli.train import entry; "
                    f"sys.argv = ['fastsvm-train', '-q', {str(data)!r}, {str(shipped_model)!r}]; entry()"],
                   check=True, cwd=tmp_path)
    module, *args = command
    args = [a.format(data=data, model=tmp_path / "m", shipped_model=shipped_model, out=tmp_path / "out")
            for a in args]
    code = (f"import sys; from {module} import entry; sys.argv = ['prog', *{args!r}]; "
            "sys.stdout = open('/dev/null', 'w'); entry()")
    modules = imported_modules(code, tmp_path)
    theirs = third_party(imported_modules("import numpy, scipy.sparse", tmp_path))
    assert third_party(modules) <= ALLOWED_PACKAGES | theirs
    assert not [m for m in modules if m.startswith(HEAVY) and m not in USED_BY_SMO]


def test_usage_error_loads_no_solver(tmp_path):
    code = ("import sys; from fastsvm.cli.train import parse_args\n"
            "try:\n    parse_args(['-t', '9', 'x'])\nexcept Exception:\n    pass")
    modules = imported_modules(code, tmp_path)
    assert not [m for m in modules if m.startswith(("fastsvm.solvers.", "fastsvm.training.trainer"))
                and m != "fastsvm.solvers.base"]


def test_no_public_name_is_also_a_submodule():
    # importing a submodule binds it on the package: a function of the same name, loaded lazily,
    # would be replaced by the module (a fastsvm/predict.py beside the function fastsvm.predict)
    import pkgutil

    import fastsvm
    submodules = {info.name for info in pkgutil.iter_modules(fastsvm.__path__)}
    assert not set(fastsvm.__all__) & submodules


def test_every_registered_name_loads_its_solver():
    from fastsvm.solvers import SOLVERS
    assert {name: SOLVERS[name].name for name in SOLVERS} == {name: name for name in SOLVERS}
