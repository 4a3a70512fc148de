"""Typed Cython kernels: every hot loop of fastsvm, nogil, one concern per module."""
