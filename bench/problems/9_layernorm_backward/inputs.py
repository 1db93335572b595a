"""Inputs for 9_layernorm_backward, drawn as PKB draws them: per rank X_hat, standard-normal rows each divided by
its L2 norm (+1e-5), so its entries are about normal with standard deviation 1/sqrt(N); and standard-normal dY.
Both (M, N), different on every rank, trial and seed."""


def make_inputs(ctx, M, N):
    x = ctx.randn((M, N), "x")
    x_hat = x / (x.norm(dim=-1, keepdim=True) + 1e-5)
    return (x_hat, ctx.randn((M, N), "dy"))
