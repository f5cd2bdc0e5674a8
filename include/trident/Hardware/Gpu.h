//===- Gpu.h - GPU catalog: peaks, memory, achievable fractions -*- C++ -*-===//
//
// One GpuSpec per accelerator type. Every constant in the built-in catalog
// (lib/Hardware/GpuCatalog.cpp) carries its source in a comment; the facts
// come from ../shared/hardware/README.md and hardware.json. Calibration
// measured on a real GPU (Calibration.h) overrides the defaults, never code.
//
// Units are SI and in the field names: flops per second, bytes, bytes per
// second, seconds.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_HARDWARE_GPU_H
#define TRIDENT_HARDWARE_GPU_H

#include "trident/Support/DType.h"
#include "trident/Support/Status.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace trident {

/// One measured GEMM throughput (a calibration point).
struct GemmCalibrationPoint {
  int64_t m = 0, n = 0, k = 0;
  DType dtype = DType::BF16;
  double efficiency = 0; ///< achieved FLOP/s / dense peak of `dtype`
};

/// An accelerator type. The defaults are the built-in catalog's.
struct GpuSpec {
  std::string name;   ///< canonical, e.g. "H100-SXM5-80GB"
  std::string vendor; ///< "NVIDIA", "AMD"

  // --- dense peaks (no 2:4 sparsity), FLOP/s; 0 = not supported ---
  double peakFp32FlopsPerS = 0; ///< SIMT FP32
  double peakTf32FlopsPerS = 0; ///< tensor-core TF32 (used for fp32 GEMMs)
  double peakBf16FlopsPerS = 0;
  double peakFp16FlopsPerS = 0;
  double peakFp8FlopsPerS = 0;

  // --- memory ---
  double hbmBytes = 0;
  double hbmBandwidthBytesPerS = 0;

  // --- achievable fractions of the peaks (physical constants per type) ---
  /// Best-shape large GEMM throughput / peak ("MAMF", stas00), per dtype
  /// class: 16-bit, 8-bit, and 32-bit (TF32) GEMMs.
  double gemmEfficiency16 = 0.8;
  double gemmEfficiency8 = 0.7;
  double gemmEfficiency32 = 0.7;
  /// Fused (flash) attention throughput / 16-bit peak, with the best
  /// kernel for this GPU (cuDNN / FlashAttention-3 on Hopper).
  double attentionEfficiency = 0.5;
  /// The same with FlashAttention-2, the kernel PyTorch-native runtimes
  /// use; equal to attentionEfficiency where FA2 is the best kernel.
  double attentionEfficiencyFa2 = 0.5;
  /// Streaming (elementwise, copy) throughput / HBM peak.
  double memBandwidthEfficiency = 0.85;
  /// The tensor cores apply MXFP8's per-32-element block scales (OCP
  /// Microscaling formats): Blackwell's fifth-generation tensor cores
  /// (NVIDIA Blackwell architecture technical brief). Transformer Engine's
  /// MXFP8BlockScaling needs it.
  bool mxfp8 = false;

  // --- execution model ---
  int64_t smCount = 0; ///< SMs (NVIDIA) or CUs (AMD): wave quantisation
  int64_t tileM = 128; ///< output tile of the main GEMM kernel (tile and
  int64_t tileN = 128; ///< wave quantisation)
  double kernelLaunchSeconds = 4e-6; ///< host cost of one eager launch

  // --- scale-up (NVLink / xGMI / PCIe) defaults for cluster presets ---
  /// Achievable all-reduce bus bandwidth inside the scale-up domain, per
  /// GPU (nccl-tests busbw, 8 GPUs).
  double scaleUpBusBwBytesPerS = 0;
  /// Achievable all-to-all bus bandwidth inside the scale-up domain.
  double scaleUpAllToAllBytesPerS = 0;

  /// Measured GEMM points that override the modelled efficiency near their
  /// shapes (Calibration.h); empty by default.
  std::vector<GemmCalibrationPoint> gemmCalibration;

  /// Dense peak for GEMMs of `t` (fp32 GEMMs use TF32 tensor cores when the
  /// GPU has them); 0 when the GPU lacks the type.
  double peakFlopsPerS(DType t) const;
  /// Best-shape GEMM efficiency for `t`.
  double gemmEfficiency(DType t) const;
  /// Achievable HBM bandwidth, bytes/s.
  double effectiveHbmBandwidth() const {
    return hbmBandwidthBytesPerS * memBandwidthEfficiency;
  }
};

/// The built-in catalog, in a stable order.
std::span<const GpuSpec> gpuCatalog();

/// Looks a GPU up by its canonical name or an alias ("h100", "H100-SXM",
/// "a100-80gb", "V100-SXM3-32GB", ...); case-insensitive. Errors name the
/// known GPUs.
Result<GpuSpec> lookupGpu(std::string_view name);

/// Checks that the numbers of a (possibly user-edited) spec are usable:
/// positive, finite, fractions in (0, 1]. `where` prefixes the message.
Status validateGpuSpec(const GpuSpec &gpu, std::string_view where);

} // namespace trident

#endif // TRIDENT_HARDWARE_GPU_H
