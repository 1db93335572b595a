"""Inputs for 77_magi1_cso_async_attention, as PKB builds them: R ranges of C tokens (keys per range), Hq query
and Hkv KV heads of D dimensions; at W > 4 PKB switches to a wider regime, Hq = HQ_WIDE and C = C_WIDE (24 and
12150 against 48 and 21600 at its sizes). Hq is rounded down to a multiple of W (at least W), and Hkv becomes W
when neither divides the other. Each rank holds P = ceil(C / W) tokens of every range: query (R*P, Hq, D) and
key_value (R*P, Hkv, 2D), standard normal and the rank's own; k_ranges (R, 2) int64 = [i*C, (i+1)*C] for range
i; cp_shuffle_num R; clip_token_nums C (the W*P tokens of a range are clipped to C keys); group None."""

import torch


def make_inputs(ctx, R, D, HQ, HKV, C, HQ_WIDE, C_WIDE):
    W = ctx.world
    heads, chunk = (HQ, C) if W <= 4 else (HQ_WIDE, C_WIDE)
    if heads % W:
        heads = W * max(1, heads // W)
    kv_heads = HKV if HKV % W == 0 or W % HKV == 0 else W
    per = (chunk + W - 1) // W
    starts = torch.arange(R, dtype=torch.int64, device=ctx.device) * chunk
    return (ctx.randn((R * per, heads, D), "query"), ctx.randn((R * per, kv_heads, 2 * D), "key_value"),
            torch.stack([starts, starts + chunk], dim=1), R, chunk, None)
