//===- HtmlReport.h - One self-contained HTML page per search --*- C++ -*-===//
//
// `trident plan --report report.html`: the top plans as a table, the best
// plan's simulated step as a pipeline timeline (the events of Trace.h),
// memory per stage as stacked bars (the Evaluator's breakdown), and the
// explored space as a scatter of step time against memory per GPU with
// its Pareto frontier. Inline SVG and CSS only: no script, no external
// resource, so the file opens anywhere and renders in headless Chromium.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_REPORT_HTMLREPORT_H
#define TRIDENT_REPORT_HTMLREPORT_H

#include "trident/Plan/Plan.h"
#include "trident/Report/Trace.h"
#include "trident/Search/Search.h"

#include <string>
#include <vector>

namespace trident::report {

struct HtmlReportInput {
  std::string command; ///< the command line, shown verbatim
  /// The top plans, best first (plans[0] is the one the timeline shows).
  std::vector<plan::Plan> plans;
  /// The search: explored points (SearchOptions::maxExplored) and stats.
  const search::SearchResult *search = nullptr;
  /// The best plan's simulated step.
  Trace trace;
  double maxMemoryFraction = 1.0;
};

/// A point of the explored space.
struct ScatterPoint {
  double memoryBytes = 0, stepSeconds = 0;
  bool fits = false;
};

/// Indices of the fitting points that no other fitting point beats on both
/// step time and memory (ties: the first), ordered by memory.
std::vector<size_t> paretoFrontier(const std::vector<ScatterPoint> &points);

/// The page (deterministic text).
std::string renderHtmlReport(const HtmlReportInput &in);

} // namespace trident::report

#endif // TRIDENT_REPORT_HTMLREPORT_H
