//===- ZooTest.cpp - Built-in model zoo -----------------------------------===//

#include "FrontendTestUtil.h"

#include <cmath>

using namespace trident;
using namespace trident::frontend;
using namespace trident::frontend::test;

namespace {
ModelConfig zoo(const std::string &name) {
  Result<ModelConfig> r = zooModel(name);
  INFO(name << ": " << (r ? std::string("ok") : r.message()));
  REQUIRE(r.isOk());
  return *r;
}
} // namespace

TEST_CASE("Every zoo model builds and validates", "[frontend][zoo]") {
  std::vector<std::string> names = zooModelNames();
  std::vector<std::string> expected = {
      "gpt3-175b",  "gpt-1.7b",    "gpt-3.6b",       "gpt-7.5b",
      "gpt-18b",    "gpt-39b",     "gpt-76b",        "gpt-145b",
      "gpt-310b",   "gpt-530b",    "gpt-1t",         "llama-2-7b",
      "llama-3-8b", "llama-3-70b", "llama-3.1-405b", "mixtral-8x7b",
      "bert-large", "vit-h-14",    "dlrm",           "tiny-gpt"};
  CHECK(names == expected);
  for (const std::string &n : names) {
    ModelConfig c = zoo(n);
    CHECK(c.name == n);
    CHECK(validateModelConfig(c, n).isOk());
    CHECK(countParams(c).total() > 0);
  }
}

TEST_CASE("Unknown zoo name lists the known ones", "[frontend][zoo]") {
  Result<ModelConfig> r = zooModel("gpt-5");
  REQUIRE_FALSE(r.isOk());
  CHECK(r.message().starts_with("unknown zoo model 'gpt-5' (known: "));
  CHECK(r.message().find("llama-3.1-405b") != std::string::npos);
  CHECK(r.message().find("tiny-gpt") != std::string::npos);
}

TEST_CASE("Megatron GPT family reproduces Narayanan et al. 2021 Table 1",
          "[frontend][zoo]") {
  // The table's sizes, in billions, rounded to one decimal.
  std::vector<std::pair<std::string, double>> table = {
      {"gpt-1.7b", 1.7},   {"gpt-3.6b", 3.6},   {"gpt-7.5b", 7.5},
      {"gpt-18b", 18.4},   {"gpt-39b", 39.1},   {"gpt-76b", 76.1},
      {"gpt-145b", 145.6}, {"gpt-310b", 310.1}, {"gpt-530b", 529.6},
      {"gpt-1t", 1008.0}};
  for (auto &[name, billions] : table) {
    ModelConfig c = zoo(name);
    INFO(name);
    CHECK(std::round(countParams(c).total() / 1e8) ==
          std::round(billions * 10));
    CHECK(c.vocabSize == 51200);
    CHECK(c.seqLen == 2048);
    CHECK(c.dropout == Approx(0.1));
    CHECK(c.tieEmbeddings);
    CHECK(c.position == PositionKind::Learned);
  }
  ModelConfig g3 = zoo("gpt3-175b");
  CHECK(g3.hidden == 12288);
  CHECK(g3.numHeads == 96);
  CHECK(g3.numLayers == 96);
  CHECK(g3.dropout == Approx(0.1));
  // 12Lh^2 (1 + 13/12h + (V+s)/12Lh) + 2h = 174.6 B with V = 51200.
  CHECK(countParams(g3).total() == 174'615'846'912);
}

TEST_CASE("Zoo Llama and Mixtral equal their Hugging Face configs",
          "[frontend][zoo]") {
  std::vector<std::pair<std::string, std::string>> pairs = {
      {"llama-2-7b", "llama-2-7b.json"},
      {"llama-3-8b", "llama-3-8b.json"},
      {"llama-3-70b", "llama-3-70b.json"},
      {"llama-3.1-405b", "llama-3.1-405b.json"},
      {"mixtral-8x7b", "mixtral-8x7b.json"}};
  for (auto &[name, file] : pairs) {
    INFO(name);
    ParamCounts z = countParams(zoo(name));
    ParamCounts h = countParams(loadModel(file));
    CHECK(z.total() == h.total());
    CHECK(z.active == h.active);
    CHECK(z.attention == h.attention);
  }
  ModelConfig l = zoo("llama-3.1-405b");
  CHECK(l.hidden == 16384);
  CHECK(l.numLayers == 126);
  CHECK(l.numHeads == 128);
  CHECK(l.numKvHeads == 8);
  CHECK(l.ffn == 53248);
  CHECK(l.vocabSize == 128256);
  CHECK(countParams(l).total() == 405'853'388'800);
}

TEST_CASE("BERT-large: 340M encoder with pooler and MLM/NSP heads",
          "[frontend][zoo]") {
  ModelConfig c = zoo("bert-large");
  CHECK(c.family == ModelFamily::EncoderLM);
  CHECK_FALSE(c.causal);
  CHECK(c.typeVocabSize == 2);
  CHECK(c.pooler);
  ParamCounts p = countParams(c);
  // BertForPreTraining (bert-large-uncased): 336,226,108.
  CHECK(p.total() == 336'226'108);
  // Without the pre-training heads (MLM transform dense + LayerNorm +
  // decoder bias, NSP classifier) it is the widely quoted BertModel count.
  const int64_t h = 1024;
  int64_t mlm = (h * h + h) + 2 * h + 30522;
  int64_t nsp = 2 * h + 2;
  CHECK(p.total() - mlm - nsp == 335'141'888);
  CHECK(p.embedding == (30522 + 512 + 2) * h);
}

TEST_CASE("ViT-H/14: 632M", "[frontend][zoo]") {
  ModelConfig c = zoo("vit-h-14");
  CHECK(c.family == ModelFamily::Vision);
  CHECK(c.seqLen == 257);
  ParamCounts p = countParams(c);
  CHECK(p.other == 3 * 14 * 14 * 1280 + 1280); // patch projection
  CHECK(p.embedding == 257 * 1280 + 1280);     // positions + CLS
  CHECK(p.head == 1280 * 1000 + 1000);
  CHECK(p.total() == 632'045'800);
  CHECK(std::round(p.total() / 1e6) == 632); // Dosovitskiy et al. Table 1
}

TEST_CASE("DLRM: MLPerf Criteo Terabyte configuration", "[frontend][zoo]") {
  ModelConfig c = zoo("dlrm");
  CHECK(c.family == ModelFamily::Recommender);
  CHECK(c.denseFeatures == 13);
  CHECK(c.tableRows.size() == 26);
  CHECK(c.embeddingDim == 128);
  ParamCounts p = countParams(c);
  CHECK(p.embedding == 187'767'399LL * 128);
  int64_t bottom = (13 * 512 + 512) + (512 * 256 + 256) + (256 * 128 + 128);
  int64_t top = (479 * 1024 + 1024) + (1024 * 1024 + 1024) +
                (1024 * 512 + 512) + (512 * 256 + 256) + (256 + 1);
  CHECK(p.other == bottom + top);
  CHECK(p.total() == p.embedding + p.other);

  c.bottomMlp.back() = 64;
  Status s = validateModelConfig(c, "dlrm");
  REQUIRE_FALSE(s.isOk());
  CHECK(s.message() == "dlrm: the last 'bottomMlp' width 64 must equal "
                       "'embeddingDim' 128");
}

TEST_CASE("tiny-gpt is small, FP32 and GPT-2 shaped", "[frontend][zoo]") {
  ModelConfig c = zoo("tiny-gpt");
  CHECK(c.numLayers == 4);
  CHECK(c.hidden == 64);
  CHECK(c.numHeads == 4);
  CHECK(c.vocabSize == 256);
  CHECK(c.seqLen == 32);
  CHECK(c.ffn == 256);
  CHECK(c.dtype == DType::F32);
  CHECK(c.tieEmbeddings);
  CHECK(c.position == PositionKind::Learned);
  CHECK(c.norm == NormKind::LayerNorm);
  CHECK(c.act == Activation::Gelu);
  // 256*64 + 32*64 + 4*(4*64*64 + 4*64 + 2*64*256 + 256 + 64 + 4*64) + 2*64
  CHECK(countParams(c).total() == 218'496);
}
