"""The problems the solvers solve, built once for all of them: the SVM dual of ALGORITHMS.md
section 0 (dual), its presolve (presolve) and the small reductions every solver takes (vector)."""
