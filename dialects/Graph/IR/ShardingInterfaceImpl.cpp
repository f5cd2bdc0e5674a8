//===- ShardingInterfaceImpl.cpp - how tgraph ops split -------------------===//
//
// The one description of how a tgraph op splits across devices: upstream
// `shard`'s ShardingInterface, attached as external models. Each op names
// its loops (parallel or reduction), the loop each dimension of each
// operand and result follows, and how it partitions: the local op on the
// local shards, with the collective a split reduction needs. Upstream
// `sharding-propagation` reads the loops and maps to carry shardings from
// op to op; `shard-partition` calls `partition`. A split an op cannot
// compute locally is refused there with a message naming the op and the
// loop (docs/tgraph.md, "How ops split").
//
// The tensor-parallel rules are Megatron-LM's (Shoeybi et al. 2019,
// "Megatron-LM: Training Multi-Billion Parameter Language Models Using
// Model Parallelism"): a column split needs no collective in the forward,
// a row split a sum over the ranks that hold the input features; attention
// splits by heads.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphDialect.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::trident::graph;
using shard::GridAxis;
using shard::Sharding;
using utils::IteratorType;

namespace {

constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

/// The map from `loops` loops to the tensor dimensions listed (loop indices).
AffineMap loopMap(MLIRContext *ctx, unsigned loops, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(loops, 0, exprs, ctx);
}

/// Loops 0 .. n-1.
SmallVector<unsigned> lead(unsigned n) {
  SmallVector<unsigned> l;
  for (unsigned i = 0; i < n; ++i)
    l.push_back(i);
  return l;
}

SmallVector<unsigned> concat(ArrayRef<unsigned> a, ArrayRef<unsigned> b) {
  SmallVector<unsigned> r(a);
  r.append(b.begin(), b.end());
  return r;
}

/// The grid axes that split each loop of `op` under the shardings
/// shard-partition gives it, and the grid they belong to.
struct Splits {
  shard::ShardingArray loops;
  shard::GridOp grid;
  FlatSymbolRefAttr gridName;

  bool split(unsigned loop) const {
    return loop < loops.size() && !loops[loop].empty();
  }
  /// Devices over which `loop` is split.
  int64_t ways(unsigned loop) const {
    return split(loop) ? shard::collectiveProcessGroupSize(loops[loop], grid)
                       : 1;
  }
};

Splits splitsOf(Operation *op, ArrayRef<Sharding> operandShardings,
                ArrayRef<Sharding> resultShardings,
                SymbolTableCollection &symbols) {
  auto iface = cast<shard::ShardingInterface>(op);
  Splits s;
  s.loops = shard::getGridAxisAssignmentForLoopIterators(
      operandShardings, resultShardings, iface.getLoopIteratorTypes(),
      iface.getIndexingMaps());
  for (ArrayRef<Sharding> list : {resultShardings, operandShardings})
    for (Sharding sh : list)
      if (!s.gridName && sh && sh.getGridAttr())
        s.gridName = sh.getGridAttr();
  s.grid = shard::getGridOrNull(op, s.gridName, symbols);
  return s;
}

LogicalResult refuse(Operation *op, const Twine &why) {
  return op->emitOpError() << "cannot be partitioned: " << why;
}

/// The local type of `op`'s result `i` under its sharding.
Type localResultType(Operation *op, unsigned i,
                     ArrayRef<Sharding> resultShardings, const Splits &s) {
  Type t = op->getResult(i).getType();
  if (i < resultShardings.size() && resultShardings[i] && s.grid)
    return shard::shardType(t, s.grid, resultShardings[i]);
  return t;
}

/// A copy of `op` (its attributes) on `operands` with `types` results.
Operation *buildLocal(Operation *op, ValueRange operands, TypeRange types,
                      OpBuilder &b) {
  OperationState state(op->getLoc(), op->getName());
  state.addOperands(operands);
  state.addAttributes(op->getAttrs());
  state.addTypes(types);
  return b.create(state);
}

/// `v` gathered over the grid axes of `loop` along its dimension `dim`.
Value gatherAlong(OpBuilder &b, Location loc, Value v, const Splits &s,
                  unsigned loop, int64_t dim) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(t.getShape());
  if (!ShapedType::isDynamic(shape[size_t(dim)]))
    shape[size_t(dim)] *= s.ways(loop);
  return shard::AllGatherOp::create(
             b, loc, RankedTensorType::get(shape, t.getElementType()),
             s.gridName.getValue(), s.loops[loop], v, APInt(64, dim))
      .getResult();
}

/// `v` reduced (`kind`) over the grid axes of the loops listed.
Value reduceOver(OpBuilder &b, Location loc, Value v, const Splits &s,
                 ArrayRef<unsigned> loops, shard::ReductionKind kind) {
  SmallVector<GridAxis> axes;
  for (unsigned l : loops)
    if (s.split(l))
      axes.append(s.loops[l].begin(), s.loops[l].end());
  if (axes.empty())
    return v;
  return shard::AllReduceOp::create(b, loc, v, s.gridName.getValue(), axes,
                                    kind)
      .getResult();
}

/// Records `local` as the partitioned `op`.
LogicalResult mapResult(Operation *op, Value local, IRMapping &map) {
  map.map(op->getResult(0), local);
  if (Operation *def = local.getDefiningOp())
    map.map(op, def);
  return success();
}

/// The local op on the local shards, nothing else: every split loop is
/// parallel and the local op computes its own part.
LogicalResult partitionLocally(Operation *op, ArrayRef<Value> operands,
                               ArrayRef<Sharding> resultShardings,
                               const Splits &s, IRMapping &map, OpBuilder &b) {
  Operation *local =
      buildLocal(op, operands, {localResultType(op, 0, resultShardings, s)}, b);
  return mapResult(op, local->getResult(0), map);
}

/// The local op on the local shards, its partial results summed over the
/// grid axes that split the reduction `loops`.
LogicalResult partitionSummed(Operation *op, ArrayRef<Value> operands,
                              ArrayRef<Sharding> resultShardings,
                              const Splits &s, ArrayRef<unsigned> loops,
                              IRMapping &map, OpBuilder &b) {
  Operation *partial =
      buildLocal(op, operands, {localResultType(op, 0, resultShardings, s)}, b);
  return mapResult(op,
                   reduceOver(b, op->getLoc(), partial->getResult(0), s, loops,
                              shard::ReductionKind::Sum),
                   map);
}

/// Refuses a split of any loop in `loops`, naming it.
LogicalResult refuseSplits(Operation *op, const Splits &s,
                           ArrayRef<std::pair<unsigned, StringRef>> loops) {
  for (auto [loop, why] : loops)
    if (s.split(loop))
      return refuse(op, why);
  return success();
}

/// The CRTP base: partition gathers the splits and hands them to the
/// model's `local`.
template <typename Model, typename Op>
struct Rule : public shard::ShardingInterface::ExternalModel<Model, Op> {
  LogicalResult partition(Operation *op, ArrayRef<Value> operands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols, OpBuilder &b) const {
    Splits s = splitsOf(op, operandShardings, resultShardings, symbols);
    return static_cast<const Model *>(this)->local(cast<Op>(op), operands,
                                                   resultShardings, s, map, b);
  }
};

/// A contraction: as many parallel loops as the first operand has
/// dimensions, then the contracted one, summed.
template <typename Model, typename Op>
struct ContractionRule : Rule<Model, Op> {
  SmallVector<IteratorType> getLoopIteratorTypes(Operation *op) const {
    SmallVector<IteratorType> t(rankOf(op->getOperand(0)), kPar);
    t.push_back(kRed);
    return t;
  }
  SmallVector<shard::ReductionKind>
  getReductionLoopIteratorKinds(Operation *) const {
    return {shard::ReductionKind::Sum};
  }
};

//===----------------------------------------------------------------------===//
// linear: y (..., n) = x (..., k) weight (n, k)^T [+ bias (n)]
//===----------------------------------------------------------------------===//

/// Loops: x's leading dimensions, n (parallel: a column split), k
/// (reduction: a row split, whose partial products are summed).
SmallVector<AffineMap> linearMaps(LinearOp lin) {
  unsigned r = unsigned(rankOf(lin.getX())), loops = r + 1;
  unsigned n = r - 1, k = r;
  MLIRContext *ctx = lin->getContext();
  SmallVector<AffineMap> maps = {loopMap(ctx, loops, concat(lead(r - 1), {k})),
                                 loopMap(ctx, loops, {n, k})};
  if (lin.getBias())
    maps.push_back(loopMap(ctx, loops, {n}));
  maps.push_back(loopMap(ctx, loops, concat(lead(r - 1), {n})));
  return maps;
}

struct LinearRule : ContractionRule<LinearRule, LinearOp> {
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    return linearMaps(cast<LinearOp>(op));
  }
  LogicalResult local(LinearOp op, ArrayRef<Value> operands,
                      ArrayRef<Sharding> resultShardings, const Splits &s,
                      IRMapping &map, OpBuilder &b) const {
    const unsigned k = unsigned(rankOf(op.getX()));
    if (!s.split(k))
      return partitionLocally(op, operands, resultShardings, s, map, b);
    // Row-parallel: the local product of the local input features is a
    // partial sum; the sum over the ranks that split k completes it, and
    // the bias is added once, after it.
    Type type = localResultType(op, 0, resultShardings, s);
    Operation *partial = buildLocal(op, {operands[0], operands[1]}, {type}, b);
    Value y = reduceOver(b, op.getLoc(), partial->getResult(0), s, {k},
                         shard::ReductionKind::Sum);
    if (op.getBias()) {
      auto yt = cast<RankedTensorType>(type);
      SmallVector<Value> dyn;
      for (int64_t i = 0; i < yt.getRank(); ++i)
        if (yt.isDynamicDim(i))
          dyn.push_back(tensor::DimOp::create(b, op.getLoc(), y, i));
      Value init = tensor::EmptyOp::create(b, op.getLoc(), yt.getShape(),
                                           yt.getElementType(), dyn);
      Value bias = linalg::BroadcastOp::create(
                       b, op.getLoc(), operands[2], init,
                       llvm::to_vector(llvm::seq<int64_t>(0, yt.getRank() - 1)))
                       ->getResult(0);
      y = AddOp::create(b, op.getLoc(), y, bias);
    }
    return mapResult(op, y, map);
  }
};

//===----------------------------------------------------------------------===//
// matmul: (..., m, k) x (..., k, n)
//===----------------------------------------------------------------------===//

struct MatmulRule : ContractionRule<MatmulRule, MatmulOp> {
  /// Loops: the batch dimensions, m, n, k.
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    unsigned r = unsigned(rankOf(op->getOperand(0)));
    unsigned m = r - 2, n = r - 1, k = r, loops = r + 1;
    MLIRContext *ctx = op->getContext();
    return {loopMap(ctx, loops, concat(lead(r - 2), {m, k})),
            loopMap(ctx, loops, concat(lead(r - 2), {k, n})),
            loopMap(ctx, loops, concat(lead(r - 2), {m, n}))};
  }
  LogicalResult local(MatmulOp op, ArrayRef<Value> operands,
                      ArrayRef<Sharding> resultShardings, const Splits &s,
                      IRMapping &map, OpBuilder &b) const {
    const unsigned k = unsigned(rankOf(op.getLhs()));
    return partitionSummed(op, operands, resultShardings, s, {k}, map, b);
  }
};

//===----------------------------------------------------------------------===//
// attention: q (b, s, heads*d), k and v (b, t, kv_heads*d) -> (b, s, heads*d)
//===----------------------------------------------------------------------===//

/// Loops: b, s (queries), t (keys), f (the head features of q, k, v, the
/// output and the sinks alike: a split of f is a split by heads), r (the
/// shared rotary key of multi-head latent attention).
namespace attention_loops {
enum : unsigned { B, S, T, F, R, Loops };
} // namespace attention_loops

SmallVector<AffineMap> attentionMaps(AttentionOp a) {
  using namespace attention_loops;
  MLIRContext *ctx = a->getContext();
  SmallVector<AffineMap> maps = {loopMap(ctx, Loops, {B, S, F}),
                                 loopMap(ctx, Loops, {B, T, F}),
                                 loopMap(ctx, Loops, {B, T, F})};
  if (a.getKRope())
    maps.push_back(loopMap(ctx, Loops, {B, T, R}));
  if (a.getSinks())
    maps.push_back(loopMap(ctx, Loops, {F}));
  maps.push_back(loopMap(ctx, Loops, {B, S, F}));
  return maps;
}

struct AttentionRule : Rule<AttentionRule, AttentionOp> {
  enum : unsigned {
    B = attention_loops::B,
    S = attention_loops::S,
    T = attention_loops::T,
    F = attention_loops::F,
    R = attention_loops::R
  };
  SmallVector<IteratorType> getLoopIteratorTypes(Operation *) const {
    return {kPar, kPar, kRed, kPar, kPar};
  }
  SmallVector<shard::ReductionKind>
  getReductionLoopIteratorKinds(Operation *) const {
    return {shard::ReductionKind::Generic};
  }
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    return attentionMaps(cast<AttentionOp>(op));
  }
  LogicalResult local(AttentionOp op, ArrayRef<Value> operands,
                      ArrayRef<Sharding> resultShardings, const Splits &s,
                      IRMapping &map, OpBuilder &b) const {
    if (failed(refuseSplits(
            op, s,
            {{S, "its query sequence is split: each query needs the keys "
                 "before it and its own position (context parallelism is "
                 "not written as shard rules)"},
             {T, "its key sequence is split: each query needs every key "
                 "(context parallelism is not written as shard rules)"},
             {R, "the shared rotary key of latent attention is split"}})))
      return failure();
    const int64_t ways = s.ways(F);
    const int64_t heads = op.getNumHeads(), kvHeads = op.getNumKvHeads();
    if (heads % ways != 0 || kvHeads % ways != 0)
      return refuse(op, Twine(heads) + " heads and " + Twine(kvHeads) +
                            " kv heads do not split " + Twine(ways) + " ways");
    Operation *local = buildLocal(
        op, operands, {localResultType(op, 0, resultShardings, s)}, b);
    Builder attrs(op.getContext());
    local->setAttr("num_heads", attrs.getI64IntegerAttr(heads / ways));
    local->setAttr("num_kv_heads", attrs.getI64IntegerAttr(kvHeads / ways));
    return mapResult(op, local->getResult(0), map);
  }
};

//===----------------------------------------------------------------------===//
// Norms over the last dimension
//===----------------------------------------------------------------------===//

/// Loops: x's leading dimensions, h (the normalised features), g (a
/// per-head gamma's features: q/k norms apply one gamma to every head, so
/// heads may split while each head stays whole).
template <typename Op> struct NormRule : Rule<NormRule<Op>, Op> {
  static bool perHead(Op op) {
    return cast<RankedTensorType>(op->getOperand(1).getType()).getDimSize(0) !=
           cast<RankedTensorType>(op->getOperand(0).getType())
               .getShape()
               .back();
  }
  SmallVector<IteratorType> getLoopIteratorTypes(Operation *op) const {
    SmallVector<IteratorType> t(rankOf(op->getOperand(0)) + 1, kPar);
    return t;
  }
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto norm = cast<Op>(op);
    unsigned r = unsigned(rankOf(op->getOperand(0)));
    unsigned h = r - 1, g = r, loops = r + 1;
    MLIRContext *ctx = op->getContext();
    SmallVector<AffineMap> maps = {loopMap(ctx, loops, lead(r))};
    for (unsigned i = 1; i < op->getNumOperands(); ++i)
      maps.push_back(loopMap(ctx, loops, {perHead(norm) ? g : h}));
    maps.push_back(loopMap(ctx, loops, lead(r)));
    return maps;
  }
  LogicalResult local(Op op, ArrayRef<Value> operands,
                      ArrayRef<Sharding> resultShardings, const Splits &s,
                      IRMapping &map, OpBuilder &b) const {
    const unsigned r = unsigned(rankOf(op->getOperand(0))), h = r - 1, g = r;
    if (s.split(g))
      return refuse(op, "its per-head gamma is split");
    if (s.split(h) && !perHead(op))
      return refuse(op, "it normalises whole rows and their features are "
                        "split");
    if (s.split(h)) {
      const int64_t width = cast<RankedTensorType>(op->getOperand(0).getType())
                                .getShape()
                                .back() /
                            s.ways(h);
      const int64_t head =
          cast<RankedTensorType>(op->getOperand(1).getType()).getDimSize(0);
      if (width % head != 0)
        return refuse(op, "its features split into parts of " + Twine(width) +
                              ", not whole heads of " + Twine(head));
    }
    return partitionLocally(op, operands, resultShardings, s, map, b);
  }
};

//===----------------------------------------------------------------------===//
// embedding: ids (...) x table (vocab, hidden) -> (..., hidden)
//===----------------------------------------------------------------------===//

/// Loops: the ids' dimensions, h, v (reduction: a vocabulary split).
SmallVector<AffineMap> embeddingMaps(EmbeddingOp op) {
  unsigned r = unsigned(rankOf(op.getIds()));
  unsigned h = r, v = r + 1, loops = r + 2;
  MLIRContext *ctx = op->getContext();
  return {loopMap(ctx, loops, lead(r)), loopMap(ctx, loops, {v, h}),
          loopMap(ctx, loops, concat(lead(r), {h}))};
}

struct EmbeddingRule : Rule<EmbeddingRule, EmbeddingOp> {
  SmallVector<IteratorType> getLoopIteratorTypes(Operation *op) const {
    SmallVector<IteratorType> t(rankOf(op->getOperand(0)) + 1, kPar);
    t.push_back(kRed);
    return t;
  }
  SmallVector<shard::ReductionKind>
  getReductionLoopIteratorKinds(Operation *) const {
    return {shard::ReductionKind::Sum};
  }
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    return embeddingMaps(cast<EmbeddingOp>(op));
  }
  LogicalResult local(EmbeddingOp op, ArrayRef<Value> operands,
                      ArrayRef<Sharding> resultShardings, const Splits &s,
                      IRMapping &map, OpBuilder &b) const {
    const unsigned v = unsigned(rankOf(op.getIds())) + 1;
    SmallVector<Value> local(operands);
    // A vocabulary split: the lookup has no masked form here, so the
    // table's rows are gathered first (correct, not Megatron's
    // vocabulary-parallel lookup, which sums masked partial lookups).
    if (s.split(v))
      local[1] = gatherAlong(b, op.getLoc(), local[1], s, v, 0);
    return partitionLocally(op, local, resultShardings, s, map, b);
  }
};

//===----------------------------------------------------------------------===//
// position_embedding: x (b, s, h) + table (positions, h)
//===----------------------------------------------------------------------===//

/// Loops: b, s, h, p (the table's positions).
struct PositionEmbeddingRule
    : Rule<PositionEmbeddingRule, PositionEmbeddingOp> {
  enum : unsigned { B, S, H, P, Loops };
  SmallVector<IteratorType> getLoopIteratorTypes(Operation *) const {
    return {kPar, kPar, kPar, kPar};
  }
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    MLIRContext *ctx = op->getContext();
    return {loopMap(ctx, Loops, {B, S, H}), loopMap(ctx, Loops, {P, H}),
            loopMap(ctx, Loops, {B, S, H})};
  }
  LogicalResult local(PositionEmbeddingOp op, ArrayRef<Value> operands,
                      ArrayRef<Sharding> resultShardings, const Splits &s,
                      IRMapping &map, OpBuilder &b) const {
    if (failed(refuseSplits(
            op, s,
            {{S, "its sequence is split: each shard would read positions "
                 "from 0"},
             {P, "its table's positions are split"}})))
      return failure();
    return partitionLocally(op, operands, resultShardings, s, map, b);
  }
};

//===----------------------------------------------------------------------===//
// cross_entropy: logits (..., classes) x labels (...) -> mean loss
//===----------------------------------------------------------------------===//

/// Loops: the labels' dimensions (reductions: the loss is their mean), c
/// (the classes).
struct CrossEntropyRule : Rule<CrossEntropyRule, CrossEntropyOp> {
  SmallVector<IteratorType> getLoopIteratorTypes(Operation *op) const {
    return SmallVector<IteratorType>(rankOf(op->getOperand(0)), kRed);
  }
  SmallVector<shard::ReductionKind>
  getReductionLoopIteratorKinds(Operation *op) const {
    SmallVector<shard::ReductionKind> k(rankOf(op->getOperand(1)),
                                        shard::ReductionKind::Average);
    k.push_back(shard::ReductionKind::Generic);
    return k;
  }
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    unsigned r = unsigned(rankOf(op->getOperand(1))), loops = r + 1;
    MLIRContext *ctx = op->getContext();
    return {loopMap(ctx, loops, lead(r + 1)), loopMap(ctx, loops, lead(r)),
            loopMap(ctx, loops, {})};
  }
  LogicalResult local(CrossEntropyOp op, ArrayRef<Value> operands,
                      ArrayRef<Sharding> resultShardings, const Splits &s,
                      IRMapping &map, OpBuilder &b) const {
    const unsigned r = unsigned(rankOf(op.getLabels())), c = r;
    SmallVector<Value> local(operands);
    // Split classes: the logits are gathered (Megatron's vocabulary-
    // parallel loss, which reduces the max and the sum instead, has no
    // tgraph form).
    if (s.split(c))
      local[0] = gatherAlong(b, op.getLoc(), local[0], s, c, int64_t(r));
    Operation *partial = buildLocal(op, local, {op.getLoss().getType()}, b);
    // Equal shards of tokens: the mean loss is the mean of the shards'.
    return mapResult(op,
                     reduceOver(b, op.getLoc(), partial->getResult(0), s,
                                lead(r), shard::ReductionKind::Average),
                     map);
  }
};

//===----------------------------------------------------------------------===//
// moe: x (..., h), router (h, e), w_in (e, h, f), w_out (e, f, h)
//===----------------------------------------------------------------------===//

/// Loops: x's leading dimensions, h, e (the experts, summed), f (each
/// expert's features, summed by w_out).
struct MoERule : Rule<MoERule, MoEOp> {
  SmallVector<IteratorType> getLoopIteratorTypes(Operation *op) const {
    SmallVector<IteratorType> t(rankOf(op->getOperand(0)), kPar);
    t.append({kRed, kRed});
    return t;
  }
  SmallVector<shard::ReductionKind>
  getReductionLoopIteratorKinds(Operation *) const {
    return {shard::ReductionKind::Sum, shard::ReductionKind::Sum};
  }
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto m = cast<MoEOp>(op);
    unsigned r = unsigned(rankOf(m.getX()));
    unsigned h = r - 1, e = r, f = r + 1, loops = r + 2;
    MLIRContext *ctx = op->getContext();
    SmallVector<AffineMap> maps = {loopMap(ctx, loops, lead(r)),
                                   loopMap(ctx, loops, {h, e})};
    if (m.getRouterBias())
      maps.push_back(loopMap(ctx, loops, {e}));
    maps.push_back(loopMap(ctx, loops, {e, h, f}));
    maps.push_back(loopMap(ctx, loops, {e, f, h}));
    if (m.getBIn()) {
      maps.push_back(loopMap(ctx, loops, {e, f}));
      maps.push_back(loopMap(ctx, loops, {e, h}));
    }
    maps.push_back(loopMap(ctx, loops, lead(r)));
    return maps;
  }
  LogicalResult local(MoEOp op, ArrayRef<Value> operands,
                      ArrayRef<Sharding> resultShardings, const Splits &s,
                      IRMapping &map, OpBuilder &b) const {
    const unsigned r = unsigned(rankOf(op.getX()));
    const unsigned h = r - 1, e = r, f = r + 1;
    if (failed(refuseSplits(
            op, s,
            {{h, "its hidden features are split: the router scores whole "
                 "tokens"},
             {e, "its experts are split: expert parallelism moves tokens "
                 "to their experts' ranks (all-to-all on the routing), "
                 "which no shard rule expresses"}})))
      return failure();
    if (s.split(f) && (op.getGated() || op.getBIn()))
      return refuse(op, "each expert's features are split, but its input "
                        "weights hold the gate and up columns side by side "
                        "or its biases would be summed");
    return partitionSummed(op, operands, resultShardings, s, {f}, map, b);
  }
};

//===----------------------------------------------------------------------===//
// softmax over the last dimension
//===----------------------------------------------------------------------===//

struct SoftmaxRule : Rule<SoftmaxRule, SoftmaxOp> {
  SmallVector<IteratorType> getLoopIteratorTypes(Operation *op) const {
    return SmallVector<IteratorType>(rankOf(op->getOperand(0)), kPar);
  }
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    unsigned r = unsigned(rankOf(op->getOperand(0)));
    MLIRContext *ctx = op->getContext();
    return {loopMap(ctx, r, lead(r)), loopMap(ctx, r, lead(r))};
  }
  LogicalResult local(SoftmaxOp op, ArrayRef<Value> operands,
                      ArrayRef<Sharding> resultShardings, const Splits &s,
                      IRMapping &map, OpBuilder &b) const {
    if (s.split(unsigned(rankOf(op.getX())) - 1))
      return refuse(op, "it normalises over its last dimension, which is "
                        "split");
    return partitionLocally(op, operands, resultShardings, s, map, b);
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// The plan's tensor parallelism, read through the same loops
//===----------------------------------------------------------------------===//

std::optional<TensorParallelLoop>
mlir::trident::graph::tensorParallelLoop(Operation *op) {
  if (auto lin = dyn_cast<LinearOp>(op)) {
    const unsigned r = unsigned(rankOf(lin.getX()));
    switch (lin.getTpRole()) {
    case TpRole::Column:
      return TensorParallelLoop{r - 1, false};
    case TpRole::Vocab:
      return TensorParallelLoop{r - 1, true};
    case TpRole::Row:
      return TensorParallelLoop{r, false};
    case TpRole::None:
      return std::nullopt;
    }
  }
  if (isa<AttentionOp>(op))
    return TensorParallelLoop{attention_loops::F, false};
  if (auto e = dyn_cast<EmbeddingOp>(op))
    return TensorParallelLoop{unsigned(rankOf(e.getIds())) + 1, true};
  return std::nullopt;
}

std::optional<int64_t> mlir::trident::graph::tensorParallelDim(Operation *op,
                                                               unsigned i) {
  // DLRM's tables: no shard rule (the bag's pooling is not written as
  // one), but trident emit splits them by rows over tp like a token
  // table (docs/emit.md, "DLRM").
  if (auto bag = dyn_cast<EmbeddingBagOp>(op))
    return i == bag->getNumOperands() - 1 ? std::optional<int64_t>(0)
                                          : std::nullopt;
  std::optional<TensorParallelLoop> loop = tensorParallelLoop(op);
  if (!loop)
    return std::nullopt;
  SmallVector<AffineMap> maps =
      llvm::TypeSwitch<Operation *, SmallVector<AffineMap>>(op)
          .Case<LinearOp>([](LinearOp l) { return linearMaps(l); })
          .Case<AttentionOp>([](AttentionOp a) { return attentionMaps(a); })
          .Case<EmbeddingOp>([](EmbeddingOp e) { return embeddingMaps(e); });
  // Operands only: the maps after them are the results'.
  if (i >= op->getNumOperands() || i >= maps.size())
    return std::nullopt;
  for (auto [dim, expr] : llvm::enumerate(maps[i].getResults()))
    if (expr == getAffineDimExpr(loop->loop, op->getContext()))
      return int64_t(dim);
  return std::nullopt;
}

void mlir::trident::graph::registerShardingInterfaceModels(
    DialectRegistry &registry) {
  registry.insert<linalg::LinalgDialect, shard::ShardDialect,
                  tensor::TensorDialect>();
  registry.addExtension(+[](MLIRContext *ctx, TGraphDialect *) {
    // A row-parallel linear's bias is broadcast after the sum.
    ctx->loadDialect<linalg::LinalgDialect, shard::ShardDialect,
                     tensor::TensorDialect>();
    using shard::ElementwiseShardingInterface;
    AddOp::attachInterface<ElementwiseShardingInterface<AddOp>>(*ctx);
    MulOp::attachInterface<ElementwiseShardingInterface<MulOp>>(*ctx);
    GeluOp::attachInterface<ElementwiseShardingInterface<GeluOp>>(*ctx);
    SiluOp::attachInterface<ElementwiseShardingInterface<SiluOp>>(*ctx);
    ReluOp::attachInterface<ElementwiseShardingInterface<ReluOp>>(*ctx);
    SquaredReluOp::attachInterface<ElementwiseShardingInterface<SquaredReluOp>>(
        *ctx);
    TanhOp::attachInterface<ElementwiseShardingInterface<TanhOp>>(*ctx);
    SwiGLUOp::attachInterface<ElementwiseShardingInterface<SwiGLUOp>>(*ctx);
    GeGLUOp::attachInterface<ElementwiseShardingInterface<GeGLUOp>>(*ctx);
    DropoutOp::attachInterface<ElementwiseShardingInterface<DropoutOp>>(*ctx);
    LinearOp::attachInterface<LinearRule>(*ctx);
    MatmulOp::attachInterface<MatmulRule>(*ctx);
    AttentionOp::attachInterface<AttentionRule>(*ctx);
    RMSNormOp::attachInterface<NormRule<RMSNormOp>>(*ctx);
    LayerNormOp::attachInterface<NormRule<LayerNormOp>>(*ctx);
    EmbeddingOp::attachInterface<EmbeddingRule>(*ctx);
    PositionEmbeddingOp::attachInterface<PositionEmbeddingRule>(*ctx);
    CrossEntropyOp::attachInterface<CrossEntropyRule>(*ctx);
    MoEOp::attachInterface<MoERule>(*ctx);
    SoftmaxOp::attachInterface<SoftmaxRule>(*ctx);
  });
}
