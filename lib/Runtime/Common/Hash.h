//===- Hash.h - Counter-based hashing shared by host and device code ------===//
//
// Initial parameters, synthetic data and dropout masks are hashes of global
// coordinates, so that every plan draws the same values for the same
// elements. Included by host sources and by the CUDA kernels (TRIDENT_HD
// marks the functions both compile).
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_RUNTIME_COMMON_HASH_H
#define TRIDENT_RUNTIME_COMMON_HASH_H

#include "HostDevice.h"

#include <cstdint>

namespace trident::rt::hash {

/// SplitMix64 finaliser (Steele, Lea, Flood, "Fast splittable pseudorandom
/// number generators", OOPSLA 2014): a bijective 64-bit mixer.
TRIDENT_HD inline uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// The key of one dropout call: (seed, step, site) mixed.
TRIDENT_HD inline uint64_t dropoutKey(uint64_t seed, int64_t step,
                                      int64_t site) {
  return mix64(mix64(seed ^ mix64(uint64_t(site))) + uint64_t(step));
}

/// round(rate * 2^24): an element whose top 24 hash bits fall below it is
/// dropped.
inline uint32_t dropoutThreshold(float rate) {
  double t = double(rate) * double(1u << 24) + 0.5;
  return t <= 0 ? 0u : t >= double(1u << 24) ? (1u << 24) : uint32_t(t);
}

/// Whether global element `index` of the call with `key` is kept.
TRIDENT_HD inline bool dropoutKeep(uint64_t key, uint64_t index,
                                   uint32_t threshold) {
  return uint32_t(mix64(key + mix64(index)) >> 40) >= threshold;
}

} // namespace trident::rt::hash

#endif // TRIDENT_RUNTIME_COMMON_HASH_H
