//===- PlanAttr.cpp - plan::Plan <-> #tgraph.plan -------------------------===//

#include "trident/Conversion/PlanAttr/PlanAttr.h"

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Plan/Parallel.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
namespace tg = mlir::trident::graph;

namespace trident::conversion {

tg::PlanAttr toPlanAttr(MLIRContext *context, const plan::Plan &plan) {
  Builder b(context);
  // The axes, one entry per row of the table.
  SmallVector<NamedAttribute> axes;
  for (const AxisSpec &a : kAxes) {
    const int64_t v = a.get(plan);
    if (a.optionalInPlan && v == a.defaultValue)
      continue; // stated only when set, as in the plan JSON
    Attribute value = a.type == AxisType::Bool ? Attribute(b.getBoolAttr(v))
                      : a.type == AxisType::Choice
                          ? Attribute(b.getStringAttr(axisValueText(a, v)))
                          : Attribute(b.getI64IntegerAttr(v));
    axes.push_back(b.getNamedAttr(a.jsonKey, value));
  }
  SmallVector<Attribute> stageRecompute;
  for (int64_t s = 0; s < plan.pp; ++s)
    stageRecompute.push_back(b.getStringAttr(recomputeName(
        size_t(s) < plan.stages.size() ? plan.stages[size_t(s)].recompute
                                       : plan.recompute)));
  const plan::ModelShape &m = plan.modelShape;
  SmallVector<NamedAttribute> predicted = {
      b.getNamedAttr("iteration_time_s",
                     b.getF64FloatAttr(plan.predicted.iterationSeconds)),
      b.getNamedAttr("tokens_per_s",
                     b.getF64FloatAttr(plan.predicted.tokensPerSecond)),
      b.getNamedAttr("mfu", b.getF64FloatAttr(plan.predicted.mfu)),
      b.getNamedAttr("peak_memory_bytes",
                     b.getF64FloatAttr(plan.predicted.peakMemoryBytes))};
  return tg::PlanAttr::get(
      context, plan.model, plan.seqLen, plan.gpus, plan.precision,
      plan.runtime, plan.globalBatch, plan.numMicroBatches,
      b.getDictionaryAttr(axes), b.getDenseI64ArrayAttr(plan.layersPerChunk),
      b.getArrayAttr(stageRecompute),
      m.known() ? b.getDenseI64ArrayAttr({m.layers, m.hidden, m.vocab,
                                          m.params})
                : DenseI64ArrayAttr(),
      b.getDictionaryAttr(predicted));
}

Result<plan::Plan> planFromAttr(tg::PlanAttr attr) {
  plan::Plan p;
  p.model = attr.getModel().str();
  p.seqLen = attr.getSeqLen();
  p.gpus = attr.getGpus();
  p.precision = attr.getPrecision().str();
  p.runtime = attr.getRuntime().str();
  p.globalBatch = attr.getGlobalBatch();
  p.numMicroBatches = attr.getNumMicroBatches();
  const std::string where = std::string(kPlanAttrName.data());
  for (const AxisSpec &a : kAxes) {
    Attribute value = attr.getAxes().get(a.jsonKey);
    const std::string key = where + " axis '" + std::string(a.jsonKey) + "'";
    int64_t v = 0;
    if (!value)
      continue; // the record's default
    if (auto i = dyn_cast<IntegerAttr>(value);
        i && (a.type == AxisType::Size || a.type == AxisType::Stage)) {
      v = i.getInt();
    } else if (auto f = dyn_cast<BoolAttr>(value);
               f && a.type == AxisType::Bool) {
      v = f.getValue();
    } else if (auto s = dyn_cast<StringAttr>(value);
               s && a.type == AxisType::Choice) {
      auto parsed = parseAxisValue(a, s.getValue());
      if (!parsed)
        return Status::error(key + ": " + parsed.message());
      v = *parsed;
    } else {
      return Status::error(key + " has the wrong kind of value");
    }
    if (Status s = checkAxisBounds(a, v, a.jsonKey); !s)
      return Status::error(where + ": " + s.message());
    a.set(p, v);
  }
  p.schedule = p.scheduleKind();
  p.layersPerChunk.assign(attr.getLayersPerChunk().asArrayRef().begin(),
                          attr.getLayersPerChunk().asArrayRef().end());
  if (int64_t(p.layersPerChunk.size()) != p.pp * p.vpp)
    return Status::error(where + ": layers_per_chunk has " +
                         std::to_string(p.layersPerChunk.size()) +
                         " entries, expected pp * vpp = " +
                         std::to_string(p.pp * p.vpp));
  ArrayAttr stageRecompute = attr.getStageRecompute();
  if (stageRecompute && int64_t(stageRecompute.size()) != p.pp)
    return Status::error(where + ": stage_recompute has " +
                         std::to_string(stageRecompute.size()) +
                         " entries, expected pp = " + std::to_string(p.pp));
  // One stage entry per pipeline stage: its policy and its chunks.
  for (int64_t s = 0; s < p.pp; ++s) {
    plan::StagePlan st;
    st.index = s;
    st.recompute =
        stageRecompute
            ? *parseRecompute(
                  cast<StringAttr>(stageRecompute[size_t(s)]).getValue())
            : p.recompute;
    for (int64_t c = 0; c < p.vpp; ++c) {
      st.chunkLayers.push_back(p.layersPerChunk[size_t(c * p.pp + s)]);
      st.layers += st.chunkLayers.back();
    }
    p.stages.push_back(std::move(st));
  }
  if (DenseI64ArrayAttr shape = attr.getModelShape())
    p.modelShape = {shape[0], shape[1], shape[2], shape[3]};
  auto predicted = [&](StringRef key) {
    auto f = attr.getPredicted() ? attr.getPredicted().getAs<FloatAttr>(key)
                                 : FloatAttr();
    return f ? f.getValueAsDouble() : 0.0;
  };
  p.predicted.iterationSeconds = predicted("iteration_time_s");
  p.predicted.tokensPerSecond = predicted("tokens_per_s");
  p.predicted.mfu = predicted("mfu");
  p.predicted.peakMemoryBytes = predicted("peak_memory_bytes");
  return p;
}

FailureOr<plan::Plan> modelPlan(tg::ModelOp model, StringRef pass) {
  auto attr = model->getAttrOfType<tg::PlanAttr>(kPlanAttrName);
  if (!attr)
    return model.emitError()
           << pass << ": model @" << model.getSymName()
           << " has no tgraph.plan attribute: attach a plan with "
              "trident-plan or trident-apply-plan first";
  auto p = planFromAttr(attr);
  if (!p)
    return model.emitError() << pass << ": " << p.message();
  const LayerProfile profile =
      analysis::buildLayerProfile(model, model.getSeqLenAttr().getInt());
  plan::PlanTarget target;
  target.model = &profile;
  target.modelSource = "model @" + model.getSymName().str();
  if (Status s = plan::verify(*p, kPlanAttrName.str(), target); !s)
    return model.emitError() << pass << ": " << s.message();
  return std::move(*p);
}

FailureOr<std::pair<tg::ModelOp, plan::Plan>>
plannedModel(ModuleOp module, StringRef pass) {
  SmallVector<tg::ModelOp> models(module.getOps<tg::ModelOp>());
  if (models.size() != 1)
    return module.emitError() << pass << ": expected one tgraph.model in the "
                              << "module, found " << models.size();
  FailureOr<plan::Plan> p = modelPlan(models.front(), pass);
  if (failed(p))
    return failure();
  return std::make_pair(models.front(), std::move(*p));
}

LogicalResult attachPlan(tg::ModelOp model, const plan::Plan &plan,
                         StringRef pass) {
  // The attribute holds one micro-batch count for every replica.
  if (!plan.dataShares.empty())
    return model.emitError()
           << pass
           << ": the plan's replicas run different micro-batch counts "
              "(data_shares, one per GPU type), which tgraph.plan does not "
              "carry: the lowered programs run one batch per replica";
  Builder b(model.getContext());
  // The stage of every layer, in model order.
  std::vector<int64_t> stageOfLayer;
  for (size_t g = 0; g < plan.layersPerChunk.size(); ++g)
    for (int64_t i = 0; i < plan.layersPerChunk[g]; ++i)
      stageOfLayer.push_back(static_cast<int64_t>(g) % plan.pp);
  model->setAttr(kPlanAttrName, toPlanAttr(model.getContext(), plan));
  // The stage of each iteration of every top-level repeat, in model order.
  int64_t next = 0;
  for (Operation &op : model.getBody().front()) {
    auto r = dyn_cast<tg::RepeatOp>(op);
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

} // namespace trident::conversion
