"""Inputs for 79_dinov2_distributed_knn, sized as PKB's: rank r holds Q = clamp(M / 64, 32, 256) test
features and L = clamp(16 N / W, 1024, 16384) training features of dimension D, the training features
transposed (D, L), their int64 labels (1, L), max_k = min(K, L) and group None. PKB's K is 200; its D is 384
(768 from N = 4096, 1024 from N = 8192), a shape key here.

Features are drawn from {-1, 0, 1} (PKB: normalised standard-normal vectors), so every similarity is an
integer that bf16 holds exactly and that any summation order gives: a correct kernel selects the same
similarities as the reference, and only the order within ties of equal similarities is free. Labels are a
random permutation of the W·L training indices, shared by all ranks and sliced by rank (PKB: index mod 1000),
so that a label names one training feature and the judge can tell which similarity it stands for.

knn_keys gives the judge the keys of the labels' tie-aware rule: for each of this rank's queries, its
similarity to every training feature of every rank, at the position of that feature's label."""

import torch
import torch.distributed as dist


def sizes(ctx, M, N):
    return max(32, min(M // 64, 256)), max(1024, min(N * 16 // ctx.world, 16384))


def make_inputs(ctx, M, N, K, D):
    queries, train = sizes(ctx, M, N)
    test = ctx.randint((queries, D), "test_features", -1, 2, dtype=torch.bfloat16)
    train_t = ctx.randint((D, train), "train_features", -1, 2, dtype=torch.bfloat16)
    order = torch.randperm(ctx.world * train, generator=ctx.generator("labels", same_on="world"))
    labels = order[ctx.rank * train:(ctx.rank + 1) * train].view(1, train).to(ctx.device)
    return (test, train_t, labels, min(K, train), None)


def knn_keys(ctx, args, output):
    test, train_t, labels = args[:3]
    world = ctx.world
    trains = [torch.empty_like(train_t) for _ in range(world)]
    dist.all_gather(trains, train_t)
    all_labels = [torch.empty_like(labels) for _ in range(world)]
    dist.all_gather(all_labels, labels)
    # The similarities are exact integers: any product order gives the reference's values.
    similarity = (test.float() @ torch.cat(trains, dim=1).float())
    keys = torch.empty_like(similarity)
    keys[:, torch.cat(all_labels, dim=1).view(-1)] = similarity
    return keys
