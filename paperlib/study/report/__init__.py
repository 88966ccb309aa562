"""The report stage: what the study found, written from ``claims.json``.

Takes in the decided claims (and, for a re-run, both results folders); hands on the claims
tables, the README's findings, the study page's paragraph, the synthesis of what reproduced, and
the comparison of a re-run with its tolerances from the measured variation. Imports every other
stage."""
