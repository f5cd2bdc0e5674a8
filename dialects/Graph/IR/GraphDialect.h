//===- GraphDialect.h - tgraph dialect ------------------------*- C++ -*-===//

#ifndef TRIDENT_DIALECTS_GRAPH_IR_GRAPHDIALECT_H
#define TRIDENT_DIALECTS_GRAPH_IR_GRAPHDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Graph/IR/GraphOpsDialect.h.inc"

#endif // TRIDENT_DIALECTS_GRAPH_IR_GRAPHDIALECT_H
