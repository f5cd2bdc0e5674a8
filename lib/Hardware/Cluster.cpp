//===- Cluster.cpp - Presets, NAME:NODES specs and cluster.json -----------===//
//
// Network facts from ../shared/hardware/README.md ("HW §x"):
// - per-NIC achievable bandwidth: NVIDIA GTC24/25 nccl-tests slides [V]:
//   "200Gb RDMA (1 NIC)" 24 GB/s, "400Gb RDMA (1 NIC)" 48 GB/s (HW §3.4);
//   NCCL's NET_BW 12 GB/s for 100 Gbit (src/graph/topo.h) [V].
// - per-hop latencies: NCCL tuning.cc hwLatencies, Simple protocol, Ring:
//   NVLink 3.4 us, PCI 5.7 us, NET 14 us (HW §3.3) [V].
// - node designs: HW §4 (one NIC per GPU on DGX A100/H100/B200, NVL72).
//
//===----------------------------------------------------------------------===//

#include "trident/Hardware/Cluster.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace trident {

namespace {
constexpr double G = 1e9;
constexpr double us = 1e-6;

// NCCL hwLatencies[.][Ring][Simple] (tuning.cc @5067397c).
constexpr double kNvlinkHopSeconds = 3.4 * us;
constexpr double kPcieHopSeconds = 5.7 * us;
constexpr double kNetHopSeconds = 14.0 * us;
// Achievable one-NIC bandwidths (HW §3.4).
constexpr double kNic100GbBytesPerS = 12 * G; // NCCL NET_BW (100 Gbit)
constexpr double kNic200GbBytesPerS = 24 * G; // slides, HDR 200 Gb/s
constexpr double kNic400GbBytesPerS = 48 * G; // slides, NDR 400 Gb/s

constexpr std::array<std::string_view, 9> kPresetNames = {
    "dgx-a100-40gb", "dgx-a100-80gb", "dgx-h100",  "hgx-h200",
    "dgx-b200",      "gb200-nvl72",   "dgx2-v100", "mi300x-8x",
    "l40s-8x"};

NodeGroup fromGpu(const GpuSpec &gpu, int64_t gpusPerNode, int64_t nics,
                  double nicBw, double intraHop) {
  NodeGroup g;
  g.gpu = gpu;
  g.gpusPerNode = gpusPerNode;
  g.intra = {gpu.scaleUpBusBwBytesPerS, intraHop};
  g.intraAllToAllBytesPerS = gpu.scaleUpAllToAllBytesPerS;
  g.nicsPerNode = nics;
  g.nic = {nicBw, kNetHopSeconds};
  return g;
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char &c : r)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return r;
}
} // namespace

std::string_view collectiveOpName(CollectiveOp op) {
  switch (op) {
  case CollectiveOp::AllReduce:
    return "all_reduce";
  case CollectiveOp::AllGather:
    return "all_gather";
  case CollectiveOp::ReduceScatter:
    return "reduce_scatter";
  case CollectiveOp::AllToAll:
    return "all_to_all";
  case CollectiveOp::SendRecv:
    return "send_recv";
  }
  return "?";
}

int64_t Cluster::totalGpus() const {
  int64_t n = 0;
  for (const NodeGroup &g : groups)
    n += g.gpus();
  return n;
}

int64_t Cluster::groupOfGpu(int64_t gpu) const {
  if (gpu < 0)
    return -1;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (gpu < groups[i].gpus())
      return int64_t(i);
    gpu -= groups[i].gpus();
  }
  return -1;
}

int64_t Cluster::firstGpuOfGroup(int64_t g) const {
  int64_t n = 0;
  for (int64_t i = 0; i < g && i < int64_t(groups.size()); ++i)
    n += groups[size_t(i)].gpus();
  return n;
}

std::span<const std::string_view> clusterPresetNames() { return kPresetNames; }

Result<NodeGroup> presetNodeGroup(std::string_view preset, int64_t nodes) {
  std::string p = lower(preset);
  auto gpu = [](std::string_view n) { return *lookupGpu(n); };
  NodeGroup g;
  if (p == "dgx-a100-40gb" || p == "dgx-a100-80gb") {
    // DGX A100: 8 GPUs on 6 NVSwitch gen2; 8x ConnectX-6 HDR 200 Gb/s
    // (AddyLaddy, NVIDIA/nccl#812) [V]. HW §4. Selene is built of these.
    g = fromGpu(gpu(p == "dgx-a100-40gb" ? "A100-SXM4-40GB" : "A100-SXM4-80GB"),
                8, 8, kNic200GbBytesPerS, kNvlinkHopSeconds);
  } else if (p == "dgx-h100") {
    // DGX H100: 8 GPUs, 4 NVSwitch gen3; 8x ConnectX-7 400 Gb/s [S] HW §4.
    g = fromGpu(gpu("H100-SXM5-80GB"), 8, 8, kNic400GbBytesPerS,
                kNvlinkHopSeconds);
  } else if (p == "hgx-h200") {
    // HGX/DGX H200: 8 GPUs, 4 NVSwitch gen3; 8x CX-7 400G [S] HW §4.
    g = fromGpu(gpu("H200-SXM-141GB"), 8, 8, kNic400GbBytesPerS,
                kNvlinkHopSeconds);
  } else if (p == "dgx-b200") {
    // DGX B200: 8 GPUs, NVLink5 switches; 8x CX-7 400G [S] HW §4.
    g = fromGpu(gpu("B200"), 8, 8, kNic400GbBytesPerS, kNvlinkHopSeconds);
  } else if (p == "gb200-nvl72") {
    // GB200 NVL72: 72-GPU NVLink domain; 1x 400G CX-7 per GPU [S] HW §4.
    g = fromGpu(gpu("GB200"), 72, 72, kNic400GbBytesPerS, kNvlinkHopSeconds);
  } else if (p == "dgx2-v100") {
    // DGX-2(H): 16 V100 SXM3 on NVSwitch; 8x 100 Gb/s EDR IB [M].
    g = fromGpu(gpu("V100-SXM3-32GB"), 16, 8, kNic100GbBytesPerS,
                kNvlinkHopSeconds);
  } else if (p == "mi300x-8x") {
    // 8x MI300X xGMI hive; 8x 400 Gb/s NDR (Azure ND MI300X v5) [V] HW §4.
    g = fromGpu(gpu("MI300X"), 8, 8, kNic400GbBytesPerS, kNvlinkHopSeconds);
  } else if (p == "l40s-8x") {
    // 8x L40S on PCIe Gen4 (no NVLink); assumption: 2x 200 Gb/s NICs.
    g = fromGpu(gpu("L40S"), 8, 2, kNic200GbBytesPerS, kPcieHopSeconds);
  } else {
    std::string known;
    for (std::string_view n : kPresetNames)
      known += (known.empty() ? "" : ", ") + std::string(n);
    return Status::error("unknown cluster preset '" + std::string(preset) +
                         "' (known: " + known +
                         "; or give a cluster.json file)");
  }
  g.name = p;
  g.nodes = nodes;
  return g;
}

namespace {
void setDefaultInterGroup(Cluster &c) {
  double bw = 0, lat = 0;
  for (const NodeGroup &g : c.groups) {
    double b = g.nic.bandwidthBytesPerS;
    if (b > 0 && (bw == 0 || b < bw))
      bw = b;
    lat = std::max(lat, g.nic.latencySeconds);
  }
  c.interGroup = {bw, lat};
}
} // namespace

/// The most GPUs a cluster may have: 16x the largest machines planned today
/// (10^6 GPUs plan in seconds), and far from overflowing the int64 products
/// (GPUs x bytes, GPUs x micro-batches) the cost model forms.
constexpr int64_t kMaxClusterGpus = int64_t(1) << 24;

/// nodes x gpusPerNode, or an error when it exceeds kMaxClusterGpus.
static Status checkGroupSize(int64_t nodes, int64_t gpusPerNode, int64_t &gpus) {
  if (__builtin_mul_overflow(nodes, gpusPerNode, &gpus) ||
      gpus > kMaxClusterGpus)
    return Status::error(std::to_string(nodes) + " nodes of " +
                         std::to_string(gpusPerNode) +
                         " GPUs exceed the supported limit of " +
                         std::to_string(kMaxClusterGpus) + " GPUs");
  return Status::ok();
}

Result<Cluster> parseClusterSpec(std::string_view spec) {
  std::string_view name = spec;
  int64_t nodes = 1;
  if (size_t colon = spec.find(':'); colon != std::string_view::npos) {
    name = spec.substr(0, colon);
    std::string_view num = spec.substr(colon + 1);
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), nodes);
    if (num.empty() || ec != std::errc() || ptr != num.data() + num.size() ||
        nodes <= 0)
      return Status::error("cluster spec '" + std::string(spec) +
                           "': node count '" + std::string(num) +
                           "' is not a positive integer (expected NAME:NODES)");
  }
  Result<NodeGroup> g = presetNodeGroup(name, nodes);
  if (!g)
    return Status::error("cluster spec '" + std::string(spec) +
                         "': " + g.message());
  int64_t gpus = 0;
  if (Status s = checkGroupSize(g->nodes, g->gpusPerNode, gpus); !s)
    return Status::error("cluster spec '" + std::string(spec) +
                         "': " + s.message());
  Cluster c;
  c.name = std::string(spec);
  c.groups.push_back(std::move(*g));
  setDefaultInterGroup(c);
  return c;
}

//===----------------------------------------------------------------------===//
// cluster.json
//===----------------------------------------------------------------------===//

namespace {
using json = nlohmann::json;

/// Reads JSON fields with errors naming the source and the path.
class Reader {
public:
  Reader(std::string_view source) : source_(source) {}

  Status error(const std::string &path, const std::string &what) const {
    return Status::error(source_ + ": " + (path.empty() ? "" : path + ": ") +
                         what);
  }

  Status checkKeys(const json &obj, const std::string &path,
                   std::initializer_list<std::string_view> allowed) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool ok = false;
      for (std::string_view a : allowed)
        ok |= it.key() == a;
      if (!ok) {
        std::string list;
        for (std::string_view a : allowed)
          list += (list.empty() ? "" : ", ") + std::string(a);
        return error(path, "unknown key '" + it.key() + "' (allowed: " + list +
                               ")");
      }
    }
    return Status::ok();
  }

  /// A positive (or, with allowZero, non-negative) finite number.
  Status number(const json &obj, const std::string &path, const char *key,
                double &out, bool required, bool allowZero = false) const {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required)
        return error(path, std::string("missing required key '") + key + "'");
      return Status::ok();
    }
    std::string p = path + "." + key;
    if (!it->is_number())
      return error(p, std::string("expected a number, got ") + it->type_name());
    double v = it->get<double>();
    if (!std::isfinite(v))
      return error(p, "must be finite");
    if (v < 0 || (!allowZero && v == 0))
      return error(p, "must be " + std::string(allowZero ? "non-negative" : "positive") +
                          ", got " + it->dump());
    out = v;
    return Status::ok();
  }

  Status integer(const json &obj, const std::string &path, const char *key,
                 int64_t &out, bool required, bool allowZero = false) const {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required)
        return error(path, std::string("missing required key '") + key + "'");
      return Status::ok();
    }
    std::string p = path + "." + key;
    if (!it->is_number_integer())
      return error(p, std::string("expected an integer, got ") +
                          (it->is_number() ? it->dump() : it->type_name()));
    // 2^63 and above parse as unsigned; get<int64_t> would wrap them.
    if (it->is_number_unsigned() &&
        it->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      return error(p, "is " + it->dump() + ", too large for a 64-bit integer");
    int64_t v = it->get<int64_t>();
    if (v < 0 || (!allowZero && v == 0))
      return error(p, "must be " + std::string(allowZero ? "non-negative" : "positive") +
                          ", got " + std::to_string(v));
    out = v;
    return Status::ok();
  }

  Status string(const json &obj, const std::string &path, const char *key,
                std::string &out, bool required) const {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required)
        return error(path, std::string("missing required key '") + key + "'");
      return Status::ok();
    }
    if (!it->is_string())
      return error(path + "." + key,
                   std::string("expected a string, got ") + it->type_name());
    out = it->get<std::string>();
    return Status::ok();
  }

  Status object(const json &obj, const std::string &path, const char *key,
                const json *&out) const {
    out = nullptr;
    auto it = obj.find(key);
    if (it == obj.end())
      return Status::ok();
    if (!it->is_object())
      return error(path + "." + key,
                   std::string("expected an object, got ") + it->type_name());
    out = &*it;
    return Status::ok();
  }

private:
  std::string source_;
};

#define TRY(expr)                                                              \
  do {                                                                         \
    if (Status s_ = (expr); !s_)                                               \
      return s_;                                                               \
  } while (0)

Status parseGpuOverrides(const Reader &r, const json &o, const std::string &p,
                         GpuSpec &g) {
  TRY(r.checkKeys(o, p,
                  {"memory_gb", "memory_bandwidth_gb_per_s", "peak_fp32_tflops",
                   "peak_tf32_tflops", "peak_bf16_tflops", "peak_fp16_tflops",
                   "peak_fp8_tflops", "gemm_efficiency", "gemm_efficiency_fp8",
                   "gemm_efficiency_fp32", "attention_efficiency",
                   "attention_efficiency_fa2",
                   "memory_bandwidth_efficiency", "sm_count",
                   "kernel_launch_us", "name"}));
  double v;
  auto scaled = [&](const char *key, double &field, double unit,
                    bool allowZero) -> Status {
    v = -1;
    TRY(r.number(o, p, key, v, false, allowZero));
    if (v >= 0)
      field = v * unit;
    return Status::ok();
  };
  TRY(scaled("memory_gb", g.hbmBytes, 1e9, false));
  TRY(scaled("memory_bandwidth_gb_per_s", g.hbmBandwidthBytesPerS, 1e9, false));
  TRY(scaled("peak_fp32_tflops", g.peakFp32FlopsPerS, 1e12, true));
  TRY(scaled("peak_tf32_tflops", g.peakTf32FlopsPerS, 1e12, true));
  TRY(scaled("peak_bf16_tflops", g.peakBf16FlopsPerS, 1e12, true));
  TRY(scaled("peak_fp16_tflops", g.peakFp16FlopsPerS, 1e12, true));
  TRY(scaled("peak_fp8_tflops", g.peakFp8FlopsPerS, 1e12, true));
  TRY(scaled("gemm_efficiency", g.gemmEfficiency16, 1, false));
  TRY(scaled("gemm_efficiency_fp8", g.gemmEfficiency8, 1, false));
  TRY(scaled("gemm_efficiency_fp32", g.gemmEfficiency32, 1, false));
  {
    // FA2's efficiency keeps its ratio to the best kernel's unless given.
    double ratio = g.attentionEfficiency > 0
                       ? g.attentionEfficiencyFa2 / g.attentionEfficiency
                       : 1.0;
    TRY(scaled("attention_efficiency", g.attentionEfficiency, 1, false));
    g.attentionEfficiencyFa2 = g.attentionEfficiency * ratio;
    TRY(scaled("attention_efficiency_fa2", g.attentionEfficiencyFa2, 1, false));
  }
  TRY(scaled("memory_bandwidth_efficiency", g.memBandwidthEfficiency, 1, false));
  TRY(scaled("kernel_launch_us", g.kernelLaunchSeconds, 1e-6, true));
  TRY(r.integer(o, p, "sm_count", g.smCount, false));
  TRY(r.string(o, p, "name", g.name, false));
  return Status::ok();
}

Result<NodeGroup> parseGroup(const Reader &r, const json &o,
                             const std::string &p) {
  if (!o.is_object())
    return r.error(p, std::string("expected an object, got ") + o.type_name());
  TRY(r.checkKeys(o, p,
                  {"name", "preset", "gpu", "nodes", "gpus_per_node",
                   "intra_node", "network", "gpu_overrides"}));
  std::string preset, gpuName, name;
  TRY(r.string(o, p, "preset", preset, false));
  TRY(r.string(o, p, "gpu", gpuName, preset.empty()));
  TRY(r.string(o, p, "name", name, false));
  int64_t nodes = 0;
  TRY(r.integer(o, p, "nodes", nodes, true));

  NodeGroup g;
  bool fromPreset = !preset.empty();
  if (fromPreset) {
    Result<NodeGroup> pg = presetNodeGroup(preset, nodes);
    if (!pg)
      return r.error(p + ".preset", pg.message());
    g = std::move(*pg);
  }
  if (!gpuName.empty()) {
    Result<GpuSpec> gpu = lookupGpu(gpuName);
    if (!gpu)
      return r.error(p + ".gpu", gpu.message());
    if (fromPreset) {
      g.gpu = std::move(*gpu);
    } else {
      g = fromGpu(*gpu, 0, 0, 0, kNvlinkHopSeconds);
    }
  }
  g.nodes = nodes;
  g.name = !name.empty() ? name : (fromPreset ? preset : g.gpu.name);
  TRY(r.integer(o, p, "gpus_per_node", g.gpusPerNode, !fromPreset));

  const json *intra = nullptr, *net = nullptr, *ov = nullptr;
  TRY(r.object(o, p, "intra_node", intra));
  TRY(r.object(o, p, "network", net));
  TRY(r.object(o, p, "gpu_overrides", ov));
  if (ov)
    TRY(parseGpuOverrides(r, *ov, p + ".gpu_overrides", g.gpu));
  if (intra) {
    std::string ip = p + ".intra_node";
    TRY(r.checkKeys(*intra, ip,
                    {"bandwidth_gb_per_s", "latency_us", "all_to_all_gb_per_s"}));
    double bw = g.intra.bandwidthBytesPerS / 1e9, lat = g.intra.latencySeconds / us,
           a2a = g.intraAllToAllBytesPerS / 1e9;
    TRY(r.number(*intra, ip, "bandwidth_gb_per_s", bw, false));
    TRY(r.number(*intra, ip, "latency_us", lat, false, true));
    TRY(r.number(*intra, ip, "all_to_all_gb_per_s", a2a, false));
    g.intra = {bw * 1e9, lat * us};
    g.intraAllToAllBytesPerS = a2a * 1e9;
  }
  bool needNet = !fromPreset && g.nodes > 1;
  if (!net && needNet)
    return r.error(p, "missing required key 'network' (the group has " +
                          std::to_string(g.nodes) + " nodes)");
  if (net) {
    std::string np = p + ".network";
    TRY(r.checkKeys(*net, np,
                    {"nics_per_node", "nic_bandwidth_gb_per_s", "latency_us"}));
    double bw = g.nic.bandwidthBytesPerS / 1e9, lat = g.nic.latencySeconds / us;
    TRY(r.integer(*net, np, "nics_per_node", g.nicsPerNode, !fromPreset));
    TRY(r.number(*net, np, "nic_bandwidth_gb_per_s", bw, !fromPreset));
    TRY(r.number(*net, np, "latency_us", lat, false, true));
    g.nic = {bw * 1e9, lat * us};
  }
  return g;
}
} // namespace

Result<Cluster> parseClusterJson(std::string_view text, std::string_view source) {
  Reader r(source);
  json doc;
  // nlohmann reports some errors (number overflow) by exception even when
  // asked not to: parse with exceptions and turn them into a Status.
  try {
    doc = json::parse(text);
  } catch (const json::exception &e) {
    return r.error("", std::string("malformed JSON: ") + e.what());
  }
  if (!doc.is_object())
    return r.error("", std::string("expected a JSON object at the top level, got ") +
                           doc.type_name());
  TRY(r.checkKeys(doc, "", {"name", "groups", "inter_group", "description"}));
  Cluster c;
  TRY(r.string(doc, "", "name", c.name, false));
  if (c.name.empty())
    c.name = std::string(source);
  auto git = doc.find("groups");
  if (git == doc.end())
    return r.error("", "missing required key 'groups'");
  if (!git->is_array())
    return r.error("groups", std::string("expected an array, got ") +
                                 git->type_name());
  if (git->empty())
    return r.error("groups", "needs at least one group");
  for (size_t i = 0; i < git->size(); ++i) {
    Result<NodeGroup> g =
        parseGroup(r, (*git)[i], "groups[" + std::to_string(i) + "]");
    if (!g)
      return g.status();
    c.groups.push_back(std::move(*g));
  }
  setDefaultInterGroup(c);
  const json *ig = nullptr;
  TRY(r.object(doc, "", "inter_group", ig));
  if (ig) {
    TRY(r.checkKeys(*ig, "inter_group", {"bandwidth_gb_per_s", "latency_us"}));
    double bw = c.interGroup.bandwidthBytesPerS / 1e9,
           lat = c.interGroup.latencySeconds / us;
    TRY(r.number(*ig, "inter_group", "bandwidth_gb_per_s", bw, true));
    TRY(r.number(*ig, "inter_group", "latency_us", lat, false, true));
    c.interGroup = {bw * 1e9, lat * us};
  }
  if (Status s = validateCluster(c); !s)
    return Status::error(std::string(source) + ": " + s.message());
  return c;
}

Result<Cluster> loadClusterFile(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    return Status::error(path + ": cannot open cluster file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parseClusterJson(ss.str(), path);
}

Result<Cluster> loadCluster(std::string_view specOrPath) {
  std::string s(specOrPath);
  std::error_code ec;
  if ((s.size() > 5 && s.ends_with(".json")) || std::filesystem::is_regular_file(s, ec))
    return loadClusterFile(s);
  return parseClusterSpec(specOrPath);
}

Status validateCluster(const Cluster &c) {
  if (c.groups.empty())
    return Status::error("cluster '" + c.name + "' has no node groups");
  for (size_t i = 0; i < c.groups.size(); ++i) {
    const NodeGroup &g = c.groups[i];
    std::string where = "groups[" + std::to_string(i) + "] ('" + g.name + "')";
    auto bad = [&](const char *field, double v) {
      return Status::error(where + ": '" + field + "' must be a positive finite "
                                                   "number, got " +
                           std::to_string(v));
    };
    auto pos = [](double v) { return std::isfinite(v) && v > 0; };
    if (g.nodes <= 0)
      return bad("nodes", double(g.nodes));
    if (g.gpusPerNode <= 0)
      return bad("gpus_per_node", double(g.gpusPerNode));
    if (!pos(g.intra.bandwidthBytesPerS))
      return bad("intra_node.bandwidth_gb_per_s", g.intra.bandwidthBytesPerS / 1e9);
    if (!pos(g.intraAllToAllBytesPerS))
      return bad("intra_node.all_to_all_gb_per_s", g.intraAllToAllBytesPerS / 1e9);
    if (!std::isfinite(g.intra.latencySeconds) || g.intra.latencySeconds < 0)
      return bad("intra_node.latency_us", g.intra.latencySeconds / us);
    if (g.nodes > 1 || c.groups.size() > 1) {
      if (g.nicsPerNode <= 0)
        return bad("network.nics_per_node", double(g.nicsPerNode));
      if (!pos(g.nic.bandwidthBytesPerS))
        return bad("network.nic_bandwidth_gb_per_s", g.nic.bandwidthBytesPerS / 1e9);
    }
    if (!std::isfinite(g.nic.latencySeconds) || g.nic.latencySeconds < 0)
      return bad("network.latency_us", g.nic.latencySeconds / us);
    if (Status s = validateGpuSpec(g.gpu, where); !s)
      return s;
  }
  int64_t total = 0;
  for (size_t i = 0; i < c.groups.size(); ++i) {
    int64_t gpus = 0;
    Status s = checkGroupSize(c.groups[i].nodes, c.groups[i].gpusPerNode, gpus);
    if (s && (__builtin_add_overflow(total, gpus, &total) ||
              total > kMaxClusterGpus))
      s = Status::error("the groups together exceed the supported limit of " +
                        std::to_string(kMaxClusterGpus) + " GPUs");
    if (!s)
      return Status::error("groups[" + std::to_string(i) + "] ('" +
                           c.groups[i].name + "'): " + s.message());
  }
  if (c.groups.size() > 1 &&
      (!std::isfinite(c.interGroup.bandwidthBytesPerS) ||
       c.interGroup.bandwidthBytesPerS <= 0))
    return Status::error("inter_group.bandwidth_gb_per_s must be a positive "
                         "finite number");
  return Status::ok();
}

} // namespace trident
