//===- PlanCommand.cpp - trident plan -------------------------------------===//
//
// `trident plan`: searches the plan space (TridentSearch) and prints the top
// K plans, a short "why" for the winner, and writes the best plan as
// trident.plan/v1 JSON (TridentPlan). `--validate-cases FILE` runs the
// search for every evaluable published case and compares it with the
// published configuration's prediction (docs/planner.md).
//
// Exit codes: 0 a plan was found; 1 bad input (model, cluster, pins that
// cannot work on them, or a case the planner loses); 2 bad usage
// (malformed flags); 3 nothing fits in memory.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "trident/Validation/PlanCases.h"
#include "trident/Support/Text.h"

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Frontend/ModelSource.h"
#include "trident/Plan/Export.h"
#include "trident/Plan/Plan.h"
#include "trident/Report/HtmlReport.h"
#include "trident/Report/Trace.h"
#include "trident/Search/Search.h"
#include "trident/Support/FileIO.h"
#include "trident/Validation/Validation.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <unistd.h>

namespace cl = llvm::cl;

namespace trident::tool {

namespace {
cl::opt<int64_t> topOpt("top", cl::desc("plans to print (default 5)"),
                        cl::value_desc("K"), cl::init(5), cl::sub(planCmd),
                        cl::cat(category));
cl::opt<std::string> fixOpt("fix",
                            cl::desc("pin axes: tp=8,pp=16,dp=8,cp=1,ep=1,"
                                     "vpp=1,mb=1,sp=1,recompute=full,zero=1,"
                                     "schedule=1f1b"),
                            cl::value_desc("list"), cl::sub(planCmd),
                            cl::cat(category));
cl::opt<std::string> outputOpt("o", cl::desc("write the best plan as JSON"),
                               cl::value_desc("plan.json"), cl::sub(planCmd),
                               cl::cat(category));
cl::opt<std::string> traceOpt(
    "trace",
    cl::desc("write the best plan's simulated step as a Chrome trace "
             "(Perfetto, chrome://tracing)"),
    cl::value_desc("trace.json"), cl::sub(planCmd), cl::cat(category));
cl::opt<std::string> reportOpt(
    "report",
    cl::desc("write a self-contained HTML report: top plans, timeline, "
             "memory per stage, explored space"),
    cl::value_desc("report.html"), cl::sub(planCmd), cl::cat(category));
cl::opt<std::string> exportOpt(
    "export",
    cl::desc("rank only plans megatron, megatron-bridge, deepspeed or "
             "torchtitan can run and print the best as its configuration "
             "instead of the table"),
    cl::value_desc("target"), cl::sub(planCmd), cl::cat(category));
cl::opt<int64_t> threadsOpt("threads",
                            cl::desc("worker threads (0: all cores)"),
                            cl::value_desc("N"), cl::init(0), cl::sub(planCmd),
                            cl::cat(category));
cl::opt<double> priceOpt("price-per-gpu-hour",
                         cl::desc("dollars per GPU-hour: rank by cost per "
                                  "token"),
                         cl::value_desc("USD"), cl::init(0), cl::sub(planCmd),
                         cl::cat(category));
cl::opt<std::string> objectiveOpt(
    "objective",
    cl::desc("time or cost (default: cost when a price is given, else time)"),
    cl::init(""), cl::sub(planCmd), cl::cat(category));
cl::opt<double> memFractionOpt(
    "max-memory-fraction",
    cl::desc("use at most this fraction of each GPU's memory (default 1)"),
    cl::value_desc("F"), cl::init(1.0), cl::sub(planCmd), cl::cat(category));
cl::opt<bool> robustOpt(
    "robust",
    cl::desc("rank by the high end of each plan's 80% step-time interval "
             "(docs/cost-model.md, Uncertainty)"),
    cl::sub(planCmd), cl::cat(category));
cl::opt<bool> tpAcrossNodesOpt(
    "allow-tp-across-nodes",
    cl::desc("let tensor parallelism span nodes (off: TP stays in an NVLink "
             "domain)"),
    cl::sub(planCmd), cl::cat(category));
cl::opt<std::string> validateCasesOpt(
    "validate-cases",
    cl::desc("plan every evaluable case of a cases.json and compare with "
             "the published configuration"),
    cl::value_desc("cases.json"), cl::sub(planCmd), cl::cat(category));
cl::opt<std::string> caseFilterOpt(
    "case-filter",
    cl::desc("with --validate-cases: only cases whose id contains this"),
    cl::value_desc("text"), cl::sub(planCmd), cl::cat(category));

std::string fmtD(const char *f, double v) { return formatNumber(f, v); }
std::string pad(std::string s, size_t w, bool left = false) {
  return padCell(std::move(s), w, left);
}

/// The table of the top plans.
std::string renderTable(const search::SearchResult &r,
                        const std::vector<plan::Plan> &plans, bool price) {
  std::string out;
  out += "  #    dp  tp  pp  cp  ep vpp sp    mb x m  recompute zero  "
         "step (s)   80% range (s)    tokens/s    MFU   mem/GPU  bubble  "
         "exp.comm";
  if (price)
    out += "  $/Mtok";
  out += "\n";
  for (size_t i = 0; i < plans.size(); ++i) {
    const plan::Plan &p = plans[i];
    const search::Candidate &c = r.top[i];
    std::string mbm = std::to_string(p.microBatch) + " x " +
                      std::to_string(p.numMicroBatches);
    // Per-stage recomputation shows as "mixed", spelled out after the row.
    std::string recompute(recomputeName(p.recompute)), stageList;
    for (size_t k = 0; k < p.stages.size() && int64_t(k) < p.pp; ++k) {
      stageList += (k ? "," : "") +
                   std::string(recomputeName(p.stages[k].recompute));
      if (p.stages[k].recompute != p.recompute)
        recompute = "mixed";
    }
    out += pad(std::to_string(i + 1), 3) + " " + pad(std::to_string(p.dp), 5) +
           pad(std::to_string(p.tp), 4) + pad(std::to_string(p.pp), 4) +
           pad(std::to_string(p.cp), 4) + pad(std::to_string(p.ep), 4) +
           pad(std::to_string(p.vpp), 4) +
           pad(p.spCell(), 3) + pad(mbm, 10) +
           pad(recompute, 11) + pad(std::to_string(p.zeroStage), 5) +
           pad(fmtD("%.3f", p.predicted.iterationSeconds), 10) +
           pad(fmtD("%.2f", p.predicted.iterationLowSeconds) + " - " +
                   fmtD("%.2f", p.predicted.iterationHighSeconds),
               16) +
           pad(fmtD("%.0f", p.predicted.tokensPerSecond), 12) +
           pad(fmtD("%.1f%%", 100 * p.predicted.mfu), 7) +
           pad(fmtD("%.1f GB", p.predicted.peakMemoryBytes / 1e9), 10) +
           pad(fmtD("%.1f%%", 100 * p.predicted.bubbleFraction), 8) +
           pad(fmtD("%.1f%%", 100 * p.predicted.exposedCommFraction), 10);
    if (price)
      out += pad(fmtD("%.3f", p.predicted.costPerMillionTokens), 8);
    if (!r.clusterNotes[size_t(c.clusterIndex)].empty())
      out += "  (" + r.clusterNotes[size_t(c.clusterIndex)] + ")";
    if (recompute == "mixed")
      out += "  (recompute per stage: " + stageList + ")";
    // Experts split otherwise than the dense layers (Megatron-Core's etp).
    if (p.etp != 0 && p.etp != p.tp)
      out += "  (experts over etp " + std::to_string(p.etp) + ")";
    if (!p.dataShares.empty()) {
      // dp is the replicas of all groups; m is per replica of each group.
      out += "  (data shares:";
      for (size_t k = 0; k < p.dataShares.size(); ++k)
        out += std::string(k ? "," : "") + " " + p.dataShares[k].group + " " +
               std::to_string(p.dataShares[k].dp) + " x " +
               std::to_string(p.dataShares[k].microBatches) + " mb";
      out += ")";
    }
    out += "\n";
  }
  return out;
}

/// Points of the explored space the report plots (SearchOptions::
/// maxExplored): enough for a dense cloud, few enough for a light page.
constexpr int64_t kReportPoints = 3000;

/// The command line the report shows, rebuilt from the options (so that
/// it does not depend on where the output files went).
std::string planCommandLine(const search::SearchOptions &so) {
  std::string c = "trident plan --model " + modelOpt + " --cluster " +
                  clusterOpt + " --global-batch " +
                  std::to_string(globalBatchOpt) + " --seq-len " +
                  std::to_string(seqLenOpt);
  if (precisionOpt.getNumOccurrences())
    c += " --precision " + precisionOpt;
  if (!runtimeOpt.empty())
    c += " --runtime " + runtimeOpt;
  if (topOpt.getNumOccurrences())
    c += " --top " + std::to_string(so.topK);
  if (so.robust)
    c += " --robust";
  if (!fixOpt.empty())
    c += " --fix " + fixOpt;
  if (memFractionOpt.getNumOccurrences())
    c += " --max-memory-fraction " + fmtD("%g", so.maxMemoryFraction);
  if (so.pricePerGpuHour > 0)
    c += " --price-per-gpu-hour " + fmtD("%g", so.pricePerGpuHour);
  return c + " --report FILE";
}

/// --validate-cases: the planner against every published configuration
/// (lib/Validation/PlanCases.cpp).
int runValidateCases(mlir::MLIRContext &ctx, const search::SearchOptions &base,
                     const EvalOptions &evalOpt) {
  auto cases = validation::loadCases(validateCasesOpt);
  if (!cases)
    return fail(cases.message());
  validation::PlanCasesReport report = validation::planCases(
      ctx, *cases, caseFilterOpt, base, evalOpt, !runtimeOpt.empty());
  llvm::outs() << validation::renderPlanCases(report);
  return report.exitCode();
}

} // namespace

/// The search options of the flags (and the runtime, and the export
/// target); an exit code after printing the error, or nullopt.
std::optional<int> searchOptionsFromFlags(
    search::SearchOptions &so, std::optional<plan::ExportTarget> &exportTarget,
    EvalOptions &evalOpt) {
  if (topOpt < 1)
    return fail("--top must be at least 1, got " + std::to_string(topOpt), 2);
  so.topK = topOpt;
  if (!exportOpt.empty())
    if (auto t = plan::parseExportTarget(exportOpt); !t)
      return fail("--export: " + t.message(), 2);
  if (threadsOpt < 0)
    return fail("--threads must be >= 0, got " + std::to_string(threadsOpt), 2);
  if (!exportOpt.empty())
    exportTarget = *plan::parseExportTarget(exportOpt);
  so.threads = threadsOpt;
  if (!(memFractionOpt > 0 && memFractionOpt <= 1))
    return fail("--max-memory-fraction must be in (0, 1], got " +
                    fmtD("%g", memFractionOpt),
                2);
  so.maxMemoryFraction = memFractionOpt;
  so.robust = robustOpt;
  if (!(priceOpt >= 0) || !std::isfinite(priceOpt))
    return fail("--price-per-gpu-hour must be a non-negative number", 2);
  so.pricePerGpuHour = priceOpt;
  if (objectiveOpt.empty())
    so.objective = priceOpt > 0 ? search::Objective::CostPerToken
                                : search::Objective::StepTime;
  else if (objectiveOpt == "time")
    so.objective = search::Objective::StepTime;
  else if (objectiveOpt == "cost") {
    if (priceOpt <= 0)
      return fail("--objective cost needs --price-per-gpu-hour", 2);
    so.objective = search::Objective::CostPerToken;
  } else
    return fail("--objective: expected time or cost, got '" + objectiveOpt +
                    "'",
                2);
  if (!fixOpt.empty()) {
    auto pins = search::parsePins(fixOpt);
    if (!pins)
      return fail(pins.message(), 2);
    so.pins = *pins;
  }
  if (!runtimeOpt.empty()) {
    auto runtime = runtimeOption();
    if (!runtime)
      return 1;
    applyRuntime(evalOpt, *runtime);
  } else if (exportTarget == plan::ExportTarget::TorchTitan) {
    // Planning for torchtitan: its kernels and checkpointing policy, unless
    // --runtime says otherwise (megatron's is the default runtime already;
    // DeepSpeed's has no preset of its own).
    applyRuntime(evalOpt, Runtime::Torchtitan);
  }
  evalOpt.allowTpAcrossNodes = tpAcrossNodesOpt;
  if (isatty(2))
    so.progress = [](double f) {
      std::fprintf(stderr, "\rsearching... %3.0f%%", 100 * f);
      if (f >= 1)
        std::fprintf(stderr, "\r                 \r");
      std::fflush(stderr);
    };

  return std::nullopt;
}

/// Planning for a target: a plan it cannot express (the exporter's own
/// checks on the plan as written) is not ranked, and a configuration whose
/// axes alone it cannot run is not evaluated. No exporter runs data shares
/// (replicas with their own micro-batch counts).
void restrictToTarget(search::SearchOptions &so, const LayerProfile &profile,
                      plan::ExportTarget target) {
  so.dataShares = false;
  so.acceptAxes = [target](const ParallelConfig &cfg) {
    return plan::axesRefusal(cfg, target);
  };
  so.accept = [&profile, target, price = so.pricePerGpuHour](
                  const ParallelConfig &cfg, const Evaluation &eval,
                  const Cluster &cl) {
    return plan::planRefusal(profile, cl, cfg, eval, target, price);
  };
}

/// -o, --trace and --report; an exit code (0: written).
int writeOutputs(const search::SearchOptions &so, const EvalOptions &evalOpt,
                 const LayerProfile &profile, const search::SearchResult &res,
                 const std::vector<plan::Plan> &plans,
                 const frontend::ModelConfig *model) {
  if (!outputOpt.empty())
    if (Status s = writeFileAtomically(outputOpt, plan::planToJson(plans[0]));
        !s)
      return fail(s.message());
  if (!traceOpt.empty() || !reportOpt.empty()) {
    // The best plan's step, replayed through the schedule simulator with
    // the Evaluator's own costs.
    const search::Candidate &b = res.top[0];
    auto step = report::simulateStep(
        profile, res.clusters[size_t(b.clusterIndex)], b.config, evalOpt);
    if (!step)
      return fail("timeline of the best plan: " + step.message());
    report::Trace trace = report::buildTrace(*step);
    if (!traceOpt.empty())
      if (Status s =
              writeFileAtomically(traceOpt, report::traceToChromeJson(trace));
          !s)
        return fail(s.message());
    if (!reportOpt.empty()) {
      report::HtmlReportInput in;
      in.command = planCommandLine(so);
      in.plans = plans;
      in.search = &res;
      in.trace = std::move(trace);
      in.maxMemoryFraction = so.maxMemoryFraction;
      in.model = model;
      if (Status s =
              writeFileAtomically(reportOpt, report::renderHtmlReport(in));
          !s)
        return fail(s.message());
    }
  }
  return 0;
}

/// With --export: the best plan of the whole space (a second search
/// without the target's checks), when the target cannot run it, is noted:
/// what the choice of framework costs.
void noteBestOfAll(const search::SearchOptions &so, const EvalOptions &evalOpt,
                   const LayerProfile &profile, const Cluster &cluster,
                   const search::SearchResult &res,
                   plan::ExportTarget exportTarget) {
  search::SearchOptions all = so;
  all.accept = nullptr;
  all.acceptAxes = nullptr;
  all.topK = 1;
  all.progress = nullptr;
  all.maxExplored = 0;
  if (auto best = search::searchPlans(profile, cluster, all, evalOpt);
      best && !best->top.empty() &&
      search::rankedBefore(best->top[0], res.top[0])) {
    const search::Candidate &o = best->top[0];
    const ParallelConfig &b = o.config;
    plan::Plan op = plan::makePlan(
        profile, best->clusters[size_t(o.clusterIndex)], b, o.eval,
        so.pricePerGpuHour);
    auto why = plan::exportPlan(op, exportTarget, "that plan");
    // What is ranked: seconds per step, or dollars per million tokens.
    bool cost = so.objective == search::Objective::CostPerToken;
    auto measure = [&](const search::Candidate &c) {
      return cost ? "costs $" + fmtD("%.3f", 1e6 * c.costPerToken) +
                        " per million tokens"
                  : "takes " + fmtD("%.3f", c.eval.iterationSeconds) +
                        " s per step";
    };
    llvm::errs() << "trident: note: the best plan for --export "
                 << plan::exportTargetName(exportTarget) << " "
                 << measure(res.top[0]) << "; the best of all (dp="
                 << b.dp << " tp=" << b.tp << " pp=" << b.pp << " cp=" << b.cp
                 << " ep=" << b.ep << " vpp=" << b.vpp << " micro-batch "
                 << b.microBatch << ", ZeRO-" << b.zeroStage << ") "
                 << measure(o)
                 << (why ? std::string()
                         : std::string(" (") + why.message() + ")")
                 << "\n";
  }
}

/// The text answer: the search's summary, the table, why the best wins.
void printPlans(const search::SearchOptions &so, const EvalOptions &evalOpt,
                const LayerProfile &profile, const Cluster &cluster,
                const search::SearchResult &res,
                const std::vector<plan::Plan> &plans) {
  const search::SearchStats &st = res.stats;
  llvm::outs() << "model       " << profile.modelName << " (seq "
               << profile.seqLen << ", global batch " << so.globalBatch << ", "
               << dtypeName(so.precision) << ")\n"
               << "cluster     " << cluster.name << ", " << cluster.totalGpus()
               << " GPUs\n"
               << "runtime     " << runtimeName(evalOpt.runtime) << "\n";
  // What every plan below was priced with, beyond its row: a
  // context-parallel exchange other than the ring, an FP8 recipe. (The
  // tensor-parallel overlap is a searched choice: its rows say "ov" in
  // the sp column, explained under the table.)
  const plan::Plan &first = plans[0];
  std::string with;
  auto cpPlan = std::find_if(plans.begin(), plans.end(), [](const auto &p) {
    return p.cp > 1 && p.cpCommType != CpCommType::P2p;
  });
  if (cpPlan != plans.end())
    with +=
        std::string(with.empty() ? "" : "; ") +
        "context parallelism's K/V exchange " +
        axisValueText(axisSpec(Axis::CpCommType), int64_t(cpPlan->cpCommType));
  if (first.precision == "fp8" && first.fp8Recipe != Fp8Recipe::Delayed)
    with += std::string(with.empty() ? "" : "; ") + "FP8 recipe " +
            axisValueText(axisSpec(Axis::Fp8Recipe), int64_t(first.fp8Recipe));
  if (!with.empty())
    llvm::outs() << "priced with " << with << "\n";
  llvm::outs() << "searched    " << st.configurations
               << " configurations: " << st.evaluations << " full evaluations, "
               << st.partitions << " layer partitions, " << st.prunedByBound
               << " pruned by the step-time bound, " << st.prunedByMemory
               << " by memory\n\n";
  llvm::outs() << renderTable(res, plans, so.pricePerGpuHour > 0) << "\n";
  if (std::any_of(plans.begin(), plans.end(),
                  [](const plan::Plan &p) { return p.tpCommOverlap; }))
    llvm::outs() << "sp ov       " << kSpOverlapLegend << "\n";
  const plan::Plan &w = plans[0];
  std::string split;
  for (size_t i = 0; i < w.layersPerChunk.size(); ++i)
    split += (i ? "," : "") + std::to_string(w.layersPerChunk[i]);
  llvm::outs() << "best        " << scheduleKindName(w.scheduleKind())
               << ", layers per "
               << (w.vpp > 1 ? "chunk" : "stage") << " [" << split << "] ("
               << w.partition << ")\n";
  llvm::outs() << search::explainWinner(res);
  for (const std::string &warning : w.warnings)
    llvm::outs() << "warning     " << warning << "\n";
  for (const std::string &f : {outputOpt.getValue(), traceOpt.getValue(),
                               reportOpt.getValue()})
    if (!f.empty() && f != "-")
      llvm::outs() << "wrote " << f << "\n";
}

int runPlan(mlir::MLIRContext &ctx) {
  search::SearchOptions so;
  std::optional<plan::ExportTarget> exportTarget;
  EvalOptions evalOpt;
  if (std::optional<int> code =
          searchOptionsFromFlags(so, exportTarget, evalOpt))
    return *code;

  if (!validateCasesOpt.empty())
    return runValidateCases(ctx, so, evalOpt);

  auto precision = precisionOption();
  if (!precision)
    return 1;
  so.precision = *precision;
  auto work = loadWorkload(ctx);
  if (!work)
    return 1;
  so.globalBatch = globalBatchOpt;
  if (!reportOpt.empty())
    so.maxExplored = kReportPoints;
  const LayerProfile &profile = work->profile;
  const Cluster *cluster = &work->cluster;
  if (exportTarget && !cluster->homogeneous())
    // Every plan of a cluster of several node groups spans them, and no
    // target can place stages or replicas on different groups: say so
    // now rather than after a search whose every plan is refused.
    return fail("--export " + exportOpt + ": cluster '" + cluster->name +
                "' has " + std::to_string(cluster->groups.size()) +
                " node groups, and " +
                std::string(plan::exportTargetName(*exportTarget)) +
                " launches one homogeneous job; plan each group's nodes "
                "as a cluster of their own to export");
  if (exportTarget && work->model.config)
    // A model the target does not have: say so now, not after a search.
    if (Status s =
            plan::checkExportModel(*exportTarget, *work->model.config,
                                   profile.modelName, "--model " + modelOpt);
        !s)
      return fail(s.message());
  if (exportTarget)
    restrictToTarget(so, profile, *exportTarget);

  auto res = search::searchPlans(profile, *cluster, so, evalOpt);
  if (!res)
    return fail(res.message());
  if (res->top.empty()) {
    const search::NoFit &nf = *res->noFit;
    std::string msg = nf.message;
    if (!nf.suggestions.empty()) {
      msg += "\n  what would make it fit:";
      for (const std::string &s : nf.suggestions)
        msg += "\n    - " + s;
    }
    return fail(msg, 3);
  }

  std::vector<plan::Plan> plans;
  for (const search::Candidate &c : res->top) {
    const Cluster &cl = res->clusters[size_t(c.clusterIndex)];
    plan::Plan p = plan::makePlan(profile, cl, c.config, c.eval,
                                  so.pricePerGpuHour);
    p.clusterNote = res->clusterNotes[size_t(c.clusterIndex)];
    p.partition = c.partition;
    p.modelSource = modelSourceOf(work->model);
    plans.push_back(std::move(p));
  }
  const frontend::ModelConfig *modelConfig =
      work->model.config ? &*work->model.config : nullptr;
  if (int code = writeOutputs(so, evalOpt, profile, *res, plans, modelConfig);
      code != 0)
    return code;
  if (exportTarget) {
    noteBestOfAll(so, evalOpt, profile, *cluster, *res, *exportTarget);
    return printExported(plans[0], exportOpt, "best plan", "", modelConfig);
  }
  if (jsonOpt) {
    llvm::outs() << plan::plansToJson(plans);
    return 0;
  }
  printPlans(so, evalOpt, profile, *cluster, *res, plans);
  return 0;
}

} // namespace trident::tool
