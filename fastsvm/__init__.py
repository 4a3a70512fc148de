"""fastsvm: LIBSVM/LIBLINEAR-compatible support vector machines with fast modern solvers."""
__version__ = "0.1.0"
from .datafile import load_svmlight_file, load_svmlight_files, dump_svmlight_file
from .modelfile import load_model, save_model
