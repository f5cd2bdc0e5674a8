//===- Activations.h - Scalar activation functions and derivatives --------===//
//
// One definition of each pointwise activation and its derivative, used by
// the CPU kernels (tensor loops in Cpu/CpuKernels.cpp) and by the routed
// experts (Common/MoE.cpp). GeLU: Hendrycks & Gimpel 2016, "Gaussian Error
// Linear Units", exact (erf) form and its tanh approximation; SiLU:
// Elfwing et al. 2018 (x * sigmoid(x)). Host and device functions (the
// CUDA kernels of the routed experts use them); expf, erff and tanhf are
// the functions std::exp, std::erf and std::tanh call for a float.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_RUNTIME_COMMON_ACTIVATIONS_H
#define TRIDENT_RUNTIME_COMMON_ACTIVATIONS_H

#include "HostDevice.h"

#include <cmath>

namespace trident::rt::act {

constexpr float kGeluC = 0.7978845608028654f;      // sqrt(2/pi)
constexpr float kGeluCubic = 0.044715f;            // tanh form (Hendrycks)
constexpr float kInvSqrt2 = 0.7071067811865476f;   // 1/sqrt(2)
constexpr float kInvSqrt2Pi = 0.3989422804014327f; // 1/sqrt(2 pi)

TRIDENT_HD inline float sigmoid(float v) { return 1.0f / (1.0f + expf(-v)); }

TRIDENT_HD inline float silu(float v) { return v / (1.0f + expf(-v)); }
TRIDENT_HD inline float siluGrad(float v) {
  float s = sigmoid(v);
  return s * (1.0f + v * (1.0f - s));
}

TRIDENT_HD inline float relu(float v) { return v > 0.0f ? v : 0.0f; }
TRIDENT_HD inline float reluGrad(float v) { return v > 0.0f ? 1.0f : 0.0f; }

// Squared ReLU (So et al. 2021, "Primer: Searching for Efficient
// Transformers for Language Modeling").
TRIDENT_HD inline float squaredRelu(float v) { return v > 0.0f ? v * v : 0.0f; }
TRIDENT_HD inline float squaredReluGrad(float v) {
  return v > 0.0f ? 2.0f * v : 0.0f;
}

TRIDENT_HD inline float geluErf(float v) {
  return 0.5f * v * (1.0f + erff(v * kInvSqrt2));
}
TRIDENT_HD inline float geluErfGrad(float v) {
  float cdf = 0.5f * (1.0f + erff(v * kInvSqrt2));
  return cdf + v * kInvSqrt2Pi * expf(-0.5f * v * v);
}

TRIDENT_HD inline float geluTanh(float v) {
  return 0.5f * v * (1.0f + tanhf(kGeluC * (v + kGeluCubic * v * v * v)));
}
TRIDENT_HD inline float geluTanhGrad(float v) {
  float t = tanhf(kGeluC * (v + kGeluCubic * v * v * v));
  float dt = (1.0f - t * t) * kGeluC * (1.0f + 3.0f * kGeluCubic * v * v);
  return 0.5f * (1.0f + t) + 0.5f * v * dt;
}

} // namespace trident::rt::act

#endif // TRIDENT_RUNTIME_COMMON_ACTIVATIONS_H
