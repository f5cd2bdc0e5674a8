//===- ParamCompare.h - Reading and comparing parameter dumps ---*- C++ -*-===//
//
// Reads the per-rank files that rt::ParamDump writes, assembles every
// parameter from its shards, and compares two dumps element by element.
// No MPI: used by tools/trident-compare-params and the tests.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_RUNTIME_PARAMCOMPARE_H
#define TRIDENT_RUNTIME_PARAMCOMPARE_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace trident::rt {

/// A parameter assembled from all shards of a dump.
struct AssembledParam {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

/// Reads every "rank*.params" file of `dir` and assembles each parameter.
/// Fails (returns false, `error` names the file and line) on a malformed
/// file, shards that disagree on the global shape, an element no shard
/// covers, or replicated copies that differ by more than `replicaRtol`
/// relative.
bool readParamDump(const std::string &dir,
                   std::map<std::string, AssembledParam> &out,
                   std::string &error, double replicaRtol = 0.0);

/// Outcome of comparing two assembled dumps.
struct CompareResult {
  bool ok = true;
  std::vector<std::string> problems; ///< missing/extra names, shape changes
  std::string worstName;             ///< parameter with the worst element
  int64_t worstIndex = -1;           ///< its flat index
  double worstA = 0, worstB = 0;     ///< the two values
  double worstRatio = 0; ///< |a-b| / (rtol*max(|a|,|b|) + atol); > 1 fails
  int64_t compared = 0, mismatched = 0;
};

/// Elementwise check |a - b| <= rtol * max(|a|, |b|) + atol over every
/// parameter present in either dump.
CompareResult compareParamDumps(const std::map<std::string, AssembledParam> &a,
                                const std::map<std::string, AssembledParam> &b,
                                double rtol, double atol);

} // namespace trident::rt

#endif // TRIDENT_RUNTIME_PARAMCOMPARE_H
