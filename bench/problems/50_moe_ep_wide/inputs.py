"""Inputs for 50_moe_ep_wide: as 31's (see there: tokens, per-rank router and expert MLP, the router weight scaled
to logits of about unit size where PKB's is standard normal), with num_experts NE = 2W, two experts per rank, and
top_k K = 2."""


def make_inputs(ctx, M, N, I, K):
    NE = 2 * ctx.world
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
