"""The plan: what the study runs and by which rules it will judge them, fixed before any run.

Takes in the papers' published numbers (``paperlib.tables``) and, for the recipe stage, the
recipe runs' validation curves; hands on the runs (:mod:`~paperlib.study.plan.design`), their
scales and bases, each arm's recipe, the claims declared as data, and the δ and plateau rules.
Imports no other stage."""
