//===- ExecOps.cpp - texec dialect, verifiers, kernel table ---------------===//

#include "dialects/Exec/IR/ExecOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "trident/Support/ExpertGroups.h"
#include "trident/Support/RopeScalingAttr.h"

#include <cmath>
#include <set>
#include <tuple>

using namespace mlir;
using namespace mlir::trident::exec;

#include "dialects/Exec/IR/ExecOpsDialect.cpp.inc"
#include "dialects/Exec/IR/ExecEnums.cpp.inc"

void TExecDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Exec/IR/ExecOps.cpp.inc"
      >();
  checkKernelTable();
}

//===----------------------------------------------------------------------===//
// Dialect-wide rules and the kernel table
//===----------------------------------------------------------------------===//

LogicalResult mlir::trident::exec::verifyExecOpTrait(Operation *op) {
  auto check = [&](Type t, StringRef what, unsigned idx) -> LogicalResult {
    if (auto ranked = dyn_cast<RankedTensorType>(t))
      if (!ranked.hasStaticShape())
        return op->emitOpError() << what << " #" << idx
                                 << " must have a static shape (a rank's "
                                    "local shard), got "
                                 << t;
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

namespace {
const StringRef kEps[] = {"eps"};
const StringRef kVocab[] = {"vocab_axis"};
const StringRef kBias[] = {"bias_axis"};
const StringRef kHeads[] = {"heads", "kv_heads", "head_dim"};
const StringRef kScale[] = {"grad_scale"};
// bag_pool(_bwd): a unit attribute, divide by the bag size.
const StringRef kMean[] = {"mean"};
// cross_entropy over vocabulary shards; "vocab": the real vocabulary when
// the table is padded to a multiple of the axis size.
const StringRef kCrossEntropy[] = {"vocab_axis", "vocab"};
const StringRef kApprox[] = {"approximate"};
// Added to gamma (1: Megatron's zero-centred LayerNorm1p).
const StringRef kGammaShift[] = {"gamma_shift"};
const StringRef kRope[] = {"heads", "head_dim", "rotary_dim", "theta"};
// The grid axis whose coordinate shifts positions (context parallelism).
const StringRef kPos[] = {"pos_axis"};
// RoPE: positions shifted by pos_axis's coordinate; "scaling": a
// rope_scaling dictionary (trident/Support/RopeScalingAttr.h);
// "rotary_offset": the first rotated dimension of each head (0 unless
// given; multi-head latent attention rotates the last ones);
// "interleaved": pairs 2i and 2i + 1 instead of i and i + rotary_dim / 2.
const StringRef kRopeOpt[] = {"pos_axis", "scaling", "rotary_offset",
                              "interleaved"};
const StringRef kVocabPos[] = {"vocab_axis", "pos_axis"};
// Attention: keys gathered over cp_axis; a sliding window; dropout on the
// probabilities (rate "dropout", numbered "site", the global head count
// "heads_total", this rank's heads starting at head_axis's coordinate).
// "bidirectional": no causal mask (encoders). "v_head_dim": value and
// output heads narrower or wider than head_dim (multi-head latent
// attention); "scale": the softmax scale when not 1/sqrt(head_dim).
const StringRef kAttnOpt[] = {"cp_axis",     "window",      "dropout",
                              "site",        "heads_total", "head_axis",
                              "bidirectional", "v_head_dim", "scale"};
// latent_key: key heads of multi-head latent attention.
const StringRef kLatentKey[] = {"heads", "nope_dim", "rope_dim"};
// select_token: the position (of the whole sequence) picked from each
// sample; the local block starts at pos_axis (cp) and seq_axis (sequence
// shards) coordinates.
const StringRef kSelect[] = {"index"};
// seq_slice: the axis whose coordinate picks the rank's positions.
const StringRef kSeqAxis[] = {"seq_axis"};
// patch_embed: the square patch side (images are [b, C, side, side]).
const StringRef kPatch[] = {"patch"};
const StringRef kSelectAxes[] = {"pos_axis", "seq_axis"};
// Dropout: global sequence length and features; the local block starts at
// pos_axis (cp chunks), seq_axis (sequence-parallel shards inside a chunk)
// and feature_axis (tp feature shards) coordinates.
const StringRef kDropout[] = {"rate", "site", "seq_len", "features"};
const StringRef kDropoutAxes[] = {"pos_axis", "seq_axis", "feature_axis"};
const StringRef kMoE[] = {"experts", "top_k", "activation"};
// swiglu_limit: gpt-oss's clamped SwiGLU; out_bias_axis: the experts'
// output biases are added only at that axis's coordinate 0 (their outputs
// are partial sums over it).
// DeepSeek-V3's router: "sigmoid" scores, "groups" / "topk_groups" for
// group-limited routing, "routed_scale" on the weights.
const StringRef kMoEOpt[] = {"gated",        "ep_axis",  "unnormalized",
                             "swiglu_limit", "out_bias_axis", "sigmoid",
                             "groups",       "topk_groups", "routed_scale"};
const StringRef kRouterOpt[] = {"gated",   "row_axis",   "unnormalized",
                                "swiglu_limit", "sigmoid", "groups",
                                "topk_groups",  "routed_scale"};

// Activations are [micro-batch, sequence, features]; the emitter flattens
// them to the runtime's [tokens, features]. Parameter gradients a kernel
// returns are this micro-batch's contribution (accumulate_grad adds them).
const KernelInfo kKernels[] = {
    {KernelKind::Embedding, 2, 1, {}, kVocab},          // ids, wte -> y
    {KernelKind::EmbeddingPos, 3, 1, {}, kVocabPos},      // ids, wte, wpe -> y
    {KernelKind::EmbeddingBwd, 2, 1, {}, kVocab},      // ids, dy -> dwte
    {KernelKind::EmbeddingPosBwd, 2, 2, {}, kVocabPos},  // ids, dy -> dwte, dwpe
    {KernelKind::LayerNorm, 3, 3, kEps, kGammaShift, 0b110}, // x, g, b -> y, mean, rstd
    {KernelKind::LayerNormBwd, 5, 3, {}, kGammaShift}, // dy, x, g, mean, rstd -> dx, dg, db
    {KernelKind::RmsNorm, 2, 2, kEps, {}, 0b10},       // x, g -> y, rstd
    {KernelKind::RmsNormBwd, 4, 2, {}, {}},           // dy, x, g, rstd -> dx, dg
    // rt::linearForward / linearBackward take x, w and dy in bf16.
    {KernelKind::Linear, 2, 1, {}, {}, 0, 0b11},            // x, w -> y
    {KernelKind::LinearBias, 3, 1, {}, kBias, 0, 0b011},    // x, w, b -> y
    {KernelKind::LinearBwd, 3, 2, {}, {}, 0, 0b111},        // dy, x, w -> dx, dw
    {KernelKind::LinearBiasBwd, 3, 3, {}, {}, 0, 0b111},    // dy, x, w -> dx, dw, db
    // The activations take x in bf16 and write their results in bf16 too
    // (tanh reads and writes fp32).
    {KernelKind::Gelu, 1, 1, {}, kApprox, 0, 0b1, 0b1},
    {KernelKind::GeluBwd, 2, 1, {}, kApprox, 0, 0b10, 0b1},  // dy, x -> dx
    {KernelKind::Silu, 1, 1, {}, {}, 0, 0b1, 0b1},
    {KernelKind::SiluBwd, 2, 1, {}, {}, 0, 0b10, 0b1},
    {KernelKind::Relu, 1, 1, {}, {}, 0, 0b1, 0b1},
    {KernelKind::ReluBwd, 2, 1, {}, {}, 0, 0b10, 0b1},
    {KernelKind::SquaredRelu, 1, 1, {}, {}, 0, 0b1, 0b1},
    {KernelKind::SquaredReluBwd, 2, 1, {}, {}, 0, 0b10, 0b1},
    {KernelKind::Tanh, 1, 1, {}, {}},
    {KernelKind::TanhBwd, 2, 1, {}, {}},
    {KernelKind::Swiglu, 2, 1, {}, {}, 0, 0b11, 0b1},   // gate, up -> y
    {KernelKind::SwigluBwd, 3, 2, {}, {}, 0, 0b110, 0b11}, // dy, gate, up -> dgate, dup
    {KernelKind::Add, 2, 1, {}, {}},
    {KernelKind::Mul, 2, 1, {}, {}},
    {KernelKind::Rope, 1, 1, kRope, kRopeOpt},            // x -> x rotated (RoPE)
    {KernelKind::RopeBwd, 1, 1, kRope, kRopeOpt},        // dy -> dx (inverse rotation)
    {KernelKind::Attention, 3, 2, kHeads, kAttnOpt, 0b10}, // q, k, v -> out, probs
    // out: the forward's output (flash attention's backward reads dy . out).
    // out (the output projection's input) in bf16: the fused backward's
    // row dots read it so (kFlashBwdRowDots), the unfused one not at all.
    {KernelKind::AttentionBwd, 6, 3, kHeads, kAttnOpt, 0, 0b10000}, // dy, q, k, v, out, probs -> dq, dk, dv
    // With one sink logit per local head (gpt-oss).
    {KernelKind::AttentionSinks, 4, 2, kHeads, kAttnOpt, 0b10}, // q, k, v, sinks -> out, probs
    {KernelKind::AttentionSinksBwd, 6, 4, kHeads, kAttnOpt, 0, 0b10000}, // dy, q, k, v, out, probs -> dq, dk, dv, dsinks
    // k_nope [b,s,heads*nope], k_rope [b,s,rope] -> k [b,s,heads*(nope+rope)]
    {KernelKind::LatentKey, 2, 1, kLatentKey, {}},
    {KernelKind::LatentKeyBwd, 1, 2, kLatentKey, {}}, // dk -> dk_nope, dk_rope
    {KernelKind::Dropout, 1, 1, kDropout, kDropoutAxes},     // x -> y
    {KernelKind::DropoutBwd, 1, 1, kDropout, kDropoutAxes}, // dy -> dx (same mask)
    {KernelKind::Moe, 4, 1, kMoE, kMoEOpt},             // x, router, w_in, w_out -> y
    {KernelKind::MoeBwd, 5, 4, kMoE, kMoEOpt},         // dy, x, router, w_in, w_out -> dx, dw_in, dw_out, dgate
    {KernelKind::MoeRouterBwd, 3, 2, kMoE, kRouterOpt}, // dgate, x, router -> dx, drouter
    // With router and expert biases (gpt-oss):
    // x, router, router_bias, w_in, b_in, w_out, b_out -> y
    {KernelKind::MoeBiased, 7, 1, kMoE, kMoEOpt},
    // dy, x, router, router_bias, w_in, b_in, w_out, b_out
    //   -> dx, dw_in, db_in, dw_out, db_out, dgate
    {KernelKind::MoeBiasedBwd, 8, 6, kMoE, kMoEOpt},
    // dgate, x, router, router_bias -> dx, drouter, drouter_bias
    {KernelKind::MoeRouterBiasedBwd, 4, 3, kMoE, kRouterOpt},
    // With a selection bias (DeepSeek-V3's e_score_correction_bias,
    // which gets no gradient): x, router, select, w_in, w_out -> y
    {KernelKind::MoeSelected, 5, 1, kMoE, kMoEOpt},
    // dy, x, router, select, w_in, w_out -> dx, dw_in, dw_out, dgate
    {KernelKind::MoeSelectedBwd, 6, 4, kMoE, kMoEOpt},
    // dgate, x, router, select -> dx, drouter, load (tokens per expert
    // of the rows routed here: the selection bias's load balancing)
    {KernelKind::MoeRouterSelectedBwd, 4, 3, kMoE, kRouterOpt, 0b100},
    {KernelKind::PatchEmbed, 3, 1, kPatch, {}},         // images, w, b -> tokens
    {KernelKind::PatchEmbedBwd, 2, 2, kPatch, {}},     // dy, images -> dw, db
    {KernelKind::SeqSlice, 1, 1, kSeqAxis, {}},         // x [b,s,h] -> [b,s/n,h]
    {KernelKind::PrependToken, 2, 1, {}, {}},           // x, token -> [token; x]
    {KernelKind::PrependTokenBwd, 1, 2, {}, {}},       // dy -> dx, dtoken
    {KernelKind::PositionAdd, 2, 1, {}, kPos},          // x, wpe -> x + wpe[pos]
    {KernelKind::PositionAddBwd, 1, 1, {}, kPos},      // dy -> dwpe
    {KernelKind::SelectToken, 1, 1, kSelect, kSelectAxes},     // x [b,s,h] -> [b,h]
    {KernelKind::SelectTokenBwd, 1, 1, kSelect, kSelectAxes}, // dy [b,h] -> dx [b,s,h]
    {KernelKind::CrossEntropy, 2, 2, {}, kCrossEntropy, 0b11}, // logits, labels -> loss_sum, lse
    {KernelKind::CrossEntropyBwd, 3, 1, kScale, kCrossEntropy}, // logits, labels, lse -> dlogits
    // DLRM (Naumov et al. 2019). An embedding bag is "embedding" on the
    // [b, bag] ids ([b, bag, d] rows), then bag_pool; "mean" averages.
    {KernelKind::BagPool, 1, 1, {}, kMean},     // rows [b, bag, d] -> [b, d]
    {KernelKind::BagPoolBwd, 1, 1, {}, kMean}, // dy [b, d] -> drows [b, bag, d]
    // F >= 2 features [b, d] -> [b, d + F(F-1)/2]
    {KernelKind::DotInteraction, kVariadic, 1, {}, {}},
    // dy, F features -> F feature gradients
    {KernelKind::DotInteractionBwd, kVariadic, kVariadic, {}, {}},
    // logits [b, 1], labels int32 [b] in {0, 1} -> loss_sum [1]
    {KernelKind::BinaryCrossEntropy, 2, 1, {}, {}, 0b1},
    {KernelKind::BinaryCrossEntropyBwd, 2, 1, kScale, {}}, // logits, labels -> dlogits
};
} // namespace

ArrayRef<KernelInfo> mlir::trident::exec::kernelTable() { return kKernels; }

const KernelInfo &mlir::trident::exec::lookupKernel(KernelKind kind) {
  // The table follows the kinds' order, one row each (checked once, when
  // the dialect loads).
  return kKernels[size_t(kind)];
}

void mlir::trident::exec::checkKernelTable() {
  bool ok = std::size(kKernels) == size_t(getMaxEnumValForKernelKind()) + 1;
  for (size_t i = 0; ok && i < std::size(kKernels); ++i)
    ok = size_t(kKernels[i].kind) == i;
  if (!ok)
    llvm::report_fatal_error("texec: the kernel table (ExecOps.cpp) must "
                             "list every KernelKind once, in its order");
}

bool mlir::trident::exec::keepsF32Result(KernelKind kind, unsigned index) {
  return index < 32 && (lookupKernel(kind).f32Results >> index & 1u);
}

bool mlir::trident::exec::readsBf16Input(KernelKind kind, unsigned index) {
  return index < 32 && (lookupKernel(kind).bf16Inputs >> index & 1u);
}

bool mlir::trident::exec::writesBf16Output(KernelKind kind, unsigned index) {
  return index < 32 && (lookupKernel(kind).bf16Outputs >> index & 1u);
}

bool mlir::trident::exec::isBackwardKernel(KernelKind kind) {
  return stringifyKernelKind(kind).ends_with("_bwd");
}
bool mlir::trident::exec::isMoEKernel(KernelKind kind) {
  return stringifyKernelKind(kind).starts_with("moe");
}
bool mlir::trident::exec::hasSelectionBias(KernelKind kind) {
  return stringifyKernelKind(kind).contains("selected");
}
bool mlir::trident::exec::hasExpertBiases(KernelKind kind) {
  return stringifyKernelKind(kind).contains("biased");
}

/// texec.kernel prints its kind as the kernel's quoted name.
static ParseResult parseKernelKind(OpAsmParser &parser, KernelKindAttr &kind) {
  std::string name;
  SMLoc at = parser.getCurrentLocation();
  if (parser.parseString(&name))
    return failure();
  std::optional<KernelKind> k = symbolizeKernelKind(name);
  if (!k)
    return parser.emitError(at) << "unknown kernel '" << name << "'";
  kind = KernelKindAttr::get(parser.getContext(), *k);
  return success();
}

static void printKernelKind(OpAsmPrinter &printer, Operation *,
                            KernelKindAttr kind) {
  printer.printString(stringifyKernelKind(kind.getValue()));
}

bool mlir::trident::exec::isGridAxis(StringRef axis) {
  return axis == "dp" || axis == "cp" || axis == "tp" || axis == "pp" ||
         axis == "ep" || axis == "edp";
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static ProgramOp getProgram(Operation *op) {
  return op->getParentOfType<ProgramOp>();
}

static LogicalResult checkGroup(Operation *op, StringRef group) {
  ProgramOp program = getProgram(op);
  if (!program)
    return op->emitOpError("must be inside a texec.program");
  if (!program.lookupGroup(group))
    return op->emitOpError() << "names group '" << group
                             << "', which the program does not declare";
  return success();
}

static FailureOr<ParamOp> findParam(Operation *op, StringRef name) {
  auto stage = op->getParentOfType<StageOp>();
  if (!stage)
    return op->emitOpError("must be inside a texec.stage");
  for (auto param : stage.getBody().front().getOps<ParamOp>())
    if (param.getSym() == name)
      return param;
  return op->emitOpError() << "names parameter '" << name
                           << "', which stage " << stage.getIndex()
                           << " does not declare";
}

//===----------------------------------------------------------------------===//
// ProgramOp, GroupOp, StageOp
//===----------------------------------------------------------------------===//

int64_t ProgramOp::getAxisSize(StringRef axis) {
  if (axis == "dp")
    return getDp();
  if (axis == "tp")
    return getTp();
  if (axis == "pp")
    return getPp();
  if (axis == "cp")
    return getCp();
  if (axis == "ep")
    return getEp();
  if (axis == "edp")
    return getEp() ? getDp() / getEp() : 0;
  return 0;
}

GroupOp ProgramOp::lookupGroup(StringRef name) {
  for (auto g : getBody().front().getOps<GroupOp>())
    if (g.getSym() == name)
      return g;
  return {};
}

LogicalResult ProgramOp::verify() {
  std::pair<StringRef, int64_t> sizes[] = {
      {"dp", getDp()},       {"tp", getTp()},
      {"pp", getPp()},       {"vpp", getVpp()},
      {"micro_batches", getMicroBatches()},
      {"micro_batch_size", getMicroBatchSize()},
      {"seq_len", getSeqLen()}, {"vocab", getVocab()}, {"cp", getCp()},
      {"ep", getEp()}};
  for (auto [name, value] : sizes)
    if (value < 1)
      return emitOpError() << "'" << name << "' must be >= 1, got " << value;
  if (getDp() % getEp() != 0)
    return emitOpError() << "'ep' (" << getEp() << ") must divide dp ("
                         << getDp() << ")";
  if (getSeqLen() % getCp() != 0)
    return emitOpError() << "'seq_len' (" << getSeqLen()
                         << ") must be divisible by cp (" << getCp() << ")";
  if (getZeroStage() > 3)
    return emitOpError() << "'zero_stage' must be 0..3, got "
                         << getZeroStage();
  if (getPrecision() != "f32" && getPrecision() != "bf16")
    return emitOpError() << "'precision' must be \"f32\" or \"bf16\", got \""
                         << getPrecision() << "\"";
  StringRef kind = getSchedule();
  if (kind != "gpipe" && kind != "1f1b" && kind != "interleaved-1f1b")
    return emitOpError() << "unknown schedule '" << kind
                         << "' (expected gpipe, 1f1b or interleaved-1f1b)";
  llvm::StringSet<> groups;
  std::set<int64_t> stages;
  for (Operation &op : getBody().front()) {
    if (auto g = dyn_cast<GroupOp>(op)) {
      if (!groups.insert(g.getSym()).second)
        return g.emitOpError() << "group '" << g.getSym()
                               << "' is declared twice";
    } else if (auto s = dyn_cast<StageOp>(op)) {
      if (!stages.insert(s.getIndex()).second)
        return s.emitOpError() << "stage " << s.getIndex()
                               << " is declared twice";
    } else {
      return op.emitOpError("is not allowed directly in a texec.program "
                            "(expected texec.group or texec.stage)");
    }
  }
  if (uint64_t(stages.size()) != getPp())
    return emitOpError() << "has " << stages.size() << " stages but pp = "
                         << getPp();
  return success();
}

int64_t GroupOp::getGroupSize() {
  if (auto members = getMembers())
    return members->size();
  ProgramOp program = getProgram(*this);
  int64_t size = 1;
  for (Attribute a : getAxes())
    size *= program.getAxisSize(cast<StringAttr>(a).getValue());
  return size;
}

LogicalResult GroupOp::verify() {
  ProgramOp program = getProgram(*this);
  if (getAxes().empty())
    return emitOpError("needs at least one axis");
  llvm::StringSet<> seen;
  for (Attribute a : getAxes()) {
    StringRef axis = cast<StringAttr>(a).getValue();
    if (!isGridAxis(axis))
      return emitOpError() << "unknown axis '" << axis
                           << "' (expected dp, tp or pp)";
    if (!seen.insert(axis).second)
      return emitOpError() << "axis '" << axis << "' is listed twice";
  }
  if (auto members = getMembers()) {
    if (getAxes().size() != 1)
      return emitOpError("'members' needs exactly one axis");
    StringRef along = cast<StringAttr>(getAxes()[0]).getValue();
    if (along == "ep" || along == "edp")
      return emitOpError() << "'members' along '" << along
                           << "' is not supported (pp, dp, cp or tp)";
    int64_t size =
        program.getAxisSize(cast<StringAttr>(getAxes()[0]).getValue());
    int64_t prev = -1;
    if (members->empty())
      return emitOpError("'members' must not be empty");
    for (int64_t m : *members) {
      if (m < 0 || m >= size)
        return emitOpError() << "member " << m << " is outside the axis (size "
                             << size << ")";
      if (m <= prev)
        return emitOpError("'members' must be strictly increasing");
      prev = m;
    }
  }
  // Groups over several axes: the data-parallel groups under context
  // parallelism only (the grid has no other combined group).
  if (getAxes().size() > 1) {
    SmallVector<StringRef> names;
    for (Attribute a : getAxes())
      names.push_back(cast<StringAttr>(a).getValue());
    bool known = names.size() == 2 && names[1] == "cp" &&
                 (names[0] == "dp" || names[0] == "edp");
    if (!known)
      return emitOpError("several axes must be [\"dp\", \"cp\"] or "
                         "[\"edp\", \"cp\"]");
  }
  return success();
}

LogicalResult StageOp::verify() {
  ProgramOp program = getProgram(*this);
  if (getIndex() >= program.getPp())
    return emitOpError() << "index " << getIndex() << " is outside 0.."
                         << program.getPp() - 1;
  llvm::StringSet<> params;
  std::set<int64_t> chunks;
  int schedules = 0, optimizers = 0;
  for (Operation &op : getBody().front()) {
    if (auto p = dyn_cast<ParamOp>(op)) {
      if (!params.insert(p.getSym()).second)
        return p.emitOpError() << "parameter '" << p.getSym()
                               << "' is declared twice";
    } else if (auto c = dyn_cast<ChunkOp>(op)) {
      if (c.getIndex() >= program.getVpp())
        return c.emitOpError() << "index " << c.getIndex()
                               << " is outside 0.." << program.getVpp() - 1;
      if (!chunks.insert(c.getIndex()).second)
        return c.emitOpError() << "chunk " << c.getIndex()
                               << " is declared twice";
    } else if (isa<ScheduleOp>(op)) {
      ++schedules;
    } else if (isa<OptimizerOp>(op)) {
      ++optimizers;
    } else if (!isa<GradAllReduceOp>(op)) {
      return op.emitOpError("is not allowed directly in a texec.stage");
    }
  }
  if (uint64_t(chunks.size()) != program.getVpp())
    return emitOpError() << "has " << chunks.size() << " chunks but vpp = "
                         << program.getVpp();
  if (schedules != 1)
    return emitOpError() << "needs exactly one texec.schedule, has "
                         << schedules;
  if (optimizers > 1)
    return emitOpError("has more than one texec.optimizer");
  return success();
}

//===----------------------------------------------------------------------===//
// ParamOp, ChunkOp
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  auto type = cast<RankedTensorType>(getType());
  ArrayRef<int64_t> global = getGlobalShape();
  if ((int64_t)global.size() != type.getRank())
    return emitOpError() << "global shape has rank " << global.size()
                         << " but the shard type has rank " << type.getRank();
  if (getSplitDim().has_value() != getSplitAxis().has_value() ||
      getSplit2Dim().has_value() != getSplit2Axis().has_value())
    return emitOpError("'split' needs both a dimension and an axis");
  if (getSplit2Dim() && !getSplitDim())
    return emitOpError("a second 'split' needs a first");
  // (dimension, axis, ranks) of each split.
  struct Split {
    int64_t dim;
    StringRef axis;
    int64_t parts;
  };
  SmallVector<Split, 2> splits;
  for (auto [dim, axis] : {std::pair{getSplitDim(), getSplitAxis()},
                           std::pair{getSplit2Dim(), getSplit2Axis()}}) {
    if (!axis)
      continue;
    if (!isGridAxis(*axis))
      return emitOpError() << "unknown axis '" << *axis << "'";
    int64_t d = static_cast<int64_t>(*dim);
    if (d < 0 || d >= type.getRank())
      return emitOpError() << "split dimension " << d
                           << " is outside the rank " << type.getRank();
    if (!splits.empty() && (splits[0].dim == d || splits[0].axis == *axis))
      return emitOpError() << "the two splits need two dimensions and two "
                              "axes, got dimension "
                           << d << " over '" << *axis << "' twice";
    splits.push_back({d, *axis, getProgram(*this).getAxisSize(*axis)});
  }
  const int64_t blocks = getBlocks() ? static_cast<int64_t>(*getBlocks()) : 1;
  if (blocks < 1 || (blocks > 1 && splits.empty()))
    return emitOpError() << "'blocks' " << blocks
                         << " needs a split and must be at least 1";
  if (getPadded() && (splits.size() != 1 || splits[0].dim != 0 ||
                      blocks != 1 || global[0] % splits[0].parts == 0))
    return emitOpError() << "'padded' rounds a split dimension 0 up to a "
                            "multiple of the axis size; this parameter "
                         << (splits.size() != 1 || splits[0].dim != 0 ||
                                     blocks != 1
                                 ? "is not split along dimension 0 (once, "
                                   "without blocks)"
                                 : "needs no padding");
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t want = global[d];
    for (size_t i = 0; i < splits.size(); ++i) {
      const Split &sp = splits[i];
      if (sp.dim != d)
        continue;
      const int64_t b = i + 1 == splits.size() ? blocks : 1;
      if (getPadded()) {
        want = (global[d] + sp.parts - 1) / sp.parts;
      } else if (global[d] % (sp.parts * b) != 0) {
        return emitOpError() << "global dimension " << d << " (" << global[d]
                             << ") is not divisible by the " << sp.parts
                             << " ranks of axis '" << sp.axis << "'"
                             << (b > 1 ? " times its " + std::to_string(b) +
                                             " blocks"
                                       : std::string());
      } else {
        want = global[d] / sp.parts;
      }
    }
    if (type.getDimSize(d) != want)
      return emitOpError() << "shard dimension " << d << " is "
                           << type.getDimSize(d) << ", expected " << want;
  }
  if (std::optional<StringRef> group = getDataGroup())
    if (failed(checkGroup(*this, *group)))
      return failure();
  StringRef init = getInit();
  if (init != "uniform" && init != "ones" && init != "zeros")
    return emitOpError() << "unknown init '" << init
                         << "' (expected uniform, ones or zeros)";
  if (std::optional<APFloat> rate = getLoadBalance()) {
    double r = rate->convertToDouble();
    if (!(r > 0.0) || !std::isfinite(r))
      return emitOpError() << "load_balance rate must be positive and "
                              "finite, got "
                           << r;
    if (type.getRank() != 1 || !splits.empty())
      return emitOpError() << "load_balance is for a selection bias: one "
                              "unsplit value per expert, got a shard of rank "
                           << type.getRank()
                           << (splits.empty() ? "" : ", split");
  }
  return success();
}

int64_t ChunkOp::getGlobalIndex() {
  auto stage = (*this)->getParentOfType<StageOp>();
  return getIndex() * getProgram(*this).getPp() + stage.getIndex();
}

LogicalResult ChunkOp::verify() {
  Block &fwd = getForward().front();
  Block &bwd = getBackward().front();
  if (fwd.getNumArguments() != 0)
    return emitOpError("forward region takes no arguments");
  auto save = dyn_cast<SaveOp>(fwd.getTerminator());
  if (!save)
    return emitOpError("forward region must end with texec.save");
  if (!isa<EndOp>(bwd.getTerminator()))
    return emitOpError("backward region must end with texec.end");
  if (save.getValues().getTypes() != bwd.getArgumentTypes())
    return emitOpError() << "backward arguments (" << bwd.getNumArguments()
                         << ") must match the texec.save operands ("
                         << save.getValues().size() << ") in number and type";
  return success();
}

//===----------------------------------------------------------------------===//
// Data, parameters, gradients, loss
//===----------------------------------------------------------------------===//

LogicalResult InputOp::verify() {
  auto type = cast<RankedTensorType>(getType());
  if (!(*this)->getParentOfType<ChunkOp>())
    return emitOpError("must be inside a texec.chunk");
  ProgramOp program = getProgram(*this);
  if (isa<FloatType>(type.getElementType())) {
    // Synthetic values per sample, any static shape.
    if (getRange() || getBag() || type.getRank() < 2 || !type.hasStaticShape() ||
        type.getDimSize(0) != int64_t(program.getMicroBatchSize()))
      return emitOpError() << "a float input takes no range or bag and "
                              "must be "
                              "micro_batch_size ("
                           << program.getMicroBatchSize()
                           << ") x static sizes, got " << type;
    return success();
  }
  if (getBag()) {
    // K ids per sample (an embedding bag).
    if (!getRange() || *getRange() <= 0 || *getBag() <= 0 ||
        !type.getElementType().isInteger(32) || type.getRank() != 2 ||
        type.getDimSize(0) != int64_t(program.getMicroBatchSize()) ||
        type.getDimSize(1) != int64_t(*getBag()))
      return emitOpError() << "a bag input needs a positive range, a "
                              "positive bag and type micro_batch_size x bag "
                              "(" << program.getMicroBatchSize() << "x"
                           << (*getBag()) << ") of i32, got " << type;
    return success();
  }
  const bool corpus =
      (getName() == "tokens" || getName() == "labels") && !getRange();
  if (getName() == "tokens" && getRange())
    return emitOpError() << "'tokens' comes from the corpus and takes no "
                            "range";
  if (!corpus && (!getRange() || *getRange() <= 0))
    return emitOpError() << "input '" << getName()
                         << "' needs a positive range (only tokens and "
                            "labels come from the corpus)";
  const int64_t mbs = int64_t(program.getMicroBatchSize());
  const bool perSample = !corpus && type.getRank() == 1 &&
                         type.getDimSize(0) == mbs;
  if (!perSample &&
      (type.getRank() != 2 || type.getDimSize(0) != mbs ||
       type.getDimSize(1) != int64_t(program.getLocalSeqLen())))
    return emitOpError() << "type must be micro_batch_size x seq_len / cp ("
                         << mbs << "x" << program.getLocalSeqLen()
                         << (corpus ? "" : ", or " + std::to_string(mbs) +
                                               " ids, one per sample")
                         << "), got " << type;
  return success();
}

static LogicalResult checkParamType(Operation *op, StringRef name, Type type) {
  FailureOr<ParamOp> param = findParam(op, name);
  if (failed(param))
    return failure();
  if (param->getType() != type)
    return op->emitOpError() << "type " << type << " differs from parameter '"
                             << name << "' (" << param->getType() << ")";
  return success();
}

LogicalResult ParamRefOp::verify() {
  if (getProgram(*this) && getProgram(*this).getZeroStage() == 3)
    return emitOpError("cannot read a parameter directly under ZeRO-3; use "
                       "texec.param_gather");
  return checkParamType(*this, getSym(), getType());
}

LogicalResult ParamGatherOp::verify() {
  if (failed(checkGroup(*this, getGroup())))
    return failure();
  if (getProgram(*this).getZeroStage() != 3)
    return emitOpError("is only used under ZeRO-3 (program zero_stage 3)");
  return checkParamType(*this, getSym(), getType());
}

LogicalResult AccumulateGradOp::verify() {
  // Gradients exist only in backward regions (the C++ emitter shards them
  // under ZeRO-2/3 after their last contribution there).
  auto chunk = (*this)->getParentOfType<ChunkOp>();
  if (chunk && (*this)->getParentRegion() != &chunk.getBackward())
    return emitOpError("must be in a chunk's backward region");
  return checkParamType(*this, getSym(), getGrad().getType());
}

LogicalResult LossOp::verify() {
  auto type = cast<RankedTensorType>(getLoss().getType());
  if (type.getRank() != 1 || type.getDimSize(0) != 1)
    return emitOpError() << "loss must be tensor<1xf32>, got " << type;
  if (getScale() && !(getScale()->convertToDouble() > 0.0))
    return emitOpError() << "scale must be positive, got "
                         << getScale()->convertToDouble();
  return success();
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

/// Shapes of the DLRM kernels (bag_pool, dot_interaction, binary
/// cross-entropy and their backwards); success for any other kernel.
static LogicalResult verifyRecommenderKernel(KernelOp op) {
  const KernelKind k = op.getKind();
  auto isF32 = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType().isF32();
  };
  auto shape = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  if (k == KernelKind::BagPool || k == KernelKind::BagPoolBwd) {
    if (Attribute m = op.getConfigAttr() ? op.getConfigAttr().get("mean")
                                         : Attribute())
      if (!isa<UnitAttr>(m))
        return op.emitOpError("config 'mean' is a unit attribute");
    bool fwd = k == KernelKind::BagPool;
    ArrayRef<int64_t> rows = shape(fwd ? op.getInputs()[0] : op.getResult(0));
    ArrayRef<int64_t> pooled =
        shape(fwd ? op.getResult(0) : op.getInputs()[0]);
    if (rows.size() != 3 || pooled.size() != 2 || rows[0] != pooled[0] ||
        rows[2] != pooled[1] || !isF32(op.getInputs()[0]) ||
        !isF32(op.getResult(0)))
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' pools f32 rows [b, bag, d] into [b, d]";
    return success();
  }
  if (k == KernelKind::DotInteraction || k == KernelKind::DotInteractionBwd) {
    bool fwd = k == KernelKind::DotInteraction;
    if (op.getInputs().empty())
      return op.emitOpError() << "kernel '" << op.getName() << "' takes no features";
    ValueRange feats = fwd ? op.getInputs() : op.getInputs().drop_front();
    if (feats.size() < 2 || (fwd && op.getNumResults() != 1) ||
        (!fwd && op.getNumResults() != feats.size()))
      return op.emitOpError()
             << "kernel '" << op.getName() << "' takes "
             << (fwd ? "F >= 2 features and gives one result"
                     : "the output gradient and F >= 2 features and gives "
                       "F gradients");
    ArrayRef<int64_t> f0 = shape(feats[0]);
    const int64_t F = int64_t(feats.size());
    for (Value f : feats)
      if (f.getType() != feats[0].getType() || f0.size() != 2 ||
          !isF32(f))
        return op.emitOpError() << "kernel '" << op.getName()
                                << "' needs f32 features of one type [b, d]";
    if (!isF32(fwd ? op.getResult(0) : op.getInputs()[0]))
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' needs an f32 interaction";
    SmallVector<int64_t> outShape = {f0[0], f0[1] + F * (F - 1) / 2};
    Value out = fwd ? op.getResult(0) : op.getInputs()[0];
    if (shape(out) != ArrayRef<int64_t>(outShape))
      return op.emitOpError()
             << "kernel '" << op.getName() << "': the interaction of " << F
             << " features [" << f0[0] << ", " << f0[1] << "] is ["
             << outShape[0] << ", " << outShape[1] << "], got "
             << out.getType();
    if (!fwd)
      for (Value r : op.getResults())
        if (r.getType() != feats[0].getType())
          return op.emitOpError() << "kernel '" << op.getName()
                                  << "' gives gradients of the features' type";
    return success();
  }
  if (k == KernelKind::BinaryCrossEntropy || k == KernelKind::BinaryCrossEntropyBwd) {
    auto logits = cast<RankedTensorType>(op.getInputs()[0].getType());
    auto labels = cast<RankedTensorType>(op.getInputs()[1].getType());
    if (!logits.getElementType().isF32() ||
        !labels.getElementType().isInteger(32) || labels.getRank() != 1 ||
        labels.getNumElements() != logits.getNumElements())
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' takes f32 logits and int32 labels [b], "
                                 "one per logit";
    auto res = cast<RankedTensorType>(op.getResult(0).getType());
    if (k == KernelKind::BinaryCrossEntropy &&
        (res.getRank() != 1 || res.getDimSize(0) != 1 ||
         !res.getElementType().isF32()))
      return op.emitOpError("kernel 'binary_cross_entropy' gives the loss "
                            "sum as tensor<1xf32>");
    if (k == KernelKind::BinaryCrossEntropyBwd && res != logits)
      return op.emitOpError("kernel 'binary_cross_entropy_bwd' gives a "
                            "gradient of the logits' type");
  }
  return success();
}

/// The kernel table's contract: arity, config keys (grid axes named as such)
/// and a padded vocabulary's size.
static LogicalResult verifyKernelTable(KernelOp op) {
  const KernelInfo *info = &lookupKernel(op.getKind());
  if (info->numInputs != kVariadic && op.getInputs().size() != info->numInputs)
    return op.emitOpError()
           << "kernel '" << op.getName() << "' takes " << info->numInputs
           << " inputs, got " << op.getInputs().size();
  if (info->numResults != kVariadic &&
      op.getResults().size() != info->numResults)
    return op.emitOpError()
           << "kernel '" << op.getName() << "' gives " << info->numResults
           << " results, got " << op.getResults().size();
  DictionaryAttr config = op.getConfigAttr();
  for (StringRef key : info->required)
    if (!config || !config.get(key))
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' needs config key '" << key << "'";
  if (config) {
    for (NamedAttribute entry : config) {
      StringRef key = entry.getName().getValue();
      if (!llvm::is_contained(info->required, key) &&
          !llvm::is_contained(info->optional, key))
        return op.emitOpError() << "kernel '" << op.getName()
                                << "' has no config key '" << key << "'";
      if (key.ends_with("_axis")) {
        auto axis = dyn_cast<StringAttr>(entry.getValue());
        if (!axis || !isGridAxis(axis.getValue()))
          return op.emitOpError() << "config '" << key
                                  << "' must name a grid axis (dp, cp, tp, pp, "
                                     "ep, edp)";
      }
    }
  }
  if (config && config.get("vocab")) { // cross_entropy(_bwd), padded
    auto vocab = dyn_cast<IntegerAttr>(config.get("vocab"));
    auto axis = config.getAs<StringAttr>("vocab_axis");
    ProgramOp program = getProgram(op);
    int64_t parts = axis && program ? program.getAxisSize(axis.getValue()) : 0;
    int64_t local =
        cast<RankedTensorType>(op.getInputs()[0].getType()).getShape().back();
    if (!vocab || parts < 1)
      return op.emitOpError("config 'vocab' (the real size of a padded "
                            "vocabulary) must be an integer, with a "
                            "'vocab_axis' inside a texec.program");
    int64_t v = vocab.getInt();
    if (v < 1 || v % parts == 0 || (v + parts - 1) / parts != local)
      return op.emitOpError()
             << "config 'vocab' (" << v << ") must be a size that the " << parts
             << " ranks of axis '" << axis.getValue() << "' hold as " << local
             << " columns each with padding (not a multiple "
                "of "
             << parts << ")";
  }
  return success();
}

/// Rotary embedding and latent-key kernels: heads, dimensions and rotation.
static LogicalResult verifyPositionalKernel(KernelOp op) {
  DictionaryAttr config = op.getConfigAttr();
  if (op.getKind() == KernelKind::Rope || op.getKind() == KernelKind::RopeBwd) {
    auto heads = dyn_cast<IntegerAttr>(config.get("heads"));
    auto dim = dyn_cast<IntegerAttr>(config.get("head_dim"));
    auto rot = dyn_cast<IntegerAttr>(config.get("rotary_dim"));
    auto theta = dyn_cast<FloatAttr>(config.get("theta"));
    if (!heads || !dim || !rot || !theta || heads.getInt() <= 0 ||
        dim.getInt() <= 0 || rot.getInt() <= 0 ||
        rot.getInt() % 2 != 0 || rot.getInt() > dim.getInt() ||
        theta.getValueAsDouble() <= 1)
      return op.emitOpError()
             << "kernel '" << op.getName()
             << "' needs integer heads, head_dim > 0, an even "
                "rotary_dim in (0, head_dim] and a float theta "
                "> 1";
    if (Attribute sc = config.get("scaling")) {
      auto rs = dyn_cast<DictionaryAttr>(sc);
      std::string why = rs ? ::trident::checkRopeScaling(rs)
                           : std::string("must be a dictionary");
      if (!why.empty())
        return op.emitOpError() << "kernel '" << op.getName() << "' config "
                                << "'scaling' " << why;
    }
    if (config.get("interleaved") && !isa<UnitAttr>(config.get("interleaved")))
      return op.emitOpError() << "kernel '" << op.getName()
                              << "': interleaved is a unit attribute";
    if (Attribute off = config.get("rotary_offset")) {
      auto o = dyn_cast<IntegerAttr>(off);
      if (!o || o.getInt() < 0 || o.getInt() + rot.getInt() > dim.getInt())
        return op.emitOpError() << "kernel '" << op.getName()
                                << "' needs an integer rotary_offset >= 0 with "
                                   "rotary_offset + rotary_dim <= head_dim";
    }
    auto t = cast<RankedTensorType>(op.getInputs()[0].getType());
    if (t.getShape().back() != heads.getInt() * dim.getInt() ||
        op.getInputs()[0].getType() != op.getResults()[0].getType())
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' needs a result of the input's type whose "
                                 "last dimension is heads * head_dim";
  }
  if (op.getKind() == KernelKind::LatentKey ||
      op.getKind() == KernelKind::LatentKeyBwd) {
    bool fwd = op.getKind() == KernelKind::LatentKey;
    auto heads = config.getAs<IntegerAttr>("heads");
    auto nope = config.getAs<IntegerAttr>("nope_dim");
    auto rope = config.getAs<IntegerAttr>("rope_dim");
    auto k = dyn_cast<RankedTensorType>(fwd ? op.getResults()[0].getType()
                                            : op.getInputs()[0].getType());
    auto kn = dyn_cast<RankedTensorType>(fwd ? op.getInputs()[0].getType()
                                             : op.getResults()[0].getType());
    auto kr = dyn_cast<RankedTensorType>(fwd ? op.getInputs()[1].getType()
                                             : op.getResults()[1].getType());
    bool ok = heads && nope && rope && heads.getInt() > 0 &&
              nope.getInt() > 0 && rope.getInt() > 0 && k && kn && kr &&
              k.getRank() == 3 && kn.getRank() == 3 && kr.getRank() == 3;
    if (ok) {
      int64_t h = heads.getInt(), n = nope.getInt(), r = rope.getInt();
      ok = k.getShape().drop_back() == kn.getShape().drop_back() &&
           k.getShape().drop_back() == kr.getShape().drop_back() &&
           k.getShape().back() == h * (n + r) &&
           kn.getShape().back() == h * n && kr.getShape().back() == r;
    }
    if (!ok)
      return op.emitOpError()
             << "kernel '" << op.getName()
             << "' needs integer heads, nope_dim, rope_dim > 0 "
                "and [b, s, heads*(nope_dim+rope_dim)] keys "
                "from [b, s, heads*nope_dim] and [b, s, "
                "rope_dim]";
  }
  return success();
}

/// Attention kernels: q, k, v shapes across cp, sinks, v_head_dim, scale,
/// window and heads.
static LogicalResult verifyAttentionKernel(KernelOp op) {
  DictionaryAttr config = op.getConfigAttr();
  const bool isAttention = op.getKind() == KernelKind::Attention ||
                           op.getKind() == KernelKind::AttentionBwd ||
                           op.getKind() == KernelKind::AttentionSinks ||
                           op.getKind() == KernelKind::AttentionSinksBwd;
  if (isAttention) {
    // Queries are the local positions; keys and values span cp times as
    // many when the kernel attends across a context-parallel group.
    bool fwd = !isBackwardKernel(op.getKind());
    auto q = dyn_cast<RankedTensorType>(op.getInputs()[fwd ? 0 : 1].getType());
    auto k = dyn_cast<RankedTensorType>(op.getInputs()[fwd ? 1 : 2].getType());
    int64_t parts = 1;
    if (auto axis = config.getAs<StringAttr>("cp_axis"))
      parts = getProgram(op) ? getProgram(op).getAxisSize(axis) : 1;
    if (!q || !k || q.getRank() != 3 || k.getRank() != 3 ||
        k.getDimSize(1) != q.getDimSize(1) * parts)
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' needs [batch, seq, features] q, k, v with "
                              << parts << " key position(s) per query position";
    // Saved for the backward (rt::attentionForward): the probabilities
    // [b, heads, s, keys] or their rows' log-sum-exp [b, heads, s].
    auto saved = dyn_cast<RankedTensorType>(fwd ? op.getResults()[1].getType()
                                                : op.getInputs()[5].getType());
    auto heads = config.getAs<IntegerAttr>("heads");
    SmallVector<int64_t> rows = {q.getDimSize(0), heads ? heads.getInt() : -1,
                                 q.getDimSize(1)};
    SmallVector<int64_t> probs = rows;
    probs.push_back(k.getDimSize(1));
    if (!saved || (saved.getShape() != ArrayRef<int64_t>(rows) &&
                   saved.getShape() != ArrayRef<int64_t>(probs)))
      return op.emitOpError()
             << "kernel '" << op.getName()
             << "' saves the probabilities [batch, heads, seq, keys] or "
                "their rows' log-sum-exp [batch, heads, seq]";
    // The backward's out, the forward's output, is shaped as its dy.
    if (!fwd && op.getInputs()[4].getType() != op.getInputs()[0].getType())
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' needs the forward's output (input 4) "
                                 "shaped as dy (input 0)";
    // Sinks and their gradient: one value per local head.
    if (op.getKind() == KernelKind::AttentionSinks ||
        op.getKind() == KernelKind::AttentionSinksBwd) {
      Type sinks =
          fwd ? op.getInputs()[3].getType() : op.getResults()[3].getType();
      auto st = dyn_cast<RankedTensorType>(sinks);
      if (!st || !heads || st.getRank() != 1 ||
          st.getDimSize(0) != heads.getInt())
        return op.emitOpError() << "kernel '" << op.getName()
                                << "' needs sinks of one value per local head";
    }
  }
  if (isAttention) {
    auto vdim = config.getAs<IntegerAttr>("v_head_dim");
    if (config.get("v_head_dim") && (!vdim || vdim.getInt() <= 0))
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' needs an integer v_head_dim > 0";
    auto scale = config.getAs<FloatAttr>("scale");
    if (config.get("scale") &&
        (!scale || !(scale.getValueAsDouble() > 0.0) ||
         !std::isfinite(scale.getValueAsDouble())))
      return op.emitOpError()
             << "kernel '" << op.getName() << "' needs a float scale > 0";
    auto window = config.getAs<IntegerAttr>("window");
    if (config.get("window") && (!window || window.getInt() < 0))
      return op.emitOpError()
             << "kernel '" << op.getName() << "' needs an integer window >= 0";
    if (config.get("bidirectional") &&
        (!isa<UnitAttr>(config.get("bidirectional")) || config.get("window")))
      return op.emitOpError() << "kernel '" << op.getName()
                              << "': bidirectional is a unit attribute and "
                                 "takes no window";
    auto rate = config.getAs<FloatAttr>("dropout");
    auto site = config.getAs<IntegerAttr>("site");
    auto total = config.getAs<IntegerAttr>("heads_total");
    if (config.get("dropout") &&
        (!rate || rate.getValueAsDouble() <= 0.0 ||
         rate.getValueAsDouble() >= 1.0 || !site || site.getInt() < 0 ||
         !total || total.getInt() < 1))
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' with dropout needs a float rate in (0, 1), "
                                 "an integer site >= 0 and heads_total >= 1";
    if (!config.get("dropout") &&
        (config.get("site") || config.get("heads_total") ||
         config.get("head_axis")))
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' has site, heads_total or head_axis but no "
                                 "dropout";
    if (config.get("dropout")) {
      // The local heads must be one head_axis shard of the model's.
      auto headAxis = config.getAs<StringAttr>("head_axis");
      int64_t parts = 1;
      if (headAxis && getProgram(op))
        parts = getProgram(op).getAxisSize(headAxis.getValue());
      auto heads = config.getAs<IntegerAttr>("heads");
      if (!heads || heads.getInt() * parts != total.getInt())
        return op.emitOpError() << "kernel '" << op.getName()
                                << "' needs heads_total = heads x the size of "
                                   "head_axis ("
                                << (heads ? heads.getInt() : 0) << " x "
                                << parts << "), got " << total.getInt();
    }
  }
  return success();
}

/// Patch embedding, sequence slices, prepended, positional and selected tokens.
static LogicalResult verifyTokenViewKernel(KernelOp op) {
  DictionaryAttr config = op.getConfigAttr();
  if (op.getKind() == KernelKind::PatchEmbed ||
      op.getKind() == KernelKind::PatchEmbedBwd) {
    // images [b, C, side, side] -> tokens [b, (side / patch)^2, h] with w
    // [C * patch^2, h] and b [h].
    bool fwd = op.getKind() == KernelKind::PatchEmbed;
    auto img =
        dyn_cast<RankedTensorType>(op.getInputs()[fwd ? 0 : 1].getType());
    auto tok = dyn_cast<RankedTensorType>(fwd ? op.getResults()[0].getType()
                                              : op.getInputs()[0].getType());
    auto w = dyn_cast<RankedTensorType>(fwd ? op.getInputs()[1].getType()
                                            : op.getResults()[0].getType());
    auto b = dyn_cast<RankedTensorType>(fwd ? op.getInputs()[2].getType()
                                            : op.getResults()[1].getType());
    auto patch = config.getAs<IntegerAttr>("patch");
    bool ok = img && tok && w && b && patch && patch.getInt() > 0 &&
              img.getRank() == 4 && tok.getRank() == 3 && w.getRank() == 2 &&
              b.getRank() == 1 && img.getDimSize(2) == img.getDimSize(3) &&
              img.getDimSize(2) % patch.getInt() == 0;
    if (ok) {
      int64_t p = patch.getInt(), grid = img.getDimSize(2) / p;
      ok = w.getDimSize(0) == img.getDimSize(1) * p * p &&
           tok.getDimSize(0) == img.getDimSize(0) &&
           tok.getDimSize(1) == grid * grid &&
           tok.getDimSize(2) == w.getDimSize(1) &&
           b.getDimSize(0) == w.getDimSize(1);
    }
    if (!ok)
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' needs images [b, C, side, side] with an "
                                 "integer patch dividing side, w [C*patch^2, "
                                 "h], b [h] and tokens [b, (side/patch)^2, h]";
  }
  if (op.getKind() == KernelKind::SeqSlice) {
    // This rank's share of the positions of a replicated activation.
    auto x = dyn_cast<RankedTensorType>(op.getInputs()[0].getType());
    auto y = dyn_cast<RankedTensorType>(op.getResults()[0].getType());
    int64_t parts = 1;
    if (auto axis = config.getAs<StringAttr>("seq_axis");
        axis && getProgram(op))
      parts = getProgram(op).getAxisSize(axis.getValue());
    if (!x || !y || x.getRank() != 3 || y.getRank() != 3 ||
        x.getDimSize(0) != y.getDimSize(0) ||
        x.getDimSize(2) != y.getDimSize(2) ||
        x.getDimSize(1) != y.getDimSize(1) * parts)
      return op.emitOpError() << "kernel 'seq_slice' needs x [b, s, h] and [b, "
                                 "s / "
                              << parts << ", h]";
  }
  if (op.getKind() == KernelKind::PrependToken ||
      op.getKind() == KernelKind::PrependTokenBwd) {
    bool fwd = op.getKind() == KernelKind::PrependToken;
    auto x = dyn_cast<RankedTensorType>(fwd ? op.getInputs()[0].getType()
                                            : op.getResults()[0].getType());
    auto tok = dyn_cast<RankedTensorType>(fwd ? op.getInputs()[1].getType()
                                              : op.getResults()[1].getType());
    auto y = dyn_cast<RankedTensorType>(fwd ? op.getResults()[0].getType()
                                            : op.getInputs()[0].getType());
    if (!x || !tok || !y || x.getRank() != 3 || y.getRank() != 3 ||
        tok.getRank() != 2 || tok.getDimSize(0) != 1 ||
        y.getDimSize(0) != x.getDimSize(0) ||
        y.getDimSize(1) != x.getDimSize(1) + 1 ||
        y.getDimSize(2) != x.getDimSize(2) ||
        tok.getDimSize(1) != x.getDimSize(2))
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' needs x [b, T, h], token [1, h] and [b, T "
                                 "+ 1, h]";
  }
  if (op.getKind() == KernelKind::PositionAdd ||
      op.getKind() == KernelKind::PositionAddBwd) {
    bool fwd = op.getKind() == KernelKind::PositionAdd;
    auto x = dyn_cast<RankedTensorType>(op.getInputs()[0].getType());
    auto wpe = dyn_cast<RankedTensorType>(fwd ? op.getInputs()[1].getType()
                                              : op.getResults()[0].getType());
    int64_t parts = 1;
    if (auto axis =
            config ? config.getAs<StringAttr>("pos_axis") : StringAttr();
        axis && getProgram(op))
      parts = getProgram(op).getAxisSize(axis.getValue());
    if (!x || !wpe || x.getRank() != 3 || wpe.getRank() != 2 ||
        wpe.getDimSize(1) != x.getDimSize(2) ||
        wpe.getDimSize(0) < x.getDimSize(1) * parts ||
        (fwd && op.getResults()[0].getType() != x))
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' needs x [b, s, h] and a position table [P, "
                                 "h] with a row for each of the s x "
                              << parts << " positions";
  }
  if (op.getKind() == KernelKind::SelectToken ||
      op.getKind() == KernelKind::SelectTokenBwd) {
    // One position of the whole sequence, picked from [batch, seq, h]
    // (the local block, after pos_axis and seq_axis split it) into
    // [batch, h].
    bool fwd = op.getKind() == KernelKind::SelectToken;
    auto x = dyn_cast<RankedTensorType>(fwd ? op.getInputs()[0].getType()
                                            : op.getResults()[0].getType());
    auto rows = dyn_cast<RankedTensorType>(fwd ? op.getResults()[0].getType()
                                               : op.getInputs()[0].getType());
    auto index = config.getAs<IntegerAttr>("index");
    ProgramOp program = getProgram(op);
    int64_t parts = 1;
    for (StringRef key : {"pos_axis", "seq_axis"})
      if (auto axis = config.getAs<StringAttr>(key); axis && program)
        parts *= program.getAxisSize(axis.getValue());
    if (!x || !rows || x.getRank() != 3 || rows.getRank() != 2 ||
        x.getDimSize(0) != rows.getDimSize(0) ||
        x.getDimSize(2) != rows.getDimSize(1) || !index ||
        index.getInt() < 0 || index.getInt() >= x.getDimSize(1) * parts)
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' needs [batch, seq, h] and [batch, h] "
                                 "tensors and an integer index inside the "
                                 "whole sequence";
  }
  return success();
}

/// Dropout: rate, site and the global positions its mask is drawn over.
static LogicalResult verifyDropoutKernel(KernelOp op) {
  DictionaryAttr config = op.getConfigAttr();
  if (op.getKind() == KernelKind::Dropout ||
      op.getKind() == KernelKind::DropoutBwd) {
    auto rate = config.getAs<FloatAttr>("rate");
    auto site = config.getAs<IntegerAttr>("site");
    auto seq = config.getAs<IntegerAttr>("seq_len");
    auto features = config.getAs<IntegerAttr>("features");
    auto t = cast<RankedTensorType>(op.getInputs()[0].getType());
    if (!rate || rate.getValueAsDouble() <= 0.0 ||
        rate.getValueAsDouble() >= 1.0 || !site || site.getInt() < 0 || !seq ||
        !features || t.getRank() != 3 || seq.getInt() < t.getDimSize(1) ||
        features.getInt() < t.getDimSize(2) ||
        op.getInputs()[0].getType() != op.getResults()[0].getType())
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' needs a float rate in (0, 1), an integer "
                                 "site >= 0, a [batch, seq, features] input "
                                 "of the result's type and global seq_len and "
                                 "features at least the local ones";
    // The global sizes must be what the axes split: positions over
    // pos_axis (cp chunks: the emitter offsets by the program's local
    // sequence length) and seq_axis, features over feature_axis.
    ProgramOp program = getProgram(op);
    auto axisParts = [&](StringRef key) -> int64_t {
      auto axis = config.getAs<StringAttr>(key);
      return axis && program ? program.getAxisSize(axis.getValue()) : 1;
    };
    auto pos = config.getAs<StringAttr>("pos_axis");
    if (pos && pos.getValue() != "cp")
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' config 'pos_axis' must be \"cp\"";
    int64_t wantSeq =
        t.getDimSize(1) * axisParts("pos_axis") * axisParts("seq_axis");
    int64_t wantF = t.getDimSize(2) * axisParts("feature_axis");
    if (seq.getInt() != wantSeq || features.getInt() != wantF)
      return op.emitOpError()
             << "kernel '" << op.getName() << "' has global seq_len "
             << seq.getInt() << " and features " << features.getInt()
             << ", but its block and axes make " << wantSeq << " and " << wantF;
  }
  return success();
}

/// Mixture-of-experts kernels: experts, top-k, router options and weight
/// shapes.
static LogicalResult verifyMoEKernel(KernelOp op) {
  DictionaryAttr config = op.getConfigAttr();
  if (isMoEKernel(op.getKind())) {
    auto experts = dyn_cast<IntegerAttr>(config.get("experts"));
    auto topK = dyn_cast<IntegerAttr>(config.get("top_k"));
    auto act = dyn_cast<StringAttr>(config.get("activation"));
    if (!experts || !topK || experts.getInt() < 1 || topK.getInt() < 1 ||
        topK.getInt() > experts.getInt())
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' needs integer experts >= top_k >= 1";
    if (!act || !llvm::is_contained(
                    {"gelu", "gelu_tanh", "silu", "relu"}, act.getValue()))
      return op.emitOpError() << "kernel '" << op.getName()
                              << "' needs activation gelu, gelu_tanh, silu or "
                                 "relu";
    if (Attribute lim = config.get("swiglu_limit")) {
      auto f = dyn_cast<FloatAttr>(lim);
      if (!f || !(f.getValueAsDouble() > 0.0) ||
          !std::isfinite(f.getValueAsDouble()) || !config.get("gated") ||
          act.getValue() != "silu")
        return op.emitOpError() << "kernel '" << op.getName()
                                << "' needs a positive float swiglu_limit on "
                                   "gated silu experts";
    }
    // DeepSeek-V3's router: groups dividing the experts, the top-k inside
    // the chosen groups, a positive scale.
    auto groups = config.getAs<IntegerAttr>("groups");
    auto topkGroups = config.getAs<IntegerAttr>("topk_groups");
    if (config.get("groups") || config.get("topk_groups")) {
      std::string why =
          !groups || !topkGroups
              ? std::string("groups and topk_groups must both be integers")
              : ::trident::checkExpertGroups(experts.getInt(), topK.getInt(),
                                             groups.getInt(),
                                             topkGroups.getInt());
      if (!why.empty())
        return op.emitOpError() << "kernel '" << op.getName() << "': " << why;
    }
    if (Attribute rs = config.get("routed_scale")) {
      auto f = dyn_cast<FloatAttr>(rs);
      if (!f || !(f.getValueAsDouble() > 0.0) ||
          !std::isfinite(f.getValueAsDouble()))
        return op.emitOpError() << "kernel '" << op.getName()
                                << "' needs a positive float routed_scale";
    }
    if (config.get("sigmoid") && !isa<UnitAttr>(config.get("sigmoid")))
      return op.emitOpError()
             << "kernel '" << op.getName() << "': sigmoid is a unit attribute";
    if (hasSelectionBias(op.getKind())) {
      // The selection bias: one value per expert, after x / dgate, x (and
      // dy first in the experts' backward) and the router.
      const unsigned at = op.getKind() == KernelKind::MoeSelected ? 2 : 3;
      auto sb = cast<RankedTensorType>(op.getInputs()[at].getType());
      if (sb.getRank() != 1 || sb.getDimSize(0) != experts.getInt())
        return op.emitOpError() << "kernel '" << op.getName()
                                << "' needs a selection bias of one value per "
                                   "expert";
      if (op.getKind() == KernelKind::MoeRouterSelectedBwd &&
          op.getResults()[2].getType() != sb)
        return op.emitOpError() << "kernel '" << op.getName()
                                << "': its third result, the expert load, "
                                   "needs the selection bias's type "
                                << sb;
    }
    if (hasExpertBiases(op.getKind())) {
      // Bias shapes: router bias [experts]; b_in [local experts, w_in's
      // columns]; b_out [local experts, hidden].
      const bool router = op.getKind() == KernelKind::MoeRouterBiasedBwd;
      const unsigned first = op.getKind() == KernelKind::MoeBiased ? 0 : 1;
      auto shapeOf = [&](unsigned i) {
        return cast<RankedTensorType>(op.getInputs()[first + i].getType())
            .getShape();
      };
      ArrayRef<int64_t> rb = shapeOf(2);
      bool ok = rb.size() == 1 && rb[0] == experts.getInt();
      if (!router) {
        ArrayRef<int64_t> wi = shapeOf(3), bi = shapeOf(4), wo = shapeOf(5),
                          bo = shapeOf(6);
        ok = ok && wi.size() == 3 && wo.size() == 3 && bi.size() == 2 &&
             bo.size() == 2 && bi[0] == wi[0] && bi[1] == wi[2] &&
             bo[0] == wo[0] && bo[1] == wo[2];
      }
      if (!ok)
        return op.emitOpError() << "kernel '" << op.getName()
                                << "' needs a router bias of one value per "
                                   "expert and expert biases [experts, w_in "
                                   "columns] and [experts, hidden]";
    }
  }
  return success();
}

LogicalResult KernelOp::verify() {
  for (auto check :
       {verifyKernelTable, verifyRecommenderKernel, verifyPositionalKernel,
        verifyAttentionKernel, verifyTokenViewKernel, verifyDropoutKernel,
        verifyMoEKernel})
    if (failed(check(*this)))
      return failure();
  if (getKind() == KernelKind::Add || getKind() == KernelKind::Mul) {
    if (getInputs()[0].getType() != getInputs()[1].getType() ||
        getInputs()[0].getType() != getResults()[0].getType())
      return emitOpError() << "kernel '" << getName()
                           << "' needs inputs and result of one type";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Communication
//===----------------------------------------------------------------------===//

LogicalResult AllReduceOp::verify() {
  if (failed(checkGroup(*this, getGroup())))
    return failure();
  if (getInput().getType() != getResult().getType())
    return emitOpError("result type must equal the input type");
  return success();
}

/// Shared shape rule of all_gather (grow) and reduce_scatter (shrink).
static LogicalResult checkResized(Operation *op, StringRef group, int64_t dim,
                                  Type inType, Type outType, bool grow) {
  if (failed(checkGroup(op, group)))
    return failure();
  auto in = cast<RankedTensorType>(inType);
  auto out = cast<RankedTensorType>(outType);
  if (in.getRank() != out.getRank() || in.getElementType() !=
                                           out.getElementType())
    return op->emitOpError("input and result must have one rank and "
                           "element type");
  if (dim < 0 || dim >= in.getRank())
    return op->emitOpError() << "dim " << dim << " is outside the rank "
                             << in.getRank();
  int64_t n = getProgram(op).lookupGroup(group).getGroupSize();
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t want = in.getDimSize(d);
    if (d == dim) {
      if (!grow && want % n != 0)
        return op->emitOpError() << "dimension " << d << " (" << want
                                 << ") is not divisible by the group size "
                                 << n;
      want = grow ? want * n : want / n;
    }
    if (out.getDimSize(d) != want)
      return op->emitOpError() << "result dimension " << d << " must be "
                               << want << ", got " << out.getDimSize(d);
  }
  return success();
}

LogicalResult AllGatherOp::verify() {
  return checkResized(*this, getGroup(), getDim(), getInput().getType(),
                      getResult().getType(), /*grow=*/true);
}

LogicalResult ReduceScatterOp::verify() {
  return checkResized(*this, getGroup(), getDim(), getInput().getType(),
                      getResult().getType(), /*grow=*/false);
}

LogicalResult AllToAllOp::verify() {
  if (failed(checkGroup(*this, getGroup())))
    return failure();
  if (getInput().getType() != getResult().getType())
    return emitOpError("result type must equal the input type");
  auto type = cast<RankedTensorType>(getInput().getType());
  if (getDim() >= uint64_t(type.getRank()))
    return emitOpError() << "dim " << getDim() << " is outside the rank "
                         << type.getRank();
  int64_t n = getProgram(*this).lookupGroup(getGroup()).getGroupSize();
  if (type.getDimSize(getDim()) % n != 0)
    return emitOpError() << "dimension " << getDim()
                         << " is not divisible by the group size " << n;
  return success();
}

/// Send and receive connect adjacent model chunks.
static LogicalResult checkPeer(Operation *op, int64_t peer) {
  auto chunk = op->getParentOfType<ChunkOp>();
  if (!chunk)
    return op->emitOpError("must be inside a texec.chunk");
  ProgramOp program = getProgram(op);
  int64_t chunks = program.getPp() * program.getVpp();
  if (peer < 0 || peer >= chunks)
    return op->emitOpError() << "peer chunk " << peer << " is outside 0.."
                             << chunks - 1;
  int64_t self = chunk.getGlobalIndex();
  if (peer != self - 1 && peer != self + 1)
    return op->emitOpError() << "peer chunk " << peer
                             << " is not adjacent to chunk " << self;
  return success();
}

LogicalResult SendOp::verify() { return checkPeer(*this, getPeer()); }
LogicalResult RecvOp::verify() { return checkPeer(*this, getPeer()); }

//===----------------------------------------------------------------------===//
// Schedule, gradient synchronisation, optimizer
//===----------------------------------------------------------------------===//

LogicalResult ScheduleOp::verify() {
  ProgramOp program = getProgram(*this);
  if (getKind() != program.getSchedule())
    return emitOpError() << "kind '" << getKind()
                         << "' differs from the program's schedule '"
                         << program.getSchedule() << "'";
  ArrayRef<int64_t> a = getActions();
  if (a.size() % 3 != 0)
    return emitOpError("actions must be (kind, micro-batch, chunk) triples");
  int64_t m = program.getMicroBatches(), v = program.getVpp();
  std::set<std::pair<int64_t, int64_t>> forwarded, backwarded;
  for (size_t i = 0; i < a.size(); i += 3) {
    int64_t kind = a[i], mb = a[i + 1], chunk = a[i + 2];
    if (kind != 0 && kind != 1)
      return emitOpError() << "action " << i / 3 << " has kind " << kind
                           << " (0 forward, 1 backward)";
    if (mb < 0 || mb >= m || chunk < 0 || chunk >= v)
      return emitOpError() << "action " << i / 3 << " names micro-batch "
                           << mb << " chunk " << chunk
                           << ", outside the program's " << m << " x " << v;
    auto key = std::make_pair(mb, chunk);
    if (kind == 0 && !forwarded.insert(key).second)
      return emitOpError() << "micro-batch " << mb << " chunk " << chunk
                           << " is forwarded twice";
    if (kind == 1) {
      if (!forwarded.count(key))
        return emitOpError() << "micro-batch " << mb << " chunk " << chunk
                             << " is backwarded before its forward";
      if (!backwarded.insert(key).second)
        return emitOpError() << "micro-batch " << mb << " chunk " << chunk
                             << " is backwarded twice";
    }
  }
  if ((int64_t)backwarded.size() != m * v ||
      (int64_t)forwarded.size() != m * v)
    return emitOpError() << "must run every one of the " << m * v
                         << " (micro-batch, chunk) pairs forward and backward";
  if (std::optional<ArrayRef<int64_t>> steps = getSteps()) {
    int64_t covered = 0;
    for (int64_t n : *steps) {
      if (n < 1)
        return emitOpError() << "steps must hold positive action counts, "
                                "got "
                             << n;
      covered += n;
    }
    if (covered != int64_t(a.size() / 3))
      return emitOpError() << "steps cover " << covered << " actions, not the "
                           << a.size() / 3 << " of the schedule";
  }
  return success();
}

LogicalResult GradAllReduceOp::verify() {
  if (failed(checkGroup(*this, getGroup())))
    return failure();
  if (auto params = getParams())
    for (Attribute a : *params)
      if (failed(findParam(*this, cast<StringAttr>(a).getValue())))
        return failure();
  return success();
}

LogicalResult OptimizerOp::verify() {
  if (getKind() != "sgd" && getKind() != "adam")
    return emitOpError() << "unknown optimizer '" << getKind()
                         << "' (expected sgd or adam)";
  if (failed(checkGroup(*this, getGroup())))
    return failure();
  if (getZeroStage() != getProgram(*this).getZeroStage())
    return emitOpError() << "zero stage " << getZeroStage()
                         << " differs from the program's "
                         << getProgram(*this).getZeroStage();
  if (!(getLr().convertToDouble() > 0))
    return emitOpError("'lr' must be positive");
  return success();
}

#define GET_OP_CLASSES
#include "dialects/Exec/IR/ExecOps.cpp.inc"
