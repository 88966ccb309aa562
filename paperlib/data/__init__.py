"""Datasets: the procedural hierarchical world and loaders for the real datasets
(``docs/methods/conventions.md#dataset-formats``)."""
