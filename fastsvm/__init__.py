"""fastsvm: LIBSVM/LIBLINEAR-compatible support vector machines with fast modern solvers.

The flow: data file -> CSR (load_svmlight_file) -> Params + fit_model (a solver by name) ->
Model -> model file (save_model / load_model) -> predict. The estimators wrap the same flow in
scikit-learn's API.
"""
__version__ = "0.1.0"

from .datafile import dump_svmlight_file, load_svmlight_file, load_svmlight_files
from .errors import FastSVMError, FileFormatError, ParameterError
from .model import Model
from .modelfile import load_model, save_model
from .params import Params
from .predict import decision_values, predict, predict_probability
from .train import fit_model

_ESTIMATORS = ("LinearSVC", "SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM", "RandomFourierFeatures",
               "Nystroem")


def __getattr__(name):
    # the estimators pull in scikit-learn (most of a second); the command-line programs never need it
    if name in _ESTIMATORS:
        from . import estimators
        return getattr(estimators, name)
    raise AttributeError(f"module 'fastsvm' has no attribute {name!r}")

__all__ = [
    "load_svmlight_file", "load_svmlight_files", "dump_svmlight_file",
    "Model", "load_model", "save_model",
    "Params", "fit_model", "predict", "decision_values", "predict_probability",
    *_ESTIMATORS,
    "FastSVMError", "FileFormatError", "ParameterError",
]
