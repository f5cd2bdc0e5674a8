//===- GraphOps.cpp - tgraph verifiers and costs --------------------------===//
//
// Cost conventions (see docs/tgraph.md): model FLOPs count every matmul as
// 2*m*n*k (Megatron / PaLM), attention scores and values over the full s x s
// matrix (a sliding window limits it to s x window), no FLOPs for
// elementwise work, lookups or losses. The backward of a matmul is twice its
// forward, except that no input gradient is computed for a model input.
// Saved-activation bytes follow Korthikanti et al. 2022, "Reducing
// Activation Recomputation in Large Transformer Models", Sec. 4.1: each op
// keeps what its own backward reads; a tensor kept by several ops is counted
// once, by the first of them in block order.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpImplementation.h"
#include "trident/Support/ExpertGroups.h"
#include "trident/Support/RopeScalingAttr.h"

#include <cmath>

using namespace mlir;
using namespace mlir::trident::graph;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

namespace mlir::trident::graph {

double numElements(Type type, const CostContext &ctx) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return 0;
  double n = 1;
  for (auto [i, d] : llvm::enumerate(ranked.getShape())) {
    if (ShapedType::isDynamic(d))
      n *= (i == 0 ? ctx.batch : ctx.seq);
    else
      n *= static_cast<double>(d);
  }
  return n;
}

int64_t elementBytes(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return 0;
  Type e = ranked.getElementType();
  if (e.isIntOrFloat())
    return std::max<int64_t>(1, e.getIntOrFloatBitWidth() / 8);
  return 4;
}

double numBytes(Type type, const CostContext &ctx) {
  return numElements(type, ctx) * static_cast<double>(elementBytes(type));
}

LogicalResult verifyGraphOpTrait(Operation *op) {
  auto check = [&](Type t, StringRef what, unsigned idx) -> LogicalResult {
    auto ranked = dyn_cast<RankedTensorType>(t);
    if (!ranked)
      return success();
    for (auto [i, d] : llvm::enumerate(ranked.getShape())) {
      if (ShapedType::isDynamic(d) && i > 1)
        return op->emitOpError() << what << " #" << idx
                                 << " has a dynamic size in dimension " << i
                                 << "; only dimension 0 (batch) and 1 "
                                    "(sequence) may be dynamic";
    }
    return success();
  };
  for (auto [i, t] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(t, "operand", i)))
      return failure();
  for (auto [i, t] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(t, "result", i)))
      return failure();
  return success();
}

bool readFromBf16Tensors(Value v) {
  if (v.use_empty())
    return false;
  for (OpOperand &use : v.getUses()) {
    Operation *u = use.getOwner();
    if (auto lin = dyn_cast<LinearOp>(u)) {
      if (lin.getX() != v)
        return false;
      continue;
    }
    if (!isa<GeluOp, SiluOp, ReluOp, SquaredReluOp, SwiGLUOp>(u))
      return false;
  }
  return true;
}

bool gradientInBf16Tensor(Value v) {
  if (v.use_empty())
    return false;
  return llvm::all_of(v.getUsers(), [](Operation *u) {
    return isa<GeluOp, SiluOp, ReluOp, SquaredReluOp, TanhOp, SwiGLUOp, GeGLUOp,
               AttentionOp, LayerNormOp, RMSNormOp, DropoutOp,
               BinaryCrossEntropyOp>(u);
  });
}

} // namespace mlir::trident::graph

namespace {

RankedTensorType rankedType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Elements of `v` with its dynamic sizes bound.
double elems(Value v, const CostContext &ctx) {
  return numElements(v.getType(), ctx);
}
double bytes(Value v, const CostContext &ctx) {
  return numBytes(v.getType(), ctx);
}

/// Parameter elements of `v` when it is a tgraph.param, else 0.
int64_t paramElems(Value v) {
  if (!v || !v.getDefiningOp<ParamOp>())
    return 0;
  return rankedType(v).getNumElements();
}

/// True for values that need no gradient: model inputs and their copies.
bool isModelInput(Value v) { return v && v.getDefiningOp<InputOp>(); }

/// True when `op` sits inside a repeated layer: under full recompute its
/// activations are rebuilt from the layer input that tgraph.repeat keeps.
bool inRepeatedLayer(Operation *op) {
  return op->getParentOfType<RepeatOp>() != nullptr;
}

/// Ops whose backward reads their first operand.
bool savesFirstOperand(Operation *op) {
  return isa<LinearOp, LayerNormOp, RMSNormOp, GeluOp, SiluOp, ReluOp,
             SquaredReluOp, MoEOp, PatchEmbedOp, Conv2DOp>(op);
}

/// Counts `v` as kept for the backward by `op` only if no earlier op of the
/// same block keeps it too (a tensor is stored once, however many ops read
/// it in their backward). Parameters are never activations.
double savedOnce(Operation *op, Value v, const CostContext &ctx) {
  if (!v || v.getDefiningOp<ParamOp>())
    return 0;
  for (Operation *user : v.getUsers()) {
    if (user == op || user->getBlock() != op->getBlock())
      continue;
    if (!user->isBeforeInBlock(op))
      continue;
    if (savesFirstOperand(user) && user->getOperand(0) == v)
      return 0;
    if (isa<AttentionOp, MulOp, SwiGLUOp, GeGLUOp, MatmulOp,
            DotInteractionOp>(user))
      return 0;
  }
  return bytes(v, ctx);
}

/// Fills the three recompute policies from the no-recompute figure.
void setSaved(OpCost &c, Operation *op, double none, double selective) {
  c.savedBytes[(int)RecomputePolicy::None] = none;
  c.savedBytes[(int)RecomputePolicy::Selective] = selective;
  // Outside repeated layers (embedding, head) Megatron keeps activations
  // even under full recompute.
  c.savedBytes[(int)RecomputePolicy::Full] =
      inRepeatedLayer(op) ? 0.0 : none;
}

/// Matmul FLOPs: forward 2*m*n*k; backward twice that (input and weight
/// gradients), or once when the input is a model input.
void addMatmulFlops(OpCost &c, double m, double n, double k,
                    bool inputNeedsGrad) {
  double f = 2.0 * m * n * k;
  c.fwdFlops += f;
  c.bwdFlops += inputNeedsGrad ? 2.0 * f : f;
}

/// Memory traffic of an op that reads all operands and writes all results.
void addTraffic(OpCost &c, Operation *op, const CostContext &ctx) {
  for (Value v : op->getOperands())
    c.bytesRead += bytes(v, ctx);
  for (Value v : op->getResults())
    c.bytesWritten += bytes(v, ctx);
}

/// Parameter elements of every operand of `op`.
int64_t operandParams(Operation *op) {
  int64_t n = 0;
  for (Value v : op->getOperands())
    n += paramElems(v);
  return n;
}

/// The saved bytes of `inputs` that the bf16 programs keep in bf16 tensors
/// (in repeated layers, as savedGemmInputBytes).
double bf16TensorBytes(Operation *op, ArrayRef<Value> inputs,
                       const CostContext &ctx) {
  if (!inRepeatedLayer(op))
    return 0;
  double b = 0;
  for (Value v : inputs)
    if (readFromBf16Tensors(v))
      b += savedOnce(op, v, ctx);
  return b;
}

/// Cost of a pointwise op that keeps `kept` bytes for its backward.
OpCost pointwiseCost(Operation *op, const CostContext &ctx, double kept) {
  OpCost c;
  addTraffic(c, op, ctx);
  c.kernels = 1;
  setSaved(c, op, kept, kept);
  return c;
}

LogicalResult expectRank(Operation *op, Value v, int64_t rank,
                         StringRef what) {
  if (rankedType(v).getRank() != rank)
    return op->emitOpError() << what << " must have rank " << rank
                             << ", got " << rankedType(v).getRank();
  return success();
}

LogicalResult expectSameElementType(Operation *op, Value a, Value b,
                                    StringRef what) {
  if (rankedType(a).getElementType() != rankedType(b).getElementType())
    return op->emitOpError() << what << " element type "
                             << rankedType(b).getElementType()
                             << " does not match " << rankedType(a).getElementType();
  return success();
}

/// Dimension compatibility where either side may be dynamic.
bool dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

} // namespace

//===----------------------------------------------------------------------===//
// ModelOp
//===----------------------------------------------------------------------===//

LogicalResult ModelOp::verify() {
  if (getSeqLenAttr().getInt() <= 0)
    return emitOpError() << "seq_len must be positive, got " << getSeqLenAttr().getInt();
  if (getBody().front().empty() ||
      !isa<OutputOp>(getBody().front().back()))
    return emitOpError() << "body must end with tgraph.output";
  return success();
}

/// Sums the costs of the ops of `block`; parameters are counted once each,
/// by their tgraph.param (ops also report the parameters they read).
static OpCost sumBlock(Block &block, const CostContext &ctx) {
  OpCost total;
  int64_t params = 0;
  for (Operation &op : block) {
    auto costed = dyn_cast<CostOpInterface>(&op);
    if (!costed)
      continue;
    OpCost c = costed.getCost(ctx);
    if (isa<ParamOp, RepeatOp>(op))
      params += c.params;
    total += c;
  }
  total.params = params;
  return total;
}

OpCost ModelOp::getCost(const CostContext &ctx) {
  return sumBlock(getBody().front(), ctx);
}

OpCost OutputOp::getCost(const CostContext &) { return {}; }

//===----------------------------------------------------------------------===//
// InputOp, ParamOp
//===----------------------------------------------------------------------===//

LogicalResult InputOp::verify() {
  if (getName().empty())
    return emitOpError() << "name must not be empty";
  auto t = rankedType(getResult());
  if (t.getRank() == 0 || !ShapedType::isDynamic(t.getDimSize(0)))
    return emitOpError() << "input must have a dynamic batch dimension 0";
  return success();
}

OpCost InputOp::getCost(const CostContext &ctx) {
  OpCost c;
  c.bytesWritten = bytes(getResult(), ctx);
  return c;
}

LogicalResult ParamOp::verify() {
  if (getName().empty())
    return emitOpError() << "name must not be empty";
  auto t = rankedType(getResult());
  if (!t.hasStaticShape())
    return emitOpError() << "parameter '" << getName()
                         << "' must have a static shape, got " << t;
  if (t.getNumElements() <= 0)
    return emitOpError() << "parameter '" << getName()
                         << "' must have at least one element";
  return success();
}

OpCost ParamOp::getCost(const CostContext &) {
  OpCost c;
  c.params = rankedType(getResult()).getNumElements();
  return c;
}

//===----------------------------------------------------------------------===//
// RepeatOp, YieldOp
//===----------------------------------------------------------------------===//

/// Largest repeat count: per-layer costs times the count stay in range.
constexpr int64_t kMaxRepeatCount = (int64_t(1) << 31) - 1;

LogicalResult RepeatOp::verify() {
  if (getCountAttr().getInt() <= 0)
    return emitOpError() << "count must be positive, got " << getCountAttr().getInt();
  // Costs multiply the count by per-layer sizes in 64 bits.
  if (getCountAttr().getInt() > kMaxRepeatCount)
    return emitOpError() << "count " << getCountAttr().getInt()
                         << " is above the supported limit "
                         << kMaxRepeatCount;
  if (getInits().empty())
    return emitOpError() << "needs at least one carried value";
  if (getInits().getTypes() != getResults().getTypes())
    return emitOpError() << "result types must equal the carried operand types";
  Block &body = getBody().front();
  if (body.getArgumentTypes() != getInits().getTypes())
    return emitOpError()
           << "body arguments must have the carried operand types";
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getInits().getTypes())
    return emitOpError() << "yielded types must equal the carried types";
  return success();
}

/// One layer's cost (the body), before multiplying by the count.
static OpCost bodyCost(RepeatOp op, const CostContext &ctx) {
  OpCost layer = sumBlock(op.getBody().front(), ctx);
  // Full recompute keeps each layer's inputs (the checkpoint).
  double checkpoint = 0;
  for (Value v : op.getInits())
    checkpoint += bytes(v, ctx);
  layer.savedBytes[(int)RecomputePolicy::Full] += checkpoint;
  return layer;
}

OpCost RepeatOp::getCost(const CostContext &ctx) {
  OpCost layer = bodyCost(*this, ctx);
  OpCost total = layer.scaled(getCountAttr().getInt());
  // Nested full-recompute accounting stays per layer; a repeat nested in a
  // repeat is still a sequence of layers.
  return total;
}

OpCost YieldOp::getCost(const CostContext &) { return {}; }

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  auto ids = rankedType(getIds()), table = rankedType(getTable()),
       res = rankedType(getResult());
  if (failed(expectRank(*this, getTable(), 2, "table")))
    return failure();
  if (res.getRank() != ids.getRank() + 1)
    return emitOpError() << "result rank must be ids rank + 1";
  if (res.getShape().back() != table.getDimSize(1))
    return emitOpError() << "result width " << res.getShape().back()
                         << " does not match table width "
                         << table.getDimSize(1);
  if (res.getElementType() != table.getElementType())
    return emitOpError() << "result element type must match the table";
  for (int64_t i = 0; i < ids.getRank(); ++i)
    if (!dimsCompatible(ids.getDimSize(i), res.getDimSize(i)))
      return emitOpError() << "result dimension " << i
                           << " does not match ids";
  return success();
}

OpCost EmbeddingOp::getCost(const CostContext &ctx) {
  OpCost c;
  c.bytesRead = bytes(getIds(), ctx) + bytes(getResult(), ctx);
  c.bytesWritten = bytes(getResult(), ctx);
  c.params = paramElems(getTable());
  c.kernels = 1;
  double ids = bytes(getIds(), ctx);
  setSaved(c, *this, ids, ids);
  return c;
}

LogicalResult PositionEmbeddingOp::verify() {
  auto x = rankedType(getX()), table = rankedType(getTable());
  if (failed(expectRank(*this, getX(), 3, "x")) ||
      failed(expectRank(*this, getTable(), 2, "table")))
    return failure();
  if (x.getDimSize(2) != table.getDimSize(1))
    return emitOpError() << "table width " << table.getDimSize(1)
                         << " does not match hidden size " << x.getDimSize(2);
  if (!ShapedType::isDynamic(x.getDimSize(1)) &&
      x.getDimSize(1) > table.getDimSize(0))
    return emitOpError() << "sequence " << x.getDimSize(1)
                         << " is longer than the table's "
                         << table.getDimSize(0) << " positions";
  if (getResult().getType() != getX().getType())
    return emitOpError() << "result type must equal x's type";
  return success();
}

OpCost PositionEmbeddingOp::getCost(const CostContext &ctx) {
  OpCost c;
  c.bytesRead = 2 * bytes(getX(), ctx);
  c.bytesWritten = bytes(getResult(), ctx);
  c.params = paramElems(getTable());
  c.kernels = 1;
  setSaved(c, *this, 0, 0);
  return c;
}

LogicalResult EmbeddingBagOp::verify() {
  if (failed(expectRank(*this, getIds(), 2, "ids")) ||
      failed(expectRank(*this, getTable(), 2, "table")) ||
      failed(expectRank(*this, getResult(), 2, "result")))
    return failure();
  if (rankedType(getResult()).getDimSize(1) !=
      rankedType(getTable()).getDimSize(1))
    return emitOpError() << "result width must equal the table width";
  return success();
}

OpCost EmbeddingBagOp::getCost(const CostContext &ctx) {
  OpCost c;
  // Every id reads one row.
  double rowBytes = rankedType(getTable()).getDimSize(1) *
                    elementBytes(getTable().getType());
  c.bytesRead = bytes(getIds(), ctx) + elems(getIds(), ctx) * rowBytes;
  c.bytesWritten = bytes(getResult(), ctx);
  c.params = paramElems(getTable());
  c.kernels = 1;
  double ids = bytes(getIds(), ctx);
  setSaved(c, *this, ids, ids);
  return c;
}

LogicalResult PatchEmbedOp::verify() {
  if (failed(expectRank(*this, getImage(), 4, "image")) ||
      failed(expectRank(*this, getWeight(), 2, "weight")) ||
      failed(expectRank(*this, getResult(), 3, "result")))
    return failure();
  auto img = rankedType(getImage());
  int64_t p = getPatchAttr().getInt();
  if (p <= 0)
    return emitOpError() << "patch must be positive, got " << p;
  if (img.getDimSize(2) % p != 0 || img.getDimSize(3) % p != 0)
    return emitOpError() << "image " << img.getDimSize(2) << "x"
                         << img.getDimSize(3)
                         << " is not a multiple of the patch " << p;
  int64_t k = img.getDimSize(1) * p * p;
  auto w = rankedType(getWeight());
  if (w.getDimSize(0) != k)
    return emitOpError() << "weight rows must be channels*patch*patch = " << k
                         << ", got " << w.getDimSize(0);
  auto res = rankedType(getResult());
  int64_t tokens = (img.getDimSize(2) / p) * (img.getDimSize(3) / p);
  if (res.getDimSize(1) != tokens || res.getDimSize(2) != w.getDimSize(1))
    return emitOpError() << "result must be batch x " << tokens << " x "
                         << w.getDimSize(1);
  return success();
}

OpCost PatchEmbedOp::getCost(const CostContext &ctx) {
  OpCost c;
  auto w = rankedType(getWeight());
  double m = elems(getResult(), ctx) / w.getDimSize(1);
  addMatmulFlops(c, m, w.getDimSize(1), w.getDimSize(0),
                 !isModelInput(getImage()));
  addTraffic(c, *this, ctx);
  c.params = operandParams(*this);
  c.kernels = 1;
  double kept = savedOnce(*this, getImage(), ctx);
  setSaved(c, *this, kept, kept);
  return c;
}

LogicalResult Conv2DOp::verify() {
  if (failed(expectRank(*this, getInput(), 4, "input")) ||
      failed(expectRank(*this, getWeight(), 4, "weight")) ||
      failed(expectRank(*this, getResult(), 4, "result")))
    return failure();
  if (getStrides().size() != 2 || getPadding().size() != 2)
    return emitOpError() << "strides and padding need two values each";
  for (int64_t s : getStrides())
    if (s <= 0)
      return emitOpError() << "strides must be positive";
  for (int64_t p : getPadding())
    if (p < 0)
      return emitOpError() << "padding must not be negative";
  auto in = rankedType(getInput()), w = rankedType(getWeight()),
       res = rankedType(getResult());
  if (w.getDimSize(1) != in.getDimSize(1))
    return emitOpError() << "weight input channels " << w.getDimSize(1)
                         << " do not match input channels "
                         << in.getDimSize(1);
  for (int i = 0; i < 2; ++i) {
    int64_t expect = (in.getDimSize(2 + i) + 2 * getPadding()[i] -
                      w.getDimSize(2 + i)) /
                         getStrides()[i] +
                     1;
    if (res.getDimSize(2 + i) != expect)
      return emitOpError() << "result spatial dimension " << i << " must be "
                           << expect << ", got " << res.getDimSize(2 + i);
  }
  if (res.getDimSize(1) != w.getDimSize(0))
    return emitOpError() << "result channels must equal weight outputs";
  return success();
}

OpCost Conv2DOp::getCost(const CostContext &ctx) {
  OpCost c;
  auto w = rankedType(getWeight());
  double outPositions = elems(getResult(), ctx) / w.getDimSize(0);
  double k = static_cast<double>(w.getDimSize(1)) * w.getDimSize(2) *
             w.getDimSize(3);
  addMatmulFlops(c, outPositions, w.getDimSize(0), k,
                 !isModelInput(getInput()));
  addTraffic(c, *this, ctx);
  c.params = operandParams(*this);
  c.kernels = 1;
  double kept = savedOnce(*this, getInput(), ctx);
  setSaved(c, *this, kept, kept);
  return c;
}

LogicalResult PrependTokenOp::verify() {
  if (failed(expectRank(*this, getX(), 3, "x")) ||
      failed(expectRank(*this, getToken(), 2, "token")))
    return failure();
  auto x = rankedType(getX()), tok = rankedType(getToken()),
       res = rankedType(getResult());
  if (tok.getDimSize(1) != x.getDimSize(2))
    return emitOpError() << "token width must equal the hidden size";
  if (!ShapedType::isDynamic(x.getDimSize(1)) &&
      res.getDimSize(1) != x.getDimSize(1) + tok.getDimSize(0))
    return emitOpError() << "result sequence must be x's plus "
                         << tok.getDimSize(0);
  return success();
}

OpCost PrependTokenOp::getCost(const CostContext &ctx) {
  OpCost c = pointwiseCost(*this, ctx, 0);
  c.params = operandParams(*this);
  return c;
}

LogicalResult SelectTokenOp::verify() {
  auto x = rankedType(getX());
  if (x.getRank() != 3)
    return emitOpError() << "x must have rank 3";
  if (getIndexAttr().getInt() < 0 || (!ShapedType::isDynamic(x.getDimSize(1)) &&
                         getIndexAttr().getInt() >= x.getDimSize(1)))
    return emitOpError() << "index " << getIndexAttr().getInt() << " is out of range";
  auto res = rankedType(getResult());
  if (res.getRank() != 2 || res.getDimSize(1) != x.getDimSize(2))
    return emitOpError() << "result must be batch x hidden";
  return success();
}

OpCost SelectTokenOp::getCost(const CostContext &ctx) {
  OpCost c;
  c.bytesRead = c.bytesWritten = bytes(getResult(), ctx);
  c.kernels = 1;
  setSaved(c, *this, 0, 0);
  return c;
}

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  auto x = rankedType(getX()), w = rankedType(getWeight()),
       res = rankedType(getResult());
  if (failed(expectRank(*this, getWeight(), 2, "weight")))
    return failure();
  if (x.getRank() < 1 || x.getShape().back() != w.getDimSize(1))
    return emitOpError() << "input features " << x.getShape().back()
                         << " do not match weight columns " << w.getDimSize(1);
  if (res.getRank() != x.getRank() || res.getShape().back() != w.getDimSize(0))
    return emitOpError() << "result must be (..., " << w.getDimSize(0) << ")";
  for (int64_t i = 0; i + 1 < x.getRank(); ++i)
    if (!dimsCompatible(x.getDimSize(i), res.getDimSize(i)))
      return emitOpError() << "result dimension " << i << " does not match x";
  if (getBias()) {
    auto b = rankedType(getBias());
    if (b.getRank() != 1 || b.getDimSize(0) != w.getDimSize(0))
      return emitOpError() << "bias must have " << w.getDimSize(0)
                           << " elements";
  }
  if (failed(expectSameElementType(*this, getX(), getWeight(), "weight")))
    return failure();
  return success();
}

OpCost LinearOp::getCost(const CostContext &ctx) {
  OpCost c;
  auto w = rankedType(getWeight());
  double m = elems(getX(), ctx) / w.getDimSize(1);
  addMatmulFlops(c, m, w.getDimSize(0), w.getDimSize(1),
                 !isModelInput(getX()));
  addTraffic(c, *this, ctx);
  c.params = operandParams(*this);
  c.kernels = 1;
  double kept = savedOnce(*this, getX(), ctx);
  setSaved(c, *this, kept, kept);
  if (inRepeatedLayer(*this))
    c.savedGemmInputBytes = kept;
  c.savedBf16TensorBytes = bf16TensorBytes(*this, {getX()}, ctx);
  return c;
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  auto a = rankedType(getLhs()), b = rankedType(getRhs()),
       res = rankedType(getResult());
  if (a.getRank() < 2 || b.getRank() != a.getRank() ||
      res.getRank() != a.getRank())
    return emitOpError() << "operands and result must have equal rank >= 2";
  int64_t r = a.getRank();
  if (!dimsCompatible(a.getDimSize(r - 1), b.getDimSize(r - 2)))
    return emitOpError() << "contraction sizes " << a.getDimSize(r - 1)
                         << " and " << b.getDimSize(r - 2) << " differ";
  if (!dimsCompatible(res.getDimSize(r - 2), a.getDimSize(r - 2)) ||
      !dimsCompatible(res.getDimSize(r - 1), b.getDimSize(r - 1)))
    return emitOpError() << "result must be (..., m, n)";
  for (int64_t i = 0; i + 2 < r; ++i)
    if (!dimsCompatible(a.getDimSize(i), b.getDimSize(i)))
      return emitOpError() << "batch dimension " << i << " differs";
  return success();
}

OpCost MatmulOp::getCost(const CostContext &ctx) {
  OpCost c;
  auto a = rankedType(getLhs());
  int64_t r = a.getRank();
  // result elements * k
  double k = ShapedType::isDynamic(a.getDimSize(r - 1))
                 ? (r - 1 == 1 ? ctx.seq : ctx.batch)
                 : a.getDimSize(r - 1);
  double f = 2.0 * elems(getResult(), ctx) * k;
  c.fwdFlops = f;
  c.bwdFlops = 2 * f;
  addTraffic(c, *this, ctx);
  c.params = operandParams(*this);
  c.kernels = 1;
  double kept = savedOnce(*this, getLhs(), ctx) +
                (getRhs() == getLhs() ? 0 : savedOnce(*this, getRhs(), ctx));
  setSaved(c, *this, kept, kept);
  return c;
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  int64_t h = getNumHeadsAttr().getInt(), kv = getNumKvHeadsAttr().getInt(), d = getHeadDimAttr().getInt(),
          dv = getValueHeadDim();
  if (h <= 0 || kv <= 0 || d <= 0 || dv <= 0)
    return emitOpError() << "num_heads, num_kv_heads, head_dim and "
                            "v_head_dim must be positive";
  if (h % kv != 0)
    return emitOpError() << "num_heads " << h
                         << " must be a multiple of num_kv_heads " << kv;
  if (getWindowAttr().getInt() < 0)
    return emitOpError() << "window must not be negative";
  if (getRotaryDimAttr().getInt() < 0 || getRotaryDimAttr().getInt() > d)
    return emitOpError() << "rotary_dim must be within [0, head_dim]";
  if (getDropout().convertToDouble() < 0.0 || getDropout().convertToDouble() >= 1.0)
    return emitOpError() << "dropout must be in [0, 1)";
  for (Value v : {getQ(), getK(), getV(), getResult()})
    if (rankedType(v).getRank() != 3)
      return emitOpError() << "q, k, v and the result must be batch x seq x "
                              "features";
  if (rankedType(getQ()).getDimSize(2) != h * d)
    return emitOpError() << "q width must be num_heads*head_dim = " << h * d;
  int64_t ropeShared = 0;
  if (getKRope()) {
    auto r = rankedType(getKRope());
    if (r.getRank() != 3 || r.getDimSize(2) <= 0 || r.getDimSize(2) >= d)
      return emitOpError() << "rope_key must be batch x seq x r with "
                              "0 < r < head_dim";
    ropeShared = r.getDimSize(2);
    if (getRotaryDimAttr().getInt() != ropeShared)
      return emitOpError() << "rope_key needs rotary_dim equal to its width "
                           << ropeShared << " (the rotated part of a head)";
  }
  if (getRopeInterleaved() && getRotaryDimAttr().getInt() == 0)
    return emitOpError() << "rope_interleaved needs rotary_dim > 0";
  if (FloatAttr sc = getSoftmaxScaleAttr();
      sc && !(sc.getValueAsDouble() > 0.0 && std::isfinite(sc.getValueAsDouble())))
    return emitOpError() << "softmax_scale must be a positive number";
  if (rankedType(getK()).getDimSize(2) != kv * (d - ropeShared))
    return emitOpError() << "k width must be num_kv_heads*(head_dim - "
                            "rope_key width) = "
                         << kv * (d - ropeShared);
  if (rankedType(getV()).getDimSize(2) != kv * dv)
    return emitOpError() << "v width must be num_kv_heads*v_head_dim = "
                         << kv * dv;
  if (rankedType(getResult()).getDimSize(2) != h * dv)
    return emitOpError() << "result width must be num_heads*v_head_dim = "
                         << h * dv;
  if (getSinks()) {
    auto s = rankedType(getSinks());
    if (s.getRank() != 1 || s.getDimSize(0) != h)
      return emitOpError() << "sinks must hold one logit per head (" << h
                           << ")";
  }
  if (DictionaryAttr rs = getRopeScalingAttr())
    return verifyRopeScaling(rs);
  return success();
}

LogicalResult AttentionOp::verifyRopeScaling(DictionaryAttr rs) {
  if (getRotaryDimAttr().getInt() == 0)
    return emitOpError() << "rope_scaling needs rotary_dim > 0";
  if (std::string why = ::trident::checkRopeScaling(rs); !why.empty())
    return emitOpError() << "rope_scaling " << why;
  return success();
}

OpCost AttentionOp::getCost(const CostContext &ctx) {
  OpCost c;
  double b = ctx.batch;
  auto q = rankedType(getQ());
  double s = ShapedType::isDynamic(q.getDimSize(1)) ? ctx.seq
                                                    : q.getDimSize(1);
  // Keys each query attends to: the whole sequence (causal masks are not
  // halved, Megatron convention) or the sliding window.
  double keys = getWindowAttr().getInt() > 0 ? std::min<double>(s, getWindowAttr().getInt()) : s;
  double h = getNumHeadsAttr().getInt(), d = getHeadDimAttr().getInt(), dv = getValueHeadDim();
  double scores = 2.0 * b * h * s * keys * d; // Q K^T
  double values = 2.0 * b * h * s * keys * dv; // P V
  c.fwdFlops = scores + values;
  c.bwdFlops = 2 * c.fwdFlops;
  c.attnCoreFlops = c.fwdFlops;
  addTraffic(c, *this, ctx);
  c.params = operandParams(*this);
  c.kernels = 1;
  // Korthikanti et al. 2022, Sec. 4.1: Q, K, V (the softmax inputs), the
  // softmax output (2 bytes x a s^2 b in 16-bit), and with dropout its mask
  // (1 byte) and its output (2 bytes).
  int64_t e = elementBytes(getQ().getType());
  // A tensor passed as several of q, k, v is kept once.
  double qkv = 0;
  SmallVector<Value, 4> kept;
  for (Value v : {getQ(), getK(), getV(), getKRope()})
    if (v && !llvm::is_contained(kept, v)) {
      kept.push_back(v);
      qkv += savedOnce(*this, v, ctx);
    }
  double probs = b * h * s * keys;
  double core = probs * e;
  if (getDropout().convertToDouble() > 0)
    core += probs * (1 + e);
  c.savedAttnCoreBytes = core;
  setSaved(c, *this, qkv + core, qkv);
  return c;
}

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

static LogicalResult verifyNorm(Operation *op, Value x, Value gamma,
                                Value beta, Value result) {
  auto xt = rankedType(x);
  auto g = rankedType(gamma);
  if (g.getRank() != 1)
    return op->emitOpError() << "gamma must be a vector";
  int64_t width = xt.getShape().back();
  if (ShapedType::isDynamic(width) || width % g.getDimSize(0) != 0)
    return op->emitOpError()
           << "last dimension " << width
           << " must be a multiple of the gamma size " << g.getDimSize(0);
  if (beta && rankedType(beta) != g)
    return op->emitOpError() << "beta must have gamma's type";
  if (result.getType() != x.getType())
    return op->emitOpError() << "result type must equal x's type";
  return success();
}

LogicalResult LayerNormOp::verify() {
  if (getEps().convertToDouble() <= 0)
    return emitOpError() << "eps must be positive";
  return verifyNorm(*this, getX(), getGamma(), getBeta(), getResult());
}
OpCost LayerNormOp::getCost(const CostContext &ctx) {
  OpCost c = pointwiseCost(*this, ctx, savedOnce(*this, getX(), ctx));
  c.params = operandParams(*this);
  return c;
}

LogicalResult RMSNormOp::verify() {
  if (getEps().convertToDouble() <= 0)
    return emitOpError() << "eps must be positive";
  return verifyNorm(*this, getX(), getGamma(), Value(), getResult());
}
OpCost RMSNormOp::getCost(const CostContext &ctx) {
  OpCost c = pointwiseCost(*this, ctx, savedOnce(*this, getX(), ctx));
  c.params = operandParams(*this);
  return c;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

#define TGRAPH_POINTWISE(OP, KEPT)                                            \
  OpCost OP::getCost(const CostContext &ctx) {                                 \
    return pointwiseCost(*this, ctx, KEPT);                                    \
  }

// A residual add needs nothing for its backward.
TGRAPH_POINTWISE(AddOp, 0)
TGRAPH_POINTWISE(MulOp, savedOnce(*this, getLhs(), ctx) +
                            savedOnce(*this, getRhs(), ctx))
#define TGRAPH_ACTIVATION(OP)                                                  \
  OpCost OP::getCost(const CostContext &ctx) {                                 \
    OpCost c = pointwiseCost(*this, ctx, savedOnce(*this, getX(), ctx));       \
    c.savedBf16TensorBytes = bf16TensorBytes(*this, {getX()}, ctx);            \
    return c;                                                                  \
  }
TGRAPH_ACTIVATION(GeluOp)
TGRAPH_ACTIVATION(SiluOp)
TGRAPH_ACTIVATION(ReluOp)
TGRAPH_ACTIVATION(SquaredReluOp)
#undef TGRAPH_ACTIVATION
// tanh's derivative reads its output.
TGRAPH_POINTWISE(TanhOp, bytes(getResult(), ctx))
OpCost SwiGLUOp::getCost(const CostContext &ctx) {
  OpCost c = pointwiseCost(*this, ctx,
                           savedOnce(*this, getGate(), ctx) +
                               savedOnce(*this, getUp(), ctx));
  c.savedBf16TensorBytes = bf16TensorBytes(*this, {getGate(), getUp()}, ctx);
  return c;
}
TGRAPH_POINTWISE(GeGLUOp, savedOnce(*this, getGate(), ctx) +
                              savedOnce(*this, getUp(), ctx))
TGRAPH_POINTWISE(SoftmaxOp, bytes(getResult(), ctx))
// Korthikanti et al. 2022: dropout keeps a one-byte mask per element.
TGRAPH_POINTWISE(DropoutOp, elems(getX(), ctx))
#undef TGRAPH_POINTWISE

LogicalResult DropoutOp::verify() {
  double r = getRate().convertToDouble();
  if (!(r >= 0.0 && r < 1.0))
    return emitOpError() << "rate must be in [0, 1), got " << r;
  return success();
}

//===----------------------------------------------------------------------===//
// MoEOp
//===----------------------------------------------------------------------===//

LogicalResult MoEOp::verify() {
  int64_t e = getNumExpertsAttr().getInt(), k = getTopKAttr().getInt();
  if (e <= 0 || k <= 0 || k > e)
    return emitOpError() << "need 0 < top_k <= num_experts, got top_k " << k
                         << " and " << e << " experts";
  auto x = rankedType(getX());
  if (x.getRank() != 3)
    return emitOpError() << "x must be batch x seq x hidden";
  int64_t h = x.getDimSize(2);
  auto r = rankedType(getRouter());
  if (r.getRank() != 2 || r.getDimSize(0) != h || r.getDimSize(1) != e)
    return emitOpError() << "router must be " << h << "x" << e;
  auto wi = rankedType(getWIn()), wo = rankedType(getWOut());
  if (wi.getRank() != 3 || wo.getRank() != 3 || wi.getDimSize(0) != e ||
      wo.getDimSize(0) != e)
    return emitOpError() << "expert weights must be experts x in x out";
  int64_t f = wo.getDimSize(1);
  int64_t fin = getGated() ? 2 * f : f;
  if (wi.getDimSize(1) != h || wi.getDimSize(2) != fin)
    return emitOpError() << "w_in must be " << e << "x" << h << "x" << fin;
  if (wo.getDimSize(2) != h)
    return emitOpError() << "w_out must be " << e << "x" << f << "x" << h;
  if ((getBIn() == nullptr) != (getBOut() == nullptr))
    return emitOpError() << "expert biases come in pairs";
  if (getRouterBias() && rankedType(getRouterBias()).getNumElements() != e)
    return emitOpError() << "router bias must have " << e << " elements";
  if (getSelectionBias() && !getRouterBias())
    return emitOpError() << "selection_bias needs a router bias";
  if (std::string why = ::trident::checkExpertGroups(
          e, k, getNumGroupsAttr().getInt(), getTopkGroupsAttr().getInt());
      !why.empty())
    return emitOpError() << "num_groups / topk_groups: " << why;
  const double scale = getRoutedScaleAttr().getValueAsDouble();
  if (!std::isfinite(scale) || scale <= 0.0)
    return emitOpError() << "routed_scale must be a positive number";
  if (auto limit = getSwigluLimitAttr()) {
    double v = limit.getValueAsDouble();
    if (!std::isfinite(v) || v <= 0.0 || !getGated() ||
        getActivation() != ActKind::Silu)
      return emitOpError() << "swiglu_limit must be a positive number on "
                              "gated silu experts";
  }
  if (getResult().getType() != getX().getType())
    return emitOpError() << "result type must equal x's type";
  return success();
}

OpCost MoEOp::getCost(const CostContext &ctx) {
  OpCost c;
  auto x = rankedType(getX());
  double h = x.getDimSize(2);
  double tokens = elems(getX(), ctx) / h;
  double e = getNumExpertsAttr().getInt(), k = getTopKAttr().getInt();
  double fin = rankedType(getWIn()).getDimSize(2);
  double f = rankedType(getWOut()).getDimSize(1);
  int64_t eb = elementBytes(getX().getType());
  // Router, then each token through its top-k experts (balanced routing).
  addMatmulFlops(c, tokens, e, h, true);
  addMatmulFlops(c, tokens * k, fin, h, true);
  addMatmulFlops(c, tokens * k, h, f, true);
  addTraffic(c, *this, ctx);
  c.params = operandParams(*this);
  c.kernels = 6;
  // Kept: the input, router probabilities (fp32), the dispatched tokens,
  // the expert pre-activation and the activation output (what the dense
  // MLP keeps, for each of the k copies of a token).
  double kept = savedOnce(*this, getX(), ctx) + tokens * e * 4 +
                tokens * k * (h + fin + f) * eb;
  setSaved(c, *this, kept, kept);
  // The dispatched tokens and the activation output feed the expert
  // GEMMs; the input feeds the router, the pre-activation the activation.
  if (inRepeatedLayer(*this))
    c.savedGemmInputBytes = tokens * k * (h + f) * eb;
  return c;
}

//===----------------------------------------------------------------------===//
// Losses and interaction
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::verify() {
  auto logits = rankedType(getLogits()), labels = rankedType(getLabels());
  if (labels.getRank() + 1 != logits.getRank())
    return emitOpError() << "labels must have the logits' rank minus one";
  for (int64_t i = 0; i < labels.getRank(); ++i)
    if (!dimsCompatible(labels.getDimSize(i), logits.getDimSize(i)))
      return emitOpError() << "labels dimension " << i
                           << " does not match the logits";
  return success();
}

OpCost CrossEntropyOp::getCost(const CostContext &ctx) {
  OpCost c;
  addTraffic(c, *this, ctx);
  c.kernels = 1;
  // Korthikanti et al. 2022, Sec. 4.1: the loss keeps the logits in fp32.
  double kept = elems(getLogits(), ctx) * 4 + bytes(getLabels(), ctx);
  setSaved(c, *this, kept, kept);
  return c;
}

LogicalResult BinaryCrossEntropyOp::verify() {
  if (getLogits().getType() != getLabels().getType())
    return emitOpError() << "labels must have the logits' type";
  return success();
}
OpCost BinaryCrossEntropyOp::getCost(const CostContext &ctx) {
  OpCost c;
  addTraffic(c, *this, ctx);
  c.kernels = 1;
  double kept = bytes(getLogits(), ctx) + bytes(getLabels(), ctx);
  setSaved(c, *this, kept, kept);
  return c;
}

LogicalResult DotInteractionOp::verify() {
  auto feats = getFeatures();
  if (feats.size() < 2)
    return emitOpError() << "needs at least two features";
  auto first = rankedType(feats[0]);
  if (first.getRank() != 2)
    return emitOpError() << "features must be batch x dim";
  for (Value f : feats)
    if (f.getType() != feats[0].getType())
      return emitOpError() << "all features must have one type";
  int64_t n = feats.size();
  int64_t expect = first.getDimSize(1) + n * (n - 1) / 2;
  auto res = rankedType(getResult());
  if (res.getRank() != 2 || res.getDimSize(1) != expect)
    return emitOpError() << "result must be batch x " << expect;
  return success();
}

OpCost DotInteractionOp::getCost(const CostContext &ctx) {
  OpCost c;
  double n = getFeatures().size();
  double d = rankedType(getFeatures()[0]).getDimSize(1);
  // (n x d) x (d x n) per sample, DLRM (Naumov et al. 2019).
  c.fwdFlops = 2.0 * ctx.batch * n * n * d;
  c.bwdFlops = 2 * c.fwdFlops;
  addTraffic(c, *this, ctx);
  c.kernels = 2;
  double kept = 0;
  for (Value f : getFeatures())
    kept += savedOnce(*this, f, ctx);
  setSaved(c, *this, kept, kept);
  return c;
}

#define GET_OP_CLASSES
#include "dialects/Graph/IR/GraphOps.cpp.inc"

#include "dialects/Graph/IR/GraphInterfaces.cpp.inc"
