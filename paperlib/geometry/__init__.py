"""Hyperbolic (Lorentz) geometry (``docs/methods/conventions.md#lorentz-model``) and HoroPCA
(``docs/methods/conventions.md#horopca``)."""
