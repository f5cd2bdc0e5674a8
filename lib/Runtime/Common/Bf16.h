//===- Bf16.h - Rounding an fp32 value to bfloat16 (host and device) -----===//
//
// bfloat16 is fp32 with its 16 low mantissa bits dropped: 1 sign bit, 8
// exponent bits, 7 stored mantissa bits (8 significant), so every bf16
// value is an fp32 value and the rounding below, to nearest with ties to
// even (as cuda_bf16.h's __float2bfloat16_rn and PyTorch's .to(bfloat16)
// do), is exactly what storing a value in bf16 and reading it back does.
// Included by the CPU kernels and by CudaKernels.cu (device code under
// nvcc, host code under the emulation).
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_RUNTIME_COMMON_BF16_H
#define TRIDENT_RUNTIME_COMMON_BF16_H

#include "HostDevice.h"

#include <cstdint>
#include <cstring>

namespace trident::rt::detail {

/// `x` rounded to the nearest bfloat16 (ties to even); infinities stay,
/// NaNs stay NaN (quieted), values past bf16's largest finite value
/// (3.3895e38) round to infinity as the conversion does.
TRIDENT_HD inline float roundToBf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7f800000u) == 0x7f800000u) {
    if (u & 0x007fffffu)
      u |= 0x00400000u; // a NaN keeps a mantissa bit above the cut
  } else {
    u += 0x7fffu + ((u >> 16) & 1u);
  }
  u &= 0xffff0000u;
  float y;
  std::memcpy(&y, &u, sizeof y);
  return y;
}

/// The bfloat16 nearest `x` as its 16 bits (the upper half of the fp32
/// roundToBf16 gives): what a bf16 tensor stores.
TRIDENT_HD inline uint16_t bf16Bits(float x) {
  float r = roundToBf16(x);
  uint32_t u;
  std::memcpy(&u, &r, sizeof u);
  return uint16_t(u >> 16);
}

/// The fp32 value of a bf16 tensor's element (exact).
TRIDENT_HD inline float bf16Value(uint16_t bits) {
  uint32_t u = uint32_t(bits) << 16;
  float y;
  std::memcpy(&y, &u, sizeof y);
  return y;
}

} // namespace trident::rt::detail

#endif // TRIDENT_RUNTIME_COMMON_BF16_H
