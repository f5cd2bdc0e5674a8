//===- ExploreCommand.cpp - trident explore
//--------------------------------===//
//
// Thin: reads the flags, builds the model's LayerProfile once, calls
// explore::explore (lib/Explore) and prints or writes its answer.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Explore/Explore.h"
#include "trident/Report/ExploreReport.h"
#include "trident/Support/FileIO.h"
#include "trident/Support/Text.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace trident::tool {

namespace {

cl::opt<double> tokensOpt("tokens",
                          cl::desc("tokens to train on (at a small batch; "
                                   "docs/explore.md)"),
                          cl::value_desc("T"), cl::init(0), cl::sub(exploreCmd),
                          cl::cat(category));
cl::opt<std::string> clustersOpt(
    "clusters",
    cl::desc("PRESET:A..B (node counts, doubling) or PRESET:N, "
             "comma-separated (e.g. dgx-h100:8..64,dgx-a100-80gb:16..128)"),
    cl::value_desc("LIST"), cl::sub(exploreCmd), cl::cat(category));
cl::opt<std::string> batchesOpt(
    "global-batch",
    cl::desc("sequences per step: N[,N...], or auto (chosen per scenario)"),
    cl::value_desc("B"), cl::init("auto"), cl::sub(exploreCmd),
    cl::cat(category));
cl::opt<double> criticalBatchOpt(
    "critical-batch",
    cl::desc("the critical batch B_noise in tokens (default: Kaplan et al. "
             "2020's scaling law; docs/explore.md)"),
    cl::value_desc("TOKENS"), cl::init(0), cl::sub(exploreCmd),
    cl::cat(category));
cl::opt<std::string> pricesOpt(
    "price-per-gpu-hour",
    cl::desc("dollars per GPU-hour: GPU=P[,GPU=P...] (e.g. h100=2.5) or one "
             "price for all"),
    cl::value_desc("PRICES"), cl::sub(exploreCmd), cl::cat(category));
cl::list<std::string> varyOpt(
    "vary",
    cl::desc("a hardware what-if, KEY=V1,V2,... (values or multipliers such "
             "as 1.5x; repeatable): gpu.bf16_tflops, gpu.fp8_tflops, "
             "gpu.hbm_bw, gpu.hbm_bytes, node.nic_bw, node.nvlink_bw, "
             "node.gpus_per_node (docs/explore.md)"),
    cl::value_desc("KEY=VALUES"), cl::sub(exploreCmd), cl::cat(category));
cl::opt<double> deadlineOpt("deadline-days",
                            cl::desc("the cheapest scenario that trains "
                                     "within this many days"),
                            cl::value_desc("D"), cl::init(0),
                            cl::sub(exploreCmd), cl::cat(category));
cl::opt<double> budgetOpt("budget",
                          cl::desc("the fastest scenario within this many "
                                   "dollars (needs prices)"),
                          cl::value_desc("USD"), cl::init(0),
                          cl::sub(exploreCmd), cl::cat(category));
cl::opt<int64_t> exploreThreadsOpt("threads",
                                   cl::desc("search threads (0: all cores)"),
                                   cl::init(0), cl::sub(exploreCmd),
                                   cl::cat(category));
cl::opt<std::string> exploreReportOpt(
    "report",
    cl::desc("write a self-contained HTML page: the answers, the frontier, "
             "the scaling curves, the what-if bars, every scenario"),
    cl::value_desc("explore.html"), cl::sub(exploreCmd), cl::cat(category));
cl::opt<std::string> exploreOutOpt("o",
                                   cl::desc("write the JSON answer to FILE"),
                                   cl::value_desc("FILE"), cl::sub(exploreCmd),
                                   cl::cat(category));

} // namespace

int runExplore(mlir::MLIRContext &ctx) {
  if (seqLenOpt <= 0)
    return fail("--seq-len is required and must be positive");
  if (!(tokensOpt > 0))
    return fail("--tokens is required and must be positive");
  if (criticalBatchOpt < 0 || deadlineOpt < 0 || budgetOpt < 0)
    return fail("--critical-batch, --deadline-days and --budget must be "
                "positive");
  if (exploreThreadsOpt < 0)
    return fail("--threads must be >= 0", 2);
  explore::ExploreOptions o;
  o.seqLen = seqLenOpt;
  o.tokens = tokensOpt;
  o.criticalBatchTokens = criticalBatchOpt;
  o.deadlineDays = deadlineOpt;
  o.budgetUsd = budgetOpt;
  auto sweeps = explore::parseClusterSweeps(clustersOpt);
  if (!sweeps)
    return fail(sweeps.message());
  o.clusters = std::move(*sweeps);
  auto batches = explore::parseBatchList(batchesOpt);
  if (!batches)
    return fail(batches.message());
  o.globalBatches = std::move(*batches);
  auto prices = explore::parsePrices(pricesOpt);
  if (!prices)
    return fail(prices.message());
  o.prices = std::move(*prices);
  for (const std::string &v : varyOpt) {
    auto vary = explore::parseVary(v);
    if (!vary)
      return fail(vary.message());
    o.varies.push_back(std::move(*vary));
  }
  auto precision = precisionOption();
  if (!precision)
    return 1;
  o.search.precision = *precision;
  o.search.threads = exploreThreadsOpt;
  auto runtime = runtimeOption();
  if (!runtime)
    return 1;
  applyRuntime(o.eval, *runtime);
  auto loaded = loadModelOption(ctx);
  if (!loaded)
    return 1;
  LayerProfile profile =
      analysis::buildLayerProfile(loaded->model(), seqLenOpt);
  // A progress line on stderr when it is a terminal.
  if (llvm::sys::Process::StandardErrIsDisplayed())
    o.progress = [](int64_t done, int64_t total) {
      llvm::errs() << "\rexplore: " << done << " of " << total << " scenarios"
                   << (done == total ? "\n" : "");
      llvm::errs().flush();
    };
  auto r = explore::exploreScenarios(profile, o);
  if (!r)
    return fail(r.message());
  if (!exploreOutOpt.empty() && exploreOutOpt != "-")
    if (Status s = writeFileAtomically(exploreOutOpt,
                                       explore::renderExploreJson(*r, o));
        !s)
      return fail(s.message());
  if (!exploreReportOpt.empty()) {
    // Rebuilt from the options, so that it does not depend on where the
    // output files went.
    std::string command = "trident explore --model " + modelOpt +
                          " --seq-len " + std::to_string(seqLenOpt) +
                          " --tokens " + formatNumber("%g", tokensOpt) +
                          " --clusters " + clustersOpt + " --global-batch " +
                          batchesOpt;
    if (!pricesOpt.empty())
      command += " --price-per-gpu-hour " + pricesOpt;
    for (const std::string &v : varyOpt)
      command += " --vary " + v;
    if (deadlineOpt > 0)
      command += " --deadline-days " + formatNumber("%g", deadlineOpt);
    if (budgetOpt > 0)
      command += " --budget " + formatNumber("%g", budgetOpt);
    command += " --report FILE";
    if (Status s = writeFileAtomically(
            exploreReportOpt,
            report::renderExploreHtml(*r, o, profile.modelName, command));
        !s)
      return fail(s.message());
  }
  if (jsonOpt || exploreOutOpt == "-")
    llvm::outs() << explore::renderExploreJson(*r, o);
  else
    llvm::outs() << "model       " << profile.modelName << "\n"
                 << explore::renderExploreText(*r, o);
  bool anyFits = false;
  for (const explore::ExploreRow &row : r->rows)
    anyFits = anyFits || row.fits;
  if (!anyFits)
    return fail("no scenario fits (each row says why)", 3);
  return 0;
}

} // namespace trident::tool
