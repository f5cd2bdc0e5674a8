//===- Roofline.cpp - Shape- and dtype-dependent GEMM efficiency ----------===//
//
// Tile / wave quantisation follows NVIDIA's "Matrix Multiplication
// Background User's Guide" (DU-09799-001) and stas00/ml-engineering
// training/performance/README.md: a GEMM is cut into ceil(m/Tm)*ceil(n/Tn)
// output tiles (CTAs) per batch entry, run in ceil(CTAs/SMs) waves, and its
// time is proportional to the number of waves. Libraries choose among tile
// shapes; smaller tiles re-read more operand data per FLOP and run below
// the big tile's rate (relative rates below are modelling assumptions).
//
//===----------------------------------------------------------------------===//

#include "trident/Cost/Roofline.h"

#include <algorithm>
#include <cmath>

namespace trident {

namespace {
/// Candidate tiles relative to the GPU's main tile (Tm, Tn), with their
/// throughput relative to the main tile. Assumption, see file comment.
struct TileChoice {
  double mScale, nScale, rate;
};
constexpr TileChoice kTiles[] = {
    {1.0, 1.0, 1.00},  // main tile (e.g. 128x256)
    {2.0, 0.5, 1.00},  // transposed (256x128) when the shape favours it
    {1.0, 0.5, 0.95},  // 128x128
    {0.5, 0.5, 0.85},  // 64x128
    {0.5, 0.25, 0.70}, // 64x64
};

/// Misaligned leading dimensions (not a multiple of 16 bytes) stop the
/// vectorised tensor-core path: stas00 measured 272.7 vs 398.4 TFLOP/s on
/// H100 for d_ff = 10922 vs 10944 (HW §2.1): factor 0.685.
constexpr double kMisalignedFactor = 0.685;
/// Reduction-depth overhead (prologue/epilogue per tile), in elements of k.
constexpr double kDepthOverhead = 64;

bool aligned(double dim, DType t) {
  double elems = 16.0 / double(dtypeBytes(t));
  double q = dim / elems;
  return std::fabs(q - std::round(q)) < 1e-9;
}
} // namespace

double modelGemmEfficiency(const GpuSpec &gpu, double m, double n, double k,
                           double batch, DType t) {
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0)
    return gpu.gemmEfficiency(t);
  double sms = double(std::max<int64_t>(gpu.smCount, 1));
  double best = 0;
  for (const TileChoice &tc : kTiles) {
    double tm = double(gpu.tileM) * tc.mScale, tn = double(gpu.tileN) * tc.nScale;
    double tilesM = std::ceil(m / tm), tilesN = std::ceil(n / tn);
    double ctas = tilesM * tilesN * batch;
    double waves = std::ceil(ctas / sms);
    // Useful work over the capacity of the waves launched.
    double q = (m * n * batch) / (waves * sms * tm * tn);
    best = std::max(best, q * tc.rate);
  }
  double depth = k / (k + kDepthOverhead);
  double align = (aligned(n, t) && aligned(k, t)) ? 1.0 : kMisalignedFactor;
  return gpu.gemmEfficiency(t) * best * depth * align;
}

double gemmEfficiency(const GpuSpec &gpu, double m, double n, double k,
                      double batch, DType t) {
  double eff = modelGemmEfficiency(gpu, m, n, k, batch, t);
  if (gpu.gemmCalibration.empty())
    return eff;
  // Nearest measured point of the same dtype (log distance over m, n, k);
  // its measured/modelled ratio corrects the model near it.
  const GemmCalibrationPoint *nearest = nullptr;
  double bestDist = 0;
  for (const GemmCalibrationPoint &p : gpu.gemmCalibration) {
    if (p.dtype != t && !(dtypeBytes(p.dtype) == 2 && dtypeBytes(t) == 2))
      continue;
    double d = std::fabs(std::log(double(p.m) / m)) +
               std::fabs(std::log(double(p.n) / n)) +
               std::fabs(std::log(double(p.k) / k));
    if (!nearest || d < bestDist)
      nearest = &p, bestDist = d;
  }
  if (!nearest)
    return eff;
  double modelled = modelGemmEfficiency(gpu, double(nearest->m),
                                        double(nearest->n), double(nearest->k),
                                        1, t);
  if (modelled <= 0)
    return eff;
  return std::min(1.0, eff * nearest->efficiency / modelled);
}

KernelTime gemmTime(const GpuSpec &gpu, double m, double n, double k,
                    double batch, DType t) {
  KernelTime r;
  double peak = gpu.peakFlopsPerS(t);
  r.efficiency = gemmEfficiency(gpu, m, n, k, batch, t);
  double flops = 2.0 * m * n * k * batch;
  r.computeSeconds = peak > 0 ? flops / (peak * r.efficiency) : 0;
  double in = double(dtypeBytes(t));
  double out = t == DType::FP8 ? 2.0 : in;
  r.memorySeconds =
      memorySeconds(gpu, batch * ((m * k + k * n) * in + m * n * out));
  r.seconds = std::max(r.computeSeconds, r.memorySeconds);
  return r;
}

} // namespace trident
