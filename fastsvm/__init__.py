"""fastsvm: LIBSVM/LIBLINEAR-compatible support vector machines with fast modern solvers.

The flow: data file -> CSR (load_svmlight_file) -> Params + fit_model (a solver by name) ->
Model -> model file (save_model / load_model) -> predict. The estimators wrap the same flow in
scikit-learn's API.

Every public name is loaded on first use (PEP 562): ``import fastsvm`` costs almost nothing, so
the command-line programs, which a grid search starts once per cell, pay only for what they run.
"""
import importlib

__version__ = "0.1.0"

# public name -> the module (below fastsvm) that defines it
_PUBLIC = {
    **dict.fromkeys(("load_svmlight_file", "load_svmlight_files", "dump_svmlight_file"), "files.datafile"),
    "FastSVMError": "errors", "FileFormatError": "errors", "ParameterError": "errors",
    "Model": "models.model",
    "load_model": "files.modelfile", "save_model": "files.modelfile",
    "Params": "params",
    "predict": "models.prediction", "decision_values": "models.prediction", "predict_probability": "models.prediction",
    "fit_model": "training.trainer", "fit_path": "training.trainer", "fit_nu_path": "training.trainer",
    "grid_search": "tuning.grid", "GridResult": "tuning.grid",
    # the estimators pull in scikit-learn, by far the costliest import
    **dict.fromkeys(("LinearSVC", "SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM",
                     "RandomFourierFeatures", "Nystroem"), "estimators"),
}


def __getattr__(name):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'fastsvm' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__():
    return sorted([*globals(), *_PUBLIC])


__all__ = list(_PUBLIC)
