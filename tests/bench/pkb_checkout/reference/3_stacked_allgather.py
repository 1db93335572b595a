# Fixture reference: every rank's tensor, stacked in rank order, gathered straight into the (W, M, N)
# result: NCCL takes such an output, gloo alone does not.
import torch
import torch.distributed as dist


def solution(tensor):
    out = tensor.new_empty((dist.get_world_size(),) + tuple(tensor.shape))
    dist.all_gather_into_tensor(out, tensor)
    return out
