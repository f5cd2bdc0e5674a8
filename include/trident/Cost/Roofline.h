//===- Roofline.h - Time of one kernel on one GPU -------------*- C++ -*-===//
//
// t = max(flops / (peak * eff), bytes / (bw * memEff)): the roofline, with
// a GEMM efficiency that depends on the shape (tile and wave quantisation,
// short reduction depth, misaligned dimensions) and on the dtype, and is
// corrected by measured calibration points when the GPU has them. Launch
// overhead is separate (launchBound) because it overlaps with earlier GPU
// work. Model and sources: docs/cost-model.md.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_COST_ROOFLINE_H
#define TRIDENT_COST_ROOFLINE_H

#include "trident/Hardware/Gpu.h"
#include "trident/Support/DType.h"

namespace trident {

/// Achieved fraction of the dense `t` peak for `batch` independent
/// (m x k) * (k x n) GEMMs. Best-shape efficiency of the catalog times
/// tile/wave quantisation (best of a few tile shapes), a reduction-depth
/// factor k / (k + 64) and a misalignment penalty.
double gemmEfficiency(const GpuSpec &gpu, double m, double n, double k,
                      double batch, DType t);

/// The model's efficiency without calibration points (used to turn a
/// measured point into a correction ratio).
double modelGemmEfficiency(const GpuSpec &gpu, double m, double n, double k,
                           double batch, DType t);

/// Breakdown of one kernel's roofline time.
struct KernelTime {
  double seconds = 0;        ///< max of the two below
  double computeSeconds = 0; ///< flops / (peak * efficiency)
  double memorySeconds = 0;  ///< bytes / achievable bandwidth
  double efficiency = 0;     ///< GEMM efficiency used
  bool memoryBound() const { return memorySeconds > computeSeconds; }
};

/// Roofline time of batch x (m x k)(k x n) in dtype `t` (inputs of `t`,
/// output 16-bit for fp8, else `t`). No launch overhead.
KernelTime gemmTime(const GpuSpec &gpu, double m, double n, double k,
                    double batch, DType t);

/// Time to stream `bytes` through HBM at the achievable bandwidth.
inline double memorySeconds(const GpuSpec &gpu, double bytes) {
  return bytes / gpu.effectiveHbmBandwidth();
}

/// A kernel cannot finish faster than the host can launch it (eager mode):
/// launches overlap with earlier kernels, so the GPU starves only when a
/// kernel is shorter than the launch cost.
inline double launchBound(const GpuSpec &gpu, double gpuSeconds,
                          double kernels = 1) {
  double host = kernels * gpu.kernelLaunchSeconds;
  return gpuSeconds > host ? gpuSeconds : host;
}

/// Keys at which a fused attention kernel runs at half its long-sequence
/// rate. A FlashAttention kernel pays a fixed cost per query block
/// (loading Q, the final rescale, writing O and its statistics) beside
/// its work per key block, so its rate grows as keys / (keys + L0) with
/// the keys each query visits. L0 from the forward FLOP/s that
/// pytorch/benchmark PR #2391 (commit ff65cb6) published for H100, head
/// dimension 128, 16 heads, batch x sequence = 16k tokens, sequences 512
/// to 16k: FlashAttention-3 fits L0 = 235 and Triton's fused-attention
/// tutorial kernel (FlashAttention-2's algorithm) 245, each within 1 % of
/// every point (least squares in log space); PR #2296's Triton figures
/// (batch 128, 8 heads) fit 205. Sourced, not fitted to training runs.
inline constexpr double kFlashKeyOverhead = 240;

/// The fraction of its long-sequence rate a fused attention kernel reaches
/// when each query visits `keys` keys (kFlashKeyOverhead).
inline double flashLengthEfficiency(double keys) {
  return keys > 0 ? keys / (keys + kFlashKeyOverhead) : 1.0;
}

/// Fixed seconds each local expert's GEMM adds to a grouped GEMM that runs
/// one cuBLAS GEMM per expert on a few streams (Transformer Engine's
/// GroupedLinear, multi-stream cuBLAS since TE PR #853). TE PR #2045
/// (https://github.com/NVIDIA/TransformerEngine/pull/2045) measured
/// general_grouped_gemm on H100 in BF16 at Qwen3-30B-A3B's expert shapes:
/// with TE 2.7 and CUDA 12.9, 627.9 TFLOP/s for 8 experts of 4096 x 768 x
/// 2048 and 553.9 for 16 of 2048 x 768 x 2048 (the same FLOPs in twice
/// the GEMMs); gemmTime gives 702.6 for both, so each GEMM took 2.19 and
/// 2.46 us more than its share of the pooled roofline time: 2.4 us by
/// least squares. TE 2.2's figures (508.8 and 398.8) give 7.0 us for both
/// shapes. Sourced, not fitted to training runs (unit-cost checks the four
/// figures).
inline constexpr double kTeGroupedGemmSecondsPerExpert = 2.4e-6;

} // namespace trident

#endif // TRIDENT_COST_ROOFLINE_H
