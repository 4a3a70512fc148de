"""The errors fastsvm raises for bad input: each prints as one line a user can act on."""


class FastSVMError(ValueError):
    """Base class: invalid data, model or parameters."""


class FileFormatError(FastSVMError):
    """A data or model file that does not parse; str() is ``file:line: what is wrong``."""

    def __init__(self, filename, line, message):
        self.filename = str(filename)
        self.line = line
        self.message = message
        where = self.filename if line is None else f"{self.filename}:{line}"
        super().__init__(f"{where}: {message}")


class ParameterError(FastSVMError):
    """A parameter value or combination the chosen solver cannot accept."""


class NotPositiveDefiniteError(FastSVMError):
    """A kernel matrix plus beta I (exact or approximated) that is not positive definite: a larger
    beta or a tighter approximation cures it."""


class DegenerateProblemError(FastSVMError):
    """The problem has no finite solution of the solver's kind (e.g. nu-SVC's margin scale is
    infinite); inside probability cross-validation LIBSVM carries on with NaN decision values."""
