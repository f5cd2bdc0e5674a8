//===- GraphCost.h - Value types of the tgraph op interfaces ---*- C++ -*-===//
//
// Plain structs returned by CostOpInterface and ParallelismOpInterface.
// Kept free of MLIR headers so the Analysis can copy them into a
// LayerProfile without further translation.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_DIALECTS_GRAPH_IR_GRAPHCOST_H
#define TRIDENT_DIALECTS_GRAPH_IR_GRAPHCOST_H

#include <cstdint>

namespace mlir::trident::graph {

/// Sizes that the symbolic dimensions take: dimension 0 of an activation is
/// the micro-batch, dimension 1 the sequence.
struct CostContext {
  int64_t batch = 1;
  int64_t seq = 1;
};

/// Recompute policies, in the order of OpCost::savedBytes.
enum class RecomputePolicy : uint8_t { None = 0, Selective = 1, Full = 2 };

/// Cost of one execution of an op (see CostOpInterface).
struct OpCost {
  double fwdFlops = 0;
  double bwdFlops = 0;
  /// Part of fwdFlops that selective recompute repeats (attention core).
  double attnCoreFlops = 0;
  double bytesRead = 0;
  double bytesWritten = 0;
  /// Parameter elements this op uses (tied weights are counted by each
  /// user; model totals count each tgraph.param once).
  int64_t params = 0;
  /// Activation bytes kept for the backward, indexed by RecomputePolicy.
  double savedBytes[3] = {0, 0, 0};
  /// Part of savedBytes[None] that grows with s^2 (softmax and dropout of
  /// the attention core).
  double savedAttnCoreBytes = 0;
  /// Part of savedBytes[None] kept as the input of a weight GEMM inside a
  /// repeated layer: the GEMMs Transformer Engine runs in FP8 under FP8
  /// training, which then keep that input as its FP8 copy, one byte an
  /// element (TE's Linear / LayerNormLinear / GroupedLinear save the
  /// quantised input for the weight gradient). Not the attention core,
  /// the router or the LM head, which stay in 16 bits.
  double savedGemmInputBytes = 0;
  /// The saved inputs that the bf16 programs of `trident emit` keep in
  /// bf16 tensors (two bytes an element) where they keep the rest in fp32
  /// ones: values that only readers taking bf16 storage read (a linear
  /// layer's input, an activation's; texec's kernel table,
  /// KernelInfo::bf16Inputs in dialects/Exec/IR/ExecOps.cpp, and
  /// readFromBf16Tensors in GraphOps.cpp for the tgraph ops lowered to
  /// those kernels).
  double savedBf16TensorBytes = 0;
  /// Kernels the forward launches.
  int64_t kernels = 0;

  OpCost &operator+=(const OpCost &o) {
    fwdFlops += o.fwdFlops;
    bwdFlops += o.bwdFlops;
    attnCoreFlops += o.attnCoreFlops;
    bytesRead += o.bytesRead;
    bytesWritten += o.bytesWritten;
    params += o.params;
    for (int i = 0; i < 3; ++i)
      savedBytes[i] += o.savedBytes[i];
    savedAttnCoreBytes += o.savedAttnCoreBytes;
    savedGemmInputBytes += o.savedGemmInputBytes;
    savedBf16TensorBytes += o.savedBf16TensorBytes;
    kernels += o.kernels;
    return *this;
  }
  OpCost scaled(int64_t n) const {
    OpCost c = *this;
    c.fwdFlops *= n;
    c.bwdFlops *= n;
    c.attnCoreFlops *= n;
    c.bytesRead *= n;
    c.bytesWritten *= n;
    c.params *= n;
    for (double &b : c.savedBytes)
      b *= n;
    c.savedAttnCoreBytes *= n;
    c.savedGemmInputBytes *= n;
    c.savedBf16TensorBytes *= n;
    c.kernels *= n;
    return c;
  }
};

} // namespace mlir::trident::graph

#endif // TRIDENT_DIALECTS_GRAPH_IR_GRAPHCOST_H
