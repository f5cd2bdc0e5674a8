//===- Evaluate.cpp - Step time and memory of one parallel plan -----------===//
//
// Layout of the work:
//  1. validate the config (errors name the field);
//  2. per (GPU group, parallel axes), the time / memory / comm of one layer
//     of every LayerProfile group for one micro-batch (cached: the search
//     revisits the same axes with other pp / dp / schedules);
//  3. per model chunk, sum its layers into forward / backward durations;
//  4. simulate the schedule (Schedule/Simulator.h) for the makespan and
//     the in-flight micro-batches;
//  5. add exposed DP synchronisation and the optimizer step; memory per
//     stage; throughput, MFU, HFU.
// Rationale and sources: docs/cost-model.md.
//
//===----------------------------------------------------------------------===//

#include "trident/Cost/Evaluate.h"

#include "trident/Cost/Roofline.h"
#include "trident/Schedule/ScheduleCache.h"
#include "trident/Support/Bf16Gemm.h"
#include "trident/Support/Text.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace trident {

namespace {

/// One layer of one profile group, one micro-batch, one GPU.
struct LayerTimes {
  double fwd = 0, bwd = 0;      ///< compute (GEMM, attention, elementwise)
  double attnFwd = 0, attnBwd = 0; ///< attention-core part of the above
  /// What selective recomputation adds to the backward: the attention
  /// core's forward, or under EvalOptions::selectiveKeepsLse the scores'
  /// product and the exponentials that form the probabilities again.
  double selectiveFwd = 0;
  double tpComm = 0;            ///< TP collectives of one pass
  double tpOverlappable = 0;    ///< TP-region GEMM time of one forward
  /// GEMM time that Transformer Engine's overlap runs on the SMs its
  /// communication kernels leave (kUbCommSms): forward, backward.
  double tpMarginFwd = 0, tpMarginBwd = 0;
  double cpFwd = 0, cpBwd = 0;  ///< context-parallel KV exchange, total
  double cpSteps = 0;           ///< ring steps (cp - 1)
  double cpStepFwd = 0, cpStepBwd = 0; ///< one step's transfer
  double epFwd = 0, epBwd = 0;  ///< expert all-to-all
  double actNone = 0, actSelective = 0, actFull = 0; ///< saved bytes
  double paramsDense = 0, paramsExpert = 0; ///< elements on this GPU
  double paramTensors = 0;                  ///< LayerCost::paramTensors
  double gatherElements = 0; ///< held gathered under ZeRO-3 (once)
  double fwdFlops = 0, attnFlops = 0;       ///< on this GPU
};

/// Everything layerTimes() depends on besides the layer and the hardware.
struct Axes {
  int64_t nodeGroup = 0;
  int64_t tp = 1, cp = 1, ep = 1, etp = 1, mb = 1;
  bool sp = false;
  DType dtype = DType::BF16;
  CpCommType cpComm = CpCommType::P2p;
  Fp8Recipe fp8 = Fp8Recipe::Delayed;
  /// GEMMs on bf16 tensor cores from bf16 tensors or copies of fp32 ones
  /// (EvalOptions::bf16InFp32Storage with a bf16 configuration): the
  /// emitted programs' rt::setBf16Gemms.
  bool bf16Copies = false;
  bool operator==(const Axes &) const = default;
};

/// One GEMM's seconds, launch bound: a product of M x K (A) by K x N (B),
/// B of them. Under Axes::bf16Copies (where the GPU has bf16 tensor
/// cores) the programs choose per product between bf16 tensor cores and
/// TF32 ones by bf16GemmPays (trident/Support/Bf16Gemm.h), given which
/// operands are bf16 tensors (`aBf16`, `bBf16`; GemmCost::xBf16 ...): the
/// bf16 path first copies its fp32 operands into bf16 ones, the TF32 path
/// widens its bf16 operands (each copy a kernel reading and writing
/// kGemmCopyBytesPerElement an element: rt::setBf16Gemms's kBf16Bits and
/// kBf16Widen, lib/Runtime/Cuda/CudaKernels.cu); either writes an fp32
/// result. Else as gemmTime prices `t` (fp32: TF32).
double gemmSeconds(const GpuSpec &gpu, const Axes &ax, double M, double N,
                   double K, double B, DType t, bool aBf16 = false,
                   bool bBf16 = false) {
  if (!ax.bf16Copies || gpu.peakBf16FlopsPerS <= 0)
    return launchBound(gpu, gemmTime(gpu, M, N, K, B, t).seconds);
  const bool bf16 = bf16GemmPays(M, N, K, aBf16, bBf16);
  // The operands copied first, and their elements.
  const bool copyA = aBf16 != bf16, copyB = bBf16 != bf16;
  const double copied = (copyA ? M * K * B : 0) + (copyB ? K * N * B : 0);
  double s;
  if (bf16) {
    KernelTime k = gemmTime(gpu, M, N, K, B, DType::BF16);
    double resultWiden = memorySeconds(gpu, 2 * M * N * B);
    s = launchBound(gpu,
                    std::max(k.computeSeconds, k.memorySeconds + resultWiden));
  } else {
    s = launchBound(gpu, gemmTime(gpu, M, N, K, B, t).seconds);
  }
  if (copyA || copyB)
    s += launchBound(gpu, memorySeconds(gpu, kGemmCopyBytesPerElement * copied),
                     double(int(copyA) + int(copyB)));
  return s;
}

DType activationDtype(DType precision) {
  // FP8 training (Transformer Engine) keeps activations in 16 bits.
  return precision == DType::FP8 ? DType::BF16 : precision;
}

/// Context parallelism's K/V exchange of one layer into `r`: its
/// forward and backward seconds, and for the ring its steps (exposure()
/// overlaps those with the attention blocks).
void contextParallelTimes(const LayerCost &L, const NodeGroup &hw,
                          const Axes &ax, const EvalOptions &o, double actScale,
                          LayerTimes &r) {
  const double tp = double(ax.tp), cp = double(ax.cp);
  // Context parallel as ring attention (Liu et al. 2023, "Ring Attention
  // with Blockwise Transformers for Near-Infinite Context"; Transformer
  // Engine's p2p context parallelism in Megatron-Core): cp - 1 steps, in
  // each of which a rank sends the K/V block it holds to the next rank and
  // receives the previous rank's while it computes attention on the block
  // it has; the backward passes K/V and the dK/dV accumulators (twice the
  // bytes). A step is a point-to-point transfer: over NVLink when the
  // ring (cp ranks tp apart) stays in a node, else at one GPU's share of
  // the NICs (a pair of ranks, not a multi-channel collective).
  if (ax.cp > 1 && L.cpKvBytesPerSample > 0 && ax.cpComm == CpCommType::P2p) {
    double block = L.cpKvBytesPerSample * double(ax.mb) / tp * actScale / cp;
    bool sameNode = ax.tp * ax.cp <= hw.gpusPerNode;
    r.cpSteps = cp - 1;
    r.cpStepFwd = p2pSeconds(hw, block, sameNode);
    r.cpStepBwd = p2pSeconds(hw, 2 * block, sameNode);
    r.cpFwd = r.cpSteps * r.cpStepFwd;
    r.cpBwd = r.cpSteps * r.cpStepBwd;
  } else if (ax.cp > 1 && L.cpKvBytesPerSample > 0) {
    // The collectives over the cp group (cp ranks tp apart), not
    // overlapped with the attention (it needs their result).
    CommGroupShape sh = groupShape(hw, ax.cp, ax.tp);
    // K and V of the whole sequence on one rank (its heads).
    double kv = L.cpKvBytesPerSample * double(ax.mb) / tp * actScale;
    if (ax.cpComm == CpCommType::AllGather) {
      // "The Llama 3 Herd of Models" (2024): K and V all-gathered before
      // the attention; the backward gathers them again and
      // reduce-scatters their gradients.
      double ag =
          collectiveSeconds(hw, CollectiveOp::AllGather, kv, sh, o.algorithm);
      double rs = collectiveSeconds(hw, CollectiveOp::ReduceScatter, kv, sh,
                                    o.algorithm);
      r.cpFwd = ag;
      r.cpBwd = ag + rs;
    } else {
      // DeepSpeed-Ulysses (Jacobs et al. 2023, "DeepSpeed Ulysses: System
      // Optimizations for Enabling Training of Extreme Long Sequence
      // Transformer Models"): q, k and v all-to-all from a sequence split
      // to a head split, the output back; the backward moves their
      // gradients the same way. Each rank sends its local part.
      double local = (L.cpKvBytesPerSample + L.cpQoBytesPerSample) *
                     double(ax.mb) / tp * actScale / cp;
      double a2a =
          collectiveSeconds(hw, CollectiveOp::AllToAll, local, sh, o.algorithm);
      r.cpFwd = a2a;
      r.cpBwd = a2a;
    }
  }
}

/// A layer's dense parameter elements on one GPU under tensor parallelism
/// `tp`, and its expert ones over ep x etp.
double denseParamsOnGpu(const LayerCost &L, int64_t tp) {
  return double(L.paramsTpSharded + L.paramsVocab) / double(tp) +
         double(L.paramsReplicated);
}
double expertParamsOnGpu(const LayerCost &L, int64_t ep, int64_t etp) {
  return double(L.paramsExpert) / (double(ep) * double(etp));
}

LayerTimes layerTimes(const LayerCost &L, const NodeGroup &hw, const Axes &ax,
                      const EvalOptions &o, DType profileDtype) {
  const GpuSpec &gpu = hw.gpu;
  LayerTimes r;
  const double tp = double(ax.tp), cp = double(ax.cp), ep = double(ax.ep);
  const double tokScale = double(ax.mb) / cp;
  const DType act = activationDtype(ax.dtype);
  const double actScale =
      double(dtypeBytes(act)) / double(dtypeBytes(profileDtype));
  const bool flash = o.flashAttention;
  int64_t numGemmKernels = 0;
  double scoresFwd = 0; // the unfused scores' products, forward
  double exponentials = 0; // the probabilities from the log-sum-exp

  double gemmFwd = 0, gemmBwd = 0;
  double expertFwd = 0; // the expert GEMMs' forward, permutation included
  double fp8CastFwdBytes = 0, fp8CastBwdBytes = 0;
  for (const GemmCost &g : L.gemms) {
    double t = g.expert ? double(ax.etp) : tp;
    double M = g.rowsPerSample * tokScale, N = double(g.n), K = double(g.k);
    double B = double(g.batch);
    if (g.expert) {
      // Local experts receive the tokens of the whole EP group.
      B /= ep;
      M *= ep;
    }
    splitGemm(g.split, t, N, K, B);
    if (M <= 0 || N <= 0 || K <= 0 || B <= 0)
      continue;
    double flops = 2 * M * N * K * B;
    r.fwdFlops += flops;
    if (g.attentionCore) {
      r.attnFlops += flops;
      if (flash) {
        // One fused kernel for the whole core; the efficiency is a
        // forward+backward figure against model FLOPs (bwd = 2 x fwd).
        double peak = gpu.peakFlopsPerS(act);
        double eff = o.attentionKernel == AttentionKernel::FlashAttention2
                         ? gpu.attentionEfficiencyFa2
                         : gpu.attentionEfficiency;
        // Each query visits keys x density of them; a ring step of
        // context parallelism runs the kernel on one rank's part.
        double visited = double(g.keys) * g.density;
        if (ax.cpComm == CpCommType::P2p)
          visited /= cp;
        eff *= flashLengthEfficiency(visited);
        double tf = flops * g.density / (peak * eff);
        r.attnFwd += tf;
        r.attnBwd += 2 * tf;
      } else {
        double f = gemmSeconds(gpu, ax, M, N, K, B, act);
        double b = gemmSeconds(gpu, ax, M, K, N, B, act) +
                   gemmSeconds(gpu, ax, K, N, M, B, act);
        if (g.scores)
          scoresFwd += f;
        r.attnFwd += f;
        r.attnBwd += b;
        ++numGemmKernels;
      }
      continue;
    }
    ++numGemmKernels;
    const DType gt = gemmDtype(g, ax.dtype);
    if (gt == DType::FP8) {
      // Transformer Engine quantises GEMM inputs (the forward's
      // activations, the backward's output gradient), per recipe.
      fp8CastFwdBytes += fp8CastBytesPerElement(ax.fp8, true) * M * K * B;
      fp8CastBwdBytes += fp8CastBytesPerElement(ax.fp8, false) * M * N * B;
    }
    double f = gemmSeconds(gpu, ax, M, N, K, B, gt, g.xBf16, g.wBf16);
    // dgrad: dY (M x N) W^T (N x K); wgrad: X^T (K x M) dY (M x N).
    double b = gemmSeconds(gpu, ax, M, K, N, B, gt, g.dyBf16, g.wBf16) +
               gemmSeconds(gpu, ax, K, N, M, B, gt, g.xBf16, g.dyBf16);
    if (g.expert) {
      // The busiest expert sets the pace (EvalOptions::expertLoadImbalance).
      f *= o.expertLoadImbalance;
      b *= o.expertLoadImbalance;
      // Permuting tokens to their experts and back: read and write each
      // routed token twice per direction.
      double permute = 4 * M * K * B * double(dtypeBytes(act));
      f += memorySeconds(gpu, permute);
      b += memorySeconds(gpu, permute);
      // One GEMM per local expert (forward; data and weight gradient).
      double local = L.numExperts > 0 ? double(L.numExperts) / ep : 1.0;
      f += local * o.groupedGemmSecondsPerExpert;
      b += 2 * local * o.groupedGemmSecondsPerExpert;
      expertFwd += f;
    }
    gemmFwd += f;
    gemmBwd += b;
    if (g.split != TpSplit::None && ax.tp > 1)
      r.tpOverlappable += f;
    // Under --tp-comm-overlap (Transformer Engine's defaults, base.py
    // initialize_ub at d0067d0): the row-parallel forward GEMMs
    // (proj_fprop, fc2_fprop: "pipeline") and both backward GEMMs of the
    // column-parallel ones (qkv/fc1 dgrad and wgrad: "bulk") share the GPU
    // with a communication kernel on kUbCommSms SMs; the others use the
    // copy engines ("ring_exchange") or none. Expert GEMMs are not
    // overlapped.
    if (ax.tp > 1 && !g.expert) {
      if (g.split == TpSplit::Row)
        r.tpMarginFwd += f;
      else if (g.split == TpSplit::Column)
        r.tpMarginBwd += b;
    }
  }
  if (flash && r.attnFwd > 0)
    ++numGemmKernels; // the fused kernel

  // Non-GEMM traffic.
  double sharded = L.fwdBytesTpSharded - (flash ? L.attnCoreBytes : 0);
  // Under autocast the elementwise kernels move fp32 elements.
  const double ewScale =
      o.autocast ? std::max(1.0, 4.0 / double(dtypeBytes(act))) : 1.0;
  double ewBytes = (std::max(0.0, sharded) / tp +
                    L.fwdBytesReplicated / (ax.sp ? tp : 1)) *
                   tokScale * actScale * ewScale;
  double ewKernels = double(std::max<int64_t>(0, L.numKernels - numGemmKernels));
  double ewFwd = launchBound(
      gpu, memorySeconds(gpu, ewBytes + fp8CastFwdBytes), ewKernels);
  double ewBwd = launchBound(
      gpu, memorySeconds(gpu, 2 * ewBytes + fp8CastBwdBytes), 2 * ewKernels);
  if (!flash && L.attnCoreBytes > 0) {
    // Unfused softmax / dropout: recomputed with the core under selective.
    double core = memorySeconds(gpu, L.attnCoreBytes / tp * tokScale * actScale);
    r.attnFwd += core;
    r.attnBwd += 2 * core;
    ewFwd = std::max(0.0, ewFwd - core);
    ewBwd = std::max(0.0, ewBwd - 2 * core);
    // Selective keeping the log-sum-exp: the exponentials read the scores
    // and write the probabilities (two of the forward's four passes).
    exponentials = core / 2;
  }
  // Selective recomputation: the core's forward again, or the scores'
  // products and the exponentials.
  r.selectiveFwd =
      o.selectiveFormsScoresOnly() ? scoresFwd + exponentials : r.attnFwd;
  r.fwd = gemmFwd + r.attnFwd + ewFwd;
  r.bwd = gemmBwd + r.attnBwd + ewBwd;
  // The host work behind an MoE layer's synchronisation
  // (EvalOptions::moeLayerHostSeconds) overlaps the expert kernels it
  // launches: the GPU waits for what the expert GEMMs do not cover. A
  // recompute forward waits again.
  if (L.numExperts > 0)
    r.fwd += std::max(0.0, o.moeLayerHostSeconds - expertFwd);

  // Tensor parallel: all-reduce, or reduce-scatter + all-gather with SP.
  if (ax.tp > 1 && L.tpCollectivesFwd > 0 && L.tpCollectiveBytes > 0) {
    CommGroupShape sh = groupShape(hw, ax.tp, 1);
    double bytes = L.tpCollectiveBytes * tokScale * actScale;
    double one =
        ax.sp ? collectiveSeconds(hw, CollectiveOp::ReduceScatter, bytes, sh,
                                  o.algorithm) +
                    collectiveSeconds(hw, CollectiveOp::AllGather, bytes, sh,
                                      o.algorithm)
              : collectiveSeconds(hw, CollectiveOp::AllReduce, bytes, sh,
                                  o.algorithm);
    r.tpComm = double(L.tpCollectivesFwd) * one;
  }
  contextParallelTimes(L, hw, ax, o, actScale, r);
  // Expert parallel: dispatch + combine all-to-all, forward and backward.
  // Folded, an ep group's members are etp ranks apart; else the group is
  // carved out of dp, tp x cp ranks apart.
  if (ax.ep > 1 && L.a2aBytesPerSample > 0) {
    CommGroupShape sh =
        groupShape(hw, ax.ep, o.expertFolding ? ax.etp : ax.tp * ax.cp);
    double bytes =
        L.a2aBytesPerSample * tokScale / (ax.sp ? tp : 1) * actScale;
    if (o.moeDispatcher == MoeDispatcher::AllGather && L.topK > 0) {
      // The group's tokens, once each (not top-k copies): gathered for the
      // dispatch and reduce-scattered back for the combine; the backward
      // gathers the output gradients and reduce-scatters the input ones.
      double group = bytes / double(L.topK) * double(ax.ep);
      double ag = collectiveSeconds(hw, CollectiveOp::AllGather, group, sh,
                                    o.algorithm);
      double rs = collectiveSeconds(hw, CollectiveOp::ReduceScatter, group,
                                    sh, o.algorithm);
      r.epFwd = ag + rs;
      r.epBwd = ag + rs;
    } else if (o.moeDispatcher == MoeDispatcher::Flex && L.topK > 0) {
      // Dispatch and combine move the same copies, in opposite directions.
      double one = flexDispatchSeconds(hw, bytes / double(L.topK), L.numExperts,
                                       L.topK, sh);
      r.epFwd = 2 * one;
      r.epBwd = 2 * one;
    } else {
      double a2a = collectiveSeconds(hw, CollectiveOp::AllToAll, bytes, sh,
                                     o.algorithm);
      r.epFwd = 2 * a2a;
      r.epBwd = 2 * a2a;
    }
  }

  double s = L.actTpSharded / tp, rep = L.actReplicated / (ax.sp ? tp : 1);
  double core = flash ? 0 : L.actAttnCore / tp;
  double scale = tokScale * actScale;
  r.actNone = (s + rep + core) * scale;
  r.actSelective = (s + rep) * scale;
  if (ax.dtype == DType::FP8) {
    // Transformer Engine keeps the FP8 GEMMs' inputs as their FP8 copies
    // (one byte an element) instead of the 16-bit activations.
    double gemmIn =
        (L.actGemmInTpSharded / tp + L.actGemmInReplicated / (ax.sp ? tp : 1)) *
        scale;
    double saving = gemmIn * (1 - 1 / double(dtypeBytes(act)));
    r.actNone -= saving;
    r.actSelective -= saving;
  }
  if (ax.bf16Copies) {
    // The emitted bf16 programs keep what only linear layers read in bf16
    // tensors (rt::toBf16), the rest in fp32 ones (bf16InFp32Storage):
    // two bytes an element of the four the fp32 pricing counts.
    double linearIn = (L.actBf16TensorTpSharded / tp +
                       L.actBf16TensorReplicated / (ax.sp ? tp : 1)) *
                      scale;
    r.actNone -= linearIn / 2;
    r.actSelective -= linearIn / 2;
  }
  r.actFull = L.actLayerInput / (ax.sp ? tp : 1) * scale;
  r.paramsDense = denseParamsOnGpu(L, ax.tp);
  r.paramsExpert = expertParamsOnGpu(L, ax.ep, ax.etp);
  r.paramTensors = double(L.paramTensors);
  r.gatherElements =
      zero3GatherElements(L, tp, ep * double(ax.etp), o.zero3GatherPerTensor);
  return r;
}

/// SMs Transformer Engine's userbuffers communication kernels take in the
/// "pipeline" and "bulk" overlaps (num_sm 16 by default, with
/// set_sm_margin on: transformer_engine/pytorch/module/base.py
/// initialize_ub at d0067d0, lines 384-391; TE 2.0 and later).
constexpr double kUbCommSms = 16;

/// How much longer a GEMM runs when capped at the SMs the communication
/// kernel leaves (comm_gemm_overlap.cpp at d0067d0, lines 142-144:
/// _math_sms = sm_count - num_comm_sm), as the SM ratio: SMs / (SMs - 16)
/// - 1 (GpuSpec::smCount is positive; a GPU of no more SMs than that is
/// not priced a margin).
double ubMarginSlowdown(const GpuSpec &gpu) {
  double sms = double(gpu.smCount);
  return sms > kUbCommSms ? sms / (sms - kUbCommSms) - 1 : 0.0;
}

/// Exposed part of one layer's communication, forward and backward.
struct Exposure {
  double fwd = 0, bwd = 0, hiddenFwd = 0, hiddenBwd = 0;
  /// Compute time the tensor-parallel overlap adds: its GEMMs on fewer SMs.
  double slowFwd = 0, slowBwd = 0;
  /// fwd and bwd by PassComm kind (TP, CP, EP; no DP per layer).
  std::array<double, kPassCommKinds> kindFwd{}, kindBwd{};
};
/// `overlapTp`: the tensor-parallel collectives run beside the GEMMs of
/// the tensor-parallel region (the configuration's tp_comm_overlap),
/// hidden up to those GEMMs' time; the GEMMs that share
/// the GPU with a communication kernel take `marginSlowdown` longer
/// (ubMarginSlowdown). The compute under the hidden ring-attention
/// transfers runs `contention` longer per second of them
/// (EvalOptions::overlapComputeSlowdown). `epOverlapShare`: the share of
/// the stage's passes whose expert dispatch and combine run beside the
/// compute of a partner pass of another micro-batch
/// (EvalOptions::overlapEpComm; 0: exposed whole).
Exposure exposure(const LayerTimes &t, bool overlapTp, double marginSlowdown,
                  double contention, double epOverlapShare) {
  Exposure e;
  if (overlapTp) {
    e.slowFwd = t.tpMarginFwd * marginSlowdown;
    e.slowBwd = t.tpMarginBwd * marginSlowdown;
  }
  double tpF =
      overlapTp ? std::max(0.0, t.tpComm - t.tpOverlappable) : t.tpComm;
  double tpB =
      overlapTp ? std::max(0.0, t.tpComm - 2 * t.tpOverlappable) : t.tpComm;
  // Ring attention overlaps each step's transfer with one block of the
  // attention (1/cp of it): a step longer than its block is exposed. The
  // all-gather and all-to-all forms are exposed whole.
  double blocks = t.cpSteps + 1;
  double cpF = t.cpSteps > 0
                   ? t.cpSteps * std::max(0.0, t.cpStepFwd - t.attnFwd / blocks)
                   : t.cpFwd;
  double cpB = t.cpSteps > 0
                   ? t.cpSteps * std::max(0.0, t.cpStepBwd - t.attnBwd / blocks)
                   : t.cpBwd;
  // Expert-parallel overlap: a forward's exchange hides behind its partner
  // backward's compute, a backward's behind its partner forward's, less
  // the compute the partner already hides its own tensor-parallel
  // collectives behind (one budget, not two).
  double epF = t.epFwd, epB = t.epBwd;
  if (epOverlapShare > 0) {
    const double sh = epOverlapShare;
    const double coverB = std::max(0.0, t.bwd - (t.tpComm - tpB));
    const double coverF = std::max(0.0, t.fwd - (t.tpComm - tpF));
    epF = (1 - sh) * t.epFwd + sh * std::max(0.0, t.epFwd - coverB);
    epB = (1 - sh) * t.epBwd + sh * std::max(0.0, t.epBwd - coverF);
  }
  e.fwd = tpF + cpF + epF;
  e.bwd = tpB + cpB + epB;
  e.kindFwd = {tpF, cpF, epF, 0};
  e.kindBwd = {tpB, cpB, epB, 0};
  e.hiddenFwd = (t.tpComm - tpF) + (t.cpFwd - cpF) + (t.epFwd - epF);
  e.hiddenBwd = (t.tpComm - tpB) + (t.cpBwd - cpB) + (t.epBwd - epB);
  // The compute beside a hidden exchange is the partner pass's: the
  // forward's exchange slows the backward and the other way round.
  e.slowFwd += contention * ((t.cpFwd - cpF) + (t.epBwd - epB));
  e.slowBwd += contention * ((t.cpBwd - cpB) + (t.epFwd - epF));
  return e;
}

std::string gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  return buf;
}

constexpr int kCacheSlots = 64;

} // namespace

namespace {
/// A ring all-reduce of `bytes` per rank among k ranks, one in each node
/// group, over the link between the groups: 2(k-1)/k of the bytes and
/// 2(k-1) hops (Patarasuk & Yuan 2009, "Bandwidth optimal all-reduce
/// algorithms").
double interGroupAllReduceSeconds(const LinkSpec &link, double bytes,
                                  double k) {
  return 2 * (k - 1) / k * bytes / link.bandwidthBytesPerS +
         2 * (k - 1) * link.latencySeconds;
}
} // namespace

//===----------------------------------------------------------------------===//
// Runtimes
//===----------------------------------------------------------------------===//

namespace {
constexpr std::pair<MoeDispatcher, std::string_view> kMoeDispatchers[] = {
    {MoeDispatcher::AllToAll, "alltoall"},
    {MoeDispatcher::AllGather, "allgather"},
    {MoeDispatcher::Flex, "flex"},
};
} // namespace

std::optional<MoeDispatcher> parseMoeDispatcher(std::string_view name) {
  for (auto [d, n] : kMoeDispatchers)
    if (n == name)
      return d;
  return std::nullopt;
}

std::string_view moeDispatcherName(MoeDispatcher d) {
  for (auto [k, n] : kMoeDispatchers)
    if (k == d)
      return n;
  return "?";
}

std::string moeDispatcherNames() {
  std::string s;
  constexpr size_t n = std::size(kMoeDispatchers);
  for (size_t i = 0; i < n; ++i)
    s += std::string(i == 0       ? ""
                     : i + 1 == n ? " or "
                                  : ", ") +
         std::string(kMoeDispatchers[i].second);
  return s;
}

CpCommType cpCommOf(const ParallelAxes &a, const EvalOptions &o) {
  return a.cpCommType != CpCommType::P2p ? a.cpCommType : o.cpCommType;
}

Fp8Recipe fp8RecipeOf(const ParallelAxes &a, const EvalOptions &o) {
  return a.fp8Recipe != Fp8Recipe::Delayed ? a.fp8Recipe : o.fp8Recipe;
}

double fp8CastBytesPerElement(Fp8Recipe recipe, bool forward) {
  // Forward: read 2, write 1; backward: read 2, write 2 x 1 (the gradient
  // and its transpose). Current scaling (Float8CurrentScaling) first
  // reduces the tensor's amax, reading it once more.
  double bytes = forward ? 3 : 4;
  if (recipe == Fp8Recipe::Tensorwise)
    bytes += 2;
  return bytes;
}

void stateSettings(ParallelAxes &a, const EvalOptions &o) {
  a.cpCommType = a.cp > 1 ? cpCommOf(a, o) : CpCommType::P2p;
  a.fp8Recipe = fp8RecipeOf(a, o);
}

void applyRuntime(EvalOptions &o, Runtime r) {
  o.runtime = r;
  // Megatron-Core / NeMo: Transformer Engine's cuDNN fused attention,
  // 16-bit elementwise kernels, --overlap-grad-reduce.
  o.bf16InFp32Storage = false;
  o.flashAttention = true;
  o.attentionKernel = AttentionKernel::Best;
  o.autocast = false;
  o.selectiveForwardFraction = 0;
  o.selectiveKeepsLse = false;
  o.overlapGradReduce = true;
  o.zero1ReduceInOptimizer = false;
  o.gradReduceAfterLastSend = false;
  o.zero2ReducePerMicroBatch = false;
  o.overlapZero3Gather = true;
  o.zero3GatherPerTensor = false;
  o.zero3GradBucketElements = 0;
  o.zero3GatherBytesPerS = 0;
  o.zero3RegatherAfterRecompute = false;
  o.overlapParamGather = false;
  o.moeDispatcher = MoeDispatcher::AllToAll;
  // Transformer Engine's GroupedLinear: one cuBLAS GEMM per local expert.
  o.groupedGemmSecondsPerExpert = kTeGroupedGemmSecondsPerExpert;
  o.moeLayerHostSeconds = kMoeLayerHostSeconds;
  o.expertFolding = true;
  o.tiedSumOfZeroSlice = false;
  o.masterWeightRemainders = false;
  o.cpCommType = CpCommType::P2p;
  switch (r) {
  case Runtime::MegatronCore:
    break;
  case Runtime::MegatronLm:
    // Megatron-LM of Narayanan et al. 2021 and Korthikanti et al. 2022
    // predates FlashAttention (Dao et al., May 2022): attention scores are
    // materialised (fused scale-mask-softmax kernel, s^2 activations, the
    // 5as/h term of Korthikanti's Eq. 1), and its local DDP all-reduces the
    // gradients after the backward (overlap arrived with Megatron-Core's
    // --overlap-grad-reduce).
    o.flashAttention = false;
    o.overlapGradReduce = false;
    break;
  case Runtime::Fsdp:
    // PyTorch FSDP under torch.autocast (llm-foundry's amp_bf16, Hugging
    // Face Trainer): FlashAttention-2, fp32 norms and residual stream.
    o.attentionKernel = AttentionKernel::FlashAttention2;
    o.autocast = true;
    // Experts (Hugging Face's modules) are not priced per expert.
    o.groupedGemmSecondsPerExpert = 0;
    o.moeLayerHostSeconds = 0;
    break;
  case Runtime::Torchtitan:
    // FSDP2 with bf16 parameters (MixedPrecisionPolicy) and PyTorch SDPA,
    // whose flash backend is FlashAttention-2; no autocast. Its selective
    // activation checkpointing (torchtitan/distributed/activation_checkpoint
    // .py) recomputes every second transformer block (selective_ac_option
    // "2") or every second matmul with the elementwise ops around it
    // ("op"): about half the forward, not Korthikanti's attention core.
    o.attentionKernel = AttentionKernel::FlashAttention2;
    o.selectiveForwardFraction = 0.5;
    // torch._grouped_mm: one kernel for all local experts.
    o.groupedGemmSecondsPerExpert = 0;
    o.moeLayerHostSeconds = 0;
    break;
  case Runtime::Trident:
    // The programs of `trident emit` (lib/Runtime, docs/runtime.md): per
    // sample, batched GEMMs over the heads and one softmax kernel, so the
    // scores are materialised and kept for the backward like
    // Megatron-LM's. Its gradient sums (docs/emit.md, "Gradient sums
    // overlapping the backward"): ZeRO-0 all-reduces and ZeRO-1
    // reduce-scatters during the last backward, on stages after the first
    // only after their last send; ZeRO-2 reduce-scatters every micro-batch; ZeRO-3 gathers up to
    // two matrices ahead of the parameter in use (rt::zero3GatherAsync),
    // as Megatron-Core prefetches; ZeRO-1/2 gather the updated parameters
    // during the next forward, two matrices ahead of their first use
    // (rt::zeroGatherChunksAsync, as Megatron-LM's --overlap-param-gather).
    o.flashAttention = false;
    o.overlapGradReduce = true;
    o.zero1ReduceInOptimizer = false;
    o.gradReduceAfterLastSend = true;
    o.zero2ReducePerMicroBatch = true;
    o.overlapZero3Gather = true;
    o.overlapParamGather = true;
    // Experts over ep: the all-gather token dispatcher (docs/emit.md,
    // "Mixture of experts"), ep carved out of dp, etp 1 or tp
    // (TGraphToExec's lowering of tgraph.moe).
    o.moeDispatcher = MoeDispatcher::AllGather;
    o.expertFolding = false;
    // Their expert GEMMs' per-call cost is not measured (docs/cost-model.md,
    // Known gaps).
    o.groupedGemmSecondsPerExpert = 0;
    o.moeLayerHostSeconds = 0;
    // Context parallelism: K and V all-gathered over cp, their gradients
    // reduce-scattered back (docs/emit.md, "Context parallelism").
    o.cpCommType = CpCommType::AllGather;
    // A tied embedding's sum over the first and last stage: under ZeRO-2/3
    // of the gradient slice (gradAllReduce in lib/Target/ExecToCpp.cpp).
    o.tiedSumOfZeroSlice = true;
    // Selective recomputation keeps attention's rows' log-sum-exp; the
    // backward forms the scores and probabilities again from it
    // (rt::attentionForward; TGraphToExec's lowering of tgraph.attention).
    o.selectiveKeepsLse = true;
    // Its bf16 programs hold bf16 values in fp32 tensors and run bf16
    // GEMMs on copies of them (docs/emit.md, "bf16 mixed precision").
    o.bf16InFp32Storage = true;
    break;
  case Runtime::DeepSpeed:
    // DeepSpeed ZeRO of 2021 (v0.3.12 to v0.4.2, read at v0.4.2, commit
    // a0292398) driving Megatron-LM's model code, as Narayanan et al.
    // 2021 ran its ZeRO-3 comparison: Megatron-LM's kernels (no
    // FlashAttention), and ZeRO-3 as deepspeed/runtime/zero then did it:
    // - each submodule's parameters are gathered one tensor at a time
    //   (partition_parameters.py _allgather_param, one
    //   torch.distributed.all_gather per parameter over one flat group);
    // - each gather is preceded by torch.cuda.synchronize(), so it does
    //   not overlap compute ("the async version is not async at all",
    //   DeepSpeed PR #1188, which coalesced the gathers in October 2021);
    // - gradients are reduced by all-reducing buckets of reduce_bucket_size
    //   = 5e8 elements and keeping the rank's slice (stage3.py
    //   buffered_reduce_fallback; contiguous_gradients defaulted to False
    //   until v0.4.3), overlapping the backward (overlap_comm True).
    o.flashAttention = false;
    o.overlapGradReduce = true;
    o.overlapZero3Gather = false;
    o.zero3GatherPerTensor = true;
    o.zero3GradBucketElements = kDeepSpeedReduceBucketElements;
    // - each gather moves at most 20.8 GB/s into a GPU (issue #1174), and
    //   under full recompute the recompute forward gathers once more.
    o.zero3GatherBytesPerS = kDeepSpeedZero3GatherBytesPerS;
    o.zero3RegatherAfterRecompute = true;
    // No Transformer Engine: experts not priced per expert.
    o.groupedGemmSecondsPerExpert = 0;
    o.moeLayerHostSeconds = 0;
    break;
  case Runtime::Nemo:
    // NeMo 1.x (NeMo-Framework-Launcher recipes, containers to 24.07):
    // Megatron-Core's model code under NeMo's distributed_fused_adam,
    // Apex's DistributedFusedAdam. For a bf16 model with an fp32
    // optimizer NeMo sets store_params = False and store_param_remainders
    // = True (nemo/collections/nlp/models/language_modeling/
    // megatron_base_model.py, setup_optimization): the master weights
    // are the bf16 weights plus a 16-bit remainder.
    o.masterWeightRemainders = true;
    break;
  }
}

//===----------------------------------------------------------------------===//
// Scratch
//===----------------------------------------------------------------------===//

struct Evaluator::Impl {
  struct Slot {
    bool valid = false;
    Axes key;
    std::vector<LayerTimes> perGroup; ///< indexed like profile.groups
  };
  std::array<Slot, kCacheSlots> cache;

  // Last compiled schedule used (ScheduleCache::getSimulated).
  bool haveSched = false;
  ScheduleCache::Simulated sched;

  PipelineCosts costs;
  SimWorkspace ws;
  std::vector<double> stageIdle;
  std::vector<int64_t> chunkBegin, chunkEnd; ///< block range per chunk
  std::vector<double> chunkAct;             ///< saved bytes per micro-batch
  std::vector<double> chunkExposed, chunkHidden, chunkCompute;
  /// Parameter tensors of each chunk (EvalOptions::zero3GatherPerTensor).
  std::vector<double> chunkTensors;
  std::vector<double> chunkRecomputeWork; ///< full recompute working set
  std::vector<int64_t> stageGroup;
};

Evaluator::Evaluator() : impl_(std::make_unique<Impl>()) {}
Evaluator::~Evaluator() = default;
const PipelineCosts &Evaluator::lastPipelineCosts() const {
  return impl_->costs;
}
Evaluator::Evaluator(Evaluator &&) noexcept = default;
Evaluator &Evaluator::operator=(Evaluator &&) noexcept = default;
Evaluator::Evaluator(const Evaluator &o)
    : profile_(o.profile_), cluster_(o.cluster_), options_(o.options_),
      embeddingGroups_(o.embeddingGroups_), blockGroups_(o.blockGroups_),
      headGroups_(o.headGroups_), blockPrefix_(o.blockPrefix_),
      numBlocks_(o.numBlocks_), modelFlopsPerToken_(o.modelFlopsPerToken_),
      blockFwdFlopsPerToken_(o.blockFwdFlopsPerToken_),
      attnCoreFlopsPerToken_(o.attnCoreFlopsPerToken_),
      tiedVocabParams_(o.tiedVocabParams_),
      headListsTied_(o.headListsTied_), hasExperts_(o.hasExperts_),
      minExperts_(o.minExperts_), groupEvaluators_(o.groupEvaluators_),
      impl_(std::make_unique<Impl>()) {
  for (Impl::Slot &slot : impl_->cache)
    slot.perGroup.resize(profile_.groups.size());
}
Evaluator &Evaluator::operator=(const Evaluator &o) {
  if (this != &o) {
    Evaluator copy(o);
    *this = std::move(copy);
  }
  return *this;
}

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

Status checkExpertLoadImbalance(double f) {
  if (f >= 1 && std::isfinite(f))
    return Status::ok();
  return Status::error("expected a number >= 1, got " + formatNumber("%g", f));
}

Result<Evaluator> Evaluator::create(const LayerProfile &profile,
                                    const Cluster &cluster,
                                    const EvalOptions &options) {
  if (Status s = validateCluster(cluster); !s)
    return Status::error("cluster '" + cluster.name + "': " + s.message());
  std::string where = "model '" + profile.modelName + "': ";
  if (profile.seqLen <= 0)
    return Status::error(where + "seq_len must be positive");
  if (profile.hidden <= 0)
    return Status::error(where + "hidden size must be positive");
  if (profile.groups.empty())
    return Status::error(where + "the profile has no layers");
  if (options.gradBytesPerParam < 0 || options.optimizerBytesPerParam < 0 ||
      options.reservedBytes < 0 || !std::isfinite(options.reservedBytes) ||
      !(options.allocatorCacheFraction >= 0) ||
      !std::isfinite(options.allocatorCacheFraction))
    return Status::error("options: byte counts and the allocator cache "
                         "fraction must be non-negative");
  if (Status st = checkExpertLoadImbalance(options.expertLoadImbalance); !st)
    return Status::error("options: expertLoadImbalance: " + st.message());

  Evaluator e;
  e.profile_ = profile;
  e.cluster_ = cluster;
  e.options_ = options;
  const double s = double(profile.seqLen);
  double trainFlops = 0;
  for (size_t i = 0; i < profile.groups.size(); ++i) {
    const LayerGroup &g = profile.groups[i];
    if (g.count <= 0)
      return Status::error(where + "layer group '" + g.cost.name +
                           "' has count " + std::to_string(g.count));
    const LayerCost &c = g.cost;
    for (double v :
         {c.fwdFlops, c.bwdFlops, c.fwdBytesTpSharded, c.fwdBytesReplicated,
          c.actTpSharded, c.actReplicated, c.actAttnCore, c.actLayerInput,
          c.actGemmInTpSharded, c.actGemmInReplicated, c.actBf16TensorTpSharded,
          c.actBf16TensorReplicated, c.tpCollectiveBytes, c.a2aBytesPerSample,
          c.cpKvBytesPerSample})
      if (!std::isfinite(v) || v < 0)
        return Status::error(where + "layer '" + c.name +
                             "' has a negative or non-finite cost");
    trainFlops += double(g.count) * (c.fwdFlops + c.bwdFlops);
    switch (c.kind) {
    case LayerKind::Embedding:
      e.embeddingGroups_.push_back(int32_t(i));
      break;
    case LayerKind::Head:
      e.headGroups_.push_back(int32_t(i));
      break;
    case LayerKind::Block:
    case LayerKind::Other:
      e.blockPrefix_.push_back(e.numBlocks_);
      e.blockGroups_.push_back(int32_t(i));
      e.numBlocks_ += g.count;
      e.blockFwdFlopsPerToken_ += double(g.count) * c.fwdFlops / s;
      e.attnCoreFlopsPerToken_ += double(g.count) * c.attnCoreFwdFlops / s;
      if (c.paramsExpert > 0 || c.numExperts > 0) {
        e.hasExperts_ = true;
        if (c.numExperts > 0)
          e.minExperts_ = e.minExperts_ == 0
                              ? c.numExperts
                              : std::min(e.minExperts_, c.numExperts);
      }
      break;
    }
  }
  if (e.numBlocks_ == 0)
    return Status::error(where + "the profile has no transformer blocks");
  // Tied embeddings: a profile analysed from tgraph names the matrix the
  // head reads from the embedding (tiedParams); an analytic one lists it
  // under both, its total counting it once.
  for (int32_t gi : e.headGroups_) {
    const LayerGroup &g = profile.groups[size_t(gi)];
    e.tiedVocabParams_ += double(g.count) * double(g.cost.tiedParams);
  }
  if (e.tiedVocabParams_ == 0 && !e.headGroups_.empty() &&
      profile.totalParams > 0) {
    double listed = 0;
    for (const LayerGroup &g : profile.groups)
      listed += double(g.count) * double(g.cost.params());
    double headVocab = 0;
    for (int32_t gi : e.headGroups_)
      headVocab += double(profile.groups[size_t(gi)].cost.paramsVocab);
    double extra = listed - double(profile.totalParams);
    if (extra > 0 && std::fabs(extra - headVocab) <= 1e-6 * headVocab) {
      e.tiedVocabParams_ = headVocab;
      e.headListsTied_ = true;
    }
  }
  e.blockPrefix_.push_back(e.numBlocks_);
  e.modelFlopsPerToken_ = profile.trainFlopsPerToken > 0
                              ? profile.trainFlopsPerToken
                              : trainFlops / s;
  for (Impl::Slot &slot : e.impl_->cache)
    slot.perGroup.resize(profile.groups.size());
  // Heterogeneous: each node group alone, for plans with data shares.
  if (cluster.groups.size() > 1) {
    for (const NodeGroup &g : cluster.groups) {
      Cluster one = cluster;
      one.name = cluster.name + "/" + g.name;
      one.groups = {g};
      Result<Evaluator> sub = create(profile, one, options);
      if (!sub)
        return sub.status();
      e.groupEvaluators_.push_back(std::move(*sub));
    }
  }
  return e;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

Status Evaluator::validate(const ParallelConfig &c) const {
  auto err = [](const std::string &m) { return Status::error("config: " + m); };
  auto str = [](int64_t v) { return std::to_string(v); };
  // Every axis within its row's bounds (kAxes, Plan/Parallel.h): 2^24 for
  // the sizes (the cluster limit), so that products of two fit in 64
  // bits; 2^31 for the batch.
  for (const AxisSpec &a : kAxes) {
    int64_t v = a.get(c);
    if (v < a.minValue)
      return err(std::string(a.jsonKey) + " must be >= " + str(a.minValue) +
                 (a.axis == Axis::Etp ? " (0 = tp)" : "") + ", got " + str(v));
    if (v > a.maxValue)
      return err(std::string(a.jsonKey) + " = " + str(v) +
                 " is above the supported limit " + str(a.maxValue));
  }
  if (c.globalBatch < 1)
    return err("global_batch must be >= 1, got " + str(c.globalBatch));
  if (c.globalBatch > (int64_t(1) << 31))
    return err("global_batch = " + str(c.globalBatch) +
               " is above the supported limit " + str(int64_t(1) << 31));
  if (!c.stageRecompute.empty() && int64_t(c.stageRecompute.size()) != c.pp)
    return err("per-stage recompute lists " + str(int64_t(c.stageRecompute.size())) +
               " stages but pp=" + str(c.pp));
  if (!c.dataShares.empty())
    return validateShares(c);
  int64_t total = cluster_.totalGpus();
  if (c.gpus() != total)
    return err("dp*tp*pp*cp = " + str(c.dp) + "*" + str(c.tp) + "*" +
               str(c.pp) + "*" + str(c.cp) + " = " + str(c.gpus()) +
               " but cluster '" + cluster_.name + "' has " + str(total) +
               " GPUs");
  int64_t stageGpus = c.dp * c.tp * c.cp;
  for (size_t gi = 0; gi < cluster_.groups.size(); ++gi) {
    const NodeGroup &g = cluster_.groups[gi];
    if (g.gpus() % stageGpus != 0)
      return err("a pipeline stage has dp*tp*cp = " + str(stageGpus) +
                 " GPUs, which does not divide group '" + g.name + "' (" +
                 str(g.gpus()) + " GPUs): a stage would span two GPU types");
    if (c.tp <= g.gpusPerNode) {
      if (g.gpusPerNode % c.tp != 0)
        return err("tp=" + str(c.tp) + " does not divide the " +
                   str(g.gpusPerNode) + " GPUs of a node of '" + g.name + "'");
    } else if (!options_.allowTpAcrossNodes) {
      return err("tp=" + str(c.tp) + " exceeds the " + str(g.gpusPerNode) +
                 " GPUs of a node of '" + g.name +
                 "' (set allowTpAcrossNodes to permit)");
    } else if (c.tp % g.gpusPerNode != 0) {
      return err("tp=" + str(c.tp) + " spans nodes but is not a multiple of " +
                 str(g.gpusPerNode));
    }
    if (g.gpu.peakFlopsPerS(c.precision) <= 0)
      return err("precision " + std::string(dtypeName(c.precision)) +
                 " is not supported by " + g.gpu.name);
  }
  int64_t etp = c.etp == 0 ? c.tp : c.etp;
  if (!options_.expertFolding) {
    if (c.dp % c.ep != 0)
      return err("dp=" + str(c.dp) + " is not divisible by ep=" + str(c.ep) +
                 " (runtime '" + std::string(runtimeName(options_.runtime)) +
                 "' carves expert parallelism out of data parallelism)");
    if (c.ep > 1 && etp != 1 && etp != c.tp)
      return err("etp=" + str(etp) + " with tp=" + str(c.tp) +
                 ": runtime '" + std::string(runtimeName(options_.runtime)) +
                 "' splits experts like the dense layers (etp = tp) or "
                 "replicates them over tp (etp = 1)");
  }
  if (c.ep > 1 && !hasExperts_)
    return err("ep=" + str(c.ep) + " but model '" + profile_.modelName +
               "' has no routed experts");
  if (minExperts_ > 0 && minExperts_ % c.ep != 0)
    return err("ep=" + str(c.ep) + " does not divide the " + str(minExperts_) +
               " experts");
  if ((c.dp * c.cp * c.tp) % (c.ep * etp) != 0)
    return err("ep*etp = " + str(c.ep * etp) + " does not divide dp*cp*tp = " +
               str(c.dp * c.cp * c.tp));
  if (c.globalBatch % (c.dp * c.microBatch) != 0)
    return err("global_batch=" + str(c.globalBatch) +
               " is not divisible by dp*micro_batch = " +
               str(c.dp * c.microBatch));
  if (profile_.seqLen % c.cp != 0)
    return err("seq_len=" + str(profile_.seqLen) + " is not divisible by cp=" +
               str(c.cp));
  if (c.sequenceParallel && (profile_.seqLen / c.cp) % c.tp != 0)
    return err("sequence parallelism needs seq_len/cp = " +
               str(profile_.seqLen / c.cp) + " divisible by tp=" + str(c.tp));
  // DeepSpeed-Ulysses hands each cp rank whole heads of its tp shard.
  if (c.cp > 1 && cpCommOf(c, options_) == CpCommType::A2a &&
      ((profile_.numHeads > 0 && profile_.numHeads % (c.tp * c.cp) != 0) ||
       (profile_.numKvHeads > 0 && profile_.numKvHeads % (c.tp * c.cp) != 0)))
    return err("cp_comm_type a2a needs num_heads=" + str(profile_.numHeads) +
               " and num_kv_heads=" + str(profile_.numKvHeads) +
               " divisible by tp*cp = " + str(c.tp * c.cp));
  // Megatron-LM asserts sequence parallelism under --tp-comm-overlap
  // (arguments.py at d98e8a64); with tp 1 there is nothing to overlap.
  if (c.tpCommOverlap && (c.tp < 2 || !c.sequenceParallel))
    return err("tp_comm_overlap needs tp > 1 and sequence parallelism (got "
               "tp=" +
               str(c.tp) + ", sequence_parallel=" +
               (c.sequenceParallel ? "true" : "false") + ")");
  // Megatron-Core's checks of --overlap-moe-expert-parallel-comm
  // (transformer_config.py, TransformerConfig.__post_init__): expert
  // parallelism, the alltoall or flex dispatcher, virtual stages when
  // pp > 1, no full recomputation, a bf16 or fp16 model.
  if (options_.overlapEpComm) {
    bool fullRecompute = false;
    for (int64_t s = 0; s < c.pp; ++s)
      fullRecompute = fullRecompute || c.recomputeOf(s) == Recompute::Full;
    const char *why = nullptr;
    if (c.ep < 2)
      why = "expert parallelism (ep > 1)";
    else if (options_.moeDispatcher == MoeDispatcher::AllGather)
      why = "the alltoall or flex token dispatcher";
    else if (c.pp > 1 && c.vpp < 2)
      why = "virtual pipeline stages when pp > 1";
    else if (fullRecompute)
      why = "no full recomputation";
    else if (c.precision == DType::F32)
      why = "a bf16 or fp16 (or fp8) model";
    if (why)
      return err(std::string("the expert-parallel overlap needs ") + why +
                 " (Megatron-Core's checks of "
                 "--overlap-moe-expert-parallel-comm)");
  }
  // A recipe scales FP8 tensors; in another precision it means nothing.
  // MXFP8's per-32-element scales are applied by the tensor cores of
  // Blackwell only (Megatron-Core's transformer_config.py at d98e8a64:
  // "'mxfp8' for Blackwell architecture only").
  const Fp8Recipe recipe = fp8RecipeOf(c, options_);
  if (std::string why = fp8RecipePrecisionRefusal(recipe, c.precision);
      !why.empty())
    return err(why);
  if (recipe == Fp8Recipe::Mxfp8)
    for (const NodeGroup &g : cluster_.groups)
      if (!g.gpu.mxfp8)
        return err("fp8_recipe mxfp8 needs GPUs that scale blocks of 32 in "
                   "hardware (Blackwell: B200, GB200); " +
                   g.gpu.name + " has none");
  if (profile_.numHeads > 0 && profile_.numHeads % c.tp != 0)
    return err("num_heads=" + str(profile_.numHeads) +
               " is not divisible by tp=" + str(c.tp));
  if (profile_.numKvHeads > 0 && profile_.numKvHeads % c.tp != 0)
    return err("num_kv_heads=" + str(profile_.numKvHeads) +
               " is not divisible by tp=" + str(c.tp) +
               " (Megatron splits the key/value groups over tp)");
  if (numBlocks_ < c.pp * c.vpp)
    return err("the model has " + str(numBlocks_) +
               " layers, fewer than pp*vpp = " + str(c.pp * c.vpp));
  ScheduleKind kind = c.scheduleKind();
  int64_t m = c.globalBatch / (c.dp * c.microBatch);
  if (Status s = checkScheduleParams(kind, c.pp, m, c.vpp); !s)
    return err("schedule " + std::string(scheduleKindName(kind)) + " with " +
               str(m) + " micro-batches: " + s.message());
  if (!c.layersPerChunk.empty()) {
    int64_t chunks = c.pp * c.vpp;
    if (int64_t(c.layersPerChunk.size()) != chunks &&
        !(c.vpp == 1 && int64_t(c.layersPerChunk.size()) == c.pp))
      return err("layers_per_stage has " + str(int64_t(c.layersPerChunk.size())) +
                 " entries; expected pp*vpp = " + str(chunks));
    int64_t sum = 0;
    for (int64_t v : c.layersPerChunk) {
      if (v < 0)
        return err("layers_per_stage has a negative entry");
      sum += v;
    }
    if (sum != numBlocks_)
      return err("layers_per_stage sums to " + str(sum) + " but the model has " +
                 str(numBlocks_) + " layers");
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

ParallelConfig Evaluator::shareConfig(const ParallelConfig &c,
                                     size_t share) const {
  const DataShare &d = c.dataShares[share];
  ParallelConfig sub = c;
  sub.dataShares.clear();
  sub.dp = d.dp;
  sub.globalBatch = d.dp * c.microBatch * d.microBatches;
  return sub;
}

Status Evaluator::validateShares(const ParallelConfig &c) const {
  auto err = [](const std::string &m) { return Status::error("config: " + m); };
  auto str = [](int64_t v) { return std::to_string(v); };
  if (groupEvaluators_.empty())
    return err("data shares need a cluster of several node groups; '" +
               cluster_.name + "' has one");
  if (c.dataShares.size() != cluster_.groups.size())
    return err("data shares list " + str(int64_t(c.dataShares.size())) +
               " node groups but cluster '" + cluster_.name + "' has " +
               str(int64_t(cluster_.groups.size())));
  std::vector<bool> seen(cluster_.groups.size(), false);
  int64_t dpSum = 0, batch = 0;
  for (const DataShare &d : c.dataShares) {
    if (d.group < 0 || d.group >= int64_t(cluster_.groups.size()))
      return err("data share group " + str(d.group) + " is not a node group "
                 "of cluster '" + cluster_.name + "'");
    const std::string name = cluster_.groups[size_t(d.group)].name;
    if (seen[size_t(d.group)])
      return err("node group '" + name + "' has two data shares");
    seen[size_t(d.group)] = true;
    if (d.dp < 1 || d.dp > (int64_t(1) << 24))
      return err("data share of '" + name + "': dp must be in [1, 2^24], got " +
                 str(d.dp));
    if (d.microBatches < 1 ||
        d.microBatches > c.globalBatch / (d.dp * c.microBatch))
      return err("data share of '" + name + "': " + str(d.microBatches) +
                 " micro-batches of " + str(c.microBatch) + " on " +
                 str(d.dp) + " replicas do not fit in global_batch=" +
                 str(c.globalBatch));
    dpSum += d.dp;
    batch += d.dp * c.microBatch * d.microBatches;
  }
  if (dpSum != c.dp)
    return err("dp=" + str(c.dp) + " but the data shares add up to " +
               str(dpSum) + " replicas");
  if (batch != c.globalBatch)
    return err("global_batch=" + str(c.globalBatch) +
               " but the data shares run " + str(batch) +
               " sequences (sum of dp * micro_batch * micro-batches)");
  for (size_t i = 0; i < c.dataShares.size(); ++i) {
    const DataShare &d = c.dataShares[i];
    if (Status s = groupEvaluators_[size_t(d.group)].validate(shareConfig(c, i));
        !s)
      return err("data share of '" + cluster_.groups[size_t(d.group)].name +
                 "': " + s.message());
  }
  return Status::ok();
}

Status Evaluator::evaluateShares(const ParallelConfig &c, Evaluation &out) {
  const size_t n = c.dataShares.size();
  shareEvals_.resize(n);
  size_t slowest = 0;
  for (size_t i = 0; i < n; ++i) {
    const DataShare &d = c.dataShares[i];
    if (Status s = groupEvaluators_[size_t(d.group)].evaluate(shareConfig(c, i),
                                                             shareEvals_[i]);
        !s)
      return s;
    if (shareEvals_[i].iterationSeconds > shareEvals_[slowest].iterationSeconds)
      slowest = i;
  }
  // Each group reduces its gradients internally (in its own evaluation);
  // then the groups all-reduce across the inter-group link, every GPU its
  // 1/(dp cp) slice in parallel, hierarchically (ring over the n groups:
  // 2(n-1)/n of the bytes; Patarasuk & Yuan 2009, "Bandwidth optimal
  // all-reduce algorithms"). Counted as exposed: it starts when the
  // slowest group's own reduction ends.
  const StateBytesPerParam state = stateBytesPerParam(c.precision, options_);
  double sliceBytes = 0;
  out.stages.clear();
  out.shareSeconds.clear();
  double recomputedFlops = 0;
  int64_t maxM = 0;
  for (size_t i = 0; i < n; ++i) {
    const DataShare &d = c.dataShares[i];
    const Evaluation &e = shareEvals_[i];
    double dpcp = double(d.dp * c.cp);
    for (const StageBreakdown &st : e.stages) {
      StageBreakdown b = st;
      b.nodeGroup = d.group;
      out.stages.push_back(b);
      double elems = st.weightBytes / state.weight *
                     (c.zeroStage >= 3 ? dpcp : 1.0);
      sliceBytes = std::max(sliceBytes, elems * state.gradient / dpcp);
    }
    recomputedFlops += e.hardwareFlopsPerStep - e.modelFlopsPerStep;
    out.shareSeconds.push_back(e.iterationSeconds);
    maxM = std::max(maxM, e.microBatches);
  }
  double cross = 0;
  if (n > 1)
    cross = interGroupAllReduceSeconds(cluster_.interGroup, sliceBytes,
                                       double(n));
  const Evaluation &slow = shareEvals_[slowest];
  out.iterationSeconds = slow.iterationSeconds + cross;
  out.pipelineSeconds = slow.pipelineSeconds;
  out.bubbleFraction = slow.bubbleFraction;
  out.dpExposedSeconds = slow.dpExposedSeconds + cross;
  out.tiedEmbeddingSeconds = slow.tiedEmbeddingSeconds;
  out.optimizerSeconds = slow.optimizerSeconds;
  out.crossGroupSyncSeconds = cross;
  out.microBatches = maxM;
  out.schedule = slow.schedule;
  return finishTotals(c, recomputedFlops, out);
}

/// An evaluation stopped after the memory: the stages' bytes, the peak,
/// and no times (evaluateIfFits).
Status Evaluator::memoryOnlyResult(Evaluation &out) const {
  out.runtime = options_.runtime;
  out.moeDispatcher = options_.moeDispatcher;
  out.overlapEpComm = options_.overlapEpComm;
  out.expertLoadImbalance = options_.expertLoadImbalance;
  out.memoryOnly = true;
  out.iterationSeconds = out.tokensPerSecond = out.tokensPerSecondPerGpu = 0;
  out.tflopsPerGpu = out.mfu = out.hfu = 0;
  out.pipelineSeconds = out.bubbleFraction = out.dpExposedSeconds = 0;
  out.tiedEmbeddingSeconds = out.optimizerSeconds = 0;
  out.modelFlopsPerStep = out.hardwareFlopsPerStep = 0;
  notePeakMemory(out);
  out.fits = false; // not within the fraction asked
  return Status::ok();
}

Status Evaluator::finishTotals(const ParallelConfig &c,
                               double recomputedFlops,
                               Evaluation &out) const {
  out.runtime = options_.runtime;
  out.moeDispatcher = options_.moeDispatcher;
  out.overlapEpComm = options_.overlapEpComm;
  out.expertLoadImbalance = options_.expertLoadImbalance;
  double tokens = double(c.globalBatch) * double(profile_.seqLen);
  out.tokensPerSecond = tokens / out.iterationSeconds;
  double gpus = double(cluster_.totalGpus());
  out.tokensPerSecondPerGpu = out.tokensPerSecond / gpus;
  out.modelFlopsPerStep = modelFlopsPerToken_ * tokens;
  out.hardwareFlopsPerStep = out.modelFlopsPerStep + recomputedFlops;
  double peakSum = 0;
  for (const NodeGroup &g : cluster_.groups)
    peakSum += double(g.gpus()) * g.gpu.peakFlopsPerS(c.precision);
  out.tflopsPerGpu = out.modelFlopsPerStep / out.iterationSeconds / gpus / 1e12;
  out.mfu = out.modelFlopsPerStep / out.iterationSeconds / peakSum;
  out.hfu = out.hardwareFlopsPerStep / out.iterationSeconds / peakSum;
  notePeakMemory(out);
  return checkFinite(c, out);
}

/// Whether every stage fits its GPU, and the largest stage's memory.
void Evaluator::notePeakMemory(Evaluation &out) const {
  out.fits = true;
  out.peakMemoryBytes = 0;
  for (size_t s = 0; s < out.stages.size(); ++s) {
    const StageBreakdown &st = out.stages[s];
    if (st.totalBytes > st.capacityBytes)
      out.fits = false;
    if (st.totalBytes > out.peakMemoryBytes) {
      out.peakMemoryBytes = st.totalBytes;
      out.peakMemoryStage = int64_t(s);
      out.memoryCapacityBytes = st.capacityBytes;
    }
  }
}

/// Every time and byte count of an evaluation is a finite number: a plan
/// with an infinite or NaN prediction must never be ranked or written
/// (ARCHITECTURE.md, "Predictions are finite"). A failure here is a bug of
/// the cost model for an input it accepted; the message names the
/// configuration and the first field that broke, so that it can be
/// reported and reproduced with `trident evaluate`.
Status Evaluator::checkFinite(const ParallelConfig &c,
                              const Evaluation &out) const {
  auto bad = [&](const std::string &field, double v) {
    return Status::error(
        "cost model: " + field + " is " + std::to_string(v) + " for dp=" +
        std::to_string(c.dp) + " tp=" + std::to_string(c.tp) + " pp=" +
        std::to_string(c.pp) + " cp=" + std::to_string(c.cp) + " ep=" +
        std::to_string(c.ep) + " on cluster '" + cluster_.name +
        "' (an internal error: please report the model, cluster and "
        "configuration)");
  };
  using Field = std::pair<const char *, double>;
  auto firstNonFinite = [&](std::initializer_list<Field> fields,
                            const std::string &at) -> Status {
    for (const Field &f : fields)
      if (!std::isfinite(f.second))
        return bad(at + f.first, f.second);
    return Status::ok();
  };
  if (Status s = firstNonFinite(
          {{"iteration time", out.iterationSeconds},
           {"pipeline time", out.pipelineSeconds},
           {"exposed data-parallel time", out.dpExposedSeconds},
           {"optimizer time", out.optimizerSeconds},
           {"throughput", out.tokensPerSecond},
           {"MFU", out.mfu},
           {"bubble fraction", out.bubbleFraction},
           {"peak memory", out.peakMemoryBytes}},
          "");
      !s)
    return s;
  if (!(out.iterationSeconds > 0))
    return bad("iteration time", out.iterationSeconds);
  for (size_t s = 0; s < out.stages.size(); ++s) {
    const StageBreakdown &st = out.stages[s];
    if (Status e = firstNonFinite(
            {{"compute time", st.computeSeconds},
             {"exposed communication", st.exposedCommSeconds},
             {"hidden communication", st.hiddenCommSeconds},
             {"bubble", st.bubbleSeconds},
             {"data-parallel time", st.dpCommSeconds},
             {"optimizer time", st.optimizerSeconds},
             {"memory", st.totalBytes}},
            "stage " + std::to_string(s) + " ");
        !e)
      return e;
  }
  return Status::ok();
}

/// What the parts of one evaluation share: the configuration, the options
/// and the sizes and bytes derived from them.
struct Evaluator::Frame {
  const ParallelConfig &c;
  const EvalOptions &o;
  int64_t p, v, G, m, etp, stageGpus, dpcp, edp;
  bool mixed;
  double weightBytes, gradBytes, optBytes;
  /// One point-to-point activation message between stages.
  double msgBytes;
};

/// The gradient synchronisation, optimizer and parameter gathers that
/// follow the pipeline, per step (the slowest stage's).
struct Evaluator::StepSums {
  double exposedGrad = 0, paramGather = 0, optimizer = 0;
};

/// Per model chunk: forward and backward times, exposed and hidden
/// communication, saved activations; per stage: parameter elements and the
/// largest layer, then the weight, gradient and optimizer bytes.
void Evaluator::chunkCosts(const Frame &f, Evaluation &out) {
  [[maybe_unused]] auto &[c, o, p, v, G, m, etp, stageGpus, dpcp, edp, mixed,
                          weightBytes, gradBytes, optBytes, msgBytes] = f;
  Impl &im = *impl_;
  [[maybe_unused]] PipelineCosts &pc = im.costs;
  // --- per-layer times for each group in use (cached by axes) ---
  auto layerTable = [&](int64_t nodeGroup) -> const std::vector<LayerTimes> & {
    const DType costed = costPrecision(c.precision, o);
    const CpCommType cpComm = cpCommOf(c, o);
    const Fp8Recipe fp8 = fp8RecipeOf(c, o);
    const bool bf16Copies = o.bf16InFp32Storage && c.precision == DType::BF16;
    Axes key{nodeGroup,          c.tp,   c.cp,   c.ep, etp,       c.microBatch,
             c.sequenceParallel, costed, cpComm, fp8,  bf16Copies};
    uint64_t h = uint64_t(nodeGroup) * 0x9E3779B97F4A7C15ull;
    for (int64_t x :
         {c.tp, c.cp, c.ep, etp, c.microBatch, int64_t(c.sequenceParallel),
          int64_t(costed), int64_t(cpComm), int64_t(fp8), int64_t(bf16Copies)})
      h = (h ^ uint64_t(x)) * 0x100000001B3ull;
    Impl::Slot &slot = im.cache[(h >> 7) % kCacheSlots];
    if (!slot.valid || !(slot.key == key)) {
      const NodeGroup &hw = cluster_.groups[size_t(nodeGroup)];
      for (size_t i = 0; i < profile_.groups.size(); ++i)
        slot.perGroup[i] =
            layerTimes(profile_.groups[i].cost, hw, key, o, profile_.dtype);
      slot.key = key;
      slot.valid = true;
    }
    return slot.perGroup;
  };

  // --- layers per model chunk ---
  im.chunkBegin.resize(size_t(G));
  im.chunkEnd.resize(size_t(G));
  {
    int64_t at = 0;
    for (int64_t g = 0; g < G; ++g) {
      int64_t n;
      if (!c.layersPerChunk.empty()) {
        n = c.layersPerChunk[size_t(g)];
      } else {
        // Balanced; the remainder goes to the chunks after the first
        // (which also holds the embedding).
        n = numBlocks_ / G + ((g >= 1 && g <= numBlocks_ % G) ? 1 : 0);
      }
      im.chunkBegin[size_t(g)] = at;
      at += n;
      im.chunkEnd[size_t(g)] = at;
    }
  }

  // --- chunk durations, memory and parameters ---
  pc.forwardSeconds.assign(size_t(G), 0.0);
  pc.backwardSeconds.assign(size_t(G), 0.0);
  pc.forwardComm.assign(size_t(G), {});
  pc.backwardComm.assign(size_t(G), {});
  pc.overlapP2P = o.overlapP2P;
  im.chunkAct.assign(size_t(G), 0.0);
  im.chunkExposed.assign(size_t(G), 0.0);
  im.chunkHidden.assign(size_t(G), 0.0);
  im.chunkCompute.assign(size_t(G), 0.0);
  im.chunkTensors.assign(size_t(G), 0.0);
  im.chunkRecomputeWork.assign(size_t(G), 0.0);
  std::vector<double> &chunkAct = im.chunkAct;

  // Per-stage parameter elements (dense, expert) and the largest layer.
  for (int64_t g = 0; g < G; ++g) {
    const int64_t s = g % p;
    const int64_t ng = im.stageGroup[size_t(s)];
    const std::vector<LayerTimes> &tab = layerTable(ng);
    const bool overlapTp = c.tpCommOverlap;
    const double marginSlowdown =
        overlapTp ? ubMarginSlowdown(cluster_.groups[size_t(ng)].gpu) : 0.0;
    StageBreakdown &st = out.stages[size_t(s)];
    st.nodeGroup = ng;
    const Recompute rc = c.recomputeOf(s);
    st.recompute = rc;
    double fwd = 0, bwd = 0, exposed = 0, hidden = 0, compute = 0;
    double act = 0, maxLayerAct = 0, maxLayerParams = 0;
    // EvalOptions::overlapEpComm: every pass has a partner but the stage's
    // warm-up forwards, as many cool-down backwards, and the first forward
    // and last backward (Megatron's schedules: (p - s - 1) * 2 + (v - 1) p
    // warm-up chunk forwards interleaved, p - s - 1 otherwise).
    double epOverlapShare = 0;
    if (o.overlapEpComm && c.ep > 1) {
      double warm =
          v > 1 ? double((p - s - 1) * 2 + (v - 1) * p) : double(p - s - 1);
      epOverlapShare =
          std::clamp(1.0 - (warm + 1) / (double(m) * double(v)), 0.0, 1.0);
    }
    auto add = [&](int32_t gi, double count) {
      if (count <= 0)
        return;
      const LayerTimes &t = tab[size_t(gi)];
      Exposure e = exposure(t, overlapTp, marginSlowdown,
                            o.overlapComputeSlowdown, epOverlapShare);
      // Compute, with the overlap's slower GEMMs.
      const double tf = t.fwd + e.slowFwd, tb = t.bwd + e.slowBwd;
      double f = tf + e.fwd, b = tb + e.bwd;
      double cmp = tf + tb;
      double hid = e.hiddenFwd + e.hiddenBwd;
      double la = t.actNone;
      if (rc == Recompute::Full) {
        b += tf + e.fwd; // the forward again, with its communication
        cmp += tf;
        hid += e.hiddenFwd;
        la = t.actFull;
      } else if (rc == Recompute::Selective && o.selectiveForwardFraction > 0) {
        // The runtime's selective policy recomputes this share of the
        // forward and saves the rest (torchtitan: every second layer, or
        // every second matmul).
        double fr = o.selectiveForwardFraction;
        b += fr * (tf + e.fwd);
        cmp += fr * tf;
        hid += fr * e.hiddenFwd;
        la = fr * t.actFull + (1 - fr) * t.actNone;
      } else if (rc == Recompute::Selective) {
        b += t.selectiveFwd;
        cmp += t.selectiveFwd;
        la = t.actSelective;
      }
      double recomputedShare = rc == Recompute::Full ? 1.0
                               : rc == Recompute::Selective
                                   ? o.selectiveForwardFraction
                                   : 0.0;
      fwd += count * f;
      bwd += count * b;
      compute += count * cmp;
      exposed += count * (e.fwd + e.bwd + recomputedShare * e.fwd);
      for (size_t k = 0; k < kPassCommKinds; ++k) {
        pc.forwardComm[size_t(g)][k] += count * e.kindFwd[k];
        pc.backwardComm[size_t(g)][k] +=
            count * (e.kindBwd[k] + recomputedShare * e.kindFwd[k]);
      }
      hidden += count * hid;
      act += count * la;
      maxLayerAct = std::max(maxLayerAct, t.actNone);
      maxLayerParams = std::max(maxLayerParams, t.gatherElements);
      im.chunkTensors[size_t(g)] += count * t.paramTensors;
      st.weightBytes += count * t.paramsDense; // elements for now
      st.gradientBytes += count * t.paramsExpert;
    };
    if (g == 0)
      for (int32_t gi : embeddingGroups_)
        add(gi, double(profile_.groups[size_t(gi)].count)), st.hasEmbedding = true;
    for (size_t bi = 0; bi < blockGroups_.size(); ++bi) {
      int64_t lo = std::max(im.chunkBegin[size_t(g)], blockPrefix_[bi]);
      int64_t hi = std::min(im.chunkEnd[size_t(g)], blockPrefix_[bi + 1]);
      if (hi > lo) {
        add(blockGroups_[bi], double(hi - lo));
        st.layers += hi - lo;
      }
    }
    if (g == G - 1)
      for (int32_t gi : headGroups_)
        add(gi, double(profile_.groups[size_t(gi)].count)), st.hasHead = true;
    // Full recompute: while a layer's backward runs, that layer's full
    // activations exist once more (rebuilt from its checkpoint); counted
    // once per stage below, not per micro-batch in flight.
    im.chunkRecomputeWork[size_t(g)] =
        rc == Recompute::Full || (rc == Recompute::Selective &&
                                  o.selectiveForwardFraction > 0)
            ? maxLayerAct
            : 0.0;
    pc.forwardSeconds[size_t(g)] = fwd;
    pc.backwardSeconds[size_t(g)] = bwd;
    chunkAct[size_t(g)] = act;
    im.chunkExposed[size_t(g)] = exposed;
    im.chunkHidden[size_t(g)] = hidden;
    im.chunkCompute[size_t(g)] = compute;
    // Largest layer (ZeRO-3 gather buffer), kept in bufferBytes for now.
    st.bufferBytes = std::max(st.bufferBytes, maxLayerParams);
  }

  // Per-stage dense / expert parameter elements (stashed above).
  // weightBytes holds dense elements, gradientBytes expert elements.
  // One stage holds the tied matrix once; with pipeline stages the last
  // keeps its own copy (Megatron's output_layer weight on the last stage,
  // updated like the embedding from the summed gradient).
  if (p == 1 && tiedVocabParams_ > 0 && headListsTied_)
    out.stages[0].weightBytes -= tiedVocabParams_ / double(c.tp);
  if (p > 1 && tiedVocabParams_ > 0 && !headListsTied_)
    out.stages[size_t(p - 1)].weightBytes += tiedVocabParams_ / double(c.tp);
  for (StageBreakdown &st : out.stages) {
    double dense = st.weightBytes, expert = st.gradientBytes;
    st.weightBytes = dense * weightBytes / (c.zeroStage >= 3 ? dpcp : 1) +
                     expert * weightBytes / (c.zeroStage >= 3 ? edp : 1);
    st.gradientBytes = dense * gradBytes / (c.zeroStage >= 2 ? dpcp : 1) +
                       expert * gradBytes / (c.zeroStage >= 2 ? edp : 1);
    st.optimizerBytes = dense * optBytes / (c.zeroStage >= 1 ? dpcp : 1) +
                        expert * optBytes / (c.zeroStage >= 1 ? edp : 1);
    // Re-derive dense / expert for the communication below.
    st.dpCommSeconds = dense;     // stash
    st.optimizerSeconds = expert; // stash
  }

}

/// ZeRO-3's parameter gathers and gradient scatters per micro-batch, and
/// the point-to-point transfers between stages.
void Evaluator::communicationCosts(const Frame &f, Evaluation &out) {
  [[maybe_unused]] auto &[c, o, p, v, G, m, etp, stageGpus, dpcp, edp, mixed,
                          weightBytes, gradBytes, optBytes, msgBytes] = f;
  Impl &im = *impl_;
  [[maybe_unused]] PipelineCosts &pc = im.costs;
  // --- ZeRO-3: parameter gathers and gradient scatters per micro-batch ---
  if (c.zeroStage == 3 && (dpcp > 1 || edp > 1)) {
    // The compute the hidden collectives slow down, added after the loop:
    // chunkCompute sets each chunk's share of its stage's parameters.
    std::vector<double> contention(size_t(G), 0.0);
    for (int64_t g = 0; g < G; ++g) {
      int64_t s = g % p;
      const StageBreakdown &st = out.stages[size_t(s)];
      const NodeGroup &hw = cluster_.groups[size_t(st.nodeGroup)];
      // Share of the stage's parameters in this chunk: by compute time.
      double stageCompute = 0;
      for (int64_t cc = s; cc < G; cc += p)
        stageCompute += im.chunkCompute[size_t(cc)];
      double frac = stageCompute > 0 ? im.chunkCompute[size_t(g)] / stageCompute
                                     : 1.0 / double(v);
      double dense = st.dpCommSeconds * frac, expert = st.optimizerSeconds * frac;
      CommGroupShape shD = groupShape(hw, dpcp, c.tp);
      CommGroupShape shE = groupShape(hw, edp, c.ep * etp);
      // `n` collectives of equal shares of `bytes` (one per parameter
      // tensor, or per gradient bucket), each paying its own latency.
      auto split = [&](CollectiveOp op, double bytes,
                       const CommGroupShape &sh, double n) {
        n = std::max(1.0, std::round(n));
        return n * collectiveSeconds(hw, op, bytes / n, sh, o.algorithm);
      };
      double tensors =
          o.zero3GatherPerTensor ? im.chunkTensors[size_t(g)] : 1.0;
      double ag = split(CollectiveOp::AllGather, dense * weightBytes, shD,
                        tensors) +
                  collectiveSeconds(hw, CollectiveOp::AllGather,
                                    expert * weightBytes, shE, o.algorithm);
      if (o.zero3GatherBytesPerS > 0) {
        // The bytes each GPU receives, at the implementation's rate.
        double received =
            (dense * weightBytes * double(dpcp - 1) / double(dpcp)) +
            (expert * weightBytes * double(edp - 1) / double(edp));
        ag = std::max(ag, received / o.zero3GatherBytesPerS);
      }
      // The backward's gathers: once, or twice when the recompute forward
      // released what it gathered.
      double agB = ag;
      if (o.zero3RegatherAfterRecompute && c.recomputeOf(s) == Recompute::Full)
        agB = 2 * ag;
      double rs;
      if (o.zero3GradBucketElements > 0) {
        // Bucketed all-reduce of the gradients, each rank keeping its
        // slice (DeepSpeed 2021 without contiguous_gradients).
        double buckets = std::ceil(dense / o.zero3GradBucketElements);
        rs = split(CollectiveOp::AllReduce, dense * gradBytes, shD, buckets);
      } else {
        rs = collectiveSeconds(hw, CollectiveOp::ReduceScatter,
                               dense * gradBytes, shD, o.algorithm);
      }
      rs += collectiveSeconds(hw, CollectiveOp::ReduceScatter,
                              expert * gradBytes, shE, o.algorithm);
      double f = pc.forwardSeconds[size_t(g)], b = pc.backwardSeconds[size_t(g)];
      double exF = std::max(0.0, ag - f), exB = std::max(0.0, agB + rs - b);
      if (!o.overlapZero3Gather) { // only the reduce-scatters overlap
        exF = ag;
        exB = agB + std::max(0.0, rs - b);
      }
      const double slowF = o.overlapComputeSlowdown * (ag - exF);
      const double slowB = o.overlapComputeSlowdown * (agB + rs - exB);
      pc.forwardSeconds[size_t(g)] += exF + slowF;
      pc.backwardSeconds[size_t(g)] += exB + slowB;
      pc.forwardComm[size_t(g)][size_t(PassComm::DataParallel)] += exF;
      pc.backwardComm[size_t(g)][size_t(PassComm::DataParallel)] += exB;
      im.chunkExposed[size_t(g)] += exF + exB;
      im.chunkHidden[size_t(g)] += (ag - exF) + (agB + rs - exB);
      contention[size_t(g)] = slowF + slowB;
    }
    for (int64_t g = 0; g < G; ++g)
      im.chunkCompute[size_t(g)] += contention[size_t(g)];
  }

  // --- p2p between stages ---
  int64_t boundaries = p > 1 ? (v > 1 ? p : p - 1) : 0;
  pc.p2pSeconds.assign(size_t(boundaries), 0.0);
  for (int64_t b = 0; b < boundaries; ++b) {
    int64_t s0 = b, s1 = (b + 1) % p;
    int64_t g0 = im.stageGroup[size_t(s0)], g1 = im.stageGroup[size_t(s1)];
    double t;
    if (g0 != g1) {
      t = cluster_.interGroup.latencySeconds +
          msgBytes / cluster_.interGroup.bandwidthBytesPerS;
    } else {
      const NodeGroup &hw = cluster_.groups[size_t(g0)];
      int64_t first = cluster_.firstGpuOfGroup(g0);
      int64_t a0 = s0 * stageGpus - first, a1 = s1 * stageGpus - first;
      int64_t nodeA = a0 / hw.gpusPerNode;
      int64_t nodeB = (a1 + stageGpus - 1) / hw.gpusPerNode;
      bool same = stageGpus < hw.gpusPerNode && nodeA == nodeB &&
                  (a0 + stageGpus - 1) / hw.gpusPerNode == nodeA &&
                  a1 / hw.gpusPerNode == nodeA;
      t = p2pSeconds(hw, msgBytes, same);
    }
    pc.p2pSeconds[size_t(b)] = t;
  }

}

/// Per stage: the data-parallel gradient sums and what they expose, the
/// optimizer step, the step's exposed, hidden and compute time, and the
/// memory at the peak of micro-batches in flight.
/// Stage `s`'s memory: activations of its peak in-flight micro-batches
/// and the largest recomputation, buffers (ZeRO-3's two gathered layers,
/// the pipeline's send and receive, the allocator's cached share) and the
/// state bytes chunkCosts() set. Once per stage and evaluation: it turns
/// the stage's bufferBytes from gathered elements into bytes.
void Evaluator::stageMemory(const Frame &f,
                            const std::vector<int32_t> &inflight, int64_t s,
                            Evaluation &out) {
  [[maybe_unused]] auto &[c, o, p, v, G, m, etp, stageGpus, dpcp, edp, mixed,
                          weightBytes, gradBytes, optBytes, msgBytes] = f;
  Impl &im = *impl_;
  StageBreakdown &st = out.stages[size_t(s)];
  double actSum = 0, recomputeWork = 0;
  for (int64_t g = s; g < G; g += p) {
    actSum += im.chunkAct[size_t(g)];
    recomputeWork = std::max(recomputeWork, im.chunkRecomputeWork[size_t(g)]);
  }
  st.peakInFlight = inflight[size_t(s)];
  st.activationBytes =
      double(st.peakInFlight) * actSum / double(v) + recomputeWork;
  st.zero3GatherElements = c.zeroStage == 3 ? st.bufferBytes : 0;
  double z3Buffer = c.zeroStage == 3 ? 2 * st.bufferBytes * weightBytes : 0;
  double p2pBuffer = p > 1 ? 2 * msgBytes : 0;
  double cached =
      o.allocatorCacheFraction * (st.activationBytes + z3Buffer + p2pBuffer);
  // Transformer Engine's userbuffers under --tp-comm-overlap: one set for
  // the model (keyed by GEMM name, base.py at d0067d0 line 514) of 12
  // buffers of (seq x micro-batch / cp) x hidden elements (Megatron-LM's
  // initialize.py at d98e8a64, lines 223-226); the 8 all-gather ones hold
  // FP8 under FP8 (base.py lines 472-476), the 4 reduce-scatter ones the
  // activation type. Allocated outside PyTorch's caching allocator.
  double ubBuffer = 0;
  if (c.tpCommOverlap) {
    double rows = double(profile_.seqLen) * double(c.microBatch) / double(c.cp);
    double act = double(dtypeBytes(activationDtype(c.precision)));
    double gathered = c.precision == DType::FP8 ? 1.0 : act;
    ubBuffer = rows * double(profile_.hidden) * (8 * gathered + 4 * act);
  }
  st.bufferBytes = o.reservedBytes + z3Buffer + p2pBuffer + cached + ubBuffer;
  st.totalBytes = st.weightBytes + st.gradientBytes + st.optimizerBytes +
                  st.activationBytes + st.bufferBytes;
  st.capacityBytes = cluster_.groups[size_t(st.nodeGroup)].gpu.hbmBytes;
}

Evaluator::StepSums Evaluator::syncAndStageTimes(const Frame &f,
                                                 Evaluation &out) {
  [[maybe_unused]] auto &[c, o, p, v, G, m, etp, stageGpus, dpcp, edp, mixed,
                          weightBytes, gradBytes, optBytes, msgBytes] = f;
  Impl &im = *impl_;
  [[maybe_unused]] PipelineCosts &pc = im.costs;
  StepSums sums;
  // --- DP gradient synchronisation, optimizer, memory per stage ---
  double &exposedGrad = sums.exposedGrad, &paramGather = sums.paramGather,
         &optimizer = sums.optimizer;
  double slack = 0; // how long before the end stage s finishes
  for (int64_t s = 0; s < p; ++s) {
    StageBreakdown &st = out.stages[size_t(s)];
    const NodeGroup &hw = cluster_.groups[size_t(st.nodeGroup)];
    double dense = st.dpCommSeconds, expert = st.optimizerSeconds;
    st.dpCommSeconds = 0;
    st.optimizerSeconds = 0;
    CommGroupShape shD = groupShape(hw, dpcp, c.tp);
    CommGroupShape shE = groupShape(hw, edp, c.ep * etp);
    double grad = 0, gather = 0;
    if (c.zeroStage == 0) {
      grad = collectiveSeconds(hw, CollectiveOp::AllReduce, dense * gradBytes,
                               shD, o.algorithm) +
             collectiveSeconds(hw, CollectiveOp::AllReduce, expert * gradBytes,
                               shE, o.algorithm);
    } else if (c.zeroStage <= 2) {
      grad = collectiveSeconds(hw, CollectiveOp::ReduceScatter,
                               dense * gradBytes, shD, o.algorithm) +
             collectiveSeconds(hw, CollectiveOp::ReduceScatter,
                               expert * gradBytes, shE, o.algorithm);
      gather = collectiveSeconds(hw, CollectiveOp::AllGather,
                                 dense * weightBytes, shD, o.algorithm) +
               collectiveSeconds(hw, CollectiveOp::AllGather,
                                 expert * weightBytes, shE, o.algorithm);
    }
    // The reduction overlaps the stage's last backward (Megatron
    // overlap_grad_reduce) and the time the stage sits idle before the
    // pipeline drains (stage s ends before stage 0 by the backward chain
    // of stages 0..s-1).
    double lastBwd = 0;
    for (int64_t g = s; g < G; g += p)
      lastBwd += pc.backwardSeconds[size_t(g)];
    bool overlap = o.overlapGradReduce &&
                   !(c.zeroStage == 1 && o.zero1ReduceInOptimizer);
    double window = lastBwd;
    if (c.zeroStage <= 1 && s > 0 && o.gradReduceAfterLastSend)
      window = 0; // started after the stage's last send: the drain only
    if (c.zeroStage == 2 && o.zero2ReducePerMicroBatch) {
      grad *= double(m);
      window *= double(m);
    }
    const double beside = overlap ? window : 0; // compute beside the sum
    window = beside + slack;
    double ex = std::max(0.0, grad - window);
    // The backward beside the reduction runs slower
    // (EvalOptions::overlapComputeSlowdown); the stage ends when both its
    // backward and its reduction have, and may use its slack for either.
    const double k = o.overlapComputeSlowdown;
    const double slowed = beside + k * std::min(grad, beside);
    exposedGrad =
        std::max(exposedGrad, std::max(0.0, std::max(slowed, grad) - window));
    if (!o.overlapParamGather)
      paramGather = std::max(paramGather, gather);
    else // hidden in the next forward, which it slows
      paramGather = std::max(paramGather, k * gather);
    st.dpCommSeconds = grad + gather;
    // Adam, fused: read the gradient, read+write fp32 master, m and v,
    // write the 16-bit weights (memory bound).
    double local = dense / (c.zeroStage >= 1 ? dpcp : 1) +
                   expert / (c.zeroStage >= 1 ? edp : 1);
    double traffic = local * (gradBytes + 2 * optBytes + (mixed ? weightBytes : 0));
    st.optimizerSeconds =
        launchBound(hw.gpu, memorySeconds(hw.gpu, traffic), 10);
    optimizer = std::max(optimizer, st.optimizerSeconds);
    // Exposed / hidden / compute per step.
    double exposedStage = 0, hiddenStage = 0, computeStage = 0, fwdMb = 0,
           bwdMb = 0;
    for (int64_t g = s; g < G; g += p) {
      exposedStage += im.chunkExposed[size_t(g)];
      hiddenStage += im.chunkHidden[size_t(g)];
      computeStage += im.chunkCompute[size_t(g)];
      fwdMb += pc.forwardSeconds[size_t(g)];
      bwdMb += pc.backwardSeconds[size_t(g)];
    }
    st.forwardSecondsPerMicroBatch = fwdMb;
    st.backwardSecondsPerMicroBatch = bwdMb;
    st.computeSeconds = computeStage * double(m);
    st.exposedCommSeconds = exposedStage * double(m) + ex +
                            (o.overlapParamGather ? 0 : gather);
    st.hiddenCommSeconds = hiddenStage * double(m) + (grad - ex) +
                           (o.overlapParamGather ? gather : 0);
    st.bubbleSeconds = im.stageIdle[size_t(s)];
    // The backward of the last micro-batch reaches stage s+1 after
    // passing stages ..., so stage s+1 finishes earlier by stage s's part.
    double chunk0Bwd = pc.backwardSeconds[size_t(s)];
    double hop = s < int64_t(pc.p2pSeconds.size()) ? pc.p2pSeconds[size_t(s)] : 0;
    slack += chunk0Bwd + hop;
  }

  return sums;
}

Status Evaluator::evaluate(const ParallelConfig &c, Evaluation &out) {
  return evaluateUpTo(c, std::numeric_limits<double>::infinity(), out);
}

/// What the step-time floors of the search share: the whole model's
/// parameters on one GPU of each stage together, the groups they are
/// gathered over and the gather of all of them at once. `ok` is false
/// where no floor holds (data shares, several node groups, measured
/// collective bandwidths) or nothing is data-parallel.
struct Evaluator::FloorParts {
  bool ok = false;
  double dense = 0, expert = 0, gather = 0;
  StateBytesPerParam state;
  CommGroupShape shD, shE;
};

Evaluator::FloorParts Evaluator::floorParts(const ParallelConfig &c) const {
  FloorParts f;
  const EvalOptions &o = options_;
  const int64_t etp = c.etp == 0 ? c.tp : c.etp;
  const int64_t dpcp = c.dp * c.cp;
  const int64_t edp = std::max<int64_t>(1, c.dp * c.cp * c.tp / (c.ep * etp));
  if ((dpcp <= 1 && edp <= 1) || !c.dataShares.empty() ||
      cluster_.groups.size() != 1 ||
      !cluster_.groups[0].collectiveCalibration.empty())
    return f;
  const NodeGroup &hw = cluster_.groups[0];
  // At least the sum over the profile (the tied matrix once).
  for (const LayerGroup &g : profile_.groups) {
    f.dense += double(g.count) * denseParamsOnGpu(g.cost, c.tp);
    f.expert += double(g.count) * expertParamsOnGpu(g.cost, c.ep, etp);
  }
  if (headListsTied_)
    f.dense -= tiedVocabParams_ / double(c.tp);
  f.dense = std::max(0.0, f.dense);
  f.state = stateBytesPerParam(c.precision, o);
  f.shD = groupShape(hw, dpcp, c.tp);
  f.shE = groupShape(hw, edp, c.ep * etp);
  f.gather = collectiveSeconds(hw, CollectiveOp::AllGather,
                               f.dense * f.state.weight, f.shD, o.algorithm) +
             collectiveSeconds(hw, CollectiveOp::AllGather,
                               f.expert * f.state.weight, f.shE, o.algorithm);
  f.ok = true;
  return f;
}

double Evaluator::paramGatherFloor(const ParallelConfig &c) const {
  if (c.zeroStage != 1 && c.zeroStage != 2)
    return 0;
  const FloorParts f = floorParts(c);
  if (!f.ok)
    return 0;
  // syncAndStageTimes: the slowest stage's gather, exposed, or its
  // slowdown of the next forward.
  return options_.overlapParamGather
             ? std::min(1.0, options_.overlapComputeSlowdown) * f.gather
             : f.gather;
}

double Evaluator::zero3AddedFloor(const ParallelConfig &c) const {
  const EvalOptions &o = options_;
  const double k = std::min(1.0, o.overlapComputeSlowdown);
  if (c.zeroStage != 3 || k <= 0)
    return 0;
  const FloorParts f = floorParts(c);
  if (!f.ok)
    return 0;
  const NodeGroup &hw = cluster_.groups[0];
  // communicationCosts' collectives over all of it at once: one gather
  // (the backward's, the same or twice it), one gradient reduction; the
  // per-tensor, per-bucket and rate-capped forms take no less.
  const double rs =
      collectiveSeconds(hw,
                        o.zero3GradBucketElements > 0
                            ? CollectiveOp::AllReduce
                            : CollectiveOp::ReduceScatter,
                        f.dense * f.state.gradient, f.shD, o.algorithm) +
      collectiveSeconds(hw, CollectiveOp::ReduceScatter,
                        f.expert * f.state.gradient, f.shE, o.algorithm);
  return k * (2 * f.gather + rs);
}

Status Evaluator::evaluateIfFits(const ParallelConfig &c, double fraction,
                                 Evaluation &out) {
  return evaluateUpTo(c, fraction, out);
}

Status Evaluator::evaluateUpTo(const ParallelConfig &c, double stopFraction,
                               Evaluation &out) {
  out.memoryOnly = false;
  if (Status s = validate(c); !s)
    return s;
  if (!c.dataShares.empty())
    return evaluateShares(c, out);
  out.crossGroupSyncSeconds = 0;
  out.shareSeconds.clear();
  Impl &im = *impl_;
  const EvalOptions &o = options_;
  const int64_t p = c.pp, v = c.vpp, G = p * v;
  const int64_t m = c.globalBatch / (c.dp * c.microBatch);
  const int64_t etp = c.etp == 0 ? c.tp : c.etp;
  const int64_t stageGpus = c.dp * c.tp * c.cp;
  const int64_t dpcp = c.dp * c.cp;
  const int64_t edp = std::max<int64_t>(1, c.dp * c.cp * c.tp / (c.ep * etp));
  const ScheduleKind kind = c.scheduleKind();
  const bool mixed = costPrecision(c.precision, o) != DType::F32;
  const StateBytesPerParam state = stateBytesPerParam(c.precision, o);
  const double weightBytes = state.weight;
  const double gradBytes = state.gradient;
  const double optBytes = state.optimizer;
  const DType actType = activationDtype(costPrecision(c.precision, o));
  const double actBytes = double(dtypeBytes(actType));

  // --- schedule ---
  if (!im.haveSched || im.sched.kind != kind || im.sched.p != p ||
      im.sched.m != m || im.sched.v != v) {
    Result<ScheduleCache::Simulated> e =
        ScheduleCache::global().getSimulated(kind, p, m, v);
    if (!e)
      return Status::error("config: schedule: " + e.message());
    im.sched = std::move(*e);
    im.haveSched = true;
  }
  const CompiledSchedule &sched = *im.sched.schedule;

  // --- stage -> node group ---
  im.stageGroup.resize(size_t(p));
  for (int64_t s = 0; s < p; ++s)
    im.stageGroup[size_t(s)] = cluster_.groupOfGpu(s * stageGpus);

  const Frame f{c,         o,          p,          v,
                G,         m,          etp,        stageGpus,
                dpcp,      edp,        mixed,      weightBytes,
                gradBytes, optBytes,
                // One activation message between stages.
                double(profile_.seqLen) / double(c.cp) * double(c.microBatch) *
                    double(profile_.hidden) * actBytes / double(c.tp)};
  out.stages.resize(size_t(p));
  for (StageBreakdown &st : out.stages)
    st = StageBreakdown{};
  chunkCosts(f, out);
  // The memory needs no time: known first, it ends an evaluation that
  // asked to stop where a stage does not fit (evaluateIfFits).
  for (int64_t s = 0; s < p; ++s)
    stageMemory(f, sched.peakInFlight(), s, out);
  for (const StageBreakdown &st : out.stages)
    if (st.totalBytes > stopFraction * st.capacityBytes)
      return memoryOnlyResult(out);
  communicationCosts(f, out);
  PipelineCosts &pc = im.costs;

  // --- simulate ---
  im.stageIdle.assign(size_t(p), 0.0);
  Result<MakespanResult> sim =
      simulateMakespan(ScheduleCache::global(), im.sched, pc, im.ws,
                       std::span<double>(im.stageIdle));
  if (!sim)
    return Status::error("simulation: " + sim.message());
  const double makespan = sim->makespanSeconds;
  const StepSums sums = syncAndStageTimes(f, out);
  const double exposedGrad = sums.exposedGrad, paramGather = sums.paramGather,
               optimizer = sums.optimizer;

  // --- tied embedding: the first and last stage sum its gradient ---
  // Megatron-LM all-reduces the shared vocabulary matrix over the embedding
  // group (finalize_model_grads: _allreduce_embedding_grads, after the data
  // parallel reduction); DeepSpeed's PipelineModule reduces its tied
  // modules after the backward; the trident programs sum it after the
  // schedule. None overlaps it with compute. Megatron and DeepSpeed sum
  // the whole tp shard's gradient, ZeRO or not; the trident programs under
  // ZeRO-2/3 the slice each rank holds (tiedSumOfZeroSlice).
  double tiedSum = 0;
  if (p > 1 && tiedVocabParams_ > 0) {
    double bytes = tiedVocabParams_ / double(c.tp) * gradBytes;
    if (o.tiedSumOfZeroSlice && c.zeroStage >= 2)
      bytes /= double(dpcp);
    int64_t g0 = im.stageGroup.front(), g1 = im.stageGroup.back();
    if (g0 != g1) {
      tiedSum = interGroupAllReduceSeconds(cluster_.interGroup, bytes, 2);
    } else {
      const NodeGroup &hw = cluster_.groups[size_t(g0)];
      tiedSum = collectiveSeconds(hw, CollectiveOp::AllReduce, bytes,
                                  groupShape(hw, 2, (p - 1) * stageGpus),
                                  o.algorithm);
    }
    for (StageBreakdown *st : {&out.stages.front(), &out.stages.back()}) {
      st->dpCommSeconds += tiedSum;
      st->exposedCommSeconds += tiedSum;
    }
  }
  out.tiedEmbeddingSeconds = tiedSum;

  // --- totals ---
  out.iterationSeconds =
      makespan + exposedGrad + optimizer + paramGather + tiedSum;
  out.pipelineSeconds = makespan;
  out.bubbleFraction = sim->bubbleFraction;
  out.dpExposedSeconds = exposedGrad + paramGather + tiedSum;
  out.optimizerSeconds = optimizer;
  out.microBatches = m;
  out.schedule = kind;
  double tokens = double(c.globalBatch) * double(profile_.seqLen);
  // Recomputed FLOPs per token: each stage's share of the blocks times
  // what its policy recomputes. Selective keeping the log-sum-exp forms
  // the scores again: half the core's forward FLOPs where value and query
  // heads are alike.
  const double selective = options_.selectiveFormsScoresOnly()
                               ? attnCoreFlopsPerToken_ / 2
                               : attnCoreFlopsPerToken_;
  double extra = 0;
  for (int64_t s = 0; s < p; ++s) {
    const Recompute rc = c.recomputeOf(s);
    double perToken =
        rc == Recompute::Full ? blockFwdFlopsPerToken_
        : rc == Recompute::Selective
            ? (options_.selectiveForwardFraction > 0
                   ? options_.selectiveForwardFraction * blockFwdFlopsPerToken_
                   : selective)
            : 0;
    if (numBlocks_ > 0)
      extra += perToken * double(out.stages[size_t(s)].layers) /
               double(numBlocks_);
  }
  return finishTotals(c, extra * tokens, out);
}

DType costPrecision(DType precision, const EvalOptions &o) {
  return o.bf16InFp32Storage && precision == DType::BF16 ? DType::F32
                                                         : precision;
}

StateBytesPerParam stateBytesPerParam(DType precision,
                                      const EvalOptions &o) {
  precision = costPrecision(precision, o);
  StateBytesPerParam b;
  const bool mixed = precision != DType::F32;
  b.weight = mixed ? 2 : 4;
  // Gradients in the training dtype: Megatron-LM reduces them in fp32 only
  // with --accumulate-allreduce-grads-in-fp32 (off by default); FSDP's
  // reduce dtype defaults to the parameter dtype.
  b.gradient = o.gradBytesPerParam > 0 ? o.gradBytesPerParam : b.weight;
  // Mixed-precision Adam (Rajbhandari et al. 2020, ZeRO): fp32 master
  // weights, momentum and variance.
  b.optimizer = o.optimizerBytesPerParam > 0 ? o.optimizerBytesPerParam
                                             : (mixed ? 12.0 : 8.0);
  // The 2-byte remainder replaces the 4-byte master copy of a bf16 (or
  // FP8-compute, bf16-weight) model; fp16 models keep full fp32 masters.
  if (o.optimizerBytesPerParam <= 0 && o.masterWeightRemainders && mixed &&
      precision != DType::F16)
    b.optimizer -= 2;
  return b;
}

std::string describeFit(const Evaluation &e) {
  std::string r = e.fits ? "fits: " : "does not fit: ";
  r += "stage " + std::to_string(e.peakMemoryStage) + " needs " +
       gb(e.peakMemoryBytes) + " of " + gb(e.memoryCapacityBytes);
  if (!e.stages.empty() && size_t(e.peakMemoryStage) < e.stages.size()) {
    const StageBreakdown &s = e.stages[size_t(e.peakMemoryStage)];
    r += " (weights " + gb(s.weightBytes) + ", gradients " +
         gb(s.gradientBytes) + ", optimizer " + gb(s.optimizerBytes) +
         ", activations " + gb(s.activationBytes) + ", buffers " +
         gb(s.bufferBytes) + ")";
  }
  return r;
}

Result<Evaluation> evaluate(const LayerProfile &profile, const Cluster &cluster,
                            const ParallelConfig &cfg,
                            const EvalOptions &options) {
  Result<Evaluator> ev = Evaluator::create(profile, cluster, options);
  if (!ev)
    return ev.status();
  Evaluation out;
  if (Status s = ev->evaluate(cfg, out); !s)
    return s;
  return out;
}

} // namespace trident
