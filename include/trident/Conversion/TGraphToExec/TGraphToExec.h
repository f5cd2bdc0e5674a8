//===- TGraphToExec.h - tgraph + plan to a texec program -------*- C++ -*-===//
//
// Builds the training step of a tgraph model (forward, loss, backward,
// optimizer) for one plan as a texec.program: pipeline stages and virtual
// chunks from the plan's layer split, Megatron tensor and sequence
// parallelism inside a stage, data parallelism and ZeRO around it, and the
// schedule from the Schedule library. docs/texec.md explains the design.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_CONVERSION_TGRAPHTOEXEC_TGRAPHTOEXEC_H
#define TRIDENT_CONVERSION_TGRAPHTOEXEC_TGRAPHTOEXEC_H

#include "trident/Plan/Plan.h"
#include "trident/Support/Status.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace mlir::trident::graph {
class ModelOp;
} // namespace mlir::trident::graph

namespace trident::conversion {

/// The optimizer of the training step.
struct TrainingOptions {
  std::string optimizer = "adam"; ///< "adam" or "sgd"
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  /// What the program computes in: "f32", "bf16" (or another name
  /// parseDType knows), or empty for the plan's own `precision`. Master
  /// weights, gradients and optimizer state are fp32 either way, whatever
  /// the model's parameter type (docs/emit.md, "bf16 mixed precision").
  std::string precision;
  /// The step of DeepSeek-V3's auxiliary-loss-free load balancing: a
  /// selection bias moves by this much per step towards balanced experts
  /// (texec.param load_balance). 0.001 is the update speed of DeepSeek-V3's
  /// pre-training ("DeepSeek-V3 Technical Report", 2024, section 4.2:
  /// gamma = 0.001 for the first 14.3T tokens); 0 freezes the bias.
  double moeBiasUpdateRate = 1e-3;
  /// How messages name the plan and the model (plan::verify).
  std::string planSource = "plan";
  std::string modelSource;
};

/// The texec.program precision a plan trains in: `requested` when not
/// empty, else the plan's `precision`; "f32" or "bf16". fp16 (it needs
/// loss scaling) and fp8 (per-tensor scales) are not emitted: the message
/// says so and names the option that picks one that is.
::trident::Result<std::string>
programPrecision(const ::trident::plan::Plan &plan,
                 const std::string &requested);

/// Lowers `model` under `plan`. The plan is first held to the model
/// (plan::verify: its own rules, then the model's name, layers, shape and
/// sequence length). On failure emits diagnostics (at the tgraph op
/// concerned, or at the model for plan-level problems, naming the plan
/// field) and returns null.
mlir::OwningOpRef<mlir::ModuleOp>
lowerToExec(mlir::trident::graph::ModelOp model, const ::trident::plan::Plan &plan,
            const TrainingOptions &options);

} // namespace trident::conversion

#endif // TRIDENT_CONVERSION_TGRAPHTOEXEC_TGRAPHTOEXEC_H
