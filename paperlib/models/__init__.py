"""Encoders and heads: open_clip factory, Long-CLIP stretch, MERU-style hyperbolic head."""

import math

# ln 100: open_clip's and MERU's clamp on the log logit scale, and HiMo-CLIP's reset value
LOGIT_SCALE_MAX = math.log(100.0)
