//===- GraphDialect.h - tgraph dialect ------------------------*- C++ -*-===//

#ifndef TRIDENT_DIALECTS_GRAPH_IR_GRAPHDIALECT_H
#define TRIDENT_DIALECTS_GRAPH_IR_GRAPHDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Graph/IR/GraphOpsDialect.h.inc"

namespace mlir {
class DialectRegistry;
namespace trident::graph {
/// Attaches upstream `shard`'s ShardingInterface to the tgraph ops
/// (ShardingInterfaceImpl.cpp: linear, matmul, attention, the norms, the
/// embeddings, the losses, mixture of experts, softmax and the elementwise
/// ops), the one description of how each op splits, so that upstream
/// sharding-propagation carries shardings through a model and
/// shard-partition rewrites it per device.
void registerShardingInterfaceModels(DialectRegistry &registry);
} // namespace trident::graph
} // namespace mlir

#endif // TRIDENT_DIALECTS_GRAPH_IR_GRAPHDIALECT_H
