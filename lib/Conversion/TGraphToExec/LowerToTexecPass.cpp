//===- LowerToTexecPass.cpp - trident-lower-to-texec ----------------------===//
//
// A thin pass over lowerToExec: the plan comes from the model's
// `#tgraph.plan` (Conversion/PlanAttr), the training options from the
// pass options, and the module's model is replaced by the texec program.
//
//===----------------------------------------------------------------------===//

#include "trident/Conversion/Passes.h"

#include "trident/Conversion/PlanAttr/PlanAttr.h"
#include "trident/Conversion/TGraphToExec/TGraphToExec.h"

#include "mlir/IR/BuiltinOps.h"

#define DEBUG_TYPE "trident-lower-to-texec"

namespace mlir::trident {
#define GEN_PASS_DEF_LOWERTOTEXECPASS
#include "trident/Conversion/Passes.h.inc"
} // namespace mlir::trident

using namespace mlir;
using namespace mlir::trident::graph;

namespace {

constexpr StringLiteral kPass = "trident-lower-to-texec";

struct LowerToTexecPass
    : public mlir::trident::impl::LowerToTexecPassBase<LowerToTexecPass> {
  using LowerToTexecPassBase::LowerToTexecPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto planned = ::trident::conversion::plannedModel(module, kPass);
    if (failed(planned))
      return signalPassFailure();
    auto &[model, plan] = *planned;
    ::trident::conversion::TrainingOptions options;
    options.optimizer = optimizer;
    options.lr = lr;
    options.precision = trainInF32 ? std::string("fp32") : precision;
    options.moeBiasUpdateRate = moeBiasRate;
    options.planSource = ::trident::conversion::kPlanAttrName.str();
    OwningOpRef<ModuleOp> lowered =
        ::trident::conversion::lowerToExec(model, plan, options);
    if (!lowered)
      return signalPassFailure();
    // The program takes the model's place.
    Block *body = module.getBody();
    for (Operation &op :
         llvm::make_early_inc_range(lowered->getBody()->getOperations()))
      op.moveBefore(body, body->end());
    model.erase();
  }
};

} // namespace
