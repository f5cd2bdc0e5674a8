//===- ExploreReport.h - `trident explore --report` -------------*- C++ -*-===//
//
// One self-contained HTML page per exploration: the answers, the frontier
// of time to train against cost (one colour per GPU type), the scaling
// curve of each GPU type (time to train against GPUs), the what-if bars
// (time to train per `--vary` value) and the table of every scenario.
// Inline SVG and CSS only (Report/Svg.h), like the plan report.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_REPORT_EXPLOREREPORT_H
#define TRIDENT_REPORT_EXPLOREREPORT_H

#include "trident/Explore/Explore.h"

#include <string>

namespace trident::report {

/// The page (deterministic text); `command` is shown verbatim.
std::string renderExploreHtml(const explore::ExploreResult &r,
                              const explore::ExploreOptions &o,
                              const std::string &modelName,
                              const std::string &command);

} // namespace trident::report

#endif // TRIDENT_REPORT_EXPLOREREPORT_H
