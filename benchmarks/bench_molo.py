"""MoLo cost against plain InfoNCE, and HiDe's share of a small-model training step.

Prints, from one run at torch.set_num_threads(2) (``--threads`` to change):
1. MoLo (forward+backward) time / InfoNCE (forward+backward) time at N=1024, d=768 and
   N=256, d=512 (goal: <= 3 at 1024x768); for comparison MoLo(detach=True), MoLo through
   explicit u' features (``scope="local"``, which outside torch.distributed is the same
   loss computed as HiDe + a second logits matmul), and a MoLo whose HiDe is a plain full
   ``torch.linalg.svd``, and the largest loss/gradient difference between our MoLo and the
   SVD one (must be float tolerance).
2. The breakdown, each part timed on its own, as a fraction of InfoNCE: the Gram matrix,
   its ``eigh``, one symmetric cross-entropy (fwd+bwd) with the ``.T`` column pass and
   with a column pass over a (1, N, N) view, what remains of MoLo after InfoNCE, Gram
   and eigh (comp logits, their cross-entropy, the projector gradient), and the bare
   matrix products of the comp term (forward and exact backward, shapes as in
   ``paperlib.losses._himo_fast._ProjectedProduct``; q = min(m, d − m); N ≥ d only, else nan).
   "Floor" = 1 + Gram + eigh + one CE + those products: what this exact formulation
   costs with no overhead.
   The same case is repeated with an anisotropic text batch (singular values ∝ 1/k),
   where m is small and so is q.
3. HiDe (forward+backward) time / one training step (forward, MoLo, backward, AdamW) of
   the ``paper-tiny`` CPU model at batch 256.
Timings alternate between the variants and report medians, so machine load hits all alike.

    .venv/bin/python benchmarks/bench_molo.py [--repeats 15] [--threads 2] [--skip-training-step]
        [--quick]

``--quick`` runs every case at a small size (N=64, d=32; batch 16) to check the script, not
to measure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
import torch.nn.functional as F

from paperlib.losses.contrastive import infonce_loss, symmetric_cross_entropy
from paperlib.losses.himo import hide, molo_loss
from paperlib.models.clip import create_model


def svd_molo(img, txt, logit_scale, tau=0.9, label_smoothing=0.1):
    """MoLo with the straightforward HiDe: full SVD of the centred batch, autograd through it."""
    mean = txt.mean(0)
    x = txt - mean
    _, s, vt = torch.linalg.svd(x, full_matrices=False)
    ratio = (s**2).cumsum(0) / (s**2).sum().clamp_min(1e-8)
    m = min(int((ratio < tau).sum()) + 1, s.shape[0])
    comp = x @ vt[:m].T @ vt[:m] + mean
    scale = logit_scale.exp()
    return symmetric_cross_entropy(scale * img @ txt.T, label_smoothing) + symmetric_cross_entropy(
        scale * img @ comp.T, label_smoothing
    )


def comp_products(n: int, d: int, q: int, g: torch.Generator):
    """The comp term's matrix products (q = width of the smaller eigenvector block), bare."""
    a, x, w = (
        torch.randn(n, d, generator=g),
        torch.randn(n, d, generator=g),
        torch.randn(n, n, generator=g),
    )
    v_s, v_o = torch.randn(d, q, generator=g), torch.randn(d, d - q, generator=g)

    def run():
        lv, rv = a @ v_s, x @ v_s  # forward: coordinates on the block and the rank-q logits
        _ = torch.addmm(w, lv, rv.T, alpha=-1.0)
        w_r, wt_l = w @ rv, w.T @ lv  # backward: direct terms
        w_p = v_o @ (v_o.T @ (a.T @ w_r + x.T @ wt_l))  # projector term through C = XᵀX
        _ = w_r @ v_s.T
        _ = torch.cat([wt_l + x @ w_p, rv], 1) @ torch.cat([v_s.T, w_p.T], 0)

    return run


def column_view_sce(logits, label_smoothing):
    """symmetric_cross_entropy's value, text→image CE over class dim 1 of a (1, N, N) view."""
    labels = torch.arange(logits.shape[0])
    rows = F.cross_entropy(logits, labels, label_smoothing=label_smoothing)
    cols = F.cross_entropy(logits[None], labels[None], label_smoothing=label_smoothing)
    return 0.5 * (rows + cols)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_times(fns: dict, repeats: int) -> dict:
    for fn in fns.values():  # warm-up
        fn()
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            times[name].append(timed(fn))
    return {name: statistics.median(ts) for name, ts in times.items()}


def loss_case(n: int, d: int, repeats: int, anisotropic: bool = False) -> None:
    g = torch.Generator().manual_seed(0)
    img = F.normalize(torch.randn(n, d, generator=g), dim=1).requires_grad_()
    spectrum = 1.0 / torch.arange(1, d + 1) if anisotropic else torch.ones(d)
    txt = F.normalize(torch.randn(n, d, generator=g) * spectrum, dim=1).requires_grad_()
    m = molo_loss(img, txt, torch.tensor(4.6052)).m
    scale = torch.tensor(4.6052, requires_grad=True)
    x = (txt - txt.mean(0)).detach()
    side = x if d <= n else x.T
    gram = side.T @ side
    logits = (scale.exp() * img @ txt.T).detach().requires_grad_()

    def run(loss_fn):
        def step():
            img.grad = txt.grad = scale.grad = None
            loss_fn().backward()

        return step

    def ce_step(ce):
        def step():
            logits.grad = None
            ce(logits, 0.1).backward()

        return step

    fns = {
        "infonce": run(lambda: infonce_loss(img, txt, scale, 0.1)),
        "molo": run(lambda: molo_loss(img, txt, scale).loss),
        "molo_detach": run(lambda: molo_loss(img, txt, scale, detach=True).loss),
        "molo_features": run(lambda: molo_loss(img, txt, scale, scope="local").loss),
        "molo_svd": run(lambda: svd_molo(img, txt, scale)),
        "gram": lambda: side.T @ side,
        "eigh": lambda: torch.linalg.eigh(gram),
        "ce": ce_step(symmetric_cross_entropy),
        "ce_view": ce_step(column_view_sce),
    }
    if n >= d:  # the (dim, dim) Gram, the products comp_products times
        fns["products"] = comp_products(n, d, min(m, d - m), g)
    t = median_times(fns, repeats)

    grads = []
    for fn in (lambda: molo_loss(img, txt, scale).loss, lambda: svd_molo(img, txt, scale)):
        img.grad = txt.grad = None
        loss = fn()
        loss.backward()
        grads.append((loss.detach(), img.grad.clone(), txt.grad.clone()))
    (l1, gi1, gt1), (l2, gi2, gt2) = grads
    r = {name: time_s / t["infonce"] for name, time_s in t.items()}
    label = "anisotropic" if anisotropic else "isotropic"
    print(
        f"N={n:5d} d={d:4d} {label} m={m:4d} | InfoNCE {t['infonce'] * 1e3:7.1f} ms | "
        f"MoLo {t['molo'] * 1e3:7.1f} ms | MoLo/InfoNCE {r['molo']:5.2f} | "
        f"detach=True {r['molo_detach']:5.2f} | via u' {r['molo_features']:5.2f} | "
        f"full-SVD {r['molo_svd']:5.2f} | "
        f"|Δloss| {abs(l1 - l2).item():.1e} |Δgrad| "
        f"{max((gi1 - gi2).abs().max().item(), (gt1 - gt2).abs().max().item()):.1e}"
    )
    rest = r["molo"] - 1 - r["gram"] - r["eigh"]
    floor = 1 + r["gram"] + r["eigh"] + r["ce"] + r.get("products", float("nan"))
    print(
        f"    breakdown / InfoNCE: Gram {r['gram']:4.2f} | eigh({gram.shape[0]}) {r['eigh']:4.2f}"
        f" | rest of MoLo beyond InfoNCE+Gram+eigh {rest:4.2f} | one symmetric CE: "
        f"{r['ce']:4.2f} (column view {r['ce_view']:4.2f}) | comp products bare "
        f"{r.get('products', float('nan')):4.2f} | floor {floor:4.2f}"
    )


def training_step_case(batch: int, repeats: int) -> None:
    torch.manual_seed(0)
    model, _, _ = create_model("paper-tiny")
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    size = model.visual.image_size
    size = size[0] if isinstance(size, tuple) else size
    images = torch.randn(batch, 3, size, size)
    tokens = torch.randint(1, 49000, (batch, 77))

    def step():
        opt.zero_grad(set_to_none=True)
        img = F.normalize(model.encode_image(images), dim=-1)
        txt = F.normalize(model.encode_text(tokens), dim=-1)
        molo_loss(img, txt, model.logit_scale).loss.backward()
        opt.step()

    with torch.no_grad():
        feats = F.normalize(model.encode_text(tokens), dim=-1)
    upstream = torch.randn_like(feats)
    leaf = feats.clone().requires_grad_()

    def hide_only():
        leaf.grad = None
        (hide(leaf).features * upstream).sum().backward()

    t = median_times({"step": step, "hide": hide_only}, repeats)
    print(
        f"paper-tiny batch {batch} (dim {feats.shape[1]}): training step "
        f"{t['step'] * 1e3:7.1f} ms | HiDe fwd+bwd {t['hide'] * 1e3:6.2f} ms | "
        f"HiDe share {100 * t['hide'] / t['step']:5.2f} %"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-training-step", action="store_true")
    parser.add_argument("--quick", action="store_true", help="small sizes: a check, not a measure")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(
        f"torch {torch.__version__}, threads {torch.get_num_threads()}, medians of "
        f"{args.repeats}, load average {os.getloadavg()[0]:.2f} at start"
    )
    sizes, batch = (((64, 32), (32, 48)), 16) if args.quick else (((1024, 768), (256, 512)), 256)
    for n, d in sizes:
        loss_case(n, d, args.repeats)
    loss_case(*sizes[0], args.repeats, anisotropic=True)
    if not args.skip_training_step:
        training_step_case(batch, args.repeats)
    print(f"load average {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
