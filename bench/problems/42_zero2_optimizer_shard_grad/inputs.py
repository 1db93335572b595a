"""Inputs for 42_zero2_optimizer_shard_grad: per rank its batch of M / W rows, X_local (M/W, D_IN) and y_local (M/W,
D_OUT), standard normal (PKB slices one batch drawn under rank 0's seed; here each rank draws its own rows), a copy
of the MLP's parameters W1 (H, D_IN), b1, W2 (D_OUT, H), b2, standard normal, where H is HIDDEN raised until the P
parameters split into W equal shards (PKB's rule), and Adam's moments of this rank's shard (P/W,); then lr, beta1
0.9, beta2 0.999, eps 1e-8 and step 1 + trial % 7 (PKB's).

Only rank 0's parameters count (the reference broadcasts them); the other ranks hold values of their own (PKB:
zeros). PKB's moments are zeros and its lr 1e-3, which moves a bf16 parameter by less than atol (un-updated
parameters pass): here lr is 1e-2 and the moments are those of a run in progress, exp_avg normal with std 0.1 and
exp_avg_sq uniform in [0.01, 0.02) (so that |exp_avg| stays below sqrt(exp_avg_sq), as in a real run, and no step
divides by a vanishing second moment)."""


def _hidden(D_IN, HIDDEN, D_OUT, world):
    while (HIDDEN * (D_IN + 1) + D_OUT * (HIDDEN + 1)) % world:
        HIDDEN += 1
    return HIDDEN


def make_inputs(ctx, M, D_IN, HIDDEN, D_OUT):
    rows = -(-max(M, ctx.world) // ctx.world)
    H = _hidden(D_IN, HIDDEN, D_OUT, ctx.world)
    shard = (H * (D_IN + 1) + D_OUT * (H + 1)) // ctx.world
    params = [ctx.randn((H, D_IN), "W1"), ctx.randn((H,), "b1"), ctx.randn((D_OUT, H), "W2"),
              ctx.randn((D_OUT,), "b2")]
    return (ctx.randn((rows, D_IN), "X"), ctx.randn((rows, D_OUT), "y"), *params,
            ctx.randn((shard,), "exp_avg", std=0.1), ctx.rand((shard,), "exp_avg_sq", low=0.01, high=0.02),
            1e-2, 0.9, 0.999, 1e-8, 1 + ctx.trial % 7)
