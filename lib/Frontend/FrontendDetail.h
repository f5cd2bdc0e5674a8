//===- FrontendDetail.h - Private helpers of the config frontend -*- C++
//-*-===//
//
// Shared by the .cpp files of TridentFrontendConfig only; not installed.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_LIB_FRONTEND_FRONTENDDETAIL_H
#define TRIDENT_LIB_FRONTEND_FRONTENDDETAIL_H

#include "trident/Frontend/ModelSource.h"

#include <cstdint>
#include <limits>

namespace trident::frontend::detail {

/// Largest accepted value of any single size (2^31 - 1). Real models stay
/// far below it (the largest DLRM table has 40 M rows), and it keeps the
/// product of any two sizes inside int64, so downstream cost formulas
/// (seq * hidden, rows * dim, ...) cannot overflow on an accepted config.
/// The parameter totals, which multiply more terms, are computed with
/// overflow checks on top of it.
inline constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();

/// Number of layers with routed experts, computed without iterating over
/// numLayers (which an unvalidated config may make huge).
int64_t moeLayerCount(const ModelConfig &config);

/// Parameter counts with overflow checking. On overflow `overflow` is set
/// and the returned counts are meaningless.
ParamCounts countParamsChecked(const ModelConfig &config, bool &overflow);

} // namespace trident::frontend::detail

#endif // TRIDENT_LIB_FRONTEND_FRONTENDDETAIL_H
