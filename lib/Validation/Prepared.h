//===- Prepared.h - Cases ready to evaluate many times (internal) ---------===//
//
// Importing and analysing a case's model is the slow part of validation;
// the refits of CrossValidate.cpp evaluate each case at many values of the
// fitted constants, so the profile, the cluster and the options are built
// once here.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_LIB_VALIDATION_PREPARED_H
#define TRIDENT_LIB_VALIDATION_PREPARED_H

#include "trident/Hardware/Cluster.h"
#include "trident/Validation/Validation.h"

#include <map>
#include <memory>

namespace trident::validation::detail {

struct PreparedCase {
  const Case *c = nullptr;
  /// Null when the case is skipped or failed before evaluation (`reason`).
  const LayerProfile *profile = nullptr;
  CaseResult::Outcome outcome = CaseResult::Outcome::Skipped;
  std::string reason;
  Cluster cluster;
  EvalOptions options;
  Runtime runtime = Runtime::MegatronCore;
  /// The generation of the case's GPUs, when its constants are fitted.
  std::optional<FitGroup> group;
};

struct PreparedCases {
  /// Keyed by (model JSON, sequence length): cases share profiles.
  std::map<std::pair<std::string, int64_t>, std::unique_ptr<LayerProfile>>
      profiles;
  std::vector<PreparedCase> cases;
};

/// Imports and analyses every evaluable case once (MLIR-side).
PreparedCases
prepareCases(const std::vector<Case> &cases, const EvalOptions &options,
             std::optional<Runtime> forceRuntime,
             std::optional<MoeDispatcher> forceDispatcher = std::nullopt);

/// Evaluates one prepared case with the fitted constants `fit`.
CaseResult evaluateCase(const PreparedCase &p, const FitValues &fit);

} // namespace trident::validation::detail

#endif // TRIDENT_LIB_VALIDATION_PREPARED_H
