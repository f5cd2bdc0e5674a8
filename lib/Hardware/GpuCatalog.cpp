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
// it used (docs/cost-model.md#runtimes): A100 0.88, H100 0.82. GPU types
// without published runs in that set use 0.80 (assumption: at the lower
// fitted value).
constexpr double kSustainedA100 = 0.88;
constexpr double kSustainedH100 = 0.822;
constexpr double kSustainedOther = 0.80;
// Fused attention (FlashAttention-2/3, cuDNN) with the GPU's best kernel:
// effective fraction of the dense peak on the FLOPs the kernel executes
// (causal blocks skipped), forward and backward together, fitted like the
// above (A100 0.26, H100 0.30); the fit also absorbs the
// sequence-proportional work around the kernel (rotary or ALiBi, masking).
// Unfitted types take the value of the closest fitted generation.
constexpr double kAttentionA100 = 0.26;
constexpr double kAttentionHopper = 0.30;
// FlashAttention-2 on Hopper: FlashAttention-3 (Shah et al. 2024, "FA3:
// Fast and Accurate Attention with Asynchrony and Low-precision") reports
// that FA2 "achieves only 35% utilization on H100", against 75 % for FA3's
// BF16 forward; FA2 lacks Hopper's wgmma/TMA paths. Runtimes that use FA2
// there (PyTorch SDPA / flash-attn 2, --runtime fsdp or torchtitan) run the
// attention core at 35/75 of the best kernel's rate. On Ampere, Ada and
// AMD FA2 is the best fused kernel, so the two efficiencies are equal.
constexpr double kFa2OnHopper = 0.35 / 0.75;

std::vector<GpuSpec> buildCatalog() {
  std::vector<GpuSpec> c;

  {
    GpuSpec g;
    g.name = "V100-SXM2-32GB";
    g.vendor = "NVIDIA";
    // [S] AWS P3 launch post (infoq.cn copy): 15.7 FP32, 125 FP16 tensor.
    g.peakFp32FlopsPerS = 15.7 * T;
    g.peakFp16FlopsPerS = 125 * T; // no BF16, TF32 or FP8 on Volta
    g.hbmBytes = 32 * G;            // [S] HW §1.1 (16/32 GB HBM2)
    g.hbmBandwidthBytesPerS = 0.9 * T; // [S] HW §1.1
    // [M] not in the MAMF table; cuBLAS HGEMM on V100 is commonly quoted
    // at 100-110 TFLOP/s. Assumption: 0.80.
    g.gemmEfficiency16 = 0.80 * kSustainedOther;
    g.gemmEfficiency32 = 0.80 * kSustainedOther;
    g.attentionEfficiency = 0.20; // assumption: no FlashAttention-2 on Volta
    g.attentionEfficiencyFa2 = g.attentionEfficiency;
    // [S] ~750 GB/s copy of 900 (ginkgo-project/ginkgo#164), HW §2.2.
    g.memBandwidthEfficiency = 0.83;
    g.smCount = 80; // [S] Volta whitepaper table
    g.tileM = 128;
    g.tileN = 128;
    g.kernelLaunchSeconds = 4 * us;
    g.scaleUpBusBwBytesPerS = 122 * G; // [V] slides: NVLink2 (V100) 122
    g.scaleUpAllToAllBytesPerS = 100 * G; // assumption: ~0.8 x all-reduce
    c.push_back(g);
  }
  {
    // DGX-2 / DGX-2H V100 SXM3 (NVSwitch, higher clock). [S] validation
    // README: "V100 (DGX-2H) FP16: about 125-130"; we take 130 for the
    // 450 W SXM3 part (HW §1.1 lists only SXM2).
    GpuSpec g = c.back();
    g.name = "V100-SXM3-32GB";
    g.peakFp32FlopsPerS = 16.4 * T; // [M] 1597 MHz boost x 5120 x 2
    g.peakFp16FlopsPerS = 130 * T;
    c.push_back(g);
  }
  auto a100 = [&](const char *name, double memGB, double bwTBps) {
    GpuSpec g;
    g.name = name;
    g.vendor = "NVIDIA";
    // [S] A100 datasheet via glennklockwood / PC2 wiki (HW §1.1).
    g.peakFp32FlopsPerS = 19.5 * T;
    g.peakTf32FlopsPerS = 156 * T;
    g.peakBf16FlopsPerS = 312 * T;
    g.peakFp16FlopsPerS = 312 * T;
    g.hbmBytes = memGB * G;
    g.hbmBandwidthBytesPerS = bwTBps * T;
    // [S] MAMF A100 SXM 271.2 / 312 = 0.869 (HW §2.1).
    g.gemmEfficiency16 = 0.869 * kSustainedA100;
    g.gemmEfficiency32 = 0.80 * kSustainedA100; // assumption: TF32 < BF16
    g.attentionEfficiency = kAttentionA100;
    g.attentionEfficiencyFa2 = kAttentionA100; // FA2 is Ampere's best
    // [S] 1355 GB/s memcopy of 1555 (PTsolvers/gpu-workshop-JuliaCon23#7).
    // Derated like the GEMMs for sustained training kernels: fitted 0.80.
    g.memBandwidthEfficiency = 0.80;
    g.smCount = 108; // [S] deviceQuery (PC2 wiki)
    g.tileM = 128;
    g.tileN = 256;
    g.kernelLaunchSeconds = 4 * us;
    // [V] slides NVLink3 (A100) 232; sjeaugey nccl-tests#149 ~230.
    g.scaleUpBusBwBytesPerS = 230 * G;
    g.scaleUpAllToAllBytesPerS = 210 * G; // [V] slides: A100 all-to-all 210
    return g;
  };
  c.push_back(a100("A100-SXM4-40GB", 40, 1.555)); // [S] 40 GB, 1.555 TB/s
  c.push_back(a100("A100-SXM4-80GB", 80, 2.039)); // [S] 80 GB, 2.039 TB/s

  auto hopper = [&](const char *name, double memGB, double bwTBps,
                    double fp8Eff, double busBw) {
    GpuSpec g;
    g.name = name;
    g.vendor = "NVIDIA";
    // [S] H100 datasheet table (hpctech copy), glennklockwood; H200
    // compute identical (stas00 note 16). HW §1.1.
    g.peakFp32FlopsPerS = 66.9 * T;
    g.peakTf32FlopsPerS = 494.7 * T;
    g.peakBf16FlopsPerS = 989.4 * T;
    g.peakFp16FlopsPerS = 989.4 * T;
    g.peakFp8FlopsPerS = 1978.9 * T;
    g.hbmBytes = memGB * G;
    g.hbmBandwidthBytesPerS = bwTBps * T;
    // [S] MAMF H100 SXM 794.5 / 989 = 0.803 ("H200 same").
    g.gemmEfficiency16 = 0.803 * kSustainedH100;
    g.gemmEfficiency8 = fp8Eff * kSustainedH100;
    g.gemmEfficiency32 = 0.75 * kSustainedH100; // assumption
    g.attentionEfficiency = kAttentionHopper;
    g.attentionEfficiencyFa2 = kAttentionHopper * kFa2OnHopper;
    // [?] 3.02-3.09 TB/s of 3.35 (fate-oracle.com, low confidence) and the
    // NVIDIA HBM rule of thumb 0.83-0.92 (HW §2.2).
    g.memBandwidthEfficiency = 0.85; // HW §2.2 NVIDIA range 0.85-0.9; fitted
    g.smCount = 132; // [S]
    g.tileM = 128;
    g.tileN = 256;
    g.kernelLaunchSeconds = 4 * us;
    g.scaleUpBusBwBytesPerS = busBw * G;
    g.scaleUpAllToAllBytesPerS = 320 * G; // [V] slides: H100 all-to-all 320
    return g;
  };
  // [S] H100 SXM5: 80 GB HBM3, 3.35 TB/s. FP8 MAMF 1402.6/1979 = 0.709.
  // [V] slides: NVLink4 (H100) all-reduce busbw 370.
  c.push_back(hopper("H100-SXM5-80GB", 80, 3.35, 0.709, 370));
  // [S] H200 SXM: 141 GB HBM3e, 4.8 TB/s. FP8 MAMF 1453.4/1979 = 0.734.
  // [S] stas00 8x H200 ring (NVLS off) busbw 365.6.
  c.push_back(hopper("H200-SXM-141GB", 141, 4.8, 0.734, 365.6));

  {
    GpuSpec g;
    g.name = "B200";
    g.vendor = "NVIDIA";
    // [S/?] DGX B200 datasheet via stas00; Blackwell brief via
    // glennklockwood (FP32 80 at 1000 W; other copies 75). HW §1.1.
    g.peakFp32FlopsPerS = 80 * T;
    g.peakTf32FlopsPerS = 1125 * T;
    g.peakBf16FlopsPerS = 2250 * T;
    g.peakFp16FlopsPerS = 2250 * T;
    g.peakFp8FlopsPerS = 4500 * T;
    g.hbmBytes = 180 * G;             // [S] usable (192 physical)
    g.hbmBandwidthBytesPerS = 8.0 * T; // [?] 8.0 (7.7 on later pages)
    g.gemmEfficiency16 = 0.776 * kSustainedOther; // [S] MAMF 1745 / 2250
    g.gemmEfficiency8 = 0.763 * kSustainedOther;  // [S] MAMF 3432.5 / 4500
    g.gemmEfficiency32 = 0.75 * kSustainedOther;  // assumption
    g.attentionEfficiency = kAttentionHopper;     // assumption: as Hopper
    // assumption: FA2 has no Blackwell (tcgen05) path either; as Hopper.
    g.attentionEfficiencyFa2 = kAttentionHopper * kFa2OnHopper;
    g.memBandwidthEfficiency = 0.85; // assumption: as H100 (HW §2.2)
    g.smCount = 148;                  // [S] a B200 SKU reports 148 SMs
    g.tileM = 128;
    g.tileN = 256;
    g.kernelLaunchSeconds = 4 * us;
    g.scaleUpBusBwBytesPerS = 682 * G;    // [S] stas00 8x B200 ring 682.2
    g.scaleUpAllToAllBytesPerS = 640 * G; // [V] slides: B200 all-to-all 640
    c.push_back(g);
  }
  {
    GpuSpec g;
    g.name = "GB200";
    g.vendor = "NVIDIA";
    // [S/?] per Blackwell GPU in GB200 NVL72, 1200 W: stas00 note 23,
    // glennklockwood arch brief (FP32 80 or 90). HW §1.1.
    g.peakFp32FlopsPerS = 80 * T;
    g.peakTf32FlopsPerS = 1250 * T;
    g.peakBf16FlopsPerS = 2500 * T;
    g.peakFp16FlopsPerS = 2500 * T;
    g.peakFp8FlopsPerS = 5000 * T;
    g.hbmBytes = 186 * G;              // [S] 13.4 TB / 72
    g.hbmBandwidthBytesPerS = 8.0 * T; // [S] 576 TB/s / 72
    g.gemmEfficiency16 = 0.729 * kSustainedOther; // [S] MAMF 1822 / 2500
    g.gemmEfficiency8 = 0.723 * kSustainedOther;  // [S] MAMF 3615.6 / 5000
    g.gemmEfficiency32 = 0.70 * kSustainedOther;  // assumption
    g.attentionEfficiency = kAttentionHopper;     // assumption: as Hopper
    // assumption: FA2 has no Blackwell (tcgen05) path either; as Hopper.
    g.attentionEfficiencyFa2 = kAttentionHopper * kFa2OnHopper;
    g.memBandwidthEfficiency = 0.85; // assumption: as H100 (HW §2.2)
    g.smCount = 148; // [?] not published for GB200; B200-class die (148)
    g.tileM = 128;
    g.tileN = 256;
    g.kernelLaunchSeconds = 3.3 * us; // [S] tritonbench PR #1017 on GB200
    g.scaleUpBusBwBytesPerS = 680 * G;    // [V] slides: NVL72 32 GPUs 680
    g.scaleUpAllToAllBytesPerS = 640 * G; // [V] slides: NVL72 640
    c.push_back(g);
  }
  {
    GpuSpec g;
    g.name = "MI300X";
    g.vendor = "AMD";
    // [V] ROCm mi300.md peak table and gpu-specs.rst. HW §1.1.
    g.peakFp32FlopsPerS = 163.4 * T;
    g.peakTf32FlopsPerS = 653.7 * T;
    g.peakBf16FlopsPerS = 1307.4 * T;
    g.peakFp16FlopsPerS = 1307.4 * T;
    g.peakFp8FlopsPerS = 2614.9 * T;
    g.hbmBytes = 192 * G;              // [V]
    g.hbmBandwidthBytesPerS = 5.3 * T; // [V]
    // [S] MAMF 668.4 / 1300 = 0.514 (ROCm 6.3 TunableOp); software-
    // dependent (HW §2.1). FP8 not measured: assume the BF16 fraction.
    g.gemmEfficiency16 = 0.514 * kSustainedOther;
    g.gemmEfficiency8 = 0.514 * kSustainedOther;
    g.gemmEfficiency32 = 0.50 * kSustainedOther;
    g.attentionEfficiency = 0.20; // assumption: below Hopper's fitted 0.30
    g.attentionEfficiencyFa2 = g.attentionEfficiency; // CK FA2 is the kernel
    // [V] 3.91 TB/s rocprofiler-compute expected value of 5.3 (ROCm PR
    // #2934); HW §2.2 range 0.74-0.79.
    g.memBandwidthEfficiency = 0.74;
    g.smCount = 304; // [V] CUs
    g.tileM = 256;   // assumption: hipBLASLt macro tile
    g.tileN = 256;
    g.kernelLaunchSeconds = 4 * us; // assumption (HW §2.3 is NVIDIA)
    // Derived: RCCL models 48 GB/s per direction per xGMI link
    // (ROCm/rccl#1210) x 7 peers = 336 GB/s; no busbw measurement in HW.
    g.scaleUpBusBwBytesPerS = 336 * G;
    g.scaleUpAllToAllBytesPerS = 336 * G;
    c.push_back(g);
  }
  {
    GpuSpec g;
    g.name = "L40S";
    g.vendor = "NVIDIA";
    // [S] datasheet table (reseller copies), HW §1.1.
    g.peakFp32FlopsPerS = 91.6 * T;
    g.peakTf32FlopsPerS = 183 * T;
    g.peakBf16FlopsPerS = 362.05 * T;
    g.peakFp16FlopsPerS = 362.05 * T;
    g.peakFp8FlopsPerS = 733 * T;
    g.hbmBytes = 48 * G;                 // [S] GDDR6 ECC
    g.hbmBandwidthBytesPerS = 0.864 * T; // [S]
    // Assumption: no MAMF figure for Ada; A100 PCIe reaches 0.81, and a
    // 350 W PCIe card clocks down under sustained tensor load: 0.70.
    g.gemmEfficiency16 = 0.70 * kSustainedOther;
    g.gemmEfficiency8 = 0.65 * kSustainedOther;
    g.gemmEfficiency32 = 0.65 * kSustainedOther;
    g.attentionEfficiency = kAttentionA100; // assumption: as Ampere
    g.attentionEfficiencyFa2 = kAttentionA100;
    g.memBandwidthEfficiency = 0.85; // assumption, HW §2.2 NVIDIA range
    g.smCount = 142;                 // [S]
    g.tileM = 128;
    g.tileN = 128;
    g.kernelLaunchSeconds = 4 * us;
    g.scaleUpBusBwBytesPerS = 24 * G;    // [V] slides: PCIe Gen4 8 GPUs 24
    g.scaleUpAllToAllBytesPerS = 12 * G; // assumption: half (no NVLink)
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
