"""``python -m paperlib.study``: see :mod:`paperlib.study.runner`."""

import sys

from paperlib.study.runner import main

sys.exit(main())
