"""Inputs for 43_fused_adam_grad_unshard_allgather: per rank its (P,) shards of a flat gradient and of the master
weights (standard normal, slices of one flat tensor in PKB; here each rank draws its own), Adam's moments, and
lr, beta1 0.9, beta2 0.999, eps 1e-8, step 1 + trial % 7 (PKB's).

PKB starts from zero moments with lr 1e-3: the step then moves a weight by 1e-3, below atol, so a plain gather
of the un-updated weights passes, and the moments are never read. Here lr is 1e-2 and the moments are those of
a run in progress: exp_avg normal with std 0.1, exp_avg_sq uniform in [0, 0.01). problem.toml compares the
weights with atol 1e-3, so an un-updated weight of magnitude below ~1 fails."""


def make_inputs(ctx, P):
    return (ctx.randn((P,), "grad"), ctx.randn((P,), "master"), ctx.randn((P,), "exp_avg", std=0.1),
            ctx.rand((P,), "exp_avg_sq", low=0.0, high=0.01), 1e-2, 0.9, 0.999, 1e-8, 1 + ctx.trial % 7)
