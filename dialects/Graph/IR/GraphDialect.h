//===- GraphDialect.h - tgraph dialect ------------------------*- C++ -*-===//

#ifndef TRIDENT_DIALECTS_GRAPH_IR_GRAPHDIALECT_H
#define TRIDENT_DIALECTS_GRAPH_IR_GRAPHDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Graph/IR/GraphOpsDialect.h.inc"

namespace mlir {
class DialectRegistry;
namespace trident::graph {
/// Attaches upstream ShardingInterface to the elementwise tgraph ops (as
/// external models: they need no code of their own), so that sharding
/// propagates through them and shard-partition rewrites them.
void registerShardingInterfaceModels(DialectRegistry &registry);
} // namespace trident::graph
} // namespace mlir

#endif // TRIDENT_DIALECTS_GRAPH_IR_GRAPHDIALECT_H
