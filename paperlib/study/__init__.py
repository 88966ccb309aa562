"""The CPU-scale study: :mod:`~paperlib.study.design` plans every run (the study's design),
:mod:`~paperlib.study.execution` trains, evaluates and resumes one, :mod:`~paperlib.study.parallel`
runs them all on worker processes and :mod:`~paperlib.study.summary` writes the curves and
claims; :mod:`~paperlib.study.decide` turns results files into claim verdicts; notebooks and
``paperlib.analysis`` read results through :mod:`~paperlib.study.reader` only."""
