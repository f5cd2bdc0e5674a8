//===- ParamCount.cpp - Exact parameter counts of a ModelConfig -----------===//
//
// Counts every learned tensor the Hugging Face / Megatron implementation of
// the architecture holds, by kind. The formulas below are the ground truth
// the tgraph builder's IR-derived count is checked against, so each kind is
// spelled out:
//
//   h = hidden, nH = heads, nKV = kv heads, hd = head dim, V = vocab,
//   L = layers, f = ffn, E = routed experts, k = top-k,
//   lin(i, o, b) = i*o + (b ? o : 0)                    (a linear layer)
//   norm(n)      = n for RMSNorm, 2n for a LayerNorm(1p) with bias, else n
//   mlp(f, b)    = lin(h,f,b) * (gated ? 2 : 1) + lin(f,h,b)
//
// embedding  decoder: V*h (+ maxPositions*h if learned positions);
//            encoder: + typeVocab*h; vision: maxPositions*h + h (CLS token);
//            DLRM: sum(tableRows) * embeddingDim.
// attention  per layer, standard: lin(h,nH*hd,qkvBias) +
// 2*lin(h,nKV*hd,qkvBias)
//            + lin(nH*hd,h,outBias) + (sinks ? nH), + 2*hd on each layer
//            with q/k norms (every layer, or Llama 4's RoPE layers).
//            MLA (DeepSeek-V2/V3, qk = nope + rope):
//              q:  qLora > 0 ? lin(h,qLora,qkvBias) + qLora [q_a_layernorm]
//                              + qLora*nH*qk
//                            : h*nH*qk
//              kv: lin(h,kvLora+rope,qkvBias) + kvLora [kv_a_layernorm]
//                  + kvLora*nH*(nope+v)
//              o:  lin(nH*v,h,outBias)
//            The q/k norms and the MLA latent norms count as attention, not
//            as `norm`: they live inside the attention block.
// mlp        dense layers: mlp(f, mlpBias); MoE layers: shared experts as one
//            MLP of width numShared*sharedFfn (as HF builds them).
// experts    MoE layers: E * mlp(expertFfn, expertBias).
// router     MoE layers: lin(h,E,routerBias) + (scoreCorrection ? E).
// norm       2 per layer (1 with GPT-J's shared parallel norm), + final;
//            encoder: + embedding LayerNorm + the MLM transform's LayerNorm.
// head       decoder: V*h unless tied, + V for GPT-J's head bias;
//            encoder: pooler lin(h,h,1) + MLM transform lin(h,h,1) + decoder
//            bias V (+ V*h unless tied) + classifier lin(h,classes,1) (NSP);
//            vision: classifier lin(h,classes,1).
// other      vision: patch conv channels*p*p*h + h; DLRM: bottom and top MLPs
//            (top input = dim + n(n-1)/2 pairwise dots, n = tables + 1).
//
// active = total - (#MoE layers) * (E - k) * mlp(expertFfn, expertBias):
// every non-expert tensor counts in full (embedding and head included), as in
// Mixtral's "12.9 B active" and DeepSeek-V3's 37.55 B.
//
//===----------------------------------------------------------------------===//

#include "FrontendDetail.h"

namespace trident::frontend {
namespace {

/// An int64 with sticky overflow: parameter totals multiply several
/// user-controlled sizes, and overflow must be reported, not wrapped.
struct N {
  int64_t v = 0;
  bool bad = false;
  N(int64_t x = 0) : v(x) {}

  friend N operator+(N a, N b) {
    N r;
    r.bad = a.bad || b.bad || __builtin_add_overflow(a.v, b.v, &r.v);
    return r;
  }
  friend N operator-(N a, N b) {
    N r;
    r.bad = a.bad || b.bad || __builtin_sub_overflow(a.v, b.v, &r.v);
    return r;
  }
  friend N operator*(N a, N b) {
    N r;
    r.bad = a.bad || b.bad || __builtin_mul_overflow(a.v, b.v, &r.v);
    return r;
  }
  N &operator+=(N b) { return *this = *this + b; }
};

N lin(N in, N out, bool bias) { return in * out + (bias ? out : N(0)); }

struct Counter {
  const ModelConfig &c;
  N h;

  explicit Counter(const ModelConfig &config) : c(config), h(config.hidden) {}

  N norm(N n) const {
    return (c.norm != NormKind::RMSNorm && c.normBias) ? n * 2 : n;
  }
  N mlp(N width, bool bias) const {
    return lin(h, width, bias) * (c.gatedMlp ? 2 : 1) + lin(width, h, bias);
  }

  N attentionPerLayer() const {
    N nH = c.numHeads;
    N sinks = c.attentionSinks ? nH : N(0);
    if (c.attention == AttentionKind::MLA) {
      const MLAConfig &m = c.mla;
      N qk = N(m.qkNopeHeadDim) + m.qkRopeHeadDim;
      N q = m.qLoraRank > 0 ? lin(h, m.qLoraRank, c.qkvBias) + m.qLoraRank +
                                  N(m.qLoraRank) * nH * qk
                            : h * nH * qk;
      N kv = lin(h, N(m.kvLoraRank) + m.qkRopeHeadDim, c.qkvBias) +
             m.kvLoraRank +
             N(m.kvLoraRank) * nH * (N(m.qkNopeHeadDim) + m.vHeadDim);
      N o = lin(nH * m.vHeadDim, h, c.outBias);
      return q + kv + o + sinks;
    }
    N hd = c.headDim;
    N q = lin(h, nH * hd, c.qkvBias);
    N kv = lin(h, N(c.numKvHeads) * hd, c.qkvBias) * 2;
    N o = lin(nH * hd, h, c.outBias);
    return q + kv + o + sinks;
  }

  N expertParams() const { return mlp(c.moe.expertFfn, c.moe.expertBias); }

  /// The trunk shared by decoder, encoder and vision models.
  void trunk(N counts[8], N &active) const {
    enum { Emb, Attn, Mlp, Exp, Router, Norm, Head, Other };
    N layers = c.numLayers;
    N moeLayers = detail::moeLayerCount(c);
    N denseLayers = layers - moeLayers;
    counts[Attn] = layers * attentionPerLayer();
    // q and k norms of head_dim each, on the layers that have them.
    for (int64_t i = 0; i < c.numLayers; ++i)
      if (c.hasQkNorm(i))
        counts[Attn] += N(c.headDim) * 2;
    counts[Norm] = layers * norm(h) * (c.parallelSharedNorm ? 1 : 2) +
                   (c.finalNorm ? norm(h) : N(0));
    counts[Mlp] = denseLayers * mlp(c.ffn, c.mlpBias);
    const MoEConfig &m = c.moe;
    if (m.numExperts > 0) {
      N shared = m.numSharedExperts > 0
                     ? mlp(N(m.numSharedExperts) * m.sharedFfn, c.mlpBias)
                     : N(0);
      counts[Mlp] += moeLayers * shared;
      counts[Exp] = moeLayers * m.numExperts * expertParams();
      counts[Router] =
          moeLayers * (lin(h, m.numExperts, m.routerBias) +
                       (m.routerScoreCorrection ? N(m.numExperts) : N(0)));
      active = moeLayers * (N(m.numExperts) - m.topK) * expertParams();
    }
  }

  ParamCounts run(bool &overflow) const {
    enum { Emb, Attn, Mlp, Exp, Router, Norm, Head, Other };
    N k[8];
    N inactive; // routed-expert parameters a token does not touch
    N positions =
        c.position == PositionKind::Learned ? N(c.maxPositions) * h : N(0);
    switch (c.family) {
    case ModelFamily::DecoderLM:
      trunk(k, inactive);
      k[Emb] = N(c.vocabSize) * h + positions;
      k[Head] = (c.tieEmbeddings ? N(0) : N(c.vocabSize) * h) +
                (c.headBias ? N(c.vocabSize) : N(0));
      break;
    case ModelFamily::EncoderLM:
      trunk(k, inactive);
      k[Emb] = N(c.vocabSize) * h + positions + N(c.typeVocabSize) * h;
      // Embedding LayerNorm and the MLM transform's LayerNorm.
      k[Norm] += norm(h) * 2;
      k[Head] = (c.pooler ? lin(h, h, true) : N(0)) + lin(h, h, true) +
                c.vocabSize + (c.tieEmbeddings ? N(0) : N(c.vocabSize) * h) +
                (c.numClasses > 0 ? lin(h, c.numClasses, true) : N(0));
      break;
    case ModelFamily::Vision:
      trunk(k, inactive);
      k[Emb] = positions + h; // + the CLS token
      k[Other] = N(c.channels) * c.patchSize * c.patchSize * h + h;
      k[Head] = lin(h, c.numClasses, true);
      break;
    case ModelFamily::Recommender: {
      N rows = 0;
      for (int64_t r : c.tableRows)
        rows += r;
      k[Emb] = rows * c.embeddingDim;
      N in = c.denseFeatures;
      for (int64_t w : c.bottomMlp) {
        k[Other] += lin(in, w, true);
        in = w;
      }
      // Dot interaction of the n = tables + 1 feature vectors, without
      // self-products (the DLRM reference's default), concatenated with the
      // bottom MLP output.
      N feats = N((int64_t)c.tableRows.size()) + 1;
      in = N(c.embeddingDim) + N((feats.v * (feats.v - 1)) / 2);
      for (int64_t w : c.topMlp) {
        k[Other] += lin(in, w, true);
        in = w;
      }
      break;
    }
    }
    N total;
    for (N &x : k)
      total += x;
    N active = total - inactive;
    overflow = total.bad || active.bad;
    ParamCounts p;
    p.embedding = k[Emb].v;
    p.attention = k[Attn].v;
    p.mlp = k[Mlp].v;
    p.experts = k[Exp].v;
    p.router = k[Router].v;
    p.norm = k[Norm].v;
    p.head = k[Head].v;
    p.other = k[Other].v;
    p.active = active.v;
    return p;
  }
};

} // namespace

int64_t detail::moeLayerCount(const ModelConfig &c) {
  const MoEConfig &m = c.moe;
  int64_t layers = c.numLayers;
  if (m.numExperts <= 0 || layers <= 0)
    return 0;
  if (!m.moeLayers.empty()) {
    int64_t n = 0;
    for (int64_t i = 0; i < layers && i < (int64_t)m.moeLayers.size(); ++i)
      n += m.moeLayers[i] ? 1 : 0;
    return n;
  }
  int64_t first = m.firstDenseLayers < 0 ? 0 : m.firstDenseLayers;
  if (first >= layers)
    return 0;
  int64_t freq = m.layerFreq > 0 ? m.layerFreq : 1;
  // Layers first, first + freq, ... below `layers` (ModelConfig::isMoeLayer).
  return 1 + (layers - first - 1) / freq;
}

ParamCounts detail::countParamsChecked(const ModelConfig &config,
                                       bool &overflow) {
  return Counter(config).run(overflow);
}

ParamCounts countParams(const ModelConfig &config) {
  bool overflow = false;
  ParamCounts p = detail::countParamsChecked(config, overflow);
  // A config that validateModelConfig refuses for overflow has no
  // meaningful count; zeros keep total() itself from overflowing.
  return overflow ? ParamCounts() : p;
}

} // namespace trident::frontend
