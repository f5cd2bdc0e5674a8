//===- ExpertGroups.h - Group-limited expert routing, checked -*- C++ -*-===//
//
// DeepSeek-V3's router picks a token's top-k experts from its best
// `topkGroups` of `groups` equal groups. The model config, the tgraph and
// texec verifiers and the runtime check the same rule here (header-only
// and free of MLIR, so that emitted programs can include it).
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SUPPORT_EXPERTGROUPS_H
#define TRIDENT_SUPPORT_EXPERTGROUPS_H

#include <cstdint>
#include <string>

namespace trident {

/// "" when `groups` divides `experts`, 1 <= topkGroups <= groups and the
/// chosen groups hold at least topK experts; else what is wrong.
inline std::string checkExpertGroups(int64_t experts, int64_t topK,
                                     int64_t groups, int64_t topkGroups) {
  if (groups < 1 || experts % groups != 0)
    return "groups " + std::to_string(groups) + " must divide the " +
           std::to_string(experts) + " experts";
  if (topkGroups < 1 || topkGroups > groups)
    return "topk groups " + std::to_string(topkGroups) + " must be in [1, " +
           std::to_string(groups) + "]";
  if (topK > topkGroups * (experts / groups))
    return "the chosen groups must hold topK within those groups: top-k " +
           std::to_string(topK) + " exceeds their " +
           std::to_string(topkGroups * (experts / groups)) + " experts";
  return "";
}

} // namespace trident

#endif // TRIDENT_SUPPORT_EXPERTGROUPS_H
