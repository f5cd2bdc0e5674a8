//===- PlanPasses.cpp - trident-plan and trident-apply-plan ---------------===//
//
// Thin wrappers: the Analysis builds the LayerProfile, Search finds the
// plan, Plan reads and writes it; these passes only move a plan between its
// data model and IR attributes.
//
//===----------------------------------------------------------------------===//

#include "trident/Transforms/Passes.h"

#include "trident/Analysis/ModelAnalysis.h"
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

/// Attaches `plan` (already held to `model` by plan::verify) to `model`.
LogicalResult attachPlan(ModelOp model, const tp::plan::Plan &plan,
                         StringRef pass) {
  Builder b(model.getContext());
  // The stage of every layer, in model order.
  std::vector<int64_t> stageOfLayer;
  for (size_t g = 0; g < plan.layersPerChunk.size(); ++g)
    for (int64_t i = 0; i < plan.layersPerChunk[g]; ++i)
      stageOfLayer.push_back(static_cast<int64_t>(g) % plan.pp);

  SmallVector<NamedAttribute> predicted = {
      b.getNamedAttr("iteration_time_s",
                     b.getF64FloatAttr(plan.predicted.iterationSeconds)),
      b.getNamedAttr("tokens_per_s",
                     b.getF64FloatAttr(plan.predicted.tokensPerSecond)),
      b.getNamedAttr("mfu", b.getF64FloatAttr(plan.predicted.mfu)),
      b.getNamedAttr("peak_memory_bytes",
                     b.getF64FloatAttr(plan.predicted.peakMemoryBytes))};
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("schema", b.getStringAttr(plan.schema)),
      b.getNamedAttr("num_micro_batches",
                     b.getI64IntegerAttr(plan.numMicroBatches)),
      b.getNamedAttr("precision", b.getStringAttr(plan.precision)),
      b.getNamedAttr("global_batch", b.getI64IntegerAttr(plan.globalBatch)),
      b.getNamedAttr("layers_per_chunk",
                     b.getDenseI64ArrayAttr(plan.layersPerChunk)),
      b.getNamedAttr("predicted", b.getDictionaryAttr(predicted))};
  // The axes as the table names them (kAxes).
  for (const ::trident::AxisSpec &a : ::trident::kAxes) {
    int64_t v = a.get(plan);
    Attribute value =
        a.type == ::trident::AxisType::Bool ? Attribute(b.getBoolAttr(v != 0))
        : a.type == ::trident::AxisType::Choice
            ? Attribute(b.getStringAttr(::trident::axisValueText(a, v)))
            : Attribute(b.getI64IntegerAttr(v));
    fields.push_back(b.getNamedAttr(a.jsonKey, value));
  }
  model->setAttr("tgraph.plan", b.getDictionaryAttr(fields));

  // The stage of each iteration of every top-level repeat, in model order.
  int64_t next = 0;
  for (Operation &op : model.getBody().front()) {
    auto r = dyn_cast<RepeatOp>(op);
    if (!r)
      continue;
    int64_t count = r.getCountAttr().getInt();
    if (next + count > int64_t(stageOfLayer.size()))
      return model.emitError() << pass << ": the plan splits "
                               << stageOfLayer.size()
                               << " layers but the model's repeats hold more";
    SmallVector<int64_t> stages(stageOfLayer.begin() + next,
                                stageOfLayer.begin() + next + count);
    next += count;
    r->setAttr("tgraph.stage", b.getDenseI64ArrayAttr(stages));
  }
  return success();
}

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
    if (failed(attachPlan(model, plan, getArgument())))
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
    if (failed(attachPlan(model, *plan, getArgument())))
      signalPassFailure();
  }
};

} // namespace
