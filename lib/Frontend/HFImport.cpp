//===- HFImport.cpp - Hugging Face config.json importer -------------------===//
//
// Maps a Hugging Face `config.json` onto a ModelConfig. Each supported
// architecture reads exactly the keys its HF modeling code uses, with the
// defaults of its HF configuration class; every key read is marked, and a key
// nobody read and that is not on the list of known-irrelevant keys becomes a
// warning, so a key that would change the model is never dropped silently.
// On top of the HF names, the evaluation cases (shared/validation/cases.json)
// use `mlp_gated`, `norm_type` and `rotary_pct` to describe shapes that
// depart from the named architecture; they apply to every architecture.
//
//===----------------------------------------------------------------------===//

#include "FrontendDetail.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace trident::frontend {
namespace {

using json = nlohmann::json;

/// The default sequence length when a config gives no usable one.
/// `max_position_embeddings` is the longest context a model supports (often
/// 32 k to 128 k after long-context extension), not the length it is
/// pre-trained or planned at; 4096 is the most common pre-training length
/// among the Llama-class runs of shared/validation/cases.json and keeps a
/// default plan's activation memory realistic. Learned-position models
/// with a shorter table (GPT-2: 1024) keep their table length.
constexpr int64_t kDefaultSeqLen = 4096;

/// Keys that do not change the computed graph (token ids, initialisation,
/// RoPE frequencies and scaling, loss coefficients, generation and
/// serialisation settings, routing details that keep the shapes). They are
/// accepted silently; so are keys ending in `_eps` / `_epsilon` and keys
/// starting with `_` (HF metadata such as `_name_or_path`).
const std::set<std::string, std::less<>> &ignoredKeys() {
  static const std::set<std::string, std::less<>> keys = {
      "transformers_version",
      "bos_token_id",
      "eos_token_id",
      "pad_token_id",
      "sep_token_id",
      "cls_token_id",
      "unk_token_id",
      "mask_token_id",
      "decoder_start_token_id",
      "rope_theta",
      "rope_type",
      "rotary_emb_base",
      "rope_interleave",
      "initializer_range",
      "initializer_factor",
      "encoder_stride",         // ViT's masked-image-modeling decoder
      "gradient_checkpointing", // a training switch, not a shape
      "use_cache",
      "pretraining_tp",
      "router_aux_loss_coef",
      "router_z_loss_coef",
      "router_jitter_noise",
      "output_router_logits",
      "aux_loss_alpha",
      "seq_aux",
      "norm_topk_prob",
      "topk_method",
      "n_group",
      "topk_group",
      "scoring_func",
      "routed_scaling_factor",
      "ep_size",
      "auto_map",
      "tokenizer_class",
      "task_specific_params",
      "summary_type",
      "summary_use_proj",
      "summary_activation",
      "summary_proj_to_labels",
      "summary_first_dropout",
      "scale_attn_weights",
      "scale_attn_by_inverse_layer_idx",
      "reorder_and_upcast_attn",
      "n_ctx",
      "quantization_config",
      "initial_context_length",
      "classifier_dropout",
      "is_decoder",
      "output_attentions",
      "output_hidden_states",
      "return_dict",
      "torchscript",
      "use_bfloat16",
      "id2label",
      "label2id",
      "problem_type",
      "finetuning_task",
      "attn_implementation",
      "keys_to_ignore_at_inference",
      "max_sequence_length",
      "use_mrope",
      "for_llm_compressor"}; // Llama 4: a quantisation-tool switch
  return keys;
}

/// A value as it appears in the file, for messages.
std::string describe(const json &v) {
  if (v.is_number_float()) {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.17g", v.get<double>());
    return buf;
  }
  // Arrays and objects by their type only: dumping one is recursive, and a
  // hostile file may nest them deeply.
  if (v.is_structured())
    return std::string("an ") + v.type_name();
  std::string s = v.dump();
  if (s.size() > 60)
    s = s.substr(0, 57) + "...";
  return s;
}

/// Reads keys of one JSON object, marking each one read and keeping the
/// first error. Every getter is a no-op once an error is recorded, so a
/// builder reads straight through and checks `failed()` once.
class Reader {
public:
  /// `prefix` names a nested object in messages ("rope_scaling.").
  Reader(const json &obj, std::string_view source, std::string prefix = "")
      : obj_(obj), source_(source), prefix_(std::move(prefix)) {}

  bool failed() const { return !error_.empty(); }
  Status status() const { return Status::error(error_); }
  std::string_view source() const { return source_; }

  void fail(const std::string &key, const std::string &problem) {
    if (!failed())
      error_ = std::string(source_) + ": field '" + prefix_ + key +
               "': " + problem;
  }

  /// The value of `key`, or nullptr when absent or null (HF writes null for
  /// "use the default"). Marks the key as understood.
  const json *get(const std::string &key) {
    used_.insert(key);
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null())
      return nullptr;
    return &*it;
  }
  bool has(const std::string &key) { return get(key) != nullptr; }
  /// True when `key` is written as null (where None is not the default).
  bool isNull(const std::string &key) {
    used_.insert(key);
    auto it = obj_.find(key);
    return it != obj_.end() && it->is_null();
  }

  /// An integer >= `min`; sets `out` and returns true when present.
  bool optInt(const std::string &key, int64_t &out, int64_t min = 1) {
    if (failed())
      return false;
    const json *v = get(key);
    if (!v)
      return false;
    std::optional<int64_t> x = toInt(key, *v, min);
    if (!x)
      return false;
    out = *x;
    return true;
  }
  void reqInt(const std::string &key, int64_t &out, int64_t min = 1) {
    if (failed())
      return;
    if (!has(key)) {
      fail(key, "missing (required by this architecture)");
      return;
    }
    optInt(key, out, min);
  }

  bool optBool(const std::string &key, bool &out) {
    if (failed())
      return false;
    const json *v = get(key);
    if (!v)
      return false;
    if (!v->is_boolean()) {
      fail(key, "expected true or false, got " + describe(*v));
      return false;
    }
    out = v->get<bool>();
    return true;
  }

  bool optString(const std::string &key, std::string &out) {
    if (failed())
      return false;
    const json *v = get(key);
    if (!v)
      return false;
    if (!v->is_string()) {
      fail(key, "expected a string, got " + describe(*v));
      return false;
    }
    out = v->get<std::string>();
    return true;
  }

  /// A finite number in [lo, hi] (or (lo, hi] when `openLo`).
  bool optNumber(const std::string &key, double &out, double lo, double hi,
                 bool openLo) {
    if (failed())
      return false;
    const json *v = get(key);
    if (!v)
      return false;
    double d = v->is_number() ? v->get<double>() : NAN;
    bool ok = std::isfinite(d) && (openLo ? d > lo : d >= lo) && d <= hi;
    if (!ok) {
      char range[64];
      std::snprintf(range, sizeof(range), "%s%g, %g]", openLo ? "(" : "[", lo,
                    hi);
      fail(key, std::string("expected a number in ") + range + ", got " +
                    describe(*v));
      return false;
    }
    out = d;
    return true;
  }

  /// An array of integers >= `min`.
  bool optIntList(const std::string &key, std::vector<int64_t> &out,
                  int64_t min) {
    if (failed())
      return false;
    const json *v = get(key);
    if (!v)
      return false;
    if (!v->is_array()) {
      fail(key, "expected an array of integers, got " + describe(*v));
      return false;
    }
    out.clear();
    for (const json &e : *v) {
      std::optional<int64_t> x = toInt(key, e, min);
      if (!x)
        return false;
      out.push_back(*x);
    }
    return true;
  }

  bool optStringList(const std::string &key, std::vector<std::string> &out) {
    if (failed())
      return false;
    const json *v = get(key);
    if (!v)
      return false;
    bool ok = v->is_array() &&
              std::all_of(v->begin(), v->end(),
                          [](const json &e) { return e.is_string(); });
    if (!ok) {
      fail(key, "expected an array of strings, got " + describe(*v));
      return false;
    }
    out.clear();
    for (const json &e : *v)
      out.push_back(e.get<std::string>());
    return true;
  }

  /// Keys present in the object that no builder read and that are not
  /// known to be irrelevant.
  std::vector<std::string> unknownKeys() const {
    std::vector<std::string> out;
    for (auto it = obj_.begin(); it != obj_.end(); ++it) {
      const std::string &k = it.key();
      if (used_.count(k) || ignoredKeys().count(k) || k.starts_with("_") ||
          k.ends_with("_eps") || k.ends_with("_epsilon"))
        continue;
      out.push_back(prefix_ + k);
    }
    return out;
  }
  /// Adopts a nested reader's first error.
  void adopt(const Reader &inner) {
    if (!failed() && inner.failed())
      error_ = inner.error_;
  }

private:
  /// Sizes are exact integers: fractional, non-finite, non-numeric and
  /// out-of-range values (including 2^63 and above) are refused.
  std::optional<int64_t> toInt(const std::string &key, const json &v,
                               int64_t min) {
    std::string expected = min > 0    ? "expected a positive integer"
                           : min == 0 ? "expected a non-negative integer"
                                      : "expected an integer";
    int64_t x = 0;
    if (v.is_number_unsigned()) {
      uint64_t u = v.get<uint64_t>();
      if (u > (uint64_t)detail::kMaxDim) {
        fail(key, describe(v) + " is above the supported limit " +
                      std::to_string(detail::kMaxDim));
        return std::nullopt;
      }
      x = (int64_t)u;
    } else if (v.is_number_integer()) {
      x = v.get<int64_t>();
    } else if (v.is_number_float()) {
      double d = v.get<double>();
      if (!std::isfinite(d) || d != std::floor(d)) {
        fail(key, expected + ", got " + describe(v));
        return std::nullopt;
      }
      if (std::fabs(d) > (double)detail::kMaxDim) {
        fail(key, describe(v) + " is above the supported limit " +
                      std::to_string(detail::kMaxDim));
        return std::nullopt;
      }
      x = (int64_t)d;
    } else {
      fail(key, expected + ", got " + describe(v));
      return std::nullopt;
    }
    if (x < min) {
      fail(key, expected + ", got " + std::to_string(x));
      return std::nullopt;
    }
    if (x > detail::kMaxDim) {
      fail(key, std::to_string(x) + " is above the supported limit " +
                    std::to_string(detail::kMaxDim));
      return std::nullopt;
    }
    return x;
  }

  const json &obj_;
  std::string_view source_;
  std::string prefix_;
  std::set<std::string> used_;
  std::string error_;
};

enum class Arch {
  Gpt2,
  Llama,
  Mistral,
  Mixtral,
  Qwen2,
  GptNeoX,
  GptJ,
  Qwen3,
  Qwen3Moe,
  DeepseekV3,
  Nemotron,
  GptOss,
  Llama4,     ///< Llama4ForConditionalGeneration: the text_config's model
  Llama4Text, ///< Llama4ForCausalLM
  BertMaskedLM,
  BertPreTraining,
  ViT
};

struct ArchInfo {
  const char *hfName;
  const char *modelType;
  Arch arch;
};

constexpr ArchInfo kArchs[] = {
    {"GPT2LMHeadModel", "gpt2", Arch::Gpt2},
    {"LlamaForCausalLM", "llama", Arch::Llama},
    {"MistralForCausalLM", "mistral", Arch::Mistral},
    {"MixtralForCausalLM", "mixtral", Arch::Mixtral},
    {"Qwen2ForCausalLM", "qwen2", Arch::Qwen2},
    {"GPTNeoXForCausalLM", "gpt_neox", Arch::GptNeoX},
    {"GPTJForCausalLM", "gptj", Arch::GptJ},
    {"Qwen3ForCausalLM", "qwen3", Arch::Qwen3},
    {"Qwen3MoeForCausalLM", "qwen3_moe", Arch::Qwen3Moe},
    {"DeepseekV3ForCausalLM", "deepseek_v3", Arch::DeepseekV3},
    {"NemotronForCausalLM", "nemotron", Arch::Nemotron},
    {"GptOssForCausalLM", "gpt_oss", Arch::GptOss},
    {"Llama4ForConditionalGeneration", "llama4", Arch::Llama4},
    {"Llama4ForCausalLM", "llama4_text", Arch::Llama4Text},
    // model_type "bert" alone reads as BertForPreTraining (the later row).
    {"BertForMaskedLM", "bert", Arch::BertMaskedLM},
    {"BertForPreTraining", "bert", Arch::BertPreTraining},
    {"ViTForImageClassification", "vit", Arch::ViT},
};

std::string supportedArchList() {
  std::string s;
  for (const ArchInfo &a : kArchs)
    s += (s.empty() ? "" : ", ") + std::string(a.hfName);
  return s;
}

void readActivation(Reader &r, const std::string &key, ModelConfig &c) {
  std::string name;
  if (!r.optString(key, name))
    return;
  if (name == "gelu")
    c.act = Activation::Gelu;
  else if (name == "gelu_new" || name == "gelu_pytorch_tanh" ||
           name == "gelu_fast")
    c.act = Activation::GeluTanh;
  else if (name == "silu" || name == "swish")
    c.act = Activation::Silu;
  else if (name == "relu")
    c.act = Activation::Relu;
  else if (name == "relu2")
    c.act = Activation::Relu2;
  else
    r.fail(key, "unsupported activation '" + name +
                    "' (supported: gelu, gelu_new, gelu_pytorch_tanh, "
                    "gelu_fast, silu, swish, relu, relu2)");
}

/// head_dim when given, else hidden / heads, which must then divide.
void readHeadDim(Reader &r, ModelConfig &c, const char *hiddenKey,
                 const char *headsKey, bool allowExplicit) {
  if (r.failed())
    return;
  if (allowExplicit && r.optInt("head_dim", c.headDim))
    return;
  if (r.failed())
    return;
  if (c.hidden % c.numHeads != 0) {
    r.fail(headsKey,
           std::to_string(c.numHeads) + " does not divide " + hiddenKey + " " +
               std::to_string(c.hidden) +
               (allowExplicit ? " (and no 'head_dim' is given)" : ""));
    return;
  }
  c.headDim = c.hidden / c.numHeads;
}

void readKvHeads(Reader &r, ModelConfig &c) {
  c.numKvHeads = c.numHeads;
  if (r.optInt("num_key_value_heads", c.numKvHeads) &&
      c.numHeads % c.numKvHeads != 0)
    r.fail("num_key_value_heads", std::to_string(c.numKvHeads) +
                                      " does not divide num_attention_heads " +
                                      std::to_string(c.numHeads));
}

/// `layer_types` (newer HF configs): one "sliding_attention" or
/// "full_attention" per layer.
void readLayerTypes(Reader &r, ModelConfig &c) {
  std::vector<std::string> types;
  if (!r.optStringList("layer_types", types))
    return;
  if ((int64_t)types.size() != c.numLayers) {
    r.fail("layer_types", "has " + std::to_string(types.size()) +
                              " entries for " + std::to_string(c.numLayers) +
                              " layers");
    return;
  }
  std::vector<bool> sliding;
  for (const std::string &t : types) {
    if (t != "sliding_attention" && t != "full_attention") {
      r.fail("layer_types", "unsupported layer type '" + t +
                                "' (supported: sliding_attention, "
                                "full_attention)");
      return;
    }
    sliding.push_back(t == "sliding_attention");
  }
  int64_t n = std::count(sliding.begin(), sliding.end(), true);
  if (n == 0) {
    c.slidingWindow = 0;
    c.slidingLayers.clear();
    return;
  }
  if (c.slidingWindow <= 0) {
    r.fail("layer_types", "has sliding_attention layers but no positive "
                          "'sliding_window' is given");
    return;
  }
  c.slidingLayers.clear();
  if (n != c.numLayers)
    c.slidingLayers = std::move(sliding);
}

/// Qwen2 / Qwen3: a window only with `use_sliding_window`, and then only on
/// layers at or above `max_window_layers` (HF Qwen2Config).
void readQwenSliding(Reader &r, ModelConfig &c) {
  bool use = false;
  int64_t window = 0, maxWindowLayers = 28;
  r.optBool("use_sliding_window", use);
  r.optInt("sliding_window", window, 0);
  r.optInt("max_window_layers", maxWindowLayers, 0);
  if (!use || window == 0)
    return;
  c.slidingWindow = window;
  if (maxWindowLayers >= c.numLayers) {
    c.slidingWindow = 0;
    return;
  }
  if (maxWindowLayers > 0)
    for (int64_t i = 0; i < c.numLayers; ++i)
      c.slidingLayers.push_back(i >= maxWindowLayers);
}

void readTopK(Reader &r, ModelConfig &c, const char *expertsKey) {
  r.reqInt("num_experts_per_tok", c.moe.topK);
  if (!r.failed() && c.moe.topK > c.moe.numExperts)
    r.fail("num_experts_per_tok", std::to_string(c.moe.topK) + " exceeds " +
                                      expertsKey + " " +
                                      std::to_string(c.moe.numExperts));
}

void parseGpt2(Reader &r, ModelConfig &c) {
  r.reqInt("n_embd", c.hidden);
  r.reqInt("n_layer", c.numLayers);
  r.reqInt("n_head", c.numHeads);
  r.reqInt("vocab_size", c.vocabSize);
  r.reqInt("n_positions", c.maxPositions);
  readHeadDim(r, c, "n_embd", "n_head", /*allowExplicit=*/false);
  c.numKvHeads = c.numHeads;
  // n_inner null means 4 * n_embd (GPT2MLP).
  c.ffn = 4 * c.hidden;
  r.optInt("n_inner", c.ffn);
  c.act = Activation::GeluTanh; // GPT2Config default "gelu_new"
  readActivation(r, "activation_function", c);
  c.tieEmbeddings = true;
  r.optBool("tie_word_embeddings", c.tieEmbeddings);
  c.position = PositionKind::Learned;
  c.norm = NormKind::LayerNorm;
  c.normBias = true;
  c.qkvBias = c.outBias = c.mlpBias = true;
  // GPT2Config defaults resid/embd/attn_pdrop to 0.1.
  c.dropout = 0.1;
  c.attentionDropout = 0.1;
  c.embeddingDropout = 0.1;
}

/// BERT (Devlin et al. 2019) with HF BertConfig's keys and defaults: a
/// post-LN bidirectional encoder, learned positions, token types, the
/// masked-LM head tied to the word embeddings; BertForPreTraining adds the
/// pooler and the 2-way next-sentence head.
void parseBert(Reader &r, ModelConfig &c, bool preTraining) {
  c.family = ModelFamily::EncoderLM;
  c.causal = false;
  r.reqInt("hidden_size", c.hidden);
  r.reqInt("num_hidden_layers", c.numLayers);
  r.reqInt("num_attention_heads", c.numHeads);
  r.reqInt("vocab_size", c.vocabSize);
  r.reqInt("intermediate_size", c.ffn);
  c.maxPositions = 512; // BertConfig defaults
  r.optInt("max_position_embeddings", c.maxPositions);
  c.typeVocabSize = 2;
  r.optInt("type_vocab_size", c.typeVocabSize);
  if (c.typeVocabSize < 0)
    r.fail("type_vocab_size", "must be >= 0");
  readHeadDim(r, c, "hidden_size", "num_attention_heads", false);
  c.numKvHeads = c.numHeads;
  std::string posType;
  if (r.optString("position_embedding_type", posType) &&
      posType != "absolute")
    r.fail("position_embedding_type",
           "unsupported '" + posType + "' (supported: absolute)");
  c.act = Activation::Gelu;
  readActivation(r, "hidden_act", c);
  c.position = PositionKind::Learned;
  c.norm = NormKind::LayerNorm;
  c.normBias = true;
  c.qkvBias = c.outBias = c.mlpBias = true;
  c.finalNorm = false;
  c.tieEmbeddings = true;
  r.optBool("tie_word_embeddings", c.tieEmbeddings);
  if (!c.tieEmbeddings)
    r.fail("tie_word_embeddings",
           "an untied BERT decoder is not modelled (the masked-LM head "
           "reads the word embeddings)");
  c.pooler = preTraining;
  c.numClasses = preTraining ? 2 : 0;
  c.dropout = 0.1;          // hidden_dropout_prob
  c.attentionDropout = 0.1; // attention_probs_dropout_prob
}

/// ViT (Dosovitskiy et al. 2021) with HF ViTConfig's keys and defaults: a
/// pre-LN bidirectional encoder over image patches plus the class token,
/// learned positions, a final LayerNorm and the linear classifier on the
/// class token (ViTForImageClassification: no pooler).
void parseVit(Reader &r, ModelConfig &c) {
  c.family = ModelFamily::Vision;
  c.causal = false;
  r.reqInt("hidden_size", c.hidden);
  r.reqInt("num_hidden_layers", c.numLayers);
  r.reqInt("num_attention_heads", c.numHeads);
  r.reqInt("intermediate_size", c.ffn);
  c.imageSize = 224; // ViTConfig defaults
  r.optInt("image_size", c.imageSize);
  c.patchSize = 16;
  r.optInt("patch_size", c.patchSize);
  c.channels = 3;
  r.optInt("num_channels", c.channels);
  if (!r.failed() && c.imageSize % c.patchSize != 0)
    r.fail("patch_size", std::to_string(c.patchSize) +
                             " does not divide image_size " +
                             std::to_string(c.imageSize));
  // The classes: num_labels, else the entries of id2label, else HF's 2.
  c.numClasses = 2;
  if (!r.optInt("num_labels", c.numClasses)) {
    if (const json *ids = r.get("id2label")) {
      if (!ids->is_object() || ids->empty())
        r.fail("id2label", "expected a non-empty object of class names, "
                           "got " + describe(*ids));
      else
        c.numClasses = int64_t(ids->size());
    }
  }
  r.get("label2id");
  readHeadDim(r, c, "hidden_size", "num_attention_heads", false);
  c.numKvHeads = c.numHeads;
  c.act = Activation::Gelu;
  readActivation(r, "hidden_act", c);
  bool qkvBias = true;
  r.optBool("qkv_bias", qkvBias);
  c.qkvBias = qkvBias;
  c.outBias = c.mlpBias = true;
  c.position = PositionKind::Learned;
  c.norm = NormKind::LayerNorm;
  c.normBias = true;
  c.tieEmbeddings = false;
  if (!r.failed()) {
    const int64_t side = c.imageSize / c.patchSize;
    c.seqLen = c.maxPositions = side * side + 1;
  }
  c.dropout = 0.0;          // hidden_dropout_prob
  c.attentionDropout = 0.0; // attention_probs_dropout_prob
}

void parseGptNeoX(Reader &r, ModelConfig &c) {
  r.reqInt("hidden_size", c.hidden);
  r.reqInt("num_hidden_layers", c.numLayers);
  r.reqInt("num_attention_heads", c.numHeads);
  r.reqInt("vocab_size", c.vocabSize);
  r.reqInt("intermediate_size", c.ffn);
  r.optInt("max_position_embeddings", c.maxPositions);
  readHeadDim(r, c, "hidden_size", "num_attention_heads", false);
  c.numKvHeads = c.numHeads;
  c.act = Activation::Gelu;
  readActivation(r, "hidden_act", c);
  c.rotaryPct = 0.25; // GPTNeoXConfig default
  r.optNumber("rotary_pct", c.rotaryPct, 0, 1, true);
  r.optNumber("partial_rotary_factor", c.rotaryPct, 0, 1, true);
  c.parallelResidual = true;
  r.optBool("use_parallel_residual", c.parallelResidual);
  c.tieEmbeddings = false;
  r.optBool("tie_word_embeddings", c.tieEmbeddings);
  // query_key_value and dense follow attention_bias (default true); the
  // MLP always has biases.
  bool attnBias = true;
  r.optBool("attention_bias", attnBias);
  c.qkvBias = c.outBias = attnBias;
  c.mlpBias = true;
  c.norm = NormKind::LayerNorm;
  c.normBias = true;
  c.position = PositionKind::Rotary;
}

/// GPT-J (transformers' GPTJConfig defaults and modeling_gptj.py at
/// 00b676f8): one LayerNorm (ln_1) feeding the attention and the MLP in
/// parallel, q, k, v and out projections without bias, a biased MLP,
/// RoPE on the first rotary_dim dimensions of each head in pairs 2i,
/// 2i + 1 (rotate_every_two) at base 10000, and a biased, untied LM head.
void parseGptJ(Reader &r, ModelConfig &c) {
  r.reqInt("n_embd", c.hidden);
  r.reqInt("n_layer", c.numLayers);
  r.reqInt("n_head", c.numHeads);
  r.reqInt("vocab_size", c.vocabSize);
  c.maxPositions = 2048;
  r.optInt("n_positions", c.maxPositions);
  readHeadDim(r, c, "n_embd", "n_head", /*allowExplicit=*/false);
  c.numKvHeads = c.numHeads;
  c.ffn = 4 * c.hidden; // n_inner null: 4 * n_embd (GPTJBlock)
  r.optInt("n_inner", c.ffn);
  c.act = Activation::GeluTanh; // GPTJConfig default "gelu_new"
  readActivation(r, "activation_function", c);
  int64_t rotaryDim = c.headDim; // null: the whole head
  r.optInt("rotary_dim", rotaryDim);
  if (!r.failed() && (rotaryDim > c.headDim || rotaryDim % 2 != 0))
    r.fail("rotary_dim", std::to_string(rotaryDim) +
                             " must be even and at most the head size " +
                             std::to_string(c.headDim));
  if (!r.failed())
    c.rotaryPct = double(rotaryDim) / double(c.headDim);
  r.get("rotary"); // Mesh Transformer JAX's switch; HF always rotates
  c.position = PositionKind::Rotary;
  c.ropeInterleaved = true;
  c.parallelResidual = true;
  c.parallelSharedNorm = true;
  c.norm = NormKind::LayerNorm;
  c.normBias = true;
  c.qkvBias = c.outBias = false;
  c.mlpBias = true;
  c.headBias = true;
  c.tieEmbeddings = false;
  r.optBool("tie_word_embeddings", c.tieEmbeddings);
  c.dropout = 0.0; // GPTJConfig: resid, embd and attn_pdrop 0.0
}

/// The Llama-style decoders: RMSNorm, RoPE, gated MLP, untied by default.
/// DeepSeek-V3's multi-head latent attention and router
/// (DeepseekV3ForCausalLM), on top of parseLlamaLike's common keys.
void readDeepseekV3(Reader &r, ModelConfig &c,
                    std::vector<std::string> &notes) {
  c.attention = AttentionKind::MLA;
  MLAConfig &m = c.mla;
  r.optInt("q_lora_rank", m.qLoraRank); // null: q projected directly
  r.reqInt("kv_lora_rank", m.kvLoraRank);
  r.reqInt("qk_nope_head_dim", m.qkNopeHeadDim, 0);
  r.reqInt("qk_rope_head_dim", m.qkRopeHeadDim);
  r.reqInt("v_head_dim", m.vHeadDim);
  c.headDim = m.qkNopeHeadDim + m.qkRopeHeadDim;
  // MLA decompresses k and v per head: num_key_value_heads does not shape
  // any weight.
  c.numKvHeads = c.numHeads;
  c.rotaryPct = c.headDim > 0 ? (double)m.qkRopeHeadDim / c.headDim : 1.0;
  // DeepseekV3Config's rope_interleave (default true): the checkpoints
  // pair dimensions 2i and 2i + 1.
  c.ropeInterleaved = true;
  r.optBool("rope_interleave", c.ropeInterleaved);
  r.optBool("attention_bias", c.qkvBias);
  c.outBias = c.qkvBias;
  MoEConfig &e = c.moe;
  r.reqInt("n_routed_experts", e.numExperts);
  readTopK(r, c, "n_routed_experts");
  r.reqInt("moe_intermediate_size", e.expertFfn);
  r.optInt("n_shared_experts", e.numSharedExperts, 0);
  e.sharedFfn = e.numSharedExperts > 0 ? e.expertFfn : 0;
  r.optInt("first_k_dense_replace", e.firstDenseLayers, 0);
  if (!r.failed() && e.firstDenseLayers > c.numLayers)
    r.fail("first_k_dense_replace", std::to_string(e.firstDenseLayers) +
                                        " exceeds num_hidden_layers " +
                                        std::to_string(c.numLayers));
  int64_t freq = 1;
  r.optInt("moe_layer_freq", freq);
  // DeepseekV3DecoderLayer: experts where i >= first_k_dense_replace and
  // i % moe_layer_freq == 0; ModelConfig's default rule counts from the
  // first MoE layer instead, so spell the layers out when freq > 1.
  if (!r.failed() && freq > 1)
    for (int64_t i = 0; i < c.numLayers; ++i)
      e.moeLayers.push_back(i >= e.firstDenseLayers && i % freq == 0);
  e.routerScoreCorrection = true;
  // DeepseekV3TopkRouter (transformers): sigmoid scores, whatever
  // scoring_func / topk_method say; DeepseekV3Config's defaults.
  e.sigmoidScores = true;
  e.numGroups = 8;
  e.topkGroups = 4;
  e.routedScale = 2.5;
  r.optInt("n_group", e.numGroups);
  r.optInt("topk_group", e.topkGroups);
  r.optNumber("routed_scaling_factor", e.routedScale, 0, 1e6, true);
  r.optBool("norm_topk_prob", e.renormalize);
  // A value the file leaves out is DeepseekV3Config's default: say so.
  auto given = [&](const char *key) {
    return r.has(key) ? std::string()
                      : std::string(" (DeepseekV3Config's default; the "
                                    "file does not set it)");
  };
  if (!r.failed() && (e.numGroups < 1 || e.numExperts % e.numGroups != 0))
    r.fail("n_group", std::to_string(e.numGroups) + given("n_group") +
                          " must divide n_routed_experts " +
                          std::to_string(e.numExperts));
  else if (!r.failed() &&
           (e.topkGroups < 1 || e.topkGroups > e.numGroups ||
            e.topK > e.topkGroups * (e.numExperts / e.numGroups)))
    r.fail("topk_group",
           std::to_string(e.topkGroups) + given("topk_group") +
               " must be in [1, n_group " + std::to_string(e.numGroups) +
               "] and hold the " + std::to_string(e.topK) +
               " experts of num_experts_per_tok");
  int64_t mtp = 0;
  if (r.optInt("num_nextn_predict_layers", mtp, 0) && mtp > 0)
    notes.push_back(std::string(r.source()) +
                    ": field 'num_nextn_predict_layers': the " +
                    std::to_string(mtp) +
                    " multi-token-prediction layer(s) are ignored; only "
                    "the main model is planned");
}

/// Llama 4's text model (transformers' Llama4TextConfig at 008e5743 and
/// its defaults; Megatron-LM's examples/post_training/modelopt/conf/
/// meta-llama/Llama-4-{Scout,Maverick}-*.sh at d98e8a64 give the same
/// shapes): every routed expert and the one shared expert of width
/// intermediate_size, the dense layers' MLP of intermediate_size_mlp, MoE
/// on moe_layers (default every interleave_moe_layer_step-th layer, from
/// step - 1), top-k sigmoid scores without renormalisation, no RoPE on
/// the layers no_rope_layers marks 0 (default every fourth), the q/k norm
/// on the RoPE layers, chunked local attention on the RoPE layers.
void readLlama4(Reader &r, ModelConfig &c, std::vector<std::string> &notes) {
  const std::string src(r.source());
  c.headDim = 128; // Llama4TextConfig's head_dim default, not hidden/heads
  r.optInt("head_dim", c.headDim);
  r.optBool("attention_bias", c.qkvBias);
  c.outBias = c.qkvBias;
  MoEConfig &e = c.moe;
  e.expertFfn = c.ffn; // intermediate_size
  e.numSharedExperts = 1;
  e.sharedFfn = c.ffn;
  e.scoresOnInput = true;
  e.sigmoidScores = true;
  e.renormalize = false;
  c.ffn = 16384;
  r.optInt("intermediate_size_mlp", c.ffn);
  e.numExperts = 16;
  r.optInt("num_local_experts", e.numExperts);
  e.topK = 1;
  r.optInt("num_experts_per_tok", e.topK);
  if (!r.failed() && e.topK > e.numExperts)
    r.fail("num_experts_per_tok", std::to_string(e.topK) +
                                      " exceeds num_local_experts " +
                                      std::to_string(e.numExperts));
  // Per-layer lists: given, or (absent, null, empty) Llama4TextConfig's
  // rule.
  auto given = [&](const char *key) { return r.has(key); };
  const int64_t L = c.numLayers;
  std::vector<int64_t> moeList;
  int64_t step = 1;
  r.optInt("interleave_moe_layer_step", step);
  if (given("moe_layers")) {
    r.optIntList("moe_layers", moeList, 0);
    for (int64_t l : moeList)
      if (!r.failed() && l >= L)
        r.fail("moe_layers", "layer " + std::to_string(l) +
                                 " is out of range (" + std::to_string(L) +
                                 " layers)");
  } else {
    for (int64_t i = step - 1; i < L; i += step)
      moeList.push_back(i);
  }
  if (!r.failed() && (int64_t)moeList.size() != L) {
    e.moeLayers.assign(size_t(std::max<int64_t>(L, 0)), false);
    for (int64_t l : moeList)
      e.moeLayers[size_t(l)] = true;
  }
  std::vector<int64_t> rope;
  int64_t interval = 4;
  r.optInt("no_rope_layer_interval", interval);
  if (given("no_rope_layers") && !r.get("no_rope_layers")->empty()) {
    r.optIntList("no_rope_layers", rope, 0);
    if (!r.failed() && (int64_t)rope.size() < L)
      r.fail("no_rope_layers", "has " + std::to_string(rope.size()) +
                                   " entries for " + std::to_string(L) +
                                   " layers");
    for (int64_t f : rope)
      if (!r.failed() && f > 1)
        r.fail("no_rope_layers", "expected entries 0 (NoPE) or 1 (RoPE), "
                                 "got " +
                                     std::to_string(f));
  } else {
    for (int64_t i = 0; i < L; ++i)
      rope.push_back((i + 1) % interval != 0 ? 1 : 0);
  }
  if (r.failed())
    return;
  rope.resize(size_t(L));
  if (std::count(rope.begin(), rope.end(), 0) > 0)
    for (int64_t f : rope)
      c.noRopeLayers.push_back(f == 0);
  // layer_types: "chunked_attention" or "full_attention" per layer,
  // by default chunked on the RoPE layers.
  std::vector<bool> chunked;
  for (int64_t f : rope)
    chunked.push_back(f == 1);
  std::vector<std::string> types;
  if (r.optStringList("layer_types", types)) {
    if ((int64_t)types.size() != L) {
      r.fail("layer_types", "has " + std::to_string(types.size()) +
                                " entries for " + std::to_string(L) +
                                " layers");
      return;
    }
    for (size_t i = 0; i < types.size(); ++i) {
      if (types[i] != "chunked_attention" && types[i] != "full_attention") {
        r.fail("layer_types", "unsupported layer type '" + types[i] +
                                  "' (supported: chunked_attention, "
                                  "full_attention)");
        return;
      }
      chunked[i] = types[i] == "chunked_attention";
    }
  }
  int64_t chunk = 8192; // null: no chunking
  if (r.isNull("attention_chunk_size"))
    chunk = 0;
  else
    r.optInt("attention_chunk_size", chunk);
  int64_t nChunked = std::count(chunked.begin(), chunked.end(), true);
  if (chunk > 0 && nChunked > 0) {
    // Chunked attention equals full causal attention up to `chunk` tokens;
    // beyond, a window of `chunk` is an upper bound on its work.
    c.slidingWindow = chunk;
    if (nChunked != L)
      c.slidingLayers = chunked;
    notes.push_back(src + ": field 'attention_chunk_size': Llama 4's " +
                    "chunked attention (" + std::to_string(chunk) +
                    " tokens, on " + std::to_string(nChunked) +
                    " layers) is modelled as a sliding window of " +
                    std::to_string(chunk) +
                    ": the same up to that length; beyond it the window " +
                    "costs up to twice a chunk's attention, and the NoPE " +
                    "layers' attention temperature tuning (from floor_scale "
                    "tokens on) is left out");
  }
  for (const char *k : {"attn_temperature_tuning", "floor_scale", "attn_scale"})
    r.get(k);
  c.qkNorm = true;
  r.optBool("use_qk_norm", c.qkNorm);
  c.qkNormRopeLayersOnly = c.qkNorm;
  std::string approx =
      src + ": Llama 4 scales each routed expert's input by its router "
            "score, Trident's moe op the expert's output (the same work; "
            "exports ask for the input scaling)";
  if (c.qkNorm)
    approx += "; its weightless L2 norm of q and k (use_qk_norm) is an "
              "RMSNorm with a head_dim weight here (2 x " +
              std::to_string(c.headDim) + " parameters per RoPE layer more)";
  notes.push_back(approx);
}

void parseLlamaLike(Reader &r, ModelConfig &c, Arch arch,
                    std::vector<std::string> &notes) {
  r.reqInt("hidden_size", c.hidden);
  r.reqInt("num_hidden_layers", c.numLayers);
  r.reqInt("num_attention_heads", c.numHeads);
  r.reqInt("vocab_size", c.vocabSize);
  r.reqInt("intermediate_size", c.ffn);
  r.optInt("max_position_embeddings", c.maxPositions);
  readKvHeads(r, c);
  c.position = PositionKind::Rotary;
  c.norm = NormKind::RMSNorm;
  c.normBias = false;
  c.embeddingDropout = 0.0; // HF's Llama-style models drop no embeddings
  c.gatedMlp = true;
  c.act = Activation::Silu;
  c.tieEmbeddings = false;

  switch (arch) {
  case Arch::Llama:
    readHeadDim(r, c, "hidden_size", "num_attention_heads", true);
    r.optBool("attention_bias", c.qkvBias);
    c.outBias = c.qkvBias;
    r.optBool("mlp_bias", c.mlpBias);
    break;
  case Arch::Mistral:
  case Arch::Mixtral:
    readHeadDim(r, c, "hidden_size", "num_attention_heads", true);
    r.optInt("sliding_window", c.slidingWindow, 0);
    if (arch == Arch::Mixtral) {
      r.reqInt("num_local_experts", c.moe.numExperts);
      readTopK(r, c, "num_local_experts");
      c.moe.expertFfn = c.ffn;
    }
    break;
  case Arch::Qwen2:
    readHeadDim(r, c, "hidden_size", "num_attention_heads", false);
    c.qkvBias = true; // Qwen2Attention: q/k/v with bias, o_proj without
    readQwenSliding(r, c);
    break;
  case Arch::Qwen3:
  case Arch::Qwen3Moe:
    readHeadDim(r, c, "hidden_size", "num_attention_heads", true);
    c.qkNorm = true;
    r.optBool("attention_bias", c.qkvBias);
    c.outBias = c.qkvBias;
    readQwenSliding(r, c);
    if (arch == Arch::Qwen3Moe) {
      // Qwen3MoeConfig's default is false: the weights are the softmax
      // probabilities of the chosen experts, not renormalised.
      c.moe.renormalize = false;
      r.optBool("norm_topk_prob", c.moe.renormalize);
      r.reqInt("num_experts", c.moe.numExperts);
      readTopK(r, c, "num_experts");
      r.reqInt("moe_intermediate_size", c.moe.expertFfn);
      int64_t step = 1;
      std::vector<int64_t> mlpOnly;
      r.optInt("decoder_sparse_step", step);
      r.optIntList("mlp_only_layers", mlpOnly, 0);
      for (int64_t l : mlpOnly)
        if (!r.failed() && l >= c.numLayers)
          r.fail("mlp_only_layers",
                 "layer " + std::to_string(l) + " is out of range (" +
                     std::to_string(c.numLayers) + " layers)");
      // Qwen3MoeDecoderLayer: experts unless listed in mlp_only_layers,
      // and only where (i + 1) % decoder_sparse_step == 0.
      if (!r.failed() && (step != 1 || !mlpOnly.empty()))
        for (int64_t i = 0; i < c.numLayers; ++i)
          c.moe.moeLayers.push_back(
              std::find(mlpOnly.begin(), mlpOnly.end(), i) == mlpOnly.end() &&
              (i + 1) % step == 0);
    }
    break;
  case Arch::Nemotron:
    readHeadDim(r, c, "hidden_size", "num_attention_heads", true);
    // Megatron exports also write kv_channels, which HF does not read.
    if (int64_t kv = 0; r.optInt("kv_channels", kv) && kv != c.headDim)
      notes.push_back(std::string(r.source()) + ": field 'kv_channels': " +
                      std::to_string(kv) + " differs from the head_dim " +
                      std::to_string(c.headDim) +
                      " that Hugging Face uses; ignored");
    // NemotronLayerNorm1P is an nn.LayerNorm (with bias) applied as 1 + w.
    c.norm = NormKind::LayerNorm1p;
    c.normBias = true;
    c.gatedMlp = false;
    c.act = Activation::Relu2;
    c.rotaryPct = 0.5; // NemotronConfig default partial_rotary_factor
    r.optNumber("partial_rotary_factor", c.rotaryPct, 0, 1, true);
    r.optBool("attention_bias", c.qkvBias);
    c.outBias = c.qkvBias;
    r.optBool("mlp_bias", c.mlpBias);
    break;
  case Arch::GptOss: {
    c.headDim = 64; // GptOssConfig default
    r.optInt("head_dim", c.headDim);
    c.qkvBias = c.outBias = true;
    r.optBool("attention_bias", c.qkvBias);
    c.outBias = c.qkvBias;
    c.attentionSinks = true;
    r.reqInt("num_local_experts", c.moe.numExperts);
    // The released config writes both spellings; HF reads
    // num_experts_per_tok.
    if (!r.has("num_experts_per_tok") && r.has("experts_per_token")) {
      r.optInt("experts_per_token", c.moe.topK);
      if (!r.failed() && c.moe.topK > c.moe.numExperts)
        r.fail("experts_per_token", std::to_string(c.moe.topK) +
                                        " exceeds num_local_experts " +
                                        std::to_string(c.moe.numExperts));
    } else {
      readTopK(r, c, "num_local_experts");
    }
    r.get("experts_per_token");
    c.moe.expertFfn = c.ffn;
    c.moe.routerBias = true;
    c.moe.expertBias = true;
    // GptOssConfig's default swiglu_limit: 7.0.
    c.moe.swigluLimit = 7.0;
    r.optNumber("swiglu_limit", c.moe.swigluLimit, 0, 1e6, true);
    c.slidingWindow = 128; // GptOssConfig default
    r.optInt("sliding_window", c.slidingWindow, 0);
    if (!r.has("layer_types") && c.slidingWindow > 0) {
      // Without layer_types: sliding on every layer but each pattern-th
      // (gpt-oss alternates, starting with a sliding layer).
      int64_t pattern = 2;
      r.optInt("sliding_window_pattern", pattern);
      if (pattern > 1)
        for (int64_t i = 0; i < c.numLayers && !r.failed(); ++i)
          c.slidingLayers.push_back((i + 1) % pattern != 0);
    }
    break;
  }
  case Arch::DeepseekV3:
    readDeepseekV3(r, c, notes);
    break;
  case Arch::Llama4:
  case Arch::Llama4Text:
    readLlama4(r, c, notes);
    break;
  case Arch::Gpt2:
  case Arch::GptNeoX:
  case Arch::GptJ:
  case Arch::BertMaskedLM:
  case Arch::BertPreTraining:
  case Arch::ViT:
    break;
  }
  if (arch != Arch::Llama4 && arch != Arch::Llama4Text)
    readLayerTypes(r, c); // Llama 4's are read with its chunking
  r.optBool("tie_word_embeddings", c.tieEmbeddings);
  readActivation(r, "hidden_act", c);
}

/// The norms' epsilon: each architecture's key, and its HF configuration
/// class default when the key is absent (transformers' GPT2Config,
/// GPTNeoXConfig, MixtralConfig, GptOssConfig, NemotronConfig: 1e-5;
/// BertConfig, ViTConfig: 1e-12; LlamaConfig, MistralConfig, Qwen2Config,
/// Qwen3Config, Qwen3MoeConfig, DeepseekV3Config: 1e-6; Llama4TextConfig:
/// 1e-5).
void readNormEps(Reader &r, ModelConfig &c, Arch arch) {
  struct Rule {
    const char *key;
    double fallback;
  };
  auto rule = [&]() -> Rule {
    switch (arch) {
    case Arch::Gpt2:
    case Arch::GptJ:
      return {"layer_norm_epsilon", 1e-5};
    case Arch::GptNeoX:
      return {"layer_norm_eps", 1e-5};
    case Arch::BertMaskedLM:
    case Arch::BertPreTraining:
    case Arch::ViT:
      return {"layer_norm_eps", 1e-12};
    case Arch::Nemotron:
      return {"norm_eps", 1e-5};
    case Arch::Mixtral:
    case Arch::GptOss:
    case Arch::Llama4:
    case Arch::Llama4Text:
      return {"rms_norm_eps", 1e-5};
    default:
      return {"rms_norm_eps", 1e-6};
    }
  }();
  c.normEps = rule.fallback;
  r.optNumber(rule.key, c.normEps, 0, 1, true);
}

/// YaRN's attention factor for a scale and an mscale (transformers'
/// get_mscale, after the YaRN paper's sqrt(1/t) = 0.1 ln(s) + 1).
double yarnMscale(double scale, double mscale) {
  return scale <= 1.0 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

/// `rope_scaling` (HF modeling_rope_utils): linear, llama3 and yarn change
/// the RoPE frequencies of the emitted programs; default and dynamic
/// (which changes nothing up to max_position_embeddings) keep plain RoPE.
///
/// transformers 5 writes `rope_parameters` instead: the same keys plus
/// `rope_theta` (then taken from there), rope_type "default" when plain.
void readRopeScaling(Reader &r, ModelConfig &c,
                     std::vector<std::string> &notes) {
  using Kind = RopeScaling::Kind;
  const bool hasScaling = r.has("rope_scaling");
  const bool hasParams = r.has("rope_parameters");
  if (r.failed() || (!hasScaling && !hasParams))
    return;
  if (hasScaling && hasParams) {
    r.fail("rope_parameters", "given together with rope_scaling: give one "
                              "(transformers 5 writes rope_parameters in "
                              "place of rope_scaling and rope_theta)");
    return;
  }
  const std::string key = hasScaling ? "rope_scaling" : "rope_parameters";
  const json *v = r.get(key);
  if (!v->is_object()) {
    r.fail(key, "expected an object or null, got " + describe(*v));
    return;
  }
  if (c.position != PositionKind::Rotary) {
    notes.push_back(std::string(r.source()) + ": field '" + key +
                    "': ignored, the model has no rotary position "
                    "embedding");
    return;
  }
  Reader s(*v, r.source(), key + ".");
  if (hasParams) {
    // One set of parameters for all layers; Gemma-style per-layer-type
    // sets are objects keyed by layer type.
    for (auto it = v->begin(); it != v->end(); ++it)
      if (it->is_object()) {
        s.fail(it.key(), "per-layer-type RoPE parameters are not supported");
        break;
      }
    double theta = 0;
    if (s.optNumber("rope_theta", theta, 1, 1e12, false)) {
      if (r.has("rope_theta") && theta != c.ropeTheta)
        s.fail("rope_theta", describe(json(theta)) +
                                 " differs from the top-level rope_theta " +
                                 describe(json(c.ropeTheta)));
      c.ropeTheta = theta;
    }
  }
  std::string type;
  if (!s.optString("rope_type", type) && !s.optString("type", type) &&
      !s.failed()) {
    if (hasParams)
      type = "default";
    else
      s.fail("rope_type", "missing (the scaling's kind: default, linear, "
                          "dynamic, llama3 or yarn)");
  }
  RopeScaling &rs = c.ropeScaling;
  auto factor = [&] {
    if (!s.has("factor"))
      s.fail("factor", "missing (required by rope_type '" + type + "')");
    s.optNumber("factor", rs.factor, 1, 1e6, false);
  };
  auto originalMax = [&](bool required) {
    if (required && !s.failed() && !s.has("original_max_position_embeddings"))
      s.fail("original_max_position_embeddings",
             "missing (required by rope_type '" + type + "')");
    return s.optInt("original_max_position_embeddings",
                    rs.originalMaxPositions);
  };
  if (s.failed()) {
  } else if (type == "default") {
  } else if (type == "dynamic") {
    // Dynamic NTK rescales only sequences longer than the model's
    // positions, which the planner's sequences do not exceed.
    s.optNumber("factor", rs.factor, 1, 1e6, false);
    originalMax(false);
    rs = RopeScaling{};
  } else if (type == "linear") {
    rs.kind = Kind::Linear;
    factor();
  } else if (type == "llama3") {
    rs.kind = Kind::Llama3;
    factor();
    for (const char *k : {"low_freq_factor", "high_freq_factor"})
      if (!s.failed() && !s.has(k))
        s.fail(k, "missing (required by rope_type 'llama3')");
    s.optNumber("low_freq_factor", rs.lowFreqFactor, 0, 1e6, true);
    s.optNumber("high_freq_factor", rs.highFreqFactor, 0, 1e6, true);
    originalMax(true);
    if (!s.failed() && rs.highFreqFactor <= rs.lowFreqFactor)
      s.fail("high_freq_factor", "must exceed low_freq_factor");
  } else if (type == "yarn") {
    rs.kind = Kind::Yarn;
    factor();
    const double fileFactor = rs.factor;
    if (!originalMax(false))
      rs.originalMaxPositions = c.maxPositions;
    else if (!s.failed() && c.maxPositions > 0 &&
             double(c.maxPositions) / double(rs.originalMaxPositions) !=
                 rs.factor) {
      // transformers' _compute_yarn_parameters: with
      // original_max_position_embeddings given, the factor is
      // max_position_embeddings / original_max_position_embeddings.
      double ratio = double(c.maxPositions) / double(rs.originalMaxPositions);
      notes.push_back(std::string(r.source()) +
                      ": field '" + key + ".factor': " +
                      describe(json(rs.factor)) +
                      " differs from max_position_embeddings / "
                      "original_max_position_embeddings = " +
                      describe(json(ratio)) +
                      ", which Hugging Face uses; so does Trident");
      rs.factor = std::max(1.0, ratio);
    }
    if (!s.failed() && rs.originalMaxPositions <= 0)
      s.fail("original_max_position_embeddings",
             "missing, and so is max_position_embeddings");
    s.optNumber("beta_fast", rs.betaFast, 0, 1e6, true);
    s.optNumber("beta_slow", rs.betaSlow, 0, 1e6, true);
    s.optBool("truncate", rs.truncate);
    // The attention factor: given, else DeepSeek's mscale ratio, else
    // YaRN's 0.1 ln(factor) + 1.
    double mscale = 0, mscaleAll = 0;
    s.optNumber("mscale", mscale, 0, 1e6, false);
    s.optNumber("mscale_all_dim", mscaleAll, 0, 1e6, false);
    if (s.has("attention_factor"))
      s.optNumber("attention_factor", rs.attentionFactor, 0, 1e6, true);
    else if (mscale > 0 && mscaleAll > 0)
      rs.attentionFactor =
          yarnMscale(rs.factor, mscale) / yarnMscale(rs.factor, mscaleAll);
    else
      rs.attentionFactor = yarnMscale(rs.factor, 1.0);
    // DeepseekV3Attention: with mscale_all_dim, the softmax scale
    // qk_head_dim^-0.5 is multiplied by yarn_get_mscale(factor,
    // mscale_all_dim)^2 (the file's factor).
    if (c.attention == AttentionKind::MLA && mscaleAll > 0 && c.headDim > 0) {
      const double m = yarnMscale(fileFactor, mscaleAll);
      c.softmaxScale = m * m / std::sqrt(double(c.headDim));
    }
  } else {
    s.fail(s.has("rope_type") ? "rope_type" : "type",
           "unsupported RoPE scaling '" + type +
               "' (supported: default, linear, dynamic, llama3, yarn)");
  }
  r.adopt(s);
  if (!r.failed())
    for (const std::string &k : s.unknownKeys())
      if (k != key + ".type" && k != key + ".rope_type")
        notes.push_back(std::string(r.source()) + ": unknown key '" + k +
                        "' ignored");
}

/// `torch_dtype` (or transformers 5's `dtype`): the parameters' type.
void readDType(Reader &r, ModelConfig &c) {
  std::string dtype;
  if (r.optString("torch_dtype", dtype) || r.optString("dtype", dtype)) {
    std::optional<DType> t = parseDType(dtype);
    if (t)
      c.dtype = *t;
    else
      r.fail(r.has("torch_dtype") ? "torch_dtype" : "dtype",
             "unsupported dtype '" + dtype +
                 "' (supported: float32, bfloat16, float16, float8)");
  }
  r.get("dtype");
}

/// Keys that apply to every architecture: dtype, dropout, and the
/// cases.json shape overrides.
void parseCommon(Reader &r, ModelConfig &c, std::vector<std::string> &notes) {
  // RoPE base (RoFormer's 10000 unless given; GPT-NeoX spells it
  // rotary_emb_base) and its long-context scaling.
  if (!r.optNumber("rope_theta", c.ropeTheta, 1, 1e12, false))
    r.optNumber("rotary_emb_base", c.ropeTheta, 1, 1e12, false);
  readRopeScaling(r, c, notes);
  readDType(r, c);

  // Dropout, each rate where the config's architecture applies it:
  //  - sublayer outputs before the residual add: resid_pdrop (GPT-2),
  //    hidden_dropout_prob (BERT, ViT), hidden_dropout;
  //  - attention probabilities: attn_pdrop, attention_probs_dropout_prob,
  //    attention_dropout;
  //  - the embedding output: embd_pdrop (GPT-2); BERT and ViT apply their
  //    hidden rate there, which `embeddingDropout` unset means.
  auto rate = [&](const char *key, double &out) {
    double d = 0;
    if (!r.optNumber(key, d, 0, 1, false))
      return true; // absent: keep the architecture's default
    if (d >= 1) {
      r.fail(key, "a dropout probability must be below 1");
      return false;
    }
    out = d;
    return true;
  };
  for (const char *key : {"resid_pdrop", "hidden_dropout_prob",
                          "hidden_dropout"})
    if (!rate(key, c.dropout))
      return;
  for (const char *key : {"attn_pdrop", "attention_probs_dropout_prob",
                          "attention_dropout"}) {
    double d = c.attentionDropoutRate();
    if (!rate(key, d))
      return;
    if (r.has(key))
      c.attentionDropout = d;
  }
  {
    double d = c.embeddingDropoutRate();
    if (!rate("embd_pdrop", d))
      return;
    if (r.has("embd_pdrop"))
      c.embeddingDropout = d;
  }

  // cases.json: shapes that depart from the named architecture.
  r.optBool("mlp_gated", c.gatedMlp);
  std::string norm;
  if (r.optString("norm_type", norm)) {
    if (norm == "layernorm") {
      c.norm = NormKind::LayerNorm;
      c.normBias = true;
    } else if (norm == "rmsnorm") {
      c.norm = NormKind::RMSNorm;
      c.normBias = false;
    } else if (norm == "layernorm1p") {
      c.norm = NormKind::LayerNorm1p;
      c.normBias = true;
    } else {
      r.fail("norm_type", "unsupported norm '" + norm +
                              "' (supported: layernorm, rmsnorm, "
                              "layernorm1p)");
    }
  }
  if (r.optNumber("rotary_pct", c.rotaryPct, 0, 1, true) &&
      c.position != PositionKind::Rotary)
    r.fail("rotary_pct", "this architecture has no rotary embedding");
}

/// "dir/llama-3-8b.json" -> "llama-3-8b"; other sources are kept whole.
std::string nameFromSource(std::string_view source) {
  size_t slash = source.find_last_of('/');
  std::string_view base =
      slash == std::string_view::npos ? source : source.substr(slash + 1);
  if (base.ends_with(".json"))
    base.remove_suffix(5);
  return std::string(base.empty() ? source : base);
}

Result<ModelConfig> parseObject(const json &root, std::string_view source,
                                std::vector<std::string> *warnings) {
  std::string src(source);
  if (!root.is_object())
    return Status::error(src +
                         ": expected a JSON object at the top level, "
                         "got " +
                         describe(root));
  Reader r(root, source);

  // The architecture: architectures[0], else model_type.
  std::string archName, modelType;
  if (const json *a = r.get("architectures")) {
    if (!a->is_array() || a->empty() || !(*a)[0].is_string())
      return Status::error(src +
                           ": field 'architectures': expected a "
                           "non-empty array of strings, got " +
                           describe(*a));
    archName = (*a)[0].get<std::string>();
  }
  r.optString("model_type", modelType);
  if (r.failed())
    return r.status();
  const ArchInfo *info = nullptr;
  for (const ArchInfo &a : kArchs)
    if (archName.empty() ? modelType == a.modelType : archName == a.hfName)
      info = &a;
  if (!info) {
    if (archName.empty() && modelType.empty())
      return Status::error(src + ": no 'architectures' or 'model_type' key; "
                                 "cannot tell the architecture");
    return Status::error(src + ": field '" +
                         (archName.empty() ? "model_type" : "architectures") +
                         "': unsupported architecture '" +
                         (archName.empty() ? modelType : archName) +
                         "' (supported: " + supportedArchList() + ")");
  }

  ModelConfig c;
  c.name = nameFromSource(source);
  c.architecture = info->hfName;
  c.family = ModelFamily::DecoderLM;
  c.causal = true;
  std::vector<std::string> notes;
  // Llama4ForConditionalGeneration: the language model is text_config's
  // (Llama4Config); the vision encoder and its projector are not planned.
  std::optional<Reader> nested;
  if (info->arch == Arch::Llama4) {
    const json *tc = r.get("text_config");
    if (!tc || !tc->is_object())
      return Status::error(src +
                           ": field 'text_config': expected the "
                           "language model's configuration object, "
                           "got " +
                           (tc ? describe(*tc) : std::string("nothing")));
    for (const char *k : {"boi_token_index", "eoi_token_index",
                          "image_token_index", "tie_word_embeddings"})
      r.get(k);
    if (r.get("vision_config"))
      notes.push_back(src + ": field 'vision_config': the vision encoder "
                            "and its projector are not planned; only the "
                            "language model (text_config) is");
    nested.emplace(*tc, source, "text_config.");
    std::string textType;
    if (nested->optString("model_type", textType) && textType != "llama4_text")
      return Status::error(src +
                           ": field 'text_config.model_type': expected "
                           "'llama4_text', got '" +
                           textType + "'");
  }
  Reader &body = nested ? *nested : r;
  switch (info->arch) {
  case Arch::Gpt2:
    parseGpt2(r, c);
    break;
  case Arch::GptNeoX:
    parseGptNeoX(r, c);
    break;
  case Arch::GptJ:
    parseGptJ(body, c);
    break;
  case Arch::BertMaskedLM:
  case Arch::BertPreTraining:
    parseBert(r, c, info->arch == Arch::BertPreTraining);
    break;
  case Arch::ViT:
    parseVit(r, c);
    break;
  default:
    parseLlamaLike(body, c, info->arch, notes);
    break;
  }
  readNormEps(body, c, info->arch);
  parseCommon(body, c, notes);
  if (nested) {
    // The dtype may be written at the top level only.
    if (!body.has("torch_dtype") && !body.has("dtype"))
      readDType(r, c);
    r.get("torch_dtype");
    r.get("dtype");
    r.adopt(body);
  }
  if (r.failed())
    return r.status();

  // A ViT's sequence is its patches plus the class token (parseVit), however
  // long; a language model's is capped.
  if (c.family != ModelFamily::Vision)
    c.seqLen = c.maxPositions > 0 && c.maxPositions <= kDefaultSeqLen
                   ? c.maxPositions
                   : kDefaultSeqLen;
  if (Status s = validateModelConfig(c, source); !s)
    return s;

  if (warnings) {
    for (const std::string &k : r.unknownKeys())
      warnings->push_back(src + ": unknown key '" + k + "' ignored");
    if (nested)
      for (const std::string &k : nested->unknownKeys())
        warnings->push_back(src + ": unknown key '" + k + "' ignored");
    for (std::string &n : notes)
      warnings->push_back(std::move(n));
  }
  return c;
}

} // namespace

Result<ModelConfig> parseHFConfig(std::string_view jsonText,
                                  std::string_view source,
                                  std::vector<std::string> *warnings) {
  std::string src(source);
  json root;
  try {
    root = json::parse(jsonText);
  } catch (const json::exception &e) {
    // parse_error reads "[json.exception.parse_error.101] parse error at
    // line L, column C: ..."; out_of_range.406 "number overflow parsing
    // '1e999'". Keep the text after the bracketed id.
    std::string what = e.what();
    size_t at = what.find("] ");
    return Status::error(
        src + ": malformed JSON: " +
        (at == std::string::npos ? what : what.substr(at + 2)));
  }
  try {
    return parseObject(root, source, warnings);
  } catch (const std::exception &e) {
    // The reader checks types before every access; this is a safety net so
    // that nothing escapes the library.
    return Status::error(src + ": cannot read the config: " + e.what());
  }
}

} // namespace trident::frontend
