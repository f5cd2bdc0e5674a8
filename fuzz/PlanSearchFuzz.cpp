//===- PlanSearchFuzz.cpp - Fuzz `trident plan` on small fuzzed models ----===//
//
// Input: the bytes of a config.json. A config the importer accepts and that
// is small (bounded below so one input costs milliseconds, not minutes) is
// built into tgraph, profiled at a short sequence length, and searched on
// a small cluster: one DGX H100 node, or (for odd-sized inputs) a
// heterogeneous cluster of one H100 and one A100 node. The search must
// return plans or a "nothing fits" answer; the best plan must round-trip
// through its JSON. This is the path of `trident plan --model config.json`.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Frontend/GraphBuilder.h"
#include "trident/Frontend/ModelSource.h"
#include "trident/Hardware/Cluster.h"
#include "trident/Plan/Plan.h"
#include "trident/Search/Search.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

using namespace trident;

namespace {

[[noreturn]] void finding(const std::string &what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::abort();
}

mlir::MLIRContext &context() {
  static std::unique_ptr<mlir::MLIRContext> ctx = [] {
    mlir::DialectRegistry registry;
    frontend::registerFrontendDialects(registry);
    auto c = std::make_unique<mlir::MLIRContext>(
        registry, mlir::MLIRContext::Threading::DISABLED);
    c->loadAllAvailableDialects();
    return c;
  }();
  return *ctx;
}

/// Bounds that keep one input in milliseconds: a few layers, narrow
/// layers, few experts. Larger models are the limits tests' business
/// (test/bad-inputs/limits/).
bool small(const frontend::ModelConfig &c) {
  return c.numLayers <= 6 && c.hidden <= 4096 && c.vocabSize <= 65536 &&
         c.ffn <= 16384 && c.moe.numExperts <= 16 && c.moe.expertFfn <= 16384 &&
         c.moe.sharedFfn <= 16384 && c.numHeads <= 64 &&
         c.tableRows.size() <= 16 && c.bottomMlp.size() <= 8 &&
         c.topMlp.size() <= 8 && c.imageSize <= 1024;
}

Cluster smallCluster(bool heterogeneous) {
  Cluster c;
  if (!heterogeneous) {
    c = *parseClusterSpec("dgx-h100:1");
    return c;
  }
  c.name = "fuzz-mixed";
  c.groups.push_back(*presetNodeGroup("dgx-h100", 1));
  c.groups.push_back(*presetNodeGroup("dgx-a100-80gb", 1));
  c.interGroup = c.groups[1].nic;
  return c;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  std::vector<std::string> warnings;
  auto cfg = frontend::parseHFConfig(text, "fuzz.json", &warnings);
  if (!cfg || !small(*cfg))
    return 0;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      frontend::buildModel(context(), *cfg);
  if (!module)
    finding("buildModel returned no module for an accepted config");
  frontend::LoadedModel loaded{std::move(module), "fuzz.json", *cfg, {}};
  mlir::trident::graph::ModelOp model = loaded.model();
  if (!model)
    finding("the built module holds no tgraph.model");
  int64_t seq = std::min<int64_t>(cfg->seqLen > 0 ? cfg->seqLen : 128, 128);
  LayerProfile profile = analysis::buildLayerProfile(model, seq);

  static const Cluster homogeneous = smallCluster(false);
  static const Cluster mixed = smallCluster(true);
  const Cluster &cluster = size % 2 ? mixed : homogeneous;
  search::SearchOptions so;
  so.globalBatch = 16;
  so.topK = 1;
  so.threads = 1;
  auto res = search::searchPlans(profile, cluster, so);
  if (!res) {
    if (res.message().empty())
      finding("the search failed without a message");
    return 0;
  }
  if (res->top.empty()) {
    if (!res->noFit || res->noFit->message.empty())
      finding("no plan and no explanation");
    return 0;
  }
  const search::Candidate &best = res->top[0];
  plan::Plan p = plan::makePlan(profile,
                                res->clusters[size_t(best.clusterIndex)],
                                best.config, best.eval);
  std::string text1 = plan::planToJson(p);
  auto back = plan::parsePlanJson(text1, "best.json");
  if (!back)
    finding("the best plan does not read back: " + back.message());
  if (!(*back == p))
    finding("the best plan changed in a round trip:\n" + text1);
  return 0;
}
