"""The problems the solvers solve, built once for all of them: the SVM dual of docs/algorithms.md
§0 (dual), its presolve (presolve), the small reductions every solver takes (vector), the
linear primal solvers' dual point (linear_dual) and the LP-SVM as a linear program (hinge_lp)."""
