//===- HFImportTest.cpp - Hugging Face config.json importer tests ---------===//

#include "FrontendTestUtil.h"

#include <nlohmann/json.hpp>

#include <tuple>

using namespace trident;
using namespace trident::frontend;
using namespace trident::frontend::test;
using json = nlohmann::json;

namespace {

/// A test config with some keys changed (a null value removes the key).
std::string edited(const std::string &file, const json &changes) {
  json j = json::parse(readModelFile(file));
  for (auto it = changes.begin(); it != changes.end(); ++it) {
    if (it->is_null())
      j.erase(it.key());
    else
      j[it.key()] = *it;
  }
  return j.dump();
}

ModelConfig parseOk(const std::string &text,
                    std::vector<std::string> *warnings = nullptr) {
  Result<ModelConfig> r = parseHFConfig(text, "t.json", warnings);
  INFO(text);
  INFO((r ? std::string("ok") : r.message()));
  REQUIRE(r.isOk());
  return *r;
}

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

} // namespace

TEST_CASE("GPT-2 config maps onto learned positions, biases, tied head",
          "[frontend][hf]") {
  std::vector<std::string> warnings;
  ModelConfig c = loadModel("gpt2.json", &warnings);
  CHECK(warnings.empty()); // n_ctx, layer_norm_epsilon are known-irrelevant
  CHECK(c.name == "gpt2");
  CHECK(c.architecture == "GPT2LMHeadModel");
  CHECK(c.family == ModelFamily::DecoderLM);
  CHECK(c.hidden == 768);
  CHECK(c.numLayers == 12);
  CHECK(c.numHeads == 12);
  CHECK(c.numKvHeads == 12);
  CHECK(c.headDim == 64);
  CHECK(c.ffn == 3072); // n_inner null => 4h
  CHECK(c.vocabSize == 50257);
  CHECK(c.maxPositions == 1024);
  CHECK(c.seqLen == 1024); // the learned table, below the 4096 cap
  CHECK(c.act == Activation::GeluTanh);
  CHECK(c.position == PositionKind::Learned);
  CHECK(c.norm == NormKind::LayerNorm);
  CHECK(c.normBias);
  CHECK(c.qkvBias);
  CHECK(c.outBias);
  CHECK(c.mlpBias);
  CHECK_FALSE(c.gatedMlp);
  CHECK(c.tieEmbeddings);
  CHECK(c.dtype == DType::F32);
  CHECK(c.dropout == Approx(0.1)); // GPT2Config's resid_pdrop default
  CHECK(c.attentionDropoutRate() == Approx(0.1)); // attn_pdrop default
  CHECK(c.embeddingDropoutRate() == Approx(0.1)); // embd_pdrop default
  CHECK(c.causal);
}

TEST_CASE("Dropout keys set their own rates", "[frontend][hf]") {
  // GPT-2: each of the three keys alone.
  ModelConfig g = parseOk(edited(
      "gpt2.json", {{"resid_pdrop", 0.2}, {"attn_pdrop", 0.0}, {"embd_pdrop", 0.05}}));
  CHECK(g.dropout == Approx(0.2));
  CHECK(g.attentionDropoutRate() == 0.0);
  CHECK(g.embeddingDropoutRate() == Approx(0.05));
  g = parseOk(edited("gpt2.json", {{"attn_pdrop", 0.3}}));
  CHECK(g.dropout == Approx(0.1)); // the other two keep GPT2Config's 0.1
  CHECK(g.attentionDropoutRate() == Approx(0.3));
  CHECK(g.embeddingDropoutRate() == Approx(0.1));
  // Llama: attention_dropout drops the probabilities only.
  ModelConfig l = parseOk(edited("llama-3-8b.json", {{"attention_dropout", 0.1}}));
  CHECK(l.dropout == 0.0);
  CHECK(l.attentionDropoutRate() == Approx(0.1));
  CHECK(l.embeddingDropoutRate() == 0.0);
  l = parseOk(edited("llama-3-8b.json", {{"hidden_dropout", 0.1}}));
  CHECK(l.dropout == Approx(0.1)); // before the residual adds
  CHECK(l.embeddingDropoutRate() == 0.0); // HF's Llama drops no embeddings
  // BERT: the embeddings use the hidden rate.
  ModelConfig b = parseOk(edited(
      "bert-base-uncased.json",
      {{"hidden_dropout_prob", 0.2}, {"attention_probs_dropout_prob", 0.05}}));
  CHECK(b.dropout == Approx(0.2));
  CHECK(b.attentionDropoutRate() == Approx(0.05));
  CHECK(b.embeddingDropoutRate() == Approx(0.2));
  // A rate of 1 names its key.
  std::string err = parseError(edited("gpt2.json", {{"embd_pdrop", 1.0}}));
  CHECK(contains(err, "embd_pdrop"));
  CHECK(contains(err, "below 1"));
}

TEST_CASE("Each architecture's norm epsilon key, and HF's default",
          "[frontend][hf]") {
  CHECK(parseOk(readModelFile("gpt2.json")).normEps == Approx(1e-5));
  CHECK(parseOk(readModelFile("qwen3-8b.json")).normEps == Approx(1e-6));
  CHECK(parseOk(readModelFile("bert-base-uncased.json")).normEps ==
        Approx(1e-12));
  CHECK(parseOk(readModelFile("nemotron-4-4b.json")).normEps == Approx(1e-5));
  CHECK(parseOk(edited("gpt2.json", {{"layer_norm_epsilon", 2e-5}})).normEps ==
        Approx(2e-5));
  CHECK(parseOk(edited("nemotron-4-4b.json", {{"norm_eps", 3e-6}})).normEps ==
        Approx(3e-6));
  // Absent: the configuration class's default (BertConfig 1e-12,
  // LlamaConfig 1e-6, MixtralConfig 1e-5).
  CHECK(parseOk(edited("bert-base-uncased.json", {{"layer_norm_eps", nullptr}}))
            .normEps == Approx(1e-12));
  CHECK(parseOk(edited("llama-3-8b.json", {{"rms_norm_eps", nullptr}}))
            .normEps == Approx(1e-6));
  CHECK(parseOk(edited("mixtral-8x7b.json", {{"rms_norm_eps", nullptr}}))
            .normEps == Approx(1e-5));
  // Zero, negative or non-numeric names the key.
  for (json bad : {json(0.0), json(-1e-5), json("1e-5")}) {
    std::string err =
        parseError(edited("llama-3-8b.json", {{"rms_norm_eps", bad}}));
    CHECK(contains(err, "rms_norm_eps"));
    CHECK(contains(err, "expected a number in (0, 1]"));
  }
}

TEST_CASE("rope_scaling: linear, llama3, yarn, dynamic and bad values",
          "[frontend][hf]") {
  using Kind = RopeScaling::Kind;
  // Llama 3.1's released settings.
  ModelConfig l = parseOk(readModelFile("llama-3.1-405b.json"));
  CHECK(l.ropeScaling.kind == Kind::Llama3);
  CHECK(l.ropeScaling.factor == 8.0);
  CHECK(l.ropeScaling.lowFreqFactor == 1.0);
  CHECK(l.ropeScaling.highFreqFactor == 4.0);
  CHECK(l.ropeScaling.originalMaxPositions == 8192);
  // gpt-oss: YaRN without truncation, attention factor 0.1 ln 32 + 1.
  ModelConfig g = parseOk(readModelFile("gpt-oss-20b.json"));
  CHECK(g.ropeScaling.kind == Kind::Yarn);
  CHECK(g.ropeScaling.factor == 32.0);
  CHECK(g.ropeScaling.originalMaxPositions == 4096);
  CHECK_FALSE(g.ropeScaling.truncate);
  CHECK(g.ropeScaling.attentionFactor == Approx(1.3465735902799727));
  // DeepSeek-V3: mscale / mscale_all_dim 1 / 1 cancel; "type" spelling.
  ModelConfig d = parseOk(readModelFile("deepseek-v3.json"));
  CHECK(d.ropeScaling.kind == Kind::Yarn);
  CHECK(d.ropeScaling.attentionFactor == 1.0);
  CHECK(d.ropeScaling.truncate);
  // ... but DeepseekV3Attention scales the softmax by mscale(40, 1)^2:
  // (0.1 ln 40 + 1)^2 / sqrt(192) = 1.3689^2 / 13.856 = 0.13524.
  CHECK(d.softmaxScale == Approx(std::pow(0.1 * std::log(40.0) + 1.0, 2) /
                                 std::sqrt(192.0)));
  CHECK(d.softmaxScale == Approx(0.13524).epsilon(1e-4));
  // Without mscale_all_dim the scale stays 1/sqrt(head_dim) (0: default).
  ModelConfig dn = parseOk(edited(
      "deepseek-v3.json",
      {{"rope_scaling",
        {{"type", "yarn"}, {"factor", 40}, {"mscale", 1.0},
         {"original_max_position_embeddings", 4096}}}}));
  CHECK(dn.softmaxScale == 0.0);
  // Other models keep the default.
  CHECK(g.softmaxScale == 0.0);
  // No scaling, default and dynamic (nothing changes up to the model's
  // positions) keep plain RoPE.
  CHECK(parseOk(readModelFile("llama-3-8b.json")).ropeScaling.kind ==
        Kind::None);
  for (const char *t : {"default", "dynamic"})
    CHECK(parseOk(edited("llama-3-8b.json",
                         {{"rope_scaling", {{"rope_type", t}, {"factor", 2.0}}}}))
              .ropeScaling.kind == Kind::None);
  ModelConfig lin = parseOk(edited(
      "llama-3-8b.json", {{"rope_scaling", {{"type", "linear"}, {"factor", 2.0}}}}));
  CHECK(lin.ropeScaling.kind == Kind::Linear);
  CHECK(lin.ropeScaling.factor == 2.0);
  // YaRN: factor follows max_position_embeddings / original (HF's rule),
  // with a warning when they disagree; original defaults to the max.
  std::vector<std::string> warnings;
  ModelConfig y = parseOk(
      edited("llama-3-8b.json",
             {{"rope_scaling",
               {{"rope_type", "yarn"},
                {"factor", 4.0},
                {"original_max_position_embeddings", 4096},
                {"beta_fast", 16},
                {"unknown_knob", 1}}}}),
      &warnings);
  CHECK(y.ropeScaling.factor == 2.0); // 8192 / 4096
  CHECK(y.ropeScaling.betaFast == 16.0);
  CHECK(y.ropeScaling.attentionFactor == Approx(0.1 * std::log(2.0) + 1));
  REQUIRE(warnings.size() == 2);
  CHECK(contains(warnings[0], "field 'rope_scaling.factor'"));
  CHECK(contains(warnings[1], "'rope_scaling.unknown_knob' ignored"));
  ModelConfig y2 = parseOk(edited(
      "llama-3-8b.json",
      {{"rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}, {"attention_factor", 0.5}}}}));
  CHECK(y2.ropeScaling.originalMaxPositions == 8192);
  CHECK(y2.ropeScaling.attentionFactor == 0.5);
  // Errors name the nested field.
  struct Bad {
    json scaling;
    const char *field, *problem;
  } bad[] = {
      {json("yarn"), "rope_scaling", "expected an object or null"},
      {{{"factor", 2.0}}, "rope_scaling.rope_type", "missing"},
      {{{"rope_type", "longrope"}}, "rope_scaling.rope_type",
       "unsupported RoPE scaling 'longrope'"},
      {{{"rope_type", "linear"}}, "rope_scaling.factor", "missing"},
      {{{"rope_type", "linear"}, {"factor", 0.5}}, "rope_scaling.factor",
       "expected a number in [1, "},
      {{{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 4.0},
        {"high_freq_factor", 1.0}, {"original_max_position_embeddings", 8192}},
       "rope_scaling.high_freq_factor", "must exceed low_freq_factor"},
      {{{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
        {"high_freq_factor", 4.0}},
       "rope_scaling.original_max_position_embeddings", "missing"},
      {{{"rope_type", "yarn"}, {"factor", 8.0}, {"truncate", 1}},
       "rope_scaling.truncate", "expected true or false"},
  };
  for (const Bad &b : bad) {
    std::string err =
        parseError(edited("llama-3-8b.json", {{"rope_scaling", b.scaling}}));
    INFO(err);
    CHECK(contains(err, std::string("field '") + b.field + "'"));
    CHECK(contains(err, b.problem));
  }
  // transformers 5's rope_parameters: rope_theta and the scaling in one
  // object; rope_type default (or none) is plain RoPE.
  ModelConfig p5 = parseOk(edited(
      "llama-3-8b.json",
      {{"rope_theta", nullptr},
       {"rope_parameters",
        {{"rope_theta", 500000.0}, {"rope_type", "llama3"}, {"factor", 8.0},
         {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
         {"original_max_position_embeddings", 8192}}}}));
  CHECK(p5.ropeTheta == 500000.0);
  CHECK(p5.ropeScaling.kind == Kind::Llama3);
  CHECK(p5.ropeScaling.originalMaxPositions == 8192);
  ModelConfig p5plain = parseOk(edited(
      "llama-3-8b.json",
      {{"rope_theta", nullptr}, {"rope_parameters", {{"rope_theta", 250000.0}}}}));
  CHECK(p5plain.ropeTheta == 250000.0);
  CHECK(p5plain.ropeScaling.kind == Kind::None);
  for (auto [change, field, problem] :
       {std::tuple<json, std::string, std::string>{
            {{"rope_parameters", {{"rope_type", "default"}}},
             {"rope_scaling", {{"rope_type", "default"}}}},
            "rope_parameters", "given together with rope_scaling"},
        {{{"rope_parameters", {{"rope_theta", 10000.0}}}},
         "rope_parameters.rope_theta", "differs from the top-level"},
        {{{"rope_parameters",
           {{"full_attention", {{"rope_type", "default"}}}}}},
         "rope_parameters.full_attention", "per-layer-type"},
        {{{"rope_parameters", {{"rope_type", "yarn"}}}},
         "rope_parameters.factor", "missing"}}) {
    std::string err = parseError(edited("llama-3-8b.json", change));
    INFO(err);
    CHECK(contains(err, "field '" + field + "'"));
    CHECK(contains(err, problem));
  }
  // A model without RoPE notes that the key does nothing.
  warnings.clear();
  parseOk(edited("gpt2.json", {{"rope_scaling", {{"rope_type", "linear"}, {"factor", 2.0}}}}),
          &warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(contains(warnings[0], "no rotary position embedding"));
}

TEST_CASE("GPT-2 n_inner and activation_function are honoured",
          "[frontend][hf]") {
  ModelConfig c = parseOk(edited("gpt2.json", {{"n_inner", 1000},
                                               {"activation_function", "gelu"},
                                               {"tie_word_embeddings", false},
                                               {"resid_pdrop", 0.0},
                                               {"attn_pdrop", 0.0},
                                               {"embd_pdrop", 0.0}}));
  CHECK(c.ffn == 1000);
  CHECK(c.act == Activation::Gelu);
  CHECK_FALSE(c.tieEmbeddings);
  CHECK(c.dropout == 0.0);
}

TEST_CASE("Llama configs: RMSNorm, RoPE, SwiGLU, GQA, dtype, seqLen cap",
          "[frontend][hf]") {
  std::vector<std::string> warnings;
  ModelConfig c = loadModel("llama-3-8b.json", &warnings);
  CHECK(warnings.empty());
  CHECK(c.architecture == "LlamaForCausalLM");
  CHECK(c.numKvHeads == 8);
  CHECK(c.headDim == 128);
  CHECK(c.ffn == 14336);
  CHECK(c.norm == NormKind::RMSNorm);
  CHECK_FALSE(c.normBias);
  CHECK(c.position == PositionKind::Rotary);
  CHECK(c.gatedMlp);
  CHECK(c.act == Activation::Silu);
  CHECK_FALSE(c.tieEmbeddings);
  CHECK_FALSE(c.qkvBias);
  CHECK(c.dtype == DType::BF16);
  CHECK(c.maxPositions == 8192);
  CHECK(c.seqLen == 4096); // capped
  CHECK(c.dropout == 0.0);
  CHECK(c.ropeTheta == 500000.0); // rope_theta
  // RoFormer's base 10000 without it; a base must exceed 1.
  CHECK(parseOk(edited("llama-3-8b.json", {{"rope_theta", nullptr}}))
            .ropeTheta == 10000.0);
  CHECK(contains(parseError(edited("llama-3-8b.json", {{"rope_theta", 0.5}})),
                 "rope_theta"));

  CHECK(loadModel("llama-2-7b.json").dtype == DType::F16);
  // Without torch_dtype the default is bf16; newer configs say "dtype".
  CHECK(parseOk(edited("llama-2-7b.json", {{"torch_dtype", nullptr}})).dtype ==
        DType::BF16);
  CHECK(parseOk(edited("llama-2-7b.json",
                       {{"torch_dtype", nullptr}, {"dtype", "float32"}}))
            .dtype == DType::F32);
  // No max_position_embeddings: the default sequence length.
  CHECK(
      parseOk(edited("llama-2-7b.json", {{"max_position_embeddings", nullptr}}))
          .seqLen == 4096);
}

TEST_CASE("Llama honours head_dim, attention_bias and mlp_bias",
          "[frontend][hf]") {
  ModelConfig c = parseOk(
      edited("llama-3-8b.json",
             {{"head_dim", 64}, {"attention_bias", true}, {"mlp_bias", true}}));
  CHECK(c.headDim == 64);
  CHECK(c.qkvBias);
  CHECK(c.outBias);
  CHECK(c.mlpBias);
}

TEST_CASE("model_type is the fallback when architectures is absent",
          "[frontend][hf]") {
  ModelConfig c =
      parseOk(edited("llama-3-8b.json", {{"architectures", nullptr}}));
  CHECK(c.architecture == "LlamaForCausalLM");
  ModelConfig g = parseOk(edited("gpt2.json", {{"architectures", nullptr}}));
  CHECK(g.architecture == "GPT2LMHeadModel");
}

TEST_CASE("Mistral sliding window applies to every layer", "[frontend][hf]") {
  ModelConfig c = loadModel("mistral-7b.json");
  CHECK(c.architecture == "MistralForCausalLM");
  CHECK(c.slidingWindow == 4096);
  CHECK(c.slidingLayers.empty());
  CHECK(c.isSlidingLayer(0));
  CHECK(c.isSlidingLayer(31));
  ModelConfig full =
      parseOk(edited("mistral-7b.json", {{"sliding_window", nullptr}}));
  CHECK(full.slidingWindow == 0);
  CHECK_FALSE(full.isSlidingLayer(0));
}

TEST_CASE("Mixtral: every layer routes to top-2 of 8 experts",
          "[frontend][hf]") {
  std::vector<std::string> warnings;
  ModelConfig c = loadModel("mixtral-8x7b.json", &warnings);
  CHECK(warnings.empty()); // router_aux_loss_coef is known-irrelevant
  CHECK(c.moe.numExperts == 8);
  CHECK(c.moe.topK == 2);
  CHECK(c.moe.expertFfn == 14336);
  CHECK_FALSE(c.moe.routerBias);
  CHECK_FALSE(c.moe.expertBias);
  for (int64_t i = 0; i < c.numLayers; ++i)
    CHECK(c.isMoeLayer(i));
}

TEST_CASE("Qwen2: q/k/v biases only; sliding window only when enabled",
          "[frontend][hf]") {
  std::vector<std::string> warnings;
  ModelConfig c = loadModel("qwen2.5-7b.json", &warnings);
  CHECK(warnings.empty()); // use_mrope, max_window_layers, ... are known
  CHECK(c.architecture == "Qwen2ForCausalLM");
  CHECK(c.qkvBias);
  CHECK_FALSE(c.outBias);
  CHECK_FALSE(c.mlpBias);
  CHECK(c.slidingWindow == 0); // use_sliding_window false
  ModelConfig s =
      parseOk(edited("qwen2.5-7b.json", {{"use_sliding_window", true},
                                         {"sliding_window", 4096},
                                         {"max_window_layers", 20}}));
  CHECK(s.slidingWindow == 4096);
  CHECK_FALSE(s.isSlidingLayer(19));
  CHECK(s.isSlidingLayer(20));
  CHECK(s.isSlidingLayer(27));
  CHECK(loadModel("qwen2.5-0.5b.json").tieEmbeddings);
}

TEST_CASE("Qwen3: explicit head_dim and per-head q/k RMSNorm",
          "[frontend][hf]") {
  std::vector<std::string> warnings;
  ModelConfig c = loadModel("qwen3-8b.json", &warnings);
  CHECK(warnings.empty());
  CHECK(c.architecture == "Qwen3ForCausalLM");
  CHECK(c.headDim == 128);
  CHECK(c.qkNorm);
  CHECK_FALSE(c.qkvBias);
  // 2560 / 32 = 80, but head_dim 128 wins (Qwen3-4B's shape).
  ModelConfig w = parseOk(edited("qwen3-8b.json", {{"hidden_size", 2560}}));
  CHECK(w.headDim == 128);
}

TEST_CASE("Qwen3-MoE: experts, decoder_sparse_step and mlp_only_layers",
          "[frontend][hf]") {
  std::vector<std::string> warnings;
  ModelConfig c = loadModel("qwen3-30b-a3b.json", &warnings);
  CHECK(warnings.empty());
  CHECK(c.architecture == "Qwen3MoeForCausalLM");
  CHECK(c.moe.numExperts == 128);
  CHECK(c.moe.topK == 8);
  CHECK(c.moe.expertFfn == 768);
  CHECK(c.moe.moeLayers.empty());
  CHECK(c.isMoeLayer(0));
  CHECK(c.isMoeLayer(47));

  ModelConfig s =
      parseOk(edited("qwen3-30b-a3b.json", {{"decoder_sparse_step", 2},
                                            {"mlp_only_layers", {1, 4}}}));
  REQUIRE(s.moe.moeLayers.size() == 48);
  CHECK_FALSE(s.isMoeLayer(0)); // (0 + 1) % 2 != 0
  CHECK_FALSE(s.isMoeLayer(1)); // listed
  CHECK(s.isMoeLayer(3));
  CHECK_FALSE(s.isMoeLayer(4));
  CHECK(s.isMoeLayer(5));
  CHECK(s.ffn == 6144); // the dense layers' MLP

  CHECK(contains(
      parseError(edited("qwen3-30b-a3b.json", {{"mlp_only_layers", {48}}})),
      "field 'mlp_only_layers': layer 48 is out of range"));
}

TEST_CASE("DeepSeek-V3: MLA, shared + routed experts, dense prefix, MTP "
          "warning",
          "[frontend][hf]") {
  std::vector<std::string> warnings;
  ModelConfig c = loadModel("deepseek-v3.json", &warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(contains(warnings[0], "field 'num_nextn_predict_layers'"));
  CHECK(contains(warnings[0], "deepseek-v3.json"));
  CHECK(c.attention == AttentionKind::MLA);
  CHECK(c.mla.qLoraRank == 1536);
  CHECK(c.mla.kvLoraRank == 512);
  CHECK(c.mla.qkNopeHeadDim == 128);
  CHECK(c.mla.qkRopeHeadDim == 64);
  CHECK(c.mla.vHeadDim == 128);
  CHECK(c.headDim == 192);
  CHECK(c.numKvHeads == 128);
  CHECK(c.moe.numExperts == 256);
  CHECK(c.moe.topK == 8);
  CHECK(c.moe.expertFfn == 2048);
  CHECK(c.moe.numSharedExperts == 1);
  CHECK(c.moe.sharedFfn == 2048);
  CHECK(c.moe.firstDenseLayers == 3);
  CHECK(c.moe.routerScoreCorrection);
  CHECK_FALSE(c.moe.routerBias);
  CHECK(c.ffn == 18432);
  CHECK_FALSE(c.isMoeLayer(2));
  CHECK(c.isMoeLayer(3));
  CHECK(c.isMoeLayer(60));
  // DeepSeek pairs the rotary dimensions 2i and 2i + 1 unless the config
  // says otherwise; other models do not.
  CHECK(c.ropeInterleaved);
  CHECK_FALSE(parseOk(edited("deepseek-v3.json", {{"rope_interleave", false}}))
                  .ropeInterleaved);
  CHECK_FALSE(loadModel("llama-3-8b.json").ropeInterleaved);
  // DeepseekV3TopkRouter: sigmoid scores, 8 groups of which 4 are kept,
  // renormalised weights times 2.5 (the released config's values).
  CHECK(c.moe.sigmoidScores);
  CHECK(c.moe.numGroups == 8);
  CHECK(c.moe.topkGroups == 4);
  CHECK(c.moe.routedScale == 2.5);
  CHECK(c.moe.renormalize);
  // Groups that do not divide the experts, or hold too few of them.
  CHECK(contains(parseError(edited("deepseek-v3.json", {{"n_group", 7}})),
                 "field 'n_group': 7 must divide n_routed_experts 256"));
  CHECK(contains(parseError(edited("deepseek-v3.json",
                                   {{"n_group", 128}, {"topk_group", 2}})),
                 "field 'topk_group': 2 must be in [1, n_group 128] and "
                 "hold the 8 experts"));
  CHECK(contains(
      parseError(edited("deepseek-v3.json", {{"routed_scaling_factor", 0}})),
      "field 'routed_scaling_factor'"));
  // Left out, n_group is the default 8, and the error says so.
  CHECK(contains(parseError(edited("deepseek-v3.json",
                                   {{"n_group", nullptr},
                                    {"n_routed_experts", 4},
                                    {"num_experts_per_tok", 2}})),
                 "field 'n_group': 8 (DeepseekV3Config's default; the file "
                 "does not set it) must divide n_routed_experts 4"));

  // moe_layer_freq > 1 follows HF: i >= first_k_dense_replace and
  // i % freq == 0.
  ModelConfig f = parseOk(edited("deepseek-v3.json", {{"moe_layer_freq", 2}}));
  CHECK_FALSE(f.isMoeLayer(3));
  CHECK(f.isMoeLayer(4));
  CHECK_FALSE(f.isMoeLayer(5));

  ModelConfig q = parseOk(edited("deepseek-v3.json", {{"q_lora_rank", nullptr},
                                                      {"num_nextn_predict_"
                                                       "layers",
                                                       0}}));
  CHECK(q.mla.qLoraRank == 0);
}

TEST_CASE("gpt-oss: sinks, biases, alternating sliding layers",
          "[frontend][hf]") {
  std::vector<std::string> warnings;
  ModelConfig c = loadModel("gpt-oss-20b.json", &warnings);
  CHECK(warnings.empty()); // quantization_config, swiglu_limit, ... known
  CHECK(c.architecture == "GptOssForCausalLM");
  CHECK(c.headDim == 64);
  CHECK(c.attentionSinks);
  CHECK(c.qkvBias);
  CHECK(c.outBias);
  CHECK(c.moe.numExperts == 32);
  CHECK(c.moe.topK == 4);
  CHECK(c.moe.expertFfn == 2880);
  CHECK(c.moe.routerBias);
  CHECK(c.moe.expertBias);
  CHECK(c.moe.swigluLimit == 7.0); // the released config's swiglu_limit
  CHECK(parseOk(edited("gpt-oss-20b.json", {{"swiglu_limit", nullptr}}))
            .moe.swigluLimit == 7.0); // GptOssConfig's default
  CHECK(parseOk(edited("gpt-oss-20b.json", {{"swiglu_limit", 3.5}}))
            .moe.swigluLimit == 3.5);
  CHECK(contains(parseError(edited("gpt-oss-20b.json", {{"swiglu_limit", -1}})),
                 "field 'swiglu_limit': expected a number in (0, "));
  CHECK(c.slidingWindow == 128);
  CHECK(c.isSlidingLayer(0));
  CHECK_FALSE(c.isSlidingLayer(1));
  CHECK(c.isSlidingLayer(22));
  CHECK_FALSE(c.isSlidingLayer(23));

  // Without layer_types: sliding_window and the default pattern 2.
  ModelConfig p =
      parseOk(edited("gpt-oss-20b.json", {{"layer_types", nullptr}}));
  CHECK(p.slidingLayers == c.slidingLayers);
  ModelConfig p4 =
      parseOk(edited("gpt-oss-20b.json", {{"layer_types", nullptr},
                                          {"sliding_window_pattern", 4}}));
  CHECK(p4.isSlidingLayer(2));
  CHECK_FALSE(p4.isSlidingLayer(3));

  json types = json::array();
  for (int i = 0; i < 24; ++i)
    types.push_back("full_attention");
  ModelConfig full =
      parseOk(edited("gpt-oss-20b.json", {{"layer_types", types}}));
  CHECK(full.slidingWindow == 0);
  CHECK_FALSE(full.isSlidingLayer(0));

  CHECK(contains(parseError(edited("gpt-oss-20b.json",
                                   {{"layer_types", {"full_attention"}}})),
                 "field 'layer_types': has 1 entries for 24 layers"));
  types[3] = "chunked_attention";
  CHECK(
      contains(parseError(edited("gpt-oss-20b.json", {{"layer_types", types}})),
               "unsupported layer type 'chunked_attention'"));
}

namespace {
/// The Llama 4 Scout test config with text_config keys changed (a null
/// value removes the key).
std::string scoutText(const json &changes) {
  json j = json::parse(readModelFile("llama-4-scout-17b-16e.json"));
  for (auto it = changes.begin(); it != changes.end(); ++it) {
    if (it->is_null())
      j["text_config"].erase(it.key());
    else
      j["text_config"][it.key()] = *it;
  }
  return j.dump();
}
} // namespace

TEST_CASE("Llama 4: text_config, shared + routed experts, NoPE, chunks",
          "[frontend][hf]") {
  std::vector<std::string> warnings;
  ModelConfig s = loadModel("llama-4-scout-17b-16e.json", &warnings);
  CHECK(s.architecture == "Llama4ForConditionalGeneration");
  CHECK(s.hidden == 5120);
  CHECK(s.headDim == 128);
  CHECK(s.numKvHeads == 8);
  CHECK(s.vocabSize == 202048);
  CHECK_FALSE(s.tieEmbeddings);
  CHECK(s.normEps == 1e-5);
  CHECK(s.ropeTheta == 500000.0);
  CHECK(s.ropeScaling.kind == RopeScaling::Kind::Llama3);
  // Every layer has experts: 16 routed, top-1 sigmoid, one shared expert.
  CHECK(s.moe.numExperts == 16);
  CHECK(s.moe.topK == 1);
  CHECK(s.moe.expertFfn == 8192);
  CHECK(s.moe.numSharedExperts == 1);
  CHECK(s.moe.sharedFfn == 8192);
  CHECK(s.moe.sigmoidScores);
  CHECK_FALSE(s.moe.renormalize);
  CHECK(s.moe.scoresOnInput);
  CHECK(s.moe.moeLayers.empty());
  CHECK(s.ffn == 16384); // intermediate_size_mlp (no dense layer here)
  // NoPE on every fourth layer; q/k norms and chunked attention on the
  // RoPE layers only.
  for (int64_t i : {0, 1, 2, 4, 46})
    CHECK(s.isRopeLayer(i));
  for (int64_t i : {3, 7, 47}) {
    CHECK_FALSE(s.isRopeLayer(i));
    CHECK_FALSE(s.hasQkNorm(i));
    CHECK_FALSE(s.isSlidingLayer(i));
  }
  CHECK(s.hasQkNorm(0));
  CHECK(s.slidingWindow == 8192);
  CHECK(s.isSlidingLayer(0));
  // The approximations are said, and no key is left unread.
  std::string all;
  for (const std::string &w : warnings)
    all += w + "\n";
  CHECK_FALSE(contains(all, "unknown key"));
  CHECK(contains(all, "field 'vision_config': the vision encoder"));
  CHECK(contains(all, "modelled as a sliding window of 8192"));
  CHECK(contains(all, "scales each routed expert's input"));
  CHECK(contains(all, "weightless L2 norm"));

  // Maverick: MoE on every second layer from layer 1, dense MLP of
  // intermediate_size_mlp elsewhere, no q/k norm.
  ModelConfig m = loadModel("llama-4-maverick-17b-128e.json");
  CHECK(m.moe.numExperts == 128);
  CHECK_FALSE(m.isMoeLayer(0));
  CHECK(m.isMoeLayer(1));
  CHECK_FALSE(m.isMoeLayer(46));
  CHECK(m.isMoeLayer(47));
  CHECK_FALSE(m.qkNorm);
  CHECK_FALSE(m.hasQkNorm(0));

  // Explicit per-layer lists.
  ModelConfig e = parseOk(scoutText({{"moe_layers", {0, 5}},
                                     {"no_rope_layers", json::array()},
                                     {"no_rope_layer_interval", 2}}));
  CHECK(e.isMoeLayer(0));
  CHECK_FALSE(e.isMoeLayer(1));
  CHECK(e.isMoeLayer(5));
  CHECK_FALSE(e.isRopeLayer(1));
  CHECK(e.isRopeLayer(2));
  json flags = json::array();
  for (int i = 0; i < 48; ++i)
    flags.push_back(1);
  ModelConfig allRope = parseOk(scoutText({{"no_rope_layers", flags}}));
  CHECK(allRope.noRopeLayers.empty());
  CHECK(allRope.isRopeLayer(3));
  ModelConfig noChunk = parseOk(scoutText({{"attention_chunk_size", nullptr}}));
  CHECK(noChunk.slidingWindow == 8192); // absent: the default
  json j = json::parse(scoutText({}));
  j["text_config"]["attention_chunk_size"] = nullptr;
  CHECK(parseOk(j.dump()).slidingWindow == 0); // null: no chunking
  // The text model alone (Llama4ForCausalLM) reads the same keys.
  json text =
      json::parse(readModelFile("llama-4-scout-17b-16e.json"))["text_config"];
  text["architectures"] = {"Llama4ForCausalLM"};
  ModelConfig t = parseOk(text.dump());
  CHECK(t.architecture == "Llama4ForCausalLM");
  CHECK(countParams(t).total() == countParams(s).total());

  // Bad input names the nested field.
  flags[3] = 2;
  CHECK(contains(parseError(scoutText({{"no_rope_layers", flags}})),
                 "field 'text_config.no_rope_layers': expected entries 0 "
                 "(NoPE) or 1 (RoPE), got 2"));
  CHECK(contains(parseError(scoutText({{"no_rope_layers", {1, 0}}})),
                 "field 'text_config.no_rope_layers': has 2 entries for 48"));
  CHECK(contains(parseError(scoutText({{"moe_layers", {48}}})),
                 "field 'text_config.moe_layers': layer 48 is out of range"));
  CHECK(contains(parseError(scoutText({{"num_experts_per_tok", 17}})),
                 "field 'text_config.num_experts_per_tok': 17 exceeds"));
  CHECK(contains(parseError(scoutText({{"hidden_size", -1}})),
                 "field 'text_config.hidden_size'"));
  CHECK(contains(parseError(scoutText({{"model_type", "llama"}})),
                 "field 'text_config.model_type': expected 'llama4_text'"));
  CHECK(contains(parseError(scoutText({{"layer_types", {"sliding"}}})),
                 "field 'text_config.layer_types': has 1 entries for 48"));
  json noText = json::parse(readModelFile("llama-4-scout-17b-16e.json"));
  noText.erase("text_config");
  CHECK(contains(parseError(noText.dump()),
                 "field 'text_config': expected the language model's "
                 "configuration object"));
}

TEST_CASE("Nemotron: squared ReLU without gate, LayerNorm1p, partial RoPE",
          "[frontend][hf]") {
  std::vector<std::string> warnings;
  ModelConfig c = loadModel("nemotron-4-4b.json", &warnings);
  CHECK(warnings.empty()); // kv_channels equals head_dim
  CHECK(c.architecture == "NemotronForCausalLM");
  CHECK(c.norm == NormKind::LayerNorm1p);
  CHECK(c.normBias);
  CHECK(c.act == Activation::Relu2);
  CHECK_FALSE(c.gatedMlp);
  CHECK(c.rotaryPct == Approx(0.5));
  CHECK(c.headDim == 128);
  CHECK_FALSE(c.tieEmbeddings);

  // 4096 / 48 does not divide: head_dim must be given (Minitron-8B).
  std::string bad = edited("nemotron-4-4b.json", {{"hidden_size", 4096},
                                                  {"num_attention_heads", 48},
                                                  {"kv_channels", nullptr}});
  CHECK(contains(parseError(bad),
                 "t.json: field 'num_attention_heads': 48 does not divide "
                 "hidden_size 4096"));
  ModelConfig ok = parseOk(edited(
      "nemotron-4-4b.json",
      {{"hidden_size", 4096}, {"num_attention_heads", 48}, {"head_dim", 128}}));
  CHECK(ok.headDim == 128);

  // kv_channels that HF would not use is reported.
  warnings.clear();
  parseOk(edited("nemotron-4-4b.json", {{"kv_channels", 64}}), &warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(contains(warnings[0], "field 'kv_channels'"));
}

TEST_CASE("BERT: bidirectional post-LN encoder, token types, MLM and NSP "
          "heads",
          "[frontend][hf]") {
  std::vector<std::string> warnings;
  ModelConfig c = loadModel("bert-base-uncased.json", &warnings);
  CHECK(c.architecture == "BertForMaskedLM");
  CHECK(c.family == ModelFamily::EncoderLM);
  CHECK_FALSE(c.causal);
  CHECK(c.hidden == 768);
  CHECK(c.numLayers == 12);
  CHECK(c.numHeads == 12);
  CHECK(c.headDim == 64);
  CHECK(c.ffn == 3072);
  CHECK(c.vocabSize == 30522);
  CHECK(c.maxPositions == 512);
  CHECK(c.typeVocabSize == 2);
  CHECK(c.act == Activation::Gelu);
  CHECK(c.position == PositionKind::Learned);
  CHECK(c.norm == NormKind::LayerNorm);
  CHECK_FALSE(c.finalNorm);
  CHECK(c.tieEmbeddings);
  CHECK_FALSE(c.pooler); // BertForMaskedLM has no pooling layer
  CHECK(c.numClasses == 0);
  CHECK(c.dropout == Approx(0.1));
  // HF's num_parameters() of bert-base-uncased: 109,514,298 for
  // BertForMaskedLM, 110,106,428 for BertForPreTraining (the pooler and
  // the 2-way next-sentence head on top).
  CHECK(countParams(c).total() == 109'514'298);
  ModelConfig pt = parseOk(edited(
      "bert-base-uncased.json", {{"architectures", {"BertForPreTraining"}}}));
  CHECK(pt.pooler);
  CHECK(pt.numClasses == 2);
  CHECK(countParams(pt).total() == 110'106'428);
  // model_type alone reads as BertForPreTraining.
  ModelConfig byType =
      parseOk(edited("bert-base-uncased.json", {{"architectures", nullptr}}));
  CHECK(byType.architecture == "BertForPreTraining");

  CHECK(contains(parseError(edited("bert-base-uncased.json",
                                   {{"position_embedding_type",
                                     "relative_key"}})),
                 "t.json: field 'position_embedding_type': unsupported "
                 "'relative_key' (supported: absolute)"));
  CHECK(contains(parseError(edited("bert-base-uncased.json",
                                   {{"tie_word_embeddings", false}})),
                 "field 'tie_word_embeddings': an untied BERT decoder"));
  CHECK(contains(parseError(edited("bert-base-uncased.json",
                                   {{"intermediate_size", nullptr}})),
                 "field 'intermediate_size': missing"));
}

TEST_CASE("ViT: a sequence over 4096 tokens is not capped", "[frontend][hf]") {
  // 1024 / 16 = 64 patches a side: 4096 patches + the class token. A
  // language model's default sequence is capped at 4096; the image fixes a
  // ViT's.
  ModelConfig c = parseOk(edited("vit-base-patch16-224.json",
                                 {{"image_size", 1024}, {"patch_size", 16}}));
  CHECK(c.seqLen == 4097);
  CHECK(c.maxPositions == 4097);
}

TEST_CASE("ViT: patches, class token, classes from id2label", "[frontend][hf]") {
  std::vector<std::string> warnings;
  ModelConfig c = loadModel("vit-base-patch16-224.json", &warnings);
  CHECK(warnings.empty()); // encoder_stride and label2id are understood
  CHECK(c.architecture == "ViTForImageClassification");
  CHECK(c.family == ModelFamily::Vision);
  CHECK_FALSE(c.causal);
  CHECK(c.hidden == 768);
  CHECK(c.numLayers == 12);
  CHECK(c.headDim == 64);
  CHECK(c.imageSize == 224);
  CHECK(c.patchSize == 16);
  CHECK(c.channels == 3);
  CHECK(c.numClasses == 1000); // the entries of id2label
  CHECK(c.seqLen == 14 * 14 + 1);
  CHECK(c.act == Activation::Gelu);
  CHECK(c.dropout == 0.0);
  // HF's num_parameters() of google/vit-base-patch16-224: 86,567,656.
  CHECK(countParams(c).total() == 86'567'656);
  ModelConfig tenWay = parseOk(edited("vit-base-patch16-224.json",
                                      {{"num_labels", 10},
                                       {"id2label", nullptr},
                                       {"label2id", nullptr}}));
  CHECK(tenWay.numClasses == 10);
  ModelConfig noLabels = parseOk(edited(
      "vit-base-patch16-224.json", {{"id2label", nullptr}, {"label2id", nullptr}}));
  CHECK(noLabels.numClasses == 2); // ViTConfig's default
  CHECK(contains(parseError(edited("vit-base-patch16-224.json",
                                   {{"patch_size", 15}})),
                 "t.json: field 'patch_size': 15 does not divide image_size "
                 "224"));
  CHECK(contains(parseError(edited("vit-base-patch16-224.json",
                                   {{"id2label", json::array()},
                                    {"label2id", nullptr}})),
                 "field 'id2label': expected a non-empty object"));
}

TEST_CASE("GPT-NeoX: parallel residual, partial rotary, biases, untied",
          "[frontend][hf]") {
  std::vector<std::string> warnings;
  ModelConfig c = loadModel("gpt-neox-20b.json", &warnings);
  CHECK(warnings.empty());
  CHECK(c.architecture == "GPTNeoXForCausalLM");
  CHECK(c.parallelResidual);
  CHECK(c.rotaryPct == Approx(0.25));
  CHECK(c.position == PositionKind::Rotary);
  CHECK(c.qkvBias);
  CHECK(c.outBias);
  CHECK(c.mlpBias);
  CHECK(c.norm == NormKind::LayerNorm);
  CHECK(c.normBias);
  CHECK_FALSE(c.gatedMlp);
  CHECK(c.act == Activation::GeluTanh); // gelu_fast
  CHECK_FALSE(c.tieEmbeddings);
  CHECK(c.dtype == DType::F16);
  CHECK(c.seqLen == 2048);
  ModelConfig s =
      parseOk(edited("gpt-neox-20b.json",
                     {{"use_parallel_residual", false}, {"rotary_pct", 1.0}}));
  CHECK_FALSE(s.parallelResidual);
  CHECK(s.rotaryPct == 1.0);
}

TEST_CASE("GPT-J: one norm for the parallel block, partial interleaved "
          "RoPE, biased LM head",
          "[frontend][hf]") {
  std::vector<std::string> warnings;
  ModelConfig c = loadModel("gpt-j-6b.json", &warnings);
  CHECK(warnings.empty());
  CHECK(c.architecture == "GPTJForCausalLM");
  CHECK(c.hidden == 4096);
  CHECK(c.headDim == 256);
  CHECK(c.ffn == 4 * 4096); // n_inner null
  CHECK(c.act == Activation::GeluTanh);
  CHECK(c.parallelResidual);
  CHECK(c.parallelSharedNorm);
  CHECK(c.position == PositionKind::Rotary);
  CHECK(c.ropeInterleaved);
  CHECK(c.rotaryPct == 64.0 / 256.0);
  CHECK(c.norm == NormKind::LayerNorm);
  CHECK_FALSE(c.qkvBias);
  CHECK_FALSE(c.outBias);
  CHECK(c.mlpBias);
  CHECK(c.headBias);
  CHECK_FALSE(c.tieEmbeddings);
  CHECK(c.maxPositions == 2048);
  CHECK(c.seqLen == 2048);
  CHECK(c.dropout == 0.0);
  // rotary_dim null rotates the whole head.
  CHECK(parseOk(edited("gpt-j-6b.json", {{"rotary_dim", nullptr}})).rotaryPct ==
        1.0);
  CHECK(contains(parseError(edited("gpt-j-6b.json", {{"rotary_dim", 512}})),
                 "field 'rotary_dim': 512 must be even and at most the head "
                 "size 256"));
  CHECK(contains(parseError(edited("gpt-j-6b.json", {{"n_head", 3}})),
                 "field 'n_head': 3 does not divide n_embd 4096"));
}

TEST_CASE("cases.json extras: mlp_gated, norm_type, rotary_pct",
          "[frontend][hf]") {
  // dgxc_nemotron4_15B: a Llama-named model with Nemotron's shape.
  const char *text = R"({"architectures": ["LlamaForCausalLM"],
    "model_type": "llama", "hidden_size": 6144, "intermediate_size": 24576,
    "num_hidden_layers": 32, "num_attention_heads": 48,
    "num_key_value_heads": 8, "vocab_size": 256000,
    "max_position_embeddings": 4096, "hidden_act": "relu2",
    "mlp_gated": false, "norm_type": "layernorm1p", "rotary_pct": 0.5,
    "tie_word_embeddings": false})";
  std::vector<std::string> warnings;
  ModelConfig c = parseOk(text, &warnings);
  CHECK(warnings.empty());
  CHECK(c.act == Activation::Relu2);
  CHECK_FALSE(c.gatedMlp);
  CHECK(c.norm == NormKind::LayerNorm1p);
  CHECK(c.normBias);
  CHECK(c.rotaryPct == Approx(0.5));

  ModelConfig r = parseOk(edited("gpt2.json", {{"norm_type", "rmsnorm"}}));
  CHECK(r.norm == NormKind::RMSNorm);
  CHECK_FALSE(r.normBias);
  ModelConfig l = parseOk(edited(
      "llama-3-8b.json", {{"norm_type", "layernorm"}, {"mlp_gated", false}}));
  CHECK(l.norm == NormKind::LayerNorm);
  CHECK(l.normBias);
  CHECK_FALSE(l.gatedMlp);
}

TEST_CASE("Every supported activation name", "[frontend][hf]") {
  std::vector<std::pair<const char *, Activation>> names = {
      {"gelu", Activation::Gelu},
      {"gelu_new", Activation::GeluTanh},
      {"gelu_pytorch_tanh", Activation::GeluTanh},
      {"gelu_fast", Activation::GeluTanh},
      {"silu", Activation::Silu},
      {"swish", Activation::Silu},
      {"relu", Activation::Relu},
      {"relu2", Activation::Relu2}};
  for (auto &[name, act] : names) {
    INFO(name);
    CHECK(parseOk(edited("llama-3-8b.json", {{"hidden_act", name}})).act ==
          act);
  }
}

//===----------------------------------------------------------------------===//
// Errors: each names the source, the field and the problem.
//===----------------------------------------------------------------------===//

TEST_CASE("Malformed JSON reports the parse position", "[frontend][hf]") {
  std::string m = parseError("{\"n_embd\": 768,,}");
  CHECK(contains(m, "t.json: malformed JSON"));
  CHECK(contains(m, "line 1, column 16"));
  CHECK(contains(parseError(""), "t.json: malformed JSON"));
  std::string m2 = parseError("{\n  \"a\": 1,\n  \"b\": [1, 2\n}");
  CHECK(contains(m2, "line 4"));
  // A number beyond double's range is refused by the parser too.
  CHECK(parseError("{\"n_embd\": 1e999}") ==
        "t.json: malformed JSON: number overflow parsing '1e999'");
}

TEST_CASE("The top level must be an object", "[frontend][hf]") {
  CHECK(contains(parseError("[1, 2]"),
                 "t.json: expected a JSON object at the top level"));
}

TEST_CASE("A missing required key is named", "[frontend][hf]") {
  CHECK(parseError(edited("llama-3-8b.json", {{"hidden_size", nullptr}})) ==
        "t.json: field 'hidden_size': missing (required by this "
        "architecture)");
  CHECK(contains(parseError(edited("gpt2.json", {{"n_positions", nullptr}})),
                 "field 'n_positions': missing"));
  CHECK(contains(
      parseError(edited("mixtral-8x7b.json", {{"num_local_experts", nullptr}})),
      "field 'num_local_experts': missing"));
  CHECK(contains(
      parseError(edited("deepseek-v3.json", {{"kv_lora_rank", nullptr}})),
      "field 'kv_lora_rank': missing"));
}

TEST_CASE("Bad sizes: negative, zero, fractional, non-numeric, huge",
          "[frontend][hf]") {
  CHECK(parseError(edited("llama-3-8b.json", {{"num_attention_heads", -4}})) ==
        "t.json: field 'num_attention_heads': expected a positive integer, "
        "got -4");
  CHECK(parseError(edited("llama-3-8b.json", {{"num_hidden_layers", 0}})) ==
        "t.json: field 'num_hidden_layers': expected a positive integer, got "
        "0");
  CHECK(parseError(edited("llama-3-8b.json", {{"hidden_size", 4096.5}})) ==
        "t.json: field 'hidden_size': expected a positive integer, got "
        "4096.5");
  CHECK(parseError(edited("llama-3-8b.json", {{"vocab_size", "128256"}})) ==
        "t.json: field 'vocab_size': expected a positive integer, got "
        "\"128256\"");
  CHECK(parseError(edited("llama-3-8b.json", {{"vocab_size", true}})) ==
        "t.json: field 'vocab_size': expected a positive integer, got true");
  // An integral float is accepted as the integer.
  CHECK(parseOk(edited("llama-3-8b.json", {{"hidden_size", 4096.0}})).hidden ==
        4096);

  // 2^63 does not fit int64; 2^64 is read as a double; both are refused.
  std::string text = readModelFile("llama-3-8b.json");
  auto withHidden = [&](const std::string &v) {
    json j = json::parse(text);
    j.erase("hidden_size");
    std::string s = j.dump();
    return "{\"hidden_size\": " + v + ", " + s.substr(1);
  };
  CHECK(contains(parseError(withHidden("9223372036854775808")),
                 "field 'hidden_size': 9223372036854775808 is above the "
                 "supported limit 2147483647"));
  CHECK(contains(parseError(withHidden("18446744073709551616")),
                 "field 'hidden_size'"));
  CHECK(
      contains(parseError(withHidden("1e30")), "is above the supported limit"));
  CHECK(contains(parseError(withHidden("2147483648")),
                 "2147483648 is above the supported limit 2147483647"));
}

TEST_CASE("Sizes whose products overflow int64 are refused", "[frontend][hf]") {
  // Each value is within the per-size limit; the parameter total is not.
  std::string m =
      parseError(edited("llama-3-8b.json", {{"hidden_size", 2147483647},
                                            {"intermediate_size", 2147483647},
                                            {"num_hidden_layers", 2147483647},
                                            {"num_attention_heads", 1},
                                            {"num_key_value_heads", 1}}));
  CHECK(contains(m, "t.json: "));
  CHECK(contains(m, "overflows"));
}

TEST_CASE("Unknown or missing architecture", "[frontend][hf]") {
  std::string m =
      parseError(edited("llama-3-8b.json", {{"architectures", {"BertModel"}}}));
  CHECK(contains(m, "t.json: field 'architectures': unsupported architecture "
                    "'BertModel'"));
  CHECK(contains(m, "GptOssForCausalLM")); // lists the supported ones
  CHECK(
      contains(parseError(edited("llama-3-8b.json", {{"architectures", nullptr},
                                                     {"model_type", "t5"}})),
               "field 'model_type': unsupported architecture 't5'"));
  CHECK(
      contains(parseError(edited("llama-3-8b.json", {{"architectures", nullptr},
                                                     {"model_type", nullptr}})),
               "no 'architectures' or 'model_type' key"));
  CHECK(contains(
      parseError(edited("llama-3-8b.json", {{"architectures", json::array()}})),
      "field 'architectures': expected a non-empty array of strings"));
}

TEST_CASE("Unknown activation names the key and the value", "[frontend][hf]") {
  CHECK(
      contains(parseError(edited("llama-3-8b.json", {{"hidden_act", "tanh"}})),
               "t.json: field 'hidden_act': unsupported activation 'tanh'"));
  CHECK(contains(
      parseError(edited("gpt2.json", {{"activation_function", "quick_gelu"}})),
      "field 'activation_function': unsupported activation 'quick_gelu'"));
}

TEST_CASE("Heads that do not divide are refused", "[frontend][hf]") {
  CHECK(parseError(edited("gpt2.json", {{"n_head", 5}})) ==
        "t.json: field 'n_head': 5 does not divide n_embd 768");
  CHECK(contains(
      parseError(edited("llama-3-8b.json", {{"num_attention_heads", 3},
                                            {"num_key_value_heads", 1}})),
      "field 'num_attention_heads': 3 does not divide hidden_size "
      "4096 (and no 'head_dim' is given)"));
  CHECK(parseError(edited("llama-3-8b.json", {{"num_key_value_heads", 5}})) ==
        "t.json: field 'num_key_value_heads': 5 does not divide "
        "num_attention_heads 32");
  CHECK(contains(
      parseError(edited("gpt-neox-20b.json", {{"num_attention_heads", 7}})),
      "field 'num_attention_heads': 7 does not divide"));
}

TEST_CASE("Other bad values", "[frontend][hf]") {
  CHECK(contains(
      parseError(edited("mixtral-8x7b.json", {{"num_experts_per_tok", 9}})),
      "field 'num_experts_per_tok': 9 exceeds num_local_experts 8"));
  CHECK(contains(
      parseError(edited("llama-3-8b.json", {{"norm_type", "batchnorm"}})),
      "field 'norm_type': unsupported norm 'batchnorm'"));
  CHECK(contains(parseError(edited("gpt2.json", {{"rotary_pct", 0.5}})),
                 "field 'rotary_pct': this architecture has no rotary"));
  CHECK(contains(parseError(edited("llama-3-8b.json", {{"rotary_pct", 1.5}})),
                 "field 'rotary_pct': expected a number in (0, 1], got 1.5"));
  CHECK(contains(parseError(edited("llama-3-8b.json", {{"rotary_pct", 0}})),
                 "field 'rotary_pct'"));
  CHECK(contains(
      parseError(edited("gpt2.json", {{"tie_word_embeddings", "yes"}})),
      "field 'tie_word_embeddings': expected true or false, got "
      "\"yes\""));
  CHECK(
      contains(parseError(edited("llama-3-8b.json", {{"torch_dtype", "int8"}})),
               "field 'torch_dtype': unsupported dtype 'int8'"));
  CHECK(contains(parseError(edited("gpt2.json", {{"resid_pdrop", 1.0}})),
                 "field 'resid_pdrop'"));
  CHECK(contains(parseError(edited("llama-3-8b.json", {{"mlp_gated", 1}})),
                 "field 'mlp_gated': expected true or false"));
  CHECK(contains(
      parseError(edited("gpt-oss-20b.json", {{"sliding_window", 0}})),
      "field 'layer_types': has sliding_attention layers but no positive "
      "'sliding_window'"));
}

TEST_CASE("A file that cannot be opened names the path", "[frontend][hf]") {
  Result<ModelConfig> r =
      loadHFConfigFile(modelPath("no-such-model.json"), nullptr);
  REQUIRE_FALSE(r.isOk());
  CHECK(contains(r.message(), "no-such-model.json: cannot open file"));
}

TEST_CASE("Unknown keys become warnings naming the key", "[frontend][hf]") {
  std::vector<std::string> warnings;
  ModelConfig c = parseOk(
      edited("llama-3-8b.json", {{"frobnication_factor", 3},
                                 {"n_embd", 768}, // a GPT-2 key in a Llama
                                 {"some_layer_norm_eps", 1e-6},
                                 {"_name_or_path", "x"},
                                 {"bos_token_id", 1}}),
      &warnings);
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0] == "t.json: unknown key 'frobnication_factor' ignored");
  CHECK(warnings[1] == "t.json: unknown key 'n_embd' ignored");
  CHECK(c.hidden == 4096);
  // No warnings list: still parses.
  CHECK(
      parseHFConfig(edited("llama-3-8b.json", {{"zzz", 1}}), "t.json", nullptr)
          .isOk());
}
