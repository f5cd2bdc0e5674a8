//===- GraphBuilder.cpp - ModelConfig to tgraph IR ------------------------===//
//
// Parameter layouts follow the Hugging Face modules they stand for (linear
// weights are out x in), so that parameter counts read off the IR equal the
// published ones. Layer structure per family:
//   decoder  embed [+pos] [dropout] -> layers -> final norm -> LM head -> CE
//   encoder  embed + pos + type -> norm -> post-norm layers -> MLM head, NSP
//   vision   patches + cls + pos -> pre-norm layers -> norm -> classifier
//   DLRM     bottom MLP, embedding bags -> dot interaction -> top MLP -> BCE
//
//===----------------------------------------------------------------------===//

#include "trident/Frontend/GraphBuilder.h"

#include "dialects/Graph/IR/GraphOps.h"
#include "trident/Frontend/ModelSource.h"
#include "trident/Support/RopeScalingAttr.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include "FrontendDetail.h"

#include <algorithm>
#include <filesystem>

using namespace mlir;
using namespace mlir::trident::graph;

namespace trident::frontend {

void registerFrontendDialects(DialectRegistry &registry) {
  registry.insert<TGraphDialect>();
}

mlir::trident::graph::ModelOp LoadedModel::model() {
  if (!module)
    return {};
  for (Operation &op : module->getBody()->getOperations())
    if (auto m = dyn_cast<ModelOp>(&op))
      return m;
  return {};
}

namespace {

/// Emits ops in order with a running name prefix.
class Builder {
public:
  Builder(MLIRContext &ctx, const ModelConfig &cfg)
      : ctx(ctx), cfg(cfg), b(&ctx), loc(UnknownLoc::get(&ctx)) {
    switch (cfg.dtype) {
    case DType::F32:
      elem = b.getF32Type();
      break;
    case DType::F16:
      elem = b.getF16Type();
      break;
    case DType::BF16:
      elem = b.getBF16Type();
      break;
    case DType::FP8:
      elem = b.getType<Float8E4M3FNType>();
      break;
    }
  }

  OwningOpRef<ModuleOp> build();

private:
  static constexpr int64_t kDyn = ShapedType::kDynamic;

  // --- types ---
  RankedTensorType act(int64_t width) {
    return RankedTensorType::get({kDyn, kDyn, width}, elem);
  }
  RankedTensorType t(ArrayRef<int64_t> shape, Type e = {}) {
    return RankedTensorType::get(shape, e ? e : elem);
  }

  FloatAttr eps() { return b.getF64FloatAttr(cfg.normEps); }

  // --- leaves ---
  Value param(StringRef name, ParamKind kind, ArrayRef<int64_t> shape) {
    std::string full = (prefix + name).str();
    return ParamOp::create(b, loc, t(shape), b.getStringAttr(full),
                           ParamKindAttr::get(&ctx, kind));
  }
  Value input(StringRef name, RankedTensorType type) {
    return InputOp::create(b, loc, type, b.getStringAttr(name));
  }

  // --- layers ---
  Value linear(Value x, StringRef name, int64_t out, bool bias, TpRole role,
               ParamKind kind) {
    auto xt = cast<RankedTensorType>(x.getType());
    int64_t in = xt.getShape().back();
    Value w = param((name + ".weight").str(), kind, {out, in});
    Value bv = bias ? param((name + ".bias").str(), kind, {out}) : Value();
    SmallVector<int64_t> shape(xt.getShape());
    shape.back() = out;
    auto op = LinearOp::create(b, loc, t(shape, xt.getElementType()), x, w, bv,
                               role == TpRole::None
                                   ? TpRoleAttr()
                                   : TpRoleAttr::get(&ctx, role));
    return op.getResult();
  }
  Value linearWith(Value x, Value w, TpRole role) {
    auto xt = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape(xt.getShape());
    shape.back() = cast<RankedTensorType>(w.getType()).getDimSize(0);
    return LinearOp::create(b, loc, t(shape, xt.getElementType()), x, w,
                            Value(), TpRoleAttr::get(&ctx, role))
        .getResult();
  }
  Value norm(Value x, StringRef name, int64_t width = 0) {
    int64_t w =
        width ? width : cast<RankedTensorType>(x.getType()).getShape().back();
    Value g = param((name + ".weight").str(), ParamKind::Norm, {w});
    if (cfg.norm == NormKind::RMSNorm)
      return RMSNormOp::create(b, loc, x.getType(), x, g, eps()).getResult();
    Value beta = cfg.normBias
                     ? param((name + ".bias").str(), ParamKind::Norm, {w})
                     : Value();
    auto op = LayerNormOp::create(b, loc, x.getType(), x, g, beta, eps(), nullptr);
    if (cfg.norm == NormKind::LayerNorm1p)
      op.setZeroCentered(true);
    return op.getResult();
  }
  Value rmsNorm(Value x, StringRef name, int64_t width) {
    Value g = param((name + ".weight").str(), ParamKind::Norm, {width});
    return RMSNormOp::create(b, loc, x.getType(), x, g, eps()).getResult();
  }
  /// Dropout at `rate` (the sublayer rate unless given).
  Value dropout(Value x, std::optional<double> rate = std::nullopt) {
    double p = rate.value_or(cfg.dropout);
    if (p <= 0)
      return x;
    return DropoutOp::create(b, loc, x.getType(), x, b.getF64FloatAttr(p))
        .getResult();
  }
  Value add(Value x, Value y) {
    return AddOp::create(b, loc, x.getType(), x, y).getResult();
  }
  Value activation(Value x, Activation a) {
    switch (a) {
    case Activation::Gelu:
      return GeluOp::create(b, loc, x.getType(), x).getResult();
    case Activation::GeluTanh: {
      auto op = GeluOp::create(b, loc, x.getType(), x);
      op.setApproximate(true);
      return op.getResult();
    }
    case Activation::Silu:
      return SiluOp::create(b, loc, x.getType(), x).getResult();
    case Activation::Relu:
      return ReluOp::create(b, loc, x.getType(), x).getResult();
    case Activation::Relu2:
      return SquaredReluOp::create(b, loc, x.getType(), x).getResult();
    }
    return x;
  }
  Value gated(Value gate, Value up, Activation a) {
    if (a == Activation::Silu)
      return SwiGLUOp::create(b, loc, gate.getType(), gate, up).getResult();
    if (a == Activation::Gelu || a == Activation::GeluTanh)
      return GeGLUOp::create(b, loc, gate.getType(), gate, up).getResult();
    // Other gated activations: act(gate) * up.
    Value g = activation(gate, a);
    return MulOp::create(b, loc, gate.getType(), g, up).getResult();
  }

  Value mlp(Value x, StringRef name, int64_t ffn, ParamKind kind);
  Value attention(Value x, int64_t layer);
  Value moe(Value x);
  /// `like` with its last dimension set to `width`.
  RankedTensorType withWidth(Value like, int64_t width) {
    auto t = cast<RankedTensorType>(like.getType());
    SmallVector<int64_t> shape(t.getShape());
    shape.back() = width;
    return RankedTensorType::get(shape, t.getElementType());
  }
  Value decoderLayer(Value x, int64_t layer);
  Value encoderLayer(Value x, bool preNorm);

  void emitRepeats(Value &x, int64_t first, int64_t count,
                   llvm::function_ref<int64_t(int64_t)> signature,
                   llvm::function_ref<Value(Value, int64_t)> layerFn);

  void buildDecoder(Value &loss);
  void buildEncoder(Value &loss);
  void buildVision(Value &loss);
  void buildRecommender(Value &loss);

  MLIRContext &ctx;
  const ModelConfig &cfg;
  OpBuilder b;
  Location loc;
  Type elem;
  std::string prefix;
};

Value Builder::mlp(Value x, StringRef name, int64_t ffn, ParamKind kind) {
  if (cfg.gatedMlp) {
    Value g = linear(x, (name + ".gate_proj").str(), ffn, cfg.mlpBias,
                     TpRole::Column, kind);
    Value u = linear(x, (name + ".up_proj").str(), ffn, cfg.mlpBias,
                     TpRole::Column, kind);
    Value h = gated(g, u, cfg.act);
    return linear(h, (name + ".down_proj").str(), cfg.hidden, cfg.mlpBias,
                  TpRole::Row, kind);
  }
  Value h = linear(x, (name + ".fc1").str(), ffn, cfg.mlpBias, TpRole::Column,
                   kind);
  h = activation(h, cfg.act);
  return linear(h, (name + ".fc2").str(), cfg.hidden, cfg.mlpBias, TpRole::Row,
                kind);
}

Value Builder::attention(Value x, int64_t layer) {
  const int64_t h = cfg.numHeads, kv = cfg.numKvHeads;
  AttentionOp op;
  Value q, k, v, kRope, sinks;
  int64_t headDim = cfg.headDim, vHeadDim = cfg.headDim, rotary = 0;
  if (cfg.attention == AttentionKind::MLA) {
    // DeepSeek-V2 (DeepSeek-AI 2024) multi-head latent attention: low-rank
    // q and kv with a decoupled rotary key shared by all heads.
    const MLAConfig &m = cfg.mla;
    headDim = m.qkNopeHeadDim + m.qkRopeHeadDim;
    vHeadDim = m.vHeadDim;
    rotary = m.qkRopeHeadDim;
    Value qIn = x;
    if (m.qLoraRank > 0) {
      qIn = linear(x, "attn.q_a_proj", m.qLoraRank, false, TpRole::None,
                   ParamKind::Attention);
      qIn = rmsNorm(qIn, "attn.q_a_layernorm", m.qLoraRank);
    }
    q = linear(qIn, "attn.q_proj", h * headDim, false, TpRole::Column,
               ParamKind::Attention);
    // kv_a_proj_with_mqa, as its latent and rotary-key parts.
    Value latent = linear(x, "attn.kv_a_proj", m.kvLoraRank, false,
                          TpRole::None, ParamKind::Attention);
    kRope = linear(x, "attn.k_rope_proj", m.qkRopeHeadDim, false, TpRole::None,
                   ParamKind::Attention);
    latent = rmsNorm(latent, "attn.kv_a_layernorm", m.kvLoraRank);
    // kv_b_proj, as its key and value halves.
    k = linear(latent, "attn.k_b_proj", h * m.qkNopeHeadDim, false,
               TpRole::Column, ParamKind::Attention);
    v = linear(latent, "attn.v_b_proj", h * m.vHeadDim, false, TpRole::Column,
               ParamKind::Attention);
    op = AttentionOp::create(b, loc, withWidth(q, h * vHeadDim), q, k, v, kRope, sinks,
                             b.getI64IntegerAttr(h), b.getI64IntegerAttr(h),
                             b.getI64IntegerAttr(headDim), IntegerAttr(),
                             nullptr, IntegerAttr(), IntegerAttr(), FloatAttr(),
                             FloatAttr(), DictionaryAttr(), FloatAttr(), nullptr);
    op.setVHeadDimAttr(b.getI64IntegerAttr(vHeadDim));
  } else {
    q = linear(x, "attn.q_proj", h * headDim, cfg.qkvBias, TpRole::Column,
               ParamKind::Attention);
    k = linear(x, "attn.k_proj", kv * headDim, cfg.qkvBias, TpRole::Column,
               ParamKind::Attention);
    v = linear(x, "attn.v_proj", kv * headDim, cfg.qkvBias, TpRole::Column,
               ParamKind::Attention);
    if (cfg.hasQkNorm(layer)) {
      q = rmsNorm(q, "attn.q_norm", headDim);
      k = rmsNorm(k, "attn.k_norm", headDim);
    }
    if (cfg.attentionSinks)
      sinks = param("attn.sinks", ParamKind::Attention, {h});
    if (cfg.isRopeLayer(layer))
      rotary = static_cast<int64_t>(cfg.rotaryPct * headDim);
    op = AttentionOp::create(b, loc, withWidth(q, h * headDim), q, k, v, Value(), sinks,
                             b.getI64IntegerAttr(h), b.getI64IntegerAttr(kv),
                             b.getI64IntegerAttr(headDim), IntegerAttr(),
                             nullptr, IntegerAttr(), IntegerAttr(), FloatAttr(),
                             FloatAttr(), DictionaryAttr(), FloatAttr(), nullptr);
  }
  if (cfg.causal)
    op.setCausal(true);
  if (cfg.isSlidingLayer(layer))
    op.setWindowAttr(b.getI64IntegerAttr(cfg.slidingWindow));
  if (rotary > 0) {
    op.setRotaryDimAttr(b.getI64IntegerAttr(rotary));
    if (cfg.ropeTheta != 10000.0)
      op.setRopeThetaAttr(b.getF64FloatAttr(cfg.ropeTheta));
    if (DictionaryAttr rs = ropeScalingAttr(b, cfg.ropeScaling))
      op.setRopeScalingAttr(rs);
    if (cfg.ropeInterleaved)
      op.setRopeInterleaved(true);
  }
  if (cfg.softmaxScale > 0)
    op.setSoftmaxScaleAttr(b.getF64FloatAttr(cfg.softmaxScale));
  if (cfg.attentionDropoutRate() > 0)
    op.setDropoutAttr(b.getF64FloatAttr(cfg.attentionDropoutRate()));
  return linear(op.getResult(), "attn.o_proj", cfg.hidden, cfg.outBias,
                TpRole::Row, ParamKind::Attention);
}

Value Builder::moe(Value x) {
  const MoEConfig &m = cfg.moe;
  int64_t e = m.numExperts, f = m.expertFfn, h = cfg.hidden;
  int64_t fin = cfg.gatedMlp ? 2 * f : f;
  Value router = param("moe.router.weight", ParamKind::Router, {h, e});
  Value routerBias;
  if (m.routerBias || m.routerScoreCorrection)
    routerBias = param(m.routerBias ? "moe.router.bias"
                                    : "moe.router.e_score_correction_bias",
                       ParamKind::Router, {e});
  Value wIn = param("moe.experts.w_in", ParamKind::Expert, {e, h, fin});
  Value wOut = param("moe.experts.w_out", ParamKind::Expert, {e, f, h});
  Value bIn, bOut;
  if (m.expertBias) {
    bIn = param("moe.experts.b_in", ParamKind::Expert, {e, fin});
    bOut = param("moe.experts.b_out", ParamKind::Expert, {e, h});
  }
  ActKind a = ActKind::Silu;
  switch (cfg.act) {
  case Activation::Gelu:
    a = ActKind::Gelu;
    break;
  case Activation::GeluTanh:
    a = ActKind::GeluTanh;
    break;
  case Activation::Silu:
    a = ActKind::Silu;
    break;
  case Activation::Relu:
    a = ActKind::Relu;
    break;
  case Activation::Relu2:
    a = ActKind::Relu2;
    break;
  }
  auto op = MoEOp::create(b, loc, x.getType(), x, router, routerBias, wIn,
                          wOut, bIn, bOut, b.getI64IntegerAttr(e),
                          b.getI64IntegerAttr(m.topK),
                          ActKindAttr::get(&ctx, a),
                          cfg.gatedMlp ? b.getUnitAttr() : nullptr,
                          m.renormalize ? nullptr : b.getUnitAttr(),
                          m.swigluLimit > 0 ? b.getF64FloatAttr(m.swigluLimit)
                                            : FloatAttr(),
                          m.routerScoreCorrection ? b.getUnitAttr() : nullptr,
                          m.sigmoidScores ? b.getUnitAttr() : nullptr,
                          // Defaults (1) left out of the printed IR.
                          m.numGroups != 1 ? b.getI64IntegerAttr(m.numGroups)
                                           : IntegerAttr(),
                          m.topkGroups != 1 ? b.getI64IntegerAttr(m.topkGroups)
                                            : IntegerAttr(),
                          m.routedScale != 1.0 ? b.getF64FloatAttr(m.routedScale)
                                               : FloatAttr());
  Value y = op.getResult();
  if (m.numSharedExperts > 0) {
    Value shared = mlp(x, "moe.shared_experts", m.sharedFfn * m.numSharedExperts,
                       ParamKind::Mlp);
    y = add(y, shared);
  }
  return y;
}

Value Builder::decoderLayer(Value x, int64_t layer) {
  Value n1 = norm(x, "input_layernorm");
  Value a = dropout(attention(n1, layer));
  bool isMoe = cfg.isMoeLayer(layer);
  auto ffn = [&](Value in) {
    return isMoe ? moe(in) : mlp(in, "mlp", cfg.ffn, ParamKind::Mlp);
  };
  if (cfg.parallelResidual) {
    // GPT-NeoX: x + attn(ln1(x)) + mlp(ln2(x)); GPT-J: mlp(ln1(x)).
    Value n2 =
        cfg.parallelSharedNorm ? n1 : norm(x, "post_attention_layernorm");
    Value m = dropout(ffn(n2));
    return add(add(x, a), m);
  }
  Value h = add(x, a);
  Value n2 = norm(h, "post_attention_layernorm");
  Value m = dropout(ffn(n2));
  return add(h, m);
}

Value Builder::encoderLayer(Value x, bool preNorm) {
  if (preNorm) {
    Value a = dropout(attention(norm(x, "layernorm_before"), 0));
    Value h = add(x, a);
    Value m = dropout(mlp(norm(h, "layernorm_after"), "mlp", cfg.ffn,
                          ParamKind::Mlp));
    return add(h, m);
  }
  // BERT (Devlin et al. 2019) post-norm layer.
  Value a = dropout(attention(x, 0));
  Value h = norm(add(x, a), "attention.output.LayerNorm");
  Value m = dropout(mlp(h, "mlp", cfg.ffn, ParamKind::Mlp));
  return norm(add(h, m), "output.LayerNorm");
}

/// Groups layers [first, first+count) into tgraph.repeat ops: the shortest
/// period (up to 4 layers) that tiles the range with identical signatures
/// becomes one repeat; otherwise runs of equal consecutive signatures do.
void Builder::emitRepeats(Value &x, int64_t first, int64_t count,
                          llvm::function_ref<int64_t(int64_t)> signature,
                          llvm::function_ref<Value(Value, int64_t)> layerFn) {
  auto emit = [&](int64_t start, int64_t period, int64_t reps,
                  StringRef name) {
    Type ty = x.getType();
    auto rep = RepeatOp::create(b, loc, TypeRange{ty}, b.getStringAttr(name),
                                b.getI64IntegerAttr(reps), ValueRange{x});
    OpBuilder::InsertPoint after = b.saveInsertionPoint();
    Block *body = b.createBlock(&rep.getBody(), {}, {ty}, {loc});
    b.setInsertionPointToStart(body);
    Value y = body->getArgument(0);
    for (int64_t i = 0; i < period; ++i) {
      std::string saved = prefix;
      prefix = period > 1 ? "sub" + std::to_string(i) + "." : "";
      y = layerFn(y, start + i);
      prefix = saved;
    }
    YieldOp::create(b, loc, ValueRange{y});
    b.restoreInsertionPoint(after);
    x = rep.getResult(0);
  };
  std::vector<int64_t> sig(count);
  for (int64_t i = 0; i < count; ++i)
    sig[i] = signature(first + i);
  // A period of 1 is a plain stack; a longer one only when the layers in
  // it differ (otherwise period 1 would have matched).
  if (int64_t period = tilingPeriod(first, count, signature)) {
    emit(first, period, count / period,
         "layers." + std::to_string(first) + "-" +
             std::to_string(first + count - 1));
    return;
  }
  int64_t i = 0;
  while (i < count) {
    int64_t j = i;
    while (j < count && sig[j] == sig[i])
      ++j;
    emit(first + i, 1, j - i,
         "layers." + std::to_string(first + i) + "-" +
             std::to_string(first + j - 1));
    i = j;
  }
}

void Builder::buildDecoder(Value &loss) {
  Value ids = input("tokens", t({kDyn, kDyn}, b.getI32Type()));
  Value labels = input("labels", t({kDyn, kDyn}, b.getI32Type()));
  Value wte =
      param("embed_tokens.weight", ParamKind::Embedding, {cfg.vocabSize, cfg.hidden});
  Value x = EmbeddingOp::create(b, loc, act(cfg.hidden), ids, wte).getResult();
  if (cfg.position == PositionKind::Learned) {
    Value wpe = param("embed_positions.weight", ParamKind::Embedding,
                      {cfg.maxPositions, cfg.hidden});
    x = PositionEmbeddingOp::create(b, loc, x.getType(), x, wpe).getResult();
  }
  x = dropout(x, cfg.embeddingDropoutRate());
  auto signature = [&](int64_t i) { return decoderLayerSignature(cfg, i); };
  auto layerFn = [&](Value y, int64_t layer) { return decoderLayer(y, layer); };
  for (const LayerRun &r : decoderLayerRuns(cfg))
    emitRepeats(x, r.first, r.count, signature, layerFn);
  if (cfg.finalNorm)
    x = norm(x, "norm");
  Value head = cfg.tieEmbeddings
                   ? wte
                   : param("lm_head.weight", ParamKind::Head,
                           {cfg.vocabSize, cfg.hidden});
  Value headBias = cfg.headBias
                       ? param("lm_head.bias", ParamKind::Head, {cfg.vocabSize})
                       : Value();
  Value logits = LinearOp::create(b, loc, act(cfg.vocabSize), x, head, headBias,
                                  TpRoleAttr::get(&ctx, TpRole::Vocab))
                     .getResult();
  loss = CrossEntropyOp::create(b, loc, t({}, b.getF32Type()), logits, labels)
             .getResult();
}

void Builder::buildEncoder(Value &loss) {
  Value ids = input("tokens", t({kDyn, kDyn}, b.getI32Type()));
  Value labels = input("labels", t({kDyn, kDyn}, b.getI32Type()));
  Value wte = param("embeddings.word_embeddings.weight", ParamKind::Embedding,
                    {cfg.vocabSize, cfg.hidden});
  Value x = EmbeddingOp::create(b, loc, act(cfg.hidden), ids, wte).getResult();
  Value wpe = param("embeddings.position_embeddings.weight",
                    ParamKind::Embedding, {cfg.maxPositions, cfg.hidden});
  x = PositionEmbeddingOp::create(b, loc, x.getType(), x, wpe).getResult();
  if (cfg.typeVocabSize > 0) {
    Value types = input("token_types", t({kDyn, kDyn}, b.getI32Type()));
    Value wtt = param("embeddings.token_type_embeddings.weight",
                      ParamKind::Embedding, {cfg.typeVocabSize, cfg.hidden});
    x = add(x, EmbeddingOp::create(b, loc, act(cfg.hidden), types, wtt)
                   .getResult());
  }
  x = dropout(norm(x, "embeddings.LayerNorm"), cfg.embeddingDropoutRate());
  emitRepeats(
      x, 0, cfg.numLayers, [](int64_t) { return 0; },
      [&](Value y, int64_t) { return encoderLayer(y, /*preNorm=*/false); });
  // Masked-LM head (BERT): transform, then the tied decoder with a bias.
  Value hdn = linear(x, "cls.predictions.transform.dense", cfg.hidden, true,
                     TpRole::None, ParamKind::Head);
  hdn = norm(activation(hdn, cfg.act), "cls.predictions.transform.LayerNorm");
  Value decBias =
      param("cls.predictions.bias", ParamKind::Head, {cfg.vocabSize});
  Value logits =
      LinearOp::create(b, loc, act(cfg.vocabSize), hdn, wte, decBias,
                       TpRoleAttr::get(&ctx, TpRole::Vocab))
          .getResult();
  loss = CrossEntropyOp::create(b, loc, t({}, b.getF32Type()), logits, labels)
             .getResult();
  if (cfg.pooler) {
    Value first = SelectTokenOp::create(b, loc, t({kDyn, cfg.hidden}), x,
                                        b.getI64IntegerAttr(0))
                      .getResult();
    Value pooled = linear(first, "pooler.dense", cfg.hidden, true,
                          TpRole::None, ParamKind::Head);
    pooled = TanhOp::create(b, loc, pooled.getType(), pooled).getResult();
    if (cfg.numClasses > 0) {
      Value nspLabels = input("nsp_labels", t({kDyn}, b.getI32Type()));
      Value nsp = linear(pooled, "cls.seq_relationship", cfg.numClasses, true,
                         TpRole::None, ParamKind::Head);
      Value nspLoss =
          CrossEntropyOp::create(b, loc, t({}, b.getF32Type()), nsp, nspLabels)
              .getResult();
      loss = add(loss, nspLoss);
    }
  }
}

void Builder::buildVision(Value &loss) {
  int64_t p = cfg.patchSize, side = cfg.imageSize / cfg.patchSize;
  int64_t tokens = side * side;
  Value img = input("images",
                    t({kDyn, cfg.channels, cfg.imageSize, cfg.imageSize}));
  Value labels = input("labels", t({kDyn}, b.getI32Type()));
  Value w = param("embeddings.patch_embeddings.weight", ParamKind::Embedding,
                  {cfg.channels * p * p, cfg.hidden});
  Value bias = param("embeddings.patch_embeddings.bias", ParamKind::Embedding,
                     {cfg.hidden});
  Value x = PatchEmbedOp::create(b, loc, t({kDyn, tokens, cfg.hidden}), img, w,
                                 bias, b.getI64IntegerAttr(p))
                .getResult();
  Value cls = param("embeddings.cls_token", ParamKind::Embedding, {1, cfg.hidden});
  x = PrependTokenOp::create(b, loc, t({kDyn, tokens + 1, cfg.hidden}), x, cls)
          .getResult();
  Value wpe = param("embeddings.position_embeddings", ParamKind::Embedding,
                    {tokens + 1, cfg.hidden});
  x = PositionEmbeddingOp::create(b, loc, x.getType(), x, wpe).getResult();
  x = dropout(x, cfg.embeddingDropoutRate());
  emitRepeats(
      x, 0, cfg.numLayers, [](int64_t) { return 0; },
      [&](Value y, int64_t) { return encoderLayer(y, /*preNorm=*/true); });
  x = norm(x, "layernorm");
  Value first = SelectTokenOp::create(b, loc, t({kDyn, cfg.hidden}), x,
                                      b.getI64IntegerAttr(0))
                    .getResult();
  Value logits = linear(first, "classifier", cfg.numClasses, true,
                        TpRole::None, ParamKind::Head);
  loss = CrossEntropyOp::create(b, loc, t({}, b.getF32Type()), logits, labels)
             .getResult();
}

void Builder::buildRecommender(Value &loss) {
  // DLRM (Naumov et al. 2019): bottom MLP on dense features, one pooled
  // embedding per sparse feature, pairwise dot interaction, top MLP.
  Value dense = input("dense", t({kDyn, cfg.denseFeatures}));
  Value labels = input("labels", t({kDyn, 1}));
  Value x = dense;
  for (auto [i, width] : llvm::enumerate(cfg.bottomMlp)) {
    x = linear(x, "bot_l." + std::to_string(i), width, true, TpRole::None,
               ParamKind::Other);
    x = ReluOp::create(b, loc, x.getType(), x).getResult();
  }
  SmallVector<Value> features{x};
  for (auto [i, rows] : llvm::enumerate(cfg.tableRows)) {
    Value ids = input("sparse." + std::to_string(i),
                      t({kDyn, cfg.bagSize}, b.getI64Type()));
    Value table = param("emb_l." + std::to_string(i), ParamKind::Embedding,
                        {rows, cfg.embeddingDim});
    features.push_back(EmbeddingBagOp::create(
                           b, loc, t({kDyn, cfg.embeddingDim}), ids, table)
                           .getResult());
  }
  int64_t n = features.size();
  x = DotInteractionOp::create(
          b, loc, t({kDyn, cfg.embeddingDim + n * (n - 1) / 2}), features)
          .getResult();
  for (auto [i, width] : llvm::enumerate(cfg.topMlp)) {
    x = linear(x, "top_l." + std::to_string(i), width, true, TpRole::None,
               ParamKind::Other);
    if (i + 1 < cfg.topMlp.size())
      x = ReluOp::create(b, loc, x.getType(), x).getResult();
  }
  loss = BinaryCrossEntropyOp::create(b, loc, t({}, b.getF32Type()), x, labels)
             .getResult();
}

} // namespace

std::string modelSymbol(std::string_view name) {
  std::string sym;
  for (char c : name)
    sym += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return sym.empty() ? "model" : sym;
}

namespace {

OwningOpRef<ModuleOp> Builder::build() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  std::string sym = modelSymbol(cfg.name);
  int64_t seq = cfg.seqLen;
  if (cfg.family == ModelFamily::Vision)
    seq = (cfg.imageSize / cfg.patchSize) * (cfg.imageSize / cfg.patchSize) + 1;
  if (cfg.family == ModelFamily::Recommender)
    seq = 1;
  auto model = ModelOp::create(b, loc, b.getStringAttr(sym),
                               b.getI64IntegerAttr(seq));
  model->setAttr("architecture", b.getStringAttr(cfg.architecture));
  Block *body = b.createBlock(&model.getBody());
  b.setInsertionPointToStart(body);
  Value loss;
  switch (cfg.family) {
  case ModelFamily::DecoderLM:
    buildDecoder(loss);
    break;
  case ModelFamily::EncoderLM:
    buildEncoder(loss);
    break;
  case ModelFamily::Vision:
    buildVision(loss);
    break;
  case ModelFamily::Recommender:
    buildRecommender(loss);
    break;
  }
  OutputOp::create(b, loc, loss);
  return module;
}

} // namespace

OwningOpRef<ModuleOp> buildModel(MLIRContext &context,
                                 const ModelConfig &config) {
  context.getOrLoadDialect<TGraphDialect>();
  return Builder(context, config).build();
}

static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// MLIR's parser recurses once per level of bracket nesting, so a hostile
/// file (`[[[[...` thousands deep) exhausts the stack: about 8000 levels of
/// nested arrays crash with an 8 MiB stack. A real tgraph module nests
/// fewer than 20 levels; refuse anything above this before parsing.
constexpr int64_t kMaxMlirNesting = 256;

/// The most layers (iterations of top-level tgraph.repeat ops) a model may
/// have: the limit validateModelConfig applies to configs (ModelSource.cpp).
constexpr int64_t kMaxMlirLayers = 1024;

/// The deepest bracket nesting of MLIR text, skipping string literals and
/// `//` comments; the `>` of an arrow `->` closes nothing. Also returns the
/// 1-based line where that depth is first reached.
static int64_t mlirNesting(llvm::StringRef text, int64_t &line) {
  int64_t depth = 0, deepest = 0, cur = 1;
  line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++cur;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      if (i < text.size() && text[i] == '\n')
        ++cur;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i + 1 < text.size() && text[i + 1] != '\n')
        ++i;
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > deepest) {
        deepest = depth;
        line = cur;
      }
    } else if (c == ')' || c == ']' || c == '}' ||
               (c == '>' && !(i > 0 && text[i - 1] == '-'))) {
      depth = std::max<int64_t>(0, depth - 1);
    }
  }
  return deepest;
}

/// Sizes of a parsed or overridden module that the cost model multiplies
/// in 64-bit integers: the sequence length, each repeat count, and the
/// parameter count (elements times the counts of the enclosing repeats).
/// A verified module can still hold `x 9223372036854775807` repeats, which
/// would overflow the counts silently (negative parameters, MFU of 10^16 %).
static Status checkMlirSizes(ModelOp model, const std::string &spec) {
  int64_t seq = model.getSeqLenAttr().getInt();
  if (seq > detail::kMaxDim)
    return Status::error(spec + ": seq_len " + std::to_string(seq) +
                         " is above the supported limit " +
                         std::to_string(detail::kMaxDim));
  std::string error;
  int64_t params = 0, layers = 0;
  model->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (!error.empty())
      return WalkResult::interrupt();
    if (auto r = dyn_cast<RepeatOp>(op)) {
      int64_t count = r.getCountAttr().getInt();
      if (count > detail::kMaxDim) {
        error = spec + ": tgraph.repeat \"" + r.getName().str() + "\" count " +
                std::to_string(count) + " is above the supported limit " +
                std::to_string(detail::kMaxDim);
        return WalkResult::interrupt();
      }
      if (!r->getParentOfType<RepeatOp>() &&
          (layers += count) > kMaxMlirLayers) {
        error = spec + ": the model has more than " +
                std::to_string(kMaxMlirLayers) +
                " layers (top-level tgraph.repeat iterations), the supported "
                "limit";
        return WalkResult::interrupt();
      }
    }
    if (auto p = dyn_cast<ParamOp>(op)) {
      int64_t n = 1;
      bool overflow = false;
      if (auto t = dyn_cast<ShapedType>(p.getType()); t && t.hasStaticShape())
        for (int64_t d : t.getShape())
          overflow |= __builtin_mul_overflow(n, d, &n);
      for (auto r = p->getParentOfType<RepeatOp>(); r && !overflow;
           r = r->getParentOfType<RepeatOp>())
        overflow |= __builtin_mul_overflow(n, r.getCountAttr().getInt(), &n);
      if (!overflow)
        overflow |= __builtin_add_overflow(params, n, &params);
      if (overflow) {
        error = spec + ": the parameter count overflows a 64-bit integer at "
                       "tgraph.param \"" +
                p.getName().str() + "\" (sizes too large)";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  if (!error.empty())
    return Status::error(error);
  return Status::ok();
}

namespace {
/// Lowercase hex SHA-256 of `bytes` (FIPS 180-4, LLVM's implementation).
std::string sha256Hex(llvm::StringRef bytes) {
  auto digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes));
  return llvm::toHex(digest, /*LowerCase=*/true);
}
} // namespace

Result<LoadedModel> loadModel(MLIRContext &context, const std::string &spec,
                              int64_t seqLen) {
  context.getOrLoadDialect<TGraphDialect>();
  LoadedModel loaded;
  loaded.source = spec;
  if (endsWith(spec, ".mlir")) {
    std::string error;
    auto file = openInputFile(spec, &error);
    if (!file)
      return Status::error(spec + ": cannot read: " + error);
    int64_t deepLine = 0;
    if (int64_t depth = mlirNesting(file->getBuffer(), deepLine);
        depth > kMaxMlirNesting)
      return Status::error(spec + ":" + std::to_string(deepLine) +
                           ": brackets nest " + std::to_string(depth) +
                           " deep, above the supported limit " +
                           std::to_string(kMaxMlirNesting));
    loaded.sha256 = sha256Hex(file->getBuffer());
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    std::string diagText;
    llvm::raw_string_ostream diagStream(diagText);
    // Collect the parser's and verifier's messages instead of printing them.
    SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagStream);
    loaded.module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!loaded.module)
      return Status::error(spec + ": not a valid tgraph module:\n" + diagText);
    if (!loaded.model())
      return Status::error(spec + ": contains no tgraph.model");
  } else {
    Result<ModelConfig> cfg = Status::error("");
    bool looksLikePath = endsWith(spec, ".json") ||
                         spec.find('/') != std::string::npos;
    if (looksLikePath) {
      cfg = loadHFConfigFile(spec, &loaded.warnings);
      // The digest a plan records (plan::ModelSource), of the bytes just
      // parsed; a file that parsed can be read again.
      if (cfg) {
        auto bytes = llvm::MemoryBuffer::getFile(spec);
        if (!bytes)
          return Status::error(spec +
                               ": cannot read: " + bytes.getError().message());
        loaded.sha256 = sha256Hex((*bytes)->getBuffer());
      }
    } else {
      cfg = zooModel(spec);
    }
    if (!cfg)
      return cfg.status();
    if (seqLen > 0) {
      if (cfg->family == ModelFamily::DecoderLM &&
          cfg->position == PositionKind::Learned &&
          seqLen > cfg->maxPositions)
        return Status::error(spec + ": --seq-len " + std::to_string(seqLen) +
                             " exceeds the model's " +
                             std::to_string(cfg->maxPositions) +
                             " learned positions");
      cfg->seqLen = seqLen;
    }
    if (Status s = validateModelConfig(*cfg, spec); !s)
      return s;
    loaded.module = buildModel(context, *cfg);
    loaded.config = *cfg;
  }
  ModelOp model = loaded.model();
  if (seqLen > 0 && !loaded.config) {
    // The checks a config gets in validateModelConfig: the length limit and
    // the learned position table.
    if (seqLen > detail::kMaxDim)
      return Status::error(spec + ": --seq-len " + std::to_string(seqLen) +
                           " is above the supported limit " +
                           std::to_string(detail::kMaxDim));
    std::string tooLong;
    model.walk([&](PositionEmbeddingOp p) {
      auto t = dyn_cast<ShapedType>(p.getTable().getType());
      if (tooLong.empty() && t && t.hasRank() && t.getRank() >= 1 &&
          !t.isDynamicDim(0) && seqLen > t.getDimSize(0))
        tooLong = spec + ": --seq-len " + std::to_string(seqLen) +
                  " exceeds the model's " + std::to_string(t.getDimSize(0)) +
                  " learned positions";
    });
    // A model whose blocks see a static sequence (a ViT: the image fixes
    // the patches) cannot be planned at another length.
    model.walk([&](RepeatOp r) {
      auto t = dyn_cast<ShapedType>(r->getOperand(0).getType());
      if (tooLong.empty() && t && t.hasRank() && t.getRank() >= 3 &&
          !t.isDynamicDim(1) && seqLen != t.getDimSize(1))
        tooLong = spec + ": --seq-len " + std::to_string(seqLen) +
                  " does not match the model's fixed sequence of " +
                  std::to_string(t.getDimSize(1)) + " (the input of '" +
                  r.getName().str() + "')";
    });
    if (!tooLong.empty())
      return Status::error(tooLong);
    model.setSeqLenAttr(
        IntegerAttr::get(IntegerType::get(&context, 64), seqLen));
  }
  std::string diagText;
  {
    llvm::raw_string_ostream os(diagText);
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      os << d.str() << "\n";
      return success();
    });
    if (failed(verify(*loaded.module)))
      return Status::error(spec + ": the model does not verify: " + diagText);
  }
  if (!loaded.config)
    if (Status s = checkMlirSizes(model, spec); !s)
      return s;
  return loaded;
}

} // namespace trident::frontend
