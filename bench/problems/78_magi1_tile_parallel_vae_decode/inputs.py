"""Inputs for 78_magi1_tile_parallel_vae_decode, as PKB's: rank r's own standard-normal bf16 latent z
(1, C, T, H, X) (PKB: C = 16, T = 6, H = X = 90), tiles of TL x TS x TS latent voxels (PKB: 3 x 32 x 32),
spatial overlap 0.25, no temporal overlap, upsampling UP in space and TUP in time (PKB: 8 and 4), sr_ratio 1,
first_frame_as_image False and group None."""


def make_inputs(ctx, C, T, H, X, TL, TS, UP, TUP):
    return (ctx.randn((1, C, T, H, X), "z"), TL, TS, TS, 0.25, 0.0, UP, TUP, 1, False, None)
