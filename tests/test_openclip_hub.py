"""open_clip models by ``hf-hub:ORG/REPO`` id, read offline from a Hugging Face cache.

The cache is built in ``tmp_path`` with the hub's layout
(``models--ORG--REPO/refs/main`` holding a commit hash, ``snapshots/<hash>/`` the files), so
nothing is downloaded: ``HF_HUB_OFFLINE=1`` makes ``huggingface_hub`` resolve ``main`` from the
cache alone.
"""

from __future__ import annotations

import json

import huggingface_hub.constants
import pytest
import torch
from safetensors.torch import save_file

from paperlib.models.clip import MODEL_CONFIG_DIR, create_model, encode_image, encode_text

COMMIT = "0123456789abcdef0123456789abcdef01234567"
CONFIG = "open_clip_config.json"


def _fake_hub(tmp_path, monkeypatch, repo: str, files: dict[str, object]):
    """Point the hub at an offline cache holding ``files`` for ``repo``; returns the cache."""
    cache = tmp_path / "hf" / "hub"
    root = cache / f"models--{repo.replace('/', '--')}"
    (root / "refs").mkdir(parents=True)
    (root / "refs" / "main").write_text(COMMIT)
    snapshot = root / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    for name, content in files.items():
        if name == CONFIG:
            (snapshot / name).write_text(json.dumps(content))
        elif name.endswith(".safetensors"):
            save_file({k: v.contiguous() for k, v in content.items()}, str(snapshot / name))
        else:
            torch.save(content, snapshot / name)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # huggingface_hub reads these variables once, at import
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    return cache


def _source_model():
    torch.manual_seed(7)
    bundle = create_model("paper-tiny")
    with torch.no_grad():  # move every tensor off its init so a mix-up would show
        for param in bundle.model.parameters():
            param.add_(0.05 * torch.randn_like(param))
    config = {
        "model_cfg": json.loads((MODEL_CONFIG_DIR / "paper-tiny.json").read_text()),
        "preprocess_cfg": {"mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25]},
    }
    return bundle, config


@pytest.mark.parametrize("weights", ["open_clip_pytorch_model.bin", "open_clip_model.safetensors"])
def test_hf_hub_model_gives_the_embeddings_of_the_saved_model(tmp_path, monkeypatch, weights):
    source, config = _source_model()
    state = {k: v.clone() for k, v in source.model.state_dict().items()}
    _fake_hub(tmp_path, monkeypatch, "paperlib-test/paper-tiny", {CONFIG: config, weights: state})
    hub = create_model("hf-hub:paperlib-test/paper-tiny")
    images = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    captions = ["a red circle", "two blue squares left of a green triangle"]
    tokens = hub.tokenizer(captions)
    assert tokens.shape == (2, 77) and torch.equal(tokens, source.tokenizer(captions))
    with torch.no_grad():
        features = [
            (encode_image(model, images), encode_text(model, tokens))
            for model in (hub.model.eval(), source.model.eval())
        ]
    torch.testing.assert_close(features[0][0], features[1][0], rtol=0, atol=1e-6)
    torch.testing.assert_close(features[0][1], features[1][1], rtol=0, atol=1e-6)
    normalize = [t for t in hub.preprocess.transforms if type(t).__name__ == "Normalize"][0]
    assert list(normalize.mean) == [0.5, 0.5, 0.5]  # the repository's preprocess config


def test_hf_hub_model_at_248_tokens_keeps_short_captions(tmp_path, monkeypatch):
    source, config = _source_model()
    weights = {"open_clip_pytorch_model.bin": source.model.state_dict()}
    _fake_hub(tmp_path, monkeypatch, "paperlib-test/paper-tiny", {CONFIG: config, **weights})
    long = create_model("hf-hub:paperlib-test/paper-tiny", context_length=248)
    assert long.model.positional_embedding.shape[0] == 248
    assert long.model.positional_embedding_res.requires_grad
    captions = ["a small dog", "a red circle left of a blue square"]
    with torch.no_grad():
        ours = encode_text(long.model.eval(), long.tokenizer(captions))
        theirs = encode_text(source.model.eval(), source.tokenizer(captions))
    torch.testing.assert_close(ours, theirs, rtol=0, atol=1e-5)


def test_hf_hub_repository_without_weights_is_refused(tmp_path, monkeypatch):
    _, config = _source_model()
    _fake_hub(tmp_path, monkeypatch, "paperlib-test/no-weights", {CONFIG: config})
    # open_clip alone would warn and return random weights
    with pytest.raises(FileNotFoundError, match="hf-hub:paperlib-test/no-weights.*weights"):
        create_model("hf-hub:paperlib-test/no-weights")


def test_hf_hub_repository_missing_from_the_offline_cache_is_refused(tmp_path, monkeypatch):
    _fake_hub(tmp_path, monkeypatch, "paperlib-test/other", {})
    with pytest.raises(FileNotFoundError, match="hf-hub:paperlib-test/absent.*config"):
        create_model("hf-hub:paperlib-test/absent")


def test_hf_hub_model_takes_no_separate_weights():
    with pytest.raises(ValueError, match="pretrained must be None"):
        create_model("hf-hub:paperlib-test/paper-tiny", "openai")


def test_gelu_trained_tag_on_a_quickgelu_architecture_is_refused():
    # the reverse of OpenAI weights on a GELU model: LAION's B/16 was trained with GELU
    with pytest.raises(ValueError, match="trained with GELU.*use model 'ViT-B-16'"):
        create_model("ViT-B-16-quickgelu", "laion2b_s34b_b88k")
