"""Shared test set-up: offline hub, few threads, figures to build/, paths to the real evaluation
data."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("PAPERLIB_FIGURES", "build/test-figures")  # tests never rewrite figures/

import pytest  # noqa: E402
import torch  # noqa: E402

# the cores shared among pytest-xdist's workers (make test runs one per core)
WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
torch.set_num_threads(max(1, min(2, os.cpu_count() or 1) // WORKERS))

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("PAPERLIB_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real evaluation data beside the checkout (skip cleanly where it is absent)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real evaluation data not found at {SHARED_DATA}")
    return SHARED_DATA
