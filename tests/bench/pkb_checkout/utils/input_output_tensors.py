"""Fixture input generator with ParallelKernelBench's interface (our own code)."""
import torch


def create_input_tensor(rank, world_size, problem_id, base_shape, dtype, trial=0, device=None):
    device = device if device is not None else torch.device("cuda", rank)
    M, N = base_shape
    if problem_id == 1:
        return (torch.full((M, N), float(rank + 1), dtype=dtype, device=device),)
    if problem_id == 2:
        torch.manual_seed(7 + 100 * problem_id + rank + 1009 * trial)
        x = torch.randn((M, N), dtype=torch.float32).to(device=device, dtype=dtype)
        w = torch.rand((N,), dtype=torch.float32).to(device=device, dtype=dtype)
        return (x, w)
    if problem_id == 3:
        torch.manual_seed(11 + rank + 1009 * trial)
        return (torch.randn((M, N), dtype=torch.float32).to(device=device, dtype=dtype),)
    raise ValueError(f"no inputs for problem {problem_id}")
