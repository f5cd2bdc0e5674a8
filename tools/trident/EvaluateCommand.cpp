//===- EvaluateCommand.cpp - trident evaluate / validate ------------------===//

#include "Commands.h"

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Report/EvaluationReport.h"
#include "trident/Report/Trace.h"
#include "trident/Support/FileIO.h"
#include "trident/Validation/Validation.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace cl = llvm::cl;

namespace trident::tool {

namespace {
#define TRIDENT_INT_OPT(VAR, NAME, DESC, INIT)                                 \
  cl::opt<int64_t> VAR(NAME, cl::desc(DESC), cl::value_desc("N"),              \
                       cl::init(INIT), cl::sub(evaluateCmd), cl::cat(category))
TRIDENT_INT_OPT(tpOpt, "tp", "tensor-parallel size", 1);
TRIDENT_INT_OPT(ppOpt, "pp", "pipeline-parallel size", 1);
TRIDENT_INT_OPT(dpOpt, "dp", "data-parallel size", 1);
TRIDENT_INT_OPT(cpOpt, "cp", "context-parallel size", 1);
TRIDENT_INT_OPT(epOpt, "ep", "expert-parallel size (carved out of dp)", 1);
TRIDENT_INT_OPT(etpOpt, "etp", "expert tensor-parallel size (0: = tp)", 0);
TRIDENT_INT_OPT(vppOpt, "vpp", "virtual pipeline stages per rank", 1);
TRIDENT_INT_OPT(microBatchOpt, "micro-batch", "sequences per micro-batch", 1);
TRIDENT_INT_OPT(zeroOpt, "zero", "ZeRO stage 0..3 (1 = distributed optimizer)",
                0);
#undef TRIDENT_INT_OPT
cl::opt<std::string> recomputeOpt("recompute",
                                  cl::desc("none, selective or full; or one "
                                           "per pipeline stage, comma-separated "
                                           "(full,full,none,none)"),
                                  cl::init("none"), cl::sub(evaluateCmd),
                                  cl::cat(category));
cl::opt<bool> spOpt("sequence-parallel",
                    cl::desc("Megatron sequence parallelism"),
                    cl::sub(evaluateCmd), cl::cat(category));
cl::opt<std::string> scheduleOpt("schedule",
                                 cl::desc("gpipe, 1f1b or interleaved-1f1b"),
                                 cl::sub(evaluateCmd), cl::cat(category));
cl::opt<std::string> evalTraceOpt(
    "trace",
    cl::desc("write the simulated step as a Chrome trace (Perfetto, "
             "chrome://tracing)"),
    cl::value_desc("trace.json"), cl::sub(evaluateCmd), cl::cat(category));

cl::opt<std::string> casesOpt("cases", cl::desc("cases.json to evaluate"),
                              cl::value_desc("file"), cl::sub(validateCmd),
                              cl::cat(category));
cl::opt<std::string> writeDocOpt("write-doc",
                                 cl::desc("also write the markdown report"),
                                 cl::value_desc("file"), cl::sub(validateCmd),
                                 cl::cat(category));
} // namespace

int runEvaluate(mlir::MLIRContext &ctx) {
  ParallelConfig cfg;
  cfg.tp = tpOpt;
  cfg.pp = ppOpt;
  cfg.dp = dpOpt;
  cfg.cp = cpOpt;
  cfg.ep = epOpt;
  cfg.etp = etpOpt;
  cfg.vpp = vppOpt;
  cfg.microBatch = microBatchOpt;
  cfg.globalBatch = globalBatchOpt;
  cfg.sequenceParallel = spOpt;
  if (zeroOpt < 0 || zeroOpt > 3)
    return fail("--zero must be 0, 1, 2 or 3, got " + std::to_string(zeroOpt));
  cfg.zeroStage = static_cast<int>(zeroOpt);
  {
    // One policy, or one per pipeline stage.
    std::vector<Recompute> perStage;
    std::string_view rest = recomputeOpt.getValue();
    for (;;) {
      size_t comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      auto recompute = parseRecompute(item);
      if (!recompute)
        return fail("--recompute: expected none, selective or full (or one "
                    "per stage, comma-separated), got '" +
                    std::string(item) + "'");
      perStage.push_back(*recompute);
      if (comma == std::string_view::npos)
        break;
      rest = rest.substr(comma + 1);
    }
    cfg.recompute = *std::max_element(perStage.begin(), perStage.end());
    if (perStage.size() > 1) {
      if (int64_t(perStage.size()) != cfg.pp)
        return fail("--recompute lists " + std::to_string(perStage.size()) +
                    " policies but --pp is " + std::to_string(cfg.pp) +
                    " (give one policy, or one per stage)");
      cfg.stageRecompute = std::move(perStage);
    }
  }
  auto precision = precisionOption();
  if (!precision)
    return 1;
  cfg.precision = *precision;
  if (!scheduleOpt.empty()) {
    auto kind = parseScheduleKind(scheduleOpt);
    if (!kind)
      return fail("--schedule: expected gpipe, 1f1b or interleaved-1f1b, got '" +
                  scheduleOpt + "'");
    cfg.schedule = *kind;
  }

  auto runtime = runtimeOption();
  if (!runtime)
    return 1;
  EvalOptions options;
  applyRuntime(options, *runtime);

  auto work = loadWorkload(ctx);
  if (!work)
    return 1;
  const LayerProfile &profile = work->profile;
  const Cluster *cluster = &work->cluster;
  auto eval = evaluate(profile, *cluster, cfg, options);
  if (!eval)
    return fail(eval.message());
  // Written even when the configuration does not fit: the timeline is
  // still what the cost model predicts.
  if (!evalTraceOpt.empty()) {
    auto step = report::simulateStep(profile, *cluster, cfg, options);
    if (!step)
      return fail(step.message());
    if (Status s = writeFileAtomically(
            evalTraceOpt, report::traceToChromeJson(report::buildTrace(*step)));
        !s)
      return fail(s.message());
  }
  llvm::outs() << (jsonOpt ? report::renderEvaluationJson(profile, *cluster,
                                                          cfg, *eval)
                           : report::renderEvaluationText(profile, *cluster,
                                                          cfg, *eval));
  if (!eval->fits) {
    llvm::errs() << "trident: error: the configuration " << describeFit(*eval)
                 << "\n";
    return 3;
  }
  return 0;
}

int runValidate(mlir::MLIRContext &) {
  std::string path = casesOpt;
  if (path.empty())
    path = std::string(TRIDENT_DEFAULT_CASES);
  auto cases = validation::loadCases(path);
  if (!cases)
    return fail(cases.message());
  // Each case runs under its source's runtime unless --runtime forces one.
  std::optional<Runtime> force;
  if (!runtimeOpt.empty()) {
    force = runtimeOption();
    if (!force)
      return 1;
  }
  validation::Report report = validation::runValidation(*cases, {}, force);
  llvm::outs() << validation::renderText(report);
  if (!writeDocOpt.empty()) {
    std::string doc = validation::renderMarkdown(
        report, "trident validate --write-doc docs/validation.md");
    if (Status s = writeFileAtomically(writeDocOpt, doc); !s)
      return fail(s.message());
  }
  return 0;
}

} // namespace trident::tool
