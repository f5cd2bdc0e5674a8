//===- Envelope.cpp - Intervals and validated-envelope warnings -----------===//

#include "trident/Cost/Envelope.h"
#include "trident/Hardware/Fitted.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

namespace trident {

namespace {
#include "ValidatedEnvelope.inc"
} // namespace

std::string RegimeKey::name(int level) const {
  const std::string parts[kLevels] = {gpu,
                                      fp8 ? "fp8" : "16-bit",
                                      moe ? "moe" : "dense",
                                      pipeline ? "pp" : "no-pp",
                                      tensor ? "tp" : "no-tp",
                                      sharded ? "zero3" : "no-zero3"};
  std::string out;
  for (int i = 0; i < kLevels; ++i)
    out += (i ? "/" : "") + (i < level ? parts[i] : std::string("*"));
  return out;
}

bool hasExperts(const LayerProfile &profile) {
  for (const LayerGroup &g : profile.groups)
    if (g.cost.paramsExpert > 0 || g.cost.numExperts > 0)
      return true;
  return false;
}

RegimeKey regimeOf(const LayerProfile &profile, const Cluster &cluster,
                   const ParallelConfig &cfg) {
  RegimeKey k;
  const GpuSpec &gpu = cluster.groups.front().gpu;
  auto group = fitGroupOf(gpu);
  k.gpu = group ? std::string(fitGroupName(*group)) : gpu.name;
  for (const NodeGroup &g : cluster.groups)
    if (fitGroupOf(g.gpu) != group)
      k.gpu = "mixed";
  k.fp8 = cfg.precision == DType::FP8;
  k.moe = hasExperts(profile);
  k.pipeline = cfg.pp > 1;
  k.tensor = cfg.tp > 1;
  k.sharded = cfg.zeroStage >= 3;
  return k;
}

TimeRange timeRange(const RegimeKey &key, double iterationSeconds) {
  TimeRange r;
  for (int level = RegimeKey::kLevels; level >= 0; --level) {
    std::string name = key.name(level);
    for (const RegimeResiduals &row : kRegimeResiduals)
      if (name == row.regime) {
        r.regime = name;
        r.cases = row.cases;
        r.lowFactor = row.lowFactor;
        r.highFactor = row.highFactor;
        r.lowSeconds = iterationSeconds * row.lowFactor;
        r.highSeconds = iterationSeconds * row.highFactor;
        return r;
      }
  }
  r.lowSeconds = r.highSeconds = iterationSeconds; // no data at all
  return r;
}

double minHighFactor() {
  double m = 1;
  for (const RegimeResiduals &row : kRegimeResiduals)
    m = std::min(m, row.highFactor);
  return m;
}

std::vector<std::string> envelopeWarnings(const LayerProfile &profile,
                                          const Cluster &cluster,
                                          const ParallelConfig &cfg,
                                          const Evaluation &eval) {
  std::vector<std::string> out;
  const char *precision = cfg.precision == DType::FP8 ? "fp8" : "16-bit";
  for (const NodeGroup &g : cluster.groups) {
    const MfuCeiling *ceiling = nullptr;
    bool validatedGpu = false;
    for (const MfuCeiling &c : kMfuCeilings) {
      if (g.gpu.name != c.gpu)
        continue;
      validatedGpu = true;
      if (std::strcmp(c.precision, precision) == 0)
        ceiling = &c;
    }
    if (!validatedGpu)
      out.push_back(fmt::format(
          "no validated run used {} GPUs: the prediction rests on the "
          "catalog's figures for it alone",
          g.gpu.name));
    else if (!ceiling)
      out.push_back(fmt::format("no validated run trained in {} on {}",
                                precision, g.gpu.name));
    else if (eval.mfu > ceiling->mfu)
      out.push_back(fmt::format(
          "predicted MFU {:.1f}% is above the highest measured on {} in {} "
          "({:.1f}%, {}): the plan is an extrapolation",
          100 * eval.mfu, g.gpu.name, precision, 100 * ceiling->mfu,
          ceiling->run));
  }
  auto axis = [&](const char *name, int64_t value) {
    for (const AxisCeiling &a : kAxisCeilings)
      if (std::strcmp(a.axis, name) == 0 && value > a.max)
        out.push_back(fmt::format("{} {} is beyond every validated run "
                                  "(largest: {})",
                                  name, value, a.max));
  };
  axis("gpus", cfg.dp * cfg.tp * cfg.pp * cfg.cp);
  axis("tp", cfg.tp);
  axis("pp", cfg.pp);
  axis("dp", cfg.dp);
  axis("cp", cfg.cp);
  axis("ep", cfg.ep);
  axis("vpp", cfg.vpp);
  axis("seq_len", profile.seqLen);
  for (const std::string &name : settingsUsed(cfg))
    for (const SettingRuns &s : kSettingRuns)
      if (name == s.setting && s.runs == 0)
        out.push_back(fmt::format("no validated run used {}: its price is "
                                  "not checked against a measurement",
                                  name));
  return out;
}

std::vector<std::string> settingsUsed(const ParallelConfig &cfg) {
  std::vector<std::string> names;
  if (cfg.tpCommOverlap)
    names.push_back("tp_comm_overlap");
  if (cfg.cp > 1)
    names.push_back("cp_comm_type " + axisValueText(axisSpec(Axis::CpCommType),
                                                    int64_t(cfg.cpCommType)));
  if (cfg.precision == DType::FP8)
    names.push_back("fp8_recipe " + axisValueText(axisSpec(Axis::Fp8Recipe),
                                                  int64_t(cfg.fp8Recipe)));
  return names;
}

} // namespace trident
