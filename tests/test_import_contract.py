"""The package's import contract, read from the source (every import, also those inside functions):

- every module has a layer, and arrows point down: estimators / cli -> tuning, distributed ->
  training -> solvers -> problems, kernels -> the base (files, models and the top-level modules:
  errors, params, csr, memory, parallel, heap) -> _core; no layer imports one above it, and a
  module that no layer holds fails the test;
- no solver module imports another solver module (fastsvm.solvers.base and the registry are the
  shared pieces they stand on);
- no private name (leading underscore) of a fastsvm module is imported by another module, nor
  read off an imported fastsvm module (private modules such as fastsvm._core._dcd are fine: the
  names inside them are what is checked).

KNOWN_VIOLATIONS would list violations tolerated for a while; a test checks that each entry is
still one, so a mended one must leave the list too.
"""
import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "fastsvm"

# top to bottom: a module of a layer may import its own layer and those below it
LAYERS = (("estimators", "cli"), ("tuning", "distributed"), ("training",), ("solvers",), ("problems", "kernels"),
          ("files", "models", "errors", "params", "csr", "memory", "parallel", "heap"), ("_core",))
SHARED_SOLVER_MODULES = {"fastsvm.solvers", "fastsvm.solvers.base"}

# (kind, importer, imported): violations tolerated (none: every import follows the layers)
KNOWN_VIOLATIONS = set()


def module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules(root=PACKAGE):
    """{module name: path} of every Python module of the package (Cython sources have their own
    lint: cython-lint)."""
    return {module_name(path): path for path in sorted(root.rglob("*.py"))}


def is_module(name, modules):
    """True for a fastsvm module, Python or compiled (a .pyx beside the sources)."""
    if name in modules:
        return True
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".pyx").is_file() or path.is_dir()


def is_private(name):
    return name.startswith("_") and not name.startswith("__")


def resolve(importer, is_package, level, module):
    """The absolute name of ``from <level dots><module> import ...`` inside ``importer``."""
    if level == 0:
        return module
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def imports_of(name, path, modules):
    """(imported module, private name or None) per import in the module's source; attribute reads
    ``alias._name`` of an imported fastsvm module count as importing that private name."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    aliases = {}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append((alias.name, None))
                if alias.name.startswith("fastsvm"):
                    aliases[alias.asname or alias.name.split(".")[0]] = alias.asname and alias.name
        elif isinstance(node, ast.ImportFrom):
            source = resolve(name, is_package, node.level, node.module)
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if is_module(full, modules):
                    found.append((full, None))
                    aliases[alias.asname or alias.name] = full
                else:
                    found.append((source, alias.name if is_private(alias.name) else None))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                aliases.get(node.value.id) and is_private(node.attr):
            found.append((aliases[node.value.id], node.attr))
    return [(module, private) for module, private in found if module.split(".")[0] == "fastsvm"]


def layer_of(name):
    """The rank of name's layer (0 the top), None if no layer holds it. The package itself imports no
    module (its names load on first use), so any module may import it (its __version__)."""
    parts = name.split(".")
    if len(parts) < 2:
        return len(LAYERS) if name == "fastsvm" else None
    for rank, layer in enumerate(LAYERS):
        if parts[1] in layer:
            return rank
    return None


def violations(modules):
    """Every breach of the contract, as (kind, importer, imported)."""
    found = set()
    for name, path in modules.items():
        for imported, private in imports_of(name, path, modules):
            mine, theirs = layer_of(name), layer_of(imported)
            if mine is not None and theirs is not None and theirs < mine:
                found.add(("upward import", name, imported))
            if name.startswith("fastsvm.solvers.") and imported.startswith("fastsvm.solvers.") and \
                    name not in SHARED_SOLVER_MODULES and imported not in SHARED_SOLVER_MODULES and \
                    imported.split(".")[2] != name.split(".")[2]:
                found.add(("solver imports solver", name, ".".join(imported.split(".")[:3])))
            if private is not None and imported != name:
                found.add(("private name", name, f"{imported}.{private}"))
    return found


def test_the_package_keeps_the_import_contract():
    unexpected = violations(package_modules()) - KNOWN_VIOLATIONS
    assert not unexpected, "import contract broken:\n" + "\n".join(
        f"  {kind}: {importer} -> {imported}" for kind, importer, imported in sorted(unexpected))


def test_every_module_has_a_layer():
    unplaced = sorted(name for name in package_modules() if layer_of(name) is None)
    assert not unplaced, f"modules the import contract cannot place (add them to LAYERS): {unplaced}"


def test_every_known_violation_is_still_one():
    """A mended violation must leave KNOWN_VIOLATIONS, so the list cannot hide a new one."""
    stale = KNOWN_VIOLATIONS - violations(package_modules())
    assert not stale, f"no longer violations, remove them from KNOWN_VIOLATIONS: {sorted(stale)}"


CASES = {
    "upward import": ("solvers/dcd.py", "from ..training.trainer import fit_model\n",
                      ("upward import", "fastsvm.solvers.dcd", "fastsvm.training.trainer")),
    "upward import from the assembly": ("training/multiclass.py", "from ..tuning.grid import grid_search\n",
                                        ("upward import", "fastsvm.training.multiclass", "fastsvm.tuning.grid")),
    "upward import of the scheduler": ("solvers/smo.py", "from ..training.schedule import run_within_budget\n",
                                       ("upward import", "fastsvm.solvers.smo", "fastsvm.training.schedule")),
    "upward import inside a function": ("_core/helper.py", "def f():\n    from ..solvers import smo\n",
                                        ("upward import", "fastsvm._core.helper", "fastsvm.solvers.smo")),
    "solver imports solver": ("solvers/smo.py", "from .dcd import solve\n",
                              ("solver imports solver", "fastsvm.solvers.smo", "fastsvm.solvers.dcd")),
    "private name": ("training/trainer.py", "from ..solvers.base import _hidden\n",
                     ("private name", "fastsvm.training.trainer", "fastsvm.solvers.base._hidden")),
    "private attribute of an imported module": (
        "training/trainer.py", "from ..solvers import base\nx = base._hidden\n",
        ("private name", "fastsvm.training.trainer", "fastsvm.solvers.base._hidden")),
}


@pytest.mark.parametrize("case", CASES)
def test_the_checker_sees_each_kind_of_breach(case, tmp_path):
    relative, source, expected = CASES[case]
    path = PACKAGE / relative
    fake = tmp_path / relative
    fake.parent.mkdir(parents=True, exist_ok=True)
    fake.write_text(source)
    modules = package_modules()
    modules[module_name(path)] = fake
    assert expected in violations(modules)


def test_allowed_imports_are_not_breaches(tmp_path):
    """Down the layers, the shared solver pieces, private modules and public names pass."""
    allowed = {"solvers/dcd.py": "from .base import Solution\nfrom .._core._dcd import DualCD\n"
                                 "from .._core import _status\nfrom ..errors import FastSVMError\n"
                                 "x = _status.Status\n",
               "training/trainer.py": "from ..solvers import get_solver\nimport fastsvm._core._csr as csr\n"
                                      "from ..solvers.base import Solution\n"}
    modules = package_modules()
    for relative, source in allowed.items():
        fake = tmp_path / relative
        fake.parent.mkdir(parents=True, exist_ok=True)
        fake.write_text(source)
        modules[module_name(PACKAGE / relative)] = fake
    breaches = {v for v in violations(modules) if v[1] in ("fastsvm.solvers.dcd", "fastsvm.training.trainer")}
    assert not breaches
