//===- Validation.h - Predicting published training runs -------*- C++ -*-===//
//
// The cost model's ground truth: the normalised cases of
// shared/validation/cases.json. Each case's fields map one-to-one onto
// `trident evaluate`'s flags; its `model` is a Hugging Face config.json.
// This library parses the cases, evaluates each one through the real
// pipeline (config -> tgraph -> LayerProfile -> Evaluator), and reports the
// error per case and per source.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_VALIDATION_VALIDATION_H
#define TRIDENT_VALIDATION_VALIDATION_H

#include "trident/Cost/Evaluate.h"
#include "trident/Support/Status.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trident::validation {

/// One normalised published run.
struct Case {
  std::string id;
  std::string sourceGroup;
  std::string modelJson; ///< the `model` object, as JSON text
  std::string cluster;   ///< "PRESET:NODES"
  int64_t gpus = 0;
  int64_t seqLen = 0;
  ParallelConfig config; ///< parallel sizes, batch, recompute, precision
  double measuredTokensPerSecPerGpu = 0;
  /// The software the run used: the case's optional `runtime` field, else
  /// runtimeForSource(sourceGroup).
  Runtime runtime = Runtime::MegatronCore;
  bool evaluable = false;
  std::string skipReason;
};

/// The runtime of a source's runs, from what the source says it used
/// (shared/validation/README.md; docs/validation.md lists the table).
/// Unknown sources: Megatron-Core.
Runtime runtimeForSource(std::string_view sourceGroup);

/// Parses cases.json. Errors name the file and the case.
Result<std::vector<Case>> parseCases(std::string_view text,
                                     const std::string &source);
Result<std::vector<Case>> loadCases(const std::string &path);

/// What happened to one case.
struct CaseResult {
  const Case *c = nullptr;
  enum class Outcome { Evaluated, Skipped, Failed } outcome = Outcome::Skipped;
  std::string reason; ///< skip reason or failure message
  Runtime runtime = Runtime::MegatronCore; ///< the one it ran under
  double predictedTokensPerSecPerGpu = 0;
  double error = 0; ///< (predicted - measured) / measured
  double mfu = 0;
  double peakMemoryBytes = 0;
  double capacityBytes = 0;
  bool fits = true;
};

struct ErrorStats {
  int64_t count = 0;
  double median = 0, p90 = 0, worst = 0; ///< of |error|
  double meanSigned = 0;
};

/// Order statistics of |error| over `errors`.
ErrorStats errorStats(const std::vector<double> &errors);

struct Report {
  std::vector<CaseResult> results;
  std::map<std::string, ErrorStats> bySource;
  ErrorStats overall;
  int64_t evaluable = 0;  ///< cases marked evaluable in the file
  int64_t evaluated = 0;  ///< of those, evaluated here
};

/// Fills bySource / overall / counts from `results`.
void summarize(Report &report);

/// The table a terminal shows, and the markdown of docs/validation.md.
std::string renderText(const Report &report);
std::string renderMarkdown(const Report &report, const std::string &command);

/// Evaluates every case (MLIR-side; defined in ValidationRunner.cpp).
/// Each case runs under its own runtime (applyRuntime on a copy of
/// `options`) unless `forceRuntime` names one for all.
Report runValidation(const std::vector<Case> &cases,
                     const EvalOptions &options = {},
                     std::optional<Runtime> forceRuntime = std::nullopt);

} // namespace trident::validation

#endif // TRIDENT_VALIDATION_VALIDATION_H
