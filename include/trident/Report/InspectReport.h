//===- InspectReport.h - Rendering `trident inspect` ------------*- C++ -*-===//

#ifndef TRIDENT_REPORT_INSPECTREPORT_H
#define TRIDENT_REPORT_INSPECTREPORT_H

#include "trident/Analysis/ModelAnalysis.h"

#include <string>

namespace trident::report {

/// A readable table: parameters by kind, layers, FLOPs per layer and total.
std::string renderInspectText(const analysis::ModelSummary &summary);

/// One JSON object with at least `params` (exact integer) and
/// `flops_per_token` = {forward, train}.
/// `shape` is the model's LayerProfile (hidden size, vocabulary, heads).
std::string renderInspectJson(const analysis::ModelSummary &summary,
                              const LayerProfile &shape);

/// "1.75e+11" style numbers with SI suffixes for tables ("175.0 B").
std::string humanCount(double n);

} // namespace trident::report

#endif // TRIDENT_REPORT_INSPECTREPORT_H
