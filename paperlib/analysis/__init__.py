"""Analyses behind the tutorial notebooks: small pure functions on features and logs."""
