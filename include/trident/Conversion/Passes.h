//===- Passes.h - Trident's lowerings ---------------------------*- C++ -*-===//

#ifndef TRIDENT_CONVERSION_PASSES_H
#define TRIDENT_CONVERSION_PASSES_H

#include "dialects/Exec/IR/ExecOps.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Pass/Pass.h"

namespace mlir::trident {

#define GEN_PASS_DECL
#include "trident/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "trident/Conversion/Passes.h.inc"

} // namespace mlir::trident

#endif // TRIDENT_CONVERSION_PASSES_H
