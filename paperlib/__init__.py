"""paperlib: the library behind the HiMo-CLIP and ARGENT companion notebooks.

Data flows one way: data -> models -> losses -> engine -> notebooks/figures.
Import from the submodules (``paperlib.losses.himo``, ``paperlib.geometry.lorentz``...).
"""

__version__ = "0.1.0"
