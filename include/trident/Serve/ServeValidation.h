//===- ServeValidation.h - Serving predictions vs published runs -*- C++
//-*-===//
//
// Reads validation/serving.json (published serving measurements, never
// fitted on), predicts each case with serve::evaluateServe for its exact
// layout and load, and reports the error per case and per source:
// `trident validate --serve`, docs/validation-serving.md.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SERVE_SERVEVALIDATION_H
#define TRIDENT_SERVE_SERVEVALIDATION_H

#include "trident/Serve/Serve.h"

#include <functional>
#include <optional>

namespace trident::serve {

/// One published measurement.
struct ServeCase {
  std::string id, source, engineName, model, gpu;
  std::string tridentModel;   ///< zoo name or config path; empty: none
  std::string tridentCluster; ///< cluster preset of its GPU
  int64_t gpus = 0;
  ReplicaShape shape;
  ServeOptions options; ///< lengths, precision, engine
  FixedLoad load;
  bool moe = false;
  std::string assumption; ///< what the case leaves unsaid and we assume
  std::string skip;       ///< why it is not predicted; empty: predicted
  // Measured (NaN: not given).
  double tokensPerSecondPerGpu, ttftSeconds, tpotSeconds;
  /// tokensPerSecondPerGpu counts prompt tokens (a prefill pool alone).
  bool inputThroughput = false;
};

/// The cases of `path` and the sources' titles; errors name the case and
/// the field.
struct ServeCaseFile {
  std::vector<ServeCase> cases;
  std::vector<std::pair<std::string, std::string>> sources; ///< id, title
};
Result<ServeCaseFile> loadServeCases(const std::string &path);

struct ServeCaseResult {
  const ServeCase *c = nullptr;
  std::string error; ///< the prediction failed (say why)
  ServePlan predicted;
  /// (predicted - measured) / measured; NaN where not measured.
  double throughputError, ttftError, tpotError;
};

struct ServeValidationReport {
  std::vector<ServeCaseResult> results;
  std::vector<std::pair<std::string, std::string>> sources;
};

/// Builds a LayerProfile of `model` at `seqLen` (the tool's frontend).
using ProfileBuilder = std::function<Result<LayerProfile>(
    const std::string &model, int64_t seqLen)>;

ServeValidationReport validateServeCases(const ServeCaseFile &file,
                                         const ProfileBuilder &profileOf);

std::string renderServeValidationText(const ServeValidationReport &r);
std::string renderServeValidationMarkdown(const ServeValidationReport &r,
                                          const std::string &command);

} // namespace trident::serve

#endif // TRIDENT_SERVE_SERVEVALIDATION_H
