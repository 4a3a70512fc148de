"""The trainer: a fit as subproblems for the solvers, and the models assembled from their solutions."""
