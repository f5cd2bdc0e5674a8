//===- DType.cpp - Element type names -------------------------------------===//

#include "trident/Support/DType.h"

namespace trident {

std::string_view dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "fp32";
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "fp16";
  case DType::FP8:
    return "fp8";
  }
  return "fp32";
}

std::optional<DType> parseDType(std::string_view name) {
  if (name == "fp32" || name == "float32" || name == "f32")
    return DType::F32;
  if (name == "bf16" || name == "bfloat16")
    return DType::BF16;
  if (name == "fp16" || name == "float16" || name == "f16")
    return DType::F16;
  if (name == "fp8" || name == "float8")
    return DType::FP8;
  return std::nullopt;
}

} // namespace trident
