"""Inputs for 26_moe_token_preprocess, as PKB's: per rank T = M tokens, each choosing K = 2 experts of NE = 8
uniformly and independently (the two choices may coincide, as in PKB), as a one-hot float32 mask (NE, K, T);
num_experts NE and group None."""

import torch


def make_inputs(ctx, M, NE, K):
    if NE % ctx.world:
        raise ValueError(f"26_moe_token_preprocess: {NE} experts do not split over {ctx.world} ranks")
    chosen = ctx.randint((M, K), "experts", 0, NE)
    mask = torch.nn.functional.one_hot(chosen, NE).to(torch.float32).permute(2, 1, 0).contiguous()
    return (mask, NE, None)
