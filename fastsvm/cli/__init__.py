"""Command-line programs that take LIBSVM's options: fastsvm-train, fastsvm-predict, fastsvm-scale."""
