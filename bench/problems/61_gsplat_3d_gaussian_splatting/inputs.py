"""Inputs for 61_gsplat_3d_gaussian_splatting, as PKB's (image IW x IH = clamp(N, 64, 512) x clamp(M, 64, 512),
one pinhole camera per rank with focal length 0.8 min(IW, IH) and the principal point at the image centre;
means uniform in [-0.75, 0.75) x [-0.75, 0.75) x [2, 4), standard-normal quaternions, scales uniform in
[0, 0.02), opacities in [0.1, 0.9), colors in [0, 1), eps2d 0.3, near plane 0.01, far plane 1e10), except:
- each rank holds its own number of Gaussians, uniform in [G/2, G] (PKB: G = clamp(M, 1000, 10000) on every
  rank), so that the Gaussian ids' offsets depend on every rank's count;
- each rank's camera is moved by its own translation, uniform in +-0.05 across and +-0.1 along the view axis
  (PKB: the identity on every rank, so a rank that projected onto its own camera only passed). Every Gaussian
  stays at least ~0.16 min(IW, IH) pixels inside every image, so which pairs are kept does not hinge on bf16
  rounding."""

import torch


def make_inputs(ctx, G, IW, IH):
    count = torch.randint(G // 2, G + 1, (1,), generator=ctx.generator("count")).item()
    means = torch.cat([ctx.rand((count, 2), "means_xy", low=-0.75, high=0.75),
                       ctx.rand((count, 1), "means_z", low=2.0, high=4.0)], dim=1)
    shift = ctx.rand((3,), "camera_shift", low=-0.05, high=0.05, dtype=torch.float32) * torch.tensor(
        [1.0, 1.0, 2.0], device=ctx.device)
    viewmats = torch.eye(4, device=ctx.device)
    viewmats[:3, 3] = shift
    focal = 0.8 * min(IW, IH)
    Ks = torch.tensor([[focal, 0.0, IW * 0.5], [0.0, focal, IH * 0.5], [0.0, 0.0, 1.0]], device=ctx.device)
    return (means.contiguous(), ctx.randn((count, 4), "quats"), ctx.rand((count, 3), "scales", low=0.0, high=0.02),
            ctx.rand((count,), "opacities", low=0.1, high=0.9), ctx.rand((count, 3), "colors"),
            viewmats.to(ctx.dtype).unsqueeze(0), Ks.to(ctx.dtype).unsqueeze(0), IW, IH, 0.3, 0.01, 1e10)
