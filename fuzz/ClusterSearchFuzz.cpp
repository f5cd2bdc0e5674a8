//===- ClusterSearchFuzz.cpp - Fuzz the planner over custom clusters ------===//
//
// Input: the bytes of a cluster.json. A cluster the reader accepts and that
// is small (at most 64 GPUs in at most 4 node groups, so one input costs
// milliseconds) is searched for tiny-gpt (sequence 32, global batch 24; in
// fp32 for inputs of odd size, bf16 otherwise). Every configuration the
// search fully evaluated, and every ranked plan, must carry finite times,
// throughput and memory (ARCHITECTURE.md, "Predictions are finite"), and
// the best plan must round-trip through its JSON (a non-finite number is
// written as null and cannot be read back). This is the path of
// `trident plan --cluster cluster.json` that once ranked five plans with
// an infinite step time on one node of 3 GPUs (regressions/cluster-search).
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Frontend/GraphBuilder.h"
#include "trident/Hardware/Cluster.h"
#include "trident/Plan/Plan.h"
#include "trident/Search/Search.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

using namespace trident;

namespace {

[[noreturn]] void finding(const std::string &what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::abort();
}

/// tiny-gpt's profile at sequence 32, built once.
const LayerProfile &tinyGpt() {
  static const LayerProfile profile = [] {
    mlir::DialectRegistry registry;
    frontend::registerFrontendDialects(registry);
    mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
    ctx.loadAllAvailableDialects();
    auto loaded = frontend::loadModel(ctx, "tiny-gpt", 32);
    if (!loaded)
      finding("tiny-gpt does not load: " + loaded.message());
    return analysis::buildLayerProfile(loaded->model(), 32);
  }();
  return profile;
}

void checkFinite(const Evaluation &e, const std::string &what) {
  auto check = [&](const char *field, double v) {
    if (!std::isfinite(v))
      finding(what + ": " + field + " is " + std::to_string(v));
  };
  check("iteration time", e.iterationSeconds);
  check("tokens/s", e.tokensPerSecond);
  check("MFU", e.mfu);
  check("peak memory", e.peakMemoryBytes);
  check("exposed DP time", e.dpExposedSeconds);
  check("bubble fraction", e.bubbleFraction);
  if (!(e.iterationSeconds > 0))
    finding(what + ": iteration time is not positive");
  for (const StageBreakdown &s : e.stages) {
    check("stage compute", s.computeSeconds);
    check("stage exposed communication", s.exposedCommSeconds);
    check("stage bubble", s.bubbleSeconds);
    check("stage memory", s.totalBytes);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  auto cluster = parseClusterJson(text, "fuzz.json");
  if (!cluster || cluster->totalGpus() > 64 || cluster->groups.size() > 4)
    return 0;
  search::SearchOptions so;
  so.globalBatch = 24;
  so.topK = 5;
  so.threads = 1;
  so.maxExplored = 256;
  so.precision = size % 2 ? DType::F32 : DType::BF16;
  auto res = search::searchPlans(tinyGpt(), *cluster, so);
  if (!res) {
    // An error is an answer (a GPU without this precision, say), as long
    // as it says something and is not the cost model's own refusal of a
    // non-finite prediction (Evaluator::checkFinite), which is a bug.
    if (res.message().empty())
      finding("the search failed without a message");
    if (res.message().find("internal error") != std::string::npos)
      finding(res.message());
    return 0;
  }
  for (const search::ExploredPoint &p : res->explored)
    if (!std::isfinite(p.iterationSeconds) || !std::isfinite(p.objective) ||
        !std::isfinite(p.peakMemoryBytes))
      finding("an explored configuration has a non-finite prediction");
  for (size_t i = 0; i < res->top.size(); ++i)
    checkFinite(res->top[i].eval, "plan #" + std::to_string(i + 1));
  if (res->top.empty())
    return 0;
  const search::Candidate &best = res->top[0];
  plan::Plan p = plan::makePlan(tinyGpt(),
                                res->clusters[size_t(best.clusterIndex)],
                                best.config, best.eval);
  std::string json = plan::planToJson(p);
  auto back = plan::parsePlanJson(json, "best.json");
  if (!back)
    finding("the best plan does not read back: " + back.message() + "\n" +
            json);
  return 0;
}
