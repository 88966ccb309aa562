"""The results stage: the run folders and results files read as untrusted input.

Takes in what the run stage wrote; hands on each finished run's checked record with its
validity decided anew (collapsed, still rising), the references each claim is measured against
and its δ on the study's scale, the learning curves (``curves.json``), and where the study
stands. Imports the plan and the run stage."""
