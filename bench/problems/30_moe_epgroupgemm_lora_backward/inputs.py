"""Inputs for 30_moe_epgroupgemm_lora_backward: per rank the partial gradients of the LoRA factors, (R, N),
(R, N) and (N, R) with R = 8 and N = 1024 as PKB, and group None (the default group).

PKB draws them standard normal; ours are integers in [-8, 8], whose bf16 sums are exact in any order (as the
reductions 1, 4 and 7): the tolerance then judges the data flow, not the summation order of W bf16 values."""


def make_inputs(ctx, N, R):
    def grad(shape, stream):
        return ctx.randint(shape, stream, -8, 9, dtype=ctx.dtype)

    return (grad((R, N), "fc1_1_lora_A"), grad((R, N), "fc1_2_lora_A"), grad((N, R), "fc2_lora_B"), None)
