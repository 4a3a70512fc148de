"""Command-line programs that take LIBSVM's options: fastsvm-train, fastsvm-predict, fastsvm-scale,
fastsvm-grid."""
from .interrupt import defer_until_entry

defer_until_entry()  # first: a Ctrl-C while the program's modules import is noted, not raised
