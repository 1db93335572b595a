"""Distributed projection of 3-D Gaussians (gsplat's packed, camera-distributed path, in plain torch): rank r
holds N_r Gaussians (means (N_r, 3), quaternions (N_r, 4), scales (N_r, 3), opacities (N_r,), colors (N_r, D))
and C cameras (viewmats (C, 4, 4), intrinsics Ks (C, 3, 3)), all in the problem's dtype. Every rank gathers
every rank's cameras and projects its own Gaussians onto all of them (covariance from quaternion and scale,
perspective Jacobian, eps2d added to the 2-D covariance, radii = ceil(3.33 sqrt of its diagonal); a pair is kept
when the depth lies in (near_plane, far_plane) and the radius box overlaps the image). The kept (camera,
Gaussian) pairs are sent to the rank owning the camera. Rank r returns, for the pairs of its cameras, grouped by
sending rank (in rank order, each in (camera, Gaussian) order): (camera ids int64 (n,), local to rank r;
Gaussian ids int64 (n,), the sender's index plus Σ_{s<r} N_s, as PKB offsets them; radii int32 (n, 2); means2d
(n, 2); depths (n,); conics (n, 3); opacities (n,); colors (n, D)), the last five in the inputs' dtype; n depends
on the data."""

import math
from typing import List, Tuple

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import Tensor


def _gather_counts(n: int, device) -> List[int]:
    world = dist.get_world_size()
    mine = torch.tensor([n], dtype=torch.int64, device=device)
    every = mine.new_empty((world,))
    dist.all_gather_into_tensor(every, mine)
    return every.tolist()


def _gather_rows(parts: List[Tensor]) -> List[Tensor]:
    """Every rank's rows of each part (equal row counts everywhere), packed side by side into one gather."""
    world, rows = dist.get_world_size(), parts[0].shape[0]
    packed = torch.cat([p.reshape(rows, -1) for p in parts], dim=1).contiguous()
    every = packed.new_empty((world * rows, packed.shape[1]))
    dist.all_gather_into_tensor(every, packed)
    widths = [p[0].numel() for p in parts]
    return [piece.reshape((world * rows,) + tuple(p.shape[1:]))
            for piece, p in zip(every.split(widths, dim=1), parts)]


def _send_rows(parts: List[Tensor], send_counts: List[int], receive_counts: List[int]) -> List[Tensor]:
    """Rows split by destination rank (send_counts), packed side by side into one all_to_all_single."""
    rows = parts[0].shape[0]
    packed = torch.cat([p.reshape(rows, -1) for p in parts], dim=1).contiguous()
    got = packed.new_empty((sum(receive_counts), packed.shape[1]))
    dist.all_to_all_single(got, packed, output_split_sizes=receive_counts, input_split_sizes=send_counts)
    widths = [p[0].numel() if rows else int(math.prod(p.shape[1:])) for p in parts]
    return [piece.reshape((got.shape[0],) + tuple(p.shape[1:])) for piece, p in zip(got.split(widths, dim=1), parts)]


def _rotation(quats: Tensor) -> Tensor:
    w, x, y, z = F.normalize(quats, p=2, dim=-1).unbind(-1)
    return torch.stack([1 - 2 * (y ** 2 + z ** 2), 2 * (x * y - w * z), 2 * (x * z + w * y),
                        2 * (x * y + w * z), 1 - 2 * (x ** 2 + z ** 2), 2 * (y * z - w * x),
                        2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x ** 2 + y ** 2)],
                       dim=-1).reshape(quats.shape[:-1] + (3, 3))


def _project(means, covars, viewmats, Ks, width, height, eps2d, near_plane, far_plane):
    """(radii int32 (C, N, 2), means2d (C, N, 2), depths (C, N), conics (C, N, 3)) for every camera."""
    R, t = viewmats[:, :3, :3], viewmats[:, :3, 3]
    cam_means = torch.einsum("cij,nj->cni", R, means) + t[:, None, :]
    cam_covars = torch.einsum("cij,njk,clk->cnil", R, covars, R)
    tx, ty, tz = cam_means.unbind(-1)
    fx, fy, cx, cy = Ks[:, 0, 0, None], Ks[:, 1, 1, None], Ks[:, 0, 2, None], Ks[:, 1, 2, None]
    slack_x, slack_y = 0.3 * (0.5 * width / fx), 0.3 * (0.5 * height / fy)
    tx = tz * torch.clamp(tx / tz, min=-(cx / fx + slack_x), max=(width - cx) / fx + slack_x)
    ty = tz * torch.clamp(ty / tz, min=-(cy / fy + slack_y), max=(height - cy) / fy + slack_y)
    zero = torch.zeros_like(tz)
    J = torch.stack([fx / tz, zero, -fx * tx / tz ** 2, zero, fy / tz, -fy * ty / tz ** 2],
                    dim=-1).reshape(tz.shape + (2, 3))
    cov2d = torch.einsum("...ij,...jk,...kl->...il", J, cam_covars, J.transpose(-1, -2))
    means2d = torch.einsum("cij,cnj->cni", Ks[:, :2, :3], cam_means) / tz[..., None]
    cov2d = cov2d + torch.eye(2, device=means.device, dtype=means.dtype) * eps2d
    det = (cov2d[..., 0, 0] * cov2d[..., 1, 1] - cov2d[..., 0, 1] * cov2d[..., 1, 0]).clamp(min=1e-10)
    conics = torch.stack([cov2d[..., 1, 1] / det, -(cov2d[..., 0, 1] + cov2d[..., 1, 0]) / 2.0 / det,
                          cov2d[..., 0, 0] / det], dim=-1)
    depths = cam_means[..., 2]
    radius = torch.stack([torch.ceil(3.33 * torch.sqrt(cov2d[..., 0, 0])),
                          torch.ceil(3.33 * torch.sqrt(cov2d[..., 1, 1]))], dim=-1)
    radius[~((depths > near_plane) & (depths < far_plane))] = 0.0
    inside = ((means2d[..., 0] + radius[..., 0] > 0) & (means2d[..., 0] - radius[..., 0] < width)
              & (means2d[..., 1] + radius[..., 1] > 0) & (means2d[..., 1] - radius[..., 1] < height))
    radius[~inside] = 0.0
    return radius.int(), means2d, depths, conics


def solution(means: Tensor, quats: Tensor, scales: Tensor, opacities: Tensor, colors: Tensor, viewmats: Tensor,
             Ks: Tensor, image_width: int, image_height: int, eps2d: float = 0.3, near_plane: float = 0.01,
             far_plane: float = 1e10, camera_model: str = "pinhole") -> Tuple[Tensor, ...]:
    if camera_model != "pinhole":
        raise ValueError(f"camera_model {camera_model!r}: only 'pinhole' is supported")
    world = dist.get_world_size()
    cams_per_rank = viewmats.shape[0]
    gaussians_per_rank = _gather_counts(means.shape[0], means.device)
    viewmats, Ks = _gather_rows([viewmats, Ks])

    rotation = _rotation(quats)
    axes = rotation * scales[..., None, :]
    covars = torch.einsum("...ij,...kj->...ik", axes, axes)
    radii, means2d, depths, conics = _project(means, covars, viewmats, Ks, image_width, image_height, eps2d,
                                              near_plane, far_plane)
    kept = (radii > 0).all(dim=-1)
    camera_ids, gaussian_ids = torch.where(kept)             # camera-major, so grouped by destination rank
    per_camera = torch.bincount(camera_ids, minlength=world * cams_per_rank)
    send_counts = per_camera.view(world, cams_per_rank).sum(dim=1)
    receive_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(receive_counts, send_counts)
    sends, receives = send_counts.tolist(), receive_counts.tolist()

    # Ids as PKB forms them: cameras relative to their owner, Gaussians shifted by the destination's offset.
    destination = torch.repeat_interleave(torch.arange(world, device=means.device), send_counts)
    first_gaussian = torch.tensor([0] + gaussians_per_rank[:-1], device=means.device).cumsum(0)
    local_camera = camera_ids - destination * cams_per_rank
    shifted_gaussian = gaussian_ids + first_gaussian[destination]

    (radii_out,) = _send_rows([radii[kept]], sends, receives)
    floats = _send_rows([means2d[kept], depths[kept], conics[kept], opacities[gaussian_ids], colors[gaussian_ids]],
                        sends, receives)
    ids = _send_rows([local_camera, shifted_gaussian], sends, receives)
    return (ids[0], ids[1], radii_out, *floats)
