"""Inputs for 32_fused_moe_fwd_lora: as 31's (see there: tokens, per-rank router and expert MLP, the router weight
scaled to logits of about unit size where PKB's is standard normal; NE = 8 experts, top_k K = 2), plus the rank's
LoRA factors of rank R = 8: lora_gate_A, lora_up_A (R, H), lora_gate_B, lora_up_B (I, R), lora_down_A (R, I),
lora_down_B (H, R).

PKB draws the LoRA factors standard normal and applies them unscaled: each delta multiplies the activations'
size by sqrt(fan_in * R), so the outputs reach ~1e5 and bf16 rounding alone moves them by hundreds; a
candidate that keeps float32 intermediates fails 30% of the elements at 1e-2. Ours are normal with the A factors
at std 1/sqrt(fan_in) at the default shape (1/32 for gate and up, 1/sqrt(128) for down) and the B factors at std
0.5/sqrt(8): each delta is about half its projection's size, the outputs stay of order 0.1 and the LoRA path
decides a large share of every element."""


def make_inputs(ctx, M, N, I, NE, K, R):
    if NE % ctx.world:
        raise ValueError(f"32_fused_moe_fwd_lora: {NE} experts do not split over {ctx.world} ranks")
    up_bound, down_bound = 1 / 32, 128 ** -0.5
    b_std = 0.5 / 8 ** 0.5
    return (ctx.randn((M, N), "hidden_states"),
            ctx.randn((NE, N), "gate_weight", std=1 / 32),
            ctx.randn((NE,), "gate_bias"),
            ctx.rand((I, N), "gate_proj_weight", low=-up_bound, high=up_bound),
            ctx.rand((I,), "gate_proj_bias", low=-up_bound, high=up_bound),
            ctx.rand((I, N), "up_proj_weight", low=-up_bound, high=up_bound),
            ctx.rand((I,), "up_proj_bias", low=-up_bound, high=up_bound),
            ctx.rand((N, I), "down_proj_weight", low=-down_bound, high=down_bound),
            ctx.rand((N,), "down_proj_bias", low=-down_bound, high=down_bound),
            ctx.randn((R, N), "lora_gate_A", std=1 / 32),
            ctx.randn((I, R), "lora_gate_B", std=b_std),
            ctx.randn((R, N), "lora_up_A", std=1 / 32),
            ctx.randn((I, R), "lora_up_B", std=b_std),
            ctx.randn((R, I), "lora_down_A", std=down_bound),
            ctx.randn((N, R), "lora_down_B", std=b_std),
            NE, K, None)
