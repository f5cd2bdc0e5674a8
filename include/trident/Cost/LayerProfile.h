//===- LayerProfile.h - MLIR-free per-layer cost table ---------*- C++ -*-===//
//
// The contract between the Analysis (which walks tgraph through its op
// interfaces) and Cost/Search (which evaluate millions of plans and must not
// see MLIR). A LayerProfile is built for one sequence length; every
// per-sample quantity is for one sequence (micro-batch b = 1) of the whole,
// unsharded layer, so the cost model scales it by b and divides it by the
// parallel sizes itself.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_COST_LAYERPROFILE_H
#define TRIDENT_COST_LAYERPROFILE_H

#include "trident/Support/DType.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace trident {

/// How a GEMM is split by Megatron-style tensor parallelism.
enum class TpSplit : uint8_t {
  None,   ///< replicated on every TP rank (router, small heads)
  Column, ///< output features (N) split; input replicated
  Row,    ///< reduction dim (K) split; output partial, needs a reduction
  Heads,  ///< batched over attention heads; heads split across TP ranks
  Vocab   ///< LM head / embedding split over the vocabulary
};

/// One matrix multiply (or a batch of identical ones) in a layer.
/// Rows M = rowsPerSample * micro_batch (tokens); the GEMM computes
/// batch x (M x K) * (K x N): 2*M*N*K*batch forward FLOPs.
struct GemmCost {
  double rowsPerSample = 0; ///< tokens per sequence reaching this GEMM
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;        ///< independent GEMMs (attention heads)
  TpSplit split = TpSplit::None;
  bool attentionCore = false; ///< QK^T or AV: recomputed under `selective`
  /// Attention core: the scores' product QK^T (not AV), which a backward
  /// that keeps only the log-sum-exp computes again.
  bool scores = false;
  bool expert = false;        ///< routed expert GEMM (split by EP)
  /// Kept in 16 bits when the model trains or serves in FP8. Megatron-LM
  /// (d98e8a64) builds the output layer (the LM head) as
  /// tensor_parallel.ColumnParallelLinear, not a Transformer Engine module,
  /// unless fp8_output_proj is set with the MXFP8 recipe
  /// (models/gpt/gpt_model.py), and the MoE router's router_gating_linear
  /// runs in the input's dtype or fp32 (transformer/moe/router.py). Read
  /// through gemmDtype.
  bool sixteenBit = false;
  /// Fraction of the batch*M*N work actually computed (e.g. 0.5 for a
  /// causal mask exploited by a fused kernel). Model FLOPs ignore it.
  double density = 1.0;
  /// Attention core only: the keys a query may attend (the sequence, or
  /// its window). Sets the fused kernel's length efficiency
  /// (flashLengthEfficiency).
  int64_t keys = 0;
  /// Which operands the bf16 programs of `trident emit` hold in bf16
  /// tensors rather than fp32 ones (EvalOptions::bf16InFp32Storage): the
  /// input x (read by the forward and the weight gradient), the weight
  /// (the forward and the data gradient), the output's gradient dy (both
  /// backward products). They set which path each product takes and what
  /// it copies first (trident/Support/Bf16Gemm.h, bf16GemmPays).
  bool xBf16 = false;
  bool wBf16 = false;
  bool dyBf16 = false;
};

/// Query rows per block of a fused attention kernel: FlashAttention-2
/// (Dao 2023, "FlashAttention-2: Faster Attention with Better Parallelism
/// and Work Partitioning", Sec. 3.1.1 and its kernels' 128 x 64 tiles for
/// head dimension 128) skips the blocks wholly above a causal mask's
/// diagonal and computes the diagonal ones whole, masked.
inline constexpr int64_t kFlashBlockRows = 128;

/// The fraction of the s x s square a fused kernel computes under a causal
/// mask: with n = ceil(s / kFlashBlockRows) query blocks, block i visits
/// i + 1 key blocks of the same size, (n + 1) / (2 n) in all.
inline double causalFlashDensity(int64_t seq) {
  double n = double((seq + kFlashBlockRows - 1) / kFlashBlockRows);
  return n > 0 ? (n + 1) / (2 * n) : 1.0;
}

/// The data type `g` runs in when the model's GEMMs run in `compute`.
inline DType gemmDtype(const GemmCost &g, DType compute) {
  return compute == DType::FP8 && g.sixteenBit ? DType::BF16 : compute;
}

/// The dimensions of one GPU's part of a GEMM split `split` over `t`
/// ranks: the output features (column, vocabulary), the reduction (row)
/// or the heads (batch) divided by `t`.
inline void splitGemm(TpSplit split, double t, double &n, double &k,
                      double &batch) {
  switch (split) {
  case TpSplit::Column:
  case TpSplit::Vocab:
    n /= t;
    break;
  case TpSplit::Row:
    k /= t;
    break;
  case TpSplit::Heads:
    batch /= t;
    break;
  case TpSplit::None:
    break;
  }
}

/// What a layer is, so stages can treat embedding and head specially.
enum class LayerKind : uint8_t { Embedding, Block, Head, Other };

/// Costs of one layer (or one repeated block body), per sample (b = 1).
struct LayerCost {
  std::string name;
  LayerKind kind = LayerKind::Block;

  // --- compute (model FLOPs; the recompute forward is not included) ---
  double fwdFlops = 0; ///< forward FLOPs per sample
  double bwdFlops = 0; ///< backward FLOPs per sample (usually 2x fwd)
  double attnCoreFwdFlops = 0; ///< part of fwdFlops in QK^T / softmax / AV
  std::vector<GemmCost> gemms;
  /// Memory traffic of the non-GEMM ops per sample (elementwise, norms,
  /// softmax, lookups), forward; split by whether TP divides it.
  double fwdBytesTpSharded = 0;
  double fwdBytesReplicated = 0; ///< divided by TP only with SP
  /// Part of fwdBytesTpSharded spent on the materialised s^2 attention
  /// (softmax, mask, dropout); a fused (flash) attention kernel does not
  /// move it, so the cost model drops it when flash attention is on.
  double attnCoreBytes = 0;
  int64_t numKernels = 0; ///< kernels launched in the forward pass

  // --- parameters (elements) ---
  int64_t paramsTpSharded = 0;   ///< divided by TP (column/row linears)
  int64_t paramsReplicated = 0;  ///< norms, biases of row linears, router
  int64_t paramsExpert = 0;      ///< routed experts (divided by EP * ETP)
  int64_t paramsVocab = 0;       ///< embedding / LM head (divided by TP)
  int64_t paramBytesPerElem = 2; ///< bytes of one parameter element
  /// Parameter tensors (weights, biases, norm scales): what a runtime that
  /// gathers one tensor at a time (DeepSpeed ZeRO-3 of 2021) launches a
  /// collective for. 0: unknown (counted as one).
  int64_t paramTensors = 0;
  /// The largest parameter tensor (elements), among those TP splits
  /// (column/row linears, vocabulary) and those it does not (norms,
  /// router): what ZeRO-3 holds gathered when it gathers one tensor at a
  /// time. Routed experts are left out (no such runtime has experts).
  int64_t largestTpShardedTensor = 0, largestReplicatedTensor = 0;
  /// Parameters this layer reads but another layer owns (an LM head tied
  /// to the embedding): a stage holding this layer but not the owner keeps
  /// its own copy (and synchronises its gradient with the owner).
  int64_t tiedParams = 0;

  // --- activations saved for backward, bytes per sample ---
  /// Inside the TP region (after a column split): divided by TP.
  double actTpSharded = 0;
  /// Outside it (norm inputs, residual, dropout masks): divided by TP
  /// only with sequence parallelism (Korthikanti et al. 2022, Sec. 4.2).
  double actReplicated = 0;
  /// The s^2 attention-core terms (softmax, dropout mask, dropout out):
  /// divided by TP; dropped under selective recompute.
  double actAttnCore = 0;
  /// Of actTpSharded and actReplicated: the inputs of weight GEMMs that
  /// FP8 training runs in FP8 and keeps as one-byte copies (Transformer
  /// Engine; OpCost::savedGemmInputBytes).
  double actGemmInTpSharded = 0, actGemmInReplicated = 0;
  /// The saved inputs the bf16 programs of `trident emit` keep in bf16
  /// tensors (OpCost::savedBf16TensorBytes; EvalOptions::bf16InFp32Storage).
  double actBf16TensorTpSharded = 0, actBf16TensorReplicated = 0;
  /// Input of the layer: what full recompute keeps (checkpoint).
  double actLayerInput = 0;

  // --- communication per sample ---
  /// Tensor-parallel reductions per forward pass (all-reduce without SP,
  /// reduce-scatter + all-gather with SP); the backward has as many.
  int64_t tpCollectivesFwd = 0;
  double tpCollectiveBytes = 0; ///< size of one such collective per sample
  /// Bytes a sample sends through the expert all-to-all, one direction,
  /// forward (dispatch; combine is the same again).
  double a2aBytesPerSample = 0;
  int64_t numExperts = 0;
  int64_t topK = 0;
  /// Attention K/V bytes per sample exchanged under context parallelism.
  double cpKvBytesPerSample = 0;
  /// Attention query and output bytes per sample: with K and V, what the
  /// all-to-all context parallelism (cp_comm_type a2a) moves.
  double cpQoBytesPerSample = 0;

  // --- serving (lib/Serve): the K/V cache and decode attention ---
  /// Bytes one token adds to this layer's K/V cache at the profile dtype:
  /// its keys and values, or for multi-head latent attention the latent
  /// and the shared rotary key (what vLLM and SGLang cache for MLA).
  double kvCacheBytesPerToken = 0;
  /// Heads the cache splits into under tensor parallelism: the KV heads
  /// (a TP degree above them replicates them), 1 for MLA's latent.
  int64_t kvCacheHeads = 0;
  /// Sliding window of the attention (0: full): the cache of this layer
  /// keeps at most that many tokens.
  int64_t attentionWindow = 0;
  /// Attention-core FLOPs of one query token per cached key (QK^T and AV:
  /// 2 h d + 2 h d_v), a prompt's attention work.
  double attnFlopsPerKey = 0;
  /// The same for a decoding token. Equal to attnFlopsPerKey but for
  /// multi-head latent attention, which engines decode in its absorbed
  /// form (DeepSeek-V2, Liu et al. 2024, Sec. 2.1.2: W_UK folded into the
  /// query, W_UV after the attention), attending over the cached latent
  /// and rotary key: 2 h (c + r) + 2 h c, c = kv_lora_rank, r = the
  /// rotary key's width.
  double decodeFlopsPerKey = 0;

  int64_t params() const {
    return paramsTpSharded + paramsReplicated + paramsExpert + paramsVocab;
  }
};

/// Parameter elements one GPU holds gathered for a layer of `L` under
/// ZeRO-3 (once; the Evaluator counts two for the prefetch): the whole
/// layer after its TP and expert splits, or, for a runtime that gathers
/// one tensor at a time, its largest tensor.
inline double zero3GatherElements(const LayerCost &L, double tp,
                                  double expertSplit, bool perTensor) {
  if (perTensor)
    return std::max(double(L.largestTpShardedTensor) / tp,
                    double(L.largestReplicatedTensor));
  return double(L.paramsTpSharded + L.paramsVocab) / tp +
         double(L.paramsReplicated) + double(L.paramsExpert) / expertSplit;
}

/// One run of identical consecutive layers.
struct LayerGroup {
  LayerCost cost;
  int64_t count = 1;
};

/// The whole model at one sequence length.
struct LayerProfile {
  std::string modelName;
  int64_t seqLen = 0;
  DType dtype = DType::BF16;
  int64_t hidden = 0;
  int64_t vocabSize = 0;
  int64_t numHeads = 0;
  /// Key/value heads (query groups): Megatron-LM splits them over tp
  /// (ParallelAttention: divide(num_query_groups, tp)), so tp must divide
  /// them as it divides the query heads. 0: unknown (no check).
  int64_t numKvHeads = 0;
  int64_t numLayers = 0; ///< transformer blocks (sum of Block counts)
  /// In execution order: embedding, blocks..., head (with final norm and
  /// loss). Pipeline partitioning splits Block groups at layer granularity.
  std::vector<LayerGroup> groups;

  int64_t totalParams = 0;
  int64_t activeParams = 0;     ///< parameters a token touches (MoE)
  double fwdFlopsPerToken = 0;  ///< model FLOPs, forward
  double trainFlopsPerToken = 0; ///< forward + backward, no recompute
};

} // namespace trident

#endif // TRIDENT_COST_LAYERPROFILE_H
