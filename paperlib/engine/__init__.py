"""Training and evaluation engine: configs, loops, checkpoints, distributed set-up.

Importing the package registers the training methods and datasets (``engine.methods`` and
``engine.data`` fill ``engine.registry``), so ``engine.config`` finds every entry whichever
engine module is imported first.
"""

from paperlib.engine import data, methods  # noqa: F401  (they fill engine.registry)
