"""scikit-learn compatible estimators over fastsvm's solvers."""
from .linear import LinearSVC

__all__ = ["LinearSVC"]
