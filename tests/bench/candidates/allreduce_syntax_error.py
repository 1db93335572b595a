# Does not parse: the def lacks its colon.
import torch.distributed as dist


def solution(tensor)
    return tensor
