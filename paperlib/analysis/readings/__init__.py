"""The tutorials' readings: each paragraph that reads a number or a direction off a section's
results is rendered here, by one call, from those results (``paperlib.analysis.readings.hide``
for tutorial 01, ``monotonicity`` for 02, ``quickstart`` for 00). A word that states a direction
("falls", "above", "every tower") is chosen by a comparison of the numbers the sentence prints,
so the sentence cannot say more than its numbers; ``tests/test_readings.py`` checks each choice.
"""

from paperlib.analysis.readings.words import Reading, interval_text, listing, span, summary

__all__ = ["Reading", "interval_text", "listing", "span", "summary"]
