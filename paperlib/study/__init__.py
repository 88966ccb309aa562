"""The CPU-scale study: :mod:`~paperlib.study.runner` plans, trains, evaluates and resumes;
:mod:`~paperlib.study.decide` turns results files into claim verdicts; notebooks and
``paperlib.analysis`` read results through :mod:`~paperlib.study.reader` only."""
