//===- PlanCases.cpp - The planner against every published configuration ===//

#include "trident/Validation/PlanCases.h"
#include "trident/Support/Text.h"

#include "trident/Validation/CaseProfile.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace trident::validation {

namespace {

std::string fmtD(const char *f, double v) { return formatNumber(f, v); }
std::string pad(std::string s, size_t w, bool left = false) {
  return padCell(std::move(s), w, left);
}

/// One case: its published configuration priced, then planned.
PlanCaseRow planCase(const Case &c, const Result<LayerProfile> &profile,
                     const search::SearchOptions &base,
                     const EvalOptions &evalOpt, bool forceRuntime) {
  PlanCaseRow row;
  row.c = &c;
  if (!profile) {
    row.message = profile.message();
    return row;
  }
  auto cluster = loadCluster(c.cluster);
  if (!cluster) {
    row.message = cluster.message();
    return row;
  }
  EvalOptions caseOpt = evalOpt;
  if (!forceRuntime)
    applyRuntime(caseOpt, c.runtime);
  auto published = evaluate(*profile, *cluster, c.config, caseOpt);
  if (!published) {
    row.kind = PlanCaseRow::Kind::Skipped;
    row.message = "published configuration: " + published.message();
    return row;
  }
  search::SearchOptions so = base;
  so.globalBatch = c.config.globalBatch;
  so.precision = c.config.precision;
  so.topK = 1;
  auto res = search::searchPlans(*profile, *cluster, so, caseOpt);
  if (!res) {
    row.message = res.message();
    return row;
  }
  row.publishedSeconds = published->iterationSeconds;
  row.publishedFits = published->fits;
  if (res->top.empty()) {
    row.kind = PlanCaseRow::Kind::NothingFits;
    return row;
  }
  row.kind = PlanCaseRow::Kind::Planned;
  row.plannedSeconds = res->top[0].eval.iterationSeconds;
  row.plan = res->top[0].config;
  // Within rounding of the two evaluations' summation order.
  row.ok = row.plannedSeconds <= row.publishedSeconds * (1 + 1e-9) ||
           !row.publishedFits;
  return row;
}

} // namespace

PlanCasesReport planCases(mlir::MLIRContext &context,
                          const std::vector<Case> &cases,
                          std::string_view filter,
                          const search::SearchOptions &base,
                          const EvalOptions &evalOpt, bool forceRuntime) {
  PlanCasesReport r;
  std::map<std::pair<std::string, int64_t>, Result<LayerProfile>> profiles;
  for (const Case &c : cases) {
    if (!c.evaluable ||
        (!filter.empty() && c.id.find(filter) == std::string::npos))
      continue;
    auto key = std::make_pair(c.modelJson, c.seqLen);
    auto it = profiles.find(key);
    if (it == profiles.end())
      it = profiles.emplace(key, caseProfile(context, c)).first;
    PlanCaseRow row = planCase(c, it->second, base, evalOpt, forceRuntime);
    switch (row.kind) {
    case PlanCaseRow::Kind::Error:
      ++r.failed;
      break;
    case PlanCaseRow::Kind::Skipped:
      ++r.skipped;
      break;
    case PlanCaseRow::Kind::NothingFits:
      if (row.publishedFits)
        ++r.worse;
      else
        ++r.publishedNoFit;
      break;
    case PlanCaseRow::Kind::Planned:
      ++r.planned;
      r.sumGain +=
          (row.publishedSeconds - row.plannedSeconds) / row.publishedSeconds;
      if (!row.publishedFits)
        ++r.publishedNoFit;
      else if (row.ok)
        ++r.better;
      else
        ++r.worse;
      break;
    }
    r.rows.push_back(std::move(row));
  }
  return r;
}

std::string renderPlanCases(const PlanCasesReport &r) {
  size_t idWidth = 4;
  for (const PlanCaseRow &row : r.rows)
    idWidth = std::max(idWidth, row.c->id.size());
  std::string out = pad("case", idWidth, true) +
                    "  published (s)  planned (s)    gain  planned plan\n";
  for (const PlanCaseRow &row : r.rows) {
    out += pad(row.c->id, idWidth, true) + "  ";
    const std::string pub = pad(fmtD("%.3f", row.publishedSeconds), 13) +
                            (row.publishedFits ? " " : "*");
    switch (row.kind) {
    case PlanCaseRow::Kind::Error:
      out += "error: " + row.message + "\n";
      break;
    case PlanCaseRow::Kind::Skipped:
      out += "skipped: " + row.message + "\n";
      break;
    case PlanCaseRow::Kind::NothingFits:
      out += pub + "  nothing fits\n";
      break;
    case PlanCaseRow::Kind::Planned: {
      const ParallelConfig &b = row.plan;
      double gain =
          (row.publishedSeconds - row.plannedSeconds) / row.publishedSeconds;
      out += pub + pad(fmtD("%.3f", row.plannedSeconds), 13) +
             pad(fmtD("%+.1f%%", 100 * gain), 7) + "  dp=" +
             std::to_string(b.dp) + " tp=" + std::to_string(b.tp) +
             " pp=" + std::to_string(b.pp) + " cp=" + std::to_string(b.cp) +
             (b.ep > 1 ? " ep=" + std::to_string(b.ep) : "") +
             " vpp=" + std::to_string(b.vpp) +
             " mb=" + std::to_string(b.microBatch) + " " +
             std::string(recomputeName(b.recompute)) + " zero" +
             std::to_string(b.zeroStage) + (b.sequenceParallel ? " sp" : "") +
             (row.ok ? "" : "  WORSE") + "\n";
      break;
    }
    }
  }
  out += "\n" + std::to_string(r.planned) + " cases planned; of the " +
         std::to_string(r.better + r.worse) +
         " whose published configuration fits, " + std::to_string(r.better) +
         " at least as fast, " + std::to_string(r.worse) + " slower; " +
         std::to_string(r.publishedNoFit) +
         " published configurations do not fit (*); " +
         std::to_string(r.skipped) + " skipped, " + std::to_string(r.failed) +
         " failed";
  if (r.planned > 0)
    out += "; mean predicted gain " +
           fmtD("%.1f%%", 100 * r.sumGain / double(r.planned));
  out += "\n(* the published configuration needs more memory than its GPUs "
         "have in the cost model; the planner's plan fits)\n";
  return out;
}

} // namespace trident::validation
