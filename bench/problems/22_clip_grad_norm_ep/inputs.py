"""Inputs for 22_clip_grad_norm_ep, as PKB builds them: per rank one standard-normal (M, N) dense gradient and one
(M, N) expert gradient (different on every rank, trial and seed), max_norm 1.0, norm_type 2.0, ep_size = W / 2,
and the groups of PKB's mesh: fsdp_group the WORLD group, ep_group the ep_size consecutive ranks of this rank's
expert block, ep_fsdp_group the ranks holding the same expert index in every block (W / ep_size = 2 of them).
At W = 2 ep_size is 1: the EP group has one member (PKB passes None there; reducing over a group of one is the
same) and the expert gradients are not scaled."""


def make_inputs(ctx, M, N):
    dense = [ctx.randn((M, N), "dense_grad")]
    expert = [ctx.randn((M, N), "expert_grad")]
    return (dense, expert, 1.0, 2.0, ctx.mesh["ep"], ctx.groups["world"], ctx.groups["ep_fsdp"], ctx.groups["ep"])
