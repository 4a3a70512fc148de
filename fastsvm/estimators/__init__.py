"""scikit-learn compatible estimators over fastsvm's solvers."""
from .approximation import Nystroem, RandomFourierFeatures
from .kernel import SVC, SVR, NuSVC, NuSVR, OneClassSVM
from .linear import LinearSVC

__all__ = ["LinearSVC", "SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM", "RandomFourierFeatures", "Nystroem"]
