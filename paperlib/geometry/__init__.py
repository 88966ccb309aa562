"""Hyperbolic (Lorentz) geometry, SPEC §2.1, and HoroPCA, SPEC §2.6."""
