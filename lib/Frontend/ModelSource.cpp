//===- ModelSource.cpp - Config file loading and validation ---------------===//
//
// validateModelConfig is the single gate every ModelConfig passes (zoo,
// importer, hand-built configs), so it checks the struct's own fields and
// names them as the struct does; the importer reports problems earlier, in
// the Hugging Face key names the user wrote.
//
//===----------------------------------------------------------------------===//

#include "FrontendDetail.h"
#include "trident/Support/ExpertGroups.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace trident::frontend {

Result<ModelConfig> loadHFConfigFile(const std::string &path,
                                     std::vector<std::string> *warnings) {
  // An ifstream opens a directory and then reads nothing, which would
  // surface as a JSON syntax error at line 1.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Status::error(path + ": cannot open file: is a directory, not a "
                                "config.json");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(path + ": cannot open file: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    return Status::error(path + ": cannot read file");
  return parseHFConfig(text.str(), path, warnings);
}

namespace {

/// Collects the first problem; later checks are skipped once one failed.
class Checker {
public:
  explicit Checker(std::string_view source) : source_(source) {}

  bool failed() const { return !error_.empty(); }
  Status status() const {
    return failed() ? Status::error(error_) : Status::ok();
  }

  void fail(const std::string &message) {
    if (!failed())
      error_ = std::string(source_) + ": " + message;
  }
  void require(bool cond, const std::string &message) {
    if (!cond)
      fail(message);
  }
  void inRange(const char *field, int64_t v, int64_t lo) {
    if (failed())
      return;
    if (v < lo)
      fail(std::string("'") + field + "' must be " +
           (lo > 0 ? "positive" : "non-negative") + ", got " +
           std::to_string(v));
    else if (v > detail::kMaxDim)
      fail(std::string("'") + field + "' is " + std::to_string(v) +
           ", above the supported limit " + std::to_string(detail::kMaxDim));
  }
  void positive(const char *field, int64_t v) { inRange(field, v, 1); }
  void nonNegative(const char *field, int64_t v) { inRange(field, v, 0); }

private:
  std::string_view source_;
  std::string error_;
};

std::string str(int64_t v) { return std::to_string(v); }

/// The most transformer layers a model may have. The deepest published
/// models have about 1000 (DeepNet); the plan search time grows faster than
/// linearly with the layer count (1024 layers on 10^6 GPUs: about 80 s on
/// two threads). loadModel applies the same limit to a .mlir's repeats
/// (GraphBuilder.cpp).
constexpr int64_t kMaxLayers = 1024;

void checkTransformer(const ModelConfig &c, Checker &k) {
  k.positive("hidden", c.hidden);
  k.positive("numLayers", c.numLayers);
  k.positive("numHeads", c.numHeads);
  k.positive("numKvHeads", c.numKvHeads);
  k.positive("seqLen", c.seqLen);
  k.nonNegative("maxPositions", c.maxPositions);
  if (k.failed())
    return;
  k.require(c.numHeads % c.numKvHeads == 0,
            "'numKvHeads' " + str(c.numKvHeads) +
                " does not divide 'numHeads' " + str(c.numHeads));

  if (c.attention == AttentionKind::MLA) {
    const MLAConfig &m = c.mla;
    k.nonNegative("mla.qLoraRank", m.qLoraRank);
    k.positive("mla.kvLoraRank", m.kvLoraRank);
    k.nonNegative("mla.qkNopeHeadDim", m.qkNopeHeadDim);
    k.positive("mla.qkRopeHeadDim", m.qkRopeHeadDim);
    k.positive("mla.vHeadDim", m.vHeadDim);
    k.require(!c.qkNorm, "'qkNorm' is not supported with MLA attention");
  } else {
    k.positive("headDim", c.headDim);
  }

  if (c.position == PositionKind::Learned && !k.failed())
    k.require(c.seqLen <= c.maxPositions,
              "'seqLen' " + str(c.seqLen) +
                  " exceeds the learned position table 'maxPositions' " +
                  str(c.maxPositions));
  k.require(std::isfinite(c.normEps) && c.normEps > 0 && c.normEps <= 1,
            "'normEps' must be in (0, 1], got " + std::to_string(c.normEps));
  k.require(std::isfinite(c.rotaryPct) && c.rotaryPct > 0 && c.rotaryPct <= 1,
            "'rotaryPct' must be in (0, 1], got " +
                std::to_string(c.rotaryPct));
  if (c.moe.swigluLimit != 0)
    k.require(std::isfinite(c.moe.swigluLimit) && c.moe.swigluLimit > 0 &&
                  c.moe.numExperts > 0 && c.gatedMlp &&
                  c.act == Activation::Silu,
              "'moe.swigluLimit' must be positive, on gated silu experts");
  k.require(std::isfinite(c.softmaxScale) && c.softmaxScale >= 0,
            "'softmaxScale' must be >= 0 (0: 1/sqrt(headDim)), got " +
                std::to_string(c.softmaxScale));
  k.require(!c.ropeInterleaved || c.position == PositionKind::Rotary,
            "'ropeInterleaved' needs rotary positions");
  if (c.ropeScaling.kind != RopeScaling::Kind::None) {
    k.require(c.position == PositionKind::Rotary,
              "'ropeScaling' needs rotary positions");
    std::string why = checkRopeScaling(c.ropeScaling);
    k.require(why.empty(), "'ropeScaling': " + why);
  }
  for (auto [name, p] : {std::pair<const char *, double>{"dropout", c.dropout},
                         {"attentionDropout", c.attentionDropoutRate()},
                         {"embeddingDropout", c.embeddingDropoutRate()}})
    k.require(std::isfinite(p) && p >= 0 && p < 1,
              std::string("'") + name + "' must be in [0, 1), got " +
                  std::to_string(p));

  if (!c.noRopeLayers.empty()) {
    k.require((int64_t)c.noRopeLayers.size() == c.numLayers,
              "'noRopeLayers' has " + str(c.noRopeLayers.size()) +
                  " entries for " + str(c.numLayers) + " layers");
    k.require(c.position == PositionKind::Rotary,
              "'noRopeLayers' needs rotary positions");
  }
  k.require(!c.parallelSharedNorm || c.parallelResidual,
            "'parallelSharedNorm' needs 'parallelResidual'");
  k.require(!c.qkNormRopeLayersOnly || c.qkNorm,
            "'qkNormRopeLayersOnly' needs 'qkNorm'");
  k.nonNegative("slidingWindow", c.slidingWindow);
  if (!c.slidingLayers.empty()) {
    k.require((int64_t)c.slidingLayers.size() == c.numLayers,
              "'slidingLayers' has " + str(c.slidingLayers.size()) +
                  " entries for " + str(c.numLayers) + " layers");
    k.require(c.slidingWindow > 0,
              "'slidingLayers' is set but 'slidingWindow' is 0");
  }

  const MoEConfig &m = c.moe;
  k.nonNegative("moe.numExperts", m.numExperts);
  if (m.numExperts > 0 && !k.failed()) {
    k.positive("moe.topK", m.topK);
    k.require(m.topK <= m.numExperts, "'moe.topK' " + str(m.topK) +
                                          " exceeds 'moe.numExperts' " +
                                          str(m.numExperts));
    k.positive("moe.expertFfn", m.expertFfn);
    if (!k.failed()) {
      std::string why = checkExpertGroups(m.numExperts, m.topK, m.numGroups,
                                          m.topkGroups);
      k.require(why.empty(), "'moe.numGroups' / 'moe.topkGroups': " + why);
    }
    k.require(std::isfinite(m.routedScale) && m.routedScale > 0,
              "'moe.routedScale' must be positive, got " +
                  std::to_string(m.routedScale));
    k.nonNegative("moe.numSharedExperts", m.numSharedExperts);
    if (m.numSharedExperts > 0)
      k.positive("moe.sharedFfn", m.sharedFfn);
    k.nonNegative("moe.firstDenseLayers", m.firstDenseLayers);
    k.require(m.firstDenseLayers <= c.numLayers,
              "'moe.firstDenseLayers' " + str(m.firstDenseLayers) +
                  " exceeds 'numLayers' " + str(c.numLayers));
    k.positive("moe.layerFreq", m.layerFreq);
    if (!m.moeLayers.empty())
      k.require((int64_t)m.moeLayers.size() == c.numLayers,
                "'moe.moeLayers' has " + str(m.moeLayers.size()) +
                    " entries for " + str(c.numLayers) + " layers");
  }
  // A dense MLP is needed wherever a layer has no routed experts.
  if (!k.failed() && detail::moeLayerCount(c) < c.numLayers)
    k.positive("ffn", c.ffn);
  else
    k.nonNegative("ffn", c.ffn);
}

} // namespace

Status validateModelConfig(const ModelConfig &c, std::string_view source) {
  Checker k(source);
  switch (c.family) {
  case ModelFamily::DecoderLM:
    k.positive("vocabSize", c.vocabSize);
    checkTransformer(c, k);
    break;
  case ModelFamily::EncoderLM:
    k.positive("vocabSize", c.vocabSize);
    k.nonNegative("typeVocabSize", c.typeVocabSize);
    k.nonNegative("numClasses", c.numClasses);
    k.require(c.numClasses == 0 || c.pooler,
              "'numClasses' needs the pooler ('pooler' is false)");
    checkTransformer(c, k);
    break;
  case ModelFamily::Vision:
    k.positive("imageSize", c.imageSize);
    k.positive("patchSize", c.patchSize);
    k.positive("channels", c.channels);
    k.positive("numClasses", c.numClasses);
    if (!k.failed()) {
      k.require(c.imageSize % c.patchSize == 0,
                "'patchSize' " + str(c.patchSize) +
                    " does not divide 'imageSize' " + str(c.imageSize));
      int64_t side = c.imageSize / c.patchSize;
      // Patches plus the CLS token; side <= 2^31 so side*side fits.
      int64_t tokens = side * side + 1;
      if (c.position == PositionKind::Learned)
        k.require(c.maxPositions == tokens,
                  "'maxPositions' " + str(c.maxPositions) + " should be " +
                      str(tokens) + " (patches + CLS token)");
      // The image fixes a ViT's sequence: a --seq-len of another length
      // would plan (and emit) a model that does not exist.
      k.require(c.seqLen == tokens,
                "'seqLen' " + str(c.seqLen) + " should be " + str(tokens) +
                    ": a ViT's sequence is its " + str(side) + "x" +
                    str(side) + " patches plus the CLS token (set by " +
                    "'imageSize' and 'patchSize')");
    }
    checkTransformer(c, k);
    break;
  case ModelFamily::Recommender:
    k.positive("denseFeatures", c.denseFeatures);
    k.positive("embeddingDim", c.embeddingDim);
    k.positive("bagSize", c.bagSize);
    k.require(!c.tableRows.empty(), "'tableRows' is empty");
    for (int64_t r : c.tableRows)
      k.positive("tableRows[]", r);
    k.require(!c.bottomMlp.empty(), "'bottomMlp' is empty");
    for (int64_t w : c.bottomMlp)
      k.positive("bottomMlp[]", w);
    k.require(!c.topMlp.empty(), "'topMlp' is empty");
    for (int64_t w : c.topMlp)
      k.positive("topMlp[]", w);
    if (!k.failed())
      k.require(c.bottomMlp.back() == c.embeddingDim,
                "the last 'bottomMlp' width " + str(c.bottomMlp.back()) +
                    " must equal 'embeddingDim' " + str(c.embeddingDim));
    break;
  }
  if (k.failed())
    return k.status();

  bool overflow = false;
  (void)detail::countParamsChecked(c, overflow);
  if (overflow)
    k.fail("the parameter count overflows a 64-bit integer (sizes too "
           "large)");
  // The graph builder, the layer profile and the planner's layer
  // partitioning all work per layer; 2^31 layers would allocate gigabytes
  // before anything else runs.
  if (c.family != ModelFamily::Recommender && c.numLayers > kMaxLayers)
    k.fail("'numLayers' is " + str(c.numLayers) +
           ", above the supported limit of " + str(kMaxLayers) + " layers");
  return k.status();
}

} // namespace trident::frontend
