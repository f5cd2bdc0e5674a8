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
} // namespace mlir::trident::graph

#define GET_OP_CLASSES
#include "dialects/Graph/IR/GraphOps.h.inc"

#endif // TRIDENT_DIALECTS_GRAPH_IR_GRAPHOPS_H
