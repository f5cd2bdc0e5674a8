//===- DType.h - Element types shared by every library --------*- C++ -*-===//

#ifndef TRIDENT_SUPPORT_DTYPE_H
#define TRIDENT_SUPPORT_DTYPE_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace trident {

/// Element type of activations and parameters.
enum class DType : uint8_t { F32, BF16, F16, FP8 };

/// Bytes of one element of `t`.
constexpr int64_t dtypeBytes(DType t) {
  switch (t) {
  case DType::F32:
    return 4;
  case DType::BF16:
  case DType::F16:
    return 2;
  case DType::FP8:
    return 1;
  }
  return 4;
}

/// "fp32", "bf16", "fp16", "fp8".
std::string_view dtypeName(DType t);
/// Parses the names above (and "float32", "bfloat16", "float16"); nullopt
/// for anything else.
std::optional<DType> parseDType(std::string_view name);

} // namespace trident

#endif // TRIDENT_SUPPORT_DTYPE_H
