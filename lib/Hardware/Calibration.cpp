//===- Calibration.cpp - Measured profiles overriding catalog defaults ----===//

#include "trident/Hardware/Calibration.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

namespace trident {

namespace {
using json = nlohmann::json;

std::string lower(std::string_view s) {
  std::string r(s);
  for (char &c : r)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

Status err(std::string_view source, const std::string &path,
           const std::string &what) {
  return Status::error(std::string(source) + ": " + path + ": " + what);
}

/// A positive finite number at obj[key], times `scale` (a unit); the
/// scaled value must be positive and finite too (1e300 GB/s is not).
Status num(std::string_view src, const json &obj, const std::string &path,
           const char *key, double &out, bool required, double scale = 1) {
  auto it = obj.find(key);
  if (it == obj.end())
    return required ? err(src, path, std::string("missing required key '") +
                                         key + "'")
                    : Status::ok();
  if (!it->is_number())
    return err(src, path + "." + key,
               std::string("expected a number, got ") + it->type_name());
  double v = it->get<double>();
  if (!std::isfinite(v) || v <= 0 || !std::isfinite(v * scale) ||
      v * scale <= 0)
    return err(src, path + "." + key,
               "must be a positive finite number, got " + it->dump());
  out = v * scale;
  return Status::ok();
}

/// A GEMM dimension: an integer in [1, 2^31-1] (the model readers' limit).
Status dim(std::string_view src, const json &obj, const std::string &path,
           const char *key, int64_t &out) {
  auto it = obj.find(key);
  if (it == obj.end())
    return err(src, path, std::string("missing required key '") + key + "'");
  constexpr int64_t kMaxDim = 2147483647;
  if (!it->is_number_integer() ||
      (it->is_number_unsigned() && it->get<uint64_t>() > uint64_t(kMaxDim)) ||
      it->get<int64_t>() < 1 || it->get<int64_t>() > kMaxDim)
    return err(src, path + "." + key,
               "must be an integer in [1, 2147483647], got " + it->dump());
  out = it->get<int64_t>();
  return Status::ok();
}
} // namespace

Result<Calibration> parseCalibrationJson(std::string_view text,
                                         std::string_view src) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception &e) {
    return Status::error(std::string(src) + ": malformed JSON: " + e.what());
  }
  if (!doc.is_object())
    return Status::error(std::string(src) + ": expected a JSON object");
  Calibration cal;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string &k = it.key();
    if (k != "gpu" && k != "gemm" && k != "memory_bandwidth_gb_per_s" &&
        k != "kernel_launch_us" && k != "collectives" && k != "description")
      return err(src, k, "unknown key (allowed: gpu, gemm, "
                         "memory_bandwidth_gb_per_s, kernel_launch_us, "
                         "collectives, description)");
  }
  if (auto it = doc.find("gpu"); it != doc.end()) {
    if (!it->is_string())
      return err(src, "gpu", "expected a string");
    Result<GpuSpec> g = lookupGpu(it->get<std::string>());
    if (!g)
      return err(src, "gpu", g.message());
    cal.gpu = g->name;
  }
  double v = 0;
  if (doc.contains("memory_bandwidth_gb_per_s")) {
    if (Status s = num(src, doc, "", "memory_bandwidth_gb_per_s", v, true,
                       1e9);
        !s)
      return s;
    cal.memBandwidthBytesPerS = v;
  }
  if (doc.contains("kernel_launch_us")) {
    if (Status s = num(src, doc, "", "kernel_launch_us", v, true, 1e-6); !s)
      return s;
    cal.kernelLaunchSeconds = v;
  }
  if (auto it = doc.find("gemm"); it != doc.end()) {
    if (!it->is_array())
      return err(src, "gemm", "expected an array");
    for (size_t i = 0; i < it->size(); ++i) {
      const json &e = (*it)[i];
      std::string p = "gemm[" + std::to_string(i) + "]";
      if (!e.is_object())
        return err(src, p, "expected an object");
      GemmCalibrationPoint pt;
      // Integers: a double such as 1e300 or 0.5 used to be cast to int64
      // (undefined for 1e300; a 0-row GEMM for 0.5).
      for (auto [key, dst] : {std::pair{"m", &pt.m}, {"n", &pt.n}, {"k", &pt.k}})
        if (Status s = dim(src, e, p, key, *dst); !s)
          return s;
      std::string dt = "bf16";
      if (auto d = e.find("dtype"); d != e.end()) {
        if (!d->is_string())
          return err(src, p + ".dtype", "expected a string");
        dt = d->get<std::string>();
      }
      std::optional<DType> t = parseDType(dt);
      if (!t)
        return err(src, p + ".dtype", "unknown dtype '" + dt + "'");
      pt.dtype = *t;
      double eff = 0, tflops = 0;
      if (Status s = num(src, e, p, "efficiency", eff, false); !s)
        return s;
      if (Status s = num(src, e, p, "tflops", tflops, false, 1e12); !s)
        return s;
      if ((eff > 0) == (tflops > 0))
        return err(src, p, "give exactly one of 'efficiency' or 'tflops'");
      if (eff > 1)
        return err(src, p + ".efficiency", "must be at most 1");
      pt.efficiency = eff;
      if (tflops > 0) {
        // Converted against the peak once the GPU is known (applyCalibration);
        // keep it negative to mark "TFLOP/s, not a fraction".
        pt.efficiency = -tflops;
      }
      cal.gemm.push_back(pt);
    }
  }
  if (auto it = doc.find("collectives"); it != doc.end()) {
    if (!it->is_array())
      return err(src, "collectives", "expected an array");
    for (size_t i = 0; i < it->size(); ++i) {
      const json &e = (*it)[i];
      std::string p = "collectives[" + std::to_string(i) + "]";
      if (!e.is_object())
        return err(src, p, "expected an object");
      CollectiveCalibrationPoint pt;
      auto op = e.find("op");
      if (op == e.end() || !op->is_string())
        return err(src, p + ".op", "missing or not a string (all_reduce, "
                                   "all_gather, reduce_scatter, all_to_all, "
                                   "send_recv)");
      std::string ops = op->get<std::string>();
      bool found = false;
      for (CollectiveOp o :
           {CollectiveOp::AllReduce, CollectiveOp::AllGather,
            CollectiveOp::ReduceScatter, CollectiveOp::AllToAll,
            CollectiveOp::SendRecv})
        if (collectiveOpName(o) == ops)
          pt.op = o, found = true;
      if (!found)
        return err(src, p + ".op", "unknown collective '" + ops + "'");
      auto sc = e.find("scope");
      if (sc == e.end() || !sc->is_string() ||
          (*sc != "intra_node" && *sc != "inter_node"))
        return err(src, p + ".scope", "expected \"intra_node\" or \"inter_node\"");
      pt.scope = *sc == "intra_node" ? CommScope::IntraNode : CommScope::InterNode;
      if (Status s = num(src, e, p, "bytes", pt.bytes, true); !s)
        return s;
      if (Status s = num(src, e, p, "bus_bandwidth_gb_per_s",
                         pt.busBwBytesPerS, true, 1e9);
          !s)
        return s;
      cal.collectives.push_back(pt);
    }
  }
  return cal;
}

Result<Calibration> loadCalibrationFile(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    return Status::error(path + ": cannot open calibration file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parseCalibrationJson(ss.str(), path);
}

Status applyCalibration(Cluster &cluster, const Calibration &cal) {
  bool any = false;
  for (NodeGroup &g : cluster.groups) {
    if (!cal.gpu.empty() && lower(g.gpu.name) != lower(cal.gpu))
      continue;
    any = true;
    GpuSpec &gpu = g.gpu;
    if (cal.memBandwidthBytesPerS) {
      double f = *cal.memBandwidthBytesPerS / gpu.hbmBandwidthBytesPerS;
      if (f > 1)
        return Status::error("calibration: measured memory bandwidth " +
                             std::to_string(*cal.memBandwidthBytesPerS / 1e9) +
                             " GB/s exceeds the peak of " + gpu.name);
      gpu.memBandwidthEfficiency = f;
    }
    if (cal.kernelLaunchSeconds)
      gpu.kernelLaunchSeconds = *cal.kernelLaunchSeconds;
    for (GemmCalibrationPoint p : cal.gemm) {
      if (p.efficiency < 0) {
        double peak = gpu.peakFlopsPerS(p.dtype);
        if (peak <= 0)
          return Status::error("calibration: " + gpu.name + " has no " +
                               std::string(dtypeName(p.dtype)) + " peak");
        p.efficiency = -p.efficiency / peak;
        if (p.efficiency > 1)
          return Status::error("calibration: a measured GEMM exceeds the " +
                               std::string(dtypeName(p.dtype)) + " peak of " +
                               gpu.name);
      }
      gpu.gemmCalibration.push_back(p);
    }
    for (const CollectiveCalibrationPoint &p : cal.collectives)
      g.collectiveCalibration.push_back(p);
  }
  if (!any)
    return Status::error("calibration for GPU '" + cal.gpu +
                         "' matches no group of cluster '" + cluster.name + "'");
  return Status::ok();
}

} // namespace trident
