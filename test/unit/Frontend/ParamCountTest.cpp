//===- ParamCountTest.cpp - Exact parameter counts and validation ---------===//
//
// The totals are the real checkpoints' tensor-element counts (safetensors
// metadata / papers; test/data/models/README.md lists them); a breakdown
// formula that is off by one bias vector fails here.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestUtil.h"

#include <cmath>
#include <limits>

using namespace trident;
using namespace trident::frontend;
using namespace trident::frontend::test;

TEST_CASE("Exact totals of the shared/models configs", "[frontend][params]") {
  CHECK(countParams(loadModel("gpt2.json")).total() == 124'439'808);
  CHECK(countParams(loadModel("llama-2-7b.json")).total() == 6'738'415'616);
  CHECK(countParams(loadModel("llama-3-8b.json")).total() == 8'030'261'248);
  CHECK(countParams(loadModel("llama-3-70b.json")).total() == 70'553'706'496);
  CHECK(countParams(loadModel("mistral-7b.json")).total() == 7'241'732'096);
  CHECK(countParams(loadModel("mixtral-8x7b.json")).total() == 46'702'792'704);
}

TEST_CASE("Exact totals of the other architectures", "[frontend][params]") {
  CHECK(countParams(loadModel("llama-3.1-405b.json")).total() ==
        405'853'388'800);
  CHECK(countParams(loadModel("qwen2.5-0.5b.json")).total() == 494'032'768);
  CHECK(countParams(loadModel("qwen2.5-7b.json")).total() == 7'615'616'512);
  CHECK(countParams(loadModel("qwen3-8b.json")).total() == 8'190'735'360);
  CHECK(countParams(loadModel("qwen3-30b-a3b.json")).total() == 30'532'122'624);
  CHECK(countParams(loadModel("qwen3-235b-a22b.json")).total() ==
        235'093'634'560);
  // Black et al. 2022 (GPT-NeoX-20B), Table 1; Biderman et al. 2023
  // (Pythia), Table 1.
  CHECK(countParams(loadModel("gpt-neox-20b.json")).total() == 20'554'567'680);
  CHECK(countParams(loadModel("pythia-160m.json")).total() == 162'322'944);
  // DeepSeek-V3 main model (the MTP module excluded), as in its checkpoint's
  // first 61 layers.
  CHECK(countParams(loadModel("deepseek-v3.json")).total() == 671'026'419'200);
  CHECK(countParams(loadModel("gpt-oss-20b.json")).total() == 20'914'757'184);
  CHECK(countParams(loadModel("gpt-oss-120b.json")).total() == 116'829'156'672);
  // Llama 4 (no public exact count of the text model alone; the hand
  // count of test/data/models/README.md): Maverick 400.7 B, Scout 107.8 B
  // plus the 2 x 128 q/k norm weights of its 36 RoPE layers that Llama 4's
  // weightless L2 norm does not have (HFImport, readLlama4).
  // GPT-J 6B: HF's GPTJForCausalLM tensors, hand-counted (the model card's
  // 6,053,381,344 is the Mesh Transformer JAX checkpoint's count).
  ParamCounts gptj = countParams(loadModel("gpt-j-6b.json"));
  CHECK(gptj.total() == 6'050'882'784);
  CHECK(gptj.norm == 28LL * 2 * 4096 + 2 * 4096); // one ln_1 per layer
  CHECK(gptj.head == 50400LL * 4096 + 50400);     // the head's bias
  CHECK(countParams(loadModel("llama-4-maverick-17b-128e.json")).total() ==
        400'711'848'960);
  CHECK(countParams(loadModel("llama-4-scout-17b-16e.json")).total() ==
        107'769'861'120 + 36 * 2 * 128);
}

TEST_CASE("Active parameters: only the top-k routed experts count",
          "[frontend][params]") {
  // Dense models: active == total.
  ParamCounts l = countParams(loadModel("llama-3-8b.json"));
  CHECK(l.active == l.total());

  // Mixtral: the README's "about 12.9 B active"; exactly the non-expert
  // tensors plus 2 of 8 experts in each of 32 layers.
  ParamCounts m = countParams(loadModel("mixtral-8x7b.json"));
  int64_t expert = 3LL * 4096 * 14336;
  CHECK(m.experts == 32LL * 8 * expert);
  CHECK(m.active == m.total() - 32LL * 6 * expert);
  CHECK(m.active == 12'879'925'248);

  CHECK(countParams(loadModel("qwen3-30b-a3b.json")).active == 3'353'032'704);
  CHECK(countParams(loadModel("qwen3-235b-a22b.json")).active ==
        22'190'763'520);
  CHECK(countParams(loadModel("deepseek-v3.json")).active == 37'552'297'472);

  // gpt-oss model card: 3.61 B and 5.13 B active, counting the output
  // layer but not the input embedding.
  ParamCounts o20 = countParams(loadModel("gpt-oss-20b.json"));
  ParamCounts o120 = countParams(loadModel("gpt-oss-120b.json"));
  CHECK(std::round((o20.active - o20.embedding) / 1e7) == 361);
  CHECK(std::round((o120.active - o120.embedding) / 1e7) == 513);
  CHECK(o120.active == 5'711'982'912);

  // Llama 4: "17B active" of both, one routed expert of 3 x 5120 x 8192
  // in each MoE layer (48 in Scout, 24 in Maverick).
  const int64_t l4expert = 3LL * 5120 * 8192;
  ParamCounts scout = countParams(loadModel("llama-4-scout-17b-16e.json"));
  ParamCounts mav = countParams(loadModel("llama-4-maverick-17b-128e.json"));
  CHECK(scout.active == scout.total() - 48LL * 15 * l4expert);
  CHECK(mav.active == mav.total() - 24LL * 127 * l4expert);
  CHECK(mav.active == 17'184'691'200);
}

TEST_CASE("Breakdown by kind: GPT-2", "[frontend][params]") {
  ParamCounts p = countParams(loadModel("gpt2.json"));
  CHECK(p.embedding == 50257LL * 768 + 1024LL * 768);
  CHECK(p.head == 0); // tied
  CHECK(p.attention == 12LL * (4 * 768 * 768 + 4 * 768));
  CHECK(p.mlp == 12LL * (2 * 768 * 3072 + 3072 + 768));
  CHECK(p.norm == 12LL * 2 * 2 * 768 + 2 * 768);
  CHECK(p.experts == 0);
  CHECK(p.router == 0);
  CHECK(p.other == 0);
  CHECK(p.active == p.total());
}

TEST_CASE("Breakdown by kind: Llama and Qwen", "[frontend][params]") {
  ParamCounts l = countParams(loadModel("llama-3-8b.json"));
  CHECK(l.embedding == 128256LL * 4096);
  CHECK(l.head == 128256LL * 4096);
  CHECK(l.attention == 32LL * (2 * 4096 * 4096 + 2 * 4096 * 1024));
  CHECK(l.mlp == 32LL * 3 * 4096 * 14336);
  CHECK(l.norm == 65LL * 4096); // RMSNorm: weight only

  // Qwen2: q/k/v biases, no o bias.
  ParamCounts q2 = countParams(loadModel("qwen2.5-7b.json"));
  CHECK(q2.attention ==
        28LL * (2 * 3584 * 3584 + 2 * 3584 * 512 + 3584 + 2 * 512));
  // Qwen3: q_norm and k_norm of head_dim each, counted as attention.
  ParamCounts q3 = countParams(loadModel("qwen3-8b.json"));
  CHECK(q3.attention == 36LL * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 2 * 128));
  CHECK(q3.norm == 73LL * 4096);
}

TEST_CASE("Breakdown by kind: DeepSeek-V3 MLA and MoE", "[frontend][params]") {
  ModelConfig c = loadModel("deepseek-v3.json");
  ParamCounts p = countParams(c);
  const int64_t h = 7168, nH = 128;
  int64_t q = h * 1536 + 1536 + 1536 * nH * 192; // q_a, q_a_norm, q_b
  int64_t kv = h * (512 + 64) + 512 + 512 * nH * (128 + 128);
  int64_t o = nH * 128 * h;
  CHECK(p.attention == 61 * (q + kv + o));
  CHECK(p.router == 58 * (256 * h + 256)); // gate + e_score_correction_bias
  CHECK(p.experts == 58LL * 256 * 3 * h * 2048);
  CHECK(p.mlp == 3 * 3 * h * 18432 + 58 * 3 * h * 2048); // dense + shared
  CHECK(p.norm == 123 * h);
  CHECK(p.embedding == 129280 * h);
  CHECK(p.head == 129280 * h);

  // Without q_lora_rank q is projected directly from the hidden state.
  c.mla.qLoraRank = 0;
  CHECK(countParams(c).attention == 61 * (h * nH * 192 + kv + o));
}

TEST_CASE("Breakdown by kind: gpt-oss sinks and biased experts",
          "[frontend][params]") {
  ParamCounts p = countParams(loadModel("gpt-oss-20b.json"));
  const int64_t h = 2880, f = 2880;
  int64_t attn =
      (h * 4096 + 4096) + 2 * (h * 512 + 512) + (4096 * h + h) + 64 /* sinks */;
  CHECK(p.attention == 24 * attn);
  CHECK(p.router == 24 * (32 * h + 32));
  CHECK(p.experts == 24LL * 32 * (h * 2 * f + 2 * f + f * h + h));
  CHECK(p.mlp == 0);
}

TEST_CASE("Nemotron and GPT-NeoX follow the hand-derived formula",
          "[frontend][params]") {
  // Nemotron-4 4B: LayerNorm1p with bias (2h), squared-ReLU MLP without
  // gate (2hf), no linear biases, untied.
  const int64_t h = 3072, f = 9216, V = 256000;
  int64_t layer = (h * 3072 + 2 * h * 1024 + 3072 * h) + 2 * h * f + 2 * 2 * h;
  CHECK(countParams(loadModel("nemotron-4-4b.json")).total() ==
        2 * V * h + 32 * layer + 2 * h);
  CHECK(countParams(loadModel("nemotron-4-4b.json")).total() == 4'190'509'056);
  // Pythia's non-embedding count, Table 1: 85,056,000.
  ParamCounts p = countParams(loadModel("pythia-160m.json"));
  CHECK(p.total() - p.embedding - p.head == 85'056'000);
}

TEST_CASE("Qwen3-MoE dense layers use intermediate_size",
          "[frontend][params]") {
  ModelConfig c = loadModel("qwen3-30b-a3b.json");
  ParamCounts all = countParams(c);
  // Make layers 0 and 1 dense.
  c.moe.moeLayers.assign(48, true);
  c.moe.moeLayers[0] = c.moe.moeLayers[1] = false;
  REQUIRE(validateModelConfig(c, "t").isOk());
  ParamCounts some = countParams(c);
  const int64_t h = 2048;
  int64_t moeLayer = 128 * 3 * h * 768 + 128 * h;
  int64_t denseLayer = 3 * h * 6144;
  CHECK(some.total() == all.total() - 2 * moeLayer + 2 * denseLayer);
  CHECK(some.mlp == 2 * denseLayer);
}

//===----------------------------------------------------------------------===//
// validateModelConfig
//===----------------------------------------------------------------------===//

namespace {
std::string invalid(const ModelConfig &c) {
  Status s = validateModelConfig(c, "m");
  REQUIRE_FALSE(s.isOk());
  return s.message();
}
} // namespace

TEST_CASE("validateModelConfig names the field", "[frontend][validate]") {
  ModelConfig base = loadModel("llama-3-8b.json");
  REQUIRE(validateModelConfig(base, "m").isOk());

  ModelConfig c = base;
  c.numKvHeads = 5;
  CHECK(invalid(c) == "m: 'numKvHeads' 5 does not divide 'numHeads' 32");
  c = base;
  c.hidden = -1;
  CHECK(invalid(c) == "m: 'hidden' must be positive, got -1");
  c = base;
  c.vocabSize = 0;
  CHECK(invalid(c) == "m: 'vocabSize' must be positive, got 0");
  c = base;
  c.ffn = 0;
  CHECK(invalid(c) == "m: 'ffn' must be positive, got 0");
  c = base;
  c.headDim = 0;
  CHECK(invalid(c) == "m: 'headDim' must be positive, got 0");
  c = base;
  c.numLayers = int64_t(1) << 40;
  CHECK(invalid(c) == "m: 'numLayers' is 1099511627776, above the supported "
                      "limit 2147483647");
  c = base;
  c.rotaryPct = std::numeric_limits<double>::quiet_NaN();
  CHECK(invalid(c).starts_with("m: 'rotaryPct' must be in (0, 1]"));
  c = base;
  c.dropout = 1.0;
  CHECK(invalid(c).starts_with("m: 'dropout' must be in [0, 1)"));
  c = base;
  c.slidingLayers = {true, false};
  CHECK(invalid(c) == "m: 'slidingLayers' has 2 entries for 32 layers");

  ModelConfig g = loadModel("gpt2.json");
  g.seqLen = 2048;
  CHECK(invalid(g) == "m: 'seqLen' 2048 exceeds the learned position table "
                      "'maxPositions' 1024");

  ModelConfig m = loadModel("mixtral-8x7b.json");
  m.moe.topK = 9;
  CHECK(invalid(m) == "m: 'moe.topK' 9 exceeds 'moe.numExperts' 8");
  m = loadModel("mixtral-8x7b.json");
  m.moe.expertFfn = 0;
  CHECK(invalid(m) == "m: 'moe.expertFfn' must be positive, got 0");
  // Every layer MoE: no dense MLP needed.
  m = loadModel("mixtral-8x7b.json");
  m.ffn = 0;
  CHECK(validateModelConfig(m, "m").isOk());

  // Overflow of the parameter total, each size within the limit.
  c = base;
  c.hidden = c.ffn = c.numLayers = 2147483647;
  c.numHeads = c.numKvHeads = 1;
  c.headDim = 2147483647;
  CHECK(invalid(c) == "m: the parameter count overflows a 64-bit integer "
                      "(sizes too large)");
  // countParams on such a config returns zeros rather than wrapping.
  CHECK(countParams(c).total() == 0);
}

TEST_CASE("Blocks: the builder's repeat iterations, in layers",
          "[frontend][params]") {
  using V = std::vector<int64_t>;
  CHECK(blockLayers(loadModel("llama-3-8b.json")) == V(32, 1));
  CHECK(blockLayers(loadModel("gpt-oss-20b.json")) == V(12, 2));
  CHECK(blockLayers(loadModel("llama-4-maverick-17b-128e.json")) == V(12, 4));
  CHECK(blockLayers(loadModel("llama-4-scout-17b-16e.json")) == V(12, 4));
  CHECK(blockLayers(loadModel("deepseek-v3.json")) == V(61, 1));
  // Every layer in exactly one block, whatever the pattern: a dense lead
  // then experts on every second layer (DeepSeek's moe_layer_freq 2).
  ModelConfig d = loadModel("deepseek-v3.json");
  d.moe.moeLayers.clear();
  for (int64_t i = 0; i < d.numLayers; ++i)
    d.moe.moeLayers.push_back(i >= 3 && i % 2 == 0);
  V b = blockLayers(d);
  int64_t sum = 0;
  for (int64_t n : b)
    sum += n;
  CHECK(sum == d.numLayers);
}
