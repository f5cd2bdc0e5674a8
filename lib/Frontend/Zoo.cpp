//===- Zoo.cpp - Built-in models ------------------------------------------===//
//
// Parameterised builders for the models a planner is asked about most. Each
// constant cites where it comes from; the tests check the resulting
// parameter counts against the published ones.
//
//===----------------------------------------------------------------------===//

#include "FrontendDetail.h"

#include <functional>
#include <utility>

namespace trident::frontend {
namespace {

/// Megatron-LM GPT (GPT-2 architecture): learned positions, pre-LN
/// LayerNorm with bias, biases on every linear, exact GeLU, 4h MLP,
/// embeddings tied to the output layer (Megatron's default), dropout 0.1
/// (Megatron's default hidden and attention dropout, which Korthikanti et
/// al. 2022 count in their activation-memory formula 34sbh + 5as^2b).
ModelConfig gpt(std::string name, int64_t hidden, int64_t heads,
                int64_t layers) {
  ModelConfig c;
  c.name = std::move(name);
  c.architecture = "GPT2LMHeadModel";
  c.family = ModelFamily::DecoderLM;
  // Narayanan et al. 2021 (SC'21), Section 5: vocabulary 51,200 (a multiple
  // of 1024) and sequence length 2048 for every model of Table 1.
  c.vocabSize = 51200;
  c.seqLen = c.maxPositions = 2048;
  c.hidden = hidden;
  c.numHeads = c.numKvHeads = heads;
  c.headDim = hidden / heads;
  c.numLayers = layers;
  c.ffn = 4 * hidden;
  c.norm = NormKind::LayerNorm;
  c.normBias = true;
  c.act = Activation::Gelu;
  c.qkvBias = c.outBias = c.mlpBias = true;
  c.position = PositionKind::Learned;
  c.tieEmbeddings = true;
  c.dropout = 0.1;
  return c;
}

/// Llama family: RMSNorm, RoPE, SwiGLU, no biases, untied output layer.
ModelConfig llama(std::string name, int64_t vocab, int64_t hidden,
                  int64_t layers, int64_t heads, int64_t kvHeads, int64_t ffn,
                  int64_t maxPositions, int64_t seqLen) {
  ModelConfig c;
  c.name = std::move(name);
  c.architecture = "LlamaForCausalLM";
  c.family = ModelFamily::DecoderLM;
  c.vocabSize = vocab;
  c.hidden = hidden;
  c.numLayers = layers;
  c.numHeads = heads;
  c.numKvHeads = kvHeads;
  c.headDim = hidden / heads;
  c.ffn = ffn;
  c.maxPositions = maxPositions;
  c.seqLen = seqLen;
  c.norm = NormKind::RMSNorm;
  c.normBias = false;
  c.act = Activation::Silu;
  c.gatedMlp = true;
  c.position = PositionKind::Rotary;
  c.tieEmbeddings = false;
  return c;
}

ModelConfig mixtral8x7b() {
  // Jiang et al. 2024, "Mixtral of Experts", Table 1: dim 4096, 32 layers,
  // head_dim 128, hidden_dim 14336, 32 heads, 8 kv heads, context 32768,
  // vocab 32000, 8 experts, top-2. No sliding window (unlike Mistral 7B).
  ModelConfig c =
      llama("mixtral-8x7b", 32000, 4096, 32, 32, 8, 14336, 32768, 32768);
  c.architecture = "MixtralForCausalLM";
  c.moe.numExperts = 8;
  c.moe.topK = 2;
  c.moe.expertFfn = 14336;
  // RoPE base 1e6: "rope_theta": 1000000.0 in the released config.json of
  // mistralai/Mixtral-8x7B-v0.1.
  c.ropeTheta = 1000000.0;
  return c;
}

ModelConfig bertLarge() {
  // Devlin et al. 2019, BERT: BERT-LARGE L=24, H=1024, A=16, 340M; 4H
  // feed-forward, GeLU, dropout 0.1, 512 positions, 2 segment types,
  // 30,522 WordPiece vocabulary (bert-large-uncased); pre-training ends at
  // sequence 512. Post-LN: no final norm; the MLM decoder is tied to the
  // word embeddings; the pooler feeds the 2-way next-sentence classifier.
  ModelConfig c;
  c.name = "bert-large";
  c.architecture = "BertForPreTraining";
  c.family = ModelFamily::EncoderLM;
  c.causal = false;
  c.vocabSize = 30522;
  c.hidden = 1024;
  c.numLayers = 24;
  c.numHeads = c.numKvHeads = 16;
  c.headDim = 64;
  c.ffn = 4096;
  c.seqLen = c.maxPositions = 512;
  c.typeVocabSize = 2;
  c.pooler = true;
  c.numClasses = 2;
  c.norm = NormKind::LayerNorm;
  c.normBias = true;
  c.act = Activation::Gelu;
  c.qkvBias = c.outBias = c.mlpBias = true;
  c.position = PositionKind::Learned;
  c.tieEmbeddings = true;
  c.finalNorm = false;
  c.dropout = 0.1;
  c.normEps = 1e-12; // HF bert-large-uncased config.json, layer_norm_eps
  return c;
}

ModelConfig vitH14() {
  // Dosovitskiy et al. 2021, ViT, Table 1: ViT-Huge 32 layers, hidden 1280,
  // MLP 5120, 16 heads, 632M; /14 patches on 224x224 RGB images gives
  // 16*16 = 256 patches + the CLS token; 1000-class ImageNet head. Dropout
  // 0.0 as for its JFT-300M pre-training (Appendix B.1).
  ModelConfig c;
  c.name = "vit-h-14";
  c.architecture = "ViTForImageClassification";
  c.family = ModelFamily::Vision;
  c.causal = false;
  c.hidden = 1280;
  c.numLayers = 32;
  c.numHeads = c.numKvHeads = 16;
  c.headDim = 80;
  c.ffn = 5120;
  c.imageSize = 224;
  c.patchSize = 14;
  c.channels = 3;
  c.numClasses = 1000;
  c.seqLen = c.maxPositions = (224 / 14) * (224 / 14) + 1;
  c.norm = NormKind::LayerNorm;
  c.normBias = true;
  c.act = Activation::Gelu;
  c.qkvBias = c.outBias = c.mlpBias = true;
  c.position = PositionKind::Learned;
  c.tieEmbeddings = false;
  c.dropout = 0.0;
  c.normEps = 1e-12; // HF ViTConfig and google/vit-huge-patch14-224-in21k
  return c;
}

ModelConfig dlrm() {
  // The MLPerf Training DLRM benchmark on Criteo Terabyte (reference:
  // facebookresearch/dlrm, `--arch-sparse-feature-size=128
  // --arch-mlp-bot=13-512-256-128 --arch-mlp-top=1024-1024-512-256-1
  // --max-ind-range=40000000`, dot interaction without self-interaction,
  // so the top MLP sees 128 + 27*26/2 = 479 inputs). Table rows are the
  // Criteo Terabyte categorical cardinalities capped at 40 M, as listed by
  // the MLPerf reference (`ln_emb`). One lookup per table per sample; FP32
  // as in the reference.
  ModelConfig c;
  c.name = "dlrm";
  c.architecture = "DLRM";
  c.family = ModelFamily::Recommender;
  c.dtype = DType::F32;
  c.causal = false;
  c.finalNorm = false;
  c.denseFeatures = 13;
  c.tableRows = {
      39884406, 39043,    17289,    7420,     20263,  3,     7120, 1543, 63,
      38532951, 2953546,  403346,   10,       2208,   11938, 155,  4,    976,
      14,       39979771, 25641295, 39664984, 585935, 12972, 108,  36};
  c.embeddingDim = 128;
  c.bagSize = 1;
  c.bottomMlp = {512, 256, 128};
  c.topMlp = {1024, 1024, 512, 256, 1};
  c.seqLen = 1;
  return c;
}

ModelConfig tinyGpt() {
  // A test-sized GPT-2-style model (not a published one): small enough that
  // emitted programs run in seconds on a CPU; FP32 so that they can be
  // checked against a single-device run without low-precision noise.
  ModelConfig c = gpt("tiny-gpt", 64, 4, 4);
  c.vocabSize = 256;
  c.seqLen = c.maxPositions = 32;
  c.ffn = 256;
  c.dtype = DType::F32;
  c.dropout = 0.0;
  return c;
}

using Builder = std::function<ModelConfig()>;

const std::vector<std::pair<std::string, Builder>> &zoo() {
  static const std::vector<std::pair<std::string, Builder>> models = {
      // Brown et al. 2020, GPT-3 Table 2.1: 175B has n_layers 96,
      // d_model 12288, n_heads 96 (vocabulary and sequence as Megatron's).
      {"gpt3-175b", [] { return gpt("gpt3-175b", 12288, 96, 96); }},
      // Narayanan et al. 2021 (SC'21), Table 1: (heads, hidden, layers).
      {"gpt-1.7b", [] { return gpt("gpt-1.7b", 2304, 24, 24); }},
      {"gpt-3.6b", [] { return gpt("gpt-3.6b", 3072, 32, 30); }},
      {"gpt-7.5b", [] { return gpt("gpt-7.5b", 4096, 32, 36); }},
      {"gpt-18b", [] { return gpt("gpt-18b", 6144, 48, 40); }},
      {"gpt-39b", [] { return gpt("gpt-39b", 8192, 64, 48); }},
      {"gpt-76b", [] { return gpt("gpt-76b", 10240, 80, 60); }},
      {"gpt-145b", [] { return gpt("gpt-145b", 12288, 96, 80); }},
      {"gpt-310b", [] { return gpt("gpt-310b", 16384, 128, 96); }},
      {"gpt-530b", [] { return gpt("gpt-530b", 20480, 128, 105); }},
      {"gpt-1t", [] { return gpt("gpt-1t", 25600, 160, 128); }},
      // Touvron et al. 2023 (Llama 2), Table 1 and the released params:
      // dim 4096, 32 layers, 32 heads, FFN 11008, vocab 32000, context 4k.
      {"llama-2-7b",
       [] {
         return llama("llama-2-7b", 32000, 4096, 32, 32, 32, 11008, 4096, 4096);
       }},
      // Dubey et al. 2024 (The Llama 3 Herd of Models), Table 3: layers,
      // model dim, FFN dim, heads, 8 kv heads; vocabulary 128,256 with the
      // special tokens (HF config); pre-trained on 8K sequences; Llama 3
      // supports 8K positions, Llama 3.1 128K.
      // RoPE base 500,000 ("We increase the RoPE base frequency
      // hyperparameter to 500,000", same paper, Section 3.2.1).
      {"llama-3-8b",
       [] {
         ModelConfig c = llama("llama-3-8b", 128256, 4096, 32, 32, 8, 14336,
                               8192, 8192);
         c.ropeTheta = 500000.0;
         return c;
       }},
      {"llama-3-70b",
       [] {
         ModelConfig c = llama("llama-3-70b", 128256, 8192, 80, 64, 8, 28672,
                               8192, 8192);
         c.ropeTheta = 500000.0;
         return c;
       }},
      {"llama-3.1-405b",
       [] {
         ModelConfig c = llama("llama-3.1-405b", 128256, 16384, 126, 128, 8,
                               53248, 131072, 8192);
         c.ropeTheta = 500000.0;
         // "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0,
         // "high_freq_factor": 4.0, "original_max_position_embeddings":
         // 8192, "rope_type": "llama3"} in the released config.json of
         // meta-llama/Llama-3.1-405B.
         c.ropeScaling.kind = RopeScaling::Kind::Llama3;
         c.ropeScaling.factor = 8.0;
         c.ropeScaling.lowFreqFactor = 1.0;
         c.ropeScaling.highFreqFactor = 4.0;
         c.ropeScaling.originalMaxPositions = 8192;
         return c;
       }},
      {"mixtral-8x7b", mixtral8x7b},
      {"bert-large", bertLarge},
      {"vit-h-14", vitH14},
      {"dlrm", dlrm},
      {"tiny-gpt", tinyGpt},
  };
  return models;
}

} // namespace

std::vector<std::string> zooModelNames() {
  std::vector<std::string> names;
  for (const auto &entry : zoo())
    names.push_back(entry.first);
  return names;
}

Result<ModelConfig> zooModel(std::string_view name) {
  for (const auto &entry : zoo()) {
    if (entry.first != name)
      continue;
    ModelConfig c = entry.second();
    std::string source = "zoo model '" + entry.first + "'";
    if (Status s = validateModelConfig(c, source); !s)
      return s;
    return c;
  }
  std::string names;
  for (const auto &entry : zoo())
    names += (names.empty() ? "" : ", ") + entry.first;
  return Status::error("unknown zoo model '" + std::string(name) +
                       "' (known: " + names + ")");
}

} // namespace trident::frontend
