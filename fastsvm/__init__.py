"""fastsvm: LIBSVM/LIBLINEAR-compatible support vector machines with fast modern solvers."""
__version__ = "0.1.0"
