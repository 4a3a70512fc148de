"""What the three programs share: LIBSVM-style option scanning and one way to fail.

Every failure a user can cause (unknown option, bad value, missing or malformed file) ends as one
line on stderr and a non-zero exit; a usage error also prints the usage text.
"""
import errno
import os
import sys
import warnings

from ..errors import FastSVMError


class UsageError(Exception):
    """A command line that does not follow the usage: message, then usage, exit 1."""


def scan_options(argv, takes_value, flags=(), prefix_options=()):
    """Split LIBSVM-style options from the positional arguments.

    Options start with '-' and come first; each in ``takes_value`` consumes the next argument,
    each in ``flags`` stands alone, and options in ``prefix_options`` (like -wi) carry part of
    their name as a key. Returns ([(name, value)], positional).
    """
    options, i = [], 0
    while i < len(argv) and argv[i].startswith("-") and len(argv[i]) > 1:
        arg = argv[i]
        name = arg[1:]
        if name in flags:
            options.append((name, None))
            i += 1
            continue
        prefix = next((p for p in prefix_options if name.startswith(p) and len(name) > len(p)), None)
        if name not in takes_value and prefix is None:
            raise UsageError(f"unknown option: {arg}")
        if i + 1 >= len(argv):
            raise UsageError(f"option {arg} needs a value")
        options.append((name, argv[i + 1]))
        i += 2
    return options, argv[i:]


def number(option, text, kind=float, minimum=None, choices=None):
    """Parse an option value strictly (LIBSVM's atof would read 'abc' as 0)."""
    try:
        value = kind(text)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise UsageError(f"invalid value for -{option}: {text!r} (expected {what})") from None
    if kind is float and value != value:
        raise UsageError(f"invalid value for -{option}: {text!r}")
    if choices is not None and value not in choices:
        raise UsageError(f"invalid value for -{option}: {text!r} (expected one of "
                         f"{', '.join(str(c) for c in choices)})")
    if minimum is not None and value < minimum:
        raise UsageError(f"invalid value for -{option}: {text!r} (must be >= {minimum})")
    return value


def _one_line_warning(prog):
    """A warnings.showwarning that prints ``prog: warning: message`` on one line: a user of the
    program has no use for Python's source file and line."""
    def show(message, category, filename, lineno, file=None, line=None):  # noqa: PLR0917 -- warnings.showwarning's
        text = " ".join(str(message).split())
        print(f"{prog}: warning: {text}", file=sys.stderr if file is None else file)
    return show


def run(main, prog, usage, argv=None):
    """Run ``main(argv)`` and turn every expected failure into one stderr line and an exit code.
    ``usage`` is the usage text, or a function that builds it when it is shown."""
    argv = sys.argv[1:] if argv is None else argv
    usage_text = usage if callable(usage) else (lambda: usage)
    if "--help" in argv:  # -h is LIBSVM's shrinking flag; --help asks for the usage
        print(usage_text(), end="")
        return 0
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning(prog)
            main(argv)
    except UsageError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        print(usage_text(), file=sys.stderr, end="")
        return 1
    except FastSVMError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    except FileNotFoundError as e:
        print(f"{prog}: can't open file {e.filename}: no such file", file=sys.stderr)
        return 1
    except IsADirectoryError as e:
        print(f"{prog}: can't open file {e.filename}: it is a directory", file=sys.stderr)
        return 1
    except PermissionError as e:
        print(f"{prog}: can't open file {e.filename}: permission denied", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # the reader of our output went away (e.g. `| head`): not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as e:
        where = f" {e.filename}" if e.filename else ""
        reason = e.strerror or errno.errorcode.get(e.errno, str(e))
        print(f"{prog}: I/O error{where}: {reason}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"{prog}: out of memory", file=sys.stderr)
        return 1
    return 0
