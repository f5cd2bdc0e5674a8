//===- GpuCatalog.cpp - The built-in GPU catalog, every number sourced ----===//
//
// Facts from ../shared/hardware/README.md (sections named "HW §x.y") and
// hardware.json. Confidence tags as there: [V] vendor, [S] reputable
// secondary, [M] from memory (unverified), [?] conflicting. Constants that
// are modelling assumptions rather than facts say so.
//
// Peaks: dense (no sparsity), HW §1.1. GEMM efficiency: best-shape "MAMF"
// (stas00/ml-engineering compute/accelerator/README.md @744d01e), HW §2.1.
// Memory efficiency: streaming copy / STREAM, HW §2.2. Launch: HW §2.3
// ("charge about 3-5 us per eager kernel": tritonbench PR #1017 measures
// 3.0-3.3 us raw cuLaunchKernel and 4.7-9.1 us through Triton/Inductor).
// Scale-up bus bandwidth: NVIDIA GTC24 S62129 / GTC25 S72583 nccl-tests
// slides (HW §3.4), intra-node 8 GPUs.
//
// Tile sizes: the largest output tile of cuBLAS-class kernels (128x256 on
// Ampere/Hopper/Blackwell, used in stas00 training/performance/README.md's
// wave-quantisation example and NVIDIA's "Matrix Multiplication Background
// User's Guide" DU-09799-001); 128x128 on Volta/Ada. Modelling choice.
//
// Attention efficiency (fused flash attention, fraction of the 16-bit
// peak) is [M]: FlashAttention-2 (Dao 2023) reports 50-73 % of peak
// forward on A100, FlashAttention-3 (Shah et al. 2024) 75 % forward (BF16)
// on H100 and lower for the backward; we use a forward+backward figure.
//
//===----------------------------------------------------------------------===//

#include "trident/Hardware/Fitted.h"
#include "trident/Hardware/Gpu.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <string>

namespace trident {

namespace {
constexpr double T = 1e12; // TFLOP/s, TB/s
constexpr double G = 1e9;  // GB, GB/s
constexpr double us = 1e-6;

// Sustained training efficiency. MAMF figures (HW §2.1) are the best shape
// found by a brute-force search on a cold GPU; the GEMMs of a training step
// run at fixed model shapes, hot (power- and clock-limited), beside
// communication kernels. The ratio of sustained to MAMF efficiency was
// fitted once per GPU type to the published runs of shared/validation (the
// `trident validate` suite, docs/validation.md), each run under the runtime
// it used (docs/cost-model.md#runtimes); the values live in
// trident/Hardware/Fitted.h. GPU types without published runs in that set
// use 0.80 (assumption: below both fitted values of Fitted.h, since
// no published run checks them).
constexpr double kSustainedA100 =
    fittedValue(FitGroup::Ampere, FitKind::Sustained);
constexpr double kSustainedH100 =
    fittedValue(FitGroup::Hopper, FitKind::Sustained);
constexpr double kSustainedOther = 0.80;
// Fused attention (FlashAttention-2/3, cuDNN) with the GPU's best kernel:
// effective fraction of the dense peak on the FLOPs the kernel executes
// (causal blocks skipped), forward and backward together, at long
// sequences (flashLengthEfficiency scales it by the keys a query visits).
// One value for both fitted generations (Fitted.h): each generation's best
// kernel reaches about the same fraction of its peak, FlashAttention-2 "50-
// 73% of the theoretical maximum FLOPs/s on A100" (Dao 2023) and
// FlashAttention-3 "up to 740 TFLOPs/s (75% utilization)" on H100 (Shah
// et al. 2024); the fit also absorbs the sequence-proportional work
// around the kernel (rotary or ALiBi, masking). Unfitted types take it
// too.
constexpr double kAttention = fittedValue(FitGroup::Pooled, FitKind::Attention);
// Streaming efficiency of the fitted generations (Fitted.h).
constexpr double kMemoryA100 = 0.80;
constexpr double kMemoryHopper = 0.85;
// FlashAttention-2 on Hopper: FlashAttention-3 (Shah et al. 2024, "FA3:
// Fast and Accurate Attention with Asynchrony and Low-precision") reports
// that FA2 "achieves only 35% utilization on H100", against 75 % for FA3's
// BF16 forward; FA2 lacks Hopper's wgmma/TMA paths. Runtimes that use FA2
// there (PyTorch SDPA / flash-attn 2, --runtime fsdp or torchtitan) run the
// attention core at 35/75 of the best kernel's rate. On Ampere, Ada and
// AMD FA2 is the best fused kernel, so the two efficiencies are equal.
constexpr double kFa2OnHopper = 0.35 / 0.75;

/// One row of the catalog: the sources of each figure in the comment above
/// the row (tags as in the file header). Peaks in TFLOP/s (0: not
/// supported), memory in GB and TB/s, bus bandwidths in GB/s, launch in
/// microseconds. A GEMM efficiency is its best-shape MAMF fraction times
/// the type's sustained factor (kSustained*); 0 keeps GpuSpec's default
/// (a dtype without a peak). The FlashAttention-2 efficiency is the
/// attention efficiency times `fa2Factor`.
struct CatalogRow {
  const char *name, *vendor;
  double fp32, tf32, bf16, fp16, fp8;
  double memGB, bandwidthTBps;
  double mamf16, mamf8, mamf32, sustained;
  double attention, fa2Factor, memEfficiency;
  int64_t sms, tileM, tileN;
  double launchUs, busBwGBps, allToAllGBps;
};

// clang-format off
const CatalogRow kCatalog[] = {
    // [S] AWS P3 launch post (infoq.cn copy): 15.7 FP32, 125 FP16 tensor;
    // no BF16, TF32 or FP8 on Volta. [S] HW §1.1: 32 GB HBM2, 0.9 TB/s.
    // [M] not in the MAMF table; cuBLAS HGEMM on V100 is commonly quoted
    // at 100-110 TFLOP/s: assumption 0.80 (FP32 too). Attention 0.20:
    // assumption, no FlashAttention-2 on Volta. [S] ~750 GB/s copy of 900
    // (ginkgo-project/ginkgo#164), HW §2.2. [S] Volta whitepaper: 80 SMs.
    // [V] slides: NVLink2 (V100) 122; all-to-all ~0.8 x (assumption).
    {"V100-SXM2-32GB", "NVIDIA", 15.7, 0, 0, 125, 0, 32, 0.9,
     0.80, 0, 0.80, kSustainedOther, 0.20, 1.0, 0.83, 80, 128, 128,
     4, 122, 100},
    // DGX-2 / DGX-2H V100 SXM3 (NVSwitch, higher clock): [S] validation
    // README "V100 (DGX-2H) FP16: about 125-130", 130 for the 450 W SXM3
    // part (HW §1.1 lists only SXM2); [M] FP32 1597 MHz boost x 5120 x 2.
    // Otherwise as the SXM2 part.
    {"V100-SXM3-32GB", "NVIDIA", 16.4, 0, 0, 130, 0, 32, 0.9,
     0.80, 0, 0.80, kSustainedOther, 0.20, 1.0, 0.83, 80, 128, 128,
     4, 122, 100},
    // [S] A100 datasheet via glennklockwood / PC2 wiki (HW §1.1): 40 GB at
    // 1.555 TB/s, 80 GB at 2.039 TB/s. [S] MAMF A100 SXM 271.2 / 312 =
    // 0.869 (HW §2.1); TF32 0.80 (assumption: below BF16). FA2 is
    // Ampere's best kernel. [S] 1355 GB/s memcopy of 1555
    // (PTsolvers/gpu-workshop-JuliaCon23#7), derated like the GEMMs for
    // sustained training kernels: fitted 0.80. [S] deviceQuery: 108 SMs.
    // [V] slides NVLink3 (A100) 232; sjeaugey nccl-tests#149 ~230;
    // all-to-all 210.
    {"A100-SXM4-40GB", "NVIDIA", 19.5, 156, 312, 312, 0, 40, 1.555,
     0.869, 0, 0.80, kSustainedA100, kAttention, 1.0, kMemoryA100, 108, 128,
     256, 4, 230, 210},
    {"A100-SXM4-80GB", "NVIDIA", 19.5, 156, 312, 312, 0, 80, 2.039,
     0.869, 0, 0.80, kSustainedA100, kAttention, 1.0, kMemoryA100, 108, 128,
     256, 4, 230, 210},
    // [S] H100 datasheet table (hpctech copy), glennklockwood; H200
    // compute identical (stas00 note 16). HW §1.1. H100 SXM5: 80 GB HBM3,
    // 3.35 TB/s. [S] MAMF H100 SXM 794.5 / 989 = 0.803 ("H200 same"); FP8
    // 1402.6 / 1979 = 0.709; FP32 0.75 (assumption). [?] 3.02-3.09 TB/s of
    // 3.35 (fate-oracle.com, low confidence) and the NVIDIA HBM rule of
    // thumb 0.83-0.92 (HW §2.2): 0.85, fitted. [S] 132 SMs. [V] slides:
    // NVLink4 (H100) all-reduce busbw 370, all-to-all 320.
    {"H100-SXM5-80GB", "NVIDIA", 66.9, 494.7, 989.4, 989.4, 1978.9, 80,
     3.35, 0.803, 0.709, 0.75, kSustainedH100, kAttention,
     kFa2OnHopper, kMemoryHopper, 132, 128, 256, 4, 370, 320},
    // [S] H200 SXM: 141 GB HBM3e, 4.8 TB/s; FP8 MAMF 1453.4 / 1979 =
    // 0.734; [S] stas00 8x H200 ring (NVLS off) busbw 365.6. Otherwise as
    // the H100.
    {"H200-SXM-141GB", "NVIDIA", 66.9, 494.7, 989.4, 989.4, 1978.9, 141,
     4.8, 0.803, 0.734, 0.75, kSustainedH100, kAttention,
     kFa2OnHopper, kMemoryHopper, 132, 128, 256, 4, 365.6, 320},
    // [S/?] DGX B200 datasheet via stas00; Blackwell brief via
    // glennklockwood (FP32 80 at 1000 W; other copies 75). HW §1.1.
    // [S] 180 GB usable (192 physical); [?] 8.0 TB/s (7.7 on later pages).
    // [S] MAMF 1745 / 2250 = 0.776, FP8 3432.5 / 4500 = 0.763; FP32 0.75
    // (assumption). Attention as Hopper (assumption); FA2 has no Blackwell
    // (tcgen05) path either (assumption). Memory efficiency as H100
    // (assumption, HW §2.2). [S] a B200 SKU reports 148 SMs. [S] stas00
    // 8x B200 ring 682.2; [V] slides: B200 all-to-all 640.
    {"B200", "NVIDIA", 80, 1125, 2250, 2250, 4500, 180, 8.0,
     0.776, 0.763, 0.75, kSustainedOther, kAttention, kFa2OnHopper,
     0.85, 148, 128, 256, 4, 682, 640},
    // [S/?] per Blackwell GPU in GB200 NVL72, 1200 W: stas00 note 23,
    // glennklockwood arch brief (FP32 80 or 90). HW §1.1. [S] 13.4 TB / 72
    // and 576 TB/s / 72. [S] MAMF 1822 / 2500 = 0.729, FP8 3615.6 / 5000
    // = 0.723; FP32 0.70 (assumption). Attention, FA2 and memory
    // efficiency as the B200 (assumptions). [?] SMs not published for
    // GB200: B200-class die (148). [S] tritonbench PR #1017 on GB200:
    // launch 3.3 us. [V] slides: NVL72 32 GPUs 680, all-to-all 640.
    {"GB200", "NVIDIA", 80, 1250, 2500, 2500, 5000, 186, 8.0,
     0.729, 0.723, 0.70, kSustainedOther, kAttention, kFa2OnHopper,
     0.85, 148, 128, 256, 3.3, 680, 640},
    // [V] ROCm mi300.md peak table and gpu-specs.rst (HW §1.1): 192 GB,
    // 5.3 TB/s. [S] MAMF 668.4 / 1300 = 0.514 (ROCm 6.3 TunableOp);
    // software-dependent (HW §2.1); FP8 not measured: the BF16 fraction;
    // FP32 0.50. Attention 0.20: assumption, below Hopper's fitted 0.30;
    // CK's FA2 is the kernel. [V] 3.91 TB/s rocprofiler-compute expected
    // value of 5.3 (ROCm PR #2934); HW §2.2 range 0.74-0.79. [V] 304 CUs;
    // 256x256 tile (assumption: hipBLASLt macro tile); launch 4 us
    // (assumption: HW §2.3 is NVIDIA). Derived: RCCL models 48 GB/s per
    // direction per xGMI link (ROCm/rccl#1210) x 7 peers = 336 GB/s; no
    // busbw measurement in HW.
    {"MI300X", "AMD", 163.4, 653.7, 1307.4, 1307.4, 2614.9, 192, 5.3,
     0.514, 0.514, 0.50, kSustainedOther, 0.20, 1.0, 0.74, 304, 256, 256,
     4, 336, 336},
    // [S] datasheet table (reseller copies), HW §1.1: 48 GB GDDR6 ECC,
    // 0.864 TB/s. Assumption: no MAMF figure for Ada; A100 PCIe reaches
    // 0.81, and a 350 W PCIe card clocks down under sustained tensor load:
    // 0.70 (FP8 and FP32 0.65). Attention as Ampere (assumption). Memory
    // efficiency 0.85 (assumption, HW §2.2 NVIDIA range). [S] 142 SMs.
    // [V] slides: PCIe Gen4 8 GPUs 24; all-to-all half (assumption: no
    // NVLink).
    {"L40S", "NVIDIA", 91.6, 183, 362.05, 362.05, 733, 48, 0.864,
     0.70, 0.65, 0.65, kSustainedOther, kAttention, 1.0, 0.85, 142,
     128, 128, 4, 24, 12},
};
// clang-format on

/// Memory the driver reports (nvidia-smi "Total", MiB), where it is known:
/// the marketed "80 GB" of an A100 or H100 is 80 GiB or close to it, about
/// 7 % more than 80e9 bytes. [S] Modal, "Why does an NVIDIA H100 80GB card
/// offer 85.52 GB?" (thundergolfer.com/blog/nvidia-gpu-memory-capacity,
/// 2025; nvidia-smi on their fleet; also modal-labs/modal-client#2797).
/// Types without a measurement keep the marketed figure in 1e9 bytes, the
/// conservative reading. What the driver keeps back from this total and
/// what the process needs besides its tensors are EvalOptions::
/// reservedBytes.
struct ReportedMemory {
  std::string_view name;
  double mib;
};
constexpr ReportedMemory kReportedMemory[] = {
    {"A100-SXM4-40GB", 40960}, {"A100-SXM4-80GB", 81920},
    {"H100-SXM5-80GB", 81559}, {"H200-SXM-141GB", 143771},
    {"L40S", 46068},
};

double capacityBytes(const CatalogRow &r) {
  for (const ReportedMemory &m : kReportedMemory)
    if (m.name == r.name)
      return m.mib * 1024 * 1024;
  return r.memGB * G;
}

std::vector<GpuSpec> buildCatalog() {
  std::vector<GpuSpec> c;
  for (const CatalogRow &r : kCatalog) {
    GpuSpec g;
    g.name = r.name;
    g.vendor = r.vendor;
    g.peakFp32FlopsPerS = r.fp32 * T;
    g.peakTf32FlopsPerS = r.tf32 * T;
    g.peakBf16FlopsPerS = r.bf16 * T;
    g.peakFp16FlopsPerS = r.fp16 * T;
    g.peakFp8FlopsPerS = r.fp8 * T;
    g.hbmBytes = capacityBytes(r);
    g.hbmBandwidthBytesPerS = r.bandwidthTBps * T;
    g.gemmEfficiency16 = r.mamf16 * r.sustained;
    if (r.mamf8 > 0)
      g.gemmEfficiency8 = r.mamf8 * r.sustained;
    g.gemmEfficiency32 = r.mamf32 * r.sustained;
    g.attentionEfficiency = r.attention;
    g.attentionEfficiencyFa2 = r.attention * r.fa2Factor;
    g.memBandwidthEfficiency = r.memEfficiency;
    g.smCount = r.sms;
    g.tileM = r.tileM;
    g.tileN = r.tileN;
    g.kernelLaunchSeconds = r.launchUs * us;
    g.scaleUpBusBwBytesPerS = r.busBwGBps * G;
    g.scaleUpAllToAllBytesPerS = r.allToAllGBps * G;
    // The Blackwell rows (GpuSpec::mxfp8's source).
    g.mxfp8 = g.name == "B200" || g.name == "GB200";
    c.push_back(g);
  }
  return c;
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char &ch : r)
    ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return r;
}

struct Alias {
  std::string_view alias;
  std::string_view canonical;
};
constexpr Alias kAliases[] = {
    {"v100", "V100-SXM2-32GB"},        {"v100-sxm2", "V100-SXM2-32GB"},
    {"v100-32gb", "V100-SXM2-32GB"},   {"v100-sxm3", "V100-SXM3-32GB"},
    {"a100", "A100-SXM4-80GB"},        {"a100-80gb", "A100-SXM4-80GB"},
    {"a100-sxm4", "A100-SXM4-80GB"},   {"a100-40gb", "A100-SXM4-40GB"},
    {"h100", "H100-SXM5-80GB"},        {"h100-sxm", "H100-SXM5-80GB"},
    {"h100-sxm5", "H100-SXM5-80GB"},   {"h100-80gb", "H100-SXM5-80GB"},
    {"h200", "H200-SXM-141GB"},        {"h200-sxm", "H200-SXM-141GB"},
    {"b200-sxm", "B200"},              {"gb200-nvl72", "GB200"},
    {"mi300x-oam", "MI300X"},          {"l40s-pcie", "L40S"},
};
} // namespace

std::string_view fitGroupName(FitGroup group) {
  switch (group) {
  case FitGroup::Ampere:
    return "ampere";
  case FitGroup::Hopper:
    return "hopper";
  case FitGroup::Pooled:
    break;
  case FitGroup::Moe:
    return "moe";
  }
  return "pooled";
}

std::optional<FitGroup> fitGroupOf(const GpuSpec &gpu) {
  // The catalog rows built from the Ampere and Hopper constants above.
  std::string_view n = gpu.name;
  if (n.starts_with("A100-"))
    return FitGroup::Ampere;
  if (n.starts_with("H100-") || n.starts_with("H200-"))
    return FitGroup::Hopper;
  return std::nullopt;
}

void applyFit(GpuSpec &gpu, const FitValues &to) {
  auto group = fitGroupOf(gpu);
  if (!group)
    return;
  FitValues from = FitValues::published();
  // A kind with no fitted constant for the group (0) keeps its value.
  auto ratio = [&](FitKind k) {
    double f = from.get(*group, k);
    return f > 0 ? to.get(*group, k) / f : 1.0;
  };
  double s = ratio(FitKind::Sustained);
  gpu.gemmEfficiency16 *= s;
  gpu.gemmEfficiency8 *= s;
  gpu.gemmEfficiency32 *= s;
  double a = ratio(FitKind::Attention);
  gpu.attentionEfficiency *= a;
  gpu.attentionEfficiencyFa2 *= a;
  gpu.memBandwidthEfficiency *= ratio(FitKind::Memory);
}

std::span<const GpuSpec> gpuCatalog() {
  static const std::vector<GpuSpec> catalog = buildCatalog();
  return catalog;
}

Result<GpuSpec> lookupGpu(std::string_view name) {
  std::string key = lower(name);
  for (const GpuSpec &g : gpuCatalog())
    if (lower(g.name) == key)
      return g;
  for (const Alias &a : kAliases)
    if (a.alias == key)
      for (const GpuSpec &g : gpuCatalog())
        if (g.name == a.canonical)
          return g;
  std::string known;
  for (const GpuSpec &g : gpuCatalog())
    known += (known.empty() ? "" : ", ") + g.name;
  return Status::error("unknown GPU '" + std::string(name) +
                       "' (known: " + known + ")");
}

double GpuSpec::peakFlopsPerS(DType t) const {
  switch (t) {
  case DType::F32:
    return peakTf32FlopsPerS > 0 ? peakTf32FlopsPerS : peakFp32FlopsPerS;
  case DType::BF16:
    return peakBf16FlopsPerS;
  case DType::F16:
    return peakFp16FlopsPerS;
  case DType::FP8:
    return peakFp8FlopsPerS;
  }
  return 0;
}

double GpuSpec::gemmEfficiency(DType t) const {
  switch (t) {
  case DType::F32:
    return gemmEfficiency32;
  case DType::BF16:
  case DType::F16:
    return gemmEfficiency16;
  case DType::FP8:
    return gemmEfficiency8;
  }
  return gemmEfficiency16;
}

Status validateGpuSpec(const GpuSpec &g, std::string_view where) {
  auto bad = [&](std::string_view field, double v, std::string_view want) {
    return Status::error(std::string(where) + ": GPU '" + g.name + "' field '" +
                         std::string(field) + "' is " + std::to_string(v) +
                         "; " + std::string(want));
  };
  auto positive = [&](std::string_view f, double v) -> Status {
    if (!std::isfinite(v) || v <= 0)
      return bad(f, v, "must be a positive finite number");
    return Status::ok();
  };
  auto nonneg = [&](std::string_view f, double v) -> Status {
    if (!std::isfinite(v) || v < 0)
      return bad(f, v, "must be a non-negative finite number");
    return Status::ok();
  };
  auto fraction = [&](std::string_view f, double v) -> Status {
    if (!std::isfinite(v) || v <= 0 || v > 1)
      return bad(f, v, "must be a fraction in (0, 1]");
    return Status::ok();
  };
  for (Status s :
       {nonneg("peak_fp32_tflops", g.peakFp32FlopsPerS),
        nonneg("peak_tf32_tflops", g.peakTf32FlopsPerS),
        nonneg("peak_bf16_tflops", g.peakBf16FlopsPerS),
        nonneg("peak_fp16_tflops", g.peakFp16FlopsPerS),
        nonneg("peak_fp8_tflops", g.peakFp8FlopsPerS),
        positive("memory_gb", g.hbmBytes),
        positive("memory_bandwidth_gb_per_s", g.hbmBandwidthBytesPerS),
        fraction("gemm_efficiency", g.gemmEfficiency16),
        fraction("gemm_efficiency_fp8", g.gemmEfficiency8),
        fraction("gemm_efficiency_fp32", g.gemmEfficiency32),
        fraction("attention_efficiency", g.attentionEfficiency),
        fraction("attention_efficiency_fa2", g.attentionEfficiencyFa2),
        fraction("memory_bandwidth_efficiency", g.memBandwidthEfficiency),
        positive("sm_count", double(g.smCount)),
        positive("tile_m", double(g.tileM)), positive("tile_n", double(g.tileN)),
        nonneg("kernel_launch_us", g.kernelLaunchSeconds)})
    if (!s)
      return s;
  if (g.peakFp16FlopsPerS <= 0 && g.peakBf16FlopsPerS <= 0 &&
      g.peakFp32FlopsPerS <= 0)
    return Status::error(std::string(where) + ": GPU '" + g.name +
                         "' has no positive peak FLOP/s");
  for (const GemmCalibrationPoint &p : g.gemmCalibration)
    if (p.m <= 0 || p.n <= 0 || p.k <= 0 || !std::isfinite(p.efficiency) ||
        p.efficiency <= 0 || p.efficiency > 1)
      return Status::error(std::string(where) + ": GPU '" + g.name +
                           "' has an invalid GEMM calibration point");
  return Status::ok();
}

} // namespace trident
