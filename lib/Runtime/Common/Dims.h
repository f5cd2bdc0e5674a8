//===- Dims.h - Shapes as text in the runtime's files ----------*- C++ -*-===//
//
// "2,3" for a shape and "-" for a scalar's: the parameter dumps
// (ParamDump, trident-compare-params) and the checkpoints write and read
// shapes this way.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_RUNTIME_COMMON_DIMS_H
#define TRIDENT_RUNTIME_COMMON_DIMS_H

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace trident::rt::detail {

/// "2,3"; "-" for no dimensions.
inline std::string joinDims(const std::vector<int64_t> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i)
      s += ',';
    s += std::to_string(v[i]);
  }
  return s.empty() ? "-" : s;
}

/// The inverse of joinDims; false for anything else (an empty item, a
/// negative or absurd extent, 2^40 and beyond).
inline bool parseDims(const std::string &text, std::vector<int64_t> &dims) {
  dims.clear();
  if (text == "-")
    return true;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char *end = nullptr;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0 || v > (1LL << 40))
      return false;
    dims.push_back(v);
  }
  return !dims.empty();
}

} // namespace trident::rt::detail

#endif // TRIDENT_RUNTIME_COMMON_DIMS_H
