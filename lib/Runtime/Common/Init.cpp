//===- Init.cpp - Deterministic parameters and synthetic data -------------===//
//
// Values depend on global coordinates only (never on the rank or the shard),
// so a sharded run starts from exactly the single-rank state.
//
//===----------------------------------------------------------------------===//

#include "../Internal.h"
#include "Hash.h"

namespace trident::rt {

using detail::check;

namespace {
using hash::mix64;

/// FNV-1a over the name (Fowler-Noll-Vo), then mixed.
uint64_t hashName(const std::string &name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return mix64(h);
}

/// Uniform in [-1, 1) from the top 24 bits (exact in float).
float unitFromBits(uint64_t bits) {
  return static_cast<float>(static_cast<int32_t>(bits >> 40) - (1 << 23)) /
         static_cast<float>(1 << 23);
}
} // namespace

float initParamValue(const std::string &name, uint64_t flatIndex,
                     uint64_t seed, float scale) {
  uint64_t key = mix64(seed ^ hashName(name));
  return scale * unitFromBits(mix64(key + mix64(flatIndex)));
}

void initParam(Tensor &shard, const std::string &name,
               const std::vector<int64_t> &globalShape,
               const std::vector<int64_t> &shardOffset,
               const std::vector<int64_t> &shardShape, uint64_t seed,
               float scale, ShardBlocks blocks) {
  const char *fn = "initParam";
  size_t r = globalShape.size();
  check(shardOffset.size() == r && shardShape.size() == r, fn,
        name + ": offset " + detail::shapeToString(shardOffset) + " and shape " +
            detail::shapeToString(shardShape) + " must have the rank of " +
            detail::shapeToString(globalShape));
  const int bd =
      detail::checkShardBlocks(blocks, globalShape, shardShape, name, fn);
  const int64_t count = bd < 0 ? 1 : blocks.count;
  // Along the blocked dimension: one block's extent, global and local.
  auto extent = [&](const std::vector<int64_t> &shape, size_t d) {
    return int(d) == bd ? shape[d] / count : shape[d];
  };
  for (size_t i = 0; i < r; ++i)
    check(shardOffset[i] >= 0 && shardShape[i] >= 0 &&
              shardOffset[i] + extent(shardShape, i) <=
                  extent(globalShape, i),
          fn, name + ": shard at " + detail::shapeToString(shardOffset) +
                  " of shape " + detail::shapeToString(shardShape) +
                  " exceeds " + detail::shapeToString(globalShape));
  int64_t n = numelOf(shardShape);
  check(shard.numel() == n, fn,
        name + ": tensor has " + std::to_string(shard.numel()) +
            " elements, shard shape " + detail::shapeToString(shardShape));
  std::vector<float> host(n);
  std::vector<int64_t> idx(r, 0);
  uint64_t key = mix64(seed ^ hashName(name));
  for (int64_t e = 0; e < n; ++e) {
    uint64_t flat = 0;
    for (size_t d = 0; d < r; ++d) {
      const int64_t g =
          int(d) == bd ? detail::blockedGlobalIndex(idx[d], shardShape[d],
                                                    globalShape[d], count,
                                                    shardOffset[d])
                       : shardOffset[d] + idx[d];
      flat = flat * globalShape[d] + g;
    }
    host[e] = scale * unitFromBits(mix64(key + mix64(flat)));
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < shardShape[d])
        break;
      idx[d] = 0;
    }
  }
  shard.fromHost(host);
}

void fillConstant(Tensor &t, float value) {
  t.fromHost(std::vector<float>(t.numel(), value));
}

int32_t syntheticToken(uint64_t seed, int64_t step, int64_t sample,
                       int64_t pos, int64_t vocab) {
  check(vocab > 0, "syntheticToken", "vocab must be positive");
  uint64_t h = mix64(seed ^ 0x5eed0fda7aULL);
  h = mix64(h + static_cast<uint64_t>(step));
  h = mix64(h + static_cast<uint64_t>(sample));
  h = mix64(h + static_cast<uint64_t>(pos));
  return static_cast<int32_t>(h % static_cast<uint64_t>(vocab));
}

void syntheticBatch(Tensor &tokens, Tensor &targets, uint64_t seed,
                    int64_t step, int64_t firstSample, int64_t numSamples,
                    int64_t firstPos, int64_t seqLen, int64_t vocab) {
  const char *fn = "syntheticBatch";
  int64_t n = numSamples * seqLen;
  check(tokens.numel() == n && targets.numel() == n, fn,
        "tokens " + tokens.shapeString() + " and targets " +
            targets.shapeString() + " must hold numSamples*seqLen = " +
            std::to_string(n) + " values");
  std::vector<int32_t> tok(n), tgt(n);
  for (int64_t s = 0; s < numSamples; ++s)
    for (int64_t p = 0; p < seqLen; ++p) {
      int64_t pos = firstPos + p;
      tok[s * seqLen + p] =
          syntheticToken(seed, step, firstSample + s, pos, vocab);
      tgt[s * seqLen + p] =
          syntheticToken(seed, step, firstSample + s, pos + 1, vocab);
    }
  tokens.fromHostI32(tok);
  targets.fromHostI32(tgt);
}

void syntheticIds(Tensor &ids, uint64_t seed, const std::string &stream,
                  int64_t step, int64_t firstSample, int64_t numSamples,
                  int64_t firstPos, int64_t seqLen, int64_t range) {
  const char *fn = "syntheticIds";
  check(range > 0, fn, "range must be positive");
  check(seqLen >= 0 && numSamples >= 0, fn, "negative count");
  const int64_t per = seqLen ? seqLen : 1;
  const int64_t n = numSamples * per;
  check(ids.numel() == n, fn,
        "ids " + ids.shapeString() + " must hold " + std::to_string(n) +
            " values");
  // Its own stream: the seed mixed with the input's name, so token types
  // are not the tokens reduced modulo 2.
  const uint64_t streamSeed = mix64(seed ^ hashName(stream));
  std::vector<int32_t> host(n);
  for (int64_t s = 0; s < numSamples; ++s)
    for (int64_t p = 0; p < per; ++p)
      host[s * per + p] = syntheticToken(streamSeed, step, firstSample + s,
                                         seqLen ? firstPos + p : 0, range);
  ids.fromHostI32(host);
}

void syntheticFloats(Tensor &t, uint64_t seed, const std::string &stream,
                     int64_t step, int64_t firstSample, int64_t numSamples,
                     int64_t perSample) {
  const char *fn = "syntheticFloats";
  check(numSamples >= 0 && perSample > 0, fn,
        "numSamples must be >= 0 and perSample positive");
  check(t.numel() == numSamples * perSample, fn,
        t.shapeString() + " must hold " +
            std::to_string(numSamples * perSample) + " values");
  const uint64_t key = mix64(mix64(seed ^ hashName(stream)) +
                             static_cast<uint64_t>(step));
  std::vector<float> host(size_t(numSamples * perSample));
  for (int64_t s = 0; s < numSamples; ++s) {
    const uint64_t sampleKey =
        mix64(key + static_cast<uint64_t>(firstSample + s));
    for (int64_t e = 0; e < perSample; ++e)
      host[size_t(s * perSample + e)] =
          unitFromBits(mix64(sampleKey + mix64(static_cast<uint64_t>(e))));
  }
  t.fromHost(host);
}

bool dropoutKeeps(const DropoutSite &site, uint64_t index) {
  return hash::dropoutKeep(hash::dropoutKey(site.seed, site.step, site.site),
                           index, hash::dropoutThreshold(site.rate));
}

} // namespace trident::rt
