//===- trident-translate.cpp - IR to C++ translations ---------------------===//
//
// Thin: registers the texec -> C++ translation of lib/Target with upstream's
// translation driver (`trident-translate --texec-to-cpp in.mlir`).
//
//===----------------------------------------------------------------------===//

#include "dialects/Exec/IR/ExecOps.h"
#include "trident/Target/ExecToCpp.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

int main(int argc, char **argv) {
  mlir::TranslateFromMLIRRegistration toCpp(
      "texec-to-cpp", "translate a texec.program to the main.cpp of its SPMD "
                      "program",
      [](mlir::Operation *op, llvm::raw_ostream &os) {
        auto module = llvm::dyn_cast<mlir::ModuleOp>(op);
        if (!module)
          return mlir::LogicalResult(
              op->emitError("texec-to-cpp: expected a builtin.module"));
        return ::trident::target::emitModuleCpp(module, os);
      },
      [](mlir::DialectRegistry &registry) {
        registry.insert<mlir::trident::exec::TExecDialect>();
      });
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "Trident translation driver"));
}
