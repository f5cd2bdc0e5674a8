//===- my-trident-opt.cpp - a tool of someone else's, on Trident ----------===//
//
// Registers the tgraph and texec dialects and Trident's passes from an
// installed Trident, then runs mlir-opt's driver.
//
//===----------------------------------------------------------------------===//

#include "dialects/Exec/IR/ExecOps.h"
#include "dialects/Graph/IR/GraphDialect.h"
#include "trident/Conversion/Passes.h"
#include "trident/Transforms/Passes.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::trident::graph::TGraphDialect,
                  mlir::trident::exec::TExecDialect>();
  mlir::trident::registerTridentPasses();
  mlir::trident::registerTridentConversionPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "an out-of-tree Trident tool\n", registry));
}
