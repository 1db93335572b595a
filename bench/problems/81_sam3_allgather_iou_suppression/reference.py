"""Suppression of overlapping object masks across ranks (SAM 3 video tracking): rank r holds
num_obj_per_gpu[r] objects, their low-resolution mask logits low_res_masks_local (c_r, H, X) and scores
obj_scores_local (c_r,); last_occluded (n,) int64, n = Σ c_r, is every object's last occluded frame (-1: never),
in global order (rank 0's objects first). Every rank gathers all masks and scores in rank order, binarises the
masks (logit > 0) and computes the IoU of every pair. Of a pair (i, j) whose IoU is at least iou_threshold, the
object occluded later (reverse: earlier) is suppressed, provided the other one has been occluded at all
(last_occluded > -1). Every rank returns (all masks as float32 (n, H, X) with each suppressed object's mask set
to the logit -10, all scores as float32 (n,), the suppressed flags bool (n,))."""

from typing import List, Optional, Tuple

import torch
import torch.distributed as dist

NO_OBJECT_LOGIT = -10.0


def _gather_uneven(t: torch.Tensor, counts: List[int], group) -> torch.Tensor:
    """Every rank's t (counts[rank] rows) concatenated in rank order. Each rank pads its rows to the largest
    count so that one equal-sized gather carries them (gloo has no gather of uneven tensors)."""
    most = max(counts)
    padded = t.new_zeros((most,) + tuple(t.shape[1:]))
    padded[:t.shape[0]] = t
    everyone = t.new_empty((len(counts) * most,) + tuple(t.shape[1:]))
    dist.all_gather_into_tensor(everyone, padded, group=group)
    return torch.cat([everyone[r * most:r * most + c] for r, c in enumerate(counts)])


def _iou(binary: torch.Tensor) -> torch.Tensor:
    flat = binary.flatten(1).float()
    overlap = flat @ flat.T
    area = flat.sum(dim=1)
    return overlap / (area[:, None] + area[None, :] - overlap).clamp_min(1.0)


def _suppressed(binary: torch.Tensor, last_occluded: torch.Tensor, iou_threshold: float,
                reverse: bool) -> torch.Tensor:
    n = binary.shape[0]
    if n <= 1:
        return torch.zeros(n, dtype=torch.bool, device=binary.device)
    pairs = torch.triu(_iou(binary) >= iou_threshold, diagonal=1)   # i < j only
    first, second = last_occluded.view(n, 1), last_occluded.view(1, n)
    later = torch.lt if reverse else torch.gt
    drop_first = pairs & later(first, second) & (second > -1)
    drop_second = pairs & later(second, first) & (first > -1)
    return drop_first.any(dim=1) | drop_second.any(dim=0)


@torch.no_grad()
def solution(low_res_masks_local: torch.Tensor, obj_scores_local: torch.Tensor, num_obj_per_gpu: List[int],
             last_occluded: torch.Tensor, iou_threshold: float = 0.7, reverse: bool = False,
             group: Optional[dist.ProcessGroup] = None) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    group = group or dist.group.WORLD
    counts = [int(c) for c in num_obj_per_gpu]
    mine = counts[dist.get_rank(group)]
    if low_res_masks_local.shape[0] != mine or obj_scores_local.shape[0] != mine:
        raise ValueError(f"this rank holds {low_res_masks_local.shape[0]} masks and {obj_scores_local.shape[0]} "
                         f"scores; num_obj_per_gpu says {mine}")
    masks = _gather_uneven(low_res_masks_local.float(), counts, group)
    scores = _gather_uneven(obj_scores_local.float(), counts, group)
    drop = _suppressed(masks > 0, last_occluded.to(device=masks.device, dtype=torch.long), iou_threshold, reverse)
    masks[drop] = NO_OBJECT_LOGIT
    return masks, scores, drop
