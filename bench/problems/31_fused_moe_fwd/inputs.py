"""Inputs for 31_fused_moe_fwd: per rank T = M standard-normal tokens of width H = N; its router, gate_weight
(NE, H) and gate_bias (NE,) (each rank routes its tokens by its own, as in PKB); its expert MLP, nn.Linear's
weights and biases with the inner width I = 128 (gate and up (I, H), down (H, I)); num_experts NE = 8, top_k
K = 2 and group None.

The expert weights are uniform in +-1/sqrt(fan_in) at the default shape (+-1/32 for gate and up, +-1/sqrt(128)
for down), PKB's nn.Linear initialisation. PKB draws the router weight standard normal: its logits then have a
standard deviation of sqrt(H) = 32, the top expert takes nearly all the weight and a candidate that ignores the
second expert fails only 7% of the elements; ours is normal with std 1/32 (logits of about unit size, both
experts weigh in: that candidate fails 60%). gate_bias is standard normal, as PKB's."""


def make_inputs(ctx, M, N, I, NE, K):
    if NE % ctx.world:
        raise ValueError(f"31_fused_moe_fwd: {NE} experts do not split over {ctx.world} ranks")
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
