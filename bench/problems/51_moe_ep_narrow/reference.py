"""Forward of an expert-parallel mixture-of-experts layer with fewer experts than ranks (narrow EP: the experts
are replicated over groups of ranks), fused from router to combine. With group None the ranks form EP groups of
num_experts = E consecutive ranks (ranks g*E ... g*E + E - 1; the whole world when E >= W), created once and
cached; within a rank's EP group of G ranks, the rank of position p hosts experts p*E/G ... (p+1)*E/G - 1 (here
expert p alone), and every expert of it is its one SwiGLU MLP, down(silu(gate(x)) * up(x)), with the nn.Linear
weights and biases gate_proj (I, H), up_proj (I, H) and down_proj (H, I) given as tensors.

Every rank routes its tokens, hidden_states (T, H): router logits x @ gate_weight.T + gate_bias (E,), their
softmax, and its top_k experts with their probabilities as weights (not renormalised). Each (token, expert) pair
is sent to the rank of its EP group hosting the expert, which applies its MLP, and sent back; the token's output
is the sum over its top_k experts of weight * MLP(token). Every step runs in the inputs' dtype (bf16), as torch
computes it.

Returns (T, H) of hidden_states' dtype. Where two experts' router probabilities tie at the top_k boundary,
either may be chosen (torch's topk breaks ties differently on different devices)."""

from typing import List, Optional

import torch
import torch.distributed as dist
import torch.nn.functional as F


# EP groups by (world size, experts): new_group is collective and costly, so they are made once.
_EP_GROUPS = {}


def _ep_group(num_experts: int) -> dist.ProcessGroup:
    """This rank's group of num_experts consecutive ranks (WORLD when num_experts >= W)."""
    world, rank = dist.get_world_size(), dist.get_rank()
    if num_experts >= world:
        return dist.group.WORLD
    if world % num_experts:
        raise ValueError(f"narrow EP needs the world size ({world}) to be a multiple of num_experts ({num_experts})")
    key = (world, num_experts)
    if key not in _EP_GROUPS:
        # Every rank creates every group, in the same order.
        _EP_GROUPS[key] = [dist.new_group(list(range(g, g + num_experts))) for g in range(0, world, num_experts)]
    return _EP_GROUPS[key][rank // num_experts]


def _exchange(rows: torch.Tensor, send: List[int], receive: List[int], group) -> torch.Tensor:
    if dist.get_world_size(group) == 1:
        return rows
    out = rows.new_empty((sum(receive), rows.shape[1]))
    dist.all_to_all_single(out, rows.contiguous(), output_split_sizes=receive, input_split_sizes=send, group=group)
    return out


@torch.no_grad()
def solution(hidden_states: torch.Tensor, gate_weight: torch.Tensor, gate_bias: Optional[torch.Tensor],
             gate_proj_weight: torch.Tensor, gate_proj_bias: torch.Tensor, up_proj_weight: torch.Tensor,
             up_proj_bias: torch.Tensor, down_proj_weight: torch.Tensor, down_proj_bias: torch.Tensor,
             num_experts: int, top_k: int, group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or _ep_group(num_experts)
    world = dist.get_world_size(group)
    local = num_experts // world
    x = hidden_states.reshape(-1, hidden_states.shape[-1])
    tokens = x.shape[0]

    # Router: top_k of the softmax, the probabilities as weights.
    probs = torch.softmax(F.linear(x, gate_weight, gate_bias), dim=-1)
    weights, experts = torch.topk(probs, top_k, dim=-1)  # (T, K)

    # The routed (expert, token) pairs in expert-major order, each expert's tokens in token order.
    routing_map = torch.zeros((num_experts, tokens), dtype=torch.bool, device=x.device)
    routing_map[experts.T, torch.arange(tokens, device=x.device)] = True
    pair_token = torch.nonzero(routing_map, as_tuple=True)[1]
    weight_of = torch.zeros((tokens, num_experts), dtype=weights.dtype, device=x.device)
    weight_of.scatter_(1, experts, weights)
    pair_weight = weight_of.T[routing_map]

    # Dispatch: expert-major order is rank-major too, so the pairs of each rank are consecutive.
    per_expert = routing_map.sum(dim=1)
    everyone = per_expert.new_empty((world * num_experts,))
    dist.all_gather_into_tensor(everyone, per_expert, group=group)
    me = dist.get_rank(group)
    send = per_expert.view(world, local).sum(dim=1).tolist()
    receive = everyone.view(world, world, local)[:, me].sum(dim=1).tolist()
    arrived = _exchange(x.index_select(0, pair_token), send, receive, group)

    # This rank's experts all apply its one MLP, row by row: the arrived rows need no regrouping by expert.
    hidden = F.silu(F.linear(arrived, gate_proj_weight, gate_proj_bias)) * F.linear(arrived, up_proj_weight,
                                                                                     up_proj_bias)
    done = F.linear(hidden, down_proj_weight, down_proj_bias)

    # Combine: back to the senders, weighted, summed per token.
    back = _exchange(done, receive, send, group)
    out = torch.zeros_like(x)
    out.index_add_(0, pair_token, back * pair_weight.unsqueeze(1))
    return out.view(hidden_states.shape)
