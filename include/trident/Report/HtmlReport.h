//===- HtmlReport.h - One self-contained HTML page per search --*- C++ -*-===//
//
// `trident plan --report report.html`: the top plans as a table (plans
// with the same predicted time and memory in one row; which frameworks run
// each, and the exported text in collapsible blocks), the best
// plan's simulated step as a pipeline timeline (the events of Trace.h),
// memory per stage as stacked bars (the Evaluator's breakdown), and the
// explored space as a scatter of step time against memory per GPU with
// its Pareto frontier. Inline SVG and CSS only: no script, no external
// resource, so the file opens anywhere and renders in headless Chromium.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_REPORT_HTMLREPORT_H
#define TRIDENT_REPORT_HTMLREPORT_H

#include "trident/Frontend/ModelConfig.h"
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
  /// The plans' model, for the exports the page shows (Megatron-LM's
  /// architecture flags, torchtitan's flavour, Megatron-Bridge at all);
  /// null: exports without it.
  const frontend::ModelConfig *model = nullptr;
};

/// Whether the table shows `b` in `a`'s row: the same predicted step time
/// and peak memory (relative 1e-6), e.g. dp and cp swapped.
bool samePrediction(const plan::Plan &a, const plan::Plan &b);

/// The smallest timeline zoom at which the shortest forward or backward
/// block of `tr` is `minPixels` wide on the page's plot (at least 1, at
/// most 32); the report offers it when the pipeline has 8 or more stages.
double timelineZoom(const Trace &tr, double minPixels = 24);

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
