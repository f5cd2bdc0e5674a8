//===- cuda_bf16.h - The bfloat16 type, emulated on the host ---*- C++ -*-===//
//
// Part of the CUDA emulation (docs/runtime.md, "CUDA source on the CPU"):
// the subset of the toolkit's cuda_bf16.h that lib/Runtime/Cuda uses. A
// __nv_bfloat16 holds the 16 bits of a bfloat16 (fp32's upper half); the
// conversion from float rounds to nearest, ties to even, as the toolkit's
// __float2bfloat16_rn does.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_CUDA_EMU_CUDA_BF16_H
#define TRIDENT_CUDA_EMU_CUDA_BF16_H

#include <cstdint>
#include <cstring>

struct __nv_bfloat16 {
  uint16_t x;
};

inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7f800000u) == 0x7f800000u) {
    if (u & 0x007fffffu)
      u |= 0x00400000u; // a NaN stays a NaN
  } else {
    u += 0x7fffu + ((u >> 16) & 1u);
  }
  return __nv_bfloat16{uint16_t(u >> 16)};
}

inline float __bfloat162float(__nv_bfloat16 b) {
  uint32_t u = uint32_t(b.x) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

#endif // TRIDENT_CUDA_EMU_CUDA_BF16_H
