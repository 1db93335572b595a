"""Inputs for 51_moe_ep_narrow: as 31's (see there: tokens, per-rank router and expert MLP, the router weight
scaled to logits of about unit size where PKB's is standard normal), with num_experts NE the largest divisor of W
in [2, W/2] (1 if there is none: W = 2), so that the reference forms EP groups of NE ranks, and top_k
K = min(2, NE)."""


def narrow_experts(world):
    """The largest divisor of world in [2, world / 2], else 1."""
    return next((e for e in range(world // 2, 1, -1) if world % e == 0), 1)


def make_inputs(ctx, M, N, I):
    NE = narrow_experts(ctx.world)
    K = min(2, NE)
    up_bound, down_bound = 1 / 32, 128 ** -0.5
    return (ctx.randn((M, N), "hidden_states"),
            ctx.randn((NE, N), "gate_weight", std=1 / 32),
            ctx.randn((NE,), "gate_bias"),
            ctx.rand((I, N), "gate_proj_weight", low=-up_bound, high=up_bound),
            ctx.rand((I,), "gate_proj_bias", low=-up_bound, high=up_bound),
            ctx.rand((I, N), "up_proj_weight", low=-up_bound, high=up_bound),
            ctx.rand((I,), "up_proj_bias", low=-up_bound, high=up_bound),
            ctx.rand((N, I), "down_proj_weight", low=-down_bound, high=down_bound),
            ctx.rand((N,), "down_proj_bias", low=-down_bound, high=down_bound),
            NE, K, None)
