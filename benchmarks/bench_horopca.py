"""HoroPCA: paperlib's implementation vs a straightforward version of the published algorithm.

Same input for both: N points in D dims on the unit-curvature hyperboloid (a noisy 3-ary
tree of depth 4 in tangent space, seed 0). The straightforward version follows the published
HoroPCA code's algorithm (written here from its description, not copied): Fréchet mean by
Riemannian gradient descent in the Poincaré ball (lr 1e-2, tol 1e-5, at most 5000 steps,
retrying other step sizes), centring by circle inversion, random ideal points made
orthonormal by Gram-Schmidt, horospherical projection through the geodesic spanned by the
ideal points (Minkowski orthogonal projection + geodesic shift), objective = mean squared
pairwise Poincaré distance of the projections on (N, N, D) tensors, Adam lr 5e-2, 500 steps,
float64. Distortion = mean relative pairwise-distance error (paperlib.geometry.horopca).

Usage: python benchmarks/bench_horopca.py [--quick] [--n 500] [--dim 64]
``--quick`` runs 20 Adam steps of the straightforward version and extrapolates its time
linearly to 500 steps; its distortion is then that of the 20-step run.
"""

from __future__ import annotations

import argparse
import time

import torch

from paperlib.geometry.horopca import distortion, horopca, poincare_pairwise_dist
from paperlib.geometry.lorentz import exp_map0, pairwise_dist, to_poincare

# ---------------------------------------------------------------- input data


def tree_points(n: int, dim: int, seed: int = 0) -> torch.Tensor:
    """(n, dim) float64 space parts (curvature −1): random root-to-node paths of a 3-ary tree."""
    gen = torch.Generator().manual_seed(seed)
    n_nodes = 1 + 3 + 9 + 27 + 81
    directions = torch.randn(n_nodes, dim, generator=gen, dtype=torch.float64)
    directions = directions / directions.norm(dim=1, keepdim=True)
    points = []
    for _ in range(n):
        depth = int(torch.randint(1, 5, (1,), generator=gen))
        node, v = 0, torch.zeros(dim, dtype=torch.float64)
        for _ in range(depth):
            node = 3 * node + 1 + int(torch.randint(0, 3, (1,), generator=gen))
            v = v + 0.8 * directions[node]
        points.append(v + 0.05 * torch.randn(dim, generator=gen, dtype=torch.float64))
    return exp_map0(torch.stack(points) + 0.3, 1.0)


# ------------------------------------------- straightforward published algorithm (only here)


def _mobius_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    xy = (x * y).sum(-1, keepdim=True)
    x2, y2 = (x * x).sum(-1, keepdim=True), (y * y).sum(-1, keepdim=True)
    num = (1 + 2 * xy + y2) * x + (1 - x2) * y
    return num / (1 + 2 * xy + x2 * y2).clamp_min(1e-15)


def _ball_dist(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    norm = _mobius_add(-x, y).norm(dim=-1)
    return 2 * torch.atanh(norm.clamp(-1 + 1e-15, 1 - 1e-15))


def _ball_log(base: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    diff = _mobius_add(-base, y)
    norm = diff.norm(dim=-1, keepdim=True).clamp(1e-15, 1 - 1e-15)
    conformal = 2 / (1 - (base * base).sum(-1, keepdim=True)).clamp_min(1e-15)
    return 2 / conformal * torch.atanh(norm) * diff / norm


def _ball_exp(base: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    norm = v.norm(dim=-1, keepdim=True).clamp_min(1e-15)
    conformal = 2 / (1 - (base * base).sum(-1, keepdim=True)).clamp_min(1e-15)
    return _mobius_add(base, torch.tanh(conformal * norm / 2) * v / norm)


def naive_frechet_mean(z: torch.Tensor, lr: float = 1e-2, tol: float = 1e-5) -> torch.Tensor:
    start = z.mean(0, keepdim=True)
    for step_size in [lr * 2, lr * 4, lr * 8, lr * 0.5, lr * 1.0, lr * 1.5]:
        mu = start
        for _ in range(5000):
            delta = step_size / z.shape[0] * _ball_log(mu, z).sum(0, keepdim=True)
            mu = _ball_exp(mu, delta)
            if float(delta.norm()) < tol:
                return mu
    return start


def naive_centre(z: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
    centre = mu / (mu * mu).sum(-1, keepdim=True)
    r2 = (centre * centre).sum(-1, keepdim=True) - 1
    u = z - centre
    return r2 / (u * u).sum(-1, keepdim=True) * u + centre


def _minkowski(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x @ y.T - 2 * torch.outer(x[:, 0], y[:, 0])


def _minkowski_projection(basis: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    coefs = torch.linalg.solve(_minkowski(basis, basis), _minkowski(basis, x))
    return coefs.T @ basis


def naive_horo_projection(ideals: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """Poincaré points (N, D) → their horospherical projections (N, D) in the ball."""
    sq = (z * z).sum(-1, keepdim=True)
    x = torch.cat((1 + sq, 2 * z), -1) / (1 - sq).clamp_min(1e-15)
    light = torch.cat((torch.ones(ideals.shape[0], 1, dtype=z.dtype), ideals), -1)
    spine = _minkowski_projection(light, x)
    spine = spine / torch.sqrt(-(spine * spine).sum(-1, keepdim=True) + 2 * spine[:, :1] ** 2)
    inner = -((spine * x).sum(-1) - 2 * spine[:, 0] * x[:, 0])
    spine_dist = torch.acosh(inner.clamp_min(1.0))
    origin = torch.zeros_like(x[0])
    origin[0] = 1
    chords = origin - spine
    tangents = chords - _minkowski_projection(light, chords)
    norms = torch.sqrt((tangents * tangents).sum(-1) - 2 * tangents[:, 0] ** 2)
    unit = tangents / norms[:, None]
    proj = spine * torch.cosh(spine_dist)[:, None] + unit * torch.sinh(spine_dist)[:, None]
    return proj[:, 1:] / (1 + proj[:, :1]).clamp_min(1e-15)


def _gram_schmidt(rows: list[torch.Tensor]) -> torch.Tensor:
    basis: list[torch.Tensor] = []
    for v in rows:
        for q in basis:
            v = v - (q @ v) / (q @ q).clamp_min(1e-15) * q
        basis.append(v / v.norm().clamp_min(1e-15))
    return torch.stack(basis)


def naive_horopca(z: torch.Tensor, k: int, steps: int, seed: int = 0) -> torch.Tensor:
    """Adam on the mean squared pairwise distance of the projections; returns (N, D)."""
    torch.manual_seed(seed)
    rows = [torch.nn.Parameter(torch.randn(z.shape[1], dtype=z.dtype)) for _ in range(k)]
    optimiser = torch.optim.Adam(rows, lr=5e-2)
    for _ in range(steps):
        proj = naive_horo_projection(_gram_schmidt(rows), z)
        loss = -_ball_dist(proj[:, None, :], proj[None, :, :]).pow(2).mean()
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(rows, 1e5)
        optimiser.step()
    with torch.no_grad():
        return naive_horo_projection(_gram_schmidt(rows), z)


# ---------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 naive steps, extrapolated")
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--steps", type=int, default=500, help="Adam steps of the naive version")
    args = parser.parse_args(argv)
    naive_steps = 20 if args.quick else args.steps

    x = tree_points(args.n, args.dim)

    times = []
    for _ in range(3):  # median of 3 runs: the fast side is sensitive to load spikes
        start = time.perf_counter()
        ours = horopca(x, curv=1.0, n_components=2)
        times.append(time.perf_counter() - start)
    t_ours = sorted(times)[1]
    # distances are measured in the centred frame (an isometry, so equal to the input's)
    d_orig = pairwise_dist(x, x, 1.0, rel_floor=0.0)
    dist_ours = distortion(d_orig, poincare_pairwise_dist(ours.poincare))

    start = time.perf_counter()
    z = to_poincare(x, 1.0)
    centred = naive_centre(z, naive_frechet_mean(z))
    t_mean = time.perf_counter() - start
    start = time.perf_counter()
    proj = naive_horopca(centred, k=2, steps=naive_steps)
    t_opt = time.perf_counter() - start
    t_naive = t_mean + t_opt * args.steps / naive_steps
    dist_naive = distortion(
        poincare_pairwise_dist(centred).clamp_min(0), poincare_pairwise_dist(proj)
    )

    print(f"HoroPCA N={args.n} D={args.dim} k=2, float64, {torch.get_num_threads()} threads")
    print(f"{'':28s}{'time (s)':>12s}{'distortion':>12s}")
    print(f"{'paperlib horopca (median/3)':28s}{t_ours:12.2f}{dist_ours:12.4f}")
    label = f"straightforward ({args.steps} Adam)"
    print(f"{label:28s}{t_naive:12.2f}{dist_naive:12.4f}")
    print(
        f"speed-up: {t_naive / t_ours:.0f}x; distortion ratio ours/naive: "
        f"{dist_ours / dist_naive:.3f}"
    )
    if args.quick:
        print(
            f"(--quick: the straightforward version ran {naive_steps} of {args.steps} Adam "
            f"steps in {t_opt:.1f} s, extrapolated linearly; Fréchet mean {t_mean:.1f} s "
            f"measured; its distortion is that of the {naive_steps}-step run)"
        )


if __name__ == "__main__":
    main()
