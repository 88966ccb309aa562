"""Training losses: contrastive (InfoNCE), Long-CLIP (PCM), HiMo-CLIP (HiDe, MoLo), entailment
(MERU, HyCoCLIP, ARGENT)."""
