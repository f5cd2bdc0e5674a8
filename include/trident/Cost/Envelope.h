//===- Envelope.h - How far to trust a prediction ---------------*- C++ -*-===//
//
// Two things a prediction carries besides its value (issue: fidelity out of
// sample):
//
// - An 80 % interval for the step time, from the out-of-sample residuals
//   of `trident validate --cross-validate` (each published run predicted
//   by constants fitted without its source) in the nearest regime: the
//   most specific of GPU generation, precision, dense or mixture of
//   experts, pipeline, tensor and sharded-data parallelism (in that order
//   of importance) that holds at least kMinRegimeCases runs.
// - Warnings when a plan lies outside what was validated: an MFU above the
//   highest measured for its GPU and precision, an axis at a scale no
//   validated run reached, a GPU type no validated run used.
//
// Both read lib/Cost/ValidatedEnvelope.inc, which `trident validate
// --cross-validate --write-envelope FILE` generates from shared/validation
// (a test checks the committed file is current). MLIR-free.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_COST_ENVELOPE_H
#define TRIDENT_COST_ENVELOPE_H

#include "trident/Cost/Evaluate.h"

#include <string>
#include <vector>

namespace trident {

/// Runs a regime needs before its residuals make an interval.
inline constexpr int64_t kMinRegimeCases = 8;
/// The interval's coverage: from the 10th to the 90th percentile.
inline constexpr double kIntervalLowQuantile = 0.10;
inline constexpr double kIntervalHighQuantile = 0.90;

/// The attributes that pick a regime, most important first.
struct RegimeKey {
  std::string gpu; ///< fit generation ("ampere", "hopper") or GPU name
  bool fp8 = false;
  bool moe = false;
  bool pipeline = false; ///< pp > 1
  bool tensor = false;   ///< tp > 1
  bool sharded = false;  ///< ZeRO-3 / FSDP full shard
  static constexpr int kLevels = 6;
  /// "hopper/bf16/dense/pp/-/-", with "*" for the attributes past `level`.
  std::string name(int level = kLevels) const;
};

/// True when the model has routed experts.
bool hasExperts(const LayerProfile &profile);

RegimeKey regimeOf(const LayerProfile &profile, const Cluster &cluster,
                   const ParallelConfig &cfg);

/// A step time's 80 % interval: measured/predicted time ratios of the
/// regime's runs at the 10th and 90th percentile, times the prediction.
struct TimeRange {
  double lowSeconds = 0, highSeconds = 0;
  double lowFactor = 1, highFactor = 1;
  std::string regime; ///< the regime whose residuals it uses
  int64_t cases = 0;  ///< how many runs that regime holds
};

TimeRange timeRange(const RegimeKey &key, double iterationSeconds);

/// The smallest high factor of any regime: robust ranking divides by it so
/// that the search's lower bounds stay bounds.
double minHighFactor();

/// The plan-level warnings (may be empty), each one sentence.
std::vector<std::string> envelopeWarnings(const LayerProfile &profile,
                                          const Cluster &cluster,
                                          const ParallelConfig &cfg,
                                          const Evaluation &eval);

/// The generated data (ValidatedEnvelope.inc), for tests and the writer.
struct RegimeResiduals {
  const char *regime;
  int64_t cases;
  double lowFactor, highFactor;
};
struct MfuCeiling {
  const char *gpu;       ///< GPU name as in the catalog
  const char *precision; ///< "fp8" or "16-bit"
  double mfu;            ///< highest measured model FLOPs utilisation
  const char *run;       ///< the run that reached it
};
struct AxisCeiling {
  const char *axis; ///< "gpus", "tp", "pp", "dp", "cp", "ep", "vpp", "seq_len"
  int64_t max;
};
/// How many validated runs used a setting that is not a size: the
/// tensor-parallel overlap, each kind of context-parallel K/V exchange.
struct SettingRuns {
  const char *setting; ///< "tp_comm_overlap", "cp_comm_type p2p", ...
  int64_t runs;
};
/// The SettingRuns names a configuration uses, its settings stated
/// (stateSettings): what the envelope warns about and what the validated
/// runs are counted by.
std::vector<std::string> settingsUsed(const ParallelConfig &cfg);

} // namespace trident

#endif // TRIDENT_COST_ENVELOPE_H
