//===- ShardTGraph.cpp - trident-shard-tgraph -----------------------------===//
//
// A planned tgraph model as one func.func of tgraph ops for upstream
// `sharding-propagation` and `shard-partition`. The pass writes only what
// the plan decides (the batch over dp, each tensor-parallel weight by its
// role); how every op then splits is the ops' ShardingInterface rules
// (dialects/Graph/IR/ShardingInterfaceImpl.cpp), not this file.
//
//===----------------------------------------------------------------------===//

#include "trident/Conversion/Passes.h"

#include "trident/Conversion/PlanAttr/PlanAttr.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "trident-shard-tgraph"

namespace mlir::trident {
#define GEN_PASS_DEF_SHARDTGRAPHPASS
#include "trident/Conversion/Passes.h.inc"
} // namespace mlir::trident

using namespace mlir;
using namespace mlir::trident::graph;

namespace {

constexpr StringLiteral kPass = "trident-shard-tgraph";
constexpr StringLiteral kGrid = "grid";

class Outliner {
public:
  Outliner(ModuleOp module, ModelOp model, const ::trident::plan::Plan &plan)
      : module(module), model(model), plan(plan), b(module.getContext()) {
    if (plan.dp > 1)
      dpAxis = next++;
    if (plan.tp > 1)
      tpAxis = next++;
  }

  LogicalResult run();

private:
  LogicalResult refusePlan();
  /// `t` with the micro-batch (dimension 0) and sequence (1) bound.
  Type bind(Type t) const;
  LogicalResult cloneBlock(Block &block, StringRef prefix);
  /// A new function argument for `op`'s result, annotated with `split`
  /// (the grid axes of each dimension).
  FailureOr<Value> argument(Operation *op, StringRef name,
                            ArrayRef<SmallVector<shard::GridAxis>> split);
  /// How the plan splits a parameter: by the op that reads it.
  SmallVector<SmallVector<shard::GridAxis>> paramSplit(ParamOp p) const;
  Value annotate(Value v, ArrayRef<SmallVector<shard::GridAxis>> split,
                 bool forUsers);

  ModuleOp module;
  ModelOp model;
  const ::trident::plan::Plan &plan;
  OpBuilder b;
  int16_t next = 0;
  std::optional<int16_t> dpAxis, tpAxis;
  func::FuncOp func;
  IRMapping map;
  Value loss;
  /// Each argument's `tgraph.name`, in order.
  SmallVector<DictionaryAttr> argNames;
};

LogicalResult Outliner::refusePlan() {
  auto refuse = [&](const Twine &what) {
    return model.emitError() << kPass << ": " << what
                             << ": the outlined function shows data and "
                                "tensor parallelism only";
  };
  if (plan.pp > 1)
    return refuse("the plan has " + Twine(plan.pp) +
                  " pipeline stages, each its own program");
  if (plan.cp > 1)
    return refuse("the plan splits the sequence over cp = " + Twine(plan.cp));
  if (plan.sequenceParallel)
    return refuse("the plan uses sequence parallelism");
  if (plan.ep > 1)
    return refuse("the plan splits the experts over ep = " + Twine(plan.ep));
  bool moe = false;
  model.walk([&](MoEOp) { moe = true; });
  if (moe && plan.tp > 1 && plan.expertTp() != 1)
    return refuse("the plan splits each expert over etp = " +
                  Twine(plan.expertTp()));
  return success();
}

Type Outliner::bind(Type t) const {
  auto ranked = dyn_cast<RankedTensorType>(t);
  if (!ranked)
    return t;
  SmallVector<int64_t> shape(ranked.getShape());
  if (!shape.empty() && ShapedType::isDynamic(shape[0]))
    shape[0] = plan.dp * plan.microBatch;
  if (shape.size() > 1 && ShapedType::isDynamic(shape[1]))
    shape[1] = plan.seqLen;
  return RankedTensorType::get(shape, ranked.getElementType(),
                               ranked.getEncoding());
}

Value Outliner::annotate(Value v, ArrayRef<SmallVector<shard::GridAxis>> split,
                         bool forUsers) {
  SmallVector<shard::GridAxesAttr> axes;
  for (const auto &a : split)
    axes.push_back(b.getDenseI16ArrayAttr(a));
  // Upstream's parser needs at least one (possibly empty) entry.
  if (axes.empty())
    axes.push_back(b.getDenseI16ArrayAttr({}));
  Location loc = v.getLoc();
  Value sharding = shard::ShardingOp::create(
      b, loc, FlatSymbolRefAttr::get(b.getContext(), kGrid), axes);
  return shard::ShardOp::create(b, loc, v, sharding, forUsers).getResult();
}

SmallVector<SmallVector<shard::GridAxis>>
Outliner::paramSplit(ParamOp p) const {
  if (!tpAxis)
    return {};
  // The dimension tensor parallelism splits, by the op that reads it
  // (tensorParallelDim: the op's tp loop through its indexing map).
  for (OpOperand &use : p.getResult().getUses())
    if (std::optional<int64_t> dim =
            tensorParallelDim(use.getOwner(), use.getOperandNumber())) {
      SmallVector<SmallVector<shard::GridAxis>> split(size_t(*dim) + 1);
      split[size_t(*dim)] = {*tpAxis};
      return split;
    }
  return {};
}

FailureOr<Value>
Outliner::argument(Operation *op, StringRef name,
                   ArrayRef<SmallVector<shard::GridAxis>> split) {
  Block &body = func.getBody().front();
  auto type = cast<RankedTensorType>(bind(op->getResult(0).getType()));
  for (auto [dim, axes] : llvm::enumerate(split)) {
    int64_t ways = 1;
    for (shard::GridAxis a : axes)
      ways *= a == dpAxis ? plan.dp : plan.tp;
    if (type.getDimSize(int64_t(dim)) % ways != 0)
      return op->emitError() << kPass << ": '" << name << "' dimension " << dim
                             << " of size " << type.getDimSize(int64_t(dim))
                             << " does not split " << ways << " ways";
  }
  Value arg = body.addArgument(type, op->getLoc());
  argNames.push_back(b.getDictionaryAttr(
      b.getNamedAttr("tgraph.name", b.getStringAttr(name))));
  if (llvm::all_of(split, [](const auto &a) { return a.empty(); }))
    return arg;
  return annotate(arg, split, /*forUsers=*/true);
}

/// The prefix of iteration `i` of `r`'s parameters: "layers.0-3" gives
/// "layers.<i>.", any other name "<name>.<i>.".
std::string iterationPrefix(RepeatOp r, int64_t i) {
  StringRef name = r.getName();
  auto [base, range] = name.rsplit('.');
  int64_t first = 0;
  if (!range.empty() && range.contains('-') &&
      !range.split('-').first.getAsInteger(10, first))
    return (base + "." + Twine(first + i) + ".").str();
  return (name + "." + Twine(i) + ".").str();
}

LogicalResult Outliner::cloneBlock(Block &block, StringRef prefix) {
  for (Operation &op : block) {
    if (auto in = dyn_cast<InputOp>(op)) {
      SmallVector<SmallVector<shard::GridAxis>> split;
      if (dpAxis)
        split.push_back({*dpAxis});
      FailureOr<Value> arg = argument(in, in.getName(), split);
      if (failed(arg))
        return failure();
      map.map(in.getResult(), *arg);
      continue;
    }
    if (auto p = dyn_cast<ParamOp>(op)) {
      FailureOr<Value> arg =
          argument(p, (prefix + p.getName()).str(), paramSplit(p));
      if (failed(arg))
        return failure();
      map.map(p.getResult(), *arg);
      continue;
    }
    if (auto r = dyn_cast<RepeatOp>(op)) {
      // Unrolled: each iteration's parameters are arguments of their own,
      // named layers.<i>.<name>.
      Block &body = r.getBody().front();
      SmallVector<Value> carried;
      for (Value v : r.getInits())
        carried.push_back(map.lookup(v));
      for (int64_t i = 0; i < int64_t(r.getCount()); ++i) {
        for (auto [arg, v] : llvm::zip(body.getArguments(), carried))
          map.map(arg, v);
        std::string inner = prefix.str() + iterationPrefix(r, i);
        if (failed(cloneBlock(body, inner)))
          return failure();
        auto yield = cast<YieldOp>(body.getTerminator());
        carried.clear();
        for (Value v : yield.getValues())
          carried.push_back(map.lookup(v));
      }
      for (auto [res, v] : llvm::zip(r.getResults(), carried))
        map.map(res, v);
      continue;
    }
    if (isa<YieldOp>(op))
      continue;
    if (auto out = dyn_cast<OutputOp>(op)) {
      loss = map.lookup(out.getLoss());
      continue;
    }
    Operation *copy = b.clone(op, map);
    for (OpResult res : copy->getResults())
      res.setType(bind(res.getType()));
  }
  return success();
}

LogicalResult Outliner::run() {
  if (failed(refusePlan()))
    return failure();
  if (module.lookupSymbol(kGrid))
    return module.emitError()
           << kPass << ": the module already defines @" << kGrid;
  b.setInsertionPoint(model);
  SmallVector<int64_t> shape;
  if (dpAxis)
    shape.push_back(plan.dp);
  if (tpAxis)
    shape.push_back(plan.tp);
  if (shape.empty())
    shape.push_back(1);
  shard::GridOp::create(b, model.getLoc(), kGrid, shape);
  func = func::FuncOp::create(b, model.getLoc(), model.getSymName(),
                              b.getFunctionType({}, {}));
  b.setInsertionPointToStart(func.addEntryBlock());
  if (failed(cloneBlock(model.getBody().front(), "")))
    return failure();
  if (!loss)
    return model.emitError() << kPass << ": the model has no tgraph.output";
  // The loss, whole on every device.
  Value result = annotate(loss, {}, /*forUsers=*/false);
  func::ReturnOp::create(b, model.getLoc(), result);
  func.setFunctionType(b.getFunctionType(
      SmallVector<Type>(func.getBody().front().getArgumentTypes()),
      {result.getType()}));
  func.setAllArgAttrs(argNames);
  model.erase();
  return success();
}

struct ShardTGraphPass
    : public mlir::trident::impl::ShardTGraphPassBase<ShardTGraphPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto planned = ::trident::conversion::plannedModel(module, kPass);
    if (failed(planned))
      return signalPassFailure();
    Outliner outliner(module, planned->first, planned->second);
    if (failed(outliner.run()))
      signalPassFailure();
  }
};

} // namespace
