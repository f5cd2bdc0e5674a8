//===- GptProfile.h - Hand-built GPT profiles for the Cost tests -*- C++ -*-===//
//
// GPT-3-style models of Korthikanti et al. 2022 (Table 3) and the ZeRO
// paper, built through buildTransformerProfile() with the paper's settings
// (MHA, 4h FFN, GeLU, dropout, biases, learned positions, tied embeddings,
// 16-bit activations).
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_TEST_UNIT_COST_GPTPROFILE_H
#define TRIDENT_TEST_UNIT_COST_GPTPROFILE_H

#include "AnalyticProfile.h"
#include "trident/Cost/Evaluate.h"

namespace trident::test {

/// Korthikanti et al. 2022, Table 3 (s = 2048, V = 51200).
inline LayerProfile gpt3_22B() { return gptProfile("gpt-22b", 48, 6144, 64); }
inline LayerProfile gpt3_175B() { return gptProfile("gpt3-175b", 96, 12288, 96); }
inline LayerProfile gpt3_530B() { return gptProfile("gpt-530b", 105, 20480, 128); }
inline LayerProfile gpt3_1T() { return gptProfile("gpt-1t", 128, 25600, 160); }

/// A configuration of the Cost tests: the sizes, micro-batch and global
/// batch; the rest at ParallelConfig's defaults.
inline ParallelConfig cfgOf(int64_t dp, int64_t tp, int64_t pp, int64_t mb,
                            int64_t gb) {
  ParallelConfig c;
  c.dp = dp;
  c.tp = tp;
  c.pp = pp;
  c.microBatch = mb;
  c.globalBatch = gb;
  return c;
}

} // namespace trident::test

#endif // TRIDENT_TEST_UNIT_COST_GPTPROFILE_H
