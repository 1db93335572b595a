# Hangs: rank 1 never joins the collective (as a deadlocked kernel would); rank 0 waits in it.
import time

import torch.distributed as dist


def solution(tensor):
    if dist.get_rank() == 1:
        while True:
            time.sleep(1)
    out = tensor.clone()
    dist.all_reduce(out)
    return out
