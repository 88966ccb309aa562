"""Evaluation metrics computed on precomputed features (never on models)."""
