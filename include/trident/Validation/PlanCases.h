//===- PlanCases.h - The planner against every published configuration -*- C++ -*-===//
//
// `trident plan --validate-cases cases.json`: for each published run, the
// cost model's step time of its published configuration beside the
// planner's best plan for the same model, cluster, batch and precision,
// and the gain. A planner that finds a slower plan than a published one
// that fits has a hole in its search.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_VALIDATION_PLANCASES_H
#define TRIDENT_VALIDATION_PLANCASES_H

#include "trident/Search/Search.h"
#include "trident/Validation/Validation.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace trident::validation {

struct PlanCaseRow {
  const Case *c = nullptr;
  enum class Kind { Error, Skipped, NothingFits, Planned } kind = Kind::Error;
  std::string message; ///< Error and Skipped
  double publishedSeconds = 0;
  bool publishedFits = true;
  double plannedSeconds = 0;
  ParallelConfig plan; ///< Planned
  /// Planned: at least as fast as the published configuration (or that
  /// one does not fit).
  bool ok = true;
};

struct PlanCasesReport {
  std::vector<PlanCaseRow> rows;
  int64_t planned = 0, better = 0, worse = 0, publishedNoFit = 0,
          skipped = 0, failed = 0;
  double sumGain = 0;
  /// Exit status of the command: 1 when a plan lost or a case failed.
  int exitCode() const { return worse > 0 || failed > 0 ? 1 : 0; }
};

/// Plans every evaluable case whose id contains `filter` ("" for all),
/// each under its source's runtime unless `forceRuntime` (then `evalOpt`'s
/// runtime for all), with `base`'s search options and the case's batch and
/// precision.
PlanCasesReport planCases(mlir::MLIRContext &context,
                          const std::vector<Case> &cases,
                          std::string_view filter,
                          const search::SearchOptions &base,
                          const EvalOptions &evalOpt, bool forceRuntime);

/// The report as `trident plan --validate-cases` prints it.
std::string renderPlanCases(const PlanCasesReport &report);

} // namespace trident::validation

#endif // TRIDENT_VALIDATION_PLANCASES_H
