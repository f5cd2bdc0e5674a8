//===- AnalyticProfile.h - LayerProfile of a transformer, by formula -*- C++ -*-===//
//
// Builds a LayerProfile for a GPT / Llama / Mixtral-style decoder from its
// shape alone, with the field meanings of LayerProfile.h and the activation
// accounting of Korthikanti et al. 2022 (Sec. 4.1). Test support: it lets
// the MLIR-free components (Cost, Search, Plan) be unit-tested without the
// Analysis; the tools always use the Analysis.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_TEST_UNIT_SUPPORT_ANALYTICPROFILE_H
#define TRIDENT_TEST_UNIT_SUPPORT_ANALYTICPROFILE_H

#include "trident/Cost/LayerProfile.h"
#include "trident/Support/Status.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace trident {

struct TransformerShape {
  std::string name = "transformer";
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kvHeads = 0; ///< 0 = heads (multi-head attention)
  int64_t ffn = 0;     ///< 0 = 4 * hidden
  int64_t vocab = 0;
  int64_t seqLen = 0;
  bool gatedMlp = false;     ///< SwiGLU (three matrices)
  bool dropout = true;       ///< dropout masks saved (GPT-3 style)
  bool biases = true;        ///< linear biases (GPT) vs none (Llama)
  bool learnedPositions = true;
  bool tiedEmbeddings = true;
  int64_t numExperts = 0;    ///< 0 = dense MLP
  int64_t topK = 0;
  int64_t moeFfn = 0;        ///< expert FFN size; 0 = ffn
  DType dtype = DType::BF16;
};

/// A Llama/Mixtral-style shape: SwiGLU, no dropout or biases, rotary
/// positions, untied embeddings; `experts` > 0 makes it a top-2 MoE.
TransformerShape llamaStyleShape(std::string name, int64_t layers,
                                 int64_t hidden, int64_t heads,
                                 int64_t kvHeads, int64_t ffn, int64_t vocab,
                                 int64_t seqLen, int64_t experts = 0);

/// The profile; errors on non-positive or inconsistent sizes.
Result<LayerProfile> buildTransformerProfile(const TransformerShape &shape);

namespace test {

/// buildTransformerProfile for shapes a test knows to be valid: throws
/// (the test fails with the message) otherwise.
inline LayerProfile profileOf(const TransformerShape &s) {
  Result<LayerProfile> p = buildTransformerProfile(s);
  if (!p)
    throw std::runtime_error(p.message());
  return *p;
}

/// A GPT-3-style decoder (MHA, 4h FFN, GeLU, dropout, biases, learned
/// positions, tied embeddings, 16-bit activations).
inline LayerProfile gptProfile(const char *name, int64_t layers,
                               int64_t hidden, int64_t heads, int64_t seq = 2048,
                               int64_t vocab = 51200) {
  TransformerShape s;
  s.name = name;
  s.layers = layers;
  s.hidden = hidden;
  s.heads = heads;
  s.seqLen = seq;
  s.vocab = vocab;
  return profileOf(s);
}

} // namespace test
} // namespace trident

#endif // TRIDENT_TEST_UNIT_SUPPORT_ANALYTICPROFILE_H
