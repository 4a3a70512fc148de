"""Kernel approximations and factorizations: random features, Nystroem, HODLR."""
