"""LIBSVM's data and model files, scaling, and atomic writes."""
