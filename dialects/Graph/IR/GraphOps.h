//===- GraphOps.h - tgraph operations -------------------------*- C++ -*-===//

#ifndef TRIDENT_DIALECTS_GRAPH_IR_GRAPHOPS_H
#define TRIDENT_DIALECTS_GRAPH_IR_GRAPHOPS_H

#include "dialects/Graph/IR/GraphCost.h"
#include "dialects/Graph/IR/GraphDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Graph/IR/GraphEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Graph/IR/GraphAttrs.h.inc"

#include "dialects/Graph/IR/GraphInterfaces.h.inc"

namespace mlir::trident::graph {

/// Dialect-wide rules checked for every op: dynamic sizes only in
/// dimensions 0 (micro-batch) and 1 (sequence).
template <typename ConcreteType>
class GraphOpTrait : public OpTrait::TraitBase<ConcreteType, GraphOpTrait> {
public:
  static LogicalResult verifyTrait(Operation *op);
};

/// Shared implementation of GraphOpTrait::verifyTrait.
LogicalResult verifyGraphOpTrait(Operation *op);

template <typename ConcreteType>
LogicalResult GraphOpTrait<ConcreteType>::verifyTrait(Operation *op) {
  return verifyGraphOpTrait(op);
}

/// Number of elements of a tensor type with dynamic dims bound by `ctx`.
double numElements(Type type, const CostContext &ctx);
/// Bytes of a tensor type with dynamic dims bound by `ctx`.
double numBytes(Type type, const CostContext &ctx);
/// Element byte width of a tensor type.
int64_t elementBytes(Type type);

/// The loop of an op, numbered as its ShardingInterface rule numbers them
/// (ShardingInterfaceImpl.cpp), that the plan's tensor parallelism splits:
/// Megatron-LM's layout (Shoeybi et al. 2019). A column or vocabulary
/// linear's output features, a row linear's input features, attention's
/// head features, an embedding's vocabulary. `vocabulary`: the split is
/// of a vocabulary, padded to a multiple of tp where tp does not divide it.
struct TensorParallelLoop {
  unsigned loop;
  bool vocabulary;
};
/// None for an op that only follows its operands' layout.
std::optional<TensorParallelLoop> tensorParallelLoop(Operation *op);
/// The dimension of `op`'s operand `operand` that tensor parallelism
/// splits: the op's tensor-parallel loop read through that operand's
/// indexing map (its ShardingInterface rule's); none where the operand
/// does not follow the loop (a row linear's bias) or the op has none. The
/// one answer ModelAnalysis, trident-shard-tgraph, the texec lowering and
/// the shard export read for where a parameter is split.
std::optional<int64_t> tensorParallelDim(Operation *op, unsigned operand);
/// Whether every reader of `v` is a tgraph op whose runtime kernels take
/// it from a bf16 tensor, so that the bf16 programs of `trident emit` keep
/// it in one (OpCost::savedBf16TensorBytes): a linear layer's input, the
/// input of GeLU, SiLU, ReLU and squared ReLU, SwiGLU's gate and up. These
/// are the ops lowered to the texec kernels whose inputs the kernel table
/// marks (KernelInfo::bf16Inputs, dialects/Exec/IR/ExecOps.cpp: linear,
/// gelu, silu, relu, squared_relu, swiglu and their backwards). The
/// emitter decides on the texec values themselves (ExecToCppKernels.cpp,
/// readByBf16Kernels); this is the cost model's reading of the same rule
/// off the model, kept to these ops by AnalysisTest.cpp's cases.
bool readFromBf16Tensors(Value v);
/// Whether the gradient of `v` (a linear layer's output), in the bf16
/// programs of `trident emit`, is a bf16 tensor when the linear's backward
/// reads it: every reader of `v` is an op whose backward writes that
/// gradient afresh (an activation, attention, a norm, dropout, the binary
/// cross-entropy of a logit), so only
/// the linear's backward reads it and the emitter moves it into bf16
/// (ExecToCppKernels.cpp, readByBf16Kernels). Not where an add reads `v`
/// (the residual stream's gradient, which other kernels read too) or the
/// loss (the logits' gradient is written in place of the logits). Checked
/// against the emitted programs of the end-to-end models by
/// AnalysisTest.cpp.
bool gradientInBf16Tensor(Value v);
} // namespace mlir::trident::graph

#define GET_OP_CLASSES
#include "dialects/Graph/IR/GraphOps.h.inc"

#endif // TRIDENT_DIALECTS_GRAPH_IR_GRAPHOPS_H
