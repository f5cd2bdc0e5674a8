//===- trident-opt.cpp - Trident's MLIR pass driver -----------------------===//
//
// Registers only what Trident's pipelines need: the tgraph dialect, the
// upstream dialects its IR and exports use, and Trident's passes.
//
//===----------------------------------------------------------------------===//

#include "dialects/Exec/IR/ExecOps.h"
#include "dialects/Graph/IR/GraphDialect.h"
#include "trident/Conversion/Passes.h"
#include "trident/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::trident::test {
void registerTestLayerProfilePass();
} // namespace mlir::trident::test

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::trident::graph::TGraphDialect,
                  mlir::trident::exec::TExecDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect,
                  mlir::shard::ShardDialect, mlir::linalg::LinalgDialect,
                  mlir::math::MathDialect>();
  mlir::trident::graph::registerShardingInterfaceModels(registry);
  mlir::trident::registerTridentPasses();
  mlir::trident::registerTridentConversionPasses();
  mlir::trident::test::registerTestLayerProfilePass();
  // Upstream sharding passes, for plans materialised as shard annotations.
  mlir::shard::registerShardingPropagation();
  mlir::shard::registerPartition();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Trident optimizer driver\n", registry));
}
