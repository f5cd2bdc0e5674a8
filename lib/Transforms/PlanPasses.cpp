//===- PlanPasses.cpp - trident-plan and trident-apply-plan ---------------===//
//
// Thin wrappers: the Analysis builds the LayerProfile, Search finds the
// plan, Plan reads and writes it, Conversion/PlanAttr turns it into the
// model's #tgraph.plan; these passes only call them.
//
//===----------------------------------------------------------------------===//

#include "trident/Transforms/Passes.h"

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Conversion/PlanAttr/PlanAttr.h"
#include "trident/Hardware/Cluster.h"
#include "trident/Plan/Plan.h"
#include "trident/Search/Pins.h"
#include "trident/Search/Search.h"
#include "trident/Support/FileIO.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "trident-plan"

namespace mlir::trident {
#define GEN_PASS_DEF_PLANPASS
#define GEN_PASS_DEF_APPLYPLANPASS
#include "trident/Transforms/Passes.h.inc"
} // namespace mlir::trident

using namespace mlir;
using namespace mlir::trident::graph;
namespace tp = ::trident;

namespace {

struct PlanPass : public mlir::trident::impl::PlanPassBase<PlanPass> {
  using PlanPassBase::PlanPassBase;

  void runOnOperation() override {
    ModelOp model = getOperation();
    auto fail = [&](const Twine &message) {
      model.emitError() << "trident-plan: " << message;
      signalPassFailure();
    };
    if (cluster.empty())
      return fail("the cluster option is required (PRESET:NODES or a "
                  "cluster.json)");
    if (globalBatch <= 0)
      return fail("global-batch must be positive");
    if (seqLen < 0)
      return fail("seq-len must not be negative");
    auto precisionType = tp::parseDType(precision);
    if (!precisionType)
      return fail("precision: expected bf16, fp16, fp8 or fp32, got '" +
                  precision + "'");
    auto hw = tp::loadCluster(cluster);
    if (!hw)
      return fail(hw.message());
    tp::search::SearchOptions options;
    options.globalBatch = globalBatch;
    options.precision = *precisionType;
    options.topK = 1;
    options.threads = threads;
    options.maxMemoryFraction = maxMemoryFraction;
    if (!fix.empty()) {
      auto pins = tp::search::parsePins(fix);
      if (!pins)
        return fail(pins.message());
      options.pins = *pins;
    }
    int64_t seq = seqLen > 0 ? int64_t(seqLen) : model.getSeqLenAttr().getInt();
    tp::LayerProfile profile = tp::analysis::buildLayerProfile(model, seq);
    auto result = tp::search::searchPlans(profile, *hw, options);
    if (!result)
      return fail(result.message());
    if (result->top.empty())
      return fail("no plan fits" +
                  (result->noFit ? ": " + result->noFit->message
                                 : std::string()));
    const tp::search::Candidate &best = result->top.front();
    tp::plan::Plan plan = tp::plan::makePlan(
        profile, result->clusters[size_t(best.clusterIndex)], best.config,
        best.eval);
    if (failed(tp::conversion::attachPlan(model, plan, getArgument())))
      signalPassFailure();
  }
};

struct ApplyPlanPass
    : public mlir::trident::impl::ApplyPlanPassBase<ApplyPlanPass> {
  using ApplyPlanPassBase::ApplyPlanPassBase;

  void runOnOperation() override {
    ModelOp model = getOperation();
    auto fail = [&](const Twine &message) {
      model.emitError() << "trident-apply-plan: " << message;
      signalPassFailure();
    };
    if (planFile.empty())
      return fail("the plan option is required (a trident.plan/v1 JSON)");
    auto text = tp::readFile(planFile);
    if (!text)
      return fail(text.message());
    auto plan = tp::plan::parsePlanJson(*text, planFile);
    if (!plan)
      return fail(plan.message());
    // Held to the model (at its own sequence length) and, when given, the
    // cluster.
    const tp::LayerProfile profile = tp::analysis::buildLayerProfile(
        model, model.getSeqLenAttr().getInt());
    tp::plan::PlanTarget target;
    target.model = &profile;
    target.modelSource = "model @" + model.getSymName().str();
    std::optional<tp::Cluster> hw;
    if (!cluster.empty()) {
      auto loaded = tp::loadCluster(cluster);
      if (!loaded)
        return fail(loaded.message());
      hw = std::move(*loaded);
      target.cluster = &*hw;
      target.clusterSource = "cluster " + cluster;
    }
    if (tp::Status s = tp::plan::verify(*plan, planFile, target); !s)
      return fail(s.message());
    if (failed(tp::conversion::attachPlan(model, *plan, getArgument())))
      signalPassFailure();
  }
};

} // namespace
