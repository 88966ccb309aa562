"""The run stage: every planned run trained (or resumed), evaluated and recorded.

Takes in the plan's runs; hands on each run's folder under ``results/<scale>/`` (``run.done``,
``log.jsonl``, ``items.npz``, the benchmarks' JSON, held-out embeddings), the pre-trained bases,
and the record of code versions that train alike. Imports the plan only."""
