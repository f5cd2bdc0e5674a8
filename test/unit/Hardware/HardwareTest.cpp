//===- HardwareTest.cpp - GPU catalog, cluster presets, cluster.json ------===//

#include "trident/Hardware/Calibration.h"
#include "trident/Hardware/Cluster.h"
#include "trident/Hardware/Fitted.h"
#include "trident/Hardware/Gpu.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <string>

using namespace trident;

TEST_CASE("catalog has the required GPUs with sane numbers", "[hardware]") {
  for (const char *name :
       {"V100-SXM2-32GB", "A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB",
        "H200-SXM-141GB", "B200", "GB200", "MI300X", "L40S"}) {
    Result<GpuSpec> g = lookupGpu(name);
    REQUIRE(g.isOk());
    CHECK(validateGpuSpec(*g, "catalog").isOk());
    CHECK(g->hbmBytes > 0);
    CHECK(g->smCount > 0);
  }
  // Datasheet values (HW §1.1).
  GpuSpec h100 = *lookupGpu("H100-SXM5-80GB");
  CHECK(h100.peakBf16FlopsPerS == Approx(989.4e12));
  CHECK(h100.peakFp8FlopsPerS == Approx(1978.9e12));
  CHECK(h100.hbmBandwidthBytesPerS == Approx(3.35e12));
  // MAMF 794.5 / 989.4, derated to sustained training (Fitted.h).
  CHECK(
      h100.gemmEfficiency(DType::BF16) ==
      Approx(794.5 / 989.4 * fittedValue(FitGroup::Hopper, FitKind::Sustained))
          .epsilon(0.01));
  GpuSpec a100 = *lookupGpu("a100-40gb");
  CHECK(a100.name == "A100-SXM4-40GB");
  CHECK(a100.peakFlopsPerS(DType::BF16) == Approx(312e12));
  CHECK(a100.peakFlopsPerS(DType::FP8) == 0); // no FP8 on Ampere
  CHECK(a100.peakFlopsPerS(DType::F32) == Approx(156e12)); // TF32
  GpuSpec v100 = *lookupGpu("V100-SXM2-32GB");
  CHECK(v100.peakFlopsPerS(DType::BF16) == 0);
  CHECK(v100.peakFlopsPerS(DType::F16) == Approx(125e12));
  CHECK(lookupGpu("V100-SXM3-32GB").isOk()); // validation-set name
  CHECK(lookupGpu("h100").isOk());
}

TEST_CASE("unknown GPU is an error naming the known ones", "[hardware]") {
  Result<GpuSpec> g = lookupGpu("TPUv5");
  REQUIRE(!g.isOk());
  CHECK(g.message().find("unknown GPU 'TPUv5'") != std::string::npos);
  CHECK(g.message().find("H100-SXM5-80GB") != std::string::npos);
}

TEST_CASE("cluster presets parse as NAME:NODES", "[hardware]") {
  struct {
    const char *spec;
    const char *gpu;
    int64_t gpus, perNode;
    double nicGBps;
  } cases[] = {
      {"dgx-a100-40gb:4", "A100-SXM4-40GB", 32, 8, 24},
      {"dgx-a100-80gb:64", "A100-SXM4-80GB", 512, 8, 24},
      {"dgx-h100:32", "H100-SXM5-80GB", 256, 8, 48},
      {"hgx-h200:2", "H200-SXM-141GB", 16, 8, 48},
      {"dgx-b200:1", "B200", 8, 8, 48},
      {"gb200-nvl72:2", "GB200", 144, 72, 48},
  };
  for (auto &c : cases) {
    Result<Cluster> r = parseClusterSpec(c.spec);
    INFO(c.spec);
    REQUIRE(r.isOk());
    REQUIRE(r->groups.size() == 1);
    CHECK(r->groups[0].gpu.name == c.gpu);
    CHECK(r->totalGpus() == c.gpus);
    CHECK(r->groups[0].gpusPerNode == c.perNode);
    CHECK(r->groups[0].nic.bandwidthBytesPerS == Approx(c.nicGBps * 1e9));
    CHECK(r->groups[0].nicsPerNode == c.perNode); // one NIC per GPU
    CHECK(validateCluster(*r).isOk());
  }
  // Defaults to one node.
  CHECK(parseClusterSpec("dgx-h100")->totalGpus() == 8);
  // DGX A100: 8 NICs x 24 GB/s = 192 GB/s, NVIDIA's measured multi-node
  // all-reduce busbw (nccl#812).
  CHECK(parseClusterSpec("dgx-a100-80gb:2")->groups[0].nodeNetworkBytesPerS() ==
        Approx(192e9));
}

TEST_CASE("bad cluster specs are errors", "[hardware]") {
  for (const char *bad : {"dgx-h100:0", "dgx-h100:-2", "dgx-h100:x",
                          "dgx-h100:", "dgx-h100:3.5", "nope:4"}) {
    INFO(bad);
    Result<Cluster> r = parseClusterSpec(bad);
    REQUIRE(!r.isOk());
    CHECK(r.message().find(bad) != std::string::npos);
  }
  CHECK(parseClusterSpec("nope:4").message().find("unknown cluster preset") !=
        std::string::npos);
}

static const char *kHetero = R"({
  "name": "mixed",
  "groups": [
    {"name": "h100s", "gpu": "H100-SXM5-80GB", "nodes": 2, "gpus_per_node": 8,
     "intra_node": {"bandwidth_gb_per_s": 360, "latency_us": 3.0},
     "network": {"nics_per_node": 8, "nic_bandwidth_gb_per_s": 46, "latency_us": 12}},
    {"preset": "dgx-a100-80gb", "nodes": 4},
    {"gpu": "L40S", "nodes": 1, "gpus_per_node": 4,
     "network": {"nics_per_node": 1, "nic_bandwidth_gb_per_s": 12},
     "gpu_overrides": {"memory_gb": 46, "gemm_efficiency": 0.6}}
  ],
  "inter_group": {"bandwidth_gb_per_s": 10, "latency_us": 30}
})";

TEST_CASE("cluster.json: heterogeneous groups, custom links", "[hardware]") {
  Result<Cluster> r = parseClusterJson(kHetero, "test.json");
  REQUIRE(r.isOk());
  const Cluster &c = *r;
  CHECK(c.name == "mixed");
  REQUIRE(c.groups.size() == 3);
  CHECK(!c.homogeneous());
  CHECK(c.totalGpus() == 16 + 32 + 4);
  CHECK(c.groups[0].intra.bandwidthBytesPerS == Approx(360e9));
  CHECK(c.groups[0].intra.latencySeconds == Approx(3e-6));
  CHECK(c.groups[0].nic.bandwidthBytesPerS == Approx(46e9));
  CHECK(c.groups[0].nic.latencySeconds == Approx(12e-6));
  // Unspecified intra_node: the GPU's catalog scale-up figures.
  CHECK(c.groups[0].intraAllToAllBytesPerS == Approx(320e9));
  CHECK(c.groups[1].gpu.name == "A100-SXM4-80GB");
  CHECK(c.groups[1].nic.bandwidthBytesPerS == Approx(24e9));
  CHECK(c.groups[2].gpu.hbmBytes == Approx(46e9));
  CHECK(c.groups[2].gpu.gemmEfficiency16 == Approx(0.6));
  CHECK(c.interGroup.bandwidthBytesPerS == Approx(10e9));
  CHECK(c.groupOfGpu(0) == 0);
  CHECK(c.groupOfGpu(15) == 0);
  CHECK(c.groupOfGpu(16) == 1);
  CHECK(c.groupOfGpu(48) == 2);
  CHECK(c.groupOfGpu(52) == -1);
  CHECK(c.firstGpuOfGroup(2) == 48);
}

TEST_CASE("cluster.json: every error path names the problem", "[hardware]") {
  struct {
    const char *json;
    const char *expect;
  } cases[] = {
      {"{ \"groups\": [ ", "malformed JSON"},
      {"[1,2]", "top level"},
      {"{}", "missing required key 'groups'"},
      {R"({"groups": {}})", "expected an array"},
      {R"({"groups": []})", "at least one group"},
      {R"({"groups": [{"gpu": "H100", "gpus_per_node": 8}]})",
       "missing required key 'nodes'"},
      {R"({"groups": [{"nodes": 1, "gpus_per_node": 8}]})",
       "missing required key 'gpu'"},
      {R"({"groups": [{"gpu": "Z80", "nodes": 1, "gpus_per_node": 8}]})",
       "unknown GPU 'Z80'"},
      {R"({"groups": [{"gpu": 100, "nodes": 1, "gpus_per_node": 8}]})",
       "expected a string"},
      {R"({"groups": [{"gpu": "H100", "nodes": "2", "gpus_per_node": 8}]})",
       "groups[0].nodes: expected an integer"},
      {R"({"groups": [{"gpu": "H100", "nodes": 0, "gpus_per_node": 8}]})",
       "groups[0].nodes: must be positive"},
      {R"({"groups": [{"gpu": "H100", "nodes": 1, "gpus_per_node": 8,
           "intra_node": {"bandwidth_gb_per_s": -5}}]})",
       "intra_node.bandwidth_gb_per_s: must be positive"},
      {R"({"groups": [{"gpu": "H100", "nodes": 1, "gpus_per_node": 8,
           "intra_node": {"bandwidth_gb_per_s": 0}}]})",
       "must be positive, got 0"},
      {R"({"groups": [{"gpu": "H100", "nodes": 2, "gpus_per_node": 8}]})",
       "missing required key 'network'"},
      {R"({"groups": [{"gpu": "H100", "nodes": 2, "gpus_per_node": 8,
           "network": {"nics_per_node": 8}}]})",
       "missing required key 'nic_bandwidth_gb_per_s'"},
      {R"({"groups": [{"gpu": "H100", "nodes": 2, "gpus_per_node": 8,
           "network": {"nics_per_node": 8, "nic_bandwidth_gb_per_s": "fast"}}]})",
       "expected a number"},
      {R"({"groups": [{"gpu": "H100", "nodes": 1, "gpus_per_node": 8,
           "nodez": 3}]})",
       "unknown key 'nodez'"},
      {R"({"groups": [{"preset": "dgx-z", "nodes": 1}]})",
       "unknown cluster preset 'dgx-z'"},
      {R"({"groups": [{"gpu": "H100", "nodes": 1, "gpus_per_node": 8,
           "gpu_overrides": {"gemm_efficiency": 1.5}}]})",
       "must be a fraction"},
      {R"({"groups": [{"gpu": "H100", "nodes": 1, "gpus_per_node": 8}],
           "inter_group": {"latency_us": 3}})",
       "missing required key 'bandwidth_gb_per_s'"},
  };
  for (auto &c : cases) {
    INFO(c.json);
    Result<Cluster> r = parseClusterJson(c.json, "bad.json");
    REQUIRE(!r.isOk());
    INFO(r.message());
    CHECK(r.message().find("bad.json") != std::string::npos);
    CHECK(r.message().find(c.expect) != std::string::npos);
  }
}

TEST_CASE("cluster.json: NaN and infinite bandwidths are rejected",
          "[hardware]") {
  // JSON has no NaN literal; a parser accepting one, or a huge exponent
  // overflowing to infinity, must still be rejected.
  Result<Cluster> r = parseClusterJson(
      R"({"groups": [{"gpu": "H100", "nodes": 1, "gpus_per_node": 8,
          "intra_node": {"bandwidth_gb_per_s": NaN}}]})",
      "nan.json");
  CHECK(!r.isOk());
  r = parseClusterJson(
      R"({"groups": [{"gpu": "H100", "nodes": 1, "gpus_per_node": 8,
          "intra_node": {"bandwidth_gb_per_s": 1e999}}]})",
      "inf.json");
  CHECK(!r.isOk());
  // A programmatically built cluster with NaN is caught by validation.
  Cluster c = *parseClusterSpec("dgx-h100:2");
  c.groups[0].nic.bandwidthBytesPerS = std::numeric_limits<double>::quiet_NaN();
  Status s = validateCluster(c);
  REQUIRE(!s.isOk());
  CHECK(s.message().find("nic_bandwidth_gb_per_s") != std::string::npos);
}

TEST_CASE("loadCluster reads files and specs", "[hardware]") {
  std::string path = "trident-hw-test-cluster.json";
  {
    std::ofstream f(path);
    f << kHetero;
  }
  Result<Cluster> r = loadCluster(path);
  REQUIRE(r.isOk());
  CHECK(r->groups.size() == 3);
  std::remove(path.c_str());
  CHECK(!loadClusterFile("/nonexistent/cluster.json").isOk());
  CHECK(loadCluster("dgx-h100:2")->totalGpus() == 16);
}

TEST_CASE("calibration parses and overrides the catalog", "[hardware]") {
  const char *cal = R"({
    "gpu": "H100-SXM5-80GB",
    "gemm": [{"m": 8192, "n": 8192, "k": 8192, "dtype": "bf16", "tflops": 600},
             {"m": 4096, "n": 4096, "k": 4096, "efficiency": 0.5}],
    "memory_bandwidth_gb_per_s": 2500,
    "kernel_launch_us": 2,
    "collectives": [
      {"op": "all_reduce", "scope": "intra_node", "bytes": 1048576,
       "bus_bandwidth_gb_per_s": 40},
      {"op": "all_reduce", "scope": "intra_node", "bytes": 1073741824,
       "bus_bandwidth_gb_per_s": 300}]
  })";
  Result<Calibration> c = parseCalibrationJson(cal, "cal.json");
  REQUIRE(c.isOk());
  CHECK(c->gemm.size() == 2);
  CHECK(c->collectives.size() == 2);
  Cluster cl = *parseClusterSpec("dgx-h100:1");
  REQUIRE(applyCalibration(cl, *c).isOk());
  const GpuSpec &g = cl.groups[0].gpu;
  CHECK(g.memBandwidthEfficiency == Approx(2500.0 / 3350.0));
  CHECK(g.kernelLaunchSeconds == Approx(2e-6));
  REQUIRE(g.gemmCalibration.size() == 2);
  CHECK(g.gemmCalibration[0].efficiency == Approx(600e12 / 989.4e12));
  CHECK(cl.groups[0].collectiveCalibration.size() == 2);

  // Mismatched GPU.
  Cluster a100 = *parseClusterSpec("dgx-a100-80gb:1");
  Status s = applyCalibration(a100, *c);
  CHECK(!s.isOk());
  CHECK(s.message().find("matches no group") != std::string::npos);

  // Errors.
  struct {
    const char *json, *expect;
  } bad[] = {
      {"{", "malformed JSON"},
      {R"({"gpu": "nope"})", "unknown GPU"},
      {R"({"gemm": [{"m": 1, "n": 2, "k": 3}]})", "exactly one of"},
      {R"({"gemm": [{"m": 1, "n": 2, "efficiency": 0.5}]})", "'k'"},
      {R"({"gemm": [{"m": 1, "n": 2, "k": 3, "efficiency": 1.5}]})",
       "at most 1"},
      {R"({"memory_bandwidth_gb_per_s": -1})", "positive"},
      {R"({"collectives": [{"op": "broadcastx", "scope": "intra_node",
           "bytes": 1, "bus_bandwidth_gb_per_s": 1}]})",
       "unknown collective"},
      {R"({"collectives": [{"op": "all_reduce", "scope": "rack",
           "bytes": 1, "bus_bandwidth_gb_per_s": 1}]})",
       "scope"},
      {R"({"speed": 3})", "unknown key"},
  };
  for (auto &b : bad) {
    INFO(b.json);
    Result<Calibration> r = parseCalibrationJson(b.json, "cal.json");
    REQUIRE(!r.isOk());
    INFO(r.message());
    CHECK(r.message().find(b.expect) != std::string::npos);
  }
}

TEST_CASE("cluster.json: the FlashAttention-2 efficiency follows or is given",
          "[hardware]") {
  auto one = [](const std::string &overrides) {
    return parseClusterJson(
        R"({"groups": [{"preset": "dgx-h100", "nodes": 1, "gpu_overrides": )" +
            overrides + "}]}",
        "fa2.json");
  };
  Result<Cluster> base = one("{}");
  REQUIRE(base.isOk());
  const GpuSpec &g = base->groups[0].gpu;
  REQUIRE(g.attentionEfficiencyFa2 < g.attentionEfficiency);
  double ratio = g.attentionEfficiencyFa2 / g.attentionEfficiency;
  // A new best-kernel efficiency keeps FA2's ratio to it ...
  Result<Cluster> scaled = one(R"({"attention_efficiency": 0.6})");
  REQUIRE(scaled.isOk());
  CHECK(scaled->groups[0].gpu.attentionEfficiencyFa2 == Approx(0.6 * ratio));
  // ... unless FA2's own is given.
  Result<Cluster> given =
      one(R"({"attention_efficiency": 0.6, "attention_efficiency_fa2": 0.5})");
  REQUIRE(given.isOk());
  CHECK(given->groups[0].gpu.attentionEfficiencyFa2 == Approx(0.5));
  Result<Cluster> bad = one(R"({"attention_efficiency_fa2": 1.5})");
  REQUIRE_FALSE(bad.isOk());
  CHECK(bad.message().find("attention_efficiency_fa2") != std::string::npos);
}

TEST_CASE("capacity is what the driver reports where it is known",
          "[hardware][memory]") {
  // nvidia-smi totals (Modal's survey, docs/cost-model.md "Memory").
  const double MiB = 1024.0 * 1024.0;
  struct Row {
    const char *name;
    double bytes;
  } rows[] = {{"A100-SXM4-40GB", 40960 * MiB},
              {"A100-SXM4-80GB", 81920 * MiB},
              {"H100-SXM5-80GB", 81559 * MiB},
              {"H200-SXM-141GB", 143771 * MiB},
              {"L40S", 46068 * MiB},
              // No measurement: the marketed figure in 1e9 bytes.
              {"B200", 180e9},
              {"MI300X", 192e9}};
  for (const Row &r : rows) {
    INFO(r.name);
    auto g = lookupGpu(r.name);
    REQUIRE(g.isOk());
    CHECK(g->hbmBytes == r.bytes);
  }
}
