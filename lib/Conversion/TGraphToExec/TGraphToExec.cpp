//===- TGraphToExec.cpp - tgraph + plan to a texec program ----------------===//
//
// One walk per model chunk builds its forward (texec ops in the chunk's
// forward region) and records, per tgraph op, a gradient rule on a tape; the
// tape is then replayed backwards into the backward region. Gradient rules
// are therefore applied while lowering, on local shards, with the
// collectives each parallel layout implies (docs/texec.md, "Autodiff").
//
// Layouts of an activation (last dimension = features) inside a stage:
//   Rep   every tp rank holds the whole tensor;
//   Seq   dimension 1 (sequence) split over tp (Megatron sequence
//         parallelism, Korthikanti et al. 2022);
//   Last  the feature dimension split over tp (the output of a
//         column-parallel linear, attention heads, vocabulary logits).
//
//===----------------------------------------------------------------------===//

#include "trident/Conversion/TGraphToExec/TGraphToExec.h"
#include "trident/Analysis/ModelAnalysis.h"

#include "dialects/Exec/IR/ExecOps.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "trident/Schedule/Schedule.h"
#include "trident/Support/DType.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "mlir/IR/Verifier.h"

#include <functional>
#include <map>
#include <set>

using namespace mlir;
namespace tg = mlir::trident::graph;
namespace tx = mlir::trident::exec;
using K = tx::KernelKind;

namespace trident::conversion {
namespace {

enum class Dist { Rep, Seq, Last };

/// Whether `v` is an additive bias of `user` (a linear, patch or
/// convolution bias, a LayerNorm beta, a router or expert bias): such
/// parameters start at zero, as Hugging Face's _init_weights and
/// Megatron-LM initialise them. Chosen by the operand's role, not by the
/// parameter's name.
bool isBiasOperand(Operation *user, Value v) {
  if (auto l = dyn_cast<tg::LinearOp>(user))
    return l.getBias() == v;
  if (auto pe = dyn_cast<tg::PatchEmbedOp>(user))
    return pe.getBias() == v;
  if (auto c = dyn_cast<tg::Conv2DOp>(user))
    return c.getBias() == v;
  if (auto ln = dyn_cast<tg::LayerNormOp>(user))
    return ln.getBeta() == v;
  if (auto m = dyn_cast<tg::MoEOp>(user))
    return m.getRouterBias() == v || m.getBIn() == v || m.getBOut() == v;
  return false;
}

/// A forward value and its layout.
struct FVal {
  Value v;
  Dist dist = Dist::Rep;
};

/// One transformer block: iteration `iter` of `repeat`.
struct BlockRef {
  tg::RepeatOp repeat;
  int64_t iter;
  int64_t index; ///< model block number
};

/// How a parameter is held: split dimension over tp, or replicated.
struct ParamLayout {
  int64_t splitDim = -1;
  /// The axis the dimension is split over: tp, or ep for experts.
  const char *axis = "tp";
  /// A vocabulary dimension (0): rounded up to a multiple of the axis size
  /// when the axis does not divide it (Megatron-LM pads the vocabulary the
  /// same way, to a multiple of 128 x tp by default).
  bool padVocab = false;
  /// The group whose ranks see different data for this parameter, when it
  /// is not the program's (a ViT stem replicated over cp: "dp").
  const char *dataGroup = nullptr;
  /// A second split, over tp (an expert's feature dimension under expert
  /// tensor parallelism), whose dimension holds `blocks` blocks (gated:
  /// the gate and the up columns, each split over tp).
  int64_t split2Dim = -1;
  int64_t blocks = 1;
};

/// Everything shared by all chunks of the program.
struct ProgramState {
  const ::trident::plan::Plan &plan;
  const TrainingOptions &options;
  tg::ModelOp model;
  tx::ProgramOp program;
  int64_t tp, mbs;
  int64_t seq; ///< positions on this rank: seq_len / cp
  int64_t numChunks;
  bool sp;
  int64_t zero;
  double gradScale; ///< 1 / tokens of the global batch
  int64_t globalBatch = 0; ///< samples of the global batch
  /// Parameter name -> stages that declare it (tied parameters).
  std::map<std::string, std::set<int64_t>> paramStages;
  /// Per stage: parameters whose gradients are partial sums over tp.
  std::map<int64_t, std::set<std::string>> tpPartialParams;
  /// Parameters no gradient trains (DeepSeek-V3's selection bias, which
  /// its trainer updates by load, not by gradient): their gradient stays
  /// zero, so the optimizer leaves them as they are.
  std::set<std::string> frozenParams;
  int64_t cp = 1;      ///< context-parallel ranks
  int64_t seqFull = 0; ///< the whole sequence (seq_len)
  /// The group that sums parameter gradients and shards ZeRO state: "dp",
  /// or "dpcp" (dp x cp) under context parallelism, whose ranks hold the
  /// same parameters and see different tokens.
  std::string dataGroup = "dp";
  int64_t ep = 1; ///< expert-parallel ranks (carved out of dp)
  /// The ranks holding the same experts: "edp" (dp / ep of them), or
  /// "edpcp" (edp x cp) under context parallelism.
  std::string expertGroup = "edp";
};

class ChunkLowering {
public:
  ChunkLowering(ProgramState &st, tx::StageOp stage, tx::ChunkOp chunk,
                llvm::StringMap<tx::ParamOp> &decls, Operation *&lastDecl)
      : st(st), stage(stage), chunk(chunk), decls(decls), lastDecl(lastDecl),
        fb(chunk.getContext()), bb(chunk.getContext()) {
    fwdBlock = &chunk.getForward().emplaceBlock();
    bwdBlock = &chunk.getBackward().emplaceBlock();
    fb.setInsertionPointToEnd(fwdBlock);
    bb.setInsertionPointToEnd(bwdBlock);
  }

  LogicalResult run(ArrayRef<Operation *> prologue, ArrayRef<BlockRef> blocks,
                    ArrayRef<Operation *> epilogue, Value firstInit,
                    tg::RepeatOp lastRepeat, bool first, bool last);
  /// Selective recomputation (Korthikanti et al. 2022, "Reducing
  /// Activation Recomputation in Large Transformer Models"): the attention
  /// probabilities are not saved, only their rows' log-sum-exp; the
  /// backward computes them again.
  void setSelectiveRecompute(bool on) { selective = on; }

private:
  ProgramState &st;
  tx::StageOp stage;
  tx::ChunkOp chunk;
  llvm::StringMap<tx::ParamOp> &decls;
  Operation *&lastDecl;
  OpBuilder fb, bb;
  Block *fwdBlock, *bwdBlock;
  Location loc = UnknownLoc::get(chunk.getContext());
  bool selective = false;

  /// tgraph activation -> forward value (body values are per block).
  DenseMap<Value, FVal> env;
  /// Layer prefix of the block being lowered ("layers.3." or "").
  std::string prefix;
  /// Dropout sites: every dropout (and attention with dropout) gets a
  /// number that is the same under every plan: 256 per section (prologue
  /// 0, block i i + 1, epilogue kEpilogueSection = 2^24, so its sites
  /// start at 2^32) plus its order there.
  static constexpr int64_t kEpilogueSection = int64_t(1) << 24;
  int64_t siteSection = 0, siteOrdinal = 0;
  void beginSites(int64_t section) {
    siteSection = section;
    siteOrdinal = 0;
  }
  /// The next site number; an error at `op` past 256 in one section
  /// (they would share the next section's masks).
  FailureOr<int64_t> nextSite(Operation *op) {
    if (siteOrdinal >= 256)
      return op->emitError("texec lowering: more than 256 dropouts in one "
                           "layer");
    return siteSection * 256 + siteOrdinal++;
  }
  std::vector<std::function<LogicalResult()>> tape;
  /// Gradient contributions per forward value: (backward value, partial
  /// sum over tp).
  llvm::MapVector<Value, SmallVector<std::pair<Value, bool>>> grads;
  DenseMap<Value, Value> savedMap;
  SmallVector<Value> saveList;
  DenseMap<Value, Value> gatheredSeq; ///< Seq value -> its all-gathered Rep
  llvm::StringMap<Value> inputs;
  std::set<Operation *> fused;
  /// tgraph loss values (cross_entropy results and sums of them): recorded
  /// by texec.loss, seeded by their cross_entropy_bwd; nothing else reads
  /// them.
  llvm::DenseSet<Value> losses;

  MLIRContext *ctx() { return chunk.getContext(); }
  /// The type of `v` with dimension `dim` multiplied by `factor`: the
  /// result of gathering `factor` shards along `dim`.
  RankedTensorType grownType(Value v, unsigned dim, int64_t factor) {
    SmallVector<int64_t> shape(cast<RankedTensorType>(v.getType()).getShape());
    shape[dim] *= factor;
    return f32(shape);
  }
  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, Float32Type::get(ctx()));
  }
  bool tpOn() const { return st.tp > 1; }
  bool cpOn() const { return st.cp > 1; }
  /// Under cp: an activation of the whole sequence (a ViT stem's, before
  /// run() slices the rank's chunk), not a chunk.
  bool wholeSequence(Value v) const {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return cpOn() && t && t.getRank() == 3 && t.getDimSize(1) == st.seqFull;
  }
  /// The layout of an unsplit parameter of the ViT stem: under cp every cp
  /// rank computes the stem alike, so its gradients are summed over dp.
  ParamLayout stemLayout() const {
    ParamLayout l{-1};
    if (cpOn())
      l.dataGroup = "dp";
    return l;
  }

  /// The local shape of a tgraph activation type under `dist`.
  /// `padLast`: a vocabulary feature dimension, rounded up to a multiple
  /// of tp (ParamLayout::padVocab) instead of refused.
  FailureOr<RankedTensorType> localType(Operation *op, Type t, Dist dist,
                                        bool padLast = false);

  // --- forward helpers ---
  SmallVector<Value> kernel(OpBuilder &b, tx::KernelKind kind, ValueRange ins,
                            TypeRange outs,
                            ArrayRef<NamedAttribute> config = {});
  NamedAttribute cfg(StringRef key, Attribute value) {
    return NamedAttribute(StringAttr::get(ctx(), key), value);
  }
  /// An i64 attribute (kernel configs, input ranges).
  IntegerAttr i64a(int64_t v) {
    return IntegerAttr::get(IntegerType::get(ctx(), 64), v);
  }
  NamedAttribute tpAxis(StringRef key) {
    return cfg(key, StringAttr::get(ctx(), "tp"));
  }
  FailureOr<Value> param(Operation *user, Value tgParam, ParamLayout layout);
  /// How tensor parallelism holds `op`'s operand `operand`: split on the
  /// dimension tg::tensorParallelDim names (a vocabulary padded), else
  /// whole. Callers decide whether tp is on.
  static ParamLayout tpLayout(Operation *op, unsigned operand) {
    ParamLayout l{-1};
    if (std::optional<int64_t> dim = tg::tensorParallelDim(op, operand)) {
      std::optional<tg::TensorParallelLoop> loop = tg::tensorParallelLoop(op);
      l.splitDim = *dim;
      l.padVocab = !loop || loop->vocabulary;
    }
    return l;
  }
  FailureOr<FVal> input(Operation *user, Value tgInput);
  /// Declares texec.input `name` (null attributes: none) and remembers it.
  FVal newInput(StringRef name, RankedTensorType type, IntegerAttr range,
                IntegerAttr bag) {
    Value v = tx::InputOp::create(fb, loc, type, name, range, bag).getResult();
    inputs[name] = v;
    return FVal{v, Dist::Rep};
  }
  FailureOr<FVal> act(Operation *user, Value v);
  /// A Rep view of `x` for a column-parallel consumer (all-gather of a
  /// sequence shard, cached).
  Value gatherSeq(FVal x);
  /// The whole sequence of a context-parallel shard (keys and values for
  /// attention): all-gather over cp; its backward reduce-scatters.
  Value gatherCp(Value x);

  // --- backward helpers ---
  void addGrad(Value f, Value g, bool partial = false);
  /// The gradient of `f` (all partial contributions reduced over tp), or
  /// null when nothing flows back to it.
  Value takeGrad(Value f);
  /// Sum of contributions; `partial` says whether they still need the tp sum.
  Value takeGradRaw(Value f, bool &partial);
  Value saved(Value f);
  Value sum(SmallVector<Value> &vals);
  void accumulate(StringRef name, Value g) {
    tx::AccumulateGradOp::create(bb, loc, name, g);
  }

  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerEmbedding(tg::EmbeddingOp op);
  LogicalResult lowerNorm(Operation *op);
  LogicalResult lowerLinear(tg::LinearOp op);
  LogicalResult lowerAttention(tg::AttentionOp op);
  /// The moe kernels' config: experts, top-k, activation and the router's
  /// options.
  SmallVector<NamedAttribute> moeConfig(tg::MoEOp op);
  /// The moe kernels' parameters, loaded with their ep (and etp) layouts:
  /// router, w_in, w_out[, router_bias, b_in, b_out | selection bias].
  FailureOr<SmallVector<Value>> moeParams(tg::MoEOp op, bool expertTp);
  LogicalResult lowerCrossEntropy(tg::CrossEntropyOp op);
  LogicalResult lowerEmbeddingBag(tg::EmbeddingBagOp op);
  LogicalResult lowerDotInteraction(tg::DotInteractionOp op);
  LogicalResult lowerBinaryCrossEntropy(tg::BinaryCrossEntropyOp op);
  LogicalResult lowerElementwise(Operation *op);
  LogicalResult lowerDropout(tg::DropoutOp op, FVal x);
  LogicalResult lowerMoE(tg::MoEOp op);
  LogicalResult lowerSelectToken(tg::SelectTokenOp op);
  LogicalResult lowerPatchEmbed(tg::PatchEmbedOp op);
  LogicalResult lowerPrependToken(tg::PrependTokenOp op);
  LogicalResult lowerPositionEmbedding(tg::PositionEmbeddingOp op);
};

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

FailureOr<RankedTensorType> ChunkLowering::localType(Operation *op, Type t,
                                                     Dist dist, bool padLast) {
  auto ranked = dyn_cast<RankedTensorType>(t);
  if (!ranked || ranked.getRank() < 2)
    return op->emitError() << "texec lowering: expected an activation of "
                              "rank >= 2 (batch, sequence, ...), got "
                           << t;
  SmallVector<int64_t> shape(ranked.getShape());
  shape[0] = st.mbs;
  // Rank 2: one row per sample ([batch, features], after select_token),
  // never split over sequence shards.
  if (ranked.getRank() == 2 && dist == Dist::Seq)
    return op->emitError("texec lowering: internal: a per-sample "
                         "activation has no sequence shards");
  if (ranked.getRank() > 2)
    shape[1] = st.seq;
  if (dist == Dist::Seq)
    shape[1] /= st.tp;
  if (dist == Dist::Last && padLast) {
    shape.back() = (shape.back() + st.tp - 1) / st.tp;
  } else if (dist == Dist::Last) {
    if (shape.back() % st.tp != 0)
      return op->emitError() << "texec lowering: feature size "
                             << shape.back() << " is not divisible by tp = "
                             << st.tp;
    shape.back() /= st.tp;
  }
  for (int64_t d : shape)
    if (ShapedType::isDynamic(d))
      return op->emitError("texec lowering: dynamic feature dimension");
  // Values are f32 in the IR, whatever the model's parameter type: the
  // master weights are fp32, and a bf16 program (texec.program precision)
  // holds bf16 values in them; token ids stay integers.
  Type element = ranked.getElementType();
  if (isa<FloatType>(element))
    element = Float32Type::get(ctx());
  return RankedTensorType::get(shape, element);
}

SmallVector<Value> ChunkLowering::kernel(OpBuilder &b, tx::KernelKind kind,
                                         ValueRange ins, TypeRange outs,
                                         ArrayRef<NamedAttribute> config) {
  DictionaryAttr dict =
      config.empty() ? DictionaryAttr() : DictionaryAttr::get(ctx(), config);
  auto op = tx::KernelOp::create(b, loc, outs, kind, ins, dict);
  return SmallVector<Value>(op.getResults());
}

FailureOr<Value> ChunkLowering::param(Operation *user, Value tgParam,
                                      ParamLayout layout) {
  auto p = tgParam.getDefiningOp<tg::ParamOp>();
  if (!p)
    return user->emitError("texec lowering: expected a tgraph.param operand");
  // Parameters of a repeated block are per layer.
  std::string name = (isa<tg::RepeatOp>(p->getParentOp()) ? prefix : "") +
                     p.getName().str();
  auto type = cast<RankedTensorType>(p.getType());
  SmallVector<int64_t> local(type.getShape());
  const bool overEp = StringRef(layout.axis) == "ep";
  const int64_t parts = overEp ? st.ep : st.tp;
  bool padded = false;
  if (layout.splitDim == 0 && layout.padVocab && parts > 1 &&
      local[0] % parts != 0) {
    local[0] = (local[0] + parts - 1) / parts;
    padded = true;
  } else if (layout.splitDim >= 0 && parts > 1) {
    if (local[layout.splitDim] % parts != 0)
      return p.emitError() << "texec lowering: parameter '" << name
                           << "' dimension " << layout.splitDim << " ("
                           << local[layout.splitDim]
                           << ") is not divisible by " << layout.axis
                           << " = " << parts;
    local[layout.splitDim] /= parts;
  } else {
    layout.splitDim = -1;
  }
  if (layout.split2Dim >= 0 && st.tp > 1) {
    if (local[layout.split2Dim] % (st.tp * layout.blocks) != 0)
      return p.emitError() << "texec lowering: parameter '" << name
                           << "' dimension " << layout.split2Dim << " ("
                           << local[layout.split2Dim]
                           << ") is not divisible by tp = " << st.tp
                           << (layout.blocks > 1
                                   ? " times its " +
                                         std::to_string(layout.blocks) +
                                         " blocks"
                                   : std::string());
    local[layout.split2Dim] /= st.tp;
    if (layout.splitDim < 0) { // the only split: the first
      layout.splitDim = layout.split2Dim;
      layout.axis = "tp";
      layout.split2Dim = -1;
    }
  } else {
    layout.split2Dim = -1;
    layout.blocks = 1;
  }
  RankedTensorType localType = f32(local);
  // Its gradients' group when it is not the program's (texec.param `data`):
  // the ranks holding the same experts, or dp for a stem replicated over cp.
  std::string dataGroup = layout.dataGroup ? std::string(layout.dataGroup)
                          : overEp && st.ep > 1 ? st.expertGroup
                                                : std::string();
  auto it = decls.find(name);
  if (it != decls.end()) {
    int64_t have = it->second.getSplitDim() ? *it->second.getSplitDim() : -1;
    int64_t have2 =
        it->second.getSplit2Dim() ? *it->second.getSplit2Dim() : -1;
    const int64_t haveBlocks = it->second.getBlocks().value_or(1);
    if (have != layout.splitDim || have2 != layout.split2Dim ||
        haveBlocks != layout.blocks)
      return user->emitError()
             << "texec lowering: parameter '" << name
             << "' is used with two tensor-parallel layouts (split " << have
             << ", " << have2 << ", blocks " << haveBlocks << " and split "
             << layout.splitDim << ", " << layout.split2Dim << ", blocks "
             << layout.blocks << "; -1: none)";
    if (it->second.getDataGroup().value_or("") != dataGroup)
      return user->emitError()
             << "texec lowering: parameter '" << name
             << "' is used with two data groups ('"
             << it->second.getDataGroup().value_or("") << "' and '"
             << dataGroup << "', empty: the program's)";
    if (it->second.getPadded() != padded)
      return user->emitError()
             << "texec lowering: parameter '" << name
             << "' is used both as a padded vocabulary table and as a "
                "plain tensor-parallel weight";
  } else {
    StringRef init = "uniform";
    auto ln = dyn_cast<tg::LayerNormOp>(user);
    if (isBiasOperand(user, tgParam))
      init = "zeros";
    else if (ln && ln.getZeroCentered() && ln.getGamma() == tgParam)
      init = "zeros"; // LayerNorm1p: the kernel scales by gamma + 1
    else if (p.getKind() == tg::ParamKind::Norm)
      init = "ones";
    OpBuilder db(ctx());
    if (lastDecl)
      db.setInsertionPointAfter(lastDecl);
    else
      db.setInsertionPointToStart(&stage.getBody().front());
    IntegerAttr splitDim;
    StringAttr splitAxis;
    if (layout.splitDim >= 0) {
      splitDim = db.getI64IntegerAttr(layout.splitDim);
      splitAxis = db.getStringAttr(layout.axis);
    }
    // Expert shards are held by the ranks of one edp group, not all of dp.
    auto decl = tx::ParamOp::create(
        db, p.getLoc(), db.getStringAttr(name),
        db.getDenseI64ArrayAttr(type.getShape()), splitDim, splitAxis,
        db.getStringAttr(init), TypeAttr::get(localType),
        dataGroup.empty() ? StringAttr() : db.getStringAttr(dataGroup),
        padded ? db.getUnitAttr() : UnitAttr(),
        layout.split2Dim >= 0 ? db.getI64IntegerAttr(layout.split2Dim)
                              : IntegerAttr(),
        layout.split2Dim >= 0 ? db.getStringAttr("tp") : StringAttr(),
        layout.blocks > 1 ? db.getI64IntegerAttr(layout.blocks)
                          : IntegerAttr(),
        FloatAttr());
    lastDecl = decl;
    decls[name] = decl;
    st.paramStages[name].insert(stage.getIndex());
  }
  if (st.zero == 3) {
    auto decl = decls.find(name)->second;
    StringRef group = decl.getDataGroup() ? *decl.getDataGroup()
                                          : StringRef(st.dataGroup);
    return tx::ParamGatherOp::create(fb, loc, localType, name, group)
        .getResult();
  }
  return tx::ParamRefOp::create(fb, loc, localType, name).getResult();
}

FailureOr<FVal> ChunkLowering::input(Operation *user, Value tgInput) {
  auto in = tgInput.getDefiningOp<tg::InputOp>();
  StringRef name = in.getName();
  auto it = inputs.find(name);
  if (it != inputs.end())
    return FVal{it->second, Dist::Rep};
  auto itype = dyn_cast<RankedTensorType>(in.getType());
  // DLRM's sparse features: `bag` ids per sample in the table's rows.
  if (auto e = dyn_cast<tg::EmbeddingBagOp>(user);
      e && e.getIds() == tgInput) {
    int64_t rows =
        cast<RankedTensorType>(e.getTable().getType()).getDimSize(0);
    if (!itype || itype.getRank() != 2 || ShapedType::isDynamic(rows) ||
        ShapedType::isDynamic(itype.getDimSize(1)) || itype.getDimSize(1) < 1)
      return in.emitError() << "texec lowering: input '" << name
                            << "' of an embedding bag must be integer ids "
                               "[batch, bag] with a static bag size";
    int64_t bag = itype.getDimSize(1);
    return newInput(
        name, RankedTensorType::get({st.mbs, bag}, IntegerType::get(ctx(), 32)),
        i64a(rows), i64a(bag));
  }
  // Click labels of a binary cross-entropy: one id in {0, 1} per sample.
  if (auto bce = dyn_cast<tg::BinaryCrossEntropyOp>(user);
      bce && bce.getLabels() == tgInput)
    return newInput(name,
                    RankedTensorType::get({st.mbs}, IntegerType::get(ctx(), 32)),
                    i64a(2), IntegerAttr());
  // Tokens and next-token labels come from the corpus ([batch, sequence]);
  // a per-sample "labels" (ViT's classes) is a stream of ids like BERT's
  // next-sentence labels.
  const bool corpus = name == "tokens" ||
                      (name == "labels" && itype && itype.getRank() == 2);
  // A float input (ViT's images): synthetic values of its per-sample shape.
  if (!corpus && itype && isa<FloatType>(itype.getElementType())) {
    SmallVector<int64_t> shape(itype.getShape());
    if (shape.size() < 2 ||
        llvm::any_of(ArrayRef<int64_t>(shape).drop_front(),
                     ShapedType::isDynamic))
      return in.emitError() << "texec lowering: float input '" << name
                            << "' needs static sizes after the batch";
    shape[0] = st.mbs;
    return newInput(name, f32(shape), IntegerAttr(), IntegerAttr());
  }
  // Other integer inputs (BERT's token types and next-sentence labels)
  // are synthetic ids in the range their consumer reads: the rows of an
  // embedding table, the classes of a cross-entropy.
  int64_t range = 0;
  if (!corpus && itype && itype.getElementType().isInteger(32)) {
    if (auto e = dyn_cast<tg::EmbeddingOp>(user); e && e.getIds() == tgInput)
      range = cast<RankedTensorType>(e.getTable().getType()).getDimSize(0);
    if (auto c = dyn_cast<tg::CrossEntropyOp>(user);
        c && c.getLabels() == tgInput)
      range = cast<RankedTensorType>(c.getLogits().getType()).getShape().back();
  }
  if (!corpus && (range <= 0 || ShapedType::isDynamic(range) || !itype ||
                  itype.getRank() < 1 || itype.getRank() > 2))
    return in.emitError() << "texec lowering: input '" << name
                          << "' has no data source (expected tokens, "
                             "labels, integer ids [batch] or [batch, "
                             "sequence] read by an embedding or as "
                             "cross-entropy labels, or floats [batch, ...] "
                             "of static sizes)";
  SmallVector<int64_t> shape = {st.mbs};
  if (corpus || itype.getRank() == 2)
    shape.push_back(st.seq);
  auto type = RankedTensorType::get(shape, IntegerType::get(ctx(), 32));
  IntegerAttr rangeAttr;
  if (!corpus)
    rangeAttr = i64a(range);
  return newInput(name, type, rangeAttr, IntegerAttr());
}

FailureOr<FVal> ChunkLowering::act(Operation *user, Value v) {
  if (v.getDefiningOp<tg::InputOp>())
    return input(user, v);
  auto it = env.find(v);
  if (it == env.end())
    return user->emitError("texec lowering: operand is not available in "
                           "this model chunk");
  return it->second;
}

Value ChunkLowering::gatherSeq(FVal x) {
  if (x.dist != Dist::Seq)
    return x.v;
  auto it = gatheredSeq.find(x.v);
  if (it != gatheredSeq.end())
    return it->second;
  Value full =
      tx::AllGatherOp::create(fb, loc, grownType(x.v, 1, st.tp), x.v, "tp", 1);
  gatheredSeq[x.v] = full;
  Value seqShard = x.v;
  // Backward of the all-gather: the consumers' partial input gradients are
  // summed and scattered back to sequence shards in one reduce-scatter.
  tape.push_back([this, full, seqShard]() -> LogicalResult {
    bool partial = false;
    Value g = takeGradRaw(full, partial);
    if (!g)
      return success();
    if (!partial)
      return chunk.emitError("texec lowering: internal: a sequence-parallel "
                             "all-gather fed a consumer whose gradient is "
                             "not a partial sum");
    addGrad(seqShard, tx::ReduceScatterOp::create(bb, loc, seqShard.getType(),
                                                  g, "tp", 1));
    return success();
  });
  return full;
}

Value ChunkLowering::gatherCp(Value x) {
  Value full =
      tx::AllGatherOp::create(fb, loc, grownType(x, 1, st.cp), x, "cp", 1);
  // Every cp rank's queries read the gathered keys: the gradient of the
  // whole sequence is summed over cp and each rank keeps its own part.
  tape.push_back([this, full, x]() -> LogicalResult {
    Value g = takeGrad(full);
    if (g)
      addGrad(x, tx::ReduceScatterOp::create(bb, loc, x.getType(), g, "cp", 1));
    return success();
  });
  return full;
}

void ChunkLowering::addGrad(Value f, Value g, bool partial) {
  grads[f].push_back({g, partial && tpOn()});
}

Value ChunkLowering::sum(SmallVector<Value> &vals) {
  Value acc = vals.front();
  for (Value v : llvm::drop_begin(vals))
    acc = kernel(bb, K::Add, {acc, v}, {acc.getType()})[0];
  return acc;
}

Value ChunkLowering::takeGradRaw(Value f, bool &partial) {
  auto it = grads.find(f);
  partial = false;
  if (it == grads.end())
    return {};
  SmallVector<Value> full, part;
  for (auto [g, p] : it->second)
    (p ? part : full).push_back(g);
  grads.erase(it);
  if (!part.empty() && full.empty()) {
    partial = true;
    return sum(part);
  }
  SmallVector<Value> all = full;
  if (!part.empty()) {
    Value p = sum(part);
    all.push_back(tx::AllReduceOp::create(bb, loc, p.getType(), p, "tp"));
  }
  return sum(all);
}

Value ChunkLowering::takeGrad(Value f) {
  bool partial = false;
  Value g = takeGradRaw(f, partial);
  if (g && partial)
    g = tx::AllReduceOp::create(bb, loc, g.getType(), g, "tp");
  return g;
}

Value ChunkLowering::saved(Value f) {
  auto it = savedMap.find(f);
  if (it != savedMap.end())
    return it->second;
  Value b;
  Operation *def = f.getDefiningOp();
  if (def && isa<tx::ParamRefOp, tx::ParamGatherOp, tx::InputOp>(def)) {
    // Cheaper to read (or gather) again than to keep per micro-batch.
    b = bb.clone(*def)->getResult(0);
  } else {
    b = bwdBlock->addArgument(f.getType(), loc);
    saveList.push_back(f);
  }
  savedMap[f] = b;
  return b;
}

//===----------------------------------------------------------------------===//
// Op rules: forward emission plus the gradient rule on the tape
//===----------------------------------------------------------------------===//

LogicalResult ChunkLowering::lowerEmbedding(tg::EmbeddingOp op) {
  auto ids = act(op, op.getIds());
  if (failed(ids))
    return failure();
  FailureOr<Value> wte = param(op, op.getTable(), tpLayout(op, 1));
  if (failed(wte))
    return failure();
  // Fuse a following position embedding (the runtime adds both in one
  // pass, and only once across vocabulary shards).
  tg::PositionEmbeddingOp pos;
  if (op->hasOneUse())
    pos = dyn_cast<tg::PositionEmbeddingOp>(*op->user_begin());
  if (pos && pos.getX() != op.getResult())
    pos = {};
  Value wpe;
  if (pos) {
    auto tableType = cast<RankedTensorType>(pos.getTable().getType());
    if (tableType.getDimSize(0) < st.seqFull)
      return pos.emitError() << "texec lowering: position table has "
                             << tableType.getDimSize(0)
                             << " rows, fewer than the sequence ("
                             << st.seqFull << ")";
    FailureOr<Value> w = param(pos, pos.getTable(), {-1});
    if (failed(w))
      return failure();
    wpe = *w;
    fused.insert(pos);
  }
  Operation *last = pos ? pos.getOperation() : op.getOperation();
  auto fullType = localType(op, last->getResult(0).getType(), Dist::Rep);
  if (failed(fullType))
    return failure();
  SmallVector<NamedAttribute> config;
  if (tpOn())
    config.push_back(tpAxis("vocab_axis"));
  // A context-parallel rank's positions start at its cp coordinate times
  // the local length.
  if (pos && cpOn())
    config.push_back(cfg("pos_axis", StringAttr::get(ctx(), "cp")));
  SmallVector<Value> ins = {ids->v, *wte};
  if (wpe)
    ins.push_back(wpe);
  Value y = kernel(fb, pos ? K::EmbeddingPos : K::Embedding, ins, {*fullType},
                   config)[0];
  FVal out{y, Dist::Rep};
  if (tpOn()) {
    if (st.sp) {
      auto seqType = localType(op, last->getResult(0).getType(), Dist::Seq);
      out = {tx::ReduceScatterOp::create(fb, loc, *seqType, y, "tp", 1),
             Dist::Seq};
    } else {
      out.v = tx::AllReduceOp::create(fb, loc, y.getType(), y, "tp");
    }
  }
  env[last->getResult(0)] = out;
  Value idsV = ids->v, wteV = *wte, wpeV = wpe, outV = out.v;
  bool sp = st.sp && tpOn();
  tape.push_back([=, this]() -> LogicalResult {
    Value g = takeGrad(outV);
    if (!g)
      return success();
    if (sp)
      g = tx::AllGatherOp::create(bb, loc, *fullType, g, "tp", 1);
    SmallVector<Type> outs = {wteV.getType()};
    if (wpeV)
      outs.push_back(wpeV.getType());
    auto gs = kernel(bb, wpeV ? K::EmbeddingPosBwd : K::EmbeddingBwd,
                     {saved(idsV), g}, outs, config);
    accumulate(wteV.getDefiningOp()->getAttrOfType<StringAttr>("sym"),
               gs[0]);
    if (wpeV)
      accumulate(wpeV.getDefiningOp()->getAttrOfType<StringAttr>("sym"),
                 gs[1]);
    return success();
  });
  return success();
}

LogicalResult ChunkLowering::lowerNorm(Operation *op) {
  bool layer = isa<tg::LayerNormOp>(op);
  double eps;
  Value tgGamma, tgBeta;
  // Zero-centred LayerNorm1p (Megatron apply_layernorm_1p, Nemotron): the
  // kernels use gamma + 1.
  bool oneP = false;
  if (auto ln = dyn_cast<tg::LayerNormOp>(op)) {
    oneP = ln.getZeroCentered();
    if (!ln.getBeta())
      return op->emitError("texec lowering: layer_norm without beta has no "
                           "runtime kernel");
    eps = ln.getEps().convertToDouble();
    tgGamma = ln.getGamma();
    tgBeta = ln.getBeta();
  } else {
    auto rms = cast<tg::RMSNormOp>(op);
    eps = rms.getEps().convertToDouble();
    tgGamma = rms.getGamma();
  }
  auto x = act(op, op->getOperand(0));
  if (failed(x))
    return failure();
  FailureOr<Value> gamma = param(op, tgGamma, {-1});
  if (failed(gamma))
    return failure();
  // A per-head RMSNorm (Qwen3's q_norm / k_norm: gamma of one head's size)
  // normalises each head alone, so the heads a tp rank holds need nothing
  // from the others; its gamma's gradient is partial over tp.
  const int64_t localFeatures =
      cast<RankedTensorType>(x->v.getType()).getShape().back();
  const int64_t gammaSize =
      cast<RankedTensorType>(gamma->getType()).getNumElements();
  const bool perHeadShards = x->dist == Dist::Last && !layer &&
                             gammaSize > 0 && localFeatures % gammaSize == 0;
  if (x->dist == Dist::Last && !perHeadShards)
    return op->emitError("texec lowering: a norm over a feature-sharded "
                         "(tensor-parallel) activation needs its whole "
                         "feature row (or, for RMSNorm, a gamma that "
                         "divides the rank's features)");
  Value beta;
  if (tgBeta) {
    FailureOr<Value> b = param(op, tgBeta, {-1});
    if (failed(b))
      return failure();
    beta = *b;
  }
  auto yType = cast<RankedTensorType>(x->v.getType());
  int64_t rows = yType.getNumElements() / yType.getShape().back();
  int64_t groups = 1;
  auto gType = cast<RankedTensorType>(gamma->getType());
  if (!layer)
    groups = yType.getShape().back() / gType.getNumElements();
  auto cfgEps = cfg("eps", FloatAttr::get(Float64Type::get(ctx()), eps));
  SmallVector<NamedAttribute> shift;
  if (oneP)
    shift.push_back(
        cfg("gamma_shift", FloatAttr::get(Float64Type::get(ctx()), 1.0)));
  SmallVector<NamedAttribute> fwdConfig = {cfgEps};
  fwdConfig.append(shift.begin(), shift.end());
  SmallVector<Value> res;
  if (layer)
    res = kernel(fb, K::LayerNorm, {x->v, *gamma, beta},
                 {yType, f32({rows}), f32({rows})}, fwdConfig);
  else
    res = kernel(fb, K::RmsNorm, {x->v, *gamma}, {yType, f32({rows * groups})},
                 {cfgEps});
  env[op->getResult(0)] = {res[0], x->dist};
  std::string gName =
      gamma->getDefiningOp()->getAttrOfType<StringAttr>("sym").str();
  std::string bName =
      beta ? beta.getDefiningOp()->getAttrOfType<StringAttr>("sym").str() : "";
  // Gradients of replicated parameters seen through sequence shards are
  // partial over tp (summed after the schedule).
  if (x->dist == Dist::Seq || perHeadShards) {
    st.tpPartialParams[stage.getIndex()].insert(gName);
    if (beta)
      st.tpPartialParams[stage.getIndex()].insert(bName);
  }
  Value xv = x->v, gv = *gamma, y = res[0];
  SmallVector<Value> stats(res.begin() + 1, res.end());
  tape.push_back([=, this]() -> LogicalResult {
    Value dy = takeGrad(y);
    if (!dy)
      return success();
    SmallVector<Value> ins = {dy, saved(xv), saved(gv)};
    for (Value s : stats)
      ins.push_back(saved(s));
    if (layer) {
      auto g = kernel(bb, K::LayerNormBwd, ins,
                      {xv.getType(), gv.getType(), gv.getType()}, shift);
      addGrad(xv, g[0]);
      accumulate(gName, g[1]);
      accumulate(bName, g[2]);
    } else {
      auto g = kernel(bb, K::RmsNormBwd, ins, {xv.getType(), gv.getType()});
      addGrad(xv, g[0]);
      accumulate(gName, g[1]);
    }
    return success();
  });
  return success();
}

LogicalResult ChunkLowering::lowerLinear(tg::LinearOp op) {
  auto x = act(op, op.getX());
  if (failed(x))
    return failure();
  tg::TpRole role = tpOn() ? op.getTpRole() : tg::TpRole::None;
  ParamLayout wLayout{-1}, bLayout{-1};
  Value in = x->v;
  Dist outDist = x->dist;
  bool inputPartialGrad = false; // dx is a partial sum over tp
  bool reduceOut = false;        // output is a partial sum over tp
  switch (role) {
  case tg::TpRole::Column:
  case tg::TpRole::Vocab:
    if (x->dist == Dist::Last)
      return op.emitError("texec lowering: column-parallel linear needs a "
                          "replicated input, got a feature-sharded one");
    in = gatherSeq(*x);
    outDist = Dist::Last;
    inputPartialGrad = true;
    break;
  case tg::TpRole::Row:
    if (x->dist != Dist::Last)
      return op.emitError("texec lowering: row-parallel linear needs a "
                          "feature-sharded input (the output of a "
                          "column-parallel linear)");
    reduceOut = true;
    outDist = st.sp ? Dist::Seq : Dist::Rep;
    break;
  case tg::TpRole::None:
    if (x->dist == Dist::Last)
      return op.emitError("texec lowering: a linear without a "
                          "tensor-parallel role cannot take a "
                          "feature-sharded input");
    break;
  }
  // The weight's and bias's split (the LM head's rows are the vocabulary:
  // padded like the embedding).
  if (role != tg::TpRole::None) {
    wLayout = tpLayout(op, 1);
    if (op.getBias())
      bLayout = tpLayout(op, 2);
  }
  FailureOr<Value> w = param(op, op.getWeight(), wLayout);
  if (failed(w))
    return failure();
  Value b;
  if (op.getBias()) {
    FailureOr<Value> bv = param(op, op.getBias(), bLayout);
    if (failed(bv))
      return failure();
    b = *bv;
  }
  // Row-parallel: full output features, partial sums; column / vocab:
  // feature-sharded; no role: the input's layout.
  Dist computeDist = role == tg::TpRole::Row ? Dist::Rep : outDist;
  auto yType = localType(op, op.getType(), computeDist,
                         role == tg::TpRole::Vocab);
  if (failed(yType))
    return failure();
  SmallVector<NamedAttribute> config;
  // A row-parallel bias is added once, before the reduction.
  if (b && reduceOut)
    config.push_back(tpAxis("bias_axis"));
  Value y = b ? kernel(fb, K::LinearBias, {in, *w, b}, {*yType}, config)[0]
              : kernel(fb, K::Linear, {in, *w}, {*yType})[0];
  Value out = y;
  if (reduceOut) {
    if (st.sp)
      out = tx::ReduceScatterOp::create(
          fb, loc, *localType(op, op.getType(), Dist::Seq), y, "tp", 1);
    else
      out = tx::AllReduceOp::create(fb, loc, y.getType(), y, "tp");
  }
  env[op.getResult()] = {out, outDist};
  std::string wName = w->getDefiningOp()->getAttrOfType<StringAttr>("sym").str();
  std::string bName =
      b ? b.getDefiningOp()->getAttrOfType<StringAttr>("sym").str() : "";
  if (role == tg::TpRole::None && x->dist == Dist::Seq) {
    st.tpPartialParams[stage.getIndex()].insert(wName);
    if (b)
      st.tpPartialParams[stage.getIndex()].insert(bName);
  }
  Value wv = *w;
  bool sp = st.sp;
  tape.push_back([=, this]() -> LogicalResult {
    Value dy = takeGrad(out);
    if (!dy)
      return success();
    if (reduceOut && sp)
      dy = tx::AllGatherOp::create(bb, loc, y.getType(), dy, "tp", 1);
    SmallVector<Type> outs = {in.getType(), wv.getType()};
    if (b)
      outs.push_back(b.getType());
    auto g = kernel(bb, b ? K::LinearBiasBwd : K::LinearBwd,
                    {dy, saved(in), saved(wv)}, outs);
    addGrad(in, g[0], inputPartialGrad);
    accumulate(wName, g[1]);
    if (b)
      accumulate(bName, g[2]);
    return success();
  });
  return success();
}

/// What the lowering of an attention needs of its attributes: a window
/// only with causal masking, a dropout rate in [0, 1), an even rotary
/// dimension within the head.
static LogicalResult checkAttentionAttrs(tg::AttentionOp op) {
  if (!op.getCausal() && op.getWindow() > 0)
    return op.emitError("texec lowering: a sliding window needs causal "
                        "attention");
  const double attnDropout = op.getDropout().convertToDouble();
  if (attnDropout < 0.0 || attnDropout >= 1.0)
    return op.emitError() << "texec lowering: attention dropout "
                          << attnDropout << " must be in [0, 1)";
  const int64_t rot = op.getRotaryDim();
  if (rot != 0 && (rot < 0 || rot % 2 != 0 || rot > int64_t(op.getHeadDim())))
    return op.emitError() << "texec lowering: rotary_dim " << rot
                          << " must be even and at most head_dim "
                          << op.getHeadDim();
  return success();
}

LogicalResult ChunkLowering::lowerAttention(tg::AttentionOp op) {
  if (failed(checkAttentionAttrs(op)))
    return failure();
  const bool causal = op.getCausal();
  const double attnDropout = op.getDropout().convertToDouble();
  const int64_t rot = op.getRotaryDim();
  // tp divides both (checked for every attention before lowering).
  int64_t heads = op.getNumHeads(), kv = op.getNumKvHeads();
  SmallVector<FVal> qkv;
  for (Value v : {op.getQ(), op.getK(), op.getV()}) {
    auto f = act(op, v);
    if (failed(f))
      return failure();
    Dist want = tpOn() ? Dist::Last : Dist::Rep;
    if (f->dist != want)
      return op.emitError("texec lowering: attention inputs must be "
                          "head-sharded (outputs of column-parallel "
                          "linears) under tensor parallelism");
    qkv.push_back(*f);
  }
  int64_t local = heads / st.tp, localKv = kv / st.tp;
  if (!tpOn())
    local = heads, localKv = kv;
  auto outType = localType(op, op.getType(), tpOn() ? Dist::Last : Dist::Rep);
  if (failed(outType))
    return failure();
  const int64_t headDim = op.getHeadDim();
  SmallVector<NamedAttribute> config = {
      cfg("heads", i64a(local)),
      cfg("kv_heads", i64a(localKv)),
      cfg("head_dim",
          i64a(headDim))};
  if (op.getValueHeadDim() != headDim)
    config.push_back(cfg("v_head_dim", i64a(op.getValueHeadDim())));
  if (FloatAttr sc = op.getSoftmaxScaleAttr())
    config.push_back(cfg("scale", sc));
  // Multi-head latent attention (DeepSeek-V2): the rotary key shared by
  // all heads, over the whole chunk's positions (gathered from sequence
  // shards), to be rotated and appended to every local key head.
  Value ropeKey;
  if (op.getKRope()) {
    auto f = act(op, op.getKRope());
    if (failed(f))
      return failure();
    if (f->dist == Dist::Last)
      return op.emitError("texec lowering: the rotary key of multi-head "
                          "latent attention must be replicated over tp (the "
                          "output of a linear without a tensor-parallel "
                          "role)");
    ropeKey = gatherSeq(*f);
  }
  if (rot > 0) {
    // RoPE on the local q and k heads, at this rank's positions (shifted
    // by the cp coordinate under context parallelism, before the keys are
    // gathered); the backward turns the gradients back. With a rotary key,
    // q's last rot dimensions turn, and the key turns once for all heads.
    for (int which = 0; which < 2; ++which) {
      const bool shared = which == 1 && ropeKey;
      SmallVector<NamedAttribute> rc = {
          cfg("heads", i64a(shared ? 1 : which == 0 ? local : localKv)),
          cfg("head_dim", i64a(shared ? rot : headDim)),
          cfg("rotary_dim", i64a(rot)), cfg("theta", op.getRopeThetaAttr())};
      if (DictionaryAttr rs = op.getRopeScalingAttr())
        rc.push_back(cfg("scaling", rs));
      if (cpOn())
        rc.push_back(cfg("pos_axis", StringAttr::get(ctx(), "cp")));
      if (ropeKey && which == 0)
        rc.push_back(cfg("rotary_offset", i64a(headDim - rot)));
      if (op.getRopeInterleaved())
        rc.push_back(cfg("interleaved", UnitAttr::get(ctx())));
      Value in = shared ? ropeKey : qkv[which].v;
      Value rotated = kernel(fb, K::Rope, {in}, {in.getType()}, rc)[0];
      (shared ? ropeKey : qkv[which].v) = rotated;
      tape.push_back([=, this]() -> LogicalResult {
        // The shared key's gradient is a partial sum over tp (each rank's
        // heads); RoPE is linear, so it stays one until its producer sums
        // it (or the sequence-parallel gather reduce-scatters it).
        bool partial = false;
        Value dy = shared ? takeGradRaw(rotated, partial) : takeGrad(rotated);
        if (!dy)
          return success();
        addGrad(in, kernel(bb, K::RopeBwd, {dy}, {in.getType()}, rc)[0],
                partial);
        return success();
      });
    }
  }
  if (ropeKey) {
    // Key head h: the local head h of k (head_dim - rot wide), then the
    // rotary key. The rotary key's gradient sums this rank's heads: a
    // partial sum over tp.
    Value kNope = qkv[1].v;
    auto kt = cast<RankedTensorType>(kNope.getType());
    auto fullType = f32({kt.getDimSize(0), kt.getDimSize(1), localKv * headDim});
    SmallVector<NamedAttribute> lc = {cfg("heads", i64a(localKv)),
                                      cfg("nope_dim", i64a(headDim - rot)),
                                      cfg("rope_dim", i64a(rot))};
    Value kFull =
        kernel(fb, K::LatentKey, {kNope, ropeKey}, {fullType}, lc)[0];
    qkv[1].v = kFull;
    Value rk = ropeKey;
    tape.push_back([=, this]() -> LogicalResult {
      Value dy = takeGrad(kFull);
      if (!dy)
        return success();
      auto g = kernel(bb, K::LatentKeyBwd, {dy},
                      {kNope.getType(), rk.getType()}, lc);
      addGrad(kNope, g[0]);
      addGrad(rk, g[1], /*partial=*/true);
      return success();
    });
  }
  // Context parallelism (all-gather form, as in Llama 3: "The Llama 3 Herd
  // of Models", 2024, section 3.3.2): the local queries attend to the
  // keys and values of the whole sequence, gathered over cp; the causal
  // mask is offset by the rank's first position.
  if (cpOn()) {
    qkv[1].v = gatherCp(qkv[1].v);
    qkv[2].v = gatherCp(qkv[2].v);
    config.push_back(cfg("cp_axis", StringAttr::get(ctx(), "cp")));
  }
  // A window of at least the sequence masks nothing more than causality.
  const int64_t window = int64_t(op.getWindow());
  if (window > 0 && window < st.seqFull)
    config.push_back(cfg("window", op.getWindowAttr()));
  // Encoders (BERT, ViT): every query sees every key.
  if (!causal)
    config.push_back(cfg("bidirectional", UnitAttr::get(ctx())));
  if (attnDropout > 0.0) {
    // The mask of every (sample, head, query, key) is drawn from its
    // global coordinates; this rank's heads start at its tp coordinate.
    config.push_back(cfg("dropout", op.getDropoutAttr()));
    auto site = nextSite(op);
    if (failed(site))
      return failure();
    config.push_back(cfg(
        "site", i64a(*site)));
    config.push_back(
        cfg("heads_total", i64a(heads)));
    if (tpOn())
      config.push_back(tpAxis("head_axis"));
  }
  // Sinks (gpt-oss): one logit per head, split over tp with the heads. Each
  // rank's gradient covers its heads over its micro-batch and positions:
  // partial over dp and cp like every weight, complete over tp.
  Value sinks;
  std::string sinksName;
  if (op.getSinks()) {
    const unsigned operand = op.getSinksMutable()[0].getOperandNumber();
    FailureOr<Value> sv = param(
        op, op.getSinks(), tpOn() ? tpLayout(op, operand) : ParamLayout{-1});
    if (failed(sv))
      return failure();
    sinks = *sv;
    sinksName = sinks.getDefiningOp()->getAttrOfType<StringAttr>("sym").str();
  }
  const K fwdKind = sinks ? K::AttentionSinks : K::Attention;
  SmallVector<Value> fwdIns = {qkv[0].v, qkv[1].v, qkv[2].v};
  if (sinks)
    fwdIns.push_back(sinks);
  // Saved for the backward (rt::attentionForward): the probabilities
  // [b, heads, s, keys], or under selective recomputation their rows'
  // log-sum-exp [b, heads, s], from which the backward forms the scores
  // and probabilities again (Korthikanti et al. 2022, "Reducing Activation
  // Recomputation in Large Transformer Models": the s^2 core is what
  // selective recomputation drops).
  Type savedType = selective ? f32({st.mbs, local, st.seq})
                             : f32({st.mbs, local, st.seq, st.seqFull});
  auto r = kernel(fb, fwdKind, fwdIns, {*outType, savedType}, config);
  env[op.getResult()] = {r[0], tpOn() ? Dist::Last : Dist::Rep};
  Value q = qkv[0].v, k = qkv[1].v, v = qkv[2].v, o = r[0], probs = r[1];
  tape.push_back([=, this]() -> LogicalResult {
    Value dy = takeGrad(o);
    if (!dy)
      return success();
    Value p = saved(probs);
    SmallVector<Type> gradTypes = {q.getType(), k.getType(), v.getType()};
    if (sinks)
      gradTypes.push_back(sinks.getType());
    // The forward's output too (the fused backward's row sums dy . o):
    // kept anyway as the output projection's input.
    auto g = kernel(bb, sinks ? K::AttentionSinksBwd : K::AttentionBwd,
                    {dy, saved(q), saved(k), saved(v), saved(o), p}, gradTypes,
                    config);
    addGrad(q, g[0]);
    addGrad(k, g[1]);
    addGrad(v, g[2]);
    if (sinks)
      accumulate(sinksName, g[3]);
    return success();
  });
  return success();
}

LogicalResult ChunkLowering::lowerCrossEntropy(tg::CrossEntropyOp op) {
  auto logits = act(op, op.getLogits());
  auto labels = act(op, op.getLabels());
  if (failed(logits) || failed(labels))
    return failure();
  if (logits->dist == Dist::Seq)
    return op.emitError("texec lowering: cross_entropy over sequence "
                        "shards is not supported");
  auto lt = cast<RankedTensorType>(logits->v.getType());
  auto labelType = cast<RankedTensorType>(labels->v.getType());
  // Per token ([batch, seq, vocab] logits) or per sample ([batch, classes]
  // after select_token: BERT's next-sentence loss).
  const bool perSample = lt.getRank() == 2;
  if ((lt.getRank() != 3 && !perSample) ||
      labelType.getRank() != lt.getRank() - 1)
    return op.emitError("texec lowering: cross_entropy expects logits of "
                        "shape batch x sequence x vocabulary with batch x "
                        "sequence labels, or batch x classes with batch "
                        "labels");
  SmallVector<NamedAttribute> config;
  if (logits->dist == Dist::Last) {
    config.push_back(tpAxis("vocab_axis"));
    // Logits of a vocabulary padded to a multiple of tp: the real size.
    int64_t vocab =
        cast<RankedTensorType>(op.getLogits().getType()).getShape().back();
    if (vocab % st.tp != 0)
      config.push_back(cfg("vocab", i64a(vocab)));
  }
  int64_t rows = perSample ? st.mbs : st.mbs * st.seq;
  auto r = kernel(fb, K::CrossEntropy, {logits->v, labels->v},
                  {f32({1}), f32({rows})}, config);
  // The step's loss is the sum of the model's losses, each a mean: over
  // the tokens of the global batch, or over its samples. A per-sample loss
  // is computed by every context-parallel rank alike (select_token sums
  // its chunk over cp), so each copy counts 1 / cp of it.
  double gradScale = st.gradScale;
  FloatAttr lossScale;
  if (perSample) {
    gradScale = 1.0 / double(st.globalBatch * st.cp);
    lossScale = FloatAttr::get(Float64Type::get(ctx()),
                               double(st.seqFull) / double(st.cp));
  }
  tx::LossOp::create(fb, loc, r[0], lossScale);
  losses.insert(op.getResult());
  Value lv = logits->v, lab = labels->v, lse = r[1];
  auto bwdConfig = config;
  bwdConfig.push_back(
      cfg("grad_scale", FloatAttr::get(Float64Type::get(ctx()), gradScale)));
  tape.push_back([=, this]() -> LogicalResult {
    auto g = kernel(bb, K::CrossEntropyBwd,
                    {saved(lv), saved(lab), saved(lse)}, {lv.getType()},
                    bwdConfig);
    addGrad(lv, g[0]);
    return success();
  });
  return success();
}

/// DLRM's embedding bag (Naumov et al. 2019): the table's rows of each
/// sample's ids, pooled. The lookup is the token embedding's kernel on
/// [batch, bag] ids, so under tp the table is split by rows like a
/// vocabulary-parallel embedding (Megatron-LM's VocabParallelEmbedding):
/// each rank pools the rows it holds and an all-reduce over tp sums the
/// partial bags. The backward pools nothing: every row of a bag gets the
/// bag's gradient, and each rank adds those of its own rows.
LogicalResult ChunkLowering::lowerEmbeddingBag(tg::EmbeddingBagOp op) {
  auto ids = act(op, op.getIds());
  if (failed(ids))
    return failure();
  FailureOr<Value> table = param(op, op.getTable(), tpLayout(op, 1));
  if (failed(table))
    return failure();
  auto idsType = cast<RankedTensorType>(ids->v.getType());
  int64_t bag = idsType.getDimSize(1);
  int64_t dim = cast<RankedTensorType>(table->getType()).getDimSize(1);
  RankedTensorType rowsType = f32({st.mbs, bag, dim});
  RankedTensorType pooledType = f32({st.mbs, dim});
  SmallVector<NamedAttribute> config, poolConfig;
  if (tpOn())
    config.push_back(tpAxis("vocab_axis"));
  if (op.getMean())
    poolConfig.push_back(cfg("mean", UnitAttr::get(ctx())));
  Value rows = kernel(fb, K::Embedding, {ids->v, *table}, {rowsType}, config)[0];
  Value pooled = kernel(fb, K::BagPool, {rows}, {pooledType}, poolConfig)[0];
  if (tpOn())
    pooled = tx::AllReduceOp::create(fb, loc, pooledType, pooled, "tp");
  env[op.getResult()] = {pooled, Dist::Rep};
  Value idsV = ids->v, tableV = *table;
  tape.push_back([=, this]() -> LogicalResult {
    Value g = takeGrad(pooled);
    if (!g)
      return success();
    Value drows = kernel(bb, K::BagPoolBwd, {g}, {rowsType}, poolConfig)[0];
    Value dt = kernel(bb, K::EmbeddingBwd, {saved(idsV), drows},
                      {tableV.getType()}, config)[0];
    accumulate(tableV.getDefiningOp()->getAttrOfType<StringAttr>("sym"), dt);
    return success();
  });
  return success();
}

/// DLRM's dot interaction: every rank holds every feature whole.
LogicalResult ChunkLowering::lowerDotInteraction(tg::DotInteractionOp op) {
  SmallVector<Value> feats;
  for (Value f : op.getFeatures()) {
    auto x = act(op, f);
    if (failed(x))
      return failure();
    if (x->dist != Dist::Rep)
      return op.emitError("texec lowering: dot_interaction needs whole "
                          "features on every rank (not split over tp)");
    feats.push_back(x->v);
  }
  if (feats.size() < 2)
    return op.emitError("texec lowering: dot_interaction needs at least two "
                        "features");
  auto outType = localType(op, op.getResult().getType(), Dist::Rep);
  if (failed(outType))
    return failure();
  Value y = kernel(fb, K::DotInteraction, feats, {*outType})[0];
  env[op.getResult()] = {y, Dist::Rep};
  tape.push_back([=, this]() -> LogicalResult {
    Value g = takeGrad(y);
    if (!g)
      return success();
    SmallVector<Value> ins = {g};
    SmallVector<Type> outs;
    for (Value f : feats) {
      ins.push_back(saved(f));
      outs.push_back(f.getType());
    }
    auto gs = kernel(bb, K::DotInteractionBwd, ins, outs);
    for (auto [f, df] : llvm::zip(feats, gs))
      addGrad(f, df);
    return success();
  });
  return success();
}

/// DLRM's click loss: the mean over the global batch's samples of the
/// sigmoid binary cross-entropy (one logit per sample).
LogicalResult ChunkLowering::lowerBinaryCrossEntropy(
    tg::BinaryCrossEntropyOp op) {
  if (!op.getLabels().getDefiningOp<tg::InputOp>())
    return op.emitError("texec lowering: binary_cross_entropy labels must be "
                        "a model input");
  if (st.cp > 1)
    return op.emitError("texec lowering: binary_cross_entropy under context "
                        "parallelism is not supported (one logit per "
                        "sample has no positions to split)");
  auto logits = act(op, op.getLogits());
  auto labels = act(op, op.getLabels());
  if (failed(logits) || failed(labels))
    return failure();
  auto lt = cast<RankedTensorType>(logits->v.getType());
  if (logits->dist != Dist::Rep || lt.getNumElements() != st.mbs)
    return op.emitError() << "texec lowering: binary_cross_entropy expects "
                             "one whole logit per sample ([batch, 1]), got "
                          << lt;
  auto r = kernel(fb, K::BinaryCrossEntropy, {logits->v, labels->v},
                  {f32({1})});
  // The step's loss is a mean over the tokens of the global batch: a
  // per-sample loss over longer sequences counts seq_len times.
  FloatAttr lossScale;
  if (st.seqFull != 1)
    lossScale =
        FloatAttr::get(Float64Type::get(ctx()), double(st.seqFull));
  tx::LossOp::create(fb, loc, r[0], lossScale);
  losses.insert(op.getResult());
  Value lv = logits->v, lab = labels->v;
  SmallVector<NamedAttribute> config = {
      cfg("grad_scale", FloatAttr::get(Float64Type::get(ctx()),
                                       1.0 / double(st.globalBatch)))};
  tape.push_back([=, this]() -> LogicalResult {
    auto g = kernel(bb, K::BinaryCrossEntropyBwd, {saved(lv), saved(lab)},
                    {lv.getType()}, config);
    addGrad(lv, g[0]);
    return success();
  });
  return success();
}

/// ViT's patch embedding (Dosovitskiy et al. 2021): every rank computes the
/// whole micro-batch's tokens from its images (under context and sequence
/// parallelism they are sliced after the positions, in run()). Under cp the
/// stem's parameters are summed over dp only (stemLayout): every cp rank
/// computes the same stem from the whole gathered gradient.
LogicalResult ChunkLowering::lowerPatchEmbed(tg::PatchEmbedOp op) {
  if (!op.getBias())
    return op.emitError("texec lowering: a patch embedding without bias has "
                        "no runtime kernel");
  auto img = act(op, op.getImage());
  if (failed(img))
    return failure();
  auto it = cast<RankedTensorType>(img->v.getType());
  const int64_t patch = op.getPatch();
  if (it.getRank() != 4 || it.getDimSize(2) != it.getDimSize(3) ||
      patch <= 0 || it.getDimSize(2) % patch != 0)
    return op.emitError("texec lowering: patch_embed needs square images "
                        "[batch, channels, side, side] whose side the patch "
                        "divides");
  FailureOr<Value> w = param(op, op.getWeight(), stemLayout());
  FailureOr<Value> b = param(op, op.getBias(), stemLayout());
  if (failed(w) || failed(b))
    return failure();
  const int64_t grid = it.getDimSize(2) / patch;
  auto yType = f32({st.mbs, grid * grid,
                    cast<RankedTensorType>(w->getType()).getDimSize(1)});
  SmallVector<NamedAttribute> config = {
      cfg("patch", i64a(patch))};
  Value images = img->v, wv = *w, bv = *b;
  Value y = kernel(fb, K::PatchEmbed, {images, wv, bv}, {yType}, config)[0];
  env[op.getResult()] = {y, Dist::Rep};
  tape.push_back([=, this]() -> LogicalResult {
    Value dy = takeGrad(y);
    if (!dy)
      return success();
    auto g = kernel(bb, K::PatchEmbedBwd, {dy, saved(images)},
                    {wv.getType(), bv.getType()}, config);
    accumulate(wv.getDefiningOp()->getAttrOfType<StringAttr>("sym"), g[0]);
    accumulate(bv.getDefiningOp()->getAttrOfType<StringAttr>("sym"), g[1]);
    return success();
  });
  return success();
}

/// ViT's class token before the patch tokens.
LogicalResult ChunkLowering::lowerPrependToken(tg::PrependTokenOp op) {
  auto x = act(op, op.getX());
  if (failed(x))
    return failure();
  if (x->dist != Dist::Rep)
    return op.emitError("texec lowering: prepend_token needs the whole "
                        "sequence and feature rows on every rank");
  FailureOr<Value> tok = param(op, op.getToken(), stemLayout());
  if (failed(tok))
    return failure();
  auto xt = cast<RankedTensorType>(x->v.getType());
  auto yType =
      f32({xt.getDimSize(0), xt.getDimSize(1) + 1, xt.getDimSize(2)});
  Value xv = x->v, tv = *tok;
  Value y = kernel(fb, K::PrependToken, {xv, tv}, {yType})[0];
  env[op.getResult()] = {y, Dist::Rep};
  tape.push_back([=, this]() -> LogicalResult {
    Value dy = takeGrad(y);
    if (!dy)
      return success();
    auto g = kernel(bb, K::PrependTokenBwd, {dy},
                    {xv.getType(), tv.getType()});
    addGrad(xv, g[0]);
    accumulate(tv.getDefiningOp()->getAttrOfType<StringAttr>("sym"), g[1]);
    return success();
  });
  return success();
}

/// Learned positions added to an activation that is not a token embedding
/// (ViT: after the class token; a following embedding fuses them instead).
LogicalResult ChunkLowering::lowerPositionEmbedding(
    tg::PositionEmbeddingOp op) {
  auto x = act(op, op.getX());
  if (failed(x))
    return failure();
  if (x->dist != Dist::Rep)
    return op.emitError("texec lowering: position_embedding needs the "
                        "whole feature rows of every position it holds");
  auto tableType = cast<RankedTensorType>(op.getTable().getType());
  if (tableType.getDimSize(0) < st.seqFull)
    return op.emitError() << "texec lowering: position table has "
                          << tableType.getDimSize(0)
                          << " rows, fewer than the sequence ("
                          << st.seqFull << ")";
  // The whole sequence (a stem under cp) starts at position 0; a cp chunk
  // at its coordinate's offset.
  const bool whole = wholeSequence(x->v);
  FailureOr<Value> wpe =
      param(op, op.getTable(), whole ? stemLayout() : ParamLayout{-1});
  if (failed(wpe))
    return failure();
  SmallVector<NamedAttribute> config;
  if (cpOn() && !whole)
    config.push_back(cfg("pos_axis", StringAttr::get(ctx(), "cp")));
  Value xv = x->v, wv = *wpe;
  Value y = kernel(fb, K::PositionAdd, {xv, wv}, {xv.getType()}, config)[0];
  env[op.getResult()] = {y, Dist::Rep};
  tape.push_back([=, this]() -> LogicalResult {
    Value dy = takeGrad(y);
    if (!dy)
      return success();
    addGrad(xv, dy);
    accumulate(wv.getDefiningOp()->getAttrOfType<StringAttr>("sym"),
               kernel(bb, K::PositionAddBwd, {dy}, {wv.getType()},
                      config)[0]);
    return success();
  });
  return success();
}

/// One position of every sequence ([CLS] pooling, Devlin et al. 2019,
/// "BERT"). The rank whose block holds the position copies it and the
/// others give zeros; a sum over the axes that split the sequence (tp
/// sequence shards, cp chunks) leaves every rank with the rows.
LogicalResult ChunkLowering::lowerSelectToken(tg::SelectTokenOp op) {
  auto x = act(op, op.getX());
  if (failed(x))
    return failure();
  auto xt = cast<RankedTensorType>(x->v.getType());
  if (x->dist == Dist::Last || xt.getRank() != 3)
    return op.emitError("texec lowering: select_token needs a batch x "
                        "sequence x features activation with whole "
                        "feature rows");
  const int64_t index = op.getIndex();
  if (index < 0 || index >= st.seqFull)
    return op.emitError() << "texec lowering: select_token index " << index
                          << " is outside the sequence (" << st.seqFull
                          << " positions)";
  auto yType = localType(op, op.getType(), Dist::Rep);
  if (failed(yType))
    return failure();
  SmallVector<NamedAttribute> config = {
      cfg("index", i64a(index))};
  if (cpOn())
    config.push_back(cfg("pos_axis", StringAttr::get(ctx(), "cp")));
  const bool seqShard = x->dist == Dist::Seq;
  if (seqShard)
    config.push_back(tpAxis("seq_axis"));
  Value y = kernel(fb, K::SelectToken, {x->v}, {*yType}, config)[0];
  if (seqShard)
    y = tx::AllReduceOp::create(fb, loc, y.getType(), y, "tp");
  if (cpOn())
    y = tx::AllReduceOp::create(fb, loc, y.getType(), y, "cp");
  env[op.getResult()] = {y, Dist::Rep};
  Value xv = x->v;
  const bool cp = cpOn();
  tape.push_back([=, this]() -> LogicalResult {
    Value dy = takeGrad(y);
    if (!dy)
      return success();
    // Every cp rank computed the rows' consumers with 1 / cp of the loss
    // (lowerCrossEntropy): their gradients sum to the whole. Over tp the
    // consumers are replicated and each rank already holds all of it.
    if (cp)
      dy = tx::AllReduceOp::create(bb, loc, dy.getType(), dy, "cp");
    addGrad(xv, kernel(bb, K::SelectTokenBwd, {dy}, {xv.getType()},
                       config)[0]);
    return success();
  });
  return success();
}

/// Dropout whose mask is a hash of each element's global coordinates
/// (rt::DropoutSite), so that every plan drops the same elements as the
/// single-rank run; the backward draws the mask again instead of saving it.
LogicalResult ChunkLowering::lowerDropout(tg::DropoutOp op, FVal x) {
  const double rate = op.getRate().convertToDouble();
  if (rate < 0.0 || rate >= 1.0)
    return op.emitError() << "texec lowering: dropout rate " << rate
                          << " must be in [0, 1)";
  auto siteOr = nextSite(op);
  if (failed(siteOr))
    return failure();
  const int64_t site = *siteOr;
  if (rate == 0.0) {
    env[op.getResult()] = x;
    return success();
  }
  auto global = dyn_cast<RankedTensorType>(op.getType());
  if (!global || global.getRank() != 3 ||
      ShapedType::isDynamic(global.getShape().back()))
    return op.emitError("texec lowering: dropout expects a batch x "
                        "sequence x features activation with a static "
                        "feature size");
  SmallVector<NamedAttribute> config = {
      cfg("rate", op.getRateAttr()), cfg("site", i64a(site)),
      cfg("seq_len", i64a(st.seqFull)),
      cfg("features", i64a(global.getShape().back()))};
  if (cpOn() && !wholeSequence(x.v))
    config.push_back(cfg("pos_axis", StringAttr::get(ctx(), "cp")));
  if (x.dist == Dist::Seq)
    config.push_back(tpAxis("seq_axis"));
  if (x.dist == Dist::Last)
    config.push_back(tpAxis("feature_axis"));
  Value y = kernel(fb, K::Dropout, {x.v}, {x.v.getType()}, config)[0];
  env[op.getResult()] = {y, x.dist};
  tape.push_back([=, this]() -> LogicalResult {
    Value dy = takeGrad(y);
    if (dy)
      addGrad(x.v, kernel(bb, K::DropoutBwd, {dy}, {dy.getType()}, config)[0]);
    return success();
  });
  return success();
}

LogicalResult ChunkLowering::lowerElementwise(Operation *op) {
  SmallVector<FVal> ins;
  for (Value v : op->getOperands()) {
    auto f = act(op, v);
    if (failed(f))
      return failure();
    ins.push_back(*f);
  }
  for (const FVal &f : ins)
    if (f.dist != ins[0].dist)
      return op->emitError("texec lowering: operands have different "
                           "tensor-parallel layouts");
  Type t = ins[0].v.getType();
  if (auto d = dyn_cast<tg::DropoutOp>(op))
    return lowerDropout(d, ins[0]);
  // Each elementwise op's kernel and, for the one-input activations, the
  // kernel of its backward.
  using Kinds = std::pair<K, K>;
  std::optional<Kinds> kinds =
      llvm::TypeSwitch<Operation *, std::optional<Kinds>>(op)
          .Case<tg::AddOp>([](auto) { return Kinds{K::Add, K::Add}; })
          .Case<tg::MulOp>([](auto) { return Kinds{K::Mul, K::Mul}; })
          .Case<tg::GeluOp>([](auto) { return Kinds{K::Gelu, K::GeluBwd}; })
          .Case<tg::SiluOp>([](auto) { return Kinds{K::Silu, K::SiluBwd}; })
          .Case<tg::ReluOp>([](auto) { return Kinds{K::Relu, K::ReluBwd}; })
          .Case<tg::SquaredReluOp>([](auto) {
            return Kinds{K::SquaredRelu, K::SquaredReluBwd};
          })
          .Case<tg::SwiGLUOp>(
              [](auto) { return Kinds{K::Swiglu, K::SwigluBwd}; })
          .Case<tg::TanhOp>([](auto) { return Kinds{K::Tanh, K::TanhBwd}; })
          .Default([](Operation *) { return std::nullopt; });
  if (!kinds)
    return op->emitError() << "texec lowering: no elementwise kernel for '"
                           << op->getName() << "'";
  const auto [kind, bwdKind] = *kinds;
  SmallVector<NamedAttribute> config;
  if (auto g = dyn_cast<tg::GeluOp>(op); g && g.getApproximate())
    config.push_back(cfg("approximate", UnitAttr::get(ctx())));
  SmallVector<Value> vals;
  for (const FVal &f : ins)
    vals.push_back(f.v);
  Value y = kernel(fb, kind, vals, {t}, config)[0];
  env[op->getResult(0)] = {y, ins[0].dist};
  tape.push_back([=, this]() -> LogicalResult {
    Value dy = takeGrad(y);
    if (!dy)
      return success();
    if (kind == K::Add) {
      addGrad(vals[0], dy);
      addGrad(vals[1], dy);
    } else if (kind == K::Mul) {
      addGrad(vals[0], kernel(bb, K::Mul, {dy, saved(vals[1])}, {t})[0]);
      addGrad(vals[1], kernel(bb, K::Mul, {dy, saved(vals[0])}, {t})[0]);
    } else if (kind == K::Swiglu) {
      auto g = kernel(bb, bwdKind, {dy, saved(vals[0]), saved(vals[1])},
                      {t, t});
      addGrad(vals[0], g[0]);
      addGrad(vals[1], g[1]);
    } else {
      addGrad(vals[0], kernel(bb, bwdKind, {dy, saved(vals[0])}, {t},
                              config)[0]);
    }
    return success();
  });
  return success();
}

SmallVector<NamedAttribute> ChunkLowering::moeConfig(tg::MoEOp op) {
  SmallVector<NamedAttribute> config = {
      cfg("experts", i64a(op.getNumExperts())),
      cfg("top_k", i64a(op.getTopK())),
      cfg("activation",
          StringAttr::get(ctx(), tg::stringifyActKind(op.getActivation())))};
  if (op.getGated())
    config.push_back(cfg("gated", UnitAttr::get(ctx())));
  // Qwen-MoE's norm_topk_prob false: the chosen probabilities themselves.
  if (op.getUnnormalizedTopk())
    config.push_back(cfg("unnormalized", UnitAttr::get(ctx())));
  if (op.getSwigluLimitAttr())
    config.push_back(cfg("swiglu_limit", op.getSwigluLimitAttr()));
  // DeepSeek-V3's router: sigmoid scores, group-limited choice, scaled
  // weights.
  if (op.getSigmoidScores())
    config.push_back(cfg("sigmoid", UnitAttr::get(ctx())));
  if (op.getNumGroups() > 1) {
    config.push_back(cfg("groups", op.getNumGroupsAttr()));
    config.push_back(cfg("topk_groups", op.getTopkGroupsAttr()));
  }
  if (op.getRoutedScale().convertToDouble() != 1.0)
    config.push_back(cfg("routed_scale", op.getRoutedScaleAttr()));
  return config;
}

/// The mixtures of experts the runtime has kernels for: a selection bias
/// (DeepSeek-V3) or router and expert biases together (gpt-oss) or none;
/// a gelu, silu or relu activation; experts split like the dense layers
/// (etp = tp) or replicated over tp (etp = 1).
static LogicalResult checkMoE(tg::MoEOp op, const ::trident::plan::Plan &plan,
                              int64_t tp) {
  const bool selected = op.getSelectionBias();
  if (selected && op.getBIn())
    return op.emitError("texec lowering: a mixture of experts with both a "
                        "selection bias and expert biases has no runtime "
                        "kernel");
  const bool biased = !selected && op.getRouterBias() && op.getBIn();
  if (!selected && !biased && (op.getRouterBias() || op.getBIn()))
    return op.emitError("texec lowering: a mixture of experts with a router "
                        "bias but no expert biases, or the other way round, "
                        "has no runtime kernel");
  StringRef kind = tg::stringifyActKind(op.getActivation());
  if (!llvm::is_contained({"gelu", "gelu_tanh", "silu", "relu"}, kind))
    return op.emitError() << "texec lowering: mixture-of-experts activation '"
                          << kind << "' has no runtime kernel";
  const int64_t etp = plan.expertTp();
  if (tp > 1 && etp != 1 && etp != tp)
    return op.emitError() << "texec lowering: plan 'parallel.etp' = "
                          << plan.etp << " with tp = " << plan.tp
                          << ": experts are either split like the dense "
                             "layers (etp = tp, or 0) or replicated over tp "
                             "(etp = 1)";
  return success();
}

FailureOr<SmallVector<Value>> ChunkLowering::moeParams(tg::MoEOp op,
                                                       bool expertTp) {
  const bool selected = op.getSelectionBias();
  const bool biased = !selected && op.getRouterBias() && op.getBIn();
  const int64_t gatedBlocks = op.getGated() ? 2 : 1;
  ParamLayout inLayout{0, "ep"}, outLayout{0, "ep"};
  if (expertTp) {
    inLayout.split2Dim = 2; // [experts, hidden, (2 x) ffn]
    inLayout.blocks = gatedBlocks;
    outLayout.split2Dim = 1; // [experts, ffn, hidden]
  }
  // Biases: b_in [experts, (2 x) ffn] split like w_in's columns, b_out
  // [experts, hidden] over ep only (with etp it is added on one tp rank,
  // as a row-parallel linear's bias is).
  ParamLayout bInLayout{0, "ep"};
  if (expertTp) {
    bInLayout.split2Dim = 1;
    bInLayout.blocks = gatedBlocks;
  }
  SmallVector<std::pair<Value, ParamLayout>> toLoad = {
      {op.getRouter(), ParamLayout{-1}},
      {op.getWIn(), inLayout},
      {op.getWOut(), outLayout}};
  if (biased) {
    toLoad.push_back({op.getRouterBias(), ParamLayout{-1}});
    toLoad.push_back({op.getBIn(), bInLayout});
    toLoad.push_back({op.getBOut(), ParamLayout{0, "ep"}});
  }
  if (selected)
    toLoad.push_back({op.getRouterBias(), ParamLayout{-1}});
  SmallVector<Value> params;
  for (auto [p, layout] : toLoad) {
    FailureOr<Value> v = param(op, p, layout);
    if (failed(v))
      return failure();
    params.push_back(*v);
  }
  return params;
}

LogicalResult ChunkLowering::lowerMoE(tg::MoEOp op) {
  if (failed(checkMoE(op, st.plan, st.tp)))
    return failure();
  // DeepSeek-V3: a router bias that only selects the experts; gpt-oss: a
  // router bias and expert biases.
  const bool selected = op.getSelectionBias();
  const bool biased = !selected && op.getRouterBias() && op.getBIn();
  // Expert tensor parallelism (Megatron's etp; 0 means tp): each expert's
  // feature dimension is split over tp like a dense MLP's (gate and up
  // columns each, then the down rows). etp 1 replicates the experts over
  // tp instead.
  const bool expertTp = st.tp > 1 && st.plan.expertTp() == st.tp;
  auto x = act(op, op.getX());
  if (failed(x))
    return failure();
  if (x->dist == Dist::Last)
    return op.emitError("texec lowering: a mixture of experts needs whole "
                        "token rows, got a feature-sharded input");
  // The router is replicated; the experts are split over ep (dimension 0).
  // With etp 1 they are replicated over tp: each tp rank routes the tokens
  // it holds, and on sequence shards the gradients are partial over tp, as
  // for the norms. With etp = tp every tp rank routes the same tokens (the
  // sequence shards gathered) through its share of every expert's features:
  // the outputs are partial sums over tp, reduced like a row-parallel
  // linear's.
  const bool epOn = st.ep > 1;
  // params: router, w_in, w_out[, router_bias, b_in, b_out | select].
  FailureOr<SmallVector<Value>> loaded = moeParams(op, expertTp);
  if (failed(loaded))
    return failure();
  SmallVector<Value> params = std::move(*loaded);
  SmallVector<NamedAttribute> config = moeConfig(op);
  SmallVector<NamedAttribute> routerConfig = config;
  if (biased && expertTp)
    config.push_back(tpAxis("out_bias_axis"));
  if (epOn) {
    config.push_back(cfg("ep_axis", StringAttr::get(ctx(), "ep")));
    routerConfig.push_back(cfg("row_axis", StringAttr::get(ctx(), "ep")));
  }
  // Expert parallelism with an all-gather dispatcher (Megatron-Core's
  // "allgather" token dispatcher): the ep group's tokens are gathered
  // (dimension 0, the micro-batch), every rank applies its experts to the
  // tokens routed to them, and a reduce-scatter sums the experts' parts
  // and returns each rank its own tokens.
  const bool seqShards = x->dist == Dist::Seq;
  Value xv = x->v;
  Value xg = expertTp ? gatherSeq(*x) : xv; // the tokens this rank routes
  const int64_t topK = op.getTopK();
  Value xAll = epOn ? tx::AllGatherOp::create(fb, loc, grownType(xg, 0, st.ep),
                                              xg, "ep", 0)
                          .getResult()
                    : xg;
  SmallVector<Value> fwdIns =
      biased     ? SmallVector<Value>{xAll, params[0], params[3], params[1],
                                      params[4], params[2], params[5]}
      : selected ? SmallVector<Value>{xAll, params[0], params[3], params[1],
                                      params[2]}
                 : SmallVector<Value>{xAll, params[0], params[1], params[2]};
  Value yAll = kernel(fb,
                      biased     ? K::MoeBiased
                      : selected ? K::MoeSelected
                                 : K::Moe,
                      fwdIns, {xAll.getType()}, config)[0];
  Value yg = epOn ? tx::ReduceScatterOp::create(fb, loc, xg.getType(), yAll,
                                                "ep", 0)
                        .getResult()
                  : yAll;
  Value y = yg;
  if (expertTp)
    y = seqShards ? tx::ReduceScatterOp::create(fb, loc, xv.getType(), yg,
                                                "tp", 1)
                        .getResult()
                  : tx::AllReduceOp::create(fb, loc, yg.getType(), yg, "tp")
                        .getResult();
  env[op.getResult()] = {y, x->dist};
  SmallVector<std::string> names;
  for (Value p : params)
    names.push_back(p.getDefiningOp()->getAttrOfType<StringAttr>("sym").str());
  // DeepSeek-V3's selection bias is updated by the expert load, not by
  // the optimizer: its gradient buffer counts the tokens each expert gets
  // (the router backward's third result), summed over the same ranks as
  // the router's gradient; a rate of 0 leaves it frozen.
  const double loadRate = st.options.moeBiasUpdateRate;
  if (selected) {
    if (loadRate > 0)
      decls.find(names[3])->second.setLoadBalanceAttr(
          FloatAttr::get(Float64Type::get(ctx()), loadRate));
    else
      st.frozenParams.insert(names[3]);
  }
  if (seqShards && !expertTp)
    for (const std::string &n : names)
      if (!st.frozenParams.count(n))
        st.tpPartialParams[stage.getIndex()].insert(n);
  tape.push_back([=, this]() -> LogicalResult {
    Value dy = takeGrad(y);
    if (!dy)
      return success();
    if (expertTp && seqShards)
      dy = tx::AllGatherOp::create(bb, loc, xg.getType(), dy, "tp", 1);
    Value dyAll = epOn ? tx::AllGatherOp::create(bb, loc, xAll.getType(), dy,
                                                 "ep", 0)
                             .getResult()
                       : dy;
    auto xt = cast<RankedTensorType>(xAll.getType());
    Type gateType = f32({xt.getDimSize(0), xt.getDimSize(1), topK});
    Value xs = saved(xAll), router = saved(params[0]);
    // Results: dx, dw_in, dw_out, dgate, then db_in, db_out when biased.
    SmallVector<Value> g;
    if (biased) {
      auto b = kernel(bb, K::MoeBiasedBwd,
                      {dyAll, xs, router, saved(params[3]), saved(params[1]),
                       saved(params[4]), saved(params[2]), saved(params[5])},
                      {xAll.getType(), params[1].getType(),
                       params[4].getType(), params[2].getType(),
                       params[5].getType(), gateType},
                      config);
      g = {b[0], b[1], b[3], b[5], b[2], b[4]};
    } else if (selected) {
      g = kernel(bb, K::MoeSelectedBwd,
                 {dyAll, xs, router, saved(params[3]), saved(params[1]),
                  saved(params[2])},
                 {xAll.getType(), params[1].getType(), params[2].getType(),
                  gateType},
                 config);
    } else {
      g = kernel(bb, K::MoeBwd,
                 {dyAll, xs, router, saved(params[1]), saved(params[2])},
                 {xAll.getType(), params[1].getType(), params[2].getType(),
                  gateType},
                 config);
    }
    // Each rank knows the gate gradients of its own experts (and, with
    // etp, of its share of their features): the router backward needs
    // them all.
    Value gate = g[3];
    if (epOn)
      gate = tx::AllReduceOp::create(bb, loc, gateType, gate, "ep");
    if (expertTp)
      gate = tx::AllReduceOp::create(bb, loc, gateType, gate, "tp");
    // Results: dx, drouter[, drouter_bias].
    SmallVector<Value> r =
        biased ? kernel(bb, K::MoeRouterBiasedBwd,
                        {gate, xs, router, saved(params[3])},
                        {xg.getType(), params[0].getType(),
                         params[3].getType()},
                        routerConfig)
        : selected
            ? kernel(bb, K::MoeRouterSelectedBwd,
                     {gate, xs, router, saved(params[3])},
                     {xg.getType(), params[0].getType(), params[3].getType()},
                     routerConfig)
            : kernel(bb, K::MoeRouterBwd, {gate, xs, router},
                     {xg.getType(), params[0].getType()}, routerConfig);
    Value dxExperts = epOn ? tx::ReduceScatterOp::create(bb, loc, xg.getType(),
                                                         g[0], "ep", 0)
                                 .getResult()
                           : g[0];
    if (!expertTp) {
      addGrad(xv, kernel(bb, K::Add, {dxExperts, r[0]}, {xv.getType()})[0]);
    } else {
      // The experts' part is partial over tp (the gathered sequence's
      // backward reduce-scatters it); the router's is whole, and each rank
      // keeps its own positions of it.
      addGrad(xg, dxExperts, /*partial=*/true);
      Value routerDx = r[0];
      if (seqShards)
        routerDx = kernel(bb, K::SeqSlice, {routerDx}, {xv.getType()},
                          {cfg("seq_axis", StringAttr::get(ctx(), "tp"))})[0];
      addGrad(xv, routerDx);
    }
    accumulate(names[0], r[1]);
    accumulate(names[1], g[1]);
    accumulate(names[2], g[2]);
    if (biased) {
      accumulate(names[3], r[2]);
      accumulate(names[4], g[4]);
      accumulate(names[5], g[5]);
    }
    if (selected && loadRate > 0)
      accumulate(names[3], r[2]); // the expert load, not a gradient
    return success();
  });
  return success();
}

LogicalResult ChunkLowering::lowerOp(Operation *op) {
  if (fused.count(op))
    return success();
  if (isa<tg::ParamOp, tg::InputOp, tg::OutputOp, tg::YieldOp>(op))
    return success(); // parameters and inputs are read where they are used
  if (auto e = dyn_cast<tg::EmbeddingOp>(op))
    return lowerEmbedding(e);
  if (isa<tg::LayerNormOp, tg::RMSNormOp>(op))
    return lowerNorm(op);
  if (auto l = dyn_cast<tg::LinearOp>(op))
    return lowerLinear(l);
  if (auto a = dyn_cast<tg::AttentionOp>(op))
    return lowerAttention(a);
  if (auto c = dyn_cast<tg::CrossEntropyOp>(op))
    return lowerCrossEntropy(c);
  if (auto e = dyn_cast<tg::EmbeddingBagOp>(op))
    return lowerEmbeddingBag(e);
  if (auto d = dyn_cast<tg::DotInteractionOp>(op))
    return lowerDotInteraction(d);
  if (auto c = dyn_cast<tg::BinaryCrossEntropyOp>(op))
    return lowerBinaryCrossEntropy(c);
  if (auto m = dyn_cast<tg::MoEOp>(op))
    return lowerMoE(m);
  if (auto s = dyn_cast<tg::SelectTokenOp>(op))
    return lowerSelectToken(s);
  if (auto p = dyn_cast<tg::PatchEmbedOp>(op))
    return lowerPatchEmbed(p);
  if (auto p = dyn_cast<tg::PrependTokenOp>(op))
    return lowerPrependToken(p);
  if (auto p = dyn_cast<tg::PositionEmbeddingOp>(op))
    return lowerPositionEmbedding(p);
  // The sum of two losses (BERT: masked-LM + next-sentence): each is
  // already recorded and seeds its own backward.
  if (auto add = dyn_cast<tg::AddOp>(op);
      add && (losses.contains(add.getLhs()) || losses.contains(add.getRhs()))) {
    if (!losses.contains(add.getLhs()) || !losses.contains(add.getRhs()))
      return op->emitError("texec lowering: a loss can only be added to "
                           "another loss");
    losses.insert(add.getResult());
    return success();
  }
  if (isa<tg::AddOp, tg::MulOp, tg::GeluOp, tg::SiluOp, tg::ReluOp,
          tg::SquaredReluOp, tg::SwiGLUOp, tg::TanhOp, tg::DropoutOp>(op))
    return lowerElementwise(op);
  return op->emitError() << "texec lowering: no gradient rule for '"
                         << op->getName() << "'";
}

LogicalResult ChunkLowering::run(ArrayRef<Operation *> prologue,
                                 ArrayRef<BlockRef> blocks,
                                 ArrayRef<Operation *> epilogue,
                                 Value firstInit, tg::RepeatOp lastRepeat,
                                 bool first, bool last) {
  int64_t g = chunk.getGlobalIndex();
  Dist actDist = (st.sp && tpOn()) ? Dist::Seq : Dist::Rep;
  FVal cur;
  Value received;
  // A model without blocks (DLRM): the prologue is the whole model, on
  // the one chunk (first and last).
  const bool whole = !firstInit;
  if (first) {
    beginSites(0);
    for (Operation *op : prologue)
      if (failed(lowerOp(op)))
        return failure();
  }
  if (whole) {
    // Nothing continues into blocks.
  } else if (first) {
    auto f = act(firstInit.getDefiningOp() ? firstInit.getDefiningOp()
                                           : st.model.getOperation(),
                 firstInit);
    if (failed(f))
      return failure();
    cur = *f;
    // A replicated prologue output (ViT's tokens: patches, class token,
    // positions) continues as this rank's positions: its chunk under
    // context parallelism, then its share under sequence parallelism. The
    // backward gathers the parts' gradients back over the same axis, so
    // every rank continues the stem's backward from the whole gradient.
    auto slice = [&](StringRef axis, Dist to) -> LogicalResult {
      Value full = cur.v;
      auto t = localType(st.model, firstInit.getType(), to);
      if (failed(t))
        return failure();
      Value part = kernel(fb, K::SeqSlice, {full}, {*t},
                          {cfg("seq_axis", StringAttr::get(ctx(), axis))})[0];
      cur = {part, to};
      std::string group = axis.str();
      tape.push_back([this, full, part, group]() -> LogicalResult {
        if (Value g = takeGrad(part))
          addGrad(full, tx::AllGatherOp::create(bb, loc, full.getType(), g,
                                                group, 1));
        return success();
      });
      return success();
    };
    if (cur.dist == Dist::Rep && wholeSequence(cur.v) &&
        failed(slice("cp", Dist::Rep)))
      return failure();
    if (cur.dist == Dist::Rep && actDist == Dist::Seq &&
        failed(slice("tp", Dist::Seq)))
      return failure();
  } else {
    auto t = localType(st.model, firstInit.getType(), actDist);
    if (failed(t))
      return failure();
    received = tx::RecvOp::create(fb, loc, *t, g - 1);
    cur = {received, actDist};
  }
  for (BlockRef b : blocks) {
    prefix = "layers." + std::to_string(b.index) + ".";
    beginSites(b.index + 1);
    Block &body = b.repeat.getBody().front();
    env[body.getArgument(0)] = cur;
    for (Operation &op : body.without_terminator())
      if (failed(lowerOp(&op)))
        return failure();
    auto yield = cast<tg::YieldOp>(body.getTerminator());
    auto f = act(yield, yield.getValues()[0]);
    if (failed(f))
      return failure();
    cur = *f;
    // The next iteration rebinds the body's values.
    for (Operation &op : body)
      for (Value r : op.getResults())
        env.erase(r);
  }
  prefix.clear();
  if (whole) {
    // Nothing crosses a stage boundary.
  } else if (last) {
    env[lastRepeat.getResult(0)] = cur;
    beginSites(kEpilogueSection);
    for (Operation *op : epilogue)
      if (failed(lowerOp(op)))
        return failure();
  } else {
    if (cur.dist != actDist)
      return chunk.emitError("texec lowering: internal: a chunk boundary "
                             "activation has an unexpected layout");
    tx::SendOp::create(fb, loc, cur.v, g + 1);
    Value out = cur.v;
    tape.push_back([=, this]() -> LogicalResult {
      addGrad(out, tx::RecvOp::create(bb, loc, out.getType(), g + 1));
      return success();
    });
  }
  // Backward: replay the tape in reverse.
  for (auto it = tape.rbegin(); it != tape.rend(); ++it)
    if (failed((*it)()))
      return failure();
  if (received) {
    Value g0 = takeGrad(received);
    if (!g0)
      return chunk.emitError("texec lowering: no gradient reaches the "
                             "chunk's input");
    tx::SendOp::create(bb, loc, g0, g - 1);
  }
  tx::SaveOp::create(fb, loc, saveList);
  tx::EndOp::create(bb, loc);
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Program
//===----------------------------------------------------------------------===//

/// The plan held to the model (plan::verify), then what the programs
/// need beyond it: positions divisible over cp (and tp x cp with sequence
/// parallelism), ep within dp, heads divisible over tp, one batch per
/// replica, a known optimizer.
static LogicalResult checkLoweringPlan(tg::ModelOp model,
                                       const ::trident::plan::Plan &plan,
                                       const TrainingOptions &options) {
  auto fail = [&](const std::string &msg) -> LogicalResult {
    return model.emitError() << "texec lowering: " << msg;
  };
  {
    const ::trident::LayerProfile profile = ::trident::analysis::
        buildLayerProfile(model, model.getSeqLenAttr().getInt());
    ::trident::plan::PlanTarget target;
    target.model = &profile;
    target.modelSource = options.modelSource.empty()
                             ? "model @" + model.getSymName().str()
                             : options.modelSource;
    if (::trident::Status s =
            ::trident::plan::verify(plan, options.planSource, target);
        !s)
      return fail(s.message());
  }
  if (plan.seqLen % plan.cp != 0)
    return fail("plan 'seq_len' " + std::to_string(plan.seqLen) +
                " is not divisible by 'parallel.cp' = " +
                std::to_string(plan.cp));
  if (plan.ep < 1 || plan.dp % plan.ep != 0)
    return fail("plan 'parallel.ep' = " + std::to_string(plan.ep) +
                " must divide 'parallel.dp' = " + std::to_string(plan.dp));
  // The heads before anything else: a per-head norm on the q or k heads
  // comes first in a block and would be refused less clearly.
  tg::AttentionOp badHeads;
  model.walk([&](tg::AttentionOp a) {
    if (!badHeads && plan.tp > 1 &&
        (a.getNumHeads() % plan.tp != 0 || a.getNumKvHeads() % plan.tp != 0))
      badHeads = a;
  });
  if (badHeads) {
    return badHeads.emitError()
           << "texec lowering: " << badHeads.getNumHeads() << " heads and "
           << badHeads.getNumKvHeads()
           << " kv heads cannot be split over 'parallel.tp' = " << plan.tp;
  }

  if (plan.sequenceParallel && plan.seqLen % (plan.tp * plan.cp) != 0)
    return fail("plan 'seq_len' " + std::to_string(plan.seqLen) +
                " is not divisible by tp * cp for sequence parallelism");
  if (options.optimizer != "adam" && options.optimizer != "sgd")
    return fail("unknown optimizer '" + options.optimizer + "'");
  if (!(options.moeBiasUpdateRate >= 0.0 && options.moeBiasUpdateRate <= 1.0))
    return fail("the MoE selection-bias update rate must be in [0, 1], got " +
                std::to_string(options.moeBiasUpdateRate));
  if (auto p = programPrecision(plan, options.precision); !p)
    return fail(p.message());
  return success();
}

/// After the stages' chunks: every parameter has a gradient, the
/// gradients of parameters several stages hold are summed over them, the
/// tp-partial and data-parallel sums, and each stage's optimizer step.
static LogicalResult finishStages(OpBuilder &b, Location loc,
                                  ArrayRef<tx::StageOp> stages,
                                  ProgramState &st) {
  const ::trident::plan::Plan &plan = st.plan;
  const TrainingOptions &options = st.options;
  tx::ProgramOp program = st.program;
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  // Every parameter a stage holds gets a gradient in it: a gradient rule
  // that forgot one would otherwise train a frozen parameter on every
  // rank alike, which no comparison between runs can see.
  for (tx::StageOp stage : stages) {
    llvm::StringSet<> graded;
    stage.walk([&](tx::AccumulateGradOp a) { graded.insert(a.getSym()); });
    for (auto decl : stage.getBody().front().getOps<tx::ParamOp>())
      if (!graded.contains(decl.getSym()) &&
          !st.frozenParams.count(decl.getSym().str()))
        return st.model.emitError()
               << "texec lowering: parameter '" << decl.getSym()
               << "' of stage " << stage.getIndex()
               << " receives no gradient: nothing it feeds reaches the loss";
  }

  // Parameters held by several stages (a tied embedding on the first and
  // last stage): a group over exactly those stages sums their gradients.
  std::map<std::set<int64_t>, std::string> sharedGroups;
  for (auto &[name, where] : st.paramStages) {
    if (where.size() < 2 || sharedGroups.count(where))
      continue;
    std::string g = "pp";
    SmallVector<int64_t> members;
    for (int64_t s : where) {
      g += "_" + std::to_string(s);
      members.push_back(s);
    }
    sharedGroups[where] = g;
    b.setInsertionPoint(stages.front());
    tx::GroupOp::create(b, loc, b.getStringAttr(g), b.getStrArrayAttr({"pp"}),
                        b.getDenseI64ArrayAttr(members));
  }
  for (tx::StageOp stage : stages) {
    int64_t s = stage.getIndex();
    b.setInsertionPointToEnd(&stage.getBody().front());
    auto names = [&](const std::set<std::string> &set) {
      SmallVector<StringRef> v(set.begin(), set.end());
      return b.getStrArrayAttr(v);
    };
    if (plan.tp > 1 && !st.tpPartialParams[s].empty())
      tx::GradAllReduceOp::create(b, loc, "tp",
                                  names(st.tpPartialParams[s]));
    std::map<std::string, std::set<std::string>> shared;
    for (auto &[name, where] : st.paramStages)
      if (where.size() > 1 && where.count(s))
        shared[sharedGroups[where]].insert(name);
    for (auto &[group, params] : shared)
      tx::GradAllReduceOp::create(b, loc, group, names(params));
    if (plan.dp * plan.cp > 1 && plan.zeroStage == 0) {
      // Each gradient is summed over its parameter's data group (texec.param
      // `data`, else the program's): experts over the ranks holding the
      // same ones, a stem replicated over cp over dp, the rest over dp (x
      // cp). The program's group goes first; one of one rank is skipped.
      std::map<std::string, std::set<std::string>> byGroup;
      for (auto decl : stage.getBody().front().getOps<tx::ParamOp>())
        byGroup[decl.getDataGroup() ? decl.getDataGroup()->str()
                                    : st.dataGroup]
            .insert(decl.getSym().str());
      auto groupSize = [&](StringRef g) {
        int64_t n = 1;
        for (Attribute axis : program.lookupGroup(g).getAxes())
          n *= program.getAxisSize(cast<StringAttr>(axis).getValue());
        return n;
      };
      if (byGroup.size() == 1 && byGroup.count(st.dataGroup)) {
        tx::GradAllReduceOp::create(b, loc, st.dataGroup, ArrayAttr());
      } else {
        if (byGroup.count(st.dataGroup))
          tx::GradAllReduceOp::create(b, loc, st.dataGroup,
                                      names(byGroup[st.dataGroup]));
        for (auto &[group, params] : byGroup)
          if (group != st.dataGroup && groupSize(group) > 1)
            tx::GradAllReduceOp::create(b, loc, group, names(params));
      }
    }
    tx::OptimizerOp::create(
        b, loc, b.getStringAttr(options.optimizer),
        b.getStringAttr(st.dataGroup),
        i64(plan.zeroStage), b.getF64FloatAttr(options.lr), b.getF64FloatAttr(options.beta1),
        b.getF64FloatAttr(options.beta2), b.getF64FloatAttr(options.eps));
  }
  return success();
}

::trident::Result<std::string>
programPrecision(const ::trident::plan::Plan &plan,
                 const std::string &requested) {
  const std::string &name = requested.empty() ? plan.precision : requested;
  const std::string what = requested.empty() ? "plan 'precision' '" + name + "'"
                                             : "precision '" + name + "'";
  std::optional<::trident::DType> t = ::trident::parseDType(name);
  if (!t)
    return ::trident::Status::error(what + " is not a precision (expected "
                                           "fp32 or bf16)");
  switch (*t) {
  case ::trident::DType::F32:
    return std::string("f32");
  case ::trident::DType::BF16:
    return std::string("bf16");
  case ::trident::DType::F16:
    return ::trident::Status::error(
        what + ": the programs train in fp32 or bf16 (fp16 needs loss "
               "scaling, which they do not do); pick one with --precision");
  case ::trident::DType::FP8:
    return ::trident::Status::error(
        what + ": the programs train in fp32 or bf16 (fp8 GEMMs need "
               "per-tensor scales, which they do not keep); pick one with "
               "--precision");
  }
  return ::trident::Status::error(what + " is not a precision");
}

OwningOpRef<ModuleOp> lowerToExec(tg::ModelOp model,
                                  const ::trident::plan::Plan &plan,
                                  const TrainingOptions &options) {
  auto fail = [&](const std::string &msg) -> OwningOpRef<ModuleOp> {
    model.emitError() << "texec lowering: " << msg;
    return {};
  };
  if (failed(checkLoweringPlan(model, plan, options)))
    return {};
  // Recomputation per stage: full (texec.chunk `recompute`: the whole
  // forward again before the backward) or selective (attention's scores
  // and probabilities again inside the backward, from the saved
  // log-sum-exp).
  auto stageRecompute = [&](int64_t s) {
    return size_t(s) < plan.stages.size() ? plan.stages[size_t(s)].recompute
                                          : plan.recompute;
  };
  const ::trident::ScheduleKind kind = plan.scheduleKind();
  const std::string scheduleName(::trident::scheduleKindName(kind));
  auto schedule = ::trident::buildSchedule(kind, plan.pp,
                                           plan.numMicroBatches, plan.vpp);
  if (!schedule)
    return fail("plan schedule: " + schedule.message());
  // The programs exchange their pipeline transfers in the Schedule
  // library's steps; a grouping that cannot complete is refused here
  // rather than hanging the program.
  if (::trident::Status st = ::trident::checkTransferGroups(*schedule); !st)
    return fail("plan schedule: " + st.message());

  // The model: prologue, blocks (repeat iterations), epilogue.
  SmallVector<Operation *> prologue, epilogue;
  SmallVector<BlockRef> blocks;
  tg::RepeatOp firstRepeat, lastRepeat;
  for (Operation &op : model.getBody().front()) {
    if (auto r = dyn_cast<tg::RepeatOp>(op)) {
      if (r.getInits().size() != 1 || r.getNumResults() != 1)
        return OwningOpRef<ModuleOp>(
            (r.emitError("texec lowering: a tgraph.repeat must carry exactly "
                         "one activation"),
             nullptr));
      if (lastRepeat && &op != lastRepeat->getNextNode())
        return OwningOpRef<ModuleOp>(
            (r.emitError("texec lowering: ops between tgraph.repeat ops are "
                         "not supported"),
             nullptr));
      if (lastRepeat && r.getInits()[0] != lastRepeat.getResult(0))
        return OwningOpRef<ModuleOp>(
            (r.emitError("texec lowering: consecutive tgraph.repeat ops must "
                         "chain their activation"),
             nullptr));
      if (!firstRepeat)
        firstRepeat = r;
      lastRepeat = r;
      for (int64_t i = 0; i < int64_t(r.getCount()); ++i)
        blocks.push_back({r, i, (int64_t)blocks.size()});
      continue;
    }
    (firstRepeat ? epilogue : prologue).push_back(&op);
  }
  // A model without tgraph.repeat (DLRM) has no blocks to place on
  // pipeline stages: it runs whole on one stage. The planner counts it as
  // one layer.
  if (!firstRepeat && (plan.pp != 1 || plan.vpp != 1))
    return fail("the model has no tgraph.repeat (no blocks to place on "
                "pipeline stages): it needs 'parallel.pp' = 1 and "
                "'parallel.vpp' = 1, got pp " +
                std::to_string(plan.pp) + ", vpp " + std::to_string(plan.vpp));
  int64_t total = 0;
  for (int64_t n : plan.layersPerChunk)
    total += n;
  if (!firstRepeat && total > 1)
    return fail("plan 'layers_per_chunk' sums to " + std::to_string(total) +
                " but the model has no tgraph.repeat (0 or 1 expected: the "
                "whole model is one chunk)");
  if (firstRepeat && total != (int64_t)blocks.size())
    return fail("plan 'layers_per_chunk' sums to " + std::to_string(total) +
                " blocks but the model has " + std::to_string(blocks.size()));
  int64_t vocab = 0;
  model.walk([&](tg::EmbeddingOp e) {
    if (!vocab)
      vocab = cast<RankedTensorType>(e.getTable().getType()).getDimSize(0);
  });
  if (!vocab) {
    // A model without token ids (ViT reads images) leaves the corpus
    // unused: its vocabulary is 1.
    bool tokens = false;
    model.walk([&](tg::InputOp in) { tokens |= in.getName() == "tokens"; });
    if (tokens)
      return fail("the model reads 'tokens' but has no tgraph.embedding "
                  "(token ids need a vocabulary)");
    vocab = 1;
  }

  MLIRContext *ctx = model.getContext();
  ctx->getOrLoadDialect<tx::TExecDialect>();
  OpBuilder b(ctx);
  Location loc = model.getLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  auto program = tx::ProgramOp::create(
      b, loc, b.getStringAttr(model.getSymName()), i64(plan.dp), i64(plan.tp),
      i64(plan.pp), i64(plan.vpp), i64(plan.numMicroBatches),
      i64(plan.microBatch), i64(plan.seqLen), i64(vocab), i64(plan.zeroStage),
      b.getStringAttr(scheduleName),
      plan.sequenceParallel && plan.tp > 1 ? b.getUnitAttr() : UnitAttr(),
      i64(plan.cp), i64(plan.ep),
      b.getStringAttr(*programPrecision(plan, options.precision)));
  Block &pbody = program.getBody().emplaceBlock();
  b.setInsertionPointToEnd(&pbody);
  for (StringRef axis : {"dp", "tp", "pp"})
    tx::GroupOp::create(b, loc, b.getStringAttr(axis),
                        b.getStrArrayAttr({axis}), DenseI64ArrayAttr());
  if (plan.ep > 1)
    for (StringRef axis : {"ep", "edp"})
      tx::GroupOp::create(b, loc, b.getStringAttr(axis),
                          b.getStrArrayAttr({axis}), DenseI64ArrayAttr());
  if (plan.ep > 1 && plan.cp > 1)
    tx::GroupOp::create(b, loc, b.getStringAttr("edpcp"),
                        b.getStrArrayAttr({"edp", "cp"}), DenseI64ArrayAttr());
  if (plan.cp > 1) {
    tx::GroupOp::create(b, loc, b.getStringAttr("cp"),
                        b.getStrArrayAttr({"cp"}), DenseI64ArrayAttr());
    tx::GroupOp::create(b, loc, b.getStringAttr("dpcp"),
                        b.getStrArrayAttr({"dp", "cp"}), DenseI64ArrayAttr());
  }

  ProgramState st{plan, options, model, program, plan.tp,
                  plan.microBatch, plan.seqLen / plan.cp,
                  plan.pp * plan.vpp, plan.sequenceParallel && plan.tp > 1,
                  plan.zeroStage, 0.0, {}, {}};
  st.gradScale = 1.0 / double(plan.globalBatch * plan.seqLen);
  st.globalBatch = plan.globalBatch;
  st.cp = plan.cp;
  st.seqFull = plan.seqLen;
  if (plan.cp > 1)
    st.dataGroup = "dpcp";
  st.ep = plan.ep;
  if (plan.cp > 1)
    st.expertGroup = "edpcp";

  // First block of each model chunk.
  SmallVector<int64_t> chunkBegin = {0};
  for (int64_t n : plan.layersPerChunk)
    chunkBegin.push_back(chunkBegin.back() + n);

  SmallVector<tx::StageOp> stages;
  for (int64_t s = 0; s < plan.pp; ++s) {
    b.setInsertionPointToEnd(&pbody);
    auto stage = tx::StageOp::create(b, loc, i64(s));
    Block &sbody = stage.getBody().emplaceBlock();
    stages.push_back(stage);
    llvm::StringMap<tx::ParamOp> decls;
    Operation *lastDecl = nullptr;
    for (int64_t c = 0; c < plan.vpp; ++c) {
      int64_t g = c * plan.pp + s;
      b.setInsertionPointToEnd(&sbody);
      auto chunk = tx::ChunkOp::create(b, loc, i64(c));
      if (stageRecompute(s) == ::trident::Recompute::Full)
        chunk.setRecompute(true);
      ChunkLowering lowering(st, stage, chunk, decls, lastDecl);
      lowering.setSelectiveRecompute(stageRecompute(s) ==
                                     ::trident::Recompute::Selective);
      ArrayRef<BlockRef> mine =
          firstRepeat ? ArrayRef<BlockRef>(blocks.begin() + chunkBegin[g],
                                           blocks.begin() + chunkBegin[g + 1])
                      : ArrayRef<BlockRef>();
      if (failed(lowering.run(prologue, mine, epilogue,
                              firstRepeat ? firstRepeat.getInits()[0]
                                          : Value(),
                              lastRepeat, g == 0,
                              g == st.numChunks - 1)))
        return {};
    }
    // The schedule: this stage's list from the Schedule library.
    SmallVector<int64_t> actions;
    for (const ::trident::ScheduleAction &a : schedule->perStage[s]) {
      if (a.kind != ::trident::ActionKind::Forward &&
          a.kind != ::trident::ActionKind::Backward)
        return fail("schedule '" + scheduleName +
                    "' splits backward passes, which texec does not run");
      actions.append({a.kind == ::trident::ActionKind::Forward ? 0 : 1,
                      a.microBatch, a.chunk});
    }
    b.setInsertionPointToEnd(&sbody);
    auto sched = tx::ScheduleOp::create(b, loc, scheduleName, actions,
                                        /*steps=*/nullptr);
    std::vector<int32_t> steps = ::trident::transferSteps(*schedule, s);
    if (llvm::any_of(steps, [](int32_t n) { return n != 1; }))
      sched.setSteps(SmallVector<int64_t>(steps.begin(), steps.end()));
  }

  if (failed(finishStages(b, loc, stages, st)))
    return {};
  if (failed(mlir::verify(*module)))
    return {};
  return module;
}

} // namespace trident::conversion
