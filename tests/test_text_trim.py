"""The trimmed text path (``paperlib.models.clip.text_features``) against open_clip's own
``encode_text`` over the whole context: same features, same gradients, for every text
tower the study trains (77 and 248 tokens, Long-CLIP's residual table, the hyperbolic head)."""

from __future__ import annotations

import pytest
import torch

from paperlib.models.clip import create_model, text_features, trims_padding, used_length
from paperlib.models.hyperbolic import HyperbolicCLIP

SENTENCES = (
    "a large red circle with stripes sits left of a small blue square. "
    "the square is above a green triangle, which has dots. "
)
LONG = SENTENCES * 3  # about 80 tokens: past 77, well short of 248
TEXTS = ["a red circle", SENTENCES, "two objects on a grey background with a faint grid"]


def _model(context_length: int, seed: int = 0):
    torch.manual_seed(seed)
    bundle = create_model("paper-tiny-rn", context_length=context_length)
    # a trained residual table differs from the frozen base; make it differ here too
    res = getattr(bundle.model, "positional_embedding_res", None)
    if res is not None:
        with torch.no_grad():
            res.add_(0.1 * torch.randn_like(res))
    return bundle


def _grads(model, features_of, tokens, weights):
    model.zero_grad()
    (features_of(model, tokens) * weights).sum().backward()
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("context_length", [77, 248])
def test_trimmed_features_and_gradients_equal_open_clips(context_length):
    model, _, tokenizer = _model(context_length)
    tokens = tokenizer(TEXTS + ([LONG] if context_length > 77 else []))
    assert used_length(tokens) < context_length  # the trimmed path is really taken
    assert trims_padding(model)
    plain = model.encode_text(tokens)
    trimmed = text_features(model, tokens)
    torch.testing.assert_close(trimmed, plain, rtol=1e-5, atol=1e-6)
    weights = torch.randn_like(plain)
    expected = _grads(model, lambda m, t: m.encode_text(t), tokens, weights)
    got = _grads(model, text_features, tokens, weights)
    assert expected.keys() == got.keys()
    for name, grad in expected.items():  # float32 summation order differs: relative to scale
        scale = float(grad.abs().max())
        torch.testing.assert_close(got[name], grad, rtol=1e-4, atol=1e-6 * scale, msg=name)
    if context_length == 248:
        assert "positional_embedding_res" in got  # Long-CLIP's trainable tail gets gradient


def test_a_text_that_fills_the_context_is_not_cut():
    model, _, tokenizer = _model(77)
    tokens = tokenizer([LONG, "a dot"])
    assert used_length(tokens) == 77
    torch.testing.assert_close(text_features(model, tokens), model.encode_text(tokens))


def test_used_length_is_one_past_the_last_non_padding_column():
    generator = torch.Generator().manual_seed(1)
    for _ in range(50):
        tokens = torch.zeros(5, 30, dtype=torch.long)
        for row in range(5):
            length = int(torch.randint(0, 31, (1,), generator=generator))
            tokens[row, :length] = torch.randint(1, 100, (length,), generator=generator)
        naive = max([c + 1 for c in range(30) if (tokens[:, c] != 0).any()], default=1)
        assert used_length(tokens) == naive


def test_a_bidirectional_text_tower_takes_the_plain_path():
    model, _, tokenizer = _model(77)
    model.attn_mask = None  # every position would see the padding: nothing may be cut
    assert not trims_padding(model)
    tokens = tokenizer(TEXTS)
    torch.testing.assert_close(text_features(model, tokens), model.encode_text(tokens))


def test_the_hyperbolic_head_lifts_the_same_features():
    model, _, tokenizer = _model(77)
    head = HyperbolicCLIP(model, alpha_init=-1.0)
    tokens = tokenizer(TEXTS)
    expected = head._lift(model.encode_text(tokens, normalize=False), head.textual_alpha)
    torch.testing.assert_close(head.encode_text(tokens), expected, rtol=1e-5, atol=1e-6)
