"""The exit statuses of the commands, one meaning each, for scripts that act on them (a
scheduler's requeue script, CI); ``docs/full-scale.md`` lists them and a test runs each."""

from __future__ import annotations

OK = 0
DID_NOT_REPRODUCE = 1  # study.compare, study.run.equivalence: the runs differ beyond tolerance
REFUSED = 2  # an input, config, file or option refused by name; a failed run or notebook cell
NOT_FINITE = 3  # training stopped at a NaN or inf loss or weight, before any checkpoint keeps it
STORAGE = 4  # a write failed (full disk or quota, file-size limit, unwritable file), file named
INTERRUPTED = 75  # training stopped by SIGTERM or SIGINT after saving last.pt: run it again
