"""The errors fastsvm raises for bad input: each prints as one line a user can act on."""


class FastSVMError(ValueError):
    """Base class of fastsvm's errors: invalid data, model or parameters.

    A ValueError, so code that catches scikit-learn's ValueErrors catches these too. Its
    message is one line a user can act on.

    Parameters
    ----------
    *args : str
        The message, as ValueError's.

    Examples
    --------
    >>> import fastsvm
    >>> try:
    ...     fastsvm.fit_model([[0.0], [1.0]], [1.0], fastsvm.Params())
    ... except fastsvm.FastSVMError as error:
    ...     print(error)
    X has 2 rows but y has 1 values
    """


class FileFormatError(FastSVMError):
    """A data or model file that does not parse; str() is ``file:line: what is wrong``.

    Parameters
    ----------
    filename : str or path-like
        The file (the name a file object reports, for one without a path).
    line : int or None
        The 1-based line number, None when the problem is not on one line.
    message : str
        What is wrong.

    Attributes
    ----------
    filename : str
        The file.
    line : int or None
        The line number.
    message : str
        What is wrong, without the place.

    Examples
    --------
    >>> import io
    >>> import fastsvm
    >>> try:
    ...     fastsvm.load_svmlight_file(io.BytesIO(b"1 1:0.5\\n1 2:x\\n"))
    ... except fastsvm.FileFormatError as error:
    ...     print(error.line)
    2
    """

    def __init__(self, filename, line, message):
        self.filename = str(filename)
        self.line = line
        self.message = message
        where = self.filename if line is None else f"{self.filename}:{line}"
        super().__init__(f"{where}: {message}")


class ParameterError(FastSVMError):
    """A parameter value or combination the chosen solver cannot accept.

    Parameters
    ----------
    *args : str
        The message, as ValueError's.

    Examples
    --------
    >>> import fastsvm
    >>> try:
    ...     fastsvm.Params(C=-1.0).check()
    ... except fastsvm.ParameterError as error:
    ...     print(error)
    C <= 0
    """


class NotPositiveDefiniteError(FastSVMError):
    """A kernel matrix plus beta I (exact or approximated) that is not positive definite: a larger
    beta or a tighter approximation cures it."""


class DegenerateProblemError(FastSVMError):
    """The problem has no finite solution of the solver's kind (e.g. nu-SVC's margin scale is
    infinite); inside probability cross-validation LIBSVM carries on with NaN decision values."""
