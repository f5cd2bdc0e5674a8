//===- GraphBuilder.h - ModelConfig to tgraph, and model loading -*- C++ -*-===//
//
// The one place that turns a normalised ModelConfig into tgraph IR, and the
// entry point the tools use to load `--model` (a zoo name, a config.json
// path or a .mlir file).
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_FRONTEND_GRAPHBUILDER_H
#define TRIDENT_FRONTEND_GRAPHBUILDER_H

#include "trident/Frontend/ModelConfig.h"
#include "trident/Support/Status.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlir {
class DialectRegistry;
namespace trident::graph {
class ModelOp;
} // namespace trident::graph
} // namespace mlir

namespace trident::frontend {

/// Registers the dialects a loaded model may contain.
void registerFrontendDialects(mlir::DialectRegistry &registry);

/// Builds a module holding one `tgraph.model` for `config`. Identical
/// consecutive layers become one `tgraph.repeat`; a periodic pattern
/// (alternating sliding/full attention) becomes one repeat of the period.
mlir::OwningOpRef<mlir::ModuleOp> buildModel(mlir::MLIRContext &context,
                                             const ModelConfig &config);

/// The `tgraph.model` symbol of a model name: every character other than a
/// letter or digit becomes '_' ("tiny-llama" -> "tiny_llama"); "model"
/// for an empty name. Plans name their model the same way.
std::string modelSymbol(std::string_view name);

/// A loaded model: the module, and where it came from.
struct LoadedModel {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string source;                ///< what --model said
  std::optional<ModelConfig> config; ///< absent for .mlir input
  std::vector<std::string> warnings; ///< unknown config keys, ...
  /// SHA-256 of the file's bytes (lowercase hex); "" for a zoo model.
  std::string sha256;
  mlir::trident::graph::ModelOp model();
};

/// Loads `spec`: a zoo name, a path to a config.json, or a .mlir file.
/// `seqLen` (> 0) overrides the model's sequence length. Errors name the
/// input and the problem.
Result<LoadedModel> loadModel(mlir::MLIRContext &context,
                              const std::string &spec,
                              int64_t seqLen = 0);

} // namespace trident::frontend

#endif // TRIDENT_FRONTEND_GRAPHBUILDER_H
