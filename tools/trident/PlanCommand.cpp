//===- PlanCommand.cpp - trident plan -------------------------------------===//

#include "Commands.h"

namespace trident::tool {

int runPlan(mlir::MLIRContext &) {
  return fail("plan: the search is being written (issue 4)", 2);
}

} // namespace trident::tool
