"""MoLo under a 2-process gloo group equals the single-process loss on the whole batch.

Gradient convention checked here: every rank computes the same global loss and the
gradient-carrying gather sums the ranks' contributions in its backward, so rank r's input
gradient is WORLD × ∂L/∂(its slice) of the single-process loss; the (un-gathered)
logit_scale gets ∂L/∂s on every rank. DDP averages gradients over ranks, which turns both
into exactly the gradient of the global loss.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

from paperlib.engine.distributed import free_port
from paperlib.losses.contrastive import symmetric_cross_entropy
from paperlib.losses.himo import hide, molo_loss

WORLD = 2
BATCH = 6  # per rank
DIM = 5


def _inputs(BATCH: int, DIM: int):
    g = torch.Generator().manual_seed(0)
    img = F.normalize(torch.randn(WORLD * BATCH, DIM, generator=g, dtype=torch.float64), dim=1)
    scales = torch.logspace(0, -1, DIM, dtype=torch.float64)
    txt = torch.randn(WORLD * BATCH, DIM, generator=g, dtype=torch.float64) * scales + 0.2
    return img, F.normalize(txt, dim=1), torch.tensor(1.5, dtype=torch.float64)


def _worker(rank: int, port: int, out_path: str, BATCH: int, DIM: int) -> None:
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=WORLD,
        timeout=timedelta(seconds=60),
    )
    try:
        img, txt, scale = _inputs(BATCH, DIM)
        rows = slice(rank * BATCH, (rank + 1) * BATCH)
        results = {}
        for scope in ("global", "local"):
            a = img[rows].clone().requires_grad_()
            b = txt[rows].clone().requires_grad_()
            s = scale.clone().requires_grad_()
            out = molo_loss(a, b, s, tau=0.8, scope=scope)
            out.loss.backward()
            results[scope] = {
                "loss": out.loss.detach(),
                "m": out.m,
                "img_grad": a.grad,
                "txt_grad": b.grad,
                "scale_grad": s.grad,
                "hide": hide(txt[rows], 0.8, scope=scope).features,
            }
        torch.save(results, f"{out_path}.{rank}")
        dist.barrier()  # no rank tears gloo down while the other still has work in flight
    finally:
        dist.destroy_process_group()


@pytest.mark.distributed
@pytest.mark.parametrize(
    ("BATCH", "DIM"),
    [
        (BATCH, DIM),
        (4, 16),
    ],  # global batch > dim, and < dim (gradients reach the gather transposed)
)
def test_two_process_molo_matches_single_process(tmp_path, BATCH, DIM):
    out_path = str(tmp_path / "rank")
    mp.spawn(_worker, args=(free_port(), out_path, BATCH, DIM), nprocs=WORLD, join=True)
    ranks = [torch.load(f"{out_path}.{r}") for r in range(WORLD)]

    img, txt, scale = _inputs(BATCH, DIM)
    # single process, global scope: PCA over the concatenated batch
    a, b, s = (t.clone().requires_grad_() for t in (img, txt, scale))
    ref = molo_loss(a, b, s, tau=0.8)
    ref.loss.backward()
    full_hide = hide(txt, 0.8).features
    for r, res in enumerate(ranks):
        rows = slice(r * BATCH, (r + 1) * BATCH)
        got = res["global"]
        torch.testing.assert_close(got["loss"], ref.loss.detach())
        assert got["m"] == ref.m
        torch.testing.assert_close(got["img_grad"], WORLD * a.grad[rows])
        torch.testing.assert_close(got["txt_grad"], WORLD * b.grad[rows])
        torch.testing.assert_close(got["scale_grad"], s.grad)
        torch.testing.assert_close(got["hide"], full_hide)  # global hide returns all rows

    # local scope: per-rank PCA, contrastive terms on the gathered batch
    a, b, s = (t.clone().requires_grad_() for t in (img, txt, scale))
    parts = [hide(b[r * BATCH : (r + 1) * BATCH], 0.8) for r in range(WORLD)]
    comp = torch.cat([p.features for p in parts])
    loss = symmetric_cross_entropy(s.exp() * a @ b.T, 0.1) + symmetric_cross_entropy(
        s.exp() * a @ comp.T, 0.1
    )
    loss.backward()
    for r, res in enumerate(ranks):
        rows = slice(r * BATCH, (r + 1) * BATCH)
        got = res["local"]
        torch.testing.assert_close(got["loss"], loss.detach())
        assert got["m"] == parts[r].m
        torch.testing.assert_close(got["hide"], parts[r].features)
        torch.testing.assert_close(got["img_grad"], WORLD * a.grad[rows])
        torch.testing.assert_close(got["txt_grad"], WORLD * b.grad[rows])
        torch.testing.assert_close(got["scale_grad"], s.grad)
    # the two scopes genuinely differ on this batch
    assert not torch.allclose(ranks[0]["local"]["loss"], ranks[0]["global"]["loss"])
