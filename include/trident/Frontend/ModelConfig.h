//===- ModelConfig.h - Normalised description of a model ------*- C++ -*-===//
//
// Every model source (zoo, Hugging Face config.json, cases.json extras) is
// first normalised into a ModelConfig; one builder then turns a ModelConfig
// into tgraph IR. Keeping this plain C++ lets the importer be unit-tested
// without MLIR and keeps the builder the single place that knows the IR.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_FRONTEND_MODELCONFIG_H
#define TRIDENT_FRONTEND_MODELCONFIG_H

#include "trident/Support/DType.h"
#include "trident/Support/RopeScaling.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace trident {

namespace frontend {

/// The overall shape of the network.
enum class ModelFamily : uint8_t {
  DecoderLM, ///< GPT / Llama / MoE causal language models.
  EncoderLM, ///< BERT-style bidirectional encoder with an MLM head.
  Vision,    ///< ViT: patch embedding + encoder + classifier head.
  Recommender ///< DLRM: embedding bags + MLPs + pairwise interaction.
};

enum class NormKind : uint8_t { LayerNorm, RMSNorm, LayerNorm1p };

enum class Activation : uint8_t {
  Gelu,     ///< exact erf GeLU
  GeluTanh, ///< tanh approximation ("gelu_new", "gelu_pytorch_tanh")
  Silu,
  Relu,
  Relu2 ///< squared ReLU (Nemotron, Primer)
};

enum class PositionKind : uint8_t {
  Learned, ///< learned absolute position embedding table
  Rotary,  ///< RoPE applied inside attention (no parameters)
  None
};

/// Attention flavour of one layer.
enum class AttentionKind : uint8_t {
  Standard, ///< MHA / GQA / MQA: q, k, v projections then softmax(QK^T)V
  MLA       ///< DeepSeek multi-head latent attention (low-rank q and kv)
};

/// Multi-head latent attention dimensions (DeepSeek-V2/V3 config names).
struct MLAConfig {
  int64_t qLoraRank = 0; ///< 0 means q is projected directly
  int64_t kvLoraRank = 0;
  int64_t qkNopeHeadDim = 0;
  int64_t qkRopeHeadDim = 0;
  int64_t vHeadDim = 0;
};

/// Mixture-of-experts feed-forward, used by the layers it applies to.
struct MoEConfig {
  int64_t numExperts = 0;       ///< routed experts; 0 means a dense MLP
  int64_t topK = 0;             ///< experts each token is routed to
  int64_t expertFfn = 0;        ///< intermediate size of one routed expert
  int64_t numSharedExperts = 0; ///< always-on experts (DeepSeek)
  int64_t sharedFfn = 0;        ///< intermediate size of one shared expert
  bool routerBias = false;      ///< router linear has a bias (gpt-oss)
  /// Llama 4 (Llama4TextMoe; Megatron-LM's --moe-apply-probs-on-input):
  /// each routed expert's input is scaled by its score, not its output.
  /// tgraph's moe op weights the outputs: the same work, not the same
  /// function (the scale would pass through the expert's activation).
  bool scoresOnInput = false;
  /// DeepSeek-V3 `e_score_correction_bias`: one value per routed expert,
  /// added to the scores only to pick the top-k (not to weight them).
  bool routerScoreCorrection = false;
  bool expertBias = false;      ///< expert linears have biases (gpt-oss)
  /// > 0: gpt-oss's clamped SwiGLU (HF `swiglu_limit`); 0: plain act.
  double swigluLimit = 0.0;
  /// The top-k weights are renormalised to sum to one (Mixtral; HF
  /// `norm_topk_prob`, whose Qwen-MoE default is false).
  bool renormalize = true;
  /// DeepSeek-V3's router (DeepseekV3TopkRouter): sigmoid scores instead
  /// of softmax probabilities; the experts in numGroups groups (HF
  /// `n_group`), a token's experts from its topkGroups best groups
  /// (`topk_group`); the weights times routedScale
  /// (`routed_scaling_factor`).
  bool sigmoidScores = false;
  int64_t numGroups = 1, topkGroups = 1;
  double routedScale = 1.0;
  int64_t firstDenseLayers = 0; ///< leading layers with a dense MLP
  int64_t layerFreq = 1;        ///< every n-th layer (after the dense ones)
  /// Explicit per-layer flag (Qwen3-MoE `mlp_only_layers` /
  /// `decoder_sparse_step`, DeepSeek `moe_layer_freq` > 1). When non-empty
  /// it has one entry per layer and overrides firstDenseLayers / layerFreq.
  std::vector<bool> moeLayers;
};

/// A normalised model description. All sizes are exact and positive unless
/// documented otherwise; `validate()` checks that.
struct ModelConfig {
  std::string name;         ///< zoo name or file stem
  std::string architecture; ///< HF architecture name or zoo family tag
  ModelFamily family = ModelFamily::DecoderLM;
  DType dtype = DType::BF16;

  // Transformer trunk.
  int64_t vocabSize = 0;
  int64_t hidden = 0;
  int64_t numLayers = 0;
  int64_t numHeads = 0;
  int64_t numKvHeads = 0; ///< == numHeads for MHA, 1 for MQA
  int64_t headDim = 0;    ///< may differ from hidden / numHeads (Qwen3)
  /// Softmax scale of the attention; 0 means 1/sqrt(headDim). DeepSeek's
  /// YaRN checkpoints multiply it by mscale(factor, mscale_all_dim)^2.
  double softmaxScale = 0.0;
  int64_t ffn = 0;        ///< dense MLP intermediate size
  int64_t seqLen = 0;     ///< default sequence length (max positions)
  int64_t maxPositions = 0;

  NormKind norm = NormKind::LayerNorm;
  bool normBias = true; ///< LayerNorm has a bias (not for RMSNorm)
  Activation act = Activation::Gelu;
  bool gatedMlp = false; ///< gate * up (SwiGLU / GeGLU)
  bool qkvBias = false;
  bool outBias = false;  ///< attention output projection bias
  bool mlpBias = false;
  bool qkNorm = false;   ///< per-head RMSNorm on q and k (Qwen3)
  /// The q/k norms only on the layers that rotate (Llama 4's use_qk_norm,
  /// on its RoPE layers; see noRopeLayers).
  bool qkNormRopeLayersOnly = false;
  bool parallelResidual = false; ///< GPT-NeoX / GPT-J
  /// The parallel block's attention and MLP read one norm (GPT-J's ln_1)
  /// instead of one each (GPT-NeoX).
  bool parallelSharedNorm = false;
  bool headBias = false; ///< the LM head linear has a bias (GPT-J)
  bool finalNorm = true;
  PositionKind position = PositionKind::Learned;
  double rotaryPct = 1.0; ///< fraction of head_dim rotated (NeoX partial)
  double ropeTheta = 10000.0; ///< RoPE base (RoFormer, Su et al. 2021)
  /// RoPE pairs dimensions 2i and 2i + 1 (DeepSeek's `rope_interleave`)
  /// instead of i and i + rotary / 2 (GPT-NeoX and Llama).
  bool ropeInterleaved = false;
  RopeScaling ropeScaling; ///< HF `rope_scaling` / `rope_parameters`
  /// Per-layer flag for layers without the rotary embedding (Llama 4's
  /// NoPE layers: HF `no_rope_layers` entries 0); empty: every layer of a
  /// rotary model rotates.
  std::vector<bool> noRopeLayers;
  /// The epsilon every norm adds to the variance (HF's rms_norm_eps,
  /// layer_norm_eps, layer_norm_epsilon, norm_eps). 1e-5 is Megatron-LM's
  /// default (--norm-epsilon).
  double normEps = 1e-5;
  bool tieEmbeddings = true;
  bool causal = true;

  AttentionKind attention = AttentionKind::Standard;
  MLAConfig mla;
  int64_t slidingWindow = 0; ///< 0: full attention everywhere
  /// Per-layer flag for sliding-window layers when they alternate; empty
  /// means every layer uses `slidingWindow` (if non-zero).
  std::vector<bool> slidingLayers;
  bool attentionSinks = false; ///< learned per-head sink logits (gpt-oss)

  MoEConfig moe;
  /// Dropout on the sublayer outputs before each residual add (GPT-2's
  /// resid_pdrop, BERT's hidden_dropout_prob).
  double dropout = 0.0;
  /// Dropout on the attention probabilities (attn_pdrop,
  /// attention_probs_dropout_prob, attention_dropout); unset: `dropout`.
  std::optional<double> attentionDropout;
  /// Dropout on the embedding output (embd_pdrop; BERT and ViT use their
  /// hidden rate there); unset: `dropout`.
  std::optional<double> embeddingDropout;
  double attentionDropoutRate() const {
    return attentionDropout.value_or(dropout);
  }
  double embeddingDropoutRate() const {
    return embeddingDropout.value_or(dropout);
  }

  // Encoder extras (BERT).
  int64_t typeVocabSize = 0; ///< token-type embeddings; 0: none
  bool pooler = false;

  // Vision extras (ViT).
  int64_t imageSize = 0;
  int64_t patchSize = 0;
  int64_t channels = 0;
  /// Classifier on the pooled output: ViT's head, or BERT's next-sentence
  /// head (2) on the pooler. 0: none.
  int64_t numClasses = 0;

  // Recommender extras (DLRM).
  int64_t denseFeatures = 0;
  std::vector<int64_t> tableRows; ///< rows of each embedding table
  int64_t embeddingDim = 0;
  int64_t bagSize = 1; ///< lookups pooled per table per sample
  std::vector<int64_t> bottomMlp; ///< widths after the input layer
  std::vector<int64_t> topMlp;    ///< widths ending in the output (1)

  /// True if layer `i` (0-based) uses a routed-expert MLP.
  bool isMoeLayer(int64_t i) const {
    if (moe.numExperts == 0)
      return false;
    if (!moe.moeLayers.empty())
      return i >= 0 && i < (int64_t)moe.moeLayers.size() && moe.moeLayers[i];
    if (i < moe.firstDenseLayers)
      return false;
    int64_t freq = moe.layerFreq > 0 ? moe.layerFreq : 1;
    return (i - moe.firstDenseLayers) % freq == 0;
  }
  /// True if layer `i` applies the rotary embedding.
  bool isRopeLayer(int64_t i) const {
    if (position != PositionKind::Rotary)
      return false;
    return noRopeLayers.empty() ||
           (i >= 0 && i < (int64_t)noRopeLayers.size() && !noRopeLayers[i]);
  }
  /// True if layer `i` norms its queries and keys.
  bool hasQkNorm(int64_t i) const {
    return qkNorm && (!qkNormRopeLayersOnly || isRopeLayer(i));
  }
  /// True if layer `i` uses sliding-window attention.
  bool isSlidingLayer(int64_t i) const {
    if (slidingWindow <= 0)
      return false;
    if (slidingLayers.empty())
      return true;
    return i < (int64_t)slidingLayers.size() && slidingLayers[i];
  }
};

/// How the tgraph builder groups layers into tgraph.repeat ops
/// (LayerBlocks.cpp), which the planner splits by iteration (blocks).
/// Layers with equal signatures (MoE, sliding window, RoPE, q/k norm) are
/// the same layer.
int64_t decoderLayerSignature(const ModelConfig &c, int64_t i);
/// The shortest period (up to 4 layers) whose signatures tile layers
/// [first, first+count); 0 if none does.
int64_t tilingPeriod(int64_t first, int64_t count,
                     const std::function<int64_t(int64_t)> &signature);
/// One run of a decoder's layers emitted together: one repeat of `period`
/// layers per iteration, or (period 0) one repeat per run of equal layers.
struct LayerRun {
  int64_t first = 0, count = 0, period = 0;
};
std::vector<LayerRun> decoderLayerRuns(const ModelConfig &c);
/// The layers of each block, in model order: what a plan's block counts
/// are in transformer layers.
std::vector<int64_t> blockLayers(const ModelConfig &c);

} // namespace frontend
} // namespace trident

#endif // TRIDENT_FRONTEND_MODELCONFIG_H
