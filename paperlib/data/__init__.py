"""Datasets: the procedural hierarchical world and loaders for the real datasets (SPEC §3)."""
