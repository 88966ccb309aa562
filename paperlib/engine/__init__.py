"""Training and evaluation engine: configs, loops, checkpoints, distributed set-up."""
