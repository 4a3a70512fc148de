"""The Cython kernels' Python boundary, which ruff does not lint: every def / cpdef in
fastsvm/_core takes at most MAX_POSITIONAL positional parameters (the rest keyword-only, after
``*``, as pyproject.toml's max-positional-args asks of the Python layers), and no def returns a
tuple of more than MAX_RETURNED values (a record with named fields instead)."""
import re
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parent.parent / "fastsvm" / "_core"
MAX_POSITIONAL = 5        # pyproject.toml's [tool.ruff.lint.pylint] max-positional-args
MAX_RETURNED = 3

# (file, function) pairs allowed past the limits, each with its reason; none today
ALLOWED = {}

DEF = re.compile(r"^([ \t]*)(def|cpdef|cdef)\b([^(=\n]*?)\b(\w+)\s*\(", re.M)
RETURN = re.compile(r"^([ \t]*)return\b", re.M)


def _closing(text, start):
    """The index of the bracket that closes the one at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"unbalanced bracket at {start}")


def _top_level(text):
    """The comma-separated parts of ``text`` outside any bracket, stripped, empty ones dropped."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch in "([{") - (ch in ")]}")
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _expression(text, start):
    """The expression from ``start`` to the end of its logical line (brackets may span lines),
    without a trailing comment."""
    depth, out = 0, []
    for ch in text[start:]:
        if depth == 0 and ch in "\n#":
            break
        depth += (ch in "([{") - (ch in ")]}")
        out.append(ch)
    expr = "".join(out).strip()
    if expr.startswith("(") and _closing(expr, 0) == len(expr) - 1:
        expr = expr[1:-1]
    return expr


def signatures(text):
    """(line, indent, kind, name, positional count) of each def / cpdef / cdef function."""
    found = []
    for m in DEF.finditer(text):
        if re.search(r"\b(class|struct|enum|extern|union)\b", m.group(3)):
            continue
        opening = m.end() - 1
        positional = 0
        for param in _top_level(text[opening + 1:_closing(text, opening)]):
            if param.startswith("*"):            # *, *args or **kwargs: the positional ones end
                break
            positional += param not in ("self", "cls")
        found.append((text.count("\n", 0, m.start()) + 1, len(m.group(1)), m.group(2), m.group(4), positional))
    return found


def returned_counts(text, defs):
    """(line, enclosing function's kind and name, values) of each return in a function."""
    for m in RETURN.finditer(text):
        line, indent = text.count("\n", 0, m.start()) + 1, len(m.group(1))
        owners = [d for d in defs if d[0] <= line and d[1] < indent]
        if owners:                      # none: a docstring's line that starts with the word
            yield line, owners[-1][2], owners[-1][3], len(_top_level(_expression(text, m.end())))


def violations():
    out = []
    for path in sorted(CORE.glob("*.pyx")):
        text = path.read_text()
        defs = signatures(text)
        for line, _, kind, name, positional in defs:
            if kind != "cdef" and positional > MAX_POSITIONAL and (path.name, name) not in ALLOWED:
                out.append(f"{path.name}:{line} {name} takes {positional} positional parameters")
        for line, kind, name, n_values in returned_counts(text, defs):
            if kind != "cdef" and n_values > MAX_RETURNED and (path.name, name) not in ALLOWED:
                out.append(f"{path.name}:{line} {name} returns {n_values} values")
    return out


def test_core_signatures_keep_the_limits():
    assert violations() == []


@pytest.mark.parametrize("source, expected", [
    ("def f(a, b, c, d, e, f):\n    pass\n", 6),
    ("def f(a, b, c, d, e, *, f):\n    pass\n", 5),
    ("    def __cinit__(self, const double[::1] a not None, b, c=(1, 2),\n                  *args):\n", 3),
    ("cpdef double f(double x, int n=3) noexcept:\n", 2),
])
def test_positional_count(source, expected):
    assert signatures(source)[0][4] == expected


@pytest.mark.parametrize("source, expected", [
    ("def f():\n    return a, b, c, d\n", 4),
    ("def f():\n    return (a,\n            g(b, c), d)  # four\n", 3),
    ("def f():\n    return np.array([a, b, c, d])\n", 1),
])
def test_returned_count(source, expected):
    assert next(returned_counts(source, signatures(source)))[3] == expected
