//===- RooflineTest.cpp - GEMM efficiency, roofline, launch bound ---------===//

#include "trident/Cost/Roofline.h"
#include "trident/Cost/LayerProfile.h"

#include <catch2/catch.hpp>

using namespace trident;

TEST_CASE("a big square GEMM reaches about the catalog efficiency",
          "[cost][roofline]") {
  for (const char *name : {"A100-SXM4-80GB", "H100-SXM5-80GB", "B200"}) {
    GpuSpec g = *lookupGpu(name);
    INFO(name);
    KernelTime t = gemmTime(g, 8192, 8192, 8192, 1, DType::BF16);
    CHECK(!t.memoryBound());
    double catalog = g.gemmEfficiency(DType::BF16);
    CHECK(t.efficiency <= catalog);
    CHECK(t.efficiency >= 0.95 * catalog);
    // Achieved FLOP/s = peak * efficiency.
    double achieved = 2.0 * 8192 * 8192 * 8192 / t.seconds;
    CHECK(achieved == Approx(g.peakBf16FlopsPerS * t.efficiency));
  }
}

TEST_CASE("a skinny GEMM (m = 1) is bandwidth-bound", "[cost][roofline]") {
  GpuSpec g = *lookupGpu("H100-SXM5-80GB");
  KernelTime t = gemmTime(g, 1, 8192, 8192, 1, DType::BF16);
  CHECK(t.memoryBound());
  // Time = weight bytes / achievable bandwidth (the 8192x8192 matrix).
  double bytes = 8192.0 * 8192 * 2;
  CHECK(t.seconds == Approx(bytes / (3.35e12 * g.memBandwidthEfficiency))
                         .epsilon(0.01));
  CHECK(g.memBandwidthEfficiency == Approx(0.85));
  CHECK(t.seconds == t.memorySeconds);
  // Versus the square GEMM: ~1 flop/byte instead of ~2700 (ridge ~260).
  KernelTime sq = gemmTime(g, 8192, 8192, 8192, 1, DType::BF16);
  CHECK(sq.computeSeconds > 5 * sq.memorySeconds);
}

TEST_CASE("wave quantisation: time is a staircase in n", "[cost][roofline]") {
  GpuSpec g = *lookupGpu("H100-SXM5-80GB"); // 132 SMs, 128x256 tiles
  const double m = 128 * 12, k = 8192;
  // 12 x 11 = 132 tiles: exactly one wave.
  double oneWave = gemmTime(g, m, 256 * 11, k, 1, DType::BF16).seconds;
  double justOver = gemmTime(g, m, 256 * 11 + 8, k, 1, DType::BF16).seconds;
  // One more column of tiles: a partial second wave; time jumps although
  // the work grew by 0.3 %.
  CHECK(justOver > 1.25 * oneWave);
  // Efficiency at the exact wave boundary is the catalog's (x depth).
  CHECK(gemmEfficiency(g, m, 256 * 11, k, 1, DType::BF16) ==
        Approx(g.gemmEfficiency16 * k / (k + 64)));
  // Across a sweep the time never decreases, and it has flat steps.
  double prev = 0;
  int flat = 0;
  for (int n = 256; n <= 256 * 40; n += 64) {
    double t = gemmTime(g, m, n, k, 1, DType::BF16).seconds;
    CHECK(t >= prev * 0.999);
    if (prev > 0 && t < prev * 1.0001)
      ++flat;
    prev = t;
  }
  CHECK(flat > 10);
}

TEST_CASE("small and misaligned GEMMs run below the big-GEMM rate",
          "[cost][roofline]") {
  GpuSpec g = *lookupGpu("H100-SXM5-80GB");
  double big = gemmEfficiency(g, 8192, 8192, 8192, 1, DType::BF16);
  CHECK(gemmEfficiency(g, 256, 256, 256, 1, DType::BF16) < 0.3 * big);
  // stas00's SwiGLU example (HW §2.1): d_ff = 10922 vs 10944 at h = 4096.
  double odd = gemmEfficiency(g, 8192, 10922, 4096, 1, DType::BF16);
  double even = gemmEfficiency(g, 8192, 10944, 4096, 1, DType::BF16);
  CHECK(odd / even == Approx(272.7 / 398.4).epsilon(0.1));
  // FP8 has its own efficiency and twice the peak.
  KernelTime b16 = gemmTime(g, 8192, 8192, 8192, 1, DType::BF16);
  KernelTime f8 = gemmTime(g, 8192, 8192, 8192, 1, DType::FP8);
  CHECK(b16.seconds / f8.seconds ==
        Approx(2 * 0.709 / 0.803).epsilon(0.02));
}

TEST_CASE("launch overhead bounds tiny kernels", "[cost][roofline]") {
  GpuSpec g = *lookupGpu("A100-SXM4-80GB");
  double tiny = gemmTime(g, 8, 8, 8, 1, DType::BF16).seconds;
  CHECK(launchBound(g, tiny) == Approx(g.kernelLaunchSeconds));
  CHECK(launchBound(g, 1.0) == 1.0);
  CHECK(launchBound(g, 0, 10) == Approx(10 * g.kernelLaunchSeconds));
}

TEST_CASE("GEMM calibration corrects the model near measured shapes",
          "[cost][roofline]") {
  GpuSpec g = *lookupGpu("H100-SXM5-80GB");
  double before = gemmEfficiency(g, 8192, 8192, 8192, 1, DType::BF16);
  g.gemmCalibration.push_back({8192, 8192, 8192, DType::BF16, 0.60});
  CHECK(gemmEfficiency(g, 8192, 8192, 8192, 1, DType::BF16) ==
        Approx(0.60).epsilon(1e-6));
  double after = gemmEfficiency(g, 8192, 8192, 4096, 1, DType::BF16);
  CHECK(after < before);
}

TEST_CASE("a fused attention kernel's rate grows with the keys a query "
          "visits",
          "[cost][roofline]") {
  CHECK(flashLengthEfficiency(kFlashKeyOverhead) == Approx(0.5));
  CHECK(flashLengthEfficiency(2048) == Approx(2048.0 / 2288.0));
  CHECK(flashLengthEfficiency(0) == 1.0); // no attention to slow down
  double previous = 0;
  for (double keys : {64.0, 512.0, 2048.0, 8192.0, 65536.0}) {
    double e = flashLengthEfficiency(keys);
    CHECK(e > previous);
    CHECK(e < 1);
    previous = e;
  }
  // The source's points (pytorch/benchmark PR #2391, FlashAttention-3 on
  // H100): 512 keys at 430 TFLOP/s, 2k at 566, 16k at 621.
  CHECK(flashLengthEfficiency(512) / flashLengthEfficiency(16384) ==
        Approx(430.32 / 620.73).epsilon(0.02));
  CHECK(flashLengthEfficiency(2048) / flashLengthEfficiency(16384) ==
        Approx(565.54 / 620.73).epsilon(0.02));
}

TEST_CASE("a causal fused kernel computes its diagonal blocks whole",
          "[cost][roofline]") {
  CHECK(causalFlashDensity(1) == 1.0);
  CHECK(causalFlashDensity(128) == 1.0);
  CHECK(causalFlashDensity(256) == 0.75);
  CHECK(causalFlashDensity(2048) == Approx(17.0 / 32.0));
  CHECK(causalFlashDensity(2049) == Approx(18.0 / 34.0));
  CHECK(causalFlashDensity(65536) == Approx(0.5).epsilon(0.002));
}

TEST_CASE("a grouped GEMM's fixed cost per expert reproduces Transformer "
          "Engine's measured grouped GEMMs",
          "[cost][roofline]") {
  // TE PR #2045 on H100, BF16, (experts, rows per expert, n, k): TE 2.7
  // and TE 2.2 TFLOP/s. The pooled roofline time of all experts' rows plus
  // a fixed cost per expert GEMM (2.4 us for TE 2.7, 7.0 us for TE 2.2)
  // gives each figure within 3 %.
  GpuSpec g = *lookupGpu("H100-SXM5-80GB");
  struct Point {
    double experts, rows, te27, te22;
  };
  for (Point p :
       {Point{8, 4096, 627.903, 508.77}, Point{16, 2048, 553.945, 398.81}}) {
    INFO(p.experts << " experts of " << p.rows << " rows");
    double flops = 2.0 * p.rows * 768 * 2048 * p.experts;
    double pooled =
        gemmTime(g, p.rows * p.experts, 768, 2048, 1, DType::BF16).seconds;
    double te27 = flops / (pooled + p.experts * kTeGroupedGemmSecondsPerExpert);
    double te22 = flops / (pooled + p.experts * 7.0e-6);
    CHECK(te27 / 1e12 == Approx(p.te27).epsilon(0.03));
    CHECK(te22 / 1e12 == Approx(p.te22).epsilon(0.03));
    // Without the fixed cost the model is 12 to 27 % too fast.
    CHECK(flops / pooled / 1e12 > 1.1 * p.te27);
  }
}
