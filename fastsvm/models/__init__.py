"""The model record, the columns a model keeps, prediction and probability estimates."""
