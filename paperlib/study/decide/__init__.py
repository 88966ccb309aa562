"""The decide stage: the study's claims decided from its results (``claims.json``).

Takes in the valid runs, their per-item values and logs, and each claim's δ; hands on each
claim's effect, interval, testability, premise, trend and verdict, with the study's one error
statement and checks (:mod:`~paperlib.study.decide.decide` orchestrates the rule's steps).
Imports the plan, run and results stages."""
