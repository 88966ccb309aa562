"""The CPU-scale study, in five stages, each a package that imports only from the stages before
it (and :mod:`~paperlib.study.paths`, which belongs to none):

- :mod:`~paperlib.study.plan`: the claims declared as data, the scales, the design of every run,
  the bases, the recipe grid, the δ and plateau rules;
- :mod:`~paperlib.study.run`: executing the runs (one, or all on worker processes or Ray, on a
  device), pre-training the bases, each run's exports, the code versions that train alike;
- :mod:`~paperlib.study.results`: the run folders and results files read as untrusted input,
  which runs count, the references and δ measured, the curves, the study's status;
- :mod:`~paperlib.study.decide`: the claims decided from the results (``claims.json``);
- :mod:`~paperlib.study.report`: the claims tables, the README's findings, the study page's
  paragraph, the comparison of a re-run and the variation that sets its tolerances.

:mod:`~paperlib.study.cli` (``python -m paperlib.study``) runs the stages in order,
:mod:`~paperlib.study.summary` writes what a study leaves beside its runs and
:mod:`~paperlib.study.compare` (``python -m paperlib.study.compare``) checks a re-run."""
