"""Every rank's expected answer, computed from all ranks' inputs in one process, in float64, without any
collective: the maths of each problem written a second time, plainly. `args[r]` is rank r's argument tuple.

expected(name, args, W, mesh) returns, per rank, the expected output and the expected in-place arguments
after the call ({position: value}; empty for problems without in-place results). The computations live in one
module per problem family (independent_*.py); this file dispatches to them and holds what the test needs
besides: f64 (from float64.py) and bf16_gemm_bound.
"""

import independent_collectives_gemms as gemms
import independent_domain as domain
import independent_moe_exchanges as moe
import independent_optim_losses_norms as training
import independent_sequence_attention as sequence
from float64 import f64


def expected(name, args, W, mesh):
    """Per rank: (expected output, {in-place position: expected value after the call})."""
    none = [{} for _ in range(W)]
    outs = gemms.collectives(name, args, W)
    if outs is not None:
        return outs, none
    if name == "9_layernorm_backward":
        return training.layernorm_backward(args, W), none
    if name == "10_embedding_lookup":
        return moe.embedding_lookup(args, W), none
    if name in ("11_allgather_gemm_AT", "12_allgather_gemm"):
        return gemms.allgather_gemm(args, W), none
    if name in ("13_gemm_allreduce", "16_gemm_reducescatter"):
        return gemms.gemm(name, args, W), none
    if name == "14_gemm_allgather":
        return gemms.gemm_allgather(args, W), none
    if name == "18_tp_rms_norm":
        return training.rms_norm(args, W), none
    if name == "26_moe_token_preprocess":
        return moe.token_preprocess(args, W), none
    if name == "27_moe_all2all_primitive":
        return moe.all_to_all(args, W), none
    if name == "15_combined_sharded_gemms":
        return gemms.combined_sharded_gemms(args, W), none
    if name == "17_rope_allgather":
        return gemms.rope_allgather(args, W), none
    if name == "19_blocked_fp8_quantize":
        return gemms.fp8_quantize(args, W), none
    if name == "20_blocked_fp8_dequantize":
        return gemms.fp8_dequantize(args, W), none
    if name == "21_clip_grad_norm_no_ep":
        return training.clip(args, W)
    if name == "22_clip_grad_norm_ep":
        return training.clip_ep(args, W)
    if name == "23_grad_acc_loss":
        return training.grad_acc_loss(args, W), none
    if name == "24_load_balancing_loss_fn":
        return training.load_balancing_loss(args, W), none
    if name == "25_importance_sampling_loss":
        return training.importance_sampling_loss(args, W), none
    if name.split("_")[0] in ("33", "34", "35", "36", "37", "38"):
        return sequence.ulysses(name, args, W), none
    if name == "39_ulysses_attention_e2e":
        return sequence.ulysses_attention(args, W), none
    if name == "44_quantized_grad_allreduce":
        return gemms.int8_mean(args, W), none
    if name == "45_reducescatter_fused_rmsnorm":
        return training.reducescatter_rmsnorm(args, W), none
    if name == "46_gemv_decode":
        return gemms.gemv_decode(args, W), none
    if name in ("52_fp8_reduce_scatter_grads", "53_fp8_allgather_params"):
        return gemms.fp8_collective(name, args, W), none
    if name == "40_ddp":
        return training.ddp(args, W), none
    if name in ("41_zero1_optimizer_shard", "42_zero2_optimizer_shard_grad"):
        return training.zero(args, W), none
    if name == "43_fused_adam_grad_unshard_allgather":
        return training.fused_adam(args, W), none
    if name == "47_fsdp_step_e2e":
        return training.fsdp_step(args, W), none
    if name == "48_fsdp_and_tp":
        return training.fsdp_and_tp(args, W, mesh), none
    if name == "54_ring_attention":
        return sequence.cp_attention(args, W), none
    if name == "28_moe_pre_all2all":
        return moe.moe_dispatch(args, W), none
    if name == "29_moe_post_all2all":
        return moe.moe_combine(args, W), none
    if name == "30_moe_epgroupgemm_lora_backward":
        return moe.lora_grads_sum(args, W), none
    if name == "31_fused_moe_fwd":
        return moe.moe_forward(args, W, W), none
    if name == "32_fused_moe_fwd_lora":
        return moe.moe_forward(args, W, W, lora=True), none
    if name in ("49_moe_ep_balanced", "50_moe_ep_wide"):
        return moe.moe_forward(args, W, W), none
    if name == "51_moe_ep_narrow":
        experts = args[0][-3]  # EP groups of as many ranks as experts
        return moe.moe_forward(args, W, min(W, experts)), none
    if name == "55_ring_attention_tp":
        return sequence.ring_attention(args, W, mesh), none
    if name == "56_ring_attention_pp":
        return sequence.pipeline_attention(args, W, mesh), none
    if name == "57_ring_attention_backward_dp":
        return sequence.ring_attention_backward(args, W, mesh), none
    if name == "58_openclip_contrastive_loss":
        return training.siglip(args, W), none
    if name == "59_physicsnemo_distributed_rfft":
        return domain.distributed_rfft(args, W), none
    if name == "60_physicsnemo_distributed_irfft":
        return domain.distributed_irfft(args, W), none
    if name == "61_gsplat_3d_gaussian_splatting":
        return domain.gaussian_splatting(args, W), none
    if name == "62_torchharmonics_spherical_convolution":
        return domain.spherical_conv(args, W, mesh), none
    if name == "63_deepmd_kalman_filter_optimizer":
        return training.kalman(args, W)
    if name == "64_gnn_neighbor_sampling":
        return domain.neighbor_sampling(args, W), none
    if name == "65_gnn_feature_exchange_all2all":
        return moe.feature_exchange(args, W), none
    if name == "66_gnn_feature_exchange_all2all_backward":
        return moe.feature_exchange_backward(args, W), none
    if name == "67_gnn_sparse_embedding_all2all":
        return moe.sparse_embedding_route(args, W), none
    if name == "68_gnn_sparse_feature_fetch_projection":
        return moe.feature_fetch(args, W), none
    if name == "69_gnn_negative_scoring":
        return [domain.tie_intervals(args, W)] * W, none
    if name == "70_torchrec_kjt_all2all":
        return moe.kjt_all_to_all(args, W), none
    if name == "73_vocab_parallel_cross_entropy_loss":
        return training.vocab_parallel_cross_entropy(args, W)
    if name in ("82_vocab_parallel_log_prob_topk", "83_vocab_parallel_log_prob_topk_chunked"):
        return training.log_prob_topk(args, W), none  # chunking changes which rank computes a token, not its value
    if name == "84_vocab_parallel_log_prob_topk_chunked_backward":
        return training.log_prob_topk_backward(args, W), none
    if name == "71_hyena_conv1d_boundary_exchange":
        return sequence.halo_conv1d(args, W), none
    if name == "72_hyena_forward_cp":
        return sequence.hyena_long_conv(args, W), none
    if name == "74_fla_kimi_delta_attention_cp_tp":
        return sequence.kimi_delta(args, W, mesh), none
    if name == "75_fla_gated_deltanet_cp":
        return sequence.gated_deltanet(args, W), none
    if name == "76_opensora_conv3d_allreduce":
        return domain.conv3d_allreduce(args, W), none
    if name == "79_dinov2_distributed_knn":
        return domain.knn(args, W), none
    if name == "80_dinov2_distributed_sinkhorn_knopp":
        return domain.sinkhorn(args, W), none
    if name == "85_distributed_sample_sort":
        return domain.sample_sort(args, W), none
    if name == "77_magi1_cso_async_attention":
        return sequence.range_attention(args, W), none
    if name == "78_magi1_tile_parallel_vae_decode":
        return domain.tiled_decode(args, W), none
    if name == "81_sam3_allgather_iou_suppression":
        return domain.mask_suppression(args, W), none
    if name == "86_tp_muon_orthogonalization":
        return training.newton_schulz(args, W), none
    if name == "87_conv2d_boundary_exchange":
        return domain.halo_conv2d(args, W), none
    raise AssertionError(f"no independent computation for {name}")


def bf16_gemm_bound(name, args, W):
    """Worst-case error of a bf16 sum of W bf16-rounded partial products: each of the W roundings of a partial
    and of a partial sum is at most 2^-9 of the magnitudes involved (doubled for slack)."""
    magnitude = sum((f64(A) @ f64(B)).abs() for A, B in args)
    bound = W * 2.0 ** -8 * magnitude
    return [bound] * W if name == "13_gemm_allreduce" else list(bound.chunk(W, dim=0))
