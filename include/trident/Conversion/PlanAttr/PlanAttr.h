//===- PlanAttr.h - The plan record as the #tgraph.plan attribute -*- C++ -*-===//
//
// One converter between the plan record (plan::Plan, Plan/Plan.h) and its
// IR form, the `#tgraph.plan` attribute a `tgraph.model` carries as
// `tgraph.plan` (dialects/Graph/IR/GraphBase.td). The axes travel as a
// dictionary keyed by the axis table's JSON keys (kAxes), written and read
// by one loop over the table.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_CONVERSION_PLANATTR_PLANATTR_H
#define TRIDENT_CONVERSION_PLANATTR_PLANATTR_H

#include "dialects/Graph/IR/GraphOps.h"
#include "trident/Plan/Plan.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <utility>

namespace trident::conversion {

/// The name of the model attribute that holds the plan.
inline constexpr llvm::StringLiteral kPlanAttrName = "tgraph.plan";

/// `plan` as an attribute (the stages' recomputation, not their memory and
/// time figures, which the IR does not use).
mlir::trident::graph::PlanAttr toPlanAttr(mlir::MLIRContext *context,
                                          const plan::Plan &plan);

/// The plan `attr` holds: the fields toPlanAttr writes, one stage entry per
/// pipeline stage with its recomputation and layer split. An axis missing
/// or out of its row's bounds is an error naming it.
Result<plan::Plan> planFromAttr(mlir::trident::graph::PlanAttr attr);

/// The plan `model` carries, held to the model (plan::verify with the
/// model's profile at its own sequence length). On failure, emits an error
/// at the model prefixed by `pass` and returns failure.
mlir::FailureOr<plan::Plan> modelPlan(mlir::trident::graph::ModelOp model,
                                      llvm::StringRef pass);

/// The module's one `tgraph.model` and the plan it carries (modelPlan).
/// On failure (no model, several, or no valid plan), emits an error
/// prefixed by `pass` and returns failure.
mlir::FailureOr<std::pair<mlir::trident::graph::ModelOp, plan::Plan>>
plannedModel(mlir::ModuleOp module, llvm::StringRef pass);

/// Sets `tgraph.plan` on `model` and each top-level `tgraph.repeat`'s
/// `tgraph.stage` (the pipeline stage of each of its iterations). The plan
/// must have been held to the model (plan::verify); a plan with data
/// shares (replicas of different micro-batch counts) is refused, as the
/// attribute holds one count.
mlir::LogicalResult attachPlan(mlir::trident::graph::ModelOp model,
                               const plan::Plan &plan, llvm::StringRef pass);

} // namespace trident::conversion

#endif // TRIDENT_CONVERSION_PLANATTR_PLANATTR_H
