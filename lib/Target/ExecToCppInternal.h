//===- ExecToCppInternal.h - texec to C++: shared parts -------------------===//
//
// What the parts of the C++ emitter share (ExecToCppKernels.cpp: each op
// of a region; ExecToCppMain.cpp: main.cpp's stages, groups and main();
// ExecToCpp.cpp: the project's files): the literal printers and the
// region emitter. Internal to lib/Target.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_LIB_TARGET_EXECTOCPPINTERNAL_H
#define TRIDENT_LIB_TARGET_EXECTOCPPINTERNAL_H

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

namespace trident::target::detail {

/// How many weight matrices' parameter gathers run ahead of the one in
/// use (1-D parameters, biases and norm weights, go along uncounted):
/// under ZeRO-3 where the emitter places each gather's start, under
/// ZeRO-1/2 the programs' prefetch at run time (kParamGathersInFlight,
/// written into every main.cpp from this one value). Megatron-LM's
/// --overlap-param-gather runs one bucket ahead; two matrices keep a
/// layer's first weight from starting behind only a norm.
inline constexpr int kParamGathersAhead = 2;

inline std::string shapeList(ArrayRef<int64_t> shape) {
  std::string s = "{";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "}";
}

/// A double as C++ source that reads back to the same value.
inline std::string exactDouble(double x) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", x);
  return std::string(buf);
}

/// A float literal of x ("16.0f", "0.001f"): exactDouble with a decimal
/// point where %g printed an integer ("16f" is not C++).
inline std::string floatLiteral(double x) {
  std::string s = exactDouble(x);
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s + "f";
}

inline std::string cppString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

/// C++ expression of a pipeline message's tag: (micro-batch `mb`, the
/// receiving model chunk, direction) through main.cpp's tagOf.
inline std::string tagCall(int64_t receiver, int64_t totalChunks,
                           bool backward) {
  return "tagOf(mb, " + std::to_string(receiver) + ", " +
         std::to_string(totalChunks) + ", " + (backward ? "1" : "0") + ")";
}

/// C++ expression of a group by texec name.
inline std::string groupExpr(StringRef name) {
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
  /// Declares a zero-filled tensor for result `v`: of bf16 elements where
  /// `bf16`.
  std::string declare(Value v, bool bf16 = false) {
    std::string n = fresh(v);
    auto t = cast<RankedTensorType>(v.getType());
    os << "    rt::Tensor " << n << "(" << shapeList(t.getShape())
       << (t.getElementType().isInteger(32) ? ", rt::DType::I32"
           : bf16                           ? ", rt::DType::BF16"
                                            : "")
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
  /// A send was emitted before this point of the region.
  bool sent = false;
  void emitStart(StringRef sym, const AsyncSum &sum, bool afterTransfer) {
    os << "    if (mb == " << sum.microBatch
       << (afterTransfer ? ") { // complete this step; after the transfer"
                         : ") { // its last contribution this step")
       << "\n";
    // After a send, this is the stage's last transfer action (emitMainCpp
    // moves earlier sums here), so no later step receives anything: its
    // sends go out now, as the step's exchange would send them, rather
    // than behind the sums on CUDA's one communication stream.
    if (sent)
      os << "      rt::exchangeStep({}, " << groupExpr("pp") << ");\n";
    // A sliced parameter has no sums of its own (emitMainCpp).
    if (sum.slice) {
      os << "      startSliceSum(" << paramIndex.lookup(sym) << ");\n";
    } else {
      os << "      startGradSums(" << paramIndex.lookup(sym) << ", {";
      for (auto [i, group] : llvm::enumerate(sum.groups))
        os << (i ? ", " : "") << cppString(group);
      os << "});\n";
    }
    os << "    }\n";
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
  /// Kernel results written into an input's storage (the logits'
  /// gradient): rounded there, not moved to a bf16 tensor, so the buffer
  /// is not held twice.
  DenseSet<Value> writtenInPlace;
  /// A linear backward's dx whose tensor-parallel sum was started by the
  /// kernel's emission (asyncTpSum): the all_reduce or reduce_scatter
  /// waits for it.
  DenseSet<Value> sumStarted;
  /// The all_reduce or reduce_scatter (sequence parallelism) that dx, a
  /// linear backward's data gradient, goes to alone (in the same block),
  /// which may then run while the weight gradient's GEMM does (Megatron's
  /// asynchronous tensor-parallel sum of the column-parallel layers' input
  /// gradient); null otherwise.
  Operation *asyncTpSum(tx::KernelOp op);
  LogicalResult emitKernel(tx::KernelOp op);
  /// A bf16 program (texec.program precision "bf16").
  bool bf16() { return program.getPrecision() == "bf16"; }
  /// Whether `v` is (a sum of) a parameter's gradient contribution: every
  /// use accumulates it (accumulate_grad), directly or through
  /// collectives. Gradients stay fp32 in a bf16 program (Megatron's fp32
  /// main_grad, --accumulate-allreduce-grads-in-fp32).
  bool isGradient(Value v);
  /// Whether `v` stays fp32 in a bf16 program: a kernel result the kernel
  /// table keeps fp32 (KernelInfo::f32Results), or a collective of one.
  bool keptF32(Value v);
  /// Whether every reader of `v` reads it from bf16 storage (the kernel
  /// table's KernelInfo::bf16Inputs): it is then held in a bf16 tensor
  /// (rt::toBf16, 2 bytes an element) instead of rounded in an fp32 one.
  bool readByBf16Kernels(Value v);
  /// Whether `v` holds bf16 values in a bf16 program: a used float value
  /// that does not stay fp32 (keptF32) and is no gradient.
  bool isBf16Value(Value v);
  /// Whether such a value is held in a bf16 tensor: not written in place
  /// of an input, and every reader takes bf16 storage (readByBf16Kernels).
  bool movesToBf16(Value v);
  /// In a bf16 program: rounds the float value `v` to bf16 in place,
  /// unless it stays fp32 (keptF32), is a gradient or is unused; a kernel
  /// result that every reader takes from bf16 storage (readByBf16Kernels,
  /// through texec.save to the backward's readers) moves instead into a
  /// bf16 tensor, its fp32 one released (movesToBf16; where the kernel
  /// wrote it into one, writesBf16Output, rt::toBf16 returns it as is).
  void roundIfBf16(Value v);
  /// Whether parameter `sym` is a load-balancing selection bias
  /// (texec.param load_balance), which stays fp32.
  bool loadBalanced(StringRef sym) {
    auto stage = chunk->getParentOfType<tx::StageOp>();
    for (auto p : stage.getBody().front().getOps<tx::ParamOp>())
      if (p.getSym() == sym)
        return p.getLoadBalance().has_value();
    return false;
  }
  std::optional<LogicalResult> emitLookupNormKernel(KernelSite &s);
  std::optional<LogicalResult> emitDenseKernel(KernelSite &s);
  std::optional<LogicalResult> emitAttentionKernel(KernelSite &s);
  std::optional<LogicalResult> emitMoEKernel(KernelSite &s);
  std::optional<LogicalResult> emitLossKernel(KernelSite &s);
  LogicalResult emitOp(Operation &op);
  void emitParamGather(tx::ParamGatherOp p);
};

} // namespace trident::target::detail

#endif // TRIDENT_LIB_TARGET_EXECTOCPPINTERNAL_H
