"""OpenCLIP's SigLIP loss with text features passed between neighbouring ranks.

Rank r holds image_features and text_features (B, D) of its B samples. Logits of r's images against a block of
texts are logit_scale * image_features @ texts^T + logit_bias (in the input dtype). The loss starts with the
rank's own block, -sum(logsigmoid(labels * logits)) / B with labels +1 on the diagonal (matching pairs) and -1
elsewhere; then the text blocks of the other W-1 ranks visit, each adding -sum(logsigmoid(-logits)) / B (all
pairs negative). The blocks travel in both directions at once: in each round a rank sends what it last got from
the right on to the left and what it got from the left on to the right, and adds the block from its right
neighbour, then the one from its left; when W-1 is odd a last round passes blocks to the right only. Returns rank
r's loss, a 0-d tensor in the input dtype, each block's loss added in that order. group None means the default
group."""

from typing import Optional

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _block_loss(images: torch.Tensor, texts: torch.Tensor, scale: float, bias: float, own: bool) -> torch.Tensor:
    batch = images.shape[0]
    logits = (scale * images) @ texts.T + bias
    if own:
        signs = -torch.ones_like(logits)
        signs.diagonal().fill_(1)
        logits = signs * logits
    else:
        logits = -logits
    return -F.logsigmoid(logits).sum() / batch


def _send_receive(group, sends, sources):
    """Sends each (group rank, tensor) of `sends` and receives one block shaped like the first sent tensor from
    each group rank of `sources`, all at once; returns the received blocks in the order of sources."""
    received = [torch.empty_like(sends[0][1]) for _ in sources]
    ops = [dist.P2POp(dist.isend, t, dist.get_global_rank(group, peer), group=group) for peer, t in sends]
    ops += [dist.P2POp(dist.irecv, buf, dist.get_global_rank(group, peer), group=group)
            for peer, buf in zip(sources, received)]
    for request in dist.batch_isend_irecv(ops):
        request.wait()
    return received


@torch.no_grad()
def solution(image_features: torch.Tensor, text_features: torch.Tensor, logit_scale: float,
             logit_bias: float = 0.0, group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    size, me = dist.get_world_size(group), dist.get_rank(group)
    left, right = (me - 1) % size, (me + 1) % size
    loss = _block_loss(image_features, text_features, logit_scale, logit_bias, own=True)
    going_left = going_right = text_features
    rounds, odd = divmod(size - 1, 2)
    for _ in range(rounds):
        from_right, from_left = _send_receive(group, [(right, going_right), (left, going_left)], [right, left])
        loss = loss + _block_loss(image_features, from_right, logit_scale, logit_bias, own=False)
        loss = loss + _block_loss(image_features, from_left, logit_scale, logit_bias, own=False)
        going_left, going_right = from_right, from_left
    if odd:  # the last block, passed rightwards only
        from_left, = _send_receive(group, [(right, going_right)], [left])
        loss = loss + _block_loss(image_features, from_left, logit_scale, logit_bias, own=False)
    return loss
