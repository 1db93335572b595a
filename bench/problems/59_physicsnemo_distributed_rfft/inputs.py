"""Inputs for 59_physicsnemo_distributed_rfft, sized as PKB's: B = max(1, M / 64) fields of H = max(16, M) rows
and X = max(16, N) columns, both rounded up to a multiple of W; rank r holds its X / W columns, standard normal
float32 (PKB draws the whole field under rank 0's seed and slices it; here every rank draws its own columns,
the same distribution). Then s = (H, X) and dim = (1, 2); norm ("ortho") and group (None) are solution()'s
defaults."""


def _round_up(n, m):
    return (n + m - 1) // m * m


def make_inputs(ctx, M, N):
    W = ctx.world
    B, H, X = max(1, M // 64), _round_up(max(16, M), W), _round_up(max(16, N), W)
    return (ctx.randn((B, H, X // W), "x"), [H, X], [1, 2])
