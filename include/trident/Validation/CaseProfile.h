//===- CaseProfile.h - The LayerProfile of a validation case ----*- C++ -*-===//

#ifndef TRIDENT_VALIDATION_CASEPROFILE_H
#define TRIDENT_VALIDATION_CASEPROFILE_H

#include "trident/Cost/LayerProfile.h"
#include "trident/Support/Status.h"
#include "trident/Validation/Validation.h"

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace trident::validation {

/// Imports a case's config.json into tgraph and analyses it at the case's
/// sequence length (a learned position table is stretched to it).
Result<LayerProfile> caseProfile(mlir::MLIRContext &context, const Case &c);

} // namespace trident::validation

#endif // TRIDENT_VALIDATION_CASEPROFILE_H
