"""Cross-validation and grid search."""
