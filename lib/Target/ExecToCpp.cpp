//===- ExecToCpp.cpp - texec to C++ against the Trident runtime -----------===//
//
// Each texec op becomes a few statements; SSA values become local
// `rt::Tensor` variables (which share storage when copied). A stage becomes
// a class with its parameters, one forward and one backward method per
// chunk, and a step method that runs the schedule's action list, the
// gradient synchronisation and the optimizer. main() builds the grid and
// runs the class of the rank's pipeline stage.
//
//===----------------------------------------------------------------------===//

#include "trident/Target/ExecToCpp.h"

#include "dialects/Exec/IR/ExecOps.h"
#include "trident/Support/FileIO.h"
#include "trident/Support/RopeScalingAttr.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <sstream>
#include <unistd.h>

using namespace mlir;
namespace tx = mlir::trident::exec;
using mlir::trident::exec::KernelKind;

namespace trident::target {

std::optional<Backend> parseBackend(llvm::StringRef name) {
  if (name == "cpu")
    return Backend::Cpu;
  if (name == "cuda")
    return Backend::Cuda;
  return std::nullopt;
}

namespace {

/// How many weight matrices' parameter gathers run ahead of the one in
/// use (1-D parameters, biases and norm weights, go along uncounted):
/// under ZeRO-3 where the emitter places each gather's start, under
/// ZeRO-1/2 the programs' prefetch at run time (kParamGathersInFlight,
/// written into every main.cpp from this one value). Megatron-LM's
/// --overlap-param-gather runs one bucket ahead; two matrices keep a
/// layer's first weight from starting behind only a norm.
constexpr int kParamGathersAhead = 2;

std::string shapeList(ArrayRef<int64_t> shape) {
  std::string s = "{";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "}";
}

/// A double as C++ source that reads back to the same value.
std::string exactDouble(double x) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", x);
  return std::string(buf);
}

/// A float literal of x ("16.0f", "0.001f"): exactDouble with a decimal
/// point where %g printed an integer ("16f" is not C++).
std::string floatLiteral(double x) {
  std::string s = exactDouble(x);
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s + "f";
}

std::string cppString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

/// C++ expression of a group by texec name.
std::string groupExpr(StringRef name) {
  return "c.group(" + cppString(name) + ")";
}

/// What the emission of one texec.kernel reads: the op, its kind and
/// config, its results' names (out, and [tokens, features] views out2),
/// this rank's positions, and the helpers that print inputs and configs.
struct KernelSite {
  tx::KernelOp op;
  KernelKind k;
  DictionaryAttr config;
  SmallVector<std::string> out, out2;
  int64_t seq;
  std::string vocabCoord, posOffset;
  std::function<std::string(unsigned)> in, in2, ids;
  std::function<int64_t(StringRef)> cfgInt;
  std::function<std::string(StringRef)> cfgFloat, cfgExact, axisCoord;
  std::function<int64_t()> idsPerSample;
};

/// Emits the body of one chunk region.
class RegionEmitter {
public:
  /// Which function a region becomes. Recompute: the forward region again,
  /// before the backward of a `recompute` chunk (receives read the inputs
  /// the forward stashed; no sends, no loss).
  enum class Mode { Forward, Backward, Recompute };
  RegionEmitter(tx::ProgramOp program, tx::ChunkOp chunk,
                const llvm::StringMap<int> &paramIndex, llvm::raw_ostream &os,
                Mode mode)
      : program(program), chunk(chunk), paramIndex(paramIndex), os(os),
        backward(mode == Mode::Backward), mode(mode) {}

  /// ZeRO-0/1, backward only: parameters whose gradient sums start in this
  /// chunk's backward of one micro-batch (the step's last contribution),
  /// with that micro-batch and the groups' names in summation order.
  struct AsyncSum {
    int64_t microBatch;
    SmallVector<std::string, 2> groups;
    /// ZeRO-1: then reduce-scatter the gradient into the rank's slice.
    bool slice = false;
  };
  llvm::StringMap<AsyncSum> asyncSums;
  /// Sums of parameters reached earlier in the step that start after this
  /// backward's last point-to-point transfer (see emitMainCpp).
  SmallVector<std::pair<std::string, AsyncSum>> sumsAfterTransfers;

  LogicalResult emit(Block &block);

private:
  tx::ProgramOp program;
  tx::ChunkOp chunk;
  const llvm::StringMap<int> &paramIndex;
  llvm::raw_ostream &os;
  bool backward;
  Mode mode;
  DenseMap<Value, std::string> names;
  /// Further variables sharing a value's storage ([tokens, features]
  /// views), released with it.
  DenseMap<Value, SmallVector<std::string, 1>> views;
  int counter = 0;
  int stashed = 0; ///< receives stashed (Forward) or read back (Recompute)
  /// A forward of a recompute chunk: keep its inputs, not its activations.
  bool stashing() {
    return mode == Mode::Forward && chunk.getRecompute();
  }

  std::string fresh(Value v) {
    std::string n = "v";
    n += std::to_string(counter++);
    names[v] = n;
    return n;
  }
  std::string name(Value v) { return names.lookup(v); }
  /// Declares a zero-filled tensor for result `v`.
  std::string declare(Value v) {
    std::string n = fresh(v);
    auto t = cast<RankedTensorType>(v.getType());
    os << "    rt::Tensor " << n << "(" << shapeList(t.getShape())
       << (t.getElementType().isInteger(32) ? ", rt::DType::I32" : "")
       << ");\n";
    return n;
  }
  /// A [tokens, features] view of an activation (rank >= 3).
  std::string act2(Value v) { return "act2(" + name(v) + ")"; }
  std::string param(StringRef sym) {
    return "P[" + std::to_string(paramIndex.lookup(sym)) + "]";
  }
  /// ZeRO-2/3, and ZeRO-0/1 parameters with asynchronous sums: the op after
  /// which each parameter's gradient is complete for this backward.
  llvm::StringMap<Operation *> lastAccumulate;
  /// The region's last send or receive, if any: sums that would start
  /// before it start right after it instead. On CUDA all communication
  /// shares one stream in issue order, so a gradient sum issued before the
  /// stage's own send would hold that send up, and with it every earlier
  /// pipeline stage.
  Operation *lastTransfer = nullptr;
  void emitStart(StringRef sym, const AsyncSum &sum, bool afterTransfer) {
    os << "    if (mb == " << sum.microBatch
       << (afterTransfer ? ") // complete this step; after the transfer"
                         : ") // its last contribution this step")
       << "\n      ";
    // A sliced parameter has no sums of its own (emitMainCpp).
    if (sum.slice) {
      os << "startSliceSum(" << paramIndex.lookup(sym) << ");\n";
    } else {
      os << "startGradSums(" << paramIndex.lookup(sym) << ", {";
      for (auto [i, group] : llvm::enumerate(sum.groups))
        os << (i ? ", " : "") << cppString(group);
      os << "});\n";
    }
  }
  /// ZeRO-3: the region's parameter gathers in runs that no send or
  /// receive interrupts (a gather's all-gather may start at an earlier
  /// gather of its run, never across a transfer), each gather's run and
  /// place in it, and how many of each run's gathers have been started
  /// (those before that place were started ahead and are waited for).
  SmallVector<SmallVector<tx::ParamGatherOp>> gatherRuns;
  DenseMap<Operation *, std::pair<size_t, size_t>> gatherPlace;
  SmallVector<size_t> gatherRunStarted;
  /// Kernel results that are a parameter's gradient buffer itself (the
  /// kernel accumulated into it): their texec.accumulate_grad adds nothing.
  DenseSet<Value> accumulatedInPlace;
  LogicalResult emitKernel(tx::KernelOp op);
  std::optional<LogicalResult> emitLookupNormKernel(KernelSite &s);
  std::optional<LogicalResult> emitDenseKernel(KernelSite &s);
  std::optional<LogicalResult> emitAttentionKernel(KernelSite &s);
  std::optional<LogicalResult> emitMoEKernel(KernelSite &s);
  std::optional<LogicalResult> emitLossKernel(KernelSite &s);
  LogicalResult emitOp(Operation &op);
};

LogicalResult RegionEmitter::emit(Block &block) {
  // Where each parameter's gradient is complete for this backward: under
  // ZeRO-2 and 3 its full gradient is reduce-scattered into its slice
  // there, then released; under ZeRO-0/1 its asynchronous sums start there
  // (or after the region's last transfer).
  if (backward && (program.getZeroStage() >= 2 || !asyncSums.empty()))
    for (Operation &op : block)
      if (auto g = dyn_cast<tx::AccumulateGradOp>(op))
        lastAccumulate[g.getSym()] = &op;
  if (backward)
    for (Operation &op : block)
      if (isa<tx::SendOp, tx::RecvOp>(op))
        lastTransfer = &op;
  {
    bool open = false;
    for (Operation &op : block) {
      if (isa<tx::SendOp, tx::RecvOp>(op))
        open = false;
      if (auto g = dyn_cast<tx::ParamGatherOp>(op)) {
        if (!open) {
          gatherRuns.emplace_back();
          gatherRunStarted.push_back(0);
          open = true;
        }
        gatherPlace[g] = {gatherRuns.size() - 1, gatherRuns.back().size()};
        gatherRuns.back().push_back(g);
      }
    }
  }
  for (auto [i, arg] : llvm::enumerate(block.getArguments()))
    os << "    rt::Tensor " << fresh(arg) << " = S" << chunk.getIndex()
       << "[mb][" << i << "];\n";
  // Every tensor is released after its last use in the region (a saved
  // activation lives on in S, a parameter in P), so a chunk holds only
  // what is still to be read: gathered ZeRO-3 parameters, temporaries and
  // the saved activations the backward has consumed go as soon as they
  // can.
  DenseMap<Value, Operation *> lastUse;
  for (Operation &op : block)
    for (Value v : op.getOperands())
      lastUse[v] = &op;
  auto release = [&](Value v) {
    auto it = names.find(v);
    if (it == names.end())
      return;
    os << "    " << it->second << " = rt::Tensor();\n";
    for (const std::string &view : views.lookup(v))
      os << "    " << view << " = rt::Tensor();\n";
    if (auto arg = dyn_cast<BlockArgument>(v))
      os << "    S" << chunk.getIndex() << "[mb][" << arg.getArgNumber()
         << "] = rt::Tensor();\n";
    names.erase(it);
  };
  for (BlockArgument arg : block.getArguments())
    if (arg.use_empty())
      release(arg);
  for (Operation &op : block) {
    if (failed(emitOp(op)))
      return failure();
    if (&op == lastTransfer)
      for (auto &[sym, sum] : sumsAfterTransfers)
        emitStart(sym, sum, true);
    llvm::SmallPtrSet<Value, 8> done;
    for (Value v : op.getOperands())
      if (lastUse.lookup(v) == &op && done.insert(v).second)
        release(v);
    for (Value r : op.getResults())
      if (r.use_empty())
        release(r);
  }
  if (backward && block.getNumArguments())
    os << "    S" << chunk.getIndex() << "[mb].clear();\n";
  return success();
}

LogicalResult RegionEmitter::emitOp(Operation &op) {
  int64_t numChunks = program.getPp() * program.getVpp();
  int64_t self = chunk.getGlobalIndex();
  // Messages are told apart by (micro-batch, receiving chunk, direction).
  auto tagExpr = [&](int64_t receiver) {
    return llvm::formatv("tagOf(mb, {0}, {1}, {2})", receiver, numChunks,
                         backward ? 1 : 0)
        .str();
  };
  if (auto k = dyn_cast<tx::KernelOp>(op))
    return emitKernel(k);
  if (auto in = dyn_cast<tx::InputOp>(op)) {
    os << "    rt::Tensor " << fresh(in.getResult()) << " = c.";
    auto it = cast<RankedTensorType>(in.getType());
    if (isa<FloatType>(it.getElementType())) {
      // Synthetic values of this shape per sample (ViT's images).
      os << "floats(mb, " << cppString(in.getName()) << ", {";
      llvm::interleaveComma(it.getShape().drop_front(), os);
      os << "});\n";
      return success();
    }
    if (in.getBag())
      os << "bagIds(mb, " << cppString(in.getName()) << ", " << *in.getRange()
         << ", " << *in.getBag() << ");\n";
    else if (in.getRange())
      os << "ids(mb, " << cppString(in.getName()) << ", " << *in.getRange()
         << ", "
         << (cast<RankedTensorType>(in.getType()).getRank() == 2 ? "true"
                                                                 : "false")
         << ");\n";
    else
      os << (in.getName() == "tokens" ? "tokens" : "labels") << "(mb);\n";
    return success();
  }
  if (auto p = dyn_cast<tx::ParamRefOp>(op)) {
    // ZeRO-1/2: the last optimizer step updated the rank's chunk; the
    // parameter's all-gather (started a few parameters ahead) is waited
    // for at the first use (awaitParam).
    if (program.getZeroStage() == 1 || program.getZeroStage() == 2)
      os << "    awaitParam(" << paramIndex.lookup(p.getSym()) << ");\n";
    os << "    rt::Tensor " << fresh(p.getResult()) << " = "
       << param(p.getSym()) << ".value;\n";
    return success();
  }
  if (auto p = dyn_cast<tx::ParamGatherOp>(op)) {
    auto [run, at] = gatherPlace.lookup(p);
    ArrayRef<tx::ParamGatherOp> gathers = gatherRuns[run];
    size_t &started = gatherRunStarted[run];
    if (at < started) {
      // Started at an earlier gather of its run: wait for it here.
      os << "    " << name(p.getResult()) << "_gather.wait();\n";
    } else {
      std::string n = declare(p.getResult());
      os << "    rt::zero3Gather(" << n << ", " << param(p.getSym())
         << ".value, " << groupExpr(p.getGroup()) << ");\n";
      started = at + 1;
    }
    // The run's next gathers start now, until kParamGathersAhead
    // matrices' are running ahead of this one; a send or receive ends the
    // run: moving a collective past a point-to-point transfer could
    // deadlock two pipeline stages.
    auto isMatrix = [](tx::ParamGatherOp g) {
      return cast<RankedTensorType>(g.getResult().getType()).getRank() >= 2;
    };
    int ahead = 0;
    for (size_t j = at + 1; j < started; ++j)
      ahead += isMatrix(gathers[j]);
    while (ahead < kParamGathersAhead && started < gathers.size()) {
      tx::ParamGatherOp q = gathers[started++];
      std::string n = declare(q.getResult());
      os << "    rt::Pending " << n << "_gather = rt::zero3GatherAsync(" << n
         << ", " << param(q.getSym()) << ".value, "
         << groupExpr(q.getGroup())
         << "); // ahead, while this parameter is used\n";
      ahead += isMatrix(q);
    }
    return success();
  }
  if (auto g = dyn_cast<tx::AccumulateGradOp>(op)) {
    // The kernel wrote into the gradient already (emitKernel).
    const bool done = accumulatedInPlace.contains(g.getGrad());
    if (program.getZeroStage() < 2) {
      if (!done)
        os << "    rt::axpy(" << param(g.getSym()) << ".grad, "
           << name(g.getGrad()) << ");\n";
      auto sum = asyncSums.find(g.getSym());
      if (sum != asyncSums.end() && lastAccumulate.lookup(g.getSym()) == &op) {
        if (lastTransfer && op.isBeforeInBlock(lastTransfer))
          sumsAfterTransfers.push_back({g.getSym().str(), sum->second});
        else
          emitStart(g.getSym(), sum->second, false);
      }
      return success();
    }
    int idx = paramIndex.lookup(g.getSym());
    if (!done)
      os << "    rt::axpy(fullGrad(" << idx << "), " << name(g.getGrad())
         << ");\n";
    if (lastAccumulate.lookup(g.getSym()) == &op)
      os << "    shardGrad(" << idx << ");\n";
    return success();
  }
  if (auto l = dyn_cast<tx::LossOp>(op)) {
    if (mode == Mode::Recompute)
      return success(); // counted by the forward
    os << "    rt::axpy(c.lossSum, " << name(l.getLoss());
    if (l.getScale())
      os << ", " << llvm::formatv("{0:e}", l.getScale()->convertToDouble())
         << "f";
    os << ");\n";
    return success();
  }
  if (auto ar = dyn_cast<tx::AllReduceOp>(op)) {
    std::string n = fresh(ar.getResult());
    // Reduce in place when nothing else reads the input.
    if (ar.getInput().hasOneUse())
      os << "    rt::Tensor " << n << " = " << name(ar.getInput()) << ";\n";
    else
      os << "    rt::Tensor " << n << " = " << name(ar.getInput())
         << ".clone();\n";
    os << "    rt::allReduceSum(" << n << ", " << groupExpr(ar.getGroup())
       << ");\n";
    return success();
  }
  if (auto ag = dyn_cast<tx::AllGatherOp>(op)) {
    std::string n = declare(ag.getResult());
    os << "    rt::allGather(" << n << ", " << name(ag.getInput()) << ", "
       << ag.getDim() << ", " << groupExpr(ag.getGroup()) << ");\n";
    return success();
  }
  if (auto rs = dyn_cast<tx::ReduceScatterOp>(op)) {
    std::string n = declare(rs.getResult());
    os << "    rt::reduceScatterSum(" << n << ", " << name(rs.getInput())
       << ", " << rs.getDim() << ", " << groupExpr(rs.getGroup()) << ");\n";
    return success();
  }
  if (auto a2a = dyn_cast<tx::AllToAllOp>(op)) {
    std::string n = declare(a2a.getResult());
    os << "    rt::allToAll(" << n << ", " << name(a2a.getInput()) << ", "
       << a2a.getDim() << ", " << a2a.getDim() << ", "
       << groupExpr(a2a.getGroup()) << ");\n";
    return success();
  }
  if (auto s = dyn_cast<tx::SendOp>(op)) {
    if (mode == Mode::Recompute)
      return success(); // sent by the forward
    int64_t peer = s.getPeer();
    os << "    rt::sendAsync(" << name(s.getValue()) << ", "
       << peer % program.getPp() << ", " << tagExpr(peer) << ", "
       << groupExpr("pp") << ");\n";
    return success();
  }
  if (auto r = dyn_cast<tx::RecvOp>(op)) {
    if (mode == Mode::Recompute) {
      // What the forward received, not received again.
      os << "    rt::Tensor " << fresh(r.getResult()) << " = X"
         << chunk.getIndex() << "[mb][" << stashed++ << "];\n";
      return success();
    }
    std::string n = declare(r.getResult());
    os << "    rt::recv(" << n << ", " << r.getPeer() % program.getPp() << ", "
       << tagExpr(self) << ", " << groupExpr("pp") << ");\n";
    if (stashing()) {
      // A copy: later ops of the forward may update the received tensor
      // in place.
      os << "    X" << chunk.getIndex() << "[mb].push_back(" << n
         << ".clone());\n";
      ++stashed;
    }
    return success();
  }
  if (auto save = dyn_cast<tx::SaveOp>(op)) {
    if (stashing()) {
      os << "    // Recomputed before the backward: nothing kept here.\n";
      return success();
    }
    os << "    S" << chunk.getIndex() << "[mb] = {";
    for (auto [i, v] : llvm::enumerate(save.getValues()))
      os << (i ? ", " : "") << name(v);
    os << "};\n";
    if (mode == Mode::Recompute)
      os << "    X" << chunk.getIndex() << "[mb].clear();\n";
    return success();
  }
  if (isa<tx::EndOp>(op))
    return success();
  return op.emitOpError("cannot be translated to C++ inside a chunk");
}

LogicalResult RegionEmitter::emitKernel(tx::KernelOp op) {
  const KernelKind k = op.getKind();
  auto in = [&](unsigned i) { return name(op.getInputs()[i]); };
  auto in2 = [&](unsigned i) { return act2(op.getInputs()[i]); };
  auto ids = [&](unsigned i) { return "ids1(" + in(i) + ")"; };
  DictionaryAttr config = op.getConfigAttr();
  auto cfgInt = [&](StringRef key) {
    return cast<IntegerAttr>(config.get(key)).getInt();
  };
  auto cfgFloat = [&](StringRef key) {
    return llvm::formatv("{0:e}", cast<FloatAttr>(config.get(key))
                                      .getValueAsDouble())
        .str();
  };
  // A float config printed so that it reads back to the same double.
  auto cfgExact = [&](StringRef key) {
    return exactDouble(cast<FloatAttr>(config.get(key)).getValueAsDouble());
  };
  auto axisCoord = [&](StringRef key) -> std::string {
    if (!config || !config.get(key))
      return "";
    return "c.coord(" + cppString(cast<StringAttr>(config.get(key)).getValue()) +
           ")";
  };
  // Results: zero-filled tensors, and [tokens, features] views for the
  // activations the runtime writes.
  SmallVector<std::string> out, out2;
  // The logits' gradient takes over their storage when nothing else reads
  // them (Megatron's cross-entropy writes it in place too): one [tokens,
  // vocab] buffer less at the peak. The kernels read each element before
  // writing it.
  Value logitsIn = k == KernelKind::CrossEntropyBwd ? op.getInputs()[0] : Value();
  const bool inPlace = logitsIn && logitsIn.hasOneUse() &&
                       !name(logitsIn).empty() &&
                       logitsIn.getType() == op.getResult(0).getType();
  // A linear's weight and bias gradients and an embedding's table
  // gradients are accumulated by the kernel (dW += dy^T x, dwte[token] +=
  // dy): when their one reader adds them to a parameter's gradient, the
  // kernel accumulates into that gradient itself, as Megatron's
  // gradient-accumulation fusion does, instead of into a zero-filled
  // temporary of the parameter's size.
  const bool linearBwd = k == KernelKind::LinearBwd || k == KernelKind::LinearBiasBwd;
  const bool embeddingBwd = k == KernelKind::EmbeddingBwd || k == KernelKind::EmbeddingPosBwd;
  auto gradTarget = [&](Value r) -> tx::AccumulateGradOp {
    if (!(embeddingBwd || (linearBwd && r != op.getResult(0))) ||
        !r.hasOneUse())
      return {};
    auto acc = dyn_cast<tx::AccumulateGradOp>(*r.getUsers().begin());
    return acc && acc->getBlock() == op->getBlock() ? acc
                                                    : tx::AccumulateGradOp();
  };
  for (Value r : op.getResults()) {
    std::string n;
    if (inPlace && r == op.getResult(0)) {
      n = fresh(r);
      os << "    rt::Tensor " << n << " = " << name(logitsIn)
         << "; // in place of the logits\n";
    } else if (tx::AccumulateGradOp acc = gradTarget(r)) {
      n = fresh(r);
      os << "    rt::Tensor " << n << " = "
         << (program.getZeroStage() < 2
                 ? param(acc.getSym()) + ".grad"
                 : "fullGrad(" +
                       std::to_string(paramIndex.lookup(acc.getSym())) + ")")
         << "; // accumulated in place\n";
      accumulatedInPlace.insert(r);
    } else {
      n = declare(r);
    }
    out.push_back(n);
    if (cast<RankedTensorType>(r.getType()).getRank() >= 3 &&
        k != KernelKind::Attention && k != KernelKind::AttentionSinks) {
      os << "    rt::Tensor " << n << "_2 = act2(" << n << ");\n";
      out2.push_back(n + "_2");
      views[r].push_back(n + "_2");
    } else {
      out2.push_back(n);
    }
  }
  if (k == KernelKind::Attention || k == KernelKind::AttentionSinks) {
    os << "    rt::Tensor " << out[0] << "_2 = act2(" << out[0] << ");\n";
    views[op.getResult(0)].push_back(out[0] + "_2");
  }
  // Kernels see this rank's positions: seq_len / cp of them, the first at
  // the cp coordinate times that (pos_axis / cp_axis configs).
  int64_t seq = program.getLocalSeqLen();
  std::string vocabCoord = axisCoord("vocab_axis");
  std::string posCoord = axisCoord("pos_axis");
  std::string posOffset =
      posCoord.empty() ? "0" : posCoord + " * " + std::to_string(seq);
  // A lookup without positions reads ids [b, n] whatever n is (an
  // embedding bag's ids per sample): the rows of one sample.
  auto idsPerSample = [&]() -> int64_t {
    auto t = cast<RankedTensorType>(op.getInputs()[0].getType());
    return t.getRank() == 2 ? t.getDimSize(1) : seq;
  };
  KernelSite site{op,         k,         config,    out,         out2, seq,
                  vocabCoord, posOffset, in,        in2,         ids,  cfgInt,
                  cfgFloat,   cfgExact,  axisCoord, idsPerSample};
  for (auto family :
       {&RegionEmitter::emitLookupNormKernel, &RegionEmitter::emitDenseKernel,
        &RegionEmitter::emitAttentionKernel, &RegionEmitter::emitMoEKernel,
        &RegionEmitter::emitLossKernel})
    if (std::optional<LogicalResult> done = (this->*family)(site))
      return *done;
  return op.emitOpError() << "kernel '" << op.getName()
                          << "' has no C++ translation";
}

/// Lookup and norm kernels: embeddings, layer and RMS norms; nullopt for
/// another family's kind.
std::optional<LogicalResult>
RegionEmitter::emitLookupNormKernel(KernelSite &s) {
  [[maybe_unused]] auto &[op, k, config, out, out2, seq, vocabCoord, posOffset,
                          in, in2, ids, cfgInt, cfgFloat, cfgExact, axisCoord,
                          idsPerSample] = s;
  if (k == KernelKind::Embedding || k == KernelKind::EmbeddingPos) {
    Value wte = op.getInputs()[1];
    std::string off =
        vocabCoord.empty()
            ? "0"
            : vocabCoord + " * " +
                  std::to_string(
                      cast<RankedTensorType>(wte.getType()).getDimSize(0));
    // With a vocabulary-parallel table the partial sums are all-reduced
    // afterwards: positions are added on the first shard only.
    std::string addPos = vocabCoord.empty() ? "true" : vocabCoord + " == 0";
    os << "    rt::embeddingForward(" << out2[0] << ", " << ids(0) << ", "
       << in(1) << ", " << (k == KernelKind::EmbeddingPos ? in(2) : "rt::Tensor()")
       << ", " << (k == KernelKind::EmbeddingPos ? seq : idsPerSample()) << ", "
       << posOffset << ", " << off << ", " << addPos << ");\n";
    return success();
  }
  if (k == KernelKind::EmbeddingBwd || k == KernelKind::EmbeddingPosBwd) {
    std::string off =
        vocabCoord.empty()
            ? "0"
            : vocabCoord + " * " +
                  std::to_string(cast<RankedTensorType>(
                                     op.getResult(0).getType())
                                     .getDimSize(0));
    bool pos = k == KernelKind::EmbeddingPosBwd;
    if (!pos)
      os << "    rt::Tensor " << out[0] << "_none;\n";
    os << "    rt::embeddingBackward(" << out[0] << ", "
       << (pos ? out[1] : out[0] + "_none") << ", " << in2(1) << ", "
       << ids(0) << ", " << (pos ? seq : idsPerSample()) << ", " << posOffset
       << ", " << off << ", " << (pos ? "true" : "false") << ");\n";
    return success();
  }
  if (k == KernelKind::LayerNorm) {
    os << "    rt::layerNormForward(" << out2[0] << ", " << out[1] << ", "
       << out[2] << ", " << in2(0) << ", " << in(1) << ", " << in(2) << ", "
       << cfgFloat("eps") << "f"
       << (config.get("gamma_shift") ? ", " + cfgFloat("gamma_shift") + "f"
                                     : "")
       << ");\n";
    return success();
  }
  if (k == KernelKind::LayerNormBwd) {
    os << "    rt::layerNormBackward(" << out2[0] << ", " << out[1] << ", "
       << out[2] << ", " << in2(0) << ", " << in2(1) << ", " << in(2) << ", "
       << in(3) << ", " << in(4)
       << (config && config.get("gamma_shift")
               ? ", " + cfgFloat("gamma_shift") + "f"
               : "")
       << ");\n";
    return success();
  }
  if (k == KernelKind::RmsNorm) {
    os << "    rt::rmsNormForward(" << out2[0] << ", " << out[1] << ", "
       << in2(0) << ", " << in(1) << ", " << cfgFloat("eps") << "f);\n";
    return success();
  }
  if (k == KernelKind::RmsNormBwd) {
    os << "    rt::rmsNormBackward(" << out2[0] << ", " << out[1] << ", "
       << in2(0) << ", " << in2(1) << ", " << in(2) << ", " << in(3)
       << ");\n";
    return success();
  }
  return std::nullopt;
}

/// Dense kernels: linear, SwiGLU, dropout, patches, token and sequence views,
/// add and mul; nullopt for another family's kind.
std::optional<LogicalResult> RegionEmitter::emitDenseKernel(KernelSite &s) {
  [[maybe_unused]] auto &[op, k, config, out, out2, seq, vocabCoord, posOffset,
                          in, in2, ids, cfgInt, cfgFloat, cfgExact, axisCoord,
                          idsPerSample] = s;
  if (k == KernelKind::Linear || k == KernelKind::LinearBias) {
    std::string bias = "rt::Tensor()";
    if (k == KernelKind::LinearBias) {
      std::string coord = axisCoord("bias_axis");
      // A row-parallel bias is added on one rank before the reduction.
      bias = coord.empty() ? in(2)
                           : "(" + coord + " == 0 ? " + in(2) +
                                 " : rt::Tensor())";
    }
    os << "    rt::linearForward(" << out2[0] << ", " << in2(0) << ", "
       << in(1) << ", " << bias << ");\n";
    return success();
  }
  if (k == KernelKind::LinearBwd || k == KernelKind::LinearBiasBwd) {
    std::string db = "rt::Tensor()";
    if (k == KernelKind::LinearBiasBwd)
      db = out[2];
    else
      os << "    rt::Tensor " << out[0] << "_nobias;\n";
    os << "    rt::linearBackward(" << out2[0] << ", " << out[1] << ", "
       << (k == KernelKind::LinearBiasBwd ? out[2] : out[0] + "_nobias") << ", "
       << in2(0) << ", " << in2(1) << ", " << in(2) << ");\n";
    return success();
  }
  // tgraph's gelu is the erf form unless `approximate` (tanh form).
  std::string geluForm =
      config && config.get("approximate") ? ", true" : ", false";
  // Pointwise activations: forward and backward kinds, runtime name.
  struct Act {
    KernelKind fwd, bwd;
    StringRef fn;
  };
  for (auto [fwd, bwd, fn] :
       {Act{KernelKind::Gelu, KernelKind::GeluBwd, "gelu"},
        Act{KernelKind::Silu, KernelKind::SiluBwd, "silu"},
        Act{KernelKind::Relu, KernelKind::ReluBwd, "relu"},
        Act{KernelKind::SquaredRelu, KernelKind::SquaredReluBwd,
            "squaredRelu"},
        Act{KernelKind::Tanh, KernelKind::TanhBwd, "tanh"}}) {
    std::string extra = fwd == KernelKind::Gelu ? geluForm : "";
    if (k == fwd) {
      os << "    rt::" << fn << "Forward(" << out2[0] << ", " << in2(0)
         << extra << ");\n";
      return success();
    }
    if (k == bwd) {
      os << "    rt::" << fn << "Backward(" << out2[0] << ", " << in2(0)
         << ", " << in2(1) << extra << ");\n";
      return success();
    }
  }
  if (k == KernelKind::Swiglu) {
    os << "    rt::swigluForward(" << out2[0] << ", " << in2(0) << ", "
       << in2(1) << ");\n";
    return success();
  }
  if (k == KernelKind::SwigluBwd) {
    os << "    rt::swigluBackward(" << out2[0] << ", " << out2[1] << ", "
       << in2(0) << ", " << in2(1) << ", " << in2(2) << ");\n";
    return success();
  }
  if (k == KernelKind::Dropout || k == KernelKind::DropoutBwd) {
    // The same mask forwards and backwards: drawn again from the global
    // coordinates of the local block (context-parallel chunk, sequence
    // shard, feature shard).
    auto t = cast<RankedTensorType>(op.getInputs()[0].getType());
    int64_t localSeq = t.getDimSize(1), localF = t.getDimSize(2);
    std::string firstPos = posOffset;
    std::string seqCoord = axisCoord("seq_axis");
    if (!seqCoord.empty())
      firstPos += " + " + seqCoord + " * " + std::to_string(localSeq);
    std::string featCoord = axisCoord("feature_axis");
    std::string firstFeature =
        featCoord.empty() ? "0"
                          : featCoord + " * " + std::to_string(localF);
    os << "    rt::dropoutApply(" << out[0] << ", " << in(0) << ", "
       << t.getDimSize(0) << ", " << localSeq << ", c.dropout(mb, "
       << cfgFloat("rate") << "f, " << cfgInt("site") << ", "
       << cfgInt("seq_len") << ", " << firstPos << ", "
       << cfgInt("features") << ", " << firstFeature << "));\n";
    return success();
  }
  if (k == KernelKind::PatchEmbed || k == KernelKind::PatchEmbedBwd) {
    bool fwd = k == KernelKind::PatchEmbed;
    auto img = cast<RankedTensorType>(op.getInputs()[fwd ? 0 : 1].getType());
    std::string dims = std::to_string(img.getDimSize(1)) + ", " +
                       std::to_string(img.getDimSize(2)) + ", " +
                       std::to_string(cfgInt("patch"));
    if (fwd)
      os << "    rt::patchEmbedForward(" << out2[0] << ", " << in(0) << ", "
         << in(1) << ", " << in(2) << ", " << dims << ");\n";
    else
      os << "    rt::patchEmbedBackward(" << out[0] << ", " << out[1] << ", "
         << in2(0) << ", " << in(1) << ", " << dims << ");\n";
    return success();
  }
  if (k == KernelKind::SeqSlice) {
    auto xt = cast<RankedTensorType>(op.getInputs()[0].getType());
    auto yt = cast<RankedTensorType>(op.getResults()[0].getType());
    std::string count = std::to_string(yt.getDimSize(1));
    os << "    rt::sliceRows(" << out2[0] << ", " << in2(0) << ", "
       << xt.getDimSize(1) << ", " << axisCoord("seq_axis") << " * " << count
       << ", " << count << ");\n";
    return success();
  }
  if (k == KernelKind::PrependToken || k == KernelKind::PrependTokenBwd) {
    bool fwd = k == KernelKind::PrependToken;
    auto x = cast<RankedTensorType>(
        (fwd ? op.getInputs()[0] : op.getResults()[0]).getType());
    std::string tokens = std::to_string(x.getDimSize(1));
    if (fwd)
      os << "    rt::prependTokenForward(" << out2[0] << ", " << in2(0)
         << ", " << in(1) << ", " << tokens << ");\n";
    else
      os << "    rt::prependTokenBackward(" << out2[0] << ", " << out[1]
         << ", " << in2(0) << ", " << tokens << ");\n";
    return success();
  }
  if (k == KernelKind::PositionAdd || k == KernelKind::PositionAddBwd) {
    std::string localSeq = std::to_string(
        cast<RankedTensorType>(op.getInputs()[0].getType()).getDimSize(1));
    if (k == KernelKind::PositionAdd)
      os << "    rt::positionAddForward(" << out2[0] << ", " << in2(0) << ", "
         << in(1) << ", " << localSeq << ", " << posOffset << ");\n";
    else
      os << "    rt::positionAddBackward(" << out[0] << ", " << in2(0) << ", "
         << localSeq << ", " << posOffset << ");\n";
    return success();
  }
  if (k == KernelKind::SelectToken || k == KernelKind::SelectTokenBwd) {
    // The index among this rank's positions: the global one less the
    // block's first position (cp chunk, then sequence shard); out of
    // range on the ranks that do not hold it.
    bool fwd = k == KernelKind::SelectToken;
    auto xt = cast<RankedTensorType>(
        (fwd ? op.getInputs()[0] : op.getResults()[0]).getType());
    int64_t localSeq = xt.getDimSize(1);
    std::string first = posOffset;
    if (std::string seqCoord = axisCoord("seq_axis"); !seqCoord.empty())
      first += " + " + seqCoord + " * " + std::to_string(localSeq);
    std::string index = std::to_string(cfgInt("index")) + " - (" + first + ")";
    if (fwd)
      os << "    rt::selectTokenForward(" << out[0] << ", " << in2(0) << ", "
         << localSeq << ", " << index << ");\n";
    else
      os << "    rt::selectTokenBackward(" << out2[0] << ", " << in(0)
         << ", " << localSeq << ", " << index << ");\n";
    return success();
  }
  if (k == KernelKind::Add || k == KernelKind::Mul) {
    os << "    rt::" << op.getName() << "(" << out[0] << ", " << in(0) << ", "
       << in(1) << ");\n";
    return success();
  }
  return std::nullopt;
}

/// Attention kernels: rotary embedding, latent keys, attention; nullopt for
/// another family's kind.
std::optional<LogicalResult> RegionEmitter::emitAttentionKernel(KernelSite &s) {
  [[maybe_unused]] auto &[op, k, config, out, out2, seq, vocabCoord, posOffset,
                          in, in2, ids, cfgInt, cfgFloat, cfgExact, axisCoord,
                          idsPerSample] = s;
  if (k == KernelKind::Rope || k == KernelKind::RopeBwd) {
    // A scaled RoPE names its rt::RopeScaling, built field by field with
    // every double printed exactly.
    std::string scaling;
    if (auto rs = config ? dyn_cast_or_null<DictionaryAttr>(
                               config.get("scaling"))
                         : DictionaryAttr()) {
      scaling = out2[0] + "_rs";
      RopeScaling v;
      if (std::string why = parseRopeScaling(rs, v); !why.empty())
        return op.emitOpError() << "config 'scaling' " << why;
      const auto &num = exactDouble;
      using Kind = RopeScaling::Kind;
      os << "    rt::RopeScaling " << scaling << ";\n    " << scaling
         << ".kind = rt::RopeScaling::Kind::"
         << (v.kind == Kind::Linear   ? "Linear"
             : v.kind == Kind::Llama3 ? "Llama3"
                                      : "Yarn")
         << ";\n";
      // The fields of v.kind, in the dictionary's order.
      const llvm::StringMap<std::pair<const char *, std::string>> fields = {
          {"factor", {"factor", num(v.factor)}},
          {"low_freq_factor", {"lowFreqFactor", num(v.lowFreqFactor)}},
          {"high_freq_factor", {"highFreqFactor", num(v.highFreqFactor)}},
          {"original_max_positions",
           {"originalMaxPositions", std::to_string(v.originalMaxPositions)}},
          {"beta_fast", {"betaFast", num(v.betaFast)}},
          {"beta_slow", {"betaSlow", num(v.betaSlow)}},
          {"truncate", {"truncate", v.truncate ? "true" : "false"}},
          {"attention_factor", {"attentionFactor", num(v.attentionFactor)}}};
      for (StringRef key : ::trident::detail::ropeScalingKeys(v.kind)) {
        const auto &[field, value] = fields.at(key);
        os << "    " << scaling << "." << field << " = " << value << ";\n";
      }
    }
    os << "    rt::ropeApply(" << out2[0] << ", " << in2(0) << ", " << seq
       << ", " << cfgInt("heads") << ", " << cfgInt("head_dim") << ", "
       << cfgInt("rotary_dim") << ", " << cfgFloat("theta") << ", "
       << (k == KernelKind::RopeBwd ? "true" : "false") << ", " << posOffset;
    // The trailing arguments, as far as they differ from the defaults.
    const bool interleaved = config.get("interleaved") != nullptr;
    const std::string rotOffset =
        config.get("rotary_offset")
            ? std::to_string(cfgInt("rotary_offset"))
            : std::string("0");
    if (interleaved || rotOffset != "0")
      os << ", " << (scaling.empty() ? "{}" : scaling) << ", " << rotOffset
         << (interleaved ? ", true" : "");
    else if (!scaling.empty())
      os << ", " << scaling;
    os << ");\n";
    return success();
  }
  if (k == KernelKind::LatentKey || k == KernelKind::LatentKeyBwd) {
    std::string dims = std::to_string(cfgInt("heads")) + ", " +
                       std::to_string(cfgInt("nope_dim")) + ", " +
                       std::to_string(cfgInt("rope_dim"));
    if (k == KernelKind::LatentKey)
      os << "    rt::latentKeyForward(" << out2[0] << ", " << in2(0) << ", "
         << in2(1) << ", " << dims << ");\n";
    else
      os << "    rt::latentKeyBackward(" << out2[0] << ", " << out2[1] << ", "
         << in2(0) << ", " << dims << ");\n";
    return success();
  }
  if (k == KernelKind::Attention || k == KernelKind::AttentionBwd ||
      k == KernelKind::AttentionSinks || k == KernelKind::AttentionSinksBwd) {
    const bool fwd =
        k == KernelKind::Attention || k == KernelKind::AttentionSinks;
    const bool sinks =
        k == KernelKind::AttentionSinks || k == KernelKind::AttentionSinksBwd;
    auto qt = cast<RankedTensorType>(op.getInputs()[fwd ? 0 : 1].getType());
    auto kt = cast<RankedTensorType>(op.getInputs()[fwd ? 1 : 2].getType());
    std::string cpCoord = axisCoord("cp_axis");
    os << "    rt::AttentionDims " << out[0] << "_dims{" << qt.getDimSize(0)
       << ", " << qt.getDimSize(1) << ", " << cfgInt("heads") << ", "
       << cfgInt("kv_heads") << ", " << cfgInt("head_dim");
    // Context parallel: the local queries against the gathered keys.
    std::string qOffset =
        cpCoord.empty() ? "0"
                        : cpCoord + " * " + std::to_string(qt.getDimSize(1));
    if (!cpCoord.empty())
      os << ", " << kt.getDimSize(1) << ", " << qOffset;
    os << "};\n";
    if (config.get("window"))
      os << "    " << out[0] << "_dims.window = " << cfgInt("window")
         << ";\n";
    if (config.get("bidirectional"))
      os << "    " << out[0] << "_dims.causal = false;\n";
    if (config.get("v_head_dim"))
      os << "    " << out[0] << "_dims.vHeadDim = " << cfgInt("v_head_dim")
         << ";\n";
    if (config.get("scale"))
      os << "    " << out[0] << "_dims.scale = " << cfgExact("scale")
         << ";\n";
    if (config.get("dropout")) {
      // The mask of (sample, head, query, key), this rank's heads starting
      // at its head_axis coordinate.
      std::string headCoord = axisCoord("head_axis");
      std::string firstHead =
          headCoord.empty()
              ? "0"
              : headCoord + " * " + std::to_string(cfgInt("heads"));
      os << "    " << out[0] << "_dims.dropout = c.dropout(mb, "
         << cfgFloat("dropout") << "f, " << cfgInt("site") << ", "
         << kt.getDimSize(1) << ", " << qOffset << ", "
         << cfgInt("heads_total") << ", " << firstHead << ");\n";
    }
    if (fwd)
      os << "    rt::attentionForward(" << out[0] << "_2, " << out[1] << ", "
         << in2(0) << ", " << in2(1) << ", " << in2(2) << ", "
         << (sinks ? in(3) + ", " : std::string()) << out[0]
         << "_dims);\n";
    else
      os << "    rt::attentionBackward(" << out2[0] << ", " << out2[1] << ", "
         << out2[2] << ", " << (sinks ? out[3] + ", " : std::string())
         << in2(0) << ", " << in2(1) << ", " << in2(2) << ", " << in2(3)
         << ", " << in(4) << ", " << out[0] << "_dims);\n";
    return success();
  }
  return std::nullopt;
}

/// Mixture-of-experts kernels; nullopt for another family's kind.
std::optional<LogicalResult> RegionEmitter::emitMoEKernel(KernelSite &s) {
  [[maybe_unused]] auto &[op, k, config, out, out2, seq, vocabCoord, posOffset,
                          in, in2, ids, cfgInt, cfgFloat, cfgExact, axisCoord,
                          idsPerSample] = s;
  if (k == KernelKind::Moe || k == KernelKind::MoeBwd || k == KernelKind::MoeRouterBwd ||
      k == KernelKind::MoeBiased || k == KernelKind::MoeBiasedBwd ||
      k == KernelKind::MoeRouterBiasedBwd || k == KernelKind::MoeSelected ||
      k == KernelKind::MoeSelectedBwd || k == KernelKind::MoeRouterSelectedBwd) {
    StringRef act = cast<StringAttr>(config.get("activation")).getValue();
    std::string kind = act == "gelu"        ? "Gelu"
                       : act == "gelu_tanh" ? "GeluTanh"
                       : act == "relu"      ? "Relu"
                                            : "Silu";
    // Expert parallelism: this rank holds experts from its ep coordinate
    // times the local count on.
    std::string offset = "0";
    if (std::string epCoord = axisCoord("ep_axis"); !epCoord.empty()) {
      // w_in's operand: after x, router (and the router bias), after dy.
      unsigned wInAt = (k == KernelKind::Moe ? 2 : k == KernelKind::MoeBwd ? 3
                        : k == KernelKind::MoeBiased || k == KernelKind::MoeSelected ? 3
                                                                   : 4);
      Value wIn = op.getInputs()[wInAt];
      offset = epCoord + " * " +
               std::to_string(
                   cast<RankedTensorType>(wIn.getType()).getDimSize(0));
    }
    os << "    rt::MoEDims " << out[0] << "_moe{" << cfgInt("experts") << ", "
       << cfgInt("top_k") << ", "
       << (config.get("gated") ? "true" : "false") << ", rt::Activation::"
       << kind << ", " << offset << "};\n";
    if (config.get("unnormalized"))
      os << "    " << out[0] << "_moe.renormalize = false;\n";
    // The router backward's first row: the rank's own token rows of the
    // gathered x (row_axis).
    auto routerRowOffset = [&]() -> std::string {
      auto dxt = cast<RankedTensorType>(op.getResult(0).getType());
      int64_t rows = dxt.getNumElements() / dxt.getShape().back();
      std::string rowCoord = axisCoord("row_axis");
      return rowCoord.empty() ? "0" : rowCoord + " * " + std::to_string(rows);
    };
    if (config.get("swiglu_limit"))
      os << "    " << out[0] << "_moe.swigluLimit = "
         << cfgFloat("swiglu_limit") << "f;\n";
    if (std::string c0 = axisCoord("out_bias_axis"); !c0.empty())
      os << "    " << out[0] << "_moe.outBiasHere = " << c0 << " == 0;\n";
    // DeepSeek-V3's router.
    if (config.get("sigmoid"))
      os << "    " << out[0] << "_moe.sigmoidScores = true;\n";
    if (config.get("groups"))
      os << "    " << out[0] << "_moe.groups = " << cfgInt("groups") << ";\n    "
         << out[0] << "_moe.topkGroups = " << cfgInt("topk_groups") << ";\n";
    if (config.get("routed_scale"))
      os << "    " << out[0] << "_moe.routedScale = "
         << floatLiteral(cast<FloatAttr>(config.get("routed_scale"))
                                 .getValueAsDouble())
         << ";\n";
    if (k == KernelKind::MoeSelected) {
      // x, router, select, w_in, w_out -> y.
      os << "    rt::MoEBiases " << out[0] << "_b;\n    " << out[0]
         << "_b.select = " << in(2) << ";\n";
      os << "    rt::moeForward(" << out2[0] << ", " << in2(0) << ", "
         << in(1) << ", " << in(3) << ", " << in(4) << ", " << out[0]
         << "_moe, " << out[0] << "_b);\n";
    } else if (k == KernelKind::MoeSelectedBwd) {
      // dy, x, router, select, w_in, w_out -> dx, dw_in, dw_out, dgate.
      os << "    rt::MoEBiases " << out[0] << "_b, " << out[0] << "_db;\n    "
         << out[0] << "_b.select = " << in(3) << ";\n";
      os << "    rt::moeBackward(" << out2[0] << ", " << out[1] << ", "
         << out[2] << ", " << out2[3] << ", " << in2(0) << ", " << in2(1)
         << ", " << in(2) << ", " << in(4) << ", " << in(5) << ", " << out[0]
         << "_moe, " << out[0] << "_b, " << out[0] << "_db);\n";
    } else if (k == KernelKind::MoeRouterSelectedBwd) {
      // dgate, x, router, select -> dx, drouter, load (the tokens each
      // expert got from these rows).
      os << "    rt::MoEBiases " << out[0] << "_b;\n    " << out[0]
         << "_b.select = " << in(3) << ";\n    rt::Tensor " << out[0]
         << "_nobias;\n";
      os << "    rt::moeRouterBackward(" << out2[0] << ", " << out[1] << ", "
         << out[0] << "_nobias, " << in2(0) << ", " << in2(1) << ", "
         << in(2) << ", " << out[0] << "_b, " << out[0] << "_moe, "
         << routerRowOffset() << ", &" << out[2] << ");\n";
    } else if (k == KernelKind::MoeBiased) {
      os << "    rt::moeForward(" << out2[0] << ", " << in2(0) << ", "
         << in(1) << ", " << in(3) << ", " << in(5) << ", " << out[0]
         << "_moe, rt::MoEBiases{" << in(2) << ", " << in(4) << ", " << in(6)
         << "});\n";
    } else if (k == KernelKind::MoeBiasedBwd) {
      // dy, x, router, router_bias, w_in, b_in, w_out, b_out ->
      // dx, dw_in, db_in, dw_out, db_out, dgate.
      os << "    rt::MoEBiases " << out[0] << "_db{rt::Tensor(), " << out[2]
         << ", " << out[4] << "};\n";
      os << "    rt::moeBackward(" << out2[0] << ", " << out[1] << ", "
         << out[3] << ", " << out2[5] << ", " << in2(0) << ", " << in2(1)
         << ", " << in(2) << ", " << in(4) << ", " << in(6) << ", " << out[0]
         << "_moe, rt::MoEBiases{" << in(3) << ", " << in(5) << ", " << in(7)
         << "}, " << out[0] << "_db);\n";
    } else if (k == KernelKind::MoeRouterBiasedBwd) {
      os << "    rt::moeRouterBackward(" << out2[0] << ", " << out[1] << ", "
         << out[2] << ", " << in2(0) << ", " << in2(1) << ", " << in(2)
         << ", " << in(3) << ", " << out[0] << "_moe, " << routerRowOffset()
         << ");\n";
    } else if (k == KernelKind::Moe) {
      os << "    rt::moeForward(" << out2[0] << ", " << in2(0) << ", "
         << in(1) << ", " << in(2) << ", " << in(3) << ", " << out[0]
         << "_moe);\n";
    } else if (k == KernelKind::MoeBwd) {
      os << "    rt::moeBackward(" << out2[0] << ", " << out[1] << ", "
         << out[2] << ", " << out2[3] << ", " << in2(0) << ", " << in2(1)
         << ", " << in(2) << ", " << in(3) << ", " << in(4) << ", " << out[0]
         << "_moe);\n";
    } else {
      os << "    rt::moeRouterBackward(" << out2[0] << ", " << out[1] << ", "
         << in2(0) << ", " << in2(1) << ", " << in(2) << ", " << out[0]
         << "_moe, " << routerRowOffset() << ");\n";
    }
    return success();
  }
  return std::nullopt;
}

/// Losses and recommendation kernels: cross-entropy, bag pooling, dot
/// interaction, binary cross-entropy; nullopt for another family's kind.
std::optional<LogicalResult> RegionEmitter::emitLossKernel(KernelSite &s) {
  [[maybe_unused]] auto &[op, k, config, out, out2, seq, vocabCoord, posOffset,
                          in, in2, ids, cfgInt, cfgFloat, cfgExact, axisCoord,
                          idsPerSample] = s;
  if (k == KernelKind::CrossEntropy || k == KernelKind::CrossEntropyBwd) {
    Value logits = op.getInputs()[0];
    int64_t localVocab =
        cast<RankedTensorType>(logits.getType()).getShape().back();
    std::string off = vocabCoord.empty()
                          ? ""
                          : vocabCoord + " * " + std::to_string(localVocab);
    // A vocabulary padded to a multiple of tp: its real size.
    std::string vocab =
        config && config.get("vocab") ? ", " + std::to_string(cfgInt("vocab"))
                                      : "";
    if (k == KernelKind::CrossEntropy) {
      if (off.empty())
        os << "    rt::crossEntropyForward(" << out[0] << ", " << out[1]
           << ", " << in2(0) << ", " << ids(1) << ");\n";
      else
        os << "    rt::vocabParallelCrossEntropyForward(" << out[0] << ", "
           << out[1] << ", " << in2(0) << ", " << ids(1) << ", " << off
           << ", " << groupExpr("tp") << vocab << ");\n";
    } else {
      if (off.empty())
        os << "    rt::crossEntropyBackward(" << out2[0] << ", " << in2(0)
           << ", " << ids(1) << ", " << in(2) << ", "
           << cfgFloat("grad_scale") << "f);\n";
      else
        os << "    rt::vocabParallelCrossEntropyBackward(" << out2[0] << ", "
           << in2(0) << ", " << ids(1) << ", " << in(2) << ", " << off
           << ", " << cfgFloat("grad_scale") << "f" << vocab << ");\n";
    }
    return success();
  }
  if (k == KernelKind::BagPool || k == KernelKind::BagPoolBwd) {
    const bool fwd = k == KernelKind::BagPool;
    Value rows = fwd ? op.getInputs()[0] : op.getResult(0);
    int64_t bag = cast<RankedTensorType>(rows.getType()).getDimSize(1);
    const char *mean = config && config.get("mean") ? "true" : "false";
    if (fwd)
      os << "    rt::bagPoolForward(" << out[0] << ", " << in2(0) << ", "
         << bag << ", " << mean << ");\n";
    else
      os << "    rt::bagPoolBackward(" << out2[0] << ", " << in(0) << ", "
         << bag << ", " << mean << ");\n";
    return success();
  }
  if (k == KernelKind::DotInteraction || k == KernelKind::DotInteractionBwd) {
    const bool fwd = k == KernelKind::DotInteraction;
    auto list = [&](ArrayRef<std::string> names) {
      std::string s = "{";
      for (auto [i, n] : llvm::enumerate(names))
        s += (i ? ", " : "") + n;
      return s + "}";
    };
    SmallVector<std::string> feats;
    for (unsigned i = fwd ? 0 : 1; i < op.getInputs().size(); ++i)
      feats.push_back(in(i));
    if (fwd)
      os << "    rt::dotInteractionForward(" << out[0] << ", " << list(feats)
         << ");\n";
    else
      os << "    rt::dotInteractionBackward(" << list(out) << ", " << in(0)
         << ", " << list(feats) << ");\n";
    return success();
  }
  if (k == KernelKind::BinaryCrossEntropy)  {
    os << "    rt::binaryCrossEntropyForward(" << out[0] << ", " << in(0)
       << ", " << in(1) << ");\n";
    return success();
  }
  if (k == KernelKind::BinaryCrossEntropyBwd) {
    os << "    rt::binaryCrossEntropyBackward(" << out[0] << ", " << in(0)
       << ", " << in(1) << ", " << cfgFloat("grad_scale") << "f);\n";
    return success();
  }
  return std::nullopt;
}

/// The fixed part of every main.cpp (helpers the op translations call).
const char *kPrelude = R"cpp(
namespace {

/// [b, s, f] -> [b*s, f] (the runtime's [tokens, features]); other ranks
/// unchanged.
rt::Tensor act2(const rt::Tensor &t) {
  if (t.rank() < 3)
    return t;
  return t.reshape({t.numel() / t.dim(-1), t.dim(-1)});
}
/// Token ids [b, s] -> [b*s].
rt::Tensor ids1(const rt::Tensor &t) { return t.reshape({t.numel()}); }
/// Tag of a pipeline message: (micro-batch, receiving chunk, direction).
int tagOf(int mb, int chunk, int chunks, int backward) {
  return (mb * chunks + chunk) * 2 + backward;
}

/// One parameter shard: value (a ZeRO-3 slice under ZeRO-3), gradient,
/// optimizer state, and the group of ranks holding the same shard (its
/// ZeRO slices and gradient sums).
struct Param {
  std::string name;
  std::vector<int64_t> global, local;
  int splitDim = -1;
  std::string splitAxis, init, group;
  rt::Tensor value, grad, m, v;
  /// ZeRO-2/3: this rank's slice of the reduced gradient.
  rt::Tensor gradSlice;
  /// A second split (experts over ep, then their columns over tp).
  int split2Dim = -1;
  std::string split2Axis;
  /// The last split's dimension holds its piece of `blocks` blocks.
  int64_t blocks = 1;
  /// > 0: a selection bias updated by the expert load its gradient buffer
  /// counts (rt::loadBalanceUpdate at this rate), not by the optimizer.
  float loadBalance = 0.0f;
  /// ZeRO-1: this step's reduce-scatter into gradSlice was started in the
  /// backward (startSliceSum); the optimizer updates from the slice.
  bool sliceStarted = false;
  /// ZeRO-1/2: the [chunk * dp] storage whose head is `value`; after an
  /// optimizer step only this rank's chunk is current until the all-gather
  /// into it (gatherDue: not started yet; gather: running) is waited for.
  rt::Tensor padded;
  rt::Pending gather;
  bool gatherDue = false, gatherRunning = false;
  rt::ShardBlocks shardBlocks() const {
    return {blocks > 1 ? (split2Dim >= 0 ? split2Dim : splitDim) : -1,
            blocks};
  }
};

/// What every stage shares: the grid, the groups, the step's loss sum and
/// this step's data.
struct Context {
  rt::Grid &grid;
  std::map<std::string, rt::Group> groups;
  rt::Tensor lossSum{std::vector<int64_t>{1}};
  int64_t step = 0;

  const rt::Group &group(const std::string &name) const {
    return groups.at(name);
  }
  int coord(const std::string &axis) const {
    if (axis == "dp")
      return grid.coord(rt::Axis::DP);
    if (axis == "tp")
      return grid.coord(rt::Axis::TP);
    if (axis == "cp")
      return grid.coord(rt::Axis::CP);
    if (axis == "ep")
      return grid.coord(rt::Axis::EP);
    if (axis == "edp")
      return grid.coord(rt::Axis::EDP);
    return grid.coord(rt::Axis::PP);
  }
  /// Samples of micro-batch `mb` of this data-parallel rank (global sample
  /// numbering, so every plan reads the same sequences), at this
  /// context-parallel rank's positions.
  int64_t firstSample(int mb) const {
    return int64_t(coord("dp")) * kMicroBatches * kMicroBatchSize +
           int64_t(mb) * kMicroBatchSize;
  }
  void batch(int mb, rt::Tensor &tok, rt::Tensor &lab) const {
    tok = rt::Tensor({kMicroBatchSize * kLocalSeqLen}, rt::DType::I32);
    lab = rt::Tensor({kMicroBatchSize * kLocalSeqLen}, rt::DType::I32);
    rt::syntheticBatch(tok, lab, kDataSeed, step, firstSample(mb),
                       kMicroBatchSize,
                       int64_t(coord("cp")) * kLocalSeqLen, kLocalSeqLen,
                       kVocab);
  }
  /// Dropout `site` of micro-batch `mb`: the mask is drawn from the global
  /// (sample, position, feature) of every element (rt::DropoutSite).
  rt::DropoutSite dropout(int mb, float rate, int64_t site, int64_t seqLen,
                          int64_t firstPos, int64_t features,
                          int64_t firstFeature) const {
    rt::DropoutSite d;
    d.rate = rate;
    d.seed = kDataSeed;
    d.step = step;
    d.site = site;
    d.firstSample = firstSample(mb);
    d.seqLen = seqLen;
    d.firstPos = firstPos;
    d.features = features;
    d.firstFeature = firstFeature;
    return d;
  }
  /// Synthetic floats of a float input (`name`): `shape` per sample.
  rt::Tensor floats(int mb, const char *name,
                    std::vector<int64_t> shape) const {
    int64_t per = 1;
    for (int64_t d : shape)
      per *= d;
    shape.insert(shape.begin(), kMicroBatchSize);
    rt::Tensor t(shape);
    rt::syntheticFloats(t, kDataSeed, name, step, firstSample(mb),
                        kMicroBatchSize, per);
    return t;
  }
  /// Synthetic ids of another input (`name`, in [0, range)): one per
  /// position of this rank's chunk, or one per sample.
  rt::Tensor ids(int mb, const char *name, int64_t range,
                 bool perPosition) const {
    const int64_t per = perPosition ? kLocalSeqLen : 0;
    rt::Tensor t({kMicroBatchSize * (per ? per : 1)}, rt::DType::I32);
    rt::syntheticIds(t, kDataSeed, name, step, firstSample(mb),
                     kMicroBatchSize, int64_t(coord("cp")) * kLocalSeqLen,
                     per, range);
    return perPosition ? t.reshape({kMicroBatchSize, kLocalSeqLen})
                       : t.reshape({kMicroBatchSize});
  }
  /// Synthetic ids of an embedding bag (`name`, in [0, range)): `bag` per
  /// sample, the same on every cp rank.
  rt::Tensor bagIds(int mb, const char *name, int64_t range,
                    int64_t bag) const {
    rt::Tensor t({kMicroBatchSize * bag}, rt::DType::I32);
    rt::syntheticIds(t, kDataSeed, name, step, firstSample(mb),
                     kMicroBatchSize, 0, bag, range);
    return t.reshape({kMicroBatchSize, bag});
  }
  rt::Tensor tokens(int mb) const {
    rt::Tensor t, l;
    batch(mb, t, l);
    return t.reshape({kMicroBatchSize, kLocalSeqLen});
  }
  rt::Tensor labels(int mb) const {
    rt::Tensor t, l;
    batch(mb, t, l);
    return l.reshape({kMicroBatchSize, kLocalSeqLen});
  }
};

/// The code of one pipeline stage.
class Stage {
public:
  explicit Stage(Context &c) : c(c) {}
  virtual ~Stage() = default;
  virtual void step() = 0;

  /// Allocates and initialises every parameter (sharding-independent
  /// values: rt::initParam hashes the global position).
  void initParams() {
    for (Param &p : P) {
      const rt::Group &dp = c.group(p.group);
      std::vector<int64_t> offset = shardOffset(p);
      int64_t numel = 1;
      for (int64_t d : p.local)
        numel *= d;
      rt::ZeroRange range = rt::zeroRange(numel, dp.size(), dp.rank());
      // ZeRO-1/2: the parameter is the head of a [chunk * dp] buffer, which
      // the optimizer step's all-gather fills in place.
      rt::Tensor full;
      if (kZeroStage == 1 || kZeroStage == 2) {
        p.padded = rt::Tensor({range.chunk * dp.size()});
        full = p.padded.view(0, p.local);
      } else {
        full = rt::Tensor(p.local);
      }
      // Vocabulary padding rows (past the global shape) stay zero.
      std::vector<int64_t> held = heldShape(p, offset);
      rt::Tensor real = full.view(0, held);
      if (real.numel() > 0) { // none: padding only (a table smaller than tp)
        if (p.init == "uniform")
          rt::initParam(real, p.name, p.global, offset, held, kInitSeed,
                        kInitScale, p.shardBlocks());
        else
          rt::fillConstant(real, p.init == "ones" ? 1.0f : 0.0f);
      }
      // ZeRO-2/3 keep a slice of the gradient; the full one exists only
      // inside a backward (fullGrad / shardGrad).
      if (kZeroStage >= 2)
        p.gradSlice = rt::Tensor({range.chunk});
      else
        p.grad = rt::Tensor(p.local);
      if (kZeroStage == 3) {
        p.value = rt::Tensor({range.chunk});
        rt::zero3TakeSlice(p.value, full, dp);
      } else {
        p.value = full;
      }
      if (kOptimizerAdam) {
        int64_t states = kZeroStage == 0 ? numel : range.chunk;
        p.m = rt::Tensor({states});
        p.v = rt::Tensor({states});
      }
    }
  }

  /// Adds every parameter shard (whole, ZeRO-3 slices gathered) to `dump`.
  void dumpParams(rt::ParamDump &dump) {
    awaitAllParams();
    for (Param &p : P) {
      std::vector<int64_t> offset = shardOffset(p);
      rt::Tensor full = p.value;
      if (kZeroStage == 3) {
        full = rt::Tensor(p.local);
        rt::zero3Gather(full, p.value, c.group(p.group));
      }
      std::vector<int64_t> held = heldShape(p, offset);
      if (held.empty() || held[0] > 0) // a shard of padding only adds nothing
        dump.add(p.name, p.global, offset, full.view(0, held),
                 p.shardBlocks());
    }
  }

  /// Where this rank's shard starts in the global parameter (inside each
  /// block along a blocked dimension).
  std::vector<int64_t> shardOffset(const Param &p) const {
    std::vector<int64_t> offset(p.global.size(), 0);
    const rt::ShardBlocks b = p.shardBlocks();
    for (auto [dim, axis] : {std::pair{p.splitDim, &p.splitAxis},
                             std::pair{p.split2Dim, &p.split2Axis}})
      if (dim >= 0)
        offset[dim] = int64_t(c.coord(*axis)) *
                      (p.local[dim] / (dim == b.dim ? b.count : 1));
    return offset;
  }
  /// The shard without its vocabulary padding: a padded table (dimension
  /// 0 rounded up to a multiple of tp) ends in rows past the global shape.
  static std::vector<int64_t> heldShape(const Param &p,
                                        const std::vector<int64_t> &offset) {
    std::vector<int64_t> held = p.local;
    if (held.empty())
      return held;
    held[0] = std::max<int64_t>(
        0, std::min<int64_t>(held[0], p.global[0] - offset[0]));
    return held;
  }

protected:
  Context &c;
  std::vector<Param> P;

  /// ZeRO-1/2: the parameters in the order the stage first reads them (its
  /// chunks' forwards in turn; set by the constructor). The optimizer step
  /// only updates each rank's chunk; the all-gathers start in this order,
  /// at most kParamGathersInFlight matrices (biases and norm weights, 1-D,
  /// are not counted) ahead of the forward, as Megatron-LM's
  /// --overlap-param-gather runs one bucket ahead. On CUDA they share the
  /// one communication stream with the forward's own collectives and
  /// transfers, which so wait behind only that much.
  std::vector<int> gatherOrder;
  size_t gatherCursor = 0;
  int gathersRunning = 0;
  static bool countsAsRunning(const Param &p) { return p.local.size() >= 2; }
  void startGather(int i) {
    Param &p = P[i];
    p.gatherDue = false;
    if (c.group(p.group).size() == 1) // the chunk is the parameter
      return;
    p.gather = rt::zeroGatherChunksAsync(p.padded, c.group(p.group));
    p.gatherRunning = true;
    gathersRunning += countsAsRunning(p);
  }
  /// Not while pipeline sends are queued: a gather would issue them as a
  /// group of their own, not with the next recv (docs/runtime.md,
  /// "Pipeline point-to-point"); the next awaitParam after it resumes.
  void prefetchGathers() {
    if (rt::sendsQueued())
      return;
    while (gathersRunning < kParamGathersInFlight &&
           gatherCursor < gatherOrder.size()) {
      int j = gatherOrder[gatherCursor++];
      if (P[j].gatherDue)
        startGather(j);
    }
  }
  /// Parameter i is complete (its gather started now if it was still due,
  /// then waited for), and the next ones in gatherOrder start.
  void awaitParam(int i) {
    Param &p = P[i];
    if (p.gatherDue)
      startGather(i);
    if (p.gatherRunning) {
      p.gather.wait();
      p.gatherRunning = false;
      gathersRunning -= countsAsRunning(p);
    }
    prefetchGathers();
  }
  void awaitAllParams() {
    for (size_t i = 0; i < P.size(); ++i)
      awaitParam(int(i));
  }

  void zeroGrads() {
    for (Param &p : P) {
      if (kZeroStage >= 2) {
        rt::zero(p.gradSlice);
        p.grad = rt::Tensor();
      } else {
        if (p.grad.defined())
          rt::zero(p.grad);
        else // released by startSliceSum
          p.grad = rt::Tensor(p.local);
        p.gradSlice = rt::Tensor(); // ZeRO-1: startSliceSum's, used up
        p.sliceStarted = false;
      }
    }
  }
  /// ZeRO-2/3: parameter i's full gradient, allocated (zero) on first use
  /// in a backward.
  rt::Tensor &fullGrad(int i) {
    if (!P[i].grad.defined())
      P[i].grad = rt::Tensor(P[i].local);
    return P[i].grad;
  }
  /// ZeRO-2/3: starts summing parameter i's full gradient over its group
  /// into this rank's slice and releases it. The sums run while the
  /// backward goes on (on CUDA on the communication stream); each holds a
  /// full-size buffer until it is done, so at most kShardSumsInFlight run
  /// at once (DeepSpeed's overlap_comm likewise trades buffer memory for
  /// overlap).
  void shardGrad(int i) {
    Param &p = P[i];
    shardSums.push_back(
        rt::zero2AccumulateGradAsync(p.gradSlice, p.grad, c.group(p.group)));
    p.grad = rt::Tensor();
    while (shardSums.size() > kShardSumsInFlight) {
      shardSums.front().wait();
      shardSums.pop_front();
    }
  }
  static constexpr size_t kShardSumsInFlight = 2;
  std::deque<rt::Pending> shardSums;
  /// ZeRO-1: starts reduce-scattering parameter i's complete gradient over
  /// its group into this rank's slice (the part of the optimizer state it
  /// holds) without waiting: called right after the parameter's last
  /// contribution of the step, so the sum overlaps the rest of the
  /// backward. The full gradient is released then, as shardGrad does
  /// (zeroGrads allocates it again), with the same limit on sums in
  /// flight: the slices take the place of the full gradients, and the
  /// peak grows only by the buffers of the sums in flight.
  void startSliceSum(int i) {
    Param &p = P[i];
    const rt::Group &g = c.group(p.group);
    p.gradSlice =
        rt::Tensor({rt::zeroRange(p.grad.numel(), g.size(), g.rank()).chunk});
    shardSums.push_back(rt::zero2AccumulateGradAsync(p.gradSlice, p.grad, g));
    p.grad = rt::Tensor();
    p.sliceStarted = true;
    while (shardSums.size() > kShardSumsInFlight) {
      shardSums.front().wait();
      shardSums.pop_front();
    }
  }
  /// ZeRO-0/1: starts summing parameter i's gradient over each of `groups`
  /// (in order) without waiting: called right after the parameter's last
  /// contribution of the step, so the sums run while the backward goes on
  /// (on CUDA on the communication stream; the CPU backend completes them
  /// at once, or in waitGradSums() under TRIDENT_RT_DEFER_ASYNC=1).
  void startGradSums(int i, std::initializer_list<const char *> groups) {
    for (const char *g : groups)
      gradSums.push_back(rt::allReduceSumAsync(P[i].grad, c.group(g)));
  }
  /// Makes every started sum visible to later kernels (ZeRO-2/3: adds
  /// the reduce-scattered parts into the gradient slices).
  void waitGradSums() {
    for (rt::Pending &p : gradSums)
      p.wait();
    gradSums.clear();
    for (rt::Pending &p : shardSums)
      p.wait();
    shardSums.clear();
  }
  std::vector<rt::Pending> gradSums;

  /// Sums gradients over `g` (under ZeRO-2/3 the slices: every member of
  /// `g` holds the same slice of the same parameter).
  void gradAllReduce(const std::vector<int> &which, const rt::Group &g) {
    waitGradSums();
    for (int i : which)
      rt::allReduceSum(kZeroStage >= 2 ? P[i].gradSlice : P[i].grad, g);
  }
  /// ZeRO 1-3 shard each parameter's state over its own group (ZeRO-2:
  /// its gradient slice is already reduced).
  void optimizerStep(int zeroStage) {
    waitGradSums();
    rt::AdamConfig cfg;
    cfg.lr = kLr;
    cfg.beta1 = kBeta1;
    cfg.beta2 = kBeta2;
    cfg.eps = kEps;
    awaitAllParams(); // ZeRO-1/2: parameters no kernel read this step
    for (Param &p : P) {
      const rt::Group &dp = c.group(p.group);
      rt::Tensor w = p.value.reshape({p.value.numel()});
      if (p.loadBalance > 0.0f) {
        // The whole step's expert load: ZeRO-2/3 hold it as slices summed
        // over the group, ZeRO-1 not yet summed, ZeRO-0 summed already.
        rt::Tensor load(p.local);
        if (zeroStage >= 2) {
          rt::zero3Gather(load, p.gradSlice, dp);
        } else {
          rt::copy(load, p.grad);
          if (zeroStage == 1)
            rt::allReduceSum(load, dp);
        }
        int64_t begin = zeroStage == 3
            ? rt::zeroRange(load.numel(), dp.size(), dp.rank()).begin : 0;
        rt::loadBalanceUpdate(w, load, p.loadBalance, begin);
        continue;
      }
      // ZeRO-1/2 update this rank's chunk; the parameter's all-gather
      // waits for the next forward (prefetchGathers, awaitParam). ZeRO-1
      // parameters whose slice was reduce-scattered in the backward
      // (startSliceSum) step from that slice, as ZeRO-2's.
      if (zeroStage == 2 || p.sliceStarted) {
        if (kOptimizerAdam)
          rt::zero2AdamUpdateChunk(p.padded, p.gradSlice, p.m, p.v, cfg,
                                   c.step, dp);
        else
          rt::zero2SgdUpdateChunk(p.padded, p.gradSlice, kLr, dp);
        p.gatherDue = true;
        continue;
      }
      if (zeroStage == 3) { // the parameter is its slice too
        if (kOptimizerAdam)
          rt::adamUpdate(p.value, p.gradSlice, p.m, p.v, cfg, c.step);
        else
          rt::sgdUpdate(p.value, p.gradSlice, kLr);
        continue;
      }
      rt::Tensor g = p.grad.reshape({p.grad.numel()});
      if (zeroStage == 0) {
        if (kOptimizerAdam)
          rt::adamUpdate(w, g, p.m, p.v, cfg, c.step);
        else
          rt::sgdUpdate(w, g, kLr);
      } else {
        if (kOptimizerAdam)
          rt::zero1AdamUpdateChunk(p.padded, g, p.m, p.v, cfg, c.step, dp);
        else
          rt::zero1SgdUpdateChunk(p.padded, g, kLr, dp);
        p.gatherDue = true;
      }
    }
    // The first gathers run while the step ends and the next one starts.
    gatherCursor = 0;
    prefetchGathers();
  }
};

} // namespace

)cpp";

const char *kMain = R"cpp(
int usage(const char *argv0) {
  if (rt::worldRank() == 0)
    std::fprintf(stderr, "usage: %s [--steps N] [--dump DIR] [--tf32]\n",
                 argv0);
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  try {
    rt::init(&argc, &argv);
  } catch (const std::exception &e) { // no GPU, no driver, MPI refused
    rt::reportFatal(e);
  }
  int64_t steps = 3;
  std::string dumpDir;
  bool tf32 = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--steps" && i + 1 < argc) {
      char *end = nullptr;
      steps = std::strtoll(argv[++i], &end, 10);
      if (!end || *end || steps < 1 || steps > 1000000) {
        if (rt::worldRank() == 0)
          std::fprintf(stderr, "error: --steps needs an integer in 1..1000000, "
                               "got '%s'\n", argv[i]);
        rt::finalize();
        return 2;
      }
    } else if (a == "--dump" && i + 1 < argc) {
      dumpDir = argv[++i];
    } else if (a == "--tf32") {
      tf32 = true;
    } else {
      int code = usage(argv[0]);
      rt::finalize();
      return code;
    }
  }
  try {
    // For benchmarks: fp32 GEMMs on TF32 tensor cores (rt::setTf32Gemms).
    if (tf32 && !rt::setTf32Gemms(true) && rt::worldRank() == 0)
      std::printf("note: --tf32: the %s backend has no TF32 GEMMs; they "
                  "stay fp32\n", rt::backendName());
    const int ranks = kDp * kCp * kTp * kPp;
    if (rt::worldSize() != ranks)
      throw rt::Error("this program runs on dp*cp*tp*pp = " +
                      std::to_string(ranks) + " ranks, got " +
                      std::to_string(rt::worldSize()) +
                      " (mpirun -np " + std::to_string(ranks) + ")");
    rt::GridShape shape;
    shape.pp = kPp;
    shape.dp = kDp;
    shape.cp = kCp;
    shape.tp = kTp;
    shape.ep = kEp;
    rt::Grid grid(shape);
    Context c{grid, {}};
    makeGroups(c);
    std::unique_ptr<Stage> stage = makeStage(c, grid.coord(rt::Axis::PP));
    stage->initParams();
    rt::synchronize();
    for (int64_t step = 1; step <= steps; ++step) {
      double t0 = rt::wallSeconds();
      c.step = step;
      rt::zero(c.lossSum);
      stage->step();
      // The compute stream only: ZeRO-1/2's parameter all-gathers run on
      // into the next step's forward, so a step's time is the steady
      // state's (the next step waits for what this one left exposed).
      rt::synchronizeCompute();
      double seconds = rt::wallSeconds() - t0;
      double loss = rt::globalMeanLoss(c.lossSum, kGlobalTokens, grid);
      rt::reportStep(step, loss, seconds, grid);
    }
    rt::synchronize(); // ZeRO-1/2: the gathers still running
    rt::reportMemory(grid);
    if (!dumpDir.empty()) {
      rt::ParamDump dump;
      stage->dumpParams(dump);
      dump.write(dumpDir);
    }
  } catch (const std::exception &e) {
    rt::reportFatal(e);
  }
  rt::finalize();
  return 0;
}
)cpp";

} // namespace

/// When each parameter's gradient sums start in a stage's step.
/// ZeRO-0 and 1: a parameter's gradient sums over groups inside the stage
/// (dp, dp x cp, tp, the experts' data group) start right after its last
/// contribution of the step, in the backward of the last micro-batch
/// that reaches it, so they overlap the rest of the backward
/// (Megatron-Core's --overlap-grad-reduce, one parameter per bucket).
/// Sums with another stage (a tied embedding's group) stay after the
/// schedule: the other stage reaches them at another time, and an
/// all-reduce waiting for it mid-backward would hold up the pipeline's
/// own transfers.

struct StageGradSums {
  struct Action {
    size_t pos;
    int64_t kind, microBatch, chunk;
  };
  struct Reach {
    size_t pos;         ///< in the schedule's action list
    int64_t microBatch; ///< of that backward
    int64_t chunk;
  };
  tx::ProgramOp program;
  tx::StageOp stage;
  /// The groups inside the stage each parameter's gradient is summed over
  /// in the backward.
  llvm::StringMap<SmallVector<std::string, 2>> asyncGroups;
  /// ZeRO-1: parameters whose optimizer reduce-scatter starts in the
  /// backward (startSliceSum).
  llvm::StringSet<> sliceParams;
  /// The stage's last schedule action with a send or receive.
  std::optional<Action> lastTransferAction;
  /// Each parameter's last contribution of the step.
  llvm::StringMap<Reach> lastReach;
  /// Sums that start after the last transfer action's transfers.
  llvm::StringMap<RegionEmitter::AsyncSum> later;

  /// A group within the stage (no pp axis).
  bool withinStage(StringRef group) {
    tx::GroupOp g = program.lookupGroup(group);
    if (!g)
      return false;
    for (Attribute axis : g.getAxes())
      if (cast<StringAttr>(axis).getValue() == "pp")
        return false;
    return true;
  }
  /// The parameters a gradient all-reduce sums (all of the stage's when
  /// it names none).
  SmallVector<std::string> paramsOf(tx::GradAllReduceOp gar) {
    SmallVector<std::string> v;
    if (auto params = gar.getParams()) {
      for (Attribute a : *params)
        v.push_back(cast<StringAttr>(a).getValue().str());
    } else {
      for (auto p : stage.getBody().front().getOps<tx::ParamOp>())
        v.push_back(p.getSym().str());
    }
    return v;
  }
  RegionEmitter::AsyncSum asyncSumOf(StringRef sym, int64_t microBatch) {
    return RegionEmitter::AsyncSum{microBatch, asyncGroups.lookup(sym),
                                   sliceParams.contains(sym)};
  }
};

FailureOr<StageGradSums> planGradSums(tx::ProgramOp program,
                                      tx::StageOp stage) {
  StageGradSums g;
  g.program = program;
  g.stage = stage;
  if (program.getZeroStage() < 2) // ZeRO-2/3 hold gradient slices
    for (auto gar : stage.getBody().front().getOps<tx::GradAllReduceOp>())
      if (g.withinStage(gar.getGroup()))
        for (const std::string &p : g.paramsOf(gar))
          g.asyncGroups[p].push_back(gar.getGroup().str());
  // ZeRO-1: the optimizer's reduce-scatter over the parameter's data
  // group starts in the backward too, for parameters with no other sum
  // (startSliceSum). A parameter summed over tp or with another stage
  // first keeps it in the optimizer step: a reduce-scatter that copies
  // a padded gradient at issue would not see a sum still running on the
  // communication stream. Load-balanced biases are not optimized.
  if (program.getZeroStage() == 1) {
    llvm::StringSet<> summed;
    for (auto gar : stage.getBody().front().getOps<tx::GradAllReduceOp>())
      for (const std::string &p : g.paramsOf(gar))
        summed.insert(p);
    for (auto decl : stage.getBody().front().getOps<tx::ParamOp>())
      if (!summed.contains(decl.getSym()) && !decl.getLoadBalance())
        g.sliceParams.insert(decl.getSym());
  }
  // The schedule position and micro-batch of each chunk's last backward,
  // and the stage's last action with a send or receive.
  auto schedules = stage.getBody().front().getOps<tx::ScheduleOp>();
  if (!schedules.empty() && std::next(schedules.begin()) != schedules.end())
    return stage.emitOpError("has more than one texec.schedule");
  DenseMap<int64_t, std::pair<size_t, int64_t>> lastBackward;
  DenseMap<int64_t, tx::ChunkOp> chunkOf;
  for (auto chunk : stage.getBody().front().getOps<tx::ChunkOp>())
    chunkOf[chunk.getIndex()] = chunk;
  auto transfers = [](Region &r) {
    return r
        .walk([](Operation *op) {
          return isa<tx::SendOp, tx::RecvOp>(op) ? WalkResult::interrupt()
                                                 : WalkResult::advance();
        })
        .wasInterrupted();
  };
  for (auto sched : schedules) {
    ArrayRef<int64_t> a = sched.getActions();
    for (size_t i = 0; i + 2 < a.size(); i += 3) {
      if (a[i] == 1)
        lastBackward[a[i + 2]] = {i, a[i + 1]};
      tx::ChunkOp ch = chunkOf.lookup(a[i + 2]);
      if (ch && transfers(a[i] == 1 ? ch.getBackward() : ch.getForward()))
        g.lastTransferAction =
            StageGradSums::Action{i, a[i], a[i + 1], a[i + 2]};
    }
  }
  // Each parameter's last contribution: the latest of those backwards
  // among the chunks that accumulate into it.
  for (auto chunk : stage.getBody().front().getOps<tx::ChunkOp>()) {
    auto lb = lastBackward.find(chunk.getIndex());
    if (lb == lastBackward.end())
      continue;
    chunk.getBackward().walk([&](tx::AccumulateGradOp acc) {
      StringRef sym = acc.getSym();
      if (!g.asyncGroups.count(sym) && !g.sliceParams.contains(sym))
        return;
      auto it = g.lastReach.find(sym);
      if (it == g.lastReach.end() || it->second.pos < lb->second.first)
        g.lastReach[sym] =
            StageGradSums::Reach{lb->second.first, lb->second.second,
                                 static_cast<int64_t>(chunk.getIndex())};
    });
  }
  // A sum reached before the stage's last transfer action (interleaved
  // schedules) starts after that action's last transfer, in its backward;
  // if that action is a forward, after the schedule like the others.
  if (g.lastTransferAction)
    for (auto it = g.lastReach.begin(); it != g.lastReach.end();) {
      auto cur = it++;
      if (cur->second.pos >= g.lastTransferAction->pos)
        continue;
      StringRef sym = cur->getKey();
      if (g.lastTransferAction->kind == 1)
        g.later[sym] = g.asyncSumOf(sym, g.lastTransferAction->microBatch);
      else
        g.lastReach.erase(cur);
    }
  return g;
}

/// The generated main.cpp's banner, includes and constants.
void emitMainHeader(tx::ProgramOp program, tx::OptimizerOp anyOpt,
                    llvm::raw_ostream &os) {
  int64_t globalTokens = program.getDp() * program.getMicroBatches() *
                         program.getMicroBatchSize() * program.getSeqLen();
  os << "//===- main.cpp - Generated by trident emit from texec.program @"
     << program.getSymName() << " -===//\n"
     << "//\n// One SPMD program for every rank of a dp " << program.getDp()
     << " x cp " << program.getCp() << " x tp " << program.getTp() << " x pp "
     << program.getPp()
     << " grid (vpp " << program.getVpp() << ", " << program.getMicroBatches()
     << " micro-batches of " << program.getMicroBatchSize()
     << ", ZeRO " << program.getZeroStage() << ", schedule "
     << program.getSchedule() << "). Do not edit: re-emit.\n//\n"
     << "//===----------------------------------------------------------------------===//\n\n"
     << "#include \"trident/Runtime/Runtime.h\"\n\n"
     << "#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n"
     << "#include <deque>\n#include <map>\n#include <memory>\n"
     << "#include <string>\n"
     << "#include <vector>\n\nnamespace rt = trident::rt;\n\n"
     << "namespace {\n"
     << "constexpr int kDp = " << program.getDp() << ", kCp = "
     << program.getCp() << ", kTp = " << program.getTp()
     << ", kPp = " << program.getPp() << ", kEp = " << program.getEp()
     << ";\n"
     << "constexpr int kMicroBatches = " << program.getMicroBatches()
     << ";\nconstexpr int64_t kMicroBatchSize = "
     << program.getMicroBatchSize() << ", kSeqLen = " << program.getSeqLen()
     << ", kLocalSeqLen = " << program.getLocalSeqLen()
     << ", kVocab = " << program.getVocab() << ";\n"
     << "/// Ranks that hold the same parameters (gradient sum, ZeRO shards).\n"
     << "constexpr const char *kDataGroup = "
     << cppString(anyOpt.getGroup()) << ";\n"
     << "constexpr int kZeroStage = " << program.getZeroStage() << ";\n"
     << "constexpr double kGlobalTokens = " << globalTokens << ";\n"
     << "constexpr bool kOptimizerAdam = "
     << (anyOpt.getKind() == "adam" ? "true" : "false") << ";\n"
     << llvm::formatv("constexpr float kLr = {0:e}f, kBeta1 = {1:e}f, kBeta2 "
                      "= {2:e}f, kEps = {3:e}f;\n",
                      anyOpt.getLr().convertToDouble(),
                      anyOpt.getBeta1().convertToDouble(),
                      anyOpt.getBeta2().convertToDouble(),
                      anyOpt.getEps().convertToDouble())
     << "// Seeds of the deterministic initialisation and synthetic data,\n"
     << "// and the half-width of the uniform initialisation (GPT-2's 0.02,\n"
     << "// Radford et al. 2019, used here as a uniform bound).\n"
     << "constexpr uint64_t kInitSeed = 1234, kDataSeed = 42;\n"
     << "constexpr float kInitScale = 0.02f;\n"
     << "/// ZeRO-1/2: parameter all-gathers in flight ahead of the forward\n"
     << "/// (matrices; 1-D parameters go along uncounted).\n"
     << "constexpr int kParamGathersInFlight = " << kParamGathersAhead
     << ";\n"
     << "} // namespace\n";
  os << kPrelude;
}

/// One pipeline stage's class: its parameters, its chunks' forward,
/// recompute and backward functions, and its step.
LogicalResult emitStageClass(tx::ProgramOp program, tx::StageOp stage,
                             tx::OptimizerOp anyOpt, llvm::raw_ostream &os) {
  int64_t s = stage.getIndex();
  llvm::StringMap<int> paramIndex;
  std::string ctor;
  llvm::raw_string_ostream cs(ctor);
  for (auto p : stage.getBody().front().getOps<tx::ParamOp>()) {
    int idx = paramIndex.size();
    paramIndex[p.getSym()] = idx;
    auto t = cast<RankedTensorType>(p.getType());
    int64_t splitDim = -1; // not split
    if (std::optional<uint64_t> d = p.getSplitDim())
      splitDim = static_cast<int64_t>(*d);
    cs << "    P.push_back(Param{" << cppString(p.getSym()) << ", "
       << shapeList(p.getGlobalShape()) << ", " << shapeList(t.getShape())
       << ", " << splitDim << ", "
       << cppString(p.getSplitAxis() ? *p.getSplitAxis() : "") << ", "
       << cppString(p.getInit()) << ", "
       << (p.getDataGroup() ? cppString(*p.getDataGroup()) : "kDataGroup")
       << ", {}, {}, {}, {}});\n";
    if (std::optional<uint64_t> d = p.getSplit2Dim())
      cs << "    P.back().split2Dim = " << *d << ";\n"
         << "    P.back().split2Axis = " << cppString(*p.getSplit2Axis())
         << ";\n";
    if (std::optional<uint64_t> b = p.getBlocks())
      cs << "    P.back().blocks = " << *b << ";\n";
    if (std::optional<APFloat> rate = p.getLoadBalance())
      cs << "    P.back().loadBalance = "
         << floatLiteral(rate->convertToDouble()) << ";\n";
  }
  os << "namespace {\n/// Pipeline stage " << s << ".\n"
     << "class Stage" << s << " final : public Stage {\npublic:\n"
     << "  explicit Stage" << s << "(Context &c) : Stage(c) {\n"
     << ctor;
  int numChunks = 0;
  for (auto chunk : stage.getBody().front().getOps<tx::ChunkOp>()) {
    (void)chunk;
    ++numChunks;
  }
  for (int i = 0; i < numChunks; ++i)
    os << "    S" << i << ".resize(kMicroBatches);\n";
  if (program.getZeroStage() == 1 || program.getZeroStage() == 2) {
    // First reads: each chunk's forward in turn.
    SmallVector<int> order;
    llvm::DenseSet<int> seen;
    for (auto chunk : stage.getBody().front().getOps<tx::ChunkOp>())
      chunk.getForward().walk([&](tx::ParamRefOp r) {
        int idx = paramIndex.lookup(r.getSym());
        if (seen.insert(idx).second)
          order.push_back(idx);
      });
    os << "    gatherOrder = {";
    llvm::interleaveComma(order, os);
    os << "};\n";
  }
  for (auto chunk : stage.getBody().front().getOps<tx::ChunkOp>())
    if (chunk.getRecompute())
      os << "    X" << chunk.getIndex() << ".resize(kMicroBatches);\n";
  os << "  }\n\n";
  FailureOr<StageGradSums> sums = planGradSums(program, stage);
  if (failed(sums))
    return failure();
  StageGradSums &g = *sums;
  using Mode = RegionEmitter::Mode;
  for (auto chunk : stage.getBody().front().getOps<tx::ChunkOp>()) {
    int64_t c = chunk.getIndex();
    os << "  /// Forward of local chunk " << c << " (model chunk "
       << chunk.getGlobalIndex() << ")"
       << (chunk.getRecompute() ? ", recomputed before its backward" : "")
       << ".\n  void forward" << c << "(int mb) {\n";
    RegionEmitter f(program, chunk, paramIndex, os, Mode::Forward);
    if (failed(f.emit(chunk.getForward().front())))
      return failure();
    os << "  }\n\n";
    if (chunk.getRecompute()) {
      os << "  /// Chunk " << c << "'s forward again, from its stashed "
         << "inputs: rebuilds S" << c << "[mb].\n  void recompute" << c
         << "(int mb) {\n";
      RegionEmitter r(program, chunk, paramIndex, os, Mode::Recompute);
      if (failed(r.emit(chunk.getForward().front())))
        return failure();
      os << "  }\n\n";
    }
    os << "  void backward" << c << "(int mb) {\n";
    if (chunk.getRecompute())
      os << "    recompute" << c << "(mb);\n";
    RegionEmitter b(program, chunk, paramIndex, os, Mode::Backward);
    for (auto &[sym, where] : g.lastReach)
      if (!g.later.count(sym) && where.chunk == c)
        b.asyncSums[sym] = g.asyncSumOf(sym, where.microBatch);
    if (g.lastTransferAction && g.lastTransferAction->kind == 1 &&
        g.lastTransferAction->chunk == c) {
      // In parameter order, the same on every rank of the stage.
      for (auto decl : stage.getBody().front().getOps<tx::ParamOp>())
        if (g.later.count(decl.getSym()))
          b.sumsAfterTransfers.push_back(
              {decl.getSym().str(), g.later.lookup(decl.getSym())});
    }
    if (failed(b.emit(chunk.getBackward().front())))
      return failure();
    os << "  }\n\n";
  }
  os << "  void step() override {\n    zeroGrads();\n";
  bool waited = false;
  for (Operation &op : stage.getBody().front()) {
    if (auto sched = dyn_cast<tx::ScheduleOp>(op)) {
      ArrayRef<int64_t> a = sched.getActions();
      os << "    // Schedule '" << sched.getKind()
         << "': (kind, micro-batch, chunk), kind 0 forward, 1 backward.\n"
         << "    static const int kActions[][3] = {";
      for (size_t i = 0; i < a.size(); i += 3)
        os << (i ? ", " : "") << "{" << a[i] << ", " << a[i + 1] << ", "
           << a[i + 2] << "}";
      os << "};\n    for (const auto &a : kActions) {\n"
         << "      switch (a[2] * 2 + a[0]) {\n";
      for (int i = 0; i < numChunks; ++i)
        os << "      case " << 2 * i << ": forward" << i
           << "(a[1]); break;\n      case " << 2 * i + 1 << ": backward" << i
           << "(a[1]); break;\n";
      os << "      }\n    }\n    rt::waitAllSends();\n";
    } else if (auto gar = dyn_cast<tx::GradAllReduceOp>(op)) {
      if (!g.lastReach.empty() && !waited) {
        os << "    waitGradSums(); // started in the backward\n";
        waited = true;
      }
      // What did not start in the backward: every sum with another
      // stage, and parameters no backward reaches.
      SmallVector<int> now;
      for (const std::string &p : g.paramsOf(gar))
        if (!g.lastReach.count(p) || !g.withinStage(gar.getGroup()))
          now.push_back(paramIndex.lookup(p));
      if (now.empty())
        continue;
      os << "    gradAllReduce({";
      for (auto [i, idx] : llvm::enumerate(now))
        os << (i ? ", " : "") << idx;
      os << "}, " << groupExpr(gar.getGroup()) << ");\n";
    } else if (auto opt = dyn_cast<tx::OptimizerOp>(op)) {
      if (opt.getKind() != anyOpt.getKind() || opt.getLr() != anyOpt.getLr() ||
          opt.getGroup() != anyOpt.getGroup() ||
          opt.getZeroStage() != anyOpt.getZeroStage() ||
          opt.getBeta1() != anyOpt.getBeta1() ||
          opt.getBeta2() != anyOpt.getBeta2() ||
          opt.getEps() != anyOpt.getEps())
        return opt.emitOpError("stages with different optimizers are not "
                               "translated");
      os << "    optimizerStep(" << opt.getZeroStage() << ");\n";
    }
  }
  os << "  }\n\nprivate:\n";
  for (int i = 0; i < numChunks; ++i)
    os << "  /// Saved activations of chunk " << i << ", per micro-batch.\n"
       << "  std::vector<std::vector<rt::Tensor>> S" << i << ";\n";
  for (auto chunk : stage.getBody().front().getOps<tx::ChunkOp>())
    if (chunk.getRecompute())
      os << "  /// What chunk " << chunk.getIndex()
         << " received, per micro-batch (recompute).\n"
         << "  std::vector<std::vector<rt::Tensor>> X" << chunk.getIndex()
         << ";\n";
  os << "};\n} // namespace\n\n";
  return success();
}

/// The groups, the stage factory and main().
LogicalResult emitGroupsAndMain(tx::ProgramOp program, llvm::raw_ostream &os) {
  // Groups and the stage factory.
  os << "namespace {\nvoid makeGroups(Context &c) {\n";
  for (auto g : program.getBody().front().getOps<tx::GroupOp>()) {
    ArrayAttr axes = g.getAxes();
    std::string ax;
    auto pair = [&](StringRef a, StringRef b) {
      return axes.size() == 2 && cast<StringAttr>(axes[0]).getValue() == a &&
             cast<StringAttr>(axes[1]).getValue() == b && !g.getMembers();
    };
    if (pair("dp", "cp")) {
      ax = "rt::Axis::DPCP";
    } else if (pair("edp", "cp")) {
      ax = "rt::Axis::EDPCP";
    } else if (axes.size() != 1) {
      return g.emitOpError("groups over several axes other than [\"dp\", "
                           "\"cp\"] and [\"edp\", \"cp\"] are not "
                           "translated");
    } else {
      StringRef axis = cast<StringAttr>(axes[0]).getValue();
      ax = axis == "dp"    ? "rt::Axis::DP"
           : axis == "tp"  ? "rt::Axis::TP"
           : axis == "cp"  ? "rt::Axis::CP"
           : axis == "ep"  ? "rt::Axis::EP"
           : axis == "edp" ? "rt::Axis::EDP"
                           : "rt::Axis::PP";
    }
    if (auto members = g.getMembers()) {
      os << "  c.groups[" << cppString(g.getSym()) << "] = c.grid.subgroup("
         << ax << ", {";
      for (auto [i, m] : llvm::enumerate(*members))
        os << (i ? ", " : "") << m;
      os << "}, " << cppString(g.getSym()) << ");\n";
    } else {
      os << "  c.groups[" << cppString(g.getSym()) << "] = c.grid.group(" << ax
         << ");\n";
    }
  }
  os << "}\n\nstd::unique_ptr<Stage> makeStage(Context &c, int stage) {\n"
     << "  switch (stage) {\n";
  for (int64_t s = 0; s < (int64_t)program.getPp(); ++s)
    os << "  case " << s << ": return std::make_unique<Stage" << s
       << ">(c);\n";
  os << "  }\n  throw rt::Error(\"no stage \" + std::to_string(stage));\n}\n";
  os << kMain;
  return success();
}

LogicalResult emitMainCpp(tx::ProgramOp program, llvm::raw_ostream &os) {
  // Everything except the chunk bodies is fixed by the program's
  // attributes, its groups and its stages' declarations.
  tx::OptimizerOp anyOpt;
  program.walk([&](tx::OptimizerOp o) {
    if (!anyOpt)
      anyOpt = o;
  });
  if (!anyOpt)
    return program.emitOpError("has no texec.optimizer to translate");
  emitMainHeader(program, anyOpt, os);
  for (auto stage : program.getBody().front().getOps<tx::StageOp>())
    if (failed(emitStageClass(program, stage, anyOpt, os)))
      return failure();
  return emitGroupsAndMain(program, os);
}

LogicalResult emitModuleCpp(ModuleOp module, llvm::raw_ostream &os) {
  auto programs = module.getBody()->getOps<tx::ProgramOp>();
  if (programs.empty())
    return module.emitError("texec-to-cpp: the module holds no texec.program");
  if (std::next(programs.begin()) != programs.end())
    return module.emitError("texec-to-cpp: the module holds more than one "
                            "texec.program");
  return emitMainCpp(*programs.begin(), os);
}

std::string emitCMakeLists(llvm::StringRef programName, Backend backend,
                           llvm::StringRef tridentSourceDir) {
  bool cuda = backend == Backend::Cuda;
  std::string lib = cuda ? "TridentRuntimeCuda" : "TridentRuntimeCpu";
  std::ostringstream os;
  os << "# Generated by trident emit for texec.program @" << programName.str()
     << " (backend " << (cuda ? "cuda" : "cpu") << ").\n"
     << "# Build: cmake -S . -B build && cmake --build build\n"
     << "# Run:   mpirun -np N build/train [--steps N] [--dump DIR] [--tf32]\n"
     << "cmake_minimum_required(VERSION 3.20)\n"
     << "project(trident_program LANGUAGES C CXX" << (cuda ? " CUDA" : "")
     << ")\n"
     << "set(CMAKE_CXX_STANDARD 20)\nset(CMAKE_CXX_STANDARD_REQUIRED ON)\n"
     << "if(NOT CMAKE_BUILD_TYPE)\n  set(CMAKE_BUILD_TYPE Release)\nendif()\n\n"
     << "# The Trident source tree whose lib/Runtime this program links.\n"
     << "set(TRIDENT_SOURCE_DIR \"" << tridentSourceDir.str()
     << "\" CACHE PATH \"Trident source tree\")\n"
     << "# Optional: a prebuilt lib" << lib
     << ".a to link instead of building lib/Runtime.\n"
     << "set(TRIDENT_RUNTIME_LIBRARY \"\" CACHE FILEPATH \"Prebuilt " << lib
     << " archive\")\n\n"
     << "if(TRIDENT_RUNTIME_LIBRARY)\n"
     << "  find_package(MPI REQUIRED COMPONENTS CXX)\n"
     << "  add_library(" << lib << " STATIC IMPORTED)\n"
     << (cuda ? "  find_package(CUDAToolkit REQUIRED)\n"
                "  find_library(TRIDENT_NCCL_LIBRARY nccl HINTS "
                "${CUDAToolkit_LIBRARY_DIR} REQUIRED)\n"
              : "")
     << "  set_target_properties(" << lib << " PROPERTIES\n"
     << "    IMPORTED_LOCATION \"${TRIDENT_RUNTIME_LIBRARY}\"\n"
     << "    INTERFACE_INCLUDE_DIRECTORIES \"${TRIDENT_SOURCE_DIR}/include\"\n"
     << "    INTERFACE_LINK_LIBRARIES \"MPI::MPI_CXX"
     << (cuda ? ";CUDA::cudart;CUDA::cublas;${TRIDENT_NCCL_LIBRARY}" : "")
     << "\")\n"
     << "else()\n"
     << "  if(NOT EXISTS \"${TRIDENT_SOURCE_DIR}/lib/Runtime/CMakeLists.txt\")\n"
     << "    message(FATAL_ERROR \"TRIDENT_SOURCE_DIR (${TRIDENT_SOURCE_DIR}) "
        "has no lib/Runtime: pass -DTRIDENT_SOURCE_DIR=<trident checkout>\")\n"
     << "  endif()\n"
     << "  add_subdirectory(\"${TRIDENT_SOURCE_DIR}/lib/Runtime\" "
        "trident-runtime)\n"
     << "endif()\n\n"
     << "# main.cpp is the schedule and its calls into the runtime, whose\n"
     << "# kernels the runtime library holds already optimised: -O1 compiles\n"
     << "# it in half the time of -O3 and runs a step as fast (docs/emit.md,\n"
     << "# \"Building the project\"). Set TRIDENT_PROGRAM_OPT to change it.\n"
     << "set(TRIDENT_PROGRAM_OPT \"-O1\" CACHE STRING \"Optimisation flags of "
        "main.cpp (the runtime keeps its own)\")\n"
     << "add_executable(train main.cpp)\n"
     << "if(CMAKE_BUILD_TYPE STREQUAL \"Release\" AND TRIDENT_PROGRAM_OPT)\n"
     << "  set_source_files_properties(main.cpp PROPERTIES COMPILE_OPTIONS\n"
     << "    \"${TRIDENT_PROGRAM_OPT}\")\n"
     << "endif()\n"
     << "target_link_libraries(train PRIVATE " << lib << ")\n";
  return os.str();
}

Status writeProjectAtomically(
    const std::string &dir,
    const std::vector<std::pair<std::string, std::string>> &files) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target(dir);
  if (fs::exists(target, ec) && !fs::is_empty(target, ec) &&
      !fs::exists(target / ".trident-emit", ec))
    return Status::error(dir + ": exists and was not written by trident emit; "
                               "refusing to replace it");
  fs::path tmp = target;
  tmp += ".tmp." + std::to_string(::getpid());
  fs::remove_all(tmp, ec);
  if (!fs::create_directories(tmp, ec))
    return Status::error(tmp.string() + ": cannot create: " + ec.message());
  auto all = files;
  all.push_back({".trident-emit", "written by trident emit\n"});
  for (auto &[name, contents] : all) {
    if (Status s = writeFileAtomically((tmp / name).string(), contents); !s) {
      fs::remove_all(tmp, ec);
      return s;
    }
  }
  fs::path old = target;
  old += ".old." + std::to_string(::getpid());
  bool hadOld = fs::exists(target, ec);
  if (hadOld) {
    fs::rename(target, old, ec);
    if (ec) {
      fs::remove_all(tmp, ec);
      return Status::error(dir + ": cannot replace: " + ec.message());
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    std::string why = ec.message();
    if (hadOld)
      fs::rename(old, target, ec);
    fs::remove_all(tmp, ec);
    return Status::error(dir + ": cannot rename into place: " + why);
  }
  if (hadOld)
    fs::remove_all(old, ec);
  return Status::ok();
}

} // namespace trident::target
