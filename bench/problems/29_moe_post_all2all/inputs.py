"""Inputs for 29_moe_post_all2all, as PKB's: per rank T = M tokens of width H = N, each routed to K = 2 distinct
experts of NE = 8 chosen uniformly (routing_map bool (NE, T); selected_experts (T, K), each token's experts in
increasing order), routing weights the bf16 softmax of K standard-normal logits per token, standard-normal expert
outputs, one per routed pair (K*T of them), num_experts NE, the expert-major permutation mapping of the pairs
(the token of each), org_hidden_states_shape [T, H] (PKB: a torch.Size), and as in PKB synthetic split sizes
unrelated to the routing: K*T/W rows to and from every rank, the K*T rows cut into NE equal chunks (the first
K*T mod NE one row longer). W must divide K*T."""

import torch


def routed_experts(ctx, tokens, experts, choices):
    """(tokens, choices) int64: each token's distinct experts, in a random order."""
    return torch.argsort(ctx.rand((tokens, experts), "routing", dtype=torch.float32), dim=1)[:, :choices]


def exchange_sizes(ctx, rows, experts):
    """Equal send and receive splits of `rows` permuted rows, and the (W, experts/W) per-local-expert chunks."""
    W = ctx.world
    if rows % W or experts % W:
        raise ValueError(f"{rows} routed rows and {experts} experts must split evenly over {W} ranks")
    splits = [rows // W] * W
    chunks = torch.full((experts,), rows // experts, dtype=torch.int64)
    chunks[:rows % experts] += 1
    return splits, list(splits), chunks.view(W, experts // W).to(ctx.device)


def make_inputs(ctx, M, N, NE, K):
    chosen = torch.sort(routed_experts(ctx, M, NE, K), dim=1).values
    routing_map = torch.zeros((NE, M), dtype=torch.bool, device=ctx.device)
    routing_map[chosen.T, torch.arange(M, device=ctx.device)] = True
    weights = ctx.randn((M, K), "routing_weights").softmax(dim=1)
    mapping = torch.nonzero(routing_map, as_tuple=True)[1]
    send, receive, chunks = exchange_sizes(ctx, K * M, NE)
    return (ctx.randn((K * M, N), "expert_outputs"), weights, chosen, NE, send, receive, chunks, routing_map, mapping,
            [M, N], None)
