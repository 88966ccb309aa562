"""``python -m paperlib.study``: see :mod:`paperlib.study.cli` and
:mod:`paperlib.study.plan.design`."""

import sys

from paperlib.study.cli import main

sys.exit(main())
