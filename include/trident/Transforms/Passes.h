//===- Passes.h - Trident passes --------------------------------*- C++ -*-===//

#ifndef TRIDENT_TRANSFORMS_PASSES_H
#define TRIDENT_TRANSFORMS_PASSES_H

#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Pass/Pass.h"

namespace mlir::trident {

#define GEN_PASS_DECL
#include "trident/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "trident/Transforms/Passes.h.inc"

} // namespace mlir::trident

#endif // TRIDENT_TRANSFORMS_PASSES_H
