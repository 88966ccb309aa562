"""Training losses: contrastive (InfoNCE), HiMo-CLIP (HiDe, MoLo), entailment (MERU, HyCoCLIP, ARGENT)."""
