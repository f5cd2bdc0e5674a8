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

} // namespace trident

#endif // TRIDENT_COST_ROOFLINE_H
