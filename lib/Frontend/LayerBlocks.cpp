//===- LayerBlocks.cpp - How a model's layers group into repeats ----------===//
//
// The tgraph builder (GraphBuilder.cpp) emits a model's layers as
// tgraph.repeat ops, and the planner splits a model by repeat iterations
// (blocks). The grouping is decided here, from the ModelConfig alone, so
// that the builder and the exporters (which count transformer layers) read
// the same rule.
//
//===----------------------------------------------------------------------===//

#include "trident/Frontend/ModelConfig.h"

namespace trident::frontend {

int64_t decoderLayerSignature(const ModelConfig &c, int64_t i) {
  return (c.isMoeLayer(i) ? 1 : 0) | (c.isSlidingLayer(i) ? 2 : 0) |
         (c.isRopeLayer(i) ? 4 : 0) | (c.hasQkNorm(i) ? 8 : 0);
}

int64_t tilingPeriod(int64_t first, int64_t count,
                     const std::function<int64_t(int64_t)> &signature) {
  for (int64_t period = 1; period <= 4 && period <= count; ++period) {
    if (count % period != 0)
      continue;
    bool tiles = true;
    for (int64_t i = period; i < count && tiles; ++i)
      tiles = signature(first + i) == signature(first + i % period);
    if (tiles)
      return period;
  }
  return 0;
}

std::vector<LayerRun> decoderLayerRuns(const ModelConfig &c) {
  auto signature = [&](int64_t i) { return decoderLayerSignature(c, i); };
  // Leading dense layers of an MoE model stay apart from the periodic rest
  // (DeepSeek's first_k_dense_replace); a stack that repeats whole from
  // its first layer (Llama 4 Maverick's dense, MoE alternation) keeps them
  // in.
  int64_t lead = 0;
  const int64_t whole = tilingPeriod(0, c.numLayers, signature);
  while ((whole == 0 || whole == c.numLayers) && lead < c.numLayers &&
         signature(lead) != signature(c.numLayers - 1) &&
         c.moe.numExperts > 0 && !c.isMoeLayer(lead))
    ++lead;
  std::vector<LayerRun> runs;
  if (lead > 0)
    runs.push_back({0, lead, tilingPeriod(0, lead, signature)});
  if (c.numLayers > lead)
    runs.push_back({lead, c.numLayers - lead,
                    tilingPeriod(lead, c.numLayers - lead, signature)});
  return runs;
}

std::vector<int64_t> blockLayers(const ModelConfig &c) {
  if (c.family != ModelFamily::DecoderLM)
    return std::vector<int64_t>(size_t(std::max<int64_t>(c.numLayers, 0)), 1);
  std::vector<int64_t> out;
  for (const LayerRun &r : decoderLayerRuns(c)) {
    // A periodic run is count / period blocks of `period` layers; any
    // other, one block per layer (runs of equal layers, period 1).
    int64_t size = r.period > 0 ? r.period : 1;
    out.insert(out.end(), size_t(r.count / size), size);
  }
  return out;
}

} // namespace trident::frontend
