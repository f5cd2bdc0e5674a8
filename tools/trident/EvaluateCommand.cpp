//===- EvaluateCommand.cpp - trident evaluate / validate ------------------===//

#include "Commands.h"

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Report/EvaluationReport.h"
#include "trident/Report/Trace.h"
#include "trident/Support/FileIO.h"
#include "trident/Support/Text.h"
#include "trident/Validation/Validation.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <thread>

namespace cl = llvm::cl;

namespace trident::tool {

namespace {
/// One flag per axis of the plan record (kAxes): its name, value name and
/// help come from the row, its value is parsed by the row; a boolean axis
/// is a switch. Unset flags leave the record's default.
struct AxisFlags {
  std::array<std::unique_ptr<cl::opt<std::string>>, kAxisCount> value;
  std::array<std::unique_ptr<cl::opt<bool>>, kAxisCount> flag;
  AxisFlags() {
    for (const AxisSpec &a : kAxes) {
      llvm::StringRef name(a.flag.data(), a.flag.size());
      llvm::StringRef help(a.help.data(), a.help.size());
      if (a.type == AxisType::Bool)
        flag[size_t(a.axis)] = std::make_unique<cl::opt<bool>>(
            name, cl::desc(help), cl::sub(evaluateCmd), cl::cat(category));
      else
        value[size_t(a.axis)] = std::make_unique<cl::opt<std::string>>(
            name, cl::desc(help),
            cl::value_desc(a.flagValue.empty() ? "VALUE" : a.flagValue.data()),
            cl::sub(evaluateCmd), cl::cat(category));
    }
  }
};
AxisFlags axisFlags;

/// Sets `cfg`'s axes from the flags given; "" or the message of the first
/// bad one.
std::string applyAxisFlags(ParallelConfig &cfg) {
  for (const AxisSpec &a : kAxes) {
    const std::string prefix = "--" + std::string(a.flag) + ": ";
    if (a.type == AxisType::Bool) {
      if (*axisFlags.flag[size_t(a.axis)])
        a.set(cfg, 1);
      continue;
    }
    const cl::opt<std::string> &opt = *axisFlags.value[size_t(a.axis)];
    if (opt.getNumOccurrences() == 0)
      continue;
    if (a.axis != Axis::Recompute) {
      auto v = parseAxisValue(a, opt.getValue());
      if (!v)
        return prefix + v.message();
      a.set(cfg, *v);
      continue;
    }
    // One policy, or one per pipeline stage (checked against --pp by the
    // cost model).
    std::vector<Recompute> perStage;
    std::string_view rest = opt.getValue();
    for (;;) {
      size_t comma = rest.find(',');
      auto v = parseAxisValue(a, rest.substr(0, comma));
      if (!v)
        return prefix + v.message() + " (or one policy per stage, "
                                       "comma-separated)";
      perStage.push_back(Recompute(*v));
      if (comma == std::string_view::npos)
        break;
      rest = rest.substr(comma + 1);
    }
    cfg.recompute = *std::max_element(perStage.begin(), perStage.end());
    if (perStage.size() > 1)
      cfg.stageRecompute = std::move(perStage);
  }
  if (!cfg.stageRecompute.empty() &&
      int64_t(cfg.stageRecompute.size()) != cfg.pp)
    return "--recompute lists " + std::to_string(cfg.stageRecompute.size()) +
           " policies but --pp is " + std::to_string(cfg.pp) +
           " (give one policy, or one per stage)";
  return "";
}

cl::opt<std::string> evalTraceOpt(
    "trace",
    cl::desc("write the simulated step as a Chrome trace (Perfetto, "
             "chrome://tracing)"),
    cl::value_desc("trace.json"), cl::sub(evaluateCmd), cl::cat(category));

cl::opt<std::string> moeDispatcherOpt(
    "moe-dispatcher",
    cl::desc("expert-parallel token exchange to price: alltoall, allgather "
             "or flex (DeepEP / HybridEP); default: the runtime's"),
    cl::value_desc("kind"), cl::sub(evaluateCmd), cl::sub(validateCmd),
    cl::cat(category));
cl::opt<bool> moeOverlapEpOpt(
    "moe-overlap-ep-comm",
    cl::desc("price Megatron-Core's --overlap-moe-expert-parallel-comm: each "
             "micro-batch's token exchange hides behind another's compute"),
    cl::sub(evaluateCmd), cl::cat(category));
cl::opt<double> moeImbalanceOpt(
    "moe-load-imbalance",
    cl::desc("busiest expert's load over the mean (>= 1; 1: force-balanced "
             "routing; default 1.25)"),
    cl::value_desc("F"), cl::init(0), cl::sub(evaluateCmd), cl::cat(category));

cl::list<std::string>
    casesOpt("cases",
             cl::desc("cases.json to evaluate (repeat to join several)"),
             cl::value_desc("file"), cl::sub(validateCmd), cl::cat(category));
cl::list<std::string>
    asRanOpt("as-ran",
             cl::desc("settings read from the runs' own scripts (dispatcher, "
                      "exchange overlap, release per case id; "
                      "test/data/validation/mbridge-moe-as-ran.json)"),
             cl::value_desc("file"), cl::sub(validateCmd), cl::cat(category));
cl::opt<bool> fitOpt("fit",
                     cl::desc("refit the fitted constants (Fitted.h) on the "
                              "cases and print them"),
                     cl::sub(validateCmd), cl::cat(category));
cl::opt<bool> crossValidateOpt(
    "cross-validate",
    cl::desc("leave one source out: refit without each source, predict it"),
    cl::sub(validateCmd), cl::cat(category));
cl::opt<std::string> writeEnvelopeOpt(
    "write-envelope",
    cl::desc("with --cross-validate: write lib/Cost/ValidatedEnvelope.inc "
             "(residuals per regime, MFU and axis ceilings)"),
    cl::value_desc("file"), cl::sub(validateCmd), cl::cat(category));
cl::opt<int64_t>
    validateThreadsOpt("threads",
                       cl::desc("threads for the refits (0: all cores)"),
                       cl::init(0), cl::sub(validateCmd), cl::cat(category));
cl::opt<std::string> writeDocOpt("write-doc",
                                 cl::desc("also write the markdown report"),
                                 cl::value_desc("file"), cl::sub(validateCmd),
                                 cl::cat(category));
cl::opt<bool> validateServeOpt(
    "serve",
    cl::desc("validate serving predictions against the published "
             "measurements of validation/serving.json (or --cases)"),
    cl::sub(validateCmd), cl::cat(category));
} // namespace

/// --moe-dispatcher, when given; false (after the message) when it names
/// no dispatcher.
static bool dispatcherOption(std::optional<MoeDispatcher> &out) {
  if (moeDispatcherOpt.empty())
    return true;
  out = parseMoeDispatcher(moeDispatcherOpt);
  if (!out)
    fail("--moe-dispatcher: unknown '" + moeDispatcherOpt + "' (expected " +
         moeDispatcherNames() + ")");
  return out.has_value();
}

int runEvaluate(mlir::MLIRContext &ctx) {
  ParallelConfig cfg;
  cfg.globalBatch = globalBatchOpt;
  if (std::string bad = applyAxisFlags(cfg); !bad.empty())
    return fail(bad);
  auto precision = precisionOption();
  if (!precision)
    return 1;
  cfg.precision = *precision;

  auto runtime = runtimeOption();
  if (!runtime)
    return 1;
  EvalOptions options;
  applyRuntime(options, *runtime);
  std::optional<MoeDispatcher> dispatcher;
  if (!dispatcherOption(dispatcher))
    return 2;
  if (dispatcher)
    options.moeDispatcher = *dispatcher;
  options.overlapEpComm = moeOverlapEpOpt;
  if (moeImbalanceOpt.getNumOccurrences()) {
    if (Status s = checkExpertLoadImbalance(moeImbalanceOpt); !s)
      return fail("--moe-load-imbalance: " + s.message(), 2);
    options.expertLoadImbalance = moeImbalanceOpt;
  }
  // Context parallelism exchanges K and V as --cp-comm-type says (p2p
  // included), else as the runtime does; the configuration states which.
  if (axisFlags.value[size_t(Axis::CpCommType)]->getNumOccurrences() > 0)
    options.cpCommType = cfg.cpCommType;
  stateSettings(cfg, options);
  // The cost model prices what it is asked; say when the software named
  // cannot run it (the axis table's runtime column).
  if (std::string why = runtimeAxisRefusal(cfg, *runtime); !why.empty())
    llvm::errs() << "trident: note: runtime '" << runtimeName(*runtime)
                 << "' cannot run " << why
                 << "; the figures assume it could\n";

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

int runValidate(mlir::MLIRContext &ctx) {
  if (validateServeOpt) {
    if (fitOpt || crossValidateOpt || !writeEnvelopeOpt.empty() ||
        !runtimeOpt.empty() || !moeDispatcherOpt.empty() || casesOpt.size() > 1)
      return fail("--serve takes at most one --cases and --write-doc", 2);
    return runValidateServe(ctx, casesOpt.empty() ? "" : casesOpt[0],
                            writeDocOpt);
  }
  std::vector<std::string> paths(casesOpt.begin(), casesOpt.end());
  if (paths.empty())
    paths.push_back(std::string(TRIDENT_DEFAULT_CASES));
  std::vector<validation::Case> cases;
  for (const std::string &path : paths) {
    auto some = validation::loadCases(path);
    if (!some)
      return fail(some.message());
    cases.insert(cases.end(), some->begin(), some->end());
  }
  for (const std::string &path : asRanOpt)
    if (Status s = validation::applyAsRanFile(cases, path); !s)
      return fail(s.message());
  // Each case runs under its source's runtime unless --runtime forces one.
  std::optional<Runtime> force;
  if (!runtimeOpt.empty()) {
    force = runtimeOption();
    if (!force)
      return 1;
  }
  if (!writeEnvelopeOpt.empty() && !crossValidateOpt)
    return fail("--write-envelope needs --cross-validate", 2);
  if ((fitOpt || crossValidateOpt) && force)
    return fail("--runtime cannot be combined with --fit or --cross-validate "
                "(the constants are fitted with each case under its own "
                "runtime)",
                2);
  std::optional<MoeDispatcher> dispatcher;
  if (!dispatcherOption(dispatcher))
    return 2;
  if ((fitOpt || crossValidateOpt) && dispatcher)
    return fail("--moe-dispatcher cannot be combined with --fit or "
                "--cross-validate (the constants are fitted with each case "
                "under its own runtime)",
                2);
  if (validateThreadsOpt < 0)
    return fail(
        "--threads must be >= 0, got " + std::to_string(validateThreadsOpt), 2);
  int threads = validateThreadsOpt > 0
                    ? int(validateThreadsOpt)
                    : int(std::max(1u, std::thread::hardware_concurrency()));
  std::string command = "trident validate";
  for (size_t i = 0; i < casesOpt.size(); ++i)
    command += " --cases " + paths[i];
  for (const std::string &path : asRanOpt)
    command += " --as-ran " + path;
  if (crossValidateOpt) {
    validation::CrossValidation cv = validation::crossValidate(cases, threads);
    llvm::outs() << validation::renderText(cv.outOfSample) << "\n"
                 << validation::renderCrossValidation(cv);
    if (!writeEnvelopeOpt.empty()) {
      std::string inc = validation::renderEnvelope(
          cv, command + " --cross-validate --write-envelope "
                        "lib/Cost/ValidatedEnvelope.inc");
      if (Status s = writeFileAtomically(writeEnvelopeOpt, inc); !s)
        return fail(s.message());
    }
    if (!writeDocOpt.empty()) {
      std::string doc = validation::renderMarkdown(
          validation::runValidation(cases),
          command + " --cross-validate --write-doc docs/validation.md", &cv);
      if (Status s = writeFileAtomically(writeDocOpt, doc); !s)
        return fail(s.message());
    }
    return 0;
  }
  if (fitOpt) {
    validation::FitReport fit = validation::fitConstants(cases, {}, threads);
    llvm::outs() << validation::renderFit(fit);
    return 0;
  }
  validation::Report report = validation::runValidation(
      cases, {}, force, FitValues::published(), dispatcher);
  llvm::outs() << validation::renderText(report);
  if (!writeDocOpt.empty()) {
    std::string doc = validation::renderMarkdown(
        report, command + " --write-doc docs/validation.md");
    if (Status s = writeFileAtomically(writeDocOpt, doc); !s)
      return fail(s.message());
  }
  return 0;
}

} // namespace trident::tool
