"""Inputs for 81_sam3_allgather_iou_suppression. As PKB: rank r tracks 1 + (r + trial) mod 3 objects with
(H, X) mask logits (H = X = 256 by default), the threshold is 0.7 and reverse is False.

Unlike PKB, whose masks never overlap enough to suppress anything (IoU at most 0.51), the objects are
rectangles: n = Σ c_r objects share n / 2 rectangles (from the stream every rank shares; each rectangle spans a
quarter to a half of each side), so objects on different ranks often cover the same one. A mask's logits are
+2.5 inside its rectangle and -2.5 outside plus standard-normal noise of the rank's own (0.6% of the pixels
flip), so two objects of one rectangle overlap with IoU ~0.95 and most other pairs far below 0.7. The scores
are uniform in [-5, 5) (PKB: evenly spaced in [-5, 5]); last_occluded is uniform in {-1, .., 3} from the shared
stream (PKB: (i mod 5) - 1), the same on every rank."""

import torch


def make_inputs(ctx, H, X):
    W = ctx.world
    counts = [1 + (r + ctx.trial) % 3 for r in range(W)]
    n, first, mine = sum(counts), sum(counts[:ctx.rank]), counts[ctx.rank]
    shapes = ctx.generator("rectangles", same_on="world")
    kinds = max(1, n // 2)
    kind = torch.randint(kinds, (n,), generator=shapes)[first:first + mine]
    height = torch.randint(H // 4, H // 2 + 1, (kinds,), generator=shapes)
    width = torch.randint(X // 4, X // 2 + 1, (kinds,), generator=shapes)
    top = (torch.rand(kinds, generator=shapes) * (H - height + 1)).long()
    left = (torch.rand(kinds, generator=shapes) * (X - width + 1)).long()
    rows, cols = torch.arange(H).view(1, H, 1), torch.arange(X).view(1, 1, X)
    t, l, h, w = (v[kind].view(mine, 1, 1) for v in (top, left, height, width))
    inside = (rows >= t) & (rows < t + h) & (cols >= l) & (cols < l + w)
    sign = (inside.to(ctx.dtype) * 2 - 1).to(ctx.device)
    masks = ctx.randn((mine, H, X), "mask_noise") + 2.5 * sign
    scores = ctx.rand((mine,), "scores", low=-5.0, high=5.0)
    last_occluded = ctx.randint((n,), "last_occluded", -1, 4, same_on="world")
    return (masks, scores, counts, last_occluded, 0.7, False, None)
