//===- GraphDialect.cpp - tgraph dialect registration ---------------------===//

#include "dialects/Graph/IR/GraphDialect.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::trident::graph;

#include "dialects/Graph/IR/GraphOpsDialect.cpp.inc"
#include "dialects/Graph/IR/GraphEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Graph/IR/GraphAttrs.cpp.inc"

void TGraphDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Graph/IR/GraphAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Graph/IR/GraphOps.cpp.inc"
      >();
}

void mlir::trident::graph::registerShardingInterfaceModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TGraphDialect *) {
    using shard::ElementwiseShardingInterface;
    AddOp::attachInterface<ElementwiseShardingInterface<AddOp>>(*ctx);
    MulOp::attachInterface<ElementwiseShardingInterface<MulOp>>(*ctx);
    GeluOp::attachInterface<ElementwiseShardingInterface<GeluOp>>(*ctx);
    SiluOp::attachInterface<ElementwiseShardingInterface<SiluOp>>(*ctx);
    ReluOp::attachInterface<ElementwiseShardingInterface<ReluOp>>(*ctx);
    SquaredReluOp::attachInterface<
        ElementwiseShardingInterface<SquaredReluOp>>(*ctx);
    TanhOp::attachInterface<ElementwiseShardingInterface<TanhOp>>(*ctx);
    SwiGLUOp::attachInterface<ElementwiseShardingInterface<SwiGLUOp>>(*ctx);
    GeGLUOp::attachInterface<ElementwiseShardingInterface<GeGLUOp>>(*ctx);
    DropoutOp::attachInterface<ElementwiseShardingInterface<DropoutOp>>(*ctx);
  });
}
