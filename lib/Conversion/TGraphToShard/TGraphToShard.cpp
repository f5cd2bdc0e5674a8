//===- TGraphToShard.cpp - trident-export-shard ---------------------------===//
//
// Writes a planned tgraph model as upstream-only IR: linalg/tensor/arith/math
// for the computation and shard.grid/shard.sharding/shard.shard for the plan,
// so that upstream `mlir-opt --sharding-propagation --shard-partition` turns
// it into per-device programs. Every op becomes linalg.generic (or
// linalg.fill) because those implement upstream's ShardingInterface; the
// rationale for each lowering and the limits are in docs/shard-export.md.
//
//===----------------------------------------------------------------------===//

#include "trident/Conversion/Passes.h"

#include "trident/Conversion/PlanAttr/PlanAttr.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <map>

#define DEBUG_TYPE "trident-export-shard"

namespace mlir::trident {
#define GEN_PASS_DEF_EXPORTSHARDPASS
#include "trident/Conversion/Passes.h.inc"
} // namespace mlir::trident

using namespace mlir;
using namespace mlir::trident::graph;

namespace {

constexpr StringLiteral kPass = "trident-export-shard";
constexpr StringLiteral kGrid = "grid";

/// Grid axes of one tensor dimension (empty: not split).
using DimAxes = SmallVector<shard::GridAxis, 2>;
/// A sharding: one entry per tensor dimension (trailing entries may be
/// omitted, as in upstream's syntax).
using Spec = SmallVector<DimAxes, 4>;

/// The plan fields the export needs.
struct PlanView {
  int64_t dp = 1, tp = 1, pp = 1, cp = 1, vpp = 1, microBatch = 1;
  bool sp = false;
  SmallVector<int64_t> layersPerChunk;
};

/// Upstream's linalg reduction matcher wants the accumulator combined
/// directly; every reduction body below has that form.
using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// A value of the exported function together with the chunk it lives in.
struct Placed {
  Value value;
  int64_t chunk = 0;
};

class Exporter {
public:
  Exporter(ModuleOp module, ModelOp model, const PlanView &plan, int64_t batch,
           int64_t seq)
      : module(module), model(model), plan(plan), batch(batch), seq(seq),
        b(module.getContext()) {
    int16_t next = 0;
    if (plan.dp > 1)
      dpAxis = next++;
    if (plan.cp > 1)
      cpAxis = next++;
    if (plan.tp > 1)
      tpAxis = next++;
  }

  LogicalResult run();

private:
  //===--- Structure ------------------------------------------------------===//
  LogicalResult emitBlock(Block &block, int64_t layer);
  LogicalResult emitOp(Operation *op, int64_t layer);
  void enterChunk(int64_t chunk);
  func::FuncOp chunkFunc(int64_t chunk);
  /// The exported value of tgraph value `v` in the current chunk.
  FailureOr<Value> get(Value v);
  /// A parameter or input used in the current chunk, as `type` (a reshaped
  /// view for head-structured weights), annotated for its users with `spec`.
  FailureOr<Value> leaf(Value v, RankedTensorType type, const Spec &spec,
                        Operation *user);

  //===--- Types and shardings --------------------------------------------===//
  RankedTensorType bind(Type t);
  Spec actSpec(int64_t rank, DimAxes last, bool residual) const;
  DimAxes axes(std::initializer_list<int16_t> list) const;
  /// `op`'s operand `operand` split over tp where tensorParallelDim says
  /// (GraphOps.h), else whole: a one-dimension spec at least.
  Spec tpSpec(Operation *op, unsigned operand) const;
  LogicalResult checkDivides(Operation *at, RankedTensorType t, const Spec &s,
                             StringRef what);
  FailureOr<Value> annotate(Operation *at, Value v, const Spec &s,
                            bool forUsers, StringRef what);

  //===--- Building blocks ------------------------------------------------===//
  Value filled(ArrayRef<int64_t> shape, Type elt, double value);
  Value empty(ArrayRef<int64_t> shape, Type elt);
  AffineMap map(unsigned loops, ArrayRef<unsigned> dims);
  Value generic(ArrayRef<Value> ins, Value init,
                ArrayRef<SmallVector<unsigned>> inDims,
                ArrayRef<unsigned> outDims,
                ArrayRef<utils::IteratorType> iters, BodyFn body);
  Value constF(OpBuilder &ob, Location l, Type t, double v);
  /// `iota[v] = v` over `size` elements of `elt`, pinned replicated so that
  /// the partitioner slices it instead of recomputing local indices.
  FailureOr<Value> iota(Operation *at, int64_t size, Type elt);

  //===--- Ops ------------------------------------------------------------===//
  LogicalResult emitLinear(LinearOp op);
  LogicalResult emitAttention(AttentionOp op);
  LogicalResult emitNorm(Operation *op, Value x, Value gamma, Value beta,
                         double eps, bool rms, bool zeroCentered);
  LogicalResult emitEmbedding(EmbeddingOp op);
  LogicalResult emitPositionEmbedding(PositionEmbeddingOp op);
  LogicalResult emitCrossEntropy(CrossEntropyOp op);
  LogicalResult emitElementwise(Operation *op);
  LogicalResult emitSoftmax(SoftmaxOp op);
  LogicalResult emitMatmul(MatmulOp op);

  InFlightDiagnostic error(Operation *op) {
    return op->emitError() << kPass << ": ";
  }

  ModuleOp module;
  ModelOp model;
  PlanView plan;
  int64_t batch, seq;
  OpBuilder b;
  int16_t dpAxis = -1, cpAxis = -1, tpAxis = -1;

  std::vector<int64_t> chunkOfLayer;
  SmallVector<func::FuncOp> funcs;
  int64_t current = 0;
  /// tgraph value -> exported value (per expanded layer: body values are
  /// remapped on every iteration).
  DenseMap<Value, Placed> values;
  /// Head-structured views: the exported value of a q/k/v projection or
  /// of the attention output, (b, s, kv[, g], d), keyed by the tgraph value.
  DenseMap<Value, Placed> heads;
  /// Layer index of each tgraph.param / tgraph.input value in scope.
  DenseMap<Value, int64_t> leafLayer;
  /// (chunk, tgraph value, type, layer) -> function argument.
  std::map<std::tuple<int64_t, void *, const void *, int64_t>, Value> leafArgs;
  /// (chunk, exported value) -> argument carrying it from an earlier chunk.
  DenseMap<std::pair<int64_t, Value>, Value> carried;
  /// Per chunk: values it returns for later chunks, in order.
  SmallVector<llvm::SetVector<Value>> outputs;
  Value loss;
};

//===----------------------------------------------------------------------===//
// Types and shardings
//===----------------------------------------------------------------------===//

RankedTensorType Exporter::bind(Type t) {
  auto rt = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape(rt.getShape());
  if (!shape.empty() && ShapedType::isDynamic(shape[0]))
    shape[0] = batch;
  if (shape.size() > 1 && ShapedType::isDynamic(shape[1]))
    shape[1] = seq;
  return RankedTensorType::get(shape, rt.getElementType());
}

DimAxes Exporter::axes(std::initializer_list<int16_t> list) const {
  DimAxes out;
  for (int16_t a : list)
    if (a >= 0)
      out.push_back(a);
  return out;
}

Spec Exporter::tpSpec(Operation *op, unsigned operand) const {
  std::optional<int64_t> dim = tensorParallelDim(op, operand);
  Spec s(dim ? size_t(*dim) + 1 : 1);
  if (dim)
    s[size_t(*dim)] = axes({tpAxis});
  return s;
}

/// Activations: batch over dp; for rank >= 3 the sequence over cp (and tp
/// in the sequence-parallel regions when `residual`); `last` on the last dim.
Spec Exporter::actSpec(int64_t rank, DimAxes last, bool residual) const {
  Spec s(rank);
  if (rank >= 1)
    s[0] = axes({dpAxis});
  if (rank >= 3)
    s[1] = residual && plan.sp ? axes({cpAxis, tpAxis}) : axes({cpAxis});
  if (rank >= 2 && !last.empty())
    s[rank - 1] = last;
  return s;
}

LogicalResult Exporter::checkDivides(Operation *at, RankedTensorType t,
                                     const Spec &s, StringRef what) {
  auto size = [&](shard::GridAxis a) {
    return a == dpAxis ? plan.dp : a == cpAxis ? plan.cp : plan.tp;
  };
  auto name = [&](shard::GridAxis a) {
    return a == dpAxis ? "dp" : a == cpAxis ? "cp" : "tp";
  };
  for (auto [dim, dimAxes] : llvm::enumerate(s)) {
    int64_t parts = 1;
    std::string names;
    for (shard::GridAxis a : dimAxes) {
      parts *= size(a);
      names += (names.empty() ? "" : "*") + std::string(name(a));
    }
    if (parts > 1 && t.getDimSize(dim) % parts != 0)
      return error(at) << "dimension " << dim << " of " << what << " ("
                       << t << ") has size " << t.getDimSize(dim)
                       << ", not divisible by " << names << " = " << parts;
  }
  return success();
}

FailureOr<Value> Exporter::annotate(Operation *at, Value v, const Spec &s,
                                    bool forUsers, StringRef what) {
  auto t = cast<RankedTensorType>(v.getType());
  if (failed(checkDivides(at, t, s, what)))
    return failure();
  SmallVector<shard::GridAxesAttr> split;
  for (const DimAxes &d : s)
    split.push_back(b.getDenseI16ArrayAttr(d));
  // Upstream's parser needs at least one (possibly empty) entry.
  if (split.empty())
    split.push_back(b.getDenseI16ArrayAttr({}));
  Location loc = at->getLoc();
  Value sharding = shard::ShardingOp::create(
      b, loc, FlatSymbolRefAttr::get(b.getContext(), kGrid), split);
  return shard::ShardOp::create(b, loc, v, sharding, forUsers).getResult();
}

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

Value Exporter::constF(OpBuilder &ob, Location l, Type t, double v) {
  return arith::ConstantOp::create(ob, l, t, ob.getFloatAttr(t, v));
}

Value Exporter::empty(ArrayRef<int64_t> shape, Type elt) {
  return tensor::EmptyOp::create(b, model.getLoc(), shape, elt);
}

Value Exporter::filled(ArrayRef<int64_t> shape, Type elt, double value) {
  Location loc = model.getLoc();
  Value c = constF(b, loc, elt, value);
  return linalg::FillOp::create(b, loc, c, empty(shape, elt)).getResult(0);
}

AffineMap Exporter::map(unsigned loops, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(b.getAffineDimExpr(d));
  return AffineMap::get(loops, 0, exprs, b.getContext());
}

Value Exporter::generic(ArrayRef<Value> ins, Value init,
                        ArrayRef<SmallVector<unsigned>> inDims,
                        ArrayRef<unsigned> outDims,
                        ArrayRef<utils::IteratorType> iters, BodyFn body) {
  unsigned loops = iters.size();
  SmallVector<AffineMap> maps;
  for (const auto &d : inDims)
    maps.push_back(map(loops, d));
  maps.push_back(map(loops, outDims));
  auto op = linalg::GenericOp::create(
      b, model.getLoc(), TypeRange{init.getType()}, ValueRange(ins),
      ValueRange{init}, maps, iters,
      [&](OpBuilder &ob, Location l, ValueRange args) {
        linalg::YieldOp::create(ob, l, body(ob, l, args));
      });
  return op.getResult(0);
}

FailureOr<Value> Exporter::iota(Operation *at, int64_t size, Type elt) {
  Value e = empty({size}, elt);
  Value r = generic({}, e, {}, {0}, {utils::IteratorType::parallel},
                    [&](OpBuilder &ob, Location l, ValueRange) -> Value {
                      Value i = linalg::IndexOp::create(ob, l, 0);
                      if (isa<IndexType>(elt))
                        return i;
                      return arith::IndexCastOp::create(ob, l, elt, i);
                    });
  return annotate(at, r, Spec(1), /*forUsers=*/false, "an index vector");
}

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

func::FuncOp Exporter::chunkFunc(int64_t chunk) { return funcs[chunk]; }

void Exporter::enterChunk(int64_t chunk) {
  current = chunk;
  Block &entry = funcs[chunk].getBody().front();
  b.setInsertionPointToEnd(&entry);
}

FailureOr<Value> Exporter::get(Value v) {
  auto it = values.find(v);
  if (it == values.end()) {
    Operation *def = v.getDefiningOp();
    // A model input used directly as an activation (features, images).
    if (auto in = dyn_cast_or_null<InputOp>(def)) {
      RankedTensorType t = bind(in.getType());
      return leaf(v, t, actSpec(t.getRank(), {}, true), def);
    }
    return (def ? error(def) : model->emitError())
           << "a value is used before the exporter produced it (from "
           << (def ? def->getName().getStringRef() : StringRef("an argument"))
           << "): this op is used in a form the export does not support";
  }
  Placed p = it->second;
  if (p.chunk == current)
    return p.value;
  // An activation from an earlier pipeline chunk: that chunk returns it,
  // this one takes it as an argument.
  auto key = std::make_pair(current, p.value);
  auto found = carried.find(key);
  if (found != carried.end())
    return found->second;
  outputs[p.chunk].insert(p.value);
  func::FuncOp f = chunkFunc(current);
  Value arg = f.getBody().front().addArgument(p.value.getType(), v.getLoc());
  carried[key] = arg;
  return arg;
}

FailureOr<Value> Exporter::leaf(Value v, RankedTensorType type,
                                const Spec &spec, Operation *user) {
  Operation *def = v.getDefiningOp();
  if (!def || !isa<ParamOp, InputOp>(def))
    return error(user) << "expected a tgraph.param or tgraph.input operand";
  auto layerIt = leafLayer.find(v);
  int64_t layerOf = layerIt == leafLayer.end() ? -1 : layerIt->second;
  auto key = std::make_tuple(current, v.getAsOpaquePointer(),
                             type.getAsOpaquePointer(), layerOf);
  Value arg;
  auto it = leafArgs.find(key);
  if (it != leafArgs.end()) {
    arg = it->second;
  } else {
    func::FuncOp f = chunkFunc(current);
    unsigned idx = f.getBody().front().getNumArguments();
    arg = f.getBody().front().addArgument(type, def->getLoc());
    SmallVector<NamedAttribute> attrs;
    if (auto p = dyn_cast<ParamOp>(def)) {
      attrs.push_back(b.getNamedAttr("trident.param", p.getNameAttr()));
      if (layerOf >= 0)
        attrs.push_back(
            b.getNamedAttr("trident.layer", b.getI64IntegerAttr(layerOf)));
      if (type.getShape() != cast<RankedTensorType>(v.getType()).getShape())
        attrs.push_back(b.getNamedAttr(
            "trident.model_type", TypeAttr::get(v.getType())));
    } else {
      attrs.push_back(b.getNamedAttr(
          "trident.input", cast<InputOp>(def).getNameAttr()));
    }
    // Arguments are appended as they are first used; their attributes are
    // set once the function type is final (run()).
    arg.getParentBlock()->getParentOp()->setAttr(
        ("trident.arg" + Twine(idx)).str(), b.getDictionaryAttr(attrs));
    leafArgs[key] = arg;
  }
  std::string what = "'";
  if (auto p = dyn_cast<ParamOp>(def))
    what += p.getName().str();
  else
    what += cast<InputOp>(def).getName().str();
  what += "'";
  return annotate(user, arg, spec, /*forUsers=*/true, what);
}

LogicalResult Exporter::emitBlock(Block &block, int64_t layer) {
  for (Operation &op : block)
    if (failed(emitOp(&op, layer)))
      return failure();
  return success();
}

LogicalResult Exporter::run() {
  MLIRContext *ctx = module.getContext();
  // The layer -> chunk map of the plan, checked against the model.
  for (auto [c, n] : llvm::enumerate(plan.layersPerChunk))
    for (int64_t i = 0; i < n; ++i)
      chunkOfLayer.push_back(int64_t(c));
  int64_t modelLayers = 0;
  for (Operation &op : model.getBody().front())
    if (auto r = dyn_cast<RepeatOp>(op))
      modelLayers += r.getCountAttr().getInt();
  if (int64_t(chunkOfLayer.size()) != modelLayers)
    return model.emitError()
           << kPass << ": the plan splits " << chunkOfLayer.size()
           << " layers into pipeline chunks but the model has " << modelLayers
           << " repeated layers: the plan was made for another model";
  if (batch % plan.dp != 0)
    return model.emitError() << kPass << ": batch " << batch
                             << " is not divisible by dp = " << plan.dp;

  // The grid: one axis per parallel dimension larger than one, in the order
  // dp, cp, tp (tp last: its ranks are the closest, as in Megatron).
  SmallVector<int64_t> shape;
  SmallVector<Attribute> names;
  for (auto [n, size] : {std::pair<StringRef, int64_t>{"dp", plan.dp},
                         {"cp", plan.cp},
                         {"tp", plan.tp}})
    if (size > 1) {
      shape.push_back(size);
      names.push_back(b.getStringAttr(n));
    }
  if (shape.empty()) {
    shape.push_back(1);
    names.push_back(b.getStringAttr("dp"));
  }
  b.setInsertionPoint(model);
  if (!module.lookupSymbol(kGrid)) {
    auto grid = shard::GridOp::create(b, model.getLoc(), b.getStringAttr(kGrid),
                                      b.getDenseI64ArrayAttr(shape));
    grid->setAttr("trident.axes", b.getArrayAttr(names));
  }

  // One function per pipeline chunk.
  int64_t chunks = std::max<int64_t>(1, plan.layersPerChunk.size());
  outputs.resize(chunks);
  std::string base = model.getSymName().str();
  for (int64_t c = 0; c < chunks; ++c) {
    std::string name = base;
    if (chunks > 1) {
      name += "_stage" + std::to_string(c % plan.pp);
      if (plan.vpp > 1)
        name += "_chunk" + std::to_string(c);
    }
    auto f = func::FuncOp::create(b, model.getLoc(), name,
                                  FunctionType::get(ctx, {}, {}));
    f->setAttr("trident.pipeline_stage", b.getI64IntegerAttr(c % plan.pp));
    f->setAttr("trident.chunk", b.getI64IntegerAttr(c));
    f.addEntryBlock();
    funcs.push_back(f);
  }
  enterChunk(0);
  if (failed(emitBlock(model.getBody().front(), /*layer=*/-1)))
    return failure();

  // Returns and final signatures.
  for (int64_t c = 0; c < chunks; ++c) {
    func::FuncOp f = funcs[c];
    Block &entry = f.getBody().front();
    b.setInsertionPointToEnd(&entry);
    SmallVector<Value> results(outputs[c].begin(), outputs[c].end());
    if (c == chunks - 1 && loss)
      results.push_back(loss);
    func::ReturnOp::create(b, model.getLoc(), results);
    f.setType(FunctionType::get(ctx, entry.getArgumentTypes(),
                                ValueRange(results).getTypes()));
    for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
      std::string key = "trident.arg" + std::to_string(i);
      if (auto d = f->getAttrOfType<DictionaryAttr>(key)) {
        f.setArgAttrs(i, d.getValue());
        f->removeAttr(key);
      }
    }
    // Carried activations: name the chunk that produced them.
    for (auto [key, arg] : carried) {
      if (key.first != c)
        continue;
      for (int64_t src = 0; src < c; ++src)
        if (outputs[src].contains(key.second))
          f.setArgAttr(cast<BlockArgument>(arg).getArgNumber(),
                       "trident.from_chunk", b.getI64IntegerAttr(src));
    }
  }
  model.erase();
  return success();
}

LogicalResult Exporter::emitOp(Operation *op, int64_t layer) {
  if (auto p = dyn_cast<ParamOp>(op)) {
    leafLayer[p.getResult()] = layer;
    return success();
  }
  if (auto in = dyn_cast<InputOp>(op)) {
    leafLayer[in.getResult()] = -1;
    return success();
  }
  if (auto out = dyn_cast<OutputOp>(op)) {
    auto l = get(out.getLoss());
    if (failed(l))
      return failure();
    loss = *l;
    return success();
  }
  if (auto r = dyn_cast<RepeatOp>(op)) {
    if (layer >= 0)
      return error(op) << "nested tgraph.repeat is not supported";
    // Layers before this repeat: count the iterations of earlier repeats.
    int64_t first = 0;
    for (Operation &prev : model.getBody().front()) {
      if (&prev == op)
        break;
      if (auto pr = dyn_cast<RepeatOp>(prev))
        first += pr.getCountAttr().getInt();
    }
    Block &body = r.getBody().front();
    SmallVector<Value> carry;
    for (Value init : r.getInits())
      carry.push_back(init);
    for (int64_t i = 0, n = r.getCountAttr().getInt(); i < n; ++i) {
      int64_t global = first + i;
      enterChunk(chunkOfLayer[global]);
      for (auto [arg, v] : llvm::zip(body.getArguments(), carry)) {
        auto e = get(v);
        if (failed(e))
          return failure();
        values[arg] = {*e, current};
      }
      for (Operation &inner : body.without_terminator())
        if (failed(emitOp(&inner, global)))
          return failure();
      auto yield = cast<YieldOp>(body.getTerminator());
      carry.clear();
      // Layer outputs are the residual stream: pin their sharding so that
      // propagation has an anchor in every layer.
      for (Value y : yield.getValues()) {
        auto e = get(y);
        if (failed(e))
          return failure();
        Value v = *e;
        auto t = cast<RankedTensorType>(v.getType());
        auto s = annotate(op, v, actSpec(t.getRank(), {}, /*residual=*/true),
                          false, "a layer output");
        if (failed(s))
          return failure();
        values[y] = {*s, current};
        carry.push_back(y);
      }
    }
    for (auto [res, y] : llvm::zip(r.getResults(), carry))
      values[res] = values[y];
    return success();
  }
  if (auto l = dyn_cast<LinearOp>(op))
    return emitLinear(l);
  if (auto a = dyn_cast<AttentionOp>(op))
    return emitAttention(a);
  if (auto n = dyn_cast<LayerNormOp>(op))
    return emitNorm(op, n.getX(), n.getGamma(), n.getBeta(),
                    n.getEpsAttr().getValueAsDouble(), /*rms=*/false,
                    n.getZeroCentered());
  if (auto n = dyn_cast<RMSNormOp>(op))
    return emitNorm(op, n.getX(), n.getGamma(), Value(),
                    n.getEpsAttr().getValueAsDouble(), /*rms=*/true, false);
  if (auto e = dyn_cast<EmbeddingOp>(op))
    return emitEmbedding(e);
  if (auto e = dyn_cast<PositionEmbeddingOp>(op))
    return emitPositionEmbedding(e);
  if (auto c = dyn_cast<CrossEntropyOp>(op))
    return emitCrossEntropy(c);
  if (auto s = dyn_cast<SoftmaxOp>(op))
    return emitSoftmax(s);
  if (auto m = dyn_cast<MatmulOp>(op))
    return emitMatmul(m);
  if (isa<AddOp, MulOp, GeluOp, SiluOp, ReluOp, SquaredReluOp, TanhOp, SwiGLUOp,
          GeGLUOp, DropoutOp>(op))
    return emitElementwise(op);
  return error(op) << "'" << op->getName()
                   << "' has no shard export (supported: linear, attention "
                      "without rotary/window/sinks/latent keys, layer_norm, "
                      "rms_norm, embedding, position_embedding, "
                      "cross_entropy, softmax, matmul, add, mul, gelu, silu, "
                      "relu, squared_relu, tanh, swiglu, geglu, dropout)";
}

//===----------------------------------------------------------------------===//
// Dense ops
//===----------------------------------------------------------------------===//

/// Whether `v` feeds an attention op as q, k or v (then the projection is
/// emitted head-structured).
static bool feedsAttention(Value v) {
  return llvm::any_of(v.getUsers(),
                      [](Operation *u) { return isa<AttentionOp>(u); });
}

LogicalResult Exporter::emitLinear(LinearOp op) {
  using IT = utils::IteratorType;
  auto par = IT::parallel, red = IT::reduction;
  RankedTensorType wT = cast<RankedTensorType>(op.getWeight().getType());
  int64_t out = wT.getDimSize(0), in = wT.getDimSize(1);
  Type elt = wT.getElementType();
  TpRole role = op.getTpRole();
  auto add = [](OpBuilder &ob, Location l, ValueRange a) -> Value {
    Value p = arith::MulFOp::create(ob, l, a[0], a[1]);
    return arith::AddFOp::create(ob, l, a[2], p);
  };
  auto addBias = [](OpBuilder &ob, Location l, ValueRange a) -> Value {
    return arith::AddFOp::create(ob, l, a[0], a[1]);
  };

  // Column-parallel q/k/v projection into (b, s, kv[, g], d).
  if (feedsAttention(op.getResult())) {
    AttentionOp attn;
    for (Operation *u : op.getResult().getUsers())
      attn = dyn_cast<AttentionOp>(u);
    if (!llvm::all_of(op.getResult().getUsers(),
                      [](Operation *u) { return isa<AttentionOp>(u); }))
      return error(op) << "a q/k/v projection used outside attention";
    bool isQ = attn.getQ() == op.getResult();
    bool isV = attn.getV() == op.getResult();
    int64_t kv = attn.getNumKvHeads(), g = attn.getNumHeads() / kv;
    int64_t d = isV ? attn.getValueHeadDim() : attn.getHeadDim();
    SmallVector<int64_t> headShape = {kv};
    if (isQ && g > 1)
      headShape.push_back(g);
    headShape.push_back(d);
    int64_t nh = headShape.size(); // head dims incl. d
    int64_t product = 1;
    for (int64_t e : headShape)
      product *= e;
    if (product != out)
      return error(op) << "a q/k/v projection of " << out
                       << " features does not match the attention's heads ("
                       << product << ")";
    auto xv = get(op.getX());
    if (failed(xv))
      return failure();
    auto xT = cast<RankedTensorType>(xv->getType());
    if (xT.getRank() != 3)
      return error(op) << "a q/k/v projection needs a (batch, seq, hidden) input";
    auto x = annotate(op, *xv, actSpec(3, {}, false), true, "the projection input");
    if (failed(x))
      return failure();
    SmallVector<int64_t> wShape(headShape);
    wShape.push_back(in);
    auto w = leaf(op.getWeight(), RankedTensorType::get(wShape, elt),
                  Spec{axes({tpAxis})}, op);
    if (failed(w))
      return failure();
    // Loops: b, s, heads..., i.
    unsigned loops = 2 + nh + 1;
    SmallVector<unsigned> xDims = {0, 1, loops - 1}, wDims, yDims = {0, 1};
    for (unsigned k = 0; k < nh; ++k) {
      wDims.push_back(2 + k);
      yDims.push_back(2 + k);
    }
    wDims.push_back(loops - 1);
    SmallVector<IT> iters(loops - 1, par);
    iters.push_back(red);
    SmallVector<int64_t> yShape = {batch, seq};
    yShape.append(headShape);
    Value y = generic({*x, *w}, filled(yShape, elt, 0.0), {xDims, wDims},
                      yDims, iters, add);
    if (op.getBias()) {
      auto bv = leaf(op.getBias(), RankedTensorType::get(headShape, elt),
                     Spec{axes({tpAxis})}, op);
      if (failed(bv))
        return failure();
      SmallVector<unsigned> all, bDims;
      for (unsigned k = 0; k < 2 + nh; ++k)
        all.push_back(k);
      for (unsigned k = 0; k < nh; ++k)
        bDims.push_back(2 + k);
      y = generic({y, *bv}, empty(yShape, elt), {all, bDims}, all,
                  SmallVector<IT>(2 + nh, par), addBias);
    }
    Spec ys = {axes({dpAxis}), axes({cpAxis}), axes({tpAxis})};
    auto ya = annotate(op, y, ys, false, "a q/k/v projection");
    if (failed(ya))
      return failure();
    heads[op.getResult()] = {*ya, current};
    return success();
  }

  // Row-parallel attention output projection from (b, s, kv[, g], dv).
  auto hv = heads.find(op.getX());
  if (hv != heads.end()) {
    if (hv->second.chunk != current)
      return error(op) << "attention and its output projection must be in "
                          "the same pipeline chunk";
    Value xh = hv->second.value;
    auto xT = cast<RankedTensorType>(xh.getType());
    SmallVector<int64_t> headShape(xT.getShape().drop_front(2));
    unsigned nh = headShape.size();
    Spec xs = {axes({dpAxis}), axes({cpAxis}), axes({tpAxis})};
    auto x = annotate(op, xh, xs, true, "the attention output");
    if (failed(x))
      return failure();
    SmallVector<int64_t> wShape = {out};
    wShape.append(headShape);
    auto w = leaf(op.getWeight(), RankedTensorType::get(wShape, elt),
                  Spec{{}, axes({tpAxis})}, op);
    if (failed(w))
      return failure();
    // Loops: b, s, o, heads...
    SmallVector<unsigned> xDims = {0, 1}, wDims = {2};
    for (unsigned k = 0; k < nh; ++k) {
      xDims.push_back(3 + k);
      wDims.push_back(3 + k);
    }
    SmallVector<IT> iters = {par, par, par};
    iters.append(nh, red);
    Value y = generic({*x, *w}, filled({batch, seq, out}, elt, 0.0),
                      {xDims, wDims}, {0, 1, 2}, iters, add);
    if (op.getBias()) {
      auto bv = leaf(op.getBias(), RankedTensorType::get({out}, elt), Spec(1),
                     op);
      if (failed(bv))
        return failure();
      y = generic({y, *bv}, empty({batch, seq, out}, elt), {{0, 1, 2}, {2}},
                  {0, 1, 2}, {par, par, par}, addBias);
    }
    auto ya = annotate(op, y, actSpec(3, {}, true), false,
                       "the attention output projection");
    if (failed(ya))
      return failure();
    values[op.getResult()] = {*ya, current};
    return success();
  }

  // A plain linear over the last dimension.
  auto xv = get(op.getX());
  if (failed(xv))
    return failure();
  auto xT = cast<RankedTensorType>(xv->getType());
  int64_t r = xT.getRank();
  Spec xs, ys;
  switch (role) {
  case TpRole::Column:
  case TpRole::Vocab:
    xs = actSpec(r, {}, false);
    ys = actSpec(r, axes({tpAxis}), false);
    break;
  case TpRole::Row:
    xs = actSpec(r, axes({tpAxis}), false);
    ys = actSpec(r, {}, true);
    break;
  case TpRole::None:
    xs = actSpec(r, {}, false);
    ys = actSpec(r, {}, false);
    break;
  }
  const Spec ws = tpSpec(op, 1), bs = tpSpec(op, 2);
  auto x = annotate(op, *xv, xs, true, "the linear input");
  if (failed(x))
    return failure();
  auto w = leaf(op.getWeight(), wT, ws, op);
  if (failed(w))
    return failure();
  SmallVector<unsigned> xDims, yDims;
  for (unsigned k = 0; k + 1 < unsigned(r); ++k) {
    xDims.push_back(k);
    yDims.push_back(k);
  }
  xDims.push_back(r); // i
  yDims.push_back(r - 1);
  SmallVector<unsigned> wDims = {unsigned(r - 1), unsigned(r)};
  SmallVector<IT> iters(r, par);
  iters.push_back(red);
  SmallVector<int64_t> yShape(xT.getShape().drop_back());
  yShape.push_back(out);
  Value y = generic({*x, *w}, filled(yShape, elt, 0.0), {xDims, wDims}, yDims,
                    iters, add);
  if (op.getBias()) {
    auto bv = leaf(op.getBias(), cast<RankedTensorType>(op.getBias().getType()),
                   bs, op);
    if (failed(bv))
      return failure();
    y = generic({y, *bv}, empty(yShape, elt), {yDims, {unsigned(r - 1)}},
                yDims, SmallVector<IT>(r, par), addBias);
  }
  auto ya = annotate(op, y, ys, false, "the linear output");
  if (failed(ya))
    return failure();
  values[op.getResult()] = {*ya, current};
  return success();
}

LogicalResult Exporter::emitAttention(AttentionOp op) {
  using IT = utils::IteratorType;
  auto par = IT::parallel, red = IT::reduction;
  if (op.getKRope() || op.getSinks() || op.getWindow() > 0 ||
      op.getRotaryDim() > 0)
    return error(op) << "attention with rotary embedding, a window, sinks or "
                        "latent rotary keys has no shard export yet";
  auto qh = heads.find(op.getQ()), kh = heads.find(op.getK()),
       vh = heads.find(op.getV());
  if (qh == heads.end() || kh == heads.end() || vh == heads.end())
    return error(op) << "attention operands must be tgraph.linear projections";
  for (auto *p : {&qh->second, &kh->second, &vh->second})
    if (p->chunk != current)
      return error(op) << "attention and its projections must be in the same "
                          "pipeline chunk";
  int64_t kv = op.getNumKvHeads(), g = op.getNumHeads() / kv;
  int64_t d = op.getHeadDim(), dv = op.getValueHeadDim();
  bool gqa = g > 1;
  Type elt = cast<RankedTensorType>(op.getQ().getType()).getElementType();
  // Heads over tp, batch over dp, queries over cp; keys and values are
  // gathered over cp (all-gather context parallelism, as in Llama 3).
  Spec qs = {axes({dpAxis}), axes({cpAxis}), axes({tpAxis})};
  Spec kvs = {axes({dpAxis}), {}, axes({tpAxis})};
  auto q = annotate(op, qh->second.value, qs, true, "the attention queries");
  auto k = annotate(op, kh->second.value, kvs, true, "the attention keys");
  auto v = annotate(op, vh->second.value, kvs, true, "the attention values");
  if (failed(q) || failed(k) || failed(v))
    return failure();

  // Loop order for the score tensors: b, kv, [g,] s, t.
  unsigned B = 0, KV = 1, G = 2, S = gqa ? 3 : 2, T = S + 1;
  unsigned nScore = T + 1;
  SmallVector<int64_t> scoreShape = {batch, kv};
  if (gqa)
    scoreShape.push_back(g);
  scoreShape.append({seq, seq});
  SmallVector<int64_t> rowShape(scoreShape.begin(), scoreShape.end() - 1);
  SmallVector<unsigned> scoreDims, rowDims;
  for (unsigned i = 0; i < nScore; ++i)
    scoreDims.push_back(i);
  rowDims.assign(scoreDims.begin(), scoreDims.end() - 1);
  auto withG = [&](std::initializer_list<unsigned> pre, unsigned gDim,
                   std::initializer_list<unsigned> post) {
    SmallVector<unsigned> r(pre);
    if (gqa)
      r.push_back(gDim);
    r.append(post);
    return r;
  };

  // scores[b, kv, g, s, t] = sum_d q[b, s, kv, g, d] k[b, t, kv, d]
  unsigned Dd = nScore; // the reduced head dim
  SmallVector<IT> it1(nScore, par);
  it1.push_back(red);
  Value scores = generic(
      {*q, *k}, filled(scoreShape, elt, 0.0),
      {withG({B, S, KV}, G, {Dd}), {B, T, KV, Dd}}, scoreDims, it1,
      [](OpBuilder &ob, Location l, ValueRange a) -> Value {
        Value p = arith::MulFOp::create(ob, l, a[0], a[1]);
        return arith::AddFOp::create(ob, l, a[2], p);
      });

  // The causal mask (s, t): 0 or -inf, built over the whole sequence and
  // kept replicated so that partitioning slices it with global positions.
  double scale = 1.0 / std::sqrt(double(d));
  Value mask;
  if (op.getCausal()) {
    Value e = empty({seq, seq}, elt);
    Value m = generic({}, e, {}, {0, 1}, {par, par},
                      [&](OpBuilder &ob, Location l, ValueRange) -> Value {
                        Value s = linalg::IndexOp::create(ob, l, 0);
                        Value t = linalg::IndexOp::create(ob, l, 1);
                        Value future = arith::CmpIOp::create(
                            ob, l, arith::CmpIPredicate::ult, s, t);
                        return arith::SelectOp::create(
                            ob, l, future,
                            constF(ob, l, elt,
                                   -std::numeric_limits<double>::infinity()),
                            constF(ob, l, elt, 0.0));
                      });
    auto ma = annotate(op, m, Spec(1), false, "the causal mask");
    if (failed(ma))
      return failure();
    mask = *ma;
  }
  // logits = scores * scale (+ mask), recomputed in each consumer.
  SmallVector<Value> logitIns = {scores};
  SmallVector<SmallVector<unsigned>> logitDims = {scoreDims};
  if (mask) {
    logitIns.push_back(mask);
    logitDims.push_back({S, T});
  }
  auto logit = [&, elt](OpBuilder &ob, Location l, ValueRange a) -> Value {
    Value x = arith::MulFOp::create(ob, l, a[0], constF(ob, l, elt, scale));
    return mask ? arith::AddFOp::create(ob, l, x, a[1]).getResult() : x;
  };
  unsigned nl = logitIns.size();

  // Row maximum.
  SmallVector<IT> itRow(nScore - 1, par);
  itRow.push_back(red);
  Value rowMax = generic(
      logitIns,
      filled(rowShape, elt, -std::numeric_limits<double>::infinity()),
      logitDims, rowDims, itRow,
      [&](OpBuilder &ob, Location l, ValueRange a) -> Value {
        return arith::MaximumFOp::create(ob, l, a[nl], logit(ob, l, a));
      });
  // exp(logit - max)
  SmallVector<Value> expIns(logitIns);
  expIns.push_back(rowMax);
  SmallVector<SmallVector<unsigned>> expDims(logitDims);
  expDims.push_back(rowDims);
  Value probs = generic(
      expIns, empty(scoreShape, elt), expDims, scoreDims,
      SmallVector<IT>(nScore, par),
      [&](OpBuilder &ob, Location l, ValueRange a) -> Value {
        Value x = arith::SubFOp::create(ob, l, logit(ob, l, a), a[nl]);
        return math::ExpOp::create(ob, l, x);
      });
  // Row sums.
  Value rowSum = generic({probs}, filled(rowShape, elt, 0.0), {scoreDims},
                         rowDims, itRow,
                         [](OpBuilder &ob, Location l, ValueRange a) -> Value {
                           return arith::AddFOp::create(ob, l, a[1], a[0]);
                         });
  // o[b, s, kv, g, dv] = sum_t p[b, kv, g, s, t] v[b, t, kv, dv] / sum
  // Loops: b, s, kv, [g,] dv, t.
  unsigned oS = 1, oKV = 2, oG = 3, oDv = gqa ? 4 : 3, oT = oDv + 1;
  SmallVector<int64_t> oShape = {batch, seq, kv};
  if (gqa)
    oShape.push_back(g);
  oShape.push_back(dv);
  SmallVector<unsigned> oDims;
  for (unsigned i = 0; i < oT; ++i)
    oDims.push_back(i);
  SmallVector<IT> itO(oT, par);
  itO.push_back(red);
  Value o = generic({probs, *v}, filled(oShape, elt, 0.0),
                    {withG({0, oKV}, oG, {oS, oT}), {0, oT, oKV, oDv}}, oDims,
                    itO, [](OpBuilder &ob, Location l, ValueRange a) -> Value {
                      Value p = arith::MulFOp::create(ob, l, a[0], a[1]);
                      return arith::AddFOp::create(ob, l, a[2], p);
                    });
  Value normed = generic({o, rowSum}, empty(oShape, elt),
                         {oDims, withG({0, oKV}, oG, {oS})}, oDims,
                         SmallVector<IT>(oT, par),
                         [](OpBuilder &ob, Location l, ValueRange a) -> Value {
                           return arith::DivFOp::create(ob, l, a[0], a[1]);
                         });
  auto out = annotate(op, normed, qs, false, "the attention output");
  if (failed(out))
    return failure();
  if (!llvm::all_of(op.getResult().getUsers(), [](Operation *u) {
        auto l = dyn_cast<LinearOp>(u);
        return l && !feedsAttention(l.getResult());
      }))
    return error(op) << "the attention output must feed tgraph.linear "
                        "projections only";
  heads[op.getResult()] = {*out, current};
  return success();
}

LogicalResult Exporter::emitNorm(Operation *op, Value xIn, Value gammaIn,
                                 Value betaIn, double eps, bool rms,
                                 bool zeroCentered) {
  using IT = utils::IteratorType;
  auto par = IT::parallel, red = IT::reduction;
  auto xv = get(xIn);
  if (failed(xv))
    return failure();
  auto xT = cast<RankedTensorType>(xv->getType());
  int64_t r = xT.getRank(), h = xT.getShape().back();
  Type elt = xT.getElementType();
  auto gT = cast<RankedTensorType>(gammaIn.getType());
  if (gT.getRank() != 1 || gT.getDimSize(0) != h)
    return error(op) << "per-head norms (gamma of " << gT.getDimSize(0)
                     << " elements over a last dimension of " << h
                     << ") have no shard export";
  auto x = annotate(op, *xv, actSpec(r, {}, true), true, "the norm input");
  auto gamma = leaf(gammaIn, gT, Spec(1), op);
  if (failed(x) || failed(gamma))
    return failure();
  FailureOr<Value> beta = Value();
  if (betaIn)
    beta = leaf(betaIn, cast<RankedTensorType>(betaIn.getType()), Spec(1), op);
  if (failed(beta))
    return failure();
  SmallVector<int64_t> rowShape(xT.getShape().drop_back());
  SmallVector<unsigned> all, row;
  for (unsigned k = 0; k < unsigned(r); ++k)
    all.push_back(k);
  row.assign(all.begin(), all.end() - 1);
  SmallVector<IT> itRed(r - 1, par);
  itRed.push_back(red);
  double invH = 1.0 / double(h);
  Value mean;
  if (!rms)
    mean = generic({*x}, filled(rowShape, elt, 0.0), {all}, row, itRed,
                   [](OpBuilder &ob, Location l, ValueRange a) -> Value {
                     return arith::AddFOp::create(ob, l, a[1], a[0]);
                   });
  // Sum of squares of (x - mean) (layer norm) or of x (RMS norm).
  SmallVector<Value> sqIns = {*x};
  SmallVector<SmallVector<unsigned>> sqDims = {all};
  if (!rms) {
    sqIns.push_back(mean);
    sqDims.push_back(row);
  }
  Value sq = generic(sqIns, filled(rowShape, elt, 0.0), sqDims, row, itRed,
                     [&](OpBuilder &ob, Location l, ValueRange a) -> Value {
                       Value c = a[0];
                       if (!rms)
                         c = arith::SubFOp::create(
                             ob, l, c,
                             arith::MulFOp::create(ob, l, a[1],
                                                   constF(ob, l, elt, invH)));
                       Value s = arith::MulFOp::create(ob, l, c, c);
                       return arith::AddFOp::create(ob, l, a[rms ? 1 : 2], s);
                     });
  SmallVector<Value> ins = {*x, sq, *gamma};
  SmallVector<SmallVector<unsigned>> dims = {all, row, {unsigned(r - 1)}};
  if (!rms) {
    ins.push_back(mean);
    dims.push_back(row);
  }
  if (*beta) {
    ins.push_back(*beta);
    dims.push_back({unsigned(r - 1)});
  }
  bool hasBeta = bool(*beta);
  Value y = generic(
      ins, empty(xT.getShape(), elt), dims, all, SmallVector<IT>(r, par),
      [&](OpBuilder &ob, Location l, ValueRange a) -> Value {
        Value c = a[0];
        if (!rms)
          c = arith::SubFOp::create(
              ob, l, c,
              arith::MulFOp::create(ob, l, a[3], constF(ob, l, elt, invH)));
        Value var = arith::MulFOp::create(ob, l, a[1], constF(ob, l, elt, invH));
        Value inv = math::RsqrtOp::create(
            ob, l, arith::AddFOp::create(ob, l, var, constF(ob, l, elt, eps)));
        Value g = a[2];
        if (zeroCentered)
          g = arith::AddFOp::create(ob, l, g, constF(ob, l, elt, 1.0));
        Value yv = arith::MulFOp::create(
            ob, l, arith::MulFOp::create(ob, l, c, inv), g);
        if (hasBeta)
          yv = arith::AddFOp::create(ob, l, yv, a[rms ? 3 : 4]);
        return yv;
      });
  auto ya = annotate(op, y, actSpec(r, {}, true), false, "the norm output");
  if (failed(ya))
    return failure();
  values[op->getResult(0)] = {*ya, current};
  return success();
}

//===----------------------------------------------------------------------===//
// Embeddings and loss
//===----------------------------------------------------------------------===//

LogicalResult Exporter::emitEmbedding(EmbeddingOp op) {
  using IT = utils::IteratorType;
  auto par = IT::parallel, red = IT::reduction;
  // A gather has no ShardingInterface upstream; the lookup is written as a
  // one-hot contraction over the vocabulary instead, so that a table split
  // over tp (Megatron's vocabulary-parallel embedding) partitions into a
  // local masked lookup plus a reduction over tp.
  auto tT = cast<RankedTensorType>(op.getTable().getType());
  int64_t vocab = tT.getDimSize(0), h = tT.getDimSize(1);
  Type elt = tT.getElementType();
  RankedTensorType idsT = bind(op.getIds().getType());
  if (idsT.getRank() != 2)
    return error(op) << "embedding ids must be (batch, seq)";
  auto ids = leaf(op.getIds(), idsT, actSpec(2, {}, false), op);
  if (failed(ids))
    return failure();
  // With cp the ids' dim 1 is the sequence too.
  auto table = leaf(op.getTable(), tT, tpSpec(op, 1), op);
  auto iv = iota(op, vocab, idsT.getElementType());
  if (failed(table) || failed(iv))
    return failure();
  Value y = generic(
      {*ids, *iv, *table}, filled({batch, seq, h}, elt, 0.0),
      {{0, 1}, {3}, {3, 2}}, {0, 1, 2}, {par, par, par, red},
      [&](OpBuilder &ob, Location l, ValueRange a) -> Value {
        // one_hot * table rather than a select: LLVM 22's shard-partition
        // crashes on a select inside a reduction whose dimension is split.
        Value hit =
            arith::CmpIOp::create(ob, l, arith::CmpIPredicate::eq, a[0], a[1]);
        Value oneHot = arith::UIToFPOp::create(ob, l, elt, hit);
        Value pick = arith::MulFOp::create(ob, l, oneHot, a[2]);
        return arith::AddFOp::create(ob, l, a[3], pick);
      });
  auto ya = annotate(op, y, actSpec(3, {}, true), false, "the embedding");
  if (failed(ya))
    return failure();
  values[op.getResult()] = {*ya, current};
  return success();
}

LogicalResult Exporter::emitPositionEmbedding(PositionEmbeddingOp op) {
  using IT = utils::IteratorType;
  auto par = IT::parallel;
  auto xv = get(op.getX());
  if (failed(xv))
    return failure();
  auto tT = cast<RankedTensorType>(op.getTable().getType());
  if (tT.getDimSize(0) != seq)
    return error(op) << "the position table has " << tT.getDimSize(0)
                     << " rows but the exported sequence is " << seq
                     << ": export with seq-len=" << tT.getDimSize(0);
  auto xT = cast<RankedTensorType>(xv->getType());
  auto x = annotate(op, *xv, actSpec(3, {}, true), true, "the embedding");
  auto table = leaf(op.getTable(), tT, Spec(1), op);
  if (failed(x) || failed(table))
    return failure();
  Value y = generic({*x, *table}, empty(xT.getShape(), xT.getElementType()),
                    {{0, 1, 2}, {1, 2}}, {0, 1, 2}, {par, par, par},
                    [](OpBuilder &ob, Location l, ValueRange a) -> Value {
                      return arith::AddFOp::create(ob, l, a[0], a[1]);
                    });
  auto ya = annotate(op, y, actSpec(3, {}, true), false,
                     "the position embedding");
  if (failed(ya))
    return failure();
  values[op.getResult()] = {*ya, current};
  return success();
}

LogicalResult Exporter::emitCrossEntropy(CrossEntropyOp op) {
  using IT = utils::IteratorType;
  auto par = IT::parallel, red = IT::reduction;
  auto lv = get(op.getLogits());
  if (failed(lv))
    return failure();
  auto lT = cast<RankedTensorType>(lv->getType());
  if (lT.getRank() != 3)
    return error(op) << "cross_entropy export needs (batch, seq, vocab) logits";
  int64_t vocab = lT.getDimSize(2);
  Type f32 = b.getF32Type();
  // The vocabulary stays split over tp: max, sum of exponentials and the
  // target logit are each reduced over it (Megatron's vocab-parallel loss).
  auto logits = annotate(op, *lv, actSpec(3, axes({tpAxis}), false), true,
                         "the logits");
  RankedTensorType labT = bind(op.getLabels().getType());
  auto labels = leaf(op.getLabels(), labT, actSpec(2, {}, false), op);
  auto iv = iota(op, vocab, labT.getElementType());
  if (failed(logits) || failed(labels) || failed(iv))
    return failure();
  auto ext = [f32](OpBuilder &ob, Location l, Value v) -> Value {
    return v.getType() == f32 ? v : arith::ExtFOp::create(ob, l, f32, v);
  };
  SmallVector<IT> itV = {par, par, red};
  Value mx = generic({*logits}, filled({batch, seq}, f32, -INFINITY),
                     {{0, 1, 2}}, {0, 1}, itV,
                     [&](OpBuilder &ob, Location l, ValueRange a) -> Value {
                       return arith::MaximumFOp::create(ob, l, a[1],
                                                        ext(ob, l, a[0]));
                     });
  Value se = generic({*logits, mx}, filled({batch, seq}, f32, 0.0),
                     {{0, 1, 2}, {0, 1}}, {0, 1}, itV,
                     [&](OpBuilder &ob, Location l, ValueRange a) -> Value {
                       Value e = math::ExpOp::create(
                           ob, l,
                           arith::SubFOp::create(ob, l, ext(ob, l, a[0]), a[1]));
                       return arith::AddFOp::create(ob, l, a[2], e);
                     });
  Value picked = generic(
      {*logits, *labels, *iv}, filled({batch, seq}, f32, 0.0),
      {{0, 1, 2}, {0, 1}, {2}}, {0, 1}, itV,
      [&](OpBuilder &ob, Location l, ValueRange a) -> Value {
        Value hit =
            arith::CmpIOp::create(ob, l, arith::CmpIPredicate::eq, a[1], a[2]);
        Value oneHot = arith::UIToFPOp::create(ob, l, f32, hit);
        Value v = arith::MulFOp::create(ob, l, oneHot, ext(ob, l, a[0]));
        return arith::AddFOp::create(ob, l, a[3], v);
      });
  // Keep the per-token terms split like the tokens, so the mean is a local
  // sum plus a reduction over dp (not an all-gather of every token).
  Spec tok = actSpec(2, {}, false);
  if (cpAxis >= 0)
    tok[1] = axes({cpAxis});
  auto seA = annotate(op, se, tok, true, "the per-token sums");
  auto mxA = annotate(op, mx, tok, true, "the per-token maxima");
  auto pickedA = annotate(op, picked, tok, true, "the target logits");
  if (failed(seA) || failed(mxA) || failed(pickedA))
    return failure();
  // mean over tokens of log(sum) + max - target
  double inv = 1.0 / double(batch * seq);
  Value total = generic(
      {*seA, *mxA, *pickedA}, filled({}, f32, 0.0), {{0, 1}, {0, 1}, {0, 1}}, {},
      {red, red}, [&](OpBuilder &ob, Location l, ValueRange a) -> Value {
        Value lse = arith::AddFOp::create(ob, l, math::LogOp::create(ob, l, a[0]),
                                          a[1]);
        Value tok = arith::SubFOp::create(ob, l, lse, a[2]);
        Value scaled = arith::MulFOp::create(ob, l, tok, constF(ob, l, f32, inv));
        return arith::AddFOp::create(ob, l, a[3], scaled);
      });
  auto ta = annotate(op, total, Spec{}, false, "the loss");
  if (failed(ta))
    return failure();
  values[op.getResult()] = {*ta, current};
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise, softmax, matmul
//===----------------------------------------------------------------------===//

LogicalResult Exporter::emitElementwise(Operation *op) {
  using IT = utils::IteratorType;
  SmallVector<Value> ins;
  for (Value operand : op->getOperands()) {
    auto v = get(operand);
    if (failed(v))
      return failure();
    ins.push_back(*v);
  }
  auto t = cast<RankedTensorType>(ins[0].getType());
  Type elt = t.getElementType();
  if (isa<DropoutOp>(op)) {
    // Forward without randomness: upstream has no random-number op that
    // partitions; the mask is a training detail that changes no sharding.
    values[op->getResult(0)] = {ins[0], current};
    return success();
  }
  unsigned r = t.getRank();
  SmallVector<unsigned> all;
  for (unsigned k = 0; k < r; ++k)
    all.push_back(k);
  SmallVector<SmallVector<unsigned>> dims(ins.size(), all);
  auto gelu = [elt, this](OpBuilder &ob, Location l, Value x,
                          bool approx) -> Value {
    Value half = constF(ob, l, elt, 0.5), one = constF(ob, l, elt, 1.0);
    Value inner;
    if (approx) {
      // tanh(sqrt(2/pi) (x + 0.044715 x^3)) (Hendrycks & Gimpel, 2016)
      Value x3 = arith::MulFOp::create(
          ob, l, x, arith::MulFOp::create(ob, l, x, x));
      Value s = arith::AddFOp::create(
          ob, l, x,
          arith::MulFOp::create(ob, l, x3, constF(ob, l, elt, 0.044715)));
      inner = math::TanhOp::create(
          ob, l,
          arith::MulFOp::create(ob, l, s,
                                constF(ob, l, elt, std::sqrt(2.0 / M_PI))));
    } else {
      inner = math::ErfOp::create(
          ob, l, arith::MulFOp::create(ob, l, x, constF(ob, l, elt, M_SQRT1_2)));
    }
    return arith::MulFOp::create(
        ob, l, arith::MulFOp::create(ob, l, half, x),
        arith::AddFOp::create(ob, l, one, inner));
  };
  auto silu = [elt, this](OpBuilder &ob, Location l, Value x) -> Value {
    Value one = constF(ob, l, elt, 1.0);
    Value e = math::ExpOp::create(ob, l, arith::NegFOp::create(ob, l, x));
    return arith::DivFOp::create(ob, l, x, arith::AddFOp::create(ob, l, one, e));
  };
  Value y = generic(
      ins, empty(t.getShape(), elt), dims, all,
      SmallVector<IT>(r, IT::parallel),
      [&](OpBuilder &ob, Location l, ValueRange a) -> Value {
        Value x = a[0];
        if (isa<AddOp>(op))
          return arith::AddFOp::create(ob, l, a[0], a[1]);
        if (isa<MulOp>(op))
          return arith::MulFOp::create(ob, l, a[0], a[1]);
        if (auto g = dyn_cast<GeluOp>(op))
          return gelu(ob, l, x, g.getApproximate());
        if (isa<SiluOp>(op))
          return silu(ob, l, x);
        if (isa<ReluOp, SquaredReluOp>(op)) {
          Value rl = arith::MaximumFOp::create(ob, l, x, constF(ob, l, elt, 0.0));
          return isa<ReluOp>(op) ? rl
                                 : arith::MulFOp::create(ob, l, rl, rl)
                                       .getResult();
        }
        if (isa<TanhOp>(op))
          return math::TanhOp::create(ob, l, x);
        if (isa<SwiGLUOp>(op))
          return arith::MulFOp::create(ob, l, silu(ob, l, a[0]), a[1]);
        // GeGLU
        return arith::MulFOp::create(ob, l, gelu(ob, l, a[0], false), a[1]);
      });
  values[op->getResult(0)] = {y, current};
  return success();
}

LogicalResult Exporter::emitSoftmax(SoftmaxOp op) {
  using IT = utils::IteratorType;
  auto xv = get(op.getX());
  if (failed(xv))
    return failure();
  auto t = cast<RankedTensorType>(xv->getType());
  Type elt = t.getElementType();
  unsigned r = t.getRank();
  SmallVector<unsigned> all, row;
  for (unsigned k = 0; k < r; ++k)
    all.push_back(k);
  row.assign(all.begin(), all.end() - 1);
  SmallVector<int64_t> rowShape(t.getShape().drop_back());
  SmallVector<IT> itRed(r - 1, IT::parallel);
  itRed.push_back(IT::reduction);
  Value mx = generic({*xv}, filled(rowShape, elt, -INFINITY), {all}, row, itRed,
                     [](OpBuilder &ob, Location l, ValueRange a) -> Value {
                       return arith::MaximumFOp::create(ob, l, a[1], a[0]);
                     });
  Value e = generic({*xv, mx}, empty(t.getShape(), elt), {all, row}, all,
                    SmallVector<IT>(r, IT::parallel),
                    [](OpBuilder &ob, Location l, ValueRange a) -> Value {
                      return math::ExpOp::create(
                          ob, l, arith::SubFOp::create(ob, l, a[0], a[1]));
                    });
  Value s = generic({e}, filled(rowShape, elt, 0.0), {all}, row, itRed,
                    [](OpBuilder &ob, Location l, ValueRange a) -> Value {
                      return arith::AddFOp::create(ob, l, a[1], a[0]);
                    });
  Value y = generic({e, s}, empty(t.getShape(), elt), {all, row}, all,
                    SmallVector<IT>(r, IT::parallel),
                    [](OpBuilder &ob, Location l, ValueRange a) -> Value {
                      return arith::DivFOp::create(ob, l, a[0], a[1]);
                    });
  values[op.getResult()] = {y, current};
  return success();
}

LogicalResult Exporter::emitMatmul(MatmulOp op) {
  using IT = utils::IteratorType;
  auto lv = get(op.getLhs()), rv = get(op.getRhs());
  if (failed(lv) || failed(rv))
    return failure();
  auto lT = cast<RankedTensorType>(lv->getType());
  auto rT = cast<RankedTensorType>(rv->getType());
  unsigned r = lT.getRank();
  // Loops: leading..., m, n, k
  SmallVector<unsigned> lead;
  for (unsigned k = 0; k + 2 < r; ++k)
    lead.push_back(k);
  unsigned m = r - 2, n = r - 1, k = r;
  SmallVector<unsigned> lDims(lead), rDims(lead), oDims(lead);
  lDims.append({m, k});
  rDims.append({k, n});
  oDims.append({m, n});
  SmallVector<int64_t> oShape(lT.getShape().drop_back());
  oShape.push_back(rT.getShape().back());
  SmallVector<IT> iters(r, IT::parallel);
  iters.push_back(IT::reduction);
  Value y = generic({*lv, *rv}, filled(oShape, lT.getElementType(), 0.0),
                    {lDims, rDims}, oDims, iters,
                    [](OpBuilder &ob, Location l, ValueRange a) -> Value {
                      Value p = arith::MulFOp::create(ob, l, a[0], a[1]);
                      return arith::AddFOp::create(ob, l, a[2], p);
                    });
  values[op.getResult()] = {y, current};
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// The plan fields the export needs, from the model's `#tgraph.plan`
/// (held to the model by the converter, plan::verify).
FailureOr<PlanView> readPlan(ModelOp model) {
  FailureOr<::trident::plan::Plan> plan =
      ::trident::conversion::modelPlan(model, kPass);
  if (failed(plan))
    return failure();
  PlanView p;
  p.dp = plan->dp, p.tp = plan->tp, p.pp = plan->pp, p.cp = plan->cp;
  p.vpp = plan->vpp, p.microBatch = plan->microBatch;
  p.sp = plan->sequenceParallel && plan->tp > 1;
  p.layersPerChunk.assign(plan->layersPerChunk.begin(),
                          plan->layersPerChunk.end());
  return p;
}

struct ExportShardPass
    : public mlir::trident::impl::ExportShardPassBase<ExportShardPass> {
  using ExportShardPassBase::ExportShardPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<ModelOp> models(module.getOps<ModelOp>());
    if (models.empty()) {
      module.emitError() << kPass << ": the module holds no tgraph.model";
      return signalPassFailure();
    }
    if (models.size() > 1) {
      models[1].emitError() << kPass
                            << ": one tgraph.model per module (they would "
                               "share the grid)";
      return signalPassFailure();
    }
    ModelOp model = models.front();
    auto plan = readPlan(model);
    if (failed(plan))
      return signalPassFailure();
    if (batch < 0 || seqLen < 0) {
      model.emitError() << kPass << ": batch and seq-len must not be negative";
      return signalPassFailure();
    }
    int64_t b = batch > 0 ? int64_t(batch) : plan->dp * plan->microBatch;
    int64_t s = seqLen > 0 ? int64_t(seqLen) : model.getSeqLenAttr().getInt();
    Exporter exporter(module, model, *plan, b, s);
    if (failed(exporter.run()))
      signalPassFailure();
  }
};

} // namespace
