"""Encoders and heads: open_clip factory, Long-CLIP stretch, MERU-style hyperbolic head."""
