"""Inputs for 40_ddp: per rank its batch of M / W rows, X_local (M/W, D_IN) and y_local (M/W, D_OUT), standard normal
(PKB slices one batch drawn under rank 0's seed; here each rank draws its own rows), a copy of the MLP's parameters
W1 (HIDDEN, D_IN), b1, W2 (D_OUT, HIDDEN), b2, standard normal, and of Adam's moments of each; then lr, beta1 0.9,
beta2 0.999, eps 1e-8 and step 1 + trial % 7 (PKB's).

Only rank 0's parameters and moments count (the reference broadcasts them); the other ranks hold values of their
own (PKB: zeros), so a rank that skips the broadcast computes with the wrong ones. PKB's moments are zeros and its
lr 1e-3, which moves a bf16 parameter by less than atol (un-updated parameters pass): here lr is 1e-2 and the
moments are those of a run in progress, exp_avg normal with std 0.1 and exp_avg_sq uniform in [0.01, 0.02) (so that
|exp_avg| stays below sqrt(exp_avg_sq), as in a real run, and no step divides by a vanishing second moment)."""

PARAMS = ("W1", "b1", "W2", "b2")


def make_inputs(ctx, M, D_IN, HIDDEN, D_OUT):
    rows = -(-max(M, ctx.world) // ctx.world)
    shapes = {"W1": (HIDDEN, D_IN), "b1": (HIDDEN,), "W2": (D_OUT, HIDDEN), "b2": (D_OUT,)}
    params = [ctx.randn(shapes[n], n) for n in PARAMS]
    exp_avg = [ctx.randn(shapes[n], f"exp_avg_{n}", std=0.1) for n in PARAMS]
    exp_avg_sq = [ctx.rand(shapes[n], f"exp_avg_sq_{n}", low=0.01, high=0.02) for n in PARAMS]
    return (ctx.randn((rows, D_IN), "X"), ctx.randn((rows, D_OUT), "y"), *params, *exp_avg, *exp_avg_sq,
            1e-2, 0.9, 0.999, 1e-8, 1 + ctx.trial % 7)
